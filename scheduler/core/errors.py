"""Errors raised by schedlab for bad input.

Every error about a file names the file, the line (1-based, counting header lines) and the
field, so a user can open the file at the right place.
"""

from __future__ import annotations

from pathlib import Path


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


class TableError(SchedlabError):
    """A table written by an earlier workflow step that cannot be read (corrupted, truncated,
    not parquet) or lacks what the step needs. The message names the file."""
