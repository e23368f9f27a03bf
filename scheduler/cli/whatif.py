"""``scheduler whatif``: the what-if study in one command, no YAML to edit.

    scheduler whatif --sacct dump.txt --slurm-conf slurm.conf \\
        --try PriorityWeightAge=0,10000 --try bf_window=1d,3d

writes the workflow configuration of the study (``--config-out``, default
``results/whatif/whatif-config.yaml``), checks it and plans the study exactly as the workflow
will (every slurm.conf read, every value parsed: a bad one stops here, naming the option and the
key), then runs ``snakemake --cores N --configfile <it>`` in the project directory. The tables,
figures and report are those of the workflow (``docs/whatif.md``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

from scheduler.cli.arguments import add_command
from scheduler.core.errors import ConfigurationError

__all__ = ["add_commands", "cmd_whatif", "parse_changes", "whatif_config"]


def add_commands(commands: Any) -> None:
    """Add ``scheduler whatif``."""
    command = add_command(
        commands,
        "whatif",
        cmd_whatif,
        "what a scheduler change would do on your own workload (the what-if study)",
    )
    source = command.add_mutually_exclusive_group()
    source.add_argument("--sacct", metavar="FILE", help="sacct --parsable2 export of your site")
    source.add_argument("--swf", metavar="FILE", help="an SWF log of your site")
    source.add_argument("--trace", metavar="NAME", help="a log of the catalogue")
    base = command.add_mutually_exclusive_group()
    base.add_argument("--slurm-conf", metavar="FILE", help="your site's slurm.conf (baseline)")
    base.add_argument(
        "--policy", metavar="LABEL", help="a research policy as baseline, e.g. EASY-FCFS-FCFS"
    )
    command.add_argument(
        "--try",
        dest="tries",
        metavar="KEY=V1,V2",
        action="append",
        default=[],
        help="a Slurm key (or `policy`) and the values to try one at a time; repeatable",
    )
    command.add_argument(
        "--grid",
        metavar="KEY=V1,V2",
        action="append",
        default=[],
        help="keys whose values are tried in every combination; repeatable",
    )
    command.add_argument(
        "--shares",
        metavar="ACCOUNT=N,...",
        help="the accounts' FairShare (sacctmgr), e.g. physics=50,chem=25",
    )
    command.add_argument("--machine-procs", type=int, metavar="N", help="processors simulated")
    command.add_argument("--timezone", metavar="ZONE", help="the zone sacct printed times in")
    command.add_argument("--weeks", type=int, metavar="N", help="resampled weeks")
    command.add_argument("--replicates", type=int, metavar="B", help="bootstrap replicates")
    command.add_argument("--cores", type=int, default=2, metavar="N", help="Snakemake's --cores")
    command.add_argument(
        "--project",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="the schedlab checkout to run in (default: here)",
    )
    command.add_argument(
        "--config-out",
        type=Path,
        metavar="FILE",
        help="where to write the configuration (default: "
        "results/whatif/whatif-config.yaml in the project)",
    )
    command.add_argument(
        "--dry-run",
        action="store_true",
        help="write and check the configuration, plan, but run nothing",
    )


def parse_changes(items: list[str], option: str) -> dict[str, list[str]]:
    """``["KEY=V1,V2", ...]`` as ``{KEY: [V1, V2]}``; errors name the option and the item."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, equals, values = item.partition("=")
        key = key.strip()
        parts = [v.strip() for v in values.split(",")]
        if not equals or not key or not all(parts):
            raise ConfigurationError(
                f"{option} {item!r}: write KEY=VALUE[,VALUE...], e.g. {option} bf_window=1d,3d"
            )
        if key in out:
            raise ConfigurationError(f"{option} {item!r}: {key} is given twice")
        out[key] = parts
    return out


def _shares(text: str | None) -> dict[str, int] | None:
    if text is None:
        return None
    out = {}
    for item in text.split(","):
        name, equals, value = item.partition("=")
        if not equals or not name.strip() or not value.strip().isdigit() or int(value) < 1:
            raise ConfigurationError(
                f"--shares {item!r}: write ACCOUNT=N with N a whole number >= 1"
            )
        out[name.strip()] = int(value)
    return out


def whatif_config(args: argparse.Namespace) -> dict[str, Any]:
    """The workflow configuration the options say (only the keys they set)."""
    section: dict[str, Any] = {}
    for key in ("sacct", "swf", "trace"):
        if getattr(args, key):
            section[key] = str(getattr(args, key))
    if args.slurm_conf or args.policy:
        section["baseline"] = {"slurm_conf": args.slurm_conf, "policy": args.policy}
    if args.tries or args.grid:
        section["try"] = parse_changes(args.tries, "--try")
        section["grid"] = parse_changes(args.grid, "--grid")
    shares = _shares(args.shares)
    if shares is not None:
        section["shares"] = shares
    if args.machine_procs is not None:
        section["machine_procs"] = args.machine_procs
    if args.timezone:
        section["sacct_timezone"] = args.timezone
    if args.weeks is not None:
        section["weeks"] = args.weeks
    if args.replicates is not None:
        section["bootstrap"] = {"replicates": args.replicates}
    return {"studies": ["whatif"], "whatif": section}


def _checked(project: Path, cli_config: dict[str, Any]) -> None:
    """Validate and plan as the workflow will (its config files, then this one on top)."""
    import yaml
    from snakemake.utils import update_config

    from scheduler.studies.common.study import plan_studies, validated_config

    merged: dict[str, Any] = {}
    for name in ("config/traces.yaml", "config/config.yaml"):
        with open(project / name, encoding="utf-8") as stream:
            update_config(merged, yaml.safe_load(stream) or {})
    update_config(merged, cli_config)
    plan_studies(validated_config(merged))


def cmd_whatif(args: argparse.Namespace) -> int:
    """``scheduler whatif``: write, check, then run the study."""
    import yaml

    from scheduler.core.atomic import atomic_write_bytes

    project = args.project.resolve()
    if not (project / "Snakefile").is_file():
        raise ConfigurationError(
            f"{project}: no Snakefile; run in the schedlab checkout or give --project"
        )
    cli_config = whatif_config(args)
    for key in ("sacct", "swf", "slurm_conf"):
        value = getattr(args, key)
        if value and not Path(value).is_absolute():  # the workflow runs in the project
            resolved = str(Path(value).resolve())
            if key == "slurm_conf":
                cli_config["whatif"]["baseline"]["slurm_conf"] = resolved
            else:
                cli_config["whatif"][key] = resolved
    _checked(project, cli_config)
    for key in ("swf", "sacct"):  # a log without users: refused before the workflow starts
        if getattr(args, key):
            from scheduler.studies.whatif.jobs import site_jobs

            source = {"kind": key, "timezone": args.timezone or "UTC"}
            try:
                site_jobs(source, cli_config["whatif"][key], args.machine_procs)
            except ConfigurationError as error:
                raise ConfigurationError(f"--{key}: {error}") from None
    out = args.config_out or project / "results" / "whatif" / "whatif-config.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, yaml.safe_dump(cli_config, sort_keys=False).encode("utf-8"))
    print(f"configuration: {out}")
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        str(args.cores),
        "--configfile",
        str(out.resolve()),
    ]
    if args.dry_run:
        command.append("--dry-run")
    print("running:", " ".join(command))
    return subprocess.run(command, cwd=project, check=False).returncode
