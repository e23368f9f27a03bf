"""Compiled conservative backfilling under Slurm's multifactor priority (private).

The semantics are ``docs/simulator.md``, "Slurm's multifactor priority with fair-share";
:mod:`scheduler.sim.multifactor` validates the inputs and calls :func:`advance`.

A variant of :mod:`scheduler.sim._conservative_kernel`: its main and backfill passes
(``_pass``) run unchanged over the kernel's static primary list PQ, sorted by ``keys[P_BASE]``
which holds ``-priority`` (an integer, as Slurm's ``uint32_t``) of every waiting job. What this
module adds is the state that changes the priorities while jobs run, and the events that change
it:

- **decay ticks** at the multiples of ``calc_period_s`` (Slurm's decay thread): decay every raw
  usage, add the usage of the running jobs since the previous tick, recompute the priority of
  every waiting job and re-sort PQ;
- **job ends** add the job's usage since the previous tick (Slurm's ``priority_p_job_end``);
- **submissions** set the job's priority (Slurm's ``priority_p_set``) and insert it into PQ.

Between ticks a priority does not change, so the order is static and PQ stays sorted; ties keep
job order (submit time, job number), Slurm's tie-break.

Association state (float64 unless said): ``user_raw`` (nu,) raw usage of each user association
(processor-seconds, decayed), ``acct_raw`` (na,) of each account, ``root`` (1,) of the root
(every account's sum, kept separately as Slurm does); ``acct_efctv`` (na,) the accounts'
effective usage computed at the start of the last tick; ``user_efctv`` (nu,) and ``user_valid``
(nu,) int64: a user association's effective usage, computed on first use after a tick.
``mstate`` (M_ROWS,): the last tick (``-inf`` before the first) and the next tick (s).
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit
from scheduler.sim import _conservative_kernel as ck
from scheduler.sim import _kernel as k

__all__ = [
    "J_ACCT",
    "J_ELIG",
    "J_JS",
    "J_PART",
    "J_QOS",
    "J_USER",
    "LAST_RAN",
    "MP_ROWS",
    "M_ROWS",
    "NEXT_TICK",
    "PRIORITY_MAX",
    "P_DAMP",
    "P_DECAY",
    "P_FAIR_TREE",
    "P_MAX_AGE",
    "P_PERIOD",
    "P_W_AGE",
    "P_W_FS",
    "advance",
    "catch_up",
    "fair_tree",
    "priority",
]  # fmt: skip

# rows of ``jattr`` (int64 (2, n)): the job's user association and account
J_USER, J_ACCT = 0, 1
# rows of ``jfloat`` (float64 (4, n)): eligible time (s), weighted job-size, partition and QOS
# factors (factor * weight, as Slurm multiplies them before the sum)
J_ELIG, J_JS, J_PART, J_QOS = 0, 1, 2, 3
# entries of ``params`` (float64): weights of age and fair-share, max age (s), Slurm's
# per-second decay factor, FairShareDampeningFactor, the calc period (s), 1.0 for Fair Tree
# (0.0: the classic fair-share)
P_W_AGE, P_W_FS, P_MAX_AGE, P_DECAY, P_DAMP, P_PERIOD, P_FAIR_TREE = range(7)
MP_ROWS = 7
# entries of ``mstate``
LAST_RAN, NEXT_TICK = 0, 1
M_ROWS = 2

#: Slurm's priority is a ``uint32_t``: the sum is capped here (and floored at 1: 0 means held).
PRIORITY_MAX = 4294967295.0
#: DBL_MIN: Slurm's floor of a tick's decay factor.
_DBL_MIN = 2.2250738585072014e-308


@jit(inline=True)
def _user_efctv(u, user_acct, user_ratio, user_raw, root, acct_efctv, user_efctv, user_valid):
    """A user association's effective usage, computed on first use after a tick (Slurm's
    ``priority_p_set_assoc_usage``: usage_norm, then ``_set_usage_efctv``)."""
    if user_valid[u] == 0:
        norm = 0.0
        if root[0] != 0.0:
            norm = min(user_raw[u] / root[0], 1.0)
        parent = acct_efctv[user_acct[u]]
        ratio = user_ratio[u]
        if ratio < 0.0:  # no user of the account has shares: the account's effective usage
            user_efctv[u] = parent
        else:
            user_efctv[u] = norm + (parent - norm) * ratio
        user_valid[u] = 1
    return user_efctv[u]


@jit
def priority(now, j, params, jattr, jfloat, user_acct, user_ratio, user_shares_norm, user_raw,
             root, acct_efctv, user_efctv, user_valid):  # fmt: skip
    """Job ``j``'s priority at ``now`` (a whole number in [1, 2**32 - 1], as float64)."""
    age = 0.0
    w_age = params[P_W_AGE]
    if w_age > 0.0:
        diff = 0.0
        if now > jfloat[J_ELIG, j]:
            diff = now - jfloat[J_ELIG, j]
        age = diff / params[P_MAX_AGE] if diff < params[P_MAX_AGE] else 1.0
        age *= w_age
    fs = 0.0
    w_fs = params[P_W_FS]
    if w_fs > 0.0:
        u = jattr[J_USER, j]
        if params[P_FAIR_TREE] > 0.0:
            fs = user_efctv[u]  # the factor of the last tick's ranking (_fair_tree)
        else:
            efctv = _user_efctv(u, user_acct, user_ratio, user_raw, root, acct_efctv,
                                user_efctv, user_valid)  # fmt: skip
            shares = user_shares_norm[u]
            if shares > 0.0:
                fs = 2.0 ** (-((efctv / shares) / params[P_DAMP]))
        fs *= w_fs
    # Slurm's order of the sum: age + assoc (0) + fair-share + job size + partition + QOS
    p = age + fs + jfloat[J_JS, j] + jfloat[J_PART, j] + jfloat[J_QOS, j]
    if p < 1.0:
        p = 1.0
    p = np.floor(p)
    return min(p, PRIORITY_MAX)


