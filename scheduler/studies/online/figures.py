"""Figures of the online policy-selection study of EASY backfilling (plotnine).

Pure functions: a :mod:`polars` table of :mod:`scheduler.studies.online.curves` in, a
:class:`plotnine.ggplot` out (nothing is drawn or written; render with
:func:`scheduler.studies.common.figures.save_figure`). They share the theme, title wrapping, row
selection and policy colours of :mod:`scheduler.studies.tuning.figures`.

* :func:`fixed_improvement_plot` and :func:`selector_improvement_plot` draw
  :func:`~scheduler.studies.online.curves.improvement_curves`: the cumulative waiting-time
  improvement over the reference EASY(P_ref, Θ) of the config (``online.reference``,
  ``online.threshold``; EASY(FCFS, 40 h) by default), in percent, against the time in days: the
  ratio of sums over the replicas (solid; its last point is the tables' relative change, sign
  reversed) and the 10 % / 90 % quantiles of the per-replica ratios (dashed);
* :func:`choice_share_plot` draws :func:`~scheduler.studies.online.curves.choice_shares`: the
  share of the policy periods choosing each policy over time, stacked.

The selectors and their order come from the selector registry
(:data:`scheduler.studies.online.selectors.SELECTORS`); schedlab's additions (kinds without the
``thesis`` flag: ``ucb``, ``swucb``, ``thompson``) are labelled ``"<name> (addition)"``.
"""

from __future__ import annotations

import os

# Render off-screen unless the user forced a backend: must precede the matplotlib import.
os.environ.setdefault("MPLBACKEND", "Agg")

from collections.abc import Mapping, Sequence

import pandas as pd
import polars as pl
from plotnine import (
    aes,
    facet_wrap,
    geom_area,
    geom_hline,
    geom_line,
    ggplot,
    scale_colour_manual,
    scale_fill_manual,
    scale_y_continuous,
)

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.figures import (
    KNOWN_POLICY_COLOURS,
    SPARE_COLOURS,
    available_values,
    figure_theme,
    level_order,
    make_categorical,
    manual_values,
    select_rows,
    wrapped_labs,
)
from scheduler.studies.online.runs import (
    FIXED_PREFIX,
    IMPROVEMENT_COLUMNS,
    ONLINE_POLICIES,
    SHARE_COLUMNS,
    display_name,
    eps_text,
    fixed_policy_name,
    reference_label,
)
from scheduler.studies.online.selectors import (
    EPSILON_GREEDY,
    FIXED,
    SELECTORS,
    bandit_epsilon,
)

__all__ = [
    "POLICY_COLOURS",
    "STRATEGY_COLOURS",
    "choice_share_plot",
    "fixed_improvement_plot",
    "selector_improvement_plot",
]

#: One colour per policy of the study: the colours of :mod:`scheduler.studies.tuning.figures` for
#: its seven policies, its spare colours for the five others (the same on every figure).
POLICY_COLOURS: dict[str, str] = manual_values(ONLINE_POLICIES, KNOWN_POLICY_COLOURS, SPARE_COLOURS)
#: Order of the selector kinds on the selector figure: registration order, without ``fixed``.
_SELECTOR_ORDER: tuple[str, ...] = tuple(name for name in SELECTORS if name != FIXED)
#: Selectors the selector figure draws under their own name by default (``figure_line``).
_SELECTORS: tuple[str, ...] = tuple(name for name, kind in SELECTORS.items() if kind.figure_line)
#: Okabe-Ito colours given to the selector kinds in registration order.
_OKABE_ITO: tuple[str, ...] = (
    "#999999",
    "#0072B2",
    "#56B4E9",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
)
#: Colours of the strategies on the selector figure (Okabe-Ito; best fixed black); selector
#: kinds beyond the palette get spare colours.
STRATEGY_COLOURS: dict[str, str] = {
    "best fixed": "#000000",
    **dict(zip(_SELECTOR_ORDER, _OKABE_ITO, strict=False)),
}
_PERCENT = 100.0
_MEAN, _LOW, _HIGH = "improvement_pct", "q10_pct", "q90_pct"


def _y_title(reference_label: str) -> str:
    """Title of the improvement axis (two lines, fits the figure height)."""
    return f"cumulative waiting-time improvement\nvs {reference_label} (%)"


def _replica_text(selected: pl.DataFrame) -> str:
    """``"5 replicas"`` from the ``replicas`` column, or ``"replicas"`` without it."""
    if "replicas" not in selected.columns or selected.height == 0:
        return "replicas"
    count = int(selected["replicas"].max())  # type: ignore[arg-type]
    return f"{count} replica{'s' if count != 1 else ''}"


