"""The ε of the ε-greedy bandit on each trace (:func:`choose_epsilon`), from the run totals of
:func:`~scheduler.studies.online.runs.run_totals`.

As published (Reis's thesis), one ε is chosen for all policy periods by a leave-one-trace-out
majority vote (``vote="pooled"``, the default): the own best ε of every *other* trace at *every*
period Δ casts one vote, so the held-out trace's own results never influence its choice and the
1-day and 1-week studies share one ε. ``vote="per_period"`` keeps schedlab's earlier rule (a
separate vote per Δ). A single trace has nobody to vote: it gets the configured ε
(``online.epsilon``, 0.1 as in the thesis), labelled ``"configured"``, never its own in-sample
best (that would choose ε on the very replicas it is then evaluated on).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.runs import (
    TOTALS_COLUMNS,
    eps_text,
    require_columns,
    run_map,
)
from scheduler.studies.online.selectors import bandit_epsilon, bandit_spec

__all__ = ["EPSILON_VOTES", "EpsilonVote", "choose_epsilon"]

#: How the bandit's ε is chosen (``online.epsilon_vote``).
EpsilonVote = Literal["pooled", "per_period", "configured"]
#: The values of ``online.epsilon_vote``, the published rule first.
EPSILON_VOTES: tuple[str, ...] = ("pooled", "per_period", "configured")
#: The ``how`` of :func:`choose_epsilon`'s rows.
_HOW = {
    "pooled": "vote (all Δ)",
    "per_period": "vote (per Δ)",
    "configured": "configured",
}


def choose_epsilon(
    totals: pl.DataFrame,
    *,
    candidates: Sequence[str],
    period: str | None = None,
    vote: EpsilonVote = "pooled",
    configured: float | None = None,
) -> pl.DataFrame:
    """The bandit ε used on each trace and period.

    For each trace L and period Δ, L's *own best* ε at Δ is the candidate with the lowest Σ_k W
    over the replicas every candidate ran on (ties: smaller ε). Then, for a held-out trace H:

    * ``vote="pooled"`` (published): the ε chosen for H, at every Δ, is the most frequent own
      best ε among the (trace, Δ) pairs of the other traces (ties: smaller ε);
    * ``vote="per_period"``: the same vote, at each Δ separately, among the other traces' own
      best ε at that Δ;
    * ``vote="configured"``, or a single trace (no other trace to vote): ``configured``.

    Parameters
    ----------
    totals
        Output of :func:`run_totals` (``total_wait_s`` in seconds).
    candidates
        Bandit strategy names ``"bandit(eps=<ε>)"``: those of the configured ε values
        (``OnlinePlan.bandit_epsilons``; there is no built-in default). Candidates with no run
        at a period are ignored; a candidate run on some traces but not on others is an error.
    period
        Policy period label (``"1d"``, ``"1w"``) to report; ``None``: every period the
        candidates ran with. The pooled vote always counts every period.
    vote
        ``"pooled"``, ``"per_period"`` or ``"configured"`` (``online.epsilon_vote``).
    configured
        The configured ε (``online.epsilon``, dimensionless): used with ``vote="configured"``
        and for a single trace; it must be one of the candidates then.

    Returns
    -------
    pl.DataFrame
        One row per (period, held-out trace), sorted: ``period``, ``held_out``, ``chosen`` (ε),
        ``chosen_strategy`` (its strategy name), ``how`` (``"vote (all Δ)"``, ``"vote (per
        Δ)"`` or ``"configured"``), ``votes`` (the other traces' own best ε and their counts,
        most frequent first, e.g. ``"0.1:3, 0.3:2"``; empty when configured), ``own_best`` (the
        held-out trace's own best ε at that period, descriptive only) and ``note`` (null, or why
        the configured ε is used).

    Raises
    ------
    ConfigurationError
        When a candidate name is not a bandit name, no candidate ran (at ``period``), a trace
        lacks a candidate that other traces ran, the candidates share no replica on a trace,
        ``vote`` is unknown, or the configured ε is needed but missing or not a candidate.
    """
    what = "choose_epsilon"
    require_columns(totals, TOTALS_COLUMNS[:-1], what)
    if vote not in _HOW:
        raise ConfigurationError(
            f"{what}: vote must be one of {', '.join(EPSILON_VOTES)} (online.epsilon_vote), "
            f"not {vote!r}"
        )
    epsilons: dict[str, float] = {}
    for name in candidates:
        eps = bandit_epsilon(name)
        if eps is None:
            raise ConfigurationError(f"{what}: {name!r} is not a bandit name 'bandit(eps=<ε>)'")
        epsilons[name] = eps
    rows = totals.filter(pl.col("strategy").is_in(list(epsilons)))
    if rows.height == 0 or (period is not None and period not in set(rows["period"])):
        at = "" if period is None else f" with period {period!r}"
        raise ConfigurationError(
            f"{what}: no run of the candidates {', '.join(candidates)}{at} "
            f"(strategies: {', '.join(sorted(set(totals['strategy'])))})"
        )
    runs = run_map(rows)
    labels = sorted({key[2] for key in runs})
    traces = sorted({key[0] for key in runs})
    own = {
        (trace, label): _own_best(runs, trace, label, epsilons)
        for label in labels
        for trace in traces
        if any(key[0] == trace and key[2] == label for key in runs)
    }
    configured_name = None
    if vote == "configured" or len(traces) == 1:
        configured_name = _configured(configured, epsilons, what)

    out: list[dict[str, object]] = []
    for label in labels if period is None else [period]:
        for held_out in sorted(trace for trace, at in own if at == label):
            if configured_name is not None:
                chosen, how, counts = epsilons[configured_name], "configured", Counter()
                note = (
                    "single trace: the configured ε (online.epsilon) is used; no other trace "
                    "to vote"
                    if len(traces) == 1
                    else "online.epsilon_vote: configured"
                )
            else:
                counts = Counter(
                    eps
                    for (trace, at), eps in own.items()
                    if trace != held_out and (vote == "pooled" or at == label)
                )
                if not counts:  # only the held-out trace ran at this period (per-Δ vote)
                    raise ConfigurationError(
                        f"{what}: no other trace than {held_out!r} ran the bandit at period "
                        f"{label!r}; a per-period vote needs two"
                    )
                chosen = min(counts, key=lambda eps: (-counts[eps], eps))
                how, note = _HOW[vote], None
            ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            out.append(
                {
                    "period": label,
                    "held_out": held_out,
                    "chosen": chosen,
                    "chosen_strategy": next(n for n in epsilons if epsilons[n] == chosen),
                    "how": how,
                    "votes": ", ".join(f"{eps_text(eps)}:{n}" for eps, n in ranked),
                    "own_best": own[(held_out, label)],
                    "note": note,
                }
            )
    schema = {
        "period": pl.String,
        "held_out": pl.String,
        "chosen": pl.Float64,
        "chosen_strategy": pl.String,
        "how": pl.String,
        "votes": pl.String,
        "own_best": pl.Float64,
        "note": pl.String,
    }
    return pl.DataFrame(out, schema=schema, orient="row")


def _configured(configured: float | None, epsilons: Mapping[str, float], what: str) -> str:
    """The candidate name of the configured ε; raise when it is missing or not a candidate."""
    if configured is None:
        raise ConfigurationError(
            f"{what}: a single trace (or online.epsilon_vote: configured) needs the configured "
            "ε (online.epsilon)"
        )
    for name, eps in epsilons.items():
        if eps == float(configured):
            return name
    raise ConfigurationError(
        f"{what}: the configured ε (online.epsilon) {bandit_spec(float(configured))} is not "
        f"among the bandit runs {', '.join(epsilons)} (online.epsilons)"
    )


def _own_best(
    runs: Mapping[tuple[str, str, str], Mapping[int, float]],
    trace: str,
    period: str,
    epsilons: Mapping[str, float],
) -> float:
    """ε of the candidate with the lowest Σ_k W on ``trace`` at ``period`` (the replicas common
    to every candidate run at ``period``; ties: smaller ε)."""
    present = sorted({key[1] for key in runs if key[2] == period}, key=lambda name: epsilons[name])
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
