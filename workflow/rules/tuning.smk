# The queue-tuning study (scheduler.studies.tuning): train/test split, resampled weeks,
# simulations, aggregation, tables, figures (the split and resampling steps are generic trace
# operations of scheduler.traces.steps). Three week sources: train and test (the halves of the
# filtered log, the whole search space: the protocol) and whole (weeks resampled over the whole
# filtered log, only the cases of the descriptive figures); and the whole-log table (given pairs
# simulated on the whole filtered log, no resampling). Paths and settings: its plan.
from scheduler.studies.tuning import steps as tuning_steps

TUNING = PLANS["tuning"]


wildcard_constraints:
    **TUNING.wildcards,


rule split_trace:
    input:
        filtered_path=trace_paths.filtered_file(),
    output:
        train_path=TUNING.split_file(split="train"),
        test_path=TUNING.split_file(split="test"),
    log:
        "logs/split/{trace}.log",
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=lambda wildcards: {"trace": wildcards.trace},
        code=step_hash(trace_steps.split_trace),
    run:
        run_step(trace_steps.split_trace, input, output, log, params)


rule resample_weeks:
    input:
        split_path=TUNING.week_source,
    output:
        out_path=TUNING.weeks_file(),
    log:
        "logs/resample/{trace}/{split}/batch{batch}.log",
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.resample_settings,
        code=step_hash(trace_steps.resample_batch),
    run:
        run_step(trace_steps.resample_batch, input, output, log, params)


# One job = one (trace, split, primary, backfill) under every threshold of the week source on
# one batch of resampled weeks (tuning.weeks_per_job weeks): the thresholds share the run
# without threshold up to the first instant a job has waited longer than Θ
# (scheduler.sim.sweep). On a cluster the profile packs many of them per submission through the
# "simulate" group.
rule simulate_batch:
    input:
        weeks_path=TUNING.weeks_file(),
        _policy_paths=TUNING.policy_files,
    output:
        out_path=TUNING.files.result(f"{TUNING.simulation()}.parquet"),
    log:
        TUNING.files.log(TUNING.simulation()),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.simulate_settings,
        code=step_hash(tuning_steps.simulate_batch),
    run:
        run_step(tuning_steps.simulate_batch, input, output, log, params)


