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

from fedtheory.algorithms.surrogate import check_step_size, kappa, kappa_bound_last, kappa_bound_uniform
from fedtheory.algorithms.theta import Theta, geometric_sum
from fedtheory.analysis.rates import (
    suboptimality_delta,
    suboptimality_delta_from_log,
    table2_rate,
    table2_rate_from_log,
)

__all__ = [
    "pareto_mask",
    "frontier_uniform",
    "frontier_last",
    "frontier",
    "log_K_grid",
    "random_spectrum",
    "log_distortions",
    "frontier_spectrum",
    "frontier_random_matrices",
    "frontier_problem",
    "THETA_FAMILIES",
    "worst_case_tradeoff",
]


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
    before = np.r_[np.inf, running[starts[1:] - 1]]  # min Δ over all earlier groups
    group_min = ds[starts]  # sorted by Δ within a group
    keep_sorted = (ds < before[group]) & (ds == group_min[group])
    mask = np.empty_like(keep_sorted)
    mask[order] = keep_sorted
    return mask


def frontier_uniform(
    mu: float, L: float, alpha: Any = 0.0, *, gammas: Any = None, Ks: Any = None, momentum: str = "gd"
) -> dict[str, np.ndarray]:
    """(ρ, Δ) for Θ_{1:K} along any path of (K, γ, α), vectorized.

    κ = φ(L, α, γ, K)/φ(μ, α, γ, K) (eq. 11; Lemma 3's bound, attained when the clients' spectra hit
    μ and L), κ₀ = L/μ, ρ = :func:`~fedtheory.analysis.rates.table2_rate` (κ, ``momentum``),
    Δ = eq. (17). ``alpha``, ``gammas`` and ``Ks`` broadcast against each other (typically all but one
    are scalars); defaults: γ = 1/(2(L + α)) (as in the paper's Figures 2–3) and K log-spaced over
    [1, 10⁶]. Every γ must satisfy Lemma 1's γ < 1/(L + α) (ValueError naming it). Returns 1-d arrays
    ``{"K", "gamma", "alpha", "kappa", "rho", "delta"}`` of the broadcast length.

    >>> fr = frontier_uniform(1.0, 5.0, 0.0, Ks=10)      # γ = 0.1: κ = 5(1 − 0.5¹⁰)/0.5 / ((1 − 0.9¹⁰)/0.1)
    >>> round(float(fr["kappa"][0]), 6), round(float(fr["delta"][0]), 6)
    (1.533841, 0.287112)
    >>> [round(float(k), 4) for k in frontier_uniform(1.0, 10.0, [0.0, 1.0, 5.0], gammas=0.05, Ks=10**6)["kappa"]]
    [1.0, 1.8182, 4.0]
    """
    a = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if gammas is None:
        gammas = 1.0 / (2.0 * (float(L) + a))
    if Ks is None:
        Ks = np.unique(np.round(np.logspace(0, 6, 200)))
    a, g, K = np.broadcast_arrays(
        a, np.atleast_1d(np.asarray(gammas, dtype=np.float64)), np.atleast_1d(np.asarray(Ks, dtype=np.float64))
    )
    a, g, K = a.ravel(), g.ravel(), K.ravel()
    kap = np.atleast_1d(kappa_bound_uniform(mu, L, a, g, K))
    rho = np.atleast_1d(table2_rate(kap, momentum))
    delta = np.atleast_1d(suboptimality_delta(float(L) / float(mu), kap))
    return {"K": K.astype(np.int64), "gamma": g.copy(), "alpha": a.copy(), "kappa": kap, "rho": rho, "delta": delta}


def log_K_grid(K_max: int = 10**6, points: int = 400) -> np.ndarray:
    """Integers K in [1, K_max], log-spaced and deduplicated (the paper's "K ∈ [1, 10⁶]").

    >>> log_K_grid(100, 5).tolist()
    [1, 3, 10, 32, 100]
    """
    return np.unique(np.round(np.logspace(0, np.log10(float(K_max)), int(points))).astype(np.int64))


