"""The study's statistics over test sequences.

What is independent of what: each test sequence is scheduled from an empty machine, so the
sequences' figures do not depend on each other's schedules; but the sequences are drawn from
the same 10,000 jobs and overlap (1,024 jobs from a start in [1,024, 8,975)), so they are not
independent samples of the log's behaviour. The intervals below are t intervals over the
sequences as if they were, the protocol's own unit (RLScheduler averages them); read them as a
measure of the spread over sequences, not of a log's population. The comparison with the
reference is paired (the same sequence under both policies): a t interval of the mean log ratio,
reported as a geometric-mean ratio.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from scheduler.studies.common.statistics import t_interval

__all__ = ["AGENT", "comparison_table", "summary_table"]

#: The policy name of the trained agent in the study's tables.
AGENT = "PPO"

_GROUP = ["trace", "mode", "backfill", "policy"]


def summary_table(runs: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Per (trace, mode, backfill, policy): sequences, mean bounded slowdown with its interval
    over sequences, its median, the mean wait (h) and the mean utilisation."""
    rows = []
    for key, group in runs.group_by(_GROUP, maintain_order=True):
        bsld = group["avg_bsld"].to_numpy()
        low, high = t_interval(bsld, confidence)
        rows.append({
            **dict(zip(_GROUP, key, strict=True)), "sequences": group.height,
            "mean_bsld": float(bsld.mean()), "bsld_low": low, "bsld_high": high,
            "median_bsld": float(np.median(bsld)),
            "mean_wait_h": float(group["avg_wait_s"].mean()) / 3600.0,
            "utilisation": float(group["utilisation"].mean()),
        })  # fmt: skip
    return pl.DataFrame(rows)


def comparison_table(runs: pl.DataFrame, reference: str, confidence: float) -> pl.DataFrame:
    """Each policy against ``reference`` in the same (trace, mode, backfill), sequence by
    sequence: the geometric mean of the ratio of mean bounded slowdowns with its interval, and
    on how many sequences the policy did better. In the easy mode the reference is looked up
    case-insensitively (the registered spelling)."""
    rows = []
    for (trace, mode, backfill), group in runs.group_by(["trace", "mode", "backfill"],
                                                        maintain_order=True):  # fmt: skip
        ref = group.filter(pl.col("policy").str.to_uppercase() == reference.upper())
        if ref.height == 0:
            continue
        base = dict(zip(ref["sequence"].to_list(), ref["avg_bsld"].to_list(), strict=True))
        for (policy,), runs_of in group.group_by(["policy"], maintain_order=True):
            if policy.upper() == reference.upper():
                continue
            paired = [(value, base[s]) for s, value in
                      zip(runs_of["sequence"], runs_of["avg_bsld"], strict=True) if s in base]
            mine = np.array([p[0] for p in paired])
            theirs = np.array([p[1] for p in paired])
            logs = np.log(mine / theirs)
            low, high = t_interval(logs, confidence)
            rows.append({
                "trace": trace, "mode": mode, "backfill": backfill, "policy": policy,
                "reference": ref["policy"][0], "sequences": len(paired),
                "ratio": math.exp(float(logs.mean())), "ratio_low": math.exp(low),
                "ratio_high": math.exp(high), "better": int((mine < theirs).sum()),
            })  # fmt: skip
    return pl.DataFrame(rows)
