"""Selectors with bandit feedback (only the live period of the policy that ran).

``bandit``
    epsilon-greedy as published, with the published estimate
    ``sum_{t<T, P_t=P} discount^(T-1-t) w_t / sum_{t<T, P_t=P} n_t`` (discounted numerator,
    plain job count as denominator; w_t in seconds; a policy without a counted job has no
    estimate and is never greedy while another has one); no forced round of untried policies
    unless ``forced=1``. Its strategies are named ``bandit(eps=<epsilon>)``
    (:func:`bandit_spec`, :func:`bandit_epsilon`).
``ucb``, ``swucb``, ``thompson``
    Bandits on *normalised* per-job mean waits, so the unknown scale of the waits (seconds to
    days) does not matter: UCB1 (lower confidence bound, since costs are minimised), its
    sliding-window variant for a drifting workload, and Gaussian Thompson sampling.

The bandits themselves (over any arms) are in :mod:`scheduler.studies.common.bandits`, shared
with the redirection study; the selectors here give them the policy set as arms and the live
waits of the finished jobs as feedback.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.bandits import (
    UCB,
    BanditFeedback,
    EpsilonGreedy,
    NormalisedBandit,
    Thompson,
)
from scheduler.studies.online.selectors.base import (
    BaseSelector,
    PeriodFeedback,
    Selector,
    SelectorSettings,
    canonical_policy,
    format_option,
    register,
)

__all__ = [
    "EPSILON_GREEDY",
    "EpsilonGreedySelector",
    "ThompsonSelector",
    "UCBSelector",
    "bandit_epsilon",
    "bandit_spec",
]

#: Base name of the epsilon-greedy bandit's specs.
EPSILON_GREEDY = "bandit"
_BANDIT_SPEC = re.compile(rf"^{EPSILON_GREEDY}\(eps=([0-9]*\.?[0-9]+)\)$")


def bandit_spec(epsilon: float) -> str:
    """Strategy name of the epsilon-greedy bandit with exploration probability ``epsilon``
    (dimensionless, in [0, 1]): ``0.3`` → ``"bandit(eps=0.3)"``."""
    return f"{EPSILON_GREEDY}(eps={epsilon:g})"


def bandit_epsilon(strategy: str) -> float | None:
    """epsilon of a bandit strategy name written as :func:`bandit_spec` writes it
    (``"bandit(eps=0.3)"`` → 0.3); ``None`` for any other name."""
    match = _BANDIT_SPEC.match(strategy)
    return float(match.group(1)) if match else None


class EpsilonGreedySelector(BaseSelector):
    """epsilon-greedy on the live waits of the policy that ran (bandit feedback only), as
    published (Reis's thesis, eq. 6.8-6.9).

    Estimated cost of P at decision time T (seconds per job)::

        sum_{t<T, P_t=P} discount^(T-1-t) w_t  /  sum_{t<T, P_t=P} n_t

    where w_t = ``live_wait_s`` and n_t = ``live_jobs`` of period t: a discounted numerator over
    a plain job count, exactly as published. A policy has *no data* while its count is 0 (it
    never ran, or no job finished while it ran): it has no estimate (NaN) and counts as +inf, so
    it is never greedy while another policy has data and never looks best on no data. With
    probability 1 - epsilon the greedy policy runs: the lowest estimate (ties: set order), or
    ``initial`` while no policy has data (``online.initial``, FCFS by default); with probability
    epsilon a policy drawn uniformly in the set. With ``forced_round`` (an option, not the
    published rule) every policy runs once first, in set order, as the greedy choice. Each period
    draws the coin and the uniform pick from ``rng``, whatever the outcome. The bandit itself is
    :class:`scheduler.studies.common.bandits.EpsilonGreedy` over the policies.

    History entries hold ``"estimates"`` (per policy, NaN without data), ``"greedy"`` (the
    greedy policy) and ``"explored"`` (the epsilon coin came up; the uniform pick may still be
    the greedy policy).
    """

    def __init__(
        self,
        policies: tuple[str, ...],
        *,
        epsilon: float,
        discount: float,
        rng: np.random.Generator,
        name: str,
        initial: str | None = None,
        forced_round: bool = False,
    ) -> None:
        super().__init__(name, policies)
        self.epsilon = epsilon
        self.discount = discount
        self.initial = policies[0] if initial is None else initial
        self.forced_round = forced_round
        self._bandit = EpsilonGreedy(
            policies,
            epsilon=epsilon,
            discount=discount,
            rng=rng,
            forced_round=forced_round,
            initial=self._position[self.initial],
        )

    def estimates(self) -> np.ndarray:
        """Current estimated cost per policy, seconds per job (NaN: no data, no counted job)."""
        return self._bandit.estimates()

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        chosen, details = self._bandit.choose()
        details["greedy"] = self.policies[details["greedy"]]
        return self.policies[chosen], details

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        return self._bandit.update(self._position[policy], _feedback(feedback))


def _feedback(feedback: PeriodFeedback) -> BanditFeedback:
    """A selector's feedback as a bandit's: the live waits (s) and the finished jobs."""
    return BanditFeedback(total=feedback.live_wait_s, count=feedback.live_jobs)


# -- bandits on normalised per-job waits --------------------------------------------------------


class _NormalisedBandit(BaseSelector):
    """A selector around a :class:`scheduler.studies.common.bandits.NormalisedBandit`.

    A period with n_t > 0 finished jobs is *counted*: its per-job mean wait m_t = w_t / n_t
    (seconds) is divided by the running mean of every m observed so far, this one included,
    which gives a dimensionless x_t (around 1; 0 when that mean is 0). Periods with n_t = 0
    teach nothing and are ignored. Multiplying every wait by a constant leaves every x_t, hence
    every choice, unchanged (up to rounding).

    History entries gain ``"x"`` (None for an ignored period) once observed.
    """

    _bandit: NormalisedBandit

    def __init__(self, name: str, policies: tuple[str, ...], bandit: NormalisedBandit) -> None:
        super().__init__(name, policies)
        self._bandit = bandit

    @property
    def window(self) -> int | None:
        return self._bandit.window

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """Sums of x and counts of counted periods per policy (over the window, if any)."""
        return self._bandit.statistics()

    def _choose(self, period: int) -> tuple[str, dict[str, Any]]:
        chosen, details = self._bandit.choose()
        return self.policies[chosen], details

    def _observe(self, period: int, policy: str, feedback: PeriodFeedback) -> dict[str, Any]:
        return self._bandit.update(self._position[policy], _feedback(feedback))


class UCBSelector(_NormalisedBandit):
    """UCB1 on normalised costs, optionally over a sliding window (``swucb``).

    Untried policies run first, in set order; then the policy minimising
    ``mean_x(P) - c * sqrt(2 ln N / n_P)`` (ties: set order), where n_P counts P's counted
    periods, N all counted periods and c = ``exploration``. With a ``window`` only the last
    ``window`` counted periods enter mean_x, n_P and N, and a policy absent from the window counts
    as untried (sliding-window UCB, for a drifting workload).

    History entries hold ``"estimates"`` (mean_x, NaN when untried), ``"counts"`` (n_P) and
    ``"index"`` (the lower confidence bound, NaN when untried).
    """

    def __init__(
        self,
        policies: tuple[str, ...],
        *,
        exploration: float,
        window: int | None,
        name: str,
    ) -> None:
        super().__init__(name, policies, UCB(policies, exploration=exploration, window=window))
        self.exploration = exploration


class ThompsonSelector(_NormalisedBandit):
    """Gaussian Thompson sampling on normalised costs.

    Untried policies run first, in set order; then each policy's cost is drawn from
    N(mean_x(P), 1 / (n_P + 1)) (standard deviation 1 / sqrt(n_P + 1)) and the smallest draw
    wins. ``rng`` draws one standard normal per policy every period. History entries hold
    ``"estimates"`` (mean_x, NaN when untried) and ``"samples"`` (NaN when untried).
    """

    def __init__(self, policies: tuple[str, ...], *, rng: np.random.Generator, name: str) -> None:
        super().__init__(name, policies, Thompson(policies, rng=rng))


@register(
    EPSILON_GREEDY,
    "epsilon-greedy on the discounted live wait per finished job",
    options={
        "eps": "epsilon",
        "epsilon": "epsilon",
        "discount": "discount",
        "initial": "initial",
        "forced": "forced_round",
    },
    thesis=True,
)
def _epsilon_greedy(settings: SelectorSettings) -> Selector:
    start = canonical_policy(settings.initial)
    if start not in settings.policies:
        raise ConfigurationError(
            f"initial policy {start} of selector {EPSILON_GREEDY} (its choice while no policy "
            f"has data) is not in the policy set {', '.join(settings.policies)}"
        )
    shown = [f"eps={format_option(settings.epsilon)}"]
    if settings.discount != 1.0:
        shown.append(f"discount={format_option(settings.discount)}")
    if start != "FCFS":
        shown.append(f"initial={start}")
    if settings.forced_round:
        shown.append("forced=1")
    return EpsilonGreedySelector(
        settings.policies,
        epsilon=settings.epsilon,
        discount=settings.discount,
        rng=settings.rng,
        name=f"{EPSILON_GREEDY}({','.join(shown)})",
        initial=start,
        forced_round=settings.forced_round,
    )


@register(
    "ucb",
    "UCB1 on normalised per-job mean waits",
    options={"c": "exploration", "exploration": "exploration"},
    figure_line=True,
)
def _ucb(settings: SelectorSettings) -> Selector:
    exploration = settings.exploration
    return UCBSelector(
        settings.policies,
        exploration=exploration,
        window=None,
        name=f"ucb(c={format_option(exploration)})",
    )


@register(
    "swucb",
    "sliding-window UCB1 on normalised per-job mean waits (drifting workloads)",
    options={"c": "exploration", "exploration": "exploration", "window": "window"},
    figure_line=True,
)
def _swucb(settings: SelectorSettings) -> Selector:
    shown = [f"window={settings.window}"]
    if settings.exploration != 1.0:
        shown.append(f"c={format_option(settings.exploration)}")
    return UCBSelector(
        settings.policies,
        exploration=settings.exploration,
        window=settings.window,
        name=f"swucb({','.join(shown)})",
    )


@register("thompson", "Gaussian Thompson sampling on normalised per-job mean waits (optional)")
def _thompson(settings: SelectorSettings) -> Selector:
    return ThompsonSelector(settings.policies, rng=settings.rng, name="thompson")
