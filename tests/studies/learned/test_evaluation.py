"""The evaluation protocol: sequences (non-overlapping, 15 days, 16 state jobs) and the
per-sequence AVEbsld in the three modes, on hand-made jobs and on a real log."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.errors import ConfigurationError
from scheduler.studies.learned.evaluation import (
    DAY_S,
    EvaluationSequence,
    evaluation_jobs,
    evaluation_sequences,
    sequence_bsld,
)
from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import read_swf


def test_sequences_by_hand() -> None:
    # jobs every 4 days: a sequence = 2 state jobs + the jobs within 15 days of its first job
    submit = np.arange(0, 100) * 4 * DAY_S
    seqs = evaluation_sequences(submit, n_state=2, days=15.0)
    # first sequence: jobs 0..3 (0, 4, 8, 12 days are within 15 days of day 0), next starts at 4
    assert (seqs[0].first, seqs[0].stop) == (0, 4)
    assert (seqs[1].first, seqs[1].stop) == (4, 8)
    assert all(s.jobs == 4 for s in seqs)
    # the last complete sequence leaves fewer than a horizon of jobs: 96..99 is dropped
    assert seqs[-1].stop <= 100 and len(seqs) == 24


def test_state_jobs_past_the_horizon_still_count() -> None:
    """A sequence always holds its state jobs, even when they span more than the horizon."""
    submit = np.array([0.0, 20.0, 40.0, 41.0, 42.0, 100.0, 200.0]) * DAY_S
    seqs = evaluation_sequences(submit, n_state=3, days=15.0)
    # first = 0: only job 0 is within 15 days, so the sequence would be its 3 state jobs and no
    # queue job: none; first = 3 (day 41): state jobs 3, 4, 5 reach day 100, and no queue job
    # follows within 15 days of day 41: none again
    assert seqs == []


@settings(max_examples=60, deadline=None)
@given(
    gaps=st.lists(st.floats(0, 5 * DAY_S), min_size=1, max_size=300),
    n_state=st.integers(0, 20),
    days=st.floats(0.5, 20),
)
def test_sequences_never_overlap_and_respect_the_horizon(gaps, n_state, days) -> None:
    submit = np.cumsum(gaps)
    seqs = evaluation_sequences(submit, n_state=n_state, days=days)
    for a, b in itertools.pairwise(seqs):
        assert a.stop <= b.first  # non-overlapping, in log order
    for s in seqs:
        assert s.jobs > s.n_state == n_state
        last = submit[s.stop - 1]
        queue_first = s.first + s.n_state
        # every queue job is within the horizon of the first job; the next job is not
        assert np.all(submit[queue_first : s.stop] - submit[s.first] <= days * DAY_S)
        assert s.stop < submit.size and submit[s.stop] - submit[s.first] > days * DAY_S
        assert last >= submit[s.first]


def test_random_choice_is_seeded_and_a_subset() -> None:
    submit = np.arange(0, 2000) * 0.5 * DAY_S
    every = evaluation_sequences(submit)
    first = evaluation_sequences(submit, count=5)
    assert first == every[:5]
    a = evaluation_sequences(submit, count=5, seed=3)
    assert a == evaluation_sequences(submit, count=5, seed=3)
    assert a != evaluation_sequences(submit, count=5, seed=4)
    assert set(a) <= set(every) and [s.first for s in a] == sorted(s.first for s in a)
    with pytest.raises(ConfigurationError, match="the log yields"):
        evaluation_sequences(submit, count=len(every) + 1)


def _jobs(rows: list[tuple[float, int, float, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "job_id": list(range(1, len(rows) + 1)),
            "submit_s": [r[0] for r in rows],
            "alloc_procs": [r[1] for r in rows],
            "req_procs": [r[1] for r in rows],
            "run_s": [r[2] for r in rows],
            "req_time_s": [r[3] for r in rows],
        }
    )


def test_sequence_bsld_by_hand() -> None:
    """2 processors. State job A (2 procs, 100 s) at 0; queue: B (1 proc, 10 s, asks 500 s) at
    1, C (1 proc, 50 s, asks 60 s) at 2. After A ends at 100:
    - runtime mode, SPF: B (10 s) and C both fit at 100: B waits 99, C waits 98:
      bsld B = (99 + 10) / 10 = 10.9, C = (98 + 50) / 50 = 2.96; mean 6.93;
    - every mode starts both at 100 here (two processors free), so the modes agree."""
    jobs = evaluation_jobs(_jobs([(0, 2, 100, 100), (1, 1, 10, 500), (2, 1, 50, 60)]))
    seq = EvaluationSequence(0, 0, 3, 1)
    for mode in ("runtime", "estimate", "backfilling"):
        assert sequence_bsld(jobs, seq, "SPF", mode, 2) == pytest.approx((10.9 + 2.96) / 2)


def test_modes_differ_where_estimates_and_backfilling_matter() -> None:
    """3 processors. A (3 procs, 100 s) at 0 is the state. Queue: B (3 procs, 100 s, asks
    100 s) at 1; C (1 proc, 10 s, asks 1000 s) at 2.
    - runtime, SPF: C (10 s) before B: C starts at 100, B (needs all 3) at 110;
    - estimate, SPF: B (asks 100) before C (asks 1000): B at 100, C at 200."""
    jobs = evaluation_jobs(_jobs([(0, 3, 100, 100), (1, 3, 100, 100), (2, 1, 10, 1000)]))
    seq = EvaluationSequence(0, 0, 3, 1)
    bsld = {m: sequence_bsld(jobs, seq, "SPF", m, 3) for m in ("runtime", "estimate")}
    b_runtime = (110 - 1 + 100) / 100
    c_runtime = (100 - 2 + 10) / 10
    assert bsld["runtime"] == pytest.approx((b_runtime + c_runtime) / 2)
    b_est = (100 - 1 + 100) / 100
    c_est = (200 - 2 + 10) / 10
    assert bsld["estimate"] == pytest.approx((b_est + c_est) / 2)


def test_evaluation_jobs_keep_positive_fields_only() -> None:
    jobs = evaluation_jobs(
        _jobs([(5, 1, 10, 20), (1, 0, 10, 20), (2, 1, 0, 20), (3, 1, 10, -1), (4, 2, 5, 5)])
    )
    assert jobs["job_id"].to_list() == [5, 1]
    # a job without an allocated count uses its requested one, unless allocated_only
    table = _jobs([(1, 2, 10, 20), (2, 3, 10, 20)]).with_columns(pl.Series("alloc_procs", [2, -1]))
    assert evaluation_jobs(table)["procs"].to_list() == [2.0, 3.0]
    assert evaluation_jobs(table, allocated_only=True)["job_id"].to_list() == [1]
    with pytest.raises(ConfigurationError, match="lacks"):
        evaluation_jobs(pl.DataFrame({"submit_s": [1.0]}))


def test_a_real_log_yields_sequences_of_fifteen_days(kth_path) -> None:
    jobs = evaluation_jobs(strong_filter(read_swf(kth_path))[0].jobs)
    seqs = evaluation_sequences(jobs["submit_s"].to_numpy())
    # KTH-SP2 spans about 11 months: 15-day sequences, each with its 16 state jobs
    assert 15 <= len(seqs) <= 23
    submit = jobs["submit_s"].to_numpy()
    for s in seqs:
        assert submit[s.stop - 1] - submit[s.first] <= 15 * DAY_S
    bsld = sequence_bsld(jobs, seqs[0], "FCFS", "backfilling", 100)
    assert bsld >= 1.0


def test_skipped_sequences_keep_their_index() -> None:
    submit = np.arange(0, 2000) * 0.5 * DAY_S
    every = evaluation_sequences(submit)
    kept = evaluation_sequences(submit, count=5, skip=[0, 3])
    assert [s.index for s in kept] == [1, 2, 4, 5, 6]
    assert kept == [every[k] for k in (1, 2, 4, 5, 6)]
    with pytest.raises(ConfigurationError, match="skip"):
        evaluation_sequences(submit, skip=[-1])


def test_the_authors_window_changes_the_schedule_by_hand() -> None:
    """1 processor; state job A (100 s) at 0 then B (asks 500 s) at 1, C (60 s) at 2, D (5 s)
    at 3. Estimate mode, SPF, after A: whole queue D, C, B; a window of 2 sees B and C only
    (C first), then B and D (D first): C at 100, D at 160, B at 165."""
    jobs = evaluation_jobs(_jobs([(0, 1, 100, 100), (1, 1, 10, 500), (2, 1, 60, 60),
                                  (3, 1, 5, 5)]))  # fmt: skip
    seq = EvaluationSequence(0, 0, 4, 1)
    whole = sequence_bsld(jobs, seq, "SPF", "estimate", 1)
    # D at 100, C at 105, B at 165 (bounded slowdown: D's 5 s count as tau = 10 s)
    assert whole == pytest.approx(((165 - 1 + 10) / 10 + (105 - 2 + 60) / 60 + (100 - 3 + 5) / 10)
                                  / 3)  # fmt: skip
    windowed = sequence_bsld(jobs, seq, "SPF", "estimate", 1, queue_window=2)
    assert windowed == pytest.approx(((165 - 1 + 10) / 10 + (100 - 2 + 60) / 60
                                      + (160 - 3 + 5) / 10) / 3)  # fmt: skip
    # the whole queue through the windowed scheduler equals the engine here
    assert sequence_bsld(jobs, seq, "SPF", "estimate", 1, queue_window=100) == whole
    # no equal estimates: the authors' exchange sort changes nothing; it needs the window
    assert sequence_bsld(jobs, seq, "SPF", "estimate", 1, queue_window=100,
                         exchange_sort=True) == whole  # fmt: skip
    with pytest.raises(ConfigurationError, match="windowed scheduler"):
        sequence_bsld(jobs, seq, "SPF", "estimate", 1, exchange_sort=True)


def test_state_in_order_on_a_real_log(kth_path) -> None:
    """Degenerate settings equal the engine on every KTH sequence and mode: a window larger
    than any queue, no state; the same call twice gives the same value."""
    jobs = evaluation_jobs(strong_filter(read_swf(kth_path))[0].jobs)
    seq = evaluation_sequences(jobs["submit_s"].to_numpy(), count=1)[0]
    for mode in ("runtime", "estimate"):
        engine = sequence_bsld(jobs, seq, "F2", mode, 100)
        assert sequence_bsld(jobs, seq, "F2", mode, 100, queue_window=seq.jobs) == engine
    paper = sequence_bsld(jobs, seq, "F2", "backfilling", 100, queue_window=32,
                          state_in_order=True)  # fmt: skip
    assert paper == sequence_bsld(jobs, seq, "F2", "backfilling", 100, queue_window=32,
                                  state_in_order=True)  # fmt: skip
    assert paper >= 1.0
