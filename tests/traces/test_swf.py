"""Reading and writing SWF files (scheduler.traces.swf, scheduler.core.atomic) on real and crafted
logs."""

from __future__ import annotations

import gzip
import os
import stat
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from scheduler.core.atomic import atomic_path, atomic_write_bytes
from scheduler.core.constants import SWF_COLUMNS, SWF_SCHEMA
from scheduler.core.errors import ConfigurationError, TraceFormatError
from scheduler.traces.swf import SwfHeader, Trace, read_swf, write_swf

HEADER = "; MaxProcs: 10"
GOOD = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1"

#: The real logs: job count and MaxProcs (MaxNodes for Lublin-256) from the traces README.
REAL_LOGS = [
    ("KTH-SP2.swf.gz", 28_476, 100),
    ("CTC-SP2.swf.gz", 77_222, 338),
    ("SDSC-SP2.swf.gz", 59_715, 128),
    ("SDSC-BLUE.swf.gz", 243_306, 1_152),
    ("ANL-Intrepid.swf.gz", 68_936, 163_840),
    ("CEA-Curie.swf.gz", 312_826, 93_312),
    ("UniLu-Gaia.swf.gz", 51_987, 2_004),
    ("LANL-CM5.swf.gz", 122_060, 1_024),
    ("RICC.swf.gz", 447_794, 8_192),
    ("HPC2N.swf.gz", 202_871, 240),
    ("Lublin-256.swf.gz", 10_000, 256),
]


def write_lines(directory: Path, name: str, lines: list[str]) -> Path:
    """Write a crafted SWF file (lines joined by newlines, final newline)."""
    path = directory / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def job_line(job_id: int = 1, **fields: str) -> str:
    """A valid job line whose fields can be overridden by column name."""
    tokens = dict(zip(SWF_COLUMNS, GOOD.split(), strict=True))
    tokens["job_id"] = str(job_id)
    tokens.update(fields)
    return " ".join(tokens[name] for name in SWF_COLUMNS)


@pytest.fixture(scope="module")
def kth(kth_path: Path) -> Trace:
    return read_swf(kth_path)


# --------------------------------------------------------------------------------------------
# Real logs
# --------------------------------------------------------------------------------------------


def test_kth_header(kth: Trace) -> None:
    header = kth.header
    assert header.max_procs == 100
    assert header.max_nodes == 100
    assert header.unix_start_time == 843480031
    assert header.time_zone_string == "Europe/Stockholm"
    assert header.version == "2.2"
    assert header.computer == "IBM SP2"
    assert list(header.fields)[:3] == ["Version", "Computer", "Installation"]
    assert header.fields["MaxRecords"] == "28476"
    assert header.lines[0] == "; Version: 2.2"
    assert header.lines[-1] == ";"
    assert len(header.lines) == 24
    assert header.values("Note") == (
        "uses the EASY scheduler",
        "THIS IS A CLEANED VERSION OF THE LOG!",
    )
    assert kth.machine_procs == 100
    assert kth.skipped == {}


def test_kth_jobs(kth: Trace, kth_path: Path) -> None:
    assert kth.jobs.height == 28476
    assert kth.jobs.schema == pl.Schema(SWF_SCHEMA)
    # zcat resources/KTH-SP2.swf.gz | head -40: the first job line (line 25)
    first = (15, 599850, 192180, 3477, 4, -1, -1, 4, 53940, -1, 1, 12, 12, -1, -1, -1, -1, -1)
    expected = tuple(
        float(value) if dtype.is_float() else value
        for value, dtype in zip(first, SWF_SCHEMA.values(), strict=True)
    )
    assert kth.jobs.row(0) == expected
    assert kth.jobs.row(0, named=True)["req_time_s"] == 53940
    assert kth.jobs.row(1)[:5] == (16, 600022, 11940, 2488, 25)
    assert kth.path == str(kth_path)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "jobs", "machine_procs"), REAL_LOGS)
