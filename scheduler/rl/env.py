"""A Gymnasium environment in which an agent schedules batch jobs (``docs/rl.md``).

:class:`SchedulingEnv` is an episode of :mod:`scheduler.rl.episodes`: a sequence of a log's jobs
scheduled from an empty machine. At each decision the agent sees the waiting jobs and picks the
one to start, or to reserve when it does not fit; the simulation behind it is compiled, so a step
is one kernel call and no Python walk of the queue.

**Semantics** (``semantics``):

- ``"easy"`` (default): schedlab's EASY (:class:`scheduler.sim.agent.AgentSimulation`): a job
  that fits starts; one that does not is reserved and, with ``backfill``, the other waiting jobs
  backfill behind it by EASY's rule (shadow time and extra processors); the next decision comes
  at the next instant at which some waiting job fits. Always picking the first waiting job is
  EASY-FCFS job by job (FCFS list scheduling without ``backfill``).
- ``"rlscheduler"``: RLScheduler's environment (:mod:`scheduler.sim.rlscheduler`): the machine in
  nodes, the chosen job committed to (time moves on until it fits), its own backfilling.

**Observation**: ``Box(0, 1, (window, 7), float32)``: one row per waiting job, the first
``window`` in submit order, columns :data:`scheduler.sim.agent.FEATURE_NAMES` (wait / 12 h,
estimate / the log's largest, processors / machine, fits now, a real job, the machine's free
fraction, waiting jobs / window; rows without a job are zero). **Action**:
``Discrete(window)``, a row; :meth:`SchedulingEnv.action_masks` gives the valid rows. A row
without a job is refused by ``invalid_action="raise"`` or picks the first waiting job
(``"first"``, the default: random agents and ``check_env`` then run). **Reward**: 0 until the
last job starts, then minus the episode's figure ``reward`` (default ``avg_bsld``, τ = 10 s;
any field of :class:`scheduler.sim.metrics.RunFigures`, utilisation counted positive).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from scheduler.core.errors import ConfigurationError
from scheduler.core.flags import flag
from scheduler.rl.episodes import EpisodeSource
from scheduler.sim.agent import FEATURE_NAMES, AgentSimulation
from scheduler.sim.metrics import RunFigures
from scheduler.sim.rlscheduler import RlsState

__all__ = ["REWARD_FIGURES", "SEMANTICS", "SchedulingEnv"]

#: The environment's scheduling semantics (module docstring).
SEMANTICS: tuple[str, ...] = ("easy", "rlscheduler")

#: Figures an episode's reward may be, with their sign: the reward is ``sign * figure``.
REWARD_FIGURES: dict[str, float] = {
    field.name: (1.0 if field.name.startswith("utilisation") else -1.0)
    for field in fields(RunFigures)
    if field.name not in ("jobs", "wasted_proc_s", "makespan_s")
}

#: Waits are normalised by this (s) in the observation, as RLScheduler's (12 hours).
WAIT_SCALE_S = 12 * 3600.0


class SchedulingEnv(gym.Env):
    """Schedule a sequence of a log's jobs, one decision at a time (module docstring).

    Parameters
    ----------
    source
        The log's jobs and the sequence length (:class:`EpisodeSource`).
    window
        Waiting jobs the agent sees (rows of the observation, actions); RLScheduler's 128.
    backfill
        Backfilling behind a job that does not fit.
    semantics
        ``"easy"`` or ``"rlscheduler"`` (:data:`SEMANTICS`).
    reward
        The episode's figure (:data:`REWARD_FIGURES`).
    invalid_action
        ``"first"`` or ``"raise"`` for an action on a row without a job.
    starts
        Optional fixed sequence starts, used in turn by successive resets (evaluation);
        otherwise each reset draws one from the environment's seeded generator.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(
        self,
        source: EpisodeSource,
        *,
        window: int = 128,
        backfill: bool = True,
        semantics: str = "easy",
        reward: str = "avg_bsld",
        invalid_action: str = "first",
        starts: list[int] | np.ndarray | None = None,
    ) -> None:
        if semantics not in SEMANTICS:
            raise ConfigurationError(f"semantics must be one of {SEMANTICS}, got {semantics!r}")
        if reward not in REWARD_FIGURES:
            raise ConfigurationError(
                f"reward must be one of {', '.join(REWARD_FIGURES)}, got {reward!r}"
            )
        if invalid_action not in ("first", "raise"):
            raise ConfigurationError(
                f"invalid_action must be 'first' or 'raise', got {invalid_action!r}"
            )
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ConfigurationError(f"window must be an integer >= 1, got {window!r}")
        self.source = source
        self.window = window
        self.backfill = flag(backfill, "backfill")
        self.semantics = semantics
        self.reward_figure = reward
        self.invalid_action = invalid_action
        self.starts = None if starts is None else [source.check_start(s) for s in starts]
        self._next_start = 0
        workload = source.workload
        self._estimate_scale_s = workload.estimate_scale_s
        self._max_procs = float(workload.max_procs)
        self.observation_space = spaces.Box(0.0, 1.0, (window, len(FEATURE_NAMES)), np.float32)
        self.action_space = spaces.Discrete(window)
        self._obs = np.zeros((window, len(FEATURE_NAMES)), np.float32)
        self._ids = np.full(window, -1, np.int64)
        self._sim: AgentSimulation | RlsState | None = None
        self.start = -1
        self.invalid_actions = 0

    # -- episodes ----------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode: the sequence from ``options["start"]``, the next of ``starts``, or
        one drawn from the generator seeded by ``seed``."""
        super().reset(seed=seed)
        if options and "start" in options:
            start = self.source.check_start(options["start"])
        elif self.starts is not None:
            start = self.starts[self._next_start % len(self.starts)]
            self._next_start += 1
        else:
            start = self.source.draw_start(self.np_random)
        self.start = start
        self.invalid_actions = 0
        length = self.source.length
        sl = slice(start, start + length)
        workload = self.source.workload
        if self.semantics == "easy":
            self._sim = AgentSimulation(
                workload.submit_s[sl], workload.procs[sl], workload.run_s[sl],
                workload.estimate_s[sl], workload.max_procs, job_id=workload.job_id[sl],
                backfill=self.backfill,
            )  # fmt: skip
            self._sim.decide()
        else:
            self._sim = RlsState.new(workload, start, length)
        self._observe()
        return self._obs.copy(), {**self._info(), "start": start}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Schedule the job of row ``action``; the reward is 0 until the episode ends."""
        sim = self._sim
        if sim is None:
            raise RuntimeError("call reset() before step()")
        row = int(action)
        if not (0 <= row < self.window) or self._ids[row] < 0:
            if self.invalid_action == "raise":
                raise ValueError(f"action {action}: no waiting job in that row")
            self.invalid_actions += 1
            row = 0
        job = int(self._ids[row])
        if self.semantics == "easy":
            waiting = sim.act_observe(job, self._obs, self._ids, wait_scale_s=WAIT_SCALE_S,
                                      estimate_scale_s=self._estimate_scale_s)  # fmt: skip
        else:
            waiting = sim.schedule_observe(
                job, self.backfill, self._obs, self._ids, wait_scale_s=WAIT_SCALE_S,
                estimate_scale_s=self._estimate_scale_s, max_procs=self._max_procs,
            )  # fmt: skip
        if waiting >= 0:
            self._waiting = waiting
            return self._obs.copy(), 0.0, False, False, self._info()
        figures = self.figures()
        reward = REWARD_FIGURES[self.reward_figure] * getattr(figures, self.reward_figure)
        self._obs[:] = 0.0
        self._ids[:] = -1
        self._waiting = 0
        return self._obs.copy(), float(reward), True, False, {**self._info(), **figures.to_dict()}

    # -- what the agent sees -----------------------------------------------------------------

    def _observe(self) -> None:
        sim = self._sim
        if isinstance(sim, AgentSimulation):
            self._waiting = sim.observe(self._obs, self._ids, wait_scale_s=WAIT_SCALE_S,
                                        estimate_scale_s=self._estimate_scale_s)  # fmt: skip
        else:
            self._waiting = sim.observe(self._obs, self._ids, wait_scale_s=WAIT_SCALE_S,
                                        estimate_scale_s=self._estimate_scale_s,
                                        max_procs=self._max_procs)  # fmt: skip

    def share_buffers(self, obs: np.ndarray, ids: np.ndarray) -> None:
        """Observe into ``obs`` (window, 7) float32 and ``ids`` (window,) int64 from now on:
        rows of a vector environment's batch (:mod:`scheduler.rl.vector`)."""
        if obs.shape != self._obs.shape or obs.dtype != np.float32 or ids.shape != self._ids.shape:
            raise ConfigurationError("shared buffers need the observation's shape and dtype")
        self._obs, self._ids = obs, ids

    @property
    def simulation(self) -> AgentSimulation | RlsState:
        """The running episode's simulation (after :meth:`reset`)."""
        if self._sim is None:
            raise RuntimeError("call reset() first")
        return self._sim

    @property
    def estimate_scale_s(self) -> float:
        """Estimates are normalised by this (s): the log's largest run time."""
        return self._estimate_scale_s

    @property
    def max_procs(self) -> float:
        """Processors of the machine."""
        return self._max_procs

    def action_masks(self) -> np.ndarray:
        """True for the rows that hold a waiting job (sb3-contrib's masking convention)."""
        return self._ids >= 0

    def _info(self) -> dict[str, Any]:
        """A step's info: the action mask and how many jobs wait (the window may show fewer)."""
        return {"action_mask": self.action_masks(), "waiting": self._waiting}

    @property
    def now_s(self) -> float:
        """The current instant of the episode (s)."""
        return float("nan") if self._sim is None else self._sim.now_s

    def start_times(self) -> np.ndarray:
        """Start times (s, NaN before start) of the episode's jobs, in sequence order."""
        sim = self._sim
        if sim is None:
            raise RuntimeError("call reset() first")
        return sim.start_s.copy()

    def figures(self) -> RunFigures:
        """The figures of the finished episode (τ = 10 s; processors of the machine)."""
        return self.source.workload.figures(self.start, self.start_times())
