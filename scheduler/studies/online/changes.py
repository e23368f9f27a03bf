"""Relative total-wait changes of the online study against the reference: ratio of sums,
percentile bootstrap over replicas, paired t-tests against the cross-fitted best fixed policy
with Holm adjustment (:func:`relative_changes`), and the wide tables of the report
(:func:`fixed_policy_table`, :func:`strategy_table`, for
:func:`scheduler.studies.common.tables.markdown_table`).

**Why replicas, and why cross-fitting.** The replicas of a trace are independent resampled
two-year traces: replica k draws the resampled weeks k·W … k·W + W − 1 of the log (W weeks per
replica, :func:`~scheduler.studies.online.long_traces.long_trace`), so two replicas never share a
week draw and a test over replicas is a test over units independent *given the log*. All
replicas draw from the same log's few source weeks, so the intervals and tests speak for this
log's resampling distribution, not for another log of the same system (docs/online.md, "What
the tests over replicas are about"). Testing a selector against the fixed policy that is best
*in hindsight on the same replicas* is biased toward that policy (it is the minimum of many
noisy sums, chosen with the very noise it is then compared on). The
tests therefore use a cross-fitted comparator: the replicas alternate between two folds
(:data:`CROSSFIT_FOLDS`) and on a replica of one fold the comparator is the fixed policy with
the lowest total waiting time over the *other* fold, whose choice never sees that replica; the
paired t-test is then over all replicas. The hindsight best stays in the table as a descriptive
row, without a test.

In a known-null simulation (12 identically distributed fixed policies, a selector drawn from the
same law, 2–60 replicas, α = 5 %, two-sided), the hindsight comparator is found significantly
better than the selector in 8–16 % of the repetitions; the two-fold comparator rejects in 6–7 %
(in either direction; 3–4.5 % finding the comparator better), and leave-one-replica-out in up to
30 % (its choices flip between near-tied policies from one left-out replica to the next, and its
paired differences are dependent). Testing only the other fold's replicas would be exact but
uses half the replicas. ``tests/studies/online/test_changes.py`` checks the two-fold rule.
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
    ADDITION_MARK,
    BEST_FIXED,
    CONFIGURED_BANDIT,
    CROSSFIT_FIXED,
    FIXED_PREFIX,
    LOTO_BANDIT,
    RUN_KEY,
    SELECTOR_STRATEGIES,
    TOTALS_COLUMNS,
    check_unique,
    display_name,
    fixed_policy_name,
    from_thesis,
    policy_rank,
    require_columns,
    run_map,
    sort_study_order,
)
from scheduler.studies.online.selectors import bandit_epsilon, bandit_spec

__all__ = [
    "CROSSFIT_FOLDS",
    "STRATEGY_TABLE_NOTE",
    "fixed_policy_table",
    "relative_changes",
    "strategy_table",
]

#: Folds of the cross-fitted comparator: the replicas (in increasing order) alternate between
#: two folds, and the comparator of a replica is chosen on the other fold. Two folds, not one
#: per replica: leave-one-replica-out picks an unstable comparator under near ties, whose
#: paired differences are dependent, and its t-test rejects a true null far too often (see
#: the module docstring).
CROSSFIT_FOLDS = 2


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
    configured_epsilon: float | None = None,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> pl.DataFrame:
    """Relative change of the total waiting time of every strategy against the reference.

    For a trace, strategy S and period, over the replicas K of S (all of which the reference
    must have run): ``relative_change = (Σ_K W(S) − Σ_K W(ref)) / Σ_K W(ref)``, a ratio of
    sums (not a mean of per-replica ratios); below 0 = less waiting than the reference.

    Pseudo-strategies added per trace:

    * :data:`BEST_FIXED` (period ``"none"``): the fixed policy with the lowest relative change,
      i.e. the lowest Σ_k W when the fixed policies ran on the same replicas (ties: the
      earlier in :data:`ONLINE_POLICIES`), chosen in hindsight on the replicas it is shown on;
      its name is in ``best_fixed`` on every row. Descriptive: never tested;
    * :data:`CROSSFIT_FIXED` (period ``"none"``): the replicas, in increasing order, alternate
      between two folds (:data:`CROSSFIT_FOLDS`); on a replica r the comparator c(r) is the
      fixed policy with the lowest Σ W over the replicas of the other fold (those every fixed
      policy ran on; ties as above); W_r of the row is W_r(c(r)). ``source`` lists c(r)
      replica by replica, comma-separated (``"fixed:SPF,fixed:LQF,fixed:SPF"``). With a single
      replica there is no other fold and no such row;
    * :data:`LOTO_BANDIT` or :data:`CONFIGURED_BANDIT` (per period): the bandit run whose ε
      ``chosen_epsilon`` gives for the trace held out (``source`` names it;
      :data:`CONFIGURED_BANDIT` when its ``how`` is ``"configured"``).

    Confidence interval: the replicas are resampled with replacement ``n_boot`` times
    (:func:`numpy.random.default_rng` seeded with ``seed`` for every row, so rows with the same
    number of replicas use the same draws) and the ratio of sums recomputed (0 / 0 → 0);
    ``ci_low`` and ``ci_high`` are its ``(1 ∓ confidence) / 2`` percentiles.

    Paired test (cross-fitted, see the module docstring): for every selector row (not a fixed
    policy, :data:`BEST_FIXED` or :data:`CROSSFIT_FIXED`), the differences
    d_r = W_r(S) − W_r(c(r)) (s) over the replicas r of S that have a comparator give a
    two-sided one-sample t-test of mean 0 (:class:`statsmodels.stats.weightstats.DescrStatsW`)
    → ``p_value`` (1.0 when every d_r is 0, NaN with fewer than 2 replicas). ``p_holm``: Holm
    adjustment over all the tested rows of the table with a finite p-value (the bandit-choice
    rows included); ``significant``: ``p_holm < 1 − confidence``. The other rows have NaN
    p-values and a null ``significant``.

    Parameters
    ----------
    totals
        Output of :func:`run_totals` (``total_wait_s`` in seconds).
    reference
        Strategy name of the reference, ``"fixed:P"`` (``OnlinePlan.reference``; one run per
        trace and replica). Its own rows have a relative change of exactly 0.
    strategies
        Strategies (and pseudo-strategies) to report; ``None``: every strategy of ``totals``
        and the pseudo-strategies. The best fixed policies are always chosen among all fixed
        policies of ``totals``.
    chosen_epsilon
        Output of :func:`choose_epsilon` (``period``, ``held_out``, ``chosen_strategy`` or
        ``chosen``, optionally ``how``); ``None``: :func:`choose_epsilon` over every bandit
        strategy of ``totals`` (pooled vote; with a single trace ``configured_epsilon``; no
        bandit-choice row when there is no bandit).
    configured_epsilon
        The configured ε (``online.epsilon``) for the default ``chosen_epsilon`` of a single
        trace.
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
        name of the hindsight best), ``p_value``, ``p_holm``, ``significant``, ``source`` (the
        strategy whose runs the row shows) and ``from_thesis`` (False for schedlab's additions,
        :func:`~scheduler.studies.online.runs.from_thesis`). Sorted by trace, strategy (fixed
        policies, best fixed, selectors) and period.

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

    fixed_runs: dict[str, dict[tuple[str, str], Mapping[int, float]]] = {t: {} for t in traces}
    for (trace, strategy, period), waits in runs.items():
        if fixed_policy_name(strategy) is not None:
            fixed_runs[trace][(strategy, period)] = waits
    best = {trace: _best_fixed(fixed_runs[trace], references, trace) for trace in traces}
    crossfit = {trace: _crossfit_fixed(fixed_runs[trace], references, trace) for trace in traces}
    for trace in traces:  # the cross-fitted comparator's runs, W_r(c(r)), as a pseudo-run
        if crossfit[trace]:
            runs[(trace, CROSSFIT_FIXED, "none")] = {
                r: runs[(trace, name, "none")][r] for r, name in crossfit[trace].items()
            }
    rows: list[tuple[str, str, str, str]] = [  # (trace, shown name, period, source strategy)
        (trace, strategy, period, strategy)
        for trace, strategy, period in runs
        if strategy != CROSSFIT_FIXED
    ]
    rows += [(trace, BEST_FIXED, "none", best[trace][1]) for trace in traces if best[trace]]
    rows += [(trace, CROSSFIT_FIXED, "none", CROSSFIT_FIXED) for trace in traces
             if crossfit[trace]]  # fmt: skip
    wanted = None if strategies is None else set(strategies)
    if wanted is None or wanted & {LOTO_BANDIT, CONFIGURED_BANDIT}:
        rows += _bandit_choice_rows(runs, chosen_epsilon, configured_epsilon)
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
        best_name = best[trace][1] if best[trace] else None
        tested = fixed_policy_name(name) is None and name not in (BEST_FIXED, CROSSFIT_FIXED)
        p_value = math.nan
        if tested and crossfit[trace]:
            p_value = _paired_p(waits, runs[(trace, CROSSFIT_FIXED, "none")])
        if name == CROSSFIT_FIXED:
            source = ",".join(crossfit[trace][r] for r in replicas)
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
                "_source": source,
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
        "from_thesis": pl.Boolean,
    }
    for record in records:
        record["source"] = record.pop("_source")
        record["from_thesis"] = from_thesis(str(record["strategy"]))
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
    fixed: Mapping[tuple[str, str], Mapping[int, float]],
    references: Mapping[str, tuple[str, Mapping[int, float]]],
    trace: str,
) -> tuple[str, str] | None:
    """(period, strategy) of the fixed policy with the lowest relative change on ``trace``
    (``fixed``: the trace's fixed-policy runs, ``{(strategy, period): {replica: W}}``)."""
    reference = references[trace][1]
    scored = []
    for (strategy, period), waits in fixed.items():
        policy = fixed_policy_name(strategy) or ""
        total = sum(waits[k] for k in sorted(waits))
        base = sum(reference[k] for k in sorted(waits))
        change = _relative(total, base, f"trace {trace!r}, strategy {strategy!r}")
        scored.append((change, policy_rank(policy), strategy, period))
    if not scored:
        return None
    _, _, strategy, period = min(scored)
    return period, strategy


