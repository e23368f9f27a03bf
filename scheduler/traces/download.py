"""Fetch a Parallel Workloads Archive trace: offline mirror first, then the network.

:func:`fetch_trace` gets the bytes of one workload log and writes them atomically:

1. **Mirror.** Each directory of ``mirror_dirs`` is searched, in order, for
   ``<name>.swf.gz``, then the file name of the URL (e.g. ``KTH-SP2-1996-2.1-cln.swf.gz``),
   then ``<name>.swf``. The first file found is used; a directory that does not exist is
   skipped.
2. **Download.** Without a mirror file, and unless ``offline``, the URL is downloaded with
   :mod:`urllib.request`, up to ``retries`` attempts with exponential back-off. A client error
   (HTTP 4xx, e.g. 404) fails at once; network errors, server errors (5xx) and truncated
   bodies are retried.
3. **Checksum.** When the source gives a SHA-256 digest, the fetched bytes must match it.
4. **Gzip.** A destination ending in ``.gz`` always receives gzip data: a plain ``.swf`` file is
   compressed (deterministically), a ``.gz`` payload that is not a complete gzip stream (an
   HTML error page, a truncated file) is refused.
5. **Write.** The destination is replaced atomically; on any error it is left untouched.

Every failure raises :class:`DownloadError`, whose message names the trace, the URL, the mirror
directories searched and how to supply the file by hand.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.client
import io
import json
import os
import posixpath
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler.core.atomic import atomic_write_bytes
from scheduler.core.errors import ConfigurationError, SchedlabError
from scheduler.core.version import __version__

__all__ = ["DownloadError", "FetchReport", "TraceSource", "fetch_trace", "write_fetch_report"]

_GZIP_MAGIC = b"\x1f\x8b"
_SHA256_RE = re.compile(r"[0-9a-fA-F]{64}")
_CHUNK_BYTES = 1 << 20
_USER_AGENT = f"schedlab/{__version__} (+urllib)"


class DownloadError(SchedlabError):
    """A trace could not be fetched (no mirror file, network failure, bad checksum or data)."""


@dataclass(frozen=True)
class TraceSource:
    """Where a workload log comes from.

    Attributes
    ----------
    name
        Short name of the trace, e.g. ``"KTH-SP2"``; mirror files are looked up as
        ``<name>.swf.gz`` and ``<name>.swf``. Must be a plain file-name stem (no ``/``).
    url
        Download address of the archive file, e.g.
        ``"https://www.cs.huji.ac.il/labs/parallel/workload/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz"``.
    sha256
        Expected SHA-256 digest of the archive file (64 hex digits, any case), or ``None`` to
        skip the check.
    """

    name: str
    url: str
    sha256: str | None = None

    def __post_init__(self) -> None:
        if not self.name or self.name in {".", ".."} or "/" in self.name or "\\" in self.name:
            raise ConfigurationError(
                f"trace name {self.name!r} cannot be used as a file name; "
                "expected e.g. 'KTH-SP2' (no '/' or '\\')"
            )
        if not self.url:
            raise ConfigurationError(f"{self.name}: empty URL; expected the archive's address")
        if self.sha256 is not None and not _SHA256_RE.fullmatch(self.sha256):
            raise ConfigurationError(
                f"{self.name}: sha256 {self.sha256!r} is not a SHA-256 digest; "
                "expected 64 hexadecimal digits"
            )

    @property
    def archive_filename(self) -> str:
        """File name of the archive: the last component of the URL path (may be ``""``)."""
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.url).path)
        return posixpath.basename(path)


@dataclass(frozen=True)
class FetchReport:
    """What :func:`fetch_trace` did.

    Attributes
    ----------
    name
        Name of the trace.
    url
        Download address of the trace.
    origin
        ``"mirror"`` when a mirror file was used, ``"download"`` when the URL was downloaded.
    source_path
        The mirror file used, or ``None`` for a download.
    sha256
        SHA-256 digest (lowercase hex) of the bytes written to the destination. Differs from
        the digest of the fetched bytes only when a plain file was gzip-compressed.
    expected_sha256
        The digest the source expected (as given), or ``None``.
    bytes
        Size of the file written, bytes.
    attempts
        HTTP attempts made (0 when a mirror file was used).
    """

    name: str
    url: str
    origin: str
    source_path: str | None
    sha256: str
    expected_sha256: str | None
    bytes: int
    attempts: int

    def to_dict(self) -> dict[str, object]:
        """The report as a JSON-ready dictionary (field name -> value)."""
        return dataclasses.asdict(self)


def fetch_trace(
    source: TraceSource,
    destination: str | os.PathLike[str],
    *,
    mirror_dirs: Sequence[str | os.PathLike[str]] = (),
    offline: bool = False,
    retries: int = 3,
    backoff_s: float = 2.0,
    timeout_s: float = 60.0,
    log: Callable[[str], None] | None = None,
    opener: Callable[..., Any] | None = None,
) -> FetchReport:
    """Fetch the trace ``source`` into ``destination`` (see the module docstring).

    Parameters
    ----------
    source
        The trace: name, URL and optional expected SHA-256.
    destination
        Output file; replaced atomically, parent directory created when missing. When it ends
        in ``.gz`` the content is always gzip data.
    mirror_dirs
        Directories searched, in order, before any download.
    offline
        Never use the network; fail when no mirror file exists.
    retries
        Total number of HTTP attempts (>= 1).
    backoff_s
        Pause before the second attempt, seconds; doubled before each further attempt
        (``backoff_s * 2**(attempt - 1)`` after attempt ``attempt``).
    timeout_s
        Network timeout of one attempt (connect and each read), seconds.
    log
        Called with one line of text per step; ``None`` to stay silent.
    opener
        Called as ``opener(request, timeout=timeout_s)`` and must return a response like
        :func:`urllib.request.urlopen` does (the default).

    Returns
    -------
    FetchReport
        Where the bytes came from, their digest and size, and the number of HTTP attempts.

    Raises
    ------
    DownloadError
        No mirror file and (offline, or every attempt failed, or a 4xx answer); checksum
        mismatch; a ``.gz`` payload that is not complete gzip data; an unreadable mirror file.
        The destination is then left untouched.
    ConfigurationError
        ``retries`` < 1, ``backoff_s`` < 0 or ``timeout_s`` <= 0.
    """
    if retries < 1:
        raise ConfigurationError(f"retries must be at least 1, got {retries}")
    if backoff_s < 0:
        raise ConfigurationError(f"backoff_s must be >= 0 s, got {backoff_s}")
    if timeout_s <= 0:
        raise ConfigurationError(f"timeout_s must be > 0 s, got {timeout_s}")
    say = _prefixed(source.name, log)
    dirs = [Path(directory) for directory in mirror_dirs]

    attempts = 0
    mirror_file = _find_mirror_file(source, dirs, say)
    if mirror_file is not None:
        say(f"using mirror {mirror_file}")
        try:
            data = mirror_file.read_bytes()
        except OSError as exc:
            raise DownloadError(
                f"{source.name}: cannot read mirror file {mirror_file}: {exc.strerror or exc}"
            ) from exc
        origin, source_path = "mirror", str(mirror_file)
        payload_name = mirror_file.name
        where = f"mirror file {mirror_file}"
    elif offline:
        say("offline: no mirror file, not downloading")
        raise DownloadError(_not_found_message(source, dirs, "offline mode, no download tried"))
    else:
        data, attempts = _download(
            source,
            dirs,
            retries=retries,
            backoff_s=backoff_s,
            timeout_s=timeout_s,
            say=say,
            opener=opener or urllib.request.urlopen,
        )
        origin, source_path = "download", None
        payload_name = source.archive_filename
        where = f"download of {source.url}"

    digest = hashlib.sha256(data).hexdigest()
    say(f"sha256 {digest} ({len(data)} bytes)")
    if source.sha256 is not None and digest != source.sha256.lower():
        hint = ""
        if origin == "mirror" and not payload_name.endswith(".gz"):
            hint = (
                f" (the expected digest is that of the archive file; put {source.name}.swf.gz "
                "in the mirror instead of a plain .swf file)"
            )
        raise DownloadError(
            f"{source.name}: checksum mismatch for the {where}: "
            f"expected sha256 {source.sha256.lower()}, got {digest}{hint}; nothing written"
        )

    if Path(destination).name.endswith(".gz"):
        data = _as_gzip(source, data, payload_name=payload_name, where=where, say=say)

    atomic_write_bytes(destination, data)
    say(f"wrote {destination} ({len(data)} bytes)")
    return FetchReport(
        name=source.name,
        url=source.url,
        origin=origin,
        source_path=source_path,
        sha256=hashlib.sha256(data).hexdigest(),
        expected_sha256=source.sha256,
        bytes=len(data),
        attempts=attempts,
    )


def write_fetch_report(report: FetchReport, path: str | os.PathLike[str]) -> None:
    """Write ``report`` as JSON (indent 2, sorted keys), atomically.

    Parameters
    ----------
    report
        The report of :func:`fetch_trace`.
    path
        Output file; replaced atomically.
    """
    text = json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))


def _prefixed(name: str, log: Callable[[str], None] | None) -> Callable[[str], None]:
    """A logger that prefixes each line with ``"<name>: "`` (a no-op when ``log`` is None)."""

    def say(message: str) -> None:
        if log is not None:
            log(f"{name}: {message}")

    return say


def _candidate_names(source: TraceSource) -> list[str]:
    """Mirror file names, in lookup order, without duplicates or empty names."""
    names = [f"{source.name}.swf.gz", source.archive_filename, f"{source.name}.swf"]
    return [name for index, name in enumerate(names) if name and name not in names[:index]]


def _find_mirror_file(
    source: TraceSource, dirs: Sequence[Path], say: Callable[[str], None]
) -> Path | None:
    """The first existing mirror file, or ``None``."""
    names = _candidate_names(source)
    for directory in dirs:
        if not directory.is_dir():
            say(f"mirror directory {directory} does not exist, skipped")
            continue
        for name in names:
            candidate = directory / name
            if candidate.is_file():
                return candidate
        say(f"mirror directory {directory} has none of {', '.join(names)}")
    return None


def _download(
    source: TraceSource,
    dirs: Sequence[Path],
    *,
    retries: int,
    backoff_s: float,
    timeout_s: float,
    say: Callable[[str], None],
    opener: Callable[..., Any],
) -> tuple[bytes, int]:
    """Download ``source.url``; return the body and the number of attempts made."""
    last_error = ""
    for attempt in range(1, retries + 1):
        say(f"downloading {source.url} (attempt {attempt}/{retries})")
        try:
            return _download_once(source.url, timeout_s, opener), attempt
        except urllib.error.HTTPError as exc:
            exc.close()
            last_error = f"HTTP {exc.code} {exc.reason}"
            if 400 <= exc.code < 500:
                say(f"attempt {attempt}/{retries} failed: {last_error} (not retried)")
                reason = f"the server answered {last_error}; not retried"
                raise DownloadError(_not_found_message(source, dirs, reason)) from exc
        except urllib.error.URLError as exc:
            last_error = f"{exc.reason}"
        except ValueError as exc:  # urlopen: unknown URL type, malformed URL
            raise DownloadError(
                _not_found_message(source, dirs, f"the URL cannot be used ({exc})")
            ) from exc
        except (OSError, http.client.HTTPException, _TruncatedError) as exc:
            last_error = _describe(exc)
        say(f"attempt {attempt}/{retries} failed: {last_error}")
        if attempt < retries:
            pause_s = backoff_s * 2 ** (attempt - 1)
            if pause_s > 0:
                say(f"waiting {pause_s:g} s before retrying")
                time.sleep(pause_s)
    raise DownloadError(
        _not_found_message(
            source,
            dirs,
            f"download failed after {retries} attempt{'s' if retries != 1 else ''}; "
            f"last error: {last_error}",
        )
    )


class _TruncatedError(Exception):
    """The body was shorter than its Content-Length."""


def _download_once(url: str, timeout_s: float, opener: Callable[..., Any]) -> bytes:
    """One HTTP GET of ``url``: the whole body, or an exception."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    response = opener(request, timeout=timeout_s)
    try:
        status = getattr(response, "status", None)
        if isinstance(status, int) and status >= 400:
            raise urllib.error.HTTPError(url, status, _reason(response), response.headers, None)
        expected = _content_length(response)
        body = response.read()
    finally:
        close = getattr(response, "close", None)
        if close is not None:
            close()
    if expected is not None and len(body) < expected:
        raise _TruncatedError(f"truncated body: got {len(body)} of {expected} bytes")
    return body


