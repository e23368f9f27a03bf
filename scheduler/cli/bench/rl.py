"""The ``rl-env`` group: decisions per second of the Gymnasium environment
(:class:`scheduler.rl.env.SchedulingEnv`) against RLScheduler's own environment class on the same
sequences with the same agent.

RLScheduler (Zhang et al., SC'20, code ``DIR-LAB/deep-batch-scheduler``) trains and tests its
agent in its class ``HPCEnv`` (``HPCSimPickJobs.py``), Python over lists of job objects.
schedlab's environment steps a compiled kernel in either semantics: ``"easy"`` (schedlab's EASY)
or ``"rlscheduler"`` (a reproduction of ``HPCEnv``'s schedule, :mod:`scheduler.sim.rlscheduler`).

The agent always picks row 0. In schedlab's environment row 0 is the first waiting job in submit
order; in ``HPCEnv`` too while at most 128 jobs wait (its window, ``MAX_QUEUE_SIZE``), and beyond
that the job of the shortest requested time (its observation then mixes other orders). The
sequences are RLScheduler's test protocol (``compare-pick-jobs.py``): ``count`` sequences of
``length`` jobs whose starts its ``reset_for_test`` draws after ``env.seed(seed)`` from the first
``job_slice`` jobs (:meth:`scheduler.rl.episodes.EpisodeSource.test_starts`, checked against
the starts ``HPCEnv`` draws), with and without backfilling.

``HPCEnv`` runs in a subprocess, under the Python the user names (old gym 0.17, numpy), driven
by the standalone script ``rlscheduler_driver.py`` beside this module, which copies its three
files from the user's RLScheduler repository into a temporary directory (schedlab holds none of
its code). Without that Python and repository, schedlab's side is measured alone and the reason
is recorded (``rlscheduler_skipped``).

A decision is one ``step`` call (``step_for_test`` in ``HPCEnv``, its test protocol's step); an
episode is the reset (with the first observation) and the steps until the last job starts. The
vector environment (``vector <semantics>``) steps all the round's sequences in one call; a step
is then one decision of each, and it runs until every sequence has finished once. A
round runs every sequence once in each setting; rounds alternate (schedlab, ``HPCEnv``, schedlab,
...), so that a busy machine slows both alike.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from scheduler.cli.bench.group import BenchInputs, keyed_group
from scheduler.cli.bench.timing import side_by_side
from scheduler.rl.env import SEMANTICS, WAIT_SCALE_S, SchedulingEnv
from scheduler.rl.episodes import EpisodeSource
from scheduler.rl.vector import SchedulingVectorEnv
from scheduler.sim.agent import FEATURE_NAMES, AgentSimulation
from scheduler.sim.rlscheduler import RlsWorkload, rls_workload, run_rls_sequence
from scheduler.traces.swf import read_swf

__all__ = [
    "BUNDLED_LUBLIN",
    "DRIVER",
    "GROUP",
    "REWARD_RTOL",
    "RLSCHEDULER_LABEL",
    "RL_ENV_LOGS",
    "RL_ENV_TARGET_RATIO",
    "RlsDriver",
    "RlsDriverError",
    "format_rl_env_figures",
    "rl_env_figures",
    "rlscheduler_skip_reason",
]

#: The logs measured, in this order: Lublin-256 (in ``--traces-dir``, else the bundled copy),
#: then the archive logs of RLScheduler's evaluation when ``--traces-dir`` holds them.
RL_ENV_LOGS = ("Lublin-256", "SDSC-SP2", "HPC2N")
#: The bundled Lublin-256 log (RLScheduler's ``lublin_256.swf``).
BUNDLED_LUBLIN = Path(__file__).resolve().parents[3] / "resources" / "Lublin-256.swf.gz"
#: The standalone script that runs ``HPCEnv`` in a subprocess (executed by path).
DRIVER = Path(__file__).with_name("rlscheduler_driver.py")
#: The target: schedlab's decisions per second over ``HPCEnv``'s, ratio of the medians.
RL_ENV_TARGET_RATIO = 50.0
#: Relative tolerance of the reward cross-check (the final rewards of both environments).
REWARD_RTOL = 1e-9
#: The label of RLScheduler's environment in the figures.
RLSCHEDULER_LABEL = "RLScheduler HPCEnv"
#: The backfilling settings, by label.
_BACKFILL = {"no backfilling": False, "backfilling": True}
#: The labels of schedlab's runs, by semantics: the environment, and the vector environment
#: stepping every sequence of a round at once (:mod:`scheduler.rl.vector`).
_SCHEDLAB = {semantics: f"schedlab {semantics}" for semantics in SEMANTICS}
_VECTOR = {semantics: f"vector {semantics}" for semantics in SEMANTICS}

#: One episode as both sides record it: its start (job index), decisions (step calls), wall
#: times (s) of the reset and of the steps, the final reward and the most jobs waiting.
Episode = dict[str, Any]


class RlsDriverError(RuntimeError):
    """RLScheduler's environment could not be run (the message says why)."""


