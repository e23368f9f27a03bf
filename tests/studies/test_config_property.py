"""Every config the checks accept plans studies the steps accept, with file names that
round-trip to their values, and every config they refuse is refused with a message naming the
key (property tests over configs drawn from every study's schema section; the workflow tests
run Snakemake's dry run on a few of them). Every list and count of the schema is bounded."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from support.configs import BASE, SCHEMA, check, one_key, overlay, sections

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.study import plan_studies, validated_config


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(change=sections())
def test_configs_are_refused_by_name_or_plan_what_the_steps_accept(change: dict) -> None:
    check(change)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(change=one_key())
def test_one_key_at_and_beyond_its_bounds(change: dict) -> None:
    """One key of one study at a time: values at its bounds, beyond them, and of extreme
    magnitudes are refused naming the key, or plan what the steps accept."""
    check(change)


def _unbounded(node: dict, path: str) -> list[str]:
    kinds = node.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    out = []
    if "array" in kinds and "maxItems" not in node:
        out.append(f"{path}: a list without maxItems")
    numeric = "integer" in kinds or "number" in kinds
    if numeric and not {"maximum", "exclusiveMaximum", "enum"} & set(node):
        out.append(f"{path}: a number without maximum")
    for key, sub in node.get("properties", {}).items():
        out += _unbounded(sub, f"{path}.{key}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            out += _unbounded(node[key], f"{path}[]")
    for option in node.get("oneOf", []):
        out += _unbounded(option, path)
    return out


def test_every_list_and_count_of_the_schema_is_bounded() -> None:
    """A small input never asks for unbounded work: every list has maxItems and every number a
    maximum (config/README.md shows them)."""
    assert _unbounded(SCHEMA, "config") == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"online": {"periods": ["0d"]}}, "online.periods: '0d' must be longer than 0"),
        ({"online": {"periods": ["1.5d"]}}, "whole number"),
        ({"tuning": {"thresholds": ["none"], "figures": {"threshold": "none"}}},
         "tuning.figures.threshold: must be a threshold other than 'none'"),
        ({"tuning": {"thresholds": ["20h", "40h"], "baseline": {"threshold": "20h"}}},
         "tuning.thresholds: must list 'none'"),
        ({"tuning": {"thresholds": ["none", "1e3s"]}}, "plain decimal"),
        ({"online": {"threshold": "1e3s"}}, "online.threshold: '1e3s': write the number"),
        ({"online": {"epsilons": [0.1, 0.1]}}, "online.epsilons: a value is listed twice"),
        ({"online": {"epsilons": [0.00001]}}, "online.epsilons: 1e-05 has more than 4"),
        ({"online": {"confidence": float("nan")}}, "online.confidence"),
        ({"tuning": {"confidence": float("nan")}}, "tuning.confidence"),
        ({"online": {"noise": [0.5, float("inf")]}}, "online.noise"),
        ({"tuning": {"weeks_per_split": 10**8}}, "weeks_per_split"),
        ({"tuning": {"weeks_per_split": 10000, "weeks_per_job": 1,
                     "primary_policies": ["FCFS", "SPF", "LPF", "SQF"],
                     "backfill_policies": ["FCFS", "SPF", "LPF", "SQF"]}},
         "tuning.weeks_per_job"),
        ({"online": {"replicas": 10**6}}, "replicas"),
        ({"online": {"epsilons": [i / 100 for i in range(30)]}}, "epsilons"),
        # typos that asked for millions of runs, and values a step refused after work was spent
        ({"memory": {"seeds": 20261121}}, "config memory.seeds: must be <= 1000"),
        ({"memory": {"seeds": list(range(1001))}}, "config memory.seeds: give at most 1000"),
        ({"learned": {"convergence": {"repetitions": 10**8}}},
         "config learned.convergence.repetitions: must be <= 10000"),
        ({"learned": {"tuples": 10**6, "tuples_per_job": 1}},
         "config learned.tuples / learned.tuples_per_job: the plan asks for 1,000,000 trial"),
        ({"learned": {"tuples": 10**6, "trials": 10**8, "tuples_per_job": 10**5}},
         "config learned.tuples x learned.trials: the plan asks for 100,000,000,000,000"),
        ({"redirect": {"thetas": list(range(200_001))}},
         "config redirect.thetas: give at most 100 values, got 200001"),
        ({"memory": {"loads": [1e9]}}, "config memory.loads[0]: must be <= 100"),
        ({"memory": {"estimators": ["none", "perceptron-implicit", "perceptron-explicit",
                                    "perceptron-implicit-raise", "history"], "seeds": 1000,
                     "loads": [i / 10 for i in range(1, 101)],
                     "schedulers": ["fcfs", "easy"],
                     "memory_sweep": {"sizes_mb": list(range(1, 101))}}},
         "config memory.seeds x memory.estimators"),
        ({"redirect": {"weeks": 1000, "alphas": [i / 200 for i in range(1, 100)],
                       "thetas": list(range(100))}},
         "config redirect.weeks x redirect.alphas x redirect.balance"),
        ({"tuning": {"bootstrap": {"replicates": 10**6, "replicates_per_job": 1}}},
         "config tuning.bootstrap.replicates / tuning.bootstrap.replicates_per_job"),
        ({"learned": {"model_procs": 1}}, "config learned.model_procs: must be >= 2"),
        ({"learned": {"evaluation": {"workloads": ["model-1"]}}},
         "config learned.evaluation.workloads: 'model-1': the model's machine has 2 to"),
        ({"learned": {"evaluation": {"days": 1e-9}}}, "config learned.evaluation.days: must be"),
        ({"traces": {"x" * 240: {"url": "file:///x.swf.gz"}}},
         "config traces: 'xxxxxxxxxxxxxxxxxxxxxxxx'... has 240 characters, more than 100"),
        ({"traces": {"a/b": {"url": "file:///x.swf.gz"}}}, "config traces: 'a/b' does not"),
    ],
)  # fmt: skip
def test_late_failures_are_refused_up_front(change: dict, message: str) -> None:
    config = overlay(BASE, change)
    with pytest.raises(ConfigurationError) as info:
        plan_studies(validated_config(config))
    assert message in str(info.value)
