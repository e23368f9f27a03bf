"""Hypothesis strategies of study configs drawn from the JSON schema: every study's section,
every key of the schema with values of its type, enum and bounds, values at and beyond the
bounds and of extreme magnitudes, plus invalid-ish ones (0, negatives, 'none', '0d', unit-less
numbers, exponents, unknown names); and the checks a drawn config must pass."""

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
from scheduler.studies.common.study import config_schema, plan_studies, validated_config
from scheduler.studies.online.selectors import SELECTORS, bandit_epsilon, make_selector

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = config_schema()
#: The sections drawn: every registered study's.
STUDIES = tuple(SCHEMA["properties"]["studies"]["items"]["enum"])

DURATIONS = ["none", "20h", "5h", "1d", "1w", "90m", "30s", "0h", "0d", "0s", "1.5d", "20",
             "-1h", "1e3s", "abc", "None", " 1d"]  # fmt: skip
POLICY_NAMES = [*POLICIES.names(), "spf", "XYZ", "fcfs", ""]
SELECTOR_NAMES = [*SELECTORS.names(), "oracle", "BANDIT", "ucb(c=2)"]
TRACE_NAMES = ["KTH-slice", "LANL-CM5-tiny", "NOPE", "x" * 240]
#: Values of a key by its name, where the schema says only "string" (other string keys draw
#: from their section's default values and a few bogus ones).
POOLS: dict[str, list[Any]] = {
    "thresholds": DURATIONS, "threshold": DURATIONS, "periods": DURATIONS, "period": DURATIONS,
    "primary_policies": POLICY_NAMES, "backfill_policies": POLICY_NAMES,
    "policies": POLICY_NAMES, "primary": POLICY_NAMES, "backfill": POLICY_NAMES,
    "weekly_backfill": POLICY_NAMES, "thresholded_backfill": POLICY_NAMES,
    "reference": POLICY_NAMES, "initial": POLICY_NAMES,
    "selectors": SELECTOR_NAMES, "traces": TRACE_NAMES,
    "workloads": [*TRACE_NAMES, "model-256", "model-1", "model-64", "model-10000000"],
}  # fmt: skip
#: Magnitudes beyond any bound, drawn for every number.
EXTREMES = [1e300, -1e300, 1e-300, 2.0**53 + 2, 1e9, 1e-9]


def _number(node: dict[str, Any], integer: bool) -> st.SearchStrategy[Any]:
    low = node.get("minimum", node.get("exclusiveMinimum", 0))
    high = node.get("maximum", node.get("exclusiveMaximum", low + 10))
    if integer:
        edges = [low, high, low - 1, high + 1, 0, -1, 2 * high + 1, 10**18, -(10**18)]
        near = st.integers(max(low, 1), min(max(low, 1) + 6, high))
        return st.one_of(near, st.sampled_from(edges))
    edges = [low, high, 0.0, -0.5, 1.0, 1.5, math.nan, math.inf, 1e-5, 0.123456789, 2 * high,
             *EXTREMES]  # fmt: skip
    inside = st.floats(low, min(high, 1e6), allow_nan=False, allow_infinity=False)
    return st.one_of(inside, st.sampled_from(edges))


def _strings(key: str, default: Any) -> st.SearchStrategy[Any]:
    if key in POOLS:
        return st.sampled_from(POOLS[key])
    known = [default] if isinstance(default, str) else default if isinstance(default, list) else []
    known = [value for value in known if isinstance(value, str)]
    return st.one_of(st.sampled_from([*known, "bogus", ""]),
                     st.text(alphabet="abcdefXYZ019h. ", max_size=6))  # fmt: skip


def from_schema(node: dict[str, Any], key: str, default: Any = None) -> st.SearchStrategy[Any]:
    """Values of one schema node (``key`` is its property name, choosing a string pool;
    ``default`` the default of the array holding it)."""
    kinds = node.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "enum" in node:
        return st.sampled_from([*node["enum"], "bogus"])
    if "oneOf" in node:
        return st.one_of(*(from_schema(option, key) for option in node["oneOf"]))
    options = []
    if "object" in kinds:
        options.append(objects(node))
    if "array" in kinds:
        items = from_schema(node.get("items", {}), key, node.get("default"))
        low = node.get("minItems", 0)
        high = min(node.get("maxItems", 4), 4)
        options.append(st.lists(items, min_size=max(low - 1, 0), max_size=high + 1))
        if node.get("maxItems", 0) > 4:  # one list longer than the bound
            options.append(st.just(list(range(node["maxItems"] + 1))))
    if "boolean" in kinds:
        options.append(st.one_of(st.booleans(), st.sampled_from(["yes", 1, None])))
    if "integer" in kinds:
        options.append(_number(node, integer=True))
    elif "number" in kinds:
        options.append(_number(node, integer=False))
    if "string" in kinds:
        options.append(_strings(key, default if default is not None else node.get("default")))
    if "null" in kinds:
        options.append(st.none())
    return st.one_of(*options) if options else st.text(alphabet="abcdefXYZ019h. ", max_size=6)


