"""Compiled scheduling on a cluster of memory classes, with a learned memory estimator (private).

The engine variant (Yom-Tov & Aridor), a sibling of :mod:`scheduler.sim._kernel`.
The semantics are in ``docs/simulator.md`` ("Memory-aware heterogeneous clusters");
:mod:`scheduler.sim.memory` validates inputs, prepares the arrays and is the public API.

Why a kernel of its own rather than the base kernel's state: nodes are not interchangeable (a
job needs ``q`` nodes of at least some memory), a job may run several times (failed runs), and a
decision (the estimator) precedes every start. Nodes of a class are identical, so the machine is
the count of free nodes per class (``free``, classes ascending by memory) and a run records how
many nodes of each class it holds; every check is a loop over the ``K`` classes (``K`` is 2 in
the study), never over nodes.

Arrays (``n`` jobs in (submit time, job number) order; ``K`` classes; ``F = K + 4`` features):

``submit, run, est, req, used``  float64 (n,)  seconds, seconds, seconds, MB, MB.
``procs, group``                 int64 (n,)    nodes; index of the job's (user, request) pair in
                                               ``0..n_groups-1`` (the history estimator).
``class_nodes`` int64 (K,), ``class_mem`` float64 (K,) ascending, distinct.

Runs are numbered in the order they start; the run arrays grow by doubling. The completion heap
holds run numbers keyed by (end, run number): runs ending at one instant leave in start order.
The queue is a FIFO buffer of job numbers with tombstones (-1) for the jobs that backfilling
starts from its middle; it is compacted when the buffer is full.

Random draws in [0, 1) (the perceptron's exploration, the instant of a failure) come from the
kernels' SplitMix64 generator, :func:`scheduler.sim._random.draw_uniform`, whose state ``rng``
(a one-element uint64 array seeded with ``seed``) every helper that draws passes on: one stream
per run, the same on every machine.
"""

from __future__ import annotations

import math

import numpy as np

from scheduler.core.compile import jit
from scheduler.sim._random import draw_uniform

# estimators
EST_NONE, EST_PERCEPTRON, EST_HISTORY = 0, 1, 2
# perceptron feedback: Algorithm 1's two, and implicit with the sign that raises after a failure
FB_IMPLICIT, FB_EXPLICIT, FB_IMPLICIT_RAISE = 0, 1, 2
# perceptron scaling: memory in MB (literal), in units of M, in units of M with standardised inputs
SC_LITERAL, SC_NORMALISED, SC_STANDARDISED = 0, 1, 2

# columns of the run records: float ``rf`` (runs, RF_COLS), int ``ri`` (runs, RI_COLS + K)
RF_START, RF_END, RF_ALLOC, RF_MEMORY, RF_ESTIMATE, RF_Z = range(6)
RF_COLS = 6
RI_JOB, RI_FAILED, RI_FORCED = range(3)
RI_COLS = 3

# -- the completion heap (run numbers keyed by (end, run number)) ---------------------------------


@jit
def _before(a, b, run_end):
    return run_end[a] < run_end[b] or (run_end[a] == run_end[b] and a < b)


@jit
def _heap_push(heap, size, r, run_end):
    i = size
    heap[i] = r
    while i > 0:
        parent = (i - 1) >> 1
        if not _before(heap[i], heap[parent], run_end):
            break
        heap[i], heap[parent] = heap[parent], heap[i]
        i = parent
    return size + 1


@jit
def _heap_pop(heap, size, run_end):
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(heap[child + 1], heap[child], run_end):
            child += 1
        if not _before(heap[child], heap[i], run_end):
            break
        heap[i], heap[child] = heap[child], heap[i]
        i = child
    return top, size


# -- the machine ----------------------------------------------------------------------------------


@jit
def _capacity(q, free, class_mem):
    """E: the largest memory m such that at least ``q`` free nodes have memory >= m (-inf if
    fewer than ``q`` nodes are free)."""
    total = 0
    for c in range(free.shape[0] - 1, -1, -1):
        total += free[c]
        if total >= q:
            return class_mem[c]
    return -np.inf


@jit
def _fits(q, alloc, free, class_mem):
    """Whether ``q`` free nodes have memory >= ``alloc``."""
    total = 0
    for c in range(free.shape[0]):
        if class_mem[c] >= alloc:
            total += free[c]
    return total >= q


@jit
def _best_fit(q, alloc, free, class_mem, take):
    """Fill ``take`` (K,) with the nodes of each class a best-fit allocation of ``q`` nodes of
    memory >= ``alloc`` takes (smallest eligible class first). The caller checked it fits."""
    need = q
    for c in range(free.shape[0]):
        take[c] = 0
        if need > 0 and class_mem[c] >= alloc:
            got = min(need, free[c])
            take[c] = got
            need -= got


