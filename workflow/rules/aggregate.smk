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
        code=CODE["stats"],
    run:
        pipeline.collect_weekly(
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
        code=CODE["stats"],
    run:
        pipeline.summarize_trace(
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
        weekly_files,
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
        code=CODE["stats"],
    run:
        pipeline.tuning_protocol(
            input,
            output.parquet,
            output.csv,
            output.markdown,
            baseline=params.baseline,
            confidence=params.confidence,
            log_path=log[0],
        )
