"""Runs of the online study: the table columns, the strategy names and their display order,
and :func:`run_totals` (the total waiting time W of every run).

For each trace (log) and each of R resampled two-year traces (*replicas* k = 0..R-1) many
*strategies* were run: the fixed policies (``"fixed:FCFS"``, ``"fixed:SPF"``..., period
``"none"``) and the selectors (``"random"``, ``"full"``, ``"noisy"``, ``"bandit(eps=0.1)"``...,
``"ucb"``, ``"swucb"``, ``"thompson"``), each with a policy period ``"1d"`` or ``"1w"``. The
reference is a fixed policy named by the config (``online.reference``, ``"fixed:FCFS"`` by
default) and handed to every function that compares with it.

The two input tables (polars) are

* the *curves* table (:data:`CURVE_COLUMNS`): one row per (trace, replica, strategy, period,
  day) with ``cumulative_wait_s``, the sum of the waits (s) of the jobs finished by the end of
  that day (days since the replica's first submission), and ``finished_jobs``. The total
  waiting time W of a run is its cumulative wait on its last day;
* the *choices* table (:data:`CHOICE_COLUMNS`): one row per (trace, replica, strategy, period,
  period_index) with the policy the strategy chose for that period.

Selectors of Reis's thesis (``random``, ``full``, ``noisy``, ``bandit``; the ``thesis`` flag of
the selector registry) and schedlab's additions (``ucb``, ``swucb``, ``thompson``) are told apart
by :func:`from_thesis`; tables and figures mark the additions with :data:`ADDITION_MARK`
(:func:`display_name`).

The statistics built on them: :mod:`~scheduler.studies.online.epsilon` (the bandit's ε),
:mod:`~scheduler.studies.online.changes` (relative changes, tests, wide tables) and
:mod:`~scheduler.studies.online.curves` (improvement over time, choice shares).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.policies import STUDY_POLICIES
from scheduler.studies.online.selectors import (
    EPSILON_GREEDY,
    FIXED,
    SELECTORS,
    bandit_epsilon,
    parse_spec,
)

__all__ = [
    "ADDITION_MARK",
    "BANDIT_CHOICES",
    "BEST_FIXED",
    "CHANGE_COLUMNS",
    "CHOICE_COLUMNS",
    "CONFIGURED_BANDIT",
    "CROSSFIT_FIXED",
    "CURVE_COLUMNS",
    "EPSILON_COLUMNS",
    "FIXED_PREFIX",
    "GROUP_KEY",
    "IMPROVEMENT_COLUMNS",
    "LOTO_BANDIT",
    "ONLINE_POLICIES",
    "PSEUDO_STRATEGIES",
    "RUN_KEY",
    "SELECTOR_STRATEGIES",
    "SHARE_COLUMNS",
    "TOTALS_COLUMNS",
    "best_run",
    "check_unique",
    "display_name",
    "eps_text",
    "fixed_policy_name",
    "from_thesis",
    "policy_rank",
    "reference_label",
    "require_columns",
    "run_map",
    "run_totals",
    "sort_study_order",
    "strategy_rank",
]

#: The twelve queue policies of the study, in the order used for tables and legends.
ONLINE_POLICIES: tuple[str, ...] = STUDY_POLICIES
#: Strategy names of the fixed policies start with this prefix (``"fixed:SPF"``).
FIXED_PREFIX = f"{FIXED}:"
#: Pseudo-strategy: per trace, the fixed policy with the lowest total waiting time over the
#: replicas (chosen in hindsight on the replicas it is shown on: descriptive, never tested).
BEST_FIXED = "best fixed (hindsight)"
#: Pseudo-strategy: per trace, on each replica r the fixed policy with the lowest total waiting
#: time over the replicas of the other fold (cross-fitted, two folds; the comparator of the
#: selectors' paired tests).
CROSSFIT_FIXED = "best fixed (cross-fitted)"
#: Pseudo-strategy: per trace and period, the bandit whose ε the other traces voted for.
LOTO_BANDIT = "bandit (LOTO ε)"
#: Pseudo-strategy: per trace and period, the bandit with the configured ε (``online.epsilon``;
#: a single trace cannot vote, or ``online.epsilon_vote: configured``).
CONFIGURED_BANDIT = "bandit (configured ε)"
#: The pseudo-strategies that stand for the ε-greedy bandit with its chosen ε.
BANDIT_CHOICES: tuple[str, ...] = (LOTO_BANDIT, CONFIGURED_BANDIT)
#: Selector strategies in table order: the selector kinds in registration order
#: (:data:`~scheduler.studies.online.selectors.SELECTORS`), the ε-greedy bandit as
#: :data:`LOTO_BANDIT` then :data:`CONFIGURED_BANDIT` (bandits with an explicit ε sort by ε just
#: before them), without ``fixed``.
SELECTOR_STRATEGIES: tuple[str, ...] = tuple(
    choice
    for name in SELECTORS
    if name != FIXED
    for choice in (BANDIT_CHOICES if name == EPSILON_GREEDY else (name,))
)
#: Appended to the name of a schedlab addition (a selector not in the published study) in every
#: table and figure label.
ADDITION_MARK = " (addition)"

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
    "how",
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
    "from_thesis",
)
#: Columns of :func:`improvement_curves`.
IMPROVEMENT_COLUMNS: tuple[str, ...] = (
    "trace",
    "strategy",
    "period",
    "day",
    "improvement",
    "q10",
    "q90",
    "replicas",
)
#: Columns of :func:`choice_shares`.
SHARE_COLUMNS: tuple[str, ...] = ("trace", "strategy", "period", "day", "policy", "share")

#: Key of one run (a row of :func:`run_totals`).
RUN_KEY: tuple[str, ...] = ("trace", "replica", "strategy", "period")
#: Key of a strategy's runs over the replicas.
GROUP_KEY: tuple[str, ...] = ("trace", "strategy", "period")


def require_columns(table: pl.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise :class:`ConfigurationError` when ``table`` lacks one of ``columns``."""
    missing = [name for name in columns if name not in table.columns]
    if missing:
        raise ConfigurationError(f"{what}: the table lacks the column(s) {', '.join(missing)}")


