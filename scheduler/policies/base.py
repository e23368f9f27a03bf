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

Besides registered names, :func:`get_policy` accepts *policy specs* ``prefix:argument``: a
family registers a resolver for its prefix in :data:`POLICY_SPECS` (``learned:PATH#RANK``, a
function fitted by the learned-function study: ``scheduler.policies.learned``). A spec's policy
is built when it is looked up and its key when the key is computed, so specs need no code edit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scheduler.core.errors import ConfigurationError, quote
from scheduler.core.flags import flag
from scheduler.core.registry import Registry


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


#: Every queue order, by name (upper case); filled by the family modules of this package.
POLICIES: Registry[Policy] = Registry("policy", canonical=str.upper, plural="policies")

#: Builds the policy of a spec ``prefix:argument`` from the whole spec (as written, stripped).
SpecResolver = Callable[[str], Policy]

#: The name of Slurm's multifactor priority: an order outside the registry (its priorities
#: change with a state the simulation keeps, the users' fair-share usage), run by
#: :func:`scheduler.simulate_conservative` (``primary=MULTIFACTOR``) and the studies' Slurm
#: pairs and arm. Its home is here, with the policy names, so that what only names it (plans,
#: selectors, the CLI's parser) need not load the compiled engine.
MULTIFACTOR = "multifactor"

#: Resolvers of policy specs, by prefix (lower case): ``learned`` -> ``learned:PATH#RANK``.
POLICY_SPECS: Registry[SpecResolver] = Registry(
    "policy spec prefix", canonical=str.lower, plural="policy spec prefixes"
)

#: Added to the seconds since the trace's first submission in the time term of F1-F4 and of
#: learned functions, so that the first job's term is log10(1) = 0, not log10(0).
SUBMIT_OFFSET_S = 1.0


def relative_submit_s(jobs: PolicyInputs) -> np.ndarray:
    """r'_j = r_j - r_first + :data:`SUBMIT_OFFSET_S`: the F1-F4 time term, seconds, >= 1 s."""
    return jobs.submit_s - jobs.first_submit_s + SUBMIT_OFFSET_S


def register(name: str, description: str) -> Callable[[PolicyFunction], PolicyFunction]:
    """Register ``function`` as the policy ``name`` (upper case, unique)."""

    def decorator(function: PolicyFunction) -> PolicyFunction:
        POLICIES.add(name, Policy(name, description, function), description)
        return function

    return decorator


def get_policy(name: str) -> Policy:
    """The registered policy ``name`` (case-insensitive), or the policy of a spec.

    A name holding ``:`` is a spec ``prefix:argument``, resolved by the resolver registered for
    ``prefix`` in :data:`POLICY_SPECS` (the policy's ``name`` is then the normalised spec).

    Raises
    ------
    ConfigurationError
        An unknown name (the message lists the known ones), an unknown spec prefix, or a spec
        its resolver refuses.
    """
    if isinstance(name, str) and ":" in name:
        spec = name.strip()
        prefix = spec.partition(":")[0]
        resolver = POLICY_SPECS.lookup(prefix, where=f"policy spec {quote(spec)}")
        return resolver(spec)
    return POLICIES.lookup(name)


def policy_names() -> list[str]:
    """Names of every registered policy, in registration order."""
    return list(POLICIES.names())


def priority_key(name: str, jobs: PolicyInputs, *, validate: bool = True) -> PriorityKey:
    """Evaluate policy ``name`` on ``jobs``; checks the result's shape and finiteness unless
    ``validate`` is False (hot loops over inputs already checked)."""
    validate = flag(validate, "validate")
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