class RlsDriver:
    """``HPCEnv`` in a subprocess (:data:`DRIVER`) over one log, for rounds of sequences.

    Parameters
    ----------
    python
        The Python of an RLScheduler installation (gym 0.17, numpy).
    repo
        RLScheduler's repository: a checkout directory or a git directory.
    log
        The SWF log (``.swf`` or ``.swf.gz``).
    length, count, seed, job_slice
        The sequences (module docstring); ``job_slice`` ``None``: the whole log.
    """

    def __init__(
        self,
        python: Path,
        repo: Path,
        log: Path,
        *,
        length: int,
        count: int,
        seed: int,
        job_slice: int | None,
    ) -> None:
        # the driver's messages, read when it fails; closed by close()
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        command = [
            str(python), str(DRIVER), "--repo", str(repo), "--log", str(log),
            "--length", str(length), "--count", str(count), "--seed", str(seed),
            "--job-slice", str(job_slice or 0),
        ]  # fmt: skip
        try:
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=self._stderr,
                                             text=True)  # fmt: skip
        except OSError as exc:
            self._stderr.close()
            raise RlsDriverError(f"cannot run {python}: {exc}") from exc
        try:
            #: The driver's first answer: ``jobs``, ``commit`` and ``load_s`` (s).
            self.ready: dict[str, Any] = self._answer()
        except BaseException:
            self.close()
            raise

    def round(self, backfill: bool, window: int | None = None) -> list[Episode]:
        """One round: every sequence once (``window``: the rows of ``HPCEnv``'s observation
        for this round, ``None``: its own 128)."""
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps({"backfill": backfill, "window": window}) + "\n")
        self._process.stdin.flush()
        return list(self._answer()["sequences"])

    def _answer(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        try:
            answer = json.loads(line) if line else None
        except json.JSONDecodeError:
            answer = None
        if not isinstance(answer, dict):
            code = self._process.wait()
            raise RlsDriverError(f"the driver exited with code {code}: {self._stderr_tail()}")
        if "error" in answer:
            raise RlsDriverError(f"{answer['error']} ({self._stderr_tail()})")
        return answer

    def _stderr_tail(self, lines: int = 5) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read().strip().splitlines()[-lines:]
        return " | ".join(tail) or "no message"

    def close(self) -> None:
        """Ask the driver to quit and wait for it (kill it after 30 s)."""
        try:
            if self._process.poll() is None:
                assert self._process.stdin is not None
                try:
                    self._process.stdin.write(json.dumps({"quit": True}) + "\n")
                    self._process.stdin.close()
                except OSError:
                    pass
                try:
                    self._process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
        finally:
            self._stderr.close()

    def __enter__(self) -> RlsDriver:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def rlscheduler_skip_reason(python: Path | None, repo: Path | None) -> str | None:
    """Why RLScheduler's side cannot run with these options, or ``None`` when it can try."""
    missing = [name for name, value in (("--rlscheduler-python", python),
                                        ("--rlscheduler-repo", repo)) if value is None]  # fmt: skip
    if missing:
        return f"{' and '.join(missing)} not given"
    assert python is not None and repo is not None
    if not python.is_file():
        return f"--rlscheduler-python: not found: {python}"
    if not repo.exists():
        return f"--rlscheduler-repo: not found: {repo}"
    return None


def rl_env_figures(
    logs: Mapping[str, Path],
    *,
    rlscheduler_python: Path | None = None,
    rlscheduler_repo: Path | None = None,
    length: int = 1024,
    count: int = 10,
    seed: int = 1,
    job_slice: int | None = 10_000,
    rounds: int = 3,
    window: int = 128,
) -> dict[str, object]:
    """Decisions per second of schedlab's environment (both semantics) and of ``HPCEnv`` on
    RLScheduler's test sequences of each log of ``logs`` (name -> SWF file), side by side.

    For each log: one warm-up episode of schedlab's environment in each setting (compilation or
    cache load); then ``rounds`` rounds, each every sequence once in each setting (backfilling
    or not, each semantics) in schedlab's environment, then in ``HPCEnv``. Per run: decisions,
    decisions per second (all decisions of a round over its wall time, resets included) and
    wall time per episode (s), median, min and max over the rounds; the ratio of schedlab's
    median to ``HPCEnv``'s. Then the cross-check (:func:`_check`) and schedlab's step cost in
    isolation (:func:`_isolation`).

    ``HPCEnv`` runs when ``rlscheduler_python`` and ``rlscheduler_repo`` are given
    (:class:`RlsDriver`); otherwise, or when it fails, the reason is recorded as
    ``rlscheduler_skipped`` (of the whole group, or of one log). Missing logs are listed under
    ``skipped``.
    """
    out: dict[str, object] = {
        "length": length, "count": count, "seed": seed, "job_slice": job_slice,
        "rounds": rounds, "window": window, "target_ratio": RL_ENV_TARGET_RATIO,
        "reward_rtol": REWARD_RTOL,
    }  # fmt: skip
    reason = rlscheduler_skip_reason(rlscheduler_python, rlscheduler_repo)
    if reason is None:
        out["rlscheduler"] = {"python": str(rlscheduler_python), "repo": str(rlscheduler_repo)}
    else:
        out["rlscheduler_skipped"] = reason
    figures: dict[str, object] = {}
    skipped: list[str] = []
    for name, path in logs.items():
        if not path.is_file():
            skipped.append(str(path))
            continue
        options = {"length": length, "count": count, "seed": seed, "job_slice": job_slice}
        driver: RlsDriver | None = None
        log: dict[str, object] = {}
        if reason is None:
            assert rlscheduler_python is not None and rlscheduler_repo is not None
            try:
                driver = RlsDriver(rlscheduler_python, rlscheduler_repo, path, **options)
            except RlsDriverError as exc:
                log["rlscheduler_skipped"] = str(exc)
        try:
            log.update(_log_figures(path, name, driver, rounds=rounds, window=window, **options))
        finally:
            if driver is not None:
                driver.close()
        figures[name] = log
    out["logs"] = figures
    if skipped:
        out["skipped"] = skipped
    return out


def _log_figures(
    path: Path,
    name: str,
    driver: RlsDriver | None,
    *,
    length: int,
    count: int,
    seed: int,
    job_slice: int | None,
    rounds: int,
    window: int,
) -> dict[str, object]:
    """The figures of one log (:func:`rl_env_figures`)."""
    workload = rls_workload(read_swf(path), name)
    source = EpisodeSource(workload, length, job_slice=job_slice)
    starts = [int(s) for s in source.test_starts(count, seed)]
    envs = {
        (label, semantics): SchedulingEnv(
            source, window=window, backfill=backfill, semantics=semantics
        )
        for label, backfill in _BACKFILL.items()
        for semantics in SEMANTICS
    }
    vectors = {
        (label, semantics): SchedulingVectorEnv(
            source, len(starts), window=window, backfill=backfill, semantics=semantics,
            starts=starts,
        )
        for label, backfill in _BACKFILL.items()
        for semantics in SEMANTICS
    }  # fmt: skip
    for env in envs.values():
        _schedlab_episodes(env, starts[:1])  # warm-up: compilation or cache load
    for vector in vectors.values():
        _vector_episodes(vector)
    runs: dict[tuple[str, str], list[list[Episode]]] = {}
    widened: dict[str, list[Episode]] = {}
    out: dict[str, object] = {"path": str(path), "jobs": workload.size, "starts": starts}
    for _ in range(rounds):
        for (label, semantics), env in envs.items():
            runs.setdefault((label, _SCHEDLAB[semantics]), []).append(
                _schedlab_episodes(env, starts)
            )
        for (label, semantics), vector in vectors.items():
            runs.setdefault((label, _VECTOR[semantics]), []).append(_vector_episodes(vector))
        if driver is not None:
            try:
                for label, backfill in _BACKFILL.items():
                    runs.setdefault((label, RLSCHEDULER_LABEL), []).append(driver.round(backfill))
            except RlsDriverError as exc:
                out["rlscheduler_skipped"] = f"failed during a round: {exc}"
                driver = None
    if driver is not None:
        out["rlscheduler_commit"] = driver.ready["commit"]
        try:
            widened = {label: driver.round(backfill, window=length)
                       for label, backfill in _BACKFILL.items()}  # fmt: skip
        except RlsDriverError as exc:
            out["rlscheduler_skipped"] = f"failed during the cross-check: {exc}"
    if "rlscheduler_skipped" in out:  # no figures of HPCEnv at all rather than some
        runs = {key: value for key, value in runs.items() if key[1] != RLSCHEDULER_LABEL}
    settings: dict[str, object] = {}
    for label in _BACKFILL:
        summaries = {run: _summary(episodes) for (where, run), episodes in runs.items()
                     if where == label}  # fmt: skip
        setting: dict[str, object] = {"runs": summaries}
        if RLSCHEDULER_LABEL in summaries:
            theirs = summaries[RLSCHEDULER_LABEL]["decisions_per_s"]["median"]
            setting["ratio"] = {run: summaries[run]["decisions_per_s"]["median"] / theirs
                                for run in [*_SCHEDLAB.values(), *_VECTOR.values()]}  # fmt: skip
            ours = runs[(label, _SCHEDLAB["rlscheduler"])][0]
            timed = runs[(label, RLSCHEDULER_LABEL)]
            setting["check"] = _check(starts, ours, timed, widened[label], window, length)
        settings[label] = setting
    out["settings"] = settings
    out["isolation"] = _isolation(workload, envs, starts, runs, rounds)
    return out


def _schedlab_episodes(env: SchedulingEnv, starts: list[int]) -> list[Episode]:
    """One episode from each start with the row-0 agent, timed (s)."""
    episodes = []
    for start in starts:
        started = time.perf_counter()
        _, info = env.reset(options={"start": start})
        reset_s = time.perf_counter() - started
        decisions, most_waiting, terminated, reward = 0, info["waiting"], False, 0.0
        started = time.perf_counter()
        while not terminated:
            _, reward, terminated, _, info = env.step(0)
            decisions += 1
            most_waiting = max(most_waiting, info["waiting"])
        steps_s = time.perf_counter() - started
        episodes.append({"start": start, "decisions": decisions, "reset_s": reset_s,
                         "steps_s": steps_s, "reward": float(reward),
                         "most_waiting": int(most_waiting)})  # fmt: skip
    return episodes


def _vector_episodes(vector: SchedulingVectorEnv) -> list[Episode]:
    """Every sequence at once in the vector environment with the row-0 agent, until each has
    finished its episode (those done first go on with the next, drawn episode: that work is
    counted too), timed (s); one record per sequence, with an equal share of the decisions
    and of the time."""
    started = time.perf_counter()
    vector.reset()
    reset_s = time.perf_counter() - started
    count = vector.num_envs
    actions = np.zeros(count, np.int64)
    finished = np.zeros(count, dtype=bool)
    steps = 0
    started = time.perf_counter()
    while not finished.all():
        finished |= vector.step(actions)[2]
        steps += 1
    steps_s = time.perf_counter() - started
    return [{"start": -1, "decisions": steps, "reset_s": reset_s / count,
             "steps_s": steps_s / count, "reward": float("nan"), "most_waiting": 0}
            for _ in range(count)]  # fmt: skip


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": float(np.median(values)), "min": float(np.min(values)),
            "max": float(np.max(values))}  # fmt: skip


