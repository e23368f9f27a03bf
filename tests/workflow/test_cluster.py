"""The slurm profile on a live Slurm cluster: real sbatch submissions, real accounting.

Needs the single-node cluster of ``tests/cluster/slurm-up`` (munge, MariaDB, slurmdbd,
slurmctld, slurmd) and ``SLURM_CONF`` pointing at it: ``python3 dev.py test-cluster`` starts it,
runs these tests and stops it; ``.ci/run`` does so on every CI run. Marked ``cluster`` and
deselected from the default run (starting the daemons needs root); without a live cluster
the tests fail, they never skip.

The study is the workflow tests' tiny configuration, cut to what a cluster test needs (two
policy pairs, one batch per split, one online replica) so that the whole module stays under
five minutes on two cores. Snakemake runs exactly as a user runs it,
``snakemake --profile profiles/slurm``, with the account written into the profile as docs/cluster.md
says, and under ``timeout -s KILL`` (Snakemake ignores SIGTERM while jobs run).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.tiny_project import (
    job_stats,
    make_project,
    result_files,
    tiny_config,
    write_config,
)

pytestmark = pytest.mark.cluster

ACCOUNT = os.environ.get("SCHEDLAB_SLURM_ACCOUNT", "schedlab")
#: Seconds a cluster run may take before it is killed (the whole module must stay < 5 min).
RUN_LIMIT_S = 200
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/([^/]+)/")


def cluster_study_config(mirror: Path) -> dict:
    """The tiny study, smaller: 2 pairs x 2 thresholds x 2 splits, one online replica, two
    prediction techniques with EASY backfilling."""
    config = tiny_config(
        mirror,
        backfill_policies=["FCFS"],
        weeks_per_job=4,
        # the descriptive figures from the training weeks and no whole-log table: their
        # simulations would be more components of the "simulate" group than one submission
        # takes (group-components), and this test counts the submissions
        figures={"weeks": 4, "thresholded_backfill": "FCFS", "weeks_from": "train"},
        whole_log={"traces": []},
        # the source-week bootstrap: one job of two replicates, its own submission
        bootstrap={"replicates": 2, "replicates_per_job": 2},
    )
    config["online"].update(
        replicas=1, policies=["FCFS", "SPF"], periods=["1d"], selectors=["full", "bandit"],
        epsilons=[0.1],
    )  # fmt: skip
    config["prediction"].update(predictors=["requested", "nag"], backfill=["easy"])
    # the learned study's rules run on Slurm like the others; left out here to keep this
    # test's submissions (and its time) to the three studies it checks
    config["studies"] = ["tuning", "online", "prediction"]
    return config


def slurm(env: dict[str, str], *command: str) -> str:
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{' '.join(command)}: {done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, str]]:
    """The environment of the Slurm client commands; fails when no cluster answers."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if not env.get("SLURM_CONF") or shutil.which("sinfo") is None:
        pytest.fail(
            "no Slurm cluster: run tests/cluster/slurm-up, then `source "
            "/tmp/schedlab-slurm/env` (or run `python3 dev.py test-cluster`)"
        )
    states = slurm(env, "sinfo", "-h", "-o", "%T").split()
    assert states and set(states) <= {"idle", "mixed", "allocated"}, f"node states: {states}"
    yield env
    # a failed or killed run can leave jobs behind: cancel this account's jobs
    subprocess.run(["scancel", f"--account={ACCOUNT}"], env=env, timeout=60, check=False)


def use_account(project: Path) -> None:
    """Write the account into the profile's default resources, as docs/cluster.md tells users."""
    profile = project / "profiles" / "slurm" / "config.yaml"
    settings = yaml.safe_load(profile.read_text())
    settings["default-resources"]["slurm_account"] = ACCOUNT
    profile.write_text(yaml.safe_dump(settings, sort_keys=False))


def run_on_cluster(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """``snakemake --profile profiles/slurm`` in ``project``, killed after RUN_LIMIT_S."""
    command = [
        "timeout", "-s", "KILL", str(RUN_LIMIT_S), sys.executable, "-m", "snakemake",
        "--profile", "profiles/slurm", "--configfile", "tiny.yaml",
        # the first status check would wait 40 s; sacct answers at once here
        "--slurm-init-seconds-before-status-checks", "1", *args,
    ]  # fmt: skip
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    (project / f"cluster-run-{len(list(project.glob('cluster-run-*')))}.log").write_text(
        done.stdout + done.stderr
    )
    assert done.returncode not in (-9, 137), f"killed after {RUN_LIMIT_S} s"
    return done


def start_locally(project: Path, *args: str) -> subprocess.Popen:
    """The same study run locally (``--cores 2``), in the background: the cluster runs mostly
    wait for Slurm, so the reference run overlaps them."""
    return subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "tiny.yaml", *args],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def finish_locally(run: subprocess.Popen) -> None:
    output, _ = run.communicate(timeout=RUN_LIMIT_S)
    assert run.returncode == 0, output


def submissions(output: str) -> dict[str, str]:
    """Slurm job id -> what it ran (``rule_<name>`` or ``group_<name>_<rules>``), as Snakemake
    reported the submissions."""
    return {job_id: what for job_id, what in SUBMITTED.findall(output)}


def accounting(env: dict[str, str], job_ids: list[str]) -> dict[str, dict[str, str]]:
    """sacct's record (job name, account, state) of each given Slurm job."""
    text = slurm(
        env, "sacct", "-X", "-n", "-P", "-j", ",".join(job_ids), "-o", "JobID,JobName,Account,State"
    )
    rows = {}
    for line in text.splitlines():
        job_id, name, account, state = line.split("|")
        rows[job_id] = {"name": name, "account": account, "state": state}
    return rows


