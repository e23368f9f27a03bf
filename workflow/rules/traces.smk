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
        trace_steps.download_trace(
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
        trace_steps.filter_trace(
            input[0],
            output.jobs,
            output.report,
            trace=wildcards.trace,
            machine_procs=params.machine_procs,
            log_path=log[0],
        )


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
        trace_steps.split_trace(
            input[0],
            output.train,
            output.test,
            trace=wildcards.trace,
            log_path=log[0],
        )


rule resample_weeks:
    input:
        "results/{trace}/split/{split}.parquet",
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
        code=step_hash(trace_steps.resample_batch),
    run:
        trace_steps.resample_batch(
            input[0],
            output[0],
            trace=wildcards.trace,
            split=wildcards.split,
            seed=params.seed,
            method=params.method,
            log_path=log[0],
            **params.weeks,
        )
