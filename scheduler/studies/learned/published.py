"""The published numbers of the learned-priority study beside schedlab's.

The paper's Table 3 (the four best functions) and Table 4 (median AVEbsld per workload, mode
and policy) are stored once, in ``published.yaml`` next to this module;
:func:`table4_comparison` and :func:`table3_comparison` put schedlab's results beside them, and
the workflow step ``published_tables`` writes both as ``tables/published.md``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from scheduler.core.errors import ConfigurationError

__all__ = [
    "PUBLISHED_FILE",
    "published_table3",
    "published_table4",
    "table3_comparison",
    "table4_comparison",
]

#: The published numbers (YAML).
PUBLISHED_FILE = Path(__file__).with_name("published.yaml")


@cache
def _published() -> dict[str, Any]:
    with PUBLISHED_FILE.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def published_table4() -> pl.DataFrame:
    """Table 4: ``workload, mode, policy, published`` (median AVEbsld, τ = 10 s), in the
    paper's row and column order."""
    data = _published()
    policies = data["table4_policies"]
    rows = [
        {"workload": row[0], "mode": row[1], "policy": policy, "published": float(value)}
        for row in data["table4"]
        for policy, value in zip(policies, row[2:], strict=True)
    ]
    return pl.DataFrame(rows)


def published_table3() -> pl.DataFrame:
    """Table 3: ``function, alpha, beta, op1, gamma, op2, coefficient`` (the factor of the
    simplified s term, c3 / (c1·c2))."""
    return pl.DataFrame(_published()["table3"]).with_columns(pl.col("coefficient").cast(float))


def _difference(schedlab: str, published: str = "published") -> pl.Expr:
    return ((pl.col(schedlab) / pl.col(published) - 1.0) * 100.0).round(1)


def table4_comparison(evaluation: pl.DataFrame) -> pl.DataFrame:
    """Published medians beside schedlab's, for every Table 4 cell the evaluation holds.

    ``evaluation``: rows of ``evaluate_workload`` (``avg_bsld`` with the configured protocol,
    ``avg_bsld_default`` with schedlab's default one). Columns: ``workload, mode, policy,
    sequences, published, schedlab_default, schedlab_protocol`` (medians) and the differences
    in percent of the published value, ``default_diff_pct`` and ``protocol_diff_pct``.
    """
    missing = [c for c in ("workload", "mode", "policy", "avg_bsld", "avg_bsld_default")
               if c not in evaluation.columns]  # fmt: skip
    if missing:
        raise ConfigurationError(f"evaluation table lacks {', '.join(missing)}")
    medians = evaluation.group_by("workload", "mode", "policy").agg(
        pl.len().alias("sequences"),
        pl.col("avg_bsld_default").median().alias("schedlab_default"),
        pl.col("avg_bsld").median().alias("schedlab_protocol"),
    )
    columns = [
        "workload", "mode", "policy", "sequences", "published",
        pl.col("schedlab_default").round(2), pl.col("schedlab_protocol").round(2),
        _difference("schedlab_default").alias("default_diff_pct"),
        _difference("schedlab_protocol").alias("protocol_diff_pct"),
    ]  # fmt: skip
    table = published_table4().join(
        medians, on=["workload", "mode", "policy"], how="inner", maintain_order="left"
    )
    return table.select(columns)


def table3_comparison(forms: pl.DataFrame) -> pl.DataFrame:
    """The published coefficients beside the ones schedlab fitted to the same forms.

    ``forms``: the fit table of every form (``fit_forms``). Columns: ``function, published,
    fitted`` (c3 / (c1·c2)), ``diff_pct``, ``rank`` (the form's rank among all 576, duplicates
    included) and ``distinct_rank`` (among distinct fitted functions).
    """
    keys = ["alpha", "beta", "op1", "gamma", "op2"]
    distinct = forms.filter(pl.col("duplicate_of").is_null()).sort("rank")
    distinct = distinct.with_columns(
        pl.int_range(1, distinct.height + 1).cast(pl.Int64).alias("distinct_rank")
    )
    fitted = distinct.select(
        *keys, "rank", "distinct_rank",
        (pl.col("c3") / (pl.col("c1") * pl.col("c2"))).alias("fitted"),
    )  # fmt: skip
    columns = [
        "function", pl.col("coefficient").alias("published"), pl.col("fitted").round(1),
        _difference("fitted", "coefficient").alias("diff_pct"), "rank", "distinct_rank",
    ]  # fmt: skip
    table = published_table3().join(fitted, on=keys, how="left", maintain_order="left")
    return table.select(columns)
