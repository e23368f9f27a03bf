"""The example study's steps."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from scheduler.core.provenance import write_csv, write_markdown, write_parquet
from scheduler.core.steps import StepContext, read_table, workflow_step


@workflow_step
def count_jobs(filtered_path: str, out_path: str, *, trace: str, factor: float,
               ctx: StepContext) -> None:  # fmt: skip
    """One row: the log, its filtered jobs and that count times ``factor``."""
    jobs = read_table(filtered_path).height
    table = pl.DataFrame({"trace": [trace], "jobs": [jobs], "scaled": [jobs * factor]})
    write_parquet(table, out_path, ctx.record())
    ctx.log(f"{trace}: {jobs} jobs")


@workflow_step
def count_table(count_paths: Sequence[str], csv_path: str, md_path: str, *,
                ctx: StepContext) -> None:  # fmt: skip
    """Every log's row."""
    table = pl.concat([read_table(path) for path in count_paths])
    write_csv(table, csv_path, ctx.record())
    write_markdown(f"# Jobs\n\n{table}", md_path, ctx.record())