def _percent_frame(selected: pl.DataFrame, label: pl.Expr) -> pd.DataFrame:
    """Pandas frame with ``day``, ``label`` and the improvement / q10 / q90 in percent."""
    return (
        selected.select(
            pl.col("day").cast(pl.Float64),
            label.alias("label"),
            (pl.col("improvement") * _PERCENT).alias(_MEAN),
            (pl.col("q10") * _PERCENT).alias(_LOW),
            (pl.col("q90") * _PERCENT).alias(_HIGH),
        )
        .sort("label", "day")
        .to_pandas()
    )


def _band_lines(frame: pd.DataFrame, colours: Mapping[str, str], name: str) -> ggplot:
    """Improvement, ratio of sums (solid), and the 10 % / 90 % quantiles of the replicas
    (dashed), one colour per label."""
    levels = [level for level in colours if level in set(frame["label"])]
    make_categorical(frame, "label", levels)
    return (
        ggplot(frame, aes(x="day", colour="label", group="label"))
        + geom_hline(yintercept=0.0, colour="#555555", linetype="dotted")
        + geom_line(aes(y=_LOW), linetype="dashed", size=0.35, alpha=0.7, na_rm=True)
        + geom_line(aes(y=_HIGH), linetype="dashed", size=0.35, alpha=0.7, na_rm=True)
        + geom_line(aes(y=_MEAN), size=0.75, na_rm=True)
        + scale_colour_manual(
            values={level: colours[level] for level in levels}, limits=levels, name=name
        )
        + figure_theme()
    )


# --------------------------------------------------------------------------------------------
# 1. Fixed policies
# --------------------------------------------------------------------------------------------


def fixed_improvement_plot(
    curves_table: pl.DataFrame, trace: str, *, reference: str, threshold_s: float
) -> ggplot:
    """Cumulative waiting-time improvement of every fixed policy over time.

    Parameters
    ----------
    curves_table
        Output of :func:`scheduler.studies.online.curves.improvement_curves` (improvements as
        fractions, ``day`` in days).
    trace
        Name of the trace to show.
    reference
        Strategy name of the reference the curves were computed against, ``"fixed:P"``
        (``OnlinePlan.reference``); the axis names it EASY(P, Θ).
    threshold_s
        The study's EASY threshold Θ, seconds (``OnlinePlan.threshold_s``).

    Returns
    -------
    ggplot
        x = time since the start of the trace (days), y = improvement over the reference (%,
        positive = less cumulative waiting); one colour per fixed policy: the ratio of sums over
        the replicas (solid, ending at the tables' value) and the 10 % and 90 % quantiles of the
        per-replica ratios (dashed). Its data has one row per (policy, day) with columns
        ``day``, ``label`` (policy name), ``improvement_pct``, ``q10_pct``, ``q90_pct``.

    Raises
    ------
    ConfigurationError
        When a column is missing or the trace has no fixed-policy curve.
    """
    what = "fixed_improvement_plot"
    selected = select_rows(curves_table, what, IMPROVEMENT_COLUMNS[:-1], trace=trace)
    fixed = selected.filter(pl.col("strategy").str.starts_with(FIXED_PREFIX))
    if fixed.height == 0:
        raise ConfigurationError(
            f"{what}: trace {trace!r} has no fixed-policy strategy ({FIXED_PREFIX}<policy>) "
            f"(strategies: {available_values(selected, 'strategy')})"
        )
    frame = _percent_frame(fixed, pl.col("strategy").str.slice(len(FIXED_PREFIX)))
    label = reference_label(reference, threshold_s)
    levels = level_order(frame["label"], ONLINE_POLICIES)
    colours = manual_values(levels, POLICY_COLOURS, SPARE_COLOURS)
    return _band_lines(frame, colours, "fixed policy") + wrapped_labs(
        x="time since the start of the trace (days)",
        y=_y_title(label),
        title=f"{trace}: cumulative waiting-time improvement of the fixed policies",
        subtitle=(
            f"{reference_label('P', threshold_s)} with P fixed vs {label}; solid: sum over "
            f"{_replica_text(fixed)} (ends at the table), dashed: 10 % and 90 % quantiles of "
            "the replicas"
        ),
    )


# --------------------------------------------------------------------------------------------
# 2. Selectors
# --------------------------------------------------------------------------------------------


def _best_fixed_from_curves(fixed: pl.DataFrame) -> str:
    """The fixed strategy with the highest improvement on its last day."""
    final = fixed.sort("day").group_by("strategy").agg(pl.col("improvement").last())
    ranked = final.sort(
        pl.col("improvement"), pl.col("strategy"), descending=[True, False], nulls_last=True
    )
    return str(ranked["strategy"][0])


