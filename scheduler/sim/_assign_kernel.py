"""Compiled kernel of the processor assignment (private; the public API is :mod:`.assignment`).

Arrays in, arrays out. Processors are numbered ``0 .. total-1``; pool ``p`` owns
``offset[p] .. offset[p] + size[p] - 1``. A set of processors is a list of half-open intervals
``[lo, hi)``.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit

#: Allocation rules (the index is the kernel's ``rule`` argument).
BEST_FIT = 0
FIRST_FIT = 1


@jit
def _remove(lo: np.ndarray, hi: np.ndarray, n: int, k: int) -> int:
    """Delete free interval ``k`` of the first ``n``; returns the new count."""
    for i in range(k, n - 1):
        lo[i] = lo[i + 1]
        hi[i] = hi[i + 1]
    return n - 1


@jit
def _remove_front(lo: np.ndarray, hi: np.ndarray, n: int, k: int) -> int:
    """Delete the first ``k`` free intervals of the first ``n``; returns the new count."""
    for i in range(k, n):
        lo[i - k] = lo[i]
        hi[i - k] = hi[i]
    return n - k


@jit
def _release(lo: np.ndarray, hi: np.ndarray, n: int, a: int, b: int) -> int:
    """Give ``[a, b)`` back to the sorted, disjoint, non-adjacent free list of ``n`` intervals,
    merging it with its neighbours; returns the new count."""
    # first interval starting after a
    left, right = 0, n
    while left < right:
        mid = (left + right) // 2
        if lo[mid] < a:
            left = mid + 1
        else:
            right = mid
    k = left
    join_left = k > 0 and hi[k - 1] == a
    join_right = k < n and lo[k] == b
    if join_left and join_right:
        hi[k - 1] = hi[k]
        return _remove(lo, hi, n, k)
    if join_left:
        hi[k - 1] = b
        return n
    if join_right:
        lo[k] = a
        return n
    for i in range(n, k, -1):
        lo[i] = lo[i - 1]
        hi[i] = hi[i - 1]
    lo[k] = a
    hi[k] = b
    return n + 1


@jit
def assign_kernel(
    start: np.ndarray,
    end: np.ndarray,
    count: np.ndarray,
    pool: np.ndarray,
    by_start: np.ndarray,
    offset: np.ndarray,
    size: np.ndarray,
    rule: int,
):
    """Give every piece ``count[i]`` processors of pool ``pool[i]`` from ``start[i]`` to
    ``end[i]`` (s), never one processor to two pieces whose times overlap.

    Pieces are served in the order ``by_start`` (by start time; at one instant the caller puts
    pieces of zero length first), each after every piece ending at or before its start has
    given its processors back. A piece takes, under ``BEST_FIT``, the smallest free block of
    its pool that holds it (the lowest-numbered among equals) and, under ``FIRST_FIT``, the
    lowest-numbered one; its lowest processors. When no free block holds it, it takes the
    lowest-numbered free processors (several intervals). A piece with ``end <= start`` takes free
    processors the same way and gives them back at once.

    Returns
    -------
    tuple
        ``(first, lo, hi, failed)``: piece ``i`` holds the intervals ``lo[first[i]:first[i+1]]``
        … ``hi[...]`` (half-open, ascending); ``failed`` is the index of the first piece that
        found fewer free processors than it needs (the input over-commits its pool), else -1.
    """
    n = start.size
    n_pools = size.size
    cap = 1
    for p in range(n_pools):
        cap = max(cap, size[p] // 2 + 2)
    free_lo = np.empty((n_pools, cap), dtype=np.int64)
    free_hi = np.empty((n_pools, cap), dtype=np.int64)
    free_n = np.zeros(n_pools, dtype=np.int64)
    for p in range(n_pools):
        if size[p] > 0:
            free_lo[p, 0] = offset[p]
            free_hi[p, 0] = offset[p] + size[p]
            free_n[p] = 1
    by_end = np.argsort(end, kind="mergesort")
    out_cap = 2 * n + 16
    out_lo = np.empty(out_cap, dtype=np.int64)
    out_hi = np.empty(out_cap, dtype=np.int64)
    piece_first = np.empty(n, dtype=np.int64)
    piece_last = np.empty(n, dtype=np.int64)
    used = 0
    e = 0
    for s in range(n):
        i = by_start[s]
        t = start[i]
        while e < n and end[by_end[e]] <= t:
            j = by_end[e]
            e += 1
            if end[j] <= start[j] or start[j] > t:
                continue  # held nothing (zero length) or not started yet: nothing to give back
            p = pool[j]
            for k in range(piece_first[j], piece_last[j]):
                free_n[p] = _release(free_lo[p], free_hi[p], free_n[p], out_lo[k], out_hi[k])
        p = pool[i]
        need = count[i]
        lo = free_lo[p]
        hi = free_hi[p]
        nf = free_n[p]
        if used + nf + 1 > out_cap:
            out_cap = 2 * out_cap + nf + 1
            grown_lo = np.empty(out_cap, dtype=np.int64)
            grown_hi = np.empty(out_cap, dtype=np.int64)
            grown_lo[:used] = out_lo[:used]
            grown_hi[:used] = out_hi[:used]
            out_lo = grown_lo
            out_hi = grown_hi
        piece_first[i] = used
        if need <= 0:
            piece_last[i] = used
            continue
        chosen = -1
        for k in range(nf):
            width = hi[k] - lo[k]
            if width >= need:
                if rule == FIRST_FIT:
                    chosen = k
                    break
                if chosen < 0 or width < hi[chosen] - lo[chosen]:
                    chosen = k
                    if width == need:
                        break
        if chosen >= 0:
            out_lo[used] = lo[chosen]
            out_hi[used] = lo[chosen] + need
            used += 1
            if end[i] > start[i]:
                if hi[chosen] - lo[chosen] == need:
                    nf = _remove(lo, hi, nf, chosen)
                else:
                    lo[chosen] += need
        else:
            total = 0
            for k in range(nf):
                total += hi[k] - lo[k]
            if total < need:
                return piece_first, out_lo[:used], out_hi[:used], i
            k = 0
            while need > 0:
                take = min(need, hi[k] - lo[k])
                out_lo[used] = lo[k]
                out_hi[used] = lo[k] + take
                used += 1
                need -= take
                k += 1
            if end[i] > start[i]:
                # the taken intervals are the first ones: all of them but maybe the last whole
                last = k - 1
                if out_hi[used - 1] == hi[last]:
                    nf = _remove_front(lo, hi, nf, k)
                else:
                    lo[last] = out_hi[used - 1]
                    nf = _remove_front(lo, hi, nf, last)
        free_n[p] = nf
        piece_last[i] = used
    first = np.empty(n + 1, dtype=np.int64)
    # pieces were served in start order: lay the intervals out in piece order
    total_out = 0
    for i in range(n):
        first[i] = total_out
        total_out += piece_last[i] - piece_first[i]
    first[n] = total_out
    lo_out = np.empty(total_out, dtype=np.int64)
    hi_out = np.empty(total_out, dtype=np.int64)
    for i in range(n):
        k0 = piece_first[i]
        for k in range(piece_last[i] - k0):
            lo_out[first[i] + k] = out_lo[k0 + k]
            hi_out[first[i] + k] = out_hi[k0 + k]
    return first, lo_out, hi_out, -1