# -- the estimators -------------------------------------------------------------------------------


@jit
def _features(j, queue_len, procs, req, free, class_nodes, x):
    """The perceptron's features of job ``j`` now (docs/simulator.md): free fraction per class,
    the fraction of the free nodes it needs (capped at 1), log(1 + request MB),
    log(1 + waiting jobs), bias 1."""
    k = free.shape[0]
    total = 0
    for c in range(k):
        x[c] = free[c] / class_nodes[c]
        total += free[c]
    x[k] = min(procs[j] / total, 1.0) if total > 0 else 1.0
    x[k + 1] = math.log1p(req[j])
    x[k + 2] = math.log1p(queue_len)
    x[k + 3] = 1.0


@jit
def _standardise(x, moments):
    """Duda, Hart & Stork's input scaling (§6.8.3), online: add the raw features ``x`` to the
    running moments of every decision so far (Welford; ``moments`` = [count, means (F),
    M2 (F)]), then replace each feature but the bias by ``(x − mean) / sd`` with the population
    sd of the decisions so far including this one (0 where sd is 0, e.g. the first decision)."""
    nf = x.shape[0]
    moments[0] += 1.0
    count = moments[0]
    for i in range(nf - 1):
        delta = x[i] - moments[1 + i]
        moments[1 + i] += delta / count
        moments[1 + nf + i] += delta * (x[i] - moments[1 + i])
        var = moments[1 + nf + i] / count
        x[i] = (x[i] - moments[1 + i]) / math.sqrt(var) if var > 0.0 else 0.0


@jit
def _dot(w, x):
    s = 0.0
    for i in range(w.shape[0]):
        s += w[i] * x[i]
    return s


@jit
def _history_alloc(j, req, failures, seen, group):
    """The history estimator's allocation (MB) for job ``j``: the largest memory used by an
    earlier successful job of its (user, request) pair, capped at its request ``req[j]``; the
    request when there is none or after a failure (so also once ``max_failures`` forces it)."""
    most = seen[group[j]]
    if failures[j] > 0 or not most > 0.0:
        return req[j]
    return min(most, req[j])


@jit
def _alloc_class(alloc, class_mem):
    """The smallest class whose nodes hold ``alloc`` MB; the largest when none does (such a job
    never fits: in that bin it is only a candidate that :func:`_fits` refuses)."""
    c = 0
    while c < class_mem.shape[0] - 1 and class_mem[c] < alloc:
        c += 1
    return c


@jit
def _decide(j, queue_len, estimator, procs, req, free, class_nodes, class_mem, failures,
            max_failures, group, seen, w, p, a, b, tau, rng, x, moments):  # fmt: skip
    """One decision for job ``j``: returns ``(A, E', z, forced)``; ``x`` receives the features
    (perceptron; standardised when ``moments`` has a slot per feature, :func:`_standardise`).
    E' is NaN and z is 0 when the perceptron was not asked."""
    r = req[j]
    if estimator == EST_NONE:
        return r, np.nan, 0.0, False
    if failures[j] >= max_failures:
        return r, np.nan, 0.0, True
    if estimator == EST_HISTORY:
        return _history_alloc(j, req, failures, seen, group), np.nan, 0.0, False
    big = class_mem[class_mem.shape[0] - 1]
    _features(j, queue_len, procs, req, free, class_nodes, x)
    if moments.shape[0] > 1:
        _standardise(x, moments)
    estimate = a * big * math.tanh(b * _dot(w, x))
    if estimate <= _capacity(procs[j], free, class_mem):
        return max(estimate, 0.0), estimate, 1.0, False
    keep = math.exp(p / tau) / (math.exp(p / tau) + math.exp((1.0 - p) / tau))
    if draw_uniform(rng) < 1.0 - keep:
        return 0.0, estimate, -1.0, False
    return r, estimate, -1.0, False


@jit
def _learn(failed, feedback, memory, used_j, estimate, z, w, x, eta, a, big, b, unit):
    """Algorithm 1's update after a run ended: w += η (t − z) f'(w·x) x, f' at the current w.
    ``unit`` is 1 (memory in MB, f' = a M b (1 − tanh²), the literal transcription) or M
    (``gradient="normalised"``: memory in units of M, f' = a b (1 − tanh²)).
    ``FB_IMPLICIT_RAISE`` uses (z − t) instead of (t − z)."""
    if feedback == FB_EXPLICIT:
        t = (memory if failed else used_j) / unit
        zz = estimate / unit
    else:
        t = -1.0 if failed else 1.0
        zz = z
        if feedback == FB_IMPLICIT_RAISE:
            t, zz = zz, t
    th = math.tanh(b * _dot(w, x))
    step = eta * (t - zz) * a * (big / unit) * b * (1.0 - th * th)
    for i in range(w.shape[0]):
        w[i] += step * x[i]