def test_every_real_log_reads(shared_trace, name: str, jobs: int, machine_procs: int) -> None:
    trace = read_swf(shared_trace(name))
    assert trace.jobs.height == jobs
    assert trace.machine_procs == machine_procs
    assert trace.jobs.schema == pl.Schema(SWF_SCHEMA)
    assert trace.skipped == {}


def test_cea_curie_header_and_override(shared_trace) -> None:
    path = shared_trace("CEA-Curie.swf.gz")
    assert read_swf(path).header.max_procs == 93312
    thin = read_swf(path, machine_procs=80640)
    assert thin.machine_procs == 80640
    assert thin.header.max_procs == 93312


def test_lublin_falls_back_to_max_nodes(shared_trace) -> None:
    trace = read_swf(shared_trace("Lublin-256.swf.gz"))
    assert trace.header.max_procs is None
    assert trace.header.max_nodes == 256
    assert trace.machine_procs == 256


def test_unilu_indented_keys_and_ctc_commented_value(shared_trace) -> None:
    unilu = read_swf(shared_trace("UniLu-Gaia.swf.gz")).header
    assert unilu.version == "2.2"
    assert unilu.computer == "Bull / Dell mix"
    ctc = read_swf(shared_trace("CTC-SP2.swf.gz")).header
    assert ctc.fields["MaxNodes"] == "338 (batch partition; 512 total)"
    assert ctc.max_nodes == 338


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name, _, _ in REAL_LOGS])
def test_every_real_log_round_trips(shared_trace, tmp_path: Path, name: str) -> None:
    original = read_swf(shared_trace(name))
    out = tmp_path / name.removesuffix(".gz")  # plain text: faster, gzip is tested on KTH
    write_swf(original, out)
    again = read_swf(out)
    assert_frame_equal(again.jobs, original.jobs, check_exact=True)
    assert again.header == original.header


def test_kth_round_trip_gzip(kth: Trace, tmp_path: Path) -> None:
    out = tmp_path / "kth.swf.gz"
    write_swf(kth, out)
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    again = read_swf(out)
    assert_frame_equal(again.jobs, kth.jobs, check_exact=True)
    assert again.header == kth.header
    assert again.header.lines == kth.header.lines
    assert again.machine_procs == kth.machine_procs


# --------------------------------------------------------------------------------------------
# Header parsing
# --------------------------------------------------------------------------------------------


def test_header_from_lines() -> None:
    header = SwfHeader.from_lines(
        [
            ";       Version: 2.2",
            "; MaxNodes: 338 (batch partition; 512 total)",
            "; Information: http://www.pdc.kth.se/",
            ";              http://www.cs.huji.ac.il/labs/parallel/workload/",
            ";\tsee: http://example.org",
            "; Queue: 1 normal",
            "; Queue: 2 long",
            "; Computer: Blue Gene/P  ",
        ]
    )
    assert header.version == "2.2"
    assert header.max_nodes == 338
    assert header.max_procs is None
    assert header.computer == "Blue Gene/P"
    assert list(header.fields) == ["Version", "MaxNodes", "Information", "Queue", "Computer"]
    assert header.fields["Information"] == "http://www.pdc.kth.se/"
    assert header.fields["Queue"] == "1 normal"
    assert header.values("Queue") == ("1 normal", "2 long")
    assert header.values("Missing") == ()
    assert len(header.lines) == 8


def test_header_integer_error_names_file_line_and_key(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "h.swf", ["; Version: 2.2", "", "; MaxProcs: lots", GOOD])
    with pytest.raises(TraceFormatError, match="MaxProcs") as info:
        read_swf(path)
    error = info.value
    assert (error.line, error.field) == (3, "MaxProcs")
    assert str(error).startswith(f"{path}:3:")
    assert "'lots'" in str(error)