def frontier_last(
    mu: float, L: float, alpha: Any = 0.0, *, gammas: Any = None, Ks: Any = None, momentum: str = "gd"
) -> dict[str, np.ndarray]:
    """(ρ, Δ) for Θ_K (MAML-style, Lemma 4's regime) along any path of (K, γ, α), vectorized.

    κ = ((1 − γ(L+α))/(1 − γ(μ+α)))^{K−1}·L/μ (eq. 13), ρ from Table 2, Δ from eq. (17). ``gammas``
    default to γ = 1/(2(KL + α)) per K (Figure 4's (2LK)^{-1} at α = 0); every γ must satisfy
    Lemma 4's γ < 1/(KL + α) (ValueError naming it). Returns ``{"K", "gamma", "alpha", "kappa", "rho", "delta"}``.

    >>> fr = frontier_last(1.0, 10.0, Ks=[1, 2, 100])
    >>> [round(float(k), 4) for k in fr["kappa"]]
    [10.0, 7.6923, 6.3972]
    """
    if Ks is None:
        Ks = log_K_grid()
    a, K = np.broadcast_arrays(
        np.atleast_1d(np.asarray(alpha, dtype=np.float64)), np.atleast_1d(np.asarray(Ks, dtype=np.float64))
    )
    if gammas is None:
        gammas = 1.0 / (2.0 * (K * float(L) + a))
    a, g, K = np.broadcast_arrays(a, np.atleast_1d(np.asarray(gammas, dtype=np.float64)), K)
    a, g, K = a.ravel(), g.ravel(), K.ravel()
    kap = np.atleast_1d(kappa_bound_last(mu, L, a, g, K))
    rho = np.atleast_1d(table2_rate(kap, momentum))
    delta = np.atleast_1d(suboptimality_delta(float(L) / float(mu), kap))
    return {"K": K.astype(np.int64), "gamma": g.copy(), "alpha": a.copy(), "kappa": kap, "rho": rho, "delta": delta}


def frontier(
    mu: float,
    L: float,
    *,
    theta: str = "uniform",
    alpha: float = 0.0,
    gammas: Any = None,
    Ks: Any = None,
    momentum: str = "gd",
) -> dict[str, np.ndarray]:
    """The analytic frontier of Section 5 over any path of (K, γ) at fixed α: Θ_{1:K} (``theta="uniform"``,
    eq. 11) or Θ_K (``theta="last"``, eq. 13). Dispatches to :func:`frontier_uniform` / :func:`frontier_last`.

    >>> fr = frontier(1.0, 10.0, theta="uniform", gammas=0.05, Ks=[1, 100], momentum="heavy_ball")
    >>> [round(float(r), 4) for r in fr["rho"]]
    [0.5195, 0.0015]
    """
    if theta == "uniform":
        return frontier_uniform(mu, L, alpha, gammas=gammas, Ks=Ks, momentum=momentum)
    if theta == "last":
        return frontier_last(mu, L, alpha, gammas=gammas, Ks=Ks, momentum=momentum)
    raise ValueError(f"theta must be 'uniform' (Theta_{{1:K}}) or 'last' (Theta_K), got {theta!r}")