def _reason(response: Any) -> str:
    """The reason phrase of a response, or ``""``."""
    return str(getattr(response, "reason", "") or "")


def _content_length(response: Any) -> int | None:
    """The Content-Length of a response in bytes, or ``None`` when absent or invalid."""
    headers = getattr(response, "headers", None)
    value = headers.get("Content-Length") if headers is not None else None
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _describe(exc: BaseException) -> str:
    """A one-line description of a network error."""
    if isinstance(exc, http.client.IncompleteRead):
        received = len(exc.partial)
        if exc.expected is not None:
            return f"truncated body: got {received} bytes, {exc.expected} more expected"
        return f"truncated body: got {received} bytes"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _as_gzip(
    source: TraceSource,
    data: bytes,
    *,
    payload_name: str,
    where: str,
    say: Callable[[str], None],
) -> bytes:
    """``data`` as complete gzip data: checked when it is gzip, compressed when it is plain."""
    if data.startswith(_GZIP_MAGIC):
        _check_gzip(source, data, where)
        return data
    if payload_name.endswith(".gz"):
        start = data[:40].decode("ascii", errors="replace")
        raise DownloadError(
            f"{source.name}: the {where} is not gzip data (bad magic bytes; it starts with "
            f"{start!r}, maybe an HTML error page); expected a .swf.gz archive. Download "
            f"{source.url} by hand and check it"
        )
    say(f"{payload_name} is not compressed, gzipping it")
    return gzip.compress(data, mtime=0)


def _check_gzip(source: TraceSource, data: bytes, where: str) -> None:
    """Raise :class:`DownloadError` unless ``data`` decompresses completely (streamed)."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as stream:
            while stream.read(_CHUNK_BYTES):
                pass
    except (EOFError, OSError, zlib.error) as exc:
        raise DownloadError(
            f"{source.name}: the {where} is truncated or corrupt gzip data ({exc}); "
            f"expected a complete .swf.gz archive"
        ) from exc


def _not_found_message(source: TraceSource, dirs: Sequence[Path], reason: str) -> str:
    """Why the trace could not be fetched and how to supply it by hand."""
    names = " or ".join(_candidate_names(source))
    searched = ", ".join(str(directory) for directory in dirs) if dirs else "(none given)"
    return (
        f"{source.name}: cannot get the trace from {source.url}: {reason}. "
        f"No mirror file ({names}) in the mirror directories looked at: {searched}. "
        f"To supply it, download {source.url} by hand and put it in one of the mirror "
        f"directories as {source.name}.swf.gz (or set archive.mirror_dirs in the config)"
    )