@pytest.mark.parametrize("start", ["253402300800", "-99999999999", "99999999999999999999"])
def test_unix_start_time_out_of_the_calendar_names_file_line_and_key(
    tmp_path: Path, start: str
) -> None:
    """A time origin no calendar date can show (year 10000, year -1199) is refused when the log
    is read, naming the file, the header line and the key: not later, by whichever step first
    turns it into a date (the online study's long traces: "ValueError: year 10000 is out of
    range", naming neither)."""
    path = write_lines(tmp_path, "h.swf", [HEADER, f"; UnixStartTime: {start}", GOOD])
    with pytest.raises(TraceFormatError) as info:
        read_swf(path)
    error = info.value
    assert (error.path, error.line, error.field) == (str(path), 2, "UnixStartTime")
    assert str(error).startswith(f"{path}:2: field UnixStartTime: ")
    assert "year" in str(error) and "between" in str(error)


def test_unix_start_time_whose_last_submission_leaves_the_calendar_is_refused(
    tmp_path: Path,
) -> None:
    late = job_line(2, submit_s="100000000")
    path = write_lines(tmp_path, "h.swf", [HEADER, "; UnixStartTime: 253400000000", GOOD, late])
    with pytest.raises(TraceFormatError, match="last submission") as info:
        read_swf(path)
    assert (info.value.line, info.value.field) == (2, "UnixStartTime")


def test_unix_start_time_at_the_ends_of_the_calendar_is_read(tmp_path: Path) -> None:
    for start in (-62135510400, 253402214399):  # 0001-01-02 and 9999-12-30 23:59:59 UTC
        path = write_lines(tmp_path, "h.swf", [HEADER, f"; UnixStartTime: {start}", GOOD])
        assert read_swf(path).header.unix_start_time == start


@pytest.mark.parametrize("zone", ["Mars/Olympus", "utc", "+01:00", "Europe/Stokholm", "/etc/x"])
def test_time_zone_that_is_not_iana_names_file_line_and_key(tmp_path: Path, zone: str) -> None:
    """Refused when the log is read, by every reader (before: only by the steps that used the
    calendar, so a study without them ran on a log whose header is wrong)."""
    path = write_lines(tmp_path, "h.swf", [HEADER, "; Note: x", f"; TimeZoneString: {zone}", GOOD])
    with pytest.raises(TraceFormatError, match="IANA") as info:
        read_swf(path)
    assert (info.value.line, info.value.field) == (3, "TimeZoneString")
    assert str(info.value).startswith(f"{path}:3: field TimeZoneString: ")


def test_header_from_lines_rejects_non_header_line() -> None:
    with pytest.raises(TraceFormatError, match="starting with ';'"):
        SwfHeader.from_lines(["; ok", GOOD], "x.swf")


# --------------------------------------------------------------------------------------------
# Crafted files: what is accepted
# --------------------------------------------------------------------------------------------


def test_blank_lines_tabs_crlf_and_late_header(tmp_path: Path) -> None:
    path = tmp_path / "mixed.swf"
    tabbed = job_line(2).replace(" ", " \t ")
    text = f"{HEADER}\r\n\r\n  \t\r\n\t{tabbed}  \r\n; late comment\r\n{job_line(1)}\r\n"
    path.write_bytes(text.encode())
    trace = read_swf(path)
    assert trace.jobs.get_column("job_id").to_list() == [2, 1]  # file order, not sorted
    assert trace.header.lines == (HEADER, "; late comment")
    assert trace.machine_procs == 10


def test_whole_numbers_in_integer_fields_and_fractions_in_float_fields(tmp_path: Path) -> None:
    line = job_line(run_s="3.0", wait_s="1e3", avg_cpu_s="142.50", used_mem_kb="0.125")
    trace = read_swf(write_lines(tmp_path, "whole.swf", [HEADER, line]))
    row = trace.jobs.row(0, named=True)
    assert (row["run_s"], row["wait_s"]) == (3, 1000)
    assert (row["avg_cpu_s"], row["used_mem_kb"]) == (142.5, 0.125)


