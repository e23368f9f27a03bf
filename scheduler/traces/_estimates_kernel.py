"""Compiled kernel of the estimate assignment (private; the public API is :mod:`.estimates`)."""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit


@jit
def assign_sorted(runs_desc: np.ndarray, estimates_desc: np.ndarray, uniforms: np.ndarray):
    """Give each job an estimate drawn uniformly from the unused estimates >= its run time.

    Parameters
    ----------
    runs_desc
        Run times, seconds, sorted non-increasing (int64).
    estimates_desc
        As many estimates, seconds, sorted non-increasing (int64), dominating the run times
        position by position (``estimates_desc[i] >= runs_desc[i]``: the caller checks).
    uniforms
        One uniform [0, 1) number per job (float64): the random choices.

    Returns
    -------
    numpy.ndarray of int64
        The estimate of job ``i`` of ``runs_desc``; always ``>= runs_desc[i]``.

    Notes
    -----
    Jobs are served from the longest down. Before job ``j`` is served, positions ``j..`` of the
    working copy hold the unused estimates and positions ``j..hi`` exactly those ``>= runs[j]``:
    positions up to the previous ``hi`` hold values ``>=`` the previous (longer) run, and the
    rest is still sorted, so extending ``hi`` while the next value is ``>= runs[j]`` finds them
    all. The chosen estimate is swapped to position ``j``; the estimate it displaces lands
    inside ``j+1..hi`` and is ``>=`` every later run, which keeps the statement true.
    """
    n = runs_desc.size
    pool = estimates_desc.copy()
    chosen = np.empty(n, dtype=np.int64)
    hi = 0
    for j in range(n):
        if hi < j:
            hi = j
        while hi < n - 1 and runs_desc[j] <= pool[hi + 1]:
            hi += 1
        width = hi - j + 1
        k = j + min(int(uniforms[j] * width), width - 1)
        chosen[j] = pool[k]
        pool[k] = pool[j]
        pool[j] = chosen[j]
    return chosen
