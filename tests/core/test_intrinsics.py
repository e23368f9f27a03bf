"""``scheduler.core.intrinsics``: the memmove shifts of the kernels' sorted lists."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.intrinsics import shift_left, shift_right


@st.composite
def cases(draw) -> tuple[np.ndarray, int, int, int]:
    """A C-contiguous 2-D array (int64 or float64), a row, and 0 <= lo <= size < columns."""
    rows, columns = draw(st.integers(1, 4)), draw(st.integers(1, 70))
    dtype = draw(st.sampled_from([np.int64, np.float64]))
    array = np.arange(rows * columns, dtype=dtype).reshape(rows, columns) * 3 + 1
    size = draw(st.integers(0, columns - 1))
    return array, draw(st.integers(0, rows - 1)), draw(st.integers(0, size)), size


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_shift_right_is_the_overlapping_slice_copy(case) -> None:
    array, row, lo, size = case
    want = array.copy()
    want[row, lo + 1 : size + 1] = array[row, lo:size].copy()
    shift_right(array, row, lo, size)
    np.testing.assert_array_equal(array, want)  # other rows and entries untouched


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_shift_left_is_the_overlapping_slice_copy(case) -> None:
    array, row, lo, size = case
    size = max(size, lo + 1) if lo + 1 <= array.shape[1] else size
    want = array.copy()
    want[row, lo : size - 1] = array[row, lo + 1 : size].copy()
    shift_left(array, row, lo, size)
    np.testing.assert_array_equal(array, want)


def test_shifts_by_hand() -> None:
    array = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], dtype=np.int64)
    shift_right(array, 1, 1, 4)  # [7, 8, 9] moves one right, over 10
    assert array.tolist() == [[1, 2, 3, 4, 5], [6, 7, 7, 8, 9]]
    shift_left(array, 0, 0, 5)  # [2, 3, 4, 5] moves one left
    assert array.tolist() == [[2, 3, 4, 5, 5], [6, 7, 7, 8, 9]]
    shift_right(array, 0, 2, 2)  # nothing to move
    shift_left(array, 0, 4, 5)
    assert array.tolist() == [[2, 3, 4, 5, 5], [6, 7, 7, 8, 9]]
