# Helpers shared by the rules: config validation, the study plan, file names, input functions.
import re
from types import SimpleNamespace

from snakemake.logging import logger
from snakemake.utils import validate

from scheduler.core.code_hash import step_hash
from scheduler.core.step_pool import StepPool
from scheduler.policies.learned import register_learned
from scheduler.studies.learned import steps as learned_steps
from scheduler.studies.learned.plan import learned_plan
from scheduler.studies.memory import steps as memory_steps
from scheduler.studies.memory.plan import memory_plan
from scheduler.studies.online import steps as online_steps
from scheduler.studies.online.plan import online_plan
from scheduler.studies.prediction import steps as prediction_steps
from scheduler.studies.redirect import steps as redirect_steps
from scheduler.studies.redirect.plan import redirect_plan
from scheduler.studies.prediction.plan import prediction_plan
from scheduler.studies.tuning import steps as tuning_steps
from scheduler.studies.tuning.plan import SimulationCase, tuning_plan
from scheduler.traces import steps as trace_steps

validate(config, schema="../schemas/config.schema.yaml")
# The studies to run (config key `studies`); a study left out is neither checked nor planned,
# and its rules file is not included (Snakefile).
STUDIES = tuple(config["studies"])
# Fine simulation jobs per Snakemake job (config key `bundle`; 1: one job each).
BUNDLE = config["bundle"]
LEARNED_PLAN = learned_plan(config) if "learned" in STUDIES else None
LEARNED = "results/learned"
# The learned functions are policies of every study: LF<k> is the rank-k function of the
# learned study's fit (registered here, read when a simulation computes its keys; the rules
# that simulate with one take the fit file as an input).
LEARNED_FUNCTIONS = f"{LEARNED}/functions.parquet"
# (the same registrations are made in every worker process of the step pool, below)
LEARNED_REGISTRATIONS = (
    []
    if LEARNED_PLAN is None
    else [
        (register_learned, (_name, f"learned:{LEARNED_FUNCTIONS}#{_rank}"))
        for _rank, _name in enumerate(LEARNED_PLAN.learned_names, start=1)
    ]
)
for _register, _args in LEARNED_REGISTRATIONS:
    _register(*_args)
PLAN = tuning_plan(config) if "tuning" in STUDIES else None
ONLINE_PLAN = online_plan(config) if "online" in STUDIES else None
PREDICTION_PLAN = prediction_plan(config) if "prediction" in STUDIES else None
REDIRECT_PLAN = redirect_plan(config) if "redirect" in STUDIES else None
MEMORY_PLAN = memory_plan(config) if "memory" in STUDIES else None

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
            StepPool(workflow.cores, setup=LEARNED_REGISTRATIONS) if in_use else None
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


def run_step(step, *args, **kwargs):
    """Call a step function, in a worker process of the step pool when it is in use (same
    files, same result, same error message either way)."""
    pool = step_pool()
    if pool is None:
        return step(*args, **kwargs)
    return pool.run(step, *_plain(args), **_plain(kwargs))


# The params of each step hold step_hash(<the step function it calls>), the hash of the modules
# that function can import (derived from the import graph by scheduler.core.code_hash), so
# Snakemake reruns exactly the jobs a code change affects.

TUNING = "results/tuning"
ONLINE = "results/online"
PREDICTION = "results/prediction"
REDIRECT = "results/redirect"
MEMORY = "results/memory"
# One simulation job's file name below {TUNING}/{trace}/sims/ (and logs/, benchmarks/): one
# policy pair under every threshold of the week source, on one batch of weeks.
SIM_PAIR = "{split}/{primary}/{backfill}/batch{batch}"
# The figure names come from the step module that draws them.
PER_TRACE_FIGURES = tuning_steps.TRACE_FIGURES
STUDY_FIGURES = tuning_steps.STUDY_FIGURES


