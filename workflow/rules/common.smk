# What the rules share: the validated configuration, the studies' plans, how a rule runs its
# step, and the loop that includes each selected study's rules. This file knows no study by
# name: a study is a registered object of the package (scheduler.studies.common.study), with its
# plan, its config section's schema and its rules file workflow/rules/<name>.smk.
import re
from pathlib import Path

from snakemake.logging import logger

from scheduler.core.code_hash import step_hash
from scheduler.core.step_pool import StepPool
from scheduler.core.atomic import atomic_write_bytes
from scheduler.studies.common import paths as trace_paths
from scheduler.studies.common.reference import report_landing_page
from scheduler.studies.common.study import (
    STUDIES,
    plan_studies,
    setup_calls,
    validated_config,
)
from scheduler.traces import steps as trace_steps
from scheduler.traces.download import TraceSource, source_checksum

# The configuration checked against the schema (the shared keys and each selected study's
# section: scheduler/studies/<name>/config.schema.yaml), every default filled in. Rules, plans
# and report captions read it; none writes a default of its own.
_VALIDATED = validated_config(config)
config.clear()
config.update(_VALIDATED)
# The plans of the selected studies (config key `studies`), by rank: each study's rules file
# takes its own (PLANS["<name>"]); their setup calls (the learned study's functions registered
# as policies) are made first, here and in every worker process of the step pool.
SETUP_CALLS = setup_calls(config)
PLANS = plan_studies(config)
# The report's category of each study (its title).
TITLES = {name: STUDIES[name].title for name in PLANS}


def landing_page():
    """The report's front page for this run's studies (the Snakefile's `report:`), written
    under .snakemake/ when it changes: it names every study run, with a paragraph and a link
    each (scheduler.studies.common.reference.report_landing_page)."""
    path = Path(".snakemake", "schedlab", "report.rst").resolve()
    text = report_landing_page(config).encode("utf-8")
    if not path.is_file() or path.read_bytes() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, text)
    return str(path)


# -- running a step -------------------------------------------------------------------------------
# The steps run in a pool of worker processes (config key `step_processes`) when this process
# runs the jobs as threads (the local default profile): scheduler.core.step_pool says why. Cluster
# jobs (remote), jobs spawned as processes (--no-force-use-threads) and a Snakemake main process
# handing its jobs to a cluster run each step where they are. Started on the first step.
_STEP_POOL = []


def step_pool():
    """The step pool, started on the first call; None when the steps run where they are called.
    Decided at run time (a lint or a dry run has no execution settings)."""
    if not _STEP_POOL:
        in_use = (
            config["step_processes"]
            and workflow.is_main_process
            and workflow.local_exec
            and workflow.use_threads
        )
        _STEP_POOL.append(
            StepPool(workflow.cores, setup=SETUP_CALLS) if in_use else None
        )
        if in_use:
            logger.info(
                f"Steps run in a pool of {workflow.cores} worker processes "
                "(config key step_processes)."
            )
    return _STEP_POOL[0]


def _plain(value):
    """Snakemake's file names and lists (str and list subclasses holding a reference to their
    rule) as plain str and list, so that a step's arguments travel to a worker as values.
    """
    if isinstance(value, str):
        return str(value)
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def run_step(step, input, output, log, params):
    """Run a rule's step: its named inputs and outputs (named as the step's file parameters),
    its log and the step settings the plan computed (``params.settings``), in a worker process
    of the step pool when it is in use (same files, same result, same error either way).
    Inputs named with a leading underscore are files the step reads through something else
    (a fit file that a policy reads through the policy registry): they are not passed.
    """
    inputs = {name: files for name, files in input.items() if not name.startswith("_")}
    kwargs = {**inputs, **dict(output.items())}
    kwargs.update(params.get("settings") or {})
    kwargs["log_path"] = log[0]
    pool = step_pool()
    if pool is None:
        return step(**kwargs)
    return pool.run(step, **_plain(kwargs))


def reported(outputs, study):
    """A rule's outputs as a study's plan describes them (step parameter -> path, or
    scheduler.studies.common.paths.Reported for an output of the report), with report() around
    the reported ones: caption workflow/report/<study>/<caption>, category the study's title.
    """
    return {
        name: (
            item
            if isinstance(item, str)
            else report(
                item.path,
                caption=f"../report/{study}/{item.caption}",
                category=TITLES[study],
                subcategory=item.subcategory,
                labels=dict(item.labels),
            )
        )
        for name, item in outputs.items()
    }


# -- the trace catalogue ----------------------------------------------------------------------------
# The params of each rule hold step_hash(<the step function it calls>), the hash of the modules
# that function can import (derived from the import graph by scheduler.core.code_hash), so
# Snakemake reruns exactly the jobs a code change affects.


def _alternatives(names):
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


wildcard_constraints:
    trace=_alternatives(config["traces"]),
    overrun="clip",


def download_settings(wildcards):
    """download_trace's settings: the catalogue entry's source and the archive settings."""
    entry = config["traces"][wildcards.trace]
    return {
        "trace": wildcards.trace,
        "url": entry["url"],
        "sha256": entry["sha256"],
        **config["archive"],
    }


def download_source(wildcards):
    """The checksum of what download_trace would fetch (scheduler.traces.download.
    source_checksum: its mirror file's, else the one its last fetch recorded): in the rule's
    params, so that a mirror file replaced under its name is fetched again and what follows
    reruns, also with sha256: null in the catalogue."""
    entry = config["traces"][wildcards.trace]
    source = TraceSource(wildcards.trace, entry["url"], entry["sha256"])
    fetched = trace_paths.download_report_file(wildcards.trace)
    return source_checksum(source, config["archive"]["mirror_dirs"], fetched)


def filter_settings(wildcards):
    """filter_trace's settings: the catalogue's machine size and the overrun treatment."""
    return {
        "trace": wildcards.trace,
        "machine_procs": config["traces"][wildcards.trace]["machine_procs"],
        "overrun": getattr(wildcards, "overrun", trace_paths.DROP),
    }


# -- the studies ----------------------------------------------------------------------------------


def all_targets():
    """Every selected study's targets, by rank."""
    return [target for plan in PLANS.values() for target in plan.targets()]


for _name in PLANS:

    include: STUDIES[_name].rules
