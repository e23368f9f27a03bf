"""A changed setting reruns what it affects, on the finished tiny study, through Snakemake's own
dry run: values whose labels name files (loads, memory sizes, shares) at magnitudes a label
printed with ``:g`` got wrong, and one key of one study drawn from the schema (property test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from support.configs import check, one_key, overlay
from support.tiny_project import ROOT, job_stats, snakemake

from scheduler.studies.common.study import plan_studies, validated_config

pytestmark = pytest.mark.workflow


def _rules(study: str) -> set[str]:
    """The rules of a study's rules file."""
    text = (ROOT / "workflow" / "rules" / f"{study}.smk").read_text()
    return set(re.findall(r"^rule (\w+):", text, flags=re.MULTILINE))


def planned_with(study: Path, change: dict, tmp_path: Path) -> tuple[int, dict[str, int], str]:
    """Snakemake's dry run on the finished ``study`` with ``change`` over its config (written
    beside the test, so the shared study is not changed): return code, jobs per rule, output."""
    config = overlay(yaml.safe_load((study / "tiny.yaml").read_text()), change)
    path = tmp_path / f"changed-{len(list(tmp_path.glob('changed-*')))}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    done = snakemake(study, "--dry-run", "--quiet", "rules", "--configfile", str(path),
                     check=False)  # fmt: skip
    output = done.stdout + done.stderr
    if done.returncode != 0 or "Nothing to be done" in output:
        return done.returncode, {}, output
    return done.returncode, job_stats(output), output


#: Changed values (one per study, in one config) and the jobs each must plan at least.
CHANGED = {
    # 1 TB nodes: a label 1.04858e+06 matched no wildcard and the old tables were kept
    "memory": ({"machine": {"class_nodes": [512, 512], "class_memory_mb": [262144, 1048576]},
                "memory_sweep": {"sizes_mb": [524288, 1048576, 1500000]},
                "loads": [0.6, 1.0, 12.5]},
               {"memory_simulate": 6, "memory_sweep": 6, "memory_tables": 1}),
    "redirect": ({"alphas": [0.1, 0.2, 1e-9]}, {"redirect_simulate": 1, "redirect_tables": 1}),
    "learned": ({"tau_s": 60}, {"learned_scores": 1, "learned_evaluate": 2}),
    "tuning": ({"thresholds": ["none", "20h", "0.5h"]}, {"simulate_batch": 8}),
}  # fmt: skip


def test_a_changed_value_reruns_what_it_names(tiny_study: Path, tmp_path: Path) -> None:
    change = {study: keys for study, (keys, _) in CHANGED.items()}
    code, jobs, output = planned_with(tiny_study, change, tmp_path)
    assert code == 0, output
    for _, expected in CHANGED.values():
        for rule, count in expected.items():
            assert jobs.get(rule, 0) >= count, (rule, jobs)


def _plans(config: dict) -> dict:
    return plan_studies(validated_config(config))


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(change=one_key(("memory", "redirect", "learned", "prediction", "online")))
def test_a_drawn_change_reruns_its_study(tiny_study: Path, tmp_path_factory, change) -> None:
    """One key of one study drawn from the schema: refused naming the key (checked in
    process), or the dry run plans at least one job of that study when its plan changed, and
    none when the plan is the same."""
    assume(check(change))
    (study,) = change
    full: dict = {}
    for path in ("config/traces.yaml", "config/config.yaml", "tiny.yaml"):  # as Snakemake does
        full = overlay(full, yaml.safe_load((tiny_study / path).read_text()))
    same = _plans(overlay(full, change))[study] == _plans(full)[study]
    code, jobs, output = planned_with(tiny_study, change, tmp_path_factory.mktemp("drawn"))
    assert code == 0, output
    ran = set(jobs) & _rules(study)
    assert (not ran) if same else ran, (change, jobs)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # (the others of the issue are refused by the same checks: tests/studies/
        # test_config_property.py::test_late_failures_are_refused_up_front)
        ({"memory": {"seeds": 20261121}}, "config memory.seeds: must be <= 1000"),
        # the catalogue gives the machine size: the plan knows the main pool is empty
        ({"traces": {"KTH-slice": {"machine_procs": 100}}, "redirect": {"alphas": [0.9999]}},
         "config redirect.alphas: on KTH-slice (100 processors) alpha=0.9999 leaves no"),
    ],
)  # fmt: skip
def test_what_a_job_refused_late_is_refused_before_any_job(
    tiny_study: Path, tmp_path: Path, change: dict, message: str
) -> None:
    code, _, output = planned_with(tiny_study, change, tmp_path)
    assert code != 0 and message in output, output


def test_a_share_that_leaves_no_main_pool_is_refused_before_simulating(
    tiny_study: Path, tmp_path: Path
) -> None:
    """Without the catalogue's machine size the first simulation job refuses it, naming the
    key, before simulating (it used to say 'no job to simulate ... did a filter remove every
    job?')."""
    from scheduler.core.steps import StepError
    from scheduler.studies.redirect.steps import simulate_alpha

    weeks = tiny_study / "results/redirect/KTH-slice/weeks.parquet"
    filtered = next((tiny_study / "results/KTH-slice").glob("filtered*.parquet"))
    settings = {"trace": "KTH-slice", "alpha": 0.9999, "thetas": [5.0], "balance": [False],
                "primary": "FCFS", "backfill": "FCFS", "tau_s": 60.0, "max_alpha": 0.9999}
    out = tmp_path / "grid.parquet"
    with pytest.raises(StepError, match=r"config redirect\.alphas: on KTH-slice \(100 process"):
        simulate_alpha(str(filtered), str(weeks), str(out), log_path=str(tmp_path / "log"),
                       **settings)  # fmt: skip
    assert not out.exists()
