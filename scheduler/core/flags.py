"""Yes/no values: the one parser of every flag of the API and of the configuration.

A flag is a bool, Python's or NumPy's, and nothing else. Python reads any object as true or
false, so a string such as ``"no"`` or ``"false"`` (non-empty, hence true) would silently turn a
flag on, and ``0``/``1`` or ``None`` would hide a misplaced argument; :func:`flag` refuses them
all, naming the parameter. The configuration's yes/no keys are YAML booleans (``true``/``false``),
checked by the schema and, where a plan reads one, by this same function
(:func:`scheduler.studies.common.config.config_flag`).
"""

from __future__ import annotations

import numpy as np

from scheduler.core.errors import ConfigurationError, quote

__all__ = ["flag"]


def flag(value: object, name: str) -> bool:
    """``value`` as a plain bool, or a ConfigurationError naming ``name``.

    Parameters
    ----------
    value
        ``True``/``False`` or a NumPy bool (``np.True_``, an element of a boolean array).
    name
        The parameter or key, as the user wrote it (``"balance"``, ``"config online.x"``).

    Examples
    --------
    >>> flag(True, "balance")
    True
    >>> flag("no", "balance")
    Traceback (most recent call last):
    ...
    scheduler.core.errors.ConfigurationError: balance must be True or False, got 'no'
    """
    if not isinstance(value, bool | np.bool_):
        raise ConfigurationError(f"{name} must be True or False, got {quote(value)}")
    return bool(value)
