"""Errors raised by schedlab for bad input.

Every error about a file names the file, the line (1-based, counting header lines) and the
field, so a user can open the file at the right place. Input echoed in a message (a bad token, a
malformed line, an unknown name) goes through :func:`quote`, which keeps it short: a 50 MB line
must not end up whole on stderr and in a rule's log.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "QUOTE_LIMIT",
    "ConfigurationError",
    "NoJobsError",
    "SchedlabError",
    "TableError",
    "TraceFormatError",
    "quote",
]

#: Characters of user input that :func:`quote` keeps.
QUOTE_LIMIT = 200


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """Quote user input for an error message, cut to ``limit`` characters.

    Parameters
    ----------
    value
        Text (quoted like :func:`repr`), or any other object (its :func:`repr`).
    limit
        Characters of the input kept; longer input ends with ``…`` and its total length.

    Returns
    -------
    str
        ``'12x'``; ``'abc…' (52,428,800 characters)`` for a long text.

    Examples
    --------
    >>> quote("12x")
    "'12x'"
    >>> quote("abcdef", limit=3)
    "'abc…' (6 characters)"
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit] + '…'!r} ({len(value):,} characters)"
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


class SchedlabError(Exception):
    """Base class of every error schedlab raises on purpose (never a bare traceback)."""


class TraceFormatError(SchedlabError):
    """A workload file that cannot be read as SWF.

    Parameters
    ----------
    path
        The file that holds the problem.
    message
        What is wrong, in words a user understands.
    line
        1-based line number in the (decompressed) file, or ``None`` when the problem is the
        whole file (empty, truncated gzip, missing header key).
    field
        Name of the SWF field (e.g. ``"run_s"``) or header key (e.g. ``"MaxProcs"``).
    """

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        if field is not None:
            where += f": field {field}"
        super().__init__(f"{where}: {message}")


class ConfigurationError(SchedlabError):
    """An argument or configuration value that cannot be used (unknown policy, bad duration...)."""


class NoJobsError(SchedlabError):
    """No job is left (e.g. after the strong filter) where a result needs jobs: a summary of
    zero jobs (average wait 0 s, bounded slowdown 0) would look like a result and is none.

    Attributes
    ----------
    report
        What removed the jobs (e.g. the strong filter's report), or ``None``.
    """

    def __init__(self, message: str, report: object = None) -> None:
        super().__init__(message)
        self.report = report


class TableError(SchedlabError):
    """A table written by an earlier workflow step that cannot be read (corrupted, truncated,
    not parquet) or lacks what the step needs. The message names the file."""
