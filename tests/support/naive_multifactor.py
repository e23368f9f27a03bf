"""A deliberately simple reference of conservative backfilling under Slurm's multifactor priority,
written from docs/simulator.md, section "Slurm's multifactor priority with fair-share".

Plain Python and dicts: usage per association in dicts, every priority recomputed from the
formulas of the docs, the order sorted from scratch at every pass, the passes those of
``support.naive_conservative`` (the same literal profile of intervals).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from support.naive import NaiveJob, NaiveResult, _Running
from support.naive_conservative import passes

__all__ = ["Attrs", "naive_multifactor"]


@dataclass(frozen=True)
class Attrs:
    """A job's user, account, partition, QOS (text) and eligible time (s)."""

    user: str
    account: str
    partition: str = "p"
    qos: str = "normal"
    eligible_s: float | None = None


def naive_multifactor(
    jobs: Sequence[NaiveJob],
    attrs: Mapping[int, Attrs],
    machine_procs: int,
    *,
    weight_age: int = 0,
    weight_fairshare: int = 0,
    weight_job_size: int = 0,
    weight_partition: int = 0,
    weight_qos: int = 0,
    max_age_s: float = 7 * 86400.0,
    decay_half_life_s: float = 7 * 86400.0,
    calc_period_s: float = 300.0,
    favor_small: bool = False,
    dampening: int = 1,
    fair_tree: bool = False,
    procs_per_node: int | None = None,
    account_shares: Mapping[str, int] | None = None,
    user_shares: Mapping[str, int] | None = None,
    partition_job_factor: Mapping[str, int] | None = None,
    qos_priority: Mapping[str, int] | None = None,
    threshold_s: float | None = None,
    depth: int | None = None,
    bf_window_s: float | None = None,
    bf_resolution_s: float | None = None,
    bf_interval_s: float | None = None,
    bf_max_job_test: int | None = None,
    default_queue_depth: int | None = None,
    outlive: str = "requested",
) -> tuple[dict[int, NaiveResult], dict[int, int]]:
    """(job_id -> NaiveResult(start_s, backfilled), job_id -> priority when it started)."""
    jobs = sorted(jobs, key=lambda j: (j.submit_s, j.job_id))
    if not jobs:
        return {}, {}
    account_shares = dict(account_shares or {})
    user_shares = dict(user_shares or {})
    part_factor = dict(partition_job_factor or {})
    qos_prio = dict(qos_priority or {})
    theta = math.inf if threshold_s is None else threshold_s
    df = 1.0 - 0.693 / decay_half_life_s if decay_half_life_s > 0 else 1.0

    # -- associations: root -> accounts -> user associations "account/user"
    def assoc(job: NaiveJob) -> str:
        return f"{attrs[job.job_id].account}/{attrs[job.job_id].user}"

    assocs = {assoc(j) for j in jobs} | set(user_shares)
    accounts = {attrs[j.job_id].account for j in jobs} | set(account_shares)
    accounts |= {a.rsplit("/", 1)[0] for a in user_shares}
    parent = {a: a.rsplit("/", 1)[0] for a in assocs}
    s_acct = {a: account_shares.get(a, 1) for a in accounts}
    s_user = {a: user_shares.get(a, 1) for a in assocs}
    level_acct = sum(s_acct.values())
    level_user = {a: sum(s_user[b] for b in assocs if parent[b] == parent[a]) for a in assocs}

    def shares_norm(a: str) -> float:
        if level_user[a] == 0 or level_acct == 0:
            return 0.0
        return (s_user[a] / level_user[a]) * (s_acct[parent[a]] / level_acct)

    # Fair Tree: each user association's factor, ranked at every tick
    fs_factor = dict.fromkeys(assocs, 0.0)

    def level_fs(share: float, usage: float, parent_usage: float) -> float:
        if share == 0:
            return 0.0
        within = usage / parent_usage if parent_usage else 0.0
        return math.inf if within == 0 else share / within

    def rank_users() -> None:
        """Accounts by level fair-share (high first; ties by name), users of each the same;
        ranks from the number of users down, a user tied with the one before keeps its rank
        (the first user of an account tied with the account before)."""
        acct_share = {a: s_acct[a] / level_acct if level_acct else 0.0 for a in accounts}
        acct_lf = {a: level_fs(acct_share[a], raw_acct[a], raw_root) for a in accounts}
        n_users = len(assocs)
        rank = remaining = n_users
        previous_account: float | None = None
        for a in sorted(accounts, key=lambda a: (-acct_lf[a], a)):
            account_tied = previous_account == acct_lf[a]
            members = [u for u in assocs if parent[u] == a]
            lf = {u: level_fs(s_user[u] / level_user[u] if level_user[u] else 0.0,
                              raw_user[u], raw_acct[a]) for u in members}  # fmt: skip
            previous_user: float | None = None
            for i, u in enumerate(sorted(members, key=lambda u: (-lf[u], u))):
                tied = account_tied if i == 0 else previous_user == lf[u]
                if not tied:
                    rank = remaining
                fs_factor[u] = rank / n_users
                remaining -= 1
                previous_user = lf[u]
            previous_account = acct_lf[a]

    raw_user = dict.fromkeys(assocs, 0.0)
    raw_acct = dict.fromkeys(accounts, 0.0)
    raw_root = 0.0
    acct_efctv = dict.fromkeys(accounts, 0.0)
    user_efctv: dict[str, float] = {}  # cleared at every tick, filled on first use

    def efctv(a: str) -> float:
        if a not in user_efctv:
            norm = 0.0 if raw_root == 0 else min(raw_user[a] / raw_root, 1.0)
            if level_user[a] == 0:
                user_efctv[a] = acct_efctv[parent[a]]
            else:
                ratio = s_user[a] / level_user[a]
                user_efctv[a] = norm + (acct_efctv[parent[a]] - norm) * ratio
        return user_efctv[a]

    # -- static factors
    nodes = machine_procs // (procs_per_node or 1)

    def job_size(job: NaiveJob) -> float:
        ppn = procs_per_node or 1
        min_nodes = math.ceil(job.procs / ppn)
        if favor_small:
            js = ((nodes - min_nodes) / nodes + (machine_procs - job.procs) / machine_procs) / 2
        else:
            js = (min_nodes / nodes + job.procs / machine_procs) / 2
        return min(max(js, 0.0), 1.0)

    max_part = max([*part_factor.values(), *(part_factor.get(attrs[j.job_id].partition, 1)
                                             for j in jobs)])  # fmt: skip
    max_qos = max([*qos_prio.values(), *(qos_prio.get(attrs[j.job_id].qos, 0) for j in jobs)])

    def eligible(job: NaiveJob) -> float:
        e = attrs[job.job_id].eligible_s
        return job.submit_s if e is None else max(e, job.submit_s)

    def priority(job: NaiveJob, now: float) -> int:
        age = 0.0
        if weight_age:
            diff = max(now - eligible(job), 0.0)
            age = (diff / max_age_s if diff < max_age_s else 1.0) * weight_age
        fs = 0.0
        if weight_fairshare and fair_tree:
            fs = fs_factor[assoc(job)] * weight_fairshare
        elif weight_fairshare:
            a = assoc(job)
            sn = shares_norm(a)
            fs = (2.0 ** (-((efctv(a) / sn) / dampening)) if sn > 0 else 0.0) * weight_fairshare
        js = job_size(job) * weight_job_size if weight_job_size else 0.0
        part = 0.0
        pf = part_factor.get(attrs[job.job_id].partition, 1)
        if weight_partition and pf > 0:
            part = pf / max_part * weight_partition
        qos = 0.0
        qp = qos_prio.get(attrs[job.job_id].qos, 0)
        if weight_qos and qp > 0:
            qos = qp / max_qos * weight_qos
        total = age + fs + js + part + qos
        return int(min(math.floor(max(total, 1.0)), 2**32 - 1))

    def add_usage(run: _Running, since: float | None, until: float) -> None:
        nonlocal raw_root
        delta = max(until - max(run.start_s, -math.inf if since is None else since), 0.0)
        real = delta * df**delta * run.job.procs
        a = assoc(run.job)
        raw_user[a] += real
        raw_acct[parent[a]] += real
        raw_root += real

    # -- the schedule
    pending = list(jobs)
    waiting: list[NaiveJob] = []
    running: list[_Running] = []
    free = machine_procs
    prio: dict[int, int] = {}
    results: dict[int, NaiveResult] = {}
    at_start: dict[int, int] = {}
    last_ran: float | None = None
    next_tick = math.floor(jobs[0].submit_s / calc_period_s) * calc_period_s

    def tick(now: float) -> None:
        nonlocal raw_root, last_ran
        for a in accounts:
            acct_efctv[a] = 0.0 if raw_root == 0 else min(raw_acct[a] / raw_root, 1.0)
        user_efctv.clear()
        first = last_ran is None or now - last_ran <= 0
        if first and not fair_tree:  # the classic first run only records its time
            last_ran = now
            return
        if not first:
            real_decay = max(df ** (now - last_ran), 2.2250738585072014e-308)
            for a in raw_user:
                raw_user[a] *= real_decay
            for a in raw_acct:
                raw_acct[a] *= real_decay
            raw_root *= real_decay
        for r in sorted(running, key=lambda r: (r.job.submit_s, r.job.job_id)):
            add_usage(r, last_ran, now)
        if fair_tree:
            rank_users()
        for j in waiting:
            prio[j.job_id] = priority(j, now)
        last_ran = now

    def order(now: float) -> list[NaiveJob]:
        by_prio = sorted(waiting, key=lambda j: (-prio[j.job_id], j.submit_s, j.job_id))
        old = sorted([j for j in by_prio if now - j.submit_s > theta],
                     key=lambda j: (j.submit_s, j.job_id))  # fmt: skip
        return old + [j for j in by_prio if not now - j.submit_s > theta]

    def start(job: NaiveJob, now: float, backfilled: bool) -> None:
        nonlocal free
        free -= job.procs
        waiting.remove(job)
        running.append(_Running(job, now, job.estimate_s, now + job.estimate_s))
        results[job.job_id] = NaiveResult(now, backfilled)
        at_start[job.job_id] = prio[job.job_id]

    def free_now() -> int:
        return free

    last_now = -math.inf
    for _ in range(1000 * len(jobs) + 100_000):
        if not pending and not waiting and not running:
            break
        candidates = [pending[0].submit_s if pending else math.inf,
                      min((r.end_s for r in running), default=math.inf), next_tick]  # fmt: skip
        if bf_interval_s is not None and waiting:
            candidates.append((math.floor(last_now / bf_interval_s) + 1) * bf_interval_s)
        now = min(candidates)
        ended = sorted([r for r in running if r.end_s == now],
                       key=lambda r: (r.job.submit_s, r.job.job_id))  # fmt: skip
        for r in ended:
            running.remove(r)
            free += r.job.procs
            add_usage(r, last_ran, r.end_s)  # type: ignore[arg-type]
        if now == next_tick:
            tick(now)
            next_tick = (math.floor(now / calc_period_s) + 1) * calc_period_s
        while pending and pending[0].submit_s == now:
            j = pending.pop(0)
            prio[j.job_id] = priority(j, now)
            waiting.append(j)
        passes(now, order, running, free_now, start, machine_procs=machine_procs,
               outlive=outlive, depth=depth, bf_window_s=bf_window_s,
               bf_resolution_s=bf_resolution_s, bf_interval_s=bf_interval_s,
               bf_max_job_test=bf_max_job_test, default_queue_depth=default_queue_depth,
               node_procs=None)  # fmt: skip
        last_now = now
    else:
        raise AssertionError("naive_multifactor did not terminate")
    assert len(results) == len(jobs)
    return results, at_start
