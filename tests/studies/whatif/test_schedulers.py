"""The what-if study's schedulers (scheduler.studies.whatif.schedulers) and the slurm.conf
changes they rest on (scheduler.sim.slurm_conf.read_slurm_conf(changes=...), slurm_value)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.sim.slurm_conf import read_slurm_conf, slurm_value
from scheduler.studies.whatif.schedulers import (
    BASELINE,
    policy_scheduler,
    study_alternatives,
)

CONF = str(Path(__file__).resolve().parents[3] / "config" / "slurm" / "example-site.conf")
SHARES = {"physics": 50, "teaching": 10}


def section(**keys: object) -> dict:
    base = {
        "baseline": {"slurm_conf": CONF, "policy": None},
        "shares": SHARES,
        "try": {},
        "grid": {},
        "alternatives": [],
    }
    base.update(keys)
    return base


def test_slurm_values_take_units_in_slurms_own_unit() -> None:
    assert slurm_value("bf_window", "1d") == "1440"
    assert slurm_value("bf_interval", "2m") == "120"
    assert slurm_value("PriorityDecayHalfLife", "36h") == "1-12:00:00"
    assert slurm_value("PriorityWeightAge", 10) == "10"
    assert slurm_value("PriorityFavorSmall", True) == "YES"
    with pytest.raises(ConfigurationError, match="PriorityWeightAge is not a duration"):
        slurm_value("PriorityWeightAge", "1d")
    with pytest.raises(ConfigurationError, match="whole minutes"):
        slurm_value("bf_window", "90s")


def test_changes_replace_one_key_or_one_scheduler_parameter() -> None:
    plain = read_slurm_conf(CONF)
    changed = read_slurm_conf(CONF, {"bf_window": "4320", "PriorityWeightAge": "0"})
    assert changed.bf_window_s == 3 * 86400 and changed.multifactor["weight_age"] == 0
    # the other SchedulerParameters options and keys are the file's
    assert changed.bf_max_job_test == plain.bf_max_job_test == 500
    assert changed.multifactor["weight_fairshare"] == plain.multifactor["weight_fairshare"]
    # a key the file does not give is added
    added = read_slurm_conf(CONF, {"PriorityFavorSmall": "YES"})
    assert added.multifactor["favor_small"] and not plain.multifactor["favor_small"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"PriorityWeightAge": "x"}, r"^--try: PriorityWeightAge='x': not an integer"),
        ({"Foo": "1"}, r"^--try: Foo: unknown key"),
        ({"bf_max_job_test": "0"}, r"bf_max_job_test='0': must be an integer in 1\.\.1000000"),
        ({"PreemptType": "preempt/qos"}, "not modelled by schedlab: preemption"),
        ({"NodeName": "n1"}, "cannot be changed"),
    ],
)
def test_bad_changes_name_the_source_and_key(changes: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        read_slurm_conf(CONF, changes, source="--try")


def test_policy_labels() -> None:
    easy = policy_scheduler("easy-spf-spf@20h", "k")
    assert (easy.backfilling, easy.primary, easy.backfill, easy.threshold_s) == (
        "easy",
        "SPF",
        "SPF",
        72000.0,
    )
    conservative = policy_scheduler("CONSERVATIVE-LQF", "k")
    assert (conservative.backfilling, conservative.backfill, conservative.threshold_s) == (
        "conservative",
        None,
        math.inf,
    )
    for label, message in (
        ("EASY-SPF", "a primary and a backfilling"),
        ("EASY-XYZ-FCFS", "unknown policy 'XYZ'"),
        ("SPF", "is not EASY-"),
        ("EASY-SPF-SPF@20", "needs a unit"),
    ):
        with pytest.raises(ConfigurationError, match=f"config k.*{message}"):
            policy_scheduler(label, "k")


def test_try_grid_and_named_alternatives_expand_in_order() -> None:
    alternatives = study_alternatives(
        section(
            **{
                "try": {"PriorityWeightAge": [0, 5000], "policy": ["EASY-SPF-FCFS"]},
                "grid": {"bf_window": ["1h", "2d"], "PriorityWeightJobSize": [0]},
                "alternatives": [
                    {
                        "name": "small-first",
                        "policy": None,
                        "slurm_conf": None,
                        "slurm": {"PriorityFavorSmall": "YES"},
                    }
                ],
            }
        )
    )
    names = [a.name for a in alternatives]
    assert names == [
        BASELINE,
        "PriorityWeightAge=0",
        "PriorityWeightAge=5000",
        "policy=EASY-SPF-FCFS",
        "bf_window=1h,PriorityWeightJobSize=0",
        "bf_window=2d,PriorityWeightJobSize=0",
        "small-first",
    ]
    base = alternatives[0].scheduler
    assert base.primary == "multifactor" and base.slurm["priority"]["account_shares"] == SHARES
    assert alternatives[1].scheduler.slurm["priority"]["weight_age"] == 0
    assert alternatives[4].scheduler.slurm["limits"]["bf_window_s"] == 3600
    assert alternatives[3].scheduler.backfilling == "easy"
    assert alternatives[6].scheduler.slurm["priority"]["favor_small"] is True


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"baseline": {"slurm_conf": None, "policy": None}}, "exactly one of slurm_conf"),
        (
            {
                "baseline": {"slurm_conf": None, "policy": "EASY-FCFS-FCFS"},
                "try": {"bf_window": ["1h"]},
            },
            r"whatif.try.bf_window: bf_window: Slurm keys change",
        ),
        ({"try": {"bf_window": ["1d"]}}, "simulates the same scheduler as 'the baseline'"),
        ({}, "nothing to compare"),
        ({"grid": {"policy": ["EASY-SPF-FCFS"], "bf_window": ["1h"]}}, "a policy replaces"),
        (
            {
                "alternatives": [
                    {
                        "name": "a",
                        "policy": "EASY-SPF-FCFS",
                        "slurm_conf": None,
                        "slurm": {"bf_window": "1h"},
                    }
                ]
            },
            "not both",
        ),
        (
            {
                "try": {"PriorityWeightAge": ["0"]},
                "alternatives": [
                    {
                        "name": "PriorityWeightAge=0",
                        "policy": "EASY-SPF-FCFS",
                        "slurm_conf": None,
                        "slurm": {},
                    }
                ],
            },
            "two alternatives are named",
        ),
        (
            {"try": {"PriorityWeightAge": ["ten"]}},
            "whatif.try.PriorityWeightAge: PriorityWeightAge='ten': not an integer",
        ),
    ],
)
def test_bad_sections_are_refused_naming_the_key(keys: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        study_alternatives(section(**keys))
