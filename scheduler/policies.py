"""The queue-policy registry: name → priority key of every waiting job.

A policy orders the waiting queue: **smallest key first**, ties broken by submit time then job
number (the simulator's job order). Every policy here is either

- *static*: the key of a job never changes (FCFS, SPF, LAF, F1, ...), or
- *aging*: the key is ``base_j + wait_j / divisor_j`` where ``wait_j = now - r_j`` seconds
  (LEXP, WFP3, UNICEF, ...): a monotone transform of the published formula, evaluated by the
  compiled kernel at each scheduling pass without calling back into Python.

Adding a policy is one small NumPy function plus its name::

    @register("SPF", "shortest (estimated) processing time first")
    def _spf(jobs: PolicyInputs) -> PriorityKey:
        return PriorityKey.static(jobs.estimate_s)

The formulas, with the published ones they reproduce, are listed in ``docs/simulator.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scheduler.errors import ConfigurationError


@dataclass(frozen=True)
class PolicyInputs:
    """What a policy may look at, one float64 array entry per job.

    Attributes
    ----------
    submit_s
        Submit time r_j, seconds.
    procs
        Processors q_j (>= 1).
    estimate_s
        Estimated run time est_j the scheduler believes, seconds (> 0).
    first_submit_s
        Submit time of the trace's first job, seconds (origin of the F1-F4 time term).
    """

    submit_s: np.ndarray
    procs: np.ndarray
    estimate_s: np.ndarray
    first_submit_s: float


@dataclass(frozen=True)
class PriorityKey:
    """Key of each job at time ``now``: ``base + (now - submit_s) / divisor`` (smallest first).

    ``divisor`` is ``+inf`` for static keys, so the time term vanishes (waits are finite).
    Both arrays are float64 and have one entry per job. ``is_static`` is True when no job's key
    changes with time (the simulator then keeps sorted queues instead of sorting each pass).
    """

    base: np.ndarray
    divisor: np.ndarray
    is_static: bool = False

    @classmethod
    def static(cls, key: np.ndarray) -> PriorityKey:
        """A key that does not depend on the time of the pass."""
        key = np.asarray(key, dtype=np.float64)
        return cls(key, np.full(key.shape, np.inf), True)

    @classmethod
    def aging(cls, base: np.ndarray | float, divisor: np.ndarray) -> PriorityKey:
        """A key ``base + wait / divisor`` (a negative divisor: longer waits come first)."""
        divisor = np.asarray(divisor, dtype=np.float64)
        return cls(np.full(divisor.shape, base, dtype=np.float64), divisor, False)


PolicyFunction = Callable[[PolicyInputs], PriorityKey]


@dataclass(frozen=True)
class Policy:
    """A named queue order."""

    name: str
    description: str
    key: PolicyFunction


POLICIES: dict[str, Policy] = {}


def register(name: str, description: str) -> Callable[[PolicyFunction], PolicyFunction]:
    """Register ``function`` as the policy ``name`` (upper case, unique)."""

    def decorator(function: PolicyFunction) -> PolicyFunction:
        if name in POLICIES:
            raise ValueError(f"policy {name!r} is registered twice")
        POLICIES[name] = Policy(name, description, function)
        return function

    return decorator


def get_policy(name: str) -> Policy:
    """The registered policy ``name`` (case-insensitive); a clear error lists the known ones."""
    policy = POLICIES.get(name.upper()) if isinstance(name, str) else None
    if policy is None:
        known = ", ".join(POLICIES)
        raise ConfigurationError(f"unknown policy {name!r}; known policies: {known}")
    return policy


def policy_names() -> list[str]:
    """Names of every registered policy, in registration order."""
    return list(POLICIES)


def priority_key(name: str, jobs: PolicyInputs, *, validate: bool = True) -> PriorityKey:
    """Evaluate policy ``name`` on ``jobs``; checks the result's shape and finiteness unless
    ``validate`` is False (hot loops over inputs already checked)."""
    with np.errstate(all="ignore"):  # bad inputs are reported below, not as warnings
        key = get_policy(name).key(jobs)
    if not validate:
        return key
    n = jobs.submit_s.shape[0]
    if key.base.shape != (n,) or key.divisor.shape != (n,):
        raise ValueError(f"policy {name} returned keys of the wrong shape")
    if not np.isfinite(key.base).all() or np.isnan(key.divisor).any():
        raise ConfigurationError(
            f"policy {name} gives a non-finite priority (are all estimates and processors > 0?)"
        )
    return key


def _relative_submit_s(jobs: PolicyInputs) -> np.ndarray:
    """r'_j = r_j - r_first + 1 s: the F1-F4 time term, always >= 1 s."""
    return jobs.submit_s - jobs.first_submit_s + 1.0


