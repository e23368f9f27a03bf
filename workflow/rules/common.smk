# Helpers shared by the rules: config validation, the study plan, file names, input functions.
import re

from snakemake.utils import validate

from scheduler import pipeline
from scheduler.provenance import code_hash
from scheduler.study_config import tuning_plan

validate(config, schema="../schemas/config.schema.yaml")
PLAN = tuning_plan(config)

# Hashes of the package modules each step depends on: in `params`, they make Snakemake rerun
# exactly the jobs a code change affects (it cannot see inside an imported package otherwise).
# scheduler.pipeline (the glue every rule calls) counts for every step.
CODE = {
    "download": code_hash("pipeline", "download"),
    "filter": code_hash("pipeline", "swf", "filters", "constants"),
    "resample": code_hash("pipeline", "resample"),
    "simulate": code_hash(
        "pipeline", "_kernel", "simulate", "policies", "campaign", "constants"
    ),
    "stats": code_hash("pipeline", "stats"),
    "plots": code_hash("pipeline", "plots"),
}

TUNING = "results/tuning"
SIM_CASE = "{split}/{primary}/{backfill}/{threshold}/batch{batch}"
PER_TRACE_FIGURES = (
    "weekly_avg_wait",
    "weekly_relative_avg_wait",
    "pairs_worst_max_wait",
    "pairs_mean_max_wait",
    "backfill_by_primary",
    "thresholded_primary",
)
STUDY_FIGURES = ("protocol_by_threshold", "train_test_pairs")


def _alternatives(names):
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


wildcard_constraints:
    trace=_alternatives(config["traces"]),
    split="train|test",
    batch=r"\d+",
    primary=r"[A-Za-z0-9_]+",
    backfill=r"[A-Za-z0-9_]+",
    threshold=r"none|[0-9.]+[smhdw]",
    figure=_alternatives(PER_TRACE_FIGURES + STUDY_FIGURES),


def trace_source(wildcards):
    """URL and checksum of a catalogue trace (the params that define the downloaded bytes)."""
    entry = config["traces"][wildcards.trace]
    return {"url": entry["url"], "sha256": entry.get("sha256")}


def machine_procs(wildcards):
    return config["traces"][wildcards.trace].get("machine_procs")


def batch_weeks(wildcards):
    batch = PLAN.batch(int(wildcards.batch))
    return {"first_week": batch.first, "last_week": batch.last}


def threshold_seconds(wildcards):
    return PLAN.threshold_seconds(wildcards.threshold)


def unthresholded_simulation(wildcards):
    """The same batch without threshold (its weeks with MaxWait <= Θ need no new simulation),
    or nothing when Θ is none or "none" is not among the thresholds."""
    labels = {threshold.label for threshold in PLAN.thresholds}
    if wildcards.threshold == "none" or "none" not in labels:
        return []
    return (
        f"{TUNING}/{wildcards.trace}/sims/{wildcards.split}/{wildcards.primary}/"
        f"{wildcards.backfill}/none/batch{wildcards.batch}.parquet"
    )


def baseline():
    base = PLAN.baseline
    return {
        "primary": base.primary,
        "backfill": base.backfill,
        "threshold": base.threshold,
    }


def simulation_files(wildcards):
    """Every weekly simulation file of one trace: splits x search space x batches."""
    return [
        f"{TUNING}/{wildcards.trace}/sims/{split}/{case.primary}/{case.backfill}/"
        f"{case.threshold}/batch{batch.index}.parquet"
        for split in PLAN.splits
        for case in PLAN.cases()
        for batch in PLAN.batches()
    ]


def weekly_files(wildcards=None):
    return expand(f"{TUNING}/{{trace}}/weekly.parquet", trace=PLAN.trace_names)


def summary_files(wildcards=None):
    return expand(f"{TUNING}/{{trace}}/summary.parquet", trace=PLAN.trace_names)


def tuning_targets():
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
    return tables + protocol + trace_figures + study_figures


def figure_settings():
    """What the per-trace figures show (the `tuning.figures` keys, checked by the plan)."""
    return {
        "weeks": PLAN.figure_weeks,
        "weekly_backfill": PLAN.weekly_backfill,
        "thresholded_backfill": PLAN.thresholded_backfill,
        "threshold": PLAN.figure_threshold,
        "baseline_threshold": PLAN.baseline.threshold,
    }
