"""The what-if study's plan (scheduler.studies.whatif.plan): sources, alternatives and their
files, refused settings, as the workflow makes it from config files."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from snakemake.utils import update_config

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.study import plan_studies, validated_config

ROOT = Path(__file__).resolve().parents[3]


def plan(**changes: object) -> object:
    config: dict = {}
    for name in ("config/traces.yaml", "config/config.yaml"):
        update_config(config, yaml.safe_load((ROOT / name).read_text()))
    update_config(config, changes)
    return plan_studies(validated_config(config))


def test_default_plan_is_the_example_site() -> None:
    whatif = plan(studies=["whatif"])["whatif"]
    assert whatif.site == "example-site" and whatif.source["kind"] == "example"
    assert whatif.names()[0] == "baseline" and len(whatif.names()) == 5
    assert whatif.batches() == [0, 1]  # 16 replicates, 8 per job
    # tables, ranking, online, 4 pages, the representative week
    assert len(whatif.targets()) == 4 + 2 + 4 + 4 * 6 + 2


def test_a_learned_function_is_an_alternative_that_waits_for_its_fit() -> None:
    plans = plan(studies=["learned", "whatif"], whatif={"try": {"policy": ["EASY-LF1-FCFS"]}})
    whatif = plans["whatif"]
    name = "policy=EASY-LF1-FCFS"
    assert whatif.alternative(name).scheduler.primary == "LF1"
    fits = whatif.policy_files(SimpleNamespace(alternative=name))
    assert fits and fits[0].endswith(".parquet")
    assert whatif.policy_files(SimpleNamespace(alternative="baseline")) == []


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"trace": "KTH-SP2", "swf": "x.swf"}, "at most one of trace, swf and sacct"),
        ({"trace": "Nowhere"}, "whatif.trace: unknown trace 'Nowhere'"),
        ({"sacct": "/no/such/file"}, "whatif.sacct: no file"),
        ({"bootstrap": {"replicates": 1}}, "one replicate gives no interval"),
        ({"size_classes": [8, 1]}, "whatif.size_classes: must increase"),
        ({"figure_week": 8}, "whatif.figure_week: 8 is not one of the 8 resampled weeks"),
        ({"online": {"selectors": ["bandit(eps=2)"]}}, r"whatif.online.selectors\[0\]"),
        ({"example": {"users": 2}}, "whatif.example.users: 2 users cannot fill 4 accounts"),
    ],
)
def test_bad_settings_are_refused_naming_the_key(section: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        plan(studies=["whatif"], whatif=section)
