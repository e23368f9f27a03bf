# The run-time prediction study (scheduler.studies.prediction): every heuristic triple
# (prediction technique, correction, backfilling variant) simulated on each whole filtered log,
# gathered, tables and figures. Paths and settings: its plan.
from scheduler.studies.prediction import steps as prediction_steps

PREDICTION = PLANS["prediction"]


wildcard_constraints:
    **PREDICTION.wildcards,
    prediction_figure=_alternatives(
        prediction_steps.TRACE_FIGURES + prediction_steps.STUDY_FIGURES
    ),


# One job = one technique on one log: its corrections x backfilling variants.
rule simulate_technique:
    input:
        filtered_path=PREDICTION.source_file(),
    output:
        **PREDICTION.technique_outputs(),
    log:
        PREDICTION.files.log(PREDICTION.technique_run()),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=PREDICTION.technique_settings,
        code=step_hash(prediction_steps.simulate_technique),
    run:
        run_step(prediction_steps.simulate_technique, input, output, log, params)


rule prediction_runs:
    input:
        run_paths=PREDICTION.run_files,
    output:
        **reported(PREDICTION.collect_outputs(), "prediction"),
    log:
        PREDICTION.files.log("runs"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(prediction_steps.collect_runs),
    run:
        run_step(prediction_steps.collect_runs, input, output, log, params)


rule prediction_tables:
    input:
        runs_path=PREDICTION.collect_outputs()["parquet_path"],
    output:
        **reported(PREDICTION.tables_outputs(), "prediction"),
    log:
        PREDICTION.files.log("tables"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=PREDICTION.tables_settings,
        code=step_hash(prediction_steps.prediction_tables),
    run:
        run_step(prediction_steps.prediction_tables, input, output, log, params)


rule prediction_trace_figure:
    input:
        runs_path=PREDICTION.collect_outputs()["parquet_path"],
        prediction_paths=PREDICTION.ecdf_prediction_files,
    output:
        png_path=report(
            PREDICTION.files.figure("{trace}/{prediction_figure}", "png"),
            caption="../report/prediction/figure.rst",
            category=TITLES["prediction"],
            subcategory="{trace}",
            labels={"trace": "{trace}", "figure": "{prediction_figure}"},
        ),
        pdf_path=PREDICTION.files.figure("{trace}/{prediction_figure}", "pdf"),
    log:
        PREDICTION.files.log("{trace}/figures/{prediction_figure}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=PREDICTION.trace_figure_settings,
        code=step_hash(prediction_steps.trace_figure),
    run:
        run_step(prediction_steps.trace_figure, input, output, log, params)


rule prediction_study_figure:
    input:
        runs_path=PREDICTION.collect_outputs()["parquet_path"],
    output:
        png_path=report(
            PREDICTION.files.figure("{prediction_figure}", "png"),
            caption="../report/prediction/figure.rst",
            category=TITLES["prediction"],
            subcategory="All logs",
            labels={"figure": "{prediction_figure}"},
        ),
        pdf_path=PREDICTION.files.figure("{prediction_figure}", "pdf"),
    log:
        PREDICTION.files.log("figures/{prediction_figure}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=PREDICTION.study_figure_settings,
        code=step_hash(prediction_steps.study_figure),
    run:
        run_step(prediction_steps.study_figure, input, output, log, params)


# The representative week: EASY and the best triple with a prediction technique on the first
# log, drawn over the week where they differ most.
rule prediction_week_figure:
    input:
        **PREDICTION.week_inputs(),
    output:
        **reported(PREDICTION.week_outputs(), "prediction"),
    log:
        PREDICTION.files.log("figures/week"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=PREDICTION.week_settings,
        code=step_hash(prediction_steps.draw_week),
    run:
        run_step(prediction_steps.draw_week, input, output, log, params)