def test_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "bom.swf"
    path.write_bytes(f"\ufeff{HEADER}\n{GOOD}\n".encode())
    trace = read_swf(path)
    assert trace.header.lines == (HEADER,)
    assert trace.jobs.height == 1


def test_gzip_detected_by_magic_bytes(tmp_path: Path) -> None:
    path = tmp_path / "no-suffix.swf"
    path.write_bytes(gzip.compress(f"{HEADER}\n{GOOD}\n".encode()))
    assert read_swf(path).jobs.height == 1


# --------------------------------------------------------------------------------------------
# Crafted files: errors
# --------------------------------------------------------------------------------------------


def test_wrong_field_count(tmp_path: Path) -> None:
    short = " ".join(GOOD.split()[:17])
    path = write_lines(tmp_path, "count.swf", [HEADER, "", GOOD, short, job_line(3)])
    with pytest.raises(TraceFormatError) as info:
        read_swf(path)
    message = str(info.value)
    assert "count.swf" in message
    assert ":4" in message
    assert "expected 18 fields, found 17" in message
    assert info.value.line == 4


def test_too_many_fields(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "long.swf", [HEADER, GOOD + " 7"])
    with pytest.raises(TraceFormatError, match="expected 18 fields, found 19"):
        read_swf(path)


def test_non_numeric_value(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "text.swf", [HEADER, GOOD, job_line(2, run_s="abc")])
    with pytest.raises(TraceFormatError) as info:
        read_swf(path)
    assert (info.value.line, info.value.field) == (3, "run_s")
    message = str(info.value)
    assert ":3" in message
    assert "run_s" in message
    assert "'abc'" in message


def test_first_bad_line_is_reported(tmp_path: Path) -> None:
    lines = [HEADER, GOOD, job_line(2, user_id="x"), job_line(3, run_s="1.5"), "1 2"]
    with pytest.raises(TraceFormatError) as info:
        read_swf(write_lines(tmp_path, "many.swf", lines))
    assert (info.value.line, info.value.field) == (3, "user_id")


@pytest.mark.parametrize("token", ["nan", "inf", "-inf"])
def test_non_finite_float_is_rejected(tmp_path: Path, token: str) -> None:
    path = write_lines(tmp_path, "nan.swf", [HEADER, job_line(avg_cpu_s=token)])
    with pytest.raises(TraceFormatError, match="finite number") as info:
        read_swf(path)
    assert (info.value.line, info.value.field) == (2, "avg_cpu_s")


def test_non_integral_value_in_integer_field(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "frac.swf", [HEADER, job_line(run_s="1.5")])
    with pytest.raises(TraceFormatError, match=r"expected an integer, found '1\.5'") as info:
        read_swf(path)
    assert (info.value.line, info.value.field) == (2, "run_s")


def test_integer_out_of_range(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "big.swf", [HEADER, job_line(submit_s="1" + "0" * 20)])
    with pytest.raises(TraceFormatError, match="64-bit") as info:
        read_swf(path)
    assert info.value.field == "submit_s"


@pytest.mark.parametrize("field", ["submit_s", "run_s", "req_time_s"])
@pytest.mark.parametrize("value", [2**62, 2**52 + 1, -(2**52) - 1])
def test_times_beyond_the_simulators_exact_range(tmp_path: Path, field: str, value: int) -> None:
    """A time the simulator cannot hold exactly (beyond ±2**52 s) is refused where it is read,
    naming the file, the line and the field; lenient mode skips the line."""
    lines = [HEADER, job_line(1), job_line(2, **{field: str(value)}), job_line(3)]
    path = write_lines(tmp_path, "far.swf", lines)
    with pytest.raises(TraceFormatError) as info:
        read_swf(path)
    assert (info.value.line, info.value.field) == (3, field)
    assert "2**52" in str(info.value) and str(value) in str(info.value)
    with pytest.warns(UserWarning, match="time beyond"):
        trace = read_swf(path, lenient=True)
    assert trace.jobs["job_id"].to_list() == [1, 3]


