"""Convergence/accuracy Pareto frontiers (Charles & Konečný, arXiv:2103.05032, Section 5).

For LocalUpdate with Θ = Θ_{1:K}, a point of the trade-off is (ρ, Δ): the server's linear rate
ρ = ρ(κ) of Table 2 and the suboptimality Δ = (√κ₀ − √κ)/(√κ₀ + √κ) of eq. (17), with
κ = φ(L)/φ(μ) (eq. 11) and κ₀ = L/μ. Sweeping K (γ fixed) or γ (K fixed) traces a curve in
[0, 1]²; :func:`pareto_mask` keeps the points no other point beats on both axes.

>>> import numpy as np
>>> from fedtheory.analysis.pareto import frontier_uniform, pareto_mask
>>> fr = frontier_uniform(1.0, 10.0, 0.0, gammas=0.05, Ks=[1, 10, 100])
>>> fr["K"].tolist(), [round(float(r), 4) for r in fr["rho"]]    # κ = 10, 2.4897, 1.0060
([1, 10, 100], [0.8182, 0.4269, 0.003])
>>> pareto_mask(np.array([0.1, 0.2, 0.3]), np.array([0.3, 0.1, 0.2])).tolist()
[True, True, False]
"""
from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.algorithms.surrogate import kappa_bound_uniform
from fedtheory.analysis.rates import suboptimality_delta, table2_rate

__all__ = ["pareto_mask", "frontier_uniform"]


def pareto_mask(rho: Any, delta: Any) -> np.ndarray:
    """Boolean mask of the non-dominated points when minimizing both ``rho`` and ``delta``.

    Point i is dominated when some j has ρ_j ≤ ρ_i and Δ_j ≤ Δ_i with at least one strict; equal
    points do not dominate each other (both are kept). O(N log N): sort by (ρ, Δ) and compare each
    point's Δ with the best Δ among strictly smaller ρ.

    >>> pareto_mask([0.0, 0.0, 1.0, 1.0], [1.0, 2.0, 0.0, 0.0]).tolist()
    [True, False, True, True]
    """
    r = np.asarray(rho, dtype=np.float64).ravel()
    d = np.asarray(delta, dtype=np.float64).ravel()
    if r.shape != d.shape:
        raise ValueError(f"rho and delta must have the same size, got {r.size} and {d.size}")
    if np.isnan(r).any() or np.isnan(d).any():
        raise ValueError("rho and delta must not contain NaN")
    if r.size == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((d, r))
    rs, ds = r[order], d[order]
    # group starts of equal ρ; best Δ among strictly smaller ρ = running min up to the group start
    starts = np.flatnonzero(np.r_[True, rs[1:] != rs[:-1]])
    group = np.cumsum(np.r_[True, rs[1:] != rs[:-1]]) - 1
    running = np.minimum.accumulate(ds)
    before = np.r_[np.inf, running[starts[1:] - 1]]          # min Δ over all earlier groups
    group_min = ds[starts]                                    # sorted by Δ within a group
    keep_sorted = (ds < before[group]) & (ds == group_min[group])
    mask = np.empty_like(keep_sorted)
    mask[order] = keep_sorted
    return mask


def frontier_uniform(mu: float, L: float, alpha: float = 0.0, *, gammas: Any = None, Ks: Any = None,
                     momentum: str = "gd") -> dict[str, np.ndarray]:
    """(ρ, Δ) for Θ_{1:K} along a path of K (γ fixed) or of γ (K fixed), vectorized.

    κ = φ(L, α, γ, K)/φ(μ, α, γ, K) (eq. 11; Lemma 3's bound, attained when the clients' spectra hit
    μ and L), κ₀ = L/μ, ρ = :func:`~fedtheory.analysis.rates.table2_rate` (κ, ``momentum``),
    Δ = eq. (17). ``gammas`` and ``Ks`` broadcast against each other (typically one is a scalar);
    defaults: γ = 1/(2(L + α)) (as in the paper's Figures 2–3) and K log-spaced over [1, 10⁶].
    Every γ must satisfy Lemma 1's γ < 1/(L + α) (ValueError naming it). Returns 1-d arrays
    ``{"K", "gamma", "kappa", "rho", "delta"}`` of the broadcast length.

    >>> fr = frontier_uniform(1.0, 5.0, 0.0, Ks=10)      # γ = 0.1: κ = 5(1 − 0.5¹⁰)/0.5 / ((1 − 0.9¹⁰)/0.1)
    >>> round(float(fr["kappa"][0]), 6), round(float(fr["delta"][0]), 6)
    (1.533841, 0.287112)
    """
    if gammas is None:
        gammas = 1.0 / (2.0 * (float(L) + float(alpha)))
    if Ks is None:
        Ks = np.unique(np.round(np.logspace(0, 6, 200)))
    g, K = np.broadcast_arrays(np.atleast_1d(np.asarray(gammas, dtype=np.float64)),
                               np.atleast_1d(np.asarray(Ks, dtype=np.float64)))
    g, K = g.ravel(), K.ravel()
    kap = np.atleast_1d(kappa_bound_uniform(mu, L, alpha, g, K))
    rho = np.atleast_1d(table2_rate(kap, momentum))
    delta = np.atleast_1d(suboptimality_delta(float(L) / float(mu), kap))
    return {"K": K.astype(np.int64), "gamma": g.copy(), "kappa": kap, "rho": rho, "delta": delta}
