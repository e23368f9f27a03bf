"""``scheduler config-reference`` and ``scheduler results-table``: the parts of the docs generated
from the package (the configuration reference from the schemas, the results at a glance from
``docs/results.yaml``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_commands", "cmd_config_reference", "cmd_results_table"]


def add_commands(subparsers: Any) -> None:
    """Register ``config-reference``."""
    parser = subparsers.add_parser(
        "config-reference",
        help="every configuration key with its type, default, bounds and meaning (Markdown)",
        description=(
            "Print the configuration reference generated from the schemas (the shared keys "
            "and each study's section); with --write FILE, replace the generated part of a "
            "Markdown file instead (config/README.md)."
        ),
    )
    parser.add_argument("--write", metavar="FILE", help="Markdown file whose reference to replace")
    parser.set_defaults(handler=cmd_config_reference)
    results = subparsers.add_parser(
        "results-table",
        help="the results-at-a-glance table of README.md and docs/index.md (Markdown)",
        description=(
            "Print the table of what each study found (schedlab's answers on the default run "
            "and a full config, the published answer) from docs/results.yaml; with --write FILE, "
            "replace the generated table of a Markdown file instead (its links then go to "
            "docs/<study>.md from the repository root, or <study>.md inside docs/)."
        ),
    )
    results.add_argument("--data", default="docs/results.yaml", help="the results file")
    results.add_argument("--write", metavar="FILE", help="Markdown file whose table to replace")
    results.set_defaults(handler=cmd_results_table)


def cmd_config_reference(args: argparse.Namespace) -> int:
    """Print or write the configuration reference."""
    from scheduler.core.atomic import atomic_write_bytes
    from scheduler.studies.common.reference import config_reference, replace_reference

    if args.write is None:
        sys.stdout.write(config_reference())
        return 0
    atomic_write_bytes(args.write, replace_reference(args.write).encode("utf-8"))
    print(f"config reference written to {args.write}")
    return 0


def cmd_results_table(args: argparse.Namespace) -> int:
    """Print or write the results-at-a-glance table."""
    from pathlib import Path

    import yaml

    from scheduler.core.atomic import atomic_write_bytes
    from scheduler.studies.common.reference import (
        RESULTS_BEGIN,
        RESULTS_END,
        replace_reference,
        results_table,
    )

    data = yaml.safe_load(Path(args.data).read_text(encoding="utf-8"))
    if args.write is None:
        sys.stdout.write(results_table(data, "docs/"))
        return 0
    inside_docs = Path(args.write).resolve().parent == Path(args.data).resolve().parent
    table = results_table(data, "" if inside_docs else "docs/")
    text = replace_reference(args.write, table, (RESULTS_BEGIN, RESULTS_END))
    atomic_write_bytes(args.write, text.encode("utf-8"))
    print(f"results table written to {args.write}")
    return 0
