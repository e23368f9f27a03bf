"""#11: every config the checks accept plans a study the steps accept, and every config they
refuse is refused with a message naming the key (property test over configs drawn from the
schema; the workflow test runs Snakemake's dry run on a few of them)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from support.configs import BASE, check, overlay, sections

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.study import validated_config
from scheduler.studies.online.plan import online_plan
from scheduler.studies.tuning.plan import tuning_plan


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(change=sections())
def test_configs_are_refused_by_name_or_plan_what_the_steps_accept(change: dict) -> None:
    check(change)


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
    ],
)  # fmt: skip
def test_late_failures_are_refused_up_front(change: dict, message: str) -> None:
    config = overlay(BASE, change)
    with pytest.raises(ConfigurationError) as info:
        validated_config(config)
        tuning_plan(config)
        online_plan(config)
    assert message in str(info.value)
