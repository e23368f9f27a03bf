"""The RL benchmark (RLScheduler, Zhang et al., SC'20): plan, sequences, statistics, published
table, figures, steps."""
