"""FedLRGD (Algorithm 1), FedAve through LocalUpdate, data-smooth losses, exact FedAve moments."""

import math

import numpy as np
import pytest

from fedtheory.algorithms.fedlrgd import fedlrgd_weights, fedpaq_step, run_fedave, run_fedlrgd
from fedtheory.analysis.fedave_moments import (
    fedave_deterministic_run,
    fedave_moments,
    fedave_moments_homogeneous,
    global_quadratic,
)
from fedtheory.problems.data_smooth import RidgeLoss, SoftLogisticLoss
from fedtheory.problems.finite_sum import LeastSquaresFederation


def _ridge_instance(rng, p=3, m=4, s=5):
    server = np.c_[rng.normal(size=(p + 1, p)), rng.normal(size=p + 1)]
    clients = np.c_[rng.normal(size=(m * s, p)), rng.normal(size=m * s)].reshape(m, s, p + 1)
    return server, clients


def test_ridge_fedlrgd_is_gradient_descent():
    rng = np.random.default_rng(0)
    server, clients = _ridge_instance(rng)
    loss = RidgeLoss(l2=0.2)
    allrows = np.r_[server, clients.reshape(-1, 4)]
    L1 = loss.smoothness(allrows)
    res = run_fedlrgd(loss, server, clients, S=25, L1=L1, seed=0)
    theta = np.zeros(3)
    for _ in range(25):
        theta = theta - loss.gradient(allrows, theta) / L1
    assert np.allclose(res.theta[-1], theta, rtol=1e-9, atol=1e-11)
    assert res.complexity == res.r**2 + res.r * res.s + res.r * res.S + 1.0 * res.m * res.r


def test_weights_reproduce_client_rows():
    rng = np.random.default_rng(1)
    loss = SoftLogisticLoss(mu=0.1)
    server, clients = rng.uniform(size=(3, 3)), rng.uniform(size=(2, 4, 3))
    th = rng.normal(size=(3, 2))
    G, v, W, counts = fedlrgd_weights(loss, server, clients, th)
    rows = loss.grads(clients.reshape(-1, 3), th).reshape(2, 4, 3, 2).sum(axis=1)  # (m, r, p)
    for c in range(2):
        for i in range(2):
            assert np.allclose(v[c, i] @ G[i], rows[c, :, i], rtol=1e-10)
    assert np.allclose(W, 1 + v.sum(axis=0))
    assert counts == {"server": 9, "per_client": 12}


def test_fedlrgd_input_errors():
    loss = RidgeLoss(0.1)
    with pytest.raises(ValueError, match="client_rows"):
        run_fedlrgd(loss, np.zeros((3, 3)), np.zeros((2, 3)), S=1, L1=1.0)
    with pytest.raises(ValueError, match="S must be a positive integer"):
        run_fedlrgd(loss, np.zeros((3, 3)), np.zeros((2, 2, 3)), S=0, L1=1.0)


def test_data_smooth_losses_match_finite_sum_federations():
    rng = np.random.default_rng(2)
    rows = [np.c_[rng.normal(size=(6, 3)), rng.integers(0, 2, size=6).astype(float)] for _ in range(3)]
    theta = rng.normal(size=3)
    allrows = np.concatenate(rows)
    for loss in (RidgeLoss(l2=0.3), SoftLogisticLoss(mu=0.3)):
        fed = loss.to_federation(rows)
        assert fed.loss(theta) == pytest.approx(loss.objective(allrows, theta), rel=1e-12)
        assert np.allclose(fed.grad(theta), loss.gradient(allrows, theta), rtol=1e-12)
    with pytest.raises(ValueError, match="hard labels"):
        SoftLogisticLoss(mu=0.1).to_federation([np.c_[rng.normal(size=(2, 2)), [0.3, 0.7]]])


def test_soft_logistic_minimizer_is_stationary():
    rng = np.random.default_rng(3)
    loss = SoftLogisticLoss(mu=0.05)
    X = rng.uniform(size=(50, 4))
    assert np.linalg.norm(loss.gradient(X, loss.minimizer(X))) < 1e-11