def _summary(rounds: list[list[Episode]]) -> dict[str, Any]:
    """Decisions (of the first round), decisions per second and wall time per episode (s, and
    the reset's share of it), median, min and max over the rounds."""
    rates, episode_s, reset_s = [], [], []
    for episodes in rounds:
        seconds = sum(e["reset_s"] + e["steps_s"] for e in episodes)
        rates.append(sum(e["decisions"] for e in episodes) / seconds)
        episode_s.append(seconds / len(episodes))
        reset_s.append(sum(e["reset_s"] for e in episodes) / len(episodes))
    return {
        "decisions": sum(e["decisions"] for e in rounds[0]),
        "decisions_per_s": _spread(rates), "episode_s": _spread(episode_s),
        "reset_s": _spread(reset_s),
    }  # fmt: skip


def _relative_difference(a: float, b: float) -> float:
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


def _check(
    starts: list[int],
    schedlab: list[Episode],
    timed: list[list[Episode]],
    widened: list[Episode],
    window: int,
    length: int,
) -> dict[str, object]:
    """The final rewards (minus the mean bounded slowdown) of schedlab's ``"rlscheduler"``
    environment against ``HPCEnv``'s, sequence by sequence, with the row-0 agent.

    - ``widened``: ``HPCEnv`` with a window of ``length`` rows, so that its row 0 is always the
      first waiting job in submit order, as in schedlab's: every sequence must agree (to
      :data:`REWARD_RTOL`, with as many decisions);
    - the timed rounds (its own window): the sequences during which at most ``window`` jobs
      waited must agree; beyond, its row 0 is another job and the rewards differ.

    ``starts_equal``: every round of ``HPCEnv`` drew schedlab's starts. ``equal``: all of it.
    """
    ours = [e["reward"] for e in schedlab]
    wide = [_relative_difference(a, e["reward"]) for a, e in zip(ours, widened, strict=True)]
    first = timed[0]
    inside = [i for i, e in enumerate(first) if e["most_waiting"] <= window]
    inside_equal = sum(_relative_difference(ours[i], first[i]["reward"]) <= REWARD_RTOL
                       for i in inside)  # fmt: skip
    starts_equal = all([e["start"] for e in episodes] == starts for episodes in [*timed, widened])
    decisions_equal = [e["decisions"] for e in schedlab] == [e["decisions"] for e in widened]
    equal_widened = sum(d <= REWARD_RTOL for d in wide)
    return {
        "starts_equal": starts_equal, "decisions_equal": decisions_equal,
        "widened_window": length, "equal_widened": equal_widened,
        "max_rel_diff_widened": max(wide), "within_window": len(inside),
        "equal_within_window": inside_equal,
        "equal": starts_equal and decisions_equal and equal_widened == len(wide)
        and inside_equal == len(inside),
        "rewards": {"schedlab rlscheduler": ours,
                    f"{RLSCHEDULER_LABEL}, {length} rows": [e["reward"] for e in widened],
                    f"{RLSCHEDULER_LABEL}, {window} rows": [e["reward"] for e in first]},
        "most_waiting": [e["most_waiting"] for e in first],
    }  # fmt: skip