# -- growth of the run arrays ---------------------------------------------------------------------


@jit
def _grow1(values, size):
    out = np.empty(size, dtype=values.dtype)
    out[: values.shape[0]] = values
    return out


@jit
def _grow2(values, size):
    out = np.empty((size, values.shape[1]), dtype=values.dtype)
    out[: values.shape[0]] = values
    return out


@jit
def simulate(submit, procs, run, est, req, used, group, n_groups, class_nodes, class_mem, easy,
             estimator, feedback, limit_alloc, eta, tau, a, b, max_failures, seed,
             scaling):  # fmt: skip
    """Run the whole trace; returns ``(start, failures, forced, rf, ri, w, p)``.

    ``start`` (n,) is each job's successful start; ``failures``/``forced`` (n,) count its failed
    and forced runs; ``rf`` (runs, RF_COLS) and ``ri`` (runs, RI_COLS + K) hold one record per
    run in start order (columns ``RF_*``, ``RI_*``, then the nodes taken per class); ``w`` the
    final weights (K + 4), ``p`` the final success fraction.
    """
    n = submit.shape[0]
    k = class_nodes.shape[0]
    nf = k + 4
    big = class_mem[k - 1]
    unit = 1.0 if scaling == SC_LITERAL else big
    # the running moments of the raw features (SC_STANDARDISED), else one unused slot
    moments = np.zeros(1 + 2 * nf if scaling == SC_STANDARDISED else 1)
    free = class_nodes.copy()
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed)
    w = np.zeros(nf)
    p = 0.5
    finished_runs = 0
    successes = 0
    seen = np.zeros(n_groups)  # history: the largest used memory of a (user, request) pair

    start = np.full(n, np.nan)
    failures = np.zeros(n, dtype=np.int64)
    forced_runs = np.zeros(n, dtype=np.int64)

    cap = n + n // 4 + 16
    rf = np.empty((cap, RF_COLS))
    ri = np.empty((cap, RI_COLS + k), dtype=np.int64)
    rx = np.empty((cap, nf))
    run_end = np.empty(cap)  # the heap's key, kept apart for locality
    run_e = np.empty(cap)  # EASY's expected end of each run: start + est, revised when outlived
    min_e = np.inf  # a lower bound of run_e over the running runs
    runs = 0

    heap = np.empty(n + 1, dtype=np.int64)  # at most one run per job at a time
    heap_size = 0
    running = np.empty(n + 1, dtype=np.int64)  # running runs, unordered (EASY's walk)
    where = np.empty(cap, dtype=np.int64)  # position of a run in ``running``
    n_running = 0

    queue = np.empty(2 * n + 16, dtype=np.int64)  # compacted when full: at most n are live
    qpos = np.empty(n, dtype=np.int64)  # a queued job's position in ``queue``
    half = 1
    while half < queue.shape[0]:
        half *= 2
    # the queue index (see "The queue index" below): per bin of ``cls``, a tree of the smallest
    # width (nodes) and one of the smallest run-time estimate (s) over the buffer's positions
    seg = np.full((k, 2 * half), _NO_JOB, dtype=np.int64)
    eseg = np.full((k, 2 * half), np.inf)
    qhead = 0
    qtail = 0
    qlive = 0
    # queued jobs by node count, and a lower bound of the smallest (exact after a lazy scan up)
    # in bins: ``cls[j]``, the smallest class that holds the job's allocation when it is known
    # before the decision (``exact``): its request without estimation, the history estimator's
    # allocation (rebinned when its pair's history grows, the queued jobs of each pair linked
    # through ``g_first``/``g_next``/``g_prev``); bin 0 (every class) for the perceptron, whose
    # allocation is known only after its decision. A job of bin ``c`` can only use the classes
    # from ``c`` up; with ``exact`` it fits exactly when it is no wider than their free nodes.
    exact = estimator != EST_PERCEPTRON
    # the perceptron without standardised inputs: a decision's only side effect is its draw, and
    # bounds of the estimate over the queue (``_draw_regime``) can show that no candidate draws
    # (``pure``: its skip is then the one of ``exact``, by a bound of its allocation) or that
    # every candidate not forced draws (``drawing``: one that cannot start only draws)
    regimes = estimator == EST_PERCEPTRON and moments.shape[0] == 1
    log_req_lo = math.log1p(req.min()) if regimes else 0.0
    log_req_hi = math.log1p(req.max()) if regimes else 0.0
    pure = False
    drawing = False
    width = class_nodes.sum() + 1
    qhist = np.zeros((k, width), dtype=np.int64)
    qmin = np.full(k, width, dtype=np.int64)
    cls = np.zeros(n, dtype=np.int64)
    if estimator == EST_NONE:
        for i in range(n):
            cls[i] = _alloc_class(req[i], class_mem)
    history = estimator == EST_HISTORY
    g_first = np.full(n_groups if history else 1, -1, dtype=np.int64)
    g_next = np.full(n if history else 1, -1, dtype=np.int64)
    g_prev = np.full(n if history else 1, -1, dtype=np.int64)

    x = np.empty(nf)  # the features of the last decision (recorded by the run it starts)
    xr = np.empty(nf)  # ``_draw_regime``'s own, so that it never overwrites a decision's
    take = np.empty(k, dtype=np.int64)  # a backfill candidate's best fit
    walk_e = np.empty(n + 1)
    walk_id = np.empty(n + 1, dtype=np.int64)

    nxt = 0
    while nxt < n or heap_size > 0:
        now = submit[nxt] if nxt < n else np.inf
        if heap_size > 0 and run_end[heap[0]] < now:
            now = run_end[heap[0]]
        # 1. runs ending now, in start order
        while heap_size > 0 and run_end[heap[0]] == now:
            rr, heap_size = _heap_pop(heap, heap_size, run_end)
            last = running[n_running - 1]
            running[where[rr]] = last
            where[last] = where[rr]
            n_running -= 1
            for c in range(k):
                free[c] += ri[rr, RI_COLS + c]
            j = ri[rr, RI_JOB]
            failed = ri[rr, RI_FAILED] == 1
            if estimator == EST_PERCEPTRON and ri[rr, RI_FORCED] == 0:
                _learn(failed, feedback, rf[rr, RF_MEMORY], used[j], rf[rr, RF_ESTIMATE],
                       rf[rr, RF_Z], w, rx[rr], eta, a, big, b, unit)  # fmt: skip
            finished_runs += 1
            if failed:
                if history:
                    cls[j] = _alloc_class(_history_alloc(j, req, failures, seen, group),
                                          class_mem)  # fmt: skip
                    _link(j, group[j], g_first, g_next, g_prev)
                qhead, qtail = _enqueue(j, queue, qpos, qhead, qtail, qhist, qmin, cls, procs,
                                        est, seg, eseg)  # fmt: skip
                qlive += 1
            else:
                successes += 1
                if history and used[j] > seen[group[j]]:
                    seen[group[j]] = used[j]
                    _rebin(group[j], g_first, g_next, req, failures, seen, group, class_mem,
                           cls, qpos, procs, est, qhist, qmin, seg, eseg)  # fmt: skip
            p = successes / finished_runs
        # 2. submissions now
        while nxt < n and submit[nxt] == now:
            if history:
                cls[nxt] = _alloc_class(_history_alloc(nxt, req, failures, seen, group),
                                        class_mem)  # fmt: skip
                _link(nxt, group[nxt], g_first, g_next, g_prev)
            qhead, qtail = _enqueue(nxt, queue, qpos, qhead, qtail, qhist, qmin, cls, procs,
                                    est, seg, eseg)  # fmt: skip
            qlive += 1
            nxt += 1
        # 3. one pass (at most ``qlive`` runs start: make room for them first)
        if runs + qlive > rf.shape[0]:
            size = 2 * (runs + qlive)
            rf, ri, rx = _grow2(rf, size), _grow2(ri, size), _grow2(rx, size)
            run_end, where = _grow1(run_end, size), _grow1(where, size)
            run_e = _grow1(run_e, size)
        head_alloc = 0.0
        blocked = -1
        while qlive > 0:
            while queue[qhead] < 0:
                qhead += 1
            j = queue[qhead]
            alloc, estimate, z, forced = _decide(
                j, qlive, estimator, procs, req, free, class_nodes, class_mem, failures,
                max_failures, group, seen, w, p, a, b, tau, rng, x, moments)  # fmt: skip
            if not _fits(procs[j], alloc, free, class_mem):
                blocked = j
                head_alloc = alloc
                break
            _dequeue(j, qhead, cls, procs, qhist, seg, eseg)
            if history:
                _unlink(j, group[j], g_first, g_next, g_prev)
            qhead += 1
            qlive -= 1
            heap_size, n_running = _launch(
                j, runs, now, alloc, estimate, z, forced, limit_alloc, procs, run, used, free,
                class_mem, rng, failures, forced_runs, start, x, rf, ri, rx, run_end, heap,
                heap_size, running, n_running, where)  # fmt: skip
            run_e[runs] = now + est[j]
            min_e = min(min_e, run_e[runs])
            runs += 1
        if not easy or blocked < 0:
            continue
        # a job still waits: a run past its expected end is expected to end one second from now,
        # and the revision persists (the base engine's outlive rule with requested times).
        # ``min_e`` is a lower bound of the running runs' expected ends (exact after a walk):
        # while it is in the future no run has outlived its estimate and the walk is skipped
        if min_e <= now:
            min_e = np.inf
            for i in range(n_running):
                rr = running[i]
                if run_e[rr] <= now:
                    run_e[rr] = now + 1.0
                min_e = min(min_e, run_e[rr])
        if qlive < 2:
            continue
        # EASY. Nothing to backfill when every other waiting job needs more nodes than are free
        # in the classes its bin can use. On a loaded machine that is the common case, and this
        # check keeps such a pass O(K) instead of a walk over a queue of thousands.
        nodes_free = 0
        for c in range(k):
            nodes_free += free[c]
        qh = procs[blocked]
        qhist[cls[blocked], qh] -= 1
        nothing = True
        above = 0  # free nodes of the classes from c up
        for c in range(k - 1, -1, -1):
            above += free[c]
            while qmin[c] < width and qhist[c, qmin[c]] == 0:
                qmin[c] += 1
            if qmin[c] <= above:
                nothing = False
        qhist[cls[blocked], qh] += 1
        qmin[cls[blocked]] = min(qmin[cls[blocked]], qh)
        if nothing:
            continue
        # backfilling in queue order; the head's reservation (with its allocation) is computed
        # when the first candidate fits: before it nothing starts, so the state is the pass's
        have_shadow = False
        shadow = np.inf
        extra = 0
        pure = False  # both known with the reservation (``_draw_regime``)
        drawing = False
        first_eligible = k  # the head's eligible classes (memory >= its allocation) from here up
        pos = qhead
        while nodes_free > 0:
            # the next job, in queue order, no wider than the free nodes of the classes its bin
            # can use (with ``exact``: that fits); once the reservation is known and with
            # ``exact``, also one that ends by the shadow time or leaves the head's reservation
            # alone: exactly the jobs that start
            nearest = -1
            above = 0
            spare = 0  # free nodes of the classes from c up that the head cannot use
            for c in range(k - 1, -1, -1):
                above += free[c]
                if c < first_eligible:
                    spare += free[c]
                if above == 0:
                    continue
                if (exact or pure) and have_shadow:
                    # a job of bin c ending after the shadow time takes, best fit, its nodes
                    # beyond ``spare`` from the head's classes: at most ``extra`` of them (with
                    # ``pure`` every job is in bin 0, whose ``spare`` is the most any job has)
                    narrow = min(above, extra + spare)
                    found = _seg_next_shadow(seg[c], eseg[c], pos, above, narrow, now, shadow)
                else:
                    found = _seg_next(seg[c], pos, above)
                if found >= 0 and (nearest < 0 or found < nearest):
                    nearest = found
            if nearest < 0 or nearest >= qtail:
                break
            pos = nearest
            j = queue[pos]
            pos += 1
            if j == blocked:
                continue
            if (drawing and now + est[j] > shadow and procs[j] > extra + spare
                    and failures[j] < max_failures):  # fmt: skip
                # it draws, and ends after the shadow time needing more of the head's nodes than
                # are extra whatever its allocation: it cannot start, its decision only draws
                draw_uniform(rng)
                continue
            alloc, estimate, z, forced = _decide(
                j, qlive, estimator, procs, req, free, class_nodes, class_mem, failures,
                max_failures, group, seen, w, p, a, b, tau, rng, x, moments)  # fmt: skip
            if not _fits(procs[j], alloc, free, class_mem):
                continue
            if not have_shadow:
                shadow, extra = _reservation(qh, head_alloc, free, class_mem, running, n_running,
                                             run_e, ri, walk_e, walk_id)  # fmt: skip
                have_shadow = True
                first_eligible = _alloc_class(head_alloc, class_mem)
                if class_mem[first_eligible] < head_alloc:
                    first_eligible = k
                if regimes:
                    pure, drawing = _draw_regime(w, xr, qlive, free, class_nodes, class_mem,
                                                 log_req_lo, log_req_hi, a, b)  # fmt: skip
            _best_fit(procs[j], alloc, free, class_mem, take)
            eligible = 0
            for c in range(k):
                if class_mem[c] >= head_alloc:
                    eligible += take[c]
            if now + est[j] > shadow:
                if eligible > extra:
                    continue
                extra -= eligible
            queue[pos - 1] = -1
            _dequeue(j, pos - 1, cls, procs, qhist, seg, eseg)
            if history:
                _unlink(j, group[j], g_first, g_next, g_prev)
            qlive -= 1
            nodes_free -= procs[j]
            heap_size, n_running = _launch(
                j, runs, now, alloc, estimate, z, forced, limit_alloc, procs, run, used, free,
                class_mem, rng, failures, forced_runs, start, x, rf, ri, rx, run_end, heap,
                heap_size, running, n_running, where)  # fmt: skip
            run_e[runs] = now + est[j]
            min_e = min(min_e, run_e[runs])
            runs += 1
            if regimes:  # the free nodes and the queue changed
                pure, drawing = _draw_regime(w, xr, qlive, free, class_nodes, class_mem,
                                             log_req_lo, log_req_hi, a, b)  # fmt: skip
    return start, failures, forced_runs, rf[:runs], ri[:runs], w, p