def simulation_file(trace, split, primary, backfill, batch, kind="output"):
    """The one place that spells a simulation job's output path (kind "log": its log)."""
    case = SIM_PAIR.format(split=split, primary=primary, backfill=backfill, batch=batch)
    if kind == "log":
        return f"logs/tuning/{trace}/sims/{case}.log"
    return f"{TUNING}/{trace}/sims/{case}.parquet"


def _alternatives(names):
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


wildcard_constraints:
    trace=_alternatives(config["traces"]),
    split="train|test|whole",
    batch=r"\d+",
    primary=r"[A-Za-z0-9_]+",
    backfill=r"[A-Za-z0-9_]+",
    threshold=r"none|[0-9.]+[smhdw]",
    figure=_alternatives(PER_TRACE_FIGURES + STUDY_FIGURES),
    replica=r"\d+",
    period=r"none|[0-9]+[smhdw]",
    strategy=r"[A-Za-z0-9.-]+",
    online_figure=r"fixed_improvement|(selector_improvement|choice_shares)_[0-9]+[smhdw]",
    technique=r"[A-Za-z0-9-]+",
    overrun="clip",
    procs=r"\d+",
    rank=r"\d+",
    workload=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    alpha=r"baseline|[0-9.]+",
    redirect_figure=_alternatives(redirect_steps.FIGURES),
    memory_scheduler="fcfs|easy",
    memory_load=r"[0-9.]+",
    memory_mb=r"[0-9.]+",
    memory_figure=_alternatives(memory_steps.FIGURES),
    prediction_figure=_alternatives(
        prediction_steps.TRACE_FIGURES + prediction_steps.STUDY_FIGURES
    ),


def trace_source(wildcards):
    """URL and checksum of a catalogue trace (the params that define the downloaded bytes)."""
    entry = config["traces"][wildcards.trace]
    return {"url": entry["url"], "sha256": entry.get("sha256")}


def machine_procs(wildcards):
    return config["traces"][wildcards.trace].get("machine_procs")


def batch_weeks(wildcards):
    batch = PLAN.batch(int(wildcards.batch), wildcards.split)
    return {"first_week": batch.first, "last_week": batch.last}


def week_source(wildcards):
    """The jobs a week source resamples: a half of the filtered log (train, test), or the
    whole filtered log (whole: the descriptive figures' weeks)."""
    if wildcards.split == "whole":
        return f"results/{wildcards.trace}/filtered.parquet"
    return f"results/{wildcards.trace}/split/{wildcards.split}.parquet"


def threshold_seconds(wildcards):
    return PLAN.threshold_seconds(wildcards.threshold)


def pairs_of(split):
    """The policy pairs simulated on a week source, in the order of their first case."""
    return list(
        dict.fromkeys((case.primary, case.backfill) for case in PLAN.cases_of(split))
    )


def pair_bundles(split):
    """The policy pairs of a week source dealt into bundles of `bundle` pairs (config key
    `bundle`: one Snakemake job per (trace, source, batch, bundle) when it is above 1).
    """
    pairs = pairs_of(split)
    return [pairs[k : k + BUNDLE] for k in range(0, len(pairs), BUNDLE)]


def bundle_pairs(split, pairs):
    """simulate_bundle's description of each pair: its policies and (label, seconds) of every
    threshold it is simulated under on the week source."""
    return [
        {
            "primary": primary,
            "backfill": backfill,
            "thresholds": pair_thresholds(
                SimpleNamespace(split=split, primary=primary, backfill=backfill)
            ),
        }
        for primary, backfill in pairs
    ]


def pair_thresholds(wildcards):
    """(label, seconds) of every threshold a pair is simulated under on a week source (one
    job runs them all: they share the run without threshold up to where they differ)."""
    return [
        (case.threshold, PLAN.threshold_seconds(case.threshold))
        for case in PLAN.cases_of(wildcards.split)
        if (case.primary, case.backfill) == (wildcards.primary, wildcards.backfill)
    ]


