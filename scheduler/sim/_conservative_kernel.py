"""Compiled conservative-backfilling event loop with Slurm's limits (private).

The semantics are ``docs/simulator.md``, "Conservative backfilling (and Slurm's sched/backfill
limits)"; :mod:`scheduler.sim.conservative` validates the inputs and calls :func:`advance`.

A sibling of :mod:`scheduler.sim._kernel`: the same job matrix, state arrays and helpers
(completion heap, running list sorted by estimated end, ``_start``, ``_revise_outlived``, the
sorted static list PQ, compaction of started entries). What it adds:

- the pass order in CAND (waiting jobs, overdue ones first, then by the primary key), built
  once per instant and shared by the main pass and the backfill pass;
- the **profile**: a scratch array ``prof`` float64 (2, capacity): row PT strictly increasing
  times, the first ``now``, row PF the free processors from that time to the next (whole
  numbers, exact in float64), rebuilt at
  each backfill pass from the running list (already sorted by estimated end; rounding ends up
  keeps it sorted) and updated in place by every start and reservation of the walk.

Why the walk has its shape: a job can only start now when ``q <= free``, and free only falls
during the walk, so the walk stops after the last job of the pass order that could still start
(``last``, moved back as jobs start): reservations for the jobs behind it could not change any
start. With ``depth`` used up, a job with ``q > free`` is skipped without looking at the
profile.

**Resuming a pass** (the walk memory ``memo``, int64, :func:`new_memory`): a backfill
pass leaves in ``prof`` its final profile and in ``memo`` the jobs it walked and did not start,
in walk order. The next backfill pass resumes from there, walking only the jobs after them,
when its result is provably the same on that prefix: no job ended and no estimate was revised
since (every breakpoint but the first is still after ``now``), the main pass started nothing,
every job of the prefix that the window hid has its earliest start still beyond ``now +
bf_window`` (it is the same start as before, so the job is hidden again; the memory keeps the
floor of the earliest such start), and the new pass order begins with the same jobs in the same
order. Then each job of the prefix has the same earliest start as before
(its profile can only have less free than in the previous pass, the jobs started there after
it being running now, yet it still fits where it was reserved, those jobs having been placed
around its reservation; and free is constant from the old ``now`` to the first breakpoint), so
nothing of the prefix starts, every reservation is the same, and the profile after the prefix
is the previous pass's final one with its first time moved to ``now``. Half of the
reservations of conservative FCFS on CEA-Curie are made in such passes.

Integer parameters use ``-1`` for "no limit" and float ones ``inf`` (window) or ``0`` (no
resolution, no interval).
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit
from scheduler.core.intrinsics import shift_right
from scheduler.sim import _kernel as k

__all__ = ["MEMO_ENABLED", "MEMO_RESUMED", "PF", "PT", "advance", "new_memory", "profile_capacity"]

# rows of ``prof``
PT, PF = 0, 1


#: Earliest-start searches of a pass remembered as lower bounds for the next ones.
_SEEN = 8

# entries of ``memo`` (the walk memory), then the walked jobs left waiting, in walk order
MEMO_VALID, MEMO_ENABLED, MEMO_LEFT, MEMO_RESERVATIONS, MEMO_SIZE, MEMO_HIDDEN, MEMO_RESUMED = (
    range(7)
)
MEMO_HEADER = 7
#: MEMO_HIDDEN when the window hid no job of the walk (times are within +-2**52 s).
_NONE_HIDDEN = np.int64(2**62)


def new_memory(n: int, resume: bool = True) -> np.ndarray:
    """A fresh walk memory ``memo`` for ``n`` jobs (int64: its header, then one entry per
    job), resuming passes when ``resume`` (False: every pass afresh, the same schedule)."""
    memo = np.zeros(MEMO_HEADER + n, dtype=np.int64)
    memo[MEMO_ENABLED] = int(resume)
    return memo


def profile_capacity(n: int) -> int:
    """Entries the profile arrays need for ``n`` jobs: ``now``, one end per running job and
    at most one new end per start or reservation of a pass."""
    return 2 * n + 2


@jit(inline=True)
def _round_up(x, resolution):
    """⌈x⌉: the next multiple of ``resolution`` (x itself when it is one); x when 0."""
    if resolution <= 0.0:
        return x
    return np.ceil(x / resolution) * resolution


@jit
def _order(now, threshold_s, p_static, jobs, keys, istate, iwork, fwork):
    """Fill CAND with the waiting jobs in pass order (EASY's step 1); return their count."""
    qlen = istate[k.QLEN]
    count = 0
    # overdue jobs (waiting more than Θ) are a prefix of the live queue, which is in job order
    if threshold_s < np.inf:
        for i in range(qlen):
            j = iwork[k.QUEUE, i]
            if iwork[k.STATUS, j] != k.WAITING:
                continue
            if not now - jobs[k.SUBMIT, j] > threshold_s:
                break
            iwork[k.CAND, count] = j
            count += 1
    overdue = count
    if p_static:
        for i in range(qlen):
            j = iwork[k.PQ, i]
            if iwork[k.STATUS, j] != k.WAITING:
                continue
            if overdue > 0 and now - jobs[k.SUBMIT, j] > threshold_s:
                continue
            iwork[k.CAND, count] = j
            count += 1
        return count
    for i in range(qlen):
        j = iwork[k.QUEUE, i]
        if iwork[k.STATUS, j] != k.WAITING:
            continue
        if overdue > 0 and now - jobs[k.SUBMIT, j] > threshold_s:
            continue
        iwork[k.CAND, count] = j
        fwork[k.KEY, count] = keys[k.P_BASE, j] + (now - jobs[k.SUBMIT, j]) / keys[k.P_DIV, j]
        count += 1
    if count - overdue > 1:
        # collected in job order: a stable sort breaks ties by submit time, then job number
        rest = iwork[k.CAND, overdue:count].copy()
        order = np.argsort(fwork[k.KEY, overdue:count], kind="mergesort")
        for i in range(count - overdue):
            iwork[k.CAND, overdue + i] = rest[order[i]]
    return count


@jit
def _build_profile(now, resolution, jobs, istate, iwork, fwork, prof):
    """The profile of the running jobs (estimated ends rounded up); return its size."""
    prof[PT, 0] = now
    prof[PF, 0] = istate[k.FREE]
    size = 1
    for idx in range(istate[k.RLEN]):
        j = iwork[k.RUNNING, idx]
        e = _round_up(fwork[k.EST_END, j], resolution)
        q = jobs[k.PROCS, j]
        if size > 1 and e == prof[PT, size - 1]:
            prof[PF, size - 1] += q
            continue
        prof[PT, size] = e
        prof[PF, size] = prof[PF, size - 1] + q
        size += 1
    return size


@jit(inline=True)
def _index_of(prof, size, t):
    """The profile index of the breakpoint at time ``t`` (one of PT[1:size])."""
    lo, hi = 1, size - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if prof[PT, mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit(inline=True)
def _first_short(prof, size, s, end, q):
    """First profile index from ``s`` with fewer than ``q`` free before ``end``, or -1."""
    idx = s
    while idx < size and prof[PT, idx] < end:
        if prof[PF, idx] < q:
            return idx
        idx += 1
    return -1


@jit
def _hold(prof, size, s, end, q):
    """Take ``q`` processors over ``[prof[PT, s], end)``; return the new size."""
    idx = s
    while idx < size and prof[PT, idx] < end:
        idx += 1
    if idx == size or prof[PT, idx] != end:
        # a new breakpoint at end, where the free count before it resumes
        shift_right(prof, PT, idx, size)
        shift_right(prof, PF, idx, size)
        prof[PT, idx] = end
        prof[PF, idx] = prof[PF, idx - 1]
        size += 1
    for i in range(s, idx):
        prof[PF, i] -= q
    return size


@jit(inline=True)
def _resumable(now, first, count, window_s, iwork, memo):
    """Whether the pass at ``now`` may resume the previous one (module docstring): the memory
    is on and still valid (the callers clear MEMO_VALID when a job ends or starts outside the
    walk, or an estimate is revised), every job a finite window hid is still beyond it, and
    CAND[first:] begins with the jobs the previous walk left waiting, in the same order."""
    if memo[MEMO_ENABLED] == 0 or memo[MEMO_VALID] == 0:
        return False
    # a job the window hid stays hidden (its earliest start is the same) while that start is
    # still beyond now + window; MEMO_HIDDEN holds the floor of the earliest such start (s)
    if window_s < np.inf and memo[MEMO_HIDDEN] <= now + window_s:
        return False
    left = memo[MEMO_LEFT]
    if first + left > count:
        return False
    for i in range(left):  # noqa: SIM110 (a loop: numba compiles no generator in all())
        if iwork[k.CAND, first + i] != memo[MEMO_HEADER + i]:
            return False
    return True


@jit
def _backfill_resuming(now, first, count, depth, window_s, resolution, max_test, outlive, jobs,
                       istate, iwork, fwork, prof, memo, node_procs):  # fmt: skip
    """The backfill pass over CAND[first:count] (the jobs still waiting, in pass order), with
    the walk memory ``memo``: resumes the previous pass when that is provably the same (module
    docstring), and leaves its own walk in ``memo`` and ``prof``. ``node_procs`` > 0: a
    reservation holds whole nodes of that many processors (Slurm's map of nodes), 0: its
    processors."""
    if istate[k.RLEN] > 0 and fwork[k.EST_END, iwork[k.RUNNING, 0]] <= now:
        k._revise_outlived(now, outlive, jobs, istate, iwork, fwork)
        memo[MEMO_VALID] = 0
    free = istate[k.FREE]
    if free == 0:
        return
    stop = count if max_test < 0 else min(count, first + max_test)
    last = stop - 1
    while last >= first and jobs[k.PROCS, iwork[k.CAND, last]] > free:
        last -= 1
    if last < first:
        return
    recording = memo[MEMO_ENABLED] != 0
    if _resumable(now, first, count, window_s, iwork, memo):
        # the previous walk's outcome stands for its jobs: go on after them
        left = memo[MEMO_LEFT]
        size = memo[MEMO_SIZE]
        reservations = memo[MEMO_RESERVATIONS]
        blocked = left > 0
        prof[PT, 0] = now
        p = first + left
        memo[MEMO_RESUMED] += 1
    else:
        size = _build_profile(now, resolution, jobs, istate, iwork, fwork, prof)
        left = 0
        reservations = 0
        blocked = False
        p = first
        memo[MEMO_HIDDEN] = _NONE_HIDDEN
    # (processors, estimate, earliest start) of the last _SEEN searches of this pass
    seen = np.empty((3, _SEEN), dtype=np.float64)
    searched = 0
    while p <= last:
        j = iwork[k.CAND, p]
        p += 1
        q = np.int64(jobs[k.PROCS, j])
        est = fwork[k.EST_CUR, j]
        if q <= free:
            end = _round_up(now + est, resolution)
            if _first_short(prof, size, 0, end, q) < 0:
                k._start(j, now, k.STARTED_BACKFILL if blocked else k.STARTED_HEAD, jobs,
                         istate, iwork, fwork)  # fmt: skip
                size = _hold(prof, size, 0, end, q)
                free -= q
                while last >= p and jobs[k.PROCS, iwork[k.CAND, last]] > free:
                    last -= 1
                continue
        blocked = True
        if recording:
            memo[MEMO_HEADER + left] = j
        left += 1
        if depth >= 0 and reservations >= depth:
            continue
        # the earliest start: the first breakpoint from which q processors stay free until
        # the (rounded) end; a breakpoint short of q restarts the search after it. It starts
        # at the latest earliest start of the recent searches of this pass by jobs no larger
        # and no longer (before it those did not fit, and free has only fallen since)
        lower = now
        for i in range(min(searched, _SEEN)):
            if seen[0, i] <= q and seen[1, i] <= est and seen[2, i] > lower:
                lower = seen[2, i]
        s = 1 if lower == now else _index_of(prof, size, lower)
        while True:
            while prof[PF, s] < q:
                s += 1
            end = _round_up(prof[PT, s] + est, resolution)
            short = _first_short(prof, size, s, end, q)
            if short < 0:
                break
            s = short + 1
        slot = searched % _SEEN
        seen[0, slot], seen[1, slot], seen[2, slot] = q, est, prof[PT, s]
        searched += 1
        if prof[PT, s] > now + window_s:
            memo[MEMO_HIDDEN] = min(memo[MEMO_HIDDEN], np.int64(np.floor(prof[PT, s])))
            continue
        held = q if node_procs <= 0 else -(-q // node_procs) * node_procs
        size = _hold(prof, size, s, end, held)
        reservations += 1
    if recording:
        memo[MEMO_VALID] = 1
        memo[MEMO_LEFT] = left
        memo[MEMO_SIZE] = size
        memo[MEMO_RESERVATIONS] = reservations


@jit(inline=True)
def next_instant(last_now, interval, jobs, istate, iwork, fwork):
    """The next event instant after ``last_now``: the next submission, the next completion
    or, while a job waits, the next multiple of ``interval`` (periodic backfill passes; 0:
    none); ``inf`` when nothing is left."""
    n = jobs.shape[1]
    t_sub = jobs[k.SUBMIT, istate[k.NEXT_SUB]] if istate[k.NEXT_SUB] < n else np.inf
    t_end = fwork[k.END, iwork[k.HEAP, 0]] if istate[k.HLEN] > 0 else np.inf
    now = min(t_sub, t_end)
    if interval > 0.0 and istate[k.QLEN] > istate[k.DEAD]:
        now = min(now, (np.floor(last_now / interval) + 1.0) * interval)
    return now


@jit
def complete_until(now, jobs, istate, iwork, fwork, memo, ended):
    """End every running job whose end is at or before ``now``: free its processors, take it
    off the running list and invalidate the walk memory (a pass after a completion never
    resumes). The jobs ended are written to ``ended`` (in heap order) when it has room (an
    empty array: not recorded); return how many ended."""
    count = 0
    while istate[k.HLEN] > 0 and fwork[k.END, iwork[k.HEAP, 0]] <= now:
        j, hsize = k._heap_pop(iwork, fwork, istate[k.HLEN])
        istate[k.HLEN] = hsize
        istate[k.FREE] += np.int64(jobs[k.PROCS, j])
        istate[k.RLEN] = k._running_remove(jobs, iwork, fwork, istate[k.RLEN], j)
        memo[MEMO_VALID] = 0
        if count < ended.size:
            ended[count] = j
        count += 1
    return count


@jit
def advance(jobs, keys, p_static, threshold_s, depth, window_s, resolution, interval, max_test,
            queue_depth, outlive, istate, iwork, fwork, prof, memo, node_procs):  # fmt: skip
    """Run every event to the end; return the number of event instants processed.

    ``keys``: the kernel's key rows (only P_BASE and P_DIV read); ``p_static``: the primary key
    does not depend on time (then PQ is kept sorted); ``threshold_s``: Θ (``inf``: none);
    ``depth``, ``max_test``, ``queue_depth``: reservations per backfill pass, jobs walked per
    backfill pass, jobs considered per main pass (-1: no limit); ``window_s`` (``inf``: none),
    ``resolution`` and ``interval`` (s, 0: none); ``outlive``: an ``OUTLIVE_*`` code of
    :mod:`scheduler.sim._kernel`; ``memo``: the walk memory (:func:`new_memory`,
    zeros; MEMO_ENABLED set to let the backfill passes resume, else every pass starts afresh);
    ``node_procs``: processors of a node that a reservation holds whole (0: none).
    """
    n = jobs.shape[1]
    instants = 0
    last_now = -np.inf
    no_record = np.empty(0, dtype=np.int64)
    while True:
        now = next_instant(last_now, interval, jobs, istate, iwork, fwork)
        if now == np.inf:
            return instants
        complete_until(now, jobs, istate, iwork, fwork, memo, no_record)
        while istate[k.NEXT_SUB] < n and jobs[k.SUBMIT, istate[k.NEXT_SUB]] <= now:
            j = istate[k.NEXT_SUB]
            qsize = istate[k.QLEN]
            iwork[k.QUEUE, qsize] = j
            if p_static:
                k._sorted_insert(iwork, k.PQ, qsize, j, keys, k.P_BASE)
            istate[k.QLEN] = qsize + 1
            istate[k.NEXT_SUB] = j + 1
        backfill_now = interval <= 0.0 or np.floor(now / interval) * interval == now
        _pass(now, backfill_now, p_static, threshold_s, depth, window_s, resolution, max_test,
              queue_depth, outlive, jobs, keys, istate, iwork, fwork, prof, memo,
              node_procs)  # fmt: skip
        if istate[k.DEAD] > k._DEAD_SLACK + (istate[k.QLEN] - istate[k.DEAD]) // 4:
            k._compact(iwork, istate, p_static, False)
        last_now = now
        instants += 1


@jit
def _pass(now, backfill_now, p_static, threshold_s, depth, window_s, resolution, max_test,
          queue_depth, outlive, jobs, keys, istate, iwork, fwork, prof, memo,
          node_procs):  # fmt: skip
    """The main pass, then (at a backfill instant) the backfill pass, at ``now``; ``memo``
    the walk memory (:func:`advance`)."""
    if istate[k.QLEN] == istate[k.DEAD]:
        return
    free = istate[k.FREE]
    # nothing can start when no waiting job fits: only the backfill pass's revision remains
    fits = False
    if free > 0:
        for i in range(istate[k.QLEN]):
            j = iwork[k.QUEUE, i]
            if iwork[k.STATUS, j] == k.WAITING and jobs[k.PROCS, j] <= free:
                fits = True
                break
    if not fits:
        if backfill_now and istate[k.RLEN] > 0 and fwork[k.EST_END, iwork[k.RUNNING, 0]] <= now:
            k._revise_outlived(now, outlive, jobs, istate, iwork, fwork)
            memo[MEMO_VALID] = 0
        return
    count = _order(now, threshold_s, p_static, jobs, keys, istate, iwork, fwork)
    first = 0
    while first < count and (queue_depth < 0 or first < queue_depth):
        j = iwork[k.CAND, first]
        if jobs[k.PROCS, j] > istate[k.FREE]:
            break
        k._start(j, now, k.STARTED_HEAD, jobs, istate, iwork, fwork)
        memo[MEMO_VALID] = 0
        first += 1
    if backfill_now and first < count:
        _backfill_resuming(now, first, count, depth, window_s, resolution, max_test, outlive,
                           jobs, istate, iwork, fwork, prof, memo, node_procs)  # fmt: skip
