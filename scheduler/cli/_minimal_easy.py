"""A deliberately minimal compiled EASY-FCFS loop: the benchmark's speed-of-light reference.

``scheduler bench`` times it next to the engine (:class:`scheduler.sim.engine.Simulation`) on
whole logs to show what the engine's generality (policies, thresholds, resumable state) costs.
No study uses it. It implements the semantics of ``docs/simulator.md`` restricted to
EASY(FCFS, FCFS) with Θ = ∞, ``reservation="default"`` and ``outlive="requested"``, and gives
the engine's start times exactly.

Units: times in seconds (float64), processors as counts. Inside the kernel jobs are numbered
0..n-1 in (submit time, job number) order, which is also the FCFS order of both queues.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit


@jit
def _before(a, b, eend, jid):
    """True when running job ``a`` comes before ``b``: (estimated end, job number) order."""
    return eend[a] < eend[b] or (eend[a] == eend[b] and jid[a] < jid[b])


@jit
def _start(j, now, procs, run, est, jid, start, end, eend, heap, hlen, running, rlen):
    """Start job ``j`` at ``now``: push it on the heap (``hlen`` entries) and into the sorted
    running list (``rlen`` entries); the caller counts them and the processors."""
    start[j] = now
    end[j] = now + run[j]
    eend[j] = now + est[j]
    i = hlen
    heap[i] = j
    while i > 0 and end[heap[(i - 1) >> 1]] > end[j]:
        heap[i] = heap[(i - 1) >> 1]
        i = (i - 1) >> 1
    heap[i] = j
    lo, hi = 0, rlen
    while lo < hi:
        mid = (lo + hi) >> 1
        if _before(running[mid], j, eend, jid):
            lo = mid + 1
        else:
            hi = mid
    for i in range(rlen, lo, -1):
        running[i] = running[i - 1]
    running[lo] = j


@jit
def _revise(now, est, req, start, eend, jid, running, rlen):
    """Step 3's revision of outlived estimates (outlive="requested"), done whenever a job waits
    after step 2; outlived jobs lead the running list."""
    k_out = 0
    while k_out < rlen and eend[running[k_out]] <= now:
        k_out += 1
    for p in range(k_out - 1, -1, -1):
        k = running[p]
        est[k] = req[k]
        eend[k] = start[k] + est[k]
        if eend[k] <= now:
            eend[k] = now + 1.0
        i = p
        while i + 1 < rlen and _before(running[i + 1], k, eend, jid):
            running[i] = running[i + 1]
            i += 1
        running[i] = k


@jit
def _easy_fcfs(submit, procs, run, est, req, jid, machine_procs):
    """Start times (s) of jobs in (submit, job number) order; ``procs`` is int64."""
    n = submit.shape[0]
    start = np.full(n, np.nan)
    end = np.empty(n)  # actual end (s)
    eend = np.empty(n)  # current estimated end (s)
    queue = np.empty(n, np.int64)  # waiting jobs in job order: queue[qs:qe]
    heap = np.empty(n, np.int64)  # running jobs, min-heap by actual end
    running = np.empty(n, np.int64)  # running jobs sorted by (estimated end, job number)
    qs = qe = hlen = rlen = nxt = 0
    free = machine_procs
    while nxt < n or hlen > 0:
        now = submit[nxt] if nxt < n else np.inf
        if hlen > 0 and end[heap[0]] < now:
            now = end[heap[0]]
        # completions: pop the heap, free processors, drop from the running list
        while hlen > 0 and end[heap[0]] <= now:
            j = heap[0]
            hlen -= 1
            heap[0] = heap[hlen]
            i = 0
            while True:
                c = 2 * i + 1
                if c >= hlen:
                    break
                if c + 1 < hlen and end[heap[c + 1]] < end[heap[c]]:
                    c += 1
                if end[heap[i]] <= end[heap[c]]:
                    break
                heap[i], heap[c] = heap[c], heap[i]
                i = c
            free += procs[j]
            pos = 0
            while running[pos] != j:
                pos += 1
            rlen -= 1
            for i in range(pos, rlen):
                running[i] = running[i + 1]
        # submissions join the tail of the queue
        while nxt < n and submit[nxt] <= now:
            queue[qe] = nxt
            qe += 1
            nxt += 1
        # one pass; when no waiting job fits, nothing starts: only step 3's revision happens
        fits = False
        for i in range(qs, qe):
            if procs[queue[i]] <= free:
                fits = True
                break
        if not fits:
            if qs < qe:
                _revise(now, est, req, start, eend, jid, running, rlen)
            continue
        # step 2: start from the head while it fits
        while qs < qe and procs[queue[qs]] <= free:
            j = queue[qs]
            qs += 1
            _start(j, now, procs, run, est, jid, start, end, eend, heap, hlen, running, rlen)
            hlen += 1
            rlen += 1
            free -= procs[j]
        if qs == qe:
            continue
        _revise(now, est, req, start, eend, jid, running, rlen)
        if free == 0:
            continue
        h = queue[qs]
        # the reservation: walk the running jobs until the head fits
        avail = free
        shadow = np.inf
        for i in range(rlen):
            avail += procs[running[i]]
            if avail >= procs[h]:
                shadow = eend[running[i]]
                break
        extra = avail - procs[h]
        # step 4: backfill the rest of the queue in order, compacting it as jobs start
        w = qs + 1
        for i in range(qs + 1, qe):
            if free == 0:  # nothing more can start: keep the rest of the queue as it is
                for r in range(i, qe):
                    queue[w] = queue[r]
                    w += 1
                break
            j = queue[i]
            q = procs[j]
            fits_shadow = now + est[j] <= shadow
            if q <= free and (fits_shadow or q <= extra):
                if not fits_shadow:
                    extra -= q
                _start(j, now, procs, run, est, jid, start, end, eend, heap, hlen, running, rlen)
                hlen += 1
                rlen += 1
                free -= q
            else:
                queue[w] = j
                w += 1
        qe = w
    return start


def minimal_easy_fcfs(
    submit_s: np.ndarray,
    procs: np.ndarray,
    run_s: np.ndarray,
    estimate_s: np.ndarray,
    job_id: np.ndarray,
    machine_procs: int,
    requested_s: np.ndarray | None = None,
) -> np.ndarray:
    """Start times (s) of EASY(FCFS, FCFS) on ``machine_procs`` processors.

    Parameters
    ----------
    submit_s, procs, run_s, estimate_s, job_id
        Per job (float64, any order): submit time (s), processors (1..machine_procs), actual
        run time (s, > 0), estimate the scheduler sees (s, > 0) and unique job number (the
        tie-break of equal submit times and estimated ends). Nothing is validated.
    machine_procs
        m, processors of the machine.
    requested_s
        Requested time (s) a job's estimate becomes once it outlives it (default:
        ``estimate_s``).

    Returns
    -------
    numpy.ndarray
        Start time (s) of each job, in the given order; the same values as
        ``Simulation(...).run(primary="FCFS", backfill="FCFS")`` then ``start_s``.
    """
    submit = np.asarray(submit_s, dtype=np.float64)
    ids = np.asarray(job_id, dtype=np.float64)
    order = np.lexsort((ids, submit))
    requested = estimate_s if requested_s is None else requested_s
    starts = _easy_fcfs(
        submit[order],
        np.asarray(procs, dtype=np.float64)[order].astype(np.int64),
        np.asarray(run_s, dtype=np.float64)[order],
        np.asarray(estimate_s, dtype=np.float64)[order],  # a copy: the kernel revises it
        np.asarray(requested, dtype=np.float64)[order],
        ids[order],
        np.int64(machine_procs),
    )
    out = np.empty_like(starts)
    out[order] = starts
    return out
