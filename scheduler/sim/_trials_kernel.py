"""Compiled trials of the learned-priority study (private): many strict list schedules of one
tuple (S, Q), one per permutation of Q.

An engine variant, a sibling of :mod:`scheduler.sim._kernel`. It shares
nothing with the EASY loop but the idea of a running list sorted by end time: a trial has no
queue, no reservation and no backfilling, only a list walked in order. The semantics are in
``docs/simulator.md`` ("Trials of the learned-priority study"); :mod:`scheduler.sim.trials`
validates the inputs and is the public API.

Arrays (``n`` jobs, the first ``n_state`` are S in their list order, the others are Q):

``submit``  float64 (n,)   submit times (s); only differences matter.
``procs``   int64 (n,)     processors, 1..machine_procs.
``run``     float64 (n,)   actual run times (s), > 0.
``perms``   int64 (T, nq)  one permutation of 0..nq-1 per trial (indices into Q).
``avebsld`` float64 (T,)   out: the AVEbsld of Q in each trial.
``first``   int64 (T,)     out: the Q index of the first Q job of each trial.

**The running list** is two arrays (``ends`` sorted ascending, ``eprocs`` alongside) and a
window ``lo:hi`` of the jobs not yet released. A trial places 48 jobs, so at most 48 entries:
a sorted insertion (shifting a handful of entries) and a release from the front are cheaper
than a heap. The list only grows at ``hi`` and shrinks at ``lo``, so arrays of ``n`` entries
never overflow. A job whose end has passed may stay in the window until a later job needs the
time to move past it; it is released then (its end is <= that job's ready time).

**S is placed once.** S comes first in every trial and a list schedule never looks ahead, so
the schedule of S and the state after it (the list, the free processors, the start of S's last
job) are the same in every trial: they are computed once per call and copied at the start of
each trial.

**Random permutations** (``trials_drawn``): Fisher-Yates from the identity in each trial, with
the kernels' SplitMix64 generator (:mod:`scheduler.sim._random`; the state is a uint64 seeded
with the call's seed) and Lemire's unbiased index below ``k`` (``_random.below``). The stream
depends on the seed only, so a seed gives the same permutations on every machine and numba
version, and a pure-Python copy (``tests/support/trials.py``) reproduces it.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit
from scheduler.sim._random import below


@jit
def draw_permutations(nq, n_trials, seed, perms):
    """Fill ``perms`` (T, nq) with the permutations ``trials_drawn`` uses for ``seed``."""
    state = np.uint64(seed)
    for trial in range(n_trials):
        row = perms[trial]
        state = _shuffle(state, row, nq)


@jit
def _shuffle(state, order, nq):
    """Fisher-Yates from the identity into ``order[:nq]``; returns the generator's state."""
    for i in range(nq):
        order[i] = i
    for i in range(nq - 1, 0, -1):
        state, j = below(state, i + 1)
        tmp = order[i]
        order[i] = order[j]
        order[j] = tmp
    return state


@jit
def _place(ready, q, p, ends, eprocs, lo, hi, free):
    """Start a job of ``q`` processors and run time ``p`` (s) at the first instant >= ``ready``
    with ``q`` free processors; returns ``(start, lo, hi, free)``."""
    t = ready
    while lo < hi and ends[lo] <= t:
        free += eprocs[lo]
        lo += 1
    while free < q:  # terminates: q <= machine_procs, the free count once all are released
        t = ends[lo]
        free += eprocs[lo]
        lo += 1
    free -= q
    end = t + p
    i = hi
    while i > lo and ends[i - 1] > end:
        ends[i] = ends[i - 1]
        eprocs[i] = eprocs[i - 1]
        i -= 1
    ends[i] = end
    eprocs[i] = q
    return t, lo, hi + 1, free


@jit
def _state_after_s(submit, procs, run, n_state, machine_procs, ends, eprocs):
    """Place S in its order on an empty machine; returns ``(cursor, lo, hi, free)``, the
    cursor being the start of S's last job (-inf when S is empty: Q's first job then starts
    at its submit time, on an empty machine)."""
    cursor = -np.inf
    lo = 0
    hi = 0
    free = machine_procs
    for j in range(n_state):
        ready = max(cursor, submit[j])
        cursor, lo, hi, free = _place(ready, procs[j], run[j], ends, eprocs, lo, hi, free)
    return cursor, lo, hi, free


@jit
def _trial(submit, procs, run, n_state, tau, order, s_state, s_ends, s_eprocs, ends, eprocs):
    """AVEbsld of Q when Q is placed in ``order`` after S (state ``s_state`` and lists)."""
    cursor, lo, hi, free = s_state
    for i in range(lo, hi):
        ends[i] = s_ends[i]
        eprocs[i] = s_eprocs[i]
    nq = order.shape[0]
    total = 0.0
    for k in range(nq):
        j = n_state + order[k]
        ready = max(cursor, submit[j])
        cursor, lo, hi, free = _place(ready, procs[j], run[j], ends, eprocs, lo, hi, free)
        p = run[j]
        bsld = (cursor - submit[j] + p) / max(p, tau)
        total += max(bsld, 1.0)
    return total / nq


@jit
def trials_given(submit, procs, run, n_state, machine_procs, tau, perms, avebsld, first):
    """One trial per row of ``perms``; fills ``avebsld`` and ``first``."""
    n = submit.shape[0]
    s_ends = np.empty(n)
    s_eprocs = np.empty(n, dtype=np.int64)
    s_state = _state_after_s(submit, procs, run, n_state, machine_procs, s_ends, s_eprocs)
    ends = np.empty(n)
    eprocs = np.empty(n, dtype=np.int64)
    for trial in range(perms.shape[0]):
        order = perms[trial]
        avebsld[trial] = _trial(
            submit, procs, run, n_state, tau, order, s_state, s_ends, s_eprocs, ends, eprocs
        )
        first[trial] = order[0]


@jit
def trials_drawn(submit, procs, run, n_state, machine_procs, tau, seed, avebsld, first):
    """``avebsld.shape[0]`` trials on permutations drawn from ``seed`` (as
    ``draw_permutations``); fills ``avebsld`` and ``first``."""
    n = submit.shape[0]
    nq = n - n_state
    s_ends = np.empty(n)
    s_eprocs = np.empty(n, dtype=np.int64)
    s_state = _state_after_s(submit, procs, run, n_state, machine_procs, s_ends, s_eprocs)
    ends = np.empty(n)
    eprocs = np.empty(n, dtype=np.int64)
    order = np.empty(nq, dtype=np.int64)
    state = np.uint64(seed)
    for trial in range(avebsld.shape[0]):
        state = _shuffle(state, order, nq)
        avebsld[trial] = _trial(
            submit, procs, run, n_state, tau, order, s_state, s_ends, s_eprocs, ends, eprocs
        )
        first[trial] = order[0]
