"""The ε of the ε-greedy bandit on each trace, by a leave-one-trace-out majority vote
(:func:`choose_epsilon`), from the run totals of :func:`~scheduler.studies.online.runs.run_totals`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.runs import (
    TOTALS_COLUMNS,
    eps_text,
    require_columns,
    run_map,
)
from scheduler.studies.online.selectors import bandit_epsilon

__all__ = ["choose_epsilon"]


def choose_epsilon(
    totals: pl.DataFrame,
    *,
    candidates: Sequence[str],
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
        Bandit strategy names ``"bandit(eps=<ε>)"``: those of the configured ε values
        (``OnlinePlan.bandit_epsilons``; there is no built-in default). Candidates with no run
        at a period are ignored; a candidate run on some traces but not on others is an error.
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
    require_columns(totals, TOTALS_COLUMNS[:-1], what)
    epsilons: dict[str, float] = {}
    for name in candidates:
        eps = bandit_epsilon(name)
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
    runs = run_map(rows)
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
                    "votes": ", ".join(f"{eps_text(eps)}:{n}" for eps, n in ranked),
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
