# The online policy-selection study (scheduler.studies.online): selectors choose the live
# EASY(P, Θ) policy period by period on long resampled traces; the reference EASY(P, Θ) of the
# tables and figures is online.reference / online.threshold. Long traces are cut on the log's
# calendar (online.week_alignment) and the periods start at local midnights / Mondays
# (online.period_alignment); docs/online.md. Paths and settings: its plan.
from scheduler.studies.online import steps as online_steps

ONLINE = PLANS["online"]


wildcard_constraints:
    **ONLINE.wildcards,


# A batch of replicas' long traces, period costs and runs are one group: on a cluster the
# profile submits each batch (online.replicas_per_job) as one job (group-components).
rule long_trace:
    input:
        filtered_path=ONLINE.source_file(),
    output:
        out_path=ONLINE.file("trace"),
    log:
        ONLINE.file("trace", kind="log"),
    group:
        "online"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=ONLINE.long_trace_settings,
        code=step_hash(online_steps.make_long_trace),
    run:
        run_step(online_steps.make_long_trace, input, output, log, params)


rule period_costs:
    input:
        trace_path=ONLINE.file("trace"),
        _policy_paths=ONLINE.policy_files,
    output:
        out_path=ONLINE.file("costs"),
    log:
        ONLINE.file("costs", kind="log"),
    group:
        "online"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=ONLINE.costs_settings,
        code=step_hash(online_steps.period_costs),
    run:
        run_step(online_steps.period_costs, input, output, log, params)


# A strategy at one period on a batch of replicas (online.replicas_per_job): one job.
rule online_run:
    input:
        trace_paths=ONLINE.batch_traces,
        costs_paths=ONLINE.costs_input,
        _policy_paths=ONLINE.policy_files,
    output:
        curve_path=ONLINE.file("runs"),
        choices_path=ONLINE.file("choices"),
    log:
        ONLINE.file("runs", kind="log"),
    group:
        "online"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=ONLINE.run_settings,
        code=step_hash(online_steps.online_run),
    run:
        run_step(online_steps.online_run, input, output, log, params)


rule online_tables:
    input:
        curve_paths=ONLINE.run_files("runs"),
        choice_paths=ONLINE.run_files("choices"),
    output:
        **reported(ONLINE.tables_outputs(), "online"),
    log:
        ONLINE.files.log("tables"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=ONLINE.tables_settings,
        code=step_hash(online_steps.online_tables),
    run:
        run_step(online_steps.online_tables, input, output, log, params)


rule online_figure:
    input:
        improvement_path=ONLINE.tables_outputs()["improvement_path"],
        shares_path=ONLINE.tables_outputs()["shares_path"],
        changes_path=ONLINE.tables_outputs()["changes_path"],
    output:
        png_path=report(
            ONLINE.files.figure("{trace}/{online_figure}", "png"),
            caption="../report/online/figure.rst",
            category=TITLES["online"],
            subcategory="{trace}",
            labels={"trace": "{trace}", "figure": "{online_figure}"},
        ),
        pdf_path=ONLINE.files.figure("{trace}/{online_figure}", "pdf"),
    log:
        ONLINE.files.log("{trace}/figures/{online_figure}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=ONLINE.figure_settings,
        code=step_hash(online_steps.online_figure),
    run:
        run_step(online_steps.online_figure, input, output, log, params)


# The representative week: the reference and the strategy that beats it most, replayed from
# their recorded choices on the first trace's first long trace, drawn over the week where they
# differ most.
rule online_week_figure:
    input:
        unpack(ONLINE.week_inputs),
    output:
        **reported(ONLINE.week_outputs(), "online"),
    log:
        ONLINE.files.log("figures/week"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=ONLINE.week_settings,
        code=step_hash(online_steps.draw_week),
    run:
        run_step(online_steps.draw_week, input, output, log, params)
