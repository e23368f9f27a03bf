"""Drive RLScheduler's own environment for ``scheduler bench --only rl-env`` (a standalone script).

Run by path under the Python of an RLScheduler installation (old gym 0.17, numpy), never
imported by schedlab; it imports nothing from schedlab. It copies RLScheduler's environment
(``HPCSimPickJobs.py``, ``job.py``, ``cluster.py``; Zhang et al., SC'20, code
``DIR-LAB/deep-batch-scheduler``) from the repository the user names (a checkout directory, or a
git directory read with ``git show HEAD:<file>``) into a temporary directory, imports its class
``HPCEnv`` from there, with a stand-in for ``tensorflow`` (the module imports it at the top; the
environment class does not use it), and loads one SWF log as its ``my_init`` does.

Protocol (one JSON object a line): after loading it prints ``{"ready": ...}`` (the log's jobs,
the repository's commit, the load time in s). Then each line read from stdin is a command,
answered by one line:

- ``{"backfill": true|false, "window": null|int}``: one round, the test protocol of RLScheduler's
  ``compare-pick-jobs.py``: ``env.seed(seed)``, then for each of ``count`` sequences
  ``env.reset_for_test(length, 0)`` (its start drawn from the seeded generator),
  ``env.build_observation()``, then ``env.step_for_test(0)`` until the sequence is done: an agent
  that always picks row 0. Answer: per sequence its start (job index), decisions (step calls),
  wall times (s) of the reset (with the first observation) and of the steps, the final reward
  (minus the mean bounded slowdown, as its ``step`` returns it) and the most jobs waiting at a
  decision. ``window``: the rows of its observation (its module constant ``MAX_QUEUE_SIZE``,
  128), set for this round only. Up to that many waiting jobs its rows are the waiting jobs in
  submit order; beyond, they are a mix of other orders, whose first row is the job of the
  shortest requested time: with a window as long as the sequence, row 0 is always the first
  waiting job in submit order (a cross-check of the schedules, not a timing).
- ``{"quit": true}`` or the end of stdin: exit.

The test protocol's ``step_for_test`` is timed, not ``step``: both schedule the job and build the
next observation alike, but ``step``'s last call compares with the heuristics' scores that
``reset`` (not ``reset_for_test``) computes, and fails without them.

RLScheduler's code prints to stdout; this script sends everything but its answers to stderr.
An error is answered ``{"error": "..."}`` with exit code 1.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path
from typing import Any, TextIO

#: The files of RLScheduler's environment, copied from the repository.
ENV_FILES = ("HPCSimPickJobs.py", "job.py", "cluster.py")


def extract(repo: Path, into: Path) -> str:
    """Copy :data:`ENV_FILES` from ``repo`` into ``into``; return the repository's commit
    (``"checkout"`` for a directory without git)."""
    if all((repo / name).is_file() for name in ENV_FILES):
        for name in ENV_FILES:
            shutil.copyfile(repo / name, into / name)
        done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=False)  # fmt: skip
        return done.stdout.strip() if done.returncode == 0 else "checkout"
    for name in ENV_FILES:
        done = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{name}"],
                              capture_output=True, check=False)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{repo}: neither a checkout holding {name} nor a git directory "
                               f"with HEAD:{name} ({done.stderr.decode().strip()})")  # fmt: skip
        (into / name).write_bytes(done.stdout)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    return commit.stdout.strip()


def plain_log(path: Path, into: Path) -> Path:
    """``path`` itself, or (``.gz``) its decompressed copy in ``into`` (RLScheduler reads text)."""
    if path.suffix != ".gz":
        return path
    out = into / path.with_suffix("").name
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def run_round(
    env: Any, module: Any, command: dict[str, Any], length: int, count: int, seed: int
) -> dict[str, Any]:
    """One round of ``count`` sequences (module docstring); wall times in seconds."""
    env.backfil = bool(command["backfill"])  # read by its ``schedule`` only: one loaded log
    window = module.MAX_QUEUE_SIZE  # serves both settings, and every window
    module.MAX_QUEUE_SIZE = int(command.get("window") or window)
    try:
        return _sequences(env, length, count, seed)
    finally:
        module.MAX_QUEUE_SIZE = window


def _sequences(env: Any, length: int, count: int, seed: int) -> dict[str, Any]:
    env.seed(seed)
    sequences = []
    for _ in range(count):
        started = time.perf_counter()
        env.reset_for_test(length, 0)
        env.build_observation()
        reset_s = time.perf_counter() - started
        decisions, most_waiting, done = 0, 0, False
        started = time.perf_counter()
        while not done:
            most_waiting = max(most_waiting, len(env.job_queue))
            _, total, done, _ = env.step_for_test(0)
            decisions += 1
        steps_s = time.perf_counter() - started
        sequences.append({
            "start": int(env.start), "decisions": decisions, "reset_s": reset_s,
            "steps_s": steps_s, "reward": -float(total), "most_waiting": most_waiting,
        })  # fmt: skip
    return {"sequences": sequences}


def main(argv: list[str] | None = None) -> int:
    """Load the log, answer ``ready``, then serve commands (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True,
                        help="RLScheduler's checkout or git directory")  # fmt: skip
    parser.add_argument("--log", type=Path, required=True, help="the SWF log (.swf or .swf.gz)")
    parser.add_argument("--length", type=int, required=True, help="jobs per sequence")
    parser.add_argument("--count", type=int, required=True, help="sequences per round")
    parser.add_argument("--seed", type=int, required=True, help="the sequences' seed")
    parser.add_argument("--job-slice", type=int, default=0,
                        help="its batch_job_slice (0: the whole log)")  # fmt: skip
    args = parser.parse_args(argv)
    answer = sys.stdout
    sys.stdout = sys.stderr  # RLScheduler's prints never reach the answers
    try:
        with tempfile.TemporaryDirectory(prefix="rlscheduler-env-") as tmp:
            where = Path(tmp)
            commit = extract(args.repo, where)
            sys.path.insert(0, str(where))
            sys.modules.setdefault("tensorflow", types.ModuleType("tensorflow"))
            module = importlib.import_module("HPCSimPickJobs")

            started = time.perf_counter()
            env = module.HPCEnv(backfil=False, job_score_type=0, batch_job_slice=args.job_slice,
                         build_sjf=False)  # fmt: skip
            env.my_init(workload_file=str(plain_log(args.log, where)))
            load_s = time.perf_counter() - started
            _answer(answer, {"ready": True, "jobs": env.loads.size(), "commit": commit,
                             "load_s": load_s})  # fmt: skip
            for line in sys.stdin:
                command = json.loads(line)
                if command.get("quit"):
                    break
                _answer(answer, run_round(env, module, command, args.length, args.count,
                                          args.seed))  # fmt: skip
    except Exception as exc:
        traceback.print_exc()
        _answer(answer, {"error": f"{type(exc).__name__}: {exc}"})
        return 1
    return 0


def _answer(stream: TextIO, message: dict[str, Any]) -> None:
    stream.write(json.dumps(message) + "\n")
    stream.flush()


if __name__ == "__main__":
    sys.exit(main())
