"""The redirection study's plan: the ``redirect`` config section (validated against
``config.schema.yaml``, defaults filled in) checked where the schema cannot (policy names, the
per-log loads against the logs, the online period and bandits), and the files, targets and step
settings it implies. Errors name the config key."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.core.units import parse_duration
from scheduler.studies.common.bandits import make_bandit
from scheduler.studies.common.config import (
    NUMBER_LABEL_PATTERN,
    TraceEntry,
    catalogue_entries,
    check_plan_size,
    number_label,
    policy_list,
)
from scheduler.studies.common.paths import Reported, StudyFiles, filtered_file, output_paths

__all__ = ["BASELINE", "RedirectPlan", "redirect_plan"]

#: The α label of the baseline job (EASY on the whole machine).
BASELINE = "baseline"


@dataclass(frozen=True)
class RedirectPlan:
    """The redirection study, checked (see the configuration reference for every key).

    Files: ``results/redirect/<trace>/weeks.parquet`` (the chosen weeks),
    ``…/grid/alpha-<α>.parquet`` (one dedicated share, every θ and balance option; ``baseline``:
    EASY on the whole machine), ``…/online/alpha-<α>.parquet`` (θ chosen online), the gathered
    tables and the figures.
    """

    #: The study's name: its config section and folders.
    name: ClassVar[str] = "redirect"

    traces: tuple[TraceEntry, ...]
    weeks: int
    overrun: str
    min_load: Mapping[str, float]
    step_days: int
    split: str
    alphas: tuple[float, ...]
    thetas: tuple[int, ...]
    balance: tuple[bool, ...]
    primary: str
    backfill: str
    tau_s: float
    online_period: str
    online_period_s: float
    online_selectors: tuple[str, ...]
    seed: int

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    def trace_min_load(self, trace: str) -> float:
        """The smallest offered load of a chosen week of ``trace``."""
        return float(self.min_load[trace if trace in self.min_load else "default"])

    def alpha_label(self, alpha: float) -> str:
        """The label of a dedicated share in file names (reads back exactly)."""
        return number_label(alpha)

    def alpha(self, label: str) -> float:
        for alpha in self.alphas:
            if self.alpha_label(alpha) == label:
                return alpha
        raise ConfigurationError(f"alpha {label!r} is not in redirect.alphas")

    @property
    def max_alpha(self) -> float:
        """The largest dedicated share: the jobs wider than its main pool are left out of every
        run of a log, so that all runs of the log simulate the same jobs."""
        return max(self.alphas)

    # -- files --------------------------------------------------------------------------------
    @property
    def wildcards(self) -> dict[str, str]:
        """Wildcard constraints of the study's file names (its rules file)."""
        return {"alpha": f"{BASELINE}|{NUMBER_LABEL_PATTERN}"}

    def source_file(self, trace: str = "{trace}") -> str:
        """The jobs the study draws its weeks from: the strongly filtered log, overrunning jobs
        dropped or clipped as ``redirect.overrun`` says."""
        return filtered_file(trace, self.overrun)

    def weeks_file(self, trace: str = "{trace}") -> str:
        return self.files.result(f"{trace}/weeks.parquet")

    def weeks_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``choose_weeks`` (patterns in ``{trace}``)."""
        return {
            "weeks_path": self.weeks_file(),
            "weeks_csv_path": Reported(
                self.files.table("{trace}_weeks.csv"), "table.rst",
                {"trace": "{trace}", "table": "weeks and their load"}, "{trace}",
            ),
        }  # fmt: skip

    def grid_run(self, trace: str = "{trace}", alpha: str = "{alpha}") -> str:
        return f"{trace}/grid/alpha-{alpha}"

    def online_run(self, trace: str = "{trace}", alpha: str = "{alpha}") -> str:
        return f"{trace}/online/alpha-{alpha}"

    def grid_files(self, wildcards: object = None) -> list[str]:
        """Every grid job's runs: each log under the baseline and each dedicated share."""
        labels = [BASELINE] + [self.alpha_label(a) for a in self.alphas]
        return [
            self.files.result(f"{self.grid_run(trace, label)}.parquet")
            for trace in self.trace_names
            for label in labels
        ]

    def online_files(self, wildcards: object = None) -> list[str]:
        """Every online-θ job's runs: each log under each dedicated share."""
        return [
            self.files.result(f"{self.online_run(trace, self.alpha_label(alpha))}.parquet")
            for trace in self.trace_names
            for alpha in self.alphas
        ]

    def tables_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``redirect_tables`` (step parameter -> file)."""
        files = self.files
        return {
            "grid_path": files.result("grid.parquet"),
            "heatmap_csv_path": Reported(
                files.table("heatmap.csv"), "table.rst",
                {"table": "median ratios per (alpha, theta)"}, "All logs",
            ),
            "heatmap_md_path": files.table("heatmap.md"),
            "best_path": files.result("best.parquet"),
            "best_csv_path": Reported(
                files.table("best.csv"), "table.rst",
                {"table": "tuned on training weeks, reported on test weeks"}, "All logs",
            ),
            "best_md_path": files.table("best.md"),
            "online_path": files.result("online.parquet"),
            "online_csv_path": Reported(
                files.table("online.csv"), "table.rst",
                {"table": "theta chosen online against the fixed theta"}, "All logs",
            ),
            "online_md_path": files.table("online.md"),
        }  # fmt: skip

    @property
    def week_trace(self) -> str:
        """The log of the representative week: the first of ``redirect.traces``."""
        return self.trace_names[0]

    def week_inputs(self, wildcards: object = None) -> dict[str, str]:
        """The inputs of ``redirect_week``: the log's jobs and weeks, the runs, the tuning."""
        tables = self.tables_outputs()
        return {
            "filtered_path": self.source_file(self.week_trace),
            "weeks_path": self.weeks_file(self.week_trace),
            "grid_path": str(tables["grid_path"]),
            "best_path": str(tables["best_path"]),
        }

    def week_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``redirect_week``: the representative week's Gantt chart."""
        return self.files.week_outputs(subcategory=self.week_trace)

    def targets(self) -> list[str]:
        from scheduler.studies.redirect.steps import FIGURES

        tables = output_paths(self.tables_outputs())
        tables += [self.files.table(f"{trace}_weeks.csv") for trace in self.trace_names]
        figures = [self.files.figure(name, ext) for name in FIGURES for ext in ("png", "pdf")]
        return tables + figures + output_paths(self.week_outputs())

    # -- step settings (keyword arguments of scheduler.studies.redirect.steps) ----------------
    def weeks_settings(self, wildcards: Any) -> dict[str, Any]:
        """``choose_weeks``."""
        return {
            "trace": wildcards.trace,
            "count": self.weeks,
            "min_load": self.trace_min_load(wildcards.trace),
            "step_days": self.step_days,
            "split": self.split,
        }

    def _pools(self) -> dict[str, Any]:
        return {
            "thetas": list(self.thetas),
            "balance": list(self.balance),
            "primary": self.primary,
            "backfill": self.backfill,
            "tau_s": self.tau_s,
            "max_alpha": self.max_alpha,
        }

    def grid_settings(self, wildcards: Any) -> dict[str, Any]:
        """``simulate_alpha``: one share (``alpha`` None: the baseline)."""
        alpha = None if wildcards.alpha == BASELINE else self.alpha(wildcards.alpha)
        return {"trace": wildcards.trace, "alpha": alpha, **self._pools()}

    def online_settings(self, wildcards: Any) -> dict[str, Any]:
        """``simulate_online``: one share, θ chosen online by each selector."""
        return {
            "trace": wildcards.trace,
            "alpha": self.alpha(wildcards.alpha),
            **self._pools(),
            "selectors": list(self.online_selectors),
            "period_s": self.online_period_s,
            "seed": self.seed,
        }

    def figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``redirect_figure``."""
        return {"figure": wildcards.redirect_figure}

    def week_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``redirect_week``: the first log, the schedulers of its runs."""
        pools = self._pools()
        keys = ("primary", "backfill", "tau_s", "max_alpha")
        return {"trace": self.week_trace, **{key: pools[key] for key in keys}}