def test_times_beyond_the_simulators_range_are_not_written(tmp_path: Path) -> None:
    """read_swf would refuse them: write_swf keeps its round trip by refusing them first."""
    path = write_lines(tmp_path, "ok.swf", [HEADER, job_line(1), job_line(2)])
    trace = read_swf(path)
    far = trace.with_jobs(trace.jobs.with_columns(pl.col("submit_s") + 2**62))
    with pytest.raises(ConfigurationError, match=r"column submit_s: job 1 \(row 1\)"):
        write_swf(far, tmp_path / "far.swf")
    assert not (tmp_path / "far.swf").exists()


def test_times_at_the_simulators_bound_are_read(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "edge.swf", [HEADER, job_line(submit_s=str(2**52)),
                                              job_line(2, submit_s=str(-(2**52)))])  # fmt: skip
    assert read_swf(path).jobs["submit_s"].to_list() == [2**52, -(2**52)]


def test_truncated_gzip(tmp_path: Path, kth_path: Path) -> None:
    path = tmp_path / "cut.swf.gz"
    data = kth_path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match="gzip") as info:
        read_swf(path)
    assert "cut.swf.gz" in str(info.value)


def test_corrupt_gzip(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(f"{HEADER}\n{GOOD}\n".encode()))
    data[12:20] = b"\xff" * 8
    path = tmp_path / "corrupt.swf.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError, match="gzip"):
        read_swf(path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.swf"
    path.write_bytes(b"")
    with pytest.raises(TraceFormatError, match="empty file"):
        read_swf(path)


def test_header_only_file(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "header.swf", [HEADER, "; Version: 2.2", ""])
    with pytest.raises(TraceFormatError, match="expected at least one job line, found only"):
        read_swf(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="file not found"):
        read_swf(tmp_path / "absent.swf")
    with pytest.raises(TraceFormatError, match="directory"):
        read_swf(tmp_path)


def test_undecodable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "latin.swf"
    path.write_bytes(f"{HEADER}\n{GOOD}\n".encode() + b"2 0 5 10 \xe9 1\n")
    with pytest.raises(TraceFormatError, match="UTF-8") as info:
        read_swf(path)
    assert info.value.line == 3
    with pytest.warns(UserWarning, match="undecodable bytes: 1"):
        trace = read_swf(path, lenient=True)
    assert trace.skipped == {"undecodable bytes": 1}
    assert trace.jobs.height == 1


# --------------------------------------------------------------------------------------------
# Machine size
# --------------------------------------------------------------------------------------------


def test_missing_machine_size(tmp_path: Path) -> None:
    lines = ["; Version: 2.2", job_line(alloc_procs="7", req_procs="12"), job_line(2)]
    path = write_lines(tmp_path, "nosize.swf", lines)
    with pytest.raises(TraceFormatError) as info:
        read_swf(path)
    message = str(info.value)
    assert "MaxProcs" in message
    assert "machine_procs" in message
    assert info.value.field == "MaxProcs"
    with pytest.warns(UserWarning, match="nosize.swf"):
        inferred = read_swf(path, infer_machine_procs=True)
    assert inferred.machine_procs == 12
    assert read_swf(path, machine_procs=64).machine_procs == 64


def test_non_positive_max_procs_falls_back_to_max_nodes(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "neg.swf", ["; MaxProcs: -1", "; MaxNodes: 32", GOOD])
    trace = read_swf(path)
    assert (trace.header.max_procs, trace.machine_procs) == (-1, 32)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "100"])