def objects(node: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict with a random subset of the schema's properties (the rest keep their value)."""
    props = node.get("properties", {})
    return st.fixed_dictionaries(
        {}, optional={name: from_schema(sub, name) for name, sub in props.items()}
    )


def sections(studies: tuple[str, ...] = STUDIES) -> st.SearchStrategy[dict[str, Any]]:
    """Overlays ``{"tuning": {...}, "online": {...}, ...}`` drawn from the schema: a random
    subset of the keys of each study's section in ``studies``."""
    props = SCHEMA["properties"]
    return st.fixed_dictionaries({name: objects(props[name]) for name in studies})


def one_key(studies: tuple[str, ...] = STUDIES) -> st.SearchStrategy[dict[str, Any]]:
    """Overlays that set one top-level key of one study's section, drawn from the schema."""
    props = SCHEMA["properties"]
    return st.one_of(*(
        st.builds(lambda value, name=name, key=key: {name: {key: value}}, from_schema(sub, key))
        for name in studies for key, sub in props[name]["properties"].items()
    ))  # fmt: skip


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
    if re.search(rf"config (seed|traces|({'|'.join(STUDIES)})\.[a-z_.]+)", message):
        return True
    leaves = [name.rsplit(".", 1)[-1] for name in changed_keys(change)]
    return any(f"'{leaf}'" in message or f"{leaf}" in message for leaf in leaves)


def tiny_base() -> dict:
    """config/traces.yaml, config/config.yaml and config/tiny.yaml over them (as Snakemake
    merges them)."""
    base: dict = {}
    for name in ("traces.yaml", "config.yaml", "tiny.yaml"):
        base = overlay(base, yaml.safe_load((ROOT / "config" / name).read_text()))
    return base


BASE = tiny_base()


def _labels_round_trip(labels: dict[str, float], pattern: str, value: Any) -> None:
    """Every label (-> its number) matches its wildcard ``pattern`` and names the same number
    through the plan's reader ``value`` (a changed value must change the file it names)."""
    for label, number in labels.items():
        assert re.fullmatch(pattern, label), (label, pattern)
        assert value(label) == number, (label, number)
    assert len(set(labels)) == len(labels)


def _check_tuning(tuning: Any) -> None:
    labels = {t.label for t in tuning.thresholds}
    assert tuning.figure_threshold != "none" and "none" in labels
    assert 0 < tuning.confidence < 1
    assert tuning.figure_weeks >= 1 and tuning.batches()
    pattern = tuning.wildcards["threshold"]
    _labels_round_trip({t.label: t.seconds for t in tuning.thresholds}, pattern,
                       tuning.threshold_seconds)  # fmt: skip


def _check_online(online: Any) -> None:
    assert 0 < online.confidence < 1
    assert all(p.seconds > 0 and math.isfinite(p.seconds) for p in online.periods)
    _labels_round_trip({p.label: p.seconds for p in online.periods}, online.wildcards["period"],
                       online.period_seconds)  # fmt: skip
    assert all(bandit_epsilon(f"bandit(eps={eps:g})") == eps for eps in online.bandit_epsilons)
    assert online.replicas >= 1 and online.weeks >= 1
    assert len({s.slug for s in online.strategies}) == len(online.strategies)
    for strategy in online.strategies:  # every selector builds with the plan's options
        make_selector(strategy.spec, online.policies, rng=np.random.default_rng(0),
                      **online.selector_options)  # fmt: skip


def _check_memory(memory: Any) -> None:
    _labels_round_trip(dict(zip(memory.load_labels, memory.loads, strict=True)),
                       memory.wildcards["memory_load"], memory.load)  # fmt: skip
    _labels_round_trip(dict(zip(memory.sweep_labels, memory.sweep_memory_mb, strict=True)),
                       memory.wildcards["memory_mb"], memory.sweep_memory)  # fmt: skip
    assert memory.saturation_load in memory.loads and 0 < memory.confidence < 1


def _check_redirect(redirect: Any) -> None:
    labels = {redirect.alpha_label(alpha): alpha for alpha in redirect.alphas}
    _labels_round_trip(labels, redirect.wildcards["alpha"], redirect.alpha)
    assert all(0 < alpha < 1 for alpha in redirect.alphas)
    assert all(theta >= 0 for theta in redirect.thetas)


#: What the steps of each study would refuse after compute was spent, checked on its plan.
STUDY_CHECKS = {"tuning": _check_tuning, "online": _check_online, "memory": _check_memory,
                "redirect": _check_redirect}  # fmt: skip


def check(change: dict) -> bool:
    """Schema then plans, as workflow/rules/common.smk does; True when the config is accepted
    (then each plan is checked against what the steps refuse, its file names are names a file
    system takes, and its labels round-trip), False when refused with a message naming the
    key."""
    config = overlay(BASE, change)
    try:
        config = validated_config(config)
        plans = plan_studies(config)
    except ConfigurationError as error:
        assert names_a_key(str(error), change), (str(error), change)
        return False
    for name, plan in plans.items():
        STUDY_CHECKS.get(name, lambda _: None)(plan)
        targets = plan.targets()
        assert len(set(targets)) == len(targets), name
        for path in targets:  # a file system takes every name (no 'File name too long')
            assert all(len(part.encode()) <= 255 for part in Path(path).parts), path
    return True
