"""Several episodes stepped together: a Gymnasium vector environment over one kernel call.

:class:`SchedulingVectorEnv` runs ``num_envs`` copies of
:class:`scheduler.rl.env.SchedulingEnv` (the same log, semantics and settings; each its own
sequences) and steps them all with one compiled call (:class:`scheduler.sim.agent.AgentBatch`,
:class:`scheduler.sim.rlscheduler.RlsBatch`): a step costs one Python call for all the
environments instead of one each, which is what an agent collecting experience from many
episodes, or a benchmark, wants (docs/benchmarks.md, "The Gymnasium environment"). Episodes
reset in the same step that ends them (Gymnasium's ``SAME_STEP`` autoreset): the observation
returned is the new episode's first, the finished episode's reward is in ``rewards`` and its
figures in ``infos["final_info"]``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from scheduler.core.errors import ConfigurationError
from scheduler.rl.env import REWARD_FIGURES, WAIT_SCALE_S, SchedulingEnv
from scheduler.rl.episodes import EpisodeSource
from scheduler.sim.agent import AgentBatch
from scheduler.sim.rlscheduler import RlsBatch

__all__ = ["SchedulingVectorEnv"]


class SchedulingVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` scheduling episodes stepped by one kernel call (module docstring).

    Parameters
    ----------
    source, window, backfill, semantics, reward
        As :class:`SchedulingEnv` (shared by every environment).
    num_envs
        Episodes stepped together.
    starts
        Optional fixed sequence starts: environment ``e`` takes ``starts[e]``,
        ``starts[e + num_envs]``, ... in turn (cycling); otherwise each draws its own.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(
        self,
        source: EpisodeSource,
        num_envs: int,
        *,
        window: int = 128,
        backfill: bool = True,
        semantics: str = "easy",
        reward: str = "avg_bsld",
        starts: list[int] | np.ndarray | None = None,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ConfigurationError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if starts is not None and len(starts) < num_envs:
            raise ConfigurationError(f"{len(starts)} starts for {num_envs} environments")
        self.num_envs = num_envs
        own_starts = [None if starts is None else list(starts)[e::num_envs]
                      for e in range(num_envs)]  # fmt: skip
        self.envs = [
            SchedulingEnv(source, window=window, backfill=backfill, semantics=semantics,
                          reward=reward, starts=own_starts[e])
            for e in range(num_envs)
        ]
        single = self.envs[0]
        self.single_observation_space = single.observation_space
        self.single_action_space = single.action_space
        self.observation_space = gym.vector.utils.batch_space(single.observation_space, num_envs)
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, window))
        self._obs = np.zeros((num_envs, *single.observation_space.shape), np.float32)
        self._ids = np.full((num_envs, window), -1, np.int64)
        for e, env in enumerate(self.envs):  # each environment writes its rows of the batch
            env.share_buffers(self._obs[e], self._ids[e])
        self._waiting = np.zeros(num_envs, np.int64)
        self._batch: AgentBatch | RlsBatch | None = None
        self._estimate_scale = np.array([env.estimate_scale_s for env in self.envs])
        self._max_procs = np.array([env.max_procs for env in self.envs])
        self.semantics = semantics
        self.reward_sign = REWARD_FIGURES[reward]

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode in every environment (``seed``: one seed, spread as ``seed + e``,
        or one per environment)."""
        seeds = (
            [None] * self.num_envs if seed is None
            else [seed + e for e in range(self.num_envs)] if isinstance(seed, int)
            else list(seed)
        )  # fmt: skip
        starts = np.empty(self.num_envs, np.int64)
        for e, env in enumerate(self.envs):
            _, info = env.reset(seed=seeds[e], options=options)
            starts[e] = info["start"]
            self._waiting[e] = info["waiting"]
        states = [env.simulation for env in self.envs]
        if self.semantics == "easy":
            self._batch = AgentBatch(states)
        else:
            self._batch = RlsBatch(states, self.envs[0].backfill)
        return self._obs.copy(), {"action_mask": self.action_masks(), "start": starts}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Every environment schedules the job of its row ``actions[e]`` (a row without a job:
        the first waiting job); finished episodes restart at once."""
        batch = self._batch
        if batch is None:
            raise RuntimeError("call reset() before step()")
        if isinstance(batch, AgentBatch):
            batch.act_observe(actions, self._obs, self._ids, self._waiting,
                              wait_scale_s=WAIT_SCALE_S, estimate_scale_s=self._estimate_scale)
        else:
            batch.schedule_observe(actions, self._obs, self._ids, self._waiting,
                                   wait_scale_s=WAIT_SCALE_S,
                                   estimate_scale_s=self._estimate_scale,
                                   max_procs=self._max_procs)  # fmt: skip
        rewards = np.zeros(self.num_envs)
        terminated = self._waiting < 0
        infos: dict[str, Any] = {}
        if terminated.any():
            final = []
            for e in np.flatnonzero(terminated):
                env = self.envs[e]
                figures = env.figures()
                rewards[e] = self.reward_sign * getattr(figures, env.reward_figure)
                final.append({"env": int(e), "start": env.start, **figures.to_dict()})
                _, info = env.reset()
                self._waiting[e] = info["waiting"]
                batch.replace(int(e), env.simulation)
            infos["final_info"] = final
        infos["action_mask"] = self.action_masks()
        truncated = np.zeros(self.num_envs, dtype=bool)
        return self._obs.copy(), rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, window): True for the rows that hold a waiting job."""
        return self._ids >= 0
