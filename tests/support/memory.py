"""A deliberately simple reference of the memory-aware engine (issue #15), from docs/simulator.md.

Written from the section "Memory-aware heterogeneous clusters" only, without looking
at the compiled kernel (scheduler/sim/_memory_kernel.py), so that the two are independent. It is
slow and literal on purpose: an explicit queue list, an explicit list of running runs, per-class
free counts, everything recomputed at each decision, Python integers for SplitMix64 and
``math.tanh`` / ``math.exp`` / ``math.log`` for the formulas.

The reference follows the section's choices literally, among them: a decision forced to
``A = R_j`` by ``max_failures`` asks no estimator (no features, no draw, ``E'`` NaN) and its run
teaches the perceptron nothing but counts in ``p``; ``forced`` counts such runs; ``failures``
counts failed runs; the EASY scan after the head stops as soon as no node is free, and skips
without a decision (no draw) a job needing more nodes than are free; when the eligible nodes
never reach ``q_h`` the shadow time is ``∞`` and there are no extra nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

MASK64 = (1 << 64) - 1


class SplitMix64:
    """SplitMix64 on Python integers (wrapping by masking), draws in [0, 1) from the top 53 bits."""

    def __init__(self, seed: int) -> None:
        self.state = int(seed) & MASK64

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self) -> float:
        return (self.next_u64() >> 11) * 2.0**-53


def splitmix_draws(seed: int, count: int) -> list[float]:
    """The first ``count`` draws of the stream seeded by ``seed``."""
    rng = SplitMix64(seed)
    return [rng.uniform() for _ in range(count)]


def estimate_numpy(w, x, a: float, M: float, b: float) -> float:
    """E' = f(w·x) = a·M·tanh(b·w·x) (Algorithm 1's estimate)."""
    return float(a * M * np.tanh(b * np.dot(np.asarray(w), np.asarray(x))))


def perceptron_update_numpy(w, x, t, z, eta, a, M, b, *, normalised: bool = False):
    """Algorithm 1's update: w + η·(t − z)·f'(w·x)·x with f'(u) = a·M·b·(1 − tanh²(b·u)).

    ``normalised``: memory in units of M, f'(u) = a·b·(1 − tanh²(b·u)); ``t`` and ``z`` are
    then given already divided by M (explicit) or ±1 (implicit)."""
    w = np.asarray(w, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    u = float(np.dot(w, x))
    scale = a * b if normalised else a * M * b
    fprime = scale * (1.0 - np.tanh(b * u) ** 2)
    return w + eta * (t - z) * fprime * x


@dataclass
class _Decision:
    alloc: float
    forced: bool = False
    x: list[float] | None = None  # features of a perceptron decision
    estimate: float = math.nan  # E'
    z: float = 0.0  # ±1


@dataclass
class _Run:
    seq: int  # order in which runs were started
    job: int
    start: float
    end: float
    alloc: float
    memory: float  # a_j
    failed: bool
    nodes: list[int]  # per class, ascending
    decision: _Decision = field(repr=False)
    expected: float = 0.0  # EASY's expected end: start + est, revised to now + 1 when outlived


def naive_simulate_memory(submit_s, procs, run_s, est_s, req_mem_mb, used_mem_mb, user, config):
    """Simulate the jobs (arrays in job order) on ``config`` (a ``MemoryConfig``, or any object
    with its fields); a dict of ``MemoryArrays``' fields."""
    submit = [float(v) for v in submit_s]
    q = [int(v) for v in procs]
    p = [float(v) for v in run_s]
    est = [float(v) for v in est_s]
    R = [float(v) for v in req_mem_mb]
    U = [float(v) for v in used_mem_mb]
    users = [int(v) for v in user]
    n = len(submit)
    assert all(submit[i] <= submit[i + 1] for i in range(n - 1)), "jobs must be in submit order"

    classes = sorted(zip(config.class_memory_mb, config.class_nodes, strict=True))
    mem = [float(m) for m, _ in classes]  # M_c ascending
    size = [int(c) for _, c in classes]  # n_c
    K = len(mem)
    M = max(mem)
    free = list(size)
    estimator, scheduler = config.estimator, config.scheduler
    explicit = config.feedback == "explicit"
    raise_ = config.feedback == "implicit-raise"  # (z − t) in place of (t − z)
    normalised = config.gradient in ("normalised", "standardised")  # memory in units of M
    standardised = config.gradient == "standardised"
    seen_x = 0  # decisions whose raw features entered the running moments
    mean_x = [0.0] * (K + 3)  # per feature but the bias (Welford)
    m2_x = [0.0] * (K + 3)
    a, b, eta, tau = config.a, config.b, config.eta, config.tau

    rng = SplitMix64(config.seed)
    w = [0.0] * (K + 4)
    finished = successes = 0
    p_success = 0.5
    history: dict[tuple[int, float], float] = {}  # (user, R) -> largest U of successful runs

    start_s = [math.nan] * n
    failures = [0] * n
    forced = [0] * n
    queue: list[int] = []
    running: list[_Run] = []
    runs: list[_Run] = []

    def eligible(alloc: float) -> int:
        return sum(free[c] for c in range(K) if mem[c] >= alloc)

    def capacity(need: int) -> float:
        """E: walking the classes from the largest down, the memory where the sum reaches q."""
        total = 0
        for c in reversed(range(K)):
            total += free[c]
            if total >= need:
                return mem[c]
        return -math.inf

    def best_fit(alloc: float, need: int) -> list[int]:
        take = [0] * K
        for c in range(K):
            if mem[c] >= alloc and need > 0:
                take[c] = min(free[c], need)
                need -= take[c]
        assert need == 0
        return take

    def dot(u: list[float], v: list[float]) -> float:
        total = 0.0
        for ui, vi in zip(u, v, strict=True):
            total += ui * vi
        return total

    def decide(j: int) -> _Decision:
        nonlocal seen_x
        if failures[j] >= config.max_failures:
            return _Decision(R[j], forced=True)
        if estimator == "none":
            return _Decision(R[j])
        if estimator == "history":
            if failures[j] > 0 or (users[j], R[j]) not in history:
                return _Decision(R[j])
            return _Decision(min(R[j], history[users[j], R[j]]))
        assert estimator == "perceptron", estimator
        total_free = sum(free)
        x = [free[c] / size[c] for c in range(K)]
        x.append(1.0 if total_free == 0 else min(q[j] / total_free, 1.0))
        x.append(math.log1p(R[j]))  # log(1 + R), computed accurately
        x.append(math.log1p(len(queue)))  # L: j is in the queue
        if standardised:  # the running moments of every decision's raw features, this one included
            seen_x += 1
            for i in range(K + 3):
                delta = x[i] - mean_x[i]
                mean_x[i] += delta / seen_x
                m2_x[i] += delta * (x[i] - mean_x[i])
                sd = math.sqrt(m2_x[i] / seen_x) if m2_x[i] / seen_x > 0 else 0.0
                x[i] = (x[i] - mean_x[i]) / sd if sd > 0 else 0.0
        x.append(1.0)
        estimate = a * M * math.tanh(b * dot(w, x))
        if estimate <= capacity(q[j]):
            return _Decision(max(estimate, 0.0), x=x, estimate=estimate, z=1.0)
        xi = rng.uniform()
        e_p = math.exp(p_success / tau)
        explore = 1.0 - e_p / (e_p + math.exp((1.0 - p_success) / tau))
        alloc = 0.0 if xi < explore else R[j]
        return _Decision(alloc, x=x, estimate=estimate, z=-1.0)

    def start(j: int, d: _Decision, now: float) -> None:
        take = best_fit(d.alloc, q[j])
        for c in range(K):
            free[c] -= take[c]
        if d.forced:
            forced[j] += 1
        if config.memory_limit == "node":
            memory = min(mem[c] for c in range(K) if take[c] > 0)
        else:
            memory = d.alloc
        failed = memory < U[j]
        end = now + rng.uniform() * p[j] if failed else now + p[j]
        run = _Run(len(runs), j, now, end, d.alloc, memory, failed, take, d, now + est[j])
        runs.append(run)
        running.append(run)
        queue.remove(j)
        if not failed:
            start_s[j] = now

    def finish(run: _Run) -> None:
        nonlocal w, finished, successes, p_success
        j = run.job
        running.remove(run)
        for c in range(K):
            free[c] += run.nodes[c]
        d = run.decision
        if estimator == "perceptron" and d.x is not None:
            u = dot(w, d.x)
            if explicit:
                t, z = (run.memory if run.failed else U[j]), d.estimate
                if normalised:
                    t, z = t / M, z / M
            else:
                t, z = (-1.0 if run.failed else 1.0), d.z
                if raise_:
                    t, z = z, t
            th = math.tanh(b * u)
            fprime = (a * b if normalised else a * M * b) * (1.0 - th * th)
            step = eta * (t - z) * fprime
            w = [wi + step * xi for wi, xi in zip(w, d.x, strict=True)]
        finished += 1
        successes += 0 if run.failed else 1
        p_success = successes / finished
        if run.failed:
            failures[j] += 1
            queue.append(j)
        elif estimator == "history":
            key = (users[j], R[j])
            history[key] = max(history.get(key, U[j]), U[j])

    def shadow(alloc: float, need: int, now: float) -> tuple[float, int]:
        if alloc > M:
            return math.inf, 0
        count = eligible(alloc)
        order = []
        for run in running:
            order.append((run.expected, run.job, run))
        order.sort(key=lambda item: (item[0], item[1]))
        for e, _, run in order:
            count += sum(run.nodes[c] for c in range(K) if mem[c] >= alloc)
            if count >= need:
                return e, count - need
        return math.inf, 0

    def schedule(now: float) -> None:
        while queue:
            h = queue[0]
            d = decide(h)
            if eligible(d.alloc) >= q[h]:
                start(h, d, now)
                continue
            break
        else:
            return
        if scheduler == "fcfs":
            return
        assert scheduler == "easy", scheduler
        for run in running:  # a job waits: outlived runs end one second from now, persistently
            if run.expected <= now:
                run.expected = now + 1.0
        s, extra = shadow(d.alloc, q[h], now)
        limit = d.alloc
        for j in list(queue[1:]):
            if sum(free) == 0:
                break
            if q[j] > sum(free):
                continue
            dj = decide(j)
            if eligible(dj.alloc) < q[j]:
                continue
            if now + est[j] <= s:
                start(j, dj, now)
                continue
            take = best_fit(dj.alloc, q[j])
            used = sum(take[c] for c in range(K) if mem[c] >= limit)
            if used <= extra:
                extra -= used
                start(j, dj, now)

    next_submit = 0
    while next_submit < n or running or queue:
        times = [run.end for run in running]
        if next_submit < n:
            times.append(submit[next_submit])
        if not times:
            raise RuntimeError(f"jobs {queue} wait and can never start")
        now = min(times)
        for run in sorted((r for r in running if r.end == now), key=lambda r: r.seq):
            finish(run)
        while next_submit < n and submit[next_submit] == now:
            queue.append(next_submit)
            next_submit += 1
        schedule(now)

    return {
        "start_s": np.array(start_s, dtype=np.float64),
        "failures": np.array(failures, dtype=np.int64),
        "forced": np.array(forced, dtype=np.int64),
        "run_job": np.array([r.job for r in runs], dtype=np.int64),
        "run_start_s": np.array([r.start for r in runs], dtype=np.float64),
        "run_end_s": np.array([r.end for r in runs], dtype=np.float64),
        "run_alloc_mb": np.array([r.alloc for r in runs], dtype=np.float64),
        "run_memory_mb": np.array([r.memory for r in runs], dtype=np.float64),
        "run_failed": np.array([r.failed for r in runs], dtype=bool),
        "run_estimate_mb": np.array([r.decision.estimate for r in runs], dtype=np.float64),
        "run_class_nodes": np.array([r.nodes for r in runs], dtype=np.int64).reshape(-1, K),
        "weights": np.array(w, dtype=np.float64),
        "success_fraction": float(p_success),
    }
