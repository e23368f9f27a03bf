# The run-time prediction study: every heuristic triple (prediction technique, correction,
# backfilling variant) simulated on each whole filtered log, gathered, tables and figures
# (scheduler.studies.prediction.steps; the simulation is scheduler.sim.prediction).


# One job = one technique on one log: its corrections x backfilling variants.
rule simulate_technique:
    input:
        prediction_filtered,
    output:
        runs=f"{PREDICTION}/{{trace}}/runs/{{technique}}.parquet",
        predictions=f"{PREDICTION}/{{trace}}/predictions/{{technique}}.parquet",
    log:
        f"logs/prediction/{{trace}}/{{technique}}.log",
    benchmark:
        f"benchmarks/prediction/{{trace}}/{{technique}}.tsv"
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        technique=technique_settings,
        learner=PREDICTION_PLAN.learner(),
        code=step_hash(prediction_steps.simulate_technique),
    run:
        run_step(
            prediction_steps.simulate_technique,
            input[0],
            output.runs,
            output.predictions,
            trace=wildcards.trace,
            technique=wildcards.technique,
            learner=params.learner,
            log_path=log[0],
            **params.technique,
        )


rule prediction_runs:
    input:
        prediction_run_files,
    output:
        parquet=f"{PREDICTION}/runs.parquet",
        csv=report(
            f"{PREDICTION}/tables/runs.csv",
            caption="../report/prediction_table.rst",
            category="Run-time prediction",
            labels={"table": "every simulated triple (CSV)"},
        ),
    log:
        "logs/prediction/runs.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(prediction_steps.collect_runs),
    run:
        run_step(
            prediction_steps.collect_runs,
            input,
            output.parquet,
            output.csv,
            log_path=log[0],
        )


rule prediction_tables:
    input:
        f"{PREDICTION}/runs.parquet",
    output:
        **prediction_table_outputs(),
    log:
        "logs/prediction/tables.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        lolo_score=PREDICTION_PLAN.lolo_score,
        code=step_hash(prediction_steps.prediction_tables),
    run:
        run_step(
            prediction_steps.prediction_tables,
            input[0],
            dict(output.items()),
            lolo_score=params.lolo_score,
            log_path=log[0],
        )


rule prediction_trace_figure:
    input:
        runs=f"{PREDICTION}/runs.parquet",
        predictions=ecdf_prediction_files,
    output:
        png=report(
            f"{PREDICTION}/figures/{{trace}}/{{prediction_figure}}.png",
            caption="../report/prediction_figure.rst",
            category="Run-time prediction",
            subcategory="{trace}",
            labels={"trace": "{trace}", "figure": "{prediction_figure}"},
        ),
        pdf=f"{PREDICTION}/figures/{{trace}}/{{prediction_figure}}.pdf",
    log:
        "logs/prediction/{trace}/figures/{prediction_figure}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(prediction_steps.trace_figure),
    run:
        run_step(
            prediction_steps.trace_figure,
            wildcards.prediction_figure,
            input.runs,
            input.predictions,
            output.png,
            output.pdf,
            trace=wildcards.trace,
            log_path=log[0],
        )


rule prediction_study_figure:
    input:
        f"{PREDICTION}/runs.parquet",
    output:
        png=report(
            f"{PREDICTION}/figures/{{prediction_figure}}.png",
            caption="../report/prediction_figure.rst",
            category="Run-time prediction",
            subcategory="All logs",
            labels={"figure": "{prediction_figure}"},
        ),
        pdf=f"{PREDICTION}/figures/{{prediction_figure}}.pdf",
    log:
        "logs/prediction/figures/{prediction_figure}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(prediction_steps.study_figure),
    run:
        run_step(
            prediction_steps.study_figure,
            wildcards.prediction_figure,
            input[0],
            output.png,
            output.pdf,
            log_path=log[0],
        )
