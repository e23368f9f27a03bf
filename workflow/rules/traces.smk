rule download_trace:
    output:
        trace="resources/traces/{trace}.swf.gz",
        report="resources/traces/{trace}.fetch.json",
    log:
        "logs/download/{trace}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        source=trace_source,
        code=step_hash(trace_steps.download_trace),
    run:
        run_step(
            trace_steps.download_trace,
            trace=wildcards.trace,
            destination=output.trace,
            report_path=output.report,
            log_path=log[0],
            **params.source,
            **config["archive"],
        )


rule filter_trace:
    input:
        "resources/traces/{trace}.swf.gz",
    output:
        jobs="results/{trace}/filtered.parquet",
        report="results/{trace}/filter_report.json",
    log:
        "logs/filter/{trace}.log",
    benchmark:
        "benchmarks/filter/{trace}.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        machine_procs=machine_procs,
        code=step_hash(trace_steps.filter_trace),
    run:
        run_step(
            trace_steps.filter_trace,
            input[0],
            output.jobs,
            output.report,
            trace=wildcards.trace,
            machine_procs=params.machine_procs,
            log_path=log[0],
        )


# The strong filter with jobs that ran past their requested time clipped to it instead of
# dropped (the run-time prediction study's filter, prediction.overrun: clip).
rule filter_trace_overrun:
    input:
        "resources/traces/{trace}.swf.gz",
    output:
        jobs="results/{trace}/filtered-{overrun}.parquet",
        report="results/{trace}/filter_report-{overrun}.json",
    log:
        "logs/filter/{trace}-{overrun}.log",
    benchmark:
        "benchmarks/filter/{trace}-{overrun}.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        machine_procs=machine_procs,
        code=step_hash(trace_steps.filter_trace),
    run:
        run_step(
            trace_steps.filter_trace,
            input[0],
            output.jobs,
            output.report,
            trace=wildcards.trace,
            machine_procs=params.machine_procs,
            overrun=wildcards.overrun,
            log_path=log[0],
        )
