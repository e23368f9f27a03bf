"""Parts of the memory-aware kernel (``scheduler/sim/_memory_kernel.py``) against brute force.

- the queue index's searches: ``_seg_next`` (the next job narrow enough) and
  ``_seg_next_shadow`` (the next job narrow enough for the head's extra nodes, or that fits and
  ends by the shadow time: a pruned depth-first search whose two minima may come from different
  jobs) against a walk over every position, on trees built by ``_seg_build`` and updated by
  ``_seg_set``;
- ``_draw_regime`` (the perceptron's "no candidate draws" / "every candidate draws" bounds)
  against the kernel's own decision arithmetic (``_features``, ``_dot``, ``_capacity``) for
  every width and request the bounds cover.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.sim import _memory_kernel as mk

SLOTS = 37  # queue positions (not a power of two: the trees pad to 64)


@st.composite
def queues(draw):
    """(queue buffer, widths, estimates, bins, K): live jobs at random positions in K bins."""
    k = draw(st.integers(1, 3))
    n = draw(st.integers(1, SLOTS))
    widths = np.array(draw(st.lists(st.integers(1, 8), min_size=n, max_size=n)), dtype=np.int64)
    est = np.array(draw(st.lists(st.sampled_from((1.0, 5.0, 10.0, 50.0, 100.0)), min_size=n,
                                 max_size=n)))  # fmt: skip
    cls = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    queue = np.full(SLOTS, -1, dtype=np.int64)
    live = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    positions = sorted(draw(st.permutations(range(SLOTS)))[:n])
    for j, (pos, alive) in enumerate(zip(positions, live, strict=True)):
        if alive:
            queue[pos] = j
    return queue, widths, est, cls, k


def _trees(queue, widths, est, cls, k):
    half = 64
    seg = np.zeros((k, 2 * half), dtype=np.int64)
    eseg = np.zeros((k, 2 * half))
    mk._seg_build(seg, eseg, queue, len(queue), widths, est, cls)
    return seg, eseg


def _first(queue, widths, est, cls, c, lo, ok):
    for pos in range(lo, len(queue)):
        j = queue[pos]
        if j >= 0 and cls[j] == c and ok(widths[j], est[j]):
            return pos
    return -1


@settings(max_examples=300, deadline=None)
@given(
    queues(),
    st.integers(0, SLOTS),
    st.integers(0, 9),
    st.integers(0, 9),
    st.sampled_from((0.0, 3.0, 7.5)),
    st.sampled_from((0.0, 6.0, 9.0, 60.0, math.inf)),
)
def test_searches_are_a_walk_over_the_queue(queue_case, lo, fit, narrow, now, shadow):
    """Both searches return the first live position >= lo of the bin whose job satisfies their
    test, as a walk over every position does; after removing that job (``_seg_set``) too."""
    queue, widths, est, cls, k = queue_case
    narrow = min(narrow, fit)
    seg, eseg = _trees(queue, widths, est, cls, k)
    for _ in range(3):
        for c in range(k):
            want = _first(queue, widths, est, cls, c, lo, lambda w, e: w <= fit)
            assert mk._seg_next(seg[c], lo, fit) == want

            def starts(w, e):
                return w <= narrow or (w <= fit and now + e <= shadow)

            want = _first(queue, widths, est, cls, c, lo, starts)
            assert mk._seg_next_shadow(seg[c], eseg[c], lo, fit, narrow, now, shadow) == want
            if want >= 0:  # take it out of the queue: the next search must skip it
                mk._seg_set(seg[c], eseg[c], want, mk._NO_JOB, math.inf)
                queue[want] = -1


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(-4, 4), min_size=6, max_size=6),
    st.lists(st.integers(0, 4), min_size=2, max_size=2),
    st.integers(1, 200),
    st.sampled_from(((1.0, 4.0), (0.5, 32.0), (3.0, 3.0), (0.001, 8.0))),
    st.sampled_from((0.5, 1.716, 3.0)),
)
def test_draw_regime_bounds_every_candidate(w, free, queue_len, requests, a):
    """Two classes (4 and 8 MB, 4 nodes each). When ``_draw_regime`` says no candidate draws,
    every width up to the free nodes and every request in the trace's range (a grid with its
    ends) has E' <= E(q) in the kernel's arithmetic; when it says every one draws, E' > E(q)."""
    w = np.array(w)
    free = np.array(free, dtype=np.int64)
    class_nodes = np.array([4, 4], dtype=np.int64)
    class_mem = np.array([4.0, 8.0])
    b = 2.0 / 3.0
    lo, hi = requests
    reqs = np.unique(np.concatenate([np.linspace(lo, hi, 9), [lo, hi]]))
    x = np.empty(6)
    pure, drawing = mk._draw_regime(w, x, queue_len, free, class_nodes, class_mem,
                                    math.log1p(lo), math.log1p(hi), a, b)  # fmt: skip
    assert not (pure and drawing)
    total = int(free.sum())
    if total == 0:
        assert not pure and not drawing
        return
    procs = np.arange(1, total + 1, dtype=np.int64)
    for q in procs:
        for r in reqs:
            req = np.full(total + 1, r)
            mk._features(q - 1, queue_len, procs, req, free, class_nodes, x)
            estimate = a * 8.0 * math.tanh(b * mk._dot(w, x))
            capacity = mk._capacity(q, free, class_mem)
            if pure:
                assert estimate <= capacity
            if drawing:
                assert estimate > capacity
