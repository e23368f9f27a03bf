"""The online study's plan on the real config files (config/traces.yaml, config/config.yaml and
config/full.yaml merged as the Snakefile does)."""

from __future__ import annotations

import copy
import re
from types import SimpleNamespace
from typing import Any

import pytest
from support.study_configs import (
    ROOT,
    default_config,
    full_config_of,
)

from scheduler.core.errors import ConfigurationError
from scheduler.sim.multifactor import MULTIFACTOR
from scheduler.studies.common.slurm import study_slurm
from scheduler.studies.common.study import config_schema
from scheduler.studies.online.epsilon import EPSILON_VOTES
from scheduler.studies.online.plan import THESIS_SELECTORS, online_plan, strategy_slug

POLICIES7 = ("FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "LEXP")
HOUR = 3600.0


@pytest.fixture
def config() -> dict[str, Any]:
    return default_config()


@pytest.fixture
def full_config(config) -> dict[str, Any]:
    return full_config_of(config)


def test_default_online_plan(config) -> None:
    plan = online_plan(config)
    assert plan.trace_names == ("KTH-SP2",) and plan.replicas == 2 and plan.weeks == 104
    assert plan.threshold_s == 40 * 3600 and plan.reference == "fixed:FCFS"
    assert [p.label for p in plan.periods] == ["1d", "1w"]
    fixed = [s for s in plan.strategies if s.spec.startswith("fixed:")]
    assert len(fixed) == 12 and all(s.periods == ("none",) for s in fixed)
    bandits = [s.spec for s in plan.strategies if s.spec.startswith("bandit")]
    assert bandits == [f"bandit(eps={e})" for e in ("0.1", "0.3", "0.5", "0.7", "0.9")]
    # 12 fixed + (random, full, noisy, ucb, swucb, 5 bandits) x 2 periods
    assert len(plan.runs()) == 12 + 10 * 2
    assert {s.slug for s in plan.strategies if s.needs_simulation} == {"full", "noisy"}
    assert strategy_slug("bandit(eps=0.3)") == "bandit-eps0.3"
    assert plan.threshold_backfill is True  # Algorithm 2: backfilling in the thresholded order
    assert (plan.week_alignment, plan.period_alignment) == ("calendar", "calendar")


def test_online_threshold_backfill(config) -> None:
    changed = copy.deepcopy(config)
    changed["online"]["threshold_backfill"] = False
    assert online_plan(changed).threshold_backfill is False
    del changed["online"]["threshold_backfill"]
    assert online_plan(changed).threshold_backfill is True
    changed["online"]["threshold_backfill"] = "yes"
    with pytest.raises(ConfigurationError, match=r"config online\.threshold_backfill"):
        online_plan(changed)


@pytest.mark.parametrize(
    ("weeks", "periods"),
    [("calendar", "calendar"), ("calendar", "first_submit"), ("first_submit", "first_submit")],
)
def test_online_alignments(config, weeks, periods) -> None:
    changed = copy.deepcopy(config)
    changed["online"].update(week_alignment=weeks, period_alignment=periods)
    plan = online_plan(changed)
    assert (plan.week_alignment, plan.period_alignment) == (weeks, periods)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"week_alignment": "monday"}, "config online.week_alignment: 'monday' is not one of"),
        ({"period_alignment": "noon"}, "config online.period_alignment: 'noon' is not one of"),
        # a first_submit long trace starts at an arbitrary instant, no midnight to align on
        ({"week_alignment": "first_submit"},
         "config online.period_alignment: calendar periods need calendar weeks "
         "(online.week_alignment: calendar), got online.week_alignment: first_submit"),
    ],
)  # fmt: skip
def test_online_alignment_errors_name_the_key(config, change, message) -> None:
    changed = copy.deepcopy(config)
    changed["online"].update(change)
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        online_plan(changed)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"selectors": ["oracle"]}, "unknown selector 'oracle'"),
        ({"periods": ["1"]}, "needs a unit"),
        ({"policies": ["FCFS", "XYZ"]}, "unknown policy 'XYZ'"),
        ({"traces": ["NOPE"]}, "config online.traces: unknown trace 'NOPE'"),
        ({"epsilons": [1.5]}, "online.epsilons"),
        ({"reference": "SPF", "policies": ["FCFS", "LQF"]}, "online.reference"),
    ],
)
def test_online_plan_errors_name_the_key(config, change, message) -> None:
    changed = copy.deepcopy(config)
    changed["online"].update(change)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
        online_plan(changed)


