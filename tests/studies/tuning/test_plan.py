"""The queue-tuning study's plan and the shared configuration checks, on the real config files
(config/traces.yaml, config/config.yaml and config/full.yaml merged as the Snakefile does)."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.configs import overlay
from support.study_configs import (
    default_config,
    full_config_of,
    load,
    with_tuning,
)

import scheduler
from scheduler.core.errors import ConfigurationError
from scheduler.sim.multifactor import MULTIFACTOR
from scheduler.sim.slurm_conf import read_slurm_conf
from scheduler.studies.common.config import CONSERVATIVE, Threshold, TraceEntry
from scheduler.studies.common.study import validated_config
from scheduler.studies.tuning.plan import Batch, SimulationCase, tuning_plan

ROOT = Path(__file__).resolve().parents[3]
POLICIES7 = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP")
HOUR = 3600.0


@pytest.fixture
def config() -> dict[str, Any]:
    return default_config()


@pytest.fixture
def full_config(config) -> dict[str, Any]:
    return full_config_of(config)


# --------------------------------------------------------------------------------------------
# The default and full studies
# --------------------------------------------------------------------------------------------


def test_default_plan(config):
    plan = tuning_plan(config)
    assert plan.seed == 20261121
    assert plan.resampling == "uniform"
    assert plan.week_alignment == "first_submit"  # the tuning study's weeks are unchanged
    assert plan.primary_policies == POLICIES7
    assert plan.backfill_policies == POLICIES7
    pairs = {(c.primary, c.backfill) for c in plan.cases()}
    assert len(pairs) == 49
    assert len(plan.cases()) == 49 * 6
    assert len(set(plan.cases())) == len(plan.cases())
    assert [t.label for t in plan.thresholds] == ["5h", "10h", "20h", "40h", "80h", "none"]
    assert [t.seconds for t in plan.thresholds] == [
        5 * HOUR, 10 * HOUR, 20 * HOUR, 40 * HOUR, 80 * HOUR, math.inf,
    ]  # fmt: skip
    assert plan.thresholds[0] == Threshold("5h", 18000.0)
    assert plan.baseline == SimulationCase("FCFS", "FCFS", "none")
    assert plan.threshold_seconds("20h") == 72000.0
    assert plan.threshold_seconds("none") == math.inf
    assert plan.confidence == 0.95
    assert plan.figure_weeks == 150
    assert (plan.weekly_backfill, plan.thresholded_backfill) == ("FCFS", "SPF")
    assert plan.figure_threshold == "20h"
    assert plan.trace_names == ("KTH-SP2",)
    traces = load("traces.yaml")["traces"]
    assert plan.trace("KTH-SP2") == TraceEntry(
        "KTH-SP2", traces["KTH-SP2"]["url"], traces["KTH-SP2"]["sha256"], None
    )
    assert plan.splits == ("train", "test")
    assert plan.weeks_per_split == plan.weeks_per_job == 100
    assert plan.batches() == (Batch(0, 0, 99),)
    assert plan.batch(0).weeks == range(100)


def test_full_plan(full_config):
    plan = tuning_plan(full_config)
    catalogue = load("traces.yaml")["traces"]
    assert len(plan.traces) == 7
    assert plan.trace_names == (
        "KTH-SP2", "CTC-SP2", "SDSC-SP2", "SDSC-BLUE", "ANL-Intrepid", "CEA-Curie", "UniLu-Gaia",
    )  # fmt: skip
    for entry in plan.traces:
        assert entry.name in catalogue
        assert entry.url == catalogue[entry.name]["url"]
        assert entry.sha256 == catalogue[entry.name]["sha256"]
    assert plan.trace("CEA-Curie").machine_procs == 80640
    assert plan.trace("CTC-SP2").machine_procs is None
    assert plan.weeks_per_split == 250
    assert plan.batches() == (Batch(0, 0, 249),)
    # the rest comes from config/config.yaml
    assert plan.primary_policies == POLICIES7
    assert len(plan.thresholds) == 6


def test_trace_lookup_errors(config):
    plan = tuning_plan(config)
    with pytest.raises(ConfigurationError, match="CTC-SP2"):
        plan.trace("CTC-SP2")  # in the catalogue but not studied
    with pytest.raises(ConfigurationError, match="7h"):
        plan.threshold_seconds("7h")


@pytest.mark.parametrize(
    ("per_split", "per_job"), [(100, 30), (100, 100), (7, 7), (5, 10), (10, 3), (1, 1), (250, 1)]
)
def test_batches_cover_weeks_once(config, per_split, per_job):
    plan = tuning_plan(with_tuning(config, weeks_per_split=per_split, weeks_per_job=per_job))
    check_batches(plan, per_split, per_job)


@settings(max_examples=30, deadline=None)
@given(per_split=st.integers(1, 300), per_job=st.integers(1, 300))
def test_batches_property(per_split, per_job):
    base = overlay(load("traces.yaml"), load("config.yaml"))
    plan = tuning_plan(with_tuning(base, weeks_per_split=per_split, weeks_per_job=per_job))
    check_batches(plan, per_split, per_job)


def check_batches(plan, per_split: int, per_job: int) -> None:
    batches = plan.batches()
    assert [b.index for b in batches] == list(range(len(batches)))
    covered = [week for b in batches for week in b.weeks]
    assert covered == list(range(per_split))  # each week once, in order
    sizes = [len(b.weeks) for b in batches]
    assert all(size == per_job for size in sizes[:-1])
    assert 1 <= sizes[-1] <= per_job
    assert len(batches) == -(-per_split // per_job)
    assert plan.batch(len(batches) - 1) == batches[-1]
    with pytest.raises(ConfigurationError, match="batch"):
        plan.batch(len(batches))
    with pytest.raises(ConfigurationError, match="batch"):
        plan.batch(-1)


# --------------------------------------------------------------------------------------------
# Semantic errors name the key
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tuning", "key", "value"),
    [
        ({"primary_policies": ["FCFS", "XYZ"]}, "tuning.primary_policies", "XYZ"),
        ({"backfill_policies": ["FCFS", "QQQ"]}, "tuning.backfill_policies", "QQQ"),
        ({"primary_policies": ["FCFS", "spf", "SPF"]}, "tuning.primary_policies", "twice"),
        ({"thresholds": ["none", "20"]}, "tuning.thresholds", "'20'"),
        ({"thresholds": ["none", "20 h"]}, "tuning.thresholds", "'20 h'"),
        ({"thresholds": ["none", "20h", "1200m"]}, "tuning.thresholds", "same duration"),
        ({"thresholds": ["none", "1d", "24h"]}, "tuning.thresholds", "same duration"),
        ({"traces": ["KTH-SP2", "NOPE"]}, "tuning.traces", "NOPE"),
        ({"baseline": {"threshold": "7h"}}, "tuning.baseline.threshold", "7h"),
        ({"baseline": {"primary": "LAF"}}, "tuning.baseline.primary", "LAF"),
        ({"baseline": {"backfill": "BOGUS"}}, "tuning.baseline.backfill", "BOGUS"),
        ({"figures": {"threshold": "7h"}}, "tuning.figures.threshold", "7h"),
        ({"figures": {"weekly_backfill": "F1"}}, "tuning.figures.weekly_backfill", "F1"),
        ({"resampling": "bootstrap"}, "tuning.resampling", "bootstrap"),
        ({"figures": {"weeks_from": "test"}}, "tuning.figures.weeks_from", "test"),
        ({"figures": {"whole_weeks": 0}}, "tuning.figures.whole_weeks", "0"),
        ({"whole_log": {"traces": ["NOPE"], "pairs": ["SPF-SPF"]}}, "tuning.whole_log.traces",
         "NOPE"),
        ({"whole_log": {"traces": ["KTH-SP2"], "pairs": ["EXP-EXP"]}}, "tuning.whole_log.pairs",
         "the registry's LEXP"),
        ({"whole_log": {"pairs": ["SPF-XYZ"]}}, "tuning.whole_log.pairs", "XYZ"),
        ({"whole_log": {"pairs": ["SPF"]}}, "tuning.whole_log.pairs", "not a pair"),
        ({"whole_log": {"pairs": [["SPF", "SPF", "FCFS"]]}}, "tuning.whole_log.pairs",
         "give at most 2 values"),
        ({"whole_log": {"pairs": ["SPF-SPF", ["spf", "spf"]]}}, "tuning.whole_log.pairs",
         "twice"),
        ({"whole_log": {"traces": ["KTH-SP2"], "pairs": []}}, "tuning.whole_log.pairs",
         "at least one pair"),
        ({"whole_log": {"thresholds": ["20"]}}, "tuning.whole_log.thresholds", "'20'"),
        ({"week_alignment": "monday"}, "tuning.week_alignment", "monday"),
    ],
)  # fmt: skip
def test_errors_name_the_key(config, tuning, key, value):
    with pytest.raises(ConfigurationError) as info:
        tuning_plan(with_tuning(config, **tuning))
    message = str(info.value)
    assert key in message
    assert value in message


# --------------------------------------------------------------------------------------------
# The whole-log weeks of the descriptive figures, and the whole-log table
# --------------------------------------------------------------------------------------------


def test_whole_weeks_simulate_only_the_figures_cases(config):
    plan = tuning_plan(config)
    assert (plan.figure_split, plan.whole_weeks) == ("whole", 100)
    assert plan.splits == ("train", "test")  # the protocol's splits are unchanged
    assert plan.week_splits == ("train", "test", "whole")
    assert plan.cases_of("train") == plan.cases_of("test") == plan.cases()
    cases = plan.cases_of("whole")
    assert len(cases) == len(set(cases)) == 49 + 7  # pairs at Θ = none, SPF backfill at 20 h
    assert {(c.primary, c.backfill) for c in cases if c.threshold == "none"} == {
        (p, b) for p in POLICIES7 for b in POLICIES7
    }
    assert {c for c in cases if c.threshold != "none"} == {
        SimulationCase(p, "SPF", "20h") for p in POLICIES7
    }
    assert plan.baseline in cases
    assert plan.batches("whole") == (Batch(0, 0, 99),)
    # a baseline at a threshold: every pair at it, and the thresholded figure's none and Θ
    other = tuning_plan(with_tuning(config, baseline={"threshold": "40h"}))
    labels = {c.threshold for c in other.cases_of("whole")}
    assert labels == {"40h", "none", "20h"} and len(other.cases_of("whole")) == 49 + 14


def test_whole_weeks_batches_and_the_train_source(config):
    plan = tuning_plan(with_tuning(config, weeks_per_job=30, figures={"whole_weeks": 250}))
    assert plan.weeks_of("whole") == 250 and plan.weeks_of("train") == 100
    assert [b.weeks for b in plan.batches("whole")][-1] == range(240, 250)
    assert len(plan.batches("whole")) == 9 and len(plan.batches()) == 4
    assert plan.batch(8, "whole") == Batch(8, 240, 249)
    with pytest.raises(ConfigurationError, match="whole weeks have 9 batches"):
        plan.batch(9, "whole")
    from_train = tuning_plan(with_tuning(config, figures={"weeks_from": "train"}))
    assert from_train.week_splits == ("train", "test")
    with pytest.raises(ConfigurationError, match="no week source 'whole'"):
        from_train.batches("whole")


def test_whole_log_table_plan(config, full_config):
    plan = tuning_plan(config)
    assert plan.whole_log_trace_names == ("KTH-SP2",)
    assert plan.whole_log_pairs == (
        ("LEXP", "LEXP"), ("SQF", "SQF"), ("SPF", "SPF"), ("FCFS", "FCFS")
    )  # fmt: skip
    assert [t.label for t in plan.whole_log_thresholds] == ["none"]
    # the baseline is listed already: four runs per log
    assert plan.whole_log_cases() == tuple(
        SimulationCase(p, b, "none") for p, b in plan.whole_log_pairs
    )
    full = tuning_plan(full_config)
    assert full.whole_log_trace_names == ("CTC-SP2", "SDSC-SP2")  # the published tables
    assert full.whole_log_pairs == plan.whole_log_pairs
    assert full.whole_weeks == 250
    # pairs as lists or strings, any case; the baseline added when missing; Θ in seconds
    custom = tuning_plan(with_tuning(config, whole_log={
        "traces": ["CTC-SP2"], "pairs": [["spf", "lexp"], "LQF-sqf"], "thresholds": ["10h"],
    }))  # fmt: skip
    assert custom.whole_log_pairs == (("SPF", "LEXP"), ("LQF", "SQF"))
    assert custom.whole_log_cases() == (
        SimulationCase("SPF", "LEXP", "10h"), SimulationCase("LQF", "SQF", "10h"),
        SimulationCase("FCFS", "FCFS", "none"),
    )  # fmt: skip
    assert custom.threshold_seconds("10h") == 36000.0
    # no traces: no table, and no pair needed
    assert tuning_plan(with_tuning(config, whole_log={"traces": []})).whole_log_traces == ()


def test_negative_seed(config):
    with pytest.raises(ConfigurationError, match="seed"):
        tuning_plan({**config, "seed": -1})


def test_baseline_threshold_must_be_a_listed_label(config):
    # "20h" is in the default thresholds; dropping it from the list makes the figures fail
    bad = with_tuning(config, thresholds=["none", "5h"])
    with pytest.raises(ConfigurationError, match=r"tuning\.figures\.threshold"):
        tuning_plan(bad)
    ok = with_tuning(config, thresholds=["none", "5h"], figures={"threshold": "5h"})
    assert [t.label for t in tuning_plan(ok).thresholds] == ["5h", "none"]


def test_policy_names_are_case_insensitive(config):
    plan = tuning_plan(
        with_tuning(
            config,
            primary_policies=["spf", "Fcfs", "lexp"],
            backfill_policies=["fcfs", "Spf"],
            baseline={"primary": "fcfs", "backfill": "FCFS"},
            figures={"weekly_backfill": "fcfs", "thresholded_backfill": "spf"},
        )
    )
    assert plan.primary_policies == ("SPF", "FCFS", "LEXP")
    assert plan.backfill_policies == ("FCFS", "SPF")
    assert plan.baseline == SimulationCase("FCFS", "FCFS", "none")
    assert plan.thresholded_backfill == "SPF"


def test_conservative_backfilling_is_a_backfilling_policy(config):
    """CONSERVATIVE (any case) pairs with every primary order like a backfilling policy; it is
    no primary order, and a typo lists it among what is known."""
    plan = tuning_plan(with_tuning(
        config, backfill_policies=["FCFS", "conservative"],
        baseline={"primary": "FCFS", "backfill": "Conservative"},
        figures={"weekly_backfill": "CONSERVATIVE", "thresholded_backfill": "fcfs"},
        whole_log={"pairs": ["spf-conservative"]},
    ))  # fmt: skip
    assert plan.backfill_policies == ("FCFS", CONSERVATIVE)
    assert plan.baseline == SimulationCase("FCFS", CONSERVATIVE, "none")
    assert plan.weekly_backfill == CONSERVATIVE
    assert {(c.primary, c.backfill) for c in plan.cases()} == {
        (p, b) for p in POLICIES7 for b in ("FCFS", CONSERVATIVE)
    }
    assert ("SPF", CONSERVATIVE) in plan.whole_log_pairs
    assert plan.simulation("KTH-SP2", "train", "SPF", CONSERVATIVE, 0) == (
        "KTH-SP2/sims/train/SPF/CONSERVATIVE/batch0"
    )
    with pytest.raises(ConfigurationError, match=r"tuning\.primary_policies.*CONSERVATIVE"):
        tuning_plan(with_tuning(config, primary_policies=["FCFS", CONSERVATIVE]))
    with pytest.raises(ConfigurationError, match=r"or CONSERVATIVE \(conservative backfilling\)"):
        tuning_plan(with_tuning(config, backfill_policies=["FCFS", "CONSERVATIV"]))
    assert CONSERVATIVE not in scheduler.policy_names()


SLURM_CONF = str(ROOT / "config" / "slurm" / "multifactor.conf")


def test_multifactor_primary_runs_slurm_as_the_slurm_conf_says(config):
    """With tuning.slurm_conf, multifactor is a primary order paired with CONSERVATIVE only;
    the CONSERVATIVE runs (and only they) carry the file's limits and priority."""
    plan = tuning_plan(with_tuning(
        config, slurm_conf=SLURM_CONF, primary_policies=["FCFS", "Multifactor"],
        backfill_policies=["FCFS", "CONSERVATIVE"],
        figures={"weekly_backfill": "FCFS", "thresholded_backfill": "FCFS"},
        whole_log={"pairs": ["multifactor-conservative", "FCFS-FCFS"]},
    ))  # fmt: skip
    assert plan.primary_policies == ("FCFS", MULTIFACTOR)
    pairs = {(c.primary, c.backfill) for c in plan.cases()}
    assert pairs == {("FCFS", "FCFS"), ("FCFS", CONSERVATIVE), (MULTIFACTOR, CONSERVATIVE)}
    assert {(c.primary, c.backfill) for c in plan.figure_cases()} <= pairs
    conf = read_slurm_conf(SLURM_CONF)
    assert plan.slurm == {"limits": conf.backfill_kwargs(),
                          "priority": conf.priority_kwargs()["priority"].to_dict()}  # fmt: skip
    assert plan.slurm_of(CONSERVATIVE) == plan.slurm and plan.slurm_of("FCFS") is None
    wildcards = SimpleNamespace(trace="KTH-SP2", split="train", primary=MULTIFACTOR,
                                backfill=CONSERVATIVE, threshold="none")  # fmt: skip
    assert plan.simulate_settings(wildcards)["slurm"] == plan.slurm
    assert plan.whole_log_settings(wildcards)["slurm"] == plan.slurm
    assert plan.bootstrap_settings(SimpleNamespace(trace="KTH-SP2", batch="0"))["slurm"] == (
        plan.slurm
    )
    # without the key: CONSERVATIVE is unlimited, and the settings say so
    assert tuning_plan(config).slurm is None