def test_bad_machine_procs_argument(kth_path: Path, bad: object) -> None:
    with pytest.raises(ConfigurationError, match="machine_procs"):
        read_swf(kth_path, machine_procs=bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Lenient mode
# --------------------------------------------------------------------------------------------


def test_lenient_mode_counts_skipped_lines(tmp_path: Path) -> None:
    lines = [
        HEADER,
        job_line(1),
        "1 2 3",
        job_line(2, run_s="abc"),
        job_line(3),
        GOOD + " 9",
        job_line(4, run_s="2.5"),
        job_line(5),
    ]
    path = write_lines(tmp_path, "lenient.swf", lines)
    with pytest.warns(UserWarning, match=r"lenient\.swf: skipped 4 malformed") as record:
        trace = read_swf(path, lenient=True)
    assert len(record) == 1
    assert trace.skipped == {
        "wrong field count": 2,
        "non-numeric value": 1,
        "non-integral value": 1,
    }
    assert trace.jobs.get_column("job_id").to_list() == [1, 3, 5]


def test_lenient_mode_without_problems_is_silent(kth_path: Path) -> None:
    trace = read_swf(kth_path, lenient=True)
    assert trace.skipped == {}
    assert trace.jobs.height == 28476


def test_lenient_mode_with_only_bad_lines_raises(tmp_path: Path) -> None:
    path = write_lines(tmp_path, "allbad.swf", [HEADER, "1 2 3", "x"])
    with pytest.raises(TraceFormatError, match="all 2 job lines are malformed"):
        read_swf(path, lenient=True)


# --------------------------------------------------------------------------------------------
# Trace
# --------------------------------------------------------------------------------------------


def test_with_jobs_selects_and_casts(kth: Trace) -> None:
    subset = kth.jobs.head(5).with_columns(pl.col("run_s").cast(pl.Float64), pl.lit(1).alias("x"))
    trace = kth.with_jobs(subset)
    assert trace.jobs.schema == pl.Schema(SWF_SCHEMA)
    assert trace.jobs.height == 5
    assert (trace.header, trace.machine_procs, trace.path) == (kth.header, 100, kth.path)
    assert kth.jobs.height == 28476
    with pytest.raises(ConfigurationError, match="run_s"):
        kth.with_jobs(subset.drop("run_s"))
    with pytest.raises(ConfigurationError, match="non-integral"):
        kth.with_jobs(subset.with_columns(pl.col("run_s") + 0.5))


def test_trace_rejects_wrong_schema(kth: Trace) -> None:
    with pytest.raises(ConfigurationError, match="18 SWF columns"):
        Trace(jobs=kth.jobs.drop("run_s"), header=kth.header, machine_procs=100)
    with pytest.raises(ConfigurationError, match="machine_procs"):
        Trace(jobs=kth.jobs, header=kth.header, machine_procs=0)


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def test_write_dataframe_with_header_and_extra_lines(job_table, tmp_path: Path) -> None:
    jobs = job_table({"run_s": 5, "avg_cpu_s": 2.0, "used_mem_kb": 0.1}).with_columns(
        pl.lit("ignored").alias("note")
    )
    header = SwfHeader.from_lines([HEADER])
    out = tmp_path / "out.swf"
    write_swf(jobs, out, header=header, extra_header_lines=["Filtered: strong", ";raw"])
    lines = out.read_text().splitlines()
    assert lines[:3] == [HEADER, "; Filtered: strong", ";raw"]
    assert lines[3].split() == ["1", "-1", "-1", "5", "-1", "2", "0.1", *["-1"] * 11]
    trace = read_swf(out)
    assert trace.header.fields == {"MaxProcs": "10", "Filtered": "strong"}
    assert_frame_equal(trace.jobs, jobs.drop("note"), check_exact=True)


def test_write_is_deterministic_gzip(kth: Trace, tmp_path: Path) -> None:
    first, second = tmp_path / "a.swf.gz", tmp_path / "b.swf.gz"
    write_swf(kth, first)
    write_swf(kth, second)
    assert first.read_bytes() == second.read_bytes()
    text = gzip.decompress(first.read_bytes()).decode()
    assert text.startswith("; Version: 2.2\n")
    assert text.endswith("\n")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda df: df.drop("req_time_s"), "req_time_s"),
        (lambda df: df.with_columns(pl.lit(None, pl.Int64).alias("run_s")), "null"),
        (lambda df: df.with_columns(pl.lit(float("nan")).alias("avg_cpu_s")), "non-finite"),
        (lambda df: df.with_columns(pl.lit("x").alias("user_id")), "numeric"),
    ],
)
def test_bad_table_writes_nothing(job_table, tmp_path: Path, change, match: str) -> None:
    out = tmp_path / "out.swf"
    out.write_text("previous content\n")
    with pytest.raises(ConfigurationError, match=match):
        write_swf(change(job_table({"run_s": 5})), out)
    assert out.read_text() == "previous content\n"
    assert sorted(tmp_path.iterdir()) == [out]


