# The RL benchmark (scheduler.studies.rl): one job per log running every policy on its test
# sequences, the PPO agent's training and evaluation per log (when rl.ppo.enabled), the tables
# and the figures. Paths and settings: its plan.
from scheduler.studies.rl import steps as rl_steps

RL = PLANS["rl"]


wildcard_constraints:
    **RL.wildcards,


rule rl_sequences:
    input:
        swf_path=RL.source_file(),
        _policy_paths=RL.policy_files,
    output:
        out_path=RL.sequences_file(),
    log:
        RL.files.log("{trace}/sequences"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=RL.sequence_settings,
        code=step_hash(rl_steps.simulate_sequences),
    run:
        run_step(rl_steps.simulate_sequences, input, output, log, params)


rule rl_train:
    input:
        swf_path=RL.source_file(),
    output:
        model_path=RL.ppo_file("model.zip"),
        curve_path=RL.ppo_file("curve.parquet"),
    log:
        RL.files.log("{trace}/train"),
    conda:
        "../envs/schedlab.yaml"
    threads: RL.ppo_threads
    params:
        settings=RL.train_settings,
        code=step_hash(rl_steps.train_agent),
    run:
        run_step(rl_steps.train_agent, input, output, log, params)


rule rl_evaluate:
    input:
        swf_path=RL.source_file(),
        model_path=RL.ppo_file("model.zip"),
    output:
        out_path=RL.ppo_file("evaluation.parquet"),
    log:
        RL.files.log("{trace}/evaluate"),
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=RL.evaluate_settings,
        code=step_hash(rl_steps.evaluate_agent),
    run:
        run_step(rl_steps.evaluate_agent, input, output, log, params)


rule rl_tables:
    input:
        run_paths=RL.sequence_files,
        evaluation_paths=RL.evaluation_files,
    output:
        **reported(RL.tables_outputs(), "rl"),
    log:
        RL.files.log("tables"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=RL.tables_settings,
        code=step_hash(rl_steps.rl_tables),
    run:
        run_step(rl_steps.rl_tables, input, output, log, params)


rule rl_figure:
    input:
        runs_path=RL.tables_outputs()["runs_path"],
        curve_paths=RL.curve_files,
    output:
        png_path=report(
            RL.files.figure("{rl_figure}", "png"),
            caption="../report/rl/figure.rst",
            category=TITLES["rl"],
            labels={"figure": "{rl_figure}"},
        ),
        pdf_path=RL.files.figure("{rl_figure}", "pdf"),
    log:
        RL.files.log("figures/{rl_figure}"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=RL.figure_settings,
        code=step_hash(rl_steps.rl_figure),
    run:
        run_step(rl_steps.rl_figure, input, output, log, params)


# The representative sequence of the first log: schedlab's EASY under the reference and the
# study's best policy, a Gantt chart of each.
rule rl_week:
    input:
        **RL.week_inputs(),
    output:
        **reported(RL.week_outputs(), "rl"),
    log:
        RL.files.log("figures/week"),
    localrule: True
    conda:
        "../envs/schedlab.yaml"
    params:
        settings=RL.week_settings,
        code=step_hash(rl_steps.rl_week),
    run:
        run_step(rl_steps.rl_week, input, output, log, params)
