"""The sacct import on real accounting: jobs submitted to the live Slurm cluster, exported with
the documented ``sacct`` command and imported.

Needs the single-node cluster of ``tests/cluster/slurm-up`` and ``SLURM_CONF`` pointing at it
(``python3 dev.py test-cluster`` starts it, runs the tests marked ``cluster`` and stops it).
Marked ``cluster``: deselected from the default run; without a live cluster it fails, never
skips. The jobs are small ``sleep`` jobs: one that fills the node, one submitted behind it and
cancelled while pending, an array of three, one that fails, one with memory per CPU and a
one-day limit, one without a time limit. The module takes some 30 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler.cli.main import main
from scheduler.traces.sacct import (
    DROP_CANCELLED_UNSTARTED,
    REPAIR_UNLIMITED,
    SACCT_FIELDS,
    read_sacct,
)
from scheduler.traces.swf import read_swf

pytestmark = pytest.mark.cluster

ACCOUNT = os.environ.get("SCHEDLAB_SLURM_ACCOUNT", "schedlab")
#: Seconds the jobs may take to finish and reach the accounting database.
WAIT_S = 120


def slurm(env: dict[str, str], *command: str) -> str:
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{' '.join(command)}: {done.stderr}"
    return done.stdout


def sbatch(env: dict[str, str], *options: str) -> str:
    """Submit a job under the test account, its output discarded; its id."""
    command = ("sbatch", "--parsable", f"--account={ACCOUNT}", "--output=/dev/null", *options)
    return slurm(env, *command).strip()


def state(env: dict[str, str], job_id: str) -> str:
    return slurm(env, "squeue", "-h", "-j", job_id, "-o", "%T").strip()


def wait_for(condition, what: str, seconds: float = WAIT_S) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(1)


def export(env: dict[str, str], job_ids: list[str], zone: str) -> str:
    """The documented sacct command, for these jobs, with the clock in ``zone``."""
    return slurm(
        {**env, "TZ": zone}, "sacct", "--allusers", "--parsable2", "--starttime", "2000-01-01",
        "-j", ",".join(job_ids), f"--format={','.join(SACCT_FIELDS)}",
    )  # fmt: skip


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, str]]:
    """The environment of the Slurm client commands; fails when no cluster answers."""
    env = {**os.environ}
    if not env.get("SLURM_CONF") or shutil.which("sinfo") is None:
        pytest.fail(
            "no Slurm cluster: run tests/cluster/slurm-up, then `source "
            "/tmp/schedlab-slurm/env` (or run `python3 dev.py test-cluster`)"
        )
    states = slurm(env, "sinfo", "-h", "-o", "%T").split()
    assert states and set(states) <= {"idle", "mixed", "allocated"}, f"node states: {states}"
    yield env


@pytest.fixture(scope="module")
def submitted(cluster: dict[str, str]) -> Iterator[dict[str, str]]:
    """Name -> Slurm job id of the jobs, all finished and in the accounting."""
    env = cluster
    cpus = int(slurm(env, "sinfo", "-h", "-o", "%c").split()[0].rstrip("+"))
    jobs: dict[str, str] = {}
    try:
        jobs["blocker"] = sbatch(env, "-n", str(cpus), "-t", "1", "--wrap", "srun sleep 6")
        wait_for(lambda: state(env, jobs["blocker"]) == "RUNNING", "the blocker to run")
        jobs["victim"] = sbatch(env, "-n", "1", "-t", "1", "--wrap", "sleep 1")
        wait_for(lambda: state(env, jobs["victim"]) == "PENDING", "the victim to pend", 10)
        slurm(env, "scancel", jobs["victim"])
        jobs["array"] = sbatch(env, "-n", "1", "-t", "2", "--array=1-3", "--wrap", "sleep 1")
        jobs["fails"] = sbatch(env, "-n", "1", "-t", "1", "--wrap", "exit 3")
        jobs["per_cpu"] = sbatch(env, "-n", "1", "-t", "1-00:00:00", "--mem-per-cpu=50M",
                                 "--wrap", "srun sleep 1")  # fmt: skip
        jobs["unlimited"] = sbatch(env, "-n", "1", "-t", "UNLIMITED", "--wrap", "sleep 1")
        ids = list(jobs.values())
        wait_for(lambda: not slurm(env, "squeue", "-h", "-j", ",".join(ids)).strip(),
                 "the jobs to finish")  # fmt: skip

        def recorded() -> bool:  # every job row of the accounting in a final state
            rows = [line.split("|") for line in export(env, ids, "UTC").splitlines()[1:]]
            states = [r[SACCT_FIELDS.index("State")] for r in rows if "." not in r[0]]
            return len(states) == 8 and not {"PENDING", "RUNNING"} & set(states)

        wait_for(recorded, "the accounting of the jobs")
        yield jobs
    finally:
        if jobs:
            subprocess.run(["scancel", *jobs.values()], env=env, timeout=60, check=False)


def test_the_exported_accounting_imports(
    submitted: dict[str, str], cluster: dict[str, str], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    accounting = tmp_path / "accounting.txt"
    accounting.write_text(export(cluster, list(submitted.values()), "UTC"))
    out = tmp_path / "cluster.swf.gz"
    assert main(["import", "sacct", str(accounting), "--out", str(out), "--keep-names"]) == 0
    assert "dropped: cancelled before it started" in capsys.readouterr().out
    trace = read_swf(out)
    imported = read_sacct(accounting, keep_names=True)
    assert trace.jobs.equals(imported.trace.jobs)
    side = imported.side
    a = submitted["array"]
    expected = [submitted["blocker"], f"{a}_1", f"{a}_2", f"{a}_3", submitted["fails"],
                submitted["per_cpu"], submitted["unlimited"]]  # fmt: skip
    assert sorted(side["slurm_job_id"]) == sorted(expected)
    report = imported.report
    assert report.dropped == {DROP_CANCELLED_UNSTARTED: 1}
    assert report.array_tasks == 3 and report.jobs_out == 7
    assert report.steps_folded >= 7  # a batch step each, srun steps of two
    assert report.repaired == {REPAIR_UNLIMITED: 1}
    by_id = dict(zip(side["slurm_job_id"], trace.jobs.iter_rows(named=True), strict=True))
    states = dict(zip(side["slurm_job_id"], side["state"], strict=True))
    assert states[submitted["fails"]] == "FAILED" and by_id[submitted["fails"]]["status"] == 0
    assert by_id[submitted["blocker"]]["status"] == 1
    assert by_id[submitted["blocker"]]["run_s"] >= 5
    assert by_id[submitted["per_cpu"]]["req_time_s"] == 86400
    assert by_id[submitted["per_cpu"]]["req_mem_kb"] == 50 * 1024
    assert by_id[submitted["unlimited"]]["req_time_s"] == -1
    # the array tasks waited for the blocker to end
    blocker = by_id[submitted["blocker"]]
    blocker_end = blocker["submit_s"] + blocker["wait_s"] + blocker["run_s"]
    for task in (f"{a}_1", f"{a}_2", f"{a}_3"):
        assert by_id[task]["submit_s"] + by_id[task]["wait_s"] >= blocker_end
    assert set(side["user_name"]) == {slurm(cluster, "id", "-un").strip()}
    assert set(side["account_name"]) == {ACCOUNT}
    assert set(trace.jobs["user_id"]) == {1}


def test_the_clock_zone_does_not_change_the_trace(
    submitted: dict[str, str], cluster: dict[str, str], tmp_path: Path
) -> None:
    ids = list(submitted.values())
    utc, tokyo = tmp_path / "utc.txt", tmp_path / "tokyo.txt"
    utc.write_text(export(cluster, ids, "UTC"))
    tokyo.write_text(export(cluster, ids, "Asia/Tokyo"))
    assert utc.read_text() != tokyo.read_text()
    from_utc = read_sacct(utc)
    from_tokyo = read_sacct(tokyo, timezone="Asia/Tokyo")
    assert from_utc.trace.jobs.equals(from_tokyo.trace.jobs)
    assert from_utc.trace.header.unix_start_time == from_tokyo.trace.header.unix_start_time
    assert from_tokyo.trace.header.time_zone_string == "Asia/Tokyo"
