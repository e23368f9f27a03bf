"""Errors raised by schedlab for bad input.

Every error about a file names the file, the line (1-based, counting header lines) and the
field, so a user can open the file at the right place. Input echoed in a message (a bad token, a
malformed line, an unknown name) goes through :func:`quote`, which keeps it short: a 50 MB line
must not end up whole on stderr and in a rule's log.
"""

from __future__ import annotations

import errno as errno_codes
import os
import re
from pathlib import Path

__all__ = [
    "QUOTE_LIMIT",
    "ConfigurationError",
    "NoJobsError",
    "SchedlabError",
    "TableError",
    "TraceFormatError",
    "os_error_cause",
    "quote",
]

#: Characters of user input that :func:`quote` keeps.
QUOTE_LIMIT = 200
#: How Rust libraries (polars) name an operating-system error in their message.
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")


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


def os_error_cause(error: BaseException) -> OSError | None:
    """The operating-system error behind ``error``: the first ``OSError`` with an error number
    in its chain of causes and contexts (``error`` itself first), or one rebuilt from a
    library's message that names it (polars: ``"... No space left on device (os error 28)"``);
    None when there is none.

    A library may hide an I/O error behind one of its own raised while cleaning up (matplotlib's
    PDF writer on a full disk: ``AttributeError: 'Stream' object has no attribute 'pos'``,
    raised during the handling of ``OSError: [Errno 28] No space left on device``): the real
    cause is then this function's answer, not ``error``.

    Examples
    --------
    >>> try:
    ...     try:
    ...         raise OSError(28, "No space left on device")
    ...     except OSError:
    ...         raise AttributeError("'Stream' object has no attribute 'pos'")
    ... except AttributeError as masked:
    ...     print(os_error_cause(masked))
    [Errno 28] No space left on device
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno is not None:
            return current
        match = _RUST_OS_ERROR.search(str(current))
        if match is not None and int(match.group(1)) in errno_codes.errorcode:
            number = int(match.group(1))
            return OSError(number, os.strerror(number))
        current = current.__cause__ or current.__context__
    return None