def test_multifactor_is_an_arm_with_a_slurm_conf(config, tmp_path) -> None:
    """online.slurm_conf with multifactor among the policies: its settings go to the costs
    and the runs; without multifactor the file is not handed on (changing it reruns nothing)."""
    conf = str(ROOT / "config" / "slurm" / "multifactor.conf")
    changed = copy.deepcopy(config)
    changed["online"].update(slurm_conf=conf, policies=["FCFS", "SPF", "Multifactor"])
    plan = online_plan(changed)
    assert plan.policies == ("FCFS", "SPF", MULTIFACTOR)
    assert plan.slurm == study_slurm(conf, "online.slurm_conf")
    wildcards = SimpleNamespace(
        trace="KTH-SP2", replica="0", batch="0", period="1d", strategy="full"
    )
    assert plan.costs_settings(wildcards)["slurm"] == plan.slurm
    assert plan.run_settings(wildcards)["slurm"] == plan.slurm
    assert MULTIFACTOR in plan.run_settings(wildcards)["policies"]
    changed["online"]["policies"] = ["FCFS", "SPF"]
    assert online_plan(changed).slurm is None
    basic = tmp_path / "basic.conf"
    basic.write_text("PriorityType=priority/basic\n")
    for path, why in ((None, r"set online\.slurm_conf"), (str(basic), "priority/basic")):
        changed["online"].update(slurm_conf=path, policies=["FCFS", MULTIFACTOR])
        with pytest.raises(ConfigurationError, match=rf"online\.policies: multifactor .*{why}"):
            online_plan(changed)
    changed["online"].update(slurm_conf=str(tmp_path / "missing.conf"))
    with pytest.raises(ConfigurationError, match=r"online\.slurm_conf: .*cannot read"):
        online_plan(changed)


def test_schema_lists_agree_with_the_package() -> None:
    """The few name lists the JSON schema has to spell out match what the package knows."""
    from scheduler.traces.calendar import WEEK_ALIGNMENTS
    from scheduler.traces.resample import RESAMPLING_METHODS

    schema = config_schema()["properties"]
    for section in ("tuning", "online"):
        enum = schema[section]["properties"]["resampling"]["enum"]
        assert sorted(enum) == sorted(RESAMPLING_METHODS), section
    for section, key in (("tuning", "week_alignment"), ("online", "week_alignment"),
                         ("online", "period_alignment")):  # fmt: skip
        assert sorted(schema[section]["properties"][key]["enum"]) == sorted(WEEK_ALIGNMENTS)
    studies = schema["studies"]["items"]["enum"]
    rules = {path.stem for path in (ROOT / "workflow" / "rules").glob("*.smk")}
    assert set(studies) <= rules  # every study has its rules file
    assert set(studies) == {
        path.name
        for path in (ROOT / "scheduler" / "studies").iterdir()
        if path.is_dir() and path.name not in ("common", "__pycache__")
    }
    assert schema["studies"]["default"] == studies  # every study runs by default


def test_bandit_epsilons_are_the_configured_ones(config) -> None:
    """#11: the ε vote's candidates come from online.epsilons, and only when a bandit runs."""
    assert online_plan(config).bandit_epsilons == (0.1, 0.3, 0.5, 0.7, 0.9)
    changed = copy.deepcopy(config)
    changed["online"].update(epsilons=[0.4, 0.9], epsilon=0.4)  # one trace: online.epsilon runs
    assert online_plan(changed).bandit_epsilons == (0.4, 0.9)
    changed["online"].update(selectors=["random", "ucb"])
    assert online_plan(changed).bandit_epsilons == ()


