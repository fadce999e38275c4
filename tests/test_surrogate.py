"""Tests of Θ and the surrogate-loss objects (Charles & Konečný, arXiv:2103.05032, Sections 3–4)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from fedtheory.algorithms.surrogate import (
    check_step_size,
    distortion_eigenvalues,
    distortion_matrices,
    kappa,
    kappa_bound_last,
    kappa_bound_uniform,
    phi,
    psi,
    surrogate_grad,
    surrogate_hessian,
    surrogate_loss,
    surrogate_minimizer,
)
from fedtheory.algorithms.theta import Theta, geometric_sum, power_one_minus
from fedtheory.problems.quadratic import make_quadratic

EPS = np.finfo(np.float64).eps


def _dense_Q(A, alpha, gamma, theta):
    """Σ θ_k (I − γ(A + αI))^{k−1} by explicit matrix powers (independent of the spectral code)."""
    d = A.shape[0]
    M = np.eye(d) - gamma * (A + alpha * np.eye(d))
    Q, P = np.zeros((d, d)), np.eye(d)
    for t in theta.weights:
        Q += t * P
        P = P @ M
    return Q


def _mp_q(s, theta, dps=60):
    with mpmath.workdps(dps):
        m = 1 - mpmath.mpf(float(s))
        if theta.kind == "uniform":
            return mpmath.mpf(theta.K) if m == 1 else (1 - m**theta.K) / (1 - m)
        if theta.kind == "last":
            return m ** (theta.K - 1)
        return mpmath.polyval([mpmath.mpf(float(t)) for t in theta.weights[::-1]], m)


# --------------------------------------------------------------------------------------------
# Θ
# --------------------------------------------------------------------------------------------


def test_theta_constructors_and_properties():
    assert Theta.uniform(4).kind == "uniform" and Theta.uniform(4).w == 4.0 and Theta.uniform(4).K == 4
    assert Theta.last(4).kind == "last" and Theta.last(4).w == 1.0
    assert Theta.uniform(1).kind == "uniform" and Theta.last(1) == Theta.uniform(1)
    th = Theta([0.0, 0.5, 0.0, 2.0, 0.0, 0.0])
    assert th.K == 4 and th.kind == "general" and th.w == 2.5
    assert th.weights.tolist() == [0.0, 0.5, 0.0, 2.0]
    assert Theta([2.0, 2.0]).kind == "general"  # a scaled Θ_{1:K} is not Θ_{1:K}
    assert hash(Theta.uniform(3)) == hash(Theta([1, 1, 1])) and Theta.uniform(3) == Theta([1, 1, 1])
    assert Theta.from_json(th.to_json()) == th
    for bad, msg in [
        ([0.0, 0.0], "non-zero support"),
        ([], "non-zero support"),
        ([1.0, -0.1], "non-negative"),
        ([np.inf], "finite"),
    ]:
        with pytest.raises(ValueError, match=msg):
            Theta(bad)
    with pytest.raises(ValueError, match="positive integer"):
        Theta.uniform(0)


@pytest.mark.parametrize("kind", ["uniform", "last", "general", "scaled"])
def test_theta_polynomial_matches_high_precision(kind):
    rng = np.random.default_rng(0)
    for _ in range(40):
        K = int(10 ** rng.uniform(0, 6)) if kind in ("uniform", "last") else int(rng.integers(1, 40))
        theta = {
            "uniform": Theta.uniform,
            "last": Theta.last,
            "general": lambda k: Theta(rng.exponential(size=k)),
            "scaled": lambda k: Theta(np.full(k, 0.3)),
        }[kind](K)
        s = np.array([0.0, 1.0, 10 ** rng.uniform(-17, -1), rng.uniform(), 1 - 10 ** rng.uniform(-15, -1)])
        q = theta.polynomial_s(s)
        assert np.all(np.isfinite(q))
        for si, qi in zip(s, q):
            exact = _mp_q(si, theta) if kind != "scaled" else 0.3 * _mp_q(si, Theta.uniform(theta.K))
            if abs(exact) < 1e-290:  # below float64's range: must be (near) zero
                assert abs(qi) < 1e-280
                continue
            # uniform/general: a few ulps; Θ_K: exp of (K−1)·log1p carries |log q|·eps ≤ 745·eps
            tol = 1e-13 if kind != "last" else 800 * EPS
            assert abs(qi - float(exact)) <= tol * abs(float(exact)), (K, si, qi, exact)


def test_theta_polynomial_exact_special_values():
    assert Theta.uniform(10**6).polynomial_s(np.array([0.0])).tolist() == [1e6]  # limit K at s = 0
    assert Theta.last(5).polynomial(np.array([0.0, 1.0])).tolist() == [0.0, 1.0]
    assert Theta.last(1).polynomial(np.array([0.0])).tolist() == [1.0]  # 0⁰ = 1
    assert Theta.uniform(3).polynomial(np.array([0.0, -1.0, -2.0])).tolist() == [1.0, 1.0, 3.0]  # m ≤ 0
    assert Theta([1.0, 2.0, 3.0]).polynomial(np.array([-1.0])).tolist() == [2.0]
    # K → ∞ limit 1/s is reached exactly once (1 − s)^K underflows
    assert Theta.uniform(10**6).polynomial_s(np.array([0.01]))[0] == pytest.approx(100.0, rel=1e-15)


def test_closed_form_helpers_broadcast_over_K():
    K = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(geometric_sum(0.5, K), [1.0, 1.5, 1.75])
    np.testing.assert_allclose(power_one_minus(0.5, K - 1), [1.0, 0.5, 0.25])


def test_theta_polynomial_on_torch():
    torch = pytest.importorskip("torch")
    s = torch.tensor([0.0, 1e-9, 0.3, 1.0], dtype=torch.float64)
    for theta in (Theta.uniform(10**6), Theta.last(50), Theta([0.2, 0.0, 1.5])):
        out = theta.polynomial_s(s)
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
        np.testing.assert_allclose(out.numpy(), theta.polynomial_s(s.numpy()), rtol=1e-15)


# --------------------------------------------------------------------------------------------
# hypotheses
# --------------------------------------------------------------------------------------------


def test_check_step_size_names_the_hypothesis():
    check_step_size(5.0, 1.0, 0.16)
    with pytest.raises(
        ValueError,
        match=r"hypothesis gamma < 1/\(L \+ alpha\) violated: "
        r"gamma=0.3, L=5, alpha=0 \(1/\(L\+alpha\)=0.2; Lemma 1\)",
    ):
        check_step_size(5, 0, 0.3)
    with pytest.raises(ValueError, match=r"gamma < 1/\(L \+ alpha\) violated"):
        check_step_size(5.0, 0.0, 0.2)  # the boundary itself is excluded
    with pytest.raises(ValueError, match=r"gamma >= 0 violated"):
        check_step_size(5.0, 0.0, -0.01)
    with pytest.raises(ValueError, match=r"alpha >= 0 violated"):
        check_step_size(5.0, -1.0, 0.01)
    with pytest.raises(ValueError, match=r"gamma < 1/\(K\*L \+ alpha\) violated: .*Lemma 4"):
        check_step_size(5.0, 0.0, 0.05, K=4, theta_last=True)
    check_step_size(5.0, 0.0, 0.05, K=3, theta_last=True)
    with pytest.raises(ValueError, match="gamma=0.3"):  # arrays: names the offending entry
        check_step_size(5.0, 0.0, np.array([0.1, 0.3]))


def test_kappa_enforces_lemma_1():
    prob = make_quadratic(2, 3, mu=1.0, L=10.0, seed=0)
    with pytest.raises(ValueError, match=r"gamma < 1/\(L \+ alpha\) violated"):
        kappa(prob, 1.0, 1 / 11, Theta.uniform(3))


# --------------------------------------------------------------------------------------------
# distortion matrices and the surrogate
# --------------------------------------------------------------------------------------------


def test_distortion_matrices_match_matrix_powers():
    prob = make_quadratic(3, 5, mu=0.5, L=8.0, weights="random", seed=1)
    for theta in (Theta.uniform(7), Theta.last(7), Theta([0.4, 0.0, 1.3, 0.2])):
        Q = distortion_matrices(prob, 0.3, 0.9 / 8.3, theta)
        q = distortion_eigenvalues(prob.eigvals, 0.3, 0.9 / 8.3, theta)
        assert q.shape == (prob.n, prob.d) and np.all(q > 0)  # Lemma 1: Q_i ≻ 0
        for i in range(prob.n):
            dense = _dense_Q(prob.A[i], 0.3, 0.9 / 8.3, theta)
            assert np.max(np.abs(Q[i] - dense)) <= 50 * theta.K * EPS * theta.w
            np.testing.assert_allclose(
                np.linalg.eigvalsh(dense), np.sort(q[i]), rtol=0, atol=50 * theta.K * EPS * theta.w
            )
    # Θ_1: no distortion, for every γ
    np.testing.assert_allclose(
        distortion_matrices(prob, 2.0, 5.0, Theta.uniform(1)), np.broadcast_to(np.eye(5), (3, 5, 5)), atol=1e-14
    )


def test_surrogate_loss_grad_hessian_minimizer_are_consistent():
    prob = make_quadratic(4, 5, mu=1.0, L=20.0, weights="random", seed=2)
    theta, alpha, gamma = Theta([0.5, 1.0, 0.0, 2.0]), 0.7, 0.6 / 20.7
    H = surrogate_hessian(prob, alpha, gamma, theta)
    x_t = surrogate_minimizer(prob, alpha, gamma, theta)
    np.testing.assert_allclose(surrogate_grad(prob, x_t, alpha, gamma, theta), 0, atol=1e-12)
    x = np.arange(5.0)
    g = surrogate_grad(prob, x, alpha, gamma, theta)
    np.testing.assert_allclose(g, H @ (x - x_t), rtol=1e-12, atol=1e-12)
    # f̃ is exactly quadratic: f̃(x) − f̃(x̃*) = ½(x − x̃*)ᵀH(x − x̃*)
    gap = surrogate_loss(prob, x, alpha, gamma, theta) - surrogate_loss(prob, x_t, alpha, gamma, theta)
    assert gap == pytest.approx(0.5 * (x - x_t) @ H @ (x - x_t), rel=1e-11)
    # dense eq. (7): ½‖(Q_iA_i)^{1/2}(x − c_i)‖² = ½(x − c_i)ᵀQ_iA_i(x − c_i)
    dense = sum(
        prob.p[i] * 0.5 * (x - prob.c[i]) @ _dense_Q(prob.A[i], alpha, gamma, theta) @ prob.A[i] @ (x - prob.c[i])
        for i in range(prob.n)
    )
    assert surrogate_loss(prob, x, alpha, gamma, theta) == pytest.approx(dense, rel=1e-12)
    batch = surrogate_loss(prob, np.stack([x, x_t]), alpha, gamma, theta)
    assert batch.shape == (2,)


def test_surrogate_at_gamma_zero_is_w_times_f():
    prob = make_quadratic(3, 4, mu=1.0, L=5.0, weights="random", seed=3)
    theta = Theta([0.5, 1.5, 1.0])
    x = np.ones(4)
    assert surrogate_loss(prob, x, 0.4, 0.0, theta) == pytest.approx(theta.w * prob.loss(x), rel=1e-12)
    np.testing.assert_allclose(surrogate_minimizer(prob, 0.4, 0.0, theta), prob.x_star(), rtol=1e-10)


def test_surrogate_minimizer_refuses_a_non_convex_surrogate():
    prob = make_quadratic(1, 3, mu=1.0, L=10.0, seed=4)
    # Θ_2 with γ(L+α) = 1.5: q(L) = 1 − 1.5 < 0, and with one client Σ p_i Q_iA_i is indefinite
    with pytest.raises(ValueError, match=r"not positive definite.*gamma < 1/\(L \+ alpha\)"):
        surrogate_minimizer(prob, 0.0, 0.15, Theta.last(2))


# --------------------------------------------------------------------------------------------
# κ (eq. 9) and the closed-form bounds (eqs. 10–13)
# --------------------------------------------------------------------------------------------


def test_kappa_equals_condition_number_when_clients_commute():
    prob = make_quadratic(3, 4, mu=1.0, L=30.0, commuting=True, weights="random", seed=5)
    for theta in (Theta.uniform(6), Theta.last(3), Theta([1.0, 0.2, 0.7])):
        k, L_t, mu_t = kappa(prob, 0.5, 0.5 / 30.5, theta)
        ev = np.linalg.eigvalsh(surrogate_hessian(prob, 0.5, 0.5 / 30.5, theta))
        assert mu_t - 1e-12 <= ev[0] and ev[-1] <= L_t + 1e-12
        if theta.kind == "uniform":  # q(λ)λ monotone: the shared extremes are attained
            assert k == pytest.approx(ev[-1] / ev[0], rel=1e-10)


def test_kappa_bounds_condition_number_non_commuting():
    rng = np.random.default_rng(6)
    for _ in range(20):
        prob = make_quadratic(4, 5, mu=1.0, L=float(rng.uniform(2, 100)), weights="random", seed=rng)
        theta = Theta(rng.exponential(size=int(rng.integers(1, 10))))
        alpha = float(rng.uniform(0, 3))
        gamma = float(rng.uniform(0, 1)) / (prob.L + alpha)
        k, _, _ = kappa(prob, alpha, gamma, theta)
        ev = np.linalg.eigvalsh(surrogate_hessian(prob, alpha, gamma, theta))
        assert ev[-1] / ev[0] <= k * (1 + 1e-10)  # Lemma 2


def test_phi_psi_match_direct_sums():
    lam, alpha, gamma = np.array([0.5, 2.0, 7.0]), 0.3, 0.1
    for K in (1, 2, 9):
        m = 1 - gamma * (lam + alpha)
        np.testing.assert_allclose(phi(lam, alpha, gamma, K), sum(m**k for k in range(K)) * lam, rtol=1e-14)
        np.testing.assert_allclose(psi(lam, alpha, gamma, K), m ** (K - 1) * lam, rtol=1e-14)
    assert phi(3.0, 0.0, 0.0, 7) == 21.0


def test_kappa_bound_uniform_is_lemma_3_and_stable_for_huge_K():
    rng = np.random.default_rng(7)
    for _ in range(10):
        prob = make_quadratic(3, 4, mu=1.0, L=float(rng.uniform(2, 50)), weights="random", seed=rng)
        K, alpha = int(rng.integers(1, 50)), float(rng.uniform(0, 2))
        gamma = float(rng.uniform(0, 1)) / (prob.L + alpha)
        k, _, _ = kappa(prob, alpha, gamma, Theta.uniform(K))
        assert k <= kappa_bound_uniform(prob.mu, prob.L, alpha, gamma, K) * (1 + 1e-12)
    mu, L, alpha = 1.0, 50.0, 2.0
    gamma = 0.5 / (L + alpha)
    big = kappa_bound_uniform(mu, L, alpha, gamma, 10**6)
    assert big == pytest.approx((L / mu) * (mu + alpha) / (L + alpha), rel=1e-14)  # K → ∞: λ/(λ+α) ratio
    ks = kappa_bound_uniform(mu, L, alpha, gamma, np.array([1, 10, 100, 10**4, 10**6]))
    assert ks[0] == pytest.approx(L / mu) and np.all(np.diff(ks) <= 0)  # decreases in K
    # γ → 1/(L+α) from below: finite, and κ < L/μ
    assert 1 <= kappa_bound_uniform(mu, L, 0.0, (1 - 1e-15) / L, 10**6) < L / mu


def test_kappa_bound_last_is_lemma_4_in_log_space():
    mu, L = 1.0, 10.0
    assert kappa_bound_last(mu, L, 0.0, 0.0, 5) == pytest.approx(10.0, rel=1e-15)
    K, gamma, alpha = 7, 0.01, 0.5
    direct = ((1 - gamma * (L + alpha)) / (1 - gamma * (mu + alpha))) ** (K - 1) * L / mu
    assert kappa_bound_last(mu, L, alpha, gamma, K) == pytest.approx(direct, rel=1e-14)
    # K = 10⁶ with γ just inside 1/(KL+α): finite and ≥ 1 (the power alone would be e^{−…} of huge arguments)
    K = 10**6
    g = 0.99 / (K * L + alpha)
    v = kappa_bound_last(mu, L, alpha, g, K)
    assert np.isfinite(v) and 1 <= v < L / mu
    prob = make_quadratic(3, 4, mu=mu, L=L, weights="random", seed=8)
    k, _, _ = kappa(prob, alpha, 0.5 / (20 * L + alpha), Theta.last(20))
    assert k <= kappa_bound_last(mu, L, alpha, 0.5 / (20 * L + alpha), 20) * (1 + 1e-12)
    with pytest.raises(ValueError, match=r"gamma < 1/\(K\*L \+ alpha\) violated: gamma=0.02, K=7"):
        kappa_bound_last(mu, L, 0.0, 0.02, 7)


# --------------------------------------------------------------------------------------------
# Section 4.3 / Appendix C helpers
# --------------------------------------------------------------------------------------------


def test_lemma5_and_theorem4_bounds_and_hypotheses():
    from fedtheory.algorithms.surrogate import distortion_extremes, lemma5_bound, minimizer_distance, theorem4_bound
    from fedtheory.problems.quadratic import QuadraticFederation

    prob = QuadraticFederation(A=[[[4.0]], [[1.0]]], c=[[1.0], [-1.0]], p=[0.5, 0.5])
    a, b = distortion_extremes(prob, 0.0, 0.125, Theta.last(3))
    assert (a, b) == (0.25, 0.875**2)
    assert lemma5_bound(prob, 0.0, 0.125, Theta.last(3), constant=2.0) == pytest.approx(
        2 * (np.sqrt(b) - np.sqrt(a)) / (np.sqrt(b) + np.sqrt(a)), rel=1e-14
    )
    # d = 1 (Lemma 12): the 2C bound holds on this instance
    assert minimizer_distance(prob, 0.0, 0.125, Theta.last(3)) <= lemma5_bound(
        prob, 0.0, 0.125, Theta.last(3), constant=2.0
    )
    with pytest.raises(ValueError, match="gamma < 1/\\(L \\+ alpha\\)"):
        lemma5_bound(prob, 0.0, 0.3, Theta.last(3))
    assert theorem4_bound(1.0, 10.0, 0.0, 0.01, 5, "uniform") == pytest.approx(
        8
        * (np.sqrt(10) - np.sqrt(kappa_bound_uniform(1, 10, 0, 0.01, 5)))
        / (np.sqrt(10) + np.sqrt(kappa_bound_uniform(1, 10, 0, 0.01, 5)))
    )
    with pytest.raises(ValueError, match="K\\*L"):
        theorem4_bound(1.0, 10.0, 0.0, 0.05, 5, "last")
    with pytest.raises(ValueError, match="theta_kind"):
        theorem4_bound(1.0, 10.0, 0.0, 0.01, 5, "middle")


def test_mean_absolute_deviation_and_matrix_weighted_objects():
    from fedtheory.algorithms.surrogate import (
        matrix_weighted_discrepancy,
        matrix_weighted_mean,
        mean_absolute_deviation,
    )

    assert mean_absolute_deviation([0.0, 2.0], [0.5, 0.5]) == 1.0
    with pytest.raises(ValueError, match="probs"):
        mean_absolute_deviation([0.0, 1.0], [0.7, 0.7])
    X = np.array([np.diag([1.0, 2.0]), np.diag([3.0, 5.0])])
    Y = np.array([np.diag([1.0, 1.0]), np.diag([3.0, 1.0])])
    assert np.allclose(matrix_weighted_mean(X, Y), np.diag([2.5, 3.5]))
    # d = 1 reduction of Definition 3 per diagonal entry is not additive across entries (operator norms), but a
    # scalar instance reduces to D/|E|:
    assert matrix_weighted_discrepancy([[[1.0]], [[3.0]]], [[[1.0]], [[1.0]]]) == pytest.approx(0.5)
    R = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="X_i Y_i = Y_i X_i"):
        matrix_weighted_mean(np.array([np.diag([1.0, 2.0])]), np.array([np.eye(2) + 0.5 * R]))
