"""``scheduler bench --only rl-env`` (scheduler.cli.bench.rl) on tiny inputs: the figures'
shape, the recorded reason when RLScheduler's side cannot run, and the driver's protocol against
a stand-in for RLScheduler's environment (no test needs RLScheduler's code or its Python)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scheduler.cli.bench.rl import (
    BUNDLED_LUBLIN,
    RLSCHEDULER_LABEL,
    RlsDriver,
    RlsDriverError,
    format_rl_env_figures,
    rl_env_figures,
    rlscheduler_skip_reason,
)
from scheduler.cli.main import build_parser

#: The stand-in RLScheduler Python: this one (numpy is all the driver and the stand-in need).
PYTHON = Path(sys.executable)
TINY = {"length": 32, "count": 1, "rounds": 1}
SCHEDLAB_RUNS = ["schedlab easy", "schedlab rlscheduler", "vector easy", "vector rlscheduler"]
SETTINGS = ["no backfilling", "backfilling"]

#: A stand-in for RLScheduler's ``HPCSimPickJobs.py`` with the interface the driver uses: it
#: prints to stdout (which must not reach the driver's answers), draws starts as
#: ``reset_for_test`` does, and starts one job per step in submit order.
FAKE_ENV = """
import numpy as np

MAX_QUEUE_SIZE = 128


class _Loads:
    def __init__(self, path):
        self.jobs = sum(1 for line in open(path) if line.strip() and not line.startswith(";"))

    def size(self):
        return self.jobs


class HPCEnv:
    def __init__(self, backfil=False, job_score_type=0, batch_job_slice=0, build_sjf=False):
        print("Initialize Simple HPC Env")
        self.backfil, self.batch_job_slice = backfil, batch_job_slice

    def my_init(self, workload_file=""):
        self.loads = _Loads(workload_file)

    def seed(self, seed=None):
        self.np_random = np.random.RandomState(seed)

    def reset_for_test(self, num, start):
        limit = self.batch_job_slice or self.loads.size()
        self.start = self.np_random.randint(num, limit - num - 1)
        self.job_queue = list(range(num))

    def build_observation(self):
        return np.zeros(MAX_QUEUE_SIZE * 8)

    def step_for_test(self, a):
        self.job_queue.pop(0)
        if self.job_queue:
            return [self.build_observation(), 0, False, None]
        return [None, 2.5, True, None]
