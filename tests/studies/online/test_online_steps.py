"""The online study's table and figure steps take the reference from the plan: with
``online.reference: SPF`` the reference rows are 0 and the headers say EASY(SPF, 40 h)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from support.online import TRACES, curves_from, simulated_runs

from scheduler.core.provenance import read_parquet_provenance
from scheduler.core.steps import StepError
from scheduler.sim.arrays import kernel_arrays
from scheduler.studies.online import steps as online_steps
from scheduler.studies.online.live import DAY_S, simulated_period_costs
from scheduler.studies.online.plan import online_plan
from scheduler.studies.online.runs import CHOICE_COLUMNS
from scheduler.traces import steps as trace_steps

REPO = Path(__file__).resolve().parents[3]

#: online_tables' outputs: parameter -> file name.
OUTPUTS = {
    "epsilon_csv_path": "epsilon.csv", "epsilon_md_path": "epsilon.md",
    "changes_path": "changes.parquet", "changes_csv_path": "changes.csv",
    "fixed_md_path": "fixed.md", "strategies_md_path": "strategies.md",
    "improvement_path": "improvement.parquet", "shares_path": "shares.parquet",
}  # fmt: skip


def test_online_tables_and_figure_follow_the_configured_reference(tmp_path: Path) -> None:
    online = {"policies": ["FCFS", "SPF"], "reference": "spf", "selectors": ["full", "bandit"]}
    plan = online_plan({"online": online})
    assert (plan.reference, plan.threshold_s) == ("fixed:SPF", 40 * 3600.0)
    curves = curves_from(simulated_runs())
    choices = pl.DataFrame(
        [(*key, index, "SPF" if index % 2 else "FCFS")
         for key in curves.select("trace", "replica", "strategy", "period").unique().rows()
         if key[3] != "none" for index in range(4)],
        schema=list(CHOICE_COLUMNS), orient="row",
    )  # fmt: skip
    curve_path, choice_path = tmp_path / "curves.parquet", tmp_path / "choices.parquet"
    curves.write_parquet(curve_path)
    choices.write_parquet(choice_path)
    outputs = _outputs(tmp_path)
    online_steps.online_tables(
        [str(curve_path)], [str(choice_path)], **outputs, reference=plan.reference,
        threshold_s=plan.threshold_s, confidence=0.95, seed=0,
        epsilons=list(plan.bandit_epsilons), epsilon=plan.epsilon, epsilon_vote="pooled",
    )  # fmt: skip
    changes = pl.read_parquet(outputs["changes_path"])
    spf = changes.filter(pl.col("strategy") == "fixed:SPF")
    assert spf.height == len(TRACES) and (spf["relative_change"] == 0.0).all()
    assert (changes.filter(pl.col("strategy") == "fixed:FCFS")["relative_change"] != 0.0).all()
    for name in ("fixed_md_path", "strategies_md_path"):
        text = Path(outputs[name]).read_text()
        assert "vs EASY(SPF, 40 h)" in text and "FCFS, 40 h" not in text
    improvement = pl.read_parquet(outputs["improvement_path"])
    assert (improvement.filter(pl.col("strategy") == "fixed:SPF")["improvement"] == 0.0).all()

    png, pdf = tmp_path / "fixed.png", tmp_path / "fixed.pdf"
    online_steps.online_figure(
        outputs["improvement_path"], outputs["shares_path"], outputs["changes_path"], str(png),
        str(pdf), figure="fixed_improvement", trace=TRACES[0], reference=plan.reference,
        threshold_s=plan.threshold_s,
    )  # fmt: skip
    assert png.stat().st_size > 10_000 and pdf.exists()


def test_choice_share_selectors_come_from_the_registry() -> None:
    assert online_steps.CHOICE_SHARE_SELECTORS == ("noisy", "full")
    assert online_steps.draws_choice_shares(["random", "bandit(eps=0.1)"])
    assert not online_steps.draws_choice_shares(["random", "ucb"])


def _write_runs(tmp_path: Path, runs: dict) -> tuple[str, str]:
    curves = curves_from(runs)
    choices = pl.DataFrame(
        [(*key, index, "FCFS")
         for key in curves.select("trace", "replica", "strategy", "period").unique().rows()
         if key[3] != "none" for index in range(2)],
        schema=list(CHOICE_COLUMNS), orient="row",
    )  # fmt: skip
    curve_path, choice_path = tmp_path / "curves.parquet", tmp_path / "choices.parquet"
    curves.write_parquet(curve_path)
    choices.write_parquet(choice_path)
    return str(curve_path), str(choice_path)


def _outputs(tmp_path: Path, names=tuple(OUTPUTS)) -> dict[str, str]:
    return {name: str(tmp_path / OUTPUTS[name]) for name in names}


def test_online_tables_choose_among_the_configured_epsilons(tmp_path: Path) -> None:
    """#11: only the configured ε values are candidates (here 0.3 alone, although the runs
    table also holds a bandit(eps=0.1))."""
    curve_path, choice_path = _write_runs(tmp_path, simulated_runs())
    outputs = _outputs(tmp_path)
    online_steps.online_tables(
        [curve_path], [choice_path], **outputs, reference="fixed:FCFS", threshold_s=3600.0,
        confidence=0.95, seed=0, epsilons=[0.3], epsilon=0.1, epsilon_vote="pooled",
    )  # fmt: skip
    epsilon = pl.read_csv(outputs["epsilon_csv_path"], comment_prefix="#")
    assert set(epsilon["chosen"]) == {0.3}


def test_online_tables_without_a_bandit(tmp_path: Path) -> None:
    """#11: without a bandit selector there is no ε table and no LOTO bandit row."""
    runs = {key: value for key, value in simulated_runs().items()
            if not key[2].startswith("bandit")}  # fmt: skip
    curve_path, choice_path = _write_runs(tmp_path, runs)
    outputs = _outputs(tmp_path, [n for n in OUTPUTS if not n.startswith("epsilon")])
    online_steps.online_tables(
        [curve_path], [choice_path], **outputs, reference="fixed:FCFS", threshold_s=3600.0,
        confidence=0.95, seed=0, epsilons=[], epsilon=0.1, epsilon_vote="pooled",
    )  # fmt: skip
    changes = pl.read_parquet(outputs["changes_path"])
    assert not changes["strategy"].str.starts_with("bandit").any()
    assert not list(tmp_path.glob("epsilon*"))


