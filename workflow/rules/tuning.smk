# The queue-tuning study: train/test split, resampled weeks, simulations, aggregation, tables,
# figures (scheduler.studies.tuning.steps; the split and resampling steps are generic trace
# operations of scheduler.traces.steps). Three week sources: train and test (the halves of the
# filtered log, the whole search space: the protocol) and whole (weeks resampled over the whole
# filtered log, only the cases of the descriptive figures); and the whole-log table (given
# pairs simulated on the whole filtered log, no resampling).


rule split_trace:
    input:
        "results/{trace}/filtered.parquet",
    output:
        train="results/{trace}/split/train.parquet",
        test="results/{trace}/split/test.parquet",
    log:
        "logs/split/{trace}.log",
    benchmark:
        "benchmarks/split/{trace}.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(trace_steps.split_trace),
    run:
        run_step(
            trace_steps.split_trace,
            input[0],
            output.train,
            output.test,
            trace=wildcards.trace,
            log_path=log[0],
        )


rule resample_weeks:
    input:
        week_source,
    output:
        "results/{trace}/weeks/{split}/batch{batch}.parquet",
    log:
        "logs/resample/{trace}/{split}/batch{batch}.log",
    benchmark:
        "benchmarks/resample/{trace}/{split}/batch{batch}.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        weeks=batch_weeks,
        seed=PLAN.seed,
        method=PLAN.resampling,
        alignment=PLAN.week_alignment,
        code=step_hash(trace_steps.resample_batch),
    run:
        run_step(
            trace_steps.resample_batch,
            input[0],
            output[0],
            trace=wildcards.trace,
            split=wildcards.split,
            seed=params.seed,
            method=params.method,
            alignment=params.alignment,
            log_path=log[0],
            **params.weeks,
        )


# One job = one (trace, split, primary, backfill) under every threshold of the week source on
# one batch of resampled weeks (tuning.weeks_per_job weeks): the thresholds share the run
# without threshold up to the first instant a job has waited longer than Θ
# (scheduler.sim.sweep). On a cluster the profile packs many of them per submission through the
# "simulate" group.
# With the config key `bundle` above 1 (clusters), one job runs `bundle` pairs of one (trace,
# week source, batch) one after the other (tuning_steps.simulate_bundle): same files, same
# contents; one rule per (week source, bundle of pairs), as a rule's outputs are fixed names.
if BUNDLE == 1:

    rule simulate_batch:
        input:
            weeks="results/{trace}/weeks/{split}/batch{batch}.parquet",
            learned=tuning_learned_input,
        output:
            f"{TUNING}/{{trace}}/sims/{SIM_PAIR}.parquet",
        log:
            f"logs/tuning/{{trace}}/sims/{SIM_PAIR}.log",
        benchmark:
            f"benchmarks/tuning/{{trace}}/sims/{SIM_PAIR}.tsv"
        group:
            "simulate"
        conda:
            "../envs/schedlab.yaml"
        params:
            thresholds=pair_thresholds,
            threshold_backfill=PLAN.threshold_backfill,
            code=step_hash(tuning_steps.simulate_batch),
        run:
            run_step(
                tuning_steps.simulate_batch,
                input.weeks,
                output[0],
                trace=wildcards.trace,
                split=wildcards.split,
                primary=wildcards.primary,
                backfill=wildcards.backfill,
                thresholds=params.thresholds,
                threshold_backfill=params.threshold_backfill,
                log_path=log[0],
            )

else:
    for _split in PLAN.week_splits:
        for _k, _pairs in enumerate(pair_bundles(_split)):

            rule:
                name:
                    f"simulate_bundle_{_split}_{_k}"
                input:
                    weeks=f"results/{{trace}}/weeks/{_split}/batch{{batch}}.parquet",
                    learned=learned_function_input(
                        *(p for pair in _pairs for p in pair)
                    ),
                output:
                    [
                        simulation_file("{trace}", _split, *pair, "{batch}")
                        for pair in _pairs
                    ],
                log:
                    [
                        simulation_file(
                            "{trace}", _split, *pair, "{batch}", kind="log"
                        )
                        for pair in _pairs
                    ],
                benchmark:
                    f"benchmarks/tuning/{{trace}}/sims/{_split}/bundle{_k}/batch{{batch}}.tsv"
                conda:
                    "../envs/schedlab.yaml"
                params:
                    split=_split,
                    pairs=bundle_pairs(_split, _pairs),
                    threshold_backfill=PLAN.threshold_backfill,
                    code=step_hash(tuning_steps.simulate_bundle),
                run:
                    run_step(
                        tuning_steps.simulate_bundle,
                        input.weeks,
                        list(output),
                        trace=wildcards.trace,
                        split=params.split,
                        pairs=params.pairs,
                        threshold_backfill=params.threshold_backfill,
                        log_paths=list(log),
                    )