def weekly_cases(splits):
    """(split, primary, backfill, threshold) of every case of the week sources: a param of
    the collecting rules, so that a new threshold (which changes no file name: a pair's job
    holds all its thresholds) makes them, and through them the simulations, out of date even
    after a failed run deleted the simulations' outputs."""
    return [
        [split, case.primary, case.backfill, case.threshold]
        for split in splits
        for case in PLAN.cases_of(split)
    ]


def baseline():
    base = PLAN.baseline
    return {
        "primary": base.primary,
        "backfill": base.backfill,
        "threshold": base.threshold,
    }


def week_simulation_files(trace, splits):
    """Every weekly simulation file of one trace on the given week sources: the pairs of
    each source's cases (the search space on train and test, the figures' cases on whole) x
    batches."""
    return [
        simulation_file(trace, split, primary, backfill, batch.index)
        for split in splits
        for primary, backfill in pairs_of(split)
        for batch in PLAN.batches(split)
    ]


def simulation_files(wildcards):
    """Every weekly simulation file of the train/test protocol of one trace."""
    return week_simulation_files(wildcards.trace, PLAN.splits)


def whole_simulation_files(wildcards):
    """Every weekly simulation file on the whole-log weeks of one trace."""
    return week_simulation_files(wildcards.trace, ["whole"])


def figure_tables(wildcards):
    """The weekly and summary tables of the week source of the descriptive figures."""
    parts = [TUNING, wildcards.trace] + (
        ["whole"] if PLAN.figure_split == "whole" else []
    )
    folder = "/".join(parts)
    return {
        "weekly": f"{folder}/weekly.parquet",
        "summary": f"{folder}/summary.parquet",
    }


def whole_log_files(wildcards=None):
    """Every run of the whole-log table: traces x (pairs x thresholds, and the baseline)."""
    return [
        f"{TUNING}/{trace}/whole_log/{case.primary}/{case.backfill}/{case.threshold}.parquet"
        for trace in PLAN.whole_log_trace_names
        for case in PLAN.whole_log_cases()
    ]


def weekly_files(wildcards=None):
    return expand(f"{TUNING}/{{trace}}/weekly.parquet", trace=PLAN.trace_names)


def bootstrap_replicates(wildcards):
    batch = PLAN.bootstrap_batch(int(wildcards.batch))
    return {"first_replicate": batch.first, "last_replicate": batch.last}


def bootstrap_files(wildcards=None):
    """Every source-week bootstrap batch of every trace (none when replicates is 0)."""
    return [
        f"{TUNING}/{trace}/bootstrap/batch{batch.index}.parquet"
        for trace in PLAN.trace_names
        for batch in PLAN.bootstrap_batches()
    ]


def summary_files(wildcards=None):
    return expand(f"{TUNING}/{{trace}}/summary.parquet", trace=PLAN.trace_names)


def tuning_targets():
    if PLAN is None:
        return []
    tables = expand(
        f"{TUNING}/tables/{{trace}}_summary.{{ext}}",
        trace=PLAN.trace_names,
        ext=("csv", "md"),
    )
    protocol = expand(f"{TUNING}/tables/protocol.{{ext}}", ext=("csv", "md"))
    trace_figures = expand(
        f"{TUNING}/figures/{{trace}}/{{figure}}.{{ext}}",
        trace=PLAN.trace_names,
        figure=PER_TRACE_FIGURES,
        ext=("png", "pdf"),
    )
    study_figures = expand(
        f"{TUNING}/figures/{{figure}}.{{ext}}", figure=STUDY_FIGURES, ext=("png", "pdf")
    )
    if PLAN.figure_split == "whole":  # the values behind the descriptive figures
        tables += expand(
            f"{TUNING}/tables/{{trace}}_whole_summary.{{ext}}",
            trace=PLAN.trace_names,
            ext=("csv", "md"),
        )
    if PLAN.whole_log_traces:
        tables += expand(f"{TUNING}/tables/whole_log.{{ext}}", ext=("csv", "md"))
    return tables + protocol + trace_figures + study_figures


