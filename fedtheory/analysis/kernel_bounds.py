r"""The error bounds of federated kernel regression (Su, Xu & Yang, Section 5), as functions.

Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx: Beyond Stationary Points*. Inputs are
the spectra the paper uses: λ_1 ≥ … ≥ λ_N of K_**x**, Λ_1 ≥ … ≥ Λ_N of K_**x**P (from
:class:`~fedtheory.algorithms.kernel_federated.PredictionDynamics`), κ of Lemma 3, the step size η
and s (s = 1 for FedProx). Each function states its equation; a bound asked for outside its
hypotheses raises ValueError naming the hypothesis and the values.

>>> import numpy as np
>>> lam = np.array([0.5, 0.1, 0.01, 0.0])
>>> round(empirical_rademacher(lam, 0.2) ** 2, 12)              # (0.04 + 0.04 + 0.01 + 0)/4
0.0225
>>> early_stopping_time(lam, eta=0.5, s=2, sigma=1.0)
1
>>> round(delta_1(lam, eta=0.5, s=2, t=3), 12) <= 1 / (2 * np.e * 0.5 * 3 * 2)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedtheory.validation import positive_hypothesis

__all__ = [
    "empirical_rademacher",
    "early_stopping_time",
    "delta_1",
    "delta_1_bound",
    "delta_2",
    "delta_2_min_bound",
    "delta_2_rademacher_bound",
    "proposition_3_bound",
    "theorem_1_bound",
    "theorem_2_threshold",
    "theorem_2_gaussian_tail",
    "theorem_3_bound",
    "theorem_4_bound",
    "theorem_4_distance_bound",
    "lemma_8_bound",
    "corollary_1_bound",
    "corollary_2_distance_bound",
]


def _spectrum(lam: Any, name: str) -> np.ndarray:
    v = np.asarray(lam, dtype=np.float64).ravel()
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be a non-empty array of finite eigenvalues")
    return np.maximum(v, 0.0)


def _positive(value: Any, name: str) -> float:
    return positive_hypothesis(name, value)


def empirical_rademacher(lam: Any, eps: Any) -> Any:
    """ℛ(ε) = √((1/N) Σ_i min{λ_i, ε²}) (eq. 20), λ the eigenvalues of K_**x**; vectorised over ε.

    >>> empirical_rademacher([1.0, 0.0], [0.5, 2.0]).round(12).tolist()
    [0.353553390593, 0.707106781187]
    """
    lam = _spectrum(lam, "lam")
    e = np.asarray(eps, dtype=np.float64)
    out = np.sqrt(np.mean(np.minimum(lam[None, :], (e.reshape(-1, 1)) ** 2), axis=1))
    return float(out[0]) if e.ndim == 0 else out.reshape(e.shape)


def _stopping_ok(lam: np.ndarray, eta: float, s: int, sigma: float, t: int) -> bool:
    u = eta * t * s
    return bool(empirical_rademacher(lam, 1 / math.sqrt(u)) <= 1 / (math.sqrt(2 * math.e) * sigma * u))


def early_stopping_time(lam: Any, eta: float, s: int, sigma: float, t_max: int = 10**12) -> float:
    """T = max{t ∈ ℕ : ℛ(1/√(ηts)) ≤ 1/(√(2e)σηts)} (eq. 21).

    u·ℛ(1/√u) is non-decreasing in u (ℛ(ε)/ε² is non-increasing), so the admissible t form an initial
    segment {1, …, T}, found by bisection. Returns 0 when t = 1 already fails (Theorem 1 then covers
    no round), ``t_max`` when it never fails below ``t_max``, and ``inf`` for σ = 0.

    >>> early_stopping_time([1.0], eta=1.0, s=1, sigma=0.0)
    inf
    """
    lam = _spectrum(lam, "lam")
    eta = _positive(eta, "eta")
    sigma = float(sigma)
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    if sigma == 0:
        return math.inf
    if not _stopping_ok(lam, eta, s, sigma, 1):
        return 0
    if _stopping_ok(lam, eta, s, sigma, t_max):
        return t_max
    lo, hi = 1, t_max  # ok(lo), not ok(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _stopping_ok(lam, eta, s, sigma, mid):
            lo = mid
        else:
            hi = mid
    return lo


def delta_1(Lam: Any, eta: float, s: int, t: Any) -> Any:
    """δ_1(t) = (1/s) max_i (1 − ηΛ_i)^{2t} Λ_i (eq. 17), Λ the eigenvalues of K_**x**P; vectorised over t.

    >>> delta_1([1.0, 0.5], eta=1.0, s=1, t=1)
    0.125
    """
    Lam = _spectrum(Lam, "Lam")
    t = np.asarray(t, dtype=np.float64)
    u = np.clip(1 - eta * Lam, 0.0, None)
    with np.errstate(divide="ignore"):
        logs = 2 * t.reshape(-1, 1) * np.log(np.where(u > 0, u, 1.0))[None, :]
    vals = np.where(u[None, :] > 0, np.exp(logs), (t.reshape(-1, 1) == 0) * 1.0) * Lam[None, :]
    out = vals.max(axis=1) / s
    return float(out[0]) if t.ndim == 0 else out.reshape(t.shape)


def delta_1_bound(eta: float, s: int, t: Any) -> Any:
    """The right-hand side 1/(2eηts) of eq. (17)."""
    return 1.0 / (2 * math.e * eta * np.asarray(t, dtype=np.float64) * s)


def delta_2(Lam: Any, eta: float, t: Any) -> Any:
    """δ_2(t) = (1/N) Σ_i (1 − (1 − ηΛ_i)^t)² (eq. 18); vectorised over t.

    >>> delta_2([1.0, 0.0], eta=0.5, t=1)
    0.125
    """
    Lam = _spectrum(Lam, "Lam")
    t = np.asarray(t, dtype=np.float64)
    u = np.clip(eta * Lam, 0.0, 1.0)
    g = -np.expm1(t.reshape(-1, 1) * np.log1p(-np.minimum(u, 1 - 1e-300))[None, :])
    g = np.where(u[None, :] >= 1, np.where(t.reshape(-1, 1) > 0, 1.0, 0.0), g)
    out = np.mean(g * g, axis=1)
    return float(out[0]) if t.ndim == 0 else out.reshape(t.shape)


def delta_2_min_bound(Lam: Any, eta: float, t: Any) -> Any:
    """(1/N) Σ_i min{1, ηtΛ_i} (eq. 18's middle bound)."""
    Lam = _spectrum(Lam, "Lam")
    t = np.asarray(t, dtype=np.float64)
    out = np.mean(np.minimum(1.0, eta * t.reshape(-1, 1) * Lam[None, :]), axis=1)
    return float(out[0]) if t.ndim == 0 else out.reshape(t.shape)


def delta_2_rademacher_bound(lam: Any, eta: float, s: int, t: Any) -> Any:
    """ηts ℛ²(1/√(ηts)) (Lemma 7), λ the eigenvalues of K_**x**."""
    u = eta * np.asarray(t, dtype=np.float64) * s
    return u * np.asarray(empirical_rademacher(lam, 1 / np.sqrt(u))) ** 2


def proposition_3_bound(
    kappa: float, d1: float, d2: float, f0_dist_sq: float, sigma: float, Delta_sq: float, N: int
) -> float:
    """3κ(δ_1‖f_0 − f‖_ℋ² + δ_2σ² + ‖Δ_f‖₂²/N) (eq. 16).

    >>> proposition_3_bound(1.0, 0.1, 0.2, 1.0, 1.0, 4.0, 4)
    3.9000000000000004
    """
    return 3 * kappa * (d1 * f0_dist_sq + d2 * sigma**2 + Delta_sq / N)


def theorem_1_bound(
    kappa: float, eta: float, s: int, t: int, T: float, f0_dist_sq: float, Delta_sq: float, N: int
) -> float:
    """3κ/(2eηts)(‖f_0 − f‖_ℋ² + 1) + 3κ‖Δ_f‖₂²/N for 1 ≤ t ≤ T (Theorem 1).

    >>> theorem_1_bound(1.0, 1.0, 1, 5, 3, 0.0, 0.0, 1)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis 1 <= t <= T (Theorem 1, early stopping) violated: t=5, T=3
    """
    if not 1 <= t <= T:
        raise ValueError(f"hypothesis 1 <= t <= T (Theorem 1, early stopping) violated: t={t}, T={T}")
    return 3 * kappa / (2 * math.e * eta * t * s) * (f0_dist_sq + 1) + 3 * kappa * Delta_sq / N


def theorem_2_threshold(
    kappa: float, eta: float, s: int, t: int, T: float, f0_dist_sq: float, Delta_sq: float, N: int
) -> float:
    """The level of ε_t in eq. (22): 3κ/(2eηts)(‖f_0 − f‖_ℋ² + 3) + 3κ‖Δ_f‖₂²/N, for t < T."""
    if not 1 <= t < T:
        raise ValueError(f"hypothesis 1 <= t < T (Theorem 2) violated: t={t}, T={T}")
    return 3 * kappa / (2 * math.e * eta * t * s) * (f0_dist_sq + 3) + 3 * kappa * Delta_sq / N


def theorem_2_gaussian_tail(N: int, sigma: float, eta: float, s: int, t: int, c: float = 1 / (16 * math.e)) -> float:
    """exp(−cN/(σ²ηts)), Theorem 2's sub-Gaussian tail, with the constant c made explicit for Gaussian noise.

    The paper leaves c universal. For Gaussian ξ (variances ≤ σ²) the Laurent–Massart inequality
    P(ξᵀQξ − E ≥ 2σ²(‖Q‖_F√x + ‖Q‖₂x)) ≤ e^{−x} replaces Hanson–Wright in the proof with
    c_1 = 1/16 in eq. (48); the proof's chain then gives c = c_1/e (the default here).
    """
    return math.exp(-c * N / (sigma**2 * eta * t * s))


def theorem_3_bound(
    kappa: float,
    eta: float,
    s: int,
    lam_d: float,
    d: int,
    t: Any,
    sigma: float,
    f0_dist_sq: float,
    Delta_sq: float,
    N: int,
) -> Any:
    """3(κ/(ηs))‖f_0 − f‖_ℋ² exp(−2(ηs/κ)λ_d t) + 3κσ²d/N + 3κ‖Δ_f‖₂²/N (Theorem 3, rank K_**x** = d)."""
    t = np.asarray(t, dtype=np.float64)
    return (
        3 * kappa / (eta * s) * f0_dist_sq * np.exp(-2 * eta * s / kappa * lam_d * t)
        + 3 * kappa * (sigma**2 * d + Delta_sq) / N
    )


def theorem_4_bound(
    kappa: float, eta: float, s: int, rho_N: float, d: int, t: Any, sigma: float, theta0_dist_sq: float, N: int
) -> Any:
    """(1 − sηρ_N/κ)^{2t}‖θ_0 − θ̄‖₂² + σ²κd/(Nρ_N) (eq. 23); needs ρ_N > 0."""
    if not rho_N > 0:
        raise ValueError(f"hypothesis rho_N > 0 (Theorem 4: phi(x)^T phi(x) invertible) violated: rho_N={rho_N:g}")
    t = np.asarray(t, dtype=np.float64)
    return (1 - s * eta * rho_N / kappa) ** (2 * t) * theta0_dist_sq + sigma**2 * kappa * d / (N * rho_N)


def theorem_4_distance_bound(kappa: float, rho_N: float, Delta_norm: float, N: int) -> float:
    """‖Δ_{f_j^*}‖₂ √(κ/(Nρ_N)) (eq. 24)."""
    if not rho_N > 0:
        raise ValueError(f"hypothesis rho_N > 0 (Theorem 4) violated: rho_N={rho_N:g}")
    return Delta_norm * math.sqrt(kappa / (N * rho_N))


def lemma_8_bound(f0_dist: float, eta: float, s: int, t: int, N: int, Delta_norm: float) -> float:
    """‖f_0 − f‖_ℋ + 1 + √(ηst/N)‖Δ_f‖₂ (Lemma 8)."""
    return f0_dist + 1 + math.sqrt(eta * s * t / N) * Delta_norm


def corollary_1_bound(
    kappa: float, eta: float, s: int, alpha: float, d: int, t: Any, sigma: float, theta0_dist_sq: float, N: int
) -> Any:
    """(1 − sη/(2κ))^{2t}‖θ_0 − θ̄‖² + σ²·2κd/(Nα) (eq. 26, as printed: no α in the contraction factor)."""
    t = np.asarray(t, dtype=np.float64)
    return (1 - s * eta / (2 * kappa)) ** (2 * t) * theta0_dist_sq + sigma**2 * 2 * kappa * d / (N * alpha)


def corollary_2_distance_bound(
    Gamma: float, kappa: float, beta: float, nu: float, M: int, d: int, alpha: float, N: int
) -> float:
    """Γ√(2κβνMd/(αN)) (eq. 29)."""
    return Gamma * math.sqrt(2 * kappa * beta * nu * M * d / (alpha * N))
