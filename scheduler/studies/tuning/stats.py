"""Statistics of a queue-tuning study over resampled weeks of a workload trace.

The simulations of a study give a *weekly* table (polars), one row per
``(trace, split, week_index, primary, backfill, threshold)`` with the columns of
:data:`REQUIRED_WEEKLY_COLUMNS`: times in seconds, bounded slowdowns dimensionless,
``threshold_s`` in seconds (``inf`` for the label ``"none"``), ``utilisation`` in [0, 1].

Every figure is compared with a :class:`Baseline` configuration (normally EASY with FCFS for
both queues and no threshold) simulated on the *same* week:

1. :func:`add_relative_columns` divides each weekly figure by the baseline's figure of that
   week (``relative_*`` columns, dimensionless);
2. :func:`summarize_configs` aggregates the weeks of each configuration (means, deciles,
   worst cases);
3. :func:`train_test_protocol` learns, per trace and threshold, the queue-policy pair with the
   lowest mean training AvgWait and evaluates it on the test weeks against the baseline (ratio
   of means and differences; intervals and tests from the source-week bootstrap of
   :mod:`scheduler.studies.tuning.bootstrap`, Holm adjustment);
4. :func:`markdown_table` renders any of these tables as GitHub-flavoured Markdown.

Zero baselines: a ratio ``0 / 0`` is 1.0 (a week where nobody waits under the baseline and
nobody waits under the other policy either); ``x / 0`` with ``x > 0`` is never produced, a
:class:`~scheduler.core.errors.ConfigurationError` is raised instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from statsmodels.stats.multitest import multipletests

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.statistics import bootstrap_t_interval, bootstrap_t_p_value
from scheduler.studies.tuning.schema import WEEKLY_COLUMNS, Baseline

__all__ = [
    "PROTOCOL_COLUMNS",
    "RELATIVE_COLUMNS",
    "REQUIRED_WEEKLY_COLUMNS",
    "SUMMARY_COLUMNS",
    "Baseline",
    "add_relative_columns",
    "learned_pairs",
    "summarize_configs",
    "train_test_protocol",
    "tuned_configuration",
]


#: Columns a weekly table must hold (extra columns are kept and ignored).
REQUIRED_WEEKLY_COLUMNS: tuple[str, ...] = tuple(WEEKLY_COLUMNS)


#: Weekly figure -> name of its ratio to the baseline (added by :func:`add_relative_columns`).
RELATIVE_COLUMNS: dict[str, str] = {
    "avg_wait_s": "relative_avg_wait",
    "max_wait_s": "relative_max_wait",
    "avg_bsld": "relative_avg_bsld",
    "max_bsld": "relative_max_bsld",
}


_WEEK_KEY = ("trace", "split", "week_index")


_POLICY_KEY = ("primary", "backfill", "threshold")


_ROW_KEY = (*_WEEK_KEY, *_POLICY_KEY)


_CONFIG_KEY = ("trace", "split", "primary", "backfill", "threshold", "threshold_s")


_MAX_LISTED = 5


_DECILES = tuple(range(1, 10))


#: Columns of :func:`summarize_configs`, in order.
SUMMARY_COLUMNS: tuple[str, ...] = (
    *_CONFIG_KEY,
    "weeks",
    "mean_avg_wait_s",
    "mean_relative_avg_wait",
    *(f"relative_avg_wait_d{d}" for d in _DECILES),
    "mean_max_wait_s",
    "worst_max_wait_s",
    "mean_relative_max_wait",
    "relative_worst_max_wait",
    "mean_avg_bsld",
    "mean_relative_avg_bsld",
    "mean_utilisation",
    "mean_jobs",
    *(f"relative_max_wait_d{d}" for d in _DECILES),
)


_PROTOCOL_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "trace": pl.String,
    "threshold": pl.String,
    "threshold_s": pl.Float64,
    "primary": pl.String,
    "backfill": pl.String,
    "train_weeks": pl.Int64,
    "test_weeks": pl.Int64,
    "train_ratio_of_means": pl.Float64,
    "train_mean_relative_avg_wait": pl.Float64,
    "test_ratio_of_means": pl.Float64,
    "test_ratio_ci_low": pl.Float64,
    "test_ratio_ci_high": pl.Float64,
    "test_mean_relative_avg_wait": pl.Float64,
    "baseline_test_mean_avg_wait_s": pl.Float64,
    "learned_test_mean_avg_wait_s": pl.Float64,
    "test_mean_difference_s": pl.Float64,
    "test_difference_ci_low_s": pl.Float64,
    "test_difference_ci_high_s": pl.Float64,
    "baseline_test_mean_max_wait_s": pl.Float64,
    "learned_test_mean_max_wait_s": pl.Float64,
    "test_max_wait_difference_s": pl.Float64,
    "test_max_wait_difference_ci_low_s": pl.Float64,
    "test_max_wait_difference_ci_high_s": pl.Float64,
    "train_relative_worst_max_wait": pl.Float64,
    "test_relative_worst_max_wait": pl.Float64,
    "train_mean_relative_max_wait": pl.Float64,
    "test_mean_relative_max_wait": pl.Float64,
    "source_weeks": pl.Int64,
    "bootstrap_replicates": pl.Int64,
    "p_value": pl.Float64,
    "p_holm": pl.Float64,
    "significant": pl.Boolean,
}


#: Columns of :func:`train_test_protocol`, in order.
PROTOCOL_COLUMNS: tuple[str, ...] = tuple(_PROTOCOL_SCHEMA)


def add_relative_columns(weekly: pl.DataFrame, baseline: Baseline) -> pl.DataFrame:
    """Divide each weekly figure by the baseline's figure on the same week.

    Parameters
    ----------
    weekly
        Weekly table with (at least) the columns of :data:`REQUIRED_WEEKLY_COLUMNS`, one row per
        ``(trace, split, week_index, primary, backfill, threshold)``. Times in seconds, bounded
        slowdowns dimensionless; the four figures of :data:`RELATIVE_COLUMNS` must be finite
        and >= 0, and a ``threshold`` label must always come with the same ``threshold_s``.
    baseline
        The reference configuration; it must have a row for every
        ``(trace, split, week_index)`` present in ``weekly``.

    Returns
    -------
    polars.DataFrame
        ``weekly`` with ``relative_avg_wait``, ``relative_max_wait``, ``relative_avg_bsld`` and
        ``relative_max_bsld`` appended (dimensionless ratios ``value / baseline value`` of the
        same ``(trace, split, week_index)``; ``0 / 0`` is 1.0). The baseline's own rows have
        exactly 1.0. Rows are sorted by ``trace, split, primary, backfill, threshold_s``,
        then ``threshold`` (only to order labels sharing a ``threshold_s``) and
        ``week_index``.

    Raises
    ------
    ConfigurationError
        When a column is missing or holds nulls, a figure is negative or not finite, a row key
        is duplicated, a threshold label has two ``threshold_s`` values, the baseline has no
        row for some weeks (naming trace, split and at most five of the weeks), or a figure is
        > 0 on a week where the baseline's is 0 (naming trace, split and week).
    """
    _validate(weekly, baseline, relative=False)
    base_names = {metric: f"__baseline_{metric}" for metric in RELATIVE_COLUMNS}
    base = weekly.filter(baseline.expr()).select(
        *_WEEK_KEY, *(pl.col(metric).alias(name) for metric, name in base_names.items())
    )
    joined = weekly.join(base, on=list(_WEEK_KEY), how="left")
    for metric, name in base_names.items():
        _check_no_division_by_zero(joined, metric, name, baseline)
    ratios = [
        _ratio(pl.col(metric), pl.col(base_names[metric])).alias(rel)
        for metric, rel in RELATIVE_COLUMNS.items()
    ]
    return (
        joined.with_columns(ratios)
        .drop(list(base_names.values()))
        .sort(["trace", "split", "primary", "backfill", "threshold_s", "threshold", "week_index"])
    )


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """``numerator / denominator`` as Float64, with ``0 / 0`` → 1.0 (callers rule out x/0)."""
    # x / x is 1.0 in IEEE arithmetic, but polars may divide a column by a one-row broadcast
    # as a multiplication by its reciprocal (0.9999999999999999): equal values are 1.0 outright
    return (
        pl.when((denominator == 0) | (numerator == denominator))
        .then(pl.lit(1.0))
        .otherwise(numerator.cast(pl.Float64) / denominator.cast(pl.Float64))
    )


def _check_no_division_by_zero(
    joined: pl.DataFrame, metric: str, base_column: str, baseline: Baseline
) -> None:
    """Raise when ``metric`` > 0 on a week where the baseline's ``metric`` is 0."""
    bad = joined.filter((pl.col(base_column) == 0) & (pl.col(metric) > 0)).sort(list(_ROW_KEY))
    if bad.height == 0:
        return
    row = bad.row(0, named=True)
    more = f" ({bad.height - 1} more such rows)" if bad.height > 1 else ""
    raise ConfigurationError(
        f"trace {row['trace']!r}, split {row['split']!r}, week {row['week_index']}: "
        f"{metric} is 0 under the baseline {baseline.label} but {row[metric]!r} under "
        f"{row['primary']}/{row['backfill']}/{row['threshold']}; the ratio would be "
        f"infinite{more}"
    )