def check_main_pool(trace: str, max_alpha: float, machine_procs: int) -> int:
    """The widest job the main pool of the largest share α takes on ``trace``'s machine of
    ``machine_procs`` processors (``m - ceil(α m)``); a ConfigurationError naming
    ``redirect.alphas`` when that pool has no processor."""
    from scheduler.sim.redirection import pool_sizes  # the simulator, only when asked

    try:
        main, _ = pool_sizes(max_alpha, machine_procs)
    except ConfigurationError as error:
        raise ConfigurationError(
            f"config redirect.alphas: on {trace} ({machine_procs:,} processors) {error}"
        ) from None
    return main


def redirect_plan(config: Mapping[str, Any]) -> RedirectPlan:
    """The plan of the ``redirect`` section of ``config`` (validated here; defaults filled)."""
    from scheduler.studies.common.study import study_section

    whole, section = study_section(config, RedirectPlan.name)
    traces = catalogue_entries(whole, section["traces"], "redirect.traces")
    names = {t.name for t in traces}
    min_load: dict[str, float] = {"default": float(section["min_load"])}
    for name, value in section["min_load_by_trace"].items():
        if name not in names:
            raise ConfigurationError(
                f"config redirect.min_load_by_trace: {name!r} is not in redirect.traces"
            )
        min_load[name] = float(value)
    thetas = tuple(section["thetas"])
    online = section["online"]
    period = online["period"]
    try:
        period_s = parse_duration(period)
    except (ConfigurationError, ValueError):
        raise ConfigurationError(
            f"config redirect.online.period: {period!r} is not a duration with a unit (e.g. 1d)"
        ) from None
    if not period_s > 0 or not math.isfinite(period_s):
        raise ConfigurationError(f"config redirect.online.period: {period!r} must be > 0")
    selectors = tuple(online["selectors"])
    for spec in selectors:
        try:
            make_bandit(spec, thetas, rng=np.random.default_rng(0))
        except ConfigurationError as error:
            raise ConfigurationError(f"config redirect.online.selectors: {error}") from None
    alphas = tuple(float(alpha) for alpha in section["alphas"])
    runs = 1 + len(alphas) * len(section["balance"]) * (len(thetas) + len(selectors))
    check_plan_size(section["weeks"] * runs, "simulations of a week", "redirect.weeks x "
                    "redirect.alphas x redirect.balance x (redirect.thetas + "
                    "redirect.online.selectors)")  # fmt: skip
    for entry in traces:  # the machine size is known here when the catalogue gives it
        if entry.machine_procs is not None:
            check_main_pool(entry.name, max(alphas), entry.machine_procs)
    return RedirectPlan(
        traces=traces,
        weeks=section["weeks"],
        overrun=section["overrun"],
        min_load=min_load,
        step_days=section["step_days"],
        split=section["split"],
        alphas=alphas,
        thetas=thetas,
        balance=tuple(section["balance"]),
        primary=policy_list([section["primary"]], "redirect.primary")[0],
        backfill=policy_list([section["backfill"]], "redirect.backfill")[0],
        tau_s=float(section["tau_s"]),
        online_period=period,
        online_period_s=float(period_s),
        online_selectors=selectors,
        seed=whole["seed"],
    )
