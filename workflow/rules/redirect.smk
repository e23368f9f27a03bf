# The redirection study (scheduler.studies.redirect): the loaded weeks of each log, the (alpha,
# theta) grid and the baseline simulated on them, theta chosen online, the tables and figures.
# Paths and settings: its plan.
from scheduler.studies.redirect import steps as redirect_steps

REDIRECT = PLANS["redirect"]


wildcard_constraints:
    **REDIRECT.wildcards,
    redirect_figure=_alternatives(redirect_steps.FIGURES),


rule redirect_weeks:
    input:
        filtered_path=REDIRECT.source_file(),
    output:
        **reported(REDIRECT.weeks_outputs(), "redirect"),
    log:
        REDIRECT.files.log("{trace}/weeks"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=REDIRECT.weeks_settings,
        code=step_hash(redirect_steps.choose_weeks),
    run:
        run_step(redirect_steps.choose_weeks, input, output, log, params)


# One job = one log's weeks under one dedicated share (every theta and balance option), or
# under the baseline EASY on the whole machine.
rule redirect_simulate:
    input:
        filtered_path=REDIRECT.source_file(),
        weeks_path=REDIRECT.weeks_file(),
    output:
        out_path=REDIRECT.files.result(f"{REDIRECT.grid_run()}.parquet"),
    log:
        REDIRECT.files.log(REDIRECT.grid_run()),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=REDIRECT.grid_settings,
        code=step_hash(redirect_steps.simulate_alpha),
    run:
        run_step(redirect_steps.simulate_alpha, input, output, log, params)


# One job = one log's weeks under one dedicated share with theta chosen online, period by
# period, by each selector of redirect.online.selectors (every balance option).
rule redirect_online:
    input:
        filtered_path=REDIRECT.source_file(),
        weeks_path=REDIRECT.weeks_file(),
    output:
        out_path=REDIRECT.files.result(f"{REDIRECT.online_run()}.parquet"),
    log:
        REDIRECT.files.log(REDIRECT.online_run()),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=REDIRECT.online_settings,
        code=step_hash(redirect_steps.simulate_online),
    run:
        run_step(redirect_steps.simulate_online, input, output, log, params)


rule redirect_tables:
    input:
        grid_paths=REDIRECT.grid_files,
        online_paths=REDIRECT.online_files,
    output:
        **reported(REDIRECT.tables_outputs(), "redirect"),
    log:
        REDIRECT.files.log("tables"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(redirect_steps.redirect_tables),
    run:
        run_step(redirect_steps.redirect_tables, input, output, log, params)


rule redirect_figure:
    input:
        grid_path=REDIRECT.tables_outputs()["grid_path"],
        best_path=REDIRECT.tables_outputs()["best_path"],
    output:
        png_path=report(
            REDIRECT.files.figure("{redirect_figure}", "png"),
            caption="../report/redirect/figure.rst",
            category=TITLES["redirect"],
            subcategory="All logs",
            labels={"figure": "{redirect_figure}"},
        ),
        pdf_path=REDIRECT.files.figure("{redirect_figure}", "pdf"),
    log:
        REDIRECT.files.log("figures/{redirect_figure}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=REDIRECT.figure_settings,
        code=step_hash(redirect_steps.redirect_figure),
    run:
        run_step(redirect_steps.redirect_figure, input, output, log, params)


# The representative week of the first log: EASY on the whole machine and the tuned (alpha,
# theta), a Gantt chart of each.
rule redirect_week:
    input:
        **REDIRECT.week_inputs(),
    output:
        **reported(REDIRECT.week_outputs(), "redirect"),
    log:
        REDIRECT.files.log("figures/week"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=REDIRECT.week_settings,
        code=step_hash(redirect_steps.redirect_week),
    run:
        run_step(redirect_steps.redirect_week, input, output, log, params)