def _isolation(
    workload: RlsWorkload,
    envs: Mapping[tuple[str, str], SchedulingEnv],
    starts: list[int],
    runs: Mapping[tuple[str, str], list[list[Episode]]],
    rounds: int,
) -> dict[str, object]:
    """schedlab's cost per decision, layer by layer, on the same sequences and agent
    (:func:`_layers`), timed side by side (:func:`side_by_side`, ratios to the compiled run),
    the start times of each checked equal to the compiled run's. Per setting: the environment's
    decisions and the :func:`side_by_side` figures (s for all the sequences)."""
    out: dict[str, object] = {}
    for (label, semantics), env in envs.items():
        calls = _layers(workload, env, starts)
        outputs, timings = side_by_side(calls, rounds, "compiled run")
        for call, schedules in outputs.items():
            for a, b in zip(schedules, outputs["compiled run"], strict=True):
                if not np.array_equal(a, b, equal_nan=True):
                    raise AssertionError(f"{semantics}, {label}: {call} and the compiled run "
                                         "schedule differently")  # fmt: skip
        episodes = runs[(label, _SCHEDLAB[semantics])][0]
        out[f"{semantics}, {label}"] = {"decisions": sum(e["decisions"] for e in episodes),
                                        "timings": timings}  # fmt: skip
    return out