def figure_settings():
    """What the per-trace figures show (the `tuning.figures` keys, checked by the plan)."""
    return {
        "weeks": PLAN.figure_weeks,
        "weekly_backfill": PLAN.weekly_backfill,
        "thresholded_backfill": PLAN.thresholded_backfill,
        "threshold": PLAN.figure_threshold,
        "baseline": baseline(),
        "split": PLAN.figure_split,
    }


# -- the online study ----------------------------------------------------------------------------


def period_seconds(wildcards):
    # fixed policies never switch: their "period" (none) only paces the live run's loop
    if wildcards.period == "none":
        return 604800.0
    return ONLINE_PLAN.period_seconds(wildcards.period)


def strategy_spec(wildcards):
    return ONLINE_PLAN.strategy(wildcards.strategy).spec


def online_run_settings(wildcards):
    """What defines one live run (the keyword arguments of online_steps.online_run)."""
    return {
        "trace": wildcards.trace,
        "replica": int(wildcards.replica),
        "strategy": strategy_spec(wildcards),
        "period": wildcards.period,
        "period_s": period_seconds(wildcards),
        "policies": list(ONLINE_PLAN.policies),
        "threshold_s": ONLINE_PLAN.threshold_s,
        "threshold_backfill": ONLINE_PLAN.threshold_backfill,
        "seed": ONLINE_PLAN.seed,
        "options": ONLINE_PLAN.selector_options,
        "period_alignment": ONLINE_PLAN.period_alignment,
    }


def online_file(name, trace, replica, period=None, strategy=None, kind="output"):
    """The one place that spells the online study's file paths: ``name`` "trace" (a replica's
    long trace), "costs" (its simulated period costs), "runs" or "choices" (a run's curve and
    choices); ``kind`` "output", "log" or "benchmark" (a run has one log and one benchmark for
    its two files). Wildcard patterns come out when the arguments are "{trace}" and so on.
    """
    folder = {
        "trace": "traces",
        "costs": f"costs/{period}",
        "runs": f"runs/{period}/{strategy}",
        "choices": f"choices/{period}/{strategy}",
    }[name]
    case = f"{folder}/replica{replica}"
    if kind == "output":
        return f"{ONLINE}/{trace}/{case}.parquet"
    case = case.replace("choices/", "runs/", 1)
    if kind == "log":
        return f"logs/online/{trace}/{case}.log"
    return f"benchmarks/online/{trace}/{case}.tsv"


def online_costs_input(wildcards):
    """The simulated period costs, for the selectors that need them (full, noisy)."""
    if not ONLINE_PLAN.strategy(wildcards.strategy).needs_simulation:
        return []
    return online_file("costs", wildcards.trace, wildcards.replica, wildcards.period)


def online_cost_periods():
    """The periods whose simulated costs some run needs (the full and noisy selectors)."""
    runs = ONLINE_PLAN.runs()
    return list(dict.fromkeys(period for s, period in runs if s.needs_simulation))


def period_cost_settings():
    """The study-wide keyword arguments of online_steps.period_costs."""
    return {
        "policies": list(ONLINE_PLAN.policies),
        "threshold_s": ONLINE_PLAN.threshold_s,
        "threshold_backfill": ONLINE_PLAN.threshold_backfill,
        "period_alignment": ONLINE_PLAN.period_alignment,
    }


def long_trace_settings():
    """The study-wide keyword arguments of online_steps.make_long_trace."""
    return {
        "weeks": ONLINE_PLAN.weeks,
        "seed": ONLINE_PLAN.seed,
        "method": ONLINE_PLAN.resampling,
        "alignment": ONLINE_PLAN.week_alignment,
    }


