"""The surrogate loss that LocalUpdate actually minimizes on quadratics (Sections 3–4).

Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated Learning and Meta-Learning*
(arXiv:2103.05032). For clients f_i(x) = ½‖A_i^{1/2}(x − c_i)‖² with weights p_i, LocalUpdate with
proximal weight α, client rate γ and weights Θ sends, from client i, the gradient of

    f̃_i(x) = ½‖(Q_i A_i)^{1/2}(x − c_i)‖²,   Q_i = Σ_k θ_k (I − γ(A_i + αI))^{k−1}     (eqs. 6–7)

(Theorem 1), and the server optimizes f̃ = Σ_i p_i f̃_i (eq. 8). Everything here goes through each
client's eigendecomposition A_i = V_i diag(λ_i) V_iᵀ (stored on the problem, computed once): Q_i and
Q_iA_i are V_i diag(q(λ_i)) V_iᵀ and V_i diag(q(λ_i)λ_i) V_iᵀ with the scalar distortion
q(λ) = Σ_k θ_k (1 − γ(λ + α))^{k−1}, so K = 10⁶ local steps cost what K = 1 does.

Section 4's bounds need Lemma 1's hypothesis γ < 1/(L + α) (all Q_i ≻ 0); the functions that rely
on it enforce it with :func:`check_step_size`, whose ValueError names the hypothesis.

>>> import numpy as np
>>> from fedtheory.algorithms.theta import Theta
>>> from fedtheory.algorithms.surrogate import distortion_eigenvalues, phi, kappa_bound_uniform
>>> distortion_eigenvalues(np.array([1.0, 4.0]), 0.0, 0.25, Theta.uniform(2)).round(14).tolist()  # 1 + (1 − γλ)
[1.75, 1.0]
>>> round(kappa_bound_uniform(1.0, 4.0, 0.0, 0.2, 2), 12)     # φ(4)/φ(1) = 4·1.2 / (1·1.8)
2.666666666667
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.algorithms.theta import Theta, geometric_sum, power_one_minus

__all__ = [
    "check_step_size",
    "distortion_eigenvalues",
    "distortion_matrices",
    "client_surrogate_hessians",
    "surrogate_hessian",
    "surrogate_minimizer",
    "surrogate_loss",
    "surrogate_grad",
    "kappa",
    "phi",
    "psi",
    "kappa_bound_uniform",
    "kappa_bound_last",
]


# --------------------------------------------------------------------------------------------
# hypotheses
# --------------------------------------------------------------------------------------------


def check_step_size(L: float, alpha: Any, gamma: Any, *, K: Any = None, theta_last: bool = False) -> None:
    """Raise ValueError unless Lemma 1's (or, for Θ_K, Lemma 4's) step-size hypothesis holds.

    Lemma 1: γ < 1/(L + α) (then every Q_i ≻ 0 and f̃ is strongly convex). Lemma 4 (``theta_last``
    with ``K``): γ < 1/(KL + α). Also γ ≥ 0 and α ≥ 0. ``alpha``, ``gamma`` and ``K`` may be arrays;
    the message names the first violating entry. The test is done on the product γ·(L + α) < 1,
    which is exactly what keeps m = 1 − γ(λ + α) > 0 in the floating-point evaluations that follow.

    >>> check_step_size(5.0, 0.0, 0.1)
    >>> check_step_size(5.0, 0.0, 0.3)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis gamma < 1/(L + alpha) violated: gamma=0.3, L=5, alpha=0 (1/(L+alpha)=0.2; Lemma 1)
    >>> check_step_size(5.0, 0.0, 0.1, K=3, theta_last=True)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis gamma < 1/(K*L + alpha) violated: gamma=0.1, K=3, L=5, alpha=0 (1/(K*L+alpha)=0.0666667; Lemma 4, Theta_K)
    """
    L = float(L)
    if not (np.isfinite(L) and L > 0):
        raise ValueError(f"hypothesis L > 0 violated (Assumption 1): L={L:g}")
    a, g = np.broadcast_arrays(np.asarray(alpha, dtype=float), np.asarray(gamma, dtype=float))
    bad = ~(g >= 0)
    if bad.any():
        raise ValueError(f"hypothesis gamma >= 0 violated: gamma={g[bad].flat[0]:g}")
    bad = ~(a >= 0)
    if bad.any():
        raise ValueError(f"hypothesis alpha >= 0 violated: alpha={a[bad].flat[0]:g}")
    if theta_last and K is not None:
        a, g, k = np.broadcast_arrays(a, g, np.asarray(K, dtype=float))
        bad = ~(g * (k * L + a) < 1)
        if bad.any():
            ga, aa, ka = g[bad].flat[0], a[bad].flat[0], k[bad].flat[0]
            raise ValueError(
                f"hypothesis gamma < 1/(K*L + alpha) violated: gamma={ga:g}, K={ka:g}, L={L:g}, "
                f"alpha={aa:g} (1/(K*L+alpha)={1 / (ka * L + aa):g}; Lemma 4, Theta_K)"
            )
        return
    bad = ~(g * (L + a) < 1)
    if bad.any():
        ga, aa = g[bad].flat[0], a[bad].flat[0]
        raise ValueError(
            f"hypothesis gamma < 1/(L + alpha) violated: gamma={ga:g}, L={L:g}, alpha={aa:g} "
            f"(1/(L+alpha)={1 / (L + aa):g}; Lemma 1)"
        )


def _check_alpha_gamma(alpha: float, gamma: float) -> None:
    if not (np.isfinite(gamma) and gamma >= 0):
        raise ValueError(f"hypothesis gamma >= 0 violated: gamma={gamma}")
    if not (np.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"hypothesis alpha >= 0 violated: alpha={alpha}")


# --------------------------------------------------------------------------------------------
# distortion (eq. 6) and the surrogate (eqs. 7–8), spectrally
# --------------------------------------------------------------------------------------------


def distortion_eigenvalues(lam: Any, alpha: float, gamma: float, theta: Theta) -> Any:
    """q(λ) = Σ_k θ_k (1 − γ(λ + α))^{k−1}: the eigenvalues of Q_i (eq. 6) at A_i's eigenvalues λ.

    Elementwise over ``lam`` (numpy or torch); s = γ(λ + α) is formed first so a tiny step keeps all
    its digits, and Θ_{1:K}, Θ_K use log-space closed forms (exact for K up to 10⁶ and beyond).
    Valid for any γ ≥ 0 (Theorem 1 needs no step-size hypothesis).

    >>> distortion_eigenvalues(np.array([0.0, 1.0]), 1.0, 0.5, Theta.last(3)).tolist()   # (1 − γ(λ+α))²
    [0.25, 0.0]
    """
    _check_alpha_gamma(float(alpha), float(gamma))
    if not isinstance(theta, Theta):
        theta = Theta(theta)
    return theta.polynomial_s(gamma * (lam + alpha))


def _spectral_weights(problem, alpha: float, gamma: float, theta: Theta) -> tuple[np.ndarray, np.ndarray]:
    """(q(λ_ij), q(λ_ij)·λ_ij), shape (n, d) each: eigenvalues of Q_i and of Q_iA_i."""
    lam = np.asarray(problem.eigvals, dtype=np.float64)
    q = np.asarray(distortion_eigenvalues(lam, alpha, gamma, theta))
    return q, q * lam


def _from_spectrum(V: np.ndarray, w: np.ndarray) -> np.ndarray:
    """V_i diag(w_i) V_iᵀ for all clients, symmetrized (the two triangles round differently)."""
    M = np.einsum("nij,nkj->nik", V * w[:, None, :], V)
    return 0.5 * (M + np.swapaxes(M, -1, -2))


def distortion_matrices(problem, alpha: float, gamma: float, theta: Theta) -> np.ndarray:
    """Q_i(α, γ, Θ) = Σ_k θ_k (I − γ(A_i + αI))^{k−1} for every client, shape (n, d, d) (eq. 6).

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
    >>> Q = distortion_matrices(prob, 0.0, 0.05, Theta.uniform(2))
    >>> M = np.eye(4) - 0.05 * prob.A          # Θ_{1:2}: Q = I + M
    >>> bool(np.allclose(Q, np.eye(4) + M, atol=1e-14))
    True
    """
    q, _ = _spectral_weights(problem, alpha, gamma, theta)
    return _from_spectrum(np.asarray(problem.eigvecs, dtype=np.float64), q)


def client_surrogate_hessians(problem, alpha: float, gamma: float, theta: Theta) -> np.ndarray:
    """Q_iA_i = V_i diag(q(λ_i)λ_i) V_iᵀ for every client, shape (n, d, d): ∇²f̃_i.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(2, 3, mu=1.0, L=4.0, seed=1)
    >>> bool(np.allclose(client_surrogate_hessians(prob, 0.0, 0.0, Theta([2.0])), 2 * prob.A))
    True
    """
    _, qlam = _spectral_weights(problem, alpha, gamma, theta)
    return _from_spectrum(np.asarray(problem.eigvecs, dtype=np.float64), qlam)


def surrogate_hessian(problem, alpha: float, gamma: float, theta: Theta) -> np.ndarray:
    """∇²f̃ = Σ_i p_i Q_i A_i, shape (d, d).

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
    >>> bool(np.allclose(surrogate_hessian(prob, 0.0, 0.0, Theta.uniform(1)), prob.mean_hessian()))
    True
    """
    B = client_surrogate_hessians(problem, alpha, gamma, theta)
    return np.einsum("n,nij->ij", np.asarray(problem.p, dtype=np.float64), B)


def _stationary_point(problem, alpha: float, gamma: float, theta: Theta) -> tuple[np.ndarray, np.ndarray]:
    """(H, x) with H = Σp_iQ_iA_i and H x = Σ p_i Q_iA_i c_i (no definiteness check)."""
    B = client_surrogate_hessians(problem, alpha, gamma, theta)
    p = np.asarray(problem.p, dtype=np.float64)
    H = np.einsum("n,nij->ij", p, B)
    b = np.einsum("n,nij,nj->i", p, B, np.asarray(problem.c, dtype=np.float64))
    return H, np.linalg.solve(H, b)


def surrogate_minimizer(problem, alpha: float, gamma: float, theta: Theta) -> np.ndarray:
    """x*(α, γ, Θ) = argmin f̃: the solution of (Σ p_i Q_iA_i) x = Σ p_i Q_iA_i c_i.

    It is a minimizer exactly when ∇²f̃ = Σp_iQ_iA_i ≻ 0, which Lemma 1's hypothesis γ < 1/(L + α)
    guarantees (and Θ = c·Θ_1 gives for every γ); otherwise ValueError naming that hypothesis.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
    >>> bool(np.allclose(surrogate_minimizer(prob, 0.0, 0.0, Theta.uniform(5)), prob.x_star()))  # γ = 0: no distortion
    True
    """
    _check_alpha_gamma(float(alpha), float(gamma))
    _, qlam = _spectral_weights(problem, alpha, gamma, theta)
    if not np.all(qlam > 0):
        # Σ p_i Q_iA_i may still be ≻ 0 when some Q_i is not; decide on the sum itself.
        H, _ = _stationary_point(problem, alpha, gamma, theta)
        lo = float(np.linalg.eigvalsh(H)[0])
        if not lo > 0:
            raise ValueError(
                f"surrogate Hessian sum_i p_i Q_i A_i is not positive definite (lambda_min={lo:g}), so f~ has no minimizer; "
                f"hypothesis gamma < 1/(L + alpha) (Lemma 1) guarantees one: gamma={gamma:g}, L={problem.L:g}, "
                f"alpha={alpha:g} (1/(L+alpha)={1 / (problem.L + alpha):g})"
            )
    return _stationary_point(problem, alpha, gamma, theta)[1]


def surrogate_loss(problem, x: Any, alpha: float, gamma: float, theta: Theta) -> np.ndarray | float:
    """f̃(x, α, γ, Θ) = Σ_i p_i ½‖(Q_iA_i)^{1/2}(x − c_i)‖² (eqs. 7–8); ``x`` of shape (d,) or (..., d).

    Evaluated in each client's eigenbasis: ½ Σ_i p_i Σ_j q(λ_ij)λ_ij ⟨v_ij, x − c_i⟩² (no matrix square root).

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
    >>> x = np.ones(4)
    >>> bool(np.isclose(surrogate_loss(prob, x, 0.0, 0.0, Theta([3.0])), 3 * prob.loss(x)))   # w(Θ) f at γ = 0
    True
    """
    _, qlam = _spectral_weights(problem, alpha, gamma, theta)
    x = np.asarray(x, dtype=np.float64)
    diff = x[..., None, :] - np.asarray(problem.c, dtype=np.float64)  # (..., n, d)
    z = np.einsum("nji,...nj->...ni", np.asarray(problem.eigvecs, dtype=np.float64), diff)
    out = 0.5 * np.einsum("n,nj,...nj->...", np.asarray(problem.p, dtype=np.float64), qlam, z * z)
    return float(out) if out.ndim == 0 else out


def surrogate_grad(problem, x: Any, alpha: float, gamma: float, theta: Theta) -> np.ndarray:
    """∇f̃(x) = Σ_i p_i Q_iA_i (x − c_i); by Theorem 1 the full-batch LocalUpdate pseudo-gradient.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
    >>> bool(np.allclose(surrogate_grad(prob, np.ones(4), 0.0, 0.0, Theta.uniform(1)), prob.grad(np.ones(4))))
    True
    """
    _, qlam = _spectral_weights(problem, alpha, gamma, theta)
    V = np.asarray(problem.eigvecs, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    diff = x[..., None, :] - np.asarray(problem.c, dtype=np.float64)
    z = np.einsum("nji,...nj->...ni", V, diff) * qlam
    return np.einsum("n,nij,...nj->...i", np.asarray(problem.p, dtype=np.float64), V, z)


# --------------------------------------------------------------------------------------------
# condition numbers (Section 4.1)
# --------------------------------------------------------------------------------------------


def kappa(problem, alpha: float, gamma: float, theta: Theta) -> tuple[float, float, float]:
    """(κ, L̃, μ̃) of eq. (9): L̃ = Σ_i p_i λ_max(Q_iA_i), μ̃ = Σ_i p_i λ_min(Q_iA_i), κ = L̃/μ̃.

    The eigenvalues of Q_iA_i are q(λ_ij)λ_ij (not monotone in λ in general, so the max and min are
    taken over all of them). Lemma 2 (cond(f̃) ≤ κ) needs Q_i ≻ 0: the hypothesis γ < 1/(L + α)
    is enforced (ValueError naming it otherwise). μ̃ ≤ λ(∇²f̃) ≤ L̃, and κ ≥ 1 exactly.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(2, 3, mu=1.0, L=8.0, commuting=True, seed=0)
    >>> k, L_t, mu_t = kappa(prob, 0.0, 0.0, Theta.uniform(1))
    >>> round(k, 12), round(L_t, 12), round(mu_t, 12)
    (8.0, 8.0, 1.0)
    """
    check_step_size(problem.L, alpha, gamma)
    _, qlam = _spectral_weights(problem, alpha, gamma, theta)
    p = np.asarray(problem.p, dtype=np.float64)
    L_t = float(p @ qlam.max(axis=1))
    mu_t = float(p @ qlam.min(axis=1))
    return L_t / mu_t, L_t, mu_t


def phi(lam: Any, alpha: Any, gamma: Any, K: Any) -> np.ndarray | float:
    """φ(λ, α, γ, K) = Σ_{k=1}^{K} (1 − γ(λ + α))^{k−1} λ (eq. 10): the eigenvalue of Q A for Θ_{1:K}.

    Closed form λ·(1 − (1 − s)^K)/s, s = γ(λ + α), in log space (stable for K up to 10⁶ and beyond,
    exact limit Kλ at s = 0). Broadcasts over all four arguments.

    >>> phi(2.0, 0.0, 0.25, 2)                        # 2·(1 + 0.5)
    3.0
    >>> phi(np.array([1.0, 2.0]), 0.0, 0.25, 10**6).tolist()    # → λ/(γ(λ+α)) as K → ∞
    [4.0, 4.0]
    """
    lam = np.asarray(lam, dtype=np.float64)
    out = lam * geometric_sum(
        np.asarray(gamma, dtype=np.float64) * (lam + np.asarray(alpha, dtype=np.float64)),
        np.asarray(K, dtype=np.float64),
    )
    return float(out) if np.ndim(out) == 0 else out


def psi(lam: Any, alpha: Any, gamma: Any, K: Any) -> np.ndarray | float:
    """ψ(λ, α, γ, K) = (1 − γ(λ + α))^{K−1} λ (eq. 12): the eigenvalue of Q A for Θ_K.

    >>> psi(2.0, 0.0, 0.25, 3)                        # 0.5² · 2
    0.5
    >>> psi(1.0, 0.0, 1e-7, 10**6)          # (1 − 1e-7)^999999; mpmath: 0.90483750399552259...
    0.9048375039955225
    """
    lam = np.asarray(lam, dtype=np.float64)
    s = np.asarray(gamma, dtype=np.float64) * (lam + np.asarray(alpha, dtype=np.float64))
    out = lam * power_one_minus(s, np.asarray(K, dtype=np.float64) - 1)
    return float(out) if np.ndim(out) == 0 else out


def _check_mu_L(mu: float, L: float) -> tuple[float, float]:
    mu, L = float(mu), float(L)
    if not (0 < mu <= L < np.inf):
        raise ValueError(f"hypothesis 0 < mu <= L < inf violated (Assumption 1): mu={mu:g}, L={L:g}")
    return mu, L


def _check_K(K: Any) -> np.ndarray:
    K = np.asarray(K, dtype=np.float64)
    if not np.all((K >= 1) & (K == np.floor(K))):
        bad = K[~((K >= 1) & (K == np.floor(K)))].flat[0]
        raise ValueError(f"hypothesis K >= 1 integer violated: K={bad:g}")
    return K


def kappa_bound_uniform(mu: float, L: float, alpha: Any, gamma: Any, K: Any) -> np.ndarray | float:
    """φ(L, α, γ, K)/φ(μ, α, γ, K): Lemma 3's bound (eq. 11) on κ(α, γ, Θ_{1:K}).

    Hypothesis γ < 1/(L + α) enforced (ValueError naming it). Broadcasts over α, γ, K. φ is
    increasing in λ, so the ratio is ≥ 1; a last-ulp rounding below 1 (γ → 1/(L+α), K → ∞, α = 0)
    is clipped to 1.

    >>> round(kappa_bound_uniform(1.0, 10.0, 0.0, 0.0, 5), 12)     # γ = 0: L/μ
    10.0
    >>> float(kappa_bound_uniform(1.0, 10.0, 0.0, 0.05, 10**6))    # K → ∞ with α = 0: one-shot averaging
    1.0
    >>> kappa_bound_uniform(1.0, 10.0, 0.0, 0.1, 5)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis gamma < 1/(L + alpha) violated: gamma=0.1, L=10, alpha=0 (1/(L+alpha)=0.1; Lemma 1)
    """
    mu, L = _check_mu_L(mu, L)
    check_step_size(L, alpha, gamma)
    K = _check_K(K)
    a, g = np.asarray(alpha, dtype=np.float64), np.asarray(gamma, dtype=np.float64)
    # (L/μ)·q(s_L)/q(s_μ) with q ∈ [1, K]: no overflow, so the plain ratio is exact to a few ulps.
    ratio = (L / mu) * geometric_sum(g * (L + a), K) / geometric_sum(g * (mu + a), K)
    out = np.maximum(ratio, 1.0)
    return float(out) if np.ndim(out) == 0 else out


def kappa_bound_last(mu: float, L: float, alpha: Any, gamma: Any, K: Any) -> np.ndarray | float:
    """((1 − γ(L + α))/(1 − γ(μ + α)))^{K−1} · L/μ: Lemma 4's bound (eq. 13) on κ(α, γ, Θ_K).

    Hypothesis γ < 1/(KL + α) enforced (ValueError naming it). Computed as
    exp((K − 1)(log1p(−γ(L+α)) − log1p(−γ(μ+α))) + log(L/μ)), so huge K neither under- nor overflows.

    >>> round(kappa_bound_last(1.0, 10.0, 0.0, 0.01, 2), 12)      # (0.9/0.99)·10
    9.090909090909
    >>> kappa_bound_last(1.0, 10.0, 0.0, 0.01, 11)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis gamma < 1/(K*L + alpha) violated: gamma=0.01, K=11, L=10, alpha=0 (1/(K*L+alpha)=0.00909091; Lemma 4, Theta_K)
    """
    mu, L = _check_mu_L(mu, L)
    K = _check_K(K)
    check_step_size(L, alpha, gamma, K=K, theta_last=True)
    a, g = np.asarray(alpha, dtype=np.float64), np.asarray(gamma, dtype=np.float64)
    log_ratio = (K - 1) * (np.log1p(-g * (L + a)) - np.log1p(-g * (mu + a))) + np.log(L / mu)
    out = np.exp(log_ratio)
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------------------------
# accuracy of the surrogate minimizer (Section 4.3, Appendix C)
# --------------------------------------------------------------------------------------------


def minimizer_distance(problem, alpha: float, gamma: float, theta: Theta) -> float:
    """‖x*(α, γ, Θ) − x*‖: how far LocalUpdate's fixed point is from the empirical minimizer.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
    >>> minimizer_distance(prob, 0.0, 0.0, Theta.uniform(5)) < 1e-15   # γ = 0: Q_i = 5I, no distortion
    True
    """
    x_tilde = surrogate_minimizer(problem, alpha, gamma, theta)
    return float(np.linalg.norm(x_tilde - problem.x_star()))


def distortion_extremes(problem, alpha: float, gamma: float, theta: Theta) -> tuple[float, float]:
    """(a, b) of Lemma 5: a = min_i λ_min(Q_i(α,γ,Θ)), b = max_i λ_max(Q_i(α,γ,Θ)).

    Lemma 1's hypothesis γ < 1/(L + α) is enforced (then 0 < a ≤ b).

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> prob = make_quadratic(2, 2, mu=1.0, L=4.0, seed=0)
    >>> distortion_extremes(prob, 0.0, 0.125, Theta.last(2))     # 1 − γλ at λ = 4 and λ = 1
    (0.5, 0.875)
    """
    check_step_size(problem.L, alpha, gamma)
    q, _ = _spectral_weights(problem, alpha, gamma, theta)
    return float(q.min()), float(q.max())


def _sqrt_ratio_gap(lo: Any, hi: Any) -> Any:
    """(√hi − √lo)/(√hi + √lo) for 0 < lo ≤ hi, formed without cancellation: (1 − r)/(1 + r), r = √(lo/hi)."""
    r = np.sqrt(np.asarray(lo, dtype=np.float64) / np.asarray(hi, dtype=np.float64))
    return (1 - r) / (1 + r)


def lemma5_bound(
    problem, alpha: float, gamma: float, theta: Theta, *, C: float | None = None, constant: float = 8.0
) -> float:
    """Lemma 5's right-hand side, constant·C·(√b − √a)/(√b + √a) (eq. 15; the paper proves 8, and 2 for d = 1).

    ``C`` defaults to the problem's max_i ‖c_i‖ (Assumption 2 with equality); a, b from
    :func:`distortion_extremes`. Lemma 1's hypothesis γ < 1/(L + α) is enforced (ValueError naming it).
    This evaluates the stated bound; whether it bounds :func:`minimizer_distance` is what the
    claims check (it does not in general for d ≥ 2: see the package's localupdate claims).

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> prob = QuadraticFederation(A=[[[4.0]], [[1.0]]], c=[[1.0], [-1.0]], p=[0.5, 0.5])
    >>> round(lemma5_bound(prob, 0.0, 0.125, Theta.last(2), constant=2.0), 12)   # a = 1/2, b = 7/8
    0.277996503828
    """
    a, b = distortion_extremes(problem, alpha, gamma, theta)
    C = problem.C if C is None else float(C)
    if not C >= 0:
        raise ValueError(f"hypothesis C >= 0 violated (Assumption 2): C={C:g}")
    return float(constant * C * _sqrt_ratio_gap(a, b))


def theorem4_bound(
    mu: float, L: float, alpha: Any, gamma: Any, K: Any, theta_kind: str, *, C: float = 1.0, constant: float = 8.0
) -> np.ndarray | float:
    """Theorem 4's right-hand side 8C(√κ₀ − √κ)/(√κ₀ + √κ) (eq. 16) with κ of eq. (11) or (13).

    ``theta_kind``: ``"uniform"`` (case I: Θ_{1:K}, γ < 1/(L + α)) or ``"last"`` (case II: Θ_K,
    γ < 1/(KL + α)); the case's hypothesis is enforced with a ValueError naming it. κ₀ = L/μ.

    >>> round(float(theorem4_bound(1.0, 4.0, 0.0, 0.0, 3, "uniform")), 12)     # γ = 0: κ = κ₀
    0.0
    >>> theorem4_bound(1.0, 4.0, 0.0, 0.2, 3, "last")
    Traceback (most recent call last):
    ...
    ValueError: hypothesis gamma < 1/(K*L + alpha) violated: gamma=0.2, K=3, L=4, alpha=0 (1/(K*L+alpha)=0.0833333; Lemma 4, Theta_K)
    """
    if theta_kind == "uniform":
        kap = kappa_bound_uniform(mu, L, alpha, gamma, K)
    elif theta_kind == "last":
        kap = kappa_bound_last(mu, L, alpha, gamma, K)
    else:
        raise ValueError(f"theta_kind must be 'uniform' (Theta_{{1:K}}) or 'last' (Theta_K), got {theta_kind!r}")
    out = constant * float(C) * _sqrt_ratio_gap(kap, float(L) / float(mu))
    return float(out) if np.ndim(out) == 0 else out


def mean_absolute_deviation(values: Any, probs: Any = None) -> float:
    """D(X) = E‖X − E[X]‖ (Definition 1) of a discrete random variable with values ``values`` (n,) or (n, d).

    ``probs`` (n,) non-negative, summing to 1 (default uniform). Vector values use the ℓ2 norm.

    >>> mean_absolute_deviation([0.0, 1.0], [0.75, 0.25])       # 2p(1 − p)(b − a), Theorem 5's two-point case
    0.375
    >>> mean_absolute_deviation([[1.0, 0.0], [-1.0, 0.0]])
    1.0
    """
    X = np.asarray(values, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    n = X.shape[0]
    p = np.full(n, 1.0 / n) if probs is None else np.asarray(probs, dtype=np.float64)
    if p.shape != (n,) or np.any(p < 0) or abs(float(p.sum()) - 1.0) > 1e-12:
        raise ValueError(f"probs must be {n} non-negative numbers summing to 1, got {p.tolist()}")
    mean = p @ X
    return float(p @ np.linalg.norm(X - mean, axis=1))


def _check_commuting_spd(X: np.ndarray, Y: np.ndarray, rtol: float) -> None:
    if X.shape != Y.shape or X.ndim != 3 or X.shape[1] != X.shape[2]:
        raise ValueError(f"X and Y must both have shape (n, d, d), got {X.shape} and {Y.shape}")
    for name, M in (("X", X), ("Y", Y)):
        if np.abs(M - np.swapaxes(M, 1, 2)).max() > rtol * max(np.abs(M).max(), 1e-300):
            raise ValueError(f"hypothesis {name}_i symmetric violated")
    if np.linalg.eigvalsh(Y)[:, 0].min() <= 0:
        raise ValueError("hypothesis Y_i positive definite violated")
    comm = np.abs(X @ Y - Y @ X).max(axis=(1, 2))
    scale = np.abs(X).max(axis=(1, 2)) * np.abs(Y).max(axis=(1, 2))
    if np.any(comm > rtol * scale):
        i = int(np.argmax(comm / scale))
        raise ValueError(
            f"hypothesis X_i Y_i = Y_i X_i violated (Appendix C.3): client {i}, max |X_i Y_i - Y_i X_i| = {comm[i]:.3g}"
        )


def matrix_weighted_mean(X: Any, Y: Any, *, rtol: float = 1e-9) -> np.ndarray:
    """f(X | Y) = (Σ_i X_iY_i) Y^{-1}, Y = Σ_i Y_i (Definition 2), for commuting pairs X_i, Y_i.

    ``X``, ``Y``: (n, d, d), X_i symmetric, Y_i symmetric positive definite, X_iY_i = Y_iX_i (checked to
    ``rtol``; ValueError naming the hypothesis otherwise). In d = 1 it is the mean of X with
    probabilities Y_i/Y. The result need not be symmetric.

    >>> matrix_weighted_mean([[[1.0]], [[3.0]]], [[[1.0]], [[3.0]]]).tolist()     # (1·1 + 3·3)/4
    [[2.5]]
    """
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    _check_commuting_spd(X, Y, rtol)
    S = np.einsum("nij,njk->ik", X, Y)
    return np.linalg.solve(Y.sum(axis=0).T, S.T).T


def matrix_weighted_discrepancy(X: Any, Y: Any, *, rtol: float = 1e-9) -> float:
    """M(X | Y) = Σ_i ‖Y^{-1} f(X|Y)^{-1} (X_i − f(X|Y)) Y_i‖₂ (Definition 3, operator norm).

    Same hypotheses as :func:`matrix_weighted_mean`. In d = 1 it is D(X)/|E[X]| with
    probabilities Y_i/Y (Appendix C.3's remark), which the doctest shows.

    >>> X, Y = [[[1.0]], [[3.0]]], [[[0.5]], [[0.5]]]
    >>> matrix_weighted_discrepancy(X, Y), mean_absolute_deviation([1.0, 3.0]) / 2.0
    (0.5, 0.5)
    """
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    F = matrix_weighted_mean(X, Y, rtol=rtol)
    pre = np.linalg.inv(F @ Y.sum(axis=0))  # Y^{-1} f^{-1} = (f Y)^{-1}
    terms = pre[None] @ (X - F[None]) @ Y
    return float(np.linalg.norm(terms, ord=2, axis=(1, 2)).sum())
