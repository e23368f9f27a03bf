"""Compiled EASY-backfilling event loop over plain NumPy arrays (private).

The semantics are those of ``docs/simulator.md``; ``scheduler/sim/engine.py`` validates inputs and
prepares the arrays, this module only runs the loop. Everything here takes arrays and scalars and
is compiled by numba with an on-disk cache, so a process pays no compilation once a machine has
warmed the cache (``scheduler warmup``).

Array layout (all C-contiguous, ``n`` jobs in (submit time, job number) order):

``jobs``  float64 (JOB_ROWS, n)
    SUBMIT (s), PROCS, RUN (actual run time, s), EST (estimate, s), REQ (requested time, s),
    JOBID (SWF job number; ties of estimated ends are broken by it).
``keys``  float64 (4, n)
    primary base / divisor, backfill base / divisor: key(now) = base + (now - submit) / divisor.
``istate`` int64 (I_ROWS,)
    counters: next job to submit, queue entries (waiting + dead), running count, heap size,
    free processors, dead queue entries (started, not yet compacted away), a position of
    the static primary list before which every entry is dead (0 is always true; whoever
    inserts into that list before it moves it back), and a pending pass: 1 when ``advance``
    paused at an instant whose completions and submissions it had applied but whose pass it
    had not run (``pause_overdue_s``), with that instant's bits (float64 viewed as int64).
``iwork`` int64 (IW_ROWS, n)
    QUEUE (queued jobs in job order), PQ and BQ (the same jobs sorted by a static primary /
    backfill key, maintained only for static policies), RUNNING (sorted by estimated end, job
    number), HEAP (min-heap of running jobs by actual end), STATUS (-1 waiting / 0 started from
    the head / 1 backfilled), CAND (scratch: backfill candidates), BQ_PROCS (the processor
    counts of BQ's jobs, position by position) and BQ_MIN (the minimum of BQ_PROCS over each
    block of ``_BLOCK`` positions; a lower bound, exact after each compaction), both kept only
    with an indexed backfill mode.
``fwork`` float64 (FW_ROWS, n)
    START (s, NaN until started), END (actual end, s), EST_CUR (current estimate, s),
    EST_END (current estimated end, s), KEY (scratch: priority keys), RESERVED (the shadow
    time of the first reservation the job received, s; NaN if it never blocked the queue).

Every function indexes these 2-D arrays directly (``iwork[STATUS, j]``) instead of taking row
views: a view is a reference-counted object, and the atomic count updates of views created in
branchy loops cost more than the scheduling itself.

The state is resumable: ``advance`` processes every event before ``t_stop`` and returns, so a
caller may change the policies between two calls (online policy selection) without losing jobs.

``threshold_backfill`` (docs: step 4, "thresholded backfill order") only puts the overdue
backfill candidates first: one extra walk over the overdue prefix of QUEUE before the usual
backfill loop, skipped entirely when the flag is off, so the default path is unchanged.

The backfill walk skips what cannot start. A candidate it refuses is refused by a test that
stays false for the rest of the walk (free and extra processors only decrease, the shadow time
is fixed), so the skips change no decision:

- ``b_mode = B_INDEXED`` (any static backfill order): BQ_PROCS and BQ_MIN are kept beside BQ,
  and the walk (and the test that a pass can start anything) jumps over every block of
  ``_BLOCK`` positions whose smallest processor count exceeds the free processors;
- ``B_INDEXED_BY_ESTIMATE``: moreover the order is one of nondecreasing estimates (SPF's):
  once a candidate ends after the shadow time every later one does too, so from there the
  blocks are skipped against ``min(free, extra)`` and the walk stops when no extra processors
  are left;
- ``B_INDEXED_BY_PROCS``: nondecreasing processor counts (SQF's): the walk stops at the first
  candidate that does not fit;
- ``B_PLAIN``: BQ alone (the variant kernels, which insert into BQ themselves);
- a time-dependent backfill order collects, and sorts, only the candidates that could start
  (``q <= free`` and ``now + est <= shadow`` or ``q <= extra``).

The engine derives ``b_mode`` from the pair's keys (:class:`scheduler.sim.engine.Simulation`).

The pass (``_schedule`` and what it calls) is compiled without numba's runtime
(``jit(refcounts=False)``): numba would otherwise wrap every array argument of a call, and of
each inlined helper, in locked reference count updates, which were most of the time of a
CEA-Curie week (``docs/benchmarks.md``). So the pass allocates nothing: candidates are sorted
in place (a heapsort on (key, job), which is the stable order since CAND holds jobs in job
order) and outlived jobs are revised without a copy.

The functions are compiled by :func:`scheduler.core.compile.jit` (in memory, with a warning,
when numba has no writable cache directory); :mod:`scheduler.sim.cache` repairs a cache whose
files cannot be read.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit
from scheduler.core.intrinsics import shift_left, shift_right

# rows of ``jobs``
SUBMIT, PROCS, RUN, EST, REQ, JOBID = range(6)
JOB_ROWS = 6
# rows of ``keys``
P_BASE, P_DIV, B_BASE, B_DIV = range(4)
# entries of ``istate``
NEXT_SUB, QLEN, RLEN, HLEN, FREE, DEAD, P_HEAD, PENDING, PENDING_NOW = range(9)
I_ROWS = 9
# rows of ``iwork``
QUEUE, PQ, BQ, RUNNING, HEAP, STATUS, CAND, BQ_PROCS, BQ_MIN = range(9)
IW_ROWS = 9
# rows of ``fwork``
START, END, EST_CUR, EST_END, KEY, RESERVED = range(6)
FW_ROWS = 6

# outlive rules
OUTLIVE_REQUESTED = 0
OUTLIVE_DOUBLE = 1

# ``b_mode``: how the static backfill list BQ is indexed (module docstring)
B_PLAIN = 0
B_INDEXED = 1
B_INDEXED_BY_ESTIMATE = 2
B_INDEXED_BY_PROCS = 3

# status values
WAITING = -1
STARTED_HEAD = 0
STARTED_BACKFILL = 1

#: After this many selections by linear scan in one pass, sort the rest instead: a scan costs
#: O(queue) per examined job, cheaper than a sort when, as usual, few jobs start per pass.
_MAX_SCAN_PICKS = 8
#: Up to this many backfill candidates of a time-dependent order are sorted by insertion.
_INSERTION_SORT_MAX = 16
#: Positions of BQ per block of BQ_MIN: the backfill walk skips a block whose smallest processor
#: count exceeds the free processors.
_BLOCK = 32
#: BQ_PROCS of a started job's entry, when its position is at hand: the index skips it.
_GONE = np.int64(1) << 62
#: Started jobs stay in the queue lists as dead entries (skipped by every walk) until there are
#: more than this many plus a quarter of the live ones: compaction is then amortised O(1).
_DEAD_SLACK = 8


def new_state(jobs: np.ndarray, machine_procs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh state for ``jobs``: empty machine, nothing submitted."""
    n = jobs.shape[1]
    istate = np.zeros(I_ROWS, dtype=np.int64)
    istate[FREE] = machine_procs
    iwork = np.zeros((IW_ROWS, n), dtype=np.int64)
    iwork[STATUS, :] = WAITING
    fwork = np.empty((FW_ROWS, n), dtype=np.float64)
    fwork[START, :] = np.nan
    fwork[RESERVED, :] = np.nan
    fwork[EST_CUR, :] = jobs[EST]
    return istate, iwork, fwork