def _layers(
    workload: RlsWorkload, env: SchedulingEnv, starts: list[int]
) -> dict[str, Callable[[], list[np.ndarray]]]:
    """The layers of ``env``'s step, each a call scheduling every sequence of ``starts`` with
    the row-0 agent and returning the start times (s):

    - ``compiled run``: the whole sequence in one kernel call (the FCFS choice without Python
      per decision): ``AgentSimulation.run_policy("FCFS")`` (``"easy"``) or
      :func:`~scheduler.sim.rlscheduler.run_rls_sequence` with FCFS (``"rlscheduler"``);
    - ``decision loop`` (``"easy"`` only): the Python loop over
      :class:`~scheduler.sim.agent.AgentSimulation` (``decide``, ``observe``, ``act``), the
      environment's kernel calls without the environment;
    - ``env.step``: the environment (``reset``, then ``step`` until the last job starts).
    """
    length, backfill = env.source.length, env.backfill
    estimate, estimate_scale_s = workload.estimate_s, workload.estimate_scale_s

    def simulation(start: int) -> AgentSimulation:
        sl = slice(start, start + length)
        return AgentSimulation(
            workload.submit_s[sl], workload.procs[sl], workload.run_s[sl], estimate[sl],
            workload.max_procs, job_id=workload.job_id[sl], backfill=backfill,
        )  # fmt: skip

    def compiled_easy() -> list[np.ndarray]:
        return [simulation(start).run_policy("FCFS") for start in starts]

    def compiled_rlscheduler() -> list[np.ndarray]:
        return [run_rls_sequence(workload, s, length, "FCFS", backfill) for s in starts]

    def decision_loop() -> list[np.ndarray]:
        obs = np.zeros((env.window, len(FEATURE_NAMES)), np.float32)
        ids = np.full(env.window, -1, np.int64)
        out = []
        for start in starts:
            sim = simulation(start)
            while sim.decide():
                sim.observe(obs, ids, wait_scale_s=WAIT_SCALE_S, estimate_scale_s=estimate_scale_s)
                sim.act(int(ids[0]))
            out.append(sim.start_s)
        return out

    def environment() -> list[np.ndarray]:
        out = []
        for start in starts:
            env.reset(options={"start": start})
            terminated = False
            while not terminated:
                terminated = env.step(0)[2]
            out.append(env.start_times())
        return out

    if env.semantics == "easy":
        return {"compiled run": compiled_easy, "decision loop": decision_loop,
                "env.step": environment}  # fmt: skip
    return {"compiled run": compiled_rlscheduler, "env.step": environment}


