# The what-if study (scheduler.studies.whatif): the site's jobs, the resampled weeks, one job per
# alternative (its weeks, the whole log, the log's weeks one by one), one per (alternative, batch
# of bootstrap replicates), the tables, the bandits' online choice, the ranking figure and each
# alternative's figures. Paths and settings: its plan.
from scheduler.studies.whatif import steps as whatif_steps

WHATIF = PLANS["whatif"]


wildcard_constraints:
    alternative=_alternatives(WHATIF.names()),
    batch=r"[0-9]+",


rule whatif_jobs:
    input:
        source_paths=WHATIF.source_inputs,
    output:
        jobs_path=WHATIF.jobs_file(),
    log:
        WHATIF.files.log("jobs"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.jobs_settings,
        code=step_hash(whatif_steps.site_jobs),
    run:
        run_step(whatif_steps.site_jobs, input, output, log, params)


rule whatif_weeks:
    input:
        jobs_path=WHATIF.jobs_file(),
    output:
        weeks_path=WHATIF.weeks_file(),
    log:
        WHATIF.files.log("weeks"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.weeks_settings,
        code=step_hash(whatif_steps.resample),
    run:
        run_step(whatif_steps.resample, input, output, log, params)


# One job = one alternative on the resampled weeks and on the whole log.
rule whatif_simulate:
    input:
        jobs_path=WHATIF.jobs_file(),
        weeks_path=WHATIF.weeks_file(),
        _policy_paths=WHATIF.policy_files,
    output:
        weeks_out_path=WHATIF.weeks_sim_file(),
        log_out_path=WHATIF.log_sim_file(),
        source_out_path=WHATIF.source_sim_file(),
    log:
        WHATIF.files.log("sims/{alternative}"),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.simulate_settings,
        code=step_hash(whatif_steps.simulate),
    run:
        run_step(whatif_steps.simulate, input, output, log, params)


# One job = one alternative on a batch of bootstrap replicates.
rule whatif_bootstrap:
    input:
        jobs_path=WHATIF.jobs_file(),
        _policy_paths=WHATIF.policy_files,
    output:
        out_path=WHATIF.bootstrap_file(),
    log:
        WHATIF.files.log("bootstrap/{alternative}/batch{batch}"),
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.bootstrap_settings,
        code=step_hash(whatif_steps.bootstrap),
    run:
        run_step(whatif_steps.bootstrap, input, output, log, params)


rule whatif_tables:
    input:
        unpack(WHATIF.sim_files),
    output:
        **reported(WHATIF.table_outputs(), "whatif"),
    log:
        WHATIF.files.log("tables"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.table_settings,
        code=step_hash(whatif_steps.tables),
    run:
        run_step(whatif_steps.tables, input, output, log, params)


rule whatif_online:
    input:
        unpack(WHATIF.online_inputs),
    output:
        **reported(WHATIF.online_outputs(), "whatif"),
    log:
        WHATIF.files.log("online"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.online_settings,
        code=step_hash(whatif_steps.online),
    run:
        run_step(whatif_steps.online, input, output, log, params)


rule whatif_ranking_figure:
    input:
        summary_csv_path=WHATIF.summary_file(),
    output:
        **reported(WHATIF.summary_figure_outputs(), "whatif"),
    log:
        WHATIF.files.log("figures/ranking"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.summary_figure_settings,
        code=step_hash(whatif_steps.ranking_figure),
    run:
        run_step(whatif_steps.ranking_figure, input, output, log, params)


rule whatif_figures:
    input:
        unpack(WHATIF.figure_inputs),
    output:
        **reported(WHATIF.figure_outputs(), "whatif"),
    log:
        WHATIF.files.log("figures/{alternative}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.figure_settings,
        code=step_hash(whatif_steps.alternative_figures),
    run:
        run_step(whatif_steps.alternative_figures, input, output, log, params)


# The representative week: the site's log under the baseline and the first alternative, a Gantt
# chart of each.
rule whatif_week:
    input:
        **WHATIF.week_inputs(),
    output:
        **reported(WHATIF.week_outputs(), "whatif"),
    log:
        WHATIF.files.log("figures/week"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=WHATIF.week_settings,
        code=step_hash(whatif_steps.week_gantt),
    run:
        run_step(whatif_steps.week_gantt, input, output, log, params)
