"""The sacct import: hand-made ``sacct --parsable2`` files, one case of real accounting each
(steps, arrays, heterogeneous jobs, cancelled before start, still running, UNLIMITED, memory per
node or per CPU, time zones), errors naming the line and the field, and the round trip of the
written trace through read_swf."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest

import scheduler
from scheduler.cli.main import main
from scheduler.core.errors import ConfigurationError, NoJobsError, TraceFormatError
from scheduler.traces.sacct import (
    DROP_CANCELLED_UNSTARTED,
    DROP_ENDED_UNSTARTED,
    DROP_NOT_FINISHED,
    DROP_REPEATED,
    DROP_STEP_WITHOUT_JOB,
    REPAIR_DST,
    REPAIR_END_BEFORE_START,
    REPAIR_START_BEFORE_SUBMIT,
    REPAIR_UNLIMITED,
    REPAIR_UNLIMITED_GIVEN,
    REPAIR_WHOLE_NODE_MEMORY,
    SACCT_FIELDS,
    default_side_path,
    import_sacct,
    parse_duration_s,
    parse_memory_kb,
    read_sacct,
)
from scheduler.traces.swf import read_swf

HEADER = "|".join(SACCT_FIELDS)
DEFAULTS = {
    "User": "alice", "Group": "staff", "Account": "proj", "Partition": "batch", "QOS": "normal",
    "Submit": "2024-03-01T10:00:00", "Eligible": "2024-03-01T10:00:00",
    "Start": "2024-03-01T10:00:10", "End": "2024-03-01T10:05:10", "Timelimit": "01:00:00",
    "AllocCPUS": "4", "ReqCPUS": "4", "AllocNodes": "1", "ReqNodes": "1", "ReqMem": "4000M",
    "MaxRSS": "", "State": "COMPLETED", "ExitCode": "0:0",
}  # fmt: skip


def row(job_id: str, **fields: str) -> str:
    """One sacct row: the defaults, overridden by ``fields``."""
    values = {**DEFAULTS, **fields, "JobID": job_id}
    return "|".join(values[name] for name in SACCT_FIELDS)


def step(job_id: str, **fields: str) -> str:
    """A step row: no user, account, limit or request, as sacct prints them."""
    blank = dict.fromkeys(("User", "Group", "Account", "Partition", "QOS", "Timelimit",
                           "ReqCPUS", "ReqMem"), "")  # fmt: skip
    return row(job_id, **{**blank, **fields})


def write(tmp_path: Path, *rows: str, header: str = HEADER, name: str = "acct.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("01:00:00", 3600), ("1-00:00:00", 86400), ("2-03:04:05", 183845), ("10:30", 630),
     ("45", 2700), ("1-12", 129600), ("1-12:30", 131400), ("00:00:07.250", 7),
     ("UNLIMITED", None), ("Partition_Limit", None), ("", None)],
)  # fmt: skip
def test_durations(text: str, seconds: int | None) -> None:
    assert parse_duration_s(text) == seconds


@pytest.mark.parametrize("text", ["1:2:3:4", "x", "1-", "-1:00", "1:xx", "1::00"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration_s(text)


@pytest.mark.parametrize(
    ("text", "unit", "expected"),
    [("4000M", "M", (4000 * 1024.0, "")), ("4000", "M", (4000 * 1024.0, "")),
     ("2000Mc", "M", (2000 * 1024.0, "c")), ("4Gn", "M", (4 * 1024.0**2, "n")),
     ("1.50G", "M", (1.5 * 1024**2, "")), ("10452K", "", (10452.0, "")),
     ("2048", "", (2.0, "")), ("0", "", (0.0, "")), ("0n", "M", (0.0, "n")),
     ("1T", "M", (1024.0**3, ""))],
)  # fmt: skip
def test_memory(text: str, unit: str, expected: tuple[float, str]) -> None:
    assert parse_memory_kb(text, default_unit=unit) == expected


# --------------------------------------------------------------------------------------------
# Cases of real accounting
# --------------------------------------------------------------------------------------------


def test_a_plain_job(tmp_path: Path) -> None:
    done = read_sacct(write(tmp_path, row("100")))
    job = done.trace.jobs.row(0, named=True)
    assert job["job_id"] == 1 and job["submit_s"] == 0
    assert (job["wait_s"], job["run_s"], job["req_time_s"]) == (10, 300, 3600)
    assert (job["alloc_procs"], job["req_procs"]) == (4, 4)
    assert job["req_mem_kb"] == 4000 * 1024 / 4  # ReqMem without suffix: the job's total
    assert (job["status"], job["user_id"], job["group_id"]) == (1, 1, 1)
    assert done.trace.header.unix_start_time == 1709287200  # 2024-03-01T10:00:00Z
    assert done.trace.header.time_zone_string == "UTC"
    assert done.side.row(0, named=True)["slurm_job_id"] == "100"
    assert done.report.jobs_out == 1 and done.report.dropped == {} and done.report.repaired == {}


def test_steps_are_folded_and_give_the_max_rss(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        row("100"),
        step("100.batch", MaxRSS="10452K"),
        step("100.extern", MaxRSS="0"),
        step("100.0", MaxRSS="2G"),
        step("100.1", MaxRSS="1.50G"),
    )
    done = read_sacct(path)
    assert done.trace.jobs.height == 1
    assert done.trace.jobs["used_mem_kb"][0] == 2 * 1024**2
    assert done.side["max_rss_kb"][0] == 2 * 1024**2
    assert done.report.steps_folded == 4 and done.report.rows == 5 and done.report.job_rows == 1


def test_a_step_without_its_job_is_dropped(tmp_path: Path) -> None:
    done = read_sacct(write(tmp_path, step("99.batch"), row("100")))
    assert done.report.dropped == {DROP_STEP_WITHOUT_JOB: 1}
    assert done.trace.jobs.height == 1


def test_array_tasks_are_jobs_and_the_pending_rest_is_dropped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        row("200_1", Start="2024-03-01T10:00:20"),
        step("200_1.batch", MaxRSS="100K"),
        row("200_2", Start="2024-03-01T10:00:30"),
        row("200_[3-9%2]", Start="Unknown", End="Unknown", State="PENDING", AllocNodes="0"),
    )
    done = read_sacct(path)
    assert done.side["slurm_job_id"].to_list() == ["200_1", "200_2"]
    assert done.trace.jobs["wait_s"].to_list() == [20, 30]
    assert done.report.array_tasks == 2
    assert done.report.dropped == {DROP_NOT_FINISHED: 1}
    assert done.report.steps_folded == 1


def test_a_heterogeneous_job_is_merged(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        row("300+0", AllocCPUS="2", ReqCPUS="2", ReqMem="1G", Timelimit="00:30:00"),
        step("300+0.batch", MaxRSS="1M"),
        row("300+1", AllocCPUS="6", ReqCPUS="6", AllocNodes="2", ReqNodes="2", ReqMem="3G",
            Timelimit="00:40:00", End="2024-03-01T10:07:10", State="TIMEOUT",
            ExitCode="0:15", Partition="gpu"),
        step("300+1.0", MaxRSS="3M"),
    )  # fmt: skip
    done = read_sacct(path)
    assert done.trace.jobs.height == 1
    job = done.trace.jobs.row(0, named=True)
    assert (job["alloc_procs"], job["req_procs"], job["run_s"]) == (8, 8, 420)
    assert job["req_time_s"] == 2400
    assert job["req_mem_kb"] == 4 * 1024**2 / 8
    assert job["used_mem_kb"] == 3 * 1024
    assert job["status"] == 0  # one component timed out
    side = done.side.row(0, named=True)
    assert (side["slurm_job_id"], side["het_components"], side["state"]) == ("300", 2, "TIMEOUT")
    assert done.report.het_components_merged == 1 and done.report.job_rows == 2


def test_cancelled_before_start_is_dropped_and_counted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        row("100"),
        # Unknown start (older Slurm) and start = end with no node (22.05)
        row("101", Start="Unknown", End="2024-03-01T10:01:00", State="CANCELLED by 1000",
            AllocNodes="0"),
        row("102", Start="2024-03-01T10:01:00", End="2024-03-01T10:01:00",
            State="CANCELLED by 0", AllocNodes="0"),
        row("103", Start="None", End="2024-03-01T10:01:00", State="FAILED", AllocNodes="0"),
        # cancelled while running: kept, status 5
        row("104", State="CANCELLED by 1000", ExitCode="0:15"),
    )  # fmt: skip
    done = read_sacct(path)
    assert done.side["slurm_job_id"].to_list() == ["100", "104"]
    assert done.trace.jobs["status"].to_list() == [1, 5]
    assert done.report.dropped == {DROP_CANCELLED_UNSTARTED: 2, DROP_ENDED_UNSTARTED: 1}


@pytest.mark.parametrize("state", ["RUNNING", "PENDING", "REQUEUED", "SUSPENDED"])
def test_unfinished_jobs_are_dropped(tmp_path: Path, state: str) -> None:
    path = write(tmp_path, row("100"), row("101", End="Unknown", State=state))
    done = read_sacct(path)
    assert done.trace.jobs.height == 1
    assert done.report.dropped == {DROP_NOT_FINISHED: 1}


@pytest.mark.parametrize(
    ("state", "status"),
    [("COMPLETED", 1), ("FAILED", 0), ("TIMEOUT", 0), ("OUT_OF_MEMORY", 0), ("NODE_FAIL", 0),
     ("PREEMPTED", 0), ("BOOT_FAIL", 0), ("DEADLINE", 0), ("CANCELLED by 42", 5),
     ("CANCELLED+", 5)],
)  # fmt: skip
def test_swf_status_of_each_state(tmp_path: Path, state: str, status: int) -> None:
    done = read_sacct(write(tmp_path, row("100", State=state)))
    assert done.trace.jobs["status"][0] == status


def test_limits(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        row("1", Timelimit="2-00:00:00"),
        row("2", Timelimit="UNLIMITED"),
        row("3", Timelimit="Partition_Limit"),
        row("4", Timelimit="30"),
    )
    done = read_sacct(path)
    assert done.trace.jobs["req_time_s"].to_list() == [172800, -1, -1, 1800]
    assert done.report.repaired == {REPAIR_UNLIMITED: 2}
    given = read_sacct(path, unlimited_time_s=7 * 86400)
    assert given.trace.jobs["req_time_s"].to_list() == [172800, 604800, 604800, 1800]
    assert given.report.repaired == {REPAIR_UNLIMITED_GIVEN: 2}


def test_timelimit_raw_in_minutes(tmp_path: Path) -> None:
    fields = [name if name != "Timelimit" else "TimelimitRaw" for name in SACCT_FIELDS]
    text = row("1", Timelimit="90")
    done = read_sacct(write(tmp_path, text, header="|".join(fields)))
    assert done.trace.jobs["req_time_s"][0] == 5400


@pytest.mark.parametrize(
    ("req_mem", "procs", "nodes", "per_proc_kb"),
    [("2000Mc", "4", "1", 2000 * 1024), ("8000Mn", "4", "2", 8000 * 1024 * 2 / 4),
     ("16G", "8", "2", 16 * 1024**2 / 8), ("4Gn", "2", "1", 2 * 1024**2), ("", "4", "1", -1)],
)  # fmt: skip
def test_memory_per_node_per_cpu_or_total(
    tmp_path: Path, req_mem: str, procs: str, nodes: str, per_proc_kb: float
) -> None:
    path = write(tmp_path, row("1", ReqMem=req_mem, AllocCPUS=procs, ReqCPUS=procs,
                               AllocNodes=nodes, ReqNodes=nodes))  # fmt: skip
    assert read_sacct(path).trace.jobs["req_mem_kb"][0] == per_proc_kb


@pytest.mark.parametrize("req_mem", ["0", "0n", "0c"])
def test_a_whole_node_memory_request_is_unknown(tmp_path: Path, req_mem: str) -> None:
    done = read_sacct(write(tmp_path, row("1", ReqMem=req_mem)))
    assert done.trace.jobs["req_mem_kb"][0] == -1
    assert done.report.repaired == {REPAIR_WHOLE_NODE_MEMORY: 1}


def test_time_zones(tmp_path: Path) -> None:
    path = write(tmp_path, row("1"))
    utc = read_sacct(path).trace.header.unix_start_time
    oslo = read_sacct(path, timezone="Europe/Oslo").trace
    assert oslo.header.unix_start_time == utc - 3600  # CET is UTC+1 in March
    assert oslo.header.time_zone_string == "Europe/Oslo"
    # an explicit offset and epoch seconds do not depend on the zone
    offset = write(tmp_path, row("1", Submit="2024-03-01T10:00:00+01:00"), name="offset.txt")
    assert read_sacct(offset, timezone="Asia/Tokyo").trace.header.unix_start_time == utc - 3600
    epoch = write(tmp_path, row("1", Submit=str(utc), Eligible=str(utc), Start=str(utc + 10),
                                End=str(utc + 310)), name="epoch.txt")  # fmt: skip
    jobs = read_sacct(epoch, timezone="Europe/Oslo").trace.jobs
    assert (jobs["wait_s"][0], jobs["run_s"][0]) == (10, 300)


def test_a_time_in_the_repeated_dst_hour_is_counted(tmp_path: Path) -> None:
    # Europe/Oslo: 2024-10-27 02:00-03:00 happens twice
    path = write(tmp_path, row("1", Submit="2024-10-27T02:30:00", Eligible="2024-10-27T02:30:00",
                               Start="2024-10-27T02:40:00", End="2024-10-27T03:10:00"))  # fmt: skip
    done = read_sacct(path, timezone="Europe/Oslo")
    assert done.report.repaired == {REPAIR_DST: 3}  # submit, eligible, start (not 03:10)
    assert done.trace.jobs["wait_s"][0] == 600


def test_repairs_of_inconsistent_times(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        row("1", Start="2024-03-01T09:59:00"),
        row("2", End="2024-03-01T10:00:05"),
    )
    done = read_sacct(path)
    assert done.trace.jobs["wait_s"].to_list() == [0, 10]
    assert done.trace.jobs["run_s"].to_list() == [310, 0]  # from the repaired start
    assert done.report.repaired == {REPAIR_START_BEFORE_SUBMIT: 1, REPAIR_END_BEFORE_START: 1}


def test_a_repeated_job_id_keeps_the_last_row(tmp_path: Path) -> None:
    path = write(tmp_path, row("1", State="FAILED"), row("1"))
    done = read_sacct(path)
    assert done.trace.jobs["status"].to_list() == [1]
    assert done.report.dropped == {DROP_REPEATED: 1}


def test_users_groups_accounts_are_numbered_by_first_appearance(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        # written out of submit order: numbering follows the trace (submit order)
        row("3", User="carol", Group="g2", Account="a2", Submit="2024-03-01T10:00:02"),
        row("1", User="bob", Group="g1", Account="a1", Submit="2024-03-01T09:59:00"),
        row("2", User="alice", Group="g1", Account="a2", Submit="2024-03-01T10:00:01"),
        row("4", User="bob", Group="g1", Account="a1", Submit="2024-03-01T10:00:03"),
    )
    done = read_sacct(path)
    assert done.side["slurm_job_id"].to_list() == ["1", "2", "3", "4"]
    assert done.trace.jobs["user_id"].to_list() == [1, 2, 3, 1]
    assert done.trace.jobs["group_id"].to_list() == [1, 1, 2, 1]
    assert done.side["account_id"].to_list() == [1, 2, 2, 1]
    assert "user_name" not in done.side.columns
    text = "\n".join(done.trace.header.lines)
    assert "alice" not in text and "bob" not in text and "a1" not in text
    named = read_sacct(path, keep_names=True).side
    assert named["user_name"].to_list() == ["bob", "alice", "carol", "bob"]
    assert named["account_name"].to_list() == ["a1", "a2", "a2", "a1"]


def test_queue_and_partition_numbers_are_in_the_header(tmp_path: Path) -> None:
    path = write(tmp_path, row("1", QOS="high", Partition="gpu"), row("2"))
    done = read_sacct(path)
    assert done.trace.jobs["queue_id"].to_list() == [1, 2]
    assert done.trace.jobs["partition_id"].to_list() == [1, 2]
    assert done.trace.header.values("Queue") == ("1 high", "2 normal")
    assert done.trace.header.values("Partition") == ("1 gpu", "2 batch")


def test_machine_size_given_or_the_peak_of_allocated_cpus(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        row("1", AllocCPUS="4", ReqCPUS="4"),
        row("2", AllocCPUS="8", ReqCPUS="8", Start="2024-03-01T10:05:00",
            End="2024-03-01T10:10:00"),
        # starts when job 1 ends: not concurrent with it
        row("3", AllocCPUS="2", ReqCPUS="2", Start="2024-03-01T10:05:10",
            End="2024-03-01T10:06:00"),
    )  # fmt: skip
    done = read_sacct(path)
    assert done.trace.machine_procs == 12 and done.report.machine_procs_inferred
    assert done.trace.header.max_procs == 12
    given = read_sacct(path, machine_procs=64)
    assert given.trace.header.max_procs == 64 and not given.report.machine_procs_inferred


def test_fields_in_another_order_and_optional_ones_missing(tmp_path: Path) -> None:
    header = "State|End|Start|Submit|AllocCPUS|JobID"
    path = write(tmp_path, "COMPLETED|2024-03-01T10:05:10|2024-03-01T10:00:10|"
                 "2024-03-01T10:00:00|4|7", header=header)  # fmt: skip
    job = read_sacct(path).trace.jobs.row(0, named=True)
    assert (job["run_s"], job["alloc_procs"], job["req_procs"]) == (300, 4, 4)
    assert (job["req_time_s"], job["req_mem_kb"], job["user_id"]) == (-1, -1, -1)


def test_noheader_output_with_the_documented_fields(tmp_path: Path) -> None:
    path = tmp_path / "plain.txt"
    path.write_text(row("5") + "\n")
    assert read_sacct(path).trace.jobs.height == 1


def test_gzipped_input(tmp_path: Path) -> None:
    path = tmp_path / "acct.txt.gz"
    path.write_bytes(gzip.compress(("\n".join([HEADER, row("1")]) + "\n").encode()))
    assert read_sacct(path).trace.jobs.height == 1


# --------------------------------------------------------------------------------------------
# Errors: the line and the field
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [({"Submit": "yesterday"}, "Submit", "YYYY-MM-DDTHH:MM:SS"),
     ({"Start": "2024-13-01T00:00:00"}, "Start", "YYYY-MM-DDTHH:MM:SS"),
     ({"Timelimit": "1:xx"}, "Timelimit", "[D-]HH:MM:SS"),
     ({"ReqMem": "4 GB"}, "ReqMem", "memory size"),
     ({"AllocCPUS": "four"}, "AllocCPUS", "whole count"),
     ({"State": "EXPLODED"}, "State", "Slurm job state"),
     ({"ExitCode": "1"}, "ExitCode", "CODE:SIGNAL")],
)  # fmt: skip
def test_a_bad_value_names_the_line_and_field(
    tmp_path: Path, bad: dict[str, str], field: str, words: str
) -> None:
    path = write(tmp_path, row("1"), step("1.batch"), row("2", **bad))
    with pytest.raises(TraceFormatError) as caught:
        read_sacct(path)
    assert (caught.value.line, caught.value.field) == (4, field)
    assert words in str(caught.value) and f"{path}:4: field {field}" in str(caught.value)


def test_a_bad_max_rss_of_a_step_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, row("1"), step("1.batch", MaxRSS="lots"))
    with pytest.raises(TraceFormatError) as caught:
        read_sacct(path)
    assert (caught.value.line, caught.value.field) == (3, "MaxRSS")


def test_a_bad_job_id_and_a_short_line(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError) as caught:
        read_sacct(write(tmp_path, row("1"), row("abc")))
    assert (caught.value.line, caught.value.field) == (3, "JobID")
    with pytest.raises(TraceFormatError, match="expected 19 fields") as caught:
        read_sacct(write(tmp_path, row("1"), "2|alice|COMPLETED"))
    assert caught.value.line == 3


def test_header_problems(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="lacks the field"):
        read_sacct(write(tmp_path, "1|x", header="JobID|User"))
    with pytest.raises(TraceFormatError, match="--parsable2, not --parsable"):
        read_sacct(write(tmp_path, row("1") + "|", header=HEADER + "|"))
    with pytest.raises(TraceFormatError, match="header line"):
        read_sacct(write(tmp_path, "1|2", header="a|b"))
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(TraceFormatError, match="empty"):
        read_sacct(tmp_path / "empty.txt")
    with pytest.raises(TraceFormatError, match="not found"):
        read_sacct(tmp_path / "missing.txt")


def test_no_finished_job_is_an_error_with_the_counts(tmp_path: Path) -> None:
    path = write(tmp_path, row("1", End="Unknown", State="RUNNING"))
    with pytest.raises(NoJobsError, match="not finished at export"):
        read_sacct(path)


def test_bad_arguments(tmp_path: Path) -> None:
    path = write(tmp_path, row("1"))
    with pytest.raises(ConfigurationError, match="unknown time zone"):
        read_sacct(path, timezone="Mars/Olympus")
    with pytest.raises(ConfigurationError, match="machine_procs"):
        read_sacct(path, machine_procs=0)
    with pytest.raises(ConfigurationError, match="keep_names"):
        read_sacct(path, keep_names="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"\.parquet or \.csv"):
        import_sacct(path, tmp_path / "t.swf", side=tmp_path / "side.txt")


# --------------------------------------------------------------------------------------------
# Writing: the round trip, the side table, the API and the CLI
# --------------------------------------------------------------------------------------------


def mixed_file(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        row("100", Timelimit="1-00:00:00"),
        step("100.batch", MaxRSS="10452K"),
        row("101", Start="Unknown", End="2024-03-01T10:01:00", State="CANCELLED by 1000",
            AllocNodes="0"),
        row("102_1", User="bob", Submit="2024-03-01T10:02:00", Start="2024-03-01T10:02:05",
            End="2024-03-01T10:03:05", State="FAILED", ExitCode="1:0", ReqMem="1Gn",
            AllocCPUS="1", ReqCPUS="1"),
        row("103+0", User="carol", QOS="high", Submit="2024-03-01T10:03:00",
            Start="2024-03-01T10:04:00", End="2024-03-01T10:06:00"),
        row("103+1", User="carol", QOS="high", Submit="2024-03-01T10:03:00",
            Start="2024-03-01T10:04:00", End="2024-03-01T10:07:00"),
        row("104", End="Unknown", State="RUNNING"),
    )  # fmt: skip


@pytest.mark.parametrize("suffix", [".swf", ".swf.gz"])
def test_round_trip_through_read_swf(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"cluster{suffix}"
    done = import_sacct(mixed_file(tmp_path), out, computer="Test cluster")
    back = read_swf(out)
    assert back.jobs.equals(done.trace.jobs)
    assert back.machine_procs == done.trace.machine_procs
    assert back.header.unix_start_time == done.trace.header.unix_start_time
    assert back.header.computer == "Test cluster" and back.header.version == "2.2"
    side = pl.read_parquet(default_side_path(out))
    assert side.equals(done.side)
    assert side["job_id"].to_list() == back.jobs["job_id"].to_list() == [1, 2, 3]
    assert side["slurm_job_id"].to_list() == ["100", "102_1", "103"]


def test_csv_side_table(tmp_path: Path) -> None:
    done = import_sacct(mixed_file(tmp_path), tmp_path / "t.swf", side=tmp_path / "s.csv")
    side = pl.read_csv(tmp_path / "s.csv", schema=done.side.schema)
    assert side.equals(done.side)


def test_default_side_path() -> None:
    assert default_side_path("a/trace.swf.gz") == Path("a/trace.side.parquet")
    assert default_side_path("trace.swf") == Path("trace.side.parquet")


def test_the_public_api() -> None:
    assert scheduler.read_sacct is read_sacct and scheduler.import_sacct is import_sacct
    assert {"SacctImport", "SacctReport", "read_sacct", "import_sacct"} <= set(scheduler.__all__)


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cluster.swf.gz"
    code = main(["import", "sacct", str(mixed_file(tmp_path)), "--out", str(out),
                 "--machine-procs", "64", "--timezone", "Europe/Oslo"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "steps folded into their job" in printed and "jobs out" in printed
    assert f"dropped: {DROP_CANCELLED_UNSTARTED}" in printed
    assert f"dropped: {DROP_NOT_FINISHED}" in printed
    trace = read_swf(out)
    assert trace.machine_procs == 64 and trace.header.time_zone_string == "Europe/Oslo"
    assert (tmp_path / "cluster.side.parquet").is_file()


def test_the_command_json_and_keep_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, side = tmp_path / "c.swf", tmp_path / "c.csv"
    code = main(["import", "sacct", str(mixed_file(tmp_path)), "--out", str(out), "--side",
                 str(side), "--keep-names", "--unlimited-limit", "7d", "--json"])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)["report"]
    assert report["jobs_out"] == 3 and report["steps_folded"] == 1
    assert report["het_components_merged"] == 1 and report["array_tasks"] == 1
    assert report["machine_procs_inferred"] and "peak of concurrently" in captured.err
    assert "bob" in pl.read_csv(side)["user_name"].to_list()


def test_the_command_reports_a_bad_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, row("1", Submit="soon"))
    code = main(["import", "sacct", str(path), "--out", str(tmp_path / "t.swf")])
    assert code == 2
    assert f"{path}:2: field Submit" in capsys.readouterr().err
    assert not (tmp_path / "t.swf").exists()
