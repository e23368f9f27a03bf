"""Parts of the compiled kernel (``scheduler/sim/_kernel.py``) against NumPy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.sim import _kernel as kernel

KEYS = st.one_of(
    st.sampled_from([0.0, 1.0, -2.5, np.inf, -np.inf, np.nan]), st.floats(-5, 5, allow_nan=False)
)


@settings(max_examples=300, deadline=None)
@given(keys=st.lists(KEYS, max_size=2 * kernel._INSERTION_SORT_MAX + 3))
def test_sort_candidates_is_numpys_stable_sort(keys: list[float]) -> None:
    """Insertion sort (few candidates) or mergesort (many): the order of NumPy's stable sort,
    ties in collection order and NaN last, whichever way is taken."""
    count = len(keys)
    n = count + 2
    iwork = np.zeros((kernel.IW_ROWS, n), dtype=np.int64)
    fwork = np.zeros((kernel.FW_ROWS, n))
    iwork[kernel.CAND, :count] = np.arange(count) + 100
    fwork[kernel.KEY, :count] = keys
    want = np.arange(count)[np.argsort(np.array(keys), kind="stable")] + 100
    kernel._sort_candidates(count, iwork, fwork)
    np.testing.assert_array_equal(iwork[kernel.CAND, :count], want)
