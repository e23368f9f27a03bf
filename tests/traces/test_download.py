"""Tests of :mod:`scheduler.traces.download` with real files and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scheduler.core.errors import ConfigurationError, SchedlabError
from scheduler.traces import download
from scheduler.traces.download import (
    DownloadError,
    FetchReport,
    TraceSource,
    fetch_trace,
    mirror_file,
    source_checksum,
    write_fetch_report,
)

ARCHIVE_NAME = "KTH-SP2-1996-2.1-cln.swf.gz"
PWA_URL = "https://www.cs.huji.ac.il/labs/parallel/workload/l_kth_sp2/" + ARCHIVE_NAME
PLAIN_SWF = b"; Version: 2.2\n; MaxProcs: 4\n1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1\n"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def no_network(*args: Any, **kwargs: Any) -> Any:
    """An opener that fails the test: the network must not be used."""
    pytest.fail(f"unexpected network call: {args!r} {kwargs!r}")


# --- local HTTP server -------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """One answer of the local server: status, body, announced length, delay before answering."""

    status: int = 200
    body: bytes = b""
    content_length: int | None = None  # None: the true length of body
    delay_s: float = 0.0
    send_length: bool = True  # False: no Content-Length header, the body ends with the connection
    location: str | None = None  # a Location header (for a 3xx status)


class LocalServer:
    """A ThreadingHTTPServer whose answers per path are scripted (the last one repeats)."""

    def __init__(self) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.hits: dict[str, int] = {}
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with server.lock:
                    count = server.hits.get(self.path, 0)
                    server.hits[self.path] = count + 1
                    replies = server.routes.get(self.path, [Reply(status=404, body=b"no")])
                reply = replies[min(count, len(replies) - 1)]
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                length = len(reply.body) if reply.content_length is None else reply.content_length
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/octet-stream")
                if reply.send_length:
                    self.send_header("Content-Length", str(length))
                if reply.location is not None:
                    self.send_header("Location", reply.location)
                self.end_headers()
                self.wfile.write(reply.body)
                self.wfile.flush()
                self.close_connection = True  # a short body ends with the connection

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # the client gave up (timeout test): a broken pipe is expected

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def serve(self, path: str, *replies: Reply) -> str:
        """Script the answers to GET ``path``; return its URL."""
        self.routes[path] = list(replies)
        return self.url(path)

    def url(self, path: str) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{path}"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    local.thread.start()
    try:
        yield local
    finally:
        local.httpd.shutdown()
        local.httpd.server_close()
        local.thread.join(timeout=5)


@pytest.fixture
def kth_bytes(kth_path: Path) -> bytes:
    return kth_path.read_bytes()


@pytest.fixture
def lines() -> list[str]:
    return []


def kth_source(url: str = PWA_URL, sha: str | None = None) -> TraceSource:
    return TraceSource(name="KTH-SP2", url=url, sha256=sha)


# --- TraceSource -------------------------------------------------------------------------------


def test_archive_filename_is_the_url_basename() -> None:
    assert kth_source().archive_filename == ARCHIVE_NAME
    assert TraceSource("X", "http://h/a/b%20c.swf.gz?x=1").archive_filename == "b c.swf.gz"


@pytest.mark.parametrize(
    ("name", "url", "sha"),
    [("", PWA_URL, None), ("a/b", PWA_URL, None), ("X", "", None), ("X", PWA_URL, "abc")],
)
def test_invalid_source_is_a_configuration_error(name: str, url: str, sha: str | None) -> None:
    with pytest.raises(ConfigurationError):
        TraceSource(name, url, sha)


@pytest.mark.parametrize(
    "kwargs", [{"retries": 0}, {"backoff_s": -1.0}, {"timeout_s": 0.0}], ids=str
)
def test_invalid_arguments_are_configuration_errors(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        fetch_trace(kth_source(), tmp_path / "out.swf.gz", opener=no_network, **kwargs)


# --- mirror --------------------------------------------------------------------------------------


def test_mirror_hit_by_trace_name(tmp_path: Path, kth_bytes: bytes, lines: list[str]) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    dest = tmp_path / "out" / "KTH-SP2.swf.gz"

    report = fetch_trace(
        kth_source(), dest, mirror_dirs=[mirror], opener=no_network, log=lines.append
    )

    assert dest.read_bytes() == kth_bytes
    assert report.origin == "mirror"
    assert report.source_path == str(mirror / "KTH-SP2.swf.gz")
    assert report.attempts == 0
    assert report.bytes == len(kth_bytes)
    assert report.sha256 == sha256(kth_bytes)
    assert f"KTH-SP2: using mirror {mirror / 'KTH-SP2.swf.gz'}" in lines


def test_mirror_hit_by_archive_filename(tmp_path: Path, kth_bytes: bytes) -> None:
    (tmp_path / ARCHIVE_NAME).write_bytes(kth_bytes)
    dest = tmp_path / "out.swf.gz"

    report = fetch_trace(kth_source(), dest, mirror_dirs=[str(tmp_path)], opener=no_network)

    assert report.source_path == str(tmp_path / ARCHIVE_NAME)
    assert dest.read_bytes() == kth_bytes


def test_mirror_file_names_are_tried_in_order(tmp_path: Path, kth_bytes: bytes) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf").write_bytes(PLAIN_SWF)
    (mirror / ARCHIVE_NAME).write_bytes(gzip.compress(PLAIN_SWF))
    dest = tmp_path / "out.swf.gz"
    assert fetch_trace(kth_source(), dest, mirror_dirs=[mirror]).source_path == str(
        mirror / ARCHIVE_NAME
    )

    (mirror / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    report = fetch_trace(kth_source(), dest, mirror_dirs=[mirror], opener=no_network)
    assert report.source_path == str(mirror / "KTH-SP2.swf.gz")
    assert dest.read_bytes() == kth_bytes


def test_mirror_directories_are_searched_in_order(tmp_path: Path, kth_bytes: bytes) -> None:
    first, second, empty = tmp_path / "first", tmp_path / "second", tmp_path / "empty"
    for directory in (first, second, empty):
        directory.mkdir()
    # The first directory wins even though it only has the less preferred file name.
    (first / ARCHIVE_NAME).write_bytes(kth_bytes)
    (second / "KTH-SP2.swf.gz").write_bytes(gzip.compress(PLAIN_SWF))

    report = fetch_trace(
        kth_source(), tmp_path / "out.swf.gz", mirror_dirs=[empty, first, second], opener=no_network
    )

    assert report.source_path == str(first / ARCHIVE_NAME)
    assert (tmp_path / "out.swf.gz").read_bytes() == kth_bytes


def test_missing_mirror_directory_is_skipped(
    tmp_path: Path, kth_bytes: bytes, lines: list[str]
) -> None:
    missing = tmp_path / "does-not-exist"
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf.gz").write_bytes(kth_bytes)

    report = fetch_trace(
        kth_source(),
        tmp_path / "out.swf.gz",
        mirror_dirs=[missing, mirror],
        opener=no_network,
        log=lines.append,
    )

    assert report.origin == "mirror"
    assert any(str(missing) in line and "does not exist" in line for line in lines)
    assert not missing.exists()


def test_plain_swf_mirror_file_is_gzipped(tmp_path: Path, lines: list[str]) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf").write_bytes(PLAIN_SWF)
    dest = tmp_path / "out.swf.gz"

    report = fetch_trace(kth_source(), dest, mirror_dirs=[mirror], log=lines.append)

    written = dest.read_bytes()
    assert written.startswith(b"\x1f\x8b")
    assert gzip.decompress(written) == PLAIN_SWF
    assert report.sha256 == sha256(written)
    assert report.bytes == len(written)
    # Deterministic output: a second fetch writes the very same bytes.
    fetch_trace(kth_source(), tmp_path / "again.swf.gz", mirror_dirs=[mirror])
    assert (tmp_path / "again.swf.gz").read_bytes() == written


def test_plain_destination_gets_the_bytes_unchanged(tmp_path: Path) -> None:
    (tmp_path / "KTH-SP2.swf").write_bytes(PLAIN_SWF)
    dest = tmp_path / "out" / "KTH-SP2.swf"
    fetch_trace(kth_source(), dest, mirror_dirs=[tmp_path], opener=no_network)
    assert dest.read_bytes() == PLAIN_SWF


# --- checksum ------------------------------------------------------------------------------------


def test_checksum_match_is_accepted_in_any_case(tmp_path: Path, kth_bytes: bytes) -> None:
    (tmp_path / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    expected = sha256(kth_bytes).upper()
    dest = tmp_path / "out.swf.gz"

    report = fetch_trace(kth_source(sha=expected), dest, mirror_dirs=[tmp_path])

    assert report.sha256 == expected.lower()
    assert report.expected_sha256 == expected
    assert dest.read_bytes() == kth_bytes


def test_checksum_mismatch_writes_nothing(tmp_path: Path, kth_bytes: bytes) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    wrong = "0" * 64

    with pytest.raises(DownloadError) as info:
        fetch_trace(kth_source(sha=wrong), out_dir / "KTH-SP2.swf.gz", mirror_dirs=[mirror])

    message = str(info.value)
    assert wrong in message
    assert sha256(kth_bytes) in message
    assert "KTH-SP2" in message
    assert str(mirror / "KTH-SP2.swf.gz") in message
    assert list(out_dir.iterdir()) == []


def test_checksum_mismatch_leaves_existing_destination(tmp_path: Path, kth_bytes: bytes) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    dest = out_dir / "KTH-SP2.swf.gz"
    dest.write_bytes(b"previous content")

    with pytest.raises(DownloadError, match="checksum mismatch"):
        fetch_trace(kth_source(sha="f" * 64), dest, mirror_dirs=[mirror])

    assert dest.read_bytes() == b"previous content"
    assert [path.name for path in out_dir.iterdir()] == ["KTH-SP2.swf.gz"]


def test_checksum_mismatch_of_a_download_names_the_url(
    tmp_path: Path, server: LocalServer, kth_bytes: bytes
) -> None:
    url = server.serve("/kth.swf.gz", Reply(body=kth_bytes))
    with pytest.raises(DownloadError) as info:
        fetch_trace(kth_source(url, sha="1" * 64), tmp_path / "out.swf.gz", backoff_s=0)
    assert url in str(info.value)
    assert "1" * 64 in str(info.value) and sha256(kth_bytes) in str(info.value)
    assert list(tmp_path.iterdir()) == []


# --- download ------------------------------------------------------------------------------------


def test_download_from_local_server(
    tmp_path: Path, server: LocalServer, kth_bytes: bytes, lines: list[str]
) -> None:
    url = server.serve(f"/l_kth_sp2/{ARCHIVE_NAME}", Reply(body=kth_bytes))
    dest = tmp_path / "traces" / "KTH-SP2.swf.gz"

    report = fetch_trace(
        kth_source(url, sha=sha256(kth_bytes)),
        dest,
        mirror_dirs=[tmp_path / "no-mirror"],
        backoff_s=0,
        log=lines.append,
    )

    assert dest.read_bytes() == kth_bytes
    assert report.origin == "download"
    assert report.source_path is None
    assert report.attempts == 1
    assert report.sha256 == sha256(kth_bytes)
    assert server.hits[f"/l_kth_sp2/{ARCHIVE_NAME}"] == 1
    assert all(line.startswith("KTH-SP2: ") for line in lines)


def test_mirror_is_preferred_over_download(tmp_path: Path, kth_bytes: bytes) -> None:
    (tmp_path / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    report = fetch_trace(
        kth_source(), tmp_path / "out.swf.gz", mirror_dirs=[tmp_path], opener=no_network
    )
    assert report.origin == "mirror"


def test_server_errors_are_retried(
    tmp_path: Path, server: LocalServer, kth_bytes: bytes, lines: list[str]
) -> None:
    url = server.serve("/kth.swf.gz", Reply(status=503), Reply(status=503), Reply(body=kth_bytes))
    dest = tmp_path / "out.swf.gz"

    report = fetch_trace(kth_source(url), dest, backoff_s=0, log=lines.append)

    assert report.attempts == 3
    assert server.hits["/kth.swf.gz"] == 3
    assert dest.read_bytes() == kth_bytes
    assert any(line.startswith("KTH-SP2: attempt 2/3 failed: HTTP 503") for line in lines)


def test_not_found_is_not_retried(tmp_path: Path, server: LocalServer) -> None:
    url = server.serve("/missing.swf.gz", Reply(status=404, body=b"not here"))

    with pytest.raises(DownloadError) as info:
        fetch_trace(kth_source(url), tmp_path / "out.swf.gz", retries=5, backoff_s=0)

    assert server.hits["/missing.swf.gz"] == 1
    assert url in str(info.value)
    assert "404" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_retries_exhausted(tmp_path: Path, server: LocalServer) -> None:
    url = server.serve("/kth.swf.gz", Reply(status=503, body=b"busy"))
    mirror = tmp_path / "mirror"
    mirror.mkdir()

    with pytest.raises(DownloadError) as info:
        fetch_trace(
            kth_source(url), tmp_path / "out.swf.gz", mirror_dirs=[mirror], retries=3, backoff_s=0
        )

    message = str(info.value)
    assert server.hits["/kth.swf.gz"] == 3
    assert "KTH-SP2" in message
    assert url in message
    assert "mirror" in message
    assert str(mirror) in message
    assert "503" in message
    assert "3 attempts" in message
    assert isinstance(info.value, SchedlabError)


def test_connection_refused_is_retried(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/{ARCHIVE_NAME}"
    lines: list[str] = []

    with pytest.raises(DownloadError, match="after 2 attempts") as info:
        fetch_trace(
            kth_source(url), tmp_path / "out.swf.gz", retries=2, backoff_s=0, log=lines.append
        )

    assert "refused" in str(info.value).lower()
    assert sum("failed" in line for line in lines) == 2


def test_truncated_body_is_retried(
    tmp_path: Path, server: LocalServer, kth_bytes: bytes, lines: list[str]
) -> None:
    half = kth_bytes[: len(kth_bytes) // 2]
    url = server.serve(
        "/kth.swf.gz",
        Reply(body=half, content_length=len(kth_bytes)),
        Reply(body=kth_bytes),
    )
    dest = tmp_path / "out.swf.gz"

    report = fetch_trace(kth_source(url), dest, backoff_s=0, log=lines.append)

    assert report.attempts == 2
    assert dest.read_bytes() == kth_bytes
    assert any("attempt 1/3 failed: truncated" in line for line in lines)


def test_always_truncated_body_fails(tmp_path: Path, server: LocalServer) -> None:
    url = server.serve("/kth.swf.gz", Reply(body=b"\x1f\x8b" + b"x" * 10, content_length=5000))
    with pytest.raises(DownloadError, match="truncated"):
        fetch_trace(kth_source(url), tmp_path / "out.swf.gz", retries=2, backoff_s=0)
    assert server.hits["/kth.swf.gz"] == 2
    assert list(tmp_path.iterdir()) == []


def test_timeout_is_retried(tmp_path: Path, server: LocalServer, kth_bytes: bytes) -> None:
    url = server.serve("/kth.swf.gz", Reply(body=kth_bytes, delay_s=1.0), Reply(body=kth_bytes))
    report = fetch_trace(kth_source(url), tmp_path / "out.swf.gz", timeout_s=0.2, backoff_s=0)
    assert report.attempts == 2


def test_backoff_doubles(
    tmp_path: Path, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(download.time, "sleep", pauses.append)
    url = server.serve("/kth.swf.gz", Reply(status=500))
    with pytest.raises(DownloadError):
        fetch_trace(kth_source(url), tmp_path / "out.swf.gz", retries=4, backoff_s=0.5)
    assert pauses == [0.5, 1.0, 2.0]


def test_opener_gets_the_timeout(tmp_path: Path, kth_bytes: bytes) -> None:
    calls: list[dict[str, Any]] = []

    class Response:
        def __init__(self) -> None:
            self.status = 200
            self.headers = {"Content-Length": str(len(kth_bytes))}

            self.body = [kth_bytes]

        def read(self, size: int = -1) -> bytes:
            return self.body.pop() if self.body else b""

        def close(self) -> None:
            pass

    def opener(request: Any, **kwargs: Any) -> Response:
        calls.append({"url": request.full_url, **kwargs})
        return Response()

    fetch_trace(kth_source(), tmp_path / "out.swf.gz", timeout_s=7.5, opener=opener)
    assert calls == [{"url": PWA_URL, "timeout": 7.5}]


# --- offline -------------------------------------------------------------------------------------


def test_offline_without_mirror_fails_without_network(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    with pytest.raises(DownloadError) as info:
        fetch_trace(
            kth_source(),
            tmp_path / "out.swf.gz",
            mirror_dirs=[mirror],
            offline=True,
            opener=no_network,
        )
    message = str(info.value)
    assert "KTH-SP2" in message
    assert PWA_URL in message
    assert str(mirror) in message
    assert f"download {PWA_URL} by hand" in message
    assert "KTH-SP2.swf.gz" in message
    assert "archive.mirror_dirs" in message
    assert [path.name for path in tmp_path.iterdir()] == ["mirror"]


def test_offline_with_mirror_works(tmp_path: Path, kth_bytes: bytes) -> None:
    (tmp_path / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    report = fetch_trace(
        kth_source(),
        tmp_path / "out" / "k.swf.gz",
        mirror_dirs=[tmp_path],
        offline=True,
        opener=no_network,
    )
    assert report.origin == "mirror"


# --- gzip sanity ---------------------------------------------------------------------------------


def test_html_page_downloaded_as_gz_is_refused(tmp_path: Path, server: LocalServer) -> None:
    url = server.serve("/kth.swf.gz", Reply(body=b"<html><body>Moved</body></html>"))
    with pytest.raises(DownloadError, match="not gzip") as info:
        fetch_trace(kth_source(url), tmp_path / "out.swf.gz", backoff_s=0)
    assert "KTH-SP2" in str(info.value)
    assert server.hits["/kth.swf.gz"] == 1
    assert list(tmp_path.iterdir()) == []


def test_non_gzip_mirror_gz_file_is_refused(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf.gz").write_bytes(b"<!DOCTYPE html>")
    with pytest.raises(DownloadError, match="not gzip"):
        fetch_trace(kth_source(), tmp_path / "out.swf.gz", mirror_dirs=[mirror])
    assert not (tmp_path / "out.swf.gz").exists()


def test_truncated_gzip_mirror_file_is_refused(tmp_path: Path, kth_bytes: bytes) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf.gz").write_bytes(kth_bytes[: len(kth_bytes) // 2])
    with pytest.raises(DownloadError, match="truncated or corrupt gzip"):
        fetch_trace(kth_source(), tmp_path / "out.swf.gz", mirror_dirs=[mirror])
    assert not (tmp_path / "out.swf.gz").exists()


# --- report --------------------------------------------------------------------------------------


def test_report_round_trip(tmp_path: Path, kth_bytes: bytes) -> None:
    (tmp_path / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    report = fetch_trace(
        kth_source(sha=sha256(kth_bytes)), tmp_path / "out.swf.gz", mirror_dirs=[tmp_path]
    )
    path = tmp_path / "reports" / "fetch.json"

    write_fetch_report(report, path)

    text = path.read_text(encoding="utf-8")
    loaded = json.loads(text)
    assert loaded == report.to_dict()
    assert FetchReport(**loaded) == report
    assert list(loaded) == sorted(loaded)
    assert text.startswith('{\n  "attempts": 0,')
    assert set(loaded) == {
        "name",
        "url",
        "origin",
        "source_path",
        "sha256",
        "expected_sha256",
        "bytes",
        "attempts",
        "source_sha256",
    }


# --- the checksum of what a download would fetch (the workflow's rerun trigger) ---------------


def test_source_checksum_is_the_mirror_files_else_the_recorded_one(
    tmp_path: Path, kth_bytes: bytes
) -> None:
    mirror, dest = tmp_path / "mirror", tmp_path / "out" / "KTH-SP2.swf.gz"
    mirror.mkdir()
    (mirror / "KTH-SP2.swf.gz").write_bytes(kth_bytes)
    report_path = tmp_path / "out" / "KTH-SP2.fetch.json"
    source = kth_source()
    assert mirror_file(source, [mirror]) == mirror / "KTH-SP2.swf.gz"
    assert source_checksum(source, [mirror], report_path) == sha256(kth_bytes)
    report = fetch_trace(source, dest, mirror_dirs=[mirror])
    assert report.source_sha256 == report.sha256 == sha256(kth_bytes)
    write_fetch_report(report, report_path)
    # other content under the same name: another checksum
    (mirror / "KTH-SP2.swf.gz").write_bytes(gzip.compress(b"; MaxProcs: 1\n", mtime=0))
    assert source_checksum(source, [mirror], report_path) != report.source_sha256
    # no mirror file any more: the one the last fetch recorded (nothing to fetch again)
    (mirror / "KTH-SP2.swf.gz").unlink()
    assert mirror_file(source, [mirror]) is None
    assert source_checksum(source, [mirror], report_path) == report.source_sha256
    assert source_checksum(source, [mirror], tmp_path / "none.json") is None
    assert source_checksum(source, [mirror]) is None


def test_a_plain_mirror_file_records_the_checksum_of_the_bytes_fetched(
    tmp_path: Path, kth_path: Path
) -> None:
    plain = gzip.decompress(kth_path.read_bytes())
    (tmp_path / "KTH-SP2.swf").write_bytes(plain)
    report = fetch_trace(kth_source(), tmp_path / "out.swf.gz", mirror_dirs=[tmp_path])
    assert report.source_sha256 == sha256(plain) == source_checksum(kth_source(), [tmp_path])
    assert report.sha256 == sha256((tmp_path / "out.swf.gz").read_bytes()) != sha256(plain)


# --- bounded reads (issue #11, item 4) -----------------------------------------------------------


def _random_gzip(size: int) -> bytes:
    """A valid gzip stream of ``size`` bytes or a little more (incompressible content)."""
    import os

    return gzip.compress(os.urandom(size), compresslevel=1, mtime=0)


def test_body_over_the_limit_without_length_fails_and_keeps_nothing(
    tmp_path: Path, server: LocalServer
) -> None:
    import tracemalloc

    body = b"\x1f\x8b" + b"x" * (3 << 20)
    url = server.serve("/big.swf.gz", Reply(body=body, send_length=False))
    out_dir = tmp_path / "out"
    out_dir.mkdir()

    tracemalloc.start()
    try:
        with pytest.raises(DownloadError) as info:
            fetch_trace(kth_source(url), out_dir / "KTH-SP2.swf.gz", max_bytes=1 << 20, backoff_s=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    message = str(info.value)
    assert url in message
    assert "1048576 bytes" in message and "limit" in message
    assert server.hits["/big.swf.gz"] == 1  # the same answer would come again: not retried
    assert list(out_dir.iterdir()) == []
    assert peak < len(body) // 2


def test_announced_length_over_the_limit_fails_before_reading(
    tmp_path: Path, server: LocalServer
) -> None:
    url = server.serve("/big.swf.gz", Reply(body=b"\x1f\x8b" + b"x" * 5000))
    with pytest.raises(DownloadError, match="limit of 1000 bytes"):
        fetch_trace(kth_source(url), tmp_path / "out.swf.gz", max_bytes=1000, backoff_s=0)
    assert list(tmp_path.iterdir()) == []


def test_large_download_is_streamed_to_disk(tmp_path: Path, server: LocalServer) -> None:
    import tracemalloc

    body = _random_gzip(6 << 20)
    url = server.serve("/big.swf.gz", Reply(body=body, send_length=False))
    dest = tmp_path / "out.swf.gz"

    tracemalloc.start()
    try:
        report = fetch_trace(kth_source(url, sha=sha256(body)), dest, backoff_s=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert dest.read_bytes() == body
    assert report.sha256 == sha256(body) and report.bytes == len(body)
    assert peak < len(body) // 2
    assert [path.name for path in tmp_path.iterdir()] == ["out.swf.gz"]


def test_large_mirror_file_is_streamed(tmp_path: Path) -> None:
    import tracemalloc

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    body = _random_gzip(6 << 20)
    (mirror / "KTH-SP2.swf.gz").write_bytes(body)
    dest = tmp_path / "out" / "KTH-SP2.swf.gz"

    tracemalloc.start()
    try:
        report = fetch_trace(kth_source(), dest, mirror_dirs=[mirror], opener=no_network)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert dest.read_bytes() == body and report.bytes == len(body)
    assert peak < len(body) // 2


def test_plain_swf_is_gzipped_as_before(tmp_path: Path) -> None:
    # The streamed compression writes the very bytes of the former gzip.compress(data, mtime=0).
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    text = b"".join(
        b"%d %d 0 %d 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1\n" % (i, 10 * i, i % 97 + 1)
        for i in range(1, 300_000)
    )
    (mirror / "KTH-SP2.swf").write_bytes(PLAIN_SWF + text)
    fetch_trace(kth_source(), tmp_path / "out.swf.gz", mirror_dirs=[mirror])
    assert (tmp_path / "out.swf.gz").read_bytes() == gzip.compress(PLAIN_SWF + text, mtime=0)


@pytest.mark.parametrize("max_bytes", [0, -1])
def test_max_bytes_must_be_positive(tmp_path: Path, max_bytes: int) -> None:
    with pytest.raises(ConfigurationError, match="max_bytes"):
        fetch_trace(kth_source(), tmp_path / "out.swf.gz", max_bytes=max_bytes, opener=no_network)


# --- redirects and URL schemes -------------------------------------------------------------------


def test_redirect_handler_refuses_https_to_http() -> None:
    import urllib.request

    handler = download.SafeRedirectHandler()
    request = urllib.request.Request("https://archive.example/trace.swf.gz")
    with pytest.raises(download.RefusedURLError, match=r"https.*to http"):
        handler.redirect_request(
            request, None, 302, "Found", {}, "http://archive.example/trace.swf.gz"
        )
    # https -> https and http -> http are followed as before
    for old, new in [("https://a/x", "https://b/y"), ("http://a/x", "http://b/y")]:
        followed = handler.redirect_request(
            urllib.request.Request(old), None, 302, "Found", {}, new
        )
        assert followed is not None and followed.full_url == new


def test_https_to_http_redirect_is_refused_by_fetch(
    tmp_path: Path, server: LocalServer, kth_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The local server (plain http on 127.0.0.1) stands in for both ends: the request is sent as
    # https to the server's address by rewriting the scheme in the https handler.
    import urllib.request

    target = server.serve("/plain.swf.gz", Reply(body=kth_bytes))
    server.serve("/secure.swf.gz", Reply(status=302, location=target))
    secure_url = server.url("/secure.swf.gz").replace("http://", "https://", 1)

    class LoopbackHTTPS(urllib.request.HTTPHandler):
        handler_order = 400  # before urllib's own https handler

        def https_open(self, request: urllib.request.Request) -> Any:
            return self.do_open(http.client.HTTPConnection, request)

        https_request = urllib.request.HTTPHandler.http_request

    monkeypatch.setattr(download, "_HANDLERS", (*download._HANDLERS, LoopbackHTTPS))
    with pytest.raises(DownloadError, match="redirect") as info:
        fetch_trace(kth_source(secure_url), tmp_path / "out.swf.gz", backoff_s=0)
    assert secure_url in str(info.value) and target in str(info.value)
    assert server.hits["/secure.swf.gz"] == 1
    assert "/plain.swf.gz" not in server.hits
    assert list(tmp_path.iterdir()) == []


def test_http_redirect_is_followed(tmp_path: Path, server: LocalServer, kth_bytes: bytes) -> None:
    target = server.serve("/new.swf.gz", Reply(body=kth_bytes))
    url = server.serve("/old.swf.gz", Reply(status=301, location=target))
    report = fetch_trace(kth_source(url), tmp_path / "out.swf.gz", backoff_s=0)
    assert report.bytes == len(kth_bytes)


def test_file_url_outside_the_mirrors_is_refused(tmp_path: Path, kth_bytes: bytes) -> None:
    outside = tmp_path / "elsewhere" / "KTH-SP2.swf.gz"
    outside.parent.mkdir()
    outside.write_bytes(kth_bytes)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for dirs in ([], [mirror]):
        with pytest.raises(DownloadError, match="file: URL") as info:
            fetch_trace(
                kth_source(outside.as_uri()), tmp_path / "out.swf.gz", mirror_dirs=dirs,
                backoff_s=0,
            )  # fmt: skip
        assert outside.as_uri() in str(info.value)
    assert not (tmp_path / "out.swf.gz").exists()


def test_file_url_escaping_a_mirror_by_dotdot_is_refused(tmp_path: Path, kth_bytes: bytes) -> None:
    (tmp_path / "secret.swf.gz").write_bytes(kth_bytes)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    url = mirror.as_uri() + "/../secret.swf.gz"
    with pytest.raises(DownloadError, match="file: URL"):
        fetch_trace(kth_source(url), tmp_path / "out.swf.gz", mirror_dirs=[mirror], backoff_s=0)


def test_file_url_inside_a_mirror_is_used(tmp_path: Path, kth_bytes: bytes) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    (mirror / "sub" / "kth-copy.swf.gz").write_bytes(kth_bytes)
    url = (mirror / "sub" / "kth-copy.swf.gz").as_uri()
    report = fetch_trace(kth_source(url), tmp_path / "out.swf.gz", mirror_dirs=[mirror])
    assert report.origin == "download" and report.bytes == len(kth_bytes)
    assert (tmp_path / "out.swf.gz").read_bytes() == kth_bytes


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/k.swf.gz", "data:,hello", "gopher://x/y"])
def test_other_url_schemes_are_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(DownloadError, match="scheme"):
        fetch_trace(kth_source(url), tmp_path / "out.swf.gz", opener=no_network)
