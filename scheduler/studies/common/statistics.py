"""Statistics helpers shared by the studies: t intervals and tests of means, sign tests (all
two-sided, statsmodels underneath), and t intervals and tests built on a bootstrap standard
error. Arrays of float64; NaN where too few values.

The t and sign tests assume independent observations; use them only where the observations are
independent (the queue-tuning study's resampled weeks are not: see
:mod:`scheduler.studies.tuning.bootstrap`).

SciPy and statsmodels are imported by the functions that use them, not with this module: the
steps modules import it, and Snakemake imports every steps module at every start."""

from __future__ import annotations

import math

import numpy as np


def t_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """t confidence interval of the mean of ``values``; (NaN, NaN) with fewer than 2 values."""
    if values.size < 2:
        return math.nan, math.nan
    from statsmodels.stats.weightstats import DescrStatsW

    low, high = DescrStatsW(values.astype(np.float64)).tconfint_mean(alpha=1.0 - confidence)
    return float(low), float(high)


def paired_t_p_value(diff: np.ndarray) -> float:
    """Two-sided p-value of a t-test of mean(diff) == 0; 1.0 when every difference is 0."""
    if np.all(diff == 0.0):
        return 1.0
    if diff.size < 2:
        return math.nan
    from statsmodels.stats.weightstats import DescrStatsW

    # Constant non-zero differences: t = ±inf and p = 0 (numpy warns about the division).
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(DescrStatsW(diff).ttest_mean(0.0)[1])


def sign_p_value(diff: np.ndarray) -> float:
    """Two-sided sign-test p-value of the differences; 1.0 when every difference is 0."""
    if np.all(diff == 0.0):
        return 1.0
    from statsmodels.stats.descriptivestats import sign_test

    return float(sign_test(diff, mu0=0.0)[1])


def bootstrap_standard_error(samples: np.ndarray) -> float:
    """Standard deviation (ddof = 1) of the finite bootstrap replicates of a statistic: its
    bootstrap standard error; NaN with fewer than 2 finite replicates."""
    finite = samples[np.isfinite(samples)].astype(np.float64)
    return float(np.std(finite, ddof=1)) if finite.size >= 2 else math.nan


def bootstrap_t_interval(
    estimate: float, samples: np.ndarray, *, units: int, confidence: float
) -> tuple[float, float]:
    """``estimate ± t(units − 1) · SE``, SE = :func:`bootstrap_standard_error` of ``samples``.

    ``units`` is the number of independent units the bootstrap resampled (the source weeks of
    the queue-tuning study): the t quantile with ``units − 1`` degrees of freedom widens the
    normal interval for the few units a log has. (NaN, NaN) when the SE is undefined or
    ``units < 2``. An SE of 0 (every replicate equal) gives the point ``(estimate, estimate)``.
    """
    se = bootstrap_standard_error(samples)
    if not math.isfinite(se) or units < 2 or not math.isfinite(estimate):
        return math.nan, math.nan
    from scipy.stats import t as student_t

    half = float(student_t.ppf(0.5 + confidence / 2.0, units - 1)) * se
    return estimate - half, estimate + half


def bootstrap_t_p_value(
    estimate: float, samples: np.ndarray, *, units: int, null: float = 0.0
) -> float:
    """Two-sided p-value of ``statistic == null``: ``|estimate − null| / SE`` against Student's
    t with ``units − 1`` degrees of freedom (the test that :func:`bootstrap_t_interval`
    inverts). 1.0 when the estimate equals ``null`` and SE is 0; 0.0 when it differs and SE is
    0; NaN when the SE is undefined or ``units < 2``."""
    se = bootstrap_standard_error(samples)
    if not math.isfinite(se) or units < 2 or not math.isfinite(estimate):
        return math.nan
    distance = abs(estimate - null)
    if se == 0.0:
        return 1.0 if distance == 0.0 else 0.0
    from scipy.stats import t as student_t

    return float(2.0 * student_t.sf(distance / se, units - 1))