def summarize_configs(relative: pl.DataFrame, baseline: Baseline) -> pl.DataFrame:
    """Aggregate the weeks of every configuration.

    Parameters
    ----------
    relative
        Output of :func:`add_relative_columns` (same invariants).
    baseline
        The configuration used to build ``relative``; needed for the worst-case ratio.

    Returns
    -------
    polars.DataFrame
        One row per ``(trace, split, primary, backfill, threshold, threshold_s)`` with the
        columns of :data:`SUMMARY_COLUMNS`, sorted by ``trace, split, threshold_s, primary,
        backfill`` (then ``threshold``):

        ``weeks``
            Number of weeks (Int64).
        ``mean_avg_wait_s``, ``mean_max_wait_s``
            Means over the weeks of AvgWait and MaxWait, seconds.
        ``mean_relative_avg_wait``, ``mean_relative_max_wait``, ``mean_relative_avg_bsld``
            Means over the weeks of the weekly ratios to the baseline (dimensionless; exactly
            1.0 for the baseline).
        ``relative_avg_wait_d1`` … ``relative_avg_wait_d9``
            Deciles (10 % … 90 %) of the weekly ``relative_avg_wait``, linear interpolation
            (as :func:`numpy.quantile`'s default).
        ``relative_max_wait_d1`` … ``relative_max_wait_d9``
            The same deciles of the weekly ``relative_max_wait`` (the last columns, so that the
            older columns keep their positions).
        ``worst_max_wait_s``
            Largest weekly MaxWait, seconds.
        ``relative_worst_max_wait``
            ``worst_max_wait_s`` over the baseline's largest weekly MaxWait on the same weeks
            of the same trace and split (the baseline's worst of the trace/split when the
            configuration was simulated on every week); ``0 / 0`` is 1.0.
        ``mean_avg_bsld``
            Mean AvgBSLD (dimensionless).
        ``mean_utilisation``
            Mean utilisation, in [0, 1].
        ``mean_jobs``
            Mean number of jobs per week (Float64).

    Raises
    ------
    ConfigurationError
        When ``relative`` breaks the invariants of :func:`add_relative_columns` or lacks its
        ``relative_*`` columns, or a worst-case ratio would be ``x / 0`` with ``x > 0``.
    """
    _validate(relative, baseline, relative=True)
    base = relative.filter(baseline.expr()).select(
        *_WEEK_KEY, pl.col("max_wait_s").alias("__baseline_max_wait_s")
    )
    joined = relative.join(base, on=list(_WEEK_KEY), how="left")
    rel_wait = pl.col("relative_avg_wait")
    summary = joined.group_by(list(_CONFIG_KEY)).agg(
        pl.len().cast(pl.Int64).alias("weeks"),
        pl.col("avg_wait_s").mean().alias("mean_avg_wait_s"),
        rel_wait.mean().alias("mean_relative_avg_wait"),
        *(
            rel_wait.quantile(d / 10, interpolation="linear").alias(f"relative_avg_wait_d{d}")
            for d in _DECILES
        ),
        pl.col("max_wait_s").mean().alias("mean_max_wait_s"),
        pl.col("max_wait_s").max().cast(pl.Float64).alias("worst_max_wait_s"),
        pl.col("relative_max_wait").mean().alias("mean_relative_max_wait"),
        *(
            pl.col("relative_max_wait")
            .quantile(d / 10, interpolation="linear")
            .alias(f"relative_max_wait_d{d}")
            for d in _DECILES
        ),
        pl.col("__baseline_max_wait_s").max().cast(pl.Float64).alias("__baseline_worst"),
        pl.col("avg_bsld").mean().alias("mean_avg_bsld"),
        pl.col("relative_avg_bsld").mean().alias("mean_relative_avg_bsld"),
        pl.col("utilisation").mean().cast(pl.Float64).alias("mean_utilisation"),
        pl.col("jobs").mean().cast(pl.Float64).alias("mean_jobs"),
    )
    bad = summary.filter((pl.col("__baseline_worst") == 0) & (pl.col("worst_max_wait_s") > 0))
    if bad.height:
        row = bad.sort(list(_CONFIG_KEY)).row(0, named=True)
        raise ConfigurationError(
            f"trace {row['trace']!r}, split {row['split']!r}: worst max_wait_s is 0 under the "
            f"baseline {baseline.label} but {row['worst_max_wait_s']!r} under "
            f"{row['primary']}/{row['backfill']}/{row['threshold']}; the ratio would be "
            "infinite"
        )
    return (
        summary.with_columns(
            _ratio(pl.col("worst_max_wait_s"), pl.col("__baseline_worst")).alias(
                "relative_worst_max_wait"
            )
        )
        .select(SUMMARY_COLUMNS)
        .sort(["trace", "split", "threshold_s", "primary", "backfill", "threshold"])
    )


