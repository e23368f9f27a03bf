"""``scheduler.simulate(..., predictor=...)``: the prediction variant through the main API.

On the bundled six-week KTH-SP2 slice (strongly filtered): predictor REQUESTED equals plain
``simulate`` job by job, CLAIRVOYANT equals ``simulate(estimate="clairvoyant")``, ``SJBF``
without a predictor is SPF backfilling and equals REQUESTED + SJBF; the combinations the variant
does not support are ConfigurationErrors that say what it supports.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from polars.testing import assert_frame_equal

from scheduler import (
    ConfigurationError,
    PredictedResult,
    read_swf,
    simulate,
    simulate_predicted,
    strong_filter,
)

SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"
PLAIN_COLUMNS = ["job_id", "submit_s", "procs", "run_s", "estimate_s", "start_s", "backfilled"]


@pytest.fixture(scope="module")
def kth_slice():
    return strong_filter(read_swf(SLICE))[0]


@pytest.fixture(scope="module")
def plain(kth_slice):
    return simulate(kth_slice)


def same_schedule(a, b) -> None:
    assert_frame_equal(a.jobs.select(PLAIN_COLUMNS), b.jobs.select(PLAIN_COLUMNS))
    assert a.summary == b.summary


@pytest.mark.parametrize("correction", ["requested", "incremental", "doubling"])
def test_requested_predictor_is_plain_easy_job_by_job(kth_slice, plain, correction):
    result = simulate(kth_slice, predictor="requested", correction=correction)
    assert isinstance(result, PredictedResult)
    same_schedule(result, plain)
    assert result.total_corrections == 0
    assert result.config.estimate == "predicted:requested"
    assert result.prediction_mae_s == pytest.approx(
        float((plain.jobs["estimate_s"] - plain.jobs["run_s"]).abs().mean())
    )


def test_clairvoyant_predictor_is_the_clairvoyant_estimate(kth_slice):
    result = simulate(kth_slice, predictor="clairvoyant")
    same_schedule(result, simulate(kth_slice, estimate="clairvoyant"))
    assert result.prediction_mae_s == 0.0


def test_sjbf_without_predictor_is_spf_backfilling_and_requested_sjbf(kth_slice, plain):
    sjbf = simulate(kth_slice, backfill="sjbf")
    assert sjbf.config.backfill == "SPF"
    same_schedule(sjbf, simulate(kth_slice, backfill="SPF"))
    predicted = simulate(kth_slice, predictor="requested", backfill="SJBF")
    assert predicted.config.backfill == "SJBF"
    assert predicted.backfill_order == "sjbf"
    same_schedule(predicted, sjbf)
    # and the order matters on this slice (the test would be vacuous otherwise)
    assert not sjbf.jobs["start_s"].equals(plain.jobs["start_s"])


def test_predictor_options_reach_the_variant(kth_slice):
    kwargs = dict(loss="squared", correction="incremental", eta=100.0, lam=1e-6)
    via_api = simulate(kth_slice, predictor="NAG", backfill="sjbf", **kwargs)
    direct = simulate_predicted(kth_slice, predictor="nag", backfill_order="sjbf", **kwargs)
    assert_frame_equal(via_api.jobs, direct.jobs)
    assert via_api.total_corrections == direct.total_corrections > 0
    assert (via_api.loss, via_api.correction) == ("squared", "incremental")
    errors = (direct.jobs["prediction_s"] - direct.jobs["run_s"]).abs().to_numpy()
    assert via_api.prediction_mae_s == pytest.approx(errors.mean())
    assert via_api.prediction_dict()["total_corrections"] == direct.total_corrections


def test_default_predictor_none_changes_nothing(kth_slice, plain):
    result = simulate(kth_slice, predictor=None)
    assert type(result) is type(plain)
    same_schedule(result, plain)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"primary": "SPF"}, "got primary='SPF'"),
        ({"backfill": "LPF"}, "got backfill='LPF'"),
        ({"backfill": None}, "got backfill=None"),
        ({"threshold": "40h"}, "got threshold='40h'"),
        ({"threshold_backfill": True}, "got threshold_backfill=True"),
        ({"estimate": "clairvoyant"}, "got estimate='clairvoyant'"),
        ({"estimate": np.ones(3)}, "got estimate='an ndarray'"),
        ({"outlive": "double"}, "got outlive='double'"),
    ],
)
def test_unsupported_combinations_say_what_is_supported(kth_slice, options, fragment):
    with pytest.raises(ConfigurationError) as info:
        simulate(kth_slice, predictor="requested", **options)
    message = str(info.value)
    assert fragment in message
    assert "supports primary FCFS, backfill FCFS (EASY) or SJBF, no threshold" in message


def test_threshold_none_is_accepted_with_a_predictor(kth_slice, plain):
    same_schedule(simulate(kth_slice, threshold="none", predictor="requested"), plain)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"predictor": "bogus"}, "unknown predictor 'bogus'; known predictors: requested"),
        ({"predictor": "ave2", "correction": "bogus"}, "unknown correction 'bogus'"),
        ({"predictor": "nag", "loss": "nope"}, "loss spec 'nope'"),
        ({"predictor": "requested", "loss": "eloss"}, "configures the nag predictor only"),
        ({"predictor": "ave2", "eta": 10.0, "lam": 1.0}, "eta, lam configure the nag predictor"),
        ({"correction": "incremental"}, "correction applies to run-time predictions only"),
        ({"loss": "eloss", "eta": 1.0}, "loss, eta apply to run-time predictions only"),
    ],
)
def test_bad_prediction_options(kth_slice, options, fragment):
    with pytest.raises(ConfigurationError) as info:
        simulate(kth_slice, **options)
    assert fragment in str(info.value)


def test_bare_table_needs_the_user_column_with_a_predictor(kth_slice):
    table = kth_slice.jobs.drop("user_id")
    assert simulate(table, machine_procs=100).summary.jobs == table.height
    with pytest.raises(ConfigurationError, match="user_id"):
        simulate(table, machine_procs=100, predictor="requested")


# -- the learner's settings: one check (scheduler.predictors.settings) ----------------------------

BAD_LEARNER_SETTINGS = [
    ("eta", math.inf), ("eta", math.nan), ("eta", 0.0), ("eta", -1.0), ("eta", 1e300),
    ("eta", "1"), ("eta", True),
    ("lam", math.inf), ("lam", math.nan), ("lam", -1e-6), ("lam", 1e300),
    ("gamma_floor", 1e308), ("gamma_floor", math.inf), ("gamma_floor", 0.0),
    ("gamma_floor", -1.0),
]  # fmt: skip


@pytest.mark.parametrize(("setting", "value"), BAD_LEARNER_SETTINGS)
def test_bad_learner_settings_are_refused_naming_them(kth_slice, setting, value):
    """eta=inf (or lam=inf, a huge gamma_floor ...) made every prediction 1 s; now refused by
    the one check of the learner's settings, with the same message through every entry."""
    from scheduler.predictors import NagLearner
    from scheduler.predictors.settings import learner_setting

    with pytest.raises(ConfigurationError) as info:
        simulate_predicted(kth_slice, predictor="nag", **{setting: value})
    message = str(info.value)
    assert message.startswith(f"{setting}: ")
    assert message.endswith(f"got {value:g}" if isinstance(value, float) else f"got {value!r}")
    for call in (
        lambda: learner_setting(setting, value),
        lambda: NagLearner(3, **{setting: value}),
        lambda: simulate_predicted(kth_slice, predictor="requested", **{setting: value}),
    ):
        with pytest.raises(ConfigurationError) as again:
            call()
        assert str(again.value) == message
    if setting != "gamma_floor":  # scheduler.simulate has no gamma_floor
        with pytest.raises(ConfigurationError) as again:
            simulate(kth_slice, predictor="nag", **{setting: value})
        assert str(again.value) == message


def test_learner_settings_at_their_bounds_give_finite_results(kth_slice):
    from scheduler.predictors.settings import MAX_ETA_S, MAX_GAMMA_FLOOR, MAX_LAM

    for loss in ("eloss", "squared", "absolute"):
        result = simulate_predicted(kth_slice, predictor="nag", loss=loss, eta=MAX_ETA_S,
                                    lam=MAX_LAM, gamma_floor=MAX_GAMMA_FLOOR)  # fmt: skip
        assert np.isfinite(result.jobs["prediction_s"].to_numpy()).all()
        assert (result.jobs["prediction_s"] > 1.0).any()  # not every prediction at the floor
        assert np.isfinite(list(result.summary.to_dict().values())).all()
