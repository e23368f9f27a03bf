"""``scheduler compare A B``: two results folders compared value by value, provenance aside.

Every output schedlab writes records the configuration and versions that made it (its
provenance), so two runs of the same study never match byte for byte across versions. This
command says whether they hold the same values: parquet tables compared as tables (column
names, types, values), CSV and Markdown without their provenance line or comment, JSON without
its ``provenance`` key. Figures are not compared (their pixels follow the plotting libraries).
``--rename OLD=NEW`` maps a column renamed between the two runs; ``--new-columns`` lets the second
folder's tables hold columns the first lacks (a newer version that records more fields: the
first folder's columns are compared, in any order); ``--rtol`` accepts floating values that
differ by at most that relative amount (default 0: exactly equal).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["add_commands", "cmd_compare", "compare_trees"]

#: The files compared, by extension.
COMPARED = (".parquet", ".csv", ".md", ".json")
_MARKDOWN_PROVENANCE = re.compile(r"\n*<!-- provenance: .*? -->\n?", re.DOTALL)


def add_commands(subparsers: Any) -> None:
    """Register ``compare``."""
    parser = subparsers.add_parser(
        "compare",
        help="compare two results folders value by value, provenance aside",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("first", type=Path, help="a results folder (or one of its subfolders)")
    parser.add_argument("second", type=Path, help="the folder to compare it with")
    parser.add_argument(
        "--rename", action="append", default=[], metavar="OLD=NEW",
        help="a column called OLD in the first folder and NEW in the second (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--new-columns", action="store_true",
        help="compare only the first folder's columns; the second may hold more",
    )  # fmt: skip
    parser.add_argument(
        "--rtol", type=float, default=0.0,
        help="largest relative difference of two floats taken as equal (default 0)",
    )  # fmt: skip
    parser.set_defaults(handler=cmd_compare)


def _renames(pairs: list[str]) -> dict[str, str]:
    from scheduler.core.errors import ConfigurationError

    out = {}
    for pair in pairs:
        old, equal, new = pair.partition("=")
        if not equal or not old or not new:
            raise ConfigurationError(f"--rename {pair!r}: write OLD=NEW")
        out[old] = new
    return out


def _close(a: Any, b: Any, rtol: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b or abs(a - b) <= rtol * max(abs(a), abs(b))
    return bool(a == b)


def _text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return _MARKDOWN_PROVENANCE.sub("\n", text).rstrip("\n")
    return "\n".join(line for line in text.splitlines() if not line.startswith("# provenance"))


def _tables(first: Any, second: Any, renames: Mapping[str, str], new_columns: bool) -> Any:
    """The two tables with ``renames`` applied to the first and, with ``new_columns``, the
    second cut to the first's columns (when it has them all)."""
    first = first.rename({k: v for k, v in renames.items() if k in first.columns})
    if new_columns and set(first.columns) <= set(second.columns):
        second = second.select(first.columns)
    return first, second


def _compare_file(
    a: Path, b: Path, renames: Mapping[str, str], rtol: float, new_columns: bool = False
) -> str | None:
    """None when the two files hold the same values, else what differs."""
    import polars as pl

    if a.suffix == ".parquet":
        first, second = _tables(pl.read_parquet(a), pl.read_parquet(b), renames, new_columns)
        if first.columns != second.columns:
            return f"columns {first.columns} != {second.columns}"
        if first.height != second.height:
            return f"{first.height} rows != {second.height} rows"
        for name in first.columns:
            left, right = first[name].to_list(), second[name].to_list()
            bad = [k for k, (x, y) in enumerate(zip(left, right, strict=True))
                   if not _close(x, y, rtol)]  # fmt: skip
            if bad:
                k = bad[0]
                return f"column {name}: {len(bad)} value(s) differ, first row {k}: " \
                    f"{left[k]!r} != {right[k]!r}"  # fmt: skip
        return None
    if a.suffix == ".json":
        first_json = json.loads(a.read_text(encoding="utf-8"))
        second_json = json.loads(b.read_text(encoding="utf-8"))
        first_json.pop("provenance", None)
        second_json.pop("provenance", None)
        return None if first_json == second_json else "different content"
    first_text, second_text = _text(a), _text(b)
    for old, new in renames.items():
        first_text = re.sub(rf"\b{re.escape(old)}\b", new, first_text)
    if first_text == second_text:
        return None
    if a.suffix == ".csv" and (rtol > 0 or new_columns):
        first_table, second_table = _tables(pl.read_csv(a, comment_prefix="#"),
                                            pl.read_csv(b, comment_prefix="#"), renames,
                                            new_columns)  # fmt: skip
        same_shape = first_table.columns == second_table.columns
        if same_shape and first_table.height == second_table.height:
            rows = zip(first_table.iter_rows(), second_table.iter_rows(), strict=True)
            if all(_close(x, y, rtol) for r, s in rows for x, y in zip(r, s, strict=True)):
                return None
    return "different text"


def compare_trees(
    first: Path,
    second: Path,
    renames: Mapping[str, str] | None = None,
    rtol: float = 0.0,
    new_columns: bool = False,
) -> dict[str, list[str]]:
    """Compare every :data:`COMPARED` file below ``first`` and ``second``: ``{"equal": [...],
    "different": ["path: why", ...], "missing": [...], "extra": [...]}`` (paths relative to the
    folders)."""
    renames = dict(renames or {})
    files = {p.relative_to(first) for p in first.rglob("*") if p.suffix in COMPARED}
    others = {p.relative_to(second) for p in second.rglob("*") if p.suffix in COMPARED}
    report: dict[str, list[str]] = {"equal": [], "different": [], "missing": [], "extra": []}
    for relative in sorted(files):
        if relative not in others:
            report["missing"].append(str(relative))
            continue
        problem = _compare_file(first / relative, second / relative, renames, rtol, new_columns)
        if problem is None:
            report["equal"].append(str(relative))
        else:
            report["different"].append(f"{relative}: {problem}")
    report["extra"] = sorted(str(p) for p in others - files)
    return report


def cmd_compare(args: argparse.Namespace) -> int:
    """Print what differs; exit 1 when anything does (0 when every file holds equal values)."""
    from scheduler.core.errors import ConfigurationError

    for folder in (args.first, args.second):
        if not folder.is_dir():
            raise ConfigurationError(f"{folder}: not a folder")
    report = compare_trees(args.first, args.second, _renames(args.rename), args.rtol,
                           args.new_columns)  # fmt: skip
    for kind in ("different", "missing", "extra"):
        for line in report[kind]:
            print(f"{kind}: {line}")
    counts = ", ".join(f"{len(report[kind])} {kind}" for kind in report)
    print(f"{counts} ({args.first} vs {args.second})")
    return 0 if not (report["different"] or report["missing"] or report["extra"]) else 1
