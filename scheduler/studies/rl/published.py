"""RLScheduler's published table (``published.yaml``, the only home of its numbers) and its
comparison with the study's compatible mode."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
import yaml

__all__ = ["PUBLISHED_FILE", "published_bsld", "published_comparison", "published_source"]

#: The published numbers (YAML).
PUBLISHED_FILE = Path(__file__).with_name("published.yaml")
#: The name of the trained agent's column in the published table.
RL_COLUMN = "RL"


@cache
def _published() -> dict[str, Any]:
    with PUBLISHED_FILE.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def published_source() -> str:
    """Where the numbers come from."""
    return str(_published()["source"])


def published_bsld() -> pl.DataFrame:
    """``paper_trace, backfill, policy, published`` (mean over the 10 test sequences of the mean
    bounded slowdown, τ = 10 s), in the table's order."""
    data = _published()
    rows = [
        {"paper_trace": row[0], "backfill": bool(row[1]), "policy": policy,
         "published": float(value)}
        for row in data["bsld"]
        for policy, value in zip(data["policies"], row[2:], strict=True)
    ]  # fmt: skip
    return pl.DataFrame(rows)


def paper_trace(trace: str) -> str | None:
    """The published table's name of a catalogue log (None: not in the table)."""
    for paper, logs in _published()["traces"].items():
        if trace in logs:
            return str(paper)
    return None


def published_comparison(summary: pl.DataFrame, agent_policy: str) -> pl.DataFrame:
    """The compatible mode's means beside the published ones: ``trace, paper_trace, backfill,
    policy, published, schedlab, difference_pct``; the published RL column beside
    ``agent_policy`` (the study's agent in the compatible mode) when it was run.

    ``summary``: the study's summary (``trace, mode, backfill, policy, mean_bsld``, compatible
    mode rows only are read)."""
    compatible = summary.filter(pl.col("mode") == "compatible").with_columns(
        pl.col("trace").map_elements(paper_trace, return_dtype=pl.String).alias("paper_trace"),
        pl.when(pl.col("policy") == agent_policy).then(pl.lit(RL_COLUMN))
        .otherwise(pl.col("policy")).alias("paper_policy"),
    )  # fmt: skip
    table = published_bsld().join(
        compatible.select("trace", "paper_trace", "backfill", "paper_policy",
                          pl.col("mean_bsld").alias("schedlab")),
        left_on=["paper_trace", "backfill", "policy"],
        right_on=["paper_trace", "backfill", "paper_policy"],
        how="inner",
    )  # fmt: skip
    return table.select(
        "trace", "paper_trace", "backfill", "policy", "published",
        pl.col("schedlab").round(2),
        ((pl.col("schedlab") / pl.col("published") - 1.0) * 100.0).round(2)
        .alias("difference_pct"),
    )  # fmt: skip