def selector_improvement_plot(
    curves_table: pl.DataFrame,
    trace: str,
    *,
    period: str = "1d",
    bandit: str | None = None,
    best_fixed: str | None = None,
    selectors: Sequence[str] = _SELECTORS,
    reference: str,
    threshold_s: float,
    configured_epsilon: bool = False,
) -> ggplot:
    """Cumulative waiting-time improvement of the selectors and of the best fixed policy.

    Parameters
    ----------
    curves_table
        Output of :func:`scheduler.studies.online.curves.improvement_curves`.
    trace
        Name of the trace to show.
    period
        Policy period label of the selectors (``"1d"``, ``"1w"``).
    bandit
        The bandit strategy to show (e.g. the ``chosen_strategy`` of
        :func:`scheduler.studies.online.epsilon.choose_epsilon` for this trace), labelled "bandit
        (LOTO ε = …)" (or "bandit (configured ε = …)"); ``None``: no bandit line.
    best_fixed
        Strategy name of the best fixed policy in hindsight (``best_fixed`` column of
        :func:`scheduler.studies.online.changes.relative_changes`); ``None``: the fixed policy with
        the highest improvement on the last day.
    selectors
        The other selectors to show; those absent from the table are skipped. Default: the
        registered kinds with ``figure_line`` (``random``, ``full``, ``noisy``, ``ucb``,
        ``swucb``); schedlab's additions are labelled ``"<name> (addition)"``.
    configured_epsilon
        True when the bandit's ε is the configured one (a single trace, or
        ``online.epsilon_vote: configured``), not a leave-one-trace-out vote.
    reference
        Strategy name of the reference, ``"fixed:P"`` (``OnlinePlan.reference``).
    threshold_s
        The study's EASY threshold, seconds (``OnlinePlan.threshold_s``).

    Returns
    -------
    ggplot
        As :func:`fixed_improvement_plot`, one colour per strategy (best fixed first, black).
        Its data has one row per (strategy, day); ``label`` is ``"best fixed: <policy>"``,
        ``"bandit (LOTO ε = 0.3)"``, or the selector name (``"ucb (addition)"`` for an
        addition).

    Raises
    ------
    ConfigurationError
        When a column is missing, the trace has no curve, ``bandit`` or ``best_fixed`` has no
        curve, or no selector of the list has one at ``period``.
    """
    what = "selector_improvement_plot"
    selected = select_rows(curves_table, what, IMPROVEMENT_COLUMNS[:-1], trace=trace)
    fixed = selected.filter(pl.col("strategy").str.starts_with(FIXED_PREFIX))
    if best_fixed is None:
        if fixed.height == 0:
            raise ConfigurationError(f"{what}: trace {trace!r} has no fixed-policy strategy")
        best_fixed = _best_fixed_from_curves(fixed)
    elif fixed_policy_name(best_fixed) is None and f"{FIXED_PREFIX}{best_fixed}" in set(
        fixed["strategy"]
    ):
        best_fixed = f"{FIXED_PREFIX}{best_fixed}"  # "SPF" → "fixed:SPF"
    best_label = f"best fixed: {_policy_text(best_fixed)}"
    series = [(best_label, select_rows(selected, what, (), trace=trace, strategy=best_fixed))]
    colours = {best_label: STRATEGY_COLOURS["best fixed"]}
    at_period = selected.filter(pl.col("period") == period)
    present = set(at_period["strategy"])
    shown = [name for name in selectors if name in present]
    if bandit is None and not shown:
        raise ConfigurationError(
            f"{what}: trace {trace!r} has none of the selectors {', '.join(selectors)} with "
            f"period {period!r} (strategies: {available_values(at_period, 'strategy')})"
        )
    named = [(name, display_name(name), name) for name in shown]  # (strategy, label, colour)
    if bandit is not None:
        select_rows(selected, what, (), trace=trace, strategy=bandit, period=period)  # or raise
        named.append((bandit, _bandit_label(bandit, configured_epsilon), EPSILON_GREEDY))
    named.sort(
        key=lambda item: _SELECTOR_ORDER.index(item[2]) if item[2] in _SELECTOR_ORDER else 99
    )
    for spare, (name, label, key) in enumerate(named):
        series.append((label, at_period.filter(pl.col("strategy") == name)))
        colours[label] = STRATEGY_COLOURS.get(key, SPARE_COLOURS[spare % len(SPARE_COLOURS)])
    rows = pl.concat(
        [part.with_columns(pl.lit(label).alias("_label")) for label, part in series],
        how="vertical_relaxed",
    )
    frame = _percent_frame(rows, pl.col("_label"))
    return _band_lines(frame, colours, "strategy") + wrapped_labs(
        x="time since the start of the trace (days)",
        y=_y_title(reference_label(reference, threshold_s)),
        title=f"{trace}: cumulative waiting-time improvement of the selectors ({period} periods)",
        subtitle=(
            f"solid: sum over {_replica_text(rows)} (ends at the table), dashed: 10 % and "
            f"90 % quantiles of the replicas; best fixed policy chosen in hindsight; "
            f"(addition): not in the published study"
        ),
    )


