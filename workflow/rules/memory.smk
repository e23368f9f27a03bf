# The memory-aware cluster study (scheduler.studies.memory): each log filtered for the memory
# engine, one batch of simulations per (log, scheduler, offered load) and per (log, scheduler,
# second-class memory), the tables and the figures. Paths and settings: its plan.
from scheduler.studies.memory import steps as memory_steps

MEMORY = PLANS["memory"]


wildcard_constraints:
    **MEMORY.wildcards,
    memory_figure=_alternatives(memory_steps.FIGURES),


rule memory_filter:
    input:
        swf_path=MEMORY.source_file(),
    output:
        jobs_path=MEMORY.jobs_file(),
        report_path=MEMORY.filter_report_file(),
    log:
        MEMORY.files.log("{trace}/filter"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=MEMORY.filter_settings,
        code=step_hash(memory_steps.filter_memory_jobs),
    run:
        run_step(memory_steps.filter_memory_jobs, input, output, log, params)


# One job = one log at one offered load under one scheduler: every estimator variant x seed.
rule memory_simulate:
    input:
        jobs_path=MEMORY.jobs_file(),
    output:
        out_path=MEMORY.files.result(f"{MEMORY.load_run()}.parquet"),
    log:
        MEMORY.files.log(MEMORY.load_run()),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=MEMORY.load_settings,
        code=step_hash(memory_steps.simulate_batch),
    run:
        run_step(memory_steps.simulate_batch, input, output, log, params)


# One job = one log with the second node class at one memory size (memory.memory_sweep), at the
# sweep's load, under one scheduler: every estimator variant x seed.
rule memory_sweep:
    input:
        jobs_path=MEMORY.jobs_file(),
    output:
        out_path=MEMORY.files.result(f"{MEMORY.sweep_run()}.parquet"),
    log:
        MEMORY.files.log(MEMORY.sweep_run()),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=MEMORY.sweep_settings,
        code=step_hash(memory_steps.simulate_batch),
    run:
        run_step(memory_steps.simulate_batch, input, output, log, params)


rule memory_tables:
    input:
        run_paths=MEMORY.run_files,
        report_paths=MEMORY.filter_report_files,
    output:
        **reported(MEMORY.tables_outputs(), "memory"),
    log:
        MEMORY.files.log("tables"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=MEMORY.tables_settings,
        code=step_hash(memory_steps.memory_tables),
    run:
        run_step(memory_steps.memory_tables, input, output, log, params)


rule memory_figure:
    input:
        intervals_path=MEMORY.tables_outputs()["intervals_path"],
        ratios_path=MEMORY.tables_outputs()["ratios_path"],
    output:
        png_path=report(
            MEMORY.files.figure("{memory_figure}", "png"),
            caption="../report/memory/figure.rst",
            category=TITLES["memory"],
            labels={"figure": "{memory_figure}"},
        ),
        pdf_path=MEMORY.files.figure("{memory_figure}", "pdf"),
    log:
        MEMORY.files.log("figures/{memory_figure}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=MEMORY.figure_settings,
        code=step_hash(memory_steps.memory_figure),
    run:
        run_step(memory_steps.memory_figure, input, output, log, params)


# The representative week of the first log at the saturation load: the memory-aware cluster
# without estimation and with the first estimator, a Gantt chart of each.
rule memory_week:
    input:
        **MEMORY.week_inputs(),
    output:
        **reported(MEMORY.week_outputs(), "memory"),
    log:
        MEMORY.files.log("figures/week"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=MEMORY.week_settings,
        code=step_hash(memory_steps.memory_week),
    run:
        run_step(memory_steps.memory_week, input, output, log, params)
