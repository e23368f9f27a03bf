"""A study's Slurm settings: the ``slurm.conf`` that says what its conservative runs are.

A study with a ``slurm_conf`` config key (``tuning.slurm_conf``) runs every pair whose
backfilling is :data:`~scheduler.studies.common.config.CONSERVATIVE` as Slurm's
``sched/backfill`` configured by that file (its ``SchedulerParameters`` limits and whole-node
reservations, :meth:`scheduler.sim.slurm_conf.SlurmConf.backfill_kwargs`), and may list
:data:`~scheduler.sim.multifactor.MULTIFACTOR` among its primary orders: the file's
``priority/multifactor`` settings. Without the key, CONSERVATIVE is unlimited conservative
backfilling and MULTIFACTOR is refused.

The settings travel to the steps as plain data (:func:`study_slurm`, a rule's params: a changed
file reruns the simulations it changes) and become keywords of
:func:`scheduler.simulate_conservative` in one place (:func:`conservative_kwargs`).

The jobs' attributes the priority reads: a resampled week keeps each job's user and nothing
else of the accounting, so a study's fair-share is per user under one account
(``swf_account="single"``: :data:`SWF_ACCOUNT`), every job in one partition and QOS, eligible
when submitted; a week starts with no usage (it is simulated from an empty machine).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError

__all__ = ["SWF_ACCOUNT", "conservative_kwargs", "study_slurm", "user_attributes"]

#: How a study's jobs get their account (:func:`scheduler.sim.multifactor.job_attributes`): one
#: account for all (resampled weeks keep no group).
SWF_ACCOUNT = "single"


def study_slurm(path: str | None, key: str) -> dict[str, Any] | None:
    """The settings of the ``slurm.conf`` at ``path`` (config key ``key``) as plain data:
    ``{"limits": backfill keywords, "priority": MultifactorPriority fields or None}``
    (``None`` under ``priority/basic``); ``None`` without a path.

    Raises
    ------
    ConfigurationError
        The file cannot be read or holds what schedlab does not model (naming the key, the
        file, line and Slurm key).
    """
    if path is None:
        return None
    from scheduler.sim.slurm_conf import read_slurm_conf

    try:
        conf = read_slurm_conf(path)
        order = conf.priority_kwargs()
    except ConfigurationError as error:
        raise ConfigurationError(f"config {key}: {error}") from None
    priority = order.get("priority")
    return {
        "limits": conf.backfill_kwargs(),
        "priority": None if priority is None else priority.to_dict(),
    }


def conservative_kwargs(slurm: Mapping[str, Any] | None, primary: str) -> dict[str, Any]:
    """Keywords of :func:`scheduler.simulate_conservative` (and its array form) for a study's
    CONSERVATIVE run under ``primary``: the limits of ``slurm`` (:func:`study_slurm`; none
    without it) and, for :data:`~scheduler.sim.multifactor.MULTIFACTOR`, its priority.

    Raises
    ------
    ConfigurationError
        MULTIFACTOR without a ``slurm.conf`` of ``priority/multifactor``.
    """
    from scheduler.sim.multifactor import MULTIFACTOR, MultifactorPriority

    kwargs: dict[str, Any] = {} if slurm is None else dict(slurm["limits"])
    if primary == MULTIFACTOR:
        if slurm is None or slurm["priority"] is None:
            raise ConfigurationError(
                f"primary {MULTIFACTOR!r} needs a slurm.conf with "
                "PriorityType=priority/multifactor (the study's slurm_conf key)"
            )
        kwargs["priority"] = MultifactorPriority(**slurm["priority"])
    return kwargs


def user_attributes(user_id: np.ndarray, submit_s: np.ndarray) -> Any:
    """The :class:`~scheduler.sim.multifactor.JobAttributes` of resampled jobs (a week, a long
    trace): each job's user (SWF user number), one account (:data:`SWF_ACCOUNT`), no partition
    (SWF's -1), QOS ``normal``, eligible at submission (``submit_s``, s)."""
    from scheduler.sim.multifactor import job_attributes

    n = len(user_id)
    table = pl.DataFrame({
        "job_id": np.arange(1, n + 1, dtype=np.int64),
        "submit_s": np.asarray(submit_s, dtype=np.float64),
        "user_id": np.asarray(user_id, dtype=np.int64),
        "group_id": np.full(n, -1, dtype=np.int64),
        "partition_id": np.full(n, -1, dtype=np.int64),
    })  # fmt: skip
    return job_attributes(table, swf_account=SWF_ACCOUNT)
