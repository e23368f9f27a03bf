# The example study (tests/support/example_study).
from scheduler.studies.example import steps as example_steps

EXAMPLE = PLANS["example"]


rule example_count:
    input:
        filtered_path=EXAMPLE.source_file(),
    output:
        out_path=EXAMPLE.count_file(),
    log:
        EXAMPLE.files.log("{trace}/count"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=EXAMPLE.count_settings,
        code=step_hash(example_steps.count_jobs),
    run:
        run_step(example_steps.count_jobs, input, output, log, params)


rule example_table:
    input:
        count_paths=EXAMPLE.count_files,
    output:
        **reported(EXAMPLE.table_outputs(), "example"),
    log:
        EXAMPLE.files.log("table"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(example_steps.count_table),
    run:
        run_step(example_steps.count_table, input, output, log, params)