def random_spectrum(d: int, mu: float, L: float, seed: Any = None) -> np.ndarray:
    """Eigenvalues of Appendix D.1's random A = β₁BᵀB + β₂I, B ∈ R^{d×d} with N(0, 1) entries,
    β₁, β₂ the unique scalars with λ_min(A) = μ and λ_max(A) = L. Ascending, shape (d,).

    >>> lam = random_spectrum(5, 1.0, 10.0, seed=0)
    >>> float(lam[0]), float(lam[-1]), lam.shape
    (1.0, 10.0, (5,))
    """
    d = int(d)
    mu, L = float(mu), float(L)
    if d < 2:
        raise ValueError(f"random_spectrum needs d >= 2 (both mu and L attained), got d={d}")
    if not 0 < mu < L < np.inf:
        raise ValueError(f"hypothesis 0 < mu < L violated: mu={mu:g}, L={L:g}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    B = rng.normal(size=(d, d))
    s = np.linalg.eigvalsh(B.T @ B)
    lam = mu + (L - mu) * (s - s[0]) / (s[-1] - s[0])
    lam[0], lam[-1] = mu, L  # exact extremes (the affine map rounds)
    return lam


def log_distortions(lam: Any, alpha: float, gamma: float, Ks: Any, theta: str) -> np.ndarray:
    """log q(λ_j) for Θ_{1:K} or Θ_K at each K of ``Ks`` and eigenvalue λ_j: shape (len(Ks), len(λ)).

    Log space, so K = 10⁶ with (1 − γλ)^{K−1} ≈ e^{−10⁴} is exact. Lemma 1's γ < 1/(L + α) is enforced.

    >>> np.exp(log_distortions([1.0, 3.0], 0.0, 0.25, [1, 3], "last")).round(12).tolist()
    [[1.0, 1.0], [0.5625, 0.0625]]
    """
    lam = np.asarray(lam, dtype=np.float64).ravel()
    check_step_size(float(lam.max()), alpha, gamma)
    K = np.atleast_1d(np.asarray(Ks, dtype=np.float64))[:, None]
    s = float(gamma) * (lam[None, :] + float(alpha))
    if theta == "last":
        return (K - 1) * np.log1p(-s)
    if theta == "uniform":
        return np.log(geometric_sum(s, K))
    raise ValueError(f"theta must be 'uniform' or 'last', got {theta!r}")


def frontier_spectrum(
    lam: Any,
    *,
    alpha: float = 0.0,
    gamma: float,
    Ks: Any = None,
    theta: str = "last",
    momentum: str = "gd",
    delta: str = "lemma5",
) -> dict[str, np.ndarray]:
    """(ρ, Δ) of one client with Hessian eigenvalues ``lam`` (Figure 5's simulated frontiers), any γ in Lemma 1's regime.

    κ = λ_max(QA)/λ_min(QA) = max_j q(λ_j)λ_j / min_j q(λ_j)λ_j (eq. 9 for one client) — including
    γ ≥ 1/(KL + α), where q(λ)λ is not monotone and κ depends on the intermediate eigenvalues.
    ``delta="lemma5"``: Δ = (√b − √a)/(√b + √a) with b/a = cond(Q) (Appendix D.1: "substituting κ into
    Table 2 and Lemma 5"); ``delta="eq17"``: Δ of eq. (17) with κ₀ = λ_max/λ_min (Section 5's wording),
    which is negative once κ > κ₀. The two agree for Θ_K while γ < 1/(KL + α). All in log space.
    Returns ``{"K", "gamma", "log_kappa", "kappa", "rho", "delta", "log_cond_Q"}``.

    >>> fr = frontier_spectrum([1.0, 4.0, 10.0], gamma=0.001, Ks=[1, 2])
    >>> [round(float(r), 6) for r in fr["rho"]], [round(float(d), 6) for d in fr["delta"]]
    ([0.818182, 0.81668], [0.0, 0.002262])
    """
    lam = np.asarray(lam, dtype=np.float64).ravel()
    if Ks is None:
        Ks = log_K_grid()
    K = np.atleast_1d(np.asarray(Ks, dtype=np.int64))
    lq = log_distortions(lam, alpha, gamma, K, theta)
    lqa = lq + np.log(lam)[None, :]
    log_kappa = np.maximum(lqa.max(axis=1) - lqa.min(axis=1), 0.0)
    log_cond_q = lq.max(axis=1) - lq.min(axis=1)
    rho = np.atleast_1d(table2_rate_from_log(log_kappa, momentum))
    if delta == "lemma5":
        dl = np.atleast_1d(suboptimality_delta_from_log(log_cond_q))
    elif delta == "eq17":
        dl = np.atleast_1d(suboptimality_delta_from_log(np.log(lam.max() / lam.min()) - log_kappa))
    else:
        raise ValueError(f"delta must be 'lemma5' or 'eq17', got {delta!r}")
    with np.errstate(over="ignore"):
        kap = np.exp(log_kappa)
    return {
        "K": K,
        "gamma": np.full(K.shape, float(gamma)),
        "log_kappa": log_kappa,
        "kappa": kap,
        "rho": rho,
        "delta": dl,
        "log_cond_Q": log_cond_q,
    }


def frontier_random_matrices(
    mu: float,
    L: float,
    d: int,
    *,
    gamma: float,
    Ks: Any = None,
    alpha: float = 0.0,
    theta: str = "last",
    momentum: str = "gd",
    delta: str = "lemma5",
    seed: Any = None,
) -> dict[str, np.ndarray]:
    """Appendix D.1's simulated frontier: one random A (:func:`random_spectrum`) through :func:`frontier_spectrum`.

    >>> fr = frontier_random_matrices(1.0, 10.0, 100, gamma=0.001, Ks=[1, 255, 10**6], seed=0)
    >>> [round(float(r), 3) for r in fr["rho"]], [round(float(x), 3) for x in fr["delta"]]
    ([0.818, 0.302, 1.0], [0.0, 0.519, 1.0])
    """
    lam = random_spectrum(d, mu, L, seed)
    out = frontier_spectrum(lam, alpha=alpha, gamma=gamma, Ks=Ks, theta=theta, momentum=momentum, delta=delta)
    out["eigenvalues"] = lam
    return out


def frontier_problem(
    problem, thetas: Any, *, alpha: float = 0.0, gammas: Any, momentum: str = "gd"
) -> dict[str, np.ndarray]:
    """(ρ, Δ) of an actual federation along a path of (Θ, γ): κ of eq. (9) from its matrices, Δ of eq. (17).

    ``thetas``: a Theta or a list of them; ``gammas``: a number or a list broadcast against ``thetas``.
    κ₀ = L/μ of the problem. Lemma 1's hypothesis is enforced by :func:`~fedtheory.algorithms.surrogate.kappa`.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(2, 3, mu=1.0, L=10.0, commuting=True, seed=0)
    >>> fr = frontier_problem(prob, [Theta.uniform(1), Theta.uniform(10)], gammas=0.05)
    >>> [round(float(k), 4) for k in fr["kappa"]]
    [10.0, 2.4897]
    """
    thetas = [thetas] if isinstance(thetas, Theta) else list(thetas)
    gs = np.broadcast_to(np.asarray(gammas, dtype=np.float64), (len(thetas),))
    kap = np.array([kappa(problem, alpha, float(g), th)[0] for th, g in zip(thetas, gs)])
    return {
        "K": np.array([th.K for th in thetas], dtype=np.int64),
        "gamma": gs.copy(),
        "kappa": kap,
        "rho": np.atleast_1d(table2_rate(kap, momentum)),
        "delta": np.atleast_1d(suboptimality_delta(problem.L / problem.mu, kap)),
    }


THETA_FAMILIES = ("uniform", "last", "maml")
CUSTOM_K_MAX = 64


def _custom_extremes(theta: Theta, mu: float, L: float, a: np.ndarray, g: np.ndarray):
    """(log min g, log max g, log q(μ), log q(L)) over λ ∈ [μ, L] for a general Θ, every (α, γ) at once.

    g(λ) = λ q(1 − γ(λ + α)) is a polynomial of degree K in λ: with m = c₀ + c₁λ (c₀ = 1 − γα, c₁ = −γ),
    q's coefficients in λ are a_i = Σ_{j≥i} θ_{j+1} C(j, i) c₀^{j−i} c₁^i. Its extremes on [μ, L] are at the
    endpoints or at real roots of g' there, found as the eigenvalues of batched companion matrices.
    """
    from math import comb

    w = theta.weights
    K = w.size
    c0, c1 = 1 - g * a, -g
    B = np.array([[comb(j, i) if j >= i else 0 for j in range(K)] for i in range(K)], dtype=np.float64)
    jj, ii = np.meshgrid(np.arange(K), np.arange(K))  # [i, j]
    expo = np.clip(jj - ii, 0, None)
    # coef[n, i] = Σ_j θ_j C(j,i) c0^{j−i} c1^i
    coef = np.einsum("j,ij,nij->ni", w, B, c0[:, None, None] ** expo[None] * (jj >= ii)[None]) * c1[
        :, None
    ] ** np.arange(K)
    gcoef = np.concatenate([np.zeros((g.size, 1)), coef], axis=1)  # g = λ q: degree K, ascending powers
    dcoef = gcoef[:, 1:] * np.arange(1, K + 1)  # g', degree K − 1
    points = [np.full(g.size, mu), np.full(g.size, L)]
    if K >= 2:
        lead = dcoef[:, -1]
        ok = np.abs(lead) > 0
        deg = K - 1
        comp = np.zeros((g.size, deg, deg))
        comp[:, 1:, :-1] = np.eye(deg - 1) if deg > 1 else 0.0
        comp[:, :, -1] = -dcoef[:, :-1] / np.where(ok, lead, 1.0)[:, None]
        roots = np.linalg.eigvals(comp)
        real = np.abs(roots.imag) <= 1e-9 * np.maximum(1.0, np.abs(roots.real))
        inside = real & (roots.real >= mu) & (roots.real <= L) & ok[:, None]
        cand = np.where(inside, roots.real, mu)
        points += [cand[:, j] for j in range(deg)]
    lam = np.stack(points, axis=1)  # (n, candidates)
    m = 1 - g[:, None] * (lam + a[:, None])
    q = _horner(w, m)
    log_g = np.log(q) + np.log(lam)
    return log_g.min(axis=1), log_g.max(axis=1), np.log(q[:, 0]), np.log(q[:, 1])


def _horner(w: np.ndarray, m: np.ndarray) -> np.ndarray:
    out = np.full_like(m, w[-1])
    for t in w[-2::-1]:
        out = out * m + t
    return out


def worst_case_tradeoff(
    mu: float, L: float, *, theta: Any = "uniform", alpha: Any = 0.0, gamma: Any, K: Any = None, momentum: str = "gd"
) -> dict[str, np.ndarray]:
    """(κ, ρ, Δ) over the whole class μI ⪯ A_i ⪯ LI, for any γ in Lemma 1's regime, vectorized.

    κ_sup = sup over federations of the class of κ(α, γ, Θ) (eq. 9) = max_{λ∈[μ,L]} g(λ)/min g(λ),
    g(λ) = q(λ)λ the eigenvalue of Q A (attained by aligned clients whose spectra hit the extremes):

    - ``"uniform"`` (Θ_{1:K}, FedAvg/FedProx/Reptile): g = φ is increasing, κ_sup = φ(L)/φ(μ) (eq. 11);
    - ``"last"`` (Θ_K, FOMAML): g = ψ is log-concave with its maximum at λ* = (1 − γα)/(γK), so
      κ_sup = ψ(clip(λ*, μ, L))/min(ψ(μ), ψ(L)); inside Lemma 4's regime γ < 1/(KL + α) this is eq. (13);
    - ``"maml"`` (K inner steps, α = 0): Θ_{2K+1} by Theorem 2, i.e. ``"last"`` with 2K + 1;
    - custom weights (a :class:`~fedtheory.algorithms.theta.Theta` or a sequence θ_1..θ_K, K ≤ 64; ``K`` is
      then K(Θ)): the extremes of the degree-K polynomial g on [μ, L] at the endpoints and the real roots
      of g', and Δ from Lemma 5 (Lemma 6 covers Θ_{1:K} and Θ_K only).

    ρ is Table 2's rate at κ_sup (``momentum``); Δ is eq. (17) (Theorem 4) where Lemma 6 applies
    (Θ_{1:K}, or Θ_K with γ < 1/(KL + α)), else Lemma 5's (√b − √a)/(√b + √a) with b/a = sup cond(Q)
    = q(μ)/q(L) (q decreases in λ); ``delta_source`` says which ("theorem-4" / "lemma-5"). Everything is
    in log space (κ up to e^{10⁴}). Lemma 1's γ < 1/(L + α), 0 < μ ≤ L, K ≥ 1 and α ≥ 0 are enforced
    (ValueError naming the hypothesis). Returns 1-d arrays ``{"K", "gamma", "alpha", "log_kappa",
    "kappa", "rho", "delta", "log_L_tilde", "log_mu_tilde"}`` (log of the class-wide extremes of the
    eigenvalues of ∇²f̃, which tune the server: η = 2/(L̃ + μ̃) for gradient descent) and the list
    ``delta_source``.

    >>> out = worst_case_tradeoff(1.0, 10.0, theta="last", gamma=[0.009, 0.05], K=11)
    >>> out["delta_source"], [round(float(k), 4) for k in out["kappa"]]
    (['theorem-4', 'lemma-5'], [4.2626, 71.7812])
    >>> round(float(worst_case_tradeoff(1.0, 10.0, gamma=0.05, K=10)["kappa"][0]), 4)    # eq. (11)
    2.4897
    >>> worst_case_tradeoff(1.0, 10.0, theta="maml", alpha=0.5, gamma=0.01, K=3)
    Traceback (most recent call last):
    ...
    ValueError: theta 'maml' is Theta_{2K+1} only for alpha = 0 (Theorem 2); got alpha=0.5
    """
    custom = None
    if not isinstance(theta, str):
        custom = theta if isinstance(theta, Theta) else Theta(theta)
        if custom.K > CUSTOM_K_MAX:
            raise ValueError(
                f"custom Theta supports K(Theta) <= {CUSTOM_K_MAX} (exact extremes through the roots of g'), "
                f"got K={custom.K}; use theta='uniform' or 'last' for long Theta"
            )
        K = custom.K
    elif theta not in THETA_FAMILIES:
        raise ValueError(f"theta must be one of {THETA_FAMILIES} or a Theta / weight sequence, got {theta!r}")
    elif K is None:
        raise ValueError(f"theta {theta!r} needs K (the number of local steps)")
    mu_f, L_f = float(mu), float(L)
    if not (0 < mu_f <= L_f < np.inf):
        raise ValueError(f"hypothesis 0 < mu <= L < inf violated (Assumption 1): mu={mu_f:g}, L={L_f:g}")
    a, g, k = np.broadcast_arrays(
        np.atleast_1d(np.asarray(alpha, dtype=np.float64)),
        np.atleast_1d(np.asarray(gamma, dtype=np.float64)),
        np.atleast_1d(np.asarray(K, dtype=np.float64)),
    )
    a, g, k = a.ravel().copy(), g.ravel().copy(), k.ravel().copy()
    if np.any(a < 0) or not np.all(np.isfinite(a)):
        raise ValueError(f"hypothesis alpha >= 0 violated: alpha={a[(a < 0) | ~np.isfinite(a)][0]:g}")
    if not np.all((k >= 1) & (k == np.floor(k))):
        raise ValueError(f"hypothesis K >= 1 integer violated: K={k[~((k >= 1) & (k == np.floor(k)))][0]:g}")
    check_step_size(L_f, a, g)
    if custom is None and theta == "maml":
        if np.any(a != 0):
            raise ValueError(
                f"theta 'maml' is Theta_{{2K+1}} only for alpha = 0 (Theorem 2); got alpha={a[a != 0][0]:g}"
            )
        steps = 2 * k + 1
    else:
        steps = k
    s_mu, s_L = g * (mu_f + a), g * (L_f + a)
    if custom is not None:
        log_g_min, log_g_max, log_q_mu, log_q_L = _custom_extremes(custom, mu_f, L_f, a, g)
        in_lemma6 = np.zeros(g.shape, dtype=bool)  # Lemma 6 covers Θ_{1:K} and Θ_K only
    elif theta == "uniform":
        log_q_mu, log_q_L = np.log(geometric_sum(s_mu, steps)), np.log(geometric_sum(s_L, steps))
        log_g_max, log_g_min = log_q_L + np.log(L_f), log_q_mu + np.log(mu_f)
        in_lemma6 = np.ones(g.shape, dtype=bool)
    else:

        def log_psi(lam: np.ndarray) -> np.ndarray:
            return (steps - 1) * np.log1p(-g * (lam + a)) + np.log(lam)

        with np.errstate(divide="ignore"):
            lam_star = np.where(g > 0, (1 - g * a) / np.where(g > 0, g * steps, 1.0), np.inf)
        lam_star = np.clip(lam_star, mu_f, L_f)
        log_g_max = log_psi(lam_star)
        log_g_min = np.minimum(log_psi(np.full(g.shape, mu_f)), log_psi(np.full(g.shape, L_f)))
        log_q_mu, log_q_L = (steps - 1) * np.log1p(-s_mu), (steps - 1) * np.log1p(-s_L)
        in_lemma6 = g * (steps * L_f + a) < 1
    log_kappa = np.maximum(log_g_max - log_g_min, 0.0)
    rho = np.atleast_1d(table2_rate_from_log(log_kappa, momentum))
    log_kappa0 = np.log(L_f / mu_f)
    delta = np.where(
        in_lemma6,
        suboptimality_delta_from_log(log_kappa0 - log_kappa),
        suboptimality_delta_from_log(np.abs(log_q_mu - log_q_L)),
    )
    with np.errstate(over="ignore"):
        kap = np.exp(log_kappa)
    return {
        "K": k.astype(np.int64),
        "gamma": g,
        "alpha": a,
        "log_kappa": log_kappa,
        "kappa": kap,
        "rho": rho,
        "delta": np.atleast_1d(delta),
        "log_L_tilde": log_g_max,
        "log_mu_tilde": log_g_min,
        "delta_source": ["theorem-4" if v else "lemma-5" for v in in_lemma6],
    }