def learned_pairs(relative: pl.DataFrame) -> pl.DataFrame:
    """The pair learned per ``(trace, threshold)`` on the ``"train"`` split.

    The learned pair is the ``(primary, backfill)`` with the lowest mean training AvgWait
    (``avg_wait_s``); ties go to the lexicographically smallest ``(primary, backfill)``. On a
    trace every pair is simulated on the same training weeks, so this is also the pair with the
    lowest *ratio of means* to the baseline, the statistic the protocol reports.

    Returns columns ``trace, threshold, threshold_s, primary, backfill``, sorted by ``trace,
    threshold_s`` (then ``threshold``).
    """
    require = [c for c in ("trace", "split", "threshold", "threshold_s", "primary", "backfill",
                           "avg_wait_s") if c not in relative.columns]  # fmt: skip
    if require:
        raise ConfigurationError(f"table lacks columns: {', '.join(require)}")
    return (
        relative.filter(pl.col("split") == _TRAIN)
        .group_by(["trace", "threshold", "threshold_s", "primary", "backfill"])
        .agg(pl.col("avg_wait_s").mean().alias("__train_mean"))
        .sort(["trace", "threshold", "__train_mean", "primary", "backfill"])
        .unique(subset=["trace", "threshold"], keep="first", maintain_order=True)
        .sort(["trace", "threshold_s", "threshold"])
        .drop("__train_mean")
    )