def test_fedave_equals_explicit_model_averaging():
    rng = np.random.default_rng(4)
    fed = LeastSquaresFederation.random(3, 10, 2, l2=0.1, seed=rng)
    x0, b, steps = rng.normal(size=2), 3, [0.05, 0.04, 0.03]
    res = run_fedave(fed, b=b, T=3, step=lambda k: steps[k], x0=x0)
    x = x0
    for eta in steps:
        local = []
        for c in range(3):
            y = x.copy()
            for _ in range(b):
                y = y - eta * fed.client_grads(y)[c]
            local.append(y)
        x = np.mean(local, axis=0)
    assert np.allclose(res.x[-1], x, rtol=1e-12, atol=1e-14)
    assert res.complexity == 3 * (3 + 1.0 * 3)


def test_fedave_rejects_fractional_participation():
    fed = LeastSquaresFederation.random(3, 4, 2, seed=0)
    with pytest.raises(ValueError, match="tau"):
        run_fedave(fed, b=1, T=1, step=0.1, tau=0.5)


def test_fedpaq_step_schedule():
    step = fedpaq_step(2.0, 3)
    assert step(0) == 2.0 and step(1) == pytest.approx(0.5)


def test_moments_general_and_homogeneous_agree_and_match_deterministic():
    A = np.array([[2.0, 0.3], [0.3, 1.0]])
    c = np.array([0.5, -1.0])
    Sig = np.array([[0.2, 0.05], [0.05, 0.1]])
    gen = fedave_moments(
        np.stack([A] * 4),
        np.stack([c] * 4),
        np.stack([Sig] * 4),
        b=3,
        steps=[0.1] * 20,
        M=2,
        theta0=np.array([2.0, 2.0]),
    )
    hom = fedave_moments_homogeneous(A, c, Sig, m=4, M=2, b=3, steps=[0.1] * 20, theta0=np.array([2.0, 2.0]))
    assert np.allclose(gen["dist2"], hom["dist2"], rtol=1e-10)
    assert np.allclose(gen["cov"], hom["cov"], atol=1e-14)
    As = [np.diag([1.0, 2.0]), np.array([[1.5, 0.5], [0.5, 1.5]])]
    cs = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    det = fedave_deterministic_run(As, cs, np.array([0.3, 0.1]), 2, [0.2] * 5)
    mom = fedave_moments(
        np.stack(As), np.stack(cs), np.zeros((2, 2, 2)), b=2, steps=[0.2] * 5, M=2, theta0=np.array([0.3, 0.1])
    )
    assert np.allclose(mom["mean"][-1], det[-1], rtol=1e-12)
    assert np.allclose(
        global_quadratic(np.stack(As), np.stack(cs))[1],
        np.linalg.solve(sum(As) / 2, (As[0] @ cs[0] + As[1] @ cs[1]) / 2),
    )


def test_moments_match_monte_carlo_with_sampling_and_noise():
    rng = np.random.default_rng(5)
    m, p, b, M, eta = 3, 2, 2, 2, 0.15
    A = np.stack([np.diag([1.0, 2.0]), np.eye(2) * 1.5, np.array([[1.2, 0.2], [0.2, 1.0]])])
    c = rng.normal(size=(m, p))
    Sig = np.stack([np.eye(2) * 0.1] * m)
    mom = fedave_moments(A, c, Sig, b=b, steps=[eta] * 8, M=M, theta0=np.array([1.0, -1.0]))
    R = 40000
    th = np.tile([1.0, -1.0], (R, 1))
    for _ in range(8):
        sel = np.argsort(rng.random((R, m)), axis=1)[:, :M]
        out = np.zeros_like(th)
        for j in range(M):
            cidx, y = sel[:, j], th.copy()
            for _ in range(b):
                y = y - eta * (np.einsum("rij,rj->ri", A[cidx], y - c[cidx]) + rng.normal(size=(R, p)) * math.sqrt(0.1))
            out += y / M
        th = out
    assert np.allclose(th.mean(axis=0), mom["mean"][-1], atol=5 * th.std(axis=0).max() / math.sqrt(R))
    assert np.allclose(np.cov(th.T), mom["cov"][-1], atol=0.01 * np.abs(mom["cov"][-1]).max() + 1e-3)
