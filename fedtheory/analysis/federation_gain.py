r"""The federation gain of Su, Xu & Yang (Section 5.3): from its definition and from the paper's characterisation.

Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx: Beyond Stationary Points*, Definition 1:
FG_j = R_j^Loc / R_j^Fed, with R_j^Loc the minimax risk of estimating f_j^* from client j's data alone
(eq. 30) and R_j^Fed = inf_t sup E‖f_t − f_j^*‖²_ℋ the risk of the federated model with the best stopping
time (eq. 31). In linear regression (ϕ(x) = x, ‖f‖_ℋ = ‖θ‖₂) everything is computed exactly over the noise:

* :func:`minnorm_least_squares_risk` — the paper's benchmark local estimator θ̂_j = (X_jᵀX_j)^+X_jᵀy_j
  (Section 6.2), E‖θ̂_j − θ‖² = ‖(I − Π_j)θ‖² + σ² tr((X_jᵀX_j)^+);
* :func:`ridge_worst_case_risk` — sup over the ball ‖θ‖ ≤ B of the (design-averaged) risk of ridge
  estimators, an upper bound on the local minimax risk;
* :func:`federated_risk` — inf over t of E‖θ_t − θ_j^*‖² for FedAvg/FedProx, from the closed-form
  dynamics (:class:`~fedtheory.algorithms.parameter_space.ParameterDynamics`);
* :func:`federation_gain` — the ratio of Definition 1;
* :func:`theorem_5_bound`, :func:`theorem_6_bound`, :func:`heterogeneity_thresholds` — the
  characterisation (eqs. 32–33 with the constant c_1 explicit as an argument) and the thresholds on Γ
  stated after Theorem 5;
* :func:`fano_lower_bound`, :func:`genie_lower_bound` — the two lower bounds on R_j^Loc proved in
  Appendix D, with the proof's explicit constants.

>>> import numpy as np
>>> X = np.eye(3)[:2] * 2.0                          # 2 samples in d = 3
>>> round(minnorm_least_squares_risk(X, np.array([0.0, 0.0, 1.0]), 1.0), 12)   # unseen direction + σ²·(1/4 + 1/4)
1.5
>>> federation_gain(2.0, 0.5)
4.0
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

__all__ = [
    "minnorm_least_squares_risk",
    "ridge_worst_case_risk",
    "federated_risk_trajectory",
    "federated_risk",
    "federation_gain",
    "theorem_5_bound",
    "theorem_6_bound",
    "heterogeneity_thresholds",
    "fano_lower_bound",
    "genie_lower_bound",
]

EPS = float(np.finfo(np.float64).eps)


def _pinv_parts(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of XᵀX with the numerically zero eigenvalues set to 0: (eigenvalues, vectors)."""
    w, V = np.linalg.eigh(X.T @ X)
    w = np.where(w > 16 * max(X.shape) * EPS * max(float(w[-1]), 1e-300), w, 0.0)
    return w, V


