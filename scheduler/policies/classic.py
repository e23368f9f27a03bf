"""The classic queue orders: FCFS, LCFS and the smallest/largest of estimate, processors,
expansion factor, ratio and area (Reis's thesis, table 5.1; formulas in ``docs/simulator.md``)."""

from __future__ import annotations

from scheduler.policies.base import POLICIES, PolicyInputs, PriorityKey, register


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


#: The classic orders, in registration order: the 12 policies of the online-selection study
#: (read from the registry, so a classic order added above joins them).
STUDY_POLICIES: tuple[str, ...] = tuple(
    name for name, policy in POLICIES.items() if policy.key.__module__ == __name__
)