@jit(inline=True)
def _add_usage(j, since, until, params, jobs, jattr, fwork, user_acct, user_raw, acct_raw, root):
    """Add job ``j``'s usage over ``[max(start, since), until]`` to its user association, its
    account and the root (Slurm's ``_apply_new_usage``: seconds x decay^seconds x processors)."""
    s = max(fwork[k.START, j], since)
    delta = until - s
    if delta < 0.0:
        delta = 0.0
    real = delta * params[P_DECAY] ** delta * jobs[k.PROCS, j]
    u = jattr[J_USER, j]
    user_raw[u] += real
    acct_raw[user_acct[u]] += real
    root[0] += real


@jit(inline=True)
def _tick_decay(now, params, user_raw, acct_raw, root, acct_efctv, user_valid, mstate):
    """The start of a decay-thread run at ``now``: the accounts' effective usage, the users'
    cache cleared, the clock moved to ``now`` and every usage decayed since the last run (none
    at the first run or when no time passed). Returns the last run's time (``-inf``: none)."""
    for a in range(acct_raw.shape[0]):
        acct_efctv[a] = 0.0 if root[0] == 0.0 else min(acct_raw[a] / root[0], 1.0)
    user_valid[:] = 0
    last = mstate[LAST_RAN]
    mstate[LAST_RAN] = now
    if last == -np.inf or now - last <= 0.0:
        return last
    real_decay = max(params[P_DECAY] ** (now - last), _DBL_MIN)
    if real_decay != 1.0:
        for u in range(user_raw.shape[0]):
            user_raw[u] *= real_decay
        for a in range(acct_raw.shape[0]):
            acct_raw[a] *= real_decay
        root[0] *= real_decay
    return last


@jit(inline=True)
def _level_fs(shares, usage, parent_usage):
    """Fair Tree's level fair-share S / U of an association (Slurm's ``_calc_assoc_fs``): its
    shares among its siblings' over its usage within its parent's; 0 without shares, ``inf``
    without usage."""
    if shares <= 0.0:
        return 0.0
    u = usage / parent_usage if parent_usage != 0.0 else 0.0
    return np.inf if u == 0.0 else shares / u