# -- completion heap (by actual end) -------------------------------------------------------------


@jit(inline=True)
def _heap_push(iwork, fwork, size, j):
    i = size
    iwork[HEAP, i] = j
    while i > 0:
        parent = (i - 1) >> 1
        a, b = iwork[HEAP, parent], iwork[HEAP, i]
        if fwork[END, a] <= fwork[END, b]:
            break
        iwork[HEAP, parent], iwork[HEAP, i] = b, a
        i = parent
    return size + 1


@jit(inline=True)
def _heap_pop(iwork, fwork, size):
    top = iwork[HEAP, 0]
    size -= 1
    iwork[HEAP, 0] = iwork[HEAP, size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and fwork[END, iwork[HEAP, child + 1]] < fwork[END, iwork[HEAP, child]]:
            child += 1
        a, b = iwork[HEAP, i], iwork[HEAP, child]
        if fwork[END, a] <= fwork[END, b]:
            break
        iwork[HEAP, i], iwork[HEAP, child] = b, a
        i = child
    return top, size


# -- running jobs sorted by (estimated end, job number) ------------------------------------------


@jit(inline=True)
def _running_position(jobs, iwork, fwork, size, e, jid):
    """First position whose (estimated end, job number) is not smaller than (e, jid)."""
    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi) >> 1
        k = iwork[RUNNING, mid]
        if fwork[EST_END, k] < e or (fwork[EST_END, k] == e and jobs[JOBID, k] < jid):
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit(inline=True)
def _running_insert(jobs, iwork, fwork, size, j):
    pos = _running_position(jobs, iwork, fwork, size, fwork[EST_END, j], jobs[JOBID, j])
    shift_right(iwork, RUNNING, pos, size)
    iwork[RUNNING, pos] = j
    return size + 1


@jit(inline=True)
def _running_remove(jobs, iwork, fwork, size, j):
    pos = _running_position(jobs, iwork, fwork, size, fwork[EST_END, j], jobs[JOBID, j])
    shift_left(iwork, RUNNING, pos, size)
    return size - 1


# -- one scheduling pass -------------------------------------------------------------------------


@jit(inline=True)
def _start(j, now, how, jobs, istate, iwork, fwork):
    iwork[STATUS, j] = how
    istate[DEAD] += 1
    fwork[START, j] = now
    fwork[END, j] = now + jobs[RUN, j]
    fwork[EST_END, j] = now + fwork[EST_CUR, j]
    istate[FREE] -= np.int64(jobs[PROCS, j])
    istate[HLEN] = _heap_push(iwork, fwork, istate[HLEN], j)
    istate[RLEN] = _running_insert(jobs, iwork, fwork, istate[RLEN], j)


