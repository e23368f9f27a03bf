"""Selectors without feedback: ``fixed:P`` (always the policy P) and ``random`` (P_t uniform in
the set, drawn each period)."""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduler.studies.online.selectors.base import (
    BaseSelector,
    PeriodFeedback,
    SelectorSettings,
    canonical_policy,
    register,
)

__all__ = ["FIXED", "FixedSelector", "RandomSelector"]

#: Base name of the fixed-policy specs (``fixed:P``).
FIXED = "fixed"


class FixedSelector(BaseSelector):
    """Always the same policy (it need not belong to the set, only be a known policy)."""

    def __init__(self, policies: tuple[str, ...], policy: str) -> None:
        super().__init__(f"{FIXED}:{policy}", policies)
        self.policy = policy

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        return self.policy, {}

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        return {}


class RandomSelector(BaseSelector):
    """A policy drawn uniformly in the set at the start of each period."""

    def __init__(self, policies: tuple[str, ...], rng: np.random.Generator) -> None:
        super().__init__("random", policies)
        self._rng = rng

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        return self.policies[int(self._rng.integers(len(self.policies)))], {}

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        return {}


@register(FIXED, "always the policy P (spec fixed:P)", thesis=True)
def _fixed(settings: SelectorSettings) -> FixedSelector:
    assert settings.policy is not None  # parse_spec gives fixed:P its policy
    return FixedSelector(settings.policies, canonical_policy(settings.policy))


@register("random", "P_t uniform in the set, drawn each period", thesis=True, figure_line=True)
def _random(settings: SelectorSettings) -> RandomSelector:
    return RandomSelector(settings.policies, settings.rng)
