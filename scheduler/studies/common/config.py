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
from scheduler.core.units import parse_duration
from scheduler.policies import POLICIES

__all__ = [
    "Threshold",
    "TraceEntry",
    "catalogue_entries",
    "policy_list",
    "require_in",
    "threshold_list",
]


_THRESHOLD_LABEL = re.compile(r"^(none|[0-9]+(\.[0-9]+)?(s|m|h|d|w))$")


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


def policy_list(value: Sequence[str], key: str) -> tuple[str, ...]:
    known = {name.upper(): name for name in POLICIES}
    out = []
    for name in value:
        canonical = known.get(str(name).upper())
        if canonical is None:
            raise ConfigurationError(
                f"config {key}: unknown policy {name!r}; known: {', '.join(sorted(POLICIES))}"
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
            raise ConfigurationError(
                f"config {key}: threshold {label!r} needs a unit (s, m, h, d, w) or 'none', "
                "e.g. 20h"
            )
        out.append(Threshold(text, parse_duration(text)))
    seconds = [t.seconds for t in out]
    if len(set(seconds)) != len(seconds):
        raise ConfigurationError(f"config {key}: two thresholds are the same duration: {value}")
    return tuple(sorted(out, key=lambda t: t.seconds))


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
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
            raise ConfigurationError(
                f"config traces: name {name!r} must use letters, digits, '.', '_' or '-' only"
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