def online_replica_files(trace, replica):
    """Every output and log of one replica's jobs (the long trace, the period costs, each
    run's curve and choices): the paths of long_trace, period_costs and online_run, which
    online_replica (config key `bundle` above 1) writes in one job."""
    return {
        "trace": tuple(
            online_file("trace", trace, replica, kind=kind)
            for kind in ("output", "log")
        ),
        "costs": {
            p: tuple(
                online_file("costs", trace, replica, p, kind=kind)
                for kind in ("output", "log")
            )
            for p in online_cost_periods()
        },
        "runs": {
            (s.slug, p): (
                online_file("runs", trace, replica, p, s.slug),
                online_file("choices", trace, replica, p, s.slug),
                online_file("runs", trace, replica, p, s.slug, kind="log"),
            )
            for s, p in ONLINE_PLAN.runs()
        },
    }


def online_replica_outputs(kind):
    """The output (kind "output") or log (kind "log") patterns of rule online_replica."""
    files = online_replica_files("{trace}", "{replica}")
    column = 1 if kind == "log" else 0
    paths = [files["trace"][column]]
    paths += [pair[column] for pair in files["costs"].values()]
    if kind == "log":
        return paths + [run[2] for run in files["runs"].values()]
    return paths + [path for run in files["runs"].values() for path in run[:2]]


def online_replica_jobs(wildcards):
    """online_steps.online_replica's keyword arguments for one replica: each job's own
    arguments, as the rules long_trace, period_costs and online_run give them."""
    trace, replica = wildcards.trace, wildcards.replica
    files = online_replica_files(trace, replica)
    costs = [
        {
            "out_path": path,
            "trace": trace,
            "replica": int(replica),
            "period": period,
            "period_s": period_seconds(SimpleNamespace(period=period)),
            "log_path": log,
            **period_cost_settings(),
        }
        for period, (path, log) in files["costs"].items()
    ]
    runs = []
    for (slug, period), (curve, choices, log) in files["runs"].items():
        run = SimpleNamespace(
            trace=trace, replica=replica, period=period, strategy=slug
        )
        costs_path = files["costs"][period][0] if online_costs_input(run) else None
        runs.append(
            {
                "curve_path": curve,
                "choices_path": choices,
                "costs_path": costs_path,
                "log_path": log,
                **online_run_settings(run),
            }
        )
    long_trace = {
        "trace": trace,
        "replica": int(replica),
        "log_path": files["trace"][1],
    }
    return {
        "long_trace": {**long_trace, **long_trace_settings()},
        "costs": costs,
        "runs": runs,
    }


def online_run_files(kind):
    """Every run output (kind: "runs" or "choices") of the online study."""
    return [
        online_file(kind, trace, replica, period, strategy.slug)
        for trace in ONLINE_PLAN.trace_names
        for replica in range(ONLINE_PLAN.replicas)
        for strategy, period in ONLINE_PLAN.runs()
    ]


def online_figures():
    periods = [period.label for period in ONLINE_PLAN.periods]
    # choice shares: of the noisy (else full) selector and of the bandit, when one was run
    kinds = ["selector_improvement"]
    if online_steps.draws_choice_shares([s.spec for s in ONLINE_PLAN.strategies]):
        kinds.append("choice_shares")
    return ["fixed_improvement"] + [
        f"{kind}_{period}" for kind in kinds for period in periods
    ]


def online_table_outputs():
    """The outputs of online_tables (name -> file): the ε table only when a bandit runs."""
    outputs = {}
    if ONLINE_PLAN.bandit_epsilons:
        outputs["epsilon_csv"] = report(
            f"{ONLINE}/tables/epsilon.csv",
            caption="../report/online_table.rst",
            category="Online selection",
            labels={"table": "epsilon (leave-one-trace-out)"},
        )
        outputs["epsilon_md"] = f"{ONLINE}/tables/epsilon.md"
    return outputs | {
        "changes_parquet": f"{ONLINE}/tables/changes.parquet",
        "changes_csv": report(
            f"{ONLINE}/tables/changes.csv",
            caption="../report/online_table.rst",
            category="Online selection",
            labels={"table": "relative total-wait changes"},
        ),
        "fixed_md": f"{ONLINE}/tables/fixed_policies.md",
        "strategies_md": f"{ONLINE}/tables/strategies.md",
        "improvement_parquet": f"{ONLINE}/tables/improvement.parquet",
        "shares_parquet": f"{ONLINE}/tables/choice_shares.parquet",
    }


