"""The run-time prediction study's plan: the ``prediction`` config section checked (traces,
predictors and losses from their registries, corrections, backfilling variants, the learner's
settings) and the heuristic triples it implies. Errors name the config key.

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
from typing import Any

from scheduler.core.errors import ConfigurationError, quote
from scheduler.predictors import CORRECTIONS, LOSSES, PREDICTORS
from scheduler.predictors.losses import ALL_LOSSES, GAMMA_FLOOR, LossSpec, parse_loss
from scheduler.predictors.nag import ETA
from scheduler.sim.prediction import LAM
from scheduler.studies.common.config import TraceEntry, catalogue_entries

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
#: The overrun treatments of the strong filter (``scheduler.traces.filters``).
_OVERRUNS = ("clip", "drop")


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
    """The run-time prediction study, checked."""

    traces: tuple[TraceEntry, ...]
    overrun: str
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
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

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


def _names(value: object, key: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigurationError(f"config {key}: must be a list, got {quote(value)}")
    return [str(item) for item in value]


def _unique(items: Sequence[str], key: str) -> None:
    seen: set[str] = set()
    for item in items:
        if item in seen:
            raise ConfigurationError(f"config {key}: {item!r} is listed twice")
        seen.add(item)


def _losses(value: object) -> tuple[LossSpec, ...]:
    """``prediction.losses``: loss names or specs, or ``all`` for the 20 losses."""
    names = _names(value, "prediction.losses")
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
            if not losses:
                raise ConfigurationError(
                    "config prediction.losses: give at least one loss for the nag predictor "
                    "(or remove nag from prediction.predictors)"
                )
            techniques.extend(
                Technique(f"nag-{loss_slug(loss)}", LEARNED, loss.spec) for loss in losses
            )
        else:
            techniques.append(Technique(name, name))
    return tuple(techniques)


def _positive(section: Mapping[str, Any], key: str, default: float, *, zero: bool) -> float:
    value = section.get(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"config prediction.learner.{key}: not a number: {quote(value)}"
        ) from None
    if not (number >= 0 if zero else number > 0) or number == float("inf"):
        bound = ">= 0" if zero else "> 0"
        raise ConfigurationError(
            f"config prediction.learner.{key}: must be finite and {bound}, got {value!r}"
        )
    return number


def prediction_plan(config: Mapping[str, Any]) -> PredictionPlan:
    """Check the ``prediction`` section of a (schema-validated) config and return its plan."""
    section = config.get("prediction") or {}
    traces = catalogue_entries(config, section.get("traces", []), "prediction.traces")
    if not traces:
        raise ConfigurationError("config prediction.traces: give at least one trace")
    overrun = str(section.get("overrun", "clip"))
    if overrun not in _OVERRUNS:
        raise ConfigurationError(
            f"config prediction.overrun: {overrun!r} must be one of {', '.join(_OVERRUNS)}"
        )
    predictors = [
        PREDICTORS.lookup(name, where="config prediction.predictors")
        for name in _names(section.get("predictors", ["requested"]), "prediction.predictors")
    ]
    _unique(predictors, "prediction.predictors")
    if "requested" not in predictors:
        raise ConfigurationError(
            "config prediction.predictors: must include 'requested' (plain EASY, the "
            "reference of every relative figure)"
        )
    losses = _losses(section.get("losses", ["eloss"])) if LEARNED in predictors else ()
    corrections = tuple(
        CORRECTIONS.lookup(name, where="config prediction.corrections")
        for name in _names(section.get("corrections", ["incremental"]), "prediction.corrections")
    )
    _unique(corrections, "prediction.corrections")
    if not corrections and any(p in _CORRECTED for p in predictors):
        raise ConfigurationError(
            "config prediction.corrections: give at least one correction for ave2 / nag"
        )
    backfills = tuple(
        name.lower() for name in _names(section.get("backfill", ["easy"]), "prediction.backfill")
    )
    for name in backfills:
        if name not in BACKFILL_VARIANTS:
            raise ConfigurationError(
                f"config prediction.backfill: {name!r} must be one of "
                f"{', '.join(BACKFILL_VARIANTS)}"
            )
    _unique(backfills, "prediction.backfill")
    if "easy" not in backfills:
        raise ConfigurationError(
            "config prediction.backfill: must include 'easy' (plain EASY is the reference)"
        )
    learner = section.get("learner") or {}
    techniques = _techniques(predictors, losses)
    slugs = [t.slug for t in techniques]
    ecdf = _names(section.get("ecdf_techniques") or slugs, "prediction.ecdf_techniques")
    for slug in ecdf:
        if slug not in slugs:
            raise ConfigurationError(
                f"config prediction.ecdf_techniques: {slug!r} is not a technique of the study "
                f"({', '.join(slugs)})"
            )
    lolo_score = str(section.get("lolo_score", "sum"))
    if lolo_score not in ("sum", "relative"):
        raise ConfigurationError(
            f"config prediction.lolo_score: {lolo_score!r} must be 'sum' or 'relative'"
        )
    return PredictionPlan(
        traces=traces,
        overrun=overrun,
        techniques=techniques,
        corrections=corrections,
        backfills=backfills,
        eta_s=_positive(learner, "eta_s", ETA, zero=False),
        lam=_positive(learner, "lam", LAM, zero=True),
        squares=bool(learner.get("squares", True)),
        gamma_floor=_positive(learner, "gamma_floor", GAMMA_FLOOR, zero=False),
        lolo_score=lolo_score,
        ecdf_techniques=tuple(ecdf),
    )
