"""The real config files merged as the Snakefile merges them, for the plan tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / "config"


def deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((CONFIG_DIR / name).read_text())


def default_config() -> dict[str, Any]:
    return deep_merge(load("traces.yaml"), load("config.yaml"))


def full_config_of(config) -> dict[str, Any]:
    return deep_merge(config, load("full.yaml"))


def with_tuning(config: dict[str, Any], **tuning: Any) -> dict[str, Any]:
    return deep_merge(config, {"tuning": tuning})