# params.cases lists every (split, pair, threshold): a new threshold changes no file name (a
# pair's job holds all its thresholds), so this param is what makes the collection, and
# through it the simulations, out of date, also after a failed run deleted their outputs.
rule collect_weekly:
    input:
        simulation_files,
    output:
        f"{TUNING}/{{trace}}/weekly.parquet",
    log:
        "logs/tuning/{trace}/collect.log",
    benchmark:
        "benchmarks/tuning/{trace}/collect.tsv"
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        baseline=baseline(),
        cases=weekly_cases(PLAN.splits),
        code=step_hash(tuning_steps.collect_weekly),
    run:
        run_step(
            tuning_steps.collect_weekly,
            input,
            output[0],
            trace=wildcards.trace,
            baseline=params.baseline,
            log_path=log[0],
        )


rule collect_whole_weekly:
    input:
        whole_simulation_files,
    output:
        f"{TUNING}/{{trace}}/whole/weekly.parquet",
    log:
        "logs/tuning/{trace}/collect_whole.log",
    benchmark:
        "benchmarks/tuning/{trace}/collect_whole.tsv"
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        baseline=baseline(),
        cases=weekly_cases(["whole"]),
        code=step_hash(tuning_steps.collect_weekly),
    run:
        run_step(
            tuning_steps.collect_weekly,
            input,
            output[0],
            trace=wildcards.trace,
            baseline=params.baseline,
            log_path=log[0],
        )


rule summarize_trace:
    input:
        f"{TUNING}/{{trace}}/weekly.parquet",
    output:
        parquet=f"{TUNING}/{{trace}}/summary.parquet",
        csv=report(
            f"{TUNING}/tables/{{trace}}_summary.csv",
            caption="../report/summary_table.rst",
            category="Queue tuning",
            subcategory="{trace}",
            labels={"trace": "{trace}", "table": "policy pairs (CSV)"},
        ),
        markdown=f"{TUNING}/tables/{{trace}}_summary.md",
    log:
        "logs/tuning/{trace}/summarize.log",
    benchmark:
        "benchmarks/tuning/{trace}/summarize.tsv"
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        baseline=baseline(),
        code=step_hash(tuning_steps.summarize_trace),
    run:
        run_step(
            tuning_steps.summarize_trace,
            input[0],
            output.parquet,
            output.csv,
            output.markdown,
            trace=wildcards.trace,
            baseline=params.baseline,
            log_path=log[0],
        )


# Source-week bootstrap of the test half (scheduler.studies.tuning.bootstrap): one job = a batch
# of replicates, each resampling weeks from the test half's source weeks drawn with replacement
# and simulating the pairs learned on the training weeks and the baseline. Not in the "simulate"
# group: it reads collect_weekly's table, which reads the group's simulations (a group must not
# depend on itself); its jobs are few and long (25 replicates of a log per job in full.yaml).
rule tuning_bootstrap:
    input:
        weekly=f"{TUNING}/{{trace}}/weekly.parquet",
        split="results/{trace}/split/test.parquet",
    output:
        f"{TUNING}/{{trace}}/bootstrap/batch{{batch}}.parquet",
    log:
        "logs/tuning/{trace}/bootstrap/batch{batch}.log",
    benchmark:
        "benchmarks/tuning/{trace}/bootstrap/batch{batch}.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        replicates=bootstrap_replicates,
        weeks=PLAN.bootstrap_weeks,
        seed=PLAN.seed,
        method=PLAN.resampling,
        baseline=baseline(),
        threshold_backfill=PLAN.threshold_backfill,
        alignment=PLAN.week_alignment,
        code=step_hash(tuning_steps.bootstrap_batch),
    run:
        run_step(
            tuning_steps.bootstrap_batch,
            input.weekly,
            input.split,
            output[0],
            trace=wildcards.trace,
            baseline=params.baseline,
            weeks=params.weeks,
            seed=params.seed,
            method=params.method,
            threshold_backfill=params.threshold_backfill,
            alignment=params.alignment,
            log_path=log[0],
            **params.replicates,
        )


rule summarize_whole:
    input:
        f"{TUNING}/{{trace}}/whole/weekly.parquet",
    output:
        parquet=f"{TUNING}/{{trace}}/whole/summary.parquet",
        csv=report(
            f"{TUNING}/tables/{{trace}}_whole_summary.csv",
            caption="../report/whole_summary_table.rst",
            category="Queue tuning",
            subcategory="{trace}",
            labels={"trace": "{trace}", "table": "whole-log weeks (CSV)"},
        ),
        markdown=f"{TUNING}/tables/{{trace}}_whole_summary.md",
    log:
        "logs/tuning/{trace}/summarize_whole.log",
    benchmark:
        "benchmarks/tuning/{trace}/summarize_whole.tsv"
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        baseline=baseline(),
        code=step_hash(tuning_steps.summarize_trace),
    run:
        run_step(
            tuning_steps.summarize_trace,
            input[0],
            output.parquet,
            output.csv,
            output.markdown,
            trace=wildcards.trace,
            baseline=params.baseline,
            log_path=log[0],
        )


