"""The run-time prediction study (Reis's thesis, ch. 4; Gaussier et al., SC'15): plan,
statistics, figures, steps."""
