"""The prediction study's plan: the `prediction` config section, its triples, its errors."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from scheduler.core.errors import ConfigurationError
from scheduler.predictors import ALL_LOSSES
from scheduler.studies.prediction.plan import (
    EASY,
    EASY_PLUS_PLUS,
    NO_CORRECTION,
    Triple,
    loss_slug,
    prediction_plan,
)

ROOT = Path(__file__).resolve().parents[3]


def _config(**section: object) -> dict:
    catalogue = yaml.safe_load((ROOT / "config" / "traces.yaml").read_text())
    base = {"traces": ["KTH-SP2"], "predictors": ["requested", "ave2", "clairvoyant", "nag"],
            "losses": ["eloss", "squared"], "corrections": ["incremental", "requested"],
            "backfill": ["easy", "sjbf"]}  # fmt: skip
    base.update(section)
    return catalogue | {"prediction": base}


def test_default_config_plans_the_handful_of_triples() -> None:
    """config/config.yaml: E-loss, squared, AVE2, REQUESTED, CLAIRVOYANT x INCREMENTAL /
    REQUESTED x EASY / SJBF, i.e. (2 + 1) x 2 x 2 corrected + 2 x 2 uncorrected = 16 triples."""
    config = yaml.safe_load((ROOT / "config" / "traces.yaml").read_text())
    config |= yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    plan = prediction_plan(config)
    assert plan.trace_names == ("KTH-SP2",)
    assert plan.overrun == "clip"
    slugs = [t.slug for t in plan.techniques]
    assert slugs == ["requested", "ave2", "clairvoyant", "nag-eloss", "nag-squared"]
    triples = plan.triples()
    assert len(triples) == 16
    assert EASY in triples and EASY_PLUS_PLUS in triples
    assert Triple("clairvoyant", NO_CORRECTION, "sjbf") in triples
    assert not any(t.technique == "requested" and t.correction != NO_CORRECTION for t in triples)
    assert plan.learner()["eta"] > 0


def test_full_campaign_config() -> None:
    """config/prediction-full.yaml: six logs, 20 losses x 3 corrections x 2 variants + AVE2 x 3
    x 2 + REQUESTED and CLAIRVOYANT x 2 = 130 triples per log."""
    config = yaml.safe_load((ROOT / "config" / "traces.yaml").read_text())
    config |= yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config |= yaml.safe_load((ROOT / "config" / "prediction-full.yaml").read_text())
    plan = prediction_plan(config)
    assert plan.trace_names == (
        "KTH-SP2", "CTC-SP2", "SDSC-SP2", "SDSC-BLUE", "CEA-Curie", "HPC2N"
    )  # fmt: skip
    assert len(plan.triples()) == 20 * 3 * 2 + 3 * 2 + 2 + 2
    assert len({t.slug for t in plan.techniques}) == len(plan.techniques)


def test_all_losses_have_distinct_slugs() -> None:
    slugs = [loss_slug(loss) for loss in ALL_LOSSES]
    assert len(set(slugs)) == 20
    assert "eloss" in slugs and "squared" in slugs and "absolute" in slugs
    plan = prediction_plan(_config(losses=["all"]))
    assert len([t for t in plan.techniques if t.learned]) == 20


def test_loss_specs_and_names_give_one_technique_each() -> None:
    plan = prediction_plan(_config(losses=["over=squared,under=linear,gamma=1", "absolute"]))
    learned = [t for t in plan.techniques if t.learned]
    assert [t.slug for t in learned] == ["nag-L2", "nag-absolute"]
    assert learned[0].loss == "over=squared,under=linear,gamma=1"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"predictors": ["requested", "oracle"]}, "oracle"),
        ({"predictors": ["ave2"]}, "must include 'requested'"),
        ({"losses": ["over=cubic,under=linear,gamma=1"]}, "cubic"),
        ({"losses": ["eloss", "over=squared,under=linear,gamma=log(qp)"]}, "same loss"),
        ({"losses": ["over=squared"]}, "lacks"),
        ({"corrections": ["halving"]}, "halving"),
        ({"backfill": ["sjbf"]}, "must include 'easy'"),
        ({"backfill": ["easy", "lifo"]}, "lifo"),
        ({"overrun": "truncate"}, "prediction.overrun"),
        ({"traces": ["NOPE"]}, "unknown trace 'NOPE'"),
        ({"traces": []}, "prediction.traces: give at least 1 value"),
        ({"learner": {"eta_s": 0}}, "learner.eta_s"),
        ({"learner": {"lam": -1}}, "learner.lam"),
        ({"learner": {"gamma_floor": 1e308}}, "learner.gamma_floor: must be <= 1000"),
        ({"learner": {"eta_s": 1e300}}, "learner.eta_s: must be <= 4503599627370496"),
        ({"learner": {"lam": 1e300}}, "learner.lam: must be <= 1000000000000"),
        ({"learner": {"eta_s": float("inf")}}, "eta_s: must be <= 4503599627370496, got inf"),
        ({"ecdf_techniques": ["nag-absolute"]}, "ecdf_techniques"),
        ({"lolo_score": "median"}, "lolo_score"),
        ({"predictors": ["requested", "requested"]}, "twice"),
    ],
)
def test_bad_sections_name_the_key(change: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=r"prediction|unknown trace") as error:
        prediction_plan(_config(**change))
    assert message in str(error.value)


def test_plan_does_not_change_the_config() -> None:
    config = _config()
    before = copy.deepcopy(config)
    prediction_plan(config)
    assert config == before


@pytest.mark.parametrize(
    ("section", "expected"), [({}, "allocated"), ({"processors": "requested"}, "requested")]
)
def test_the_processor_count_reaches_every_simulation(section: dict, expected: str) -> None:
    """prediction.processors (allocated by default) is a setting of every technique's step."""
    plan = prediction_plan(_config(**section))
    for technique in plan.techniques:
        wildcards = type("W", (), {"trace": "KTH-SP2", "technique": technique.slug})()
        assert plan.technique_settings(wildcards)["processors"] == expected


