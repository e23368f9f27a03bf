"""scheduler.core.step_pool: steps run in worker processes do what they do in the caller's
process (same result, same files, same error messages), setup calls reach every worker, and a
dead worker fails its step with a clear error without stopping the next steps."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import pool_steps

from scheduler.core.step_pool import PARENT_POLL_S, StepPool, WorkerError
from scheduler.core.steps import StepError


@pytest.fixture(scope="module")
def pool():
    pool = StepPool(2, setup=[(pool_steps.remember, ("registered",))])
    yield pool
    pool.shutdown()


def test_a_step_runs_in_another_process_and_returns_its_result(pool: StepPool) -> None:
    pid, total = pool.run(pool_steps.pid_and_sum, [1, 2, 3], offset=10)
    assert total == 16
    assert pid != os.getpid()


def test_setup_calls_run_in_the_worker_before_its_steps(pool: StepPool) -> None:
    assert pool.run(pool_steps.remembered) == ["registered"]
    assert pool_steps.REMEMBERED == []  # not in this process


def test_a_step_writes_its_files(pool: StepPool, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    pool.run(pool_steps.write_file, str(target), "written by a worker")
    assert target.read_text() == "written by a worker"


def test_many_threads_share_the_pool(pool: StepPool) -> None:
    results: dict[int, int] = {}

    def call(k: int) -> None:
        results[k] = pool.run(pool_steps.pid_and_sum, list(range(k)))[1]

    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {k: sum(range(k)) for k in range(8)}
    pids = {pool.run(pool_steps.pid_and_sum, [])[0] for _ in range(6)}
    assert len(pids) <= 2 and os.getpid() not in pids


def test_a_step_error_keeps_its_type_and_message(pool: StepPool) -> None:
    message = "trace.swf:3: field run_s: not a number (log: logs/x.log)"
    with pytest.raises(StepError, match=f"^{re.escape(message)}$"):
        pool.run(pool_steps.fail_with_step_error, "trace.swf")


def test_an_error_that_cannot_travel_keeps_its_message(pool: StepPool) -> None:
    message = "TraceFormatError: trace.swf:3: field run_s: not a number"
    with pytest.raises(WorkerError, match=re.escape(message)):
        pool.run(pool_steps.fail_with_trace_error, "trace.swf")
    assert pool.run(pool_steps.pid_and_sum, [4])[1] == 4


def test_a_dead_worker_fails_its_step_and_the_next_step_gets_a_new_pool() -> None:
    pool = StepPool(1, setup=[(pool_steps.remember, ("again",))])
    try:
        first = pool.run(pool_steps.pid_and_sum, [])[0]
        died = r"pool_steps\.die: the worker process running it died"
        with pytest.raises(WorkerError, match=died):
            pool.run(pool_steps.die)
        second, total = pool.run(pool_steps.pid_and_sum, [5])
        assert total == 5 and second != first
        assert pool.run(pool_steps.remembered) == ["again"]
    finally:
        pool.shutdown()


def test_a_pool_needs_a_process() -> None:
    with pytest.raises(ValueError, match="at least 1 process"):
        StepPool(0)


def test_workers_exit_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A Snakemake killed with SIGKILL leaves no worker behind: each exits within about
    PARENT_POLL_S seconds of its parent."""
    script = tmp_path / "parent.py"
    pids = tmp_path / "pids"
    script.write_text(
        "import time\n"
        "from scheduler.core.step_pool import StepPool\n"
        "from support import pool_steps\n"
        "if __name__ == '__main__':  # spawned workers import this module again\n"
        "    pool = StepPool(2)\n"
        "    pids = {pool.run(pool_steps.pid_and_sum, [])[0] for _ in range(8)}\n"
        f"    open({str(pids)!r}, 'w').write(' '.join(map(str, pids)))\n"
        "    time.sleep(600)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, str(script)], env=env)
    try:
        deadline = time.monotonic() + 120
        while not (pids.is_file() and pids.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = [int(pid) for pid in pids.read_text().split()]
        assert workers and all(_alive(pid) for pid in workers)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10 * PARENT_POLL_S
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:  # a zombie is not alive
        return handle.read().split(")")[-1].split()[0] != "Z"