@jit(refcounts=False)
def _revise_outlived(now, outlive, jobs, istate, iwork, fwork):
    """Revise the estimate of every running job whose estimated end is <= now (docs: outlive)."""
    # outlived jobs sit at the front of the sorted running list; take them out first, then
    # reinsert each with its revised estimated end
    count = 0
    while count < istate[RLEN] and fwork[EST_END, iwork[RUNNING, count]] <= now:
        count += 1
    if count == 0:
        return
    # one at a time from the front (no copy: the pass allocates nothing); a revised job ends
    # after now, so it goes behind the outlived ones still waiting at the front
    for _ in range(count):
        k = iwork[RUNNING, 0]
        shift_left(iwork, RUNNING, 0, istate[RLEN])
        istate[RLEN] -= 1
        start = fwork[START, k]
        if outlive == OUTLIVE_DOUBLE:
            while start + fwork[EST_CUR, k] <= now:
                fwork[EST_CUR, k] *= 2.0
        else:
            fwork[EST_CUR, k] = jobs[REQ, k]
        fwork[EST_END, k] = start + fwork[EST_CUR, k]
        if fwork[EST_END, k] <= now:
            fwork[EST_END, k] = now + 1.0
        istate[RLEN] = _running_insert(jobs, iwork, fwork, istate[RLEN], k)


@jit(inline=True)
def _reservation(head_procs, classic, jobs, istate, iwork, fwork):
    """Shadow time (s) and extra processors for a head job needing ``head_procs``."""
    available = istate[FREE]
    size = istate[RLEN]
    for idx in range(size):
        k = iwork[RUNNING, idx]
        available += np.int64(jobs[PROCS, k])
        if available >= head_procs:
            shadow = fwork[EST_END, k]
            if classic:
                idx += 1
                while idx < size and fwork[EST_END, iwork[RUNNING, idx]] == shadow:
                    available += np.int64(jobs[PROCS, iwork[RUNNING, idx]])
                    idx += 1
            return shadow, available - head_procs
    # unreachable when head_procs <= machine size (validated by the caller)
    return np.inf, np.int64(0)


@jit(inline=True)
def _could_start(now, j, head, shadow, extra, free, jobs, fwork):
    """True when waiting job ``j`` is a backfill candidate that could start in this step: not
    the head, ``q <= free`` and either ``now + est <= shadow`` or ``q <= extra`` (free and extra
    processors only decrease during the step, so a job failing this is refused by the walk)."""
    q = jobs[PROCS, j]
    return j != head and q <= free and (now + fwork[EST_CUR, j] <= shadow or q <= extra)


@jit(inline=True)
def _dynamic_keys(now, base_row, div_row, fits_only, head, shadow, extra, jobs, keys, istate,
                  iwork, fwork):  # fmt: skip
    """Collect waiting jobs in job order into CAND with their keys at ``now`` in KEY.

    ``fits_only``: only the backfill candidates that could start (``head`` excluded, ``q <=
    free`` and either ``now + est <= shadow`` or ``q <= extra``); else every waiting job
    (primary order; ``shadow`` and ``extra`` unused). Returns how many were collected.
    """
    free = istate[FREE]
    count = 0
    for i in range(istate[QLEN]):
        j = iwork[QUEUE, i]
        if iwork[STATUS, j] != WAITING:
            continue
        if fits_only and not _could_start(now, j, head, shadow, extra, free, jobs, fwork):
            continue
        iwork[CAND, count] = j
        fwork[KEY, count] = keys[base_row, j] + (now - jobs[SUBMIT, j]) / keys[div_row, j]
        count += 1
    return count


@jit(inline=True)
def _startable_keyed(now, head, shadow, extra, keyed, jobs, istate, iwork, fwork):
    """Keep, at the front of CAND and KEY and in job order, the entries of CAND[:keyed] (keyed
    at ``now`` by the primary step with the backfill key) that are backfill candidates that
    could start (as :func:`_dynamic_keys` with ``fits_only``); return how many."""
    free = istate[FREE]
    count = 0
    for i in range(keyed):
        j = iwork[CAND, i]
        if j < 0 or iwork[STATUS, j] != WAITING:
            continue
        if not _could_start(now, j, head, shadow, extra, free, jobs, fwork):
            continue
        iwork[CAND, count] = j
        fwork[KEY, count] = fwork[KEY, i]
        count += 1
    return count


@jit(inline=True)
def _key_before(iwork, fwork, a, b):
    """True when entry ``a`` of CAND/KEY sorts before entry ``b``: by KEY (NaN after every
    number, as numpy sorts it), then by job (CAND holds jobs in job order, so this is the
    stable order; entries set to -1 sort first among equal keys and are skipped by readers)."""
    ka = fwork[KEY, a]
    kb = fwork[KEY, b]
    if ka < kb:
        return True
    if ka > kb:
        return False
    a_nan = np.isnan(ka)
    if a_nan != np.isnan(kb):
        return not a_nan
    return iwork[CAND, a] < iwork[CAND, b]


