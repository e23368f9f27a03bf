"""The run-time prediction study's plan: the ``prediction`` config section (validated against
``config.schema.yaml``, defaults filled in) checked where the schema cannot (predictors, losses
and corrections from their registries, what the references need), and the heuristic triples,
files, targets and step settings it implies. Errors name the config key.

Vocabulary (``docs/prediction.md``):

* a *technique* is a prediction technique: ``requested``, ``ave2``, ``clairvoyant`` or the NAG
  learner with one loss (slug ``nag-<loss name>`` for a named loss such as ``nag-eloss``,
  ``nag-L<code>`` for the others, the loss code of :mod:`scheduler.predictors.losses`);
* a *triple* is (technique, correction, backfilling variant). REQUESTED and CLAIRVOYANT
  predictions are never corrected (a REQUESTED prediction already is p̃_j, a CLAIRVOYANT one is
  never outlived), so their triples carry the correction ``none``;
* EASY is ``requested/none/easy``, EASY++ is ``ave2/incremental/sjbf``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from scheduler.core.errors import ConfigurationError
from scheduler.predictors import CORRECTIONS, LOSSES, PREDICTORS
from scheduler.predictors.losses import ALL_LOSSES, LossSpec, parse_loss
from scheduler.predictors.settings import check_learner
from scheduler.studies.common.config import TraceEntry, catalogue_entries
from scheduler.studies.common.paths import Reported, StudyFiles, filtered_file, output_paths

__all__ = [
    "BACKFILL_VARIANTS",
    "EASY",
    "EASY_PLUS_PLUS",
    "LEARNED",
    "NO_CORRECTION",
    "PredictionPlan",
    "Technique",
    "Triple",
    "loss_slug",
    "prediction_plan",
]

#: The backfilling variants: candidates in FCFS order, or by increasing prediction.
BACKFILL_VARIANTS: tuple[str, ...] = ("easy", "sjbf")
#: The correction of the techniques that are never corrected.
NO_CORRECTION = "none"
#: The predictors whose predictions can be outlived, hence corrected.
_CORRECTED = ("ave2", "nag")
#: The predictor whose techniques are learned (one per loss).
LEARNED = "nag"


@dataclass(frozen=True)
class Technique:
    """A prediction technique: ``slug`` names its files and rows; ``loss`` is the canonical loss
    spec of a NAG technique (else ``None``)."""

    slug: str
    predictor: str
    loss: str | None = None

    @property
    def corrected(self) -> bool:
        """Whether its predictions can be outlived (then each correction is a triple)."""
        return self.predictor in _CORRECTED

    @property
    def learned(self) -> bool:
        return self.predictor == LEARNED


@dataclass(frozen=True)
class Triple:
    """A heuristic triple (technique slug, correction, backfilling variant)."""

    technique: str
    correction: str
    backfill: str

    @property
    def label(self) -> str:
        return f"{self.technique}/{self.correction}/{self.backfill}"


#: Plain EASY and EASY++ (Tsafrir, Etsion & Feitelson): the study's two references.
EASY = Triple("requested", NO_CORRECTION, "easy")
EASY_PLUS_PLUS = Triple("ave2", "incremental", "sjbf")


def loss_slug(loss: LossSpec) -> str:
    """``eloss``, ``squared``, ``absolute`` for the named losses, else ``L<code>`` (0 … 19)."""
    for name in LOSSES:
        if LOSSES[name] == loss:
            return name
    return f"L{loss.code}"


@dataclass(frozen=True)
class PredictionPlan:
    """The run-time prediction study, checked (see the configuration reference for every key).

    Files: ``results/prediction/<trace>/runs/<technique>.parquet`` (a technique's triples on a
    log) and ``…/predictions/<technique>.parquet`` (its job-level predictions),
    ``results/prediction/runs.parquet``, the tables and the figures.
    """

    #: The study's name: its config section and folders.
    name: ClassVar[str] = "prediction"

    traces: tuple[TraceEntry, ...]
    overrun: str
    processors: str
    reservation: str
    whole_seconds: bool
    techniques: tuple[Technique, ...]
    corrections: tuple[str, ...]
    backfills: tuple[str, ...]
    eta_s: float
    lam: float
    squares: bool
    gamma_floor: float
    lolo_score: str
    ecdf_techniques: tuple[str, ...]

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    @property
    def several_logs(self) -> bool:
        """Whether the leave-one-log-out table and the all-log figures are made (two logs or
        more)."""
        return len(self.traces) > 1

    def technique(self, slug: str) -> Technique:
        for technique in self.techniques:
            if technique.slug == slug:
                return technique
        raise ConfigurationError(f"no prediction technique with slug {slug!r}")

    def corrections_of(self, technique: Technique) -> tuple[str, ...]:
        """The corrections a technique runs with (``("none",)`` when it is never corrected)."""
        return self.corrections if technique.corrected else (NO_CORRECTION,)

    def triples(self, technique: Technique | None = None) -> tuple[Triple, ...]:
        """Every triple of one technique (of all of them when ``None``), in config order."""
        chosen = self.techniques if technique is None else (technique,)
        return tuple(
            Triple(t.slug, correction, backfill)
            for t in chosen
            for correction in self.corrections_of(t)
            for backfill in self.backfills
        )

    @property
    def has_easy_plus_plus(self) -> bool:
        return EASY_PLUS_PLUS in self.triples()

    def learner(self) -> dict[str, Any]:
        """The NAG learner's settings (keyword arguments of ``simulate_predicted``)."""
        return {"eta": self.eta_s, "lam": self.lam, "squares": self.squares,
                "gamma_floor": self.gamma_floor}  # fmt: skip

    # -- files --------------------------------------------------------------------------------
    @property
    def wildcards(self) -> dict[str, str]:
        """Wildcard constraints of the study's file names (its rules file)."""
        return {"technique": r"[A-Za-z0-9-]+"}

    def source_file(self, trace: str = "{trace}") -> str:
        """The log the study simulates: strongly filtered, overruns as ``prediction.overrun``."""
        return filtered_file(trace, self.overrun)

    def technique_run(self, trace: str = "{trace}", technique: str = "{technique}") -> str:
        return f"{trace}/{technique}"

    def technique_outputs(self) -> dict[str, str]:
        """The outputs of ``simulate_technique`` (patterns in ``{trace}``, ``{technique}``)."""
        return {
            "runs_path": self.files.result("{trace}/runs/{technique}.parquet"),
            "predictions_path": self.files.result("{trace}/predictions/{technique}.parquet"),
        }

    def run_files(self, wildcards: object = None) -> list[str]:
        """Every technique's runs on every log."""
        pattern = self.technique_outputs()["runs_path"]
        return [
            pattern.format(trace=trace, technique=technique.slug)
            for trace in self.trace_names
            for technique in self.techniques
        ]

    def ecdf_prediction_files(self, wildcards: Any) -> list[str]:
        """The job-level predictions a log's ECDF figures draw."""
        pattern = self.technique_outputs()["predictions_path"]
        return [pattern.format(trace=wildcards.trace, technique=t) for t in self.ecdf_techniques]

    def collect_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``collect_runs``."""
        return {
            "parquet_path": self.files.result("runs.parquet"),
            "csv_path": Reported(
                self.files.table("runs.csv"), "table.rst",
                {"table": "every simulated triple (CSV)"},
            ),
        }  # fmt: skip

    def tables_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``prediction_tables``: the leave-one-log-out table only with two
        logs or more."""
        names = ["best_worst", "errors", "published"] + (["lolo"] if self.several_logs else [])
        outputs: dict[str, str | Reported] = {}
        for name in names:
            outputs[f"{name}_csv_path"] = Reported(
                self.files.table(f"{name}.csv"), "table.rst", {"table": name}
            )
            outputs[f"{name}_md_path"] = self.files.table(f"{name}.md")
        return outputs

    @property
    def week_trace(self) -> str:
        """The log of the representative-week figure: the first of ``prediction.traces``."""
        return self.traces[0].name

    @property
    def draws_week(self) -> bool:
        """Whether the representative week is drawn: the study runs a triple besides EASY."""
        return any(triple != EASY for triple in self.triples())

    def week_inputs(self) -> dict[str, str]:
        """The inputs of ``draw_week``: the week log and the runs table (which names the
        triple drawn beside EASY)."""
        return {
            "filtered_path": self.source_file(self.week_trace),
            "runs_path": str(self.collect_outputs()["parquet_path"]),
        }

    def week_outputs(self) -> dict[str, str | Reported]:
        """The outputs of ``draw_week``: the representative week (PNG in the report, PDF)."""
        return self.files.week_outputs(subcategory=self.week_trace)

    def targets(self) -> list[str]:
        from scheduler.studies.prediction.steps import STUDY_FIGURES, TRACE_FIGURES

        tables = output_paths(self.collect_outputs()) + output_paths(self.tables_outputs())
        figures = [
            self.files.figure(f"{trace}/{figure}", ext)
            for trace in self.trace_names
            for figure in TRACE_FIGURES
            for ext in ("png", "pdf")
        ]
        if self.several_logs:
            figures += [
                self.files.figure(figure, ext) for figure in STUDY_FIGURES for ext in ("png", "pdf")
            ]
        if self.draws_week:
            figures += output_paths(self.week_outputs())
        return tables + figures

    # -- step settings (keyword arguments of scheduler.studies.prediction.steps) --------------
    def technique_settings(self, wildcards: Any) -> dict[str, Any]:
        """``simulate_technique``: one technique's triples on one log."""
        technique = self.technique(wildcards.technique)
        return {
            "trace": wildcards.trace,
            "technique": technique.slug,
            "predictor": technique.predictor,
            "loss": technique.loss,
            "corrections": list(self.corrections_of(technique)),
            "backfills": list(self.backfills),
            "processors": self.processors,
            "reservation": self.reservation,
            "whole_seconds": self.whole_seconds,
            "learner": self.learner(),
        }

    def tables_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``prediction_tables``."""
        return {"lolo_score": self.lolo_score}

    def trace_figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``trace_figure``."""
        return {"figure": wildcards.prediction_figure, "trace": wildcards.trace}

    def study_figure_settings(self, wildcards: Any) -> dict[str, Any]:
        """``study_figure``."""
        return {"figure": wildcards.prediction_figure}

    def week_settings(self, wildcards: Any = None) -> dict[str, Any]:
        """``draw_week``: the week log and the simulation settings of ``simulate_technique``."""
        return {
            "trace": self.week_trace,
            "processors": self.processors,
            "reservation": self.reservation,
            "whole_seconds": self.whole_seconds,
            "learner": self.learner(),
        }


