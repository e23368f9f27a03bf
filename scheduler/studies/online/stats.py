"""Statistics of the online policy-selection study of EASY backfilling.

For each trace (log) and each of R resampled two-year traces (*replicas* k = 0..R-1) many
*strategies* were run: the fixed policies (``"fixed:FCFS"``, ``"fixed:SPF"``..., period
``"none"``) and the selectors (``"random"``, ``"full"``, ``"noisy"``, ``"bandit(eps=0.1)"``...,
``"ucb"``, ``"swucb"``, ``"thompson"``), each with a policy period ``"1d"`` or ``"1w"``. The
reference is ``"fixed:FCFS"``.

The two input tables (polars) are

* the *curves* table (:data:`CURVE_COLUMNS`): one row per (trace, replica, strategy, period,
  day) with ``cumulative_wait_s``, the sum of the waits (s) of the jobs finished by the end of
  that day (days since the replica's first submission), and ``finished_jobs``. The total
  waiting time W of a run is its cumulative wait on its last day;
* the *choices* table (:data:`CHOICE_COLUMNS`): one row per (trace, replica, strategy, period,
  period_index) with the policy the strategy chose for that period.

Functions:

1. :func:`run_totals`: W and the number of jobs of every run;
2. :func:`choose_epsilon`: the bandit ε of each trace by a leave-one-trace-out majority vote;
3. :func:`relative_changes`: ratio-of-sums change of the total waiting time against the
   reference, bootstrap confidence interval over replicas, paired t-test against the best fixed
   policy in hindsight with Holm adjustment;
4. :func:`fixed_policy_table` and :func:`strategy_table`: wide tables (one column per trace)
   for :func:`scheduler.studies.tuning.stats.markdown_table`;
5. :func:`improvement_curves`: the cumulative waiting-time improvement over time;
6. :func:`choice_shares`: how often each policy is chosen over time.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import polars as pl
from statsmodels.stats.multitest import multipletests

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.statistics import paired_t_p_value

__all__ = [
    "BANDIT_CANDIDATES",
    "BEST_FIXED",
    "CHANGE_COLUMNS",
    "CHOICE_COLUMNS",
    "CURVE_COLUMNS",
    "EPSILON_COLUMNS",
    "FIXED_PREFIX",
    "IMPROVEMENT_COLUMNS",
    "LOTO_BANDIT",
    "ONLINE_POLICIES",
    "REFERENCE",
    "SELECTORS",
    "SHARE_COLUMNS",
    "TOTALS_COLUMNS",
    "choice_shares",
    "choose_epsilon",
    "fixed_policy_name",
    "fixed_policy_table",
    "improvement_curves",
    "relative_changes",
    "run_totals",
    "strategy_table",
]

#: The twelve queue policies of the study, in the order used for tables and legends.
ONLINE_POLICIES: tuple[str, ...] = (
    "FCFS",
    "LCFS",
    "SPF",
    "LPF",
    "SQF",
    "LQF",
    "LEXP",
    "SEXP",
    "LRF",
    "SRF",
    "LAF",
    "SAF",
)
#: Strategy names of the fixed policies start with this prefix (``"fixed:SPF"``).
FIXED_PREFIX = "fixed:"
#: The reference strategy (EASY with FCFS for the whole trace).
REFERENCE = "fixed:FCFS"
#: Pseudo-strategy: per trace, the fixed policy with the lowest total waiting time.
BEST_FIXED = "best fixed (hindsight)"
#: Pseudo-strategy: per trace and period, the bandit whose ε the other traces voted for.
LOTO_BANDIT = "bandit (LOTO ε)"
#: The ε-greedy bandits of the study.
BANDIT_CANDIDATES: tuple[str, ...] = tuple(
    f"bandit(eps={eps})" for eps in ("0.1", "0.3", "0.5", "0.7", "0.9")
)
#: Selector strategies in table order (bandits with an explicit ε sort by ε after ``"noisy"``).
SELECTORS: tuple[str, ...] = ("random", "full", "noisy", LOTO_BANDIT, "ucb", "swucb", "thompson")

#: Columns of the curves table.
CURVE_COLUMNS: tuple[str, ...] = (
    "trace",
    "replica",
    "strategy",
    "period",
    "day",
    "cumulative_wait_s",
    "finished_jobs",
)
#: Columns of the choices table.
CHOICE_COLUMNS: tuple[str, ...] = (
    "trace",
    "replica",
    "strategy",
    "period",
    "period_index",
    "policy",
)
#: Columns of :func:`run_totals`.
TOTALS_COLUMNS: tuple[str, ...] = ("trace", "replica", "strategy", "period", "total_wait_s", "jobs")
#: Columns of :func:`choose_epsilon`.
EPSILON_COLUMNS: tuple[str, ...] = (
    "period",
    "held_out",
    "chosen",
    "chosen_strategy",
    "votes",
    "own_best",
    "note",
)
#: Columns of :func:`relative_changes`.
CHANGE_COLUMNS: tuple[str, ...] = (
    "trace",
    "strategy",
    "period",
    "replicas",
    "total_wait_s",
    "reference_wait_s",
    "relative_change",
    "ci_low",
    "ci_high",
    "best_fixed",
    "p_value",
    "p_holm",
    "significant",
    "source",
)
#: Columns of :func:`improvement_curves`.
IMPROVEMENT_COLUMNS: tuple[str, ...] = (
    "trace",
    "strategy",
    "period",
    "day",
    "mean_improvement",
    "q10",
    "q90",
    "replicas",
)
#: Columns of :func:`choice_shares`.
SHARE_COLUMNS: tuple[str, ...] = ("trace", "strategy", "period", "day", "policy", "share")

_RUN_KEY: tuple[str, ...] = ("trace", "replica", "strategy", "period")
_GROUP_KEY: tuple[str, ...] = ("trace", "strategy", "period")
_DAY_S = 86_400.0
_DEFAULT_PERIODS: dict[str, float] = {"1d": 86_400.0, "1w": 604_800.0}
_BANDIT = re.compile(r"^bandit\(eps=([0-9]*\.?[0-9]+)\)$")


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _require(table: pl.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise :class:`ConfigurationError` when ``table`` lacks one of ``columns``."""
    missing = [name for name in columns if name not in table.columns]
    if missing:
        raise ConfigurationError(f"{what}: the table lacks the column(s) {', '.join(missing)}")


