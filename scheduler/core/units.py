"""Durations with units, as written on command lines and in configs ("40h", "90m", "none")."""

from __future__ import annotations

import math
import re

from scheduler.core.errors import ConfigurationError, quote

_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhdw]?)\s*$", re.IGNORECASE)
_INFINITE = {"none", "inf", "infinity", "off", "never"}


def parse_duration(value: str | float | int | None) -> float:
    """Seconds in ``value``: a number of seconds, or a string with a unit.

    Units: ``s`` seconds, ``m`` minutes, ``h`` hours, ``d`` days, ``w`` weeks; no unit means
    seconds. ``None``, ``"none"``, ``"inf"`` (and ``math.inf``) mean "no limit" and give ``inf``.
    Negative durations are refused.

    >>> parse_duration("40h")
    144000.0
    >>> parse_duration("none")
    inf
    """
    if value is None:
        return math.inf
    if isinstance(value, bool):
        raise ConfigurationError(f"not a duration: {quote(value)}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = str(value).strip()
        if text.lower() in _INFINITE:
            return math.inf
        match = _DURATION.match(text)
        if match is None:
            raise ConfigurationError(
                f"not a duration: {quote(value)} (write e.g. 3600, 90m, 40h, 2d or none)"
            )
        seconds = float(match.group(1)) * _UNIT_S[(match.group(2) or "s").lower()]
        if math.isinf(seconds):  # digits beyond the float range: not "no limit" by accident
            raise ConfigurationError(
                f"duration {text[:20]!r}... is out of range; write 'none' for no limit"
            )
    if math.isnan(seconds) or seconds < 0:
        raise ConfigurationError(f"a duration must be >= 0 seconds, got {quote(value)}")
    return seconds


def format_duration(seconds: float) -> str:
    """Short label for ``seconds``: ``"none"`` for inf, else the largest exact unit ("40h")."""
    if math.isinf(seconds):
        return "none"
    for unit in ("w", "d", "h", "m"):
        size = _UNIT_S[unit]
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