# params.cases lists every (split, pair, threshold): a new threshold changes no file name (a
# pair's job holds all its thresholds), so this param is what makes the collection, and
# through it the simulations, out of date, also after a failed run deleted their outputs.
rule collect_weekly:
    input:
        sim_paths=TUNING.simulation_files,
    output:
        out_path=TUNING.weekly_file(),
    log:
        TUNING.files.log("{trace}/collect"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.trace_settings,
        cases=TUNING.weekly_cases(TUNING.splits),
        code=step_hash(tuning_steps.collect_weekly),
    run:
        run_step(tuning_steps.collect_weekly, input, output, log, params)


rule collect_whole_weekly:
    input:
        sim_paths=TUNING.whole_simulation_files,
    output:
        out_path=TUNING.weekly_file(source="whole"),
    log:
        TUNING.files.log("{trace}/collect_whole"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.trace_settings,
        cases=TUNING.weekly_cases(("whole",)),
        code=step_hash(tuning_steps.collect_weekly),
    run:
        run_step(tuning_steps.collect_weekly, input, output, log, params)


rule summarize_trace:
    input:
        weekly_path=TUNING.weekly_file(),
    output:
        **reported(TUNING.summary_outputs(), "tuning"),
    log:
        TUNING.files.log("{trace}/summarize"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.trace_settings,
        code=step_hash(tuning_steps.summarize_trace),
    run:
        run_step(tuning_steps.summarize_trace, input, output, log, params)


rule summarize_whole:
    input:
        weekly_path=TUNING.weekly_file(source="whole"),
    output:
        **reported(TUNING.summary_outputs("whole"), "tuning"),
    log:
        TUNING.files.log("{trace}/summarize_whole"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.trace_settings,
        code=step_hash(tuning_steps.summarize_trace),
    run:
        run_step(tuning_steps.summarize_trace, input, output, log, params)


# Source-week bootstrap of the test half (scheduler.studies.tuning.bootstrap): one job = a batch
# of replicates, each resampling weeks from the test half's source weeks drawn with replacement
# and simulating the pairs learned on the training weeks and the baseline. Not in the "simulate"
# group: it reads collect_weekly's table, which reads the group's simulations (a group must not
# depend on itself); its jobs are few and long (25 replicates of a log per job in full.yaml).
rule tuning_bootstrap:
    input:
        weekly_path=TUNING.weekly_file(),
        split_path=TUNING.split_file(split="test"),
    output:
        out_path=TUNING.bootstrap_file(),
    log:
        TUNING.files.log("{trace}/bootstrap/batch{batch}"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.bootstrap_settings,
        code=step_hash(tuning_steps.bootstrap_batch),
    run:
        run_step(tuning_steps.bootstrap_batch, input, output, log, params)


rule tuning_protocol:
    input:
        weekly_paths=TUNING.weekly_files,
        bootstrap_paths=TUNING.bootstrap_files,
    output:
        **reported(TUNING.protocol_outputs(), "tuning"),
    log:
        TUNING.files.log("protocol"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.protocol_settings,
        code=step_hash(tuning_steps.tuning_protocol),
    run:
        run_step(tuning_steps.tuning_protocol, input, output, log, params)


# The descriptive per-trace figures, from the week source of tuning.figures.weeks_from.
rule trace_figure:
    input:
        unpack(TUNING.figure_tables),
    output:
        png_path=report(
            TUNING.files.figure("{trace}/{figure}", "png"),
            caption="../report/tuning/figure.rst",
            category=TITLES["tuning"],
            subcategory="{trace}",
            labels={"trace": "{trace}", "figure": "{figure}"},
        ),
        pdf_path=TUNING.files.figure("{trace}/{figure}", "pdf"),
    log:
        TUNING.files.log("{trace}/figures/{figure}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.trace_figure_settings,
        code=step_hash(tuning_steps.trace_figure),
    run:
        run_step(tuning_steps.trace_figure, input, output, log, params)


rule study_figure:
    input:
        protocol_path=TUNING.protocol_outputs()["parquet_path"],
        summary_paths=TUNING.summary_files,
    output:
        png_path=report(
            TUNING.files.figure("{figure}", "png"),
            caption="../report/tuning/figure.rst",
            category=TITLES["tuning"],
            subcategory="All traces",
            labels={"figure": "{figure}"},
        ),
        pdf_path=TUNING.files.figure("{figure}", "pdf"),
    log:
        TUNING.files.log("figures/{figure}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.study_figure_settings,
        code=step_hash(tuning_steps.study_figure),
    run:
        run_step(tuning_steps.study_figure, input, output, log, params)


# The representative week: the baseline and the tuned configuration (the protocol's best
# learned pair) on the first trace's whole filtered log, drawn over the week where they differ
# most.
rule tuning_week_figure:
    input:
        **TUNING.week_inputs(),
    output:
        **reported(TUNING.week_outputs(), "tuning"),
    log:
        TUNING.files.log("figures/week"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.week_settings,
        code=step_hash(tuning_steps.draw_week),
    run:
        run_step(tuning_steps.draw_week, input, output, log, params)


# One job = one (trace, primary, backfill, threshold) simulated on the whole filtered log.
rule simulate_whole_log:
    input:
        filtered_path=trace_paths.filtered_file(),
        _policy_paths=TUNING.policy_files,
    output:
        out_path=TUNING.files.result(f"{TUNING.whole_log_run()}.parquet"),
    log:
        TUNING.files.log(TUNING.whole_log_run()),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.whole_log_settings,
        code=step_hash(tuning_steps.simulate_whole_log),
    run:
        run_step(tuning_steps.simulate_whole_log, input, output, log, params)


rule whole_log_table:
    input:
        run_paths=TUNING.whole_log_files,
    output:
        **reported(TUNING.whole_log_outputs(), "tuning"),
    log:
        TUNING.files.log("whole_log_table"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=TUNING.baseline_only_settings,
        code=step_hash(tuning_steps.tabulate_whole_log),
    run:
        run_step(tuning_steps.tabulate_whole_log, input, output, log, params)