def _unique(items: Sequence[str], key: str) -> None:
    seen: set[str] = set()
    for item in items:
        if item in seen:
            raise ConfigurationError(f"config {key}: {item!r} is listed twice")
        seen.add(item)


def _losses(names: Sequence[str]) -> tuple[LossSpec, ...]:
    """``prediction.losses``: loss names or specs, or ``all`` for the 20 losses."""
    if [name.strip().lower() for name in names] == ["all"]:
        return ALL_LOSSES
    losses = tuple(parse_loss(name, where="config prediction.losses") for name in names)
    for k, loss in enumerate(losses):
        if loss in losses[:k]:
            raise ConfigurationError(
                f"config prediction.losses: {names[k]!r} is the same loss as "
                f"{names[losses.index(loss)]!r} ({loss.spec})"
            )
    return losses


def _techniques(predictors: Sequence[str], losses: Sequence[LossSpec]) -> tuple[Technique, ...]:
    techniques: list[Technique] = []
    for name in predictors:
        if name == LEARNED:
            techniques.extend(
                Technique(f"nag-{loss_slug(loss)}", LEARNED, loss.spec) for loss in losses
            )
        else:
            techniques.append(Technique(name, name))
    return tuple(techniques)


def prediction_plan(config: Mapping[str, Any]) -> PredictionPlan:
    """The plan of the ``prediction`` section of ``config`` (validated here; defaults filled)."""
    from scheduler.studies.common.study import study_section

    whole, section = study_section(config, PredictionPlan.name)
    traces = catalogue_entries(whole, section["traces"], "prediction.traces")
    predictors = [
        PREDICTORS.lookup(name, where="config prediction.predictors")
        for name in section["predictors"]
    ]
    _unique(predictors, "prediction.predictors")
    if "requested" not in predictors:
        raise ConfigurationError(
            "config prediction.predictors: must include 'requested' (plain EASY, the "
            "reference of every relative figure)"
        )
    losses = _losses(section["losses"]) if LEARNED in predictors else ()
    corrections = tuple(
        CORRECTIONS.lookup(name, where="config prediction.corrections")
        for name in section["corrections"]
    )
    _unique(corrections, "prediction.corrections")
    if not corrections and any(p in _CORRECTED for p in predictors):
        raise ConfigurationError(
            "config prediction.corrections: give at least one correction for ave2 / nag"
        )
    backfills = tuple(section["backfill"])
    if "easy" not in backfills:
        raise ConfigurationError(
            "config prediction.backfill: must include 'easy' (plain EASY is the reference)"
        )
    techniques = _techniques(predictors, losses)
    slugs = [t.slug for t in techniques]
    ecdf = list(section["ecdf_techniques"]) or slugs
    for slug in ecdf:
        if slug not in slugs:
            raise ConfigurationError(
                f"config prediction.ecdf_techniques: {slug!r} is not a technique of the study "
                f"({', '.join(slugs)})"
            )
    learner = section["learner"]
    # the schema bounds them already (its maxima are the predictors' constants); the one check
    # of the learner's settings, as every other entry point, names the config keys
    eta_s, lam, gamma_floor = check_learner(
        learner["eta_s"], learner["lam"], learner["gamma_floor"],
        keys={name: f"config prediction.learner.{key}"
              for name, key in (("eta", "eta_s"), ("lam", "lam"), ("gamma_floor", "gamma_floor"))},
    )  # fmt: skip
    return PredictionPlan(
        traces=traces,
        overrun=section["overrun"],
        processors=section["processors"],
        reservation=section["reservation"],
        whole_seconds=section["whole_seconds"],
        techniques=techniques,
        corrections=corrections,
        backfills=backfills,
        eta_s=eta_s,
        lam=lam,
        squares=learner["squares"],
        gamma_floor=gamma_floor,
        lolo_score=section["lolo_score"],
        ecdf_techniques=tuple(ecdf),
    )
