"""What the studies' plans share: the trace catalogue, policy lists and durations, checked.

The JSON schema ``workflow/schemas/config.schema.yaml`` checks types and shapes (Snakemake
validates the config against it first); each study's ``plan`` module checks what a schema
cannot, with these helpers: policy names against the registry, thresholds with units and without
duplicates, studied traces present in the catalogue. Every error is a
:class:`~scheduler.core.errors.ConfigurationError` naming the config key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.core.units import parse_duration
from scheduler.policies import MULTIFACTOR, POLICIES

__all__ = [
    "CONSERVATIVE",
    "MAX_SIMULATIONS",
    "MAX_SIMULATION_JOBS",
    "MAX_TRIALS",
    "NUMBER_LABEL_PATTERN",
    "Threshold",
    "TraceEntry",
    "catalogue_entries",
    "check_plan_size",
    "confidence_level",
    "config_flag",
    "duration_problem",
    "label_number",
    "number_label",
    "policy_list",
    "require_in",
    "threshold_list",
]


_THRESHOLD_LABEL = re.compile(r"^(none|[0-9]+(\.[0-9]+)?(s|m|h|d|w))$")
_NUMBER_WITH_UNIT = re.compile(r"^[0-9.eE+-]+\s*(s|m|h|d|w)$")

#: Most jobs one study may plan per trace (Snakemake's dry run grows with them, silently).
MAX_SIMULATION_JOBS = 500_000
#: Most simulated schedules one study may plan per trace (a memory run of the whole log, a
#: learned study's trial of one tuple...): a plan above it stops before any work.
MAX_SIMULATIONS = 1_000_000
#: Most trials (simulations of one small tuple of jobs: the learned study's) one plan may ask.
MAX_TRIALS = 100_000_000_000


#: What :func:`number_label` writes (the wildcard constraint of a number in a file name).
NUMBER_LABEL_PATTERN = r"[0-9][0-9.e+]*(e-[0-9]+)?"


def check_plan_size(count: int, what: str, keys: str, cap: int = MAX_SIMULATIONS) -> None:
    """Stop a plan of more than ``cap`` ``what`` per trace before any work.

    ``keys`` names the config keys whose product ``count`` is (``"memory.seeds x
    memory.loads"``); the message says how many were asked and the most allowed.

    Raises
    ------
    ConfigurationError
        ``count > cap``.
    """
    if count > cap:
        raise ConfigurationError(
            f"config {keys}: the plan asks for {count:,} {what} per trace, more than the "
            f"{cap:,} a study may plan; lower these keys"
        )


def number_label(value: float) -> str:
    """The label of a number that names files (a load, a memory size, a share): the shortest
    text that reads back as the same float (:func:`label_number`): ``0.5``, ``24``,
    ``1048576``, ``1e-09``, ``1e+16``. Values are non-negative and finite (the schema's bounds)."""
    number = float(value)
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    return repr(number)


def label_number(label: str) -> float:
    """The number a :func:`number_label` label names."""
    return float(label)


@dataclass(frozen=True)
class TraceEntry:
    """One log of the catalogue: archive URL, optional SHA-256 and machine size (processors)."""

    name: str
    url: str
    sha256: str | None = None
    machine_procs: int | None = None


@dataclass(frozen=True)
class Threshold:
    """A waiting-time threshold Θ: its config label (``"20h"``, ``"none"``) and seconds."""

    label: str
    seconds: float


#: The backfilling name under which a study runs conservative backfilling in the primary order
#: (:func:`scheduler.simulate_conservative`: every waiting job gets a reservation) instead of
#: EASY: the pair (P, CONSERVATIVE) of ``tuning.backfill_policies``. Not a policy (it orders
#: nothing), so no policy may take the name.
CONSERVATIVE = "CONSERVATIVE"


def policy_list(
    value: Sequence[str], key: str, *, conservative: bool = False, multifactor: bool = False
) -> tuple[str, ...]:
    """The registered spelling of each policy name of ``value`` (config key ``key``), in order;
    ``conservative``: :data:`CONSERVATIVE` is accepted too (a backfilling policy's key);
    ``multifactor``: :data:`~scheduler.sim.multifactor.MULTIFACTOR` too (Slurm's multifactor
    priority as a primary order, a study with a ``slurm_conf``)."""
    known = {name.upper(): name for name in POLICIES}
    if conservative:
        known[CONSERVATIVE] = CONSERVATIVE
    if multifactor:
        known[MULTIFACTOR.upper()] = MULTIFACTOR
    out = []
    for name in value:
        canonical = known.get(str(name).upper())
        if canonical is None:
            also = f" or {CONSERVATIVE} (conservative backfilling)" if conservative else ""
            also += f" or {MULTIFACTOR} (Slurm's multifactor priority)" if multifactor else ""
            raise ConfigurationError(
                f"config {key}: unknown policy {name!r}; known: {', '.join(sorted(POLICIES))}{also}"
            )
        out.append(canonical)
    if len(set(out)) != len(out):
        raise ConfigurationError(f"config {key}: a policy is listed twice: {list(value)}")
    return tuple(out)


def threshold_list(value: Sequence[str], key: str) -> tuple[Threshold, ...]:
    out = []
    for label in value:
        text = str(label).strip()
        if not _THRESHOLD_LABEL.match(text):
            raise ConfigurationError(f"config {key}: {duration_problem(label)}")
        out.append(Threshold(text, parse_duration(text)))
    seconds = [t.seconds for t in out]
    if len(set(seconds)) != len(seconds):
        raise ConfigurationError(f"config {key}: two thresholds are the same duration: {value}")
    return tuple(sorted(out, key=lambda t: t.seconds))


def duration_problem(label: object, *, none: bool = True) -> str:
    """What is wrong with a duration label that the config refuses (for the error message)."""
    text = str(label).strip()
    units = "(s, m, h, d, w)" + (" or 'none'" if none else "")
    if _NUMBER_WITH_UNIT.match(text):
        return (
            f"{label!r}: write the number in plain decimal digits before the unit, "
            f"e.g. 1000s or 1.5h (no exponent, no sign)"
        )
    if text.lower() == "none" and not none:
        return f"{label!r}: a duration is needed here, 'none' is not allowed"
    return f"{label!r} needs a unit {units}, e.g. 20h"


def config_flag(value: object, key: str) -> bool:
    """A yes/no config value: only true or false (YAML booleans); anything else is refused
    naming ``key`` (the API's parser, :func:`scheduler.core.flags.flag`)."""
    return flag(value, f"config {key}")


def confidence_level(value: object, key: str) -> float:
    level = float(value)  # type: ignore[arg-type]
    if not 0.0 < level < 1.0:  # also refuses NaN, which the schema's bounds let through
        raise ConfigurationError(f"config {key}: must be in (0, 1), got {value!r}")
    return level


def catalogue_entries(
    config: Mapping[str, Any], names: Sequence[str], key: str = "tuning.traces"
) -> tuple[TraceEntry, ...]:
    catalogue = config.get("traces") or {}
    entries = []
    for name in names:
        if name not in catalogue:
            known = ", ".join(sorted(catalogue)) or "none"
            raise ConfigurationError(
                f"config {key}: unknown trace {name!r}; the catalogue (traces:) has {known}"
            )
        item = catalogue[name]
        entries.append(
            TraceEntry(
                name=name,
                url=item["url"],
                sha256=(item.get("sha256") or None),
                machine_procs=item.get("machine_procs"),
            )
        )
    return tuple(entries)


def require_in(ok: bool, key: str, value: str, space: str) -> None:
    if not ok:
        raise ConfigurationError(f"config {key}: {value!r} must be one of {space}")
