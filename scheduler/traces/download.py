"""Fetch a Parallel Workloads Archive trace: offline mirror first, then the network.

:func:`fetch_trace` gets the bytes of one workload log and writes them atomically:

1. **Mirror.** Each directory of ``mirror_dirs`` is searched, in order, for
   ``<name>.swf.gz``, then the file name of the URL (e.g. ``KTH-SP2-1996-2.1-cln.swf.gz``),
   then ``<name>.swf``. The first file found is used; a directory that does not exist is
   skipped.
2. **Download.** Without a mirror file, and unless ``offline``, the URL is downloaded with
   :mod:`urllib.request`, up to ``retries`` attempts with exponential back-off. A client error
   (HTTP 4xx, e.g. 404) fails at once; network errors, server errors (5xx) and truncated
   bodies are retried. The body is streamed to a temporary file next to the destination (never
   held in memory) and may not exceed ``max_bytes`` (default 2 GiB): a larger body, announced
   or not, fails at once and leaves nothing behind.
3. **URLs.** Only ``http:`` and ``https:`` URLs are downloaded, and a redirect is followed
   only to ``http:`` or ``https:``, never from ``https:`` down to ``http:``. A ``file:`` URL
   is accepted only when the file it names lies inside one of ``mirror_dirs``: its path, with
   ``..`` collapsed and symbolic links followed, must be inside a mirror directory (also
   resolved). Any other scheme (``ftp:``, ``data:``, ...) is refused.
4. **Checksum.** When the source gives a SHA-256 digest, the fetched bytes must match it (the
   digest is computed while the bytes are written).
5. **Gzip.** A destination ending in ``.gz`` always receives gzip data: a plain ``.swf`` file is
   compressed (deterministically), a ``.gz`` payload that is not a complete gzip stream (an
   HTML error page, a truncated file) is refused.
6. **Write.** The destination is replaced atomically; on any error it is left untouched and no
   temporary file remains.
7. **Report.** :class:`FetchReport` records where the bytes came from and their checksums: of
   the bytes fetched (``source_sha256``) and of the file written (``sha256``).
   :func:`source_checksum` gives the workflow the checksum a new fetch would get, so that a
   mirror file replaced under its name is fetched again (see there).

Every failure raises :class:`DownloadError`, whose message names the trace, the URL, the mirror
directories searched and how to supply the file by hand.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.client
import json
import os
import posixpath
import re
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler.core.atomic import atomic_path, atomic_write_bytes
from scheduler.core.errors import ConfigurationError, SchedlabError
from scheduler.core.flags import flag
from scheduler.core.version import __version__

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DownloadError",
    "FetchReport",
    "RefusedURLError",
    "SafeRedirectHandler",
    "TraceSource",
    "fetch_trace",
    "mirror_file",
    "source_checksum",
    "write_fetch_report",
]

#: Default largest body a download may have, bytes (2 GiB; the largest PWA log is ~0.3 GB).
DEFAULT_MAX_BYTES = 2 << 30

_GZIP_MAGIC = b"\x1f\x8b"
_SHA256_RE = re.compile(r"[0-9a-fA-F]{64}")
_CHUNK_BYTES = 1 << 20
#: Network reads are smaller: http.client copies each chunk it returns once more.
_NET_CHUNK_BYTES = 1 << 16
_USER_AGENT = f"schedlab/{__version__} (+urllib)"
_WEB_SCHEMES = ("http", "https")


class DownloadError(SchedlabError):
    """A trace could not be fetched (no mirror file, network failure, bad checksum or data)."""


class RefusedURLError(Exception):
    """A redirect to a URL that must not be followed (``https:`` to ``http:``, another scheme)."""


class SafeRedirectHandler(urllib.request.HTTPRedirectHandler):
    """urllib's redirect handler, refusing a redirect that leaves ``http:``/``https:`` or that
    goes from ``https:`` down to ``http:`` (:class:`RefusedURLError`)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        old_scheme = urllib.parse.urlsplit(req.full_url).scheme.lower()
        new_scheme = urllib.parse.urlsplit(newurl).scheme.lower()
        reason = ""
        if new_scheme not in _WEB_SCHEMES:
            reason = f"the {new_scheme or 'relative'} scheme is not followed"
        elif old_scheme == "https" and new_scheme == "http":
            reason = "a redirect from https to http would drop the encryption"
        if reason:
            if fp is not None:
                fp.close()
            raise RefusedURLError(
                f"refused the redirect (HTTP {code}) from {req.full_url} to {newurl}: {reason}"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


#: Handlers of the default opener (tests may add one for a loopback stand-in of https).
_HANDLERS: tuple[type[urllib.request.BaseHandler], ...] = (SafeRedirectHandler,)


def _default_opener(request: urllib.request.Request, *, timeout: float) -> Any:
    """:func:`urllib.request.urlopen` with :class:`SafeRedirectHandler`."""
    return urllib.request.build_opener(*_HANDLERS).open(request, timeout=timeout)


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
    source_sha256
        SHA-256 digest (lowercase hex) of the bytes fetched (the mirror file, or the body
        downloaded), before any compression: what :func:`source_checksum` compares a mirror
        file with. ``None`` in reports written before it was recorded.
    """

    name: str
    url: str
    origin: str
    source_path: str | None
    sha256: str
    expected_sha256: str | None
    bytes: int
    attempts: int
    source_sha256: str | None = None

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
    max_bytes: int = DEFAULT_MAX_BYTES,
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
        Directories searched, in order, before any download. A ``file:`` URL must name a file
        inside one of them.
    offline
        Never use the network; fail when no mirror file exists.
    retries
        Total number of HTTP attempts (>= 1).
    backoff_s
        Pause before the second attempt, seconds; doubled before each further attempt
        (``backoff_s * 2**(attempt - 1)`` after attempt ``attempt``).
    timeout_s
        Network timeout of one attempt (connect and each read), seconds.
    max_bytes
        Largest body a download may have, bytes (default :data:`DEFAULT_MAX_BYTES`, 2 GiB). A
        larger body fails at once (not retried), whether or not its length is announced.
    log
        Called with one line of text per step; ``None`` to stay silent.
    opener
        Called as ``opener(request, timeout=timeout_s)`` and must return a response like
        :func:`urllib.request.urlopen` does (the default is urllib's opener with
        :class:`SafeRedirectHandler`); the body is read in chunks with ``read(size)``.

    Returns
    -------
    FetchReport
        Where the bytes came from, their digest and size, and the number of HTTP attempts.

    Raises
    ------
    DownloadError
        No mirror file and (offline, or every attempt failed, or a 4xx answer); a body over
        ``max_bytes``; a refused URL or redirect; checksum mismatch; a ``.gz`` payload that is
        not complete gzip data; an unreadable mirror file. The destination is then left
        untouched.
    ConfigurationError
        ``retries`` < 1, ``backoff_s`` < 0, ``timeout_s`` <= 0 or ``max_bytes`` < 1.
    """
    offline = flag(offline, "offline")
    if retries < 1:
        raise ConfigurationError(f"retries must be at least 1, got {retries}")
    if backoff_s < 0:
        raise ConfigurationError(f"backoff_s must be >= 0 s, got {backoff_s}")
    if timeout_s <= 0:
        raise ConfigurationError(f"timeout_s must be > 0 s, got {timeout_s}")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise ConfigurationError(f"max_bytes must be a positive number of bytes, got {max_bytes!r}")
    say = _prefixed(source.name, log)
    dirs = [Path(directory) for directory in mirror_dirs]

    attempts = 0
    mirror_file = _find_mirror_file(source, dirs, say)
    if mirror_file is None and offline:
        say("offline: no mirror file, not downloading")
        raise DownloadError(_not_found_message(source, dirs, "offline mode, no download tried"))
    if mirror_file is None:
        _check_url(source, dirs)

    with atomic_path(destination) as tmp:
        if mirror_file is not None:
            say(f"using mirror {mirror_file}")
            try:
                size, digest = _copy_file(mirror_file, tmp)
            except OSError as exc:
                raise DownloadError(
                    f"{source.name}: cannot read mirror file {mirror_file}: {exc.strerror or exc}"
                ) from exc
            origin, source_path = "mirror", str(mirror_file)
            payload_name = mirror_file.name
            where = f"mirror file {mirror_file}"
        else:
            (size, digest), attempts = _download(
                source,
                dirs,
                tmp,
                retries=retries,
                backoff_s=backoff_s,
                timeout_s=timeout_s,
                max_bytes=max_bytes,
                say=say,
                opener=opener or _default_opener,
            )
            origin, source_path = "download", None
            payload_name = source.archive_filename
            where = f"download of {source.url}"

        say(f"sha256 {digest} ({size} bytes)")
        source_digest = digest
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

        if Path(destination).name.endswith(".gz") and _as_gzip(
            source, tmp, payload_name=payload_name, where=where, say=say
        ):
            size, digest = _file_digest(tmp)

    say(f"wrote {destination} ({size} bytes)")
    return FetchReport(
        name=source.name,
        url=source.url,
        origin=origin,
        source_path=source_path,
        sha256=digest,
        expected_sha256=source.sha256,
        bytes=size,
        attempts=attempts,
        source_sha256=source_digest,
    )


def mirror_file(source: TraceSource, mirror_dirs: Sequence[str | os.PathLike[str]]) -> Path | None:
    """The mirror file :func:`fetch_trace` would copy for ``source`` (the first of
    ``<name>.swf.gz``, the URL's file name, ``<name>.swf`` in the first directory of
    ``mirror_dirs`` holding one), or ``None`` when it would download."""
    return _find_mirror_file(source, [Path(directory) for directory in mirror_dirs], _silent)


def _silent(message: str) -> None:
    """A logger that says nothing."""


def source_checksum(
    source: TraceSource,
    mirror_dirs: Sequence[str | os.PathLike[str]],
    report_path: str | os.PathLike[str] | None = None,
) -> str | None:
    """What the download of ``source`` would fetch, as a checksum: the SHA-256 of its mirror
    file; without a mirror file, the checksum the last fetch recorded in its report
    (``report_path``, :attr:`FetchReport.source_sha256`, else its ``sha256``); None when there
    is neither.

    The workflow puts it in the download rule's ``params``: a mirror file whose content is
    replaced under the same name (whatever its modification time) changes it, so Snakemake
    fetches the log again and reruns what follows, also when the catalogue pins no checksum
    (``sha256: null``). The same content touched, or a mirror file removed once fetched, leaves
    it as it was: nothing reruns. A log downloaded from the archive keeps its recorded
    checksum: a file the archive changed is not noticed until the download runs again.
    """
    path = mirror_file(source, mirror_dirs)
    if path is not None:
        return _file_digest(path)[1]
    if report_path is None:
        return None
    try:
        report = json.loads(Path(report_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    recorded = report.get("source_sha256") or report.get("sha256")
    return recorded if isinstance(recorded, str) else None


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


def _check_url(source: TraceSource, dirs: Sequence[Path]) -> None:
    """Refuse a URL that may not be fetched: a scheme other than http/https, or a ``file:`` URL
    whose file (``..`` collapsed, symbolic links followed) is outside every mirror directory."""
    parts = urllib.parse.urlsplit(source.url)
    scheme = parts.scheme.lower()
    if scheme in _WEB_SCHEMES:
        return
    if scheme != "file":
        raise DownloadError(
            f"{source.name}: the URL {source.url} has the scheme {scheme or '(none)'!r}, which is "
            "not downloaded; expected an http: or https: URL (or a file: URL inside a mirror "
            "directory)"
        )
    searched = ", ".join(str(directory) for directory in dirs) if dirs else "(none given)"
    target: Path | None = None
    if parts.netloc in ("", "localhost"):
        target = Path(urllib.request.url2pathname(parts.path)).resolve()
    for directory in dirs:
        if target is not None and target.is_relative_to(directory.resolve()):
            return
    raise DownloadError(
        f"{source.name}: refused the file: URL {source.url}: a file: URL must name a file inside "
        f"one of the mirror directories (archive.mirror_dirs: {searched}). Put the file in a "
        f"mirror directory as {source.name}.swf.gz instead"
    )


def _copy_file(path: Path, target: Path) -> tuple[int, str]:
    """Copy ``path`` to ``target`` in chunks; return the size and the SHA-256 digest."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as source, open(target, "wb") as out:
        while chunk := source.read(_CHUNK_BYTES):
            size += len(chunk)
            digest.update(chunk)
            out.write(chunk)
    return size, digest.hexdigest()


def _file_digest(path: Path) -> tuple[int, str]:
    """The size and the SHA-256 digest of ``path``, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK_BYTES):
            size += len(chunk)
            digest.update(chunk)
    return size, digest.hexdigest()


def _download(
    source: TraceSource,
    dirs: Sequence[Path],
    target: Path,
    *,
    retries: int,
    backoff_s: float,
    timeout_s: float,
    max_bytes: int,
    say: Callable[[str], None],
    opener: Callable[..., Any],
) -> tuple[tuple[int, str], int]:
    """Download ``source.url`` into ``target``; return (size, sha256) and the attempts made."""
    last_error = ""
    for attempt in range(1, retries + 1):
        say(f"downloading {source.url} (attempt {attempt}/{retries})")
        try:
            return _download_once(source.url, timeout_s, opener, target, max_bytes), attempt
        except _TooLargeError as exc:
            say(f"attempt {attempt}/{retries} failed: {exc} (not retried)")
            raise DownloadError(
                f"{source.name}: the download of {source.url} {exc}; nothing written. Raise the "
                f"limit (max_bytes; in the workflow: archive.max_bytes) if the file is genuine, or "
                f"download it by hand and put it in a mirror directory as {source.name}.swf.gz"
            ) from None
        except RefusedURLError as exc:
            say(f"attempt {attempt}/{retries} failed: {exc} (not retried)")
            raise DownloadError(_not_found_message(source, dirs, str(exc))) from None
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


class _TooLargeError(Exception):
    """The body is (or announces to be) larger than the size limit."""


def _download_once(
    url: str, timeout_s: float, opener: Callable[..., Any], target: Path, max_bytes: int
) -> tuple[int, str]:
    """One HTTP GET of ``url``, streamed into ``target`` (replacing what it held): the size and
    the SHA-256 digest of the body, or an exception."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    response = opener(request, timeout=timeout_s)
    digest = hashlib.sha256()
    size = 0
    try:
        status = getattr(response, "status", None)
        if isinstance(status, int) and status >= 400:
            raise urllib.error.HTTPError(url, status, _reason(response), response.headers, None)
        expected = _content_length(response)
        if expected is not None and expected > max_bytes:
            raise _TooLargeError(
                f"announces {expected} bytes, more than the limit of {max_bytes} bytes"
            )
        with open(target, "wb") as out:
            while chunk := response.read(_NET_CHUNK_BYTES):
                size += len(chunk)
                if size > max_bytes:
                    raise _TooLargeError(
                        f"is larger than the limit of {max_bytes} bytes (stopped after {size})"
                    )
                digest.update(chunk)
                out.write(chunk)
    finally:
        close = getattr(response, "close", None)
        if close is not None:
            close()
    if expected is not None and size < expected:
        raise _TruncatedError(f"truncated body: got {size} of {expected} bytes")
    return size, digest.hexdigest()


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
    if isinstance(exc, _TruncatedError):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _as_gzip(
    source: TraceSource,
    path: Path,
    *,
    payload_name: str,
    where: str,
    say: Callable[[str], None],
) -> bool:
    """Make the file ``path`` complete gzip data: checked when it is gzip, compressed in place
    when it is plain. True when it was compressed (its digest changed)."""
    with open(path, "rb") as handle:
        start = handle.read(40)
    if start.startswith(_GZIP_MAGIC):
        _check_gzip(source, path, where)
        return False
    if payload_name.endswith(".gz"):
        text = start.decode("ascii", errors="replace")
        raise DownloadError(
            f"{source.name}: the {where} is not gzip data (bad magic bytes; it starts with "
            f"{text!r}, maybe an HTML error page); expected a .swf.gz archive. Download "
            f"{source.url} by hand and check it"
        )
    say(f"{payload_name} is not compressed, gzipping it")
    _gzip_in_place(path)
    return True


def _gzip_in_place(path: Path) -> None:
    """Compress ``path`` in chunks; the bytes of ``gzip.compress(data, mtime=0)`` (level 9)."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".gz.tmp")
    compressed = Path(name)
    try:
        # gzip.compress(data, mtime=0) is zlib.compress(data, 9, wbits=31): same stream here
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        with open(path, "rb") as plain, os.fdopen(fd, "wb") as out:
            while chunk := plain.read(_CHUNK_BYTES):
                out.write(packer.compress(chunk))
            out.write(packer.flush())
        os.replace(compressed, path)
    except BaseException:
        compressed.unlink(missing_ok=True)
        raise


def _check_gzip(source: TraceSource, path: Path, where: str) -> None:
    """Raise :class:`DownloadError` unless the file ``path`` decompresses completely (streamed)."""
    try:
        with gzip.open(path, mode="rb") as stream:
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
