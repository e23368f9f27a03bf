"""Selectors with simulated feedback: ``full`` and ``noisy``.

``full``
    Full (simulated) feedback: after period t the cost w(t; P) of every policy P is the sum of
    the waits, in seconds, of the jobs submitted during the period when P runs alone from an
    empty machine. At decision time T the selector picks
    ``argmin_P W(P)``, ``W(P) = sum_{t<T} discount^(T-1-t) w(t; P)`` (ties: first in set
    order); period 0 gets ``initial``.
``noisy``
    As ``full``, each w(t; P) multiplied by rho ~ U[low, high], drawn per policy and period.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.selectors.base import (
    BaseSelector,
    PeriodFeedback,
    Selector,
    SelectorSettings,
    as_float_list,
    canonical_policy,
    format_option,
    register,
)

__all__ = ["FullSelector", "NoisySelector"]


class FullSelector(BaseSelector):
    """Follow the leader on simulated costs: ``argmin_P sum_{t<T} discount^(T-1-t) w(t; P)``.

    History entries hold ``"cumulative"`` (W(P) at decision time, seconds; ``None`` in period
    0, which runs ``initial``) and, once observed, ``"costs"`` (the w(t; P) vector used,
    seconds).

    Parameters
    ----------
    policies
        The policy set.
    discount
        lambda in (0, 1]; 1 sums the costs plainly.
    initial
        Policy of period 0, when nothing is known yet.
    name
        Canonical spec.
    """

    needs_simulation = True

    def __init__(
        self, policies: tuple[str, ...], *, discount: float, initial: str, name: str
    ) -> None:
        super().__init__(name, policies)
        self.discount = discount
        self.initial = initial
        self._cumulative_s = np.zeros(len(policies))

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        if period == 0:
            return self.initial, {"cumulative": None}
        best = int(np.argmin(self._cumulative_s))  # first minimum: ties go to set order
        return self.policies[best], {"cumulative": as_float_list(self._cumulative_s)}

    def _costs_s(self, costs_s: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """The cost vector to learn from (the simulated one; overridden by the noisy selector)."""
        return costs_s, {}

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        assert feedback.simulated_wait_s is not None  # checked by Selector.observe
        costs_s, details = self._costs_s(feedback.simulated_wait_s)
        self._cumulative_s = self.discount * self._cumulative_s + costs_s
        return {"costs": as_float_list(costs_s), **details}


class NoisySelector(FullSelector):
    """:class:`FullSelector` on costs w(t; P) * rho, rho ~ U[low, high] per policy and period.

    History entries also hold ``"factors"``, the rho drawn for each policy; ``"costs"`` is the
    noisy vector.
    """

    def __init__(
        self,
        policies: tuple[str, ...],
        *,
        discount: float,
        initial: str,
        low: float,
        high: float,
        rng: np.random.Generator,
        name: str,
    ) -> None:
        super().__init__(policies, discount=discount, initial=initial, name=name)
        self.low = low
        self.high = high
        self._rng = rng

    def _costs_s(self, costs_s: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        factors = self._rng.uniform(self.low, self.high, size=costs_s.shape)
        return costs_s * factors, {"factors": as_float_list(factors)}


def _simulated(base: str, settings: SelectorSettings) -> Selector:
    """A ``full`` or ``noisy`` selector named by its canonical spec (options that differ from
    the defaults shown; ``noisy`` always shows its noise range)."""
    start = canonical_policy(settings.initial)
    if start not in settings.policies:
        raise ConfigurationError(
            f"initial policy {start} of selector {base} is not in the policy set "
            f"{', '.join(settings.policies)}"
        )
    low, high, discount = settings.low, settings.high, settings.discount
    shown = [f"low={format_option(low)}", f"high={format_option(high)}"] if base == "noisy" else []
    if discount != 1.0:
        shown.append(f"discount={format_option(discount)}")
    if start != "FCFS":
        shown.append(f"initial={start}")
    name = f"{base}({','.join(shown)})" if shown else base
    if base == "full":
        return FullSelector(settings.policies, discount=discount, initial=start, name=name)
    return NoisySelector(
        settings.policies,
        discount=discount,
        initial=start,
        low=low,
        high=high,
        rng=settings.rng,
        name=name,
    )


@register(
    "full",
    "follow the leader on the simulated cost of every policy",
    options={"discount": "discount", "initial": "initial"},
    needs_simulation=True,
    thesis=True,
    figure_line=True,
)
def _full(settings: SelectorSettings) -> Selector:
    return _simulated("full", settings)


@register(
    "noisy",
    "as full, each simulated cost times a uniform noise factor",
    options={"discount": "discount", "initial": "initial", "low": "low", "high": "high"},
    needs_simulation=True,
    thesis=True,
    figure_line=True,
)
def _noisy(settings: SelectorSettings) -> Selector:
    return _simulated("noisy", settings)