@jit
def fair_tree(user_acct, user_ratio, acct_ratio, user_raw, acct_raw, root, fs):
    """Slurm's Fair Tree ranking (``fair_tree.c``, 22.05) of the user associations of the
    two-level tree root -> accounts -> users: write each user's factor rank / users to ``fs``.

    The accounts in descending level fair-share, then depth first the users of each account in
    descending level fair-share; ranks count down from the number of users, and users tied
    with the one before them (the same level fair-share; the first user of an account tied with
    the previous account) share its rank. Tied accounts keep index order (Slurm's unstable
    sort leaves them in some order; 22.05 does not merge their users, ``_count_tied_accounts``
    stopping at the first account), tied users index order (their ranks are equal anyway)."""
    na = acct_raw.shape[0]
    nu = user_raw.shape[0]
    acct_lf = np.empty(na, dtype=np.float64)
    for a in range(na):
        acct_lf[a] = _level_fs(acct_ratio[a], acct_raw[a], root[0])
    user_lf = np.empty(nu, dtype=np.float64)
    for u in range(nu):
        user_lf[u] = _level_fs(max(user_ratio[u], 0.0), user_raw[u], acct_raw[user_acct[u]])
    accounts = np.argsort(-acct_lf, kind="mergesort")
    # the users of each account, in descending level fair-share (ties: index order)
    by_account = np.argsort(user_acct, kind="mergesort")
    bounds = np.searchsorted(user_acct[by_account], np.arange(na + 1))
    rank = nu
    rnt = nu
    prev = np.nan
    for i in range(na):
        a = accounts[i]
        tied = prev == acct_lf[a]
        members = by_account[bounds[a]:bounds[a + 1]]
        members = members[np.argsort(-user_lf[members], kind="mergesort")]
        prev_user = np.nan
        for m in range(members.size):
            u = members[m]
            user_tied = tied if m == 0 else prev_user == user_lf[u]
            if not user_tied:
                rank = rnt
            fs[u] = rank / nu
            rnt -= 1
            prev_user = user_lf[u]
        prev = acct_lf[a]


@jit(inline=True)
def _tick_usage(live, last, now, params, jobs, jattr, fwork, user_acct, user_ratio, acct_ratio,
                user_raw, acct_raw, root, user_efctv):  # fmt: skip
    """The rest of a decay-thread run's bookkeeping, after :func:`_tick_decay`: the new usage
    of the jobs running at ``now`` (``live``, sorted here into job order: one fixed order of the
    float additions), then, under Fair Tree, the users' ranking (their factors in
    ``user_efctv``). Returns whether the run goes on to the waiting jobs' priorities: the
    classic algorithm's first run (or one at the same time) only records its time, Fair Tree's
    ranks even then (Slurm's ``get_usage`` path runs ``fair_tree_decay``)."""
    tree = params[P_FAIR_TREE] > 0.0
    if not tree and (last == -np.inf or now - last <= 0.0):
        return False
    live.sort()
    for i in range(live.size):
        _add_usage(live[i], last, now, params, jobs, jattr, fwork, user_acct, user_raw,
                   acct_raw, root)  # fmt: skip
    if tree:
        fair_tree(user_acct, user_ratio, acct_ratio, user_raw, acct_raw, root, user_efctv)
    return True


@jit
def _tick(now, params, jobs, keys, istate, iwork, fwork, jattr, jfloat, user_acct, user_ratio,
          user_shares_norm, user_raw, acct_raw, root, acct_efctv, user_efctv, user_valid, mstate,
          scratch, acct_ratio):  # fmt: skip
    """One run of the decay thread at ``now``: accounts' effective usage, decay, the running
    jobs' new usage, Fair Tree's ranking (when it is the algorithm), the waiting jobs'
    priorities (PQ re-sorted): :func:`_tick_decay`, :func:`_tick_usage`, then the priorities."""
    last = _tick_decay(now, params, user_raw, acct_raw, root, acct_efctv, user_valid, mstate)
    r = istate[k.RLEN]
    for i in range(r):
        scratch[i] = iwork[k.RUNNING, i]
    if not _tick_usage(scratch[:r], last, now, params, jobs, jattr, fwork, user_acct,
                       user_ratio, acct_ratio, user_raw, acct_raw, root, user_efctv):  # fmt: skip
        return
    # the waiting jobs' new priorities; then PQ sorted again (stable: ties in job order)
    qlen = istate[k.QLEN]
    if qlen == istate[k.DEAD]:
        return
    changed = False
    for i in range(qlen):
        j = iwork[k.QUEUE, i]
        if iwork[k.STATUS, j] == k.WAITING:
            key = -priority(now, j, params, jattr, jfloat, user_acct, user_ratio,
                            user_shares_norm, user_raw, root, acct_efctv, user_efctv,
                            user_valid)  # fmt: skip
            if key != keys[k.P_BASE, j]:
                keys[k.P_BASE, j] = key
                changed = True
    # PQ is the stable sort of the keys already when none changed (integers: often)
    if changed:
        _resort(iwork, istate, keys)


