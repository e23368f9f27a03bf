"""Compiled EASY loop with run-time predictions learned online, corrections and SJBF (private).

The engine variant, a sibling of :mod:`scheduler.sim._kernel`: it shares that
module's state layout (``jobs``, ``istate``, ``iwork``, ``fwork``) and reuses its helpers (the
completion heap, the running list sorted by estimated end, ``_start``, ``_reservation``,
``_sorted_insert``, ``_compact``). What differs lives here: the estimate the scheduler sees
(``fwork[EST_CUR]``) is a *prediction* made at the job's submission from what the simulated
scheduler knows then, a running job that outlives it is *corrected*, and backfill candidates are
tried in FCFS order (EASY) or by increasing prediction (SJBF). The primary order is FCFS, with
no threshold. The semantics are in ``docs/simulator.md`` ("Run-time prediction inside the
simulation"); ``scheduler/sim/prediction.py`` validates inputs and prepares the arrays.

Extra arrays (``n`` jobs in (submit time, job number) order, ``u`` users numbered 0..u-1):

``user``   int64 (n,)           the job's user index.
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


@jit
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


@jit
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


@jit
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


@jit
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


@jit
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
    outlived = iwork[k.RUNNING, :count].copy()
    for i in range(count, istate[k.RLEN]):
        iwork[k.RUNNING, i - count] = iwork[k.RUNNING, i]
    istate[k.RLEN] -= count
    for j in outlived:
        _correct(j, now, False, correction, jobs, fwork, pred, ncorr)
        fwork[k.EST_END, j] = fwork[k.START, j] + fwork[k.EST_CUR, j]
        if fwork[k.EST_END, j] <= now:
            fwork[k.EST_END, j] = now + 1.0
        istate[k.RLEN] = k._running_insert(jobs, iwork, fwork, istate[k.RLEN], j)


# -- one pass -------------------------------------------------------------------------------------


@jit
def _start_job(j, now, how, track, jobs, user, istate, iwork, fwork, ustate, links, uhead):
    k._start(j, now, how, jobs, istate, iwork, fwork)
    if track:
        _user_started(j, now, jobs, user, ustate, links, uhead)


@jit
def _schedule(now, sjbf, classic, correction, track, jobs, user, istate, iwork, fwork, pred,
              ncorr, ustate, links, uhead):  # fmt: skip
    """One EASY(FCFS) pass at ``now`` on the predictions; backfill order FCFS or SJBF."""
    if istate[k.QLEN] == istate[k.DEAD] or istate[k.FREE] == 0:
        return
    # as in _kernel._schedule: no pass when no waiting job fits (corrections are applied until
    # the predicted end passes `now`, so a later pass gives the same result)
    free = istate[k.FREE]
    fits = False
    for i in range(istate[k.QLEN]):
        j = iwork[k.QUEUE, i]
        if iwork[k.STATUS, j] == k.WAITING and jobs[k.PROCS, j] <= free:
            fits = True
            break
    if not fits:
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
    shadow, extra = k._reservation(
        np.int64(jobs[k.PROCS, head]), classic, jobs, istate, iwork, fwork
    )
    if np.isnan(fwork[k.RESERVED, head]):
        fwork[k.RESERVED, head] = shadow
    row = k.BQ if sjbf else k.QUEUE
    for i in range(istate[k.QLEN]):
        free = istate[k.FREE]
        if free == 0:
            return
        j = iwork[row, i]
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
        gamma_floor, istate, iwork, fwork, pred, ncorr, feats, ustate, links, uhead, vec,
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
                # keyed by the prediction at submission, which never changes: EST_CUR of the
                # started (dead) entries still in BQ may have been corrected since
                k._sorted_insert(iwork, k.BQ, size, j, pred.reshape((1, n)), 0)
            istate[k.QLEN] = size + 1
            istate[k.NEXT_SUB] = j + 1
        _schedule(now, sjbf, classic, correction, track, jobs, user, istate, iwork, fwork, pred,
                  ncorr, ustate, links, uhead)  # fmt: skip
        if istate[k.DEAD] > k._DEAD_SLACK + (istate[k.QLEN] - istate[k.DEAD]) // 4:
            k._compact(iwork, istate, False, sjbf)
        instants += 1