def test_an_unknown_processor_count_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigurationError, match=r"prediction\.processors"):
        prediction_plan(_config(processors="both"))


@pytest.mark.parametrize(
    ("section", "expected"),
    [({}, ("default", False)),
     ({"reservation": "classic", "whole_seconds": True}, ("classic", True))],
)  # fmt: skip
def test_the_published_simulators_rules_reach_every_simulation(section: dict, expected) -> None:
    """prediction.reservation and whole_seconds (schedlab's rules by default) are settings of
    every technique's step."""
    plan = prediction_plan(_config(**section))
    for technique in plan.techniques:
        wildcards = type("W", (), {"trace": "KTH-SP2", "technique": technique.slug})()
        settings = plan.technique_settings(wildcards)
        assert (settings["reservation"], settings["whole_seconds"]) == expected


@pytest.mark.parametrize(
    ("change", "key"),
    [({"reservation": "strict"}, r"prediction\.reservation"),
     ({"whole_seconds": "yes"}, r"prediction\.whole_seconds")],
)  # fmt: skip
def test_bad_published_simulator_rules_are_refused_naming_the_key(change: dict, key: str) -> None:
    with pytest.raises(ConfigurationError, match=key):
        prediction_plan(_config(**change))


def test_the_paper_config_sets_the_published_simulators_rules() -> None:
    paper = yaml.safe_load((ROOT / "config" / "prediction-paper.yaml").read_text())["prediction"]
    plan = prediction_plan(_config(**paper))
    assert (plan.processors, plan.reservation, plan.whole_seconds) == ("requested", "classic", True)


def test_the_learner_bounds_are_the_predictors_constants() -> None:
    """The schema's maxima of prediction.learner come from scheduler.predictors.settings (one
    home), and the plan applies the same check as the API."""
    from scheduler.predictors.settings import (
        LEARNER_SETTINGS,
        MAX_ETA_S,
        MAX_GAMMA_FLOOR,
        MAX_LAM,
        check_learner,
    )
    from scheduler.studies.common.study import config_schema

    learner = config_schema(["prediction"])["properties"]["prediction"]["properties"]["learner"]
    bounds = {key: learner["properties"][key]["maximum"] for key in ("eta_s", "lam", "gamma_floor")}
    assert bounds == {"eta_s": MAX_ETA_S, "lam": MAX_LAM, "gamma_floor": MAX_GAMMA_FLOOR}
    assert [entry[3] for entry in LEARNER_SETTINGS.values()] == [MAX_ETA_S, MAX_LAM,
                                                                  MAX_GAMMA_FLOOR]  # fmt: skip
    plan = prediction_plan(_config(learner={"eta_s": MAX_ETA_S, "lam": MAX_LAM,
                                            "gamma_floor": MAX_GAMMA_FLOOR}))  # fmt: skip
    settings = plan.learner()
    expected = (MAX_ETA_S, MAX_LAM, MAX_GAMMA_FLOOR)
    assert check_learner(settings["eta"], settings["lam"], settings["gamma_floor"]) == expected
