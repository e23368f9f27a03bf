"""The queue-tuning study (Reis's thesis, ch. 5): plan, weeks, statistics, figures, steps."""
