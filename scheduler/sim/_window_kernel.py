"""Compiled windowed list scheduling with optional first-fit backfilling (private).

An engine variant, a sibling of :mod:`scheduler.sim._kernel`: the scheduler of the evaluation
code published with the learned-priority study (Carastan-Santos & de Camargo, SC'17,
``sched-performance-tester/sched-simulator-*.c``), written from the semantics in
``docs/simulator.md`` ("Windowed list scheduling"). :mod:`scheduler.sim.window` validates the
inputs and is the public API.

Arrays (``n`` jobs in submission order, ``submit`` nondecreasing):

``submit``    float64 (n,)  submit times (s).
``procs``     int64 (n,)    processors, 1..machine_procs.
``run``       float64 (n,)  actual run times (s), > 0.
``estimate``  float64 (n,)  the run time the scheduler believes (s), > 0: the policy's input and,
                            with backfilling, the running jobs' estimated ends.
``key_base``, ``key_div``  float64 (n,)  the policy's key ``base + (now - submit) / div``,
                            smallest first (``div`` = +inf for a static key).
``start``     float64 (n,)  out: start times (s).

**The queue** is one permutation ``order`` of the jobs. Positions ``< pos`` hold the started
jobs in start order; positions ``>= pos`` the waiting ones, in the order the last decision left
them. A decision only permutes *arrived* jobs inside the window ``pos .. pos + window - 1``, and
positions past the window are never touched, so they stay in submission order and hold the
latest-submitted waiting jobs: the window is always the ``window`` earliest-submitted waiting
jobs, and its arrived jobs are a prefix of it (the authors count them that way).

**A decision** at time ``now`` (the loop ``while pos < n``): unless ``pos < n_in_order``, sort
the window's arrived prefix by key (ties by submission order; or, with ``exchange_sort``, by
the authors' exchange sort from the current order), then, with backfilling, if the
head cannot start and at least two jobs have arrived, move the first candidate that may start
(in window order) to the head. Start the head if it has arrived and fits, and decide again;
otherwise wait for the next event (a job's end or a submission). One backfill per decision, the
queue re-sorted between two, as the authors' loop does.

**The backfill test** (the authors' rule): the shadow time is ``now`` plus the remaining
estimated time of the running job whose end, counting running jobs by increasing remaining
estimate (ties by start order), first frees enough processors for the head; ``extra`` is the
processors free then beyond the head's. A candidate may start if it fits the free processors
and ends (estimate) by the shadow time, or if it fits ``min(free, extra)``.

The running jobs are kept in start order in three arrays (``r_end``, ``r_est_end``,
``r_procs``); a sequence has at most a few thousand running at once, so a linear scan per event
is cheaper than a heap's bookkeeping at this size.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit


@jit
def window_schedule(
    submit, procs, run, estimate, key_base, key_div, machine_procs, window, n_in_order,
    backfilling, exchange_sort, start,
):  # fmt: skip
    """Fill ``start`` (s) with the schedule of the jobs; ``window`` <= 0 means the whole queue,
    ``n_in_order`` first jobs start in submission order (never sorted, never backfilled);
    ``exchange_sort`` orders the window with the authors' exchange sort instead of a stable
    sort."""
    n = submit.shape[0]
    order = np.arange(n)
    r_end = np.empty(n)
    r_est_end = np.empty(n)
    r_procs = np.empty(n, dtype=np.int64)
    n_run = 0
    free = machine_procs
    pos = 0
    arrived = 0  # jobs 0 .. arrived-1 (submission order) have submit <= now
    now = submit[0] if n > 0 else 0.0
    while pos < n:
        # release the jobs that ended by now, keeping the others in start order
        kept = 0
        for r in range(n_run):
            if r_end[r] <= now:
                free += r_procs[r]
            else:
                r_end[kept] = r_end[r]
                r_est_end[kept] = r_est_end[r]
                r_procs[kept] = r_procs[r]
                kept += 1
        n_run = kept
        while arrived < n and submit[arrived] <= now:
            arrived += 1
        while pos < n:
            if pos >= n_in_order:
                hi = n if window <= 0 else min(n, pos + window)
                m = pos
                while m < hi and submit[order[m]] <= now:
                    m += 1
                if exchange_sort:
                    _exchange_sort(order, pos, m, now, submit, key_base, key_div)
                else:
                    _sort_by_key(order, pos, m, now, submit, key_base, key_div)
                if backfilling and m - pos >= 2 and procs[order[pos]] > free:
                    c = _first_fit(order, pos, m, now, free, procs, estimate, r_est_end,
                                   r_procs, n_run)  # fmt: skip
                    if c > pos:
                        job = order[c]
                        for k in range(c, pos, -1):
                            order[k] = order[k - 1]
                        order[pos] = job
            head = order[pos]
            if submit[head] > now or procs[head] > free:
                break
            start[head] = now
            free -= procs[head]
            r_end[n_run] = now + run[head]
            r_est_end[n_run] = now + estimate[head]
            r_procs[n_run] = procs[head]
            n_run += 1
            pos += 1
        if pos >= n:
            break
        # the next event: the earliest end of a running job, or the next submission
        t_next = np.inf
        for r in range(n_run):
            if r_end[r] < t_next:
                t_next = r_end[r]
        if arrived < n and submit[arrived] < t_next:
            t_next = submit[arrived]
        now = t_next


@jit
def _sort_by_key(order, lo, hi, now, submit, key_base, key_div):
    """Sort ``order[lo:hi]`` by the key at ``now``, ties by submission order (job index)."""
    if hi - lo < 2:
        return
    jobs = np.sort(order[lo:hi])  # submission order first, so the stable sort breaks ties by it
    keys = np.empty(hi - lo)
    for k in range(hi - lo):
        j = jobs[k]
        keys[k] = key_base[j] + (now - submit[j]) / key_div[j]
    ranks = np.argsort(keys, kind="mergesort")
    for k in range(hi - lo):
        order[lo + k] = jobs[ranks[k]]


@jit
def _exchange_sort(order, lo, hi, now, submit, key_base, key_div):
    """Sort ``order[lo:hi]`` by the key at ``now`` as the authors' SPF does, from the current
    order: ``for i: for j: if key[i] < key[j]: swap(i, j)``. Ascending, but equal keys end in
    an order that depends on the current one, not in submission order. O(m²): m <= the window."""
    m = hi - lo
    keys = np.empty(m)
    for k in range(m):
        j = order[lo + k]
        keys[k] = key_base[j] + (now - submit[j]) / key_div[j]
    for a in range(m):
        for b in range(m):
            if keys[a] < keys[b]:
                keys[a], keys[b] = keys[b], keys[a]
                order[lo + a], order[lo + b] = order[lo + b], order[lo + a]


@jit
def _first_fit(order, lo, hi, now, free, procs, estimate, r_est_end, r_procs, n_run):
    """The position in ``order[lo+1:hi]`` of the first job that may start now without delaying
    the head ``order[lo]`` (the module docstring's test), or -1."""
    need = procs[order[lo]]
    # running jobs by increasing estimated end, ties in start order (a stable sort)
    by_end = np.argsort(r_est_end[:n_run], kind="mergesort")
    shadow = now
    extra = 0
    future = free
    for k in range(n_run):
        r = by_end[k]
        future += r_procs[r]
        if future >= need:
            shadow = r_est_end[r]
            extra = future - need
            break
    spare = min(free, extra)
    for c in range(lo + 1, hi):
        j = order[c]
        q = procs[j]
        if (q <= free and now + estimate[j] <= shadow) or q <= spare:
            return c
    return -1
