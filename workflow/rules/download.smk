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
        code=CODE["download"],
    run:
        pipeline.download_trace(
            trace=wildcards.trace,
            destination=output.trace,
            report_path=output.report,
            log_path=log[0],
            **params.source,
            **config["archive"],
        )