def _crossfit_fixed(
    fixed_runs: Mapping[tuple[str, str], Mapping[int, float]],
    references: Mapping[str, tuple[str, Mapping[int, float]]],
    trace: str,
) -> dict[int, str]:
    """``{r: c(r)}``: the cross-fitted comparator of each replica r of the reference on
    ``trace``. The replicas, in increasing order, are dealt into :data:`CROSSFIT_FOLDS` folds
    (position mod the number of folds); c(r) is the fixed strategy with the lowest Σ W over the
    replicas of the *other* folds that every fixed policy ran on (ties: the earlier in
    :data:`ONLINE_POLICIES`). Replicas whose other folds hold no such replica, or without a run
    of c(r), are left out. ``fixed_runs``: the trace's fixed-policy runs."""
    fixed = {strategy: waits for (strategy, _), waits in fixed_runs.items()}
    if not fixed:
        return {}
    common = set.intersection(*(set(waits) for waits in fixed.values()))
    replicas = sorted(references[trace][1])
    fold = {r: position % CROSSFIT_FOLDS for position, r in enumerate(replicas)}
    by_fold: dict[int, str | None] = {}
    for f in range(CROSSFIT_FOLDS):
        others = sorted(k for k in common if fold.get(k, f) != f)
        if not others:
            by_fold[f] = None
            continue
        scored = [
            (sum(waits[k] for k in others), policy_rank(fixed_policy_name(name) or ""), name)
            for name, waits in fixed.items()
        ]
        by_fold[f] = min(scored)[2]
    chosen: dict[int, str] = {}
    for r in replicas:
        name = by_fold[fold[r]]
        if name is not None and r in fixed[name]:
            chosen[r] = name
    return chosen


