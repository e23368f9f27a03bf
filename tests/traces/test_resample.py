"""Train/test split and per-user weekly resampling (scheduler.traces.resample) on KTH-SP2 and
crafted sources. Expectations are computed from the module docstring's definitions: week ``k`` of a
part is ``[t0 + k·W, t0 + (k+1)·W)``, ``K = floor(span / W)`` complete weeks, one draw per user."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from scheduler.core.constants import SWF_COLUMNS, SWF_SCHEMA
from scheduler.core.errors import ConfigurationError
from scheduler.traces.filters import strong_filter
from scheduler.traces.resample import (
    WEEK_COLUMNS,
    _choose_weeks,
    _UserWeeks,
    resample_weeks,
    split_at_midpoint,
)
from scheduler.traces.swf import read_swf

W = 604_800
SEED = 20261121
COPIED = ("user_id", "run_s", "req_time_s", "alloc_procs", "req_procs")


def make_jobs(rows: list[dict[str, int]]) -> pl.DataFrame:
    """An SWF job table from (partial) rows; job ids 1..n unless given, other fields -1 or
    plausible values."""
    defaults = dict.fromkeys(SWF_COLUMNS, -1) | {
        "run_s": 100,
        "alloc_procs": 1,
        "req_procs": 1,
        "req_time_s": 200,
    }
    full = [defaults | {"job_id": i + 1} | row for i, row in enumerate(rows)]
    return pl.DataFrame(full, schema=SWF_SCHEMA)


@pytest.fixture(scope="module")
def kth_jobs(kth_path) -> pl.DataFrame:
    filtered, _ = strong_filter(read_swf(kth_path))
    return filtered.jobs


@pytest.fixture(scope="module")
def kth_train(kth_jobs) -> pl.DataFrame:
    return split_at_midpoint(kth_jobs, name="KTH-SP2")["train"]


@pytest.fixture(scope="module")
def train_with_weeks(kth_train) -> tuple[pl.DataFrame, int, int]:
    """The train part with its source week per job (from the definition), t0 and K."""
    t0 = int(kth_train["submit_s"].min())
    span = int(kth_train["submit_s"].max()) - t0
    k = span // W
    table = kth_train.with_columns(((pl.col("submit_s") - t0) // W).alias("src_week"))
    return table, t0, k


@pytest.fixture(scope="module")
def kth_weeks(kth_train) -> pl.DataFrame:
    return resample_weeks(kth_train, range(6), seed=SEED, trace="KTH-SP2", split="train")


# --------------------------------------------------------------------------------------------
# split_at_midpoint
# --------------------------------------------------------------------------------------------


def test_split_at_midpoint_on_kth(kth_jobs):
    parts = split_at_midpoint(kth_jobs, name="KTH-SP2")
    submit = kth_jobs["submit_s"].to_numpy()
    ids = kth_jobs["job_id"].to_numpy()
    midpoint = (int(submit.min()) + int(submit.max())) / 2
    expected_train = ids[submit < midpoint].tolist()
    expected_test = ids[submit >= midpoint].tolist()
    assert expected_train and expected_test
    # same jobs, same (input) row order, same columns
    assert parts["train"]["job_id"].to_list() == expected_train
    assert parts["test"]["job_id"].to_list() == expected_test
    assert parts["train"].columns == kth_jobs.columns
    assert parts["test"].schema == kth_jobs.schema
    # a partition of the input: nothing lost or duplicated
    train_ids, test_ids = set(expected_train), set(expected_test)
    assert not train_ids & test_ids
    assert train_ids | test_ids == set(ids.tolist())
    assert parts["train"].height + parts["test"].height == kth_jobs.height
    assert parts["train"]["submit_s"].max() < midpoint <= parts["test"]["submit_s"].min()


def test_split_job_at_midpoint_goes_to_test():
    jobs = make_jobs([{"submit_s": s} for s in (10, 0, 5, 7, 3)])  # midpoint 5
    parts = split_at_midpoint(jobs)
    assert parts["train"]["submit_s"].to_list() == [0, 3]
    assert parts["test"]["submit_s"].to_list() == [10, 5, 7]


def test_split_fractional_midpoint():
    jobs = make_jobs([{"submit_s": s} for s in (0, 1, 2, 3)])  # midpoint 1.5
    parts = split_at_midpoint(jobs)
    assert parts["train"]["job_id"].to_list() == [1, 2]
    assert parts["test"]["job_id"].to_list() == [3, 4]


def test_split_empty_table():
    with pytest.raises(ConfigurationError, match="mytrace"):
        split_at_midpoint(make_jobs([]), name="mytrace")


def test_split_single_submit_time_names_empty_split():
    jobs = make_jobs([{"submit_s": 42}, {"submit_s": 42}, {"submit_s": 42}])
    with pytest.raises(ConfigurationError, match=r"mytrace.*train split is empty"):
        split_at_midpoint(jobs, name="mytrace")


# --------------------------------------------------------------------------------------------
# resample_weeks (uniform) on KTH-SP2 train
# --------------------------------------------------------------------------------------------


def test_weeks_schema_and_order(kth_weeks):
    assert tuple(kth_weeks.columns) == WEEK_COLUMNS
    assert kth_weeks["week_index"].unique(maintain_order=True).to_list() == list(range(6))
    assert kth_weeks.equals(kth_weeks.sort("week_index", "submit_s", "job_id"))


@pytest.mark.parametrize("index", [0, 1, 3, 5])
def test_week_jobs_come_from_source(kth_weeks, train_with_weeks, index):
    source, t0, k = train_with_weeks
    week = kth_weeks.filter(pl.col("week_index") == index)
    assert week.height > 0
    assert (week["week_index"] == index).all()

    # every job exists in the source with the same user and sizes
    joined = week.join(
        source.rename({c: f"src_{c}" for c in source.columns if c != "job_id"}),
        left_on="source_job_id",
        right_on="job_id",
        how="left",
    )
    assert joined["src_submit_s"].null_count() == 0
    for column in COPIED:
        assert (joined[column] == joined[f"src_{column}"]).all(), column
    # offset inside the week preserved, source week as defined, never the trailing week
    expected_submit = (joined["src_submit_s"] - t0 - joined["source_week"] * W).cast(pl.Float64)
    assert (joined["submit_s"] == expected_submit).all()
    assert (joined["submit_s"] >= 0).all() and (joined["submit_s"] < W).all()
    assert (joined["source_week"] == joined["src_src_week"]).all()
    assert (joined["source_week"] < k).all() and (joined["source_week"] >= 0).all()

    # no job duplicated; job_id is 1..n in (submit_s, source_job_id) order
    assert week["source_job_id"].n_unique() == week.height
    ordered = week.sort("submit_s", "source_job_id")
    assert ordered["job_id"].to_list() == list(range(1, week.height + 1))


@pytest.mark.parametrize("index", [0, 2, 4])
def test_week_takes_all_jobs_of_one_source_week_per_user(kth_weeks, train_with_weeks, index):
    source, _, _ = train_with_weeks
    week = kth_weeks.filter(pl.col("week_index") == index)
    per_user = week.group_by("user_id").agg(
        pl.col("source_week").n_unique().alias("n_weeks"),
        pl.col("source_week").first(),
        pl.col("source_job_id").sort(),
    )
    assert (per_user["n_weeks"] == 1).all()
    for user, source_week, job_ids in per_user.select(
        "user_id", "source_week", "source_job_id"
    ).iter_rows():
        expected = (
            source.filter((pl.col("user_id") == user) & (pl.col("src_week") == source_week))[
                "job_id"
            ]
            .sort()
            .to_list()
        )
        assert job_ids == expected, (user, source_week)


def test_week_users_match_private_draws(kth_train, kth_weeks, train_with_weeks):
    """The users present (and their source weeks) are exactly those whose draw has jobs."""
    source, _, k = train_with_weeks
    helper = _UserWeeks(kth_train, "KTH-SP2 train")
    users = np.unique(kth_train["user_id"].to_numpy())
    assert helper.weeks == k and helper.users == users.size
    counts = source.group_by("user_id", "src_week").len()
    nonempty = {(u, w) for u, w, _ in counts.iter_rows()}
    for index in (0, 3):
        chosen = _choose_weeks(helper, "uniform", SEED, "KTH-SP2", "train", index)
        expected = {
            int(u): int(w) for u, w in zip(users, chosen, strict=True) if (u, w) in nonempty
        }
        week = kth_weeks.filter(pl.col("week_index") == index)
        got = dict(week.select("user_id", "source_week").unique().iter_rows())
        assert got == expected
        expected_jobs = sum(
            n for u, w, n in counts.iter_rows() if w == chosen[np.searchsorted(users, u)]
        )
        assert week.height == expected_jobs


def test_trailing_partial_week_never_drawn(kth_train, train_with_weeks):
    source, _, k = train_with_weeks
    assert k == math.floor((kth_train["submit_s"].max() - kth_train["submit_s"].min()) / W)
    # the check is meaningful: the source has jobs in the partial week k
    assert source.filter(pl.col("src_week") == k).height > 0
    weeks = resample_weeks(kth_train, range(60), seed=7, trace="KTH-SP2", split="train")
    assert weeks["source_week"].max() == k - 1
    assert weeks["source_week"].min() == 0
    helper = _UserWeeks(kth_train, "x")
    draws = np.stack([_choose_weeks(helper, "uniform", 7, "t", "s", i) for i in range(100)])
    assert draws.max() == k - 1 and draws.min() == 0


def test_empty_indices_give_empty_table(kth_train):
    weeks = resample_weeks(kth_train, [], seed=1, trace="t", split="train")
    assert weeks.height == 0
    assert tuple(weeks.columns) == WEEK_COLUMNS


def test_unsorted_indices_give_sorted_table(kth_train):
    weeks = resample_weeks(kth_train, [5, 2], seed=1, trace="t", split="train")
    assert weeks.equals(weeks.sort("week_index", "submit_s", "job_id"))


# --------------------------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------------------------


def test_same_inputs_give_identical_weeks(kth_train, kth_weeks):
    again = resample_weeks(kth_train, range(6), seed=SEED, trace="KTH-SP2", split="train")
    assert again.equals(kth_weeks)


def test_week_independent_of_batch(kth_train, kth_weeks):
    alone = resample_weeks(kth_train, [3, 4], seed=SEED, trace="KTH-SP2", split="train")
    assert alone.equals(kth_weeks.filter(pl.col("week_index").is_in([3, 4])))
    single = resample_weeks(kth_train, [5], seed=SEED, trace="KTH-SP2", split="train")
    assert single.equals(kth_weeks.filter(pl.col("week_index") == 5))


@pytest.mark.parametrize(
    "other",
    [(SEED + 1, "KTH-SP2", "train"), (SEED, "KTH-SP2b", "train"), (SEED, "KTH-SP2", "test")],
    ids=["seed", "trace", "split"],
)
def test_other_seed_trace_or_split_changes_draws(kth_train, kth_weeks, other):
    seed, trace, split = other
    helper = _UserWeeks(kth_train, "x")
    reference = _choose_weeks(helper, "uniform", SEED, "KTH-SP2", "train", 2)
    changed = _choose_weeks(helper, "uniform", seed, trace, split, 2)
    # 138 users, 23 weeks: equal draws have probability 23**-138
    assert not np.array_equal(reference, changed)
    week = resample_weeks(kth_train, [2], seed=seed, trace=trace, split=split)
    base = kth_weeks.filter(pl.col("week_index") == 2)
    assert not week["source_job_id"].sort().equals(base["source_job_id"].sort())


def test_different_indices_draw_differently(kth_train):
    helper = _UserWeeks(kth_train, "x")
    draws = [tuple(_choose_weeks(helper, "uniform", 1, "t", "s", i)) for i in range(20)]
    assert len(set(draws)) == 20


# --------------------------------------------------------------------------------------------
# Permutation method
# --------------------------------------------------------------------------------------------


def test_permutation_cycle_uses_each_week_once(kth_train, train_with_weeks):
    _, _, k = train_with_weeks
    helper = _UserWeeks(kth_train, "x")
    for cycle in (0, 1):
        draws = np.stack(
            [
                _choose_weeks(helper, "permutation", SEED, "KTH-SP2", "train", i)
                for i in range(cycle * k, (cycle + 1) * k)
            ]
        )  # (K, users)
        assert draws.shape == (k, helper.users)
        for column in draws.T:
            assert sorted(column.tolist()) == list(range(k))
        if cycle == 0:
            first = draws
    # a new cycle shuffles again (not the same permutation for every user)
    assert not np.array_equal(first, draws)
    # not the identity either: users get different weeks at one index
    assert np.unique(first[0]).size > 1


def test_permutation_weeks_never_repeat_a_user_week(kth_train, train_with_weeks):
    source, _, k = train_with_weeks
    weeks = resample_weeks(
        kth_train, range(k), seed=SEED, trace="KTH-SP2", split="train", method="permutation"
    )
    assert weeks["week_index"].n_unique() == k
    per_user = weeks.group_by("user_id").agg(
        pl.col("week_index").n_unique().alias("weeks_present"),
        pl.col("source_week").n_unique().alias("distinct_source_weeks"),
    )
    assert (per_user["weeks_present"] == per_user["distinct_source_weeks"]).all()
    # within the cycle every non-empty user-week is used exactly once
    used = weeks.select("user_id", "source_week").unique()
    available = source.filter(pl.col("src_week") < k).select("user_id", "src_week").unique()
    assert used.height == available.height
    # and each job of the part's complete weeks appears exactly once over the cycle
    assert weeks["source_job_id"].n_unique() == weeks.height
    assert weeks.height == source.filter(pl.col("src_week") < k).height


# --------------------------------------------------------------------------------------------
# Uniform draws are uniform
# --------------------------------------------------------------------------------------------


def test_uniform_draw_frequencies(kth_train, train_with_weeks):
    _, _, k = train_with_weeks
    helper = _UserWeeks(kth_train, "x")
    users = np.unique(kth_train["user_id"].to_numpy())
    frequent = int(kth_train["user_id"].mode().sort()[0])
    position = int(np.searchsorted(users, frequent))
    draws = np.stack(
        [_choose_weeks(helper, "uniform", SEED, "KTH-SP2", "train", i) for i in range(200)]
    )
    counts = np.bincount(draws[:, position], minlength=k)
    assert counts.size == k
    assert np.count_nonzero(counts) >= 0.9 * k
    assert chisquare(counts).pvalue > 1e-4
    overall = np.bincount(draws.ravel(), minlength=k)
    assert overall.size == k
    assert chisquare(overall).pvalue > 1e-4
    # users draw independently: the frequent user's draws are not everybody's draws
    assert not all(np.array_equal(draws[:, position], draws[:, j]) for j in range(users.size))


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def test_source_shorter_than_a_week():
    jobs = make_jobs([{"submit_s": 0, "user_id": 1}, {"submit_s": W - 1, "user_id": 2}])
    with pytest.raises(ConfigurationError, match="week"):
        resample_weeks(jobs, [0], seed=1, trace="tiny", split="train")


def test_source_of_exactly_one_week_is_usable():
    jobs = make_jobs([{"submit_s": 100, "user_id": 1}, {"submit_s": 100 + W, "user_id": 1}])
    weeks = resample_weeks(jobs, [0, 1], seed=1, trace="tiny", split="train")
    # K = 1: only the first job (week 0) can be drawn; the second is in the partial week
    assert weeks["source_job_id"].to_list() == [1, 1]
    assert weeks["submit_s"].to_list() == [0.0, 0.0]


def test_empty_resampled_week_raises():
    # user 1 submits only in week 0; user 2's single job is in week 2, the partial week (K = 2)
    jobs = make_jobs(
        [
            {"submit_s": 1_000, "user_id": 1},
            {"submit_s": 5_000, "user_id": 1},
            {"submit_s": 1_000 + 2 * W + 3_600, "user_id": 2},
        ]
    )
    helper = _UserWeeks(jobs, "tiny train")
    assert helper.weeks == 2 and helper.users == 2
    empty_index = full_index = None
    for index in range(200):
        chosen = _choose_weeks(helper, "uniform", 3, "tiny", "train", index)
        if chosen[0] == 1 and empty_index is None:
            empty_index = index
        if chosen[0] == 0 and full_index is None:
            full_index = index
    assert empty_index is not None and full_index is not None
    with pytest.raises(ConfigurationError, match=rf"tiny train.*week {empty_index} has no jobs"):
        resample_weeks(jobs, [empty_index], seed=3, trace="tiny", split="train")
    week = resample_weeks(jobs, [full_index], seed=3, trace="tiny", split="train")
    assert week["source_job_id"].to_list() == [1, 2]
    assert week["submit_s"].to_list() == [0.0, 4_000.0]


def test_unknown_method(kth_train):
    with pytest.raises(ConfigurationError, match="bogus"):
        resample_weeks(kth_train, [0], seed=1, trace="t", split="train", method="bogus")


def test_negative_index_or_seed(kth_train):
    with pytest.raises(ConfigurationError):
        resample_weeks(kth_train, [-1], seed=1, trace="t", split="train")
    with pytest.raises(ConfigurationError):
        resample_weeks(kth_train, [0], seed=-1, trace="t", split="train")


def test_empty_source():
    with pytest.raises(ConfigurationError, match="no jobs"):
        resample_weeks(make_jobs([]), [0], seed=1, trace="t", split="train")


def test_unknown_user_counts_as_one_user():
    jobs = make_jobs(
        [
            {"submit_s": 0, "user_id": -1},
            {"submit_s": 10, "user_id": -1},
            {"submit_s": W + 10, "user_id": -1},
            {"submit_s": 2 * W, "user_id": 5},
        ]
    )
    helper = _UserWeeks(jobs, "t")
    assert helper.users == 2
    weeks = resample_weeks(jobs, range(10), seed=1, trace="t", split="s")
    # each week holds the unknown user's jobs of exactly one source week
    per_week = weeks.group_by("week_index").agg(pl.col("source_week").n_unique())
    assert (per_week["source_week"] == 1).all()


# --------------------------------------------------------------------------------------------
# Property: job count of a week = sum over users of the drawn week's job count
# --------------------------------------------------------------------------------------------


@st.composite
def sources(draw):
    n_users = draw(st.integers(1, 5))
    n_weeks = draw(st.integers(2, 4))
    user_ids = draw(st.lists(st.integers(-1, 50), min_size=n_users, max_size=n_users, unique=True))
    t0 = draw(st.integers(0, 10 * W))
    rows = [{"submit_s": t0, "user_id": user_ids[0]}]
    for user in user_ids:
        offsets = draw(st.lists(st.integers(0, n_weeks * W), min_size=1, max_size=12))
        rows += [{"submit_s": t0 + o, "user_id": user} for o in offsets]
    ids = draw(st.permutations(range(1, len(rows) + 1)))
    return make_jobs([row | {"job_id": i} for row, i in zip(rows, ids, strict=True)])


@settings(max_examples=50, deadline=None)
@given(
    jobs=sources(),
    index=st.integers(0, 30),
    seed=st.integers(0, 2**32),
    method=st.sampled_from(["uniform", "permutation"]),
)
def test_week_size_is_sum_of_drawn_user_weeks(jobs, index, seed, method):
    submit = jobs["submit_s"].to_numpy()
    t0 = int(submit.min())
    k = (int(submit.max()) - t0) // W
    if k < 1:
        with pytest.raises(ConfigurationError, match="week"):
            resample_weeks(jobs, [index], seed=seed, trace="p", split="s", method=method)
        return
    helper = _UserWeeks(jobs, "p s")
    chosen = _choose_weeks(helper, method, seed, "p", "s", index)
    users = np.unique(jobs["user_id"].to_numpy())
    assert chosen.shape == (users.size,)
    assert ((chosen >= 0) & (chosen < k)).all()
    week_of_job = (submit - t0) // W
    user_of_job = jobs["user_id"].to_numpy()
    expected_per_user = {
        int(u): int(np.sum((user_of_job == u) & (week_of_job == w)))
        for u, w in zip(users, chosen, strict=True)
    }
    expected = sum(expected_per_user.values())
    if expected == 0:
        with pytest.raises(ConfigurationError, match="no jobs"):
            resample_weeks(jobs, [index], seed=seed, trace="p", split="s", method=method)
        return
    week = resample_weeks(jobs, [index], seed=seed, trace="p", split="s", method=method)
    assert week.height == expected
    got = dict(week.group_by("user_id").len().iter_rows())
    assert got == {u: n for u, n in expected_per_user.items() if n}
    assert week["job_id"].to_list() == list(range(1, expected + 1))
    assert ((week["submit_s"] >= 0) & (week["submit_s"] < W)).all()
