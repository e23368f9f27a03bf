"""The what-if study's plan: the ``whatif`` config section (validated against
``config.schema.yaml``, defaults filled in) checked where the schema cannot (the log's source,
the schedulers: every slurm.conf read and every change parsed before any job runs), and the
files, targets and step settings it implies. Errors name the config key (``whatif.<key>``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.config import catalogue_entries, check_plan_size, confidence_level
from scheduler.studies.common.paths import Reported, StudyFiles, filtered_file, output_paths
from scheduler.studies.whatif.jobs import SOURCE_KINDS
from scheduler.studies.whatif.schedulers import BASELINE, Alternative, study_alternatives

__all__ = ["WhatifPlan", "whatif_plan"]

#: The site name of the example (files, resampling seeds).
EXAMPLE_SITE = "example-site"


@dataclass(frozen=True)
class WhatifPlan:
    """The what-if study's files, targets and step settings."""

    name: ClassVar[str] = "whatif"

    site: str
    source: Mapping[str, Any]
    source_path: str | None
    machine_procs: int | None
    alternatives: tuple[Alternative, ...]
    shares: Mapping[str, int]
    weeks: int
    replicates: int
    bootstrap_weeks: int
    replicates_per_job: int
    confidence: float
    size_classes: tuple[int, ...]
    figure_week: int
    selectors: tuple[str, ...]
    draws: int
    seed: int

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

    # -- files --------------------------------------------------------------------------
    def jobs_file(self) -> str:
        return self.files.result("jobs.parquet")

    def weeks_file(self) -> str:
        return self.files.result("weeks.parquet")

    def weeks_sim_file(self, alternative: str = "{alternative}") -> str:
        return self.files.result(f"sims/{alternative}/weeks.parquet")

    def log_sim_file(self, alternative: str = "{alternative}") -> str:
        return self.files.result(f"sims/{alternative}/log.parquet")

    def source_sim_file(self, alternative: str = "{alternative}") -> str:
        return self.files.result(f"sims/{alternative}/source_weeks.parquet")

    def bootstrap_file(self, alternative: str = "{alternative}", batch: str = "{batch}") -> str:
        return self.files.result(f"bootstrap/{alternative}/batch{batch}.parquet")

    def summary_file(self) -> str:
        return self.files.table("summary.csv")

    def users_file(self) -> str:
        return self.files.table("users.csv")

    def names(self) -> list[str]:
        return [alternative.name for alternative in self.alternatives]

    def batches(self) -> list[int]:
        return list(range(math.ceil(self.replicates / self.replicates_per_job)))

    # -- inputs of the rules ----------------------------------------------------------------
    def source_inputs(self, wildcards: object = None) -> list[str]:
        return [] if self.source_path is None else [self.source_path]

    @property
    def week_alternative(self) -> Alternative | None:
        """The alternative the representative week draws against the baseline: the first of
        the config (None: the baseline alone, no week drawn)."""
        return self.alternatives[1] if len(self.alternatives) > 1 else None

    def week_inputs(self, wildcards: object = None) -> dict[str, Any]:
        """The inputs of ``week_gantt``: the site's jobs and the files its two schedulers'
        policies read."""
        from scheduler.policies.learned import learned_policy_files

        schedulers = [self.alternatives[0].scheduler]
        if self.week_alternative is not None:
            schedulers.append(self.week_alternative.scheduler)
        names = [name for s in schedulers for name in (s.primary, s.backfill or "")]
        return {"jobs_path": self.jobs_file(), "_policy_paths": learned_policy_files(names)}

    def policy_files(self, wildcards: Any) -> list[str]:
        """The files an alternative's policies read (a learned function's fit file)."""
        from scheduler.policies.learned import learned_policy_files

        scheduler = self.alternative(wildcards.alternative).scheduler
        return learned_policy_files([scheduler.primary, scheduler.backfill or ""])

    def sim_files(self, wildcards: object = None) -> dict[str, list[str]]:
        return {
            "weeks_paths": [self.weeks_sim_file(n) for n in self.names()],
            "log_paths": [self.log_sim_file(n) for n in self.names()],
            "bootstrap_paths": [
                self.bootstrap_file(n, str(b)) for n in self.names() for b in self.batches()
            ],
        }

    def online_inputs(self, wildcards: object = None) -> dict[str, list[str]]:
        return {"source_paths": [self.source_sim_file(n) for n in self.names()]}

    def figure_inputs(self, wildcards: Any) -> dict[str, str]:
        return {
            "baseline_weeks_path": self.weeks_sim_file(BASELINE),
            "weeks_path": self.weeks_sim_file(wildcards.alternative),
            "users_csv_path": self.users_file(),
        }

    # -- outputs --------------------------------------------------------------------------
    def table_outputs(self) -> dict[str, str | Reported]:
        return {
            "summary_csv_path": Reported(
                self.summary_file(), "summary.rst", {"table": "ranking"}, "Summary"
            ),
            "summary_md_path": self.files.table("summary.md"),
            "groups_csv_path": Reported(
                self.files.table("groups.csv"), "groups.rst", {"table": "groups"}, "Summary"
            ),
            "users_csv_path": Reported(
                self.users_file(), "users.rst", {"table": "users"}, "Summary"
            ),
        }

    def online_outputs(self) -> dict[str, str | Reported]:
        return {
            "online_csv_path": Reported(
                self.files.table("online.csv"), "online.rst", {"table": "online choice"}, "Summary"
            ),
            "online_md_path": self.files.table("online.md"),
            "png_path": Reported(
                self.files.figure("online", "png"),
                "online_figure.rst",
                {"figure": "online choice"},
                "Summary",
            ),
            "pdf_path": self.files.figure("online", "pdf"),
        }

    def summary_figure_outputs(self) -> dict[str, str | Reported]:
        return {
            "png_path": Reported(
                self.files.figure("ranking", "png"), "ranking.rst", {"figure": "ranking"}, "Summary"
            ),
            "pdf_path": self.files.figure("ranking", "pdf"),
        }

    def figure_outputs(self, alternative: str = "{alternative}") -> dict[str, str | Reported]:
        out: dict[str, str | Reported] = {}
        for figure, caption, label in (
            ("sizes", "sizes.rst", "waits by size"),
            ("users", "users_figure.rst", "users"),
            ("week", "week.rst", "a week"),
        ):
            out[f"{figure}_png_path"] = Reported(
                self.files.figure(f"{alternative}/{figure}", "png"),
                caption,
                {"figure": label},
                alternative,
            )
            out[f"{figure}_pdf_path"] = self.files.figure(f"{alternative}/{figure}", "pdf")
        return out

    def week_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``week_gantt``: the representative week's Gantt chart."""
        return self.files.week_outputs(caption="representative_week.rst", subcategory="Summary")

    def targets(self) -> list[str]:
        paths = output_paths(self.table_outputs()) + output_paths(self.summary_figure_outputs())
        if self.week_alternative is not None:
            paths += output_paths(self.week_outputs())
        if self.selectors:
            paths += output_paths(self.online_outputs())
        for name in self.names()[1:]:
            paths += output_paths(self.figure_outputs(name))
        return paths

    # -- step settings ----------------------------------------------------------------------
    def jobs_settings(self, wildcards: object = None) -> dict[str, Any]:
        return {"source": dict(self.source), "machine_procs": self.machine_procs}

    def weeks_settings(self, wildcards: object = None) -> dict[str, Any]:
        return {"weeks": self.weeks, "seed": self.seed, "site": self.site}

    def alternative(self, name: str) -> Alternative:
        for alternative in self.alternatives:
            if alternative.name == name:
                return alternative
        raise ConfigurationError(f"no alternative {name!r} in config whatif")

    def simulate_settings(self, wildcards: Any) -> dict[str, Any]:
        return {"scheduler": self.alternative(wildcards.alternative).scheduler.to_dict()}

    def bootstrap_settings(self, wildcards: Any) -> dict[str, Any]:
        first = int(wildcards.batch) * self.replicates_per_job
        last = min(first + self.replicates_per_job, self.replicates)
        return {
            "scheduler": self.alternative(wildcards.alternative).scheduler.to_dict(),
            "replicates": list(range(first, last)),
            "weeks": self.bootstrap_weeks,
            "seed": self.seed,
            "site": self.site,
        }

    def table_settings(self, wildcards: object = None) -> dict[str, Any]:
        return {
            "names": self.names(),
            "changes": [alternative.change for alternative in self.alternatives],
            "confidence": self.confidence,
            "size_classes": list(self.size_classes),
            "shares": dict(self.shares),
            "replicates": self.replicates,
        }

    def online_settings(self, wildcards: object = None) -> dict[str, Any]:
        return {
            "names": self.names(),
            "selectors": list(self.selectors),
            "draws": self.draws,
            "seed": self.seed,
        }

    def summary_figure_settings(self, wildcards: object = None) -> dict[str, Any]:
        return {"confidence": self.confidence}

    def week_settings(self, wildcards: object = None) -> dict[str, Any]:
        """``week_gantt``: the baseline's scheduler and :attr:`week_alternative`'s."""
        chosen = self.week_alternative
        if chosen is None:  # targets() asks for no week then
            raise ConfigurationError("config whatif: no alternative to draw against the baseline")
        return {
            "baseline": self.alternatives[0].scheduler.to_dict(),
            "alternative": chosen.name,
            "change": chosen.change,
            "scheduler": chosen.scheduler.to_dict(),
        }

    def figure_settings(self, wildcards: Any) -> dict[str, Any]:
        return {
            "alternative": wildcards.alternative,
            "change": self.alternative(wildcards.alternative).change,
            "size_classes": list(self.size_classes),
            "week": self.figure_week,
        }


