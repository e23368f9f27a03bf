"""Run workflow steps in a persistent pool of worker processes.

Why: Snakemake runs the ``run:`` rules of a local study as threads of its own process (the
default profile's ``force-use-threads``: one Python start-up and one numba cache load for the
whole study instead of a new Snakemake process per job). The compiled kernels release the GIL,
but the Python around them (tables, resampling, per-week set-up, figures) does not, so two
simulation threads on two cores wait for each other: the five-log tuning study's jobs took
2,061 s of job time as threads against 1,603 s as separate processes (docs/benchmarks.md). A
:class:`StepPool` keeps ``processes`` worker processes alive for the whole Snakemake run; a
rule's thread hands its step call to a worker and waits (without the GIL). No Snakemake start-up
per job, no shared GIL.

Invariants:

- A step called through the pool does exactly what it does when called in the thread: same
  arguments, same files (the steps write their own outputs atomically and their own logs), same
  return value, same exception message.
- Workers start with the ``spawn`` method (a fresh interpreter: safe under a multithreaded
  Snakemake, nothing inherited but the environment and the working directory) and run the pool's
  ``setup`` calls once each before any step (process-wide registrations the main process made,
  e.g. the learned policies' names).
- A worker that dies (killed, out of memory) fails the steps it was running with an error that
  says so; the next step starts a fresh pool.
- A worker whose parent dies (Snakemake killed, even with SIGKILL) exits within
  :data:`PARENT_POLL_S` seconds instead of living on as an orphan.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from scheduler.core.errors import SchedlabError
from scheduler.core.steps import mark_dedicated_process

__all__ = ["SetupCall", "StepPool", "WorkerError"]

#: A call run once in every worker before its first step: ``(function, args)``; the function
#: must be importable by name (module-level), the arguments picklable.
SetupCall = tuple[Callable[..., Any], tuple[Any, ...]]


class WorkerError(SchedlabError):
    """A step failed in a worker process with an exception that cannot be sent back as is (or
    the worker itself died); the message holds the original exception and its traceback."""


#: How often a worker checks that the process that started it is alive, seconds.
PARENT_POLL_S = 1.0


def _exit_with_parent(parent: int) -> None:
    """Watch the parent process; exit this worker at once when it is gone (its parent id
    changes: the orphan is adopted by init or a subreaper)."""
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(70)  # EX_SOFTWARE: nothing to clean up, the steps write atomically


def _run_setup(parent: int, setup: Sequence[SetupCall]) -> None:
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    mark_dedicated_process()
    for function, args in setup:
        function(*args)


def _call(step: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Worker side of :meth:`StepPool.run`: call the step; an exception that would not survive
    the trip back to the caller's process is replaced by a :class:`WorkerError` with its text."""
    try:
        return step(*args, **kwargs)
    except BaseException as error:
        try:
            pickle.loads(pickle.dumps(error))
        except Exception:
            text = "".join(traceback.format_exception(error))
            raise WorkerError(f"{type(error).__name__}: {error}\n{text}") from None
        raise


class StepPool:
    """A pool of ``processes`` worker processes that run step functions (started on the first
    call, not before; a dry run starts none).

    Parameters
    ----------
    processes
        Number of worker processes (at least 1): the cores Snakemake was given, so that every
        job Snakemake runs at once has a worker.
    setup
        Calls each worker runs once at its start (see :data:`SetupCall`).
    """

    def __init__(self, processes: int, setup: Sequence[SetupCall] = ()) -> None:
        if processes < 1:
            raise ValueError(f"a step pool needs at least 1 process, got {processes}")
        self.processes = processes
        self.setup = tuple(setup)
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    max_workers=self.processes,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_run_setup,
                    initargs=(os.getpid(), self.setup),
                )
            return self._executor

    def run(self, step: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Call ``step(*args, **kwargs)`` in a worker and return its result (or raise its
        exception). Blocks the calling thread, not the others: call it from many threads."""
        executor = self._pool()
        try:
            return executor.submit(_call, step, args, kwargs).result()
        except BrokenProcessPool as error:
            with self._lock:
                if self._executor is executor:
                    self._executor = None
            executor.shutdown(wait=False, cancel_futures=True)
            name = f"{step.__module__}.{step.__qualname__}"
            raise WorkerError(
                f"{name}: the worker process running it died ({error}); "
                "the next step starts a new worker pool"
            ) from error

    def shutdown(self) -> None:
        """Stop the workers (waits for running steps). The pool restarts if called again."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
