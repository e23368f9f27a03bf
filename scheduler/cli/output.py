"""What the ``scheduler`` command prints: aligned sections, JSON, warnings and one-line errors.

Shared by every command group: text output is titled sections of ``label  value`` rows
(:func:`print_sections`), ``--json`` output is indented JSON with sorted keys
(:func:`print_json`), and warnings and errors are single ``scheduler: warning: ...`` /
``scheduler: error: ...`` lines on stderr. Output files are written through :func:`writing`, which
turns an operating-system error into an error naming the file.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from scheduler.core.errors import ConfigurationError
from scheduler.core.units import format_duration

__all__ = [
    "DAY_S",
    "HOUR_S",
    "PROG",
    "Rows",
    "Section",
    "error_message",
    "one_line",
    "print_json",
    "print_sections",
    "seconds_text",
    "threshold_text",
    "warn",
    "writing",
]

PROG = "scheduler"
DAY_S = 86400.0
HOUR_S = 3600.0

Rows = list[tuple[str, str]]
Section = tuple[str, Rows]


def warn(message: str) -> None:
    """Print a one-line warning on stderr.

    Parameters
    ----------
    message
        The warning; line breaks are folded into spaces.
    """
    print(f"{PROG}: warning: {one_line(message)}", file=sys.stderr)


def one_line(text: str) -> str:
    """Fold ``text`` onto one line.

    Parameters
    ----------
    text
        Any message.

    Returns
    -------
    str
    """
    return " ".join(text.split())


def error_message(exc: BaseException) -> str:
    """One-line text of a handled error.

    Parameters
    ----------
    exc
        A :class:`~scheduler.core.errors.SchedlabError` or :class:`OSError`.

    Returns
    -------
    str
    """
    if isinstance(exc, OSError) and exc.filename is not None:
        return one_line(f"{exc.filename}: {exc.strerror or exc}")
    return one_line(str(exc))


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON with sorted keys.

    Parameters
    ----------
    data
        JSON-ready values.
    """
    print(json.dumps(data, indent=2, sort_keys=True))


def print_sections(sections: Sequence[Section]) -> None:
    """Print titled sections of ``label value`` rows, values aligned in one column.

    Parameters
    ----------
    sections
        ``(title, [(label, value), ...])`` pairs.
    """
    width = max((len(label) for _, rows in sections for label, _ in rows), default=0)
    for title, rows in sections:
        print(title)
        for label, value in rows:
            print(f"  {label:<{width}}  {value}")


def seconds_text(seconds: float | None, unit_s: float, unit: str) -> str:
    """``"144000 s (40.00 h)"``: seconds and the same in a larger unit.

    Parameters
    ----------
    seconds
        A duration in seconds, or ``None`` (printed as ``-``).
    unit_s, unit
        Size of the larger unit in seconds and its symbol.

    Returns
    -------
    str
    """
    if seconds is None:
        return "-"
    text = f"{seconds:.0f}" if float(seconds).is_integer() else f"{seconds:.1f}"
    return f"{text} s ({seconds / unit_s:.2f} {unit})"


def threshold_text(seconds: float) -> str:
    """``"40h (144000 s)"``, or ``"none"`` for no threshold.

    Parameters
    ----------
    seconds
        The threshold, seconds (``inf``: none).

    Returns
    -------
    str
    """
    if math.isinf(seconds):
        return "none"
    return f"{format_duration(seconds)} ({seconds:g} s)"


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Report an operating-system error while writing ``path`` as an error naming ``path``.

    Parameters
    ----------
    path
        The output file being written (atomically, through a temporary file).

    Yields
    ------
    None

    Raises
    ------
    ConfigurationError
        The block raised an :class:`OSError` (no such directory, permission denied, ...).
    """
    try:
        yield
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot write: {exc.strerror or exc}") from None