# Relative margin (of M) by which the bounds of the perceptron's estimates must clear the
# capacities: it covers a non-monotone last bit of ``tanh`` or ``log1p`` many times over.
_REGIME_MARGIN = 1e-9


@jit
def _draw_regime(w, x, queue_len, free, class_nodes, class_mem, log_req_lo, log_req_hi, a, b):
    """Whether, in the current state (free nodes, queue length, weights), the perceptron's
    decision for a backfilling candidate (at most as wide as the free nodes) surely does not
    draw, or surely draws: ``(pure, drawing)``.

    Its estimate E' = a M tanh(b w·x) varies over the candidates only through two features, the
    fraction of the free nodes it needs, in ``[1 / free, 1]``, and log(1 + request MB), within
    ``[log_req_lo, log_req_hi]`` (the whole trace's); w·x is summed as :func:`_decide` sums it,
    and rounding is monotone, so its values at the four corners bound it. It draws when E'
    exceeds E(q), between the memory of the smallest class with a free node (q = all free
    nodes) and of the largest (q = 1). ``x`` (F,) is work space."""
    k = free.shape[0]
    big = class_mem[k - 1]
    total = 0
    lowest = -1.0
    highest = -1.0
    for c in range(k):
        total += free[c]
        if free[c] > 0:
            highest = class_mem[c]
            if lowest < 0.0:
                lowest = class_mem[c]
    if total == 0:
        return False, False
    for c in range(k):
        x[c] = free[c] / class_nodes[c]
    x[k + 2] = math.log1p(queue_len)
    x[k + 3] = 1.0
    s_lo = np.inf
    s_hi = -np.inf
    for need in (min(1.0 / total, 1.0), 1.0):
        for log_req in (log_req_lo, log_req_hi):
            x[k] = need
            x[k + 1] = log_req
            s = _dot(w, x)
            s_lo = min(s_lo, s)
            s_hi = max(s_hi, s)
    margin = _REGIME_MARGIN * big
    pure = a * big * math.tanh(b * s_hi) + margin < lowest
    drawing = a * big * math.tanh(b * s_lo) - margin > highest
    return pure, drawing