def check_unique(table: pl.DataFrame, key: Sequence[str], what: str) -> None:
    """Raise :class:`ConfigurationError` when two rows share the same ``key`` values."""
    duplicated = table.group_by(key).len().filter(pl.col("len") > 1)
    if duplicated.height:
        first = duplicated.row(0, named=True)
        where = ", ".join(f"{name} {first[name]!r}" for name in key)
        raise ConfigurationError(
            f"{what}: {duplicated.height} duplicated row key(s) ({', '.join(key)}), e.g. {where}"
        )


def eps_text(eps: float) -> str:
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


def policy_rank(policy: str) -> int:
    """Position of a policy in :data:`ONLINE_POLICIES` (unknown policies last)."""
    return ONLINE_POLICIES.index(policy) if policy in ONLINE_POLICIES else len(ONLINE_POLICIES)


def from_thesis(strategy: str) -> bool:
    """Whether a strategy (or pseudo-strategy) is part of the published study.

    True for the fixed policies, :data:`BEST_FIXED`, the bandit choices
    (:data:`BANDIT_CHOICES`) and every selector spec whose kind has the ``thesis`` flag of
    :data:`~scheduler.studies.online.selectors.SELECTORS` (``random``, ``full``, ``noisy``,
    ``bandit(eps=…)``); False for schedlab's additions (``ucb``, ``swucb``, ``thompson``, the
    cross-fitted comparator :data:`CROSSFIT_FIXED`) and for names no selector kind knows.
    """
    if strategy in (BEST_FIXED, *BANDIT_CHOICES) or fixed_policy_name(strategy) is not None:
        return True
    if strategy == CROSSFIT_FIXED:
        return False
    try:
        base, _ = parse_spec(strategy)
    except ConfigurationError:
        return False
    return SELECTORS[base].thesis


def display_name(strategy: str) -> str:
    """How tables and figures show a strategy: its name, with :data:`ADDITION_MARK` for a
    selector that is a schedlab addition (``"ucb"`` → ``"ucb (addition)"``)."""
    if strategy == CROSSFIT_FIXED or from_thesis(strategy):
        return strategy
    return f"{strategy}{ADDITION_MARK}"


def strategy_rank(strategy: str) -> tuple[int, float, str]:
    """Sort key of strategies: fixed policies (study order), best fixed (hindsight, then
    cross-fitted), then the selectors."""
    policy = fixed_policy_name(strategy)
    if policy is not None:
        return (0, float(policy_rank(policy)), strategy)
    if strategy == BEST_FIXED:
        return (1, 0.0, strategy)
    if strategy == CROSSFIT_FIXED:
        return (1, 1.0, strategy)
    eps = bandit_epsilon(strategy)
    if eps is not None:  # between "noisy" and the LOTO bandit
        return (2, SELECTOR_STRATEGIES.index(LOTO_BANDIT) - 0.5 + eps / 10.0, strategy)
    if strategy in SELECTOR_STRATEGIES:
        return (2, float(SELECTOR_STRATEGIES.index(strategy)), strategy)
    return (3, 0.0, strategy)


