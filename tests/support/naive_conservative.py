"""A deliberately simple reference of conservative backfilling with Slurm's limits, written from
docs/simulator.md, section "Conservative backfilling (and Slurm's sched/backfill limits)".

Literal and slow on purpose: the profile is a plain list of intervals (start, end, processors),
``free(t)`` is recomputed by summing over it, every candidate start is tried in increasing order,
every pass sorts the queue from scratch. The order, policies and outlive rule are the EASY
reference's (tests/support/naive.py), which that section refers to.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from support.naive import NaiveJob, NaiveResult, _revise, _Running, naive_priority

__all__ = ["naive_conservative", "passes"]

#: A profile interval: (start s, end s, processors held).
Interval = tuple[float, float, int]
#: Start a waiting job: (job, now, backfilled).
Start = Callable[[NaiveJob, float, bool], None]


def _round_up(x: float, resolution: float | None) -> float:
    """⌈x⌉: the next multiple of the resolution (x itself when it is one); x without one."""
    if resolution is None:
        return x
    return math.ceil(x / resolution) * resolution


def _is_backfill_instant(now: float, interval: float | None) -> bool:
    return interval is None or math.floor(now / interval) * interval == now


def _earliest(job: NaiveJob, now: float, intervals: list[Interval], machine_procs: int,
              resolution: float | None) -> float:
    """The job's earliest start: the first of now and the interval ends after now at which
    free(u) >= q for every u in [t, ⌈t + est⌉) (free is constant between interval bounds, so
    t and every bound inside are checked; free(u) = m minus every interval holding u)."""
    for t in sorted({now} | {b for (_, b, _) in intervals if b > now}):
        end = _round_up(t + job.estimate_s, resolution)
        points = [t] + [p for (a, b, _) in intervals for p in (a, b) if t < p < end]
        if all(machine_procs - sum(q for (a, b, q) in intervals if a <= u < b) >= job.procs
               for u in points):  # fmt: skip
            return t
    raise AssertionError("a job that fits the machine always has a start")


def main_pass(now: float, order: list[NaiveJob], free: Callable[[], int], start: Start, *,
              default_queue_depth: int | None) -> None:
    """Start the head of ``order`` now while it fits, at most ``default_queue_depth`` jobs."""
    for considered, j in enumerate(order):
        if default_queue_depth is not None and considered >= default_queue_depth:
            return
        if j.procs > free():
            return
        start(j, now, False)


def backfill_pass(now: float, order: list[NaiveJob], running: list[_Running], start: Start, *,
                  machine_procs: int, outlive: str, depth: int | None,
                  bf_window_s: float | None, bf_resolution_s: float | None,
                  bf_max_job_test: int | None, node_procs: int | None) -> None:
    """The backfill pass at ``now`` over ``order`` (the waiting jobs in pass order): revise the
    outlived estimates, then walk, starting each job whose earliest start is now and reserving
    for the others (depth, window, whole nodes: docs/simulator.md)."""
    for r in running:
        if r.end_est_s <= now:
            _revise(r, now, outlive)
    # running jobs hold their processors from now to their rounded estimated end
    intervals = [(now, _round_up(r.end_est_s, bf_resolution_s), r.job.procs) for r in running]
    walk = order if bf_max_job_test is None else order[:bf_max_job_test]
    reservations = 0
    blocked = False
    for j in walk:
        t = _earliest(j, now, intervals, machine_procs, bf_resolution_s)
        if t == now:
            # the running-job intervals already hold the processors of the jobs started
            # before j in this pass (added below), so free(now) is the machine's free count
            start(j, now, blocked)
            intervals.append((now, _round_up(now + j.estimate_s, bf_resolution_s), j.procs))
            continue
        blocked = True
        if depth is not None and reservations >= depth:
            continue
        if bf_window_s is not None and t > now + bf_window_s:
            continue
        held = j.procs if node_procs is None else math.ceil(j.procs / node_procs) * node_procs
        intervals.append((t, _round_up(t + j.estimate_s, bf_resolution_s), held))
        reservations += 1


def passes(now: float, order: Callable[[float], list[NaiveJob]], running: list[_Running],
           free: Callable[[], int], start: Start, *, machine_procs: int, outlive: str,
           depth: int | None, bf_window_s: float | None, bf_resolution_s: float | None,
           bf_interval_s: float | None, bf_max_job_test: int | None,
           default_queue_depth: int | None, node_procs: int | None) -> None:
    """The passes of an instant: the main pass, then at a backfill instant, while a job waits,
    the backfill pass (``order(now)``: the waiting jobs in pass order)."""
    main_pass(now, order(now), free, start, default_queue_depth=default_queue_depth)
    walk = order(now)
    if _is_backfill_instant(now, bf_interval_s) and walk:
        backfill_pass(
            now, walk, running, start, machine_procs=machine_procs, outlive=outlive,
            depth=depth, bf_window_s=bf_window_s, bf_resolution_s=bf_resolution_s,
            bf_max_job_test=bf_max_job_test, node_procs=node_procs,
        )  # fmt: skip


def naive_conservative(
    jobs: Sequence[NaiveJob],
    machine_procs: int,
    primary: str = "FCFS",
    threshold_s: float | None = None,
    *,
    depth: int | None = None,
    bf_window_s: float | None = None,
    bf_resolution_s: float | None = None,
    bf_interval_s: float | None = None,
    bf_max_job_test: int | None = None,
    default_queue_depth: int | None = None,
    node_procs: int | None = None,
    outlive: str = "requested",
) -> dict[int, NaiveResult]:
    """job_id -> NaiveResult(start_s, backfilled) of conservative backfilling (with
    ``node_procs``, a reservation holds whole nodes of that many processors)."""
    jobs = list(jobs)
    if not jobs:
        return {}
    first_submit_s = min(j.submit_s for j in jobs)
    theta = math.inf if threshold_s is None else threshold_s
    pending = sorted(jobs, key=lambda j: (j.submit_s, j.job_id))
    waiting: list[NaiveJob] = []
    running: list[_Running] = []
    free = machine_procs
    results: dict[int, NaiveResult] = {}

    def order(now: float) -> list[NaiveJob]:
        """EASY's step 1: the policy's key at now, then the overdue jobs to the front."""
        by_key = sorted(
            waiting,
            key=lambda j: (naive_priority(primary, j, now, first_submit_s), j.submit_s, j.job_id),
        )
        old = sorted([j for j in by_key if now - j.submit_s > theta],
                     key=lambda j: (j.submit_s, j.job_id))  # fmt: skip
        return old + [j for j in by_key if not now - j.submit_s > theta]

    def start(job: NaiveJob, now: float, backfilled: bool) -> None:
        nonlocal free
        assert job.procs <= free
        free -= job.procs
        waiting.remove(job)
        running.append(_Running(job, now, job.estimate_s, now + job.estimate_s))
        results[job.job_id] = NaiveResult(now, backfilled)

    def free_now() -> int:
        return free

    last_now = -math.inf  # the last instant processed
    for _ in range(100 * len(jobs) + 10_000):
        if not pending and not waiting:
            break
        next_submit = pending[0].submit_s if pending else math.inf
        next_end = min((r.end_s for r in running), default=math.inf)
        next_tick = math.inf
        if bf_interval_s is not None and waiting:
            # the next multiple of the interval after the last instant (jobs wait: it matters)
            next_tick = (math.floor(last_now / bf_interval_s) + 1) * bf_interval_s
        now = min(next_submit, next_end, next_tick)
        assert now < math.inf
        for r in [r for r in running if r.end_s == now]:
            running.remove(r)
            free += r.job.procs
        while pending and pending[0].submit_s == now:
            waiting.append(pending.pop(0))
        passes(now, order, running, free_now, start, machine_procs=machine_procs,
               outlive=outlive, depth=depth, bf_window_s=bf_window_s,
               bf_resolution_s=bf_resolution_s, bf_interval_s=bf_interval_s,
               bf_max_job_test=bf_max_job_test, default_queue_depth=default_queue_depth,
               node_procs=node_procs)  # fmt: skip
        last_now = now
    else:
        raise AssertionError("naive_conservative did not terminate")
    assert len(results) == len(jobs)
    return results
