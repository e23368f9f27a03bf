"""Relative total-wait changes of the online study against the reference: ratio of sums,
percentile bootstrap over replicas, paired t-tests against the best fixed policy in hindsight
with Holm adjustment (:func:`relative_changes`), and the wide tables of the report
(:func:`fixed_policy_table`, :func:`strategy_table`, for
:func:`scheduler.studies.common.tables.markdown_table`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
from statsmodels.stats.multitest import multipletests

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.statistics import paired_t_p_value
from scheduler.studies.online.epsilon import choose_epsilon
from scheduler.studies.online.runs import (
    BEST_FIXED,
    FIXED_PREFIX,
    LOTO_BANDIT,
    RUN_KEY,
    SELECTOR_STRATEGIES,
    TOTALS_COLUMNS,
    check_unique,
    fixed_policy_name,
    policy_rank,
    require_columns,
    run_map,
    sort_study_order,
)
from scheduler.studies.online.selectors import bandit_epsilon, bandit_spec

__all__ = ["fixed_policy_table", "relative_changes", "strategy_table"]


def _relative(total: float, reference: float, where: str) -> float:
    """(total − reference) / reference; 0 for 0 / 0; raise for a positive total over 0."""
    if reference == 0.0:
        if total == 0.0:
            return 0.0
        raise ConfigurationError(
            f"relative_changes: {where}: the reference total waiting time is 0 s but the "
            f"strategy's is {total} s (relative change undefined)"
        )
    return (total - reference) / reference


def relative_changes(
    totals: pl.DataFrame,
    *,
    reference: str,
    strategies: Sequence[str] | None = None,
    chosen_epsilon: pl.DataFrame | None = None,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> pl.DataFrame:
    """Relative change of the total waiting time of every strategy against the reference.

    For a trace, strategy S and period, over the replicas K of S (all of which the reference
    must have run): ``relative_change = (Σ_K W(S) − Σ_K W(ref)) / Σ_K W(ref)``, a ratio of
    sums (not a mean of per-replica ratios); below 0 = less waiting than the reference.

    Two pseudo-strategies are added per trace:

    * :data:`BEST_FIXED` (period ``"none"``): the fixed policy with the lowest relative change,
      i.e. the lowest Σ_k W when the fixed policies ran on the same replicas (ties: the
      earlier in :data:`ONLINE_POLICIES`); its name is in ``best_fixed`` on every row;
    * :data:`LOTO_BANDIT` (per period): the bandit run whose ε ``chosen_epsilon`` gives for
      the trace held out (``source`` names it).

    Confidence interval: the replicas are resampled with replacement ``n_boot`` times
    (:func:`numpy.random.default_rng` seeded with ``seed`` for every row, so rows with the same
    number of replicas use the same draws) and the ratio of sums recomputed (0 / 0 → 0);
    ``ci_low`` and ``ci_high`` are its ``(1 ∓ confidence) / 2`` percentiles.

    Paired test: for every selector row (neither a fixed policy nor :data:`BEST_FIXED`), the
    differences d_k = W_k(S) − W_k(best fixed) (s) over the replicas both ran on give a
    two-sided one-sample t-test of mean 0 (:class:`statsmodels.stats.weightstats.DescrStatsW`)
    → ``p_value`` (1.0 when every d_k is 0, NaN with fewer than 2 replicas). ``p_holm``: Holm
    adjustment over all the tested rows of the table with a finite p-value (the
    :data:`LOTO_BANDIT` rows included); ``significant``: ``p_holm < 1 − confidence``. Fixed
    policy rows have NaN p-values and a null ``significant``.

    Parameters
    ----------
    totals
        Output of :func:`run_totals` (``total_wait_s`` in seconds).
    reference
        Strategy name of the reference, ``"fixed:P"`` (``OnlinePlan.reference``; one run per
        trace and replica). Its own rows have a relative change of exactly 0.
    strategies
        Strategies (and pseudo-strategies) to report; ``None``: every strategy of ``totals``
        and both pseudo-strategies. The best fixed policy is always chosen among all fixed
        policies of ``totals``.
    chosen_epsilon
        Output of :func:`choose_epsilon` (``period``, ``held_out`` and ``chosen_strategy`` or
        ``chosen``); ``None``: :func:`choose_epsilon` over every bandit strategy of ``totals``
        (no :data:`LOTO_BANDIT` row when there is none).
    confidence
        Confidence level of the intervals and significance level ``1 − confidence``, in (0, 1).
    n_boot
        Bootstrap resamples (>= 1).
    seed
        Seed of the bootstrap generator.

    Returns
    -------
    pl.DataFrame
        Columns :data:`CHANGE_COLUMNS`: ``trace``, ``strategy``, ``period``, ``replicas``
        (number used), ``total_wait_s`` (Σ_K W(S), s), ``reference_wait_s`` (Σ_K W(ref), s),
        ``relative_change``, ``ci_low``, ``ci_high`` (dimensionless), ``best_fixed`` (strategy
        name), ``p_value``, ``p_holm``, ``significant`` and ``source`` (the strategy whose runs
        the row shows). Sorted by trace, strategy (fixed policies, best fixed, selectors) and
        period.

    Raises
    ------
    ConfigurationError
        When a column is missing, a run is duplicated, a trace has no reference run or a
        strategy has replicas the reference lacks, the reference total is 0 while the
        strategy's is not, ``chosen_epsilon`` names a bandit run that does not exist, or
        ``confidence`` / ``n_boot`` is out of range.
    """
    what = "relative_changes"
    require_columns(totals, TOTALS_COLUMNS[:-1], what)
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"{what}: confidence must be in (0, 1), got {confidence!r}")
    if n_boot < 1:
        raise ConfigurationError(f"{what}: n_boot must be >= 1, got {n_boot!r}")
    check_unique(totals, RUN_KEY, what)
    runs = run_map(totals)
    references = _reference_runs(runs, reference)
    traces = sorted({key[0] for key in runs})
    for trace in traces:
        if trace not in references:
            raise ConfigurationError(
                f"{what}: trace {trace!r} has no run of the reference {reference!r}"
            )
    for (trace, strategy, period), waits in runs.items():
        extra = sorted(set(waits) - set(references[trace][1]))
        if extra:
            raise ConfigurationError(
                f"{what}: trace {trace!r}, strategy {strategy!r} (period {period!r}) has "
                f"replica(s) {extra} that the reference {reference!r} lacks"
            )

    best = {trace: _best_fixed(runs, references, trace) for trace in traces}
    rows: list[tuple[str, str, str, str]] = [  # (trace, shown name, period, source strategy)
        (trace, strategy, period, strategy) for trace, strategy, period in runs
    ]
    rows += [(trace, BEST_FIXED, "none", best[trace][1]) for trace in traces if best[trace]]
    wanted = None if strategies is None else set(strategies)
    if wanted is None or LOTO_BANDIT in wanted:
        rows += _loto_rows(runs, chosen_epsilon)
    if wanted is not None:
        rows = [row for row in rows if row[1] in wanted]

    alpha = 1.0 - confidence
    records: list[dict[str, object]] = []
    for trace, name, period, source in rows:
        waits = runs[(trace, source, period)]
        replicas = sorted(waits)
        w_s = np.array([waits[k] for k in replicas], dtype=np.float64)
        w_ref = np.array([references[trace][1][k] for k in replicas], dtype=np.float64)
        where = f"trace {trace!r}, strategy {name!r}, period {period!r}"
        change = _relative(float(w_s.sum()), float(w_ref.sum()), where)
        low, high = _bootstrap(w_s, w_ref, n_boot=n_boot, seed=seed, alpha=alpha)
        best_period, best_name = best[trace] if best[trace] else ("none", None)
        tested = fixed_policy_name(name) is None and name != BEST_FIXED
        p_value = math.nan
        if tested and best_name is not None:
            p_value = _paired_p(waits, runs[(trace, best_name, best_period)])
        records.append(
            {
                "trace": trace,
                "strategy": name,
                "period": period,
                "replicas": len(replicas),
                "total_wait_s": float(w_s.sum()),
                "reference_wait_s": float(w_ref.sum()),
                "relative_change": change,
                "ci_low": low,
                "ci_high": high,
                "best_fixed": best_name,
                "p_value": p_value,
                "_tested": tested,
            }
        )
    _holm(records, alpha)
    schema = {
        "trace": pl.String,
        "strategy": pl.String,
        "period": pl.String,
        "replicas": pl.Int64,
        "total_wait_s": pl.Float64,
        "reference_wait_s": pl.Float64,
        "relative_change": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "best_fixed": pl.String,
        "p_value": pl.Float64,
        "p_holm": pl.Float64,
        "significant": pl.Boolean,
        "source": pl.String,
    }
    for record, (_, _, _, source) in zip(records, rows, strict=True):
        record["source"] = source
        del record["_tested"]
    table = (
        pl.DataFrame(records, schema=schema, orient="row")
        if records
        else pl.DataFrame(schema=schema)
    )
    return sort_study_order(table, ("trace", "strategy", "period"))


def _reference_runs(
    runs: Mapping[tuple[str, str, str], Mapping[int, float]], reference: str
) -> dict[str, tuple[str, Mapping[int, float]]]:
    """``{trace: (period, {replica: W})}`` of the reference; raise when it has two periods."""
    found: dict[str, tuple[str, Mapping[int, float]]] = {}
    for (trace, strategy, period), waits in runs.items():
        if strategy != reference:
            continue
        if trace in found:
            raise ConfigurationError(
                f"relative_changes: the reference {reference!r} has several periods on trace "
                f"{trace!r} ({found[trace][0]!r}, {period!r})"
            )
        found[trace] = (period, waits)
    return found


def _best_fixed(
    runs: Mapping[tuple[str, str, str], Mapping[int, float]],
    references: Mapping[str, tuple[str, Mapping[int, float]]],
    trace: str,
) -> tuple[str, str] | None:
    """(period, strategy) of the fixed policy with the lowest relative change on ``trace``."""
    reference = references[trace][1]
    scored = []
    for (run_trace, strategy, period), waits in runs.items():
        policy = fixed_policy_name(strategy)
        if run_trace != trace or policy is None:
            continue
        total = sum(waits[k] for k in sorted(waits))
        base = sum(reference[k] for k in sorted(waits))
        change = _relative(total, base, f"trace {trace!r}, strategy {strategy!r}")
        scored.append((change, policy_rank(policy), strategy, period))
    if not scored:
        return None
    _, _, strategy, period = min(scored)
    return period, strategy


def _loto_rows(
    runs: Mapping[tuple[str, str, str], Mapping[int, float]],
    chosen_epsilon: pl.DataFrame | None,
) -> list[tuple[str, str, str, str]]:
    """(trace, :data:`LOTO_BANDIT`, period, chosen bandit strategy) for every held-out trace."""
    what = "relative_changes"
    if chosen_epsilon is None:
        bandits = sorted(
            {key[1] for key in runs if bandit_epsilon(key[1]) is not None},
            key=lambda name: bandit_epsilon(name) or 0.0,
        )
        if not bandits:
            return []
        table = pl.DataFrame(
            [
                {"trace": t, "replica": k, "strategy": s, "period": p, "total_wait_s": w}
                for (t, s, p), waits in runs.items()
                if s in bandits
                for k, w in waits.items()
            ]
        )
        chosen_epsilon = choose_epsilon(table, candidates=bandits)
    require_columns(chosen_epsilon, ("period", "held_out"), what)
    if "chosen_strategy" in chosen_epsilon.columns:
        names = [str(name) for name in chosen_epsilon["chosen_strategy"]]
    elif "chosen" in chosen_epsilon.columns:
        names = [bandit_spec(float(eps)) for eps in chosen_epsilon["chosen"]]
    else:
        raise ConfigurationError(f"{what}: chosen_epsilon needs 'chosen_strategy' or 'chosen'")
    traces = {key[0] for key in runs}
    rows = []
    for period, held_out, name in zip(
        chosen_epsilon["period"], chosen_epsilon["held_out"], names, strict=True
    ):
        if held_out not in traces:
            continue
        if (held_out, name, period) not in runs:
            raise ConfigurationError(
                f"{what}: chosen_epsilon picks {name!r} for trace {held_out!r} and period "
                f"{period!r}, but the table has no such run"
            )
        rows.append((str(held_out), LOTO_BANDIT, str(period), name))
    return rows


def _bootstrap(
    w_s: np.ndarray, w_ref: np.ndarray, *, n_boot: int, seed: int, alpha: float
) -> tuple[float, float]:
    """Percentile bootstrap interval of the ratio-of-sums change over resampled replicas."""
    n = w_s.size
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    index = rng.integers(0, n, size=(n_boot, n))
    sums_s = w_s[index].sum(axis=1)
    sums_ref = w_ref[index].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        changes = (sums_s - sums_ref) / sums_ref
    changes[(sums_ref == 0.0) & (sums_s == 0.0)] = 0.0
    low, high = np.quantile(changes, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def _paired_p(waits: Mapping[int, float], best: Mapping[int, float]) -> float:
    """Paired t-test p-value of W(S) − W(best fixed) over the common replicas."""
    common = sorted(set(waits) & set(best))
    if not common:
        return math.nan
    diff = np.array([waits[k] - best[k] for k in common], dtype=np.float64)
    return paired_t_p_value(diff)


def _holm(records: list[dict[str, object]], alpha: float) -> None:
    """Fill ``p_holm`` and ``significant`` of the tested records (Holm over finite p-values)."""
    tested = [
        i
        for i, record in enumerate(records)
        if record["_tested"] and math.isfinite(float(record["p_value"]))  # type: ignore[arg-type]
    ]
    for record in records:
        record["p_holm"] = math.nan
        record["significant"] = None
    if not tested:
        return
    p_values = np.array([records[i]["p_value"] for i in tested], dtype=np.float64)
    adjusted = multipletests(p_values, method="holm")[1]
    for i, p_holm in zip(tested, adjusted, strict=True):
        records[i]["p_holm"] = float(p_holm)
        records[i]["significant"] = bool(p_holm < alpha)


def _wide(long: pl.DataFrame, index: Sequence[str]) -> pl.DataFrame:
    """Pivot ``relative_change`` to one column per trace (sorted), keeping the row order."""
    traces = sorted(set(long["trace"]))
    order = long.select(index).unique(maintain_order=True)
    wide = long.pivot(on="trace", index=list(index), values="relative_change")
    for trace in traces:
        if trace not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(trace))
    return order.join(wide, on=list(index), how="left", maintain_order="left").select(
        *index, *traces
    )


def fixed_policy_table(changes: pl.DataFrame) -> pl.DataFrame:
    """Relative change of every fixed policy, one column per trace.

    Parameters
    ----------
    changes
        Output of :func:`relative_changes`.

    Returns
    -------
    pl.DataFrame
        Column ``policy`` (``"FCFS"``, ``"SPF"``..., in :data:`ONLINE_POLICIES` order) and one
        float column per trace (sorted by name) holding ``relative_change`` (dimensionless,
        null when the policy did not run on the trace).

    Raises
    ------
    ConfigurationError
        When a column is missing or the table has no fixed-policy row.
    """
    what = "fixed_policy_table"
    require_columns(changes, ("trace", "strategy", "relative_change"), what)
    fixed = changes.filter(pl.col("strategy").str.starts_with(FIXED_PREFIX))
    if fixed.height == 0:
        raise ConfigurationError(f"{what}: the table has no fixed-policy row")
    long = fixed.select(
        pl.col("strategy").str.slice(len(FIXED_PREFIX)).alias("policy"),
        "trace",
        "relative_change",
    )
    return _wide(sort_study_order(long, ("policy",)), ["policy"])


def strategy_table(changes: pl.DataFrame) -> pl.DataFrame:
    """Relative change of the best fixed policy and of the selectors, one column per trace.

    Parameters
    ----------
    changes
        Output of :func:`relative_changes`.

    Returns
    -------
    pl.DataFrame
        Columns ``strategy`` and ``period`` then one float column per trace (sorted by name)
        with ``relative_change``; one row per (strategy, period) present among
        :data:`BEST_FIXED` and :data:`~scheduler.studies.online.runs.SELECTOR_STRATEGIES` (the
        selector kinds in registration order, the bandit as :data:`LOTO_BANDIT`), in that
        order, periods sorted.

    Raises
    ------
    ConfigurationError
        When a column is missing or none of those strategies is in the table.
    """
    what = "strategy_table"
    require_columns(changes, ("trace", "strategy", "period", "relative_change"), what)
    shown = (BEST_FIXED, *SELECTOR_STRATEGIES)
    selected = changes.filter(pl.col("strategy").is_in(list(shown)))
    if selected.height == 0:
        raise ConfigurationError(
            f"{what}: none of the strategies {', '.join(shown)} is in the table "
            f"(strategies: {', '.join(sorted(set(changes['strategy'])))})"
        )
    long = sort_study_order(
        selected.select("strategy", "period", "trace", "relative_change"), ("strategy", "period")
    )
    return _wide(long, ["strategy", "period"])