def online_targets():
    if ONLINE_PLAN is None or not ONLINE_PLAN.traces:
        return []
    names = ["fixed_policies.md", "strategies.md", "changes.csv"]
    if ONLINE_PLAN.bandit_epsilons:
        names.insert(0, "epsilon.md")
    tables = expand(f"{ONLINE}/tables/{{name}}", name=names)
    figures = expand(
        f"{ONLINE}/figures/{{trace}}/{{figure}}.{{ext}}",
        trace=ONLINE_PLAN.trace_names,
        figure=online_figures(),
        ext=("png", "pdf"),
    )
    return tables + figures


# -- the run-time prediction study --------------------------------------------------------------


def prediction_filtered(wildcards):
    """The filtered log of the study (prediction.overrun: clip, or drop = the common filter)."""
    if PREDICTION_PLAN.overrun == "drop":
        return f"results/{wildcards.trace}/filtered.parquet"
    return f"results/{wildcards.trace}/filtered-{PREDICTION_PLAN.overrun}.parquet"


def technique_settings(wildcards):
    """What defines one technique's simulations (keyword arguments of simulate_technique)."""
    technique = PREDICTION_PLAN.technique(wildcards.technique)
    return {
        "predictor": technique.predictor,
        "loss": technique.loss,
        "corrections": list(PREDICTION_PLAN.corrections_of(technique)),
        "backfills": list(PREDICTION_PLAN.backfills),
    }


def prediction_run_files(wildcards=None):
    return [
        f"{PREDICTION}/{trace}/runs/{technique.slug}.parquet"
        for trace in PREDICTION_PLAN.trace_names
        for technique in PREDICTION_PLAN.techniques
    ]


def ecdf_prediction_files(wildcards):
    return [
        f"{PREDICTION}/{wildcards.trace}/predictions/{slug}.parquet"
        for slug in PREDICTION_PLAN.ecdf_techniques
    ]


def prediction_table_outputs():
    """The outputs of prediction_tables (name -> file): lolo only with two logs or more."""
    names = ["best_worst", "errors"]
    if len(PREDICTION_PLAN.traces) > 1:
        names.append("lolo")
    outputs = {}
    for name in names:
        outputs[f"{name}_csv"] = report(
            f"{PREDICTION}/tables/{name}.csv",
            caption="../report/prediction_table.rst",
            category="Run-time prediction",
            labels={"table": name},
        )
        outputs[f"{name}_md"] = f"{PREDICTION}/tables/{name}.md"
    return outputs


def prediction_targets():
    if PREDICTION_PLAN is None:
        return []
    outputs = prediction_table_outputs()
    tables = [outputs[key] for key in outputs if key.endswith("_md")]
    tables.append(f"{PREDICTION}/tables/runs.csv")
    figures = expand(
        f"{PREDICTION}/figures/{{trace}}/{{figure}}.{{ext}}",
        trace=PREDICTION_PLAN.trace_names,
        figure=prediction_steps.TRACE_FIGURES,
        ext=("png", "pdf"),
    )
    if len(PREDICTION_PLAN.traces) > 1:
        figures += expand(
            f"{PREDICTION}/figures/{{figure}}.{{ext}}",
            figure=prediction_steps.STUDY_FIGURES,
            ext=("png", "pdf"),
        )
    return tables + figures


# -- the learned-priority-function study -------------------------------------------------------


def tuple_numbers(wildcards):
    return list(LEARNED_PLAN.batch_tuples(int(wildcards.batch)))


