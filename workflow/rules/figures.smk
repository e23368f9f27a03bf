rule trace_figure:
    input:
        weekly=f"{TUNING}/{{trace}}/weekly.parquet",
        summary=f"{TUNING}/{{trace}}/summary.parquet",
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
        code=CODE["plots"],
    run:
        pipeline.trace_figure(
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
        code=CODE["plots"],
    run:
        pipeline.study_figure(
            wildcards.figure,
            input.protocol,
            input.summaries,
            output.png,
            output.pdf,
            threshold=params.threshold,
            log_path=log[0],
        )