def test_tuning_slurm_overlay_plans(config, monkeypatch):
    """config/tuning-slurm.yaml (its slurm_conf relative to the working directory, the
    repository's root as for Snakemake): multifactor with CONSERVATIVE beside EASY."""
    monkeypatch.chdir(ROOT)
    plan = tuning_plan(overlay(config, load("tuning-slurm.yaml")))
    assert MULTIFACTOR in plan.primary_policies and CONSERVATIVE in plan.backfill_policies
    assert (MULTIFACTOR, CONSERVATIVE) in plan.whole_log_pairs
    assert plan.slurm is not None and plan.slurm["priority"]["weight_fairshare"] == 10000
    assert plan.slurm["limits"]["bf_window_s"] == 1440 * 60.0


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"primary_policies": ["FCFS", "multifactor"]},
         r"tuning\.primary_policies: multifactor needs .*set tuning\.slurm_conf"),
        ({"primary_policies": ["FCFS", "multifactor"], "slurm_conf": "BASIC"},
         r"tuning\.primary_policies: .*PriorityType=priority/basic"),
        ({"primary_policies": ["FCFS", "multifactor"], "slurm_conf": SLURM_CONF},
         r"tuning\.backfill_policies: 'CONSERVATIVE' must be one of"),
        ({"slurm_conf": SLURM_CONF, "primary_policies": ["FCFS", "multifactor"],
          "backfill_policies": ["FCFS", "SPF", "CONSERVATIVE"],
          "whole_log": {"pairs": ["multifactor-FCFS"]}},
         r"tuning\.whole_log\.pairs: multifactor runs with CONSERVATIVE backfilling only"),
        ({"slurm_conf": SLURM_CONF, "primary_policies": ["FCFS", "multifactor"],
          "backfill_policies": ["FCFS", "SPF", "CONSERVATIVE"],
          "baseline": {"primary": "multifactor", "backfill": "FCFS"}},
         r"tuning\.baseline: multifactor runs with CONSERVATIVE backfilling only"),
        ({"slurm_conf": "BAD"}, r"tuning\.slurm_conf: .*bad\.conf:2: .*SchedulerTimeSlice"),
        ({"slurm_conf": "/nonexistent/slurm.conf"}, r"tuning\.slurm_conf: .*cannot read"),
        ({"backfill_policies": ["FCFS", "multifactor"]}, r"unknown policy 'multifactor'"),
    ],
)  # fmt: skip
def test_multifactor_and_slurm_conf_errors_name_the_key(config, tmp_path, overrides, match):
    basic = tmp_path / "basic.conf"
    basic.write_text("PriorityType=priority/basic\n")
    bad = tmp_path / "bad.conf"
    bad.write_text("SchedulerType=sched/backfill\nSchedulerTimeSlice=30\n")
    paths = {"BASIC": str(basic), "BAD": str(bad)}
    if "slurm_conf" in overrides:
        overrides = {**overrides, "slurm_conf": paths.get(overrides["slurm_conf"],
                                                          overrides["slurm_conf"])}  # fmt: skip
    with pytest.raises(ConfigurationError, match=match):
        tuning_plan(with_tuning(config, **overrides))


