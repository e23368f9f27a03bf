"""The real config files merged as the Snakefile merges them, for the plan tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from support.configs import overlay

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / "config"


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((CONFIG_DIR / name).read_text())


def default_config() -> dict[str, Any]:
    return overlay(load("traces.yaml"), load("config.yaml"))


def full_config_of(config) -> dict[str, Any]:
    return overlay(config, load("full.yaml"))


def with_tuning(config: dict[str, Any], **tuning: Any) -> dict[str, Any]:
    return overlay(config, {"tuning": tuning})
