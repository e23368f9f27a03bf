"""Compiled EASY on two pools with redirection of running jobs (private).

The engine variant, a sibling of :mod:`scheduler.sim._kernel`. The machine is two
independent EASY schedulers, each one a complete base-kernel state (``istate``, ``iwork``,
``fwork``, indexed by the same job numbers 0..n-1): the *main* pool, where every job is
submitted, and the *dedicated* pool, which only receives redirected jobs. A pass of either pool
is the base kernel's ``_schedule`` on that pool's state, unchanged. What this module adds is the
event loop over both pools and the redirection step after the passes of an instant: the choice
of the job to kill, its removal from the main pool and its submission to the dedicated one. The
semantics are in ``docs/simulator.md`` ("Redirection"); :mod:`scheduler.sim.redirection`
validates inputs, prepares the arrays and is the public API.

Arrays besides the two pool states (``n`` jobs in (submit time, job number) order):

``jobs``      float64 (JOB_ROWS, n)  the main pool's jobs (``_kernel`` layout, original submit).
``jobs_d``    float64 (JOB_ROWS, n)  the same jobs as the dedicated pool sees them: SUBMIT is
                                     the redirection instant ρ_j (NaN while not redirected).
``keys_m``, ``keys_d``  float64 (4, n)  priority keys of each pool (``_kernel`` layout); the
                                     caller fills a job's dedicated keys when it is redirected.
``killed_s``  float64 (n,)           ρ_j, the instant job j was killed in the main pool, or NaN.
``xstate``    int64 (X_ROWS,)        RESET: submissions counted at the last redirection (0 before
                                     any); COUNT: redirections so far; PENDING: the job killed at
                                     the instant being processed whose dedicated keys the caller
                                     must fill before the instant can finish (-1: none).

**Counters without per-job updates.** A job's counter is the number of submissions after
``max(its start, the last redirection)``. With ``S`` the submissions so far (``istate[NEXT_SUB]``:
jobs are submitted in order) and ``base_j`` the value of ``S`` when job j started,
``counter_j = S - max(base_j, RESET)``; a reset is one store (RESET = S) and a submission costs
nothing. ``base_j`` is the number of jobs submitted at or before the job's start, so
``base_j <= L`` exactly when the (L+1)-th submission (job ``L`` in job order) came after the
start: the threshold test needs no per-job array (:func:`_victim`).

**Why the kernel returns at each redirection.** A redirected job enters the dedicated queue with
ρ_j as its submit time, so its dedicated priority key (any registered policy: a NumPy function)
can only be computed then. The loop kills the job, records it in PENDING and returns; the caller
computes the key and calls again, and the loop first finishes that instant (the job joins the
dedicated queue, both pools get their second pass). Redirections are rare (dozens per week of a
large log), so the round trips cost nothing measurable.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit
from scheduler.sim import _kernel as k

# entries of ``xstate``
X_RESET, X_COUNT, X_PENDING = range(3)
X_ROWS = 3


def new_state(
    jobs: np.ndarray, main_procs: int, dedicated_procs: int
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray]:
    """Fresh state: both pools empty, nothing submitted, nobody redirected.

    Returns ``(main state, dedicated state, jobs_d, killed_s, xstate)``, each pool state being
    the base kernel's ``(istate, iwork, fwork)``.
    """
    main = k.new_state(jobs, main_procs)
    dedicated = k.new_state(jobs, dedicated_procs)
    dedicated[0][k.NEXT_SUB] = jobs.shape[1]  # the dedicated pool has no submissions of its own
    jobs_d = jobs.copy()
    jobs_d[k.SUBMIT, :] = np.nan
    killed_s = np.full(jobs.shape[1], np.nan)
    xstate = np.zeros(X_ROWS, dtype=np.int64)
    xstate[X_PENDING] = -1
    return main, dedicated, jobs_d, killed_s, xstate


# -- killing a running job ------------------------------------------------------------------------


@jit
def _heap_remove(iwork, fwork, size, j):
    """Remove job ``j`` from the completion heap of a pool; return the new size. A linear search:
    it runs once per redirection."""
    i = 0
    while iwork[k.HEAP, i] != j:
        i += 1
    size -= 1
    if i == size:
        return size
    iwork[k.HEAP, i] = iwork[k.HEAP, size]
    # the moved entry may belong above or below position i
    while i > 0:
        parent = (i - 1) >> 1
        a, b = iwork[k.HEAP, parent], iwork[k.HEAP, i]
        if fwork[k.END, a] <= fwork[k.END, b]:
            break
        iwork[k.HEAP, parent], iwork[k.HEAP, i] = b, a
        i = parent
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        right = child + 1
        if right < size and fwork[k.END, iwork[k.HEAP, right]] < fwork[k.END, iwork[k.HEAP, child]]:
            child = right
        a, b = iwork[k.HEAP, i], iwork[k.HEAP, child]
        if fwork[k.END, a] <= fwork[k.END, b]:
            break
        iwork[k.HEAP, i], iwork[k.HEAP, child] = b, a
        i = child
    return size


@jit
def _victim(jobs, istate, iwork, fwork, dedicated_procs, theta, reset):
    """The main-pool job to redirect at this instant, or -1.

    Candidates: running in the main pool, counter > θ, at most ``dedicated_procs`` processors.
    The most processors wins, then the earliest start, then the lowest job number.
    """
    nsub = istate[k.NEXT_SUB]
    if not theta < nsub:  # a counter never exceeds the submissions so far (also θ = inf)
        return -1
    # counter > θ  <=>  counter >= c  <=>  max(base_j, RESET) <= nsub - c
    limit = nsub - (np.int64(np.floor(theta)) + 1)
    if limit < 0 or reset > limit:
        return -1
    # base_j <= limit  <=>  job `limit` (in submission order) was submitted after j started
    started_before = jobs[k.SUBMIT, limit]
    best = -1
    best_q = 0.0
    best_start = 0.0
    for idx in range(istate[k.RLEN]):
        j = iwork[k.RUNNING, idx]
        q = jobs[k.PROCS, j]
        start = fwork[k.START, j]
        if q > dedicated_procs or not start < started_before:
            continue
        if best >= 0 and q < best_q:
            continue
        if best >= 0 and q == best_q:
            if start > best_start:
                continue
            if start == best_start and jobs[k.JOBID, j] > jobs[k.JOBID, best]:
                continue
        best, best_q, best_start = j, q, start
    return best


@jit
def _kill(j, now, jobs, jobs_d, istate, iwork, fwork, killed_s):
    """Stop job ``j`` in the main pool at ``now``: its processors are free, its run is over."""
    istate[k.HLEN] = _heap_remove(iwork, fwork, istate[k.HLEN], j)
    istate[k.RLEN] = k._running_remove(jobs, iwork, fwork, istate[k.RLEN], j)
    istate[k.FREE] += np.int64(jobs[k.PROCS, j])
    fwork[k.END, j] = now
    killed_s[j] = now
    jobs_d[k.SUBMIT, j] = now


@jit
def _enqueue(j, p_static, b_static, keys, istate, iwork):
    """Append job ``j`` to a pool's queue (and to its sorted lists after equal keys: it is the
    newest arrival)."""
    size = istate[k.QLEN]
    iwork[k.QUEUE, size] = j
    if p_static:
        pos = k._sorted_insert(iwork, k.PQ, size, j, keys, k.P_BASE)
        istate[k.P_HEAD] = min(istate[k.P_HEAD], pos)
    if b_static:
        k._sorted_insert(iwork, k.BQ, size, j, keys, k.B_BASE)
    istate[k.QLEN] = size + 1


# -- the event loop -------------------------------------------------------------------------------


@jit
def advance(jobs, jobs_d, keys_m, keys_d, pm_static, bm_static, backfill_m, pd_static, bd_static,
            backfill_d, dedicated_procs, theta, balance, t_stop, istate_m, iwork_m, fwork_m,
            istate_d, iwork_d, fwork_d, killed_s, xstate):  # fmt: skip
    """Process every event instant ``t < t_stop``; return the number of instants finished.

    Returns early, with ``xstate[X_PENDING]`` set, when a job is redirected: the caller fills
    that job's dedicated keys (``keys_d[:, j]``, from its redirection instant) and calls again,
    which finishes the instant first. ``theta`` is θ (``inf``: never redirect); ``balance``
    disables redirection while the dedicated queue holds a waiting job.
    """
    n = jobs.shape[1]
    instants = 0
    pending = xstate[X_PENDING]
    if pending >= 0:
        now = killed_s[pending]
        _enqueue(pending, pd_static, bd_static, keys_d, istate_d, iwork_d)
        xstate[X_PENDING] = -1
        # the second passes; no second redirection: every counter is 0 and θ >= 0
        k._schedule(now, pm_static, k.PQ, bm_static, k.B_PLAIN, np.inf, False, backfill_m,
                    False, k.OUTLIVE_REQUESTED, jobs, keys_m, istate_m, iwork_m,
                    fwork_m)  # fmt: skip
        k._schedule(now, pd_static, k.PQ, bd_static, k.B_PLAIN, np.inf, False, backfill_d,
                    False, k.OUTLIVE_REQUESTED, jobs_d, keys_d, istate_d, iwork_d,
                    fwork_d)  # fmt: skip
        instants += 1
    # The loop is the base kernel's with the dedicated pool beside it. What runs at every
    # instant is inline or guarded by a scalar test, because a call passing arrays costs their
    # reference counting: the dedicated pass only when a job waits there, the victim scan only
    # when θ + 1 submissions came since the last reset (rare: every counter is below that).
    while True:
        t_sub = jobs[k.SUBMIT, istate_m[k.NEXT_SUB]] if istate_m[k.NEXT_SUB] < n else np.inf
        t_main = fwork_m[k.END, iwork_m[k.HEAP, 0]] if istate_m[k.HLEN] > 0 else np.inf
        t_ded = fwork_d[k.END, iwork_d[k.HEAP, 0]] if istate_d[k.HLEN] > 0 else np.inf
        now = min(t_sub, t_main, t_ded)
        if now == np.inf or now >= t_stop:
            return instants
        while istate_m[k.HLEN] > 0 and fwork_m[k.END, iwork_m[k.HEAP, 0]] <= now:
            j, size = k._heap_pop(iwork_m, fwork_m, istate_m[k.HLEN])
            istate_m[k.HLEN] = size
            istate_m[k.FREE] += np.int64(jobs[k.PROCS, j])
            istate_m[k.RLEN] = k._running_remove(jobs, iwork_m, fwork_m, istate_m[k.RLEN], j)
        while istate_d[k.HLEN] > 0 and fwork_d[k.END, iwork_d[k.HEAP, 0]] <= now:
            j, size = k._heap_pop(iwork_d, fwork_d, istate_d[k.HLEN])
            istate_d[k.HLEN] = size
            istate_d[k.FREE] += np.int64(jobs[k.PROCS, j])
            istate_d[k.RLEN] = k._running_remove(jobs_d, iwork_d, fwork_d, istate_d[k.RLEN], j)
        while istate_m[k.NEXT_SUB] < n and jobs[k.SUBMIT, istate_m[k.NEXT_SUB]] <= now:
            j = istate_m[k.NEXT_SUB]
            size = istate_m[k.QLEN]
            iwork_m[k.QUEUE, size] = j
            if pm_static:
                pos = k._sorted_insert(iwork_m, k.PQ, size, j, keys_m, k.P_BASE)
                istate_m[k.P_HEAD] = min(istate_m[k.P_HEAD], pos)
            if bm_static:
                k._sorted_insert(iwork_m, k.BQ, size, j, keys_m, k.B_BASE)
            istate_m[k.QLEN] = size + 1
            istate_m[k.NEXT_SUB] = j + 1
        k._schedule(now, pm_static, k.PQ, bm_static, k.B_PLAIN, np.inf, False, backfill_m,
                    False, k.OUTLIVE_REQUESTED, jobs, keys_m, istate_m, iwork_m,
                    fwork_m)  # fmt: skip
        waiting_d = istate_d[k.QLEN] > istate_d[k.DEAD]
        if waiting_d and istate_d[k.FREE] > 0:
            k._schedule(now, pd_static, k.PQ, bd_static, k.B_PLAIN, np.inf, False,
                        backfill_d, False, k.OUTLIVE_REQUESTED, jobs_d, keys_d, istate_d,
                        iwork_d, fwork_d)  # fmt: skip
            waiting_d = istate_d[k.QLEN] > istate_d[k.DEAD]
        if istate_m[k.DEAD] > k._DEAD_SLACK + (istate_m[k.QLEN] - istate_m[k.DEAD]) // 4:
            k._compact(iwork_m, istate_m, pm_static, bm_static)
        if istate_d[k.DEAD] > k._DEAD_SLACK + (istate_d[k.QLEN] - istate_d[k.DEAD]) // 4:
            k._compact(iwork_d, istate_d, pd_static, bd_static)
        # the redirection step; the tests before the scan are _victim's own first ones
        nsub = istate_m[k.NEXT_SUB]
        if (
            dedicated_procs > 0
            and theta < nsub
            and xstate[X_RESET] <= nsub - (np.int64(np.floor(theta)) + 1)
            and not (balance and waiting_d)
        ):
            v = _victim(jobs, istate_m, iwork_m, fwork_m, dedicated_procs, theta, xstate[X_RESET])
            if v >= 0:
                _kill(v, now, jobs, jobs_d, istate_m, iwork_m, fwork_m, killed_s)
                xstate[X_RESET] = nsub
                xstate[X_COUNT] += 1
                xstate[X_PENDING] = v
                return instants
        instants += 1