def test_thresholds_sorted_by_seconds(config):
    labels = ["none", "2d", "90m", "20h", "1w", "30s"]
    plan = tuning_plan(with_tuning(config, thresholds=labels))
    assert [t.label for t in plan.thresholds] == ["30s", "90m", "20h", "2d", "1w", "none"]
    assert [t.seconds for t in plan.thresholds] == [
        30.0, 5400.0, 72000.0, 172800.0, 604800.0, math.inf,
    ]  # fmt: skip
    with pytest.raises(ConfigurationError, match="same duration"):
        tuning_plan(with_tuning(config, thresholds=["none", "90m", "1.5h", "20h"]))


# --------------------------------------------------------------------------------------------
# The JSON schema (what Snakemake checks first)
# --------------------------------------------------------------------------------------------


def test_schema_accepts_default_and_full(config, full_config):
    for cfg in (copy.deepcopy(config), copy.deepcopy(full_config)):
        validated_config(cfg)
        # what the Snakefile does next: the filled-in config still plans
        assert len(tuning_plan(cfg).cases()) == 294


def test_schema_fills_defaults():
    minimal = validated_config({"traces": load("traces.yaml")["traces"]})
    assert minimal["seed"] == 20261121
    assert minimal["tuning"]["thresholds"] == ["none", "5h", "10h", "20h", "40h", "80h"]


