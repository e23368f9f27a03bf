"""Runs of the online study (scheduler.studies.online.runs): totals, strategy order, labels."""

from __future__ import annotations

import polars as pl
import pytest
from support.online import Run, row

from scheduler.core.errors import ConfigurationError
from scheduler.studies.online.runs import (
    ADDITION_MARK,
    BEST_FIXED,
    CONFIGURED_BANDIT,
    CROSSFIT_FIXED,
    LOTO_BANDIT,
    SELECTOR_STRATEGIES,
    display_name,
    from_thesis,
    reference_label,
    run_totals,
    sort_study_order,
)
from scheduler.studies.online.selectors import SELECTORS

# --------------------------------------------------------------------------------------------
# run_totals
# --------------------------------------------------------------------------------------------


def test_run_totals_takes_the_last_day(runs: dict[Run, list[float]], curves: pl.DataFrame):
    shuffled = curves.sample(fraction=1.0, shuffle=True, seed=1)
    totals = run_totals(shuffled)
    assert totals.columns == ["trace", "replica", "strategy", "period", "total_wait_s", "jobs"]
    assert totals.height == len(runs)
    for run, values in runs.items():
        got = row(
            totals,
            trace=run[0],
            replica=run[1],  # type: ignore[arg-type]
            strategy=run[2],
            period=run[3],
        )
        assert got["total_wait_s"] == pytest.approx(values[-1])
        assert got["jobs"] == 10 * len(values)


def test_run_totals_rejects_duplicates_and_missing_columns(curves: pl.DataFrame):
    with pytest.raises(ConfigurationError, match="duplicated"):
        run_totals(pl.concat([curves, curves.head(1)]))
    with pytest.raises(ConfigurationError, match="finished_jobs"):
        run_totals(curves.drop("finished_jobs"))


def test_selector_strategies_follow_the_registry():
    # the default config's table order: the registered kinds, the bandit as its chosen ε
    assert SELECTOR_STRATEGIES == (
        "random", "full", "noisy", LOTO_BANDIT, CONFIGURED_BANDIT, "ucb", "swucb", "thompson",
    )  # fmt: skip
    names = ["thompson", "bandit(eps=0.3)", LOTO_BANDIT, "random", "fixed:SPF", "fixed:FCFS"]
    table = pl.DataFrame({"strategy": [*names, "bandit(eps=0.1)", "noisy"]})
    assert sort_study_order(table, ("strategy",))["strategy"].to_list() == [
        "fixed:FCFS", "fixed:SPF", "random", "noisy", "bandit(eps=0.1)", "bandit(eps=0.3)",
        LOTO_BANDIT, "thompson",
    ]  # fmt: skip


def test_thesis_strategies_and_additions_follow_the_registry_flag():
    """#16 (14): the selectors of the thesis are shown as they are, schedlab's additions with
    "(addition)", from the registry's ``thesis`` flag."""
    thesis = ["fixed:SPF", BEST_FIXED, "random", "full", "noisy(low=0.9,high=1.1)",
              "bandit(eps=0.3)", LOTO_BANDIT, CONFIGURED_BANDIT]  # fmt: skip
    additions = ["ucb", "ucb(c=0.5)", "swucb", "swucb(window=10)", "thompson", CROSSFIT_FIXED]
    assert all(from_thesis(name) for name in thesis)
    assert not any(from_thesis(name) for name in additions)
    assert [display_name(name) for name in thesis] == thesis
    assert display_name("ucb") == "ucb" + ADDITION_MARK == "ucb (addition)"
    assert display_name("swucb(window=10)") == "swucb(window=10) (addition)"
    assert display_name(CROSSFIT_FIXED) == CROSSFIT_FIXED  # a comparator, not a selector
    kinds = {name for name, kind in SELECTORS.items() if not kind.thesis}
    assert kinds == {"ucb", "swucb", "thompson"}


def test_reference_label_names_the_configured_policy_and_threshold():
    assert reference_label("fixed:FCFS", 40 * 3600.0) == "EASY(FCFS, 40 h)"
    assert reference_label("fixed:SPF", 40 * 3600.0) == "EASY(SPF, 40 h)"
    assert reference_label("SPF", 1800.0) == "EASY(SPF, 0.5 h)"
