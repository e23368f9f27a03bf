"""The bandit ε by leave-one-trace-out vote (scheduler.studies.online.epsilon), by hand."""

from __future__ import annotations

import polars as pl
import pytest
from support.online import (
    CANDIDATES,
    loto_totals,
)

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.epsilon import choose_epsilon

# --------------------------------------------------------------------------------------------
# Leave-one-trace-out ε
# --------------------------------------------------------------------------------------------


def test_loto_vote_by_hand():
    chosen = choose_epsilon(loto_totals(), candidates=CANDIDATES, period="1d")
    assert chosen.columns == [
        "period",
        "held_out",
        "chosen",
        "chosen_strategy",
        "votes",
        "own_best",
        "note",
    ]
    got = {r["held_out"]: r for r in chosen.iter_rows(named=True)}
    # A: the others (B, C) both prefer 0.3 although A itself is best with 0.1.
    assert (got["A"]["own_best"], got["A"]["chosen"], got["A"]["votes"]) == (0.1, 0.3, "0.3:2")
    assert got["A"]["chosen_strategy"] == "bandit(eps=0.3)"
    # B: A votes 0.1, C votes 0.3 → tie → smaller ε, which is not B's own best.
    assert (got["B"]["own_best"], got["B"]["chosen"], got["B"]["votes"]) == (
        0.3,
        0.1,
        "0.1:1, 0.3:1",
    )
    assert (got["C"]["own_best"], got["C"]["chosen"]) == (0.3, 0.1)
    assert chosen["note"].is_null().all() and set(chosen["period"]) == {"1d"}


def test_loto_vote_for_every_period_and_a_single_log():
    both = choose_epsilon(loto_totals(), candidates=CANDIDATES, period=None)
    assert both.height == 6 and sorted(set(both["period"])) == ["1d", "1w"]
    assert set(both.filter(pl.col("period") == "1w")["chosen"]) == {0.5}
    alone = choose_epsilon(
        loto_totals().filter(pl.col("trace") == "A"), candidates=CANDIDATES, period="1d"
    )
    assert alone.height == 1
    assert alone["chosen"][0] == 0.1 and alone["own_best"][0] == 0.1
    assert "single" in alone["note"][0] and alone["votes"][0] == ""


def test_loto_vote_rejects_bad_candidates():
    with pytest.raises(ConfigurationError, match="not a bandit name"):
        choose_epsilon(loto_totals(), candidates=("ucb",), period="1d")
    with pytest.raises(ConfigurationError, match="no run"):
        choose_epsilon(loto_totals(), candidates=CANDIDATES, period="2w")


def test_loto_vote_among_the_configured_epsilons():
    """#11: the candidates are the configured ε values, not a built-in list (0.4 won here,
    yet a built-in list without 0.4 reported 0.9)."""
    rows = [
        (trace, k, f"bandit(eps={eps})", "1d", total / 2)
        for trace in ("A", "B")
        for k in range(2)
        for eps, total in (("0.4", 100.0), ("0.9", 300.0))
    ]
    totals = pl.DataFrame(
        rows, schema=["trace", "replica", "strategy", "period", "total_wait_s"], orient="row"
    )
    chosen = choose_epsilon(totals, candidates=("bandit(eps=0.4)", "bandit(eps=0.9)"))
    assert set(chosen["chosen"]) == {0.4} and set(chosen["own_best"]) == {0.4}
    assert set(chosen["chosen_strategy"]) == {"bandit(eps=0.4)"}


def test_candidates_must_be_given():
    """No built-in default: a caller that forgets the configured ε values fails loudly."""
    with pytest.raises(TypeError):
        choose_epsilon(loto_totals())  # type: ignore[call-arg]