def test_schema_rejects_unknown_top_level_key(config):
    bad = {**copy.deepcopy(config), "tunning": {}}
    with pytest.raises(ConfigurationError, match="tunning"):
        validated_config(bad)


def test_threshold_without_unit_refused_before_planning(config):
    """As workflow/rules/common.smk does: the schema first, then tuning_plan. Either may
    refuse "20" (the schema's item pattern was dropped on 2026-11-21, leaving it to
    tuning_plan, whose message names the key)."""
    bad = with_tuning(config, thresholds=["none", "20"])
    with pytest.raises(ConfigurationError, match="20"):
        validated_config(bad)
        tuning_plan(bad)


@pytest.mark.parametrize(
    "change",
    [
        {"tuning": {"unknown_key": 1}},
        {"tuning": {"weeks_per_split": 0}},
        {"tuning": {"resampling": "bootstrap"}},
        {"tuning": {"confidence": 1.0}},
        {"seed": -3},
        {"traces": {"X": {"url": "not-a-url"}}},
    ],
    ids=["tuning-key", "weeks0", "resampling", "confidence1", "seed", "url"],
)
def test_schema_rejects_bad_values(config, change):
    with pytest.raises(ConfigurationError):
        validated_config(overlay(config, change))


# -- the online study section ----------------------------------------------------------------------


