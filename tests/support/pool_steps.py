"""Step functions for tests/core/test_step_pool.py: module-level, so that a spawned worker
process imports them by name (tests/ is on sys.path, which spawned workers inherit)."""

from __future__ import annotations

import os
import time

from scheduler.core.errors import TraceFormatError
from scheduler.core.steps import StepContext, StepError, workflow_step

#: Set by :func:`remember` in a worker's setup.
REMEMBERED: list[str] = []


def remember(value: str) -> None:
    REMEMBERED.append(value)


def remembered() -> list[str]:
    return list(REMEMBERED)


def pid_and_sum(values: list[int], *, offset: int = 0) -> tuple[int, int]:
    return os.getpid(), sum(values) + offset


def write_file(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def fail_with_step_error(path: str) -> None:
    raise StepError(f"{path}:3: field run_s: not a number (log: logs/x.log)")


def fail_with_trace_error(path: str) -> None:
    # keyword-only arguments: the exception cannot be rebuilt from its args after pickling
    raise TraceFormatError(path, "not a number", line=3, field="run_s")


def die() -> None:
    os._exit(3)


@workflow_step
def busy_step(seconds: float, *, ctx: StepContext) -> int:
    """A workflow step that burns about ``seconds`` of CPU in its thread and holds 64 MB (for
    the timing line tests/cli/test_timings.py reads)."""
    block = bytearray(64 * 2**20)
    block[:: 4096] = b"x" * len(range(0, len(block), 4096))  # touch every page
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
    return len(block)
