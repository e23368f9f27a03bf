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
   lowest mean training AvgWait and evaluates it on the test weeks against the baseline
   (t confidence intervals, paired t-test, sign test, Holm adjustment);
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
from scheduler.studies.common.statistics import paired_t_p_value, sign_p_value, t_interval
from scheduler.studies.tuning.schema import WEEKLY_COLUMNS, Baseline

__all__ = [
    "PROTOCOL_COLUMNS",
    "RELATIVE_COLUMNS",
    "REQUIRED_WEEKLY_COLUMNS",
    "SUMMARY_COLUMNS",
    "Baseline",
    "add_relative_columns",
    "summarize_configs",
    "train_test_protocol",
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
    "train_mean_relative_avg_wait": pl.Float64,
    "train_ci_low": pl.Float64,
    "train_ci_high": pl.Float64,
    "test_mean_relative_avg_wait": pl.Float64,
    "test_ci_low": pl.Float64,
    "test_ci_high": pl.Float64,
    "train_relative_worst_max_wait": pl.Float64,
    "test_relative_worst_max_wait": pl.Float64,
    "train_mean_relative_max_wait": pl.Float64,
    "test_mean_relative_max_wait": pl.Float64,
    "baseline_test_mean_avg_wait_s": pl.Float64,
    "learned_test_mean_avg_wait_s": pl.Float64,
    "test_mean_difference_s": pl.Float64,
    "t_p_value": pl.Float64,
    "sign_p_value": pl.Float64,
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
    return (
        pl.when(denominator == 0)
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


def train_test_protocol(
    relative: pl.DataFrame, baseline: Baseline, *, confidence: float = 0.95
) -> pl.DataFrame:
    """Learn the best queue-policy pair per trace and threshold on the training weeks and
    evaluate it on the test weeks against the baseline.

    For each ``(trace, threshold)`` of the ``"train"`` split, the *learned* pair is the
    ``(primary, backfill)`` with the lowest mean training ``avg_wait_s``; ties go to the
    lexicographically smallest ``(primary, backfill)``. Rows of other splits than ``"train"``
    and ``"test"`` are ignored, and so are test rows at thresholds absent from training.

    Parameters
    ----------
    relative
        Output of :func:`add_relative_columns` (same invariants).
    baseline
        The configuration used to build ``relative``, the reference of every comparison.
    confidence
        Level of the confidence intervals, in (0, 1); ``1 - confidence`` is also the level of
        the Holm-adjusted tests.

    Returns
    -------
    polars.DataFrame
        One row per ``(trace, threshold)`` with the columns of :data:`PROTOCOL_COLUMNS`,
        sorted by ``trace, threshold_s`` (then ``threshold``):

        ``trace``, ``threshold``, ``threshold_s``, ``primary``, ``backfill``
            The trace, the threshold (label and seconds) and the learned pair.
        ``train_weeks``, ``test_weeks``
            Weeks of the learned pair in training, and test weeks where both the learned pair
            and the baseline have a row (the *paired* test weeks); Int64.
        ``train_mean_relative_avg_wait``, ``test_mean_relative_avg_wait``
            Mean weekly ``relative_avg_wait`` of the learned pair (dimensionless).
        ``train_ci_low``, ``train_ci_high``, ``test_ci_low``, ``test_ci_high``
            t confidence interval of that mean
            (``DescrStatsW.tconfint_mean(alpha=1 - confidence)``); NaN with a single week.
        ``train_relative_worst_max_wait``, ``test_relative_worst_max_wait``
            Largest weekly MaxWait of the learned pair over the baseline's largest on the same
            weeks of the same split (``0 / 0`` is 1.0).
        ``train_mean_relative_max_wait``, ``test_mean_relative_max_wait``
            Mean weekly ``relative_max_wait`` of the learned pair.
        ``baseline_test_mean_avg_wait_s``, ``learned_test_mean_avg_wait_s``
            Mean AvgWait on the paired test weeks, seconds.
        ``test_mean_difference_s``
            Mean of ``learned − baseline`` weekly AvgWait on the paired test weeks, seconds
            (negative: the learned pair waits less).
        ``t_p_value``
            Two-sided paired t-test of those differences against 0
            (``DescrStatsW(diff).ttest_mean(0)``); 1.0 when every difference is exactly 0,
            NaN with a single week and a non-zero difference.
        ``sign_p_value``
            Two-sided sign test of the differences (statsmodels ``sign_test``; zero
            differences are discarded); 1.0 when every difference is exactly 0.
        ``p_holm``
            ``t_p_value`` adjusted by Holm's method over all rows of the table (all traces and
            thresholds); rows with a NaN ``t_p_value`` stay NaN and do not count in the family.
        ``significant``
            ``p_holm < 1 - confidence`` (False for NaN).

    Raises
    ------
    ConfigurationError
        When ``confidence`` is not in (0, 1), ``relative`` breaks the invariants of
        :func:`add_relative_columns`, a trace has no training or no test weeks, or the learned
        pair has no test week shared with the baseline.
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
    learned = (
        train.group_by(["trace", "threshold", "threshold_s", "primary", "backfill"])
        .agg(pl.col("avg_wait_s").mean().alias("__train_mean"))
        .sort(["trace", "threshold", "__train_mean", "primary", "backfill"])
        .unique(subset=["trace", "threshold"], keep="first", maintain_order=True)
        .sort(["trace", "threshold_s", "threshold"])
    )
    rows = [
        _protocol_row(train, test, baseline, choice, confidence)
        for choice in learned.iter_rows(named=True)
    ]
    table = pl.DataFrame(rows, schema=_PROTOCOL_SCHEMA, orient="row")
    p_values = table.get_column("t_p_value").to_numpy().astype(np.float64)
    p_holm = np.full(p_values.shape, np.nan)
    tested = np.isfinite(p_values)
    if tested.any():
        p_holm[tested] = multipletests(p_values[tested], method="holm")[1]
    return table.with_columns(
        pl.Series("p_holm", p_holm, dtype=pl.Float64),
        pl.Series("significant", p_holm < 1.0 - confidence, dtype=pl.Boolean),
    )


def _protocol_row(
    train: pl.DataFrame,
    test: pl.DataFrame,
    baseline: Baseline,
    choice: dict[str, Any],
    confidence: float,
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
    if paired_test.height == 0:
        raise ConfigurationError(
            f"{where}: the learned pair {primary}/{backfill} has no test week shared with the "
            f"baseline {baseline.label}"
        )

    train_rel = paired_train.get_column("relative_avg_wait").to_numpy()
    test_rel = paired_test.get_column("relative_avg_wait").to_numpy()
    learned_wait = paired_test.get_column("avg_wait_s").to_numpy().astype(np.float64)
    baseline_wait = paired_test.get_column("base_avg_wait_s").to_numpy().astype(np.float64)
    diff = learned_wait - baseline_wait
    return [
        trace,
        choice["threshold"],
        choice["threshold_s"],
        primary,
        backfill,
        paired_train.height,
        paired_test.height,
        float(np.mean(train_rel)),
        *t_interval(train_rel, confidence),
        float(np.mean(test_rel)),
        *t_interval(test_rel, confidence),
        _worst_ratio(paired_train, f"{where}, split {_TRAIN!r}"),
        _worst_ratio(paired_test, f"{where}, split {_TEST!r}"),
        float(paired_train.get_column("relative_max_wait").mean()),  # type: ignore[arg-type]
        float(paired_test.get_column("relative_max_wait").mean()),  # type: ignore[arg-type]
        float(np.mean(baseline_wait)),
        float(np.mean(learned_wait)),
        float(np.mean(diff)),
        paired_t_p_value(diff),
        sign_p_value(diff),
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
