# The memory-aware cluster study: each log filtered for the memory engine, one batch of
# simulations per (log, scheduler, offered load) and per (log, scheduler, second-class memory),
# the tables and figures (scheduler.studies.memory.steps).


rule memory_filter:
    input:
        "resources/traces/{trace}.swf.gz",
    output:
        jobs=f"{MEMORY}/{{trace}}/jobs.parquet",
        report=f"{MEMORY}/{{trace}}/filter_report.json",
    log:
        "logs/memory/{trace}/filter.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=memory_filter_settings(),
        code=step_hash(memory_steps.filter_memory_jobs),
    run:
        run_step(
            memory_steps.filter_memory_jobs,
            input[0],
            output.jobs,
            output.report,
            trace=wildcards.trace,
            log_path=log[0],
            **params.settings,
        )


# One job = one log at one offered load under one scheduler: every estimator variant x seed.
rule memory_simulate:
    input:
        f"{MEMORY}/{{trace}}/jobs.parquet",
    output:
        f"{MEMORY}/{{trace}}/runs/{{memory_scheduler}}/load-{{memory_load}}.parquet",
    log:
        "logs/memory/{trace}/runs/{memory_scheduler}/load-{memory_load}.log",
    benchmark:
        "benchmarks/memory/{trace}/runs/{memory_scheduler}/load-{memory_load}.tsv"
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=memory_load_settings,
        code=step_hash(memory_steps.simulate_batch),
    run:
        run_step(
            memory_steps.simulate_batch,
            input[0],
            output[0],
            kind="load",
            trace=wildcards.trace,
            scheduler=wildcards.memory_scheduler,
            log_path=log[0],
            **params.settings,
        )


# One job = one log with the second node class at one memory size (memory.memory_sweep), at the
# sweep's load, under one scheduler: every estimator variant x seed.
rule memory_sweep:
    input:
        f"{MEMORY}/{{trace}}/jobs.parquet",
    output:
        f"{MEMORY}/{{trace}}/sweep/{{memory_scheduler}}/memory-{{memory_mb}}.parquet",
    log:
        "logs/memory/{trace}/sweep/{memory_scheduler}/memory-{memory_mb}.log",
    benchmark:
        "benchmarks/memory/{trace}/sweep/{memory_scheduler}/memory-{memory_mb}.tsv"
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=memory_sweep_settings,
        code=step_hash(memory_steps.simulate_batch),
    run:
        run_step(
            memory_steps.simulate_batch,
            input[0],
            output[0],
            kind="sweep",
            trace=wildcards.trace,
            scheduler=wildcards.memory_scheduler,
            log_path=log[0],
            **params.settings,
        )


rule memory_tables:
    input:
        runs=memory_run_files,
        reports=memory_report_files,
    output:
        runs=f"{MEMORY}/runs.parquet",
        intervals=f"{MEMORY}/intervals.parquet",
        ratios=f"{MEMORY}/ratios.parquet",
        summary_csv=report(
            f"{MEMORY}/tables/summary.csv",
            caption="../report/memory/table.rst",
            category="Memory-aware clusters",
            labels={"table": "means over seeds per scheduler, estimator and load"},
        ),
        summary_md=f"{MEMORY}/tables/summary.md",
        paper_csv=report(
            f"{MEMORY}/tables/paper.csv",
            caption="../report/memory/paper.rst",
            category="Memory-aware clusters",
            labels={"table": "the paper vs schedlab"},
        ),
        paper_md=f"{MEMORY}/tables/paper.md",
        filter_csv=report(
            f"{MEMORY}/tables/filter.csv",
            caption="../report/memory/filter.rst",
            category="Memory-aware clusters",
            labels={"table": "memory filter counts"},
        ),
    log:
        "logs/memory/tables.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        confidence=MEMORY_PLAN.confidence,
        saturation_load=MEMORY_PLAN.saturation_load,
        code=step_hash(memory_steps.memory_tables),
    run:
        run_step(
            memory_steps.memory_tables,
            input.runs,
            input.reports,
            *output,
            confidence=params.confidence,
            saturation_load=params.saturation_load,
            log_path=log[0],
        )


rule memory_figure:
    input:
        intervals=f"{MEMORY}/intervals.parquet",
        ratios=f"{MEMORY}/ratios.parquet",
    output:
        png=report(
            f"{MEMORY}/figures/{{memory_figure}}.png",
            caption="../report/memory/figure.rst",
            category="Memory-aware clusters",
            labels={"figure": "{memory_figure}"},
        ),
        pdf=f"{MEMORY}/figures/{{memory_figure}}.pdf",
    log:
        "logs/memory/figures/{memory_figure}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(memory_steps.memory_figure),
    run:
        run_step(
            memory_steps.memory_figure,
            wildcards.memory_figure,
            input.intervals,
            input.ratios,
            output.png,
            output.pdf,
            log_path=log[0],
        )
