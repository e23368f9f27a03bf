"""The online policy-selection study (Reis's thesis, ch. 6): plan, live runs, selectors,
statistics, figures, steps."""
