"""Learning to schedule by reinforcement: a Gymnasium environment over schedlab's compiled engine
(:mod:`scheduler.rl.env`), the episodes it draws from a log (:mod:`scheduler.rl.episodes`) and a
PPO agent (:mod:`scheduler.rl.ppo`, the optional extra ``schedlab[rl]``). ``docs/rl.md``."""
