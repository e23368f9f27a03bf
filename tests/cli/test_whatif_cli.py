"""``scheduler whatif``: the configuration it writes, and bad input refused before any run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from scheduler.cli.main import main
from scheduler.cli.whatif import parse_changes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the workflow's files (no run happens with --dry-run's checks failing)."""
    (tmp_path / "project").mkdir()
    shutil.copy(ROOT / "Snakefile", tmp_path / "project")
    for directory in ("workflow", "config"):
        shutil.copytree(ROOT / directory, tmp_path / "project" / directory)
    return tmp_path / "project"


def test_parse_changes() -> None:
    assert parse_changes(["bf_window=1d,3d", "policy=EASY-SPF-FCFS"], "--try") == {
        "bf_window": ["1d", "3d"],
        "policy": ["EASY-SPF-FCFS"],
    }
    for bad in (["bf_window"], ["=1"], ["bf_window=1d,"], ["a=1", "a=2"]):
        with pytest.raises(Exception, match="--try"):
            parse_changes(bad, "--try")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--try", "PriorityWeightAge=ten"],
            "whatif.try.PriorityWeightAge: PriorityWeightAge='ten': not an integer",
        ),
        (["--try", "Foo=1"], "whatif.try.Foo: Foo: unknown key"),
        (["--try", "bf_window"], "--try 'bf_window': write KEY=VALUE"),
        (["--policy", "EASY-FCFS-FCFS", "--try", "bf_window=1h"], "Slurm keys change a slurm.conf"),
        (["--shares", "physics=0"], "--shares 'physics=0'"),
        (
            ["--swf", "{lublin}", "--slurm-conf", str(ROOT / "config/slurm/example-site.conf")],
            "--swf: .*the log has no users",
        ),
    ],
)
def test_bad_input_is_refused_before_anything_runs(
    project: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from scheduler.traces.estimates import with_estimates
    from scheduler.traces.lublin import lublin_trace
    from scheduler.traces.swf import write_swf

    lublin = str(project / "no-users.swf")  # a generated log: every user_id -1
    write_swf(with_estimates(lublin_trace(3000, machine_procs=64, seed=1), seed=1), lublin)
    argv = ["whatif", "--project", str(project), *(a.replace("{lublin}", lublin) for a in args)]
    assert main(argv) == 2
    assert pytest.importorskip("re").search(message, capsys.readouterr().err)
    assert not (project / "results").exists() and not (project / ".snakemake").exists()


def test_dry_run_writes_the_configuration(project: Path) -> None:
    out = project / "wi.yaml"
    code = main(
        [
            "whatif",
            "--project",
            str(project),
            "--config-out",
            str(out),
            "--try",
            "bf_window=1h,2d",
            "--grid",
            "PriorityWeightAge=0,100",
            "--weeks",
            "3",
            "--replicates",
            "4",
            "--dry-run",
        ]
    )
    assert code == 0
    config = yaml.safe_load(out.read_text())
    assert config["studies"] == ["whatif"]
    assert config["whatif"]["try"] == {"bf_window": ["1h", "2d"]}
    assert config["whatif"]["grid"] == {"PriorityWeightAge": ["0", "100"]}
    assert config["whatif"]["weeks"] == 3 and config["whatif"]["bootstrap"] == {"replicates": 4}
