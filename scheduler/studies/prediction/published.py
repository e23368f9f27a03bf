"""The published results of the run-time prediction study beside schedlab's.

The published values (Reis's thesis, ch. 4, Tables 4.1 and 4.6–4.8) live in ``published.yaml``
next to this module, written once; :func:`published_table` puts each beside the value of the
same quantity in a study's ``runs`` table (:data:`~scheduler.studies.prediction.stats.RUN_COLUMNS`)
for the logs the study simulated. ``docs/prediction.md`` ("Published tables beside schedlab")
explains each difference.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from scheduler.studies.prediction.plan import EASY, EASY_PLUS_PLUS, NO_CORRECTION, Triple

__all__ = ["PUBLISHED_COLUMNS", "published_table", "published_values"]

_PATH = Path(__file__).with_name("published.yaml")

#: The columns of :func:`published_table`: the published table, the log, the quantity, the
#: published value, schedlab's, schedlab / published − 1, and the triple behind schedlab's value.
PUBLISHED_COLUMNS: dict[str, pl.DataType] = {
    "table": pl.String(),
    "trace": pl.String(),
    "quantity": pl.String(),
    "published": pl.Float64(),
    "schedlab": pl.Float64(),
    "difference": pl.Float64(),
    "schedlab_triple": pl.String(),
}

#: Table 4.6's columns: (key in published.yaml, the table(s), the quantity, the triple).
_CLAIRVOYANT_EASY = Triple("clairvoyant", NO_CORRECTION, "easy")
_CLAIRVOYANT_SJBF = Triple("clairvoyant", NO_CORRECTION, "sjbf")
_TRIPLES: tuple[tuple[str, str, str, Triple], ...] = (
    ("easy", "4.1, 4.6", "EASY", EASY),
    ("clairvoyant_easy", "4.1, 4.6", "CLAIRVOYANT EASY", _CLAIRVOYANT_EASY),
    ("clairvoyant_sjbf", "4.6", "CLAIRVOYANT EASY-SJBF", _CLAIRVOYANT_SJBF),
    ("easy_pp", "4.6", "EASY++", EASY_PLUS_PLUS),
)


@functools.cache
def published_values() -> dict[str, Any]:
    """The contents of ``published.yaml`` (thesis log names mapped to the catalogue's)."""
    with _PATH.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    names = data["logs"]["thesis_names"]
    data["table_4_6"] = {names.get(log, log): row for log, row in data["table_4_6"].items()}
    data["table_4_7"]["avg_bsld"] = {
        names.get(log, log): value for log, value in data["table_4_7"]["avg_bsld"].items()
    }
    return data


def _value(runs: pl.DataFrame, trace: str, triple: Triple) -> float | None:
    rows = runs.filter((pl.col("trace") == trace) & (pl.col("triple") == triple.label))
    return float(rows["avg_bsld"][0]) if rows.height else None


def _row(table: str, trace: str, quantity: str, published: float, schedlab: float | None,
         triple: str | None) -> dict[str, Any]:  # fmt: skip
    difference = None if schedlab is None else schedlab / published - 1.0
    return {"table": table, "trace": trace, "quantity": quantity, "published": float(published),
            "schedlab": schedlab, "difference": difference, "schedlab_triple": triple}  # fmt: skip


def published_table(runs: pl.DataFrame) -> pl.DataFrame:
    """Every published value of Tables 4.1, 4.6, 4.7 and 4.8 for a log of ``runs``, beside
    schedlab's value of the same quantity (null when the study did not simulate it).

    - Table 4.6's learned columns are the best and the worst AVEbsld over the NAG triples of
      each backfilling variant (every loss and correction the study ran);
    - Table 4.7 is the published triple (E-loss, INCREMENTAL, SJBF; REQUESTED TIME on SDSC-SP2)
      on each log, not schedlab's own leave-one-log-out choice (the ``lolo`` table);
    - Table 4.8 names no log: each of the thesis' logs' AVE2 and E-loss errors are given against
      it (means over the technique's runs, as in the ``errors`` table).

    Logs the thesis did not simulate have no rows.
    """
    data = published_values()
    thesis_logs = [trace for trace in sorted(runs["trace"].unique()) if trace in data["table_4_6"]]
    rows: list[dict[str, Any]] = []
    for trace in thesis_logs:
        published = data["table_4_6"][trace]
        for key, table, quantity, triple in _TRIPLES:
            rows.append(_row(table, trace, quantity, published[key], _value(runs, trace, triple),
                             triple.label))  # fmt: skip
        learned = runs.filter((pl.col("trace") == trace) & (pl.col("predictor") == "nag"))
        for variant in ("easy", "sjbf"):
            key = f"learned_{variant}"
            part = learned.filter(pl.col("backfill") == variant).sort("avg_bsld", "triple")
            for index, kind in enumerate(("best", "worst")):
                value = triple_label = None
                if part.height:
                    pick = part.row(0 if kind == "best" else part.height - 1, named=True)
                    value, triple_label = float(pick["avg_bsld"]), pick["triple"]
                rows.append(_row("4.6", trace, f"learned, {variant.upper()}: {kind}",
                                 published[key][index], value, triple_label))  # fmt: skip
    chosen = data["table_4_7"]
    for trace in thesis_logs:
        settings = {**chosen["triple"], **chosen["exceptions"].get(trace, {})}
        triple = Triple(settings["technique"], settings["correction"], settings["backfill"])
        rows.append(_row("4.7", trace, "published C-V triple", chosen["avg_bsld"][trace],
                         _value(runs, trace, triple), triple.label))  # fmt: skip
    for technique, errors in data["table_4_8"].items():
        for trace in thesis_logs:
            part = runs.filter((pl.col("trace") == trace) & (pl.col("technique") == technique))
            for column, label in (("mae_s", "MAE (s)"), ("mean_eloss", "mean E-loss")):
                value = float(part[column].mean()) if part.height else None  # type: ignore[arg-type]
                rows.append(_row("4.8", trace, f"{technique}: {label}", errors[column], value,
                                 technique if part.height else None))  # fmt: skip
    return pl.DataFrame(rows, schema=PUBLISHED_COLUMNS)
