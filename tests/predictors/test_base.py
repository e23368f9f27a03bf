"""The predictor registry: the names the run-time prediction study uses."""

from __future__ import annotations

import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.predictors import PREDICTORS


def test_names_and_lookup():
    assert PREDICTORS.names() == ("requested", "ave2", "clairvoyant", "nag")
    assert PREDICTORS.lookup("NAG") == "nag"
    assert all(PREDICTORS.description(name) for name in PREDICTORS)
    with pytest.raises(ConfigurationError, match="unknown predictor 'oracle'"):
        PREDICTORS.lookup("oracle")
