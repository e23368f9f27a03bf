"""The Gymnasium environment (scheduler.rl.env): Gymnasium's own checker, hand-worked episodes,
determinism, and the first-job agent against the engines it wraps."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from scheduler import simulate_arrays
from scheduler.core.errors import ConfigurationError
from scheduler.rl.env import REWARD_FIGURES, SchedulingEnv
from scheduler.rl.episodes import EpisodeSource
from scheduler.sim.rlscheduler import RlsWorkload, rls_workload, run_rls_sequence, sequence_bsld
from scheduler.traces.swf import read_swf

LUBLIN = Path(__file__).resolve().parents[2] / "resources" / "Lublin-256.swf.gz"


@pytest.fixture(scope="module")
def lublin() -> RlsWorkload:
    return rls_workload(read_swf(LUBLIN), "Lublin-256")


def serial_workload(runs: list[float], machine: int = 1) -> RlsWorkload:
    """Jobs submitted at 0 (one processor each), with the given run times (exact estimates),
    padded by far-away jobs so that sequences can be drawn."""
    n = len(runs)
    submit = np.r_[np.zeros(n), 1e9 + np.arange(8)]
    run = np.r_[np.asarray(runs, float), np.ones(8)]
    return RlsWorkload(submit, run, run.copy(), np.ones(n + 8), np.ones(n + 8), np.arange(n + 8),
                       machine, 1.0, machine, float(run.max()))  # fmt: skip


@pytest.mark.parametrize("semantics", ["easy", "rlscheduler"])
@pytest.mark.parametrize("backfill", [True, False])
def test_gymnasium_check_env(lublin, semantics: str, backfill: bool) -> None:
    env = SchedulingEnv(EpisodeSource(lublin, 64), semantics=semantics, backfill=backfill,
                        window=32)  # fmt: skip
    check_env(env, skip_render_check=True)


def test_hand_worked_four_job_episodes() -> None:
    # one processor, four jobs at t=0 of 40, 30, 20, 10 s: every order's mean bounded slowdown
    # by hand; shortest first (1 + 1.5 + 2 + 2.5) / 4 = 1.75 is the best, submit order
    # (1 + 70/30 + 90/20 + 100/10) / 4 = 4.4583 the worst
    runs = [40.0, 30.0, 20.0, 10.0]
    env = SchedulingEnv(EpisodeSource(serial_workload(runs), 4), window=4,
                        invalid_action="raise")  # fmt: skip
    rewards = {}
    for order in itertools.permutations(range(4)):
        env.reset(options={"start": 0})
        remaining = list(range(4))
        for job in order:
            _, reward, terminated, _, info = env.step(remaining.index(job))
            remaining.remove(job)
        assert terminated and info["jobs"] == 4
        rewards[order] = reward
        t, bslds = 0.0, []
        for job in order:
            t += runs[job]
            bslds.append(max(t / max(runs[job], 10.0), 1.0))
        assert reward == pytest.approx(-np.mean(bslds))
    assert max(rewards, key=rewards.get) == (3, 2, 1, 0)
    assert rewards[(3, 2, 1, 0)] == pytest.approx(-1.75)
    assert rewards[(0, 1, 2, 3)] == pytest.approx(-(1 + 70 / 30 + 90 / 20 + 10) / 4)


def test_rlscheduler_decides_as_soon_as_one_job_waits() -> None:
    # RLScheduler's environment takes a decision as soon as one job is in its queue: of four
    # jobs submitted together it sees the first alone, commits to it, then the second alone;
    # only the last two can be ordered (docs/rl.md)
    runs = [40.0, 30.0, 20.0, 10.0]
    env = SchedulingEnv(EpisodeSource(serial_workload(runs), 4), window=4,
                        semantics="rlscheduler", invalid_action="raise")  # fmt: skip
    results = {}
    for last in ((2, 3), (3, 2)):
        _, info = env.reset(options={"start": 0})
        assert info["waiting"] == 1
        _, _, _, _, info = env.step(0)
        assert info["waiting"] == 1
        _, _, _, _, info = env.step(0)
        assert info["waiting"] == 2 and env.now_s == 40.0
        _, _, _, _, info = env.step(last[0] - 2)
        _, reward, terminated, _, _ = env.step(0)
        assert terminated
        results[last] = reward
    assert results[(3, 2)] == pytest.approx(-(1 + 70 / 30 + 8 + 5) / 4)
    assert results[(2, 3)] == pytest.approx(-(1 + 70 / 30 + 4.5 + 10) / 4)


def run_first_job_agent(env: SchedulingEnv, start: int) -> tuple[float, int]:
    env.reset(options={"start": start})
    steps, terminated = 0, False
    while not terminated:
        _, reward, terminated, _, _ = env.step(0)
        steps += 1
    return reward, steps


@pytest.mark.parametrize("backfill", [True, False])
def test_first_job_agent_is_the_fcfs_engines(lublin, backfill: bool) -> None:
    source = EpisodeSource(lublin, 256)
    easy = SchedulingEnv(source, backfill=backfill)
    compat = SchedulingEnv(source, backfill=backfill, semantics="rlscheduler")
    for start in (300, 4000):
        run_first_job_agent(easy, start)
        sl = slice(start, start + 256)
        want = simulate_arrays(lublin.submit_s[sl], lublin.procs[sl], lublin.run_s[sl],
                               lublin.requested_s[sl], lublin.max_procs,
                               backfill="FCFS" if backfill else None)  # fmt: skip
        assert np.array_equal(easy.start_times(), want)
        reward, _ = run_first_job_agent(compat, start)
        starts = run_rls_sequence(lublin, start, 256, "FCFS", backfill)
        assert np.array_equal(compat.start_times(), starts)
        assert reward == pytest.approx(-sequence_bsld(lublin, start, starts))


def test_same_seed_same_episodes(lublin) -> None:
    def trajectory(seed: int) -> list:
        env = SchedulingEnv(EpisodeSource(lublin, 128), window=16)
        env.action_space.seed(seed)
        out = []
        obs, info = env.reset(seed=seed)
        out.append((info["start"], obs.tobytes()))
        terminated = False
        while not terminated:
            action = env.action_space.sample(mask=env.action_masks().astype(np.int8))
            obs, reward, terminated, _, _ = env.step(action)
            out.append((action, obs.tobytes(), reward))
        return out

    assert trajectory(5) == trajectory(5)
    assert trajectory(5)[0][0] != trajectory(6)[0][0]


def test_invalid_actions_and_masks(lublin) -> None:
    env = SchedulingEnv(EpisodeSource(lublin, 64), window=8)
    _, info = env.reset(options={"start": 0})
    mask = info["action_mask"]
    assert mask.dtype == bool and mask[0] and mask.sum() == info["waiting"] <= 8
    empty = int(np.flatnonzero(~mask)[0])
    env.step(empty)  # the first waiting job instead
    assert env.invalid_actions == 1
    strict = SchedulingEnv(EpisodeSource(lublin, 64), window=8, invalid_action="raise")
    strict.reset(options={"start": 0})
    with pytest.raises(ValueError, match="no waiting job"):
        strict.step(empty)


def test_reward_figures_and_bad_settings(lublin) -> None:
    assert REWARD_FIGURES["avg_bsld"] == -1.0 and REWARD_FIGURES["utilisation"] == 1.0
    env = SchedulingEnv(EpisodeSource(lublin, 64), reward="utilisation")
    reward, _ = run_first_job_agent(env, 10)
    assert 0 < reward <= 1 and reward == env.figures().utilisation
    with pytest.raises(ConfigurationError, match="reward must be one of"):
        SchedulingEnv(EpisodeSource(lublin, 64), reward="speed")
    with pytest.raises(ConfigurationError, match="semantics"):
        SchedulingEnv(EpisodeSource(lublin, 64), semantics="slurm")
    with pytest.raises(ConfigurationError, match="cannot be drawn"):
        EpisodeSource(lublin, 6000)
    with pytest.raises(ConfigurationError, match="sequence start"):
        SchedulingEnv(EpisodeSource(lublin, 64)).reset(options={"start": 10_000})


@pytest.mark.parametrize("semantics", ["easy", "rlscheduler"])
def test_vector_env_equals_the_single_environments(lublin, semantics: str) -> None:
    from scheduler.rl.vector import SchedulingVectorEnv

    source = EpisodeSource(lublin, 128)
    starts = [300, 1500, 2600]
    vector = SchedulingVectorEnv(source, 3, semantics=semantics, window=16, starts=starts)
    obs, info = vector.reset()
    assert obs.shape == (3, 16, 7) and info["start"].tolist() == starts
    singles = [SchedulingEnv(source, semantics=semantics, window=16) for _ in starts]
    for env, start, row in zip(singles, starts, obs, strict=True):
        first, _ = env.reset(options={"start": start})
        assert np.array_equal(first, row)
    rng = np.random.default_rng(0)
    finished = [None, None, None]
    for _ in range(2000):
        masks = vector.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terminated, _, info = vector.step(actions)
        for e, env in enumerate(singles):
            if finished[e] is not None:
                continue
            single_obs, reward, done, _, _ = env.step(int(actions[e]))
            assert done == terminated[e]
            if done:
                finished[e] = reward
                assert rewards[e] == pytest.approx(reward)
            else:
                assert np.array_equal(single_obs, obs[e])
        if all(f is not None for f in finished):
            break
    assert all(f is not None for f in finished)
    assert {row["start"] for row in info.get("final_info", [])} <= set(starts)
