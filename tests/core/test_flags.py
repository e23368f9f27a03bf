"""The one parser of yes/no values (scheduler.core.flags), for the API and the configuration."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.studies.common.config import config_flag


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_, np.array([True])[0]])
def test_bools_are_plain_bools(value):
    assert flag(value, "x") is bool(value)
    assert config_flag(value, "online.x") is bool(value)


@pytest.mark.parametrize("value", ["no", "yes", "", 0, 1, None, 1.0, np.int64(1), [True]])
def test_anything_else_is_refused_naming_the_parameter(value):
    with pytest.raises(ConfigurationError, match=r"^balance must be True or False, got "):
        flag(value, "balance")
    with pytest.raises(ConfigurationError, match=r"^config online\.x must be True or False"):
        config_flag(value, "online.x")


def test_a_long_value_is_cut_in_the_message():
    with pytest.raises(ConfigurationError) as error:
        flag("n" * 10_000, "balance")
    assert len(str(error.value)) < 400