@pytest.fixture(scope="module")
def projects(
    tmp_path_factory: pytest.TempPathFactory, kth_path: Path, cluster: dict[str, str]
) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """The study run through Slurm, and the same study run locally (same files, same mirror)."""
    base = tmp_path_factory.mktemp("cluster")
    on_cluster = make_project(base, kth_path)
    write_config(on_cluster, cluster_study_config(base / "mirror"))
    use_account(on_cluster)
    local = base / "local"
    shutil.copytree(on_cluster, local)
    reference = start_locally(local)
    done = run_on_cluster(on_cluster, cluster)
    finish_locally(reference)
    assert done.returncode == 0, done.stdout + done.stderr
    return on_cluster, local, done


def test_the_study_goes_through_slurm_under_the_account(
    projects: tuple[Path, Path, subprocess.CompletedProcess], cluster: dict[str, str]
) -> None:
    _, _, done = projects
    submitted = submissions(done.stdout + done.stderr)
    records = accounting(cluster, list(submitted))
    assert sorted(records) == sorted(submitted)
    assert {row["account"] for row in records.values()} == {ACCOUNT}
    assert {row["state"] for row in records.values()} == {"COMPLETED"}
    assert len({row["name"] for row in records.values()}) == 1  # the workflow run's id
    ran = sorted(submitted.values())
    # the profile's groups: the trace's filter, split and resampling in one submission, the
    # tuning simulations (2 splits x 2 pairs) and the prediction techniques in one, the online
    # replica in one, the overrun filter and the bootstrap in one each, the local rules
    # (download, tables, figures) not submitted at all
    assert ran == [
        "group_online_long_trace_online_run_period_costs",
        "group_prepare_filter_trace_resample_weeks_split_trace",
        "group_simulate_simulate_batch_simulate_technique",
        "rule_filter_trace_overrun",
        "rule_tuning_bootstrap",
    ], ran


def test_results_are_identical_to_a_local_run(
    projects: tuple[Path, Path, subprocess.CompletedProcess],
) -> None:
    on_cluster, local, _ = projects
    cluster_files, local_files = result_files(on_cluster), result_files(local)
    assert sorted(cluster_files) == sorted(local_files)
    assert any(name.endswith("protocol.csv") for name in cluster_files)
    different = [name for name in cluster_files if cluster_files[name] != local_files[name]]
    assert not different


def test_a_failed_simulation_is_reported_and_a_rerun_resumes(
    projects: tuple[Path, Path, subprocess.CompletedProcess],
    cluster: dict[str, str],
    tmp_path: Path,
) -> None:
    on_cluster, local, _ = projects
    project = tmp_path / "study"
    shutil.copytree(on_cluster, project, symlinks=True)
    # a new threshold: the pairs' simulations (2 splits x 2 pairs, each job runs all the
    # thresholds of its pair; the profile's "simulate" group: one submission) and what follows
    # them (the bootstrap, one submission; local rules) run
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["tuning"]["thresholds"] = ["none", "20h", "40h"]
    write_config(project, config)
    write_config(local, config)

    # the test split's week batch goes bad (same name, same time stamp): its jobs must fail
    batch = project / "results/KTH-slice/weeks/test/batch0.parquet"
    good, stamp = batch.read_bytes(), batch.stat()
    batch.write_bytes(b"PAR1 not a parquet file PAR1")
    os.utime(batch, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    sims = project / "results/tuning/KTH-slice/sims"
    # what other submissions made (the online replica, the prediction runs, the weeks)
    kept = {
        path: path.stat().st_mtime_ns for path in (project / "results").rglob("*.parquet")
        if sims not in path.parents and path != batch and "tuning" not in path.parts
    }  # fmt: skip
    assert kept
    # without the profile's one retry (it would fail the same way; it costs 35 s here)
    failed = run_on_cluster(project, cluster, "--retries", "0")
    output = failed.stdout + failed.stderr
    assert failed.returncode != 0
    assert "Error in rule simulate_batch" in output, output
    submitted = submissions(output)
    assert sorted(submitted.values()) == ["group_simulate_simulate_batch"], output
    records = accounting(cluster, list(submitted))
    assert [row["state"] for row in records.values()] == ["FAILED"], records
    # the submission runs its jobs as threads of one Snakemake process and stops at the first
    # failure: the failed pair's own log names the bad file; Snakemake removed every output of
    # the failed submission (they "might be corrupted"), and nothing else
    logs = sorted((project / "logs/tuning/KTH-slice/sims/test").rglob("batch0.log"))
    bad = "batch0.parquet: not a readable parquet table"
    assert sum(bad in log.read_text() for log in logs) >= 1, [log.read_text() for log in logs]
    assert not list(sims.rglob("*.parquet"))
    assert {path: path.stat().st_mtime_ns for path in kept} == kept

    # repaired, the same command again: only the failed submission's simulations run again
    # (the job stats Snakemake prints before it runs: what a dry run would plan)
    batch.write_bytes(good)
    os.utime(batch, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    reference = start_locally(local)
    resumed = run_on_cluster(project, cluster)
    finish_locally(reference)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    replanned = job_stats(resumed.stdout + resumed.stderr)
    assert replanned["simulate_batch"] == 4, replanned
    assert not {"filter_trace", "resample_weeks", "long_trace", "online_run"} & set(replanned)
    # and, after it, the bootstrap of the test half (a new threshold, a new learned pair)
    assert list(submissions(resumed.stdout + resumed.stderr).values()) == [
        "group_simulate_simulate_batch",
        "rule_tuning_bootstrap",
    ]
    assert {path: path.stat().st_mtime_ns for path in kept} == kept
    assert result_files(project) == result_files(local)
