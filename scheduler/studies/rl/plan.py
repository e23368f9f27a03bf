"""The reinforcement-learning benchmark's plan: the ``rl`` config section (validated against
``config.schema.yaml``, defaults filled in) checked where the schema cannot (the reference
policy in both lists, the PPO logs among the study's, the sequences inside the logs is checked
when a log is read), and the files, targets and step settings it implies. Errors name the
config key (``rl.<key>``).

Files: ``results/rl/<trace>/sequences.parquet`` (every policy on every test sequence, both
modes, with and without backfilling), ``results/rl/<trace>/ppo/{model.zip,curve.parquet,
evaluation.parquet}`` (the agent, its learning curve, its test sequences), the tables and the
figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.core.units import parse_duration
from scheduler.policies.learned import learned_policy_files
from scheduler.studies.common.bandits import make_bandit
from scheduler.studies.common.config import TraceEntry, catalogue_entries, policy_list
from scheduler.studies.common.paths import Reported, StudyFiles, output_paths, trace_file

__all__ = ["COMPATIBLE", "EASY", "MODES", "RlPlan", "rl_plan"]

#: The ways a policy is simulated: RLScheduler's scheduler and scores (``compatible``),
#: schedlab's EASY and policies (``easy``), and the two steps between them that the ablation
#: takes (``rl.ablation``): RLScheduler's scheduler with EASY's backfilling rule, and schedlab's
#: EASY with RLScheduler's scores (docs/rl.md, "From RLScheduler's numbers to schedlab's").
COMPATIBLE = "compatible"
COMPATIBLE_EASY_BACKFILL = "compatible+easy-backfill"
EASY_COMPATIBLE_SCORES = "easy+compatible-scores"
EASY = "easy"
MODES = (COMPATIBLE, COMPATIBLE_EASY_BACKFILL, EASY_COMPATIBLE_SCORES, EASY)

#: The tables of the study (file stem -> what the report says of it).
TABLES = {
    "sequences": "mean bounded slowdown of every policy, intervals over the test sequences",
    "published": "RLScheduler's published table beside the compatible mode",
    "comparison": "each policy against the reference, paired over sequences",
}


@dataclass(frozen=True)
class RlPlan:
    """The RL benchmark, checked (see the configuration reference for every key)."""

    #: The study's name: its config section and folders.
    name: ClassVar[str] = "rl"

    traces: tuple[TraceEntry, ...]
    job_slice: int | None
    count: int
    length: int
    #: the test sequences' draw (RLScheduler's ``--seed``)
    sequence_seed: int
    #: the config's seed: the bandits' draws
    seed: int
    heuristics: tuple[str, ...]
    policies: tuple[str, ...]
    backfill: tuple[bool, ...]
    ablation: bool
    bandits: tuple[str, ...]
    period_s: float
    reference: str
    confidence: float
    ppo: Mapping[str, Any]
    ppo_traces: tuple[str, ...]

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    @property
    def wildcards(self) -> dict[str, str]:
        """Wildcard constraints of the study's file names (its rules file)."""
        return {"rl_figure": "|".join(self.figure_names()) or "none"}

    # -- files --------------------------------------------------------------------------------
    def source_file(self, trace: str = "{trace}") -> str:
        """The log as downloaded: RLScheduler reads the raw log (no filter of schedlab's)."""
        return trace_file(trace)

    def sequences_file(self, trace: str = "{trace}") -> str:
        return self.files.result(f"{trace}/sequences.parquet")

    def ppo_file(self, name: str, trace: str = "{trace}") -> str:
        """One of the agent's files of ``trace``: ``model.zip``, ``curve.parquet``,
        ``evaluation.parquet``."""
        return self.files.result(f"{trace}/ppo/{name}")

    def sequence_files(self, wildcards: object = None) -> list[str]:
        return [self.sequences_file(trace) for trace in self.trace_names]

    def evaluation_files(self, wildcards: object = None) -> list[str]:
        return [self.ppo_file("evaluation.parquet", trace) for trace in self.ppo_traces]

    def curve_files(self, wildcards: object = None) -> list[str]:
        return [self.ppo_file("curve.parquet", trace) for trace in self.ppo_traces]

    def policy_files(self, wildcards: object = None) -> list[str]:
        """The learned functions' fit files the EASY policies read (none for the others)."""
        return learned_policy_files(self.policies)

    def figure_names(self) -> tuple[str, ...]:
        return ("sequences", "learning_curve") if self.ppo_traces else ("sequences",)

    def tables_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``rl_tables`` (step parameter -> file)."""
        out: dict[str, str | Reported] = {"runs_path": self.files.result("runs.parquet")}
        for stem, label in TABLES.items():
            out[f"{stem}_csv_path"] = Reported(self.files.table(f"{stem}.csv"), f"{stem}.rst",
                                               {"table": label})  # fmt: skip
            out[f"{stem}_md_path"] = self.files.table(f"{stem}.md")
        return out

    def week_inputs(self, wildcards: object = None) -> dict[str, Any]:
        """The inputs of ``rl_week``: the first log, the study's runs, the learned functions'
        fit files its policies read."""
        return {"swf_path": self.source_file(self.trace_names[0]),
                "runs_path": str(self.tables_outputs()["runs_path"]),
                "_policy_paths": self.policy_files()}  # fmt: skip

    def week_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``rl_week``: the representative sequence's Gantt chart."""
        return self.files.week_outputs(label="representative sequence")

    def targets(self) -> list[str]:
        figures = [self.files.figure(name, ext) for name in self.figure_names()
                   for ext in ("png", "pdf")]  # fmt: skip
        week = output_paths(self.week_outputs()) if len(self.policies) > 1 else []
        return output_paths(self.tables_outputs()) + figures + week

    # -- step settings (keyword arguments of scheduler.studies.rl.steps) -----------------------
    def sequence_settings(self, wildcards: Any) -> dict[str, Any]:
        """``simulate_sequences`` of one log."""
        return {
            "trace": wildcards.trace, "job_slice": self.job_slice, "count": self.count,
            "length": self.length, "seed": self.sequence_seed,
            "heuristics": list(self.heuristics), "policies": list(self.policies),
            "backfill": list(self.backfill), "bandits": list(self.bandits),
            "period_s": self.period_s, "bandit_seed": self.seed, "ablation": self.ablation,
        }  # fmt: skip

    def train_settings(self, wildcards: Any) -> dict[str, Any]:
        """``train_agent`` of one log: the PPO settings and the test sequences it must avoid."""
        return {"trace": wildcards.trace, "job_slice": self.job_slice, "count": self.count,
                "length": self.length, "seed": self.sequence_seed,
                **self._ppo_settings()}  # fmt: skip

    def evaluate_settings(self, wildcards: Any) -> dict[str, Any]:
        """``evaluate_agent`` of one log."""
        return {
            "trace": wildcards.trace, "job_slice": self.job_slice, "count": self.count,
            "length": self.length, "seed": self.sequence_seed, "backfill": list(self.backfill),
            "semantics": self.ppo["semantics"], "window": self.ppo["window"],
        }  # fmt: skip

    def _ppo_settings(self) -> dict[str, Any]:
        keys = ("semantics", "train_backfill", "timesteps", "train_length", "window", "n_steps",
                "batch_size", "epochs", "learning_rate", "threads", "sjf_filter")  # fmt: skip
        return {**{key: self.ppo[key] for key in keys}, "ppo_seed": self.ppo["seed"]}

    @property
    def ppo_threads(self) -> int:
        return int(self.ppo["threads"])

    def tables_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``rl_tables``."""
        return {"reference": self.reference, "confidence": self.confidence}

    def figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``rl_figure``."""
        return {"figure": wildcards.rl_figure}

    def week_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``rl_week``: the first log's test sequences, the reference and the policies in
        schedlab's EASY, with backfilling when the study runs it."""
        return {
            "trace": self.trace_names[0], "job_slice": self.job_slice, "count": self.count,
            "length": self.length, "seed": self.sequence_seed, "reference": self.reference,
            "policies": list(self.policies), "backfill": True in self.backfill,
        }  # fmt: skip