def minnorm_least_squares_risk(X: Any, theta: Any, sigma2: float) -> float:
    """E_ξ‖θ̂ − θ‖² for θ̂ = (XᵀX)^+Xᵀy, y = Xθ + ξ, ξ ~ (0, σ²I): ‖(I − Π)θ‖² + σ² tr((XᵀX)^+).

    >>> round(minnorm_least_squares_risk(np.eye(2) * 3.0, np.ones(2), 0.9), 12)
    0.2
    """
    X = np.asarray(X, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    w, V = _pinv_parts(X)
    z = V.T @ theta
    return float(np.sum(z[w == 0] ** 2) + sigma2 * np.sum(1.0 / w[w > 0]))


def ridge_worst_case_risk(designs: Sequence[np.ndarray], lam: float, B: float, sigma2: float) -> float:
    """sup_{‖θ‖≤B} E_X E_ξ‖θ̂_λ − θ‖² for θ̂_λ = (XᵀX + λI)^{−1}Xᵀy, the design average over ``designs``.

    Bias θᵀE[λ²(XᵀX + λI)^{−2}]θ (its sup over the ball is B² times the top eigenvalue) plus the variance
    σ²E tr(XᵀX(XᵀX + λI)^{−2}). ``lam = 0`` is the minimum-norm least squares (λ → 0⁺), ``inf`` the zero estimator.
    Any estimator's worst-case risk bounds the local minimax risk (30) from above.

    >>> ridge_worst_case_risk([np.eye(2)], float("inf"), 3.0, 1.0)   # θ̂ = 0: risk ‖θ‖² ≤ B²
    9.0
    """
    d = designs[0].shape[1]
    W = np.zeros((d, d))
    var = 0.0
    for X in designs:
        w, V = _pinv_parts(np.asarray(X, dtype=np.float64))
        if lam == math.inf:
            bias_eig, v = np.ones(d), np.zeros(d)
        elif lam == 0:
            bias_eig = (w == 0).astype(float)
            v = np.where(w > 0, 1.0 / np.where(w > 0, w, 1.0), 0.0)
        else:
            bias_eig = (lam / (w + lam)) ** 2
            v = w / (w + lam) ** 2
        W += (V * bias_eig[None, :]) @ V.T
        var += sigma2 * float(np.sum(v))
    W /= len(designs)
    return float(B**2 * np.linalg.eigvalsh(0.5 * (W + W.T))[-1] + var / len(designs))


def federated_risk_trajectory(
    dyn, b_mean: Any, theta_target: Any, sigma2: Any, rounds: Any, theta0: Any = None
) -> np.ndarray:
    """E_ξ‖θ_t − θ_target‖² for every t in ``rounds`` (exact), for FedAvg/FedProx dynamics ``dyn``."""
    theta0 = np.zeros(dyn.A.shape[-1]) if theta0 is None else theta0
    return dyn.expected_sq_error(theta0, theta_target, sigma2, rounds, b_mean=b_mean)


def federated_risk(
    dyn, b_mean: Any, theta_target: Any, sigma2: Any, *, t_max: int = 10**7, points: int = 400, theta0: Any = None
) -> tuple[float, int]:
    """inf_t E_ξ‖θ_t − θ_target‖² (eq. 31 with the sup over f_j^* fixed to the given truth) over t ∈ {0, …, t_max}
    (all t ≤ 200, then a log grid of ``points``), and the minimising t.

    >>> from fedtheory.algorithms.parameter_space import ParameterDynamics
    >>> dyn = ParameterDynamics(np.array([[[1.0]]]), np.array([1.0]), np.array([4]), "fedavg", 0.5, 1)
    >>> r, t = federated_risk(dyn, np.array([[1.0]]), np.array([1.0]), 0.0)
    >>> r < 1e-20, t > 30
    (True, True)
    """
    grid = np.unique(
        np.concatenate([np.arange(0, 201), np.round(np.logspace(np.log10(200), np.log10(t_max), points))]).astype(
            np.int64
        )
    )
    risk = federated_risk_trajectory(dyn, b_mean, theta_target, sigma2, grid, theta0)
    k = int(np.argmin(risk))
    return float(risk[k]), int(grid[k])


def federation_gain(local_risk: float, fed_risk: float) -> float:
    """FG_j = R_j^Loc / R_j^Fed (Definition 1).

    >>> federation_gain(1.0, 0.0)
    inf
    """
    if fed_risk < 0 or local_risk < 0:
        raise ValueError(f"risks must be >= 0, got local={local_risk}, federated={fed_risk}")
    return math.inf if fed_risk == 0 else float(local_risk / fed_risk)


def theorem_5_bound(
    kappa: float, sigma: float, d: int, n_j: int, N: int, B: float, Gamma: float, c1: float = 1.0
) -> float:
    """(c_1/κ)(min{σ²d/n_j, B²} + max{1 − n_j/d, 0}B²)/(σ²d/N + Γ²) (eq. 32).

    >>> round(theorem_5_bound(1.0, 1.0, 10, 5, 100, 2.0, 0.0), 12)     # (min(2, 4) + 0.5·4)/(0.1)
    40.0
    """
    return c1 / kappa * (min(sigma**2 * d / n_j, B**2) + max(1 - n_j / d, 0.0) * B**2) / (sigma**2 * d / N + Gamma**2)


def theorem_6_bound(kappa: float, sigma: float, d: int, n_j: int, r_j: int, N: int, B: float, c1: float = 1.0) -> float:
    """(c_1/κ)(min{σ²d/n_j, B²} + (1 − r_j/d)B²)/(σ²d/N) (eq. 33)."""
    return c1 / kappa * (min(sigma**2 * d / n_j, B**2) + (1 - r_j / d) * B**2) / (sigma**2 * d / N)


def heterogeneity_thresholds(n_j: int, d: int, sigma: float, B: float) -> float:
    """The Γ below which Theorem 5's bound exceeds one (the text after Theorem 5): B√(1 − n_j/d) for a data-scarce
    client (n_j < d), min{σ√(d/n_j), B} for a data-rich one.

    >>> round(heterogeneity_thresholds(50, 100, 0.5, 10.0), 6), round(heterogeneity_thresholds(500, 100, 0.5, 10.0), 6)
    (7.071068, 0.223607)
    """
    if n_j < d:
        return B * math.sqrt(1 - n_j / d)
    return min(sigma * math.sqrt(d / n_j), B)


def fano_lower_bound(n_j: int, d: int, sigma: float, beta: float, B: float) -> float:
    """R_j^Loc ≥ δ²(1 − (32n_jβδ²/σ² + log 2)/(d log 2)) with δ² = min{σ²d/(βn_j), B²}/64 (Appendix D, Fano).

    Needs the 2^d-point 1/2-packing of the unit ball the proof uses; positive for d ≥ 4.

    >>> fano_lower_bound(10, 2, 1.0, 1.0, 1.0) < 0      # vacuous for d < 4
    True
    """
    delta2 = min(sigma**2 * d / (beta * n_j), B**2) / 64
    return delta2 * (1 - (32 * n_j * beta * delta2 / sigma**2 + math.log(2)) / (d * math.log(2)))


def genie_lower_bound(n_j: int, d: int, B: float) -> float:
    """R_j^Loc ≥ (1 − n_j/d)B² for n_j < d (Appendix D, genie-aided Bayes argument; 0 otherwise).

    >>> genie_lower_bound(3, 4, 2.0)
    1.0
    """
    return max(1 - n_j / d, 0.0) * B**2
