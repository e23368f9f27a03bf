# The redirection study: the loaded weeks of each log, the (alpha, theta) grid and the baseline
# simulated on them, the tables and figures (scheduler.studies.redirect.steps).


rule redirect_weeks:
    input:
        "results/{trace}/filtered.parquet",
    output:
        weeks=f"{REDIRECT}/{{trace}}/weeks.parquet",
        csv=report(
            f"{REDIRECT}/tables/{{trace}}_weeks.csv",
            caption="../report/redirect_table.rst",
            category="Redirection",
            subcategory="{trace}",
            labels={"trace": "{trace}", "table": "weeks and their load"},
        ),
    log:
        "logs/redirect/{trace}/weeks.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        weeks=REDIRECT_PLAN.weeks,
        min_load=redirect_min_load,
        step_days=REDIRECT_PLAN.step_days,
        split=REDIRECT_PLAN.split,
        code=step_hash(redirect_steps.choose_weeks),
    run:
        run_step(
            redirect_steps.choose_weeks,
            input[0],
            output.weeks,
            output.csv,
            trace=wildcards.trace,
            count=params.weeks,
            min_load=params.min_load,
            step_days=params.step_days,
            split=params.split,
            log_path=log[0],
        )


# One job = one log's weeks under one dedicated share (every theta and balance option), or
# under the baseline EASY on the whole machine.
rule redirect_simulate:
    input:
        jobs="results/{trace}/filtered.parquet",
        weeks=f"{REDIRECT}/{{trace}}/weeks.parquet",
    output:
        f"{REDIRECT}/{{trace}}/grid/alpha-{{alpha}}.parquet",
    log:
        "logs/redirect/{trace}/alpha-{alpha}.log",
    benchmark:
        "benchmarks/redirect/{trace}/alpha-{alpha}.tsv"
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        thetas=list(REDIRECT_PLAN.thetas),
        balance=list(REDIRECT_PLAN.balance),
        primary=REDIRECT_PLAN.primary,
        backfill=REDIRECT_PLAN.backfill,
        tau_s=REDIRECT_PLAN.tau_s,
        max_alpha=max(REDIRECT_PLAN.alphas),
        code=step_hash(redirect_steps.simulate_alpha),
    run:
        run_step(
            redirect_steps.simulate_alpha,
            input.jobs,
            input.weeks,
            output[0],
            trace=wildcards.trace,
            alpha=wildcards.alpha,
            thetas=params.thetas,
            balance=params.balance,
            primary=params.primary,
            backfill=params.backfill,
            tau_s=params.tau_s,
            max_alpha=params.max_alpha,
            log_path=log[0],
        )


# One job = one log's weeks under one dedicated share with theta chosen online, period by
# period, by each selector of redirect.online.selectors (every balance option).
rule redirect_online:
    input:
        jobs="results/{trace}/filtered.parquet",
        weeks=f"{REDIRECT}/{{trace}}/weeks.parquet",
    output:
        f"{REDIRECT}/{{trace}}/online/alpha-{{alpha}}.parquet",
    log:
        "logs/redirect/{trace}/online-alpha-{alpha}.log",
    benchmark:
        "benchmarks/redirect/{trace}/online-alpha-{alpha}.tsv"
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=redirect_online_settings(),
        code=step_hash(redirect_steps.simulate_online),
    run:
        run_step(
            redirect_steps.simulate_online,
            input.jobs,
            input.weeks,
            output[0],
            trace=wildcards.trace,
            alpha=wildcards.alpha,
            log_path=log[0],
            **params.settings,
        )


rule redirect_tables:
    input:
        grid=redirect_grid_files,
        online=redirect_online_files,
    output:
        grid=f"{REDIRECT}/grid.parquet",
        heatmap_csv=report(
            f"{REDIRECT}/tables/heatmap.csv",
            caption="../report/redirect_table.rst",
            category="Redirection",
            subcategory="All logs",
            labels={"table": "median ratios per (alpha, theta)"},
        ),
        heatmap_md=f"{REDIRECT}/tables/heatmap.md",
        best=f"{REDIRECT}/best.parquet",
        best_csv=report(
            f"{REDIRECT}/tables/best.csv",
            caption="../report/redirect_table.rst",
            category="Redirection",
            subcategory="All logs",
            labels={"table": "tuned on training weeks, reported on test weeks"},
        ),
        best_md=f"{REDIRECT}/tables/best.md",
        online=f"{REDIRECT}/online.parquet",
        online_csv=report(
            f"{REDIRECT}/tables/online.csv",
            caption="../report/redirect_table.rst",
            category="Redirection",
            subcategory="All logs",
            labels={"table": "theta chosen online against the fixed theta"},
        ),
        online_md=f"{REDIRECT}/tables/online.md",
    log:
        "logs/redirect/tables.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(redirect_steps.redirect_tables),
    run:
        run_step(
            redirect_steps.redirect_tables,
            input.grid,
            output.grid,
            output.heatmap_csv,
            output.heatmap_md,
            output.best,
            output.best_csv,
            output.best_md,
            input.online,
            output.online,
            output.online_csv,
            output.online_md,
            log_path=log[0],
        )


rule redirect_figure:
    input:
        grid=f"{REDIRECT}/grid.parquet",
        best=f"{REDIRECT}/best.parquet",
    output:
        png=report(
            f"{REDIRECT}/figures/{{redirect_figure}}.png",
            caption="../report/redirect_figure.rst",
            category="Redirection",
            subcategory="All logs",
            labels={"figure": "{redirect_figure}"},
        ),
        pdf=f"{REDIRECT}/figures/{{redirect_figure}}.pdf",
    log:
        "logs/redirect/figures/{redirect_figure}.log",
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        code=step_hash(redirect_steps.redirect_figure),
    run:
        run_step(
            redirect_steps.redirect_figure,
            wildcards.redirect_figure,
            input.grid,
            input.best,
            output.png,
            output.pdf,
            log_path=log[0],
        )