@pytest.fixture(scope="module")
def long_trace_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two resampled weeks of the bundled KTH slice, as the workflow's long_trace rule makes."""
    folder = tmp_path_factory.mktemp("online-steps")
    filtered = str(folder / "filtered.parquet")
    trace_steps.filter_trace(
        str(REPO / "resources" / "KTH-slice.swf.gz"), filtered, str(folder / "report.json"),
        trace="KTH-slice",
        machine_procs=None, overrun="drop",
    )  # fmt: skip
    out = str(folder / "replica0.parquet")
    online_steps.make_long_trace(
        filtered,
        out,
        trace="KTH-slice",
        replica=0,
        weeks=2,
        seed=1,
        method="uniform",
        alignment="calendar",
    )
    return out


@pytest.mark.parametrize("threshold_backfill", [True, False])
def test_online_steps_pass_the_backfill_order_on(
    tmp_path: Path, long_trace_path: str, threshold_backfill: bool
) -> None:
    """period_costs and online_run simulate with ``threshold_backfill`` and record it."""
    policies, threshold_s = ["FCFS", "SPF"], 7200.0
    common = {"trace": "KTH-slice", "replica": 0, "period": "1d", "period_s": DAY_S,
              "policies": policies, "threshold_s": threshold_s,
              "threshold_backfill": threshold_backfill,
              "period_alignment": "calendar", "slurm": None}  # fmt: skip
    costs_path = str(tmp_path / "costs.parquet")
    online_steps.period_costs(long_trace_path, costs_path, **common)
    arrays, procs = kernel_arrays("long_trace", long_trace_path)
    expected = simulated_period_costs(
        arrays, procs, tuple(policies), period_s=DAY_S, threshold_s=threshold_s,
        threshold_backfill=threshold_backfill,
        period_origin_s=online_steps.long_trace_period_origin(long_trace_path, "calendar"),
    )  # fmt: skip
    assert np.array_equal(pl.read_parquet(costs_path).select(policies).to_numpy(), expected)
    assert read_parquet_provenance(costs_path)["config"]["threshold_backfill"] is threshold_backfill
    curve, choices = str(tmp_path / "curve.parquet"), str(tmp_path / "choices.parquet")
    online_steps.online_run(
        [long_trace_path], curve, choices, strategy="fixed:SPF", seed=0, options={},
        replicas=[0], **{k: v for k, v in common.items() if k != "replica"},
    )  # fmt: skip
    assert read_parquet_provenance(curve)["config"]["threshold_backfill"] is threshold_backfill


def test_online_run_step_backfill_orders_differ(tmp_path: Path, long_trace_path: str) -> None:
    totals = []
    for flag in (True, False):
        curve = str(tmp_path / f"curve-{flag}.parquet")
        online_steps.online_run(
            [long_trace_path], curve, str(tmp_path / f"choices-{flag}.parquet"),
            trace="KTH-slice", replicas=[0], strategy="fixed:SPF", period="1d", period_s=DAY_S,
            policies=["FCFS", "SPF"], threshold_s=7200.0, seed=0, threshold_backfill=flag,
            options={}, period_alignment="calendar", slurm=None,
        )  # fmt: skip
        totals.append(pl.read_parquet(curve)["cumulative_wait_s"][-1])
    assert totals[0] != totals[1]


def test_a_batch_of_replicas_equals_each_replica_run_alone(
    tmp_path: Path, long_trace_path: str
) -> None:
    """online.replicas_per_job only packs runs into jobs: the batch's rows are, replica by
    replica, those of the replica run alone (the selector's stream is seeded per replica)."""
    settings = {"trace": "KTH-slice", "strategy": "random", "period": "1d", "period_s": DAY_S,
                "policies": ["FCFS", "SPF", "LQF"], "threshold_s": 7200.0, "seed": 3,
                "threshold_backfill": True, "options": {}, "period_alignment": "calendar",
                "slurm": None}  # fmt: skip

    def run(name: str, replicas: list[int]) -> tuple[pl.DataFrame, pl.DataFrame]:
        curve, choices = tmp_path / f"{name}-curve.parquet", tmp_path / f"{name}-choices.parquet"
        online_steps.online_run([long_trace_path] * len(replicas), str(curve), str(choices),
                                replicas=replicas, **settings)  # fmt: skip
        return pl.read_parquet(curve), pl.read_parquet(choices)

    batch = run("batch", [4, 7])
    alone = [run(f"alone{k}", [k]) for k in (4, 7)]
    for part in (0, 1):
        assert batch[part].equals(pl.concat([one[part] for one in alone]))
    assert batch[1]["replica"].unique().sort().to_list() == [4, 7]
    # the two replicas' selectors draw differently: their choices differ
    by_replica = batch[1].partition_by("replica", maintain_order=True)
    assert by_replica[0]["policy"].to_list() != by_replica[1]["policy"].to_list()
    with pytest.raises(StepError, match="2 long traces and 0 cost files for replicas"):
        online_steps.online_run([long_trace_path] * 2, str(tmp_path / "c.parquet"),
                                str(tmp_path / "h.parquet"), replicas=[1], **settings)  # fmt: skip