@jit
def _reservation(qh, head_alloc, free, class_mem, running, n_running, run_e, ri, walk_e,
                 walk_id):  # fmt: skip
    """The blocked head's reservation: ``(shadow, extra)``, the expected end (s) of the running
    run after which ``qh`` nodes of the classes that hold ``head_alloc`` are free, walking the
    runs by expected end then job number, and the nodes of those classes left over then
    (``inf``, 0 when never)."""
    k = free.shape[0]
    count = 0
    for c in range(k):
        if class_mem[c] >= head_alloc:
            count += free[c]
    for i in range(n_running):
        rr = running[i]
        walk_e[i] = run_e[rr]
        walk_id[i] = ri[rr, RI_JOB]
    order = np.argsort(walk_id[:n_running])  # ties of the walk by job number
    order = order[np.argsort(walk_e[:n_running][order], kind="mergesort")]
    for i in order:
        rr = running[i]
        for c in range(k):
            if class_mem[c] >= head_alloc:
                count += ri[rr, RI_COLS + c]
        if count >= qh:
            return walk_e[i], count - qh
    return np.inf, 0


# -- the queue ------------------------------------------------------------------------------------


@jit
def _enqueue(j, queue, qpos, qhead, qtail, qhist, qmin, cls, procs, est, seg, eseg):
    """Append job ``j`` to the queue's tail (compacting a full buffer first, and rebuilding the
    index then) and count it in bin ``cls[j]``: its width histogram and its trees; returns the
    new (head, tail)."""
    if qtail == queue.shape[0]:
        qhead, qtail = _compact(queue, qpos, qhead, qtail)
        _seg_build(seg, eseg, queue, qtail, procs, est, cls)
    queue[qtail] = j
    qpos[j] = qtail
    _bin_add(j, qtail, cls, procs, est, qhist, qmin, seg, eseg)
    return qhead, qtail + 1


