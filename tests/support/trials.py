"""A deliberately simple reference for the trials of the learned-priority study, written from
``docs/simulator.md`` ("Trials of the learned-priority study"), not from the compiled kernel.

Slow and obvious: every job of the list, S then Q in the trial's order, looks at the instants at
which it could start (its ready time, then every end of a job already started) and takes the
first at which the processors in use, counted afresh from all the jobs started so far, leave
room for it. The generator is re-implemented with Python integers masked to 64 bits.
"""

from __future__ import annotations

from collections.abc import Sequence

MASK64 = (1 << 64) - 1


def list_schedule(
    submit_s: Sequence[float],
    procs: Sequence[int],
    run_s: Sequence[float],
    order: Sequence[int],
    machine_procs: int,
) -> dict[int, float]:
    """Start time (s) of every job of ``order`` (job indices) placed by strict list scheduling."""
    starts: dict[int, float] = {}
    previous_start = float("-inf")
    for job in order:
        ready = max(previous_start, submit_s[job])
        ends = sorted(starts[k] + run_s[k] for k in starts if starts[k] + run_s[k] > ready)
        for t in [ready, *ends]:
            in_use = sum(procs[k] for k in starts if starts[k] <= t < starts[k] + run_s[k])
            if in_use + procs[job] <= machine_procs:
                starts[job] = t
                break
        else:  # pragma: no cover - a job fits an empty machine
            raise AssertionError("no instant found")
        previous_start = starts[job]
    return starts


def trial_avebsld(
    submit_s: Sequence[float],
    procs: Sequence[int],
    run_s: Sequence[float],
    n_state: int,
    queue_order: Sequence[int],
    machine_procs: int,
    tau_s: float = 10.0,
) -> float:
    """AVEbsld over Q of the trial that places S in its order, then Q in ``queue_order``."""
    order = list(range(n_state)) + [n_state + q for q in queue_order]
    starts = list_schedule(submit_s, procs, run_s, order, machine_procs)
    queue = range(n_state, len(submit_s))
    bslds = [max((starts[j] - submit_s[j] + run_s[j]) / max(run_s[j], tau_s), 1.0) for j in queue]
    return sum(bslds) / len(bslds)


def splitmix_stream(seed: int):
    """SplitMix64 outputs from initial state ``seed``."""
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def permutations(n_queue: int, n_trials: int, seed: int) -> list[list[int]]:
    """Fisher-Yates from the identity per trial, with Lemire's rejection on 32-bit draws."""
    stream = splitmix_stream(seed)

    def below(k: int) -> int:
        while True:
            m = (next(stream) >> 32) * k
            if (m & 0xFFFFFFFF) >= (2**32 - k) % k:
                return m >> 32

    rows = []
    for _ in range(n_trials):
        row = list(range(n_queue))
        for i in range(n_queue - 1, 0, -1):
            j = below(i + 1)
            row[i], row[j] = row[j], row[i]
        rows.append(row)
    return rows
