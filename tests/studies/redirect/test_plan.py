"""The redirection study's plan: the `redirect` config section and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler.core.errors import ConfigurationError
from scheduler.studies.redirect.plan import redirect_plan

ROOT = Path(__file__).resolve().parents[3]


def _config(*files: str, **section: object) -> dict:
    config = yaml.safe_load((ROOT / "config" / "traces.yaml").read_text())
    for name in files:
        config |= yaml.safe_load((ROOT / "config" / name).read_text())
    config["redirect"] = {**config.get("redirect", {}), **section}
    return config


def test_default_and_full_configs() -> None:
    plan = redirect_plan(_config("config.yaml"))
    assert plan.trace_names == ("KTH-SP2",) and plan.weeks == 6
    assert len(plan.alphas) * len(plan.thetas) == 9 and plan.balance == (False, True)
    assert plan.trace_min_load("KTH-SP2") == 0.7
    assert plan.online_period_s == 86400.0
    assert plan.online_selectors == ("bandit(eps=0.1)", "ucb") and plan.seed == 20261121
    full = redirect_plan(_config("config.yaml", "redirect-full.yaml"))
    assert full.trace_names == ("CEA-Curie", "ANL-Intrepid", "RICC")
    assert full.alphas == (0.05, 0.1, 0.15, 0.2, 0.25, 0.3) and full.weeks == 20
    # the slides' protocol: every log at load 0.7, overrunning jobs clipped to their request
    assert full.trace_min_load("ANL-Intrepid") == 0.7 == full.trace_min_load("RICC")
    assert plan.overrun == "drop" and full.overrun == "clip"
    assert plan.source_file("KTH-SP2") == "results/KTH-SP2/filtered.parquet"
    assert full.source_file("RICC") == "results/RICC/filtered-clip.parquet"


def test_labels() -> None:
    plan = redirect_plan(_config("config.yaml"))
    assert plan.alpha(plan.alpha_label(0.05)) == 0.05
    with pytest.raises(ConfigurationError, match=r"not in redirect\.alphas"):
        plan.alpha("0.5")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"alphas": [1.0]}, "redirect.alphas"),
        ({"alphas": [0.1, 0.1]}, "listed twice"),
        ({"thetas": [-1]}, "redirect.thetas"),
        ({"split": "random"}, "redirect.split"),
        ({"overrun": "keep"}, "redirect.overrun"),
        ({"weeks": 1}, "redirect.weeks"),
        ({"traces": []}, "redirect.traces: give at least 1 value"),
        ({"min_load_by_trace": {"CTC-SP2": 0.5}}, "not in redirect.traces"),
        ({"primary": "XYZ"}, "unknown policy 'XYZ'"),
        ({"tau_s": 0}, "redirect.tau_s"),
        ({"online": {"period": "0d"}}, "redirect.online.period"),
        ({"online": {"period": "soon"}}, "redirect.online.period"),
        ({"online": {"selectors": ["random"]}}, "redirect.online.selectors"),
        ({"online": {"selectors": ["ucb(c=-1)"]}}, "redirect.online.selectors"),
    ],
)
def test_bad_sections_name_the_key(change: dict, message: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        redirect_plan(_config("config.yaml", **change))
    assert message in str(error.value)
