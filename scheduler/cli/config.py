"""``scheduler config-reference``: the configuration reference, generated from the schemas."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_commands", "cmd_config_reference"]


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
