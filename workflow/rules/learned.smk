# The learned-priority-function study: the workload model, training tuples, trial scores, the
# regression over function forms, the convergence curve, and the evaluation of the learned
# functions on 15-day sequences (scheduler.studies.learned.steps).


rule learned_model:
    output:
        f"{LEARNED}/model/model-{{procs}}.parquet",
    log:
        "logs/learned/model-{procs}.log",
    benchmark:
        "benchmarks/learned/model-{procs}.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        jobs=LEARNED_PLAN.model_jobs,
        job_types=LEARNED_PLAN.job_types,
        seed=LEARNED_PLAN.seed,
        code=step_hash(learned_steps.model_trace),
    run:
        run_step(
            learned_steps.model_trace,
            output[0],
            procs=int(wildcards.procs),
            jobs=params.jobs,
            job_types=params.job_types,
            seed=params.seed,
            log_path=log[0],
        )


rule learned_tuples:
    input:
        f"{LEARNED}/model/model-{LEARNED_PLAN.model_procs}.parquet",
    output:
        f"{LEARNED}/tuples/batch{{batch}}.parquet",
    log:
        "logs/learned/tuples/batch{batch}.log",
    conda:
        "../envs/schedlab.yaml"
    params:
        tuples=tuple_numbers,
        state_jobs=LEARNED_PLAN.state_jobs,
        queue_jobs=LEARNED_PLAN.queue_jobs,
        seed=LEARNED_PLAN.seed,
        code=step_hash(learned_steps.draw_tuples),
    run:
        run_step(
            learned_steps.draw_tuples,
            input[0],
            output[0],
            tuples=params.tuples,
            state_jobs=params.state_jobs,
            queue_jobs=params.queue_jobs,
            seed=params.seed,
            log_path=log[0],
        )


# One job = the trials of one batch of tuples (learned.tuples_per_job tuples).
rule learned_scores:
    input:
        f"{LEARNED}/tuples/batch{{batch}}.parquet",
    output:
        f"{LEARNED}/scores/batch{{batch}}.parquet",
    log:
        "logs/learned/scores/batch{batch}.log",
    benchmark:
        "benchmarks/learned/scores/batch{batch}.tsv"
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        trials=LEARNED_PLAN.trials,
        tau_s=LEARNED_PLAN.tau_s,
        seed=LEARNED_PLAN.seed,
        code=step_hash(learned_steps.tuple_scores),
    run:
        run_step(
            learned_steps.tuple_scores,
            input[0],
            output[0],
            trials=params.trials,
            tau_s=params.tau_s,
            seed=params.seed,
            log_path=log[0],
        )


rule learned_fit:
    input:
        score_files,
    output:
        forms=f"{LEARNED}/forms.parquet",
        functions=f"{LEARNED}/functions.parquet",
        forms_csv=report(
            f"{LEARNED}/tables/forms.csv",
            caption="../report/learned_table.rst",
            category="Learned priority functions",
            labels={"table": "every function form (CSV)"},
        ),
        top=f"{LEARNED}/tables/top_functions.md",
    log:
        "logs/learned/fit.log",
    benchmark:
        "benchmarks/learned/fit.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        top=LEARNED_PLAN.top,
        code=step_hash(learned_steps.fit_functions),
    run:
        run_step(
            learned_steps.fit_functions,
            input,
            output.forms,
            output.functions,
            output.forms_csv,
            output.top,
            top=params.top,
            log_path=log[0],
        )


rule learned_convergence:
    input:
        f"{LEARNED}/tuples/batch0.parquet",
    output:
        table=f"{LEARNED}/convergence.parquet",
        png=report(
            f"{LEARNED}/figures/convergence.png",
            caption="../report/learned_figure.rst",
            category="Learned priority functions",
            labels={"figure": "convergence"},
        ),
        pdf=f"{LEARNED}/figures/convergence.pdf",
    log:
        "logs/learned/convergence.log",
    benchmark:
        "benchmarks/learned/convergence.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        trial_counts=list(LEARNED_PLAN.convergence_trials),
        repetitions=LEARNED_PLAN.convergence_repetitions,
        tau_s=LEARNED_PLAN.tau_s,
        seed=LEARNED_PLAN.seed,
        code=step_hash(learned_steps.convergence_curve),
    run:
        run_step(
            learned_steps.convergence_curve,
            input[0],
            output.table,
            output.png,
            output.pdf,
            trial_counts=params.trial_counts,
            repetitions=params.repetitions,
            tau_s=params.tau_s,
            seed=params.seed,
            log_path=log[0],
        )


rule learned_function_figure:
    input:
        f"{LEARNED}/functions.parquet",
    output:
        png=report(
            f"{LEARNED}/figures/function_{{rank}}.png",
            caption="../report/learned_figure.rst",
            category="Learned priority functions",
            labels={"figure": "function {rank}"},
        ),
        pdf=f"{LEARNED}/figures/function_{{rank}}.pdf",
    log:
        "logs/learned/figures/function_{rank}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(learned_steps.function_figure),
    run:
        run_step(
            learned_steps.function_figure,
            input[0],
            output.png,
            output.pdf,
            rank=int(wildcards.rank),
            log_path=log[0],
        )


# One job = every policy and mode on the sequences of one workload.
rule learned_evaluate:
    input:
        workload=workload_source,
        functions=f"{LEARNED}/functions.parquet",
    output:
        f"{LEARNED}/evaluation/{{workload}}.parquet",
    log:
        "logs/learned/evaluation/{workload}.log",
    benchmark:
        "benchmarks/learned/evaluation/{workload}.tsv"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=evaluation_settings,
        code=step_hash(learned_steps.evaluate_workload),
    run:
        run_step(
            learned_steps.evaluate_workload,
            input.workload,
            input.functions,
            output[0],
            workload=wildcards.workload,
            log_path=log[0],
            **params.settings,
        )


rule learned_evaluation_tables:
    input:
        evaluation_files,
    output:
        parquet=f"{LEARNED}/evaluation.parquet",
        csv=report(
            f"{LEARNED}/tables/evaluation.csv",
            caption="../report/learned_table.rst",
            category="Learned priority functions",
            labels={"table": "evaluation (CSV)"},
        ),
        markdown=f"{LEARNED}/tables/evaluation.md",
        png=report(
            f"{LEARNED}/figures/evaluation.png",
            caption="../report/learned_figure.rst",
            category="Learned priority functions",
            labels={"figure": "evaluation"},
        ),
        pdf=f"{LEARNED}/figures/evaluation.pdf",
    log:
        "logs/learned/evaluation.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        policies=list(LEARNED_PLAN.evaluated_policies),
        modes=list(LEARNED_PLAN.modes),
        code=step_hash(learned_steps.evaluation_tables),
    run:
        run_step(
            learned_steps.evaluation_tables,
            input,
            output.parquet,
            output.csv,
            output.markdown,
            output.png,
            output.pdf,
            policies=params.policies,
            modes=params.modes,
            log_path=log[0],
        )
