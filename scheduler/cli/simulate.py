"""``scheduler simulate`` and ``scheduler policies``: run EASY or conservative backfilling, list
the policies.

``simulate`` strongly filters the trace (unless ``--no-filter``), simulates it with the chosen
policies and options (with ``--predictor``: on run-time predictions, through the prediction
variant of :func:`scheduler.simulate`; with ``--backfilling conservative`` or ``--slurm-conf``:
conservative backfilling with Slurm's limits, ``simulate_conservative``), prints the summary and
configuration, and writes the schedule as SWF and the per-job table as Parquet or CSV when asked.
``policies`` lists the policy registry (:data:`scheduler.policies.POLICIES`), the same names the
``--primary``/``--backfill`` options accept, and the policy specs they also accept
(``learned:PATH#RANK``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from scheduler.cli.arguments import (
    add_command,
    add_filter_arguments,
    add_json_argument,
    add_trace_arguments,
    backfill_policy,
    duration,
    figure_path,
    positive_int,
    primary_order,
    table_path,
    time_window,
)
from scheduler.cli.output import (
    DAY_S,
    HOUR_S,
    print_json,
    print_sections,
    seconds_text,
    threshold_text,
    writing,
)
from scheduler.cli.traces import filter_header_line, machine_size_lines, read_trace, report_dict
from scheduler.core.atomic import atomic_path
from scheduler.core.errors import ConfigurationError
from scheduler.core.version import __version__
from scheduler.policies import POLICIES, POLICY_SPECS
from scheduler.predictors import CORRECTIONS, LOSSES, PREDICTORS, parse_loss
from scheduler.predictors.nag import ETA
from scheduler.sim.api import simulate
from scheduler.sim.batsim_jobs import write_schedule_batsim
from scheduler.sim.conservative import ConservativeConfig, ConservativeResult, simulate_conservative
from scheduler.sim.engine import RESERVATIONS, SimulationResult
from scheduler.sim.multifactor import MULTIFACTOR, SWF_ACCOUNTS
from scheduler.sim.prediction import LAM, PredictedResult
from scheduler.sim.slurm_conf import read_slurm_conf
from scheduler.studies.common.gantt import COLOUR_BY
from scheduler.traces.filters import FilterReport, strong_filter
from scheduler.traces.sacct import read_side_table
from scheduler.traces.swf import Trace, write_swf

__all__ = [
    "BACKFILLING",
    "CONSERVATIVE_LIMITS",
    "add_commands",
    "add_reservation_argument",
    "cmd_policies",
    "cmd_simulate",
    "prediction_options",
]


#: The backfilling algorithms of ``--backfilling``; the first is the default.
BACKFILLING = ("easy", "conservative")

#: The options of conservative backfilling's limits: option, keyword of
#: :func:`~scheduler.sim.conservative.simulate_conservative`, argument type, metavar, help.
CONSERVATIVE_LIMITS = (
    ("--depth", "depth", int, "N", "reservations per backfill pass (default: every job)"),
    ("--bf-window", "bf_window_s", duration, "DURATION",
     "Slurm's bf_window: no reservation beyond now + DURATION (e.g. 1d; default none)"),
    ("--bf-resolution", "bf_resolution_s", duration, "DURATION",
     "Slurm's bf_resolution: ends rounded up to multiples (e.g. 60; default none)"),
    ("--bf-interval", "bf_interval_s", duration, "DURATION",
     "Slurm's bf_interval: backfill passes at multiples only (e.g. 30; default every event)"),
    ("--bf-max-job-test", "bf_max_job_test", positive_int, "N",
     "Slurm's bf_max_job_test: jobs tested per backfill pass (default all)"),
    ("--default-queue-depth", "default_queue_depth", positive_int, "N",
     "Slurm's default_queue_depth: jobs considered per main pass (default all)"),
    ("--node-procs", "node_procs", positive_int, "N",
     "processors of a node: a reservation holds whole nodes, as Slurm's backfill (default: "
     "its processors)"),
)  # fmt: skip

# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------


#: What ``--colour-by`` can show of the runs ``scheduler simulate`` makes (no redirection, no
#: memory classes: those attributes come from the studies' engines).
SIMULATE_COLOUR_BY = tuple(c for c in COLOUR_BY if c not in ("redirected", "failed", "pool"))


def add_commands(commands: Any) -> None:
    """Add ``scheduler simulate`` and ``scheduler policies``.

    Parameters
    ----------
    commands
        The subparsers action of the main parser.
    """
    command = add_command(
        commands, "simulate", cmd_simulate, "simulate EASY(primary, backfill, threshold)"
    )
    add_trace_arguments(command)
    scheduling = command.add_argument_group("scheduling policy")
    scheduling.add_argument(
        "--primary", metavar="POLICY", type=primary_order, default="FCFS",
        help="primary queue order (default FCFS; see `scheduler policies`), or "
        "learned:PATH#RANK, a fitted function (docs/learned.md), or multifactor (Slurm's "
        "multifactor priority at its defaults; with --backfilling conservative)",
    )  # fmt: skip
    scheduling.add_argument(
        "--backfill", metavar="POLICY|SJBF|none", type=backfill_policy, default="FCFS",
        help="backfilling order, or none for no backfilling (default FCFS); SJBF: shortest "
        "(predicted) job first, i.e. SPF without --predictor",
    )  # fmt: skip
    scheduling.add_argument(
        "--threshold", metavar="DURATION", type=duration, default=math.inf,
        help="jobs waiting longer go first, e.g. 40h, 90m, 2d, 3600 (seconds); default none",
    )  # fmt: skip
    scheduling.add_argument(
        "--threshold-backfill", action="store_true",
        help="backfill in the thresholded order too: jobs waiting longer than --threshold "
        "first, by submit time (Algorithm 2 of Reis's thesis when primary = backfill)",
    )  # fmt: skip
    add_reservation_argument(scheduling)
    scheduling.add_argument(
        "--estimate", choices=("requested", "clairvoyant"), default="requested",
        help="run-time estimate the scheduler sees (default: the requested time)",
    )  # fmt: skip
    scheduling.add_argument(
        "--outlive", choices=("requested", "double"), default="requested",
        help="new estimate of a job that outlives its estimate",
    )  # fmt: skip
    conservative = command.add_argument_group(
        "conservative backfilling and Slurm (docs/simulator.md, 'Conservative backfilling')"
    )
    conservative.add_argument(
        "--backfilling", choices=BACKFILLING,
        help="easy: EASY(primary, backfill, threshold) (default without --slurm-conf); "
        "conservative: a reservation for every waiting job in the primary order, with the "
        "limits below",
    )  # fmt: skip
    conservative.add_argument(
        "--slurm-conf", metavar="FILE", type=Path,
        help="schedule as this slurm.conf says (SchedulerType, SchedulerParameters, "
        "PriorityType, nodes): conservative backfilling on its machine; not combined with "
        "--primary, --backfill, --reservation, --threshold-backfill, --machine-procs, the "
        "limits below or a predictor",
    )  # fmt: skip
    for option, dest, kind, metavar, text in CONSERVATIVE_LIMITS:
        conservative.add_argument(option, dest=dest, type=kind, metavar=metavar, help=text)
    conservative.add_argument(
        "--side", metavar="FILE", type=Path,
        help="the multifactor priority's job attributes (account, partition, QOS, eligible "
        "time): the side table of 'scheduler import sacct' (default: from the SWF columns)",
    )  # fmt: skip
    conservative.add_argument(
        "--swf-account", choices=SWF_ACCOUNTS, default=SWF_ACCOUNTS[0],
        help="the multifactor priority's account of a job without a side table row: its SWF "
        "group (default) or one account for all",
    )  # fmt: skip
    prediction = command.add_argument_group(
        "run-time prediction (primary FCFS, backfill FCFS or SJBF, no threshold)"
    )
    prediction.add_argument(
        "--predictor", metavar="NAME|LOSS",
        help=f"predict run times inside the simulation: {', '.join(PREDICTORS.names())}, or a "
        "loss (eloss, squared, 'over=squared,under=linear,gamma=log(qp)', ...): nag with it",
    )  # fmt: skip
    prediction.add_argument(
        "--loss", metavar="SPEC", help="the nag predictor's loss (default eloss)"
    )
    prediction.add_argument(
        "--correction", metavar="NAME",
        help=f"a job outliving its prediction: {', '.join(CORRECTIONS.names())} "
        "(default requested)",
    )  # fmt: skip
    prediction.add_argument(
        "--eta", metavar="SECONDS", type=float,
        help=f"the nag predictor's step, s (default {ETA:g})",
    )  # fmt: skip
    prediction.add_argument(
        "--lam", metavar="WEIGHT", type=float,
        help=f"the nag predictor's l2 weight (default {LAM:g})",
    )  # fmt: skip
    command.add_argument(
        "--no-filter", action="store_true", help="simulate the raw trace (no strong filter)"
    )
    add_filter_arguments(command)
    command.add_argument(
        "--out", metavar="SCHEDULE.swf[.gz]", type=Path,
        help="write the schedule as SWF (field 3: simulated wait, seconds)",
    )  # fmt: skip
    command.add_argument(
        "--batsim-jobs", metavar="JOBS.csv", type=Path,
        help="write the schedule as Batsim's jobs.csv (each job's processors assigned), for "
        "evalys and Batsim's tools (docs/formats.md)",
    )  # fmt: skip
    command.add_argument(
        "--jobs-out", metavar="JOBS.parquet|.csv", type=table_path,
        help="write the per-job table (start, wait, bsld, ...)",
    )  # fmt: skip
    drawing = command.add_argument_group("Gantt chart (docs/schedules.md)")
    drawing.add_argument(
        "--gantt", metavar="CHART.png|.pdf", type=figure_path,
        help="draw the schedule: jobs over the processors they ran on (the assignment of "
        "docs/schedules.md), with the queue length and the utilisation under it",
    )  # fmt: skip
    drawing.add_argument(
        "--window", metavar="START,END", type=time_window,
        help="the time drawn, on the log's clock (durations: 30d,37d); default the week "
        "from the first submission",
    )  # fmt: skip
    drawing.add_argument(
        "--colour-by", choices=SIMULATE_COLOUR_BY, default="auto",
        help="what the jobs' colour shows (default auto: backfilled, or the predictions with "
        "--predictor)",
    )  # fmt: skip
    add_json_argument(command)

    command = add_command(commands, "policies", cmd_policies, "list the registered queue policies")
    add_json_argument(command)


# --------------------------------------------------------------------------------------------
# scheduler simulate
# --------------------------------------------------------------------------------------------


def add_reservation_argument(group: Any) -> None:
    """Add ``--reservation`` (one of :data:`~scheduler.sim.engine.RESERVATIONS`, default
    ``default``) to an argument group (``simulate``, ``prediction-grid``)."""
    group.add_argument(
        "--reservation", choices=RESERVATIONS, default="default",
        help="extra-processor count of the reservation (docs/simulator.md)",
    )  # fmt: skip


def cmd_simulate(args: argparse.Namespace) -> int:
    """``scheduler simulate``: filter, simulate, print the summary, write the outputs.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.

    Raises
    ------
    ConfigurationError
        ``--overrun clip`` with ``--no-filter``.
    NoJobsError
        No job is left after filtering: there is nothing to simulate (a summary of zero jobs
        would read "AvgWait 0 s, AVEbsld 0.00"); the message gives each rule's count.
    """
    if args.no_filter and args.overrun != "drop":
        raise ConfigurationError(
            f"--overrun {args.overrun} applies to the strong filter; it has no effect with "
            "--no-filter"
        )
    prediction = prediction_options(args)
    conservative = conservative_options(args)
    if args.colour_by == "prediction" and not prediction:
        raise ConfigurationError("--colour-by prediction needs --predictor")
    trace = read_trace(args)
    report = None
    if not args.no_filter:
        trace, report = strong_filter(trace, overrun=args.overrun, require_jobs=True)
    started = time.perf_counter()
    result: SimulationResult | ConservativeResult
    if conservative is not None:
        result = simulate_conservative(
            trace, threshold=args.threshold, estimate=args.estimate, outlive=args.outlive,
            **conservative, **multifactor_attributes(args, conservative),
        )  # fmt: skip
    else:
        result = simulate(
            trace,
            args.primary,
            args.backfill,
            args.threshold,
            threshold_backfill=args.threshold_backfill,
            estimate=args.estimate,
            reservation=args.reservation,
            outlive=args.outlive,
            **prediction,  # type: ignore[arg-type]
        )
    wall_ms = (time.perf_counter() - started) * 1000.0
    if args.out is not None:
        write_schedule(result, trace, report, args.out)
    if args.jobs_out is not None:
        write_job_table(result.jobs, args.jobs_out)
    if args.batsim_jobs is not None:
        with writing(args.batsim_jobs):
            write_schedule_batsim(result, args.batsim_jobs)
    if args.gantt is not None:
        draw_schedule(result, trace, args.gantt, args.window, args.colour_by)
    if args.json:
        print_json(
            {
                "trace": trace.path,
                "version": __version__,
                "filter": None if report is None else report_dict(report),
                "summary": result.summary.to_dict(),
                "config": result.config.to_dict(),
                "slurm_conf": None if args.slurm_conf is None else str(args.slurm_conf),
                "prediction": (
                    result.prediction_dict() if isinstance(result, PredictedResult) else None
                ),
                "wall_time_ms": wall_ms,
            }
        )
        return 0
    print_simulation(trace, report, result, wall_ms, slurm_conf=args.slurm_conf)
    return 0


def multifactor_attributes(
    args: argparse.Namespace, conservative: Mapping[str, object]
) -> dict[str, object]:
    """The jobs' attributes of the multifactor priority as keywords of
    :func:`~scheduler.sim.conservative.simulate_conservative`: ``side`` (the table of
    ``--side``) and ``swf_account``; none for another order.

    Raises
    ------
    ConfigurationError
        ``--side`` or a non-default ``--swf-account`` with an order other than multifactor;
        an unreadable side table (:func:`scheduler.traces.sacct.read_side_table`).
    """
    if conservative.get("primary") != "multifactor":
        given = [
            option
            for option, used in (
                ("--side", args.side is not None),
                ("--swf-account", args.swf_account != SWF_ACCOUNTS[0]),
            )
            if used
        ]
        if given:
            raise ConfigurationError(
                f"{', '.join(given)}: job attributes of the multifactor priority; the order is "
                f"{conservative.get('primary')}"
            )
        return {}
    side = None if args.side is None else read_side_table(args.side)
    return {"side": side, "swf_account": args.swf_account}


def conservative_options(args: argparse.Namespace) -> dict[str, object] | None:
    """The keywords of :func:`~scheduler.sim.conservative.simulate_conservative` that the
    options choose, or ``None`` for EASY backfilling.

    ``--slurm-conf FILE``: the file's order, limits and machine (``SlurmConf.simulate_kwargs``);
    the options that would say the same thing again are refused, not merged (*choice*: one
    source per setting). ``--backfilling conservative``: ``--primary`` and the limit options.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    dict or None

    Raises
    ------
    ConfigurationError
        A limit option with EASY backfilling; an option of EASY or a prediction option with
        conservative backfilling; with ``--slurm-conf``, an option it decides; the file's
        errors (:func:`scheduler.sim.slurm_conf.read_slurm_conf`).
    """
    # A duration of "none" (inf) is no limit, as the option's default.
    limits = {
        dest: None if getattr(args, dest) == math.inf else getattr(args, dest)
        for _, dest, *_ in CONSERVATIVE_LIMITS
    }
    given_limits = [option for option, dest, *_ in CONSERVATIVE_LIMITS if limits[dest] is not None]
    backfilling = args.backfilling or (
        BACKFILLING[0] if args.slurm_conf is None else "conservative"
    )
    if backfilling == "easy" and args.slurm_conf is None:
        if args.primary == MULTIFACTOR:
            raise ConfigurationError(
                f"--primary {MULTIFACTOR}: Slurm's multifactor priority orders conservative "
                "backfilling; add --backfilling conservative or --slurm-conf FILE"
            )
        if given_limits:
            raise ConfigurationError(
                f"{', '.join(given_limits)}: limits of conservative backfilling; add "
                "--backfilling conservative or --slurm-conf FILE"
            )
        return None
    easy_only = [
        option
        for option, given in (
            ("--backfill", args.backfill != "FCFS"),
            ("--reservation", args.reservation != "default"),
            ("--threshold-backfill", args.threshold_backfill),
            ("--predictor", args.predictor is not None),
        )
        if given
    ]
    if easy_only:
        raise ConfigurationError(
            f"{', '.join(easy_only)}: options of EASY backfilling; conservative backfilling "
            "backfills in the primary order (docs/simulator.md)"
        )
    if args.slurm_conf is None:
        return {"primary": args.primary, **limits}
    decided = given_limits + [
        option
        for option, given in (
            ("--backfilling easy", backfilling == "easy"),
            ("--primary", args.primary != "FCFS"),
            ("--machine-procs", args.machine_procs is not None),
        )
        if given
    ]
    if decided:
        raise ConfigurationError(
            f"{', '.join(decided)}: --slurm-conf {args.slurm_conf} decides the scheduling "
            "(order, limits, machine); give one or the other"
        )
    # SlurmConf.priority_kwargs is the one hook of PriorityType.
    return read_slurm_conf(args.slurm_conf).simulate_kwargs()


def print_simulation(
    trace: Trace,
    report: FilterReport | None,
    result: SimulationResult | ConservativeResult,
    wall_ms: float,
    *,
    slurm_conf: Path | None = None,
) -> None:
    """Print a simulation's summary and configuration as aligned text.

    Parameters
    ----------
    trace
        The simulated trace.
    report
        Its strong-filter report, or ``None`` with ``--no-filter``.
    result
        The simulation result.
    wall_ms
        Wall time of the simulation, milliseconds.
    slurm_conf
        The ``slurm.conf`` the settings came from, if any.
    """
    summary, config = result.summary, result.config
    kept = "off" if report is None else f"kept {report.jobs_out} of {report.jobs_in} jobs"
    if report is not None and report.overrun == "clip":
        kept += f" ({report.clipped_overrun} run times clipped to the requested time)"
    summary_rows = [
        ("trace", str(trace.path)),
        ("strong filter", kept),
        ("jobs", str(summary.jobs)),
        ("AvgWait", seconds_text(summary.avg_wait_s, HOUR_S, "h")),
        ("MaxWait", seconds_text(summary.max_wait_s, HOUR_S, "h")),
        ("AVEbsld", f"{summary.avg_bsld:.2f}"),
        ("MaxBsld", f"{summary.max_bsld:.2f}"),
        ("utilisation", f"{summary.utilisation:.4f}"),
        ("makespan", seconds_text(summary.makespan_s, DAY_S, "days")),
        ("backfilled jobs", str(summary.backfilled_jobs)),
        ("simulation wall time", f"{wall_ms:.1f} ms"),
    ]
    if isinstance(config, ConservativeConfig):
        config_rows = conservative_rows(config, slurm_conf)
    else:
        config_rows = [
            ("machine size", f"{config.machine_procs} processors"),
            ("primary", config.primary),
            ("backfill", config.backfill or "none"),
            ("threshold", threshold_text(config.threshold_s)),
            ("thresholded backfill", "yes" if config.threshold_backfill else "no"),
            ("reservation", config.reservation),
            ("estimate", config.estimate),
            ("outlive", config.outlive),
        ]
    sections = [("Simulation", summary_rows), ("Configuration", config_rows)]
    if isinstance(result, PredictedResult):
        predictor = result.predictor + (f" (loss {result.loss})" if result.loss else "")
        sections.append(
            (
                "Prediction",
                [
                    ("predictor", predictor),
                    ("correction", result.correction),
                    ("backfill order", result.backfill_order),
                    ("total corrections", str(result.total_corrections)),
                    ("MAE at submission", seconds_text(result.prediction_mae_s, HOUR_S, "h")),
                ],
            )
        )
    print_sections(sections)


def conservative_rows(config: ConservativeConfig, slurm_conf: Path | None) -> list[tuple[str, str]]:
    """The configuration rows of a conservative-backfilling run: every setting, ``none`` for a
    limit that is off, and the ``slurm.conf`` they came from.

    Parameters
    ----------
    config
        The run's settings.
    slurm_conf
        The file given with ``--slurm-conf``, or ``None``.

    Returns
    -------
    list of (label, value)
    """

    def limit(value: float | None, unit: str) -> str:
        return "none" if value is None else f"{value:g}{unit}"

    rows = [("slurm.conf", str(slurm_conf))] if slurm_conf is not None else []
    return [
        *rows,
        ("machine size", f"{config.machine_procs} processors"),
        ("backfilling", "conservative"),
        ("primary", config.primary),
        ("threshold", threshold_text(config.threshold_s)),
        ("depth", limit(config.depth, "")),
        ("bf_window", limit(config.bf_window_s, " s")),
        ("bf_resolution", limit(config.bf_resolution_s, " s")),
        ("bf_interval", limit(config.bf_interval_s, " s")),
        ("bf_max_job_test", limit(config.bf_max_job_test, "")),
        ("default_queue_depth", limit(config.default_queue_depth, "")),
        (
            "reservations hold",
            "processors"
            if config.node_procs is None
            else f"whole nodes of {config.node_procs} processors",
        ),
        *multifactor_rows(config),
        ("estimate", config.estimate),
        ("outlive", config.outlive),
    ]


def multifactor_rows(config: ConservativeConfig) -> list[tuple[str, str]]:
    """The multifactor priority's rows (weights, fair-share's periods, job size), or none when
    the order is another."""
    priority = config.priority
    if priority is None:
        return []
    weights = (
        f"age {priority.weight_age}, fair-share {priority.weight_fairshare}, job size "
        f"{priority.weight_job_size}, partition {priority.weight_partition}, QOS "
        f"{priority.weight_qos}"
    )
    periods = (
        f"classic, half-life {seconds_text(priority.decay_half_life_s, 86400.0, 'd')}, "
        f"calc period {priority.calc_period_s:g} s, dampening {priority.dampening}"
    )
    nodes = "none" if priority.procs_per_node is None else f"{priority.procs_per_node} per node"
    size = f"favor {'small' if priority.favor_small else 'large'}, processors {nodes}"
    return [
        ("priority weights", weights),
        ("max age", seconds_text(priority.max_age_s, 86400.0, "d")),
        ("fair-share", periods),
        ("job size", size),
    ]


def prediction_options(args: argparse.Namespace) -> dict[str, object]:
    """The prediction keywords of :func:`scheduler.simulate` from ``--predictor`` and co.

    ``--predictor`` is a predictor name or a loss (then the predictor is nag with that loss).
    The other combinations are checked by :func:`scheduler.simulate`.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    dict
        Empty without ``--predictor``; else ``predictor``, ``loss``, ``correction``, ``eta``,
        ``lam`` (``None`` where not given).

    Raises
    ------
    ConfigurationError
        ``--predictor`` is neither a predictor nor a loss; ``--loss`` contradicts a loss given
        as ``--predictor``; a prediction option without ``--predictor``.
    """
    options = {"loss": args.loss, "correction": args.correction, "eta": args.eta, "lam": args.lam}
    if args.predictor is None:
        given = [f"--{name}" for name, value in options.items() if value is not None]
        if given:
            raise ConfigurationError(
                f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} --predictor "
                f"({', '.join(PREDICTORS.names())}, or a loss)"
            )
        return {}
    if args.loss is not None:
        parse_loss(args.loss, where="--loss")
    predictor = PREDICTORS.canonical(args.predictor)
    if predictor is None:
        try:
            spec = parse_loss(args.predictor, where="loss spec")
        except ConfigurationError as exc:
            why = str(exc) if "=" in args.predictor else f"named losses: {', '.join(LOSSES)}"
            raise ConfigurationError(
                f"--predictor {args.predictor!r} is neither a predictor "
                f"({', '.join(PREDICTORS.names())}) nor a loss ({why})"
            ) from None
        if args.loss is not None and parse_loss(args.loss) != spec:
            raise ConfigurationError(
                f"--predictor {args.predictor!r} is a loss (nag with it), and --loss "
                f"{args.loss!r} is another one: give one of them"
            )
        predictor, options["loss"] = "nag", args.predictor
    return {"predictor": predictor, **options}


def write_schedule(
    result: SimulationResult | ConservativeResult,
    trace: Trace,
    report: FilterReport | None,
    path: Path,
) -> None:
    """Write the simulated schedule as SWF with provenance header lines, atomically.

    Parameters
    ----------
    result
        The simulation result; field 3 of each job becomes its simulated wait (s).
    trace
        The simulated trace (its header is kept).
    report
        The strong-filter report, or ``None`` when the trace was not filtered.
    path
        Output file (gzipped when it ends with ``.gz``).
    """
    config = json.dumps(result.config.to_dict(), sort_keys=True)
    extra = [
        f"schedlab {__version__} simulate: field 3 (wait time) holds the simulated wait, seconds",
        f"schedlab config: {config}",
    ]
    if report is not None:
        extra.insert(1, filter_header_line(report))
    extra += machine_size_lines(trace, path)
    with writing(path):
        write_swf(
            result.to_swf_jobs(), path, header=trace.header, extra_header_lines=extra,
            job_counts=True,
        )  # fmt: skip


def draw_schedule(
    result: SimulationResult | ConservativeResult,
    trace: Trace,
    path: Path,
    window: tuple[float, float] | None,
    colour_by: str,
) -> None:
    """Draw the schedule's Gantt chart over ``window`` (default: the week from the first
    submission), with the run's configuration as provenance."""
    from scheduler.sim.schedule import schedule_of
    from scheduler.studies.common.gantt import WEEK_S, draw_gantt

    if window is None:
        first = float(result.jobs["submit_s"].min())  # type: ignore[arg-type]
        window = (first, first + WEEK_S)
    provenance = {
        "trace": str(trace.path),
        "schedlab": __version__,
        "config": json.dumps(result.config.to_dict(), sort_keys=True),
    }
    title = f"{Path(str(trace.path)).name}, {window[0]:.0f}-{window[1]:.0f} s"
    with writing(path):
        draw_gantt(schedule_of(result), path, window, colour_by=colour_by, title=title,
                   provenance=provenance)  # fmt: skip


def write_job_table(jobs: pl.DataFrame, path: Path) -> None:
    """Write the per-job table as Parquet or CSV (by suffix), atomically.

    Parameters
    ----------
    jobs
        ``SimulationResult.jobs``.
    path
        Output file ending with ``.parquet`` or ``.csv``.
    """
    with writing(path), atomic_path(path) as tmp:
        if path.suffix.lower() == ".csv":
            jobs.write_csv(tmp)
        else:
            jobs.write_parquet(tmp)


# --------------------------------------------------------------------------------------------
# scheduler policies
# --------------------------------------------------------------------------------------------


def cmd_policies(args: argparse.Namespace) -> int:
    """``scheduler policies``: the registered policies with their descriptions.

    Parameters
    ----------
    args
        Parsed arguments.

    Returns
    -------
    int
        Exit code 0.
    """
    if args.json:
        print_json([{"name": p.name, "description": p.description} for p in POLICIES.values()])
        return 0
    specs = [(prefix, POLICY_SPECS.description(prefix)) for prefix in POLICY_SPECS]
    print_sections(
        [
            ("Policies", [(p.name, p.description) for p in POLICIES.values()]),
            ("Policy specs (--primary, --backfill, scheduler.simulate)", specs),
        ]
    )
    return 0