@jit
def _resort(iwork, istate, keys):
    """PQ sorted again by ``keys[P_BASE]``, ties in job order: by insertion from its previous
    order, which the keys of one tick mostly keep (every age grows alike), so it costs the
    queue's length plus the moves; past 8 moves a job, a full sort instead."""
    qlen = istate[k.QLEN]
    budget = 8 * qlen
    moves = 0
    for i in range(1, qlen):
        j = iwork[k.PQ, i]
        key = keys[k.P_BASE, j]
        p = i
        while p > 0:
            other = iwork[k.PQ, p - 1]
            key_other = keys[k.P_BASE, other]
            if key_other < key or (key_other == key and other < j):
                break
            iwork[k.PQ, p] = other
            p -= 1
        iwork[k.PQ, p] = j
        moves += i - p
        if moves > budget:
            k._rebuild_sorted(iwork, istate, k.PQ, keys, k.P_BASE)
            return


@jit
def advance(jobs, keys, threshold_s, depth, window_s, resolution, interval, max_test,
            queue_depth, outlive, istate, iwork, fwork, prof, params, jattr, jfloat, user_acct,
            user_ratio, user_shares_norm, user_raw, acct_raw, root, acct_efctv, user_efctv,
            user_valid, acct_ratio, mstate, scratch, memo, node_procs, t_stop,
            last_now):  # fmt: skip
    """Process every event instant ``t < t_stop`` (``inf``: to the end); return the number of
    event instants processed.

    The limits as :func:`scheduler.sim._conservative_kernel.advance`; ``keys[P_BASE]`` is
    written here (``-priority``; after the run: minus each job's priority when it started).
    At an instant: completions (and their usage), the decay tick, submissions (and their
    priorities), the main pass, the backfill pass (at a backfill instant). ``last_now``: the
    last instant processed before (``-inf`` at the start; a run resumed where one stopped at
    ``t_stop`` passes the float just below it: the periodic backfill instants go on as in one
    run).
    """
    n = jobs.shape[1]
    instants = 0
    period = params[P_PERIOD]
    while True:
        now = ck.next_instant(last_now, interval, jobs, istate, iwork, fwork)
        if now == np.inf:
            return instants
        # ticks matter until the last job ends: they decay the usage the priorities read
        now = min(now, mstate[NEXT_TICK])
        if now >= t_stop:
            return instants
        ended = ck.complete_until(now, jobs, istate, iwork, fwork, memo, scratch)
        if ended > 0:
            # their usage in job order (the heap's order of equal ends is arbitrary)
            if ended > 1:
                scratch[:ended].sort()
            for i in range(ended):
                j = scratch[i]
                _add_usage(j, mstate[LAST_RAN], fwork[k.END, j], params, jobs, jattr, fwork,
                           user_acct, user_raw, acct_raw, root)  # fmt: skip
        if now == mstate[NEXT_TICK]:
            _tick(now, params, jobs, keys, istate, iwork, fwork, jattr, jfloat, user_acct,
                  user_ratio, user_shares_norm, user_raw, acct_raw, root, acct_efctv,
                  user_efctv, user_valid, mstate, scratch, acct_ratio)  # fmt: skip
            mstate[NEXT_TICK] = (np.floor(now / period) + 1.0) * period
        while istate[k.NEXT_SUB] < n and jobs[k.SUBMIT, istate[k.NEXT_SUB]] <= now:
            j = istate[k.NEXT_SUB]
            keys[k.P_BASE, j] = -priority(now, j, params, jattr, jfloat, user_acct, user_ratio,
                                          user_shares_norm, user_raw, root, acct_efctv,
                                          user_efctv, user_valid)  # fmt: skip
            qsize = istate[k.QLEN]
            iwork[k.QUEUE, qsize] = j
            k._sorted_insert(iwork, k.PQ, qsize, j, keys, k.P_BASE)
            istate[k.QLEN] = qsize + 1
            istate[k.NEXT_SUB] = j + 1
        backfill_now = interval <= 0.0 or np.floor(now / interval) * interval == now
        ck._pass(now, backfill_now, True, threshold_s, depth, window_s, resolution, max_test,
                 queue_depth, outlive, jobs, keys, istate, iwork, fwork, prof, memo,
                 node_procs)  # fmt: skip
        if istate[k.DEAD] > k._DEAD_SLACK + (istate[k.QLEN] - istate[k.DEAD]) // 4:
            k._compact(iwork, istate, True, False)
        last_now = now
        instants += 1