def test_bad_header_lines_are_refused(job_table, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="sequence"):
        write_swf(job_table({}), tmp_path / "a.swf", extra_header_lines="; one string")
    with pytest.raises(ConfigurationError, match="one line"):
        write_swf(job_table({}), tmp_path / "a.swf", extra_header_lines=["two\nlines"])
    assert list(tmp_path.iterdir()) == []


def test_failed_replace_leaves_target_and_no_temp_file(
    kth: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    existing = tmp_path / "existing.swf"
    existing.write_text("old\n")

    def fail(*args: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk on fire"):
        write_swf(kth, existing)
    with pytest.raises(OSError, match="disk on fire"):
        write_swf(kth, tmp_path / "new.swf.gz")
    assert existing.read_text() == "old\n"
    assert sorted(tmp_path.iterdir()) == [existing]


def test_atomic_path_removes_temp_file_on_error(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "report.json"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("partial")
        assert tmp.parent == target.parent
        raise RuntimeError("writer failed")
    assert list(target.parent.iterdir()) == []


def test_atomic_write_bytes_permissions(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    atomic_write_bytes(target, b"one")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    target.chmod(0o600)
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert list(tmp_path.iterdir()) == [target]


# --------------------------------------------------------------------------------------------
# Property: write -> read is lossless
# --------------------------------------------------------------------------------------------

_INTS = st.integers(min_value=-1, max_value=10**9)
_FLOATS = st.one_of(
    _INTS.map(float),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1, max_value=1e6, allow_nan=False),
)
_ROW = st.fixed_dictionaries(
    {name: (_INTS if dtype.is_integer() else _FLOATS) for name, dtype in SWF_SCHEMA.items()}
)
_HEADER_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=30
)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(_ROW, min_size=1, max_size=20, unique_by=lambda row: row["job_id"]),
    comments=st.lists(_HEADER_TEXT, max_size=3),
    gzipped=st.booleans(),
)
def test_round_trip_property(rows: list[dict], comments: list[str], gzipped: bool) -> None:
    jobs = pl.DataFrame(rows, schema=SWF_SCHEMA)
    header = SwfHeader.from_lines([HEADER, *(f"; # {text}" for text in comments)])
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / ("t.swf.gz" if gzipped else "t.swf")
        write_swf(jobs, path, header=header)
        trace = read_swf(path)
    assert_frame_equal(trace.jobs, jobs, check_exact=True)
    assert trace.header == header


# -- bad input (issue #11): duplicate job numbers ------------------------------------------------


@pytest.mark.parametrize("gzipped", [False, True])
def test_duplicate_job_number_names_file_number_and_lines(tmp_path: Path, gzipped: bool) -> None:
    lines = [HEADER, job_line(1), job_line(2), "", job_line(7), job_line(2), job_line(2)]
    path = write_lines(tmp_path, "dup.swf", lines)
    if gzipped:
        path.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(TraceFormatError, match=r"job number 2 .*lines 3, 6 and 7") as info:
        read_swf(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 6, "job_id")
    assert str(info.value).startswith(f"{path}:6: field job_id: ")


def test_duplicate_job_number_is_refused_in_lenient_mode_too(tmp_path: Path) -> None:
    # the skipped line shifts the job rows; the lines named are still the file's own
    lines = [HEADER, job_line(5), "1 2 3", job_line(6), job_line(5)]
    path = write_lines(tmp_path, "dup.swf", lines)
    with pytest.raises(TraceFormatError, match=r"job number 5 .*lines 2 and 5"):
        read_swf(path, lenient=True)


def test_many_duplicate_job_numbers_are_counted(tmp_path: Path) -> None:
    lines = [HEADER] + [job_line(n % 3) for n in range(40)]
    path = write_lines(tmp_path, "dup.swf", lines)
    with pytest.raises(TraceFormatError) as info:
        read_swf(path)
    message = str(info.value)
    assert "job number 0 appears 14 times" in message and "3 job numbers repeat" in message
    assert len(message) < 400


# -- bad input (issue #11): a huge line is quoted short ------------------------------------------

HUGE = 5_000_000  # characters; issue #11 saw a 50 MB line copied whole into the rule log


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (job_line(run_s="y" * HUGE), "field run_s: expected a finite number, found 'yyy"),
        (job_line() + " 7" * (HUGE // 2), "expected 18 fields, found 2500018: '1 0 5"),
        ("; MaxNodes: " + "9" * HUGE + "z", "field MaxNodes: expected an integer header value"),
    ],
    ids=["token", "field-count", "header"],
)
def test_huge_line_is_quoted_short(tmp_path: Path, line: str, fragment: str) -> None:
    path = write_lines(tmp_path, "huge.swf", [HEADER, job_line(1), line])
    with pytest.raises(TraceFormatError) as info:
        read_swf(path)
    message = str(info.value)
    assert fragment in message
    assert len(message) < 500 and "…' (" in message and " characters)" in message


def test_huge_non_header_line_is_quoted_short() -> None:
    with pytest.raises(TraceFormatError) as info:
        SwfHeader.from_lines(["; ok", "z" * HUGE])
    assert len(str(info.value)) < 500 and f"({HUGE:,} characters)" in str(info.value)


def test_huge_header_line_to_write_is_quoted_short(job_table, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        write_swf(job_table({"run_s": 1}), tmp_path / "t.swf", extra_header_lines=["a\nb" * HUGE])
    assert len(str(info.value)) < 500


# -- bad input (issue #11): decompressed size cap ------------------------------------------------


def test_gzip_larger_than_the_cap_is_refused(tmp_path: Path) -> None:
    lines = [HEADER] + [job_line(n) for n in range(1, 2001)]
    plain = write_lines(tmp_path, "t.swf", lines)
    size = plain.stat().st_size
    packed = tmp_path / "t.swf.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert packed.stat().st_size < 10_000 < size
    assert read_swf(packed, max_bytes=size).jobs.height == 2000  # exactly at the cap: fine
    with pytest.raises(TraceFormatError) as info:
        read_swf(packed, max_bytes=10_000)
    message = str(info.value)
    assert message.startswith(f"{packed}: ") and "10,000 bytes" in message
    assert "max_bytes" in message
    with pytest.raises(TraceFormatError, match="10,000 bytes"):
        read_swf(plain, max_bytes=10_000)


def test_default_cap_is_generous() -> None:
    import inspect

    from scheduler.traces.swf import DEFAULT_MAX_BYTES

    assert DEFAULT_MAX_BYTES == 4 * 2**30
    assert inspect.signature(read_swf).parameters["max_bytes"].default == DEFAULT_MAX_BYTES


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_cap_argument(kth_path: Path, bad: object) -> None:
    with pytest.raises(ConfigurationError, match="max_bytes"):
        read_swf(kth_path, max_bytes=bad)  # type: ignore[arg-type]
