"""The rl study's plan (its checks, files, settings), statistics and published table."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
import yaml
from support.configs import tiny_base

from scheduler.core.errors import ConfigurationError
from scheduler.studies.rl.plan import COMPATIBLE, EASY, rl_plan
from scheduler.studies.rl.published import paper_trace, published_bsld, published_comparison
from scheduler.studies.rl.stats import AGENT, comparison_table, summary_table


def config(**rl) -> dict:
    base = tiny_base()
    base["studies"] = ["rl"]
    base["rl"] = rl
    return base


def test_defaults_follow_rlschedulers_protocol() -> None:
    plan = rl_plan(config())
    assert plan.trace_names == ("Lublin-256", "SDSC-SP2-10k", "HPC2N-10k")
    assert (plan.count, plan.length, plan.sequence_seed, plan.job_slice) == (10, 1024, 1, 10_000)
    assert plan.backfill == (False, True) and plan.reference == "F1"
    assert plan.ppo_traces == () and plan.figure_names() == ("sequences",)
    assert "results/rl/tables/published.md" in plan.targets()
    settings = plan.sequence_settings(SimpleNamespace(trace="HPC2N-10k"))
    assert settings["heuristics"][:5] == ["FCFS", "WFP3", "UNICEF", "SJF", "F1"]


def test_ppo_files_and_settings() -> None:
    plan = rl_plan(config(ppo={"enabled": True, "traces": ["Lublin-256"], "timesteps": 500,
                               "n_steps": 64, "batch_size": 32}))  # fmt: skip
    assert plan.ppo_traces == ("Lublin-256",)
    assert plan.evaluation_files() == ["results/rl/Lublin-256/ppo/evaluation.parquet"]
    assert "results/rl/figures/learning_curve.png" in plan.targets()
    settings = plan.train_settings(SimpleNamespace(trace="Lublin-256"))
    assert settings["timesteps"] == 500 and settings["ppo_seed"] == 0
    assert settings["semantics"] == "easy" and settings["train_backfill"] is False


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"reference": "SAF"}, "rl.reference"),
        ({"heuristics": ["FCFS"], "reference": "F1"}, "rl.reference"),
        ({"job_slice": 1500}, "rl.job_slice"),
        ({"ppo": {"enabled": True, "traces": ["KTH-SP2"]}}, "rl.ppo.traces"),
        ({"ppo": {"enabled": True, "n_steps": 64, "batch_size": 128}}, "rl.ppo.batch_size"),
        ({"policies": ["FCFS", "NOPE"]}, "rl.policies"),
        ({"traces": ["Nowhere"]}, "rl.traces"),
    ],
)
def test_bad_sections_name_their_key(section: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace(".", r"\.")):
        rl_plan(config(**section))


def runs_table() -> pl.DataFrame:
    rows = []
    for seq, (fcfs, f1) in enumerate([(10.0, 5.0), (40.0, 10.0), (9.0, 9.0)]):
        for policy, value in (("FCFS", fcfs), ("F1", f1)):
            rows.append({"trace": "T", "mode": COMPATIBLE, "backfill": True, "policy": policy,
                         "sequence": seq, "start": seq, "avg_bsld": value,
                         "avg_wait_s": 3600.0 * value, "max_wait_s": 0.0,
                         "utilisation": 0.5})  # fmt: skip
    return pl.DataFrame(rows)


def test_summary_and_paired_comparison_by_hand() -> None:
    summary = summary_table(runs_table(), 0.95)
    fcfs = summary.filter(pl.col("policy") == "FCFS").row(0, named=True)
    assert fcfs["mean_bsld"] == pytest.approx(59 / 3) and fcfs["median_bsld"] == 10.0
    assert fcfs["bsld_low"] < fcfs["mean_bsld"] < fcfs["bsld_high"]
    assert fcfs["mean_wait_h"] == pytest.approx(59 / 3)
    comparison = comparison_table(runs_table(), "F1", 0.95).row(0, named=True)
    # ratios FCFS / F1 of the three sequences: 2, 4, 1 -> geometric mean 2
    assert comparison["ratio"] == pytest.approx(2.0)
    assert comparison["better"] == 0 and comparison["sequences"] == 3
    logs = np.log([2.0, 4.0, 1.0])
    half = 4.302652729911275 * logs.std(ddof=1) / math.sqrt(3)  # t(0.975, 2)
    assert comparison["ratio_high"] == pytest.approx(math.exp(logs.mean() + half))


def test_published_table_and_its_comparison() -> None:
    table = published_bsld()
    assert table.height == 4 * 2 * 6
    assert paper_trace("SDSC-SP2-10k") == "SDSC-SP2" and paper_trace("KTH-SP2") is None
    summary = pl.DataFrame({
        "trace": ["Lublin-256", "Lublin-256", "Lublin-256"],
        "mode": [COMPATIBLE, COMPATIBLE, EASY], "backfill": [True, True, True],
        "policy": ["FCFS", AGENT, "FCFS"], "mean_bsld": [235.82 * 1.1, 58.64, 1.0],
    })  # fmt: skip
    out = published_comparison(summary, AGENT)
    assert out["policy"].to_list() == ["FCFS", "RL"]
    assert out["difference_pct"].to_list() == [pytest.approx(10.0), 0.0]


def test_the_published_numbers_have_one_home() -> None:
    from scheduler.studies.rl.published import PUBLISHED_FILE

    data = yaml.safe_load(PUBLISHED_FILE.read_text())
    assert all(len(row) == 2 + len(data["policies"]) for row in data["bsld"])
