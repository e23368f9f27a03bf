"""Selector specs: ``"name"``, ``"name(key=value, ...)"`` or ``"fixed:P"`` → a selector.

:func:`parse_spec` and :func:`make_selector` read the known base names, their options and their
factories from :data:`~scheduler.studies.online.selectors.base.SELECTORS`; the kind modules
(:mod:`.simple`, :mod:`.simulated`, :mod:`.bandits`) fill it when the package is imported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.selectors.base import (
    SELECTORS,
    Selector,
    SelectorSettings,
    canonical_policy,
)
from scheduler.studies.online.selectors.simple import FIXED

__all__ = ["make_selector", "parse_spec"]

_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_FIXED = re.compile(rf"^\s*{FIXED}\s*:\s*(\S+?)\s*$", re.IGNORECASE)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split a selector spec into its base name and inline options.

    Parameters
    ----------
    spec
        ``"name"``, ``"name(key=value, ...)"`` or ``"fixed:P"``; case-insensitive.

    Returns
    -------
    tuple[str, dict[str, str]]
        The lower-case base name and the options as ``{parameter: raw value}``, where the
        parameter is the :func:`make_selector` argument (``"epsilon"`` for ``eps``, ...); for
        ``fixed:P`` the options are ``{"policy": P}``.

    Raises
    ------
    ConfigurationError
        A malformed spec, an unknown base name or option, an option given twice.
    """
    if not isinstance(spec, str):
        raise ConfigurationError(f"a selector spec is a string, not {spec!r}")
    fixed = _FIXED.match(spec)
    if fixed:
        return FIXED, {"policy": fixed.group(1)}
    match = _SPEC.match(spec)
    if match is None:
        raise ConfigurationError(
            f"malformed selector spec {spec!r}; expected name, name(key=value, ...) or fixed:P "
            f"with name in {', '.join(SELECTORS.names())}"
        )
    base = SELECTORS.canonical(match.group(1))
    if base is None:
        raise ConfigurationError(
            f"unknown selector {match.group(1)!r} in spec {spec!r}; known selectors: "
            f"{', '.join(SELECTORS.names())}"
        )
    if base == FIXED:
        raise ConfigurationError(f"selector spec {spec!r}: write fixed:P, with P a policy")
    options: dict[str, str] = {}
    body = match.group(2)
    if body is None or not body.strip():
        return base, options
    allowed = SELECTORS[base].options
    for item in body.split(","):
        key, equals, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not equals or not key or not value:
            raise ConfigurationError(
                f"malformed option {item.strip()!r} in selector spec {spec!r}; expected key=value"
            )
        if key not in allowed:
            known = ", ".join(allowed) if allowed else "none"
            raise ConfigurationError(
                f"unknown option {key!r} for selector {base} in spec {spec!r}; known options: "
                f"{known}"
            )
        parameter = allowed[key]
        if parameter in options:
            raise ConfigurationError(f"option {key!r} given twice in selector spec {spec!r}")
        options[parameter] = value
    return base, options


