"""Compiled EASY loop with run-time predictions learned online, corrections and SJBF (private).

The engine variant, a sibling of :mod:`scheduler.sim._kernel`: it shares that
module's state layout (``jobs``, ``istate``, ``iwork``, ``fwork``) and reuses its helpers (the
completion heap, the running list sorted by estimated end, ``_start``, ``_reservation``,
``_compact``, and for SJBF the block index of BQ: ``_index_insert``, ``_index_rebuild``,
``_fits_somewhere``, whose by-estimate walk :func:`_backfill_sjbf` repeats with the users'
bookkeeping). What differs lives here: the estimate the scheduler sees
(``fwork[EST_CUR]``) is a *prediction* made at the job's submission from what the simulated
scheduler knows then, a running job that outlives it is *corrected*, and backfill candidates are
tried in FCFS order (EASY) or by increasing prediction (SJBF). The primary order is FCFS, with
no threshold. The semantics are in ``docs/simulator.md`` ("Run-time prediction inside the
simulation"); ``scheduler/sim/prediction.py`` validates inputs and prepares the arrays.

Extra arrays (``n`` jobs in (submit time, job number) order, ``u`` users numbered 0..u-1):

``user``   int64 (n,)           the job's user index.
``keys``   float64 (B_BASE+1, n) as the base kernel's ``keys``, only row ``B_BASE`` used: the
                                SJBF backfill key, the prediction at submission; ``pred`` is
                                that row (a view), so ``_kernel._index_insert`` keeps BQ, BQ_PROCS
                                and BQ_MIN in SJBF order.
``pred``   float64 (n,)         the prediction made at submission (s), in [1 s, p̃_j].
``ncorr``  int64 (n,)           corrections the job received.
``feats``  float64 (n, N_FEAT)  the NAG features at submission (written for ``PRED_NAG`` only).
``ustate`` float64 (U_ROWS, u)  per-user history (last run times, sums, running jobs).
``links``  int64 (L_ROWS, n)    per-user doubly linked lists of running jobs in start order;
``uhead``  int64 (2, u)         their first (oldest start) and last entries, -1 when empty.
``vec``, ``acc``               the NAG learner's state (``scheduler.predictors.nag``).
"""

from __future__ import annotations

import math

import numpy as np

from scheduler.core.compile import jit
from scheduler.predictors.nag import nag_predict, nag_update
from scheduler.sim import _kernel as k

# predictor codes
PRED_REQUESTED, PRED_AVE2, PRED_CLAIRVOYANT, PRED_NAG = range(4)
# correction codes
CORR_REQUESTED, CORR_INCREMENTAL, CORR_DOUBLING = range(3)

#: INCREMENTAL: the k-th correction sets the prediction to the original one plus INCREMENTS[k-1]
#: (1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h), then to p̃_j.
INCREMENTS = np.array(
    [60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 18000.0, 36000.0, 72000.0, 180000.0, 360000.0]
)

# rows of ``ustate``
U_L1, U_L2, U_L3, U_NFIN, U_SUMFIN, U_NSUB, U_SUMQ, U_NRUN, U_RUNQ, U_SUMSTART, U_LASTEND = range(
    11
)
U_ROWS = 11
# rows of ``links`` and ``uhead``
L_PREV, L_NEXT = range(2)
L_ROWS = 2
H_FIRST, H_LAST = range(2)

# NAG features (docs/simulator.md, "Run-time prediction inside the simulation")
(F_REQ, F_PROCS, F_LAST1, F_LAST2, F_LAST3, F_MEAN2, F_MEAN3, F_MEANALL, F_USERQ, F_QRATIO,
 F_RUNQ_MEAN, F_NRUN, F_LONGEST, F_SUMELAPSED, F_OCCUPIED, F_BREAK, F_DAY_COS, F_DAY_SIN,
 F_WEEK_COS, F_WEEK_SIN) = range(20)  # fmt: skip
N_FEAT = 20

DAY_S = 86400.0
WEEK_S = 7.0 * DAY_S