def _bandit_choice_rows(
    runs: Mapping[tuple[str, str, str], Mapping[int, float]],
    chosen_epsilon: pl.DataFrame | None,
    configured_epsilon: float | None,
) -> list[tuple[str, str, str, str]]:
    """(trace, :data:`LOTO_BANDIT` or :data:`CONFIGURED_BANDIT`, period, chosen bandit
    strategy) for every held-out trace."""
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
        chosen_epsilon = choose_epsilon(table, candidates=bandits, configured=configured_epsilon)
    require_columns(chosen_epsilon, ("period", "held_out"), what)
    if "chosen_strategy" in chosen_epsilon.columns:
        names = [str(name) for name in chosen_epsilon["chosen_strategy"]]
    elif "chosen" in chosen_epsilon.columns:
        names = [bandit_spec(float(eps)) for eps in chosen_epsilon["chosen"]]
    else:
        raise ConfigurationError(f"{what}: chosen_epsilon needs 'chosen_strategy' or 'chosen'")
    hows = (
        [str(how) for how in chosen_epsilon["how"]]
        if "how" in chosen_epsilon.columns
        else ["vote"] * chosen_epsilon.height
    )
    traces = {key[0] for key in runs}
    rows = []
    for period, held_out, name, how in zip(
        chosen_epsilon["period"], chosen_epsilon["held_out"], names, hows, strict=True
    ):
        if held_out not in traces:
            continue
        if (held_out, name, period) not in runs:
            raise ConfigurationError(
                f"{what}: chosen_epsilon picks {name!r} for trace {held_out!r} and period "
                f"{period!r}, but the table has no such run"
            )
        shown = CONFIGURED_BANDIT if how == "configured" else LOTO_BANDIT
        rows.append((str(held_out), shown, str(period), name))
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