@jit
def catch_up(t_from, t_to, jobs, keys, istate, iwork, fwork, params, jattr, jfloat, user_acct,
             user_ratio, user_shares_norm, user_raw, acct_raw, root, acct_efctv, user_efctv,
             user_valid, acct_ratio, mstate, scratch, cand):  # fmt: skip
    """Bring the priority plugin's state from ``t_from`` to ``t_to`` after another scheduler
    ran the machine over ``[t_from, t_to)``: what :func:`advance` would have recorded had it
    watched the same starts and ends. Return the number of decay ticks replayed.

    Before: the usage and ``mstate`` hold every end and tick before ``t_from``. The events of
    ``[t_from, t_to)`` are replayed in time order, at one instant as :func:`advance` orders
    them: the ends (job order: their usage), the tick (decay, the running jobs' usage, every
    waiting job's priority), the submissions (their priority). Running at a tick ``t``: started
    before ``t`` and ending after it; waiting: submitted before ``t``, not started before it.
    After: the usage and ``mstate`` as :func:`advance` leaves them at ``t_to``, and
    ``keys[P_BASE]`` of every job waiting at ``t_to`` the priority Slurm would hold for it (at
    the last tick, or at its submission after it). PQ is not touched (the caller sorts it).

    ``cand``: the jobs that may have waited during ``[t_from, t_to)`` (waiting at ``t_to`` or
    started in the interval), in job order; ``scratch`` (n,) int64 work space.
    """
    period = params[P_PERIOD]
    # the ends of the interval in (end, job) order
    m = 0
    for j in range(istate[k.NEXT_SUB]):
        e = fwork[k.END, j]
        if not np.isnan(fwork[k.START, j]) and e >= t_from and e < t_to:
            scratch[m] = j
            m += 1
    ends = scratch[:m].copy()
    if m > 1:
        order = np.argsort(fwork[k.END][ends], kind="mergesort")  # ties: job order
        ends = ends[order]
    running = np.empty(istate[k.RLEN] + m, dtype=np.int64)
    ticks = 0
    e = 0
    s = 0  # submissions: the candidates submitted in the interval, in job order
    while s < cand.size and jobs[k.SUBMIT, cand[s]] < t_from:
        s += 1
    while True:
        t_tick = mstate[NEXT_TICK]
        tick = t_tick < t_to
        t = t_tick if tick else t_to
        # every end and submission before the tick (or the interval's end), in time order
        while True:
            t_end = fwork[k.END, ends[e]] if e < m else np.inf
            t_sub = jobs[k.SUBMIT, cand[s]] if s < cand.size else np.inf
            if tick:
                if t_end > t and t_sub >= t:
                    break
            elif t_end >= t and t_sub >= t:
                break
            if t_end <= t_sub:  # ends first at one instant
                j = ends[e]
                _add_usage(j, mstate[LAST_RAN], fwork[k.END, j], params, jobs, jattr, fwork,
                           user_acct, user_raw, acct_raw, root)  # fmt: skip
                e += 1
            else:
                j = cand[s]
                keys[k.P_BASE, j] = -priority(t_sub, j, params, jattr, jfloat, user_acct,
                                              user_ratio, user_shares_norm, user_raw, root,
                                              acct_efctv, user_efctv, user_valid)  # fmt: skip
                s += 1
        if not tick:
            return ticks
        # the tick: as _tick, the running and waiting jobs found from the start times
        last = _tick_decay(t, params, user_raw, acct_raw, root, acct_efctv, user_valid, mstate)
        r = 0
        for i in range(istate[k.RLEN]):
            j = iwork[k.RUNNING, i]
            if fwork[k.START, j] < t:
                running[r] = j
                r += 1
        for i in range(m):
            j = ends[i]
            if fwork[k.START, j] < t and fwork[k.END, j] > t:
                running[r] = j
                r += 1
        if _tick_usage(running[:r], last, t, params, jobs, jattr, fwork, user_acct, user_ratio,
                       acct_ratio, user_raw, acct_raw, root, user_efctv):
            for i in range(cand.size):
                j = cand[i]
                start = fwork[k.START, j]
                if jobs[k.SUBMIT, j] < t and (np.isnan(start) or start >= t):
                    keys[k.P_BASE, j] = -priority(t, j, params, jattr, jfloat, user_acct,
                                                  user_ratio, user_shares_norm, user_raw, root,
                                                  acct_efctv, user_efctv, user_valid)  # fmt: skip
        mstate[NEXT_TICK] = (np.floor(t / period) + 1.0) * period
        ticks += 1