def score_files(wildcards=None):
    return [f"{LEARNED}/scores/batch{b}.parquet" for b in range(LEARNED_PLAN.batches)]


def workload_source(wildcards):
    """The jobs of an evaluation workload: the generated model, or the catalogue log as
    downloaded (the protocol keeps every job with positive processors, run and requested
    times: no strong filter)."""
    workload = LEARNED_PLAN.workload(wildcards.workload)
    if workload.is_model:
        return f"{LEARNED}/model/model-{workload.model_procs}.parquet"
    return f"resources/traces/{workload.name}.swf.gz"


def evaluation_settings(wildcards):
    """What defines one workload's evaluation (keyword arguments of evaluate_workload)."""
    workload = LEARNED_PLAN.workload(wildcards.workload)
    return {
        "machine_procs": workload.machine_procs,
        "modes": list(LEARNED_PLAN.modes),
        "policies": list(LEARNED_PLAN.policies),
        "learned": {
            name: rank for rank, name in enumerate(LEARNED_PLAN.learned_names, start=1)
        },
        "sequences": LEARNED_PLAN.sequences,
        "random_sequences": LEARNED_PLAN.random_sequences,
        "days": LEARNED_PLAN.days,
        "tau_s": LEARNED_PLAN.tau_s,
        "seed": LEARNED_PLAN.seed,
    }


def evaluation_files(wildcards=None):
    return [f"{LEARNED}/evaluation/{w.name}.parquet" for w in LEARNED_PLAN.workloads]


def learned_targets():
    if LEARNED_PLAN is None:
        return []
    tables = [
        f"{LEARNED}/tables/{name}"
        for name in ("top_functions.md", "forms.csv", "evaluation.md", "evaluation.csv")
    ]
    figures = expand(
        f"{LEARNED}/figures/{{name}}.{{ext}}",
        name=["convergence", "evaluation"]
        + [f"function_{rank}" for rank in range(1, LEARNED_PLAN.top + 1)],
        ext=("png", "pdf"),
    )
    return tables + figures


def learned_function_input(*policies):
    """The fit file when one of ``policies`` is a learned function (LF<k>), else nothing."""
    if LEARNED_PLAN is None:
        return []
    names = set(LEARNED_PLAN.learned_names)
    return [LEARNED_FUNCTIONS] if any(p in names for p in policies) else []


def tuning_learned_input(wildcards):
    return learned_function_input(wildcards.primary, wildcards.backfill)


def online_learned_input(wildcards=None):
    return learned_function_input(*ONLINE_PLAN.policies)


# -- the redirection study ---------------------------------------------------------------------


def redirect_min_load(wildcards):
    return REDIRECT_PLAN.trace_min_load(wildcards.trace)


def redirect_online_settings():
    """What defines one online-theta job besides its log and share (keyword arguments of
    redirect_steps.simulate_online)."""
    return {
        "thetas": list(REDIRECT_PLAN.thetas),
        "balance": list(REDIRECT_PLAN.balance),
        "selectors": list(REDIRECT_PLAN.online_selectors),
        "period_s": REDIRECT_PLAN.online_period_s,
        "seed": REDIRECT_PLAN.seed,
        "primary": REDIRECT_PLAN.primary,
        "backfill": REDIRECT_PLAN.backfill,
        "tau_s": REDIRECT_PLAN.tau_s,
        "max_alpha": max(REDIRECT_PLAN.alphas),
    }


def redirect_grid_files(wildcards=None):
    labels = [redirect_steps.BASELINE] + [
        REDIRECT_PLAN.alpha_label(a) for a in REDIRECT_PLAN.alphas
    ]
    return [
        f"{REDIRECT}/{trace}/grid/alpha-{label}.parquet"
        for trace in REDIRECT_PLAN.trace_names
        for label in labels
    ]


