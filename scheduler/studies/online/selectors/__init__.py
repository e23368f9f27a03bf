"""Online selection of the queue policy, one policy period at a time (EASY backfilling).

Time is cut into policy periods t = 0, 1, 2, ... (a day or a week). At the start of period t a
selector picks the queue policy P_t from a policy set; the live system runs with it during the
period; at the end of the period the selector receives a :class:`PeriodFeedback`. The calls
always alternate ``choose(0), observe(0, fb), choose(1), observe(1, fb), ...``.

This package only keeps the books and makes the choices (pure Python / NumPy); the simulation
that produces the feedback lives in :mod:`scheduler.studies.online.live`. Modules:

- :mod:`.base`: :class:`PeriodFeedback`, :class:`Selector`, :class:`BaseSelector` and the
  registry :data:`SELECTORS` of selector kinds;
- :mod:`.simple`: ``fixed:P`` (always P) and ``random`` (P_t uniform each period);
- :mod:`.simulated`: ``full`` and ``noisy`` (simulated cost of every policy, seconds);
- :mod:`.bandits`: ``bandit`` (epsilon-greedy, published estimate), ``ucb``, ``swucb`` and
  ``thompson`` (on normalised per-job mean waits), wrappers over the bandits of
  :mod:`scheduler.studies.common.bandits` (shared with the redirection study);
- :mod:`.specs`: :func:`parse_spec` and :func:`make_selector`.

Every selector appends one dict per period to ``history`` (``{"period": t, "policy": P_t, ...}``
plus the quantities its choice rested on), so a run can be audited afterwards.
"""

from __future__ import annotations

# The kind modules register their selectors when imported: this order is the display order
# of every list of selectors (config errors, tables, figures).
# isort: off
from scheduler.studies.online.selectors import simple  # noqa: F401
from scheduler.studies.online.selectors import simulated  # noqa: F401
from scheduler.studies.online.selectors import bandits  # noqa: F401

# isort: on
from scheduler.studies.online.selectors.bandits import (
    EPSILON_GREEDY,
    EpsilonGreedySelector,
    ThompsonSelector,
    UCBSelector,
    bandit_epsilon,
    bandit_spec,
)
from scheduler.studies.online.selectors.base import (
    SELECTORS,
    BaseSelector,
    PeriodFeedback,
    Selector,
    SelectorKind,
    SelectorSettings,
)
from scheduler.studies.online.selectors.simple import FIXED, FixedSelector, RandomSelector
from scheduler.studies.online.selectors.simulated import FullSelector, NoisySelector
from scheduler.studies.online.selectors.specs import make_selector, parse_spec

__all__ = [
    "EPSILON_GREEDY",
    "FIXED",
    "SELECTORS",
    "BaseSelector",
    "EpsilonGreedySelector",
    "FixedSelector",
    "FullSelector",
    "NoisySelector",
    "PeriodFeedback",
    "RandomSelector",
    "Selector",
    "SelectorKind",
    "SelectorSettings",
    "ThompsonSelector",
    "UCBSelector",
    "bandit_epsilon",
    "bandit_spec",
    "make_selector",
    "parse_spec",
]
