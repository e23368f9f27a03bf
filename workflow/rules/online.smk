# The online policy-selection study: selectors choose the live EASY(P, Θ) policy period by
# period on long resampled traces (scheduler.studies.online.live, scheduler.studies.online.selectors);
# the reference EASY(P, Θ) of the tables and figures is online.reference / online.threshold.
# Long traces are cut on the log's calendar (online.week_alignment) and the periods start at
# local midnights / Mondays (online.period_alignment); README.md, docs/tuning.md.


# With the config key `bundle` above 1 (clusters), one job per replica runs its long trace,
# period costs and every run one after the other (online_steps.online_replica): same files,
# same contents.
if BUNDLE == 1:

    rule long_trace:
        input:
            "results/{trace}/filtered.parquet",
        output:
            online_file("trace", "{trace}", "{replica}"),
        log:
            online_file("trace", "{trace}", "{replica}", kind="log"),
        benchmark:
            online_file("trace", "{trace}", "{replica}", kind="benchmark")
        group:
            "online"
        conda:
            "../envs/schedlab.yaml"
        params:
            settings=long_trace_settings(),
            code=step_hash(online_steps.make_long_trace),
        run:
            run_step(
                online_steps.make_long_trace,
                input[0],
                output[0],
                trace=wildcards.trace,
                replica=int(wildcards.replica),
                log_path=log[0],
                **params.settings,
            )

    rule period_costs:
        input:
            trace=online_file("trace", "{trace}", "{replica}"),
            learned=online_learned_input,
        output:
            online_file("costs", "{trace}", "{replica}", "{period}"),
        log:
            online_file("costs", "{trace}", "{replica}", "{period}", kind="log"),
        benchmark:
            online_file("costs", "{trace}", "{replica}", "{period}", kind="benchmark")
        group:
            "online"
        conda:
            "../envs/schedlab.yaml"
        params:
            period_s=period_seconds,
            settings=period_cost_settings(),
            code=step_hash(online_steps.period_costs),
        run:
            run_step(
                online_steps.period_costs,
                input.trace,
                output[0],
                trace=wildcards.trace,
                replica=int(wildcards.replica),
                period=wildcards.period,
                period_s=params.period_s,
                log_path=log[0],
                **params.settings,
            )

    rule online_run:
        input:
            trace=online_file("trace", "{trace}", "{replica}"),
            costs=online_costs_input,
            learned=online_learned_input,
        output:
            curve=online_file("runs", "{trace}", "{replica}", "{period}", "{strategy}"),
            choices=online_file(
                "choices", "{trace}", "{replica}", "{period}", "{strategy}"
            ),
        log:
            online_file(
                "runs", "{trace}", "{replica}", "{period}", "{strategy}", kind="log"
            ),
        benchmark:
            online_file(
                "runs",
                "{trace}",
                "{replica}",
                "{period}",
                "{strategy}",
                kind="benchmark",
            )
        group:
            "online"
        conda:
            "../envs/schedlab.yaml"
        params:
            run=online_run_settings,
            code=step_hash(online_steps.online_run),
        run:
            run_step(
                online_steps.online_run,
                input.trace,
                output.curve,
                output.choices,
                costs_path=input.costs,
                log_path=log[0],
                **params.run,
            )

else:

    rule online_replica:
        input:
            filtered="results/{trace}/filtered.parquet",
            learned=online_learned_input,
        output:
            online_replica_outputs("output"),
        log:
            online_replica_outputs("log"),
        benchmark:
            "benchmarks/online/{trace}/replica{replica}.tsv"
        conda:
            "../envs/schedlab.yaml"
        params:
            jobs=online_replica_jobs,
            code=step_hash(online_steps.online_replica),
        run:
            run_step(
                online_steps.online_replica,
                input.filtered,
                output[0],
                **params.jobs,
            )


rule online_tables:
    input:
        curves=online_run_files("runs"),
        choices=online_run_files("choices"),
    output:
        **online_table_outputs(),
    log:
        "logs/online/tables.log",
    benchmark:
        "benchmarks/online/tables.tsv"
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        # the bandit's configured epsilons are the vote's only candidates (none: no bandit);
        # online.epsilon when nobody can vote (one trace) or epsilon_vote is "configured"
        settings={
            "reference": ONLINE_PLAN.reference,
            "threshold_s": ONLINE_PLAN.threshold_s,
            "confidence": ONLINE_PLAN.confidence,
            "seed": ONLINE_PLAN.seed,
            "epsilons": list(ONLINE_PLAN.bandit_epsilons),
            "epsilon": ONLINE_PLAN.epsilon,
            "epsilon_vote": ONLINE_PLAN.epsilon_vote,
        },
        code=step_hash(online_steps.online_tables),
    run:
        run_step(
            online_steps.online_tables,
            input.curves,
            input.choices,
            dict(output.items()),
            log_path=log[0],
            **params.settings,
        )


rule online_figure:
    input:
        improvement=f"{ONLINE}/tables/improvement.parquet",
        shares=f"{ONLINE}/tables/choice_shares.parquet",
        changes=f"{ONLINE}/tables/changes.parquet",
    output:
        png=report(
            f"{ONLINE}/figures/{{trace}}/{{online_figure}}.png",
            caption="../report/online_figure.rst",
            category="Online selection",
            subcategory="{trace}",
            labels={"trace": "{trace}", "figure": "{online_figure}"},
        ),
        pdf=f"{ONLINE}/figures/{{trace}}/{{online_figure}}.pdf",
    log:
        "logs/online/{trace}/figures/{online_figure}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        reference=ONLINE_PLAN.reference,
        threshold_s=ONLINE_PLAN.threshold_s,
        code=step_hash(online_steps.online_figure),
    run:
        run_step(
            online_steps.online_figure,
            wildcards.online_figure,
            wildcards.trace,
            input.improvement,
            input.shares,
            input.changes,
            output.png,
            output.pdf,
            reference=params.reference,
            threshold_s=params.threshold_s,
            log_path=log[0],
        )