def test_tuning_threshold_backfill(config) -> None:
    changed = copy.deepcopy(config)
    assert tuning_plan(changed).threshold_backfill is False  # the study's plain backfill order
    changed["tuning"]["threshold_backfill"] = True
    assert tuning_plan(changed).threshold_backfill is True
    changed["tuning"]["threshold_backfill"] = 1
    with pytest.raises(ConfigurationError, match=r"config tuning\.threshold_backfill"):
        tuning_plan(changed)


@pytest.mark.parametrize(
    ("key", "value", "least"),
    [("replicates", 1, "one replicate"), ("replicates", -1, ">= 0"), ("weeks", 0, ">= 1"),
     ("replicates_per_job", 0, ">= 1")],
)  # fmt: skip
def test_tuning_bootstrap_keys_are_checked(config, key, value, least) -> None:
    changed = copy.deepcopy(config)
    changed["tuning"]["bootstrap"] = {key: value}
    with pytest.raises(ConfigurationError, match=rf"config tuning\.bootstrap\.{key}.*{least}"):
        tuning_plan(changed)


def test_tuning_bootstrap_batches(config) -> None:
    changed = copy.deepcopy(config)
    changed["tuning"]["bootstrap"] = {"replicates": 45, "replicates_per_job": 20}
    plan = tuning_plan(changed)
    assert [(b.first, b.last) for b in plan.bootstrap_batches()] == [(0, 19), (20, 39), (40, 44)]
    assert plan.bootstrap_weeks == plan.weeks_per_split
    changed["tuning"]["bootstrap"] = {"replicates": 0}
    assert tuning_plan(changed).bootstrap_batches() == ()