@jit
def _bin_add(j, pos, cls, procs, est, qhist, qmin, seg, eseg):
    """Count queued job ``j`` (at buffer position ``pos``) in bin ``cls[j]``."""
    c = cls[j]
    _seg_set(seg[c], eseg[c], pos, procs[j], est[j])
    qhist[c, procs[j]] += 1
    qmin[c] = min(qmin[c], procs[j])


@jit
def _dequeue(j, pos, cls, procs, qhist, seg, eseg):
    """Remove job ``j`` (leaving the queue from buffer position ``pos``) from its bin."""
    c = cls[j]
    _seg_set(seg[c], eseg[c], pos, _NO_JOB, np.inf)
    qhist[c, procs[j]] -= 1


# The history estimator's queued jobs per (user, request) pair: a doubly linked list per pair
# (``g_first[g]``, then ``g_next``; ``g_prev`` to unlink in O(1)), so that when a pair's history
# grows only its queued jobs are rebinned.


@jit
def _link(j, g, g_first, g_next, g_prev):
    """Add queued job ``j`` to the list of its pair ``g``."""
    g_prev[j] = -1
    g_next[j] = g_first[g]
    if g_first[g] >= 0:
        g_prev[g_first[g]] = j
    g_first[g] = j


@jit
def _unlink(j, g, g_first, g_next, g_prev):
    """Remove job ``j`` (leaving the queue) from the list of its pair ``g``."""
    if g_prev[j] >= 0:
        g_next[g_prev[j]] = g_next[j]
    else:
        g_first[g] = g_next[j]
    if g_next[j] >= 0:
        g_prev[g_next[j]] = g_prev[j]


