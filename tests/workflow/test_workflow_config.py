"""What the workflow plans for a config, and the configs it refuses before anything runs: dry
runs of the tiny project, lint, the selection of studies, configs drawn from the schema, and the
online study's ε options run for real."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from support.configs import check, names_a_key, overlay, sections
from support.png import png_text
from support.tiny_project import (
    RL_EXTRA_MISSING,
    ROOT,
    make_project,
    online_only,
    plan_in_process,
    planned_jobs,
    run_jobs,
    snakemake,
    study_project,
    write_config,
    write_slice,
)

from scheduler.core.errors import ConfigurationError
from scheduler.core.provenance import read_csv

pytestmark = pytest.mark.workflow


def test_lint_is_clean(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    done = snakemake(project, "--lint")
    assert "Congratulations" in done.stdout + done.stderr


def test_dry_run_plans_the_whole_study(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    jobs = planned_jobs(project)
    # one job per pair and batch runs all its thresholds: 2 splits x 2 x 2 pairs x 2 batches of
    # 2 weeks, and the whole-log weeks of the descriptive figures (the 4 pairs at Θ = none, the
    # 2 with SPF backfilling at 20 h too) x 2 batches
    assert jobs["simulate_batch"] == 2 * 4 * 2 + 4 * 2
    assert jobs["resample_weeks"] == 2 * 2 + 2
    assert jobs["collect_whole_weekly"] == jobs["summarize_whole"] == 1
    # the whole-log table: four pairs (the baseline among them) on the whole filtered log
    assert jobs["simulate_whole_log"] == 4 and jobs["whole_log_table"] == 1
    assert jobs["filter_trace"] == jobs["split_trace"] == 1
    # KTH-slice, the memory study's LANL-CM5-tiny and the rl study's Lublin-256
    assert jobs["download_trace"] == 3
    assert jobs["trace_figure"] == 6
    assert jobs["study_figure"] == 2
    # online: one batch of the 2 replicas x (3 fixed + 2 periods x (random, full, noisy, ucb,
    # swucb, 2 bandits))
    assert jobs["online_run"] == 3 + 2 * 7
    assert jobs["period_costs"] == 2 * 2 and jobs["long_trace"] == 2
    assert jobs["online_tables"] == 1 and jobs["online_figure"] == 5
    # prediction: 4 techniques (requested, ave2, clairvoyant, nag-eloss) on the clipped log
    assert jobs["filter_trace_overrun"] == 1 and jobs["simulate_technique"] == 4
    assert jobs["prediction_runs"] == jobs["prediction_tables"] == 1
    assert jobs["prediction_trace_figure"] == 3
    assert "prediction_study_figure" not in jobs  # one log: no correlation between logs
    # learned: the model, 2 batches of 2 tuples (tuples, scores), the fit, the convergence
    # curve, 2 function figures, 2 evaluated workloads, the evaluation tables
    assert jobs["learned_model"] == 1 and jobs["learned_tuples"] == jobs["learned_scores"] == 2
    assert jobs["learned_fit"] == jobs["learned_convergence"] == 1
    assert jobs["learned_function_figure"] == jobs["learned_evaluate"] == 2
    # redirection: the weeks, the baseline and 2 shares, the tables, 3 figures
    assert jobs["redirect_weeks"] == 1 and jobs["redirect_simulate"] == 3
    assert jobs["redirect_tables"] == 1 and jobs["redirect_figure"] == 3
    # memory: the filter, 2 schedulers x (2 loads + 2 second-class sizes), tables, 7 figures
    assert jobs["memory_filter"] == 1 and jobs["memory_simulate"] == jobs["memory_sweep"] == 4
    assert jobs["memory_tables"] == 1 and jobs["memory_figure"] == 7
    # rl: the sequences of its one log, the agent's training and evaluation (with the rl
    # extra), the tables, the figures (the learning curve with the agent)
    agent = int(RL_EXTRA_MISSING is None)
    assert jobs["rl_sequences"] == jobs["rl_tables"] == 1 and jobs["rl_figure"] == 1 + agent
    assert jobs.get("rl_train", 0) == jobs.get("rl_evaluate", 0) == agent
    # a representative week of each of these studies
    weeks = [f"{study}_week_figure" for study in ("tuning", "online", "prediction", "learned")]
    assert [jobs[rule] for rule in weeks] == [1, 1, 1, 1]
    assert not (project / "results").exists()


def test_figures_from_the_training_weeks(tmp_path: Path, kth_path: Path) -> None:
    """tuning.figures.weeks_from: train plans no whole-log weeks and draws the descriptive
    figures from the training weeks (the plan of every figure: the dry run; one figure drawn,
    the others are drawn from the same table)."""
    project = study_project(tmp_path, kth_path, "tuning", figures={"weeks_from": "train"})
    jobs = planned_jobs(project)
    assert jobs["simulate_batch"] == 2 * 4 * 2 and jobs["resample_weeks"] == 2 * 2
    assert "collect_whole_weekly" not in jobs and "summarize_whole" not in jobs
    png = project / "results/tuning/figures/KTH-slice/pairs_worst_max_wait.png"
    # (a flag before the target: --configfile would take it for a second config file)
    snakemake(project, "--printshellcmds", str(png.relative_to(project)))
    assert json.loads(json.loads(png_text(png)["Description"])["config"])["split"] == "train"
    assert not (project / "results/KTH-slice/weeks/whole").exists()


#: Bad values of the tuning section and the message each is refused with.
BAD_TUNING = [
    ({"thresholds": ["none", "20"]}, "needs a unit"),
    ({"primary_policies": ["FCFS", "XYZ"]}, "unknown policy 'XYZ'"),
    ({"traces": ["NOPE"]}, "unknown trace 'NOPE'"),
    ({"weeks_per_job": 0}, "weeks_per_job"),
]


def bad_tuning_project(tmp_path: Path, kth_path: Path, change: dict) -> Path:
    """The tiny project (every study) with ``change`` over its tuning section."""
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["tuning"].update(change)
    write_config(project, config)
    return project


def test_bad_config_is_refused_before_anything_runs(tmp_path: Path, kth_path: Path) -> None:
    """Snakemake stops on a refused config before any job, with the message of the check that
    refused it; every bad value is refused by that check where the Snakefile plans
    (:func:`test_bad_config_is_refused_where_the_snakefile_plans`)."""
    change, message = BAD_TUNING[0]
    project = bad_tuning_project(tmp_path, kth_path, change)
    done = snakemake(project, check=False)
    assert done.returncode != 0
    assert message in done.stdout + done.stderr
    assert not (project / "results").exists()


@pytest.mark.parametrize(("change", "message"), BAD_TUNING)
def test_bad_config_is_refused_where_the_snakefile_plans(
    tmp_path: Path, kth_path: Path, change: dict, message: str
) -> None:
    """Planned in this process as the Snakefile plans (a Snakemake start each cost seconds;
    :func:`test_bad_config_is_refused_before_anything_runs` runs Snakemake on the first)."""
    project = bad_tuning_project(tmp_path, kth_path, change)
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        plan_in_process(project)


def test_unknown_config_key_is_refused(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    config["tunning"] = {}
    write_config(project, config)
    done = snakemake(project, check=False)
    assert done.returncode != 0 and "tunning" in done.stdout + done.stderr


def test_bundled_slice_is_the_tests_slice(tmp_path: Path, kth_path: Path) -> None:
    """config/tiny.yaml runs on resources/KTH-slice.swf.gz: the very bytes the tests write."""
    write_slice(kth_path, tmp_path / "KTH-slice.swf.gz")
    bundled = ROOT / "resources" / "KTH-slice.swf.gz"
    assert bundled.read_bytes() == (tmp_path / "KTH-slice.swf.gz").read_bytes()
    config = yaml.safe_load((ROOT / "config" / "tiny.yaml").read_text())
    assert (
        config["traces"]["KTH-slice"]["sha256"] == hashlib.sha256(bundled.read_bytes()).hexdigest()
    )


def test_one_study_alone(tmp_path: Path, kth_path: Path) -> None:
    project = make_project(tmp_path, kth_path)
    config = yaml.safe_load((project / "tiny.yaml").read_text())
    online_rules = {"long_trace", "period_costs", "online_run", "online_tables", "online_figure"}
    tuning_rules = {"split_trace", "resample_weeks", "simulate_batch", "collect_weekly"}

    # the online study alone: the tuning section is not checked (an empty trace list passes)
    write_config(project, {**config, "studies": ["online"], "tuning": {"traces": []}})
    jobs = set(planned_jobs(project))
    assert online_rules <= jobs and not tuning_rules & jobs and "filter_trace" in jobs

    # the tuning study alone
    write_config(project, {**config, "studies": ["tuning"]})
    jobs = set(planned_jobs(project))
    assert tuning_rules <= jobs and not online_rules & jobs

    # the prediction study alone (on the clipped filter only)
    write_config(project, {**config, "studies": ["prediction"], "tuning": {"traces": []}})
    jobs = set(planned_jobs(project))
    assert {"simulate_technique", "filter_trace_overrun"} <= jobs
    assert not (tuning_rules | online_rules | {"filter_trace"}) & jobs

    # a listed study is checked: its empty trace list is refused where the Snakefile plans,
    # before anything runs (Snakemake stopping on such a refusal: the bad-config tests)
    write_config(project, {**config, "studies": ["tuning"], "tuning": {"traces": []}})
    with pytest.raises(ConfigurationError, match=r"config tuning\.traces: "):
        plan_in_process(project)


def test_epsilon_is_chosen_among_the_configured_values(tmp_path: Path, kth_path: Path) -> None:
    """With epsilons [0.2, 0.4] (none of them in the old built-in list) the tables are made;
    one trace cannot vote, so the ε table reports the configured online.epsilon (#16)."""
    project = online_only(
        tmp_path, kth_path, selectors=["random", "bandit"], epsilons=[0.2, 0.4], epsilon=0.4
    )
    jobs = run_jobs(project)  # what the run ran is the plan
    assert jobs["online_run"] == 2 + 3 and jobs["online_tables"] == 1  # one batch of 2 replicas
    epsilon = read_csv(project / "results/online/tables/epsilon.csv")
    assert epsilon.height == 1 and epsilon["chosen"][0] == 0.4
    assert epsilon["chosen_strategy"][0] == "bandit(eps=0.4)" and epsilon["how"][0] == "configured"
    changes = read_csv(project / "results/online/tables/changes.csv")
    assert "bandit (configured ε)" in changes["strategy"].to_list()
    assert "configured ε" in (project / "results/online/tables/epsilon.md").read_text()


def test_a_study_without_a_bandit_has_no_epsilon_table(tmp_path: Path, kth_path: Path) -> None:
    project = online_only(tmp_path, kth_path, selectors=["random", "ucb"])
    snakemake(project)
    tables = project / "results/online/tables"
    assert (tables / "changes.csv").exists() and not list(tables.glob("epsilon*"))
    changes = read_csv(tables / "changes.csv")
    assert not changes["strategy"].str.starts_with("bandit").any()
    figures = sorted(f.stem for f in (project / "results/online/figures/KTH-slice").glob("*.png"))
    assert figures == ["fixed_improvement", "selector_improvement_1d"]


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(change=sections())
def test_drawn_configs_are_refused_by_name_or_dry_run(
    tmp_path_factory: pytest.TempPathFactory, kth_path: Path, change: dict
) -> None:
    """#11: a config drawn from the schema is refused before anything runs, naming the key, or
    Snakemake's dry run plans the tiny study with it."""
    project = PROPERTY_PROJECTS.get("project")
    if project is None:
        project = PROPERTY_PROJECTS["project"] = make_project(
            tmp_path_factory.mktemp("drawn"), kth_path
        )
        # every example starts from the project's own config, not from the previous example's
        shutil.copy(project / "tiny.yaml", project / "tiny-base.yaml")
    config = yaml.safe_load((project / "tiny-base.yaml").read_text())
    mirror = config["archive"]["mirror_dirs"]
    accepted = check(change)  # in-process: schema, plans, what the steps refuse
    config = overlay(config, change)
    config["archive"]["mirror_dirs"] = mirror
    write_config(project, config)
    done = snakemake(project, "--dry-run", "--quiet", "rules", check=False)
    output = done.stdout + done.stderr
    if accepted:
        assert done.returncode == 0, output
    else:
        assert done.returncode != 0 and names_a_key(output, change), output
    assert not (project / "results").exists()


PROPERTY_PROJECTS: dict[str, Path] = {}