def _policy_text(strategy: str) -> str:
    """``"fixed:SPF"`` → ``"SPF"``; other names unchanged."""
    return fixed_policy_name(strategy) or strategy


def _bandit_label(bandit: str, configured: bool = False) -> str:
    """``"bandit(eps=0.3)"`` → ``"bandit (LOTO ε = 0.3)"`` (``"bandit (configured ε = 0.3)"``
    when ``configured``); other names get ``" (LOTO ε)"`` / ``" (configured ε)"``."""
    how = "configured ε" if configured else "LOTO ε"
    eps = bandit_epsilon(bandit)
    if eps is not None:
        return f"{EPSILON_GREEDY} ({how} = {eps_text(eps)})"
    return f"{bandit} ({how})"


# --------------------------------------------------------------------------------------------
# 3. Policy choices over time
# --------------------------------------------------------------------------------------------


def choice_share_plot(
    shares: pl.DataFrame,
    trace: str,
    *,
    strategies: Sequence[str] = ("noisy",),
    bandit: str | None = None,
    period: str = "1d",
    configured_epsilon: bool = False,
) -> ggplot:
    """Share of the policy periods choosing each policy over time, stacked, per strategy.

    Parameters
    ----------
    shares
        Output of :func:`scheduler.studies.online.curves.choice_shares` (``day`` = bin start in
        days, ``share`` in [0, 1]).
    trace
        Name of the trace to show.
    strategies
        Strategies to show, one panel each.
    bandit
        A bandit strategy shown after ``strategies`` (e.g. the LOTO choice for this trace),
        its panel titled ``"<name> (LOTO ε)"`` (``"<name> (configured ε)"`` with
        ``configured_epsilon``); ``None``: none.
    period
        Policy period label (``"1d"``, ``"1w"``).
    configured_epsilon
        True when the bandit's ε is the configured one, not a leave-one-trace-out vote.

    Returns
    -------
    ggplot
        Stacked areas (:func:`plotnine.geom_area`): x = time since the start of the trace
        (days, start of each bin), y = share of the periods (%), fill = policy (fixed colours
        per policy); one panel per strategy (``facet_wrap``, one column). Its data has one row
        per (strategy, bin, policy), absent policies with share 0, columns ``day``,
        ``panel``, ``policy``, ``share_pct``.

    Raises
    ------
    ConfigurationError
        When a column is missing, no strategy is asked for, or the trace has no row for a
        strategy at ``period``.
    """
    what = "choice_share_plot"
    wanted = [*strategies, *([bandit] if bandit is not None else [])]
    if not wanted:
        raise ConfigurationError(f"{what}: no strategy to show")
    selected = select_rows(shares, what, SHARE_COLUMNS, trace=trace, period=period)
    panels = {name: display_name(name) for name in strategies}
    if bandit is not None:
        panels[bandit] = f"{bandit} ({'configured' if configured_epsilon else 'LOTO'} ε)"
    parts = []
    for name in wanted:
        rows = selected.filter(pl.col("strategy") == name)
        if rows.height == 0:
            raise ConfigurationError(
                f"{what}: no choice shares for trace {trace!r}, strategy {name!r}, period "
                f"{period!r} (strategies: {available_values(selected, 'strategy')})"
            )
        parts.append(rows.select("day", "policy", "share", pl.lit(panels[name]).alias("panel")))
    long = pl.concat(parts)
    grid = (
        long.select("panel", "day")
        .unique()
        .join(long.select("policy").unique(), how="cross")
        .join(long, on=["panel", "day", "policy"], how="left")
        .with_columns((pl.col("share").fill_null(0.0) * _PERCENT).alias("share_pct"))
        .select(pl.col("day").cast(pl.Float64), "panel", "policy", "share_pct")
        .sort("panel", "policy", "day")
    )
    frame = grid.to_pandas()
    levels = level_order(frame["policy"], ONLINE_POLICIES)
    make_categorical(frame, "policy", levels)
    make_categorical(frame, "panel", list(dict.fromkeys(panels[name] for name in wanted)))
    return (
        ggplot(frame, aes(x="day", y="share_pct", fill="policy"))
        + geom_area(position="stack", alpha=0.9, size=0.1, colour="white")
        + facet_wrap("panel", ncol=1)
        + scale_fill_manual(
            values=manual_values(levels, POLICY_COLOURS, SPARE_COLOURS),
            limits=levels,
            name="policy",
        )
        + scale_y_continuous(breaks=[0, 25, 50, 75, 100])
        + wrapped_labs(
            x="time since the start of the trace (days)",
            y="share of the policy periods (%)",
            title=f"{trace}: policies chosen over time ({period} periods)",
            subtitle=(
                "share of the periods choosing each policy per time bin (x: bin start), "
                "mean over replicas"
            ),
        )
        + figure_theme()
    )