def _period_s(period: str) -> float:
    try:
        period_s = parse_duration(period)
    except (ConfigurationError, ValueError):
        raise ConfigurationError(
            f"config rl.online.period: {period!r} is not a duration with a unit (e.g. 12h)"
        ) from None
    if period_s is None or not 0 < period_s < math.inf:
        raise ConfigurationError(f"config rl.online.period: {period!r} must be > 0")
    return float(period_s)


def rl_plan(config: Mapping[str, Any]) -> RlPlan:
    """The plan of the ``rl`` section of ``config`` (validated here; defaults filled)."""
    from scheduler.studies.common.study import study_section

    whole, section = study_section(config, RlPlan.name)
    traces = catalogue_entries(whole, section["traces"], "rl.traces")
    policies = policy_list(section["policies"], "rl.policies")
    heuristics = tuple(section["heuristics"])
    reference = section["reference"]
    if reference not in heuristics or reference.upper() not in {p.upper() for p in policies}:
        raise ConfigurationError(
            f"config rl.reference: {reference!r} must be in rl.heuristics and in rl.policies "
            "(each mode is compared with its own reference)"
        )
    sequences = section["sequences"]
    job_slice = section["job_slice"]
    length = sequences["length"]
    if job_slice is not None and job_slice - length - 1 <= length:
        raise ConfigurationError(
            f"config rl.job_slice: {job_slice} jobs cannot hold test sequences of "
            f"rl.sequences.length {length} (starts are drawn in [length, job_slice - length - 1))"
        )
    online = section["online"]
    period_s = _period_s(online["period"])
    for spec in online["bandits"]:
        try:
            make_bandit(spec, policies, rng=np.random.default_rng(0))
        except ConfigurationError as error:
            raise ConfigurationError(f"config rl.online.bandits: {error}") from None
    ppo = section["ppo"]
    ppo_traces: tuple[str, ...] = ()
    if ppo["enabled"]:
        names = section["traces"] if ppo["traces"] is None else ppo["traces"]
        for name in names:
            if name not in section["traces"]:
                raise ConfigurationError(f"config rl.ppo.traces: {name!r} is not in rl.traces")
        ppo_traces = tuple(names)
        band = ppo["sjf_filter"]
        if band is not None and not band[0] < band[1]:
            raise ConfigurationError(
                f"config rl.ppo.sjf_filter: {list(band)} must be [low, high] with low < high"
            )
        if ppo["batch_size"] > ppo["n_steps"]:
            raise ConfigurationError(
                f"config rl.ppo.batch_size: {ppo['batch_size']} exceeds rl.ppo.n_steps "
                f"{ppo['n_steps']} (a minibatch is part of one rollout)"
            )
    return RlPlan(
        traces=traces, job_slice=job_slice, count=sequences["count"], length=length,
        sequence_seed=sequences["seed"], seed=whole["seed"], heuristics=heuristics,
        policies=policies,
        backfill=tuple(section["backfill"]), ablation=section["ablation"],
        bandits=tuple(online["bandits"]),
        period_s=period_s, reference=reference,
        confidence=section["confidence"], ppo=dict(ppo), ppo_traces=ppo_traces,
    )  # fmt: skip