def _check_unique(table: pl.DataFrame, key: Sequence[str], what: str) -> None:
    """Raise :class:`ConfigurationError` when two rows share the same ``key`` values."""
    duplicated = table.group_by(key).len().filter(pl.col("len") > 1)
    if duplicated.height:
        first = duplicated.row(0, named=True)
        where = ", ".join(f"{name} {first[name]!r}" for name in key)
        raise ConfigurationError(
            f"{what}: {duplicated.height} duplicated row key(s) ({', '.join(key)}), e.g. {where}"
        )


def _epsilon(strategy: str) -> float | None:
    """ε of a bandit strategy name (``"bandit(eps=0.3)"`` → 0.3), ``None`` for other names."""
    match = _BANDIT.match(strategy)
    return float(match.group(1)) if match else None


def _eps_text(eps: float) -> str:
    """ε as short text (0.1 → ``"0.1"``)."""
    return f"{eps:g}"


def fixed_policy_name(strategy: str) -> str | None:
    """Policy of a fixed strategy (``"fixed:SPF"`` → ``"SPF"``), ``None`` for other names.

    Parameters
    ----------
    strategy
        A strategy name of the study.

    Returns
    -------
    str or None
        The policy name after :data:`FIXED_PREFIX`, or ``None`` when the name lacks it.
    """
    return strategy[len(FIXED_PREFIX) :] if strategy.startswith(FIXED_PREFIX) else None


