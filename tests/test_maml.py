"""Tests of MAML clients (fedtheory.algorithms.maml; Charles & Konečný, arXiv:2103.05032, Theorem 2)."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, client_pseudo_gradients, run_local_update
from fedtheory.algorithms.maml import MAML, maml_messages, maml_theta
from fedtheory.algorithms.theta import Theta
from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation
from fedtheory.problems.quadratic import make_quadratic

GD = ServerOpt("gd", lr=1.0)


def _dense_message(A, c, x, K, gamma, alpha):
    """∇_x f(X_{K+1}(x)) by forward Jacobian accumulation with explicit matrices (independent of the module)."""
    d = len(x)
    X, J = x.copy(), np.eye(d)
    M = np.eye(d) - gamma * (A + alpha * np.eye(d))
    for _ in range(K):
        X = X - gamma * (A @ (X - c) + alpha * (X - x))
        J = M @ J + gamma * alpha * np.eye(d)
    return J.T @ (A @ (X - c))


@pytest.mark.parametrize("alpha", [0.0, 0.8])
@pytest.mark.parametrize("K", [0, 1, 4, 9])
def test_quadratic_message_matches_dense_jacobian_and_theorem_2(K, alpha):
    prob = make_quadratic(3, 5, mu=1.0, L=20.0, weights="random", seed=K)
    gamma = 0.7 / (prob.L + alpha)
    x = np.linspace(-2, 1, 5)
    algo = MAML(K, gamma, GD, alpha=alpha)
    msg = maml_messages(prob, x, algo)
    dense = np.stack([_dense_message(prob.A[i], prob.c[i], x, K, gamma, alpha) for i in range(prob.n)])
    assert np.allclose(msg, dense, rtol=0, atol=1e-12)
    lu = LocalUpdate(maml_theta(K, gamma, alpha), alpha, gamma, GD)
    assert np.allclose(client_pseudo_gradients(prob, x, lu), dense, rtol=0, atol=1e-12)


def test_maml_theta_alpha_zero_is_theta_2k_plus_1():
    assert maml_theta(3, 0.1, 0.0) == Theta.last(7)
    assert maml_theta(0, 0.1, 2.0) == Theta.uniform(1)
    w = maml_theta(2, 0.5, 1.0).weights  # (m² + 0.5m + 0.5)²
    assert np.allclose(w, [0.25, 0.5, 1.25, 1.0, 1.0])


@pytest.mark.parametrize("Fed", [LeastSquaresFederation, LogisticFederation])
def test_closed_form_equals_autograd_with_minibatches(Fed):
    pytest.importorskip("torch")
    fed = Fed.random(4, [7, 9, 12, 8], 3, seed=2)
    rng = np.random.default_rng(0)
    algo = MAML(3, 0.15, GD, alpha=0.4)
    inner = np.stack([np.stack([rng.choice(7, 3, replace=False) for _ in range(4)]) for _ in range(3)])
    outer = np.stack([rng.choice(7, 3, replace=False) for _ in range(4)])
    x = rng.normal(size=3)
    a = maml_messages(fed, x, algo, inner_batches=inner, outer_batch=outer)
    b = maml_messages(fed, x, algo, inner_batches=inner, outer_batch=outer, method="autograd")
    assert np.allclose(a, b, rtol=0, atol=1e-13)


def test_logistic_autograd_at_the_kink_u_equals_zero():
    pytest.importorskip("torch")
    fed = LogisticFederation.random(2, 5, 3, seed=0)
    algo = MAML(2, 0.3, GD)
    a = maml_messages(fed, np.zeros(3), algo)
    b = maml_messages(fed, np.zeros(3), algo, method="autograd")
    assert np.allclose(a, b, rtol=0, atol=1e-14)


def test_driver_runs_maml_on_both_paths_and_backends():
    prob = make_quadratic(4, 4, mu=1.0, L=10.0, seed=1)
    algo = MAML(4, 0.02, ServerOpt("heavy_ball", lr=0.05, momentum=0.5), alpha=0.3)
    h1 = run_local_update(prob, algo, np.ones(4), 25).to_numpy()
    h2 = run_local_update(prob, algo, np.ones(4), 25, path="stepwise").to_numpy()
    assert np.allclose(h1.x, h2.x, rtol=0, atol=1e-13)
    assert h1.oracle_calls[-1] == 25 * 4 * 5
    fed = LeastSquaresFederation.random(5, 10, 3, seed=0)
    a = run_local_update(fed, algo, np.zeros(3), 10, batch_size=3, clients_per_round=2, seed=4).to_numpy()
    assert np.all(np.isfinite(a.x))
    pytest.importorskip("torch")
    b = run_local_update(
        fed, algo, np.zeros(3), 10, batch_size=3, clients_per_round=2, seed=4, backend="torch"
    ).to_numpy()
    assert np.allclose(a.x, b.x, rtol=0, atol=1e-13)


def test_fixed_point_is_the_theorem_2_surrogate_minimizer():
    from fedtheory.algorithms.surrogate import surrogate_minimizer

    prob = make_quadratic(3, 3, mu=1.0, L=5.0, seed=3)
    algo = MAML(3, 0.05, ServerOpt("gd", lr=0.5))
    h = run_local_update(prob, algo, np.zeros(3), 400).to_numpy()
    assert np.allclose(h.x[-1], surrogate_minimizer(prob, 0.0, 0.05, Theta.last(7)), atol=1e-10)


def test_bad_input():
    with pytest.raises(ValueError, match="K >= 0"):
        MAML(-2, 0.1, GD)
    with pytest.raises(ValueError, match="outer"):
        MAML(2, 0.1, GD, outer="sometimes")
    with pytest.raises(ValueError, match="gamma"):
        MAML(2, -0.1, GD)
    prob = make_quadratic(2, 2, mu=1.0, L=2.0, seed=0)
    with pytest.raises(ValueError, match="full-batch"):
        maml_messages(prob, np.zeros(2), MAML(1, 0.1, GD), inner_batches=np.zeros((1, 2, 1), dtype=int))
    with pytest.raises(ValueError, match="method"):
        maml_messages(prob, np.zeros(2), MAML(1, 0.1, GD), method="finite-differences")
