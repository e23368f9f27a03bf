"""Statistics helpers shared by the studies: t intervals and tests of means, sign tests (all
two-sided, statsmodels underneath). Arrays of float64; NaN where too few values."""

from __future__ import annotations

import math

import numpy as np
from statsmodels.stats.descriptivestats import sign_test
from statsmodels.stats.weightstats import DescrStatsW


def t_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """t confidence interval of the mean of ``values``; (NaN, NaN) with fewer than 2 values."""
    if values.size < 2:
        return math.nan, math.nan
    low, high = DescrStatsW(values.astype(np.float64)).tconfint_mean(alpha=1.0 - confidence)
    return float(low), float(high)


def paired_t_p_value(diff: np.ndarray) -> float:
    """Two-sided p-value of a t-test of mean(diff) == 0; 1.0 when every difference is 0."""
    if np.all(diff == 0.0):
        return 1.0
    if diff.size < 2:
        return math.nan
    # Constant non-zero differences: t = ±inf and p = 0 (numpy warns about the division).
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(DescrStatsW(diff).ttest_mean(0.0)[1])


def sign_p_value(diff: np.ndarray) -> float:
    """Two-sided sign-test p-value of the differences; 1.0 when every difference is 0."""
    if np.all(diff == 0.0):
        return 1.0
    return float(sign_test(diff, mu0=0.0)[1])
