"""The what-if study's log from each source (scheduler.studies.whatif.jobs.site_jobs): an sacct
export imported on the fly (accounts by name), an SWF file (accounts: the groups), a log
without users refused naming the key."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.studies.whatif.jobs import site_jobs
from scheduler.studies.whatif.runs import resampled_weeks, simulate_weeks
from scheduler.studies.whatif.schedulers import slurm_scheduler
from scheduler.traces.sacct import SACCT_FIELDS
from scheduler.traces.site import synthetic_site
from scheduler.traces.swf import write_swf

ROOT = Path(__file__).resolve().parents[3]
CONF = str(ROOT / "config" / "slurm" / "example-site.conf")


def sacct_export(path: Path) -> Path:
    """Three weeks of 30-minute jobs of three users in two accounts, one every 2 hours."""
    start = datetime(2024, 3, 4)
    lines = ["|".join(SACCT_FIELDS)]
    for i in range(3 * 7 * 12):
        user, account = (("ann", "physics"), ("bob", "physics"), ("cy", "teaching"))[i % 3]
        submit = start + timedelta(hours=2 * i)
        values = {
            "JobID": str(1000 + i), "User": user, "Group": "staff", "Account": account,
            "Partition": "batch", "QOS": "normal", "Submit": submit.isoformat(),
            "Eligible": submit.isoformat(), "Start": submit.isoformat(),
            "End": (submit + timedelta(minutes=30)).isoformat(), "Timelimit": "01:00:00",
            "AllocCPUS": str(1 + i % 4), "ReqCPUS": str(1 + i % 4), "AllocNodes": "1",
            "ReqNodes": "1", "ReqMem": "1000M", "MaxRSS": "", "State": "COMPLETED",
            "ExitCode": "0:0",
        }  # fmt: skip
        lines.append("|".join(values[name] for name in SACCT_FIELDS))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_an_sacct_export_keeps_its_account_names(tmp_path: Path) -> None:
    path = sacct_export(tmp_path / "acct.txt")
    jobs, procs = site_jobs({"kind": "sacct", "timezone": "UTC"}, str(path), 8)
    assert procs == 8 and jobs.height == 252
    assert set(jobs["account"]) == {"physics", "teaching"} and jobs["user_id"].n_unique() == 3
    # the accounts reach Slurm's fair-share by name
    scheduler = slurm_scheduler(CONF, {}, {"physics": 3, "teaching": 1}, "k")
    weeks = resampled_weeks(jobs, 2, seed=1, site="acct")
    schedule = simulate_weeks(scheduler, weeks, procs)
    assert schedule.height == weeks.height and (schedule["wait_s"] >= 0).all()
    assert set(schedule["account"]) == {"physics", "teaching"}


def test_an_swf_log_takes_its_groups_as_accounts(tmp_path: Path) -> None:
    site = synthetic_site(800, machine_procs=64, users=4, accounts=["a", "b"], load=0.5, seed=2)
    path = tmp_path / "site.swf"
    write_swf(site.drop("account"), path)
    jobs, procs = site_jobs({"kind": "swf"}, str(path), 64)
    assert procs == 64 and jobs.height == site.height
    assert jobs["account"].to_list() == site["group_id"].cast(pl.String).to_list()


def test_a_log_without_users_is_refused_naming_the_key(tmp_path: Path) -> None:
    site = synthetic_site(300, machine_procs=64, users=2, accounts=["a"], load=0.5, seed=2)
    path = tmp_path / "nobody.swf"
    write_swf(site.drop("account").with_columns(pl.lit(-1).alias("user_id")), path)
    with pytest.raises(
        ConfigurationError, match=r"config whatif.swf: .*nobody.swf: the log has no"
    ):
        site_jobs({"kind": "swf"}, str(path), 64)
