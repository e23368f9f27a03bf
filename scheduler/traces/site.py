"""A synthetic site: a Lublin–Feitelson workload with users, accounts and estimates.

The what-if study's bundled example (``docs/whatif.md``) needs what a real site's accounting
has and a workload model lacks: who submitted each job and under which account. This module
adds them to :func:`scheduler.traces.lublin.lublin_jobs`, with the Tsafrir–Etsion–Feitelson
estimates (:func:`scheduler.traces.estimates.with_estimates`), at a chosen offered load.

How the jobs get their users (a modelling choice, documented here and in the docs):

- each user ``u`` has an activity weight ``1 / (u + 1)`` (a few heavy users, many light ones,
  as in the archive's logs) and a preferred size ``c_u`` (log2 of processors) drawn uniformly
  in ``[0, log2(machine_procs)]``;
- a job of ``q`` processors goes to user ``u`` with probability proportional to
  ``activity_u * exp(-(log2 q - c_u)**2 / 2)``: users differ in the sizes they run, so a
  scheduler change that favours small or large jobs favours some users;
- users are dealt to accounts in turn (user ``u`` to account ``u mod A``), so the accounts'
  demand differs from their configured shares (the accounts' order is the caller's).

The offered load (processor-seconds asked over processor-seconds available between the first
and the last submission) is set by scaling the model's arrival times by one factor.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.traces.estimates import with_estimates
from scheduler.traces.lublin import JobTypes, lublin_jobs

__all__ = ["ACCOUNT_COLUMN", "synthetic_site"]

#: The column of a site's job table that names each job's account (text).
ACCOUNT_COLUMN = "account"


def synthetic_site(
    n_jobs: int,
    *,
    machine_procs: int,
    users: int,
    accounts: Sequence[str],
    load: float,
    seed: int,
    job_types: JobTypes = "batch",
) -> pl.DataFrame:
    """A synthetic site's jobs: SWF columns plus :data:`ACCOUNT_COLUMN`.

    Parameters
    ----------
    n_jobs
        Jobs to generate (>= 1).
    machine_procs
        Processors of the machine (>= 2).
    users
        Users (>= 1; at least as many as accounts, so every account has one).
    accounts
        Account names (distinct, >= 1); ``group_id`` is the account's position plus 1.
    load
        Offered load in (0, 2]: the arrival times are scaled so that the jobs' processor-seconds
        over ``machine_procs`` times the span of their submissions equal it.
    seed
        Every random choice (jobs, estimates, users) derives from it.
    job_types
        The Lublin model's job classes (:data:`scheduler.traces.lublin.JOB_TYPES`); ``"batch"``
        by default: an HPC site's queue holds batch jobs (the model's interactive class is many
        short jobs, about six times as many jobs per week at one load).

    Returns
    -------
    polars.DataFrame
        The 18 SWF columns (requested times from the estimate model, ``user_id`` from 1,
        ``group_id`` the account number) and ``account``; jobs in submission order.

    Raises
    ------
    ConfigurationError
        An argument out of range (naming it).
    """
    names = list(accounts)
    if not names or len(set(names)) != len(names):
        raise ConfigurationError(f"accounts must be distinct names, at least one: {names}")
    if isinstance(users, bool) or not isinstance(users, int) or users < len(names):
        raise ConfigurationError(
            f"users must be an integer >= the number of accounts ({len(names)}), got {users!r}"
        )
    if not 0.0 < float(load) <= 2.0:
        raise ConfigurationError(f"load must be in (0, 2], got {load!r}")
    jobs = lublin_jobs(n_jobs, machine_procs=machine_procs, seed=seed, job_types=job_types)
    procs = jobs["alloc_procs"].to_numpy().astype(np.float64)
    run = jobs["run_s"].to_numpy().astype(np.float64)
    submit = jobs["submit_s"].to_numpy().astype(np.float64)
    span = float(submit.max() - submit.min())
    factor = 1.0
    if span > 0:
        offered = float(np.sum(procs * run)) / (span * machine_procs)
        factor = offered / float(load)
    submit = np.floor((submit - submit.min()) * factor)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x517E]))
    activity = 1.0 / np.arange(1, users + 1, dtype=np.float64)
    centre = rng.uniform(0.0, np.log2(machine_procs), size=users)
    distance = np.log2(procs)[:, None] - centre[None, :]
    weights = activity[None, :] * np.exp(-0.5 * distance**2)
    cumulative = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    draws = rng.random(procs.size)[:, None]
    user = np.minimum((draws > cumulative).sum(axis=1), users - 1)
    account = user % len(names)
    jobs = jobs.with_columns(
        pl.Series("submit_s", submit).cast(jobs.schema["submit_s"]),
        pl.Series("user_id", user + 1).cast(jobs.schema["user_id"]),
        pl.Series("group_id", account + 1).cast(jobs.schema["group_id"]),
    ).sort("submit_s", "job_id", maintain_order=True)
    jobs = with_estimates(jobs, seed=seed)
    return jobs.with_columns(
        pl.Series(
            ACCOUNT_COLUMN, [names[a] for a in jobs["group_id"].to_numpy() - 1], dtype=pl.String
        )
    )