def _paired_p(waits: Mapping[int, float], comparator: Mapping[int, float]) -> float:
    """Paired t-test p-value of W(S) − W(comparator) over the common replicas."""
    common = sorted(set(waits) & set(comparator))
    if not common:
        return math.nan
    diff = np.array([waits[k] - comparator[k] for k in common], dtype=np.float64)
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
    """Relative change of the best fixed policies and of the selectors, one column per trace.

    Parameters
    ----------
    changes
        Output of :func:`relative_changes`.

    Returns
    -------
    pl.DataFrame
        Columns ``strategy`` and ``period`` then one float column per trace (sorted by name)
        with ``relative_change``; one row per (strategy, period) present among
        :data:`BEST_FIXED`, :data:`CROSSFIT_FIXED` and
        :data:`~scheduler.studies.online.runs.SELECTOR_STRATEGIES` (the selector kinds in
        registration order, the bandit as its chosen-ε row), in that order, periods sorted.
        A schedlab addition is shown as ``"<name> (addition)"``
        (:func:`~scheduler.studies.online.runs.display_name`).

    Raises
    ------
    ConfigurationError
        When a column is missing or none of those strategies is in the table.
    """
    what = "strategy_table"
    require_columns(changes, ("trace", "strategy", "period", "relative_change"), what)
    shown = (BEST_FIXED, CROSSFIT_FIXED, *SELECTOR_STRATEGIES)
    selected = changes.filter(pl.col("strategy").is_in(list(shown)))
    if selected.height == 0:
        raise ConfigurationError(
            f"{what}: none of the strategies {', '.join(shown)} is in the table "
            f"(strategies: {', '.join(sorted(set(changes['strategy'])))})"
        )
    long = sort_study_order(
        selected.select("strategy", "period", "trace", "relative_change"), ("strategy", "period")
    ).with_columns(pl.col("strategy").map_elements(display_name, return_dtype=pl.String))
    return _wide(long, ["strategy", "period"])


#: The note under the strategy table of the report: what its labels mean.
STRATEGY_TABLE_NOTE = (
    f"`{BEST_FIXED}`: the fixed policy best over the replicas shown (descriptive, optimistic); "
    f"`{CROSSFIT_FIXED}`: on each replica, the fixed policy best on the other half of the "
    f"replicas (the "
    f"comparator of the selectors' paired tests, p-values in changes.csv); "
    f"`{LOTO_BANDIT}`: ε by leave-one-trace-out vote; `{CONFIGURED_BANDIT}`: ε = online.epsilon "
    f"(a single trace cannot vote); `…{ADDITION_MARK}`: schedlab's selectors, not in the "
    "published study."
)
