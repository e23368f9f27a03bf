"""Bad input through the workflow: a damaged log, a wrong checksum, an oversized download, a log
without its machine size or with a bad time zone stop the step that reads it, with a message
naming the file, line, field or config key, and leave no output behind."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from pathlib import Path

import pytest
import yaml
from support.tiny_project import (
    damaged_project,
    job_stats,
    make_project,
    snakemake,
    write_config,
    write_slice,
)

pytestmark = pytest.mark.workflow


@pytest.mark.parametrize(
    ("line", "key", "fragment"),
    [
        ("; TimeZoneString: Europe/Stokholm", "TimeZoneString", "'Europe/Stokholm' is not an IANA"),
        ("; UnixStartTime: 253402300800", "UnixStartTime", "253402300800"),
    ],
)
def test_bad_calendar_header_stops_the_filter_naming_the_log_line_and_key(
    tmp_path: Path, kth_path: Path, line: str, key: str, fragment: str
) -> None:
    """A header whose calendar no step can use is refused once, where the log is read (the
    common filter), for every study: before, the online study's long traces failed on it with
    "ValueError: year 10000 is out of range" (naming neither file nor key) or named the zone,
    and the tuning study ran on the same log."""
    project = make_project(tmp_path, kth_path)
    mirror = tmp_path / "mirror" / "KTH-slice.swf.gz"
    lines = gzip.decompress(mirror.read_bytes()).decode().splitlines(keepends=True)
    number = next(i for i, text in enumerate(lines) if text.startswith(f"; {key}:"))
    lines[number] = line + "\n"
    mirror.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = None
    config["studies"] = ["tuning", "online"]
    write_config(project, config)
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"KTH-slice.swf.gz:{number + 1}: field {key}: " in output, output
    assert fragment in output
    assert "out of range" not in output and "Traceback" not in output
    assert "logs/filter/KTH-slice.log" in output
    log = (project / "logs/filter/KTH-slice.log").read_text()
    assert f"field {key}" in log
    assert not (project / "results/KTH-slice/filtered.parquet").exists()
    assert not (project / "results/online").exists() and not (project / "results/tuning").exists()


def test_malformed_trace_line_names_file_line_field_and_log(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    mirror = tmp_path / "mirror" / "KTH-slice.swf.gz"
    lines = gzip.decompress(mirror.read_bytes()).decode().splitlines(keepends=True)
    bad = next(i for i, line in enumerate(lines) if not line.startswith(";")) + 5
    fields = lines[bad].split()
    fields[3] = "12x"  # run time
    lines[bad] = " ".join(fields) + "\n"
    mirror.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = None  # the damaged copy must reach the filter
    # the tuning study alone, so that the common filter is the step that reads the log first
    # (the other studies' readers stop the same way: their own filter, the learned evaluation)
    config["studies"] = ["tuning"]
    write_config(project, config)
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"KTH-slice.swf.gz:{bad + 1}" in output and "run_s" in output
    assert "logs/filter/KTH-slice.log" in output
    assert not (project / "results/KTH-slice/filtered.parquet").exists()


def test_checksum_mismatch_keeps_nothing(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = "0" * 64
    write_config(project, config)
    done = snakemake(project, "--until", "download_trace", check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "0" * 64 in output
    assert not (project / "resources/traces/KTH-slice.swf.gz").exists()


def test_duplicate_job_number_stops_the_filter_step(tmp_path: Path, kth_path: Path) -> None:
    def duplicate(lines: list[str]) -> list[str]:
        first = next(i for i, line in enumerate(lines) if not line.startswith(";"))
        return [*lines[: first + 10], lines[first + 2], *lines[first + 10 :]]

    project, lines = damaged_project(tmp_path, kth_path, duplicate)
    first = next(i for i, line in enumerate(lines) if not line.startswith(";"))
    number = lines[first + 2].split()[0]
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"KTH-slice.swf.gz:{first + 11}: field job_id: job number {number}" in output
    assert f"lines {first + 3} and {first + 11}" in output
    assert "logs/filter/KTH-slice.log" in output
    assert not (project / "results/KTH-slice/filtered.parquet").exists()
    assert not (project / "results/KTH-slice/filter_report.json").exists()


def test_missing_machine_size_names_the_config_key(tmp_path: Path, kth_path: Path) -> None:
    project, _ = damaged_project(
        tmp_path, kth_path, lambda lines: [line for line in lines if not line.startswith("; Max")]
    )
    done = snakemake(project, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "set traces.KTH-slice.machine_procs in the config" in output
    assert "--machine-procs" not in output and "infer_machine_procs" not in output
    assert not (project / "results/KTH-slice/filtered.parquet").exists()


def test_download_size_limit_comes_from_the_config(tmp_path: Path, kth_path: Path) -> None:
    """archive.max_bytes reaches the download step: a body over it fails and leaves nothing
    (the trace is served by a local HTTP server on 127.0.0.1; no mirror)."""
    from traces.test_download import LocalServer, Reply

    project = make_project(tmp_path, kth_path)
    body = (tmp_path / "mirror" / "KTH-slice.swf.gz").read_bytes()
    server = LocalServer()
    server.thread.start()
    try:
        config = yaml.safe_load((project / "tiny.yaml").read_text())
        config["traces"]["KTH-slice"]["url"] = server.serve("/KTH-slice.swf.gz", Reply(body=body))
        config["archive"] = {"mirror_dirs": [], "offline": False, "max_bytes": 1000}
        # the memory and rl studies' logs are not served here
        config["studies"] = [name for name in config["studies"] if name not in ("memory", "rl")]
        write_config(project, config)
        done = snakemake(project, "--until", "download_trace", check=False)
        output = done.stdout + done.stderr
        assert done.returncode != 0 and "limit of 1000 bytes" in output, output
        assert "archive.max_bytes" in output
        assert not (project / "resources/traces/KTH-slice.swf.gz").exists()
        config["archive"]["max_bytes"] = len(body)  # exactly the size: accepted
        write_config(project, config)
        snakemake(project, "--until", "download_trace")
        assert (project / "resources/traces/KTH-slice.swf.gz").read_bytes() == body
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def test_a_mirror_file_replaced_under_its_name_is_fetched_again_with_what_follows(
    tmp_path: Path, kth_path: Path
) -> None:
    """With ``sha256: null`` in the catalogue, a mirror file whose content is replaced under the
    same name (its modification time kept, as ``cp -p`` and ``rsync -t`` keep it) is fetched
    again and what follows reruns, the fetch report holding the new checksum; before, nothing
    reran and the old log's results were kept. The same content touched reruns nothing."""
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["traces"]["KTH-slice"]["sha256"] = None
    config["studies"] = ["tuning"]
    write_config(project, config)
    until = ("--until", "filter_trace")
    snakemake(project, *until)
    mirror = tmp_path / "mirror" / "KTH-slice.swf.gz"
    report = project / "resources/traces/KTH-slice.fetch.json"
    old = json.loads(report.read_text())
    assert old["sha256"] == hashlib.sha256(mirror.read_bytes()).hexdigest()
    filter_report = project / "results/KTH-slice/filter_report.json"
    six_weeks = json.loads(filter_report.read_text())["jobs_in"]

    def planned() -> dict[str, int]:
        done = snakemake(project, *until, "--dry-run", "--quiet", "rules")
        text = done.stdout + done.stderr
        nothing = "Nothing to be done" in text or re.search(r"^total\s+0$", text, re.MULTILINE)
        return {} if nothing else job_stats(text)

    before = mirror.stat()
    write_slice(kth_path, mirror, weeks=5)  # other jobs, same name
    os.utime(mirror, ns=(before.st_atime_ns, before.st_mtime_ns))
    new_sha256 = hashlib.sha256(mirror.read_bytes()).hexdigest()
    assert new_sha256 != old["sha256"]
    assert planned() == {"download_trace": 1, "filter_trace": 1}
    snakemake(project, *until)
    assert (project / "resources/traces/KTH-slice.swf.gz").read_bytes() == mirror.read_bytes()
    fetched = json.loads(report.read_text())
    assert fetched["sha256"] == fetched["source_sha256"] == new_sha256
    assert 0 < json.loads(filter_report.read_text())["jobs_in"] < six_weeks  # filtered again
    assert planned() == {}
    os.utime(mirror)  # touched: newer, same content
    assert planned() == {}
