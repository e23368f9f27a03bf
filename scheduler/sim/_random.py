"""The compiled kernels' random generator (private): SplitMix64 and the draws built on it.

SplitMix64 (Steele, Lea & Flood 2014: a 64-bit counter advanced by the golden-ratio constant,
plus a finaliser; passes BigCrush) is the one generator of the kernels that draw: the trials of
the learned-priority study (:mod:`scheduler.sim._trials_kernel`: random orders) and the
memory-aware cluster (:mod:`scheduler.sim._memory_kernel`: the perceptron's exploration, the
instants of failures). The stream depends on the seed only, not on numba's or NumPy's
generators, so a seed gives the same draws on every machine and numba version, and the
pure-Python copies of the tests (``tests/support/trials.py``, ``tests/support/memory.py``)
reproduce it.

State: a uint64, the counter; every function takes it and returns the new one with the draw
(numba keeps the arithmetic modulo 2**64 because every constant is a uint64).
:func:`draw_uniform` keeps the state in a one-element uint64 array instead, for loops that pass
it down through many helpers.
"""

from __future__ import annotations

import numpy as np

from scheduler.core.compile import jit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S11 = np.uint64(11)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_MASK32 = (1 << 32) - 1
_TWO32 = 1 << 32
_TWO_M53 = 2.0**-53


@jit
def splitmix64(state):
    """One SplitMix64 step: ``(new state, 64-bit output)``, both uint64."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return state, z ^ (z >> _S31)


@jit
def below(state, k):
    """An unbiased integer in ``0..k-1`` (1 <= k <= 2**31): ``(new state, value)``.

    Lemire's method on 32-bit draws: ``m = r * k`` with ``r`` the output's top 32 bits; the
    value is ``m >> 32``, and a draw whose low half falls below ``2**32 mod k`` is rejected so
    that every value has exactly ``floor(2**32 / k)`` preimages.
    """
    state, z = splitmix64(state)
    m = np.int64(z >> _S32) * k
    low = m & _MASK32
    if low < k:
        threshold = (_TWO32 - k) % k
        while low < threshold:
            state, z = splitmix64(state)
            m = np.int64(z >> _S32) * k
            low = m & _MASK32
    return state, m >> 32


@jit
def draw_uniform(rng):
    """The next draw in [0, 1) from the top 53 bits of an output (a multiple of 2**-53);
    ``rng[0]`` is the state (uint64), advanced in place."""
    state, z = splitmix64(rng[0])
    rng[0] = state
    return float(z >> _S11) * _TWO_M53
