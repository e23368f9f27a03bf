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
from scheduler.studies.online.runs import EPSILON_COLUMNS

# --------------------------------------------------------------------------------------------
# Leave-one-trace-out ε
# --------------------------------------------------------------------------------------------


def test_loto_vote_per_period_by_hand():
    chosen = choose_epsilon(loto_totals(), candidates=CANDIDATES, period="1d", vote="per_period")
    assert tuple(chosen.columns) == EPSILON_COLUMNS
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
    assert set(chosen["how"]) == {"vote (per Δ)"}


def test_pooled_vote_chooses_one_epsilon_for_every_period_as_published():
    """#16 (10): the thesis votes over all traces and both Δ together: the own best ε of every
    other (trace, Δ) pair is a vote (1d: A 0.1, B 0.3, C 0.3; 1w: all 0.5), and the held-out
    trace gets one ε for both periods."""
    chosen = choose_epsilon(loto_totals(), candidates=CANDIDATES)
    assert chosen.height == 6 and set(chosen["how"]) == {"vote (all Δ)"}
    got = {(r["held_out"], r["period"]): r for r in chosen.iter_rows(named=True)}
    # A: B (0.3, 0.5) and C (0.3, 0.5): 0.3 and 0.5 tie at 2 votes → the smaller, 0.3
    # B: A (0.1, 0.5) and C (0.3, 0.5) → 0.5;  C: A (0.1, 0.5) and B (0.3, 0.5) → 0.5
    expected = {"A": (0.3, "0.3:2, 0.5:2"), "B": (0.5, "0.5:2, 0.1:1, 0.3:1"),
                "C": (0.5, "0.5:2, 0.1:1, 0.3:1")}  # fmt: skip
    for (log, period), row in got.items():
        assert (row["chosen"], row["votes"]) == expected[log], (log, period)
    # the per-Δ vote differs (A at 1d: 0.3, at 1w: 0.5): the pooled vote is one ε per trace
    per_period = choose_epsilon(loto_totals(), candidates=CANDIDATES, vote="per_period")
    assert per_period.filter(pl.col("held_out") == "A")["chosen"].to_list() == [0.3, 0.5]
    assert chosen.filter(pl.col("held_out") == "A")["chosen"].to_list() == [0.3, 0.3]
    # own_best stays per period (descriptive only)
    assert got[("A", "1d")]["own_best"] == 0.1 and got[("A", "1w")]["own_best"] == 0.5


def test_a_single_trace_uses_the_configured_epsilon_not_its_own_best():
    """#16 (10): one trace cannot vote; its own in-sample best would leak (A's own best is
    0.1, the configured 0.3 is used and labelled configured)."""
    alone = loto_totals().filter(pl.col("trace") == "A")
    chosen = choose_epsilon(alone, candidates=CANDIDATES, configured=0.3)
    assert chosen.height == 2 and set(chosen["chosen"]) == {0.3}
    assert set(chosen["how"]) == {"configured"} and set(chosen["own_best"]) == {0.1, 0.5}
    assert set(chosen["chosen_strategy"]) == {"bandit(eps=0.3)"}
    assert "single trace" in chosen["note"][0] and chosen["votes"][0] == ""
    with pytest.raises(ConfigurationError, match=r"online\.epsilon"):
        choose_epsilon(alone, candidates=CANDIDATES)
    with pytest.raises(ConfigurationError, match=r"online.epsilon\b.*bandit\(eps=0.7\)"):
        choose_epsilon(alone, candidates=CANDIDATES, configured=0.7)
    # online.epsilon_vote: configured, with several traces
    everyone = choose_epsilon(loto_totals(), candidates=CANDIDATES, vote="configured",
                              configured=0.5)  # fmt: skip
    assert set(everyone["chosen"]) == {0.5} and set(everyone["how"]) == {"configured"}
    with pytest.raises(ConfigurationError, match=r"online\.epsilon_vote"):
        choose_epsilon(loto_totals(), candidates=CANDIDATES, vote="mine")  # type: ignore[arg-type]


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
