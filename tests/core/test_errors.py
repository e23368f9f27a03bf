"""Quoting user input in error messages (scheduler.core.errors.quote): short, whatever the input."""

from __future__ import annotations

import pytest

from scheduler.core.errors import ConfigurationError, quote
from scheduler.core.registry import Registry
from scheduler.core.units import parse_duration

BIG = "x" * 5_000_000


def test_short_text_is_quoted_like_repr() -> None:
    assert quote("12x") == "'12x'"
    assert quote("it's") == repr("it's")
    assert quote("a" * 200) == repr("a" * 200)


def test_long_text_is_cut_with_its_length() -> None:
    assert quote("abc" + "d" * 300, limit=3) == "'abc…' (303 characters)"
    assert quote("y" * 52_428_800) == repr("y" * 200 + "…") + " (52,428,800 characters)"


def test_non_text_is_quoted_by_its_repr() -> None:
    assert quote(b"\xff\xfe") == repr(b"\xff\xfe")
    assert quote(2.5) == "2.5"
    long = quote(list(range(10_000)), limit=10)
    assert long.startswith("[0, 1, 2, …") and long.endswith("characters)")


def test_errors_quoting_core_input_stay_short() -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_duration(BIG)
    assert len(str(info.value)) < 400 and "5,000,000 characters" in str(info.value)
    registry: Registry[int] = Registry("thing", canonical=str.upper)
    with pytest.raises(ConfigurationError) as info:
        registry.lookup(BIG)
    assert len(str(info.value)) < 400
