"""Convergence rates of the server iteration on a quadratic: Table 2 and the linear iteration itself.

Charles & Konečný (arXiv:2103.05032), Theorem 3 / Table 2, take the rates of gradient descent with
no, Nesterov or heavy-ball momentum on a κ-conditioned quadratic from Lessard, Recht & Packard,
*Analysis and Design of Optimization Algorithms via Integral Quadratic Constraints* (SIAM J. Optim.
2016), Proposition 1, with that proposition's tuned parameters:

=============  ========================  =============================  ==========================
momentum       ρ(κ)                      η                              β
=============  ========================  =============================  ==========================
``gd``         (κ − 1)/(κ + 1)           2/(L + μ)                      0
``nesterov``   1 − 2/√(3κ + 1)           4/(3L + μ)                     (√(3κ+1) − 2)/(√(3κ+1) + 2)
``heavy_ball`` (√κ − 1)/(√κ + 1)         4/(√L + √μ)²                   ((√κ − 1)/(√κ + 1))²
=============  ========================  =============================  ==========================

On a quadratic with Hessian eigenvalue λ the error in that eigendirection evolves by a fixed linear
recursion; :func:`iteration_polynomials` runs it and :func:`iteration_spectral_radius` gives its
exact asymptotic rate, so the table can be checked instead of trusted.

>>> from fedtheory.analysis.rates import table2_rate, tuned_server, iteration_spectral_radius
>>> round(table2_rate(9.0, "heavy_ball"), 12)
0.5
>>> srv = tuned_server("heavy_ball", 1.0, 9.0)
>>> [round(float(r), 12) for r in iteration_spectral_radius(srv, [1.0, 4.0, 9.0])]
[0.5, 0.5, 0.5]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedtheory.algorithms.local_update import ServerOpt

__all__ = [
    "MOMENTA",
    "table2_rate",
    "tuned_server",
    "iteration_polynomials",
    "iteration_spectral_radius",
    "worst_case_contraction",
    "rate_with_constant_one",
    "suboptimality_delta",
    "table2_rate_from_log",
    "suboptimality_delta_from_log",
    "transient_constant",
    "rounds_to_contract",
]

MOMENTA = ("gd", "nesterov", "heavy_ball")


def _check_momentum(momentum: str) -> None:
    if momentum not in MOMENTA:
        raise ValueError(f"momentum must be one of {MOMENTA}, got {momentum!r}")


def _check_kappa(kappa: Any, name: str = "kappa") -> np.ndarray:
    k = np.asarray(kappa, dtype=np.float64)
    bad = ~(k >= 1)
    if bad.any():
        raise ValueError(f"hypothesis {name} >= 1 violated (a condition number): {name}={k[bad].flat[0]:g}")
    return k


def _out(a: np.ndarray) -> np.ndarray | float:
    return float(a) if np.ndim(a) == 0 else a


def table2_rate(kappa: Any, momentum: str) -> np.ndarray | float:
    """ρ(κ) of Table 2 (Lessard, Recht & Packard 2016, Prop. 1): the tuned method's linear rate.

    ``momentum``: ``"gd"`` → (κ−1)/(κ+1); ``"nesterov"`` → 1 − 2/√(3κ+1); ``"heavy_ball"`` →
    (√κ−1)/(√κ+1). Vectorized over κ; κ ≥ 1 required (ValueError naming it).

    >>> table2_rate(3.0, "gd"), table2_rate(1.0, "nesterov"), table2_rate(4.0, "heavy_ball")
    (0.5, 0.0, 0.3333333333333333)
    >>> table2_rate(0.5, "gd")
    Traceback (most recent call last):
    ...
    ValueError: hypothesis kappa >= 1 violated (a condition number): kappa=0.5
    """
    _check_momentum(momentum)
    k = _check_kappa(kappa)
    if momentum == "gd":
        return _out((k - 1) / (k + 1))
    if momentum == "nesterov":
        return _out(1 - 2 / np.sqrt(3 * k + 1))
    r = np.sqrt(k)
    return _out((r - 1) / (r + 1))


def tuned_server(momentum: str, mu_tilde: float, L_tilde: float) -> ServerOpt:
    """The ServerOpt with Lessard et al.'s tuned parameters for eigenvalues in [μ̃, L̃] (κ = L̃/μ̃).

    gd: η = 2/(L̃+μ̃); heavy_ball: η = 4/(√L̃+√μ̃)², β = ((√κ−1)/(√κ+1))²;
    nesterov: η = 4/(3L̃+μ̃), β = (√(3κ+1)−2)/(√(3κ+1)+2).

    >>> tuned_server("gd", 1.0, 3.0)
    ServerOpt(kind='gd', lr=0.5, momentum=0.0)
    >>> tuned_server("nesterov", 1.0, 1.0)
    ServerOpt(kind='nesterov', lr=1.0, momentum=0.0)
    """
    _check_momentum(momentum)
    mu, L = float(mu_tilde), float(L_tilde)
    if not (0 < mu <= L < np.inf):
        raise ValueError(f"hypothesis 0 < mu_tilde <= L_tilde < inf violated: mu_tilde={mu:g}, L_tilde={L:g}")
    k = L / mu
    if momentum == "gd":
        return ServerOpt("gd", lr=2 / (L + mu))
    if momentum == "heavy_ball":
        r = np.sqrt(k)
        return ServerOpt("heavy_ball", lr=4 / (np.sqrt(L) + np.sqrt(mu)) ** 2, momentum=((r - 1) / (r + 1)) ** 2)
    r = np.sqrt(3 * k + 1)
    return ServerOpt("nesterov", lr=4 / (3 * L + mu), momentum=(r - 2) / (r + 2))


def iteration_polynomials(server: ServerOpt, lam: Any, T: int) -> np.ndarray:
    """P_t(λ), t = 0..T, with e_t = P_t(λ) e_0 for the server iteration on a quadratic (x_{−1} = x_0).

    In an eigendirection of the Hessian with eigenvalue λ, the gradient is λe, so (η = lr, β = momentum):
    gd: P_{t+1} = (1 − ηλ)P_t; heavy_ball: P_{t+1} = (1 + β − ηλ)P_t − βP_{t−1};
    nesterov: P_{t+1} = (1 − ηλ)((1 + β)P_t − βP_{t−1}); with P_{−1} = P_0 = 1. Returns shape
    (T + 1,) + shape(λ).

    >>> from fedtheory.algorithms.local_update import ServerOpt
    >>> iteration_polynomials(ServerOpt("heavy_ball", lr=0.5, momentum=0.5), 1.0, 3).tolist()
    [1.0, 0.5, 0.0, -0.25]
    """
    if int(T) != T or T < 0:
        raise ValueError(f"T must be a non-negative integer, got {T!r}")
    lam = np.asarray(lam, dtype=np.float64)
    eta, beta = server.lr, server.momentum
    out = np.empty((int(T) + 1,) + lam.shape)
    out[0] = 1.0
    if server.kind == "gd":
        # the running product P_t = P_{t−1}·(1 − ηλ): T multiplications in order, as a loop would do them, in one call
        out[1:] = 1 - eta * lam
        return np.multiply.accumulate(out, axis=0)
    # the per-round factors do not change with t: formed once (the same floats every round)
    heavy_ball = server.kind == "heavy_ball"
    a = 1 + beta - eta * lam if heavy_ball else 1 - eta * lam
    prev = cur = out[0]
    for t in range(1, int(T) + 1):
        nxt = a * cur - beta * prev if heavy_ball else a * ((1 + beta) * cur - beta * prev)
        prev, cur = cur, nxt
        out[t] = cur
    return out


def iteration_spectral_radius(server: ServerOpt, lam: Any) -> np.ndarray:
    """Per-eigenvalue spectral radius of the server iteration's 1×1 (gd) or 2×2 (momentum) matrix.

    From the closed-form roots of z² − b z + c (heavy_ball: b = 1 + β − ηλ, c = β; nesterov:
    b = (1 + β)(1 − ηλ), c = β(1 − ηλ)). The discriminant is formed as a product of factors
    (heavy_ball: ((1−√β)² − ηλ)((1+√β)² − ηλ); nesterov: (1 − ηλ)((1−β)² − (1+β)²ηλ)) so it has no
    cancellation away from its zeros; when it is ≤ 0 the roots are a conjugate pair (or double) and
    the radius is √c exactly, never the square root of rounding noise. gd: |1 − ηλ|.

    >>> from fedtheory.algorithms.local_update import ServerOpt
    >>> iteration_spectral_radius(ServerOpt("gd", lr=0.5), [1.0, 3.0]).tolist()
    [0.5, 0.5]
    >>> iteration_spectral_radius(ServerOpt("nesterov", lr=1.0, momentum=0.5), [1.0]).tolist()   # ηλ = 1: z² = 0
    [0.0]
    """
    lam = np.asarray(lam, dtype=np.float64)
    eta, beta = server.lr, server.momentum
    h = eta * lam
    if server.kind == "gd":
        return np.abs(1 - h)
    if server.kind == "heavy_ball":
        sb = np.sqrt(beta)
        b = 1 + beta - h
        c = np.full_like(h, beta)
        disc = ((1 - sb) ** 2 - h) * ((1 + sb) ** 2 - h)
    else:
        b = (1 + beta) * (1 - h)
        c = beta * (1 - h)
        disc = (1 - h) * ((1 - beta) ** 2 - (1 + beta) ** 2 * h)
    real = disc > 0
    radius = np.where(real, (np.abs(b) + np.sqrt(np.where(real, disc, 0.0))) / 2, np.sqrt(np.abs(c)))
    return radius


def worst_case_contraction(server: ServerOpt, lam: Any, T: int) -> np.ndarray:
    """c_t = max_λ |P_t(λ)|, t = 0..T: the exact sup over x_0 of ‖x_t − x̃*‖/‖x_0 − x̃*‖ on a quadratic.

    With a symmetric Hessian of eigenvalues ``lam`` and the momentum buffer starting empty
    (x_{−1} = x_0), e_t = P_t(H) e_0, so ‖e_t‖ ≤ c_t‖e_0‖ with equality for e_0 along the maximizing
    eigenvector: c_t is what a bound ‖x_t − x̃*‖ ≤ C ρ^t ‖x_0 − x̃*‖ must dominate.

    >>> from fedtheory.algorithms.local_update import ServerOpt
    >>> worst_case_contraction(ServerOpt("gd", lr=0.5), [1.0, 3.0], 2).tolist()
    [1.0, 0.5, 0.25]
    """
    P = iteration_polynomials(server, np.atleast_1d(np.asarray(lam, dtype=np.float64)), T)
    return np.abs(P).max(axis=1)


def rate_with_constant_one(server: ServerOpt, lam: Any, T: int) -> float:
    """The smallest ρ with ‖x_t − x̃*‖ ≤ ρ^t‖x_0 − x̃*‖ for every x_0 and every 1 ≤ t ≤ T: max_t c_t^{1/t}.

    This is Section 5's definition of ρ(α, γ, Θ) (the infimum over ρ such that (14) holds for all
    T ≥ 1), truncated at T; it is ≥ the spectral radius, with equality for gradient descent.

    >>> from fedtheory.algorithms.local_update import ServerOpt
    >>> rate_with_constant_one(ServerOpt("gd", lr=0.5), [1.0, 3.0], 10)
    0.5
    """
    if int(T) != T or T < 1:
        raise ValueError(f"T must be a positive integer, got {T!r}")
    c = worst_case_contraction(server, lam, int(T))[1:]
    t = np.arange(1, int(T) + 1)
    with np.errstate(divide="ignore"):
        return float(np.max(np.exp(np.log(c) / t)))


def suboptimality_delta(kappa0: Any, kappa: Any) -> np.ndarray | float:
    """Δ = (√κ₀ − √κ)/(√κ₀ + √κ) (eq. 17): the worst-case suboptimality of Theorem 4 (per 8C).

    κ₀ = L/μ is the empirical loss's condition number and κ = κ(α, γ, Θ). Both ≥ 1 (ValueError
    naming it). For Θ_{1:K} and Θ_K in their lemmas' regimes κ ≤ κ₀, so Δ ∈ [0, 1); a κ > κ₀ gives
    Δ < 0, which is returned as is.

    >>> suboptimality_delta(9.0, 1.0), suboptimality_delta(4.0, 4.0)
    (0.5, 0.0)
    """
    k0 = _check_kappa(kappa0, "kappa0")
    k = _check_kappa(kappa)
    r0, r = np.sqrt(k0), np.sqrt(k)
    return _out((r0 - r) / (r0 + r))


def table2_rate_from_log(log_kappa: Any, momentum: str) -> np.ndarray | float:
    """ρ of Table 2 from log κ, exact for κ far beyond float64 (MAML's κ reaches e^{10⁴} at K = 10⁶).

    (κ−1)/(κ+1) = tanh(½ log κ); (√κ−1)/(√κ+1) = tanh(¼ log κ);
    1 − 2/√(3κ+1) = −expm1(log 2 − ½ log(3κ+1)) with log(3κ+1) = logaddexp(log 3 + log κ, 0).
    log κ ≥ 0 required (ValueError naming it).

    >>> round(table2_rate_from_log(np.log(3.0), "gd"), 15), table2_rate_from_log(1e5, "heavy_ball")
    (0.5, 1.0)
    >>> abs(table2_rate_from_log(np.log(5.0), "nesterov") - table2_rate(5.0, "nesterov")) < 1e-15
    True
    """
    _check_momentum(momentum)
    lk = np.asarray(log_kappa, dtype=np.float64)
    bad = ~(lk >= 0)
    if bad.any():
        raise ValueError(f"hypothesis log_kappa >= 0 violated (kappa >= 1): log_kappa={lk[bad].flat[0]:g}")
    if momentum == "gd":
        return _out(np.tanh(lk / 2))
    if momentum == "heavy_ball":
        return _out(np.tanh(lk / 4))
    # 1 − 2e^{−u} = −expm1(log 2 − u), u = ½log(3κ+1): exact 0 at κ = 1, no cancellation near it
    small = lk < 700
    log_3k1 = np.where(small, np.log1p(3 * np.exp(np.minimum(lk, 700.0))), np.logaddexp(np.log(3.0) + lk, 0.0))
    return _out(-np.expm1(np.log(2.0) - 0.5 * log_3k1))


def suboptimality_delta_from_log(log_ratio: Any) -> np.ndarray | float:
    """(√r − 1)/(√r + 1) = tanh(¼ log r) for r ≥ 1 given as log r.

    With r = κ₀/κ this is Δ of eq. (17); with r = cond(Q) = b/a it is Lemma 5's (√b − √a)/(√b + √a),
    the suboptimality Appendix D.1 plots for simulated MAML frontiers. A negative log r (κ > κ₀) gives
    a negative value, returned as is (eq. 17 then leaves [0, 1]).

    >>> suboptimality_delta_from_log(np.log(9.0)), suboptimality_delta_from_log(0.0)
    (0.5, 0.0)
    """
    return _out(np.tanh(np.asarray(log_ratio, dtype=np.float64) / 4))


def transient_constant(rho: Any, T: Any, momentum: str) -> np.ndarray | float:
    r"""c_T with ‖x_T − x̃*‖ ≤ c_T ρ^T ‖x_0 − x̃*‖ for the tuned server (x_{−1} = x_0): 1 for gd, 1 + (1 + ρ)T with momentum.

    Why (the corrected constant of Theorem 3, claims ``localupdate/theorem-3/*-corrected``): in an
    eigendirection both momentum methods run e_{t+1} = b e_t − c e_{t−1} with e_{−1} = e_0 and roots
    z₁, z₂ of z² − bz + c. With h_t = Σ_{j=0}^{t} z₁^j z₂^{t−j}, e_t = (h_t − z₁z₂ h_{t−1}) e_0, and
    |z_i| ≤ r gives |h_t| ≤ (t + 1)r^t, so |e_t| ≤ (1 + (1 + r)t) r^t; Table 2's ρ bounds r over
    [μ̃, L̃] (``localupdate/table-2/*``) and the bound increases in r. For tuned heavy-ball the roots at
    λ = L̃ are a double root at −ρ, where equality holds: the constant cannot be lowered.

    >>> transient_constant(0.5, 2, "heavy_ball"), transient_constant(0.5, 2, "gd")
    (4.0, 1.0)
    """
    _check_momentum(momentum)
    rho, T = np.asarray(rho, dtype=np.float64), np.asarray(T, dtype=np.float64)
    if momentum == "gd":
        return _out(np.ones(np.broadcast(rho, T).shape))
    return _out(1 + (1 + rho) * T)


def rounds_to_contract(rho: Any, ratio: Any, momentum: str) -> np.ndarray | float:
    """Fewest rounds T ≥ 0 with c_t ρ^t ≤ ratio for every t ≥ T (c_t of :func:`transient_constant`).

    With momentum log c_t + t log ρ is concave in t (it rises, then falls), so the answer is 0 or the
    larger root of log(1 + (1+ρ)t) + t log ρ = log ratio, which is a Lambert-W (branch −1) expression
    in u = 1 + (1+ρ)t: u e^{−au} = ratio·e^{−a}, a = −log ρ/(1+ρ); the integer is then fixed up by
    evaluating the bound. ``inf`` where ρ ≥ 1 (with momentum; for gd when ratio < 1).

    >>> rounds_to_contract(0.5, 1e-3, "gd"), rounds_to_contract(0.5, 1e-3, "heavy_ball")
    (10.0, 15.0)
    >>> float(transient_constant(0.5, 14, "heavy_ball") * 0.5 ** 14) > 1e-3 >= float(transient_constant(0.5, 15, "heavy_ball") * 0.5 ** 15)
    True
    """
    _check_momentum(momentum)
    rho, ratio = np.broadcast_arrays(np.asarray(rho, dtype=np.float64), np.asarray(ratio, dtype=np.float64))
    if not ((rho >= 0).all() and (ratio > 0).all()):
        raise ValueError("rounds_to_contract needs rho >= 0 and ratio > 0")
    r = np.log(ratio)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_rho = np.log(rho)
        c = 0.0 if momentum == "gd" else 1 + rho

        def above(t):  # c_t ρ^t > ratio, evaluated as the guarantee is (a power, 0^0 = 1)
            return (1 + c * t) * np.power(rho, t) > ratio

        if momentum == "gd":
            t_peak = np.zeros_like(rho)
            T = np.maximum(np.ceil(r / log_rho), 0.0)
        else:
            import scipy.special  # about 0.4 s of CPU to import: only with momentum (Lambert W), not for gd

            a = -log_rho / (1 + rho)
            t_peak = np.maximum((1 / a - 1) / (1 + rho), 0.0)
            z = -a * np.exp(r - a)
            u = -scipy.special.lambertw(np.maximum(z, -1 / math.e), k=-1).real / a
            T = np.where(z < -1 / math.e, 0.0, np.maximum(np.ceil((u - 1) / (1 + rho)), 0.0))
        T = np.where(np.isfinite(T), T, 0.0)
        for _ in range(2):  # the closed form is exact up to rounding: settle the integer on the bound itself
            T = np.where(above(T) & (T + 1 >= t_peak), T + 1, T)
            T = np.where((T - 1 >= t_peak) & ~above(T - 1), T - 1, T)
        never_above = ~above(np.floor(t_peak)) & ~above(np.ceil(t_peak))
        T = np.where(never_above, 0.0, T)
        diverges = (rho >= 1) & ((r < 0) if momentum == "gd" else True)  # c_t → ∞ with momentum
        return _out(np.where(diverges, np.inf, T))