# -- the classic orders -------------------------------------------------------------------------


@register("FCFS", "first come, first served (smallest submit time first)")
def _fcfs(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(jobs.submit_s)


@register("LCFS", "last come, first served (largest submit time first)")
def _lcfs(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(-jobs.submit_s)


@register("SPF", "shortest (estimated) processing time first")
def _spf(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(jobs.estimate_s)


@register("LPF", "longest (estimated) processing time first")
def _lpf(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(-jobs.estimate_s)


@register("SQF", "smallest number of processors first")
def _sqf(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(jobs.procs)


@register("LQF", "largest number of processors first")
def _lqf(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(-jobs.procs)


@register("LEXP", "largest expansion factor (wait + est) / est first")
def _lexp(jobs: PolicyInputs) -> PriorityKey:
    # -(wait + est) / est = -1 + wait / (-est)
    return PriorityKey.aging(-1.0, -jobs.estimate_s)


@register("SEXP", "smallest expansion factor (wait + est) / est first")
def _sexp(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.aging(1.0, jobs.estimate_s)


@register("LRF", "largest ratio est / q first")
def _lrf(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(-(jobs.estimate_s / jobs.procs))


@register("SRF", "smallest ratio est / q first")
def _srf(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(jobs.estimate_s / jobs.procs)


@register("LAF", "largest area est * q first")
def _laf(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(-(jobs.estimate_s * jobs.procs))


@register("SAF", "smallest area est * q first")
def _saf(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.static(jobs.estimate_s * jobs.procs)


# -- aging and learned priorities ----------------------------------------------------------------


@register("WFP3", "largest (wait / est)^3 * q first (Tang et al.)")
def _wfp3(jobs: PolicyInputs) -> PriorityKey:
    # (wait/est)^3 q = (wait / (est / cbrt(q)))^3, and the cube is increasing for wait >= 0.
    return PriorityKey.aging(0.0, -(jobs.estimate_s / np.cbrt(jobs.procs)))


@register("UNICEF", "largest wait / (log2(q) * est) first, log2 guarded so q = 1 counts as 2")
def _unicef(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.aging(0.0, -(np.maximum(np.log2(jobs.procs), 1.0) * jobs.estimate_s))


@register("F1", "log10(est) * q + 870 * log10(r') (Carastan-Santos & de Camargo)")
def _f1(jobs: PolicyInputs) -> PriorityKey:
    r = _relative_submit_s(jobs)
    return PriorityKey.static(np.log10(jobs.estimate_s) * jobs.procs + 870.0 * np.log10(r))


@register("F2", "sqrt(est) * q + 25600 * log10(r')")
def _f2(jobs: PolicyInputs) -> PriorityKey:
    r = _relative_submit_s(jobs)
    return PriorityKey.static(np.sqrt(jobs.estimate_s) * jobs.procs + 25600.0 * np.log10(r))


@register("F3", "est * q + 6.86e6 * log10(r')")
def _f3(jobs: PolicyInputs) -> PriorityKey:
    r = _relative_submit_s(jobs)
    return PriorityKey.static(jobs.estimate_s * jobs.procs + 6.86e6 * np.log10(r))


@register("F4", "est * sqrt(q) + 5.3e5 * log10(r')")
def _f4(jobs: PolicyInputs) -> PriorityKey:
    r = _relative_submit_s(jobs)
    return PriorityKey.static(jobs.estimate_s * np.sqrt(jobs.procs) + 5.3e5 * np.log10(r))


#: The 12 policies of the online-selection study (issue: selectors), in the study's order.
STUDY_POLICIES: tuple[str, ...] = (
    "FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP", "SEXP", "LRF", "SRF", "LAF", "SAF",
)  # fmt: skip
