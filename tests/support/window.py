"""A deliberately simple reference of windowed list scheduling, written from docs/simulator.md
("Windowed list scheduling"), not from the kernel.

Literal and slow: a dispatch loop over queue positions like the authors' master loop, every
decision re-counting the arrived jobs, re-sorting with Python's ``sorted`` and recomputing the
shadow time from scratch; time advances event by event.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def reference_window(
    submit: Sequence[float],
    procs: Sequence[int],
    run: Sequence[float],
    estimate: Sequence[float],
    key_base: Sequence[float],
    key_div: Sequence[float],
    machine_procs: int,
    *,
    window: int | None,
    n_in_order: int,
    backfilling: bool,
    exchange_sort: bool = False,
) -> list[float]:
    """Start times (s) of the jobs (given in submission order)."""
    n = len(submit)
    queue = list(range(n))  # queue[i:] waits; queue[:i] started, in start order
    start = [math.nan] * n
    running: list[int] = []  # started jobs that have not ended, in start order
    now = submit[0] if n else 0.0

    def key(j: int) -> float:
        return key_base[j] + (now - submit[j]) / key_div[j]

    def free() -> int:
        return machine_procs - sum(procs[j] for j in running)

    i = 0
    while i < n:
        running = [j for j in running if start[j] + run[j] > now]
        started = False
        if i >= n_in_order:
            end = n if window is None else min(n, i + window)
            arrived = 0
            while i + arrived < end and submit[queue[i + arrived]] <= now:
                arrived += 1
            part = queue[i : i + arrived]
            if exchange_sort:  # the authors' SPF: for a, for b: if key_a < key_b: swap
                for a in range(len(part)):
                    for b in range(len(part)):
                        if key(part[a]) < key(part[b]):
                            part[a], part[b] = part[b], part[a]
            else:
                part = sorted(part, key=lambda j: (key(j), j))
            queue[i : i + arrived] = part
            if backfilling and arrived >= 2 and procs[queue[i]] > free():
                head = queue[i]
                shadow, extra = now, 0
                available = free()
                for j in sorted(running, key=lambda j: start[j] + estimate[j]):  # stable
                    available += procs[j]
                    if available >= procs[head]:
                        shadow = start[j] + estimate[j]
                        extra = available - procs[head]
                        break
                for c in range(i + 1, i + arrived):
                    j = queue[c]
                    fits_before = procs[j] <= free() and now + estimate[j] <= shadow
                    if fits_before or procs[j] <= min(free(), extra):
                        queue.insert(i, queue.pop(c))
                        break
        head = queue[i]
        if submit[head] <= now and procs[head] <= free():
            start[head] = now
            running.append(head)
            i += 1
            started = True
        if not started:
            ends = [start[j] + run[j] for j in running]
            arrivals = [submit[j] for j in range(n) if submit[j] > now]
            now = min(ends + arrivals)
    return start
