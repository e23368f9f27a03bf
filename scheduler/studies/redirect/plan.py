"""The redirection study's plan: the ``redirect`` config section checked (logs, weeks, the
(α, θ) grid, the policies of both pools, the options of the slides' future work, the online
choice of θ) and the jobs it implies. Errors name the config key."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler.core.errors import ConfigurationError, quote
from scheduler.core.units import parse_duration
from scheduler.studies.common.bandits import make_bandit
from scheduler.studies.common.config import TraceEntry, catalogue_entries, policy_list

__all__ = ["RedirectPlan", "redirect_plan", "theta_label"]

_SPLITS = ("chronological", "alternate")


def theta_label(theta: float) -> str:
    """The path-safe label of a threshold: ``"inf"`` or the integer count."""
    return "inf" if math.isinf(theta) else str(int(theta))


@dataclass(frozen=True)
class RedirectPlan:
    """The redirection study, checked."""

    traces: tuple[TraceEntry, ...]
    weeks: int
    min_load: Mapping[str, float]
    step_days: int
    split: str
    alphas: tuple[float, ...]
    thetas: tuple[int, ...]
    balance: tuple[bool, ...]
    primary: str
    backfill: str
    tau_s: float
    online_period: str = "1d"
    online_period_s: float = 86400.0
    online_selectors: tuple[str, ...] = ("bandit(eps=0.1)", "ucb")
    seed: int = 0

    @property
    def trace_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.traces)

    def trace_min_load(self, trace: str) -> float:
        return float(self.min_load.get(trace, self.min_load["default"]))

    def alpha_label(self, alpha: float) -> str:
        return f"{alpha:g}"

    def alpha(self, label: str) -> float:
        for alpha in self.alphas:
            if self.alpha_label(alpha) == label:
                return alpha
        raise ConfigurationError(f"alpha {label!r} is not in redirect.alphas")


def _numbers(value: object, key: str) -> list[float]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ConfigurationError(f"config {key}: give a non-empty list, got {quote(value)}")
    try:
        return [float(v) for v in value]
    except (TypeError, ValueError):
        raise ConfigurationError(f"config {key}: not numbers: {quote(value)}") from None


def redirect_plan(config: Mapping[str, Any]) -> RedirectPlan:
    """Check the ``redirect`` section of a (schema-validated) config and return its plan."""
    section = config.get("redirect") or {}
    traces = catalogue_entries(config, section.get("traces", []), "redirect.traces")
    if not traces:
        raise ConfigurationError("config redirect.traces: give at least one trace")
    alphas = _numbers(section.get("alphas", [0.05, 0.1, 0.2]), "redirect.alphas")
    for alpha in alphas:
        if not 0.0 < alpha < 1.0:
            raise ConfigurationError(f"config redirect.alphas: {alpha!r} must be in (0, 1)")
    if len({f"{a:g}" for a in alphas}) != len(alphas):
        raise ConfigurationError("config redirect.alphas: a value is listed twice")
    thetas = _numbers(section.get("thetas", [5, 20, 80]), "redirect.thetas")
    for theta in thetas:
        if theta != int(theta) or theta < 0:
            raise ConfigurationError(
                f"config redirect.thetas: {theta!r} must be a whole number of submissions >= 0"
            )
    if len(set(thetas)) != len(thetas):
        raise ConfigurationError("config redirect.thetas: a value is listed twice")
    min_load: dict[str, float] = {"default": float(section.get("min_load", 0.7))}
    for name, value in (section.get("min_load_by_trace") or {}).items():
        if name not in {t.name for t in traces}:
            raise ConfigurationError(
                f"config redirect.min_load_by_trace: {name!r} is not in redirect.traces"
            )
        min_load[name] = float(value)
    for name, value in min_load.items():
        if not 0.0 <= value < 10.0:
            raise ConfigurationError(f"config redirect.min_load ({name}): {value!r} not in [0, 10)")
    split = str(section.get("split", "chronological"))
    if split not in _SPLITS:
        raise ConfigurationError(
            f"config redirect.split: {split!r} must be one of {', '.join(_SPLITS)}"
        )
    weeks = int(section.get("weeks", 20))
    if weeks < 2:
        raise ConfigurationError("config redirect.weeks: at least 2 (half train, half test)")
    balance = tuple(bool(b) for b in section.get("balance", [False, True]))
    if not balance or len(set(balance)) != len(balance):
        raise ConfigurationError("config redirect.balance: give false, true or both, once each")
    primary = policy_list([section.get("primary", "FCFS")], "redirect.primary")[0]
    backfill = policy_list([section.get("backfill", "FCFS")], "redirect.backfill")[0]
    tau_s = float(section.get("tau_s", 60.0))
    if not tau_s > 0:
        raise ConfigurationError(f"config redirect.tau_s: must be > 0, got {tau_s!r}")
    online = section.get("online") or {}
    period = str(online.get("period", "1d"))
    try:
        period_s = parse_duration(period)
    except (ConfigurationError, ValueError):
        raise ConfigurationError(
            f"config redirect.online.period: {period!r} is not a duration with a unit (e.g. 1d)"
        ) from None
    if not period_s > 0 or not math.isfinite(period_s):
        raise ConfigurationError(f"config redirect.online.period: {period!r} must be > 0")
    selectors = tuple(str(spec) for spec in online.get("selectors", ["bandit(eps=0.1)", "ucb"]))
    if len(set(selectors)) != len(selectors):
        raise ConfigurationError("config redirect.online.selectors: a selector is listed twice")
    for spec in selectors:
        try:
            make_bandit(spec, thetas, rng=np.random.default_rng(0))
        except ConfigurationError as error:
            raise ConfigurationError(f"config redirect.online.selectors: {error}") from None
    return RedirectPlan(
        traces=traces,
        weeks=weeks,
        min_load=min_load,
        step_days=int(section.get("step_days", 1)),
        split=split,
        alphas=tuple(alphas),
        thetas=tuple(int(t) for t in thetas),
        balance=balance,
        primary=primary,
        backfill=backfill,
        tau_s=tau_s,
        online_period=period,
        online_period_s=float(period_s),
        online_selectors=selectors,
        seed=int(config.get("seed", 0)),
    )
