"""The rl study through Snakemake for real: its tables in the session's tiny study (every study),
and the PPO agent trained, evaluated and reported in a project of its own (needs the rl extra)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml
from support.png import png_text
from support.tiny_project import RL_EXTRA_MISSING, copy_with, planned_jobs

from scheduler.core.provenance import read_csv

pytestmark = pytest.mark.workflow

BANDITS = ["bandit(eps=0.1)", "ucb", "swucb(window=20)", "thompson"]


def test_every_policy_on_the_same_sequences_in_both_modes(tiny_study: Path) -> None:
    runs = pl.read_parquet(tiny_study / "results/rl/runs.parquet")
    assert set(runs["mode"]) == {"compatible", "compatible+easy-backfill",
                                 "easy+compatible-scores", "easy"}  # fmt: skip
    easy = set(runs.filter(pl.col("mode") == "easy")["policy"]) - {"PPO"}
    assert easy == {"FCFS", "SPF", "F1", "LF1"} | {f"online:{b}" for b in BANDITS}
    assert set(runs.filter(pl.col("mode") == "compatible")["policy"]) == {"FCFS", "SJF", "F1"}
    starts = runs.group_by("mode", "backfill", "policy").agg(pl.col("start").sort())
    assert len({tuple(s) for s in starts["start"].to_list()}) == 1
    # FCFS without backfilling is one schedule in both modes (1 processor per node)
    fcfs = runs.filter((pl.col("policy") == "FCFS") & ~pl.col("backfill")).sort("sequence")
    compat, easy = (fcfs.filter(pl.col("mode") == m)["avg_bsld"] for m in ("compatible", "easy"))
    assert compat.to_list() == pytest.approx(easy.to_list())
    summary = read_csv(tiny_study / "results/rl/tables/sequences.csv")
    assert (summary["sequences"] == 2).all()
    assert (summary["bsld_low"] <= summary["mean_bsld"]).all()
    comparison = read_csv(tiny_study / "results/rl/tables/comparison.csv")
    assert set(comparison["reference"]) == {"F1"} and "F1" not in set(comparison["policy"])
    published = (tiny_study / "results/rl/tables/published.md").read_text()
    assert "Table V" in published and "Lublin-1" in published
    record = json.loads(png_text(tiny_study / "results/rl/figures/sequences.png")["Description"])
    assert record["step"] == "studies.rl.steps.rl_figure"


def test_ppo_agent_trained_evaluated_and_rerun_alone(tiny_study: Path, tmp_path: Path) -> None:
    if RL_EXTRA_MISSING is not None:
        pytest.skip(RL_EXTRA_MISSING)
    evaluation = pl.read_parquet(tiny_study / "results/rl/Lublin-256/ppo/evaluation.parquet")
    assert evaluation["policy"].unique().to_list() == ["PPO"]
    assert sorted(evaluation["backfill"].unique().to_list()) == [False, True]
    assert evaluation.height == 4 and (evaluation["avg_bsld"] >= 1).all()
    curve = pl.read_parquet(tiny_study / "results/rl/Lublin-256/ppo/curve.parquet")
    assert curve.height >= 1 and (curve["timesteps"] <= 256 + 64).all()
    summary = read_csv(tiny_study / "results/rl/tables/sequences.csv")
    assert "PPO" in set(summary["policy"])
    assert (tiny_study / "results/rl/figures/learning_curve.png").stat().st_size > 10_000
    # a longer training reruns the agent and what reads it, never the heuristics' sequences
    ppo = yaml.safe_load((tiny_study / "tiny.yaml").read_text())["rl"]["ppo"]
    planned = planned_jobs(copy_with(tiny_study, tmp_path, "rl", ppo={**ppo, "timesteps": 320}))
    assert "rl_sequences" not in planned
    assert planned["rl_train"] == 1 and planned["rl_evaluate"] == 1
