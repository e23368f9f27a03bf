"""The registry's error lists the known names briefly, however many are registered."""

from __future__ import annotations

import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.core.registry import Registry, name_listing


def test_runs_of_numbered_names_are_written_by_their_ends() -> None:
    names = ["FCFS", "F1", "F2", "F3", "F4", *(f"LF{i}" for i in range(1, 577)), "LF578", "X"]
    assert name_listing(names) == "FCFS, F1, F2, F3, F4, LF1..LF576, LF578, X"
    assert name_listing([]) == "" and name_listing(["A1", "B2", "A3"]) == "A1, B2, A3"


def test_an_unknown_name_among_hundreds_of_learned_functions_is_a_short_error() -> None:
    registry: Registry[int] = Registry("policy")
    for index, name in enumerate(["FCFS", "SPF", *(f"LF{i}" for i in range(1, 577))]):
        registry.add(name, index)
    with pytest.raises(ConfigurationError) as caught:
        registry.lookup("Q" * 100)
    assert str(caught.value).endswith("known policies: FCFS, SPF, LF1..LF576")