@jit
def _rebin(g, g_first, g_next, req, failures, seen, group, class_mem, cls, qpos, procs, est,
           qhist, qmin, seg, eseg):  # fmt: skip
    """After the history of pair ``g`` grew: move each of its queued jobs whose allocation now
    needs another class to that class's bin."""
    j = g_first[g]
    while j >= 0:
        c = _alloc_class(_history_alloc(j, req, failures, seen, group), class_mem)
        if c != cls[j]:
            _dequeue(j, qpos[j], cls, procs, qhist, seg, eseg)
            cls[j] = c
            _bin_add(j, qpos[j], cls, procs, est, qhist, qmin, seg, eseg)
        j = g_next[j]


# The queue index: per bin of ``cls`` (the queue histogram's bins), two segment trees over the
# queue buffer's positions, holding below each node the smallest width (nodes; ``_NO_JOB`` for
# none) and the smallest run-time estimate (s; ``inf`` for none) of that bin's live jobs, so that
# the backfilling scan jumps to the next position whose job can start instead of walking every
# position. Leaves are at ``seg[P + pos]``, ``P = seg.shape[0] // 2`` (a power of two).
_NO_JOB = np.iinfo(np.int64).max


@jit
def _seg_set(seg, eseg, pos, width, estimate):
    """Set the width (``_NO_JOB``: no live job) and the estimate (s; ``inf``) at queue position
    ``pos`` of one bin's trees."""
    i = seg.shape[0] // 2 + pos
    seg[i] = width
    eseg[i] = estimate
    i >>= 1
    while i >= 1:
        seg[i] = min(seg[2 * i], seg[2 * i + 1])
        eseg[i] = min(eseg[2 * i], eseg[2 * i + 1])
        i >>= 1


@jit
def _seg_build(seg, eseg, queue, qtail, procs, est, cls):
    """Rebuild the trees (one pair per bin of ``cls``, the rows of ``seg`` and ``eseg``) from
    the buffer's positions ``0 .. qtail-1`` (after a compaction)."""
    half = seg.shape[1] // 2
    seg[:, :] = _NO_JOB
    eseg[:, :] = np.inf
    for pos in range(qtail):
        j = queue[pos]
        if j >= 0:
            seg[cls[j], half + pos] = procs[j]
            eseg[cls[j], half + pos] = est[j]
    for c in range(seg.shape[0]):
        for i in range(half - 1, 0, -1):
            seg[c, i] = min(seg[c, 2 * i], seg[c, 2 * i + 1])
            eseg[c, i] = min(eseg[c, 2 * i], eseg[c, 2 * i + 1])


@jit
def _seg_next(seg, lo, limit):
    """The first queue position ``>= lo`` whose job is at most ``limit`` nodes wide, or -1."""
    half = seg.shape[0] // 2
    if lo >= half or seg[1] > limit:
        return -1
    i = half + lo
    if seg[i] <= limit:
        return lo
    while True:
        while i & 1:  # a right child (or the root): up
            if i == 1:
                return -1
            i >>= 1
        i += 1  # the right sibling
        if seg[i] <= limit:
            break
    while i < half:  # down to the leftmost leaf within the limit
        i = 2 * i
        if seg[i] > limit:
            i += 1
    return i - half


