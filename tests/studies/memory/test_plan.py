"""The memory study's plan: the `memory` config section, its variants, machines and errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler.core.errors import ConfigurationError
from scheduler.sim.memory import MEMORY_LIMITS, MEMORY_SCHEDULERS
from scheduler.studies.common.study import config_schema
from scheduler.studies.memory.plan import Variant, memory_label, memory_plan, parse_variant
from scheduler.traces.memory import UNDER_REQUEST_MODES

ROOT = Path(__file__).resolve().parents[3]


def _config(*files: str, **section: object) -> dict:
    config = yaml.safe_load((ROOT / "config" / "traces.yaml").read_text())
    for name in files:
        overlay = yaml.safe_load((ROOT / "config" / name).read_text())
        catalogue = {**config.get("traces", {}), **overlay.pop("traces", {})}
        config |= overlay | {"traces": catalogue}
    config["memory"] = {**config.get("memory", {}), **section}
    return config


def test_default_tiny_and_full_configs() -> None:
    plan = memory_plan(_config("config.yaml"))
    assert plan.trace_names == ("LANL-CM5-slice",) and plan.slice_jobs is None
    assert plan.class_nodes == (512, 512) and plan.class_memory_mb == (32.0, 24.0)
    assert plan.machine_nodes == 1024 and plan.largest_node_kb == 32 * 1024
    assert plan.loads == (0.5, 0.8, 1.1) and plan.saturation_load == plan.sweep_load == 1.1
    assert plan.schedulers == ("fcfs", "easy") and plan.seeds == (0,)
    assert plan.variant_labels == ("none", "perceptron-implicit", "perceptron-explicit",
                                   "perceptron-implicit-raise-standardised",
                                   "perceptron-explicit-standardised", "history")  # fmt: skip
    assert plan.sweep_labels == ("4", "16", "24", "32")
    tiny = memory_plan(_config("config.yaml", "tiny.yaml"))
    assert tiny.trace_names == ("LANL-CM5-tiny",) and len(tiny.loads) == 2
    assert len(tiny.sweep_memory_mb) == 2
    full = memory_plan(_config("config.yaml", "memory-full.yaml"))
    assert full.trace_names == ("LANL-CM5",) and len(full.loads) == 10
    assert full.load_labels[0] == "0.3" and full.load_labels[-1] == "1.2"
    assert full.seeds == (0, 1, 2, 3, 4) and full.sweep_memory_mb[0] == 1.0
    assert full.sweep_memory_mb[-1] == 32.0 and full.sweep_load == 1.2
    # the paper's sweep is FCFS; both schedulers run the load sweep
    assert full.schedulers == ("fcfs", "easy") and full.sweep_schedulers == ("fcfs",)
    assert memory_plan(_config("config.yaml")).sweep_schedulers == ("fcfs", "easy")
    assert plan.missing_memory == "fill" and full.missing_memory == "drop"
    paper = memory_plan(_config("config.yaml", "memory-paper.yaml"))
    assert paper.schedulers == ("fcfs",) and paper.loads[0] == 0.2 and len(paper.loads) == 11
    assert {v.gradient for v in paper.variants if v.estimator == "perceptron"} == {
        "literal", "standardised"}  # fmt: skip
    assert "paper_utilisation" in paper.figure_names() and "memory_sweep" in paper.figure_names()


def test_variants() -> None:
    assert parse_variant("none") == Variant("none", "none")
    assert parse_variant("Perceptron-Explicit") == Variant(
        "perceptron-explicit", "perceptron", "explicit"
    )
    assert parse_variant("perceptron-explicit").gradient == "literal"
    assert parse_variant("perceptron-implicit-raise-standardised") == Variant(
        "perceptron-implicit-raise-standardised", "perceptron", "implicit-raise", "standardised"
    )
    assert parse_variant("perceptron-explicit-normalised") == Variant(
        "perceptron-explicit-normalised", "perceptron", "explicit", "normalised"
    )
    assert parse_variant("perceptron-implicit-raise") == Variant(
        "perceptron-implicit-raise", "perceptron", "implicit-raise"
    )
    assert parse_variant("perceptron-implicit-raise-normalised").gradient == "normalised"
    assert parse_variant("perceptron-implicit-normalised").feedback == "implicit"
    assert parse_variant("history") == Variant("history", "history")
    assert not parse_variant("none").random and parse_variant("history").random
    plan = memory_plan(_config("config.yaml", seeds=[3, 7]))
    assert plan.variant_seeds(parse_variant("none")) == (3,)
    assert plan.variant_seeds(parse_variant("perceptron-implicit")) == (3, 7)


def test_sweep_machines_merge_equal_classes() -> None:
    plan = memory_plan(_config("config.yaml"))
    assert plan.sweep_machine(4.0) == ((512, 512), (32.0, 4.0))
    assert plan.sweep_machine(32.0) == ((1024,), (32.0,))
    # a sweep size above the first class leaves the largest node of every machine at 32 MB
    bigger = memory_plan(_config("config.yaml", memory_sweep={"sizes_mb": [8, 64]}))
    assert bigger.largest_node_kb == 32 * 1024
    smaller = memory_plan(_config("config.yaml", machine={"class_nodes": [512, 512],
                                                          "class_memory_mb": [16, 48]},
                                  memory_sweep={"sizes_mb": [8]}))  # fmt: skip
    assert smaller.largest_node_kb == 16 * 1024


def test_labels_round_trip() -> None:
    plan = memory_plan(_config("config.yaml"))
    assert memory_label(0.5) == "0.5" and memory_label(24.0) == "24"
    assert plan.load("1.1") == 1.1 and plan.sweep_memory("16") == 16.0
    with pytest.raises(ConfigurationError, match=r"memory\.loads"):
        plan.load("0.7")
    with pytest.raises(ConfigurationError, match=r"memory\.memory_sweep\.sizes_mb"):
        plan.sweep_memory("5")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"traces": []}, "memory.traces: give at least 1 value"),
        ({"traces": ["NOPE"]}, "memory.traces: unknown trace 'NOPE'"),
        ({"slice": 1}, "memory.slice"),
        ({"loads": []}, "memory.loads"),
        ({"loads": [0.5, -1]}, "memory.loads"),
        ({"loads": [0.5, 0.50]}, "memory.loads: a value is listed twice"),
        ({"schedulers": ["sjf"]}, "'sjf' is not one of fcfs, easy"),
        ({"estimators": ["perceptron"]}, "memory.estimators: 'perceptron' needs a feedback"),
        ({"estimators": ["none", "perceptron-loud"]}, "unknown feedback 'loud'"),
        ({"estimators": ["none", "perceptron-explicit-steep"]}, "unknown gradient 'steep'"),
        ({"estimators": ["none", "oracle"]}, "memory.estimators: unknown estimator 'oracle'"),
        ({"estimators": ["perceptron-implicit"]}, "include 'none'"),
        ({"estimators": ["none", "none"]}, "listed twice"),
        ({"seeds": 0}, "memory.seeds"),
        ({"seeds": [1, 1]}, "memory.seeds"),
        ({"seeds": True}, "memory.seeds"),
        ({"machine": {"class_nodes": [512], "class_memory_mb": [32, 24]}}, "memory.machine"),
        ({"machine": {"class_nodes": [0, 512]}}, "memory.machine.class_nodes"),
        ({"machine": {"class_memory_mb": [32, 32]}}, "memory.machine.class_memory_mb"),
        (
            {"machine": {"class_nodes": [1024], "class_memory_mb": [32]}},
            "memory.memory_sweep.sizes_mb",
        ),
        ({"memory_sweep": {"sizes_mb": [0]}}, "memory.memory_sweep.sizes_mb"),
        ({"memory_sweep": {"sizes_mb": [8], "load": -1}}, "memory.memory_sweep.load"),
        (
            {"schedulers": ["fcfs"], "memory_sweep": {"sizes_mb": [8], "schedulers": ["easy"]}},
            "memory.memory_sweep.schedulers: 'easy' is not one of memory.schedulers",
        ),
        ({"saturation_load": 0.9}, "memory.saturation_load"),
        ({"under_request": "clip"}, "memory.under_request"),
        ({"memory_limit": "cgroup"}, "memory.memory_limit"),
        ({"max_failures": 0}, "memory.max_failures"),
        ({"confidence": 1.5}, "memory.confidence"),
    ],
)
def test_errors_name_the_key(change: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace(".", r"\.")):
        memory_plan(_config("config.yaml", **change))


def test_schema_lists_agree_with_the_engine() -> None:
    memory = config_schema()["properties"]["memory"]["properties"]
    assert memory["schedulers"]["items"]["enum"] == list(MEMORY_SCHEDULERS)
    assert memory["memory_limit"]["enum"] == list(MEMORY_LIMITS)
    assert memory["under_request"]["enum"] == list(UNDER_REQUEST_MODES)
    for label in memory["estimators"]["default"]:
        parse_variant(label)
