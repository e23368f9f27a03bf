"""Tables as text: GitHub-flavoured Markdown rendering of polars tables, shared by the studies."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import polars as pl

from scheduler.core.errors import ConfigurationError


def markdown_table(df: pl.DataFrame, *, float_digits: int = 3) -> str:
    """Render a table as GitHub-flavoured Markdown.

    Parameters
    ----------
    df
        Any table.
    float_digits
        Digits after the decimal point of float cells (``f"{x:.{float_digits}f}"``), >= 0.

    Returns
    -------
    str
        Header line ``| a | b |``, separator line ``|---|---:|`` (``---:``, right-aligned, for
        numeric columns) and one line per row like the header, ending with a newline. Floats
        are formatted with ``float_digits`` decimals, infinities as ``inf`` / ``-inf``, NaN and
        nulls as empty cells; other values with :func:`str`. ``|`` in text is escaped as
        ``\\|`` and line breaks become spaces.

    Raises
    ------
    ConfigurationError
        When ``float_digits`` is negative.
    """
    if float_digits < 0:
        raise ConfigurationError(f"float_digits must be >= 0, got {float_digits!r}")
    floats = [dtype.is_float() for dtype in df.dtypes]
    lines = [
        _markdown_line(_escape(name) for name in df.columns),
        "|" + "|".join("---:" if dtype.is_numeric() else "---" for dtype in df.dtypes) + "|",
    ]
    for row in df.iter_rows():
        lines.append(
            _markdown_line(
                _markdown_cell(value, is_float, float_digits)
                for value, is_float in zip(row, floats, strict=True)
            )
        )
    return "\n".join(lines) + "\n"


def _markdown_line(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _markdown_cell(value: Any, is_float: bool, digits: int) -> str:
    if value is None:
        return ""
    if is_float:
        number = float(value)
        if math.isnan(number):
            return ""
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return f"{number:.{digits}f}"
    return _escape(str(value))


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\r\n", " ").replace("\n", " ")
