"""A deliberately simple reference simulator of EASY backfilling, written from docs/simulator.md.

It is slow and literal on purpose: every pass re-sorts the lists from scratch and evaluates the
policy formulas of the table exactly as written (no monotone transforms). The test suite uses it
to check the compiled simulator job by job. It was written without looking at the kernel.

Section references ("step 3", ...) are to "One pass of EASY(P_R, P_B, Θ) at time now" in
docs/simulator.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

RESERVATIONS = ("default", "classic")
OUTLIVES = ("requested", "double")


@dataclass(frozen=True)
class NaiveJob:
    """One rigid job, in seconds and processors."""

    job_id: int
    submit_s: float  # r_j
    procs: int  # q_j
    run_s: float  # actual run time p_j
    estimate_s: float  # est_j, the only duration the scheduler sees
    requested_s: float  # requested time p~_j (used by outlive="requested")
    user: int = 0  # SWF user number (used by the run-time predictors only)


@dataclass(frozen=True)
class NaiveResult:
    start_s: float
    backfilled: bool  # started in step 4


@dataclass
class _Running:
    job: NaiveJob
    start_s: float
    est_s: float  # current estimate, possibly revised (revisions persist)
    end_est_s: float  # e_k = start + est, or now + 1 after the fallback

    @property
    def end_s(self) -> float:  # actual completion instant
        return self.start_s + self.job.run_s


def _r_prime(job: NaiveJob, first_submit_s: float) -> float:
    return job.submit_s - first_submit_s + 1.0


# Natural formulas of the policy table: f(job, wait, est, q, first_submit_s) -> key.
_POLICIES: dict[str, Callable[[NaiveJob, float, float, int, float], float]] = {
    "FCFS": lambda j, w, e, q, f: j.submit_s,
    "LCFS": lambda j, w, e, q, f: -j.submit_s,
    "SPF": lambda j, w, e, q, f: e,
    "LPF": lambda j, w, e, q, f: -e,
    "SQF": lambda j, w, e, q, f: q,
    "LQF": lambda j, w, e, q, f: -q,
    "LEXP": lambda j, w, e, q, f: -((w + e) / e),
    "SEXP": lambda j, w, e, q, f: (w + e) / e,
    "LRF": lambda j, w, e, q, f: -(e / q),
    "SRF": lambda j, w, e, q, f: e / q,
    "LAF": lambda j, w, e, q, f: -(e * q),
    "SAF": lambda j, w, e, q, f: e * q,
    "WFP3": lambda j, w, e, q, f: -((w / e) ** 3 * q),
    "UNICEF": lambda j, w, e, q, f: -(w / (max(math.log2(q), 1.0) * e)),
    "F1": lambda j, w, e, q, f: math.log10(e) * q + 870.0 * math.log10(_r_prime(j, f)),
    "F2": lambda j, w, e, q, f: math.sqrt(e) * q + 25600.0 * math.log10(_r_prime(j, f)),
    "F3": lambda j, w, e, q, f: e * q + 6.86e6 * math.log10(_r_prime(j, f)),
    "F4": lambda j, w, e, q, f: e * math.sqrt(q) + 5.3e5 * math.log10(_r_prime(j, f)),
}
POLICIES = tuple(_POLICIES)


def naive_priority(policy: str, job: NaiveJob, now: float, first_submit_s: float) -> float:
    """Key of `job` under `policy` at time `now` (smallest first), formula of the table."""
    if policy not in _POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {POLICIES}")
    wait = now - job.submit_s
    return float(_POLICIES[policy](job, wait, job.estimate_s, job.procs, first_submit_s))


def _check(jobs, machine_procs, primary, backfill, threshold_s, reservation, outlive) -> None:
    if machine_procs < 1:
        raise ValueError("machine_procs must be >= 1")
    if primary not in _POLICIES or (backfill is not None and backfill not in _POLICIES):
        raise ValueError(f"unknown policy; expected one of {POLICIES}")
    if reservation not in RESERVATIONS:
        raise ValueError(f"reservation must be one of {RESERVATIONS}")
    if outlive not in OUTLIVES:
        raise ValueError(f"outlive must be one of {OUTLIVES}")
    if threshold_s is not None and math.isnan(threshold_s):
        raise ValueError("threshold_s must not be NaN")
    if len({j.job_id for j in jobs}) != len(jobs):
        raise ValueError("duplicate job_id")
    for j in jobs:
        if not 1 <= j.procs <= machine_procs:
            raise ValueError(f"job {j.job_id} needs {j.procs} procs, machine has {machine_procs}")
        if not (j.run_s > 0 and j.estimate_s > 0 and j.requested_s > 0):
            raise ValueError(f"job {j.job_id}: run, estimate and requested times must be > 0")


def _revise(run: _Running, now: float, outlive: str) -> None:
    """Section "Jobs that outlive their estimate": called only when e_k <= now."""
    if outlive == "requested":
        run.est_s = run.job.requested_s
    else:  # "double"
        while run.start_s + run.est_s <= now:
            run.est_s *= 2.0
    run.end_est_s = run.start_s + run.est_s
    if run.end_est_s <= now:
        run.end_est_s = now + 1.0


def naive_simulate(
    jobs: Sequence[NaiveJob],
    machine_procs: int,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    threshold_s: float | None = None,
    reservation: str = "default",
    outlive: str = "requested",
    threshold_backfill: bool = False,
) -> dict[int, NaiveResult]:
    """Simulate EASY(primary, backfill, threshold) on `machine_procs` processors.

    Returns job_id -> NaiveResult(start_s, backfilled). `backfill=None` is plain list
    scheduling, `threshold_s=None` is Θ = ∞. `threshold_backfill=True`: step 4 tries the
    candidates in the thresholded order of the backfill policy (section "Thresholded backfill
    order").
    """
    jobs = list(jobs)
    _check(jobs, machine_procs, primary, backfill, threshold_s, reservation, outlive)
    if not jobs:
        return {}
    first_submit_s = min(j.submit_s for j in jobs)
    theta = math.inf if threshold_s is None else threshold_s

    pending = sorted(jobs, key=lambda j: (j.submit_s, j.job_id))  # not yet submitted
    waiting: list[NaiveJob] = []
    running: list[_Running] = []
    free = machine_procs
    results: dict[int, NaiveResult] = {}

    def key(policy: str, now: float) -> Callable[[NaiveJob], tuple[float, float, int]]:
        return lambda j: (naive_priority(policy, j, now, first_submit_s), j.submit_s, j.job_id)

    def start(job: NaiveJob, now: float, backfilled: bool) -> None:
        nonlocal free
        assert job.procs <= free
        free -= job.procs
        waiting.remove(job)
        running.append(_Running(job, now, job.estimate_s, now + job.estimate_s))
        results[job.job_id] = NaiveResult(now, backfilled)

    max_events = 2 * len(jobs) + 1  # each instant consumes at least one submission/completion
    for _ in range(max_events):
        if not pending and not waiting:
            break
        # The next event instant; all events at that instant are applied before the pass.
        next_submit = pending[0].submit_s if pending else math.inf
        next_end = min((r.end_s for r in running), default=math.inf)
        now = min(next_submit, next_end)
        assert now < math.inf, "jobs waiting but nothing running and nothing to submit"
        for r in [r for r in running if r.end_s == now]:
            running.remove(r)
            free += r.job.procs
        while pending and pending[0].submit_s == now:
            waiting.append(pending.pop(0))

        # Step 1: primary order, then jobs older than Θ (strictly) to the head by (r, id).
        queue = sorted(waiting, key=key(primary, now))
        old = [j for j in queue if now - j.submit_s > theta]
        young = [j for j in queue if not now - j.submit_s > theta]
        queue = sorted(old, key=lambda j: (j.submit_s, j.job_id)) + young

        # Step 2: start from the head while the head fits.
        while queue and queue[0].procs <= free:
            start(queue.pop(0), now, backfilled=False)
        if not queue:
            continue

        # Step 3: reservation for h. Outlived estimates are revised first, then the running jobs
        # (including those just started in step 2) are walked by (e_k, job number).
        h = queue.pop(0)
        for r in running:
            if r.end_est_s <= now:
                _revise(r, now, outlive)
        count = free
        shadow = math.nan
        for r in sorted(running, key=lambda r: (r.end_est_s, r.job.job_id)):
            count += r.job.procs
            if count >= h.procs:
                shadow = r.end_est_s
                break
        assert count >= h.procs
        if reservation == "classic":  # every job whose estimated end equals s releases too
            count = free + sum(r.job.procs for r in running if r.end_est_s <= shadow)
        extra = count - h.procs

        # Step 5: no backfilling.
        if backfill is None:
            continue
        # Step 4: backfill the others in P_B order; the shadow time is not recomputed. With
        # threshold_backfill, the candidates waiting more than Θ (strictly) go first by (r, id),
        # the others follow in P_B order.
        candidates = sorted(queue, key=key(backfill, now))
        if threshold_backfill:
            overdue = [j for j in candidates if now - j.submit_s > theta]
            others = [j for j in candidates if not now - j.submit_s > theta]
            candidates = sorted(overdue, key=lambda j: (j.submit_s, j.job_id)) + others
        for j in candidates:
            if j.procs > free:
                continue
            if now + j.estimate_s <= shadow:
                start(j, now, backfilled=True)
            elif j.procs <= extra:
                extra -= j.procs
                start(j, now, backfilled=True)
    else:
        raise AssertionError("naive_simulate did not terminate")
    assert len(results) == len(jobs)
    return results


# -- Run-time prediction inside the simulation (docs/simulator.md, same-named section) ------------

PREDICTORS = ("requested", "ave2", "clairvoyant")
CORRECTIONS = ("requested", "incremental", "doubling")
BACKFILL_ORDERS = ("easy", "sjbf")
#: INCREMENTAL's steps: 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h.
_STEPS_S = [60, 5 * 60, 15 * 60, 30 * 60, 3600, 2 * 3600, 5 * 3600, 10 * 3600, 20 * 3600,
            50 * 3600, 100 * 3600]  # fmt: skip


@dataclass(frozen=True)
class NaivePredicted:
    start_s: float
    backfilled: bool
    prediction_s: float  # made at submission
    corrections: int


@dataclass
class _PRunning:
    job: NaiveJob
    start_s: float
    original_s: float  # the prediction at submission
    pred_s: float  # the current (corrected) prediction
    corrections: int
    end_est_s: float  # start + pred, or now + 1 after the fallback

    @property
    def end_s(self) -> float:
        return self.start_s + self.job.run_s


def _corrected(r: _PRunning, correction: str) -> float:
    """The prediction after one more correction (never above the requested time)."""
    req = r.job.requested_s
    if correction == "requested":
        new = req
    elif correction == "incremental":
        k = r.corrections  # this is correction number k + 1
        new = r.original_s + _STEPS_S[k] if k < len(_STEPS_S) else req
    else:  # doubling
        new = 2 * r.pred_s
    return min(new, req)


def _correct_until(r: _PRunning, correction: str, outlived: Callable[[float], bool]) -> None:
    while r.pred_s < r.job.requested_s and outlived(r.start_s + r.pred_s):
        r.pred_s = _corrected(r, correction)
        r.corrections += 1


def naive_simulate_predicted(
    jobs: Sequence[NaiveJob],
    machine_procs: int,
    predictor: str = "requested",
    correction: str = "requested",
    backfill_order: str = "easy",
    reservation: str = "default",
    whole_seconds: bool = False,
) -> dict[int, NaivePredicted]:
    """EASY(FCFS, FCFS) on predictions; backfill candidates in FCFS or SJBF order.

    `estimate_s` of the jobs is ignored: the scheduler sees the predictions. `reservation`
    "classic" adds to the extra processors every running job predicted to end at the shadow
    time; `whole_seconds` rounds the AVE2 mean down to whole seconds.
    """
    assert reservation in ("default", "classic")
    assert predictor in PREDICTORS and correction in CORRECTIONS
    assert backfill_order in BACKFILL_ORDERS
    jobs = list(jobs)
    _check(jobs, machine_procs, "FCFS", "FCFS", None, "default", "requested")
    pending = sorted(jobs, key=lambda j: (j.submit_s, j.job_id))
    waiting: list[tuple[NaiveJob, float]] = []  # (job, prediction), in FCFS order
    running: list[_PRunning] = []
    finished_runs: dict[int, list[float]] = {}  # user -> run times, in completion order
    free = machine_procs
    results: dict[int, NaivePredicted] = {}
    started: dict[int, tuple[float, bool, float]] = {}

    def predict(job: NaiveJob) -> float:
        if predictor == "requested":
            p = job.requested_s
        elif predictor == "clairvoyant":
            p = job.run_s
        else:  # ave2: mean of the last two finished run times of the user
            runs = finished_runs.get(job.user, [])
            p = (runs[-1] + runs[-2]) / 2 if len(runs) >= 2 else job.requested_s
        if whole_seconds:
            p = math.floor(p)
        return min(max(p, 1.0), job.requested_s)

    def start(entry: tuple[NaiveJob, float], now: float, backfilled: bool) -> None:
        nonlocal free
        job, pred = entry
        assert job.procs <= free
        free -= job.procs
        waiting.remove(entry)
        running.append(_PRunning(job, now, pred, pred, 0, now + pred))
        started[job.job_id] = (now, backfilled, pred)

    for _ in range(2 * len(jobs) + 1):
        if not pending and not waiting and not running:
            break
        next_submit = pending[0].submit_s if pending else math.inf
        next_end = min((r.end_s for r in running), default=math.inf)
        now = min(next_submit, next_end)
        assert now < math.inf
        # completions, in job order: the job is corrected while it was still running at its
        # predicted end (strictly before now), then its run time becomes known
        ending = sorted((r for r in running if r.end_s == now),
                        key=lambda r: (r.job.submit_s, r.job.job_id))  # fmt: skip
        for r in ending:
            running.remove(r)
            free += r.job.procs
            _correct_until(r, correction, lambda e, now=now: e < now)
            finished_runs.setdefault(r.job.user, []).append(r.job.run_s)
            s, b, pred = started[r.job.job_id]
            results[r.job.job_id] = NaivePredicted(s, b, pred, r.corrections)
        while pending and pending[0].submit_s == now:
            job = pending.pop(0)
            waiting.append((job, predict(job)))

        # steps 1-2 with P_R = FCFS
        queue = sorted(waiting, key=lambda e: (e[0].submit_s, e[0].job_id))
        while queue and queue[0][0].procs <= free:
            start(queue.pop(0), now, backfilled=False)
        if not queue:
            continue
        # step 3: correct the running jobs that reached their predicted end, then reserve
        h = queue.pop(0)[0]
        for r in running:
            if r.end_est_s <= now:
                _correct_until(r, correction, lambda e, now=now: e <= now)
                r.end_est_s = r.start_s + r.pred_s
                if r.end_est_s <= now:
                    r.end_est_s = now + 1.0
        count = free
        shadow = math.nan
        for r in sorted(running, key=lambda r: (r.end_est_s, r.job.job_id)):
            count += r.job.procs
            if count >= h.procs:
                shadow = r.end_est_s
                break
        if reservation == "classic":  # every other job predicted to end at the shadow time
            count = free + sum(r.job.procs for r in running if r.end_est_s <= shadow)
        extra = count - h.procs
        # step 4: FCFS order, or SJBF: increasing prediction, ties by submit time, job number
        if backfill_order == "sjbf":
            queue.sort(key=lambda e: (e[1], e[0].submit_s, e[0].job_id))
        for entry in queue:
            job, pred = entry
            if job.procs > free:
                continue
            if now + pred <= shadow:
                start(entry, now, backfilled=True)
            elif job.procs <= extra:
                extra -= job.procs
                start(entry, now, backfilled=True)
    else:
        raise AssertionError("naive_simulate_predicted did not terminate")
    assert len(results) == len(jobs)
    return results


# -- Redirection (docs/simulator.md, "Redirection") ------------------------------------


@dataclass(frozen=True)
class NaiveRedirected:
    start_s: float  # final start (on the dedicated pool for a redirected job)
    backfilled: bool  # the final start was a backfill
    first_start_s: float  # start in the main pool
    killed_s: float  # redirection instant, NaN if never redirected
    pool: str  # "main" or "dedicated": where the job finished


class _NaivePool:
    """One EASY scheduler (no threshold, default reservation, outlive "requested") over its own
    waiting and running lists. Waiting jobs carry the pool's submit time in `submit_s`."""

    def __init__(self, procs: int, primary: str, backfill: str | None, first_submit_s: float):
        self.procs = procs
        self.free = procs
        self.primary = primary
        self.backfill = backfill
        self.first_submit_s = first_submit_s
        self.waiting: list[NaiveJob] = []
        self.running: list[_Running] = []

    def _key(self, policy: str, now: float) -> Callable[[NaiveJob], tuple[float, float, int]]:
        f = self.first_submit_s
        return lambda j: (naive_priority(policy, j, now, f), j.submit_s, j.job_id)

    def _start(self, job: NaiveJob, now: float) -> None:
        assert job.procs <= self.free
        self.free -= job.procs
        self.waiting.remove(job)
        self.running.append(_Running(job, now, job.estimate_s, now + job.estimate_s))

    def easy_pass(self, now: float) -> list[tuple[NaiveJob, bool]]:
        """One pass; returns the started jobs with their "backfilled" flag."""
        started: list[tuple[NaiveJob, bool]] = []
        queue = sorted(self.waiting, key=self._key(self.primary, now))
        while queue and queue[0].procs <= self.free:  # step 2
            job = queue.pop(0)
            self._start(job, now)
            started.append((job, False))
        if not queue or self.backfill is None:
            return started
        h = queue.pop(0)  # step 3
        for r in self.running:
            if r.end_est_s <= now:
                _revise(r, now, "requested")
        count = self.free
        shadow = math.nan
        for r in sorted(self.running, key=lambda r: (r.end_est_s, r.job.job_id)):
            count += r.job.procs
            if count >= h.procs:
                shadow = r.end_est_s
                break
        extra = count - h.procs
        for j in sorted(queue, key=self._key(self.backfill, now)):  # step 4
            if j.procs > self.free:
                continue
            if now + j.estimate_s <= shadow:
                self._start(j, now)
                started.append((j, True))
            elif j.procs <= extra:
                extra -= j.procs
                self._start(j, now)
                started.append((j, True))
        return started

    def complete(self, now: float) -> None:
        for r in [r for r in self.running if r.end_s == now]:
            self.running.remove(r)
            self.free += r.job.procs


def naive_pool_sizes(alpha: float, machine_procs: int) -> tuple[int, int]:
    """(main, dedicated): the dedicated pool is ceil(alpha * m) on alpha's decimal value."""
    from decimal import Decimal

    dedicated = math.ceil(Decimal(repr(float(alpha))) * machine_procs)
    return machine_procs - dedicated, dedicated


def naive_simulate_redirect(
    jobs: Sequence[NaiveJob],
    machine_procs: int,
    alpha: float,
    theta: float,
    primary: str = "FCFS",
    backfill: str | None = "FCFS",
    dedicated_primary: str | None = None,
    dedicated_backfill: str | None = None,
    balance: bool = False,
) -> dict[int, NaiveRedirected]:
    """Main + dedicated pools with redirection, event by event, counters kept per job.

    `dedicated_primary` / `dedicated_backfill` None: the main pool's; `dedicated_backfill="none"`:
    no backfilling on the dedicated pool. `theta` may be math.inf.
    """
    jobs = list(jobs)
    m_main, m_d = naive_pool_sizes(alpha, machine_procs)
    assert m_main >= 1 and all(j.procs <= m_main for j in jobs)
    if dedicated_backfill == "none":
        d_backfill = None
    else:
        d_backfill = backfill if dedicated_backfill is None else dedicated_backfill
    first = min(j.submit_s for j in jobs)
    main = _NaivePool(m_main, primary, backfill, first)
    ded = _NaivePool(m_d, dedicated_primary or primary, d_backfill, first)
    pending = sorted(jobs, key=lambda j: (j.submit_s, j.job_id))
    counter: dict[int, int] = {}  # job_id -> counter, for the jobs running in the main pool
    first_start: dict[int, float] = {}
    final: dict[int, tuple[float, bool]] = {}
    killed: dict[int, float] = {}

    def passes(now: float) -> None:
        for job, backfilled in main.easy_pass(now):
            counter[job.job_id] = 0
            first_start[job.job_id] = now
            final[job.job_id] = (now, backfilled)
        for job, backfilled in ded.easy_pass(now):
            final[job.job_id] = (now, backfilled)

    for _ in range(4 * len(jobs) + 1):
        if not (pending or main.waiting or main.running or ded.waiting or ded.running):
            break
        next_submit = pending[0].submit_s if pending else math.inf
        next_end = min((r.end_s for r in main.running + ded.running), default=math.inf)
        now = min(next_submit, next_end)
        assert now < math.inf
        # 1. completions of both pools
        for r in main.running:
            if r.end_s == now:
                del counter[r.job.job_id]
        main.complete(now)
        ded.complete(now)
        # 2. submissions, each counted by every job running in the main pool
        while pending and pending[0].submit_s == now:
            main.waiting.append(pending.pop(0))
            for r in main.running:
                counter[r.job.job_id] += 1
        # 3. passes
        passes(now)
        # 4. redirection step
        if m_d == 0 or (balance and ded.waiting):
            continue
        candidates = [r for r in main.running
                      if counter[r.job.job_id] > theta and r.job.procs <= m_d]  # fmt: skip
        if not candidates:
            continue
        victim = min(candidates, key=lambda r: (-r.job.procs, r.start_s, r.job.job_id))
        main.running.remove(victim)
        main.free += victim.job.procs
        del counter[victim.job.job_id]
        killed[victim.job.job_id] = now
        del final[victim.job.job_id]
        ded.waiting.append(
            NaiveJob(victim.job.job_id, now, victim.job.procs, victim.job.run_s,
                     victim.job.estimate_s, victim.job.requested_s, victim.job.user)
        )  # fmt: skip
        for job_id in counter:
            counter[job_id] = 0
        # 5. second passes at the same instant
        passes(now)
    else:
        raise AssertionError("naive_simulate_redirect did not terminate")
    assert len(final) == len(jobs)
    return {
        j.job_id: NaiveRedirected(
            final[j.job_id][0],
            final[j.job_id][1],
            first_start[j.job_id],
            killed.get(j.job_id, math.nan),
            "dedicated" if j.job_id in killed else "main",
        )
        for j in jobs
    }
