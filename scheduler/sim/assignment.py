"""Which processors each job ran on: an assignment pass over a finished schedule.

schedlab's engines count processors; a Gantt chart and Batsim's ``allocated_resources`` need
*which* processors. :func:`assign_processors` gives them after the run, from the start and end
times alone (compiled kernel :mod:`._assign_kernel`), so that no engine pays for it:

- runs are served in start order, each after the runs that ended at or before its start have
  given their processors back (an engine starts a job at the instant another ends);
- a run takes one contiguous block when one is free: under ``"best-fit"`` (the default) the
  smallest free block that holds it, under ``"first-fit"`` the lowest-numbered one, and in it
  its lowest-numbered processors;
- when no free block holds it (the engines count processors, so free processors may be
  scattered), it takes the lowest-numbered free processors, in several intervals;
- a run of zero length takes free processors the same way and gives them back at once; it is
  served before the runs that start at its instant (when the most processors are free).

Any such assignment is valid: no processor serves two runs whose ``[start, end)`` overlap, and
each run gets exactly its processor count. A pool (the redirection's dedicated pool, a memory
class) owns its own range of processor numbers, ``offset .. offset + size - 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim import _assign_kernel

__all__ = ["ASSIGNMENT_RULES", "Assignment", "AssignmentRule", "assign_processors"]

AssignmentRule = Literal["best-fit", "first-fit"]

#: The allocation rules of :func:`assign_processors`, in the kernel's numbering.
ASSIGNMENT_RULES: dict[str, int] = {
    "best-fit": _assign_kernel.BEST_FIT,
    "first-fit": _assign_kernel.FIRST_FIT,
}


@dataclass(frozen=True)
class Assignment:
    """The processors of each run, as half-open intervals of processor numbers.

    Run ``i`` holds ``[lo[k], hi[k])`` for ``k`` in ``first[i] .. first[i+1]-1``, ascending and
    disjoint; ``first`` has one entry more than there are runs.
    """

    first: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def __len__(self) -> int:
        return self.first.size - 1

    def intervals(self, i: int) -> list[tuple[int, int]]:
        """Run ``i``'s processors as half-open ``(lo, hi)`` intervals."""
        k0, k1 = int(self.first[i]), int(self.first[i + 1])
        return [(int(a), int(b)) for a, b in zip(self.lo[k0:k1], self.hi[k0:k1], strict=True)]

    @property
    def pieces(self) -> np.ndarray:
        """Number of intervals of each run (1: one contiguous block; 0: no processor)."""
        return np.diff(self.first)

    def run_of_interval(self) -> np.ndarray:
        """For each interval, the index of its run."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.pieces)

    def procset_text(self) -> pl.Series:
        """Each run's processors in the interval-set notation of Batsim and evalys (procset):
        inclusive ranges separated by spaces, ``"0-3 8 10-11"``; ``""`` for no processor."""
        lo, hi = self.lo, self.hi - 1
        parts = pl.DataFrame(
            {
                "run": self.run_of_interval(),
                "text": pl.Series(lo).cast(pl.String)
                + pl.Series(np.where(hi > lo, "-", "")).cast(pl.String)
                + pl.Series(np.where(hi > lo, hi.astype(str), "")).cast(pl.String),
            }
        )
        joined = parts.group_by("run", maintain_order=True).agg(pl.col("text").str.join(" "))
        text = np.full(len(self), "", dtype=object)
        text[joined["run"].to_numpy()] = joined["text"].to_numpy()
        return pl.Series("allocated_resources", text, dtype=pl.String)


def assign_processors(
    start_s: np.ndarray | Sequence[float],
    end_s: np.ndarray | Sequence[float],
    procs: np.ndarray | Sequence[int],
    pool_procs: int | Sequence[int],
    *,
    pool: np.ndarray | Sequence[int] | None = None,
    rule: AssignmentRule = "best-fit",
) -> Assignment:
    """Assign processor numbers to the runs of a finished schedule (see the module's rules).

    Parameters
    ----------
    start_s, end_s
        Start and end of each run, seconds (``end_s >= start_s``).
    procs
        Processors of each run (integers >= 0).
    pool_procs
        Processors of each pool (one number: one pool, the whole machine); pool ``p`` owns
        the numbers from ``sum(pool_procs[:p])``.
    pool
        Pool index of each run (default: all in pool 0).
    rule
        ``"best-fit"`` or ``"first-fit"``: which free block a run takes (:data:`ASSIGNMENT_RULES`).

    Returns
    -------
    Assignment
        The runs' intervals, in the runs' order.

    Raises
    ------
    ConfigurationError
        The arrays differ in length, a value is out of range, or the runs over-commit a pool at
        some instant (the error names the run, its time and its pool).
    """
    if rule not in ASSIGNMENT_RULES:
        raise ConfigurationError(f"rule must be one of {', '.join(ASSIGNMENT_RULES)}, got {rule!r}")
    start = np.ascontiguousarray(start_s, dtype=np.float64)
    end = np.ascontiguousarray(end_s, dtype=np.float64)
    count = np.ascontiguousarray(procs, dtype=np.int64)
    sizes = np.atleast_1d(np.asarray(pool_procs, dtype=np.int64))
    pools = (
        np.zeros(start.size, dtype=np.int64)
        if pool is None
        else np.ascontiguousarray(pool, dtype=np.int64)
    )
    if not (start.shape == end.shape == count.shape == pools.shape) or start.ndim != 1:
        raise ConfigurationError(
            f"start_s, end_s, procs and pool must be 1-D of one length, got {start.shape}, "
            f"{end.shape}, {count.shape}, {pools.shape}"
        )
    if (sizes < 0).any():
        raise ConfigurationError(f"pool_procs must be >= 0, got {sizes.tolist()}")
    checks = (
        (~np.isfinite(start) | ~np.isfinite(end), "a start or end time is not finite"),
        (end < start, "a run ends before it starts"),
        (count < 0, "a processor count is negative"),
        ((pools < 0) | (pools >= sizes.size), f"a pool index is outside 0..{sizes.size - 1}"),
    )
    for bad, what in checks:
        if bad.any():
            row = int(np.argmax(bad))
            raise ConfigurationError(
                f"{what}: run {row} (start {start[row]:g} s, end {end[row]:g} s, "
                f"{count[row]} processors, pool {pools[row]})"
            )
    too_big = count > sizes[pools]
    if too_big.any():
        row = int(np.argmax(too_big))
        raise ConfigurationError(
            f"run {row} needs {count[row]} processors, more than its pool {pools[row]} has "
            f"({sizes[pools[row]]})"
        )
    offset = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    # by start; at one instant the runs of zero length first, when the most is free
    by_start = np.lexsort((end > start, start)).astype(np.int64)
    first, lo, hi, failed = _assign_kernel.assign_kernel(
        start, end, count, pools, by_start, offset, sizes, ASSIGNMENT_RULES[rule]
    )
    if failed >= 0:
        raise ConfigurationError(
            f"the runs over-commit pool {pools[failed]} ({sizes[pools[failed]]} processors): "
            f"run {failed} starts at {start[failed]:g} s needing {count[failed]} processors "
            "and fewer are free then"
        )
    return Assignment(first=first, lo=lo, hi=hi)