@jit
def _may_start(seg, eseg, i, fit, narrow, now, shadow):
    """Whether node ``i`` of one bin's trees may hold a job at most ``narrow`` nodes wide, or
    at most ``fit`` wide and ending by ``shadow`` (s) when started ``now`` (exact at a leaf)."""
    return seg[i] <= narrow or (seg[i] <= fit and now + eseg[i] <= shadow)


@jit
def _seg_next_shadow(seg, eseg, lo, fit, narrow, now, shadow):
    """The first queue position ``>= lo`` whose job is at most ``narrow`` nodes wide, or at most
    ``fit`` wide and ending by ``shadow`` when started ``now``; -1 if none.

    ``narrow <= fit``. A node's two minima may come from different jobs, so a node that may
    hold one can hold none: the descent then climbs on to the next subtree to the right (a
    depth-first search in position order, pruned by the minima). ``now + estimate`` is the
    scan's own sum, so the test is exactly the scan's."""
    half = seg.shape[0] // 2
    if lo >= half or not _may_start(seg, eseg, 1, fit, narrow, now, shadow):
        return -1
    i = half + lo
    if _may_start(seg, eseg, i, fit, narrow, now, shadow):
        return lo
    while True:
        while i & 1:  # a right child (or the root): up
            if i == 1:
                return -1
            i >>= 1
        i += 1  # the right sibling
        if not _may_start(seg, eseg, i, fit, narrow, now, shadow):
            continue
        while i < half:  # down, leftmost first, while a child may hold one
            if _may_start(seg, eseg, 2 * i, fit, narrow, now, shadow):
                i = 2 * i
            elif _may_start(seg, eseg, 2 * i + 1, fit, narrow, now, shadow):
                i = 2 * i + 1
            else:
                break  # a dead end: climb on from here
        if i >= half:
            return i - half


@jit
def _compact(queue, qpos, qhead, qtail):
    """Move the live entries of the queue buffer to its front (and their positions in ``qpos``);
    returns the new (head, tail)."""
    out = 0
    for i in range(qhead, qtail):
        if queue[i] >= 0:
            queue[out] = queue[i]
            qpos[queue[i]] = out
            out += 1
    return 0, out


@jit
def _launch(j, r, now, alloc, estimate, z, forced, limit_alloc, procs, run, used, free,
            class_mem, rng, failures, forced_runs, start, x, rf, ri, rx, run_end, heap,
            heap_size, running, n_running, where):  # fmt: skip
    """Start run ``r`` of job ``j`` (:func:`_start_run`) and enter it in the completion heap and
    the running set; returns ``(heap_size, n_running)``."""
    _start_run(j, r, now, alloc, estimate, z, forced, limit_alloc, procs, run, used, free,
               class_mem, rng, failures, forced_runs, start, x, rf, ri, rx, run_end)  # fmt: skip
    heap_size = _heap_push(heap, heap_size, r, run_end)
    running[n_running] = r
    where[r] = n_running
    return heap_size, n_running + 1


@jit
def _start_run(j, r, now, alloc, estimate, z, forced, limit_alloc, procs, run, used, free,
               class_mem, rng, failures, forced_runs, start, x, rf, ri, rx, run_end):  # fmt: skip
    """Start job ``j`` now as run ``r`` with allocation ``alloc`` (it fits): take its nodes best
    fit, decide whether the run fails (and when), record the run."""
    k = free.shape[0]
    take = ri[r, RI_COLS:]
    _best_fit(procs[j], alloc, free, class_mem, take)
    memory = np.inf
    for c in range(k):
        free[c] -= take[c]
        if take[c] > 0 and class_mem[c] < memory:
            memory = class_mem[c]
    if limit_alloc:
        memory = alloc
    failed = memory < used[j]
    if failed:
        end = now + draw_uniform(rng) * run[j]
        failures[j] += 1
    else:
        end = now + run[j]
        start[j] = now
    if forced:
        forced_runs[j] += 1
    rf[r, RF_START] = now
    rf[r, RF_END] = end
    rf[r, RF_ALLOC] = alloc
    rf[r, RF_MEMORY] = memory
    rf[r, RF_ESTIMATE] = estimate
    rf[r, RF_Z] = z
    ri[r, RI_JOB] = j
    ri[r, RI_FAILED] = 1 if failed else 0
    ri[r, RI_FORCED] = 1 if forced else 0
    rx[r, :] = x
    run_end[r] = end