def test_online_defaults_are_the_published_study(config) -> None:
    """#16 (9, 10, 14): without the keys, the thesis' selectors, no forced round, the pooled
    leave-one-trace-out vote and the configured ε 0.1; the default config lists the thesis set
    and two additions (labelled in tables and figures)."""
    bare = online_plan({"online": {"policies": ["FCFS", "SPF"]}})
    assert [s.spec.split("(")[0] for s in bare.strategies if s.periods != ("none",)] == [
        "random", "full", "noisy", *["bandit"] * 5,
    ]  # fmt: skip
    assert THESIS_SELECTORS == ("random", "full", "noisy", "bandit")
    assert (bare.epsilon, bare.epsilon_vote) == (0.1, "pooled")
    assert bare.selector_options["forced_round"] is False
    schema = config_schema()["properties"]["online"]["properties"]
    assert schema["selectors"]["default"] == list(THESIS_SELECTORS)
    assert schema["bandit_forced_round"]["default"] is False
    assert (schema["epsilon"]["default"], schema["epsilon_vote"]["default"]) == (0.1, "pooled")
    assert schema["epsilon_vote"]["enum"] == list(EPSILON_VOTES)
    plan = online_plan(config)
    selectors = {s.spec.split("(")[0] for s in plan.strategies if s.periods != ("none",)}
    assert selectors == {*THESIS_SELECTORS, "ucb", "swucb"}
    assert (plan.epsilon, plan.epsilon_vote) == (0.1, "pooled")
    forced = copy.deepcopy(config)
    forced["online"]["bandit_forced_round"] = True
    assert online_plan(forced).selector_options["forced_round"] is True


def test_the_configured_epsilon_must_be_run_when_nobody_votes(config) -> None:
    """#16 (10): one trace (or epsilon_vote configured) runs online.epsilon, so it must be one
    of online.epsilons; with several traces that vote, it need not be."""
    changed = copy.deepcopy(config)
    changed["online"].update(epsilons=[0.3, 0.5])
    with pytest.raises(ConfigurationError, match=r"online.epsilon: 0.1 is not among online"):
        online_plan(changed)
    changed["online"]["traces"] = ["KTH-SP2", "SDSC-BLUE"]
    assert online_plan(changed).epsilon == 0.1  # the vote chooses among 0.3, 0.5
    changed["online"]["epsilon_vote"] = "configured"
    with pytest.raises(ConfigurationError, match=r"online\.epsilon_vote: configured"):
        online_plan(changed)
    changed["online"]["selectors"] = ["random"]  # no bandit: no ε needed
    assert online_plan(changed).bandit_epsilons == ()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"selectors": ["random", "Random"]}, "online.selectors: random listed twice"),
        ({"epsilon_vote": "mine"}, "online.epsilon_vote: 'mine'"),
        ({"epsilon": 1.5}, "online.epsilon: must be <= 1, got 1.5"),
        ({"bandit_forced_round": "yes"}, "online.bandit_forced_round"),
        ({"epsilons": [0.3, 0.1, 0.3]}, "online.epsilons: a value is listed twice"),
        ({"periods": ["1d", "24h"]}, "online.periods: '1d' and '24h' are the same duration"),
        ({"periods": ["1e1d"]}, "plain decimal"),
        ({"periods": ["none"]}, "'none' is not allowed"),
        ({"replicas": 0}, "online.replicas: must be >= 1"),
    ],
)
def test_online_messages_name_the_key_and_the_value(config, change, message) -> None:
    """#11 (item 9): a duplicate ε used to be reported as a selector listed twice."""
    changed = copy.deepcopy(config)
    changed["online"].update(change)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
        online_plan(changed)


@pytest.mark.parametrize(
    ("selectors", "figures"),
    [(["full", "bandit"], 5), (["bandit"], 5), (["random", "ucb"], 3)],
)
def test_choice_share_figures_are_planned_only_for_selectors_they_show(
    config, selectors: list[str], figures: int
) -> None:
    """Choice shares show the noisy (else full) selector and the bandit: without any of them
    the figure is not planned (it would fail after the whole study had run). Two periods:
    fixed improvement, then per period the selectors' improvement and the choice shares."""
    config = copy.deepcopy(config)
    config["online"]["selectors"] = selectors
    plan = online_plan(config)
    assert len(plan.figure_names()) == figures
    per_trace = [t for t in plan.targets() if t.endswith(".png") and "/week." not in t]
    assert len(per_trace) == figures * len(plan.trace_names)
    # and the representative week of the first trace
    assert "results/online/figures/week.png" in plan.targets()