def format_rl_env_figures(figures: Mapping[str, Any]) -> list[str]:
    """Lines of :func:`rl_env_figures`: per log and setting, decisions per second (median
    [min, max]) and wall time per episode of each run, the ratios to ``HPCEnv`` beside the
    target, the cross-check, then schedlab's cost per decision in isolation."""
    slice_text = f"first {figures['job_slice']:,} jobs" if figures["job_slice"] else "all jobs"
    lines = [
        f"RL environment, decisions/s of the row-0 agent on RLScheduler's test sequences: "
        f"{figures['count']} x {figures['length']:,} jobs (seed {figures['seed']}, "
        f"{slice_text}), window {figures['window']}, {figures['rounds']} rounds alternating "
        "schedlab and HPCEnv: median [min, max]"
    ]
    if "rlscheduler_skipped" in figures:
        lines.append(f"RLScheduler's environment skipped: {figures['rlscheduler_skipped']}")
    else:
        lines.append(f"RLScheduler's environment: {figures['rlscheduler']['repo']} under "
                     f"{figures['rlscheduler']['python']}")  # fmt: skip
    for name, log in figures["logs"].items():
        commit = f", HPCEnv at {log['rlscheduler_commit'][:12]}" if "rlscheduler_commit" in log \
            else ""  # fmt: skip
        lines.append(f"{name} ({log['jobs']:,} jobs; {log['path']}{commit}):")
        if "rlscheduler_skipped" in log:
            lines.append(f"  RLScheduler's environment skipped: {log['rlscheduler_skipped']}")
        for label, setting in log["settings"].items():
            lines.append(f"  {label}:")
            for run, f in setting["runs"].items():
                rate, episode = f["decisions_per_s"], f["episode_s"]
                # numbers unpadded: a run's text is the same but for its numbers
                lines.append(
                    f"    {run:20s} {rate['median']:,.0f} decisions/s "
                    f"[{rate['min']:,.0f}, {rate['max']:,.0f}], {episode['median'] * 1e3:.1f} "
                    f"ms/episode [{episode['min'] * 1e3:.1f}, {episode['max'] * 1e3:.1f}] "
                    f"(reset {f['reset_s']['median'] * 1e3:.2f} ms; {f['decisions']:,} decisions)"
                )
            if "ratio" in setting:
                ratios = ", ".join(f"{run} x{value:,.0f}"
                                   for run, value in setting["ratio"].items())  # fmt: skip
                lines.append(f"    ratio of medians to {RLSCHEDULER_LABEL}: {ratios} "
                             f"(target >= {figures['target_ratio']:.0f})")  # fmt: skip
            if "check" in setting:
                lines.append("    " + _check_line(setting["check"], figures))
    for name, log in figures["logs"].items():
        lines.append(f"{name}, schedlab's cost per decision in isolation, µs median [min, max] "
                     "(x the compiled run):")  # fmt: skip
        for label, part in log["isolation"].items():
            per = 1e6 / part["decisions"]
            costs = "; ".join(
                f"{call} {t['median_s'] * per:.2f} [{t['min_s'] * per:.2f}, "
                f"{t['max_s'] * per:.2f}] x{t['ratio_median']:.1f}"
                for call, t in part["timings"].items()
            )
            lines.append(f"  {label:28s} {costs}")
    for path in figures.get("skipped", []):
        lines.append(f"  skipped (not found): {path}")
    return lines