@jit(inline=True)
def _sift_down(iwork, fwork, root, size):
    while True:
        child = 2 * root + 1
        if child >= size:
            return
        if child + 1 < size and _key_before(iwork, fwork, child, child + 1):
            child += 1
        if not _key_before(iwork, fwork, root, child):
            return
        iwork[CAND, root], iwork[CAND, child] = iwork[CAND, child], iwork[CAND, root]
        fwork[KEY, root], fwork[KEY, child] = fwork[KEY, child], fwork[KEY, root]
        root = child


@jit(refcounts=False)
def _ordered_candidates(count, iwork, fwork):
    """Sort CAND[:count] in place by KEY, ties in the order collected (job order: submit,
    number), as a stable sort would: a heapsort on (key, job), which needs no buffer (the
    pass runs without numba's runtime, so it allocates nothing). KEY moves along."""
    for root in range(count // 2 - 1, -1, -1):
        _sift_down(iwork, fwork, root, count)
    for end in range(count - 1, 0, -1):
        iwork[CAND, 0], iwork[CAND, end] = iwork[CAND, end], iwork[CAND, 0]
        fwork[KEY, 0], fwork[KEY, end] = fwork[KEY, end], fwork[KEY, 0]
        _sift_down(iwork, fwork, 0, end)


@jit(inline=True)
def _sort_candidates(count, iwork, fwork):
    """Sort CAND[:count] in place, stably by KEY (most candidates are refused, so one sort beats
    repeated minimum scans): by insertion when they are few, else a heapsort on (key, job)
    (:func:`_ordered_candidates`). KEY moves along."""
    if count > _INSERTION_SORT_MAX:
        _ordered_candidates(count, iwork, fwork)
        return
    for i in range(1, count):
        j = iwork[CAND, i]
        key = fwork[KEY, i]
        k = i - 1
        # strict: equal keys keep their order; NaN after everything else, as numpy sorts it
        while k >= 0 and (fwork[KEY, k] > key or (np.isnan(fwork[KEY, k]) and not np.isnan(key))):
            iwork[CAND, k + 1] = iwork[CAND, k]
            fwork[KEY, k + 1] = fwork[KEY, k]
            k -= 1
        iwork[CAND, k + 1] = j
        fwork[KEY, k + 1] = key


@jit(inline=True)
def _start_from_head(now, threshold_s, p_static, p_row, jobs, keys, istate, iwork, fwork):
    """EASY steps 1-2: start jobs in primary order while they fit.

    Returns the blocked job (-1: none) and how many waiting jobs a time-dependent primary order
    keyed into CAND and KEY at ``now`` (in job order; picked entries set to -1), or -1 when it
    keyed none. ``p_row``: the list holding the static primary order (PQ, or BQ when the
    backfill order is the same); when it is BQ with its index (BQ_PROCS), a started job's entry
    there is set to ``_GONE`` so that the index skips it.
    """
    qlen = istate[QLEN]
    # overdue jobs (waiting more than Θ) form a prefix of the live queue, which is in job order
    for i in range(qlen if threshold_s < np.inf else 0):
        j = iwork[QUEUE, i]
        if iwork[STATUS, j] != WAITING:
            continue
        if not now - jobs[SUBMIT, j] > threshold_s:
            break
        if jobs[PROCS, j] > istate[FREE]:
            return j, -1
        _start(j, now, STARTED_HEAD, jobs, istate, iwork, fwork)
    if p_static:
        for i in range(istate[P_HEAD], qlen):
            j = iwork[p_row, i]
            if iwork[STATUS, j] != WAITING:
                continue
            if jobs[PROCS, j] > istate[FREE]:
                istate[P_HEAD] = i
                return j, -1
            _start(j, now, STARTED_HEAD, jobs, istate, iwork, fwork)
            if p_row == BQ:
                iwork[BQ_PROCS, i] = _GONE
        istate[P_HEAD] = qlen
        return -1, -1
    count = _dynamic_keys(now, P_BASE, P_DIV, False, -1, np.inf, np.int64(0), jobs, keys, istate,
                          iwork, fwork)  # fmt: skip
    # usually at most a few jobs start per pass: scan for the minimum (strict '<' in job order
    # breaks ties by submit time, number) a few times, and sort the rest only if needed
    for _ in range(_MAX_SCAN_PICKS):
        best = -1
        best_key = np.inf
        for i in range(count):
            if iwork[CAND, i] >= 0 and (best < 0 or fwork[KEY, i] < best_key):
                best = i
                best_key = fwork[KEY, i]
        if best < 0:
            return -1, count
        j = iwork[CAND, best]
        iwork[CAND, best] = -1
        if jobs[PROCS, j] > istate[FREE]:
            return j, count
        _start(j, now, STARTED_HEAD, jobs, istate, iwork, fwork)
    _ordered_candidates(count, iwork, fwork)
    for i in range(count):
        j = iwork[CAND, i]
        if j < 0 or iwork[STATUS, j] != WAITING:
            continue
        if jobs[PROCS, j] > istate[FREE]:
            return j, count
        _start(j, now, STARTED_HEAD, jobs, istate, iwork, fwork)
    return -1, count


@jit(refcounts=False)
def _backfill_overdue(now, threshold_s, head, shadow, extra, jobs, istate, iwork, fwork):
    """Step 4's first part under ``threshold_backfill``: try the overdue candidates (waiting
    more than Θ) in job order; return the extra processors left.

    Overdue jobs form a prefix of the live queue (QUEUE is in job order), so the walk stops at
    the first job that is not. The usual backfill loop then walks every candidate in P_B order,
    these included: a job refused here is refused there too (free processors and extra
    processors only decrease during the step), and a started one is skipped, so trying them
    again changes nothing and the loop needs no overdue test.
    """
    for i in range(istate[QLEN]):
        j = iwork[QUEUE, i]
        if iwork[STATUS, j] != WAITING or j == head:
            continue
        if not now - jobs[SUBMIT, j] > threshold_s:
            break
        free = istate[FREE]
        if free == 0:
            break
        q = np.int64(jobs[PROCS, j])
        if q > free:
            continue
        if now + fwork[EST_CUR, j] <= shadow:
            _start(j, now, STARTED_BACKFILL, jobs, istate, iwork, fwork)
        elif q <= extra:
            extra -= q
            _start(j, now, STARTED_BACKFILL, jobs, istate, iwork, fwork)
    return extra


@jit(inline=True)
def _fits_somewhere(indexed, jobs, istate, iwork):
    """True when some waiting job fits in the free processors (else a pass starts nothing)."""
    free = istate[FREE]
    qlen = istate[QLEN]
    if indexed:
        for b in range((qlen + _BLOCK - 1) // _BLOCK):
            if iwork[BQ_MIN, b] > free:
                continue
            for i in range(b * _BLOCK, min(qlen, (b + 1) * _BLOCK)):
                if iwork[BQ_PROCS, i] <= free and iwork[STATUS, iwork[BQ, i]] == WAITING:
                    return True
        return False
    for i in range(qlen):
        j = iwork[QUEUE, i]
        if iwork[STATUS, j] == WAITING and jobs[PROCS, j] <= free:
            return True
    return False


@jit(inline=True)
def _backfill_indexed(now, head, shadow, extra, b_mode, jobs, istate, iwork, fwork):
    """Step 4 over the static list BQ with its block index (``b_mode`` ``B_INDEXED*``)."""
    by_estimate = b_mode == B_INDEXED_BY_ESTIMATE
    by_procs = b_mode == B_INDEXED_BY_PROCS
    qlen = istate[QLEN]
    limit = istate[FREE]  # no candidate needing more than this many processors can start
    i = 0
    while i < qlen:
        if i % _BLOCK == 0 and iwork[BQ_MIN, i // _BLOCK] > limit:
            i += _BLOCK
            continue
        q = iwork[BQ_PROCS, i]
        i += 1
        if q > limit:
            if by_procs and q != _GONE:
                return  # every later candidate needs at least q processors
            continue
        j = iwork[BQ, i - 1]
        if iwork[STATUS, j] != WAITING or j == head:
            continue
        if now + fwork[EST_CUR, j] <= shadow:
            _start(j, now, STARTED_BACKFILL, jobs, istate, iwork, fwork)
            iwork[BQ_PROCS, i - 1] = _GONE
        elif q <= extra:
            extra -= q
            _start(j, now, STARTED_BACKFILL, jobs, istate, iwork, fwork)
            iwork[BQ_PROCS, i - 1] = _GONE
        elif not by_estimate:
            continue
        limit = istate[FREE]
        if by_estimate and now + fwork[EST_CUR, j] > shadow:
            # every later candidate ends after the shadow time too: only extra processors
            if extra == 0:
                return
            limit = min(limit, extra)
        if limit == 0:
            return


@jit(refcounts=False)
def _schedule(now, p_static, p_row, b_static, b_mode, threshold_s, threshold_backfill, backfill,
              classic, outlive, jobs, keys, istate, iwork, fwork):  # fmt: skip
    """One scheduling pass at ``now`` (docs/simulator.md, steps 1-5); ``p_row``: PQ, or BQ when
    it holds the primary order too; ``b_mode``: one of the ``B_*`` codes (module docstring;
    ``B_PLAIN`` unless ``b_static``)."""
    if istate[QLEN] == istate[DEAD]:
        return
    indexed = b_static and b_mode != B_PLAIN
    # nothing can start when no waiting job fits: only revise the outlived estimates (step 3
    # does it whenever a job waits after step 2; outlived jobs lead the running list)
    if istate[FREE] == 0 or not _fits_somewhere(indexed, jobs, istate, iwork):
        if istate[RLEN] > 0 and fwork[EST_END, iwork[RUNNING, 0]] <= now:
            _revise_outlived(now, outlive, jobs, istate, iwork, fwork)
        return
    head, keyed = _start_from_head(now, threshold_s, p_static, p_row, jobs, keys, istate, iwork,
                                   fwork)  # fmt: skip
    if head < 0:
        return
    # step 3: the reservation, after the revision of outlived estimates
    if istate[RLEN] > 0 and fwork[EST_END, iwork[RUNNING, 0]] <= now:
        _revise_outlived(now, outlive, jobs, istate, iwork, fwork)
    # step 5: without backfilling the queue simply blocks at the head
    if not backfill or istate[FREE] == 0:
        return
    shadow, extra = _reservation(np.int64(jobs[PROCS, head]), classic, jobs, istate, iwork, fwork)
    if np.isnan(fwork[RESERVED, head]):
        fwork[RESERVED, head] = shadow
    # step 4 with the thresholded order: the overdue candidates first, in job order
    if threshold_backfill and threshold_s < np.inf:
        extra = _backfill_overdue(now, threshold_s, head, shadow, extra, jobs, istate, iwork,
                                  fwork)  # fmt: skip
    if indexed:
        _backfill_indexed(now, head, shadow, extra, b_mode, jobs, istate, iwork, fwork)
        return
    # step 4: backfilling; the tests are inline, this loop is the hot spot of a simulation
    if b_static:
        count = istate[QLEN]
        row = BQ
    else:
        if p_row == BQ and keyed >= 0:  # the same key: reuse the primary's keys of this pass
            count = _startable_keyed(now, head, shadow, extra, keyed, jobs, istate, iwork, fwork)
        else:
            count = _dynamic_keys(now, B_BASE, B_DIV, True, head, shadow, extra, jobs, keys,
                                  istate, iwork, fwork)  # fmt: skip
        _sort_candidates(count, iwork, fwork)
        row = CAND
    for i in range(count):
        j = iwork[row, i]
        free = istate[FREE]
        if free == 0:
            return
        q = np.int64(jobs[PROCS, j])
        if iwork[STATUS, j] != WAITING or j == head or q > free:
            continue
        if now + fwork[EST_CUR, j] <= shadow:
            _start(j, now, STARTED_BACKFILL, jobs, istate, iwork, fwork)
        elif q <= extra:
            extra -= q
            _start(j, now, STARTED_BACKFILL, jobs, istate, iwork, fwork)


# -- queue lists ---------------------------------------------------------------------------------


@jit
def _compact(iwork, istate, p_static, b_static):
    """Drop started jobs from QUEUE (and PQ, BQ when maintained), keeping each list's order."""
    qlen = istate[QLEN]
    for row in (QUEUE, PQ, BQ):
        if (row == PQ and not p_static) or (row == BQ and not b_static):
            continue
        kept = 0
        for i in range(qlen):
            j = iwork[row, i]
            if iwork[STATUS, j] == WAITING:
                iwork[row, kept] = j
                kept += 1
    istate[QLEN] -= istate[DEAD]
    istate[DEAD] = 0
    istate[P_HEAD] = 0


@jit(inline=True)
def _sorted_insert(iwork, row, size, j, keys, key_row):
    """Insert job ``j`` into list ``row[:size]`` sorted by ``keys[key_row]``, after equal keys
    (``j`` is the newest job, so ties stay in job order); return its position."""
    k = keys[key_row, j]
    if size == 0 or keys[key_row, iwork[row, size - 1]] <= k:
        iwork[row, size] = j  # the usual case of FCFS-like keys: the end
        return size
    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[key_row, iwork[row, mid]] <= k:
            lo = mid + 1
        else:
            hi = mid
    shift_right(iwork, row, lo, size)
    iwork[row, lo] = j
    return lo


@jit
def _rebuild_sorted(iwork, istate, row, keys, key_row):
    """Fill list ``row`` with the queued jobs stably sorted by ``keys[key_row]``."""
    qlen = istate[QLEN]
    istate[P_HEAD] = 0
    queue = iwork[QUEUE, :qlen].copy()
    order = np.argsort(keys[key_row][queue], kind="mergesort")
    for i in range(qlen):
        iwork[row, i] = queue[order[i]]


@jit(inline=True)
def _index_insert(jobs, iwork, size, j, keys):
    """Insert job ``j`` into BQ (``size`` entries) and keep BQ_PROCS and BQ_MIN beside it;
    return its position."""
    pos = _sorted_insert(iwork, BQ, size, j, keys, B_BASE)
    shift_right(iwork, BQ_PROCS, pos, size)
    q = np.int64(jobs[PROCS, j])
    iwork[BQ_PROCS, pos] = q
    # BQ_MIN stays a lower bound (exact again at the next compaction): each later block gains
    # the entry shifted in at its front, and loses one at its end that may only raise its min
    first = pos // _BLOCK
    if pos % _BLOCK == 0 and pos == size:
        iwork[BQ_MIN, first] = q  # a new block
    else:
        iwork[BQ_MIN, first] = min(iwork[BQ_MIN, first], q)
    for b in range(first + 1, size // _BLOCK + 1):
        if b * _BLOCK == size:
            iwork[BQ_MIN, b] = iwork[BQ_PROCS, size]  # a new block
        else:
            iwork[BQ_MIN, b] = min(iwork[BQ_MIN, b], iwork[BQ_PROCS, b * _BLOCK])
    return pos


@jit
def _index_rebuild(jobs, iwork, istate):
    """BQ_PROCS and BQ_MIN of the whole of BQ (after a compaction or a rebuild)."""
    qlen = istate[QLEN]
    for i in range(qlen):
        iwork[BQ_PROCS, i] = np.int64(jobs[PROCS, iwork[BQ, i]])
    for b in range((qlen + _BLOCK - 1) // _BLOCK):
        iwork[BQ_MIN, b] = iwork[BQ_PROCS, b * _BLOCK : min(qlen, (b + 1) * _BLOCK)].min()


# -- pausing before a pass a threshold would change ----------------------------------------------


@jit
def _float_bits(value):
    """The bits of float64 ``value`` as an int64 (stored in ``istate``)."""
    return np.array([value], dtype=np.float64).view(np.int64)[0]


@jit
def _set_pending(now, istate):
    """Mark the pass at ``now`` pending (``advance`` paused before it)."""
    istate[PENDING] = 1
    istate[PENDING_NOW] = _float_bits(now)


@jit
def _bits_float(bits):
    """The float64 whose bits :func:`_float_bits` gave."""
    return np.array([bits], dtype=np.int64).view(np.float64)[0]


@jit(refcounts=False)
def _same_pass_under(now, theta, p_static, p_row, b_static, b_mode, jobs, keys, istate, iwork,
                     fwork):  # fmt: skip
    """True when the pass at ``now`` under Θ = ``theta`` makes exactly the decisions of the pass
    without threshold (the run's own, ``threshold_s = inf``, plain backfill order), on the
    state after the instant's completions and submissions. Reads the state only (CAND and KEY
    are scratch).

    Θ acts on a pass only through step 1 (``threshold_backfill`` off): the overdue jobs O are
    tried first in job order, then the others in the primary order. The plain pass starts the
    jobs before its head h in the primary order (set S) and blocks at h (none: all start).
    Under Θ the same jobs start and the same head blocks, so everything after (reservation,
    backfilling) is equal, exactly when either h is not overdue (or there is none) and O is
    within S (the overdue jobs all fit, then the rest of S in primary order, then h fails as
    before), or h is overdue and S is the set of overdue jobs before h in job order (those
    start, then h fails with the same free processors). A pass that starts nothing because no
    waiting job fits is the same under any Θ.
    """
    if istate[FREE] == 0 or not _fits_somewhere(b_static and b_mode != B_PLAIN, jobs, istate,
                                                 iwork):  # fmt: skip
        return True
    free = istate[FREE]
    qlen = istate[QLEN]
    head = -1
    stop = 0  # position of the head in the walked list
    started = 0  # |S|
    started_overdue = 0  # |S ∩ O|
    if p_static:
        stop = qlen
        for i in range(istate[P_HEAD], qlen):
            j = iwork[p_row, i]
            if iwork[STATUS, j] != WAITING:
                continue
            q = np.int64(jobs[PROCS, j])
            if q > free:
                head = j
                stop = i
                break
            free -= q
            started += 1
            if now - jobs[SUBMIT, j] > theta:
                started_overdue += 1
    else:
        # the primary step's selection: the smallest key first, ties in job order
        count = _dynamic_keys(now, P_BASE, P_DIV, False, -1, np.inf, np.int64(0), jobs, keys,
                              istate, iwork, fwork)  # fmt: skip
        _ordered_candidates(count, iwork, fwork)
        stop = count
        for i in range(count):
            j = iwork[CAND, i]
            q = np.int64(jobs[PROCS, j])
            if q > free:
                head = j
                stop = i
                break
            free -= q
            started += 1
            if now - jobs[SUBMIT, j] > theta:
                started_overdue += 1
    if head < 0:
        return True  # every waiting job starts, overdue or not
    # O: the overdue jobs form a prefix of the waiting jobs in job order (QUEUE)
    overdue = 0
    overdue_before_head = 0
    for i in range(qlen):
        j = iwork[QUEUE, i]
        if iwork[STATUS, j] != WAITING:
            continue
        if not now - jobs[SUBMIT, j] > theta:
            break
        overdue += 1
        if j < head:
            overdue_before_head += 1
    if not now - jobs[SUBMIT, head] > theta:
        return started_overdue == overdue
    if started != overdue_before_head or started_overdue != started:
        return False
    # S must be exactly the overdue jobs before h in job order: each started one precedes h
    first = istate[P_HEAD] if p_static else 0
    for i in range(first, stop):
        j = iwork[p_row, i] if p_static else iwork[CAND, i]
        if iwork[STATUS, j] == WAITING and j > head:
            return False
    return True


# -- the event loop ------------------------------------------------------------------------------


@jit
def advance(jobs, keys, p_static, p_row, b_static, b_mode, threshold_s, threshold_backfill,
            backfill, classic, outlive, t_stop, pause_overdue_s, istate, iwork, fwork):  # fmt: skip
    """Process every event instant ``t < t_stop``; return the number of instants processed.

    At each instant all completions and submissions are applied, then one pass runs.
    ``p_static`` / ``b_static`` say the primary / backfill keys do not depend on time (then
    sorted queue lists are kept instead of sorting at every pass); ``p_row`` is PQ, or BQ when
    the primary and backfill keys are the same static key (then PQ is not kept and the head
    walk reads BQ); ``b_mode`` is one of the
    ``B_*`` codes (module docstring; only read when ``b_static``); ``threshold_s`` is Θ in
    seconds (``inf`` disables it); ``threshold_backfill``, ``backfill`` and ``classic`` are
    booleans (``threshold_backfill``: backfill candidates in the thresholded order, overdue
    jobs first); ``outlive`` is one of the ``OUTLIVE_*`` codes.

    ``pause_overdue_s`` (s, ``inf``: never) also stops the loop, after the instant's
    completions and submissions and before its pass, at the first instant ``now`` at which a
    run under Θ = ``pause_overdue_s`` would pass differently from this one: a waiting job has
    waited more than ``pause_overdue_s`` (``now - submit > pause_overdue_s``) and
    :func:`_same_pass_under` does not show the pass unchanged (with ``threshold_backfill`` or a
    finite ``threshold_s`` the first such instant, untested). Up to there the two runs are the
    same (:mod:`scheduler.sim.sweep`). The pass left pending (``istate[PENDING]``) runs first
    at the next call, which first checks its own ``pause_overdue_s`` at that instant.
    The oldest waiting job is the first waiting one in job order, found by a cursor that only
    moves forward (O(n) per call in all).
    """
    # the policies may have changed since the last call: rebuild the sorted lists
    _compact(iwork, istate, False, False)
    own_pq = p_static and p_row == PQ
    if own_pq:
        _rebuild_sorted(iwork, istate, PQ, keys, P_BASE)
    indexed = b_static and b_mode != B_PLAIN
    if b_static:
        _rebuild_sorted(iwork, istate, BQ, keys, B_BASE)
        if indexed:
            _index_rebuild(jobs, iwork, istate)
    instants = 0
    oldest = 0
    exact_pause = threshold_s == np.inf and not threshold_backfill
    n = jobs.shape[1]
    # a paused instant first: its completions and submissions are applied, its pass is not
    pending = istate[PENDING] == 1
    now = _bits_float(istate[PENDING_NOW]) if pending else -np.inf
    if pending and now >= t_stop:
        return instants
    istate[PENDING] = 0
    while True:
        if not pending:
            t_sub = jobs[SUBMIT, istate[NEXT_SUB]] if istate[NEXT_SUB] < n else np.inf
            t_end = fwork[END, iwork[HEAP, 0]] if istate[HLEN] > 0 else np.inf
            now = min(t_sub, t_end)
            if now == np.inf or now >= t_stop:
                return instants
            while istate[HLEN] > 0 and fwork[END, iwork[HEAP, 0]] <= now:
                j, size = _heap_pop(iwork, fwork, istate[HLEN])
                istate[HLEN] = size
                istate[FREE] += np.int64(jobs[PROCS, j])
                istate[RLEN] = _running_remove(jobs, iwork, fwork, istate[RLEN], j)
            while istate[NEXT_SUB] < n and jobs[SUBMIT, istate[NEXT_SUB]] <= now:
                j = istate[NEXT_SUB]
                size = istate[QLEN]
                iwork[QUEUE, size] = j
                if own_pq:
                    pos = _sorted_insert(iwork, PQ, size, j, keys, P_BASE)
                    istate[P_HEAD] = min(istate[P_HEAD], pos)
                if indexed:
                    pos = _index_insert(jobs, iwork, size, j, keys)
                elif b_static:
                    pos = _sorted_insert(iwork, BQ, size, j, keys, B_BASE)
                if b_static and p_row == BQ:
                    istate[P_HEAD] = min(istate[P_HEAD], pos)
                istate[QLEN] = size + 1
                istate[NEXT_SUB] = j + 1
        pending = False
        if pause_overdue_s < np.inf:
            # jobs submitted at `now` have waited 0 s and are never overdue
            while oldest < istate[NEXT_SUB] and iwork[STATUS, oldest] != WAITING:
                oldest += 1
            if (oldest < istate[NEXT_SUB] and now - jobs[SUBMIT, oldest] > pause_overdue_s
                    and not (exact_pause and _same_pass_under(
                        now, pause_overdue_s, p_static, p_row, b_static, b_mode, jobs, keys,
                        istate, iwork, fwork))):  # fmt: skip
                _set_pending(now, istate)
                return instants
        _schedule(now, p_static, p_row, b_static, b_mode, threshold_s, threshold_backfill,
                  backfill, classic, outlive, jobs, keys, istate, iwork, fwork)  # fmt: skip
        if istate[DEAD] > _DEAD_SLACK + (istate[QLEN] - istate[DEAD]) // 4:
            _compact(iwork, istate, own_pq, b_static)
            if indexed:
                _index_rebuild(jobs, iwork, istate)
        instants += 1