def new_user_state(n: int, n_users: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh ``ustate``, ``links``, ``uhead``: nobody has finished or is running anything."""
    ustate = np.zeros((U_ROWS, n_users), dtype=np.float64)
    ustate[U_LASTEND, :] = np.nan
    links = np.full((L_ROWS, n), -1, dtype=np.int64)
    uhead = np.full((2, n_users), -1, dtype=np.int64)
    return ustate, links, uhead


# -- what the scheduler knows about users ---------------------------------------------------------


@jit(inline=True)
def _user_started(j, now, jobs, user, ustate, links, uhead):
    u = user[j]
    ustate[U_NRUN, u] += 1.0
    ustate[U_RUNQ, u] += jobs[k.PROCS, j]
    ustate[U_SUMSTART, u] += now
    # jobs start in time order: append at the end of the user's list
    last = uhead[H_LAST, u]
    links[L_PREV, j] = last
    links[L_NEXT, j] = -1
    if last >= 0:
        links[L_NEXT, last] = j
    else:
        uhead[H_FIRST, u] = j
    uhead[H_LAST, u] = j


@jit(inline=True)
def _user_finished(j, now, jobs, user, fwork, ustate, links, uhead):
    u = user[j]
    ustate[U_NRUN, u] -= 1.0
    ustate[U_RUNQ, u] -= jobs[k.PROCS, j]
    ustate[U_SUMSTART, u] -= fwork[k.START, j]
    prev, nxt = links[L_PREV, j], links[L_NEXT, j]
    if prev >= 0:
        links[L_NEXT, prev] = nxt
    else:
        uhead[H_FIRST, u] = nxt
    if nxt >= 0:
        links[L_PREV, nxt] = prev
    else:
        uhead[H_LAST, u] = prev
    ustate[U_L3, u] = ustate[U_L2, u]
    ustate[U_L2, u] = ustate[U_L1, u]
    ustate[U_L1, u] = jobs[k.RUN, j]
    ustate[U_NFIN, u] += 1.0
    ustate[U_SUMFIN, u] += jobs[k.RUN, j]
    ustate[U_LASTEND, u] = now


@jit(inline=True)
def _features(j, now, jobs, user, fwork, ustate, uhead, out):
    """The NAG features of job ``j`` submitted at ``now`` (its own submission counted)."""
    u = user[j]
    q = jobs[k.PROCS, j]
    nfin = ustate[U_NFIN, u]
    out[F_REQ] = jobs[k.REQ, j]
    out[F_PROCS] = q
    out[F_LAST1] = ustate[U_L1, u]
    out[F_LAST2] = ustate[U_L2, u]
    out[F_LAST3] = ustate[U_L3, u]
    # means over the finished jobs available (up to 2 / 3 / all); 0 when none
    known2 = min(nfin, 2.0)
    known3 = min(nfin, 3.0)
    out[F_MEAN2] = (ustate[U_L1, u] + ustate[U_L2, u]) / known2 if known2 > 0 else 0.0
    out[F_MEAN3] = (
        (ustate[U_L1, u] + ustate[U_L2, u] + ustate[U_L3, u]) / known3 if known3 > 0 else 0.0
    )
    out[F_MEANALL] = ustate[U_SUMFIN, u] / nfin if nfin > 0 else 0.0
    ustate[U_NSUB, u] += 1.0
    ustate[U_SUMQ, u] += q
    mean_q = ustate[U_SUMQ, u] / ustate[U_NSUB, u]
    out[F_USERQ] = mean_q
    out[F_QRATIO] = q / mean_q
    nrun = ustate[U_NRUN, u]
    out[F_RUNQ_MEAN] = ustate[U_RUNQ, u] / nrun if nrun > 0 else 0.0
    out[F_NRUN] = nrun
    first = uhead[H_FIRST, u]
    out[F_LONGEST] = now - fwork[k.START, first] if first >= 0 else 0.0
    out[F_SUMELAPSED] = nrun * now - ustate[U_SUMSTART, u] if nrun > 0 else 0.0
    out[F_OCCUPIED] = ustate[U_RUNQ, u]
    last_end = ustate[U_LASTEND, u]
    out[F_BREAK] = now - last_end if not np.isnan(last_end) else 0.0
    day = 2.0 * math.pi * ((now % DAY_S) / DAY_S)
    week = 2.0 * math.pi * ((now % WEEK_S) / WEEK_S)
    out[F_DAY_COS] = math.cos(day)
    out[F_DAY_SIN] = math.sin(day)
    out[F_WEEK_COS] = math.cos(week)
    out[F_WEEK_SIN] = math.sin(week)


@jit(inline=True)
def _predict(j, now, predictor, whole, jobs, user, fwork, ustate, uhead, feats, vec):
    """The prediction (s) for job ``j`` at its submission, bounded to [1 s, p̃_j]; with ``whole``
    rounded down to whole seconds first (the published study's simulator keeps integers)."""
    req = jobs[k.REQ, j]
    if predictor == PRED_REQUESTED:
        y = req
    elif predictor == PRED_CLAIRVOYANT:
        y = jobs[k.RUN, j]
    elif predictor == PRED_AVE2:
        u = user[j]
        y = 0.5 * (ustate[U_L1, u] + ustate[U_L2, u]) if ustate[U_NFIN, u] >= 2.0 else req
    else:
        _features(j, now, jobs, user, fwork, ustate, uhead, feats[j])
        y = nag_predict(vec, feats[j])
    if whole:
        y = math.floor(y)
    if not y >= 1.0:  # also NaN
        y = 1.0
    if y > req:
        y = req
    return y


# -- corrections ----------------------------------------------------------------------------------


@jit(inline=True)
def _correct(j, now, strict, correction, jobs, fwork, pred, ncorr):
    """Correct job ``j`` while its predicted end is <= now (< now when ``strict``) and its
    prediction is below p̃_j."""
    start = fwork[k.START, j]
    req = jobs[k.REQ, j]
    while fwork[k.EST_CUR, j] < req:
        end = start + fwork[k.EST_CUR, j]
        if end > now or (strict and end == now):
            return
        c = ncorr[j]
        if correction == CORR_REQUESTED:
            new = req
        elif correction == CORR_INCREMENTAL:
            new = pred[j] + INCREMENTS[c] if c < INCREMENTS.shape[0] else req
        else:
            new = 2.0 * fwork[k.EST_CUR, j]
        fwork[k.EST_CUR, j] = min(new, req)
        ncorr[j] = c + 1


@jit
def _revise_predicted(now, correction, jobs, istate, iwork, fwork, pred, ncorr):
    """Correct every running job whose predicted end is <= now (as ``_kernel._revise_outlived``,
    with the correction rules instead of the outlive rules)."""
    count = 0
    while count < istate[k.RLEN] and fwork[k.EST_END, iwork[k.RUNNING, count]] <= now:
        count += 1
    if count == 0:
        return
    # the outlived jobs go to the scratch row CAND (free during a pass: the loop has read the
    # instant's finished jobs from it) rather than to a new array at every pass
    for i in range(count):
        iwork[k.CAND, i] = iwork[k.RUNNING, i]
    for i in range(count, istate[k.RLEN]):
        iwork[k.RUNNING, i - count] = iwork[k.RUNNING, i]
    istate[k.RLEN] -= count
    for i in range(count):
        j = iwork[k.CAND, i]
        _correct(j, now, False, correction, jobs, fwork, pred, ncorr)
        fwork[k.EST_END, j] = fwork[k.START, j] + fwork[k.EST_CUR, j]
        if fwork[k.EST_END, j] <= now:
            fwork[k.EST_END, j] = now + 1.0
        istate[k.RLEN] = k._running_insert(jobs, iwork, fwork, istate[k.RLEN], j)


# -- one pass -------------------------------------------------------------------------------------


@jit(inline=True)
def _start_job(j, now, how, track, jobs, user, istate, iwork, fwork, ustate, links, uhead):
    k._start(j, now, how, jobs, istate, iwork, fwork)
    if track:
        _user_started(j, now, jobs, user, ustate, links, uhead)


@jit(inline=True)
def _backfill_sjbf(now, head, shadow, extra, track, jobs, user, istate, iwork, fwork, ustate, links,
                   uhead):  # fmt: skip
    """The SJBF backfill walk over BQ with its block index: ``_kernel._backfill_indexed`` in its
    by-estimate mode, starting jobs with :func:`_start_job` (which keeps the users' running
    jobs). BQ is in nondecreasing order of the prediction at submission, which is the current
    estimate of every waiting job (only running jobs are corrected): once a candidate ends after
    the shadow time every later one does too, and only the extra processors are left for them.
    The skips change no decision (``_kernel``'s docstring)."""
    qlen = istate[k.QLEN]
    limit = istate[k.FREE]  # no candidate needing more than this many processors can start
    i = 0
    while i < qlen:
        if i % k._BLOCK == 0 and iwork[k.BQ_MIN, i // k._BLOCK] > limit:
            i += k._BLOCK
            continue
        q = iwork[k.BQ_PROCS, i]
        i += 1
        if q > limit:
            continue
        j = iwork[k.BQ, i - 1]
        if iwork[k.STATUS, j] != k.WAITING or j == head:
            continue
        if now + fwork[k.EST_CUR, j] <= shadow:
            _start_job(j, now, k.STARTED_BACKFILL, track, jobs, user, istate, iwork, fwork,
                       ustate, links, uhead)  # fmt: skip
            iwork[k.BQ_PROCS, i - 1] = k._GONE
        elif q <= extra:
            extra -= q
            _start_job(j, now, k.STARTED_BACKFILL, track, jobs, user, istate, iwork, fwork,
                       ustate, links, uhead)  # fmt: skip
            iwork[k.BQ_PROCS, i - 1] = k._GONE
        limit = istate[k.FREE]
        if now + fwork[k.EST_CUR, j] > shadow:
            # every later candidate ends after the shadow time too: only extra processors
            if extra == 0:
                return
            limit = min(limit, extra)
        if limit == 0:
            return


@jit(inline=True)
def _reservation(head_procs, classic, machine_procs, jobs, istate, iwork, fwork):
    """Shadow time (s) and extra processors for a head job needing ``head_procs``: the result of
    ``_kernel._reservation`` (the first running job, in order of predicted end, at whose end
    enough processors are free), walking the running list from the nearer end.

    A head job that waits usually needs most of the machine, and ``_kernel._reservation`` then
    walks nearly the whole running list at every pass (on CEA-Curie with NAG predictions, 120 of
    130 running jobs on average, 30 million steps). From the end: the running jobs hold
    ``machine_procs - free`` processors, so enough are free at the end of job ``idx`` when
    those of the jobs after it, ``after``, are at most ``machine_procs - head_procs``; the
    shadow job is the first such ``idx`` and ``available = machine_procs - after``. Processor
    counts are integers: both walks give the same shadow time and extra processors.
    """
    free = istate[k.FREE]
    if 2 * (head_procs - free) <= machine_procs - free:
        return k._reservation(head_procs, classic, jobs, istate, iwork, fwork)
    size = istate[k.RLEN]
    spare = machine_procs - head_procs
    after = np.int64(0)
    idx = size - 1
    while idx > 0:
        q = np.int64(jobs[k.PROCS, iwork[k.RUNNING, idx]])
        if after + q > spare:
            break
        after += q
        idx -= 1
    shadow = fwork[k.EST_END, iwork[k.RUNNING, idx]]
    available = machine_procs - after
    if classic:
        idx += 1
        while idx < size and fwork[k.EST_END, iwork[k.RUNNING, idx]] == shadow:
            available += np.int64(jobs[k.PROCS, iwork[k.RUNNING, idx]])
            idx += 1
    return shadow, available - head_procs


@jit
def _schedule(now, sjbf, classic, machine_procs, correction, track, jobs, user, istate, iwork,
              fwork, pred, ncorr, ustate, links, uhead):  # fmt: skip
    """One EASY(FCFS) pass at ``now`` on the predictions; backfill order FCFS or SJBF;
    ``machine_procs``: m, processors."""
    if istate[k.QLEN] == istate[k.DEAD] or istate[k.FREE] == 0:
        return
    # as in _kernel._schedule: no pass when no waiting job fits (corrections are applied until
    # the predicted end passes `now`, so a later pass gives the same result); with SJBF the
    # test skips the blocks of BQ whose smallest processor count exceeds the free processors
    if not k._fits_somewhere(sjbf, jobs, istate, iwork):
        return
    head = -1
    for i in range(istate[k.QLEN]):
        j = iwork[k.QUEUE, i]
        if iwork[k.STATUS, j] != k.WAITING:
            continue
        if jobs[k.PROCS, j] > istate[k.FREE]:
            head = j
            break
        _start_job(j, now, k.STARTED_HEAD, track, jobs, user, istate, iwork, fwork, ustate, links,
                   uhead)  # fmt: skip
    if head < 0 or istate[k.FREE] == 0:
        return
    _revise_predicted(now, correction, jobs, istate, iwork, fwork, pred, ncorr)
    shadow, extra = _reservation(
        np.int64(jobs[k.PROCS, head]), classic, machine_procs, jobs, istate, iwork, fwork
    )
    if np.isnan(fwork[k.RESERVED, head]):
        fwork[k.RESERVED, head] = shadow
    if sjbf:
        _backfill_sjbf(now, head, shadow, extra, track, jobs, user, istate, iwork, fwork, ustate,
                       links, uhead)  # fmt: skip
        return
    for i in range(istate[k.QLEN]):
        free = istate[k.FREE]
        if free == 0:
            return
        j = iwork[k.QUEUE, i]
        q = np.int64(jobs[k.PROCS, j])
        if iwork[k.STATUS, j] != k.WAITING or j == head or q > free:
            continue
        if now + fwork[k.EST_CUR, j] <= shadow:
            _start_job(j, now, k.STARTED_BACKFILL, track, jobs, user, istate, iwork, fwork,
                       ustate, links, uhead)  # fmt: skip
        elif q <= extra:
            extra -= q
            _start_job(j, now, k.STARTED_BACKFILL, track, jobs, user, istate, iwork, fwork,
                       ustate, links, uhead)  # fmt: skip


# -- the event loop -------------------------------------------------------------------------------


@jit
def run(jobs, user, predictor, correction, sjbf, classic, whole, loss_code, eta, lam,
        gamma_floor, istate, iwork, fwork, keys, pred, ncorr, feats, ustate, links, uhead, vec,
        acc):  # fmt: skip
    """Simulate every job to completion; return the number of event instants processed.

    At each instant: completions (in job order: each updates its user's history, is corrected
    up to its actual end, and trains the learner), then submissions (each gets its prediction),
    then one pass. ``classic``: the reservation's extra processors count every job whose
    predicted end equals the shadow time (``_kernel._reservation``); ``whole``: AVE2 and NAG
    predictions rounded down to whole seconds (``_predict``).
    """
    n = jobs.shape[1]
    # only AVE2 and NAG read the per-user history: REQUESTED and CLAIRVOYANT skip keeping it
    track = predictor != PRED_REQUESTED and predictor != PRED_CLAIRVOYANT
    # m: the free processors and those of the running jobs (none, in a fresh state)
    machine_procs = istate[k.FREE]
    for i in range(istate[k.RLEN]):
        machine_procs += np.int64(jobs[k.PROCS, iwork[k.RUNNING, i]])
    instants = 0
    while True:
        t_sub = jobs[k.SUBMIT, istate[k.NEXT_SUB]] if istate[k.NEXT_SUB] < n else np.inf
        t_end = fwork[k.END, iwork[k.HEAP, 0]] if istate[k.HLEN] > 0 else np.inf
        now = min(t_sub, t_end)
        if now == np.inf:
            return instants
        done = 0
        while istate[k.HLEN] > 0 and fwork[k.END, iwork[k.HEAP, 0]] <= now:
            j, size = k._heap_pop(iwork, fwork, istate[k.HLEN])
            istate[k.HLEN] = size
            istate[k.FREE] += np.int64(jobs[k.PROCS, j])
            istate[k.RLEN] = k._running_remove(jobs, iwork, fwork, istate[k.RLEN], j)
            # scratch: the finished jobs, kept in job order (insertion sort, usually 1 job)
            pos = done
            while pos > 0 and iwork[k.CAND, pos - 1] > j:
                iwork[k.CAND, pos] = iwork[k.CAND, pos - 1]
                pos -= 1
            iwork[k.CAND, pos] = j
            done += 1
        for i in range(done):
            j = iwork[k.CAND, i]
            # (the test of _correct's loop, inline: most jobs end within their prediction, and
            # a call passing arrays costs their reference counting)
            if fwork[k.EST_CUR, j] < jobs[k.REQ, j]:
                _correct(j, now, True, correction, jobs, fwork, pred, ncorr)
            if track:
                _user_finished(j, now, jobs, user, fwork, ustate, links, uhead)
            if predictor == PRED_NAG:
                nag_update(vec, acc, feats[j], jobs[k.RUN, j], jobs[k.PROCS, j], loss_code, eta,
                           lam, gamma_floor)  # fmt: skip
        while istate[k.NEXT_SUB] < n and jobs[k.SUBMIT, istate[k.NEXT_SUB]] <= now:
            j = istate[k.NEXT_SUB]
            if predictor == PRED_REQUESTED:  # the bounds of _predict are no-ops here
                y = jobs[k.REQ, j]
            else:
                y = _predict(j, now, predictor, whole, jobs, user, fwork, ustate, uhead, feats,
                             vec)  # fmt: skip
            pred[j] = y
            fwork[k.EST_CUR, j] = y
            size = istate[k.QLEN]
            iwork[k.QUEUE, size] = j
            if sjbf:
                # keyed by the prediction at submission (keys[B_BASE] is ``pred``), which never
                # changes: EST_CUR of the started (dead) entries still in BQ may have been
                # corrected since; BQ_PROCS and BQ_MIN kept beside it
                k._index_insert(jobs, iwork, size, j, keys)
            istate[k.QLEN] = size + 1
            istate[k.NEXT_SUB] = j + 1
        _schedule(now, sjbf, classic, machine_procs, correction, track, jobs, user, istate,
                  iwork, fwork, pred, ncorr, ustate, links, uhead)  # fmt: skip
        if istate[k.DEAD] > k._DEAD_SLACK + (istate[k.QLEN] - istate[k.DEAD]) // 4:
            k._compact(iwork, istate, False, sjbf)
            if sjbf:
                k._index_rebuild(jobs, iwork, istate)
        instants += 1
