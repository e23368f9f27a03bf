"""The online study's plan: the ``online`` config section (validated against
``config.schema.yaml``, defaults filled in) checked where the schema cannot (policies, periods,
selectors from the selector registry, epsilons), and the (strategy, period) runs, files,
targets and step settings it implies. Errors name the config key.

Defaults follow the published study (Reis's thesis): ``online.selectors`` defaults to the
selector kinds of the thesis (:data:`THESIS_SELECTORS`: random, full, noisy, bandit); schedlab's
additions (ucb, swucb, thompson) run only when listed, and tables and figures label them
"(addition)". The ε-greedy bandit has no forced round (``online.bandit_forced_round: false``) and
its ε is chosen by a leave-one-trace-out vote pooled over the periods
(``online.epsilon_vote: pooled``), or is ``online.epsilon`` (0.1) with a single trace."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from scheduler.core.errors import ConfigurationError
from scheduler.core.units import parse_duration
from scheduler.policies import MULTIFACTOR
from scheduler.policies.learned import learned_policy_files
from scheduler.studies.common.config import (
    MAX_SIMULATION_JOBS,
    Threshold,
    TraceEntry,
    catalogue_entries,
    check_plan_size,
    duration_problem,
    policy_list,
    require_in,
    threshold_list,
)
from scheduler.studies.common.paths import Reported, StudyFiles, filtered_file, output_paths
from scheduler.studies.common.slurm import study_slurm
from scheduler.studies.online.selectors import (
    EPSILON_GREEDY,
    FIXED,
    SELECTORS,
    bandit_epsilon,
    bandit_spec,
)

_PERIOD_LABEL = re.compile(r"^[0-9]+(s|m|h|d|w)$")

__all__ = ["THESIS_SELECTORS", "OnlinePlan", "OnlineStrategy", "online_plan", "strategy_slug"]

#: The default of ``online.selectors``: the selector kinds of the published study (the
#: ``thesis`` flag of the registry), without ``fixed`` (the fixed policies always run).
THESIS_SELECTORS: tuple[str, ...] = tuple(
    name for name, kind in SELECTORS.items() if kind.thesis and name != FIXED
)


_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9.]+")


@dataclass(frozen=True)
class OnlineStrategy:
    """A strategy of the online study: its selector spec, a path-safe slug, and the policy
    periods it runs with (``("none",)`` for fixed policies, which never switch)."""

    spec: str
    slug: str
    periods: tuple[str, ...]
    needs_simulation: bool


@dataclass(frozen=True)
class OnlinePlan:
    """The online policy-selection study, checked (see the configuration reference).

    Files (:meth:`file`): ``results/online/<trace>/traces/replica<k>.parquet`` (a long trace),
    ``…/costs/<Δ>/replica<k>.parquet`` (its simulated period costs), ``…/runs/<Δ>/<strategy>/
    batch<b>.parquet`` and ``…/choices/<Δ>/<strategy>/batch<b>.parquet`` (the live runs' daily
    curves and choices on the replicas of batch b, :meth:`batch_replicas`), the tables and the
    figures.
    """

    #: The study's name: its config section and folders.
    name: ClassVar[str] = "online"
    #: The "period" of the fixed policies, which never switch (it only paces the live loop).
    NO_PERIOD: ClassVar[str] = "none"
    #: The pace of the fixed policies' live loop, seconds (one week).
    NO_PERIOD_S: ClassVar[float] = 604800.0

    seed: int
    traces: tuple[TraceEntry, ...]
    replicas: int
    #: Replicas per live-run job (the last batch may hold fewer).
    replicas_per_job: int
    weeks: int
    resampling: str
    policies: tuple[str, ...]
    threshold_s: float
    threshold_backfill: bool
    periods: tuple[Threshold, ...]
    strategies: tuple[OnlineStrategy, ...]
    epsilons: tuple[float, ...]
    epsilon: float
    epsilon_vote: str
    reference: str
    confidence: float
    selector_options: dict[str, Any]
    #: How the long traces' source weeks are cut (``calendar``: Monday 00:00 local time;
    #: ``first_submit``: from the log's first submission).
    week_alignment: str
    #: Where the policy periods (and the daily curve's days) start (``calendar``: the long
    #: trace's origin, a local Monday 00:00; ``first_submit``: its first submission).
    period_alignment: str
    #: The settings of ``online.slurm_conf`` (:func:`scheduler.studies.common.slurm.
    #: study_slurm`) when ``multifactor`` is one of the policies (its arm), else None.
    slurm: dict[str, Any] | None

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    def period_seconds(self, label: str) -> float:
        """A policy period's length, seconds (the fixed policies' ``none``: one week)."""
        if label == self.NO_PERIOD:
            return self.NO_PERIOD_S
        for period in self.periods:
            if period.label == label:
                return period.seconds
        raise ConfigurationError(f"period {label!r} is not in online.periods")

    def strategy(self, slug: str) -> OnlineStrategy:
        for strategy in self.strategies:
            if strategy.slug == slug:
                return strategy
        raise ConfigurationError(f"no online strategy with slug {slug!r}")

    @property
    def bandit_epsilons(self) -> tuple[float, ...]:
        """The ε values the ε-greedy bandit runs with (the vote's candidates, in config order);
        empty when ``online.selectors`` has no bandit."""
        found = (bandit_epsilon(strategy.spec) for strategy in self.strategies)
        return tuple(eps for eps in found if eps is not None)

    def runs(self) -> tuple[tuple[OnlineStrategy, str], ...]:
        """Every (strategy, period label) pair the study runs on each replica."""
        return tuple((s, p) for s in self.strategies for p in s.periods)

    @property
    def batches(self) -> int:
        """Live-run jobs per (trace, strategy, period): batches of ``replicas_per_job``."""
        return -(-self.replicas // self.replicas_per_job)

    def batch_replicas(self, batch: int | str) -> list[int]:
        """The replicas of live-run batch ``batch``, in order."""
        first = int(batch) * self.replicas_per_job
        return list(range(first, min(first + self.replicas_per_job, self.replicas)))

    def cost_periods(self) -> tuple[str, ...]:
        """The periods whose simulated costs some run needs (the full and noisy selectors)."""
        return tuple(dict.fromkeys(p for s, p in self.runs() if s.needs_simulation))

    # -- files --------------------------------------------------------------------------------
    @property
    def wildcards(self) -> dict[str, str]:
        """Wildcard constraints of the study's file names (its rules file)."""
        return {
            "replica": r"\d+",
            "batch": r"\d+",
            "period": rf"{self.NO_PERIOD}|[0-9]+[smhdw]",
            "strategy": r"[A-Za-z0-9.-]+",
            "online_figure": "fixed_improvement"
            r"|(selector_improvement|choice_shares)_[0-9]+[smhdw]",
        }

    def source_file(self, trace: str = "{trace}") -> str:
        """The jobs the long traces are resampled from: the strongly filtered log."""
        return filtered_file(trace)

    def file(self, name: str, trace: str = "{trace}", replica: int | str = "{replica}",
             period: str = "{period}", strategy: str = "{strategy}",
             kind: str = "output", batch: int | str = "{batch}") -> str:  # fmt: skip
        """The one place that spells the study's paths: ``name`` "trace" (a replica's long
        trace), "costs" (its simulated period costs), "runs" or "choices" (the curves and
        choices of a batch of live runs, ``batch``); ``kind`` "output" or "log" (a batch of
        runs has one log for its two files). The defaults give the wildcard patterns."""
        folder = {
            "trace": "traces",
            "costs": f"costs/{period}",
            "runs": f"runs/{period}/{strategy}",
            "choices": f"choices/{period}/{strategy}",
        }[name]
        unit = f"batch{batch}" if name in ("runs", "choices") else f"replica{replica}"
        case = f"{trace}/{folder}/{unit}"
        if kind == "output":
            return self.files.result(f"{case}.parquet")
        return self.files.log(case.replace("/choices/", "/runs/", 1))

    def policy_files(self, wildcards: object = None) -> list[str]:
        """The files the study's policies read (a learned function's fit file)."""
        return learned_policy_files(self.policies)

    def batch_traces(self, wildcards: Any) -> list[str]:
        """The long traces of a batch of live runs, in replica order."""
        return [self.file("trace", wildcards.trace, replica)
                for replica in self.batch_replicas(wildcards.batch)]  # fmt: skip

    def costs_input(self, wildcards: Any) -> list[str]:
        """The simulated period costs of a batch's replicas, in replica order, for the
        selectors that need them (full, noisy); none for the others."""
        if not self.strategy(wildcards.strategy).needs_simulation:
            return []
        return [self.file("costs", wildcards.trace, replica, wildcards.period)
                for replica in self.batch_replicas(wildcards.batch)]  # fmt: skip

    def run_files(self, kind: str) -> list[str]:
        """Every run output (``kind`` "runs" or "choices") of the study."""
        return [
            self.file(kind, trace, period=period, strategy=strategy.slug, batch=batch)
            for trace in self.trace_names
            for batch in range(self.batches)
            for strategy, period in self.runs()
        ]

    def figure_names(self) -> list[str]:
        """The per-trace figures: fixed policies' improvement, and per period the selectors'
        improvement and (when a selector it shows is run) the choice shares."""
        from scheduler.studies.online.steps import draws_choice_shares

        kinds = ["selector_improvement"]
        if draws_choice_shares([s.spec for s in self.strategies]):
            kinds.append("choice_shares")
        periods = [period.label for period in self.periods]
        return ["fixed_improvement"] + [f"{kind}_{p}" for kind in kinds for p in periods]

    def tables_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``online_tables``: the ε table only when a bandit runs."""
        files = self.files
        outputs: dict[str, str | Reported] = {}
        if self.bandit_epsilons:
            outputs["epsilon_csv_path"] = Reported(
                files.table("epsilon.csv"), "table.rst",
                {"table": "epsilon (leave-one-trace-out)"},
            )  # fmt: skip
            outputs["epsilon_md_path"] = files.table("epsilon.md")
        return outputs | {
            "changes_path": files.table("changes.parquet"),
            "changes_csv_path": Reported(
                files.table("changes.csv"), "table.rst",
                {"table": "relative total-wait changes"},
            ),
            "fixed_md_path": files.table("fixed_policies.md"),
            "strategies_md_path": files.table("strategies.md"),
            "improvement_path": files.table("improvement.parquet"),
            "shares_path": files.table("choice_shares.parquet"),
        }  # fmt: skip

    #: The replica whose long trace the representative week is drawn from.
    WEEK_REPLICA: ClassVar[int] = 0

    @property
    def week_trace(self) -> str | None:
        """The trace of the representative-week figure: the first of ``online.traces`` (None
        without traces: then the study has no target)."""
        return self.traces[0].name if self.traces else None

    def week_inputs(self, wildcards: object = None) -> dict[str, Any]:
        """The inputs of ``draw_week``: the week trace's first long trace, the changes table
        (which names the best strategy), the choices of every run on that long trace and the
        fit files of learned policies (an input function: the study may have no trace)."""
        trace, replica = self.week_trace, self.WEEK_REPLICA
        if trace is None:
            raise ConfigurationError("online.traces is empty: the study draws no week")
        return {
            "trace_path": self.file("trace", trace, replica),
            "changes_path": self.tables_outputs()["changes_path"],
            "choice_paths": [self.file("choices", trace, period=period, strategy=strategy.slug,
                                       batch=replica // self.replicas_per_job)
                             for strategy, period in self.runs()],
            "_policy_paths": self.policy_files(),
        }  # fmt: skip

    def week_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``draw_week``: the representative week (PNG in the report, PDF)."""
        return self.files.week_outputs(subcategory=self.week_trace)

    def targets(self) -> list[str]:
        if not self.traces:
            return []
        figures = [
            self.files.figure(f"{trace}/{figure}", ext)
            for trace in self.trace_names
            for figure in self.figure_names()
            for ext in ("png", "pdf")
        ]
        week = output_paths(self.week_outputs())
        return output_paths(self.tables_outputs()) + figures + week

    # -- step settings (keyword arguments of scheduler.studies.online.steps) ------------------
    def long_trace_settings(self, wildcards: Any) -> dict[str, Any]:
        """``make_long_trace``: one replica's long trace."""
        return {
            "trace": wildcards.trace,
            "replica": int(wildcards.replica),
            "weeks": self.weeks,
            "seed": self.seed,
            "method": self.resampling,
            "alignment": self.week_alignment,
        }

    def costs_settings(self, wildcards: Any) -> dict[str, Any]:
        """``period_costs``: one replica's simulated costs at one period length."""
        return {
            "trace": wildcards.trace,
            "replica": int(wildcards.replica),
            "period": wildcards.period,
            "period_s": self.period_seconds(wildcards.period),
            "policies": list(self.policies),
            "threshold_s": self.threshold_s,
            "threshold_backfill": self.threshold_backfill,
            "period_alignment": self.period_alignment,
            "slurm": self.slurm,
        }

    def run_settings(self, wildcards: Any) -> dict[str, Any]:
        """``online_run``: the live runs of a strategy on the replicas of one batch."""
        return {
            "trace": wildcards.trace,
            "replicas": self.batch_replicas(wildcards.batch),
            "strategy": self.strategy(wildcards.strategy).spec,
            "period": wildcards.period,
            "period_s": self.period_seconds(wildcards.period),
            "policies": list(self.policies),
            "threshold_s": self.threshold_s,
            "threshold_backfill": self.threshold_backfill,
            "seed": self.seed,
            "options": dict(self.selector_options),
            "period_alignment": self.period_alignment,
            "slurm": self.slurm,
        }

    def tables_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``online_tables``: the bandit's configured epsilons are the vote's only candidates
        (none: no bandit); online.epsilon when nobody can vote (one trace) or epsilon_vote is
        "configured"."""
        return {
            "reference": self.reference,
            "threshold_s": self.threshold_s,
            "confidence": self.confidence,
            "seed": self.seed,
            "epsilons": list(self.bandit_epsilons),
            "epsilon": self.epsilon,
            "epsilon_vote": self.epsilon_vote,
        }

    def figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``online_figure``."""
        return {
            "figure": wildcards.online_figure,
            "trace": wildcards.trace,
            "reference": self.reference,
            "threshold_s": self.threshold_s,
        }

    def week_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``draw_week``: the replayed runs' settings, as the live runs'."""
        labels = (self.NO_PERIOD, *(period.label for period in self.periods))
        return {
            "trace": self.week_trace,
            "replica": self.WEEK_REPLICA,
            "reference": self.reference,
            "period_seconds": {label: self.period_seconds(label) for label in labels},
            "threshold_s": self.threshold_s,
            "threshold_backfill": self.threshold_backfill,
            "period_alignment": self.period_alignment,
            "slurm": self.slurm,
        }


def strategy_slug(spec: str) -> str:
    """A file-name-safe form of a selector spec: ``"bandit(eps=0.3)"`` → ``"bandit-eps0.3"``."""
    return _SLUG_UNSAFE.sub("-", spec.replace("=", "")).strip("-")


def _period_problem(label: object) -> str:
    """Why ``online.periods`` refuses ``label`` (a period is a whole number and a unit)."""
    if re.fullmatch(r"[0-9]*\.[0-9]+\s*[smhdw]", str(label).strip()):
        return f"{label!r}: write a whole number before the unit, e.g. 36h for 1.5d"
    return duration_problem(label, none=False).replace("e.g. 20h", "e.g. 1d")


def online_plan(config: Mapping[str, Any]) -> OnlinePlan:
    """The plan of the ``online`` section of ``config`` (validated here; defaults filled)."""
    from scheduler.studies.common.study import study_section

    whole, online = study_section(config, OnlinePlan.name)
    policies = policy_list(online["policies"], "online.policies", multifactor=True)
    slurm = study_slurm(online["slurm_conf"], "online.slurm_conf")
    if MULTIFACTOR in policies and (slurm is None or slurm["priority"] is None):
        why = ("set online.slurm_conf to a slurm.conf with PriorityType=priority/multifactor"
               if slurm is None else
               "the slurm.conf of online.slurm_conf has PriorityType=priority/basic")
        raise ConfigurationError(
            f"config online.policies: {MULTIFACTOR} needs Slurm's priority settings: {why}"
        )  # fmt: skip
    reference = policy_list([online["reference"]], "online.reference", multifactor=True)[0]
    require_in(reference in policies, "online.reference", reference, "online.policies")
    initial = policy_list([online["initial"]], "online.initial", multifactor=True)[0]
    require_in(initial in policies, "online.initial", initial, "online.policies")
    threshold_s = threshold_list([online["threshold"]], "online.threshold")[0].seconds
    periods = []
    for label in online["periods"]:
        if not _PERIOD_LABEL.match(str(label)):
            raise ConfigurationError(f"config online.periods: {_period_problem(label)}")
        seconds = parse_duration(str(label))
        if seconds <= 0:
            raise ConfigurationError(f"config online.periods: {label!r} must be longer than 0")
        periods.append(Threshold(str(label), seconds))
    for k, period in enumerate(periods):
        same = [p.label for p in periods[:k] if p.seconds == period.seconds]
        if same:
            raise ConfigurationError(
                f"config online.periods: {same[0]!r} and {period.label!r} are the same duration"
            )
    labels = tuple(p.label for p in periods)
    epsilons = tuple(float(e) for e in online["epsilons"])
    for eps in epsilons:
        # the bandit's run is named by its ε (bandit(eps=0.3)): the name must give it back
        if round(eps, 4) != eps or bandit_epsilon(bandit_spec(eps)) != eps:
            raise ConfigurationError(
                f"config online.epsilons: {eps!r} has more than 4 decimal places (e.g. 0.05)"
            )
    epsilon_vote = online["epsilon_vote"]
    epsilon = float(online["epsilon"])
    strategies = [
        OnlineStrategy(f"{FIXED}:{p}", f"{FIXED}-{p}", (OnlinePlan.NO_PERIOD,), False)
        for p in policies
    ]
    selectors = [str(s).lower() for s in online["selectors"]]
    twice_selectors = sorted({name for name in selectors if selectors.count(name) > 1})
    if twice_selectors:
        raise ConfigurationError(
            f"config online.selectors: {', '.join(twice_selectors)} listed twice"
        )
    # every registered kind but fixed (the fixed policies are online.policies)
    known = {name for name in SELECTORS if name != FIXED}
    for name in selectors:
        if name not in known:
            raise ConfigurationError(
                f"config online.selectors: unknown selector {name!r}; known: {sorted(known)}"
            )
        kind = SELECTORS[name]
        # the epsilon-greedy bandit runs once per epsilon of online.epsilons
        specs = [bandit_spec(e) for e in epsilons] if name == EPSILON_GREEDY else [name]
        for spec in specs:
            strategies.append(
                OnlineStrategy(spec, strategy_slug(spec), labels, kind.needs_simulation)
            )
    traces = catalogue_entries(whole, online["traces"], "online.traces")
    # the configured ε is used when nobody can vote: it must be one of the bandit's runs
    nobody_votes = len(traces) == 1 or epsilon_vote == "configured"
    if EPSILON_GREEDY in selectors and nobody_votes and epsilon not in epsilons:
        why = (
            "a single trace in online.traces (no other trace to vote)"
            if len(traces) == 1
            else "online.epsilon_vote: configured"
        )
        raise ConfigurationError(
            f"config online.epsilon: {epsilon:g} is not among online.epsilons "
            f"({', '.join(f'{eps:g}' for eps in epsilons)}); with {why} the bandit runs "
            "with the configured ε"
        )
    low, high = (float(x) for x in online["noise"])
    if not low <= high:
        raise ConfigurationError(
            f"config online.noise: [low, high] with low <= high; got {[low, high]}"
        )
    replicas = online["replicas"]
    jobs = replicas * sum(len(strategy.periods) for strategy in strategies)
    check_plan_size(jobs, "live runs (replicas x strategies x periods)",
                    "online.replicas / online.periods / online.policies / online.selectors",
                    MAX_SIMULATION_JOBS)  # fmt: skip
    week_alignment = online["week_alignment"]
    period_alignment = online["period_alignment"]
    if period_alignment == "calendar" and week_alignment != "calendar":
        # a first_submit long trace starts at an arbitrary instant: its origin is no midnight
        raise ConfigurationError(
            "config online.period_alignment: calendar periods need calendar weeks "
            f"(online.week_alignment: calendar), got online.week_alignment: {week_alignment}; "
            "set online.period_alignment: first_submit for the published alignment"
        )
    return OnlinePlan(
        seed=whole["seed"],
        traces=traces,
        replicas=replicas,
        replicas_per_job=online["replicas_per_job"],
        weeks=online["weeks"],
        resampling=online["resampling"],
        policies=policies,
        threshold_s=threshold_s,
        threshold_backfill=online["threshold_backfill"],
        periods=tuple(periods),
        strategies=tuple(strategies),
        epsilons=epsilons,
        epsilon=epsilon,
        epsilon_vote=epsilon_vote,
        confidence=online["confidence"],
        reference=f"fixed:{reference}",
        selector_options={
            "discount": float(online["discount"]),
            "noise": (low, high),
            "initial": initial,
            "forced_round": online["bandit_forced_round"],
        },
        week_alignment=week_alignment,
        period_alignment=period_alignment,
        slurm=slurm if MULTIFACTOR in policies else None,
    )
