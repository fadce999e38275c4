r"""Exact first and second moments of FedAve on quadratic clients with additive gradient noise.

FedAve as analysed in Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*
(Lemma 3, distilled from FedPAQ's Theorem 1): in period k the server sends θ_k to M = τm clients drawn
uniformly without replacement; client c runs b steps
:math:`\theta\leftarrow\theta-\eta_k(A_c(\theta-c_c)+\xi)` with i.i.d. zero-mean noise ξ of covariance
Σ_c (so :math:`\mathbb E\|\xi\|^2=\mathrm{tr}\,\Sigma_c`, Lemma 3's σ² when ≤ σ²), and the server
averages the M local models. Lemma 3 bounds :math:`\mathbb E\|\theta^{(T)}-\theta^*\|^2`; on quadratics
that expectation is computable exactly:

after b local steps :math:`\theta_c=M_c\theta+u_c+e_c` with :math:`M_c=(I-\eta A_c)^b`,
:math:`u_c=(I-M_c)c_c`, noise covariance :math:`N_c=\eta^2\sum_{j<b}(I-\eta A_c)^j\Sigma_c(I-\eta A_c)^{j\top}`;
with inclusion probabilities π₁ = M/m and π₂ = M(M−1)/(m(m−1)),

.. math:: \mu^+=\tfrac1m\textstyle\sum_c(M_c\mu+u_c),\qquad
          S^+=\tfrac1{M^2}\Big[\pi_1\sum_c(E_{cc}+N_c)+\pi_2\sum_{c\ne c'}E_{cc'}\Big],

:math:`E_{cc'}=M_cSM_{c'}^\top+M_c\mu u_{c'}^\top+u_c\mu^\top M_{c'}^\top+u_cu_{c'}^\top`, where
μ = E θ and S = E θθᵀ (evaluated in the centered form of :func:`fedave_moments`). The deterministic map (no noise, every client) also runs on sympy Rationals,
for exact counterexamples.

>>> import numpy as np
>>> A = np.array([np.eye(2), 2 * np.eye(2)]); c = np.array([[1.0, 0.0], [0.0, 1.0]])
>>> mom = fedave_moments(A, c, np.zeros((2, 2, 2)), b=2, steps=[0.1] * 50, M=2, theta0=np.zeros(2))
>>> mom["cov"].shape, float(np.abs(mom["cov"]).max())        # no noise, every client: deterministic
((51, 2, 2), 0.0)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import sympy as sp

__all__ = [
    "fedave_moments",
    "fedave_moments_homogeneous",
    "fedave_deterministic_step",
    "fedave_deterministic_run",
    "global_quadratic",
]


def global_quadratic(A: Any, c: Any) -> tuple[np.ndarray, np.ndarray]:
    """(A, θ*) of F = (1/m) Σ_c ½(θ − c_c)ᵀA_c(θ − c_c): A = mean A_c, θ* = A⁻¹ mean A_c c_c.

    >>> global_quadratic(np.array([[[1.0]], [[3.0]]]), np.array([[0.0], [4.0]]))[1].tolist()
    [3.0]
    """
    A, c = np.asarray(A, dtype=np.float64), np.asarray(c, dtype=np.float64)
    Abar = A.mean(axis=0)
    return Abar, np.linalg.solve(Abar, np.einsum("cij,cj->i", A, c) / A.shape[0])


def fedave_moments(
    A: Any,
    c: Any,
    Sigma: Any,
    *,
    b: int,
    steps: Sequence[float],
    M: int,
    theta0: Any = None,
    cov0: Any = None,
    center: Any = None,
) -> dict:
    """Exact E θ_k and Cov θ_k for k = 0..len(steps) (module docstring), float64.

    ``A`` (m, p, p) symmetric, ``c`` (m, p), ``Sigma`` (m, p, p) noise covariances, ``b`` local steps,
    ``steps`` η_k per period, ``M`` clients per period (without replacement). ``theta0`` (p,) is the start
    (``cov0`` its covariance, default 0). Returns ``{"mean": (K+1, p), "cov": (K+1, p, p), "dist2": (K+1,)}``
    with ``dist2`` = E‖θ_k − center‖² (``center`` defaults to the minimizer θ* of (1/m)Σ f_c).

    The recursion runs on the deviation δ = θ − center and its covariance (never on raw second moments):
    V⁺ = [π₂ P V Pᵀ + (π₁ − π₂)Σ_c M_cVM_cᵀ + π₁Σ_cN_c + (π₁ − π₂)Σ_c ỹ_cỹ_cᵀ]/M², P = Σ_c M_c, ỹ_c the
    clients' conditional means minus their average. With unstable steps (FedPAQ's first steps
    η_0 = 4/μ exceed 2/L) the transient blow-up mixes rounding errors across eigen-directions; for
    identical clients use :func:`fedave_moments_homogeneous`, which stays exact through it.
    """
    A, c, Sigma = (np.asarray(v, dtype=np.float64) for v in (A, c, Sigma))
    m, p = c.shape
    if A.shape != (m, p, p) or Sigma.shape != (m, p, p):
        raise ValueError(f"A and Sigma must be (m, p, p) = {(m, p, p)}, got {A.shape} and {Sigma.shape}")
    if isinstance(M, bool) or int(M) != M or not 1 <= M <= m:
        raise ValueError(f"clients per period M must be an integer in [1, m={m}], got M={M!r}")
    if isinstance(b, bool) or int(b) != b or b < 1:
        raise ValueError(f"local steps b must be a positive integer, got b={b!r}")
    pi1 = M / m
    pi2 = M * (M - 1) / (m * (m - 1)) if m > 1 else 0.0
    z = global_quadratic(A, c)[1] if center is None else np.asarray(center, dtype=np.float64)
    dev = (np.zeros(p) if theta0 is None else np.asarray(theta0, dtype=np.float64)) - z
    V = np.zeros((p, p)) if cov0 is None else np.asarray(cov0, dtype=np.float64)
    means, covs = [dev + z], [V]
    I = np.eye(p)
    for eta in steps:
        step = I[None] - eta * A  # (m, p, p)
        Mc = np.linalg.matrix_power(step, int(b))
        w = np.einsum("cij,cj->ci", I[None] - Mc, c - z[None])  # (I − M_c)(c_c − z)
        N = np.zeros((m, p, p))
        P = np.broadcast_to(I, (m, p, p)).copy()
        for _ in range(int(b)):
            N += eta * eta * P @ Sigma @ np.swapaxes(P, 1, 2)
            P = step @ P
        y = np.einsum("cij,j->ci", Mc, dev) + w  # conditional means of the clients' outputs
        ybar = y.mean(axis=0)
        yt = y - ybar[None]
        Psum = Mc.sum(axis=0)
        V_new = (
            pi2 * Psum @ V @ Psum.T
            + (pi1 - pi2) * np.einsum("cij,jk,clk->il", Mc, V, Mc)
            + pi1 * N.sum(axis=0)
            + (pi1 - pi2) * np.einsum("ci,cj->ij", yt, yt)
        ) / M**2
        dev, V = ybar, 0.5 * (V_new + V_new.T)
        means.append(dev + z)
        covs.append(V)
    mean = np.stack(means)
    cov = np.stack(covs)
    dist2 = np.einsum("kii->k", cov) + np.sum((mean - z[None]) ** 2, axis=1)
    return {"mean": mean, "cov": cov, "dist2": dist2}


def fedave_moments_homogeneous(
    A: Any, c: Any, Sigma: Any, *, m: int, M: int, b: int, steps: Sequence[float], theta0: Any
) -> dict:
    """Exact moments of FedAve when every client has the same quadratic f = ½(θ − c)ᵀA(θ − c) and noise
    covariance Σ (FedPAQ's i.i.d. setting): in A's eigenbasis the recursion is entrywise,
    δ'_i ← d_iδ'_i and V'_ij ← d_id_jV'_ij + N'_ij/M with d_i = (1 − ηλ_i)^b, so it keeps full relative
    precision through any transient blow-up. Returns ``{"mean", "cov", "dist2"}`` like :func:`fedave_moments`.

    >>> A = np.array([[2.0, 0.5], [0.5, 1.0]]); c = np.array([1.0, -1.0]); S = 0.1 * np.eye(2)
    >>> h = fedave_moments_homogeneous(A, c, S, m=3, M=2, b=2, steps=[0.2] * 30, theta0=np.zeros(2))
    >>> g = fedave_moments(np.stack([A] * 3), np.stack([c] * 3), np.stack([S] * 3), b=2, steps=[0.2] * 30, M=2,
    ...                    theta0=np.zeros(2))
    >>> bool(np.allclose(h["dist2"], g["dist2"], rtol=1e-10))
    True
    """
    A, c, Sigma = (np.asarray(v, dtype=np.float64) for v in (A, c, Sigma))
    lam, Q = np.linalg.eigh(A)
    Sr = Q.T @ Sigma @ Q
    eta = np.asarray(steps, dtype=np.float64)
    b = int(b)
    g = 1 - eta[:, None] * lam[None, :]  # (K, p)
    d = g**b
    gg = g[:, :, None] * g[:, None, :]  # (K, p, p)
    # N'_k = η_k² Σ' ∘ Σ_{j<b} (g_i g_j)^j, the geometric sum written without dividing by 1 − g_i g_j
    geo = np.zeros_like(gg)
    power = np.ones_like(gg)
    for _ in range(b):
        geo += power
        power = power * gg
    N = (eta**2)[:, None, None] * Sr[None] * geo / M
    DD = d[:, :, None] * d[:, None, :]
    dev = Q.T @ (np.asarray(theta0, dtype=np.float64) - c)
    devs = np.vstack([dev[None], dev[None] * np.cumprod(d, axis=0)])
    V = np.zeros_like(Sr)
    covs = [V]
    for k in range(eta.size):
        V = DD[k] * V + N[k]
        covs.append(V)
    dev_arr, cov_arr = devs, np.stack(covs)
    dist2 = np.einsum("kii->k", cov_arr) + np.sum(dev_arr**2, axis=1)
    mean = dev_arr @ Q.T + c[None]
    return {"mean": mean, "cov": np.einsum("ij,kjl,ml->kim", Q, cov_arr, Q), "dist2": dist2}


def fedave_deterministic_step(A: Sequence[Any], c: Sequence[Any], theta: Any, b: int, eta: Any) -> Any:
    """One FedAve period with exact local gradients and every client (works on sympy matrices).

    >>> A = [sp.Matrix([[1]]), sp.Matrix([[2]])]; c = [sp.Matrix([0]), sp.Matrix([1])]
    >>> fedave_deterministic_step(A, c, sp.Matrix([sp.Rational(2, 3)]), 2, sp.Rational(1, 4))
    Matrix([[31/48]])
    """
    total = None
    for Ac, cc in zip(A, c):
        x = theta
        for _ in range(int(b)):
            x = x - eta * (Ac * (x - cc)) if isinstance(x, sp.MatrixBase) else x - eta * (Ac @ (x - cc))
        total = x if total is None else total + x
    return total / len(A)


def fedave_deterministic_run(A: Sequence[Any], c: Sequence[Any], theta0: Any, b: int, steps: Sequence[Any]) -> list:
    """θ_0, θ_1, ... of exact-gradient full-participation FedAve (sympy or numpy).

    >>> A = [np.eye(1), 2 * np.eye(1)]; c = [np.zeros(1), np.ones(1)]
    >>> [round(float(t[0]), 6) for t in fedave_deterministic_run(A, c, np.zeros(1), 1, [0.1, 0.1])]
    [0.0, 0.1, 0.185]
    """
    out = [theta0]
    for eta in steps:
        out.append(fedave_deterministic_step(A, c, out[-1], b, eta))
    return out
