"""Low-level operations for the compiled kernels that numba does not offer (numba intrinsics).

``shift_right(array, row, lo, size)`` moves ``array[row, lo:size]`` one position to the right
(to ``lo + 1 : size + 1``) with one ``memmove``: the sorted lists of the simulator insert by
shifting, and numba compiles the equivalent element loop (``for i in range(size, lo, -1)``)
to scalar code about ten times slower on hundreds of entries. ``shift_left`` is the reverse
(``array[row, lo + 1 : size]`` to ``lo : size - 1``).

The array must be 2-D and C-contiguous (every kernel state array is made by ``np.zeros`` or
``np.empty`` or copied with ``.copy()``) with ``0 <= lo <= size < array.shape[1]`` for
``shift_right`` and ``0 <= lo < size <= array.shape[1]`` for ``shift_left``; nothing is checked.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from scheduler.core.compile import jit

__all__ = ["shift_left", "shift_right"]


@intrinsic
def _memmove(typingctx, dst, src, nbytes):  # type: ignore[no-untyped-def]
    """``memmove(dst, src, nbytes)`` on raw addresses (integers), as LLVM's intrinsic."""
    sig = types.void(types.uintp, types.uintp, types.intp)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        d, s, n = args
        byte_ptr = ir.IntType(8).as_pointer()
        one = ir.Constant(ir.IntType(64), 1)
        cgutils.raw_memmove(builder, builder.inttoptr(d, byte_ptr),
                            builder.inttoptr(s, byte_ptr), n, one)  # fmt: skip
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _data_address(typingctx, array):  # type: ignore[no-untyped-def]
    """The address of ``array``'s first element, read from the array structure itself:
    ``array.ctypes.data`` builds a ctypes object that holds a reference to the array, and the
    atomic reference count updates around it (an NRT call each) cost more than the move."""
    sig = types.uintp(array)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, context.get_value_type(types.uintp))

    return sig, codegen


@jit
def shift_right(array, row, lo, size):  # type: ignore[no-untyped-def]
    """``array[row, lo + 1 : size + 1] = array[row, lo:size]`` (overlapping, one memmove)."""
    if size > lo:
        item = array.itemsize
        at = _data_address(array) + (row * array.shape[1] + lo) * item
        _memmove(at + item, at, (size - lo) * item)


@jit
def shift_left(array, row, lo, size):  # type: ignore[no-untyped-def]
    """``array[row, lo : size - 1] = array[row, lo + 1 : size]`` (overlapping, one memmove)."""
    if size > lo + 1:
        item = array.itemsize
        at = _data_address(array) + (row * array.shape[1] + lo) * item
        _memmove(at, at + item, (size - lo - 1) * item)
