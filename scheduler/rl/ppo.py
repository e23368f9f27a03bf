"""A PPO agent for :class:`scheduler.rl.env.SchedulingEnv` (the optional extra ``schedlab[rl]``:
stable-baselines3, sb3-contrib and PyTorch's CPU build).

The policy is RLScheduler's kernel network: one small MLP (7 → 32 → 16 → 8 → 1) applied to each
row of the observation (a waiting job) gives that job's logit, so the policy does not depend on
where a job sits in the window and has a few hundred weights; the value is an MLP over the whole
observation (window × 7 → 64 → 64). Rows without a job are masked (sb3-contrib's
``MaskablePPO``), as RLScheduler masks them. From RLScheduler's PPO: no discount (γ = 1: the
reward comes at the episode's end), GAE λ = 0.97 and a target KL of 0.01 per update. Training
episodes are sequences drawn by the environment's seeded generator; the learning curve records
each episode's figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from scheduler.rl.env import SchedulingEnv

__all__ = ["PpoSettings", "evaluate_agent", "load_agent", "train_agent"]


@dataclass(frozen=True)
class PpoSettings:
    """PPO's settings (docs/rl.md and the ``rl.ppo`` config keys)."""

    timesteps: int = 100_000
    n_steps: int = 2048
    batch_size: int = 256
    epochs: int = 10
    learning_rate: float = 3e-4
    seed: int = 0
    threads: int = 1


def _policy_class():  # the torch classes are built on first use: torch is an optional extra
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from torch import nn

    class KernelExtractor(nn.Module):
        """Per-row actor logits and a whole-observation critic latent."""

        def __init__(self, window: int, features: int) -> None:
            super().__init__()
            self.window, self.features = window, features
            self.latent_dim_pi = window
            self.latent_dim_vf = 64
            self.actor = nn.Sequential(
                nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(),
                nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1),
            )  # fmt: skip
            self.critic = nn.Sequential(
                nn.Linear(window * features, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU()
            )

        def forward_actor(self, flat: torch.Tensor) -> torch.Tensor:
            rows = flat.view(-1, self.window, self.features)
            return self.actor(rows).squeeze(-1)

        def forward_critic(self, flat: torch.Tensor) -> torch.Tensor:
            return self.critic(flat)

        def forward(self, flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return self.forward_actor(flat), self.forward_critic(flat)

    class KernelPolicy(MaskableActorCriticPolicy):
        """sb3-contrib's masked actor-critic with the kernel network; the row logits are the
        action logits (no extra linear layer mixing the rows)."""

        def _build_mlp_extractor(self) -> None:
            window, features = self.observation_space.shape
            self.mlp_extractor = KernelExtractor(window, features)

        def _build(self, lr_schedule) -> None:
            super()._build(lr_schedule)
            self.action_net = nn.Identity()
            self.optimizer = self.optimizer_class(
                self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
            )

    return KernelPolicy


def _curve_callback(records: list[dict[str, float]], figure: str):
    from stable_baselines3.common.callbacks import BaseCallback

    class Curve(BaseCallback):
        """Record each finished training episode: decisions so far and its figure."""

        def _on_step(self) -> bool:
            for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
                if done and figure in info:
                    records.append({"timesteps": int(self.num_timesteps),
                                    "episode_bsld": float(info[figure])})  # fmt: skip
            return True

    return Curve()


def train_agent(env: SchedulingEnv, settings: PpoSettings) -> tuple[Any, pl.DataFrame]:
    """Train a masked PPO agent on ``env`` (its episodes drawn from its seeded generator);
    return the model and the learning curve (``timesteps, episode_bsld, smoothed_bsld``: the
    running median of the last 20 episodes)."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(settings.threads)
    records: list[dict[str, float]] = []
    model = MaskablePPO(
        _policy_class(), env, n_steps=settings.n_steps, batch_size=settings.batch_size,
        n_epochs=settings.epochs, learning_rate=settings.learning_rate, gamma=1.0,
        gae_lambda=0.97, target_kl=0.01,
        seed=settings.seed, verbose=0, device="cpu",
    )  # fmt: skip
    model.learn(total_timesteps=settings.timesteps,
                callback=_curve_callback(records, "avg_bsld"))  # fmt: skip
    curve = pl.DataFrame(records, schema={"timesteps": pl.Int64, "episode_bsld": pl.Float64})
    values = curve["episode_bsld"].to_numpy()
    smoothed = [float(np.median(values[max(0, i - 19): i + 1])) for i in range(values.shape[0])]
    return model, curve.with_columns(pl.Series("smoothed_bsld", smoothed, dtype=pl.Float64))


def load_agent(path: str) -> Any:
    """A model saved by :func:`train_agent`'s caller (``model.save``)."""
    from sb3_contrib import MaskablePPO

    return MaskablePPO.load(path, device="cpu", custom_objects={"policy_class": _policy_class()})


def evaluate_agent(model: Any, env: SchedulingEnv, starts: list[int]) -> list[dict[str, float]]:
    """The agent's episodes on the sequences from ``starts``, its most likely action at each
    decision: one dict of the episode's figures (:class:`RunFigures`) per sequence, with
    ``start`` and ``decisions``."""
    out = []
    for start in starts:
        obs, _ = env.reset(options={"start": int(start)})
        decisions, terminated = 0, False
        while not terminated:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, _, terminated, _, _ = env.step(int(action))
            decisions += 1
        figures = env.figures().to_dict()
        out.append({**figures, "start": int(start), "decisions": decisions})
    if not all(math.isfinite(row["avg_bsld"]) for row in out):
        raise RuntimeError("an evaluation episode did not finish")
    return out