def redirect_online_files(wildcards=None):
    return [
        f"{REDIRECT}/{trace}/online/alpha-{REDIRECT_PLAN.alpha_label(alpha)}.parquet"
        for trace in REDIRECT_PLAN.trace_names
        for alpha in REDIRECT_PLAN.alphas
    ]


def redirect_targets():
    if REDIRECT_PLAN is None:
        return []
    tables = [
        f"{REDIRECT}/tables/{name}" for name in ("heatmap.md", "best.md", "online.md")
    ]
    tables += [f"{REDIRECT}/tables/{t}_weeks.csv" for t in REDIRECT_PLAN.trace_names]
    figures = expand(
        f"{REDIRECT}/figures/{{name}}.{{ext}}",
        name=redirect_steps.FIGURES,
        ext=("png", "pdf"),
    )
    return tables + figures


# -- the memory-aware cluster study ------------------------------------------------------------


def memory_filter_settings():
    """What defines a log's filtered jobs (keyword arguments of filter_memory_jobs)."""
    return {
        "machine_nodes": MEMORY_PLAN.machine_nodes,
        "largest_node_kb": MEMORY_PLAN.largest_node_kb,
        "under_request": MEMORY_PLAN.under_request,
        "slice_jobs": MEMORY_PLAN.slice_jobs,
    }


def _memory_batch(machine, load):
    class_nodes, class_memory_mb = machine
    return {
        "load": load,
        "class_nodes": list(class_nodes),
        "class_memory_mb": list(class_memory_mb),
        "variants": list(MEMORY_PLAN.variant_labels),
        "seeds": list(MEMORY_PLAN.seeds),
        "memory_limit": MEMORY_PLAN.memory_limit,
        "max_failures": MEMORY_PLAN.max_failures,
    }


def memory_load_settings(wildcards):
    """What defines one load batch (keyword arguments of simulate_batch)."""
    machine = (MEMORY_PLAN.class_nodes, MEMORY_PLAN.class_memory_mb)
    return _memory_batch(machine, MEMORY_PLAN.load(wildcards.memory_load))


def memory_sweep_settings(wildcards):
    """What defines one sweep batch: the machine with the second class at memory_mb MB."""
    machine = MEMORY_PLAN.sweep_machine(MEMORY_PLAN.sweep_memory(wildcards.memory_mb))
    return _memory_batch(machine, MEMORY_PLAN.sweep_load)


def memory_run_files(wildcards=None):
    loads = [
        f"{MEMORY}/{trace}/runs/{scheduler}/load-{label}.parquet"
        for trace in MEMORY_PLAN.trace_names
        for scheduler in MEMORY_PLAN.schedulers
        for label in MEMORY_PLAN.load_labels
    ]
    sweep = [
        f"{MEMORY}/{trace}/sweep/{scheduler}/memory-{label}.parquet"
        for trace in MEMORY_PLAN.trace_names
        for scheduler in MEMORY_PLAN.sweep_scheduler_names
        for label in MEMORY_PLAN.sweep_labels
    ]
    return loads + sweep


def memory_report_files(wildcards=None):
    return [f"{MEMORY}/{trace}/filter_report.json" for trace in MEMORY_PLAN.trace_names]


def memory_figures():
    """The figures the plan can draw: weights only with a perceptron, the sweep only with sizes."""
    names = ["utilisation", "slowdown", "failures"]
    if any(v.estimator == "perceptron" for v in MEMORY_PLAN.variants):
        names.append("weights")
    if MEMORY_PLAN.sweep_memory_mb and len(MEMORY_PLAN.variants) > 1:
        names.append("memory_sweep")
    return names


def memory_targets():
    if MEMORY_PLAN is None:
        return []
    tables = [
        f"{MEMORY}/tables/{name}"
        for name in ("summary.md", "paper.md", "summary.csv", "paper.csv", "filter.csv")
    ]
    figures = expand(
        f"{MEMORY}/figures/{{name}}.{{ext}}", name=memory_figures(), ext=("png", "pdf")
    )
    return tables + figures
