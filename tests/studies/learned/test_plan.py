"""The learned study's plan: the `learned` config section, its batches, workloads and errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler.core.errors import ConfigurationError
from scheduler.studies.learned.plan import learned_plan, model_workload

ROOT = Path(__file__).resolve().parents[3]


def _config(*files: str, **section: object) -> dict:
    config = yaml.safe_load((ROOT / "config" / "traces.yaml").read_text())
    for name in files:
        config |= yaml.safe_load((ROOT / "config" / name).read_text())
    learned = config.get("learned", {})
    evaluation = dict(learned.get("evaluation", {}))
    evaluation.update(section.pop("evaluation", {}))
    config["learned"] = {**learned, **section, "evaluation": evaluation}
    return config


def test_default_config() -> None:
    plan = learned_plan(_config("config.yaml"))
    assert (plan.tuples, plan.tuples_per_job, plan.batches) == (32, 8, 4)
    assert [list(plan.batch_tuples(b)) for b in (0, 3)] == [list(range(8)), list(range(24, 32))]
    assert plan.learned_names == ("LF1", "LF2", "LF3", "LF4")
    assert plan.evaluated_policies[:2] == ("FCFS", "SPF") and plan.evaluated_policies[-1] == "LF4"
    assert [w.name for w in plan.workloads] == ["model-256", "KTH-SP2"]
    assert plan.workload("model-256").is_model and plan.workload("model-256").machine_procs == 256
    assert plan.model_sizes == (256,)
    assert plan.job_types == "combined"


def test_full_config_uses_all_curie_cores() -> None:
    plan = learned_plan(_config("config.yaml", "learned-full.yaml"))
    assert plan.trials == 256_000 and plan.convergence_trials[-1] == 256_000
    assert plan.workload("CEA-Curie").machine_procs == 93_312  # not the catalogue's 80,640
    assert plan.workload("model-1024").model_procs == 1024
    assert plan.model_sizes == (256, 1024)
    assert len(plan.workloads) == 6 and plan.sequences == 10


def test_paper_config_selects_the_authors_protocol() -> None:
    """config/learned-paper.yaml overlays learned-full.yaml (Snakemake merges nested keys)."""
    paper = yaml.safe_load((ROOT / "config" / "learned-paper.yaml").read_text())["learned"]
    plan = learned_plan(_config("config.yaml", "learned-full.yaml", **paper))
    assert plan.queue_window == 32 and plan.state_in_order
    assert plan.trials == 256_000 and len(plan.workloads) == 6  # learned-full's, untouched
    settings = plan.evaluation_settings(type("W", (), {"workload": "CEA-Curie"})())
    assert settings["skipped_sequences"] == [0, 7] and settings["queue_window"] == 32
    assert settings["exchange_sorted_policies"] == ["SPF"] and settings["allocated_only"]
    other = plan.evaluation_settings(type("W", (), {"workload": "CTC-SP2"})())
    assert other["skipped_sequences"] == []
    default = learned_plan(_config("config.yaml", "learned-full.yaml"))
    assert default.queue_window is None and not default.state_in_order
    assert "results/learned/tables/published.md" in default.targets()


def test_the_last_batch_may_be_short() -> None:
    plan = learned_plan(_config("config.yaml", tuples=10, tuples_per_job=4))
    assert plan.batches == 3 and list(plan.batch_tuples(2)) == [8, 9]
    with pytest.raises(ConfigurationError, match="batch 3"):
        plan.batch_tuples(3)


def test_model_workload_names() -> None:
    assert model_workload("model-1024") == 1024
    assert model_workload("model-") is None and model_workload("KTH-SP2") is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"trials": 0}, "learned.trials"),
        ({"tuples": -1}, "learned.tuples"),
        ({"model_job_types": "weird"}, "learned.model_job_types"),
        ({"convergence": {"trials": [4000, 1000]}}, "learned.convergence.trials"),
        ({"evaluation": {"workloads": ["NOPE"]}}, "unknown trace 'NOPE'"),
        ({"evaluation": {"workloads": []}}, "give at least 1 value"),
        ({"evaluation": {"modes": ["fast"]}}, "learned.evaluation.modes"),
        ({"evaluation": {"policies": ["FCFS", "XYZ"]}}, "unknown policy 'XYZ'"),
        ({"evaluation": {"sequences": 0}}, "learned.evaluation.sequences"),
        ({"evaluation": {"machine_procs": {"CTC-SP2": 10}}}, "not an evaluation workload"),
        ({"evaluation": {"skipped_sequences": {"CTC-SP2": [1]}}}, "not an evaluation workload"),
        ({"evaluation": {"queue_window": 0}}, "learned.evaluation.queue_window"),
        ({"evaluation": {"exchange_sorted_policies": ["SPF"]}}, "set learned.evaluation.queue"),
        (
            {"evaluation": {"exchange_sorted_policies": ["XYZ"], "queue_window": 32}},
            "unknown policy 'XYZ'",
        ),
    ],
)
def test_bad_sections_name_the_key(change: dict, message: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        learned_plan(_config("config.yaml", **change))
    assert message in str(error.value)
