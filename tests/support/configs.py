"""Hypothesis strategies of study configs drawn from the JSON schema (#11): the `tuning` and
`online` sections, every key of the schema with values of its type, enum and bounds, plus
invalid-ish ones (0, negatives, 'none', '0d', unit-less numbers, exponents, unknown names)."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from hypothesis import strategies as st

from scheduler.core.errors import ConfigurationError
from scheduler.policies import POLICIES
from scheduler.studies.common.study import config_schema, validated_config
from scheduler.studies.online.plan import online_plan
from scheduler.studies.online.selectors import SELECTORS, bandit_epsilon, make_selector
from scheduler.studies.tuning.plan import tuning_plan

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = config_schema()

DURATIONS = ["none", "20h", "5h", "1d", "1w", "90m", "30s", "0h", "0d", "0s", "1.5d", "20",
             "-1h", "1e3s", "abc", "None", " 1d"]  # fmt: skip
POLICY_NAMES = [*POLICIES.names(), "spf", "XYZ", "fcfs", ""]
SELECTOR_NAMES = [*SELECTORS.names(), "oracle", "BANDIT", "ucb(c=2)"]
#: Values of a key by its name, where the schema says only "string".
POOLS: dict[str, list[Any]] = {
    "thresholds": DURATIONS, "threshold": DURATIONS, "periods": DURATIONS,
    "primary_policies": POLICY_NAMES, "backfill_policies": POLICY_NAMES,
    "policies": POLICY_NAMES, "primary": POLICY_NAMES, "backfill": POLICY_NAMES,
    "weekly_backfill": POLICY_NAMES, "thresholded_backfill": POLICY_NAMES,
    "reference": POLICY_NAMES, "initial": POLICY_NAMES,
    "selectors": SELECTOR_NAMES, "traces": ["KTH-slice", "NOPE"],
}  # fmt: skip


def _number(node: dict[str, Any], integer: bool) -> st.SearchStrategy[Any]:
    low = node.get("minimum", node.get("exclusiveMinimum", 0))
    high = node.get("maximum", node.get("exclusiveMaximum", low + 10))
    if integer:
        edges = [low, high, 0, -1, 2 * high + 1]
        near = st.integers(max(low, 1), min(max(low, 1) + 6, high))
        return st.one_of(near, st.sampled_from(edges))
    edges = [low, high, 0.0, -0.5, 1.0, 1.5, math.nan, 1e-5, 0.123456789, 2 * high]
    return st.one_of(st.floats(low, high, allow_nan=False), st.sampled_from(edges))


def from_schema(node: dict[str, Any], key: str) -> st.SearchStrategy[Any]:
    """Values of one schema node (``key`` is its property name, choosing a string pool)."""
    kinds = node.get("type")
    if "enum" in node:
        return st.sampled_from([*node["enum"], "bogus"])
    if kinds == "object":
        return objects(node)
    if kinds == "array":
        items = from_schema(node.get("items", {}), key)
        low = node.get("minItems", 0)
        high = min(node.get("maxItems", 4), 4)
        return st.lists(items, min_size=max(low - 1, 0), max_size=high + 1)
    if kinds == "boolean":
        return st.one_of(st.booleans(), st.sampled_from(["yes", 1, None]))
    if kinds == "integer":
        return _number(node, integer=True)
    if kinds == "number":
        return _number(node, integer=False)
    if kinds == "string" and key in POOLS:
        return st.sampled_from(POOLS[key])
    return st.text(alphabet="abcdefXYZ019h. ", max_size=6)


def objects(node: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict with a random subset of the schema's properties (the rest keep their value)."""
    props = node.get("properties", {})
    return st.fixed_dictionaries(
        {}, optional={name: from_schema(sub, name) for name, sub in props.items()}
    )


def sections() -> st.SearchStrategy[dict[str, Any]]:
    """Overlays ``{"tuning": {...}, "online": {...}}`` drawn from the schema."""
    props = SCHEMA["properties"]
    return st.fixed_dictionaries(
        {"tuning": objects(props["tuning"]), "online": objects(props["online"])}
    )


def overlay(base: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """``change`` merged into ``base`` key by key (as Snakemake merges config files)."""
    out = copy.deepcopy(base)
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = overlay(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def changed_keys(change: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of every key ``change`` sets (``tuning.figures.threshold``...)."""
    out = []
    for key, value in change.items():
        name = f"{prefix}{key}"
        out.append(name)
        if isinstance(value, dict):
            out += changed_keys(value, f"{name}.")
    return out


def names_a_key(message: str, change: dict[str, Any]) -> bool:
    """Whether an error message names a config key: a plan's ``config <section>.<key>`` or
    a schema error's path of a key the change set."""
    if re.search(r"config (seed|(tuning|online)\.[a-z_.]+)", message):
        return True
    leaves = [name.rsplit(".", 1)[-1] for name in changed_keys(change)]
    return any(f"'{leaf}'" in message or f"{leaf}" in message for leaf in leaves)


def tiny_base() -> dict:
    """config/config.yaml with config/tiny.yaml over it (as Snakemake merges them)."""
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    return overlay(base, yaml.safe_load((ROOT / "config" / "tiny.yaml").read_text()))


BASE = tiny_base()


def check(change: dict) -> bool:
    """Schema then plans, as workflow/rules/common.smk does; True when the config is accepted
    (then the plan is checked against what the steps refuse), False when refused with a
    message naming the key."""
    config = overlay(BASE, change)
    try:
        config = validated_config(config)
        tuning, online = tuning_plan(config), online_plan(config)
    except ConfigurationError as error:
        assert names_a_key(str(error), change), (str(error), change)
        return False
    # what the steps would refuse after compute was spent
    labels = {t.label for t in tuning.thresholds}
    assert tuning.figure_threshold != "none" and "none" in labels
    assert 0 < tuning.confidence < 1 and 0 < online.confidence < 1
    assert tuning.figure_weeks >= 1 and tuning.batches()
    assert all(p.seconds > 0 and math.isfinite(p.seconds) for p in online.periods)
    assert all(bandit_epsilon(f"bandit(eps={eps:g})") == eps for eps in online.bandit_epsilons)
    assert online.replicas >= 1 and online.weeks >= 1
    assert len({s.slug for s in online.strategies}) == len(online.strategies)
    for strategy in online.strategies:  # every selector builds with the plan's options
        make_selector(strategy.spec, online.policies, rng=np.random.default_rng(0),
                      **online.selector_options)  # fmt: skip
    return True
