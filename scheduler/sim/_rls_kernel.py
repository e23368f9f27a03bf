"""Compiled RLScheduler-compatible scheduler (private): the semantics of RLScheduler's
environment (Zhang et al., SC'20, ``HPCSimPickJobs.py``), decision by decision.

``scheduler/sim/rlscheduler.py`` prepares the arrays and documents the semantics; this module
only runs them. What is reproduced (docs/rl.md, "The compatible mode"):

- the machine is counted in **nodes** (a job takes ``ceil(procs / procs_per_node)`` nodes);
- a decision picks a waiting job and **commits** to it: the scheduler waits until that job
  fits, and new arrivals do not change the choice;
- without backfilling it waits; with backfilling (RLScheduler's ``backfil``) it computes once
  the time at which the chosen job could start from the running jobs' estimated ends, then, at
  every event until the job fits, starts any waiting job (in submit order) that fits now and
  whose ``now + requested time`` is strictly before that time (no extra-processors rule);
  ``easy_rule`` (an ablation, not RLScheduler's) recomputes the reservation at every event and
  backfills by EASY's test instead (``now + requested time <= shadow time``, or the job fits in
  the nodes left over at the shadow time);
- the waiting and running jobs are Python lists that the original sorts stably by one key or
  another; the lists are kept here in the same order (``QUEUE`` and ``RUNNING``), so that ties
  of a score, of an end time or of a submit time are broken exactly as there.

Arrays (``n`` jobs of one sequence, in the original's job order):

``jobs``  float64 (JOB_ROWS, n): SUBMIT (s), RUN (s), REQ (requested time, s), PROCS, NODES.
``keys``  float64 (2, n): the score of a heuristic, compared lexicographically (row 0, then 1).
``istate`` int64 (I_ROWS,): NEXT (next job to arrive), QLEN, RLEN, FREE (free nodes), OBS_ROWS
(the job rows of the last observation).
``lists`` int64 (LIST_ROWS, n): QUEUE and RUNNING in the original's list order; SCRATCH (a
copy of QUEUE that a backfilling pass walks).
``fstate`` float64 (F_ROWS,): NOW (s), PPN (processors per node, a float as the original's).
``start`` float64 (n,): start time (s), NaN until started.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit

# rows of ``jobs``
SUBMIT, RUN, REQ, PROCS, NODES = range(5)
JOB_ROWS = 5
# entries of ``istate``
NEXT, QLEN, RLEN, FREE, OBS_ROWS = range(5)
I_ROWS = 5
# rows of ``lists``
QUEUE, RUNNING, SCRATCH = range(3)
LIST_ROWS = 3
# entries of ``fstate``
NOW, PPN = range(2)
F_ROWS = 2


@jit
def reset(jobs, total_nodes, ppn, istate, lists, fstate, start):
    """Empty machine, the first job of the sequence waiting at its submit time."""
    start[:] = np.nan
    istate[NEXT] = 1
    istate[QLEN] = 1
    istate[RLEN] = 0
    istate[FREE] = total_nodes
    lists[QUEUE, 0] = 0
    fstate[NOW] = jobs[SUBMIT, 0]
    fstate[PPN] = ppn


@jit(inline=True)
def _fits(j, jobs, istate):
    return jobs[NODES, j] <= istate[FREE]


@jit(inline=True)
def _sort_running(by_estimate, jobs, istate, lists, start):
    """Stable insertion sort of RUNNING by actual end, or by estimated end (start + requested
    time): the list is short (at most the machine's nodes) and nearly sorted."""
    size = istate[RLEN]
    for i in range(1, size):
        j = lists[RUNNING, i]
        key = start[j] + (jobs[REQ, j] if by_estimate else jobs[RUN, j])
        k = i - 1
        while k >= 0:
            other = lists[RUNNING, k]
            if start[other] + (jobs[REQ, other] if by_estimate else jobs[RUN, other]) <= key:
                break
            lists[RUNNING, k + 1] = other
            k -= 1
        lists[RUNNING, k + 1] = j


@jit
def sort_queue(keys, istate, lists):
    """Stable sort of QUEUE by ``keys`` (row 0, ties by row 1, then by list order)."""
    size = istate[QLEN]
    queue = lists[QUEUE, :size].copy()
    order = np.argsort(keys[1][queue], kind="mergesort")
    queue = queue[order]
    order = np.argsort(keys[0][queue], kind="mergesort")
    lists[QUEUE, :size] = queue[order]


@jit(inline=True)
def _queue_remove(j, istate, lists):
    size = istate[QLEN]
    pos = 0
    while lists[QUEUE, pos] != j:
        pos += 1
    for i in range(pos + 1, size):
        lists[QUEUE, i - 1] = lists[QUEUE, i]
    istate[QLEN] = size - 1


@jit(inline=True)
def _start(j, jobs, istate, lists, fstate, start):
    start[j] = fstate[NOW]
    istate[FREE] -= np.int64(jobs[NODES, j])
    lists[RUNNING, istate[RLEN]] = j
    istate[RLEN] += 1
    _queue_remove(j, istate, lists)


@jit(inline=True)
def _release_first(jobs, istate, lists, fstate, start):
    """The first running job ends (RUNNING sorted by actual end): time moves to its end."""
    j = lists[RUNNING, 0]
    fstate[NOW] = max(fstate[NOW], start[j] + jobs[RUN, j])
    istate[FREE] += np.int64(jobs[NODES, j])
    size = istate[RLEN]
    for i in range(1, size):
        lists[RUNNING, i - 1] = lists[RUNNING, i]
    istate[RLEN] = size - 1


@jit(inline=True)
def _arrive(jobs, istate, lists, fstate):
    j = istate[NEXT]
    fstate[NOW] = max(fstate[NOW], jobs[SUBMIT, j])
    lists[QUEUE, istate[QLEN]] = j
    istate[QLEN] += 1
    istate[NEXT] = j + 1


@jit(inline=True)
def _next_event(jobs, istate, lists, fstate, start):
    """Move to the next event: the next arrival if it comes no later than the first end of a
    running job (ties: the arrival first), else that end."""
    n = jobs.shape[1]
    _sort_running(False, jobs, istate, lists, start)
    first = lists[RUNNING, 0]
    release = start[first] + jobs[RUN, first]
    if istate[NEXT] < n and jobs[SUBMIT, istate[NEXT]] <= release:
        _arrive(jobs, istate, lists, fstate)
    else:
        _release_first(jobs, istate, lists, fstate, start)


@jit
def _wait_with_backfill(j, easy_rule, jobs, istate, lists, fstate, start):
    """Time moves on until job ``j`` fits, backfilling meanwhile: by RLScheduler's rule, or
    with ``easy_rule`` by EASY's (module docstring)."""
    ppn = fstate[PPN]
    shadow = fstate[NOW]
    _sort_running(True, jobs, istate, lists, start)
    free = istate[FREE] * ppn
    for i in range(istate[RLEN]):
        k = lists[RUNNING, i]
        free += jobs[NODES, k] * ppn
        shadow = start[k] + jobs[REQ, k]
        if free >= jobs[PROCS, j]:
            break
    while not _fits(j, jobs, istate):
        _sort_queue_by_submit(jobs, istate, lists)
        size = istate[QLEN]
        # the original walks a copy of its list while it removes the started jobs
        lists[SCRATCH, :size] = lists[QUEUE, :size]
        if easy_rule:
            shadow, extra = _easy_reservation(j, jobs, istate, lists, start)
        for i in range(size):
            k = lists[SCRATCH, i]
            if not _fits(k, jobs, istate):
                continue
            if easy_rule:
                if k == j:
                    continue
                if fstate[NOW] + jobs[REQ, k] <= shadow:
                    _start(k, jobs, istate, lists, fstate, start)
                elif jobs[NODES, k] <= extra:
                    extra -= jobs[NODES, k]
                    _start(k, jobs, istate, lists, fstate, start)
            elif fstate[NOW] + jobs[REQ, k] < shadow:
                _start(k, jobs, istate, lists, fstate, start)
        _next_event(jobs, istate, lists, fstate, start)


@jit(inline=True)
def _sort_queue_by_submit(jobs, istate, lists):
    """Stable insertion sort of QUEUE by submit time: the list is sorted but for the jobs that
    arrived since the last sort (appended at its end), so this is about linear."""
    for i in range(1, istate[QLEN]):
        j = lists[QUEUE, i]
        key = jobs[SUBMIT, j]
        k = i - 1
        while k >= 0 and jobs[SUBMIT, lists[QUEUE, k]] > key:
            lists[QUEUE, k + 1] = lists[QUEUE, k]
            k -= 1
        lists[QUEUE, k + 1] = j


@jit
def _easy_reservation(j, jobs, istate, lists, start):
    """EASY's reservation for job ``j`` now, in nodes: the shadow time (the estimated end at
    which enough nodes are free) and the nodes left over then."""
    _sort_running(True, jobs, istate, lists, start)
    available = float(istate[FREE])
    for i in range(istate[RLEN]):
        k = lists[RUNNING, i]
        available += jobs[NODES, k]
        if available >= jobs[NODES, j]:
            return start[k] + jobs[REQ, k], available - jobs[NODES, j]
    return np.inf, 0.0


@jit
def _move_to_job(jobs, istate, lists, fstate, start):
    """After a start: True when a job waits (a decision is due), else time moves to the next
    arrival, releasing the jobs that end first; False when the sequence is over."""
    n = jobs.shape[1]
    if istate[QLEN] > 0:
        return True
    if istate[NEXT] >= n:
        return False
    while True:
        if istate[RLEN] == 0:
            _arrive(jobs, istate, lists, fstate)
            return True
        _sort_running(False, jobs, istate, lists, start)
        first = lists[RUNNING, 0]
        if jobs[SUBMIT, istate[NEXT]] <= start[first] + jobs[RUN, first]:
            _arrive(jobs, istate, lists, fstate)
            return True
        _release_first(jobs, istate, lists, fstate, start)


@jit
def schedule(j, backfill, easy_rule, jobs, istate, lists, fstate, start):
    """Commit to waiting job ``j``: wait until it fits (backfilling meanwhile if ``backfill``,
    by EASY's rule if ``easy_rule``), start it, then move on to the next decision. Returns False
    when the sequence is over."""
    if not _fits(j, jobs, istate):
        if backfill:
            _wait_with_backfill(j, easy_rule, jobs, istate, lists, fstate, start)
        else:
            while not _fits(j, jobs, istate):
                _next_event(jobs, istate, lists, fstate, start)
    _start(j, jobs, istate, lists, fstate, start)
    return _move_to_job(jobs, istate, lists, fstate, start)


@jit
def run_heuristic(keys, backfill, easy_rule, jobs, total_nodes, ppn, istate, lists, fstate,
                  start):  # fmt: skip
    """The whole sequence under a heuristic: at each decision the queue is sorted by ``keys``
    (stably, as the original's ``job_queue.sort``) and its first job is scheduled."""
    reset(jobs, total_nodes, ppn, istate, lists, fstate, start)
    while True:
        sort_queue(keys, istate, lists)
        if not schedule(lists[QUEUE, 0], backfill, easy_rule, jobs, istate, lists, fstate,
                        start):  # fmt: skip
            return


@jit
def observe(wait_scale_s, estimate_scale_s, max_procs, total_nodes, jobs, istate, lists, fstate,
            obs, ids):  # fmt: skip
    """Sort QUEUE by submit time (stably, as the original's observation does), then fill ``obs``
    (window, 7) and ``ids`` as :func:`scheduler.sim._agent_kernel.observe` does (the fit test
    and the free fraction in nodes; rows without a job zero, written only when they held a job
    at the last observation); return how many jobs wait."""
    _sort_queue_by_submit(jobs, istate, lists)
    size = istate[QLEN]
    window = obs.shape[0]
    now = fstate[NOW]
    free = istate[FREE]
    free_fraction = free / total_nodes
    queue_fraction = min(size / window, 1.0)
    rows = min(size, window)
    for row in range(rows):
        j = lists[QUEUE, row]
        ids[row] = j
        obs[row, 0] = min((now - jobs[SUBMIT, j]) / wait_scale_s, 1.0)
        obs[row, 1] = min(max(jobs[REQ, j], 0.0) / estimate_scale_s, 1.0)
        obs[row, 2] = jobs[PROCS, j] / max_procs
        obs[row, 3] = 1.0 if jobs[NODES, j] <= free else 0.0
        obs[row, 4] = 1.0
        obs[row, 5] = free_fraction
        obs[row, 6] = queue_fraction
    for r in range(rows, max(rows, istate[OBS_ROWS])):
        ids[r] = -1
        obs[r, :] = 0.0
    istate[OBS_ROWS] = rows
    return size


@jit
def schedule_observe(j, backfill, wait_scale_s, estimate_scale_s, max_procs, total_nodes, jobs,
                     istate, lists, fstate, start, obs, ids):  # fmt: skip
    """One step of an agent in one call: :func:`schedule` (RLScheduler's backfilling) then
    :func:`observe`; returns the waiting jobs, or -1 when the sequence is over."""
    if not schedule(j, backfill, False, jobs, istate, lists, fstate, start):
        return -1
    return observe(wait_scale_s, estimate_scale_s, max_procs, total_nodes, jobs, istate, lists,
                   fstate, obs, ids)  # fmt: skip


@jit
def schedule_observe_many(actions, backfill, wait_scale_s, estimate_scale_s, max_procs,
                          total_nodes, jobs_list, istates, lists_list, fstates, starts, obs, ids,
                          waiting):  # fmt: skip
    """:func:`schedule_observe` for several sequences at once (a vector environment's step), as
    :func:`scheduler.sim._agent_kernel.act_observe_many` (a row without a job: row 0;
    ``estimate_scale_s``, ``max_procs`` and ``total_nodes`` per sequence)."""
    for e in range(actions.shape[0]):
        row = actions[e]
        if row < 0 or row >= ids.shape[1] or ids[e, row] < 0:
            row = 0
        waiting[e] = schedule_observe(
            ids[e, row], backfill, wait_scale_s, estimate_scale_s[e], max_procs[e],
            total_nodes[e], jobs_list[e], istates[e], lists_list[e], fstates[e], starts[e],
            obs[e], ids[e],
        )  # fmt: skip
