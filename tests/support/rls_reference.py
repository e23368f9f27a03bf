"""A deliberately plain model of RLScheduler's scheduler, for differential tests of
``scheduler.sim._rls_kernel``.

Written from the rules of docs/rl.md ("The compatible mode"), with Python lists and Python's
stable ``list.sort`` as the original uses them, one event at a time and no cleverness: a job
list in arrival order, a waiting list and a running list whose order is the result of the
stable sorts applied to them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class RefJob:
    index: int
    submit: float
    run: float
    requested: float
    procs: float
    start: float = math.nan


def reference_schedule(
    jobs: list[RefJob],
    total_nodes: int,
    procs_per_node: float,
    score,
    backfill: bool,
    easy_rule: bool = False,
) -> list[float]:
    """Start time of each job (in ``jobs`` order) when the job with the smallest ``score(job)``
    is committed to at each decision; ``easy_rule``: backfill by EASY's test, the reservation
    recomputed at every event (in nodes)."""

    def nodes(job: RefJob) -> int:
        return math.ceil(job.procs / procs_per_node)

    free = total_nodes
    now = jobs[0].submit
    waiting = [jobs[0]]
    running: list[RefJob] = []
    arrived = 1

    def end(job: RefJob) -> float:
        return job.start + job.run

    def start(job: RefJob) -> None:
        nonlocal free
        job.start = now
        free -= nodes(job)
        running.append(job)
        waiting.remove(job)

    def one_event() -> None:
        """The next arrival if it is no later than the first end, else that end."""
        nonlocal now, free, arrived
        running.sort(key=end)
        if arrived < len(jobs) and jobs[arrived].submit <= end(running[0]):
            now = max(now, jobs[arrived].submit)
            waiting.append(jobs[arrived])
            arrived += 1
        else:
            now = max(now, end(running[0]))
            free += nodes(running.pop(0))

    while True:
        waiting.sort(key=score)
        chosen = waiting[0]
        if backfill and nodes(chosen) > free:
            running.sort(key=lambda job: job.start + job.requested)
            available = free * procs_per_node
            limit = now
            for job in running:
                available += nodes(job) * procs_per_node
                limit = job.start + job.requested
                if available >= chosen.procs:
                    break
            while nodes(chosen) > free:
                waiting.sort(key=lambda job: job.submit)
                if easy_rule:
                    running.sort(key=lambda job: job.start + job.requested)
                    spare, limit, extra = free, math.inf, 0
                    for job in running:
                        spare += nodes(job)
                        if spare >= nodes(chosen):
                            limit, extra = job.start + job.requested, spare - nodes(chosen)
                            break
                for job in list(waiting):
                    if nodes(job) > free or (easy_rule and job is chosen):
                        continue
                    if easy_rule:
                        if now + job.requested <= limit:
                            start(job)
                        elif nodes(job) <= extra:
                            extra -= nodes(job)
                            start(job)
                    elif now + job.requested < limit:
                        start(job)
                one_event()
        while nodes(chosen) > free:
            one_event()
        start(chosen)
        if not waiting:
            if arrived == len(jobs):
                return [job.start for job in jobs]
            while not waiting:
                if running:
                    running.sort(key=end)
                if not running or jobs[arrived].submit <= end(running[0]):
                    now = max(now, jobs[arrived].submit)
                    waiting.append(jobs[arrived])
                    arrived += 1
                else:
                    now = max(now, end(running[0]))
                    free += nodes(running.pop(0))
