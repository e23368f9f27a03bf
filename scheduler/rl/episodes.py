"""The job sequences an episode schedules: RLScheduler's protocol over a log.

An episode is a sequence of consecutive jobs of a log (in job-number order), scheduled from an
empty machine from the first job's submit time. :class:`EpisodeSource` holds the log's jobs as
RLScheduler reads them (:func:`scheduler.sim.rlscheduler.rls_workload`) and draws sequence
starts as its code does: ``[length, limit - length - 1)``, ``limit`` the number of jobs or its
``batch_job_slice`` (the archive logs' evaluations used the first 10,000 jobs).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from scheduler.core.errors import ConfigurationError
from scheduler.sim.rlscheduler import (
    RlsWorkload,
    run_rls_sequence,
    sequence_bsld,
    sequence_starts,
)

__all__ = ["EpisodeSource"]


@dataclass(frozen=True)
class EpisodeSource:
    """Where episodes come from: a log's jobs, a sequence length and the jobs they are drawn
    from (the first ``job_slice`` jobs; ``None``: all)."""

    workload: RlsWorkload
    length: int
    job_slice: int | None = None
    #: Jobs no drawn sequence may include: ``(first, end)`` index ranges (held-out sequences).
    excluded: tuple[tuple[int, int], ...] = ()
    #: RLScheduler's trajectory filtering: draw only sequences whose mean bounded slowdown
    #: under its SJF heuristic lies strictly between these bounds (None: every sequence).
    sjf_range: tuple[float, float] | None = None
    #: Backfilling in that SJF schedule (the environment's setting).
    sjf_backfill: bool = False

    def __post_init__(self) -> None:
        limit = self.limit
        if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length < 1:
            raise ConfigurationError(
                f"sequence length must be an integer >= 1, got {self.length!r}"
            )
        if limit > self.workload.size or limit - self.length - 1 <= self.length:
            raise ConfigurationError(
                f"{self.workload.name or 'the log'}: sequences of {self.length} jobs cannot be "
                f"drawn from the first {limit} of its {self.workload.size} jobs (starts are drawn "
                "in [length, limit - length - 1))"
            )

    @property
    def limit(self) -> int:
        """Jobs the starts are drawn from."""
        return int(self.job_slice or self.workload.size)

    def draw_start(self, rng: np.random.Generator) -> int:
        """A sequence start drawn uniformly in ``[length, limit - length - 1)`` among those
        whose jobs avoid :attr:`excluded` (and pass :attr:`sjf_range`)."""
        if not self.excluded and self.sjf_range is None:
            return int(rng.integers(self.length, self.limit - self.length - 1))
        allowed = self.allowed_starts
        return int(allowed[rng.integers(allowed.shape[0])])

    @cached_property
    def allowed_starts(self) -> np.ndarray:
        """Every start a draw may give (sequences overlapping no excluded range)."""
        starts = np.arange(self.length, self.limit - self.length - 1)
        ok = np.ones(starts.shape[0], dtype=bool)
        for first, end in self.excluded:
            ok &= (starts + self.length <= first) | (starts >= end)
        starts = starts[ok]
        if self.sjf_range is not None and starts.size:
            low, high = self.sjf_range
            scores = np.array([self.sjf_score(int(start)) for start in starts])
            starts = starts[(scores > low) & (scores < high)]
        if not starts.size:
            raise ConfigurationError(
                f"{self.workload.name or 'the log'}: no sequence of {self.length} jobs in the "
                f"first {self.limit} jobs avoids the {len(self.excluded)} held-out sequences"
                + (f" with an SJF score in {self.sjf_range}" if self.sjf_range else "")
            )
        return starts

    def sjf_score(self, start: int) -> float:
        """The mean bounded slowdown of the sequence from ``start`` under RLScheduler's SJF in
        its scheduler (its trajectory filter's score)."""
        starts = run_rls_sequence(self.workload, start, self.length, "SJF", self.sjf_backfill)
        return sequence_bsld(self.workload, start, starts)

    def test_starts(self, count: int, seed: int) -> np.ndarray:
        """The starts of RLScheduler's ``count`` test sequences under ``seed`` (its
        ``compare-pick-jobs.py``)."""
        return sequence_starts(self.workload.size, self.length, count, seed, self.job_slice)

    def check_start(self, start: int) -> int:
        """``start`` as a valid first job of a sequence (else a ConfigurationError)."""
        if isinstance(start, bool) or not isinstance(start, int | np.integer) or not (
            0 <= start <= self.workload.size - self.length
        ):
            raise ConfigurationError(
                f"sequence start must be an integer in 0..{self.workload.size - self.length}, "
                f"got {start!r}"
            )
        return int(start)