rule tuning_protocol:
    input:
        weekly=weekly_files,
        bootstrap=bootstrap_files,
    output:
        parquet=f"{TUNING}/tables/protocol.parquet",
        csv=report(
            f"{TUNING}/tables/protocol.csv",
            caption="../report/protocol_table.rst",
            category="Queue tuning",
            subcategory="All traces",
            labels={"table": "train/test protocol (CSV)"},
        ),
        markdown=f"{TUNING}/tables/protocol.md",
    log:
        "logs/tuning/protocol.log",
    benchmark:
        "benchmarks/tuning/protocol.tsv"
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        baseline=baseline(),
        confidence=PLAN.confidence,
        code=step_hash(tuning_steps.tuning_protocol),
    run:
        run_step(
            tuning_steps.tuning_protocol,
            input.weekly,
            output.parquet,
            output.csv,
            output.markdown,
            baseline=params.baseline,
            confidence=params.confidence,
            bootstrap_paths=input.bootstrap,
            log_path=log[0],
        )


# The descriptive per-trace figures, from the week source of tuning.figures.weeks_from.
rule trace_figure:
    input:
        unpack(figure_tables),
    output:
        png=report(
            f"{TUNING}/figures/{{trace}}/{{figure}}.png",
            caption="../report/figure.rst",
            category="Queue tuning",
            subcategory="{trace}",
            labels={"trace": "{trace}", "figure": "{figure}"},
        ),
        pdf=f"{TUNING}/figures/{{trace}}/{{figure}}.pdf",
    log:
        "logs/tuning/{trace}/figures/{figure}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=figure_settings(),
        code=step_hash(tuning_steps.trace_figure),
    run:
        run_step(
            tuning_steps.trace_figure,
            wildcards.figure,
            input.weekly,
            input.summary,
            output.png,
            output.pdf,
            trace=wildcards.trace,
            log_path=log[0],
            **params.settings,
        )


rule study_figure:
    input:
        protocol=f"{TUNING}/tables/protocol.parquet",
        summaries=summary_files,
    output:
        png=report(
            f"{TUNING}/figures/{{figure}}.png",
            caption="../report/figure.rst",
            category="Queue tuning",
            subcategory="All traces",
            labels={"figure": "{figure}"},
        ),
        pdf=f"{TUNING}/figures/{{figure}}.pdf",
    log:
        "logs/tuning/figures/{figure}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        threshold=PLAN.figure_threshold,
        baseline=baseline(),
        code=step_hash(tuning_steps.study_figure),
    run:
        run_step(
            tuning_steps.study_figure,
            wildcards.figure,
            input.protocol,
            input.summaries,
            output.png,
            output.pdf,
            threshold=params.threshold,
            baseline=params.baseline,
            log_path=log[0],
        )


# One job = one (trace, primary, backfill, threshold) simulated on the whole filtered log.
rule simulate_whole_log:
    input:
        filtered="results/{trace}/filtered.parquet",
        learned=tuning_learned_input,
    output:
        f"{TUNING}/{{trace}}/whole_log/{{primary}}/{{backfill}}/{{threshold}}.parquet",
    log:
        "logs/tuning/{trace}/whole_log/{primary}/{backfill}/{threshold}.log",
    benchmark:
        "benchmarks/tuning/{trace}/whole_log/{primary}/{backfill}/{threshold}.tsv"
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        threshold_s=threshold_seconds,
        threshold_backfill=PLAN.threshold_backfill,
        code=step_hash(tuning_steps.simulate_whole_log),
    run:
        run_step(
            tuning_steps.simulate_whole_log,
            input.filtered,
            output[0],
            trace=wildcards.trace,
            primary=wildcards.primary,
            backfill=wildcards.backfill,
            threshold=wildcards.threshold,
            threshold_s=params.threshold_s,
            threshold_backfill=params.threshold_backfill,
            log_path=log[0],
        )


rule whole_log_table:
    input:
        whole_log_files,
    output:
        parquet=f"{TUNING}/tables/whole_log.parquet",
        csv=report(
            f"{TUNING}/tables/whole_log.csv",
            caption="../report/whole_log_table.rst",
            category="Queue tuning",
            subcategory="All traces",
            labels={"table": "whole logs (CSV)"},
        ),
        markdown=f"{TUNING}/tables/whole_log.md",
    log:
        "logs/tuning/whole_log_table.log",
    benchmark:
        "benchmarks/tuning/whole_log_table.tsv"
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        baseline=baseline(),
        code=step_hash(tuning_steps.tabulate_whole_log),
    run:
        run_step(
            tuning_steps.tabulate_whole_log,
            input,
            output.parquet,
            output.csv,
            output.markdown,
            baseline=params.baseline,
            log_path=log[0],
        )
