"""Compiled kernels of the NAG learner (private; the public API is :mod:`.nag`).

Normalized Adaptive Gradient (Ross, Mineiro & Langford, "Normalized Online Learning",
UAI 2013, algorithm NAG) on the degree-2 polynomial basis Φ(x); the formulas and the choices
(squares, ℓ2 term, guards) are documented in :mod:`scheduler.predictors.nag` and
``docs/simulator.md``.

State layout (C-contiguous float64, ``d`` = dimension of Φ):

``vec`` (VEC_ROWS, d)
    W (weights), S (per-feature scale s_i = max |Φ_i| seen so far, 0 before the first non-zero
    value), G (accumulated squared gradients), PHI (scratch: Φ of the last x).
``acc`` (ACC_ROWS,)
    N (the normaliser Σ_t Σ_i Φ_ti² / s_i²), T (number of updates).

Whether Φ holds the squares x_i² is read from ``d`` and ``x.size`` (the two dimensions differ
by n), so no flag travels with the state.
"""

from __future__ import annotations

import math

from scheduler.core.compile import jit
from scheduler.predictors.losses import loss_grad_at

W, S, G, PHI = range(4)
VEC_ROWS = 4
N_ACC, T_ACC = range(2)
ACC_ROWS = 2


@jit
def basis_dim(n: int, squares: bool) -> int:
    """Dimension of Φ for ``n`` raw features: 1 + n + n(n−1)/2, plus n with the squares."""
    return 1 + n + n * (n - 1) // 2 + (n if squares else 0)


#: The raw feature count whose expansion is compiled with the count as a constant: the
#: prediction kernel's 20 features (``sim._predict_kernel.N_FEAT``; a test checks that they
#: agree). Its loops are then fully unrolled: the CEA-Curie run's 590,000 expansions (one at
#: each submission, one at each completion) take 23-31 ms instead of 86 ms (0.15 µs a call
#: for 19 short rows of products, each a vector loop with its remainder and alias checks).
#: Any other count runs the same code with the count read at run time; the values are the same
#: products either way (a product is rounded once, however the loop is compiled).
UNROLLED_N = 20


@jit(reassociate=True, inline=True)
def _expand_n(x, n, squares, out):  # pragma: no cover - compiled
    """Φ(x) into ``out`` for ``n = x.size`` (a constant where the caller passes one)."""
    out[0] = 1.0
    for i in range(n):
        out[1 + i] = x[i]
    k = 1 + n
    if squares:
        for i in range(n):
            out[k + i] = x[i] * x[i]
        k += n
    # the products x_i·x_l (i < l) row by row, one running index
    for i in range(n - 1):
        xi = x[i]
        for t in range(i + 1, n):
            out[k] = xi * x[t]
            k += 1


@jit(reassociate=True, inline=True)
def _expand_into(x, squares, out):  # pragma: no cover - compiled
    """Φ(x) into ``out``, with the loops unrolled when ``x`` has :data:`UNROLLED_N` features."""
    if x.size == UNROLLED_N:
        _expand_n(x, UNROLLED_N, squares, out)
    else:
        _expand_n(x, x.size, squares, out)


@jit(reassociate=True)
def expand(x, squares, out):  # pragma: no cover - compiled
    """Write Φ(x) into ``out``: 1, x_0 … x_{n−1}, [x_0² … x_{n−1}²], x_i·x_l (i < l, row-major)."""
    _expand_into(x, squares, out)


@jit
def _squares_of(vec, x):  # pragma: no cover - compiled
    n = x.size
    return vec.shape[1] != 1 + n + n * (n - 1) // 2


@jit(reassociate=True)
def nag_predict(vec, x):  # pragma: no cover - compiled
    """wᵀΦ(x) with the current weights (s); only the PHI scratch row is written. A feature
    beyond its scale seen so far is not rescaled here: that happens in :func:`nag_update`."""
    _expand_into(x, _squares_of(vec, x), vec[PHI])
    y = 0.0
    for i in range(vec.shape[1]):
        y += vec[W, i] * vec[PHI, i]
    return y


@jit(reassociate=True)
def nag_update(vec, acc, x, target_p, q, loss_code, eta, lam, gamma_floor):  # pragma: no cover
    """One NAG step on the example (x, target_p) of a job with ``q`` processors.

    Returns the prediction ŷ = wᵀΦ(x) on which the gradient was taken (after the rescaling of
    the weights of features that exceed their scale, before the step).
    """
    # the rows are indexed in place (vec[W, i]), not taken as views (w = vec[W]): each view
    # costs a pair of atomic reference-count updates per call (the CEA-Curie run's learner
    # calls took 104 ms with views, 94 ms without); the loops and their reductions are the same
    d = vec.shape[1]
    _expand_into(x, _squares_of(vec, x), vec[PHI])
    # 1. scales: a larger |Φ_i| rescales w_i by s_i / |Φ_i| (the adaptive variant). Rare after
    # the first updates: a branch-free pass (it vectorises) finds whether any Φ_i grows, and
    # only then the loop with the branches runs
    grows = False
    for i in range(d):
        grows |= abs(vec[PHI, i]) > vec[S, i]
    if grows:
        for i in range(d):
            a = abs(vec[PHI, i])
            if a > vec[S, i]:
                if vec[S, i] > 0.0:
                    vec[W, i] *= vec[S, i] / a
                vec[S, i] = a
    # 2. prediction and normaliser (vectorised reductions: the order of the sums is the
    # compiler's; a basis function never seen non-zero has s_i = 0 and Φ_i = 0, and is skipped)
    y = 0.0
    nsum = 0.0
    for i in range(d):
        y += vec[W, i] * vec[PHI, i]
        r = vec[PHI, i] / vec[S, i] if vec[S, i] > 0.0 else 0.0
        nsum += r * r
    acc[N_ACC] += nsum
    acc[T_ACC] += 1.0
    if acc[N_ACC] <= 0.0:
        return y
    rate = eta * math.sqrt(acc[T_ACC] / acc[N_ACC])
    dl = loss_grad_at(loss_code, y, target_p, q, gamma_floor)
    # 3. per-feature adaptive step, without branches (the loop vectorises): a basis function
    # never seen non-zero has s_i = 0, hence g = 0 and G_i = 0, and no step; the l2 term
    # lam * s_i^2 * w_i spares the intercept (i = 0, done first)
    g = dl * vec[PHI, 0]
    vec[G, 0] += g * g
    den = vec[S, 0] * math.sqrt(vec[G, 0])
    if den > 0.0:
        vec[W, 0] -= rate * g / den
    for i in range(1, d):
        si = vec[S, i]
        g = dl * vec[PHI, i] + lam * si * si * vec[W, i]
        gi = vec[G, i] + g * g
        vec[G, i] = gi
        den = si * math.sqrt(gi)
        vec[W, i] -= rate * g / den if den > 0.0 else 0.0
    return y


@jit
def nag_run(vec, acc, xs, ps, qs, loss_code, eta, lam, gamma_floor, out):  # pragma: no cover
    """For each row k of ``xs``: ``out[k]`` = the prediction before seeing ``ps[k]``
    (:func:`nag_predict`), then :func:`nag_update` with (xs[k], ps[k], qs[k])."""
    for k in range(xs.shape[0]):
        out[k] = nag_predict(vec, xs[k])
        nag_update(vec, acc, xs[k], ps[k], qs[k], loss_code, eta, lam, gamma_floor)