def _check_line(check: Mapping[str, Any], figures: Mapping[str, Any]) -> str:
    """The cross-check in one line (:func:`_check`)."""
    n = len(check["most_waiting"])
    verdict = "equal" if check["equal"] else "MISMATCH"
    return (
        f"cross-check {verdict}: final rewards (minus mean bounded slowdown) of schedlab "
        f"rlscheduler and HPCEnv within {figures['reward_rtol']:g}: {check['equal_widened']}/{n} "
        f"sequences with HPCEnv's window widened to {check['widened_window']} rows (max rel. "
        f"diff {check['max_rel_diff_widened']:.1e}), {check['equal_within_window']}/"
        f"{check['within_window']} of those where at most {figures['window']} jobs waited in "
        f"its own window ({n - check['within_window']} with more: its row 0 is then another "
        f"job); starts {'equal' if check['starts_equal'] else 'DIFFERENT'}"
    )


def _measure(inputs: BenchInputs) -> dict[str, object]:
    lublin = inputs.log_path("Lublin-256")
    logs = {name: inputs.log_path(name) for name in RL_ENV_LOGS}
    logs["Lublin-256"] = lublin if lublin.is_file() else BUNDLED_LUBLIN
    return rl_env_figures(logs, rlscheduler_python=inputs.rlscheduler_python,
                          rlscheduler_repo=inputs.rlscheduler_repo)  # fmt: skip


GROUP = keyed_group(
    "rl-env",
    "decisions/s of the Gymnasium environment (both semantics) against RLScheduler's own "
    "environment class (--rlscheduler-python, --rlscheduler-repo) on its test sequences of "
    "Lublin-256 (--traces-dir, else the bundled copy), SDSC-SP2 and HPC2N (--traces-dir)",
    _measure,
    format_rl_env_figures,
)