def train_test_protocol(
    relative: pl.DataFrame,
    baseline: Baseline,
    *,
    confidence: float = 0.95,
    bootstrap: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Learn the best queue-policy pair per trace and threshold on the training weeks and
    evaluate it on the test weeks against the baseline.

    The learned pair is :func:`learned_pairs`'s. Selection and report use one statistic, the
    *ratio of means*: mean AvgWait of the pair over mean AvgWait of the baseline on the same
    weeks (selecting on it is selecting on mean AvgWait). The mean of the weekly ratios is shown
    beside it, without inference. Rows of other splits than ``"train"`` and ``"test"`` are
    ignored, and so are test rows at thresholds absent from training.

    Inference respects how the weeks are made (:mod:`scheduler.studies.tuning.bootstrap`): the
    resampled test weeks share a few dozen source weeks, so they are not independent, and no
    interval or test here treats them as such. With ``bootstrap`` (rows of
    :func:`~scheduler.studies.tuning.bootstrap.bootstrap_replicates` for the learned pairs and the
    baseline on the test split), each interval is ``estimate ± t(K − 1) · SE`` with SE the
    standard deviation of the statistic over the source-week bootstrap replicates and K the
    number of source weeks of the test split
    (:func:`~scheduler.studies.common.statistics.bootstrap_t_interval`); the ratio's interval
    is built on the log scale. Without it, the interval and p-value columns are NaN.

    Parameters
    ----------
    relative
        Output of :func:`add_relative_columns` (same invariants).
    baseline
        The configuration used to build ``relative``, the reference of every comparison.
    confidence
        Level of the intervals, in (0, 1); ``1 - confidence`` is also the level of the
        Holm-adjusted tests.
    bootstrap
        Optional source-week bootstrap replicates (see above). Replicates where the learned
        pair or the baseline is missing are an error, as is a trace with replicates for some
        of its learned pairs but not others.

    Returns
    -------
    polars.DataFrame
        One row per ``(trace, threshold)`` with the columns of :data:`PROTOCOL_COLUMNS`,
        sorted by ``trace, threshold_s`` (then ``threshold``):

        ``trace``, ``threshold``, ``threshold_s``, ``primary``, ``backfill``
            The trace, the threshold (label and seconds) and the learned pair.
        ``train_weeks``, ``test_weeks``
            Weeks of the learned pair shared with the baseline in training and in test (Int64).
        ``train_ratio_of_means``, ``test_ratio_of_means``
            Mean AvgWait of the learned pair over the baseline's on those weeks (dimensionless;
            ``0 / 0`` is 1.0). The training value is what the selection minimised.
        ``test_ratio_ci_low``, ``test_ratio_ci_high``
            Its interval: ``exp(log r ± t(K − 1) · SE(log r*))``.
        ``train_mean_relative_avg_wait``, ``test_mean_relative_avg_wait``
            Mean of the weekly ratios ``relative_avg_wait`` (another statistic, shown for
            comparison; no inference).
        ``baseline_test_mean_avg_wait_s``, ``learned_test_mean_avg_wait_s``
            Mean AvgWait on the paired test weeks, seconds.
        ``test_mean_difference_s``, ``test_difference_ci_low_s``, ``test_difference_ci_high_s``
            Learned − baseline mean AvgWait on the test weeks (s; negative: the learned pair
            waits less) and its interval.
        ``baseline_test_mean_max_wait_s``, ``learned_test_mean_max_wait_s``,
        ``test_max_wait_difference_s`` and its ``_ci_low_s``/``_ci_high_s``
            The same for the mean weekly MaxWait, seconds.
        ``train_relative_worst_max_wait``, ``test_relative_worst_max_wait``
            Largest weekly MaxWait of the learned pair over the baseline's largest on the same
            weeks (``0 / 0`` is 1.0).
        ``train_mean_relative_max_wait``, ``test_mean_relative_max_wait``
            Mean weekly ``relative_max_wait`` of the learned pair.
        ``source_weeks``
            K, the source weeks of the test split the bootstrap resampled (null without).
        ``bootstrap_replicates``
            Replicates behind the intervals (0 without bootstrap).
        ``p_value``
            Two-sided test of a zero AvgWait difference, ``|d| / SE`` against t(K − 1)
            (:func:`~scheduler.studies.common.statistics.bootstrap_t_p_value`); NaN without
            bootstrap.
        ``p_holm``, ``significant``
            ``p_value`` adjusted by Holm's method over all rows with a p-value (valid under any
            dependence between the rows, which share weeks); ``p_holm < 1 - confidence``.

    Raises
    ------
    ConfigurationError
        When ``confidence`` is not in (0, 1), ``relative`` breaks the invariants of
        :func:`add_relative_columns`, a trace has no training or no test weeks, the learned
        pair has no test week shared with the baseline, or the bootstrap lacks replicates of
        a learned pair or of the baseline.
    """
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"confidence must be in (0, 1), got {confidence!r}")
    _validate(relative, baseline, relative=True)
    for trace in sorted(relative.get_column("trace").unique().to_list()):
        splits = set(relative.filter(pl.col("trace") == trace).get_column("split").to_list())
        for split in (_TRAIN, _TEST):
            if split not in splits:
                raise ConfigurationError(
                    f"trace {trace!r}: the {split!r} split has no weeks (splits present: "
                    f"{', '.join(sorted(splits))})"
                )

    train = relative.filter(pl.col("split") == _TRAIN)
    test = relative.filter(pl.col("split") == _TEST)
    rows = [
        _protocol_row(train, test, baseline, choice, confidence, bootstrap)
        for choice in learned_pairs(relative).iter_rows(named=True)
    ]
    table = pl.DataFrame(rows, schema=_PROTOCOL_SCHEMA, orient="row")
    p_values = table.get_column("p_value").to_numpy().astype(np.float64)
    p_holm = np.full(p_values.shape, np.nan)
    tested = np.isfinite(p_values)
    if tested.any():
        p_holm[tested] = multipletests(p_values[tested], method="holm")[1]
    return table.with_columns(
        pl.Series("p_holm", p_holm, dtype=pl.Float64),
        pl.Series("significant", p_holm < 1.0 - confidence, dtype=pl.Boolean),
    )


def _ratio_of_means(learned: np.ndarray, base: np.ndarray) -> float:
    """mean(learned) / mean(base), 0 / 0 → 1.0 (x / 0 is excluded by the table's checks)."""
    top, bottom = float(np.mean(learned)), float(np.mean(base))
    return 1.0 if bottom == 0.0 and top == 0.0 else top / bottom


def _bootstrap_pairs(
    bootstrap: pl.DataFrame | None, baseline: Baseline, choice: dict[str, Any], where: str
) -> tuple[pl.DataFrame | None, int]:
    """The replicates of the learned pair joined with the baseline's (``base_*`` columns), and
    the number of source weeks K; (None, 0) when the bootstrap has nothing for the trace."""
    if bootstrap is None:
        return None, 0
    of_trace = bootstrap.filter(pl.col("trace") == choice["trace"])
    if of_trace.height == 0:
        return None, 0
    learned_rows = of_trace.filter(
        (pl.col("primary") == choice["primary"]) & (pl.col("backfill") == choice["backfill"])
        & (pl.col("threshold") == choice["threshold"])
    )  # fmt: skip
    base_rows = of_trace.filter(baseline.expr())
    replicates = of_trace.get_column("replicate").n_unique()
    checks = (
        (learned_rows, f"the learned pair {choice['primary']}/{choice['backfill']}"),
        (base_rows, f"the baseline {baseline.label}"),
    )
    for rows, what in checks:
        if rows.get_column("replicate").n_unique() != replicates or rows.height != replicates:
            raise ConfigurationError(
                f"{where}: the bootstrap replicates do not all hold {what} once (was the "
                "bootstrap run with another selection or baseline?)"
            )
    paired = learned_rows.join(
        base_rows.select(
            "replicate",
            *(pl.col(c).alias(f"base_{c}") for c in ("mean_avg_wait_s", "mean_max_wait_s")),
        ),
        on="replicate",
    ).sort("replicate")
    return paired, int(of_trace.get_column("source_weeks").max())  # type: ignore[arg-type]


def _protocol_row(
    train: pl.DataFrame,
    test: pl.DataFrame,
    baseline: Baseline,
    choice: dict[str, Any],
    confidence: float,
    bootstrap: pl.DataFrame | None,
) -> list[Any]:
    """One row of :func:`train_test_protocol` (p_holm and significant left unset)."""
    trace, primary, backfill = choice["trace"], choice["primary"], choice["backfill"]
    pair = (
        (pl.col("trace") == trace)
        & (pl.col("threshold") == choice["threshold"])
        & (pl.col("primary") == primary)
        & (pl.col("backfill") == backfill)
    )
    base = baseline.expr() & (pl.col("trace") == trace)
    columns = ["week_index", "avg_wait_s", "max_wait_s", "relative_avg_wait", "relative_max_wait"]
    paired_train = _paired(train.filter(pair), train.filter(base), columns)
    paired_test = _paired(test.filter(pair), test.filter(base), columns)
    where = f"trace {trace!r}, threshold {choice['threshold']!r}"
    # paired_train is never empty: the pair was learned on training rows, and the baseline has
    # a row for every training week (checked by _validate)
    if paired_test.height == 0:
        raise ConfigurationError(
            f"{where}: the learned pair {primary}/{backfill} has no test week shared with the "
            f"baseline {baseline.label}"
        )

    def values(frame: pl.DataFrame, column: str) -> np.ndarray:
        return frame.get_column(column).to_numpy().astype(np.float64)

    test_wait, base_wait = values(paired_test, "avg_wait_s"), values(paired_test, "base_avg_wait_s")
    test_max, base_max = values(paired_test, "max_wait_s"), values(paired_test, "base_max_wait_s")
    ratio = _ratio_of_means(test_wait, base_wait)
    difference = float(np.mean(test_wait) - np.mean(base_wait))
    max_difference = float(np.mean(test_max) - np.mean(base_max))
    nan2 = (math.nan, math.nan)
    ratio_ci, difference_ci, max_ci, p_value = nan2, nan2, nan2, math.nan
    replicas, units = _bootstrap_pairs(bootstrap, baseline, choice, where)
    if replicas is not None:
        star_wait = values(replicas, "mean_avg_wait_s")
        star_base = values(replicas, "base_mean_avg_wait_s")
        star_diff = star_wait - star_base
        star_max = values(replicas, "mean_max_wait_s") - values(replicas, "base_mean_max_wait_s")
        difference_ci = bootstrap_t_interval(difference, star_diff, units=units,
                                             confidence=confidence)  # fmt: skip
        max_ci = bootstrap_t_interval(max_difference, star_max, units=units, confidence=confidence)
        p_value = bootstrap_t_p_value(difference, star_diff, units=units)
        if ratio > 0 and (star_wait > 0).all() and (star_base > 0).all():
            with np.errstate(divide="ignore"):
                log_low, log_high = bootstrap_t_interval(
                    math.log(ratio), np.log(star_wait / star_base), units=units,
                    confidence=confidence,
                )  # fmt: skip
            ratio_ci = (math.exp(log_low), math.exp(log_high))
    return [
        trace,
        choice["threshold"],
        choice["threshold_s"],
        primary,
        backfill,
        paired_train.height,
        paired_test.height,
        _ratio_of_means(
            values(paired_train, "avg_wait_s"), values(paired_train, "base_avg_wait_s")
        ),
        float(np.mean(values(paired_train, "relative_avg_wait"))),
        ratio,
        *ratio_ci,
        float(np.mean(values(paired_test, "relative_avg_wait"))),
        float(np.mean(base_wait)),
        float(np.mean(test_wait)),
        difference,
        *difference_ci,
        float(np.mean(base_max)),
        float(np.mean(test_max)),
        max_difference,
        *max_ci,
        _worst_ratio(paired_train, f"{where}, split {_TRAIN!r}"),
        _worst_ratio(paired_test, f"{where}, split {_TEST!r}"),
        float(np.mean(values(paired_train, "relative_max_wait"))),
        float(np.mean(values(paired_test, "relative_max_wait"))),
        units if replicas is not None else None,
        0 if replicas is None else replicas.height,
        p_value,
        math.nan,
        False,
    ]


def _paired(learned: pl.DataFrame, base: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    """Rows of ``learned`` joined with the baseline's ``avg_wait_s`` and ``max_wait_s`` (as
    ``base_*``) of the same week, keeping only weeks present in both, sorted by week."""
    return (
        learned.select(columns)
        .join(
            base.select(
                "week_index",
                pl.col("avg_wait_s").alias("base_avg_wait_s"),
                pl.col("max_wait_s").alias("base_max_wait_s"),
            ),
            on="week_index",
            how="inner",
        )
        .sort("week_index")
    )


def _worst_ratio(paired: pl.DataFrame, where: str) -> float:
    """Largest learned MaxWait over the largest baseline MaxWait of the same weeks (0/0 → 1).

    Raises ConfigurationError, naming ``where``, when the ratio would be x/0 with x > 0 (which
    a table built by :func:`add_relative_columns` never gives); NaN without weeks.
    """
    if paired.height == 0:
        return math.nan
    worst = float(paired.get_column("max_wait_s").max())  # type: ignore[arg-type]
    base_worst = float(paired.get_column("base_max_wait_s").max())  # type: ignore[arg-type]
    if base_worst == 0.0:
        if worst == 0.0:
            return 1.0
        raise ConfigurationError(
            f"{where}: worst max_wait_s is 0 under the baseline but {worst!r} under the learned "
            "pair; the ratio would be infinite"
        )
    return worst / base_worst


def _validate(df: pl.DataFrame, baseline: Baseline, *, relative: bool) -> None:
    """Check the invariants of a weekly (``relative=False``) or relative table."""
    required = [*REQUIRED_WEEKLY_COLUMNS, *(RELATIVE_COLUMNS.values() if relative else ())]
    missing = [name for name in required if name not in df.columns]
    if missing:
        hint = " (build it with add_relative_columns)" if relative else ""
        raise ConfigurationError(f"table lacks columns: {', '.join(missing)}{hint}")
    null_counts = df.select(pl.col(required).null_count()).row(0, named=True)
    with_nulls = [name for name in required if null_counts[name]]
    if with_nulls:
        raise ConfigurationError(f"columns hold nulls: {', '.join(with_nulls)}")
    for metric in RELATIVE_COLUMNS:
        value = pl.col(metric).cast(pl.Float64)
        bad = df.filter(~value.is_finite() | (value < 0))
        if bad.height:
            row = bad.sort(list(_ROW_KEY)).row(0, named=True)
            raise ConfigurationError(
                f"trace {row['trace']!r}, split {row['split']!r}, week {row['week_index']}, "
                f"{row['primary']}/{row['backfill']}/{row['threshold']}: {metric} must be "
                f"finite and >= 0, got {row[metric]!r}"
            )
    _check_unique_rows(df)
    _check_threshold_labels(df)
    _check_baseline_weeks(df, baseline)


def _check_unique_rows(df: pl.DataFrame) -> None:
    duplicated = df.group_by(list(_ROW_KEY)).len().filter(pl.col("len") > 1).sort(list(_ROW_KEY))
    if duplicated.height == 0:
        return
    listed = "; ".join(
        f"trace {r['trace']!r}, split {r['split']!r}, week {r['week_index']}, "
        f"{r['primary']}/{r['backfill']}/{r['threshold']} ({r['len']} rows)"
        for r in duplicated.head(_MAX_LISTED).iter_rows(named=True)
    )
    more = f" and {duplicated.height - _MAX_LISTED} more" if duplicated.height > _MAX_LISTED else ""
    raise ConfigurationError(
        f"duplicated (trace, split, week_index, primary, backfill, threshold): {listed}{more}"
    )


def _check_threshold_labels(df: pl.DataFrame) -> None:
    seconds = (
        df.group_by("threshold")
        .agg(pl.col("threshold_s").unique().sort())
        .filter(pl.col("threshold_s").list.len() > 1)
        .sort("threshold")
    )
    if seconds.height:
        label, values = seconds.row(0)
        raise ConfigurationError(
            f"threshold {label!r} comes with several threshold_s values: {values}"
        )


def _check_baseline_weeks(df: pl.DataFrame, baseline: Baseline) -> None:
    weeks = df.select(list(_WEEK_KEY)).unique()
    covered = df.filter(baseline.expr()).select(list(_WEEK_KEY))
    missing = (
        weeks.join(covered, on=list(_WEEK_KEY), how="anti")
        .group_by("trace", "split")
        .agg(pl.col("week_index").sort())
        .sort("trace", "split")
    )
    if missing.height == 0:
        return
    parts = []
    for trace, split, week_list in missing.iter_rows():
        listed = ", ".join(str(week) for week in week_list[:_MAX_LISTED])
        more = f" and {len(week_list) - _MAX_LISTED} more" if len(week_list) > _MAX_LISTED else ""
        parts.append(f"trace {trace!r}, split {split!r}: weeks {listed}{more}")
    raise ConfigurationError(
        f"the baseline {baseline.label} has no row for some weeks; " + "; ".join(parts)
    )


_TRAIN, _TEST = "train", "test"


def tuned_configuration(protocol: pl.DataFrame, trace: str) -> dict[str, Any]:
    """The tuned configuration of a trace: among the pairs the protocol learned at each
    threshold (:func:`train_test_protocol`), the one with the lowest training ratio of means
    (chosen on the training weeks alone; ties to the lower threshold, as the protocol's rows
    are sorted).

    Returns
    -------
    dict
        ``primary``, ``backfill``, ``threshold`` (label), ``threshold_s`` (seconds, ``inf``
        for none) and ``train_ratio_of_means`` of that row.

    Raises
    ------
    ConfigurationError
        The table lacks a column, or has no row for ``trace``.
    """
    columns = ("trace", "threshold", "threshold_s", "primary", "backfill", "train_ratio_of_means")
    missing = [name for name in columns if name not in protocol.columns]
    if missing:
        raise ConfigurationError(f"tuned configuration: the protocol lacks {', '.join(missing)}")
    rows = protocol.filter(pl.col("trace") == trace)
    if rows.height == 0:
        raise ConfigurationError(f"tuned configuration: the protocol has no row for {trace!r}")
    best = rows.with_row_index("__order").sort("train_ratio_of_means", "__order").row(0, named=True)
    return {name: best[name] for name in columns if name != "trace"}
