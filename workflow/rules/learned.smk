# The learned-priority-function study (scheduler.studies.learned): the workload model, training
# tuples, trial scores, the regression over function forms, the convergence curve, and the
# evaluation of the learned functions on 15-day sequences. Paths and settings: its plan.
from scheduler.studies.learned import steps as learned_steps

LEARNED = PLANS["learned"]


wildcard_constraints:
    **LEARNED.wildcards,


rule learned_model:
    output:
        out_path=LEARNED.model_file(),
    log:
        LEARNED.files.log("model-{procs}"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.model_settings,
        code=step_hash(learned_steps.model_trace),
    run:
        run_step(learned_steps.model_trace, input, output, log, params)


rule learned_tuples:
    input:
        model_path=LEARNED.model_file(LEARNED.model_procs),
    output:
        out_path=LEARNED.tuples_file(),
    log:
        LEARNED.files.log("tuples/batch{batch}"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.tuples_settings,
        code=step_hash(learned_steps.draw_tuples),
    run:
        run_step(learned_steps.draw_tuples, input, output, log, params)


# One job = the trials of one batch of tuples (learned.tuples_per_job tuples).
rule learned_scores:
    input:
        tuples_path=LEARNED.tuples_file(),
    output:
        out_path=LEARNED.scores_file(),
    log:
        LEARNED.files.log("scores/batch{batch}"),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.scores_settings,
        code=step_hash(learned_steps.tuple_scores),
    run:
        run_step(learned_steps.tuple_scores, input, output, log, params)


rule learned_fit:
    input:
        score_paths=LEARNED.score_files,
    output:
        **reported(LEARNED.fit_outputs(), "learned"),
    log:
        LEARNED.files.log("fit"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.fit_settings,
        code=step_hash(learned_steps.fit_functions),
    run:
        run_step(learned_steps.fit_functions, input, output, log, params)


rule learned_convergence:
    input:
        tuples_path=LEARNED.tuples_file(0),
    output:
        **reported(LEARNED.convergence_outputs(), "learned"),
    log:
        LEARNED.files.log("convergence"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.convergence_settings,
        code=step_hash(learned_steps.convergence_curve),
    run:
        run_step(learned_steps.convergence_curve, input, output, log, params)


rule learned_function_figure:
    input:
        functions_path=LEARNED.fit_outputs()["functions_path"],
    output:
        png_path=report(
            LEARNED.files.figure("function_{rank}", "png"),
            caption="../report/learned/figure.rst",
            category=TITLES["learned"],
            labels={"figure": "function {rank}"},
        ),
        pdf_path=LEARNED.files.figure("function_{rank}", "pdf"),
    log:
        LEARNED.files.log("figures/function_{rank}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.function_figure_settings,
        code=step_hash(learned_steps.function_figure),
    run:
        run_step(learned_steps.function_figure, input, output, log, params)


# One job = every policy and mode on the sequences of one workload.
rule learned_evaluate:
    input:
        workload_path=LEARNED.workload_source,
        functions_path=LEARNED.fit_outputs()["functions_path"],
    output:
        out_path=LEARNED.evaluation_file(),
    log:
        LEARNED.files.log("evaluation/{workload}"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.evaluation_settings,
        code=step_hash(learned_steps.evaluate_workload),
    run:
        run_step(learned_steps.evaluate_workload, input, output, log, params)


rule learned_evaluation_tables:
    input:
        evaluation_paths=LEARNED.evaluation_files,
    output:
        **reported(LEARNED.evaluation_outputs(), "learned"),
    log:
        LEARNED.files.log("evaluation"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.evaluation_tables_settings,
        code=step_hash(learned_steps.evaluation_tables),
    run:
        run_step(learned_steps.evaluation_tables, input, output, log, params)


rule learned_published_tables:
    input:
        **LEARNED.published_inputs(),
    output:
        **LEARNED.published_outputs(),
    log:
        LEARNED.files.log("published"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(learned_steps.published_tables),
    run:
        run_step(learned_steps.published_tables, input, output, log, params)


# The representative week: EASY with FCFS and with the rank-1 learned function on the first
# evaluation workload, drawn over the week where they differ most.
rule learned_week_figure:
    input:
        **LEARNED.week_inputs(),
    output:
        **reported(LEARNED.week_outputs(), "learned"),
    log:
        LEARNED.files.log("figures/week"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=LEARNED.week_settings,
        code=step_hash(learned_steps.draw_week),
    run:
        run_step(learned_steps.draw_week, input, output, log, params)
