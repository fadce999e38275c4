"""Local solvers and accuracy tests of S-DANE (arXiv:2407.07084)."""

import math

import numpy as np
import pytest

from fedtheory.algorithms.local_solvers import (
    FGM,
    GD,
    OGMG,
    SGD,
    Boundary,
    DaneTest,
    Exact,
    FastGradNorm,
    ProxLinearGD,
    StabilizedTest,
    Subproblem,
    ogm_g_thetas,
    sgd_output_moments,
)
from fedtheory.problems.clients import QuadraticOracles, client_oracles
from fedtheory.problems.quadratic import make_quadratic


def subproblem(seed=0, lam=3.0, noise=0.0):
    q = make_quadratic(3, 4, mu=1.0, L=40.0, delta_A=2.0, weights="random", seed=seed)
    orc = QuadraticOracles(q, noise=noise)
    rng = np.random.default_rng(seed)
    C = rng.normal(size=(3, 4))
    GC = orc.grads(C)
    return Subproblem(orc, np.arange(3), C, GC - GC.mean(0), lam, G_center=GC, rng=np.random.default_rng(1))


@pytest.mark.parametrize("solver", [GD(), ProxLinearGD(), FGM(), OGMG(), FastGradNorm(), SGD(step=0.01)])
def test_solvers_meet_the_test(solver):
    sub = subproblem()
    res = solver.solve(sub, StabilizedTest())
    assert res.passed.all()
    assert np.all(res.gradF_sq <= 0.25 * sub.lam**2 * res.dist_sq)
    assert np.allclose(res.G, sub.oracles.grads(res.X, sub.clients))


def test_fixed_K_counts_and_requires_a_stop():
    sub = subproblem()
    assert GD(K=7).solve(sub).evals.tolist() == [7, 7, 7]
    assert FGM(K=5).solve(sub).evals.tolist() == [6, 6, 6]  # + the gradient at x_K
    with pytest.raises(ValueError, match="number of steps K or an accuracy test"):
        GD().solve(sub, None)


def test_gd_bound_of_remark_19():
    sub = subproblem()
    K = GD.steps_bound(float(sub.oracles.L), sub.lam)
    assert GD(K=K).solve(sub, StabilizedTest()).passed.all()


def test_dane_test_threshold_and_exact():
    assert DaneTest(c=1.0).threshold(2.0, 1) == 1.0
    sub = subproblem()
    res = Exact().solve(sub, StabilizedTest())
    assert res.evals.tolist() == [0, 0, 0] and np.all(res.gradF_sq < 1e-20)


def test_boundary_solver_sits_on_the_boundary():
    sub = subproblem()
    res = Boundary(weights=(0.3, -1.0, 0.5)).solve(sub, StabilizedTest())
    assert res.passed.all()
    assert np.allclose(res.gradF_sq, 0.25 * sub.lam**2 * res.dist_sq, rtol=1e-7)


def test_ogm_g_thetas_and_fast_gradient_bound():
    th = ogm_g_thetas(5)
    assert th[-1] == 1 and np.all(np.diff(th) < 0) and th[0] >= 7 / math.sqrt(2)
    assert FastGradNorm.gradient_bound_factor(4) < FastGradNorm.gradient_bound_factor(2)
    assert FastGradNorm.steps_bound(1e4, 1.0) < GD.steps_bound(1e4, 1.0)


def naive_moments(H, b, x0, eta, K, var, average):
    d = H.shape[0]
    M, Q = np.eye(d) - eta * H, eta * eta * var / d * np.eye(d)
    if average == "last":
        m, P = x0.copy(), np.zeros((d, d))
        for _ in range(K):
            m, P = M @ m + eta * b, M @ P @ M.T + Q
        return m, P
    q = 1 / (1 - eta * np.linalg.eigvalsh(H)[0])
    w = q ** np.arange(1, K + 1)
    w /= w.sum()
    mz, Pz = np.concatenate([x0, np.zeros(d)]), np.zeros((2 * d, 2 * d))
    for k in range(K):
        T = np.block([[M, np.zeros((d, d))], [w[k] * M, np.eye(d)]])
        G = np.concatenate([np.eye(d), w[k] * np.eye(d)])
        mz, Pz = T @ mz + np.concatenate([eta * b, w[k] * eta * b]), T @ Pz @ T.T + G @ Q @ G.T
    return mz[d:], Pz[d:, d:]


@pytest.mark.parametrize("average", ["last", "weighted"])
def test_sgd_moments_closed_form_matches_recursion_and_sampling(average):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 3))
    H = A @ A.T + 0.5 * np.eye(3)
    b, x0 = rng.normal(size=3), rng.normal(size=3)
    eta = 0.5 / np.linalg.eigvalsh(H)[-1]
    m, P = sgd_output_moments(H, b, x0, eta, 17, 0.7, average)
    m2, P2 = naive_moments(H, b, x0, eta, 17, 0.7, average)
    assert np.allclose(m, m2, atol=1e-12) and np.allclose(P, P2, atol=1e-12)
    if average == "last":  # Monte Carlo: 4000 runs of the SGD solver's own noise model
        orc_like = rng.normal(size=(4000, 17, 3)) * math.sqrt(0.7 / 3)
        X = np.broadcast_to(x0, (4000, 3)).copy()
        for k in range(17):
            X = X - eta * (X @ H - b + orc_like[:, k])
        assert np.allclose(X.mean(0), m, atol=0.05) and np.allclose(np.cov(X.T), P, atol=0.02)


def test_resolution_stop_after_convergence():
    q = make_quadratic(2, 3, mu=1.0, L=2.0, seed=0)
    orc = client_oracles(q)
    xs = orc.x_star()
    C = np.broadcast_to(xs, (2, 3)).copy() + 1e-17
    GC = orc.grads(C)
    sub = Subproblem(orc, np.arange(2), C, GC - GC.mean(0), 1e-3, G_center=GC)
    res = GD(max_steps=50).solve(sub, StabilizedTest())
    assert np.all(res.passed | res.at_resolution) and res.evals.max() < 50
