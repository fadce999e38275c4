r"""The law of FedAvg's worst accuracy floor for two equal-weight quadratic clients (any dimension).

Charles & Konečný (arXiv:2103.05032) bound ‖x*(α, γ, Θ) − x*‖ (Lemma 5, Theorem 4) by constants that fail for
d ≥ 2; :func:`fedtheory.certify.federated_pep.certify_local_update` certifies the true worst case numerically.
This module gives that worst case in closed form.

Setting: f_i(x) = ½(x − c_i)ᵀA_i(x − c_i), μI ⪯ A_i ⪯ LI, ‖c_i − o‖ ≤ C, p = (½, ½), FedAvg with Θ_{1:K},
α = 0, 0 < γ < 1/L. Client i's message is B_i(x − c_i) with B_i = b(A_i), b(λ) ∝ 1 − (1 − γλ)^K (Theorem 1), so
with u = (c_1 − c_2)/2 the fixed point and the minimizer differ by

    x̄ − x* = [G(B_1, B_2) − G(A_1, A_2)]u,   G(X_1, X_2) = (X_1 + X_2)⁻¹(X_1 − X_2),

and the worst floor per unit C is sup ‖G(b(A_1), b(A_2)) − G(A_1, A_2)‖ (‖u‖ ≤ C, attained with o the midpoint;
G is invariant to scaling b, so b's normalization is irrelevant).

The law. Take both spectra at the ends, A_{1,2} = R(±φ) diag(μ, L) R(±φ)ᵀ in d = 2, and t = tan φ. Then
(sympy, ``localupdate/floor-law/reduction``) G(B) − G(A) is anti-diagonal with entries h_{κ₀}(t) − h_κ(t) and
h_{κ₀}(1/t) − h_κ(1/t), where

    h_k(t) = (k − 1)t/(1 + k t²),   κ₀ = L/μ,   κ = b(L)/b(μ) = (1 − (1 − γL)^K)/(1 − (1 − γμ)^K),

κ being the condition number of the surrogate (eq. 11 of the paper, :func:`~fedtheory.algorithms.surrogate.
kappa_bound_uniform`). Hence this family reaches

    Φ(κ₀, κ) = max_{t>0} [h_{κ₀}(t) − h_κ(t)] = (κ₀ − κ)·√u(1 + u)/((1 + κu)(1 + κ₀u)),

u the unique positive root of κκ₀u³ + (3κκ₀ − κ − κ₀)u² + (κ + κ₀ − 3)u − 1 = 0. The certificates (SDP upper
bound over every dimension and every spectrum; ``localupdate/floor-law/certified``) agree with Φ to their 10⁻⁵
margin, so Φ *is* the worst floor: Δ/C = Φ(κ₀, κ). The floor depends on K and γ only through κ, and grows as κ
falls from κ₀ (K = 1, or γ → 0) to 1 (Kγμ → ∞), where Φ(κ₀, 1) = (κ₀ − 1)/(2√κ₀).

Small steps: κ₀ − κ = κ₀(K − 1)γ(L − μ)/2 + O(γ²), so Δ/C = (K − 1)γ·D₁ + O(((K − 1)γL)²) with
D₁ = κ₀(L − μ)M(κ₀)/2, M(κ₀) = √v(1 + v)/(1 + κ₀v)², v = (√(9(κ₀ − 1)² + 4κ₀) − 3(κ₀ − 1))/(2κ₀)
(:func:`small_step_coefficient`).

>>> round(floor_law(1.0, 1000.0, 100, 0.5 / 1000.0), 4)        # the certified 15.2017 of localupdate/lemma-5
15.2017
>>> round(two_client_floor(100.0, 1.0), 12) == round(99 / 20, 12)  # the limit (κ₀ − 1)/(2√κ₀)
True
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["two_client_floor", "floor_law", "floor_law_root", "worst_pair", "small_step_coefficient"]


def _check_kappas(kappa0: float, kappa: float) -> tuple[float, float]:
    kappa0, kappa = float(kappa0), float(kappa)
    if not (math.isfinite(kappa0) and kappa0 >= 1):
        raise ValueError(f"hypothesis kappa0 = L/mu >= 1 violated: kappa0={kappa0!r}")
    if not (math.isfinite(kappa) and 1 <= kappa <= kappa0 * (1 + 1e-12)):
        raise ValueError(
            f"hypothesis 1 <= kappa <= kappa0 violated (b(λ)/λ is decreasing for FedAvg): "
            f"kappa={kappa!r}, kappa0={kappa0!r}"
        )
    return kappa0, min(kappa, kappa0)


def floor_law_root(kappa0: float, kappa: float) -> float:
    """u = t² at the maximizer of Φ(κ₀, κ): the unique positive root of
    κκ₀u³ + (3κκ₀ − κ − κ₀)u² + (κ + κ₀ − 3)u − 1 (one sign change: Descartes), polished by Newton steps.

    >>> round(floor_law_root(10.0, 1.0), 14)          # κ = 1: the cubic is (u + 1)²(κ₀u − 1)
    0.1
    """
    k0, k = _check_kappas(kappa0, kappa)
    coeffs = [k * k0, 3 * k * k0 - k - k0, k + k0 - 3, -1.0]
    roots = np.roots(coeffs)
    real = roots[np.abs(roots.imag) <= 1e-9 * np.maximum(1.0, np.abs(roots))].real
    u = float(real[real > 0].max())
    p, dp = np.poly1d(coeffs), np.poly1d(coeffs).deriv()
    for _ in range(3):  # np.roots loses digits when roots nearly coincide
        step = p(u) / dp(u)
        if not np.isfinite(step):
            break
        u = max(u - float(step), u / 2)
    return u


def two_client_floor(kappa0: float, kappa: float) -> float:
    """Φ(κ₀, κ) = max_{t>0} [(κ₀ − 1)t/(1 + κ₀t²) − (κ − 1)t/(1 + κt²)]: the worst floor per unit C of two
    equal-weight quadratic clients whose A_i have condition number ≤ κ₀ and whose messages' have κ (module
    docstring). Written as (κ₀ − κ)·√u(1 + u)/((1 + κu)(1 + κ₀u)) so that κ → κ₀ loses no digits.

    A hypothesis outside 1 ≤ κ ≤ κ₀ raises ValueError naming it.

    >>> two_client_floor(10.0, 10.0)
    0.0
    >>> round(two_client_floor(10.0, 1.0), 12) == round(9 / (2 * math.sqrt(10)), 12)
    True
    """
    k0, k = _check_kappas(kappa0, kappa)
    u = floor_law_root(k0, k)
    return (k0 - k) * math.sqrt(u) * (1 + u) / ((1 + k * u) * (1 + k0 * u))


def _kappa(mu: float, L: float, K: int, gamma: float) -> float:
    from fedtheory.algorithms.surrogate import kappa_bound_uniform

    return float(kappa_bound_uniform(mu, L, 0.0, gamma, K))


def floor_law(mu: float, L: float, K: int, gamma: float, *, C: float = 1.0) -> float:
    """sup ‖x*(0, γ, Θ_{1:K}) − x*‖ over two equal-weight quadratic clients (any dimension, ‖c_i − o‖ ≤ C):
    C·Φ(L/μ, κ) with κ = b(L)/b(μ) of eq. (11). Hypotheses 0 < μ ≤ L, 0 < γ < 1/L, K ≥ 1 raise ValueError.

    >>> floor_law(1.0, 10.0, 1, 0.05)                   # K = 1 is gradient descent: no floor
    0.0
    >>> round(floor_law(1.0, 100.0, 10, 0.005), 6)      # certified 3.454347 (localupdate/lemma-5/certified-fast-grid)
    3.454347
    """
    if not (0 < gamma * L < 1):
        raise ValueError(f"hypothesis 0 < gamma < 1/L violated: gamma={gamma!r}, L={L!r}")
    return float(C) * two_client_floor(L / mu, _kappa(mu, L, K, gamma))


def worst_pair(mu: float, L: float, K: int, gamma: float, *, C: float = 1.0):
    """The federation attaining :func:`floor_law`: d = 2, A_{1,2} = R(±φ) diag(μ, L) R(±φ)ᵀ with tan²φ the root
    of :func:`floor_law_root`, c_{1,2} = ±C e₂ (the direction G(B) − G(A) stretches most), p = (½, ½).

    >>> from fedtheory.algorithms.surrogate import minimizer_distance
    >>> from fedtheory.algorithms.theta import Theta
    >>> prob = worst_pair(1.0, 100.0, 10, 0.005)
    >>> abs(minimizer_distance(prob, 0.0, 0.005, Theta.uniform(10)) - floor_law(1.0, 100.0, 10, 0.005)) < 1e-12
    True
    """
    from fedtheory.problems.quadratic import QuadraticFederation

    if not (0 < gamma * L < 1):
        raise ValueError(f"hypothesis 0 < gamma < 1/L violated: gamma={gamma!r}, L={L!r}")
    phi = math.atan(math.sqrt(floor_law_root(L / mu, _kappa(mu, L, K, gamma))))
    V = []
    for s in (1.0, -1.0):
        c, sn = math.cos(s * phi), math.sin(s * phi)
        V.append([[c, -sn], [sn, c]])
    V = np.array(V)
    lam = np.array([[mu, L], [mu, L]])
    A = np.einsum("nij,nj,nkj->nik", V, lam, V)
    return QuadraticFederation(A=A, c=np.array([[0.0, C], [0.0, -C]]), p=np.array([0.5, 0.5]), eigvals=lam, eigvecs=V)


def small_step_coefficient(mu: float, L: float) -> float:
    """D₁ in Δ/C = (K − 1)γ·D₁ + O(((K − 1)γL)²): D₁ = κ₀(L − μ)M(κ₀)/2, M(κ₀) = max_t t(1 + t²)/(1 + κ₀t²)²
    = √v(1 + v)/(1 + κ₀v)² at v = (√(9(κ₀ − 1)² + 4κ₀) − 3(κ₀ − 1))/(2κ₀) (``localupdate/floor-law/limits``).

    >>> D1 = small_step_coefficient(1.0, 100.0)
    >>> g = 1e-6; abs(floor_law(1.0, 100.0, 3, g) / (2 * g * D1) - 1) < 1e-3
    True
    """
    if not 0 < mu <= L:
        raise ValueError(f"hypothesis 0 < mu <= L violated: mu={mu!r}, L={L!r}")
    k0 = L / mu
    # the root written without cancellation: v = 2/(√(9(κ₀−1)² + 4κ₀) + 3(κ₀−1))
    v = 2.0 / (math.sqrt(9 * (k0 - 1) ** 2 + 4 * k0) + 3 * (k0 - 1))
    M = math.sqrt(v) * (1 + v) / (1 + k0 * v) ** 2
    return k0 * (L - mu) * M / 2