def _strategy_rank(strategy: str) -> tuple[int, float, str]:
    """Sort key of strategies: fixed policies (study order), best fixed, then the selectors."""
    policy = fixed_policy_name(strategy)
    if policy is not None:
        index = ONLINE_POLICIES.index(policy) if policy in ONLINE_POLICIES else len(ONLINE_POLICIES)
        return (0, float(index), strategy)
    if strategy == BEST_FIXED:
        return (1, 0.0, strategy)
    eps = _epsilon(strategy)
    if eps is not None:  # between "noisy" and the LOTO bandit
        return (2, SELECTORS.index(LOTO_BANDIT) - 0.5 + eps / 10.0, strategy)
    if strategy in SELECTORS:
        return (2, float(SELECTORS.index(strategy)), strategy)
    return (3, 0.0, strategy)


def _policy_rank(policy: str) -> int:
    """Position of a policy in :data:`ONLINE_POLICIES` (unknown policies last)."""
    return ONLINE_POLICIES.index(policy) if policy in ONLINE_POLICIES else len(ONLINE_POLICIES)


def _sort(table: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """``table`` sorted by ``by``; ``strategy`` and ``policy`` in study order, not by name."""
    if table.height == 0:
        return table
    ranked: list[pl.Expr] = []
    keys: list[str] = []
    for name in by:
        if name in ("strategy", "policy"):
            rank = _strategy_rank if name == "strategy" else _policy_rank
            levels = sorted(set(table[name]), key=lambda value: (rank(value), value))
            order = {value: i for i, value in enumerate(levels)}
            ranked.append(
                pl.col(name).replace_strict(order, return_dtype=pl.Int64).alias(f"_{name}")
            )
            keys.append(f"_{name}")
        else:
            keys.append(name)
    return table.with_columns(ranked).sort(keys).drop([key for key in keys if key.startswith("_")])


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


# --------------------------------------------------------------------------------------------
# 1. Totals
# --------------------------------------------------------------------------------------------


def run_totals(curves: pl.DataFrame) -> pl.DataFrame:
    """Total waiting time W and number of jobs of every run.

    Parameters
    ----------
    curves
        The curves table (:data:`CURVE_COLUMNS`; ``cumulative_wait_s`` in seconds, ``day`` in
        days since the replica's first submission).

    Returns
    -------
    pl.DataFrame
        One row per (trace, replica, strategy, period), sorted by them: ``total_wait_s`` (s),
        the cumulative wait on the run's last day, and ``jobs``, its ``finished_jobs`` that
        day.

    Raises
    ------
    ConfigurationError
        When a column is missing or two rows share (trace, replica, strategy, period, day).
    """
    what = "run_totals"
    _require(curves, CURVE_COLUMNS, what)
    _check_unique(curves, [*_RUN_KEY, "day"], what)
    return (
        curves.sort(*_RUN_KEY, "day")
        .group_by(_RUN_KEY, maintain_order=True)
        .agg(
            pl.col("cumulative_wait_s").last().cast(pl.Float64).alias("total_wait_s"),
            pl.col("finished_jobs").last().cast(pl.Int64).alias("jobs"),
        )
        .sort(_RUN_KEY)
    )


def _run_map(totals: pl.DataFrame) -> dict[tuple[str, str, str], dict[int, float]]:
    """``{(trace, strategy, period): {replica: W}}`` from a totals table."""
    runs: dict[tuple[str, str, str], dict[int, float]] = {}
    for trace, replica, strategy, period, wait in totals.select(
        *_RUN_KEY, "total_wait_s"
    ).iter_rows():
        runs.setdefault((str(trace), str(strategy), str(period)), {})[int(replica)] = float(wait)
    return runs


# --------------------------------------------------------------------------------------------
# 2. Leave-one-trace-out ε
# --------------------------------------------------------------------------------------------


def choose_epsilon(
    totals: pl.DataFrame,
    *,
    candidates: Sequence[str] = BANDIT_CANDIDATES,
    period: str | None = None,
) -> pl.DataFrame:
    """The bandit ε used on each trace, by a leave-one-trace-out majority vote.

    For each trace L, its *own best* ε is the candidate with the lowest Σ_k W over the replicas
    every candidate ran on (ties: smaller ε). The ε *chosen* for a held-out trace H is the most
    frequent own best ε among the other traces (ties: smaller ε), so H's own results never
    influence its choice. With a single trace its own best is used (``note`` says so).

    Parameters
    ----------
    totals
        Output of :func:`run_totals` (``total_wait_s`` in seconds).
    candidates
        Bandit strategy names ``"bandit(eps=<ε>)"``. Candidates with no run at a period are
        ignored; a candidate run on some traces but not on others is an error.
    period
        Policy period label (``"1d"``, ``"1w"``); ``None``: every period the candidates ran
        with.

    Returns
    -------
    pl.DataFrame
        One row per (period, held-out trace), sorted: ``period``, ``held_out``, ``chosen`` (ε),
        ``chosen_strategy`` (its strategy name), ``votes`` (the other traces' own best ε and
        their counts, most frequent first, e.g. ``"0.1:3, 0.3:2"``; empty with a single
        trace), ``own_best`` (the held-out trace's own best ε) and ``note`` (null, or why the
        vote was not used).

    Raises
    ------
    ConfigurationError
        When a candidate name is not a bandit name, no candidate ran (at ``period``), a trace
        lacks a candidate that other traces ran or the candidates share no replica on a trace.
    """
    what = "choose_epsilon"
    _require(totals, TOTALS_COLUMNS[:-1], what)
    epsilons: dict[str, float] = {}
    for name in candidates:
        eps = _epsilon(name)
        if eps is None:
            raise ConfigurationError(f"{what}: {name!r} is not a bandit name 'bandit(eps=<ε>)'")
        epsilons[name] = eps
    rows = totals.filter(pl.col("strategy").is_in(list(epsilons)))
    if period is not None:
        rows = rows.filter(pl.col("period") == period)
    if rows.height == 0:
        at = "" if period is None else f" with period {period!r}"
        raise ConfigurationError(
            f"{what}: no run of the candidates {', '.join(candidates)}{at} "
            f"(strategies: {', '.join(sorted(set(totals['strategy'])))})"
        )
    runs = _run_map(rows)
    out: list[dict[str, object]] = []
    for label in sorted({key[2] for key in runs}):
        traces = sorted({key[0] for key in runs if key[2] == label})
        present = sorted(
            {key[1] for key in runs if key[2] == label}, key=lambda name: epsilons[name]
        )
        own = {trace: _own_best(runs, trace, label, present, epsilons) for trace in traces}
        for held_out in traces:
            counts = Counter(own[trace] for trace in traces if trace != held_out)
            if counts:
                chosen = min(counts, key=lambda eps: (-counts[eps], eps))
                note = None
            else:
                chosen = own[held_out]
                note = "single trace: its own best ε is used (no other trace to vote)"
            ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            out.append(
                {
                    "period": label,
                    "held_out": held_out,
                    "chosen": chosen,
                    "chosen_strategy": next(n for n in present if epsilons[n] == chosen),
                    "votes": ", ".join(f"{_eps_text(eps)}:{n}" for eps, n in ranked),
                    "own_best": own[held_out],
                    "note": note,
                }
            )
    schema = {
        "period": pl.String,
        "held_out": pl.String,
        "chosen": pl.Float64,
        "chosen_strategy": pl.String,
        "votes": pl.String,
        "own_best": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(out, schema=schema, orient="row")


def _own_best(
    runs: Mapping[tuple[str, str, str], Mapping[int, float]],
    trace: str,
    period: str,
    present: Sequence[str],
    epsilons: Mapping[str, float],
) -> float:
    """ε of the candidate with the lowest Σ_k W on ``trace`` (common replicas; ties: smaller ε)."""
    missing = [name for name in present if (trace, name, period) not in runs]
    if missing:
        raise ConfigurationError(
            f"choose_epsilon: trace {trace!r} (period {period!r}) has no run of "
            f"{', '.join(missing)}, which other traces ran"
        )
    common = set.intersection(*(set(runs[(trace, name, period)]) for name in present))
    if not common:
        raise ConfigurationError(
            f"choose_epsilon: the bandit candidates share no replica on trace {trace!r} "
            f"(period {period!r})"
        )
    sums = {name: sum(runs[(trace, name, period)][k] for k in sorted(common)) for name in present}
    best = min(present, key=lambda name: (sums[name], epsilons[name]))
    return epsilons[best]


# --------------------------------------------------------------------------------------------
# 3. Relative changes, bootstrap intervals and paired tests
# --------------------------------------------------------------------------------------------


def relative_changes(
    totals: pl.DataFrame,
    *,
    reference: str = REFERENCE,
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
        Strategy name of the reference (one run per trace and replica).
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
    _require(totals, TOTALS_COLUMNS[:-1], what)
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"{what}: confidence must be in (0, 1), got {confidence!r}")
    if n_boot < 1:
        raise ConfigurationError(f"{what}: n_boot must be >= 1, got {n_boot!r}")
    _check_unique(totals, _RUN_KEY, what)
    runs = _run_map(totals)
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
    return _sort(table, ("trace", "strategy", "period"))


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
        scored.append((change, _policy_rank(policy), strategy, period))
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
            {key[1] for key in runs if _epsilon(key[1]) is not None},
            key=lambda name: _epsilon(name) or 0.0,
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
    _require(chosen_epsilon, ("period", "held_out"), what)
    if "chosen_strategy" in chosen_epsilon.columns:
        names = [str(name) for name in chosen_epsilon["chosen_strategy"]]
    elif "chosen" in chosen_epsilon.columns:
        names = [f"bandit(eps={_eps_text(float(eps))})" for eps in chosen_epsilon["chosen"]]
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


# --------------------------------------------------------------------------------------------
# 4. Wide tables
# --------------------------------------------------------------------------------------------


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
    _require(changes, ("trace", "strategy", "relative_change"), what)
    fixed = changes.filter(pl.col("strategy").str.starts_with(FIXED_PREFIX))
    if fixed.height == 0:
        raise ConfigurationError(f"{what}: the table has no fixed-policy row")
    long = fixed.select(
        pl.col("strategy").str.slice(len(FIXED_PREFIX)).alias("policy"),
        "trace",
        "relative_change",
    )
    return _wide(_sort(long, ("policy",)), ["policy"])


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
        :data:`BEST_FIXED` and :data:`SELECTORS` (``random``, ``full``, ``noisy``,
        :data:`LOTO_BANDIT`, ``ucb``, ``swucb``, ``thompson``), in that order, periods sorted.

    Raises
    ------
    ConfigurationError
        When a column is missing or none of those strategies is in the table.
    """
    what = "strategy_table"
    _require(changes, ("trace", "strategy", "period", "relative_change"), what)
    shown = (BEST_FIXED, *SELECTORS)
    selected = changes.filter(pl.col("strategy").is_in(list(shown)))
    if selected.height == 0:
        raise ConfigurationError(
            f"{what}: none of the strategies {', '.join(shown)} is in the table "
            f"(strategies: {', '.join(sorted(set(changes['strategy'])))})"
        )
    long = _sort(
        selected.select("strategy", "period", "trace", "relative_change"), ("strategy", "period")
    )
    return _wide(long, ["strategy", "period"])


# --------------------------------------------------------------------------------------------
# 5. Improvement curves
# --------------------------------------------------------------------------------------------


def improvement_curves(curves: pl.DataFrame, *, reference: str = REFERENCE) -> pl.DataFrame:
    """Cumulative waiting-time improvement over the reference, day by day.

    Every run is put on the days 0..D of its trace (D = last day of the longest run of the
    trace): a day without a row keeps the run's previous cumulative wait (a run that ended
    earlier keeps its last value; before its first row it is 0). For replica k and day d,
    ``improvement_k(d) = (C_ref,k(d) − C_S,k(d)) / C_ref,k(d)`` (0 when C_ref,k(d) = 0), where
    C is the cumulative wait (s); positive = less waiting than the reference so far.

    Parameters
    ----------
    curves
        The curves table (:data:`CURVE_COLUMNS`; ``day`` >= 0 in days).
    reference
        Strategy name of the reference (one run per trace and replica).

    Returns
    -------
    pl.DataFrame
        Columns :data:`IMPROVEMENT_COLUMNS`: per (trace, strategy, period, day) the mean over
        replicas (``mean_improvement``), its 10 % and 90 % quantiles (``q10``, ``q90``; linear
        interpolation as :func:`numpy.quantile`) as fractions (0.1 = 10 % less cumulative
        wait), and the number of ``replicas``. The reference's own rows are 0.

    Raises
    ------
    ConfigurationError
        When a column is missing, a row is duplicated, a day is negative or a replica has
        runs but no reference run.
    """
    what = "improvement_curves"
    _require(curves, CURVE_COLUMNS, what)
    _check_unique(curves, [*_RUN_KEY, "day"], what)
    if curves.height and curves["day"].min() < 0:  # type: ignore[operator]
        raise ConfigurationError(f"{what}: days must be >= 0, got {curves['day'].min()}")
    data = curves.select(
        *_RUN_KEY, pl.col("day").cast(pl.Int64), pl.col("cumulative_wait_s").cast(pl.Float64)
    )
    last = data.group_by("trace").agg(pl.col("day").max().alias("_last"))
    grid = (
        data.select(_RUN_KEY)
        .unique()
        .join(last, on="trace")
        .with_columns(pl.int_ranges(0, pl.col("_last") + 1, dtype=pl.Int64).alias("day"))
        .drop("_last")
        .explode("day")
    )
    dense = (
        grid.join(data, on=[*_RUN_KEY, "day"], how="left")
        .sort(*_RUN_KEY, "day")
        .with_columns(
            pl.col("cumulative_wait_s").forward_fill().over(_RUN_KEY).fill_null(0.0).alias("c")
        )
    )
    ref = dense.filter(pl.col("strategy") == reference).select(
        "trace", "replica", "day", pl.col("c").alias("c_ref")
    )
    _check_unique(ref, ("trace", "replica", "day"), f"{what}: reference {reference!r}")
    orphans = (
        dense.select("trace", "replica")
        .unique()
        .join(ref.select("trace", "replica").unique(), on=["trace", "replica"], how="anti")
    )
    if orphans.height:
        first = orphans.sort("trace", "replica").row(0)
        raise ConfigurationError(
            f"{what}: {orphans.height} (trace, replica) pair(s) have runs but no reference "
            f"{reference!r} run, e.g. trace {first[0]!r}, replica {first[1]}"
        )
    improvement = (
        pl.when(pl.col("c_ref") == 0.0)
        .then(0.0)
        .otherwise((pl.col("c_ref") - pl.col("c")) / pl.col("c_ref"))
    )
    table = (
        dense.join(ref, on=["trace", "replica", "day"], how="left")
        .with_columns(improvement.alias("improvement"))
        .group_by(*_GROUP_KEY, "day")
        .agg(
            pl.col("improvement").mean().alias("mean_improvement"),
            pl.col("improvement").quantile(0.1, interpolation="linear").alias("q10"),
            pl.col("improvement").quantile(0.9, interpolation="linear").alias("q90"),
            pl.col("replica").n_unique().cast(pl.Int64).alias("replicas"),
        )
        .select(IMPROVEMENT_COLUMNS)
    )
    return _sort(table, (*_GROUP_KEY, "day"))


# --------------------------------------------------------------------------------------------
# 6. Choice shares
# --------------------------------------------------------------------------------------------


def choice_shares(
    choices: pl.DataFrame,
    *,
    period_s_by_label: Mapping[str, float] | None = None,
    bin_days: int = 7,
) -> pl.DataFrame:
    """Share of the policy periods choosing each policy, per time bin, mean over replicas.

    Period t of a run starts ``t · period_s`` seconds after the replica's first submission and
    belongs to the bin of ``bin_days`` days holding its start. Per replica and bin, the share of
    policy P is the fraction of the bin's periods that chose P (0 when none did, for every
    policy the strategy chose somewhere on the trace); the shares are then averaged over the
    replicas whose run has a period in that bin, so they sum to 1 within a bin.

    Parameters
    ----------
    choices
        The choices table (:data:`CHOICE_COLUMNS`).
    period_s_by_label
        Length in seconds of each period label; default ``{"1d": 86400, "1w": 604800}``.
    bin_days
        Width of the time bins in days (>= 1).

    Returns
    -------
    pl.DataFrame
        Columns :data:`SHARE_COLUMNS`: ``trace``, ``strategy``, ``period``, ``day`` (bin start,
        days since the first submission), ``policy`` and ``share`` in [0, 1]; sorted by trace,
        strategy, period, day and policy (:data:`ONLINE_POLICIES` order).

    Raises
    ------
    ConfigurationError
        When a column is missing, a row is duplicated, ``bin_days`` < 1, a period label has no
        (positive) length, or a period index is negative.
    """
    what = "choice_shares"
    _require(choices, CHOICE_COLUMNS, what)
    if bin_days < 1:
        raise ConfigurationError(f"{what}: bin_days must be >= 1, got {bin_days!r}")
    lengths = dict(_DEFAULT_PERIODS if period_s_by_label is None else period_s_by_label)
    labels = sorted(set(choices["period"]))
    unknown = [label for label in labels if label not in lengths]
    if unknown:
        raise ConfigurationError(
            f"{what}: no length for period label(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(lengths))})"
        )
    if any(not float(lengths[label]) > 0.0 for label in labels):
        raise ConfigurationError(f"{what}: period lengths must be > 0 s, got {lengths}")
    _check_unique(choices, [*_RUN_KEY, "period_index"], what)
    if choices.height and choices["period_index"].min() < 0:  # type: ignore[operator]
        raise ConfigurationError(f"{what}: period_index must be >= 0")
    period_s = pl.col("period").replace_strict(
        {label: float(lengths[label]) for label in labels}, return_dtype=pl.Float64
    )
    start_day = pl.col("period_index").cast(pl.Float64) * period_s / _DAY_S
    binned = choices.select(
        *_RUN_KEY,
        ((start_day / bin_days).floor().cast(pl.Int64) * bin_days).alias("day"),
        "policy",
    )
    counts = binned.group_by(*_RUN_KEY, "day", "policy").agg(pl.len().alias("n"))
    per_replica = counts.with_columns(
        (pl.col("n") / pl.col("n").sum().over(*_RUN_KEY, "day")).alias("share")
    )
    grid = (
        binned.select(*_RUN_KEY, "day")
        .unique()
        .join(binned.select(*_GROUP_KEY, "policy").unique(), on=list(_GROUP_KEY))
    )
    table = (
        grid.join(per_replica, on=[*_RUN_KEY, "day", "policy"], how="left")
        .with_columns(pl.col("share").fill_null(0.0))
        .group_by(*_GROUP_KEY, "day", "policy")
        .agg(pl.col("share").mean())
    )
    return _sort(table.select(SHARE_COLUMNS), (*_GROUP_KEY, "day", "policy"))
