"""Published priority functions: WFP3 and UNICEF (Tang et al.), F1-F4 (Carastan-Santos & de
Camargo, SC'17); formulas and their monotone transforms in ``docs/simulator.md``."""

from __future__ import annotations

import numpy as np

from scheduler.policies.base import PolicyInputs, PriorityKey, register, relative_submit_s


@register("WFP3", "largest (wait / est)^3 * q first (Tang et al.)")
def _wfp3(jobs: PolicyInputs) -> PriorityKey:
    # (wait/est)^3 q = (wait / (est / cbrt(q)))^3, and the cube is increasing for wait >= 0.
    return PriorityKey.aging(0.0, -(jobs.estimate_s / np.cbrt(jobs.procs)))


@register("UNICEF", "largest wait / (log2(q) * est) first, log2 guarded so q = 1 counts as 2")
def _unicef(jobs: PolicyInputs) -> PriorityKey:
    return PriorityKey.aging(0.0, -(np.maximum(np.log2(jobs.procs), 1.0) * jobs.estimate_s))


@register("F1", "log10(est) * q + 870 * log10(r') (Carastan-Santos & de Camargo)")
def _f1(jobs: PolicyInputs) -> PriorityKey:
    r = relative_submit_s(jobs)
    return PriorityKey.static(np.log10(jobs.estimate_s) * jobs.procs + 870.0 * np.log10(r))


@register("F2", "sqrt(est) * q + 25600 * log10(r')")
def _f2(jobs: PolicyInputs) -> PriorityKey:
    r = relative_submit_s(jobs)
    return PriorityKey.static(np.sqrt(jobs.estimate_s) * jobs.procs + 25600.0 * np.log10(r))


@register("F3", "est * q + 6.86e6 * log10(r')")
def _f3(jobs: PolicyInputs) -> PriorityKey:
    r = relative_submit_s(jobs)
    return PriorityKey.static(jobs.estimate_s * jobs.procs + 6.86e6 * np.log10(r))


@register("F4", "est * sqrt(q) + 5.3e5 * log10(r')")
def _f4(jobs: PolicyInputs) -> PriorityKey:
    r = relative_submit_s(jobs)
    return PriorityKey.static(jobs.estimate_s * np.sqrt(jobs.procs) + 5.3e5 * np.log10(r))