def sort_study_order(table: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """``table`` sorted by ``by``; ``strategy`` and ``policy`` in study order, not by name."""
    if table.height == 0:
        return table
    ranked: list[pl.Expr] = []
    keys: list[str] = []
    for name in by:
        if name in ("strategy", "policy"):
            rank = strategy_rank if name == "strategy" else policy_rank
            levels = sorted(set(table[name]), key=lambda value: (rank(value), value))
            order = {value: i for i, value in enumerate(levels)}
            ranked.append(
                pl.col(name).replace_strict(order, return_dtype=pl.Int64).alias(f"_{name}")
            )
            keys.append(f"_{name}")
        else:
            keys.append(name)
    return table.with_columns(ranked).sort(keys).drop([key for key in keys if key.startswith("_")])


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
    require_columns(curves, CURVE_COLUMNS, what)
    check_unique(curves, [*RUN_KEY, "day"], what)
    return (
        curves.sort(*RUN_KEY, "day")
        .group_by(RUN_KEY, maintain_order=True)
        .agg(
            pl.col("cumulative_wait_s").last().cast(pl.Float64).alias("total_wait_s"),
            pl.col("finished_jobs").last().cast(pl.Int64).alias("jobs"),
        )
        .sort(RUN_KEY)
    )


def run_map(totals: pl.DataFrame) -> dict[tuple[str, str, str], dict[int, float]]:
    """``{(trace, strategy, period): {replica: W}}`` from a totals table."""
    runs: dict[tuple[str, str, str], dict[int, float]] = {}
    for trace, replica, strategy, period, wait in totals.select(
        *RUN_KEY, "total_wait_s"
    ).iter_rows():
        runs.setdefault((str(trace), str(strategy), str(period)), {})[int(replica)] = float(wait)
    return runs


def reference_label(reference: str, threshold_s: float) -> str:
    """How tables and figures name the reference run: ``EASY(<policy>, <threshold> h)``.

    Parameters
    ----------
    reference
        Strategy name of the reference, ``"fixed:P"`` (``OnlinePlan.reference``) or a bare
        policy name.
    threshold_s
        The study's EASY threshold, seconds (``OnlinePlan.threshold_s``).

    Returns
    -------
    str
        E.g. ``"EASY(SPF, 40 h)"`` for ``("fixed:SPF", 144000.0)``.
    """
    policy = fixed_policy_name(reference) or reference
    return f"EASY({policy}, {threshold_s / 3600.0:g} h)"


#: The pseudo-strategies of the changes table: rows that stand for another run (or one per
#: replica), not a run of their own.
PSEUDO_STRATEGIES: tuple[str, ...] = (BEST_FIXED, CROSSFIT_FIXED, *BANDIT_CHOICES)


def best_run(changes: pl.DataFrame, trace: str, reference: str) -> tuple[str, str]:
    """The (strategy, period) of a trace whose total waiting time changes most in the study's
    favour against the reference (the lowest ``relative_change`` of
    :func:`~scheduler.studies.online.changes.relative_changes`, over every replica): among the
    selectors' runs when there are any, else among the fixed policies other than the reference
    (ties: the first in the table's order). The pseudo-strategies (:data:`PSEUDO_STRATEGIES`)
    are left out: the bandit with its chosen ε is also a run of its own.

    Raises
    ------
    ConfigurationError
        The table lacks a column, or the trace has no run but the reference.
    """
    require_columns(changes, ("trace", "strategy", "period", "relative_change"), "best run")
    runs = changes.with_row_index("__order").filter(
        (pl.col("trace") == trace)
        & ~pl.col("strategy").is_in(list(PSEUDO_STRATEGIES))
        & (pl.col("strategy") != reference)
    )
    selectors = runs.filter(~pl.col("strategy").str.starts_with(FIXED_PREFIX))
    chosen = selectors if selectors.height else runs
    if chosen.height == 0:
        raise ConfigurationError(
            f"best run: {trace!r} has no run to compare with the reference {reference}"
        )
    row = chosen.sort("relative_change", "__order").row(0, named=True)
    return str(row["strategy"]), str(row["period"])