def _source(
    section: Mapping[str, Any], whole: Mapping[str, Any]
) -> tuple[str, dict[str, Any], str | None]:
    given = [kind for kind in SOURCE_KINDS[1:] if section[kind] is not None]
    if len(given) > 1:
        raise ConfigurationError(
            f"config whatif: give at most one of trace, swf and sacct, got {', '.join(given)}"
        )
    if not given:
        example = dict(section["example"])
        names = example["accounts"]
        if example["users"] < len(names):
            raise ConfigurationError(
                f"config whatif.example.users: {example['users']} users cannot fill "
                f"{len(names)} accounts"
            )
        return EXAMPLE_SITE, {"kind": "example", "seed": int(whole["seed"]), **example}, None
    kind = given[0]
    value = str(section[kind])
    if kind == "trace":
        catalogue_entries(whole, [value], "whatif.trace")
        return value, {"kind": "trace"}, filtered_file(value)
    from pathlib import Path

    if not Path(value).is_file():
        raise ConfigurationError(f"config whatif.{kind}: no file {value!r}")
    source: dict[str, Any] = {"kind": kind}
    if kind == "sacct":
        source["timezone"] = section["sacct_timezone"]
    return Path(value).name.split(".")[0] or kind, source, value


def whatif_plan(config: Mapping[str, Any]) -> WhatifPlan:
    """The plan of the ``whatif`` section of a validated config."""
    from scheduler.studies.common.study import study_section

    whole, section = study_section(config, WhatifPlan.name)
    site, source, path = _source(section, whole)
    alternatives = tuple(study_alternatives(section))
    boot = section["bootstrap"]
    if boot["replicates"] == 1:
        raise ConfigurationError(
            "config whatif.bootstrap.replicates: one replicate gives no interval; use 0 (none) "
            "or at least 2"
        )
    edges = tuple(int(e) for e in section["size_classes"])
    if list(edges) != sorted(edges):
        raise ConfigurationError(f"config whatif.size_classes: must increase, got {list(edges)}")
    if section["figure_week"] >= section["weeks"]:
        raise ConfigurationError(
            f"config whatif.figure_week: {section['figure_week']} is not one of the "
            f"{section['weeks']} resampled weeks (0..{section['weeks'] - 1})"
        )
    bootstrap_weeks = int(boot["weeks"] or section["weeks"])
    selectors = tuple(section["online"]["selectors"])
    import numpy as np

    from scheduler.studies.common.bandits import make_bandit

    for index, spec in enumerate(selectors):
        try:
            make_bandit(spec, ["a", "b"], rng=np.random.default_rng(0))
        except ConfigurationError as error:
            raise ConfigurationError(f"config whatif.online.selectors[{index}]: {error}") from None
    check_plan_size(
        len(alternatives) * (section["weeks"] + boot["replicates"] * bootstrap_weeks),
        "simulated weeks",
        "whatif.weeks x whatif.bootstrap x alternatives",
    )
    return WhatifPlan(
        site=site,
        source=source,
        source_path=path,
        machine_procs=section["machine_procs"],
        alternatives=alternatives,
        shares=dict(section["shares"]),
        weeks=int(section["weeks"]),
        replicates=int(boot["replicates"]),
        bootstrap_weeks=bootstrap_weeks,
        replicates_per_job=int(boot["replicates_per_job"]),
        confidence=confidence_level(section["confidence"], "whatif.confidence"),
        size_classes=edges,
        figure_week=int(section["figure_week"]),
        selectors=selectors,
        draws=int(section["online"]["draws"]),
        seed=int(whole["seed"]),
    )
