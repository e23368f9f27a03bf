# The catalogue's logs, shared by every study: downloaded (offline mirror first), then strongly
# filtered (scheduler.traces.steps); the paths are scheduler.studies.common.paths'. The download's
# params hold the checksum of what it would fetch (download_source), so that a mirror file
# replaced under its name is fetched again and everything after it reruns.


rule download_trace:
    output:
        trace_path=trace_paths.trace_file(),
        report_path=trace_paths.download_report_file(),
    log:
        "logs/download/{trace}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=download_settings,
        source=download_source,
        code=step_hash(trace_steps.download_trace),
    run:
        run_step(trace_steps.download_trace, input, output, log, params)


rule filter_trace:
    input:
        swf_path=trace_paths.trace_file(),
    output:
        filtered_path=trace_paths.filtered_file(),
        report_path=trace_paths.filter_report_file(),
    log:
        "logs/filter/{trace}.log",
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=filter_settings,
        code=step_hash(trace_steps.filter_trace),
    run:
        run_step(trace_steps.filter_trace, input, output, log, params)


# The strong filter with jobs that ran past their requested time clipped to it instead of
# dropped (the run-time prediction study's filter, prediction.overrun: clip).
rule filter_trace_overrun:
    input:
        swf_path=trace_paths.trace_file(),
    output:
        filtered_path=trace_paths.filtered_file(overrun="{overrun}"),
        report_path=trace_paths.filter_report_file(overrun="{overrun}"),
    log:
        "logs/filter/{trace}-{overrun}.log",
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=filter_settings,
        code=step_hash(trace_steps.filter_trace),
    run:
        run_step(trace_steps.filter_trace, input, output, log, params)