"""


def _fake_repo(root: Path, env: str = FAKE_ENV) -> Path:
    root.mkdir()
    (root / "HPCSimPickJobs.py").write_text(env)
    (root / "job.py").write_text("")
    (root / "cluster.py").write_text("")
    return root


def _check_schedlab_side(log: dict, runs: list[str]) -> None:
    assert log["jobs"] == 10_000 and len(log["starts"]) == TINY["count"]
    assert list(log["settings"]) == SETTINGS
    for setting in log["settings"].values():
        assert list(setting["runs"]) == runs
        for run in setting["runs"].values():
            assert run["decisions"] > 0
            rate = run["decisions_per_s"]
            assert 0 < rate["min"] <= rate["median"] <= rate["max"]
            assert run["episode_s"]["median"] > run["reset_s"]["median"] > 0
    assert list(log["isolation"]) == [f"{s}, {b}" for b in SETTINGS
                                      for s in ("easy", "rlscheduler")]  # fmt: skip
    for semantics, layers in (("easy", ["compiled run", "decision loop", "env.step"]),
                              ("rlscheduler", ["compiled run", "env.step"])):  # fmt: skip
        part = log["isolation"][f"{semantics}, backfilling"]
        assert list(part["timings"]) == layers and part["decisions"] > 0
        assert part["timings"]["compiled run"]["ratio_median"] == 1.0


def test_without_rlscheduler_schedlab_is_measured_and_the_skip_recorded(tmp_path: Path) -> None:
    missing = tmp_path / "SDSC-SP2.swf.gz"
    figures = rl_env_figures({"Lublin-256": BUNDLED_LUBLIN, "SDSC-SP2": missing}, **TINY)
    assert figures["rlscheduler_skipped"] == "--rlscheduler-python and --rlscheduler-repo not given"
    assert "rlscheduler" not in figures and figures["skipped"] == [str(missing)]
    assert list(figures["logs"]) == ["Lublin-256"]
    log = figures["logs"]["Lublin-256"]
    _check_schedlab_side(log, SCHEDLAB_RUNS)
    assert all("ratio" not in s and "check" not in s for s in log["settings"].values())
    lines = format_rl_env_figures(figures)
    assert lines[1] == ("RLScheduler's environment skipped: --rlscheduler-python and "
                        "--rlscheduler-repo not given")  # fmt: skip
    assert lines[-1] == f"  skipped (not found): {missing}"


def test_the_skip_reasons_name_the_option(tmp_path: Path) -> None:
    assert rlscheduler_skip_reason(PYTHON, None) == "--rlscheduler-repo not given"
    assert rlscheduler_skip_reason(None, tmp_path) == "--rlscheduler-python not given"
    nowhere = tmp_path / "nowhere"
    not_found = "not found: " + str(nowhere)
    assert rlscheduler_skip_reason(nowhere, tmp_path) == f"--rlscheduler-python: {not_found}"
    assert rlscheduler_skip_reason(PYTHON, nowhere) == f"--rlscheduler-repo: {not_found}"
    assert rlscheduler_skip_reason(PYTHON, tmp_path) is None


def test_a_failing_driver_is_recorded_for_its_log(tmp_path: Path) -> None:
    """A repository without RLScheduler's files: the driver answers an error, recorded (and
    printed) in the log's figures; schedlab's side is still measured."""
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RlsDriverError, match=r"neither a checkout holding HPCSimPickJobs\.py"):
        RlsDriver(PYTHON, empty, BUNDLED_LUBLIN, length=32, count=1, seed=1,
                  job_slice=None)  # fmt: skip
    figures = rl_env_figures({"Lublin-256": BUNDLED_LUBLIN}, rlscheduler_python=PYTHON,
                             rlscheduler_repo=empty, **TINY)  # fmt: skip
    log = figures["logs"]["Lublin-256"]
    assert "neither a checkout" in log["rlscheduler_skipped"]
    _check_schedlab_side(log, SCHEDLAB_RUNS)
    assert any(line.startswith("  RLScheduler's environment skipped: ")
               for line in format_rl_env_figures(figures))  # fmt: skip


def test_the_driver_protocol_against_a_stand_in(tmp_path: Path) -> None:
    """The whole comparison with a stand-in ``HPCEnv`` run by this Python: its stdout noise
    stays out of the answers, rounds alternate, the ratios and the cross-check are computed
    (and fail: the stand-in's starts and rewards are not RLScheduler's)."""
    figures = rl_env_figures({"Lublin-256": BUNDLED_LUBLIN}, rlscheduler_python=PYTHON,
                             rlscheduler_repo=_fake_repo(tmp_path / "rls"), **TINY)  # fmt: skip
    assert "rlscheduler_skipped" not in figures
    log = figures["logs"]["Lublin-256"]
    assert log["rlscheduler_commit"] == "checkout"
    _check_schedlab_side(log, [*SCHEDLAB_RUNS, RLSCHEDULER_LABEL])
    for setting in log["settings"].values():
        assert setting["runs"][RLSCHEDULER_LABEL]["decisions"] == TINY["length"]
        assert set(setting["ratio"]) == set(SCHEDLAB_RUNS)
        check = setting["check"]
        assert check["equal"] is False and check["starts_equal"] is False
        assert check["rewards"][f"{RLSCHEDULER_LABEL}, 32 rows"] == [-2.5]
        assert check["widened_window"] == TINY["length"] and check["within_window"] == 1
    text = "\n".join(format_rl_env_figures(figures))
    assert "ratio of medians to RLScheduler HPCEnv" in text and "cross-check MISMATCH" in text


def test_a_driver_failing_during_a_round_leaves_no_figures_of_its_side(tmp_path: Path) -> None:
    broken = FAKE_ENV.replace("        self.job_queue.pop(0)\n",
                              "        assert not self.backfil, 'no backfilling here'\n"
                              "        self.job_queue.pop(0)\n")  # fmt: skip
    repo = _fake_repo(tmp_path / "rls", broken)
    figures = rl_env_figures({"Lublin-256": BUNDLED_LUBLIN}, rlscheduler_python=PYTHON,
                             rlscheduler_repo=repo, **TINY)  # fmt: skip
    log = figures["logs"]["Lublin-256"]
    assert log["rlscheduler_skipped"].startswith("failed during a round: AssertionError: no "
                                                 "backfilling here")  # fmt: skip
    _check_schedlab_side(log, SCHEDLAB_RUNS)
    assert "rlscheduler_commit" not in log


def test_the_rlscheduler_options_reach_the_inputs() -> None:
    args = build_parser().parse_args(["bench", "--only", "rl-env", "--rlscheduler-python", "p",
                                      "--rlscheduler-repo", "r"])  # fmt: skip
    assert (args.rlscheduler_python, args.rlscheduler_repo) == (Path("p"), Path("r"))
    args = build_parser().parse_args(["bench"])
    assert args.rlscheduler_python is None and args.rlscheduler_repo is None