def _real(parameter: str, value: object) -> float:
    if isinstance(value, bool):
        raise ConfigurationError(f"{parameter} must be a number, not {value!r}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigurationError(f"{parameter} must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise ConfigurationError(f"{parameter} must be finite, not {value!r}")
    return number


def _integer(parameter: str, value: object) -> int:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise ConfigurationError(f"{parameter} must be an integer, not {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ConfigurationError(f"{parameter} must be an integer, not {value!r}")
    return int(value)


def _flag(parameter: str, value: object) -> bool:
    """A yes/no option: a bool, 0 / 1, or ``"0"``, ``"1"``, ``"false"``, ``"true"``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | np.integer) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("0", "1", "false", "true"):
        return value.strip().lower() in ("1", "true")
    raise ConfigurationError(f"{parameter} must be 0 or 1 (false or true), not {value!r}")


def make_selector(
    spec: str,
    policies: Sequence[str],
    *,
    rng: np.random.Generator,
    discount: float = 1.0,
    epsilon: float = 0.1,
    noise: tuple[float, float] = (0.8, 1.2),
    initial: str = "FCFS",
    window: int = 20,
    exploration: float = 1.0,
    forced_round: bool = False,
) -> Selector:
    """Build the selector described by ``spec`` over the policy set ``policies``.

    Parameters
    ----------
    spec
        A kind of :data:`~scheduler.studies.online.selectors.base.SELECTORS`: ``fixed:P``,
        ``random``, ``full``, ``noisy``, ``bandit``, ``ucb``, ``swucb``, ``thompson``
        (case-insensitive), optionally with inline options that override the
        keyword arguments: ``full(discount=0.9, initial=SPF)``,
        ``noisy(low=0.8, high=1.2, discount=1, initial=FCFS)``, ``bandit(eps=0.3,
        discount=0.5, initial=SPF, forced=1)``, ``ucb(c=0.5)``, ``swucb(window=10, c=1)``.
    policies
        The policy set, non-empty, known policy names without duplicates (case-insensitive).
    rng
        Source of every random draw (``random``, ``noisy``, ``bandit``, ``thompson``): the
        choices are a deterministic function of its seed and the feedback.
    discount
        lambda in (0, 1]: weight of a period's cost per elapsed period (``full``, ``noisy``,
        ``bandit``); 1 sums plainly.
    epsilon
        Exploration probability of ``bandit``, in [0, 1].
    noise
        ``(low, high)``, 0 < low <= high: range of the uniform factor of ``noisy``.
    initial
        Policy of period 0 of ``full`` and ``noisy``, and the greedy policy of ``bandit`` while
        no policy has data (must belong to the set; only checked for those three).
    window
        Counted periods in the sliding window of ``swucb`` (>= 1).
    exploration
        Weight c >= 0 of the confidence term of ``ucb`` and ``swucb``.
    forced_round
        ``bandit`` only: run every policy once first, in set order (``forced=1``; not in the
        published rule, which is the default).

    Returns
    -------
    Selector
        A fresh selector; its ``name`` is the canonical spec with the options that matter.

    Raises
    ------
    ConfigurationError
        Unknown spec or option, a value out of range (every numeric parameter is checked, used
        or not), an empty policy set, a duplicate or unknown policy, ``initial`` outside the
        set.
    """
    base, options = parse_spec(spec)
    if not isinstance(rng, np.random.Generator):
        raise ConfigurationError(f"rng must be a numpy.random.Generator, not {rng!r}")
    if isinstance(policies, str) or not isinstance(policies, Sequence):
        raise ConfigurationError(f"policies must be a sequence of policy names, not {policies!r}")
    canonical = tuple(canonical_policy(policy) for policy in policies)
    if not canonical:
        raise ConfigurationError("the policy set of a selector is empty")
    duplicates = sorted({policy for policy in canonical if canonical.count(policy) > 1})
    if duplicates:
        raise ConfigurationError(f"policy set lists {', '.join(duplicates)} more than once")

    if isinstance(noise, str) or not isinstance(noise, Sequence) or len(noise) != 2:
        raise ConfigurationError(f"noise must be a pair (low, high), not {noise!r}")
    values: dict[str, Any] = {
        "discount": discount,
        "epsilon": epsilon,
        "low": noise[0],
        "high": noise[1],
        "initial": initial,
        "window": window,
        "exploration": exploration,
        "forced_round": forced_round,
    }
    values.update({key: value for key, value in options.items() if key != "policy"})
    discount = _real("discount", values["discount"])
    epsilon = _real("epsilon", values["epsilon"])
    low = _real("noise low", values["low"])
    high = _real("noise high", values["high"])
    window = _integer("window", values["window"])
    exploration = _real("exploration", values["exploration"])
    forced = _flag("forced_round", values["forced_round"])
    if not 0.0 < discount <= 1.0:
        raise ConfigurationError(f"discount must be in (0, 1], not {discount}")
    if not 0.0 <= epsilon <= 1.0:
        raise ConfigurationError(f"epsilon must be in [0, 1], not {epsilon}")
    if not 0.0 < low <= high:
        raise ConfigurationError(f"noise needs 0 < low <= high, not low={low}, high={high}")
    if window < 1:
        raise ConfigurationError(f"window must be >= 1 counted period, not {window}")
    if exploration < 0:
        raise ConfigurationError(f"exploration must be >= 0, not {exploration}")

    settings = SelectorSettings(
        spec=spec,
        policies=canonical,
        rng=rng,
        discount=discount,
        epsilon=epsilon,
        low=low,
        high=high,
        initial=values["initial"],
        window=window,
        exploration=exploration,
        policy=options.get("policy"),
        forced_round=forced,
    )
    return SELECTORS[base].factory(settings)
