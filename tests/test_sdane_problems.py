"""Client oracles (uniform view), the polyhedron problem and the sdane complexities."""

import math

import numpy as np
import pytest
import sympy as sp

from fedtheory.problems.clients import DiagonalQuadraticOracles, FiniteSumOracles, QuadraticOracles, client_oracles
from fedtheory.problems.finite_sum import LogisticFederation
from fedtheory.problems.polyhedron import make_polyhedron
from fedtheory.problems.quadratic import make_quadratic
from fedtheory.symbolic import complexity as cx


def test_uniform_view_matches_the_weighted_objective():
    q = make_quadratic(3, 4, mu=1.0, L=6.0, weights="random", seed=2)
    orc = client_oracles(q)
    x = np.linspace(-1, 1, 4)
    assert math.isclose(orc.loss(x), q.loss(x), rel_tol=1e-12)
    assert np.allclose(orc.grad(x), q.grad(x))
    assert np.allclose(
        orc.client_losses(np.tile(x, (3, 1))) / orc.scale, [0.5 * (x - c) @ A @ (x - c) for A, c in zip(q.A, q.c)]
    )
    assert np.allclose(orc.mu_i, 3 * q.p * q.eigvals[:, 0]) and math.isclose(
        orc.gaps(q.x_star()[None])[0], 0.0, abs_tol=1e-14
    )


def test_prox_solves_the_dane_subproblem():
    q = make_quadratic(3, 4, mu=1.0, L=6.0, seed=1)
    orc = QuadraticOracles(q)
    rng = np.random.default_rng(0)
    C, lin = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    X = orc.prox(C, lin, 0.7)
    assert np.allclose(orc.grads(X) - lin + 0.7 * (X - C), 0, atol=1e-12)
    V = rng.normal(size=(3, 4))
    assert np.allclose(orc.hess_vec(V), orc.grads(C + V) - orc.grads(C), atol=1e-12)


def test_diagonal_oracles_and_errors():
    orc = DiagonalQuadraticOracles([[1.0, 0.0], [3.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]], const=[2.0, 0.0])
    assert orc.x_star().tolist() == [0.5, 0.0] and orc.mu == 0.0
    assert math.isclose(orc.f_star(), orc.loss(orc.x_star()))
    with pytest.raises(ValueError, match="unbounded below"):
        DiagonalQuadraticOracles([[1.0, 0.0]], [[0.0, 1.0]])
    with pytest.raises(ValueError, match="no client oracles"):
        client_oracles("quadratic")


def test_finite_sum_oracles_cached_and_minibatches():
    fed = LogisticFederation.random(3, [10, 20, 30], 2, seed=0)
    assert client_oracles(fed) is client_oracles(fed)
    orc = FiniteSumOracles(fed)
    G = orc.stochastic_grads(np.zeros((3, 2)), np.arange(3), np.random.default_rng(0), batch_size=5)
    assert G.shape == (3, 2)


def test_polyhedron_is_feasible_and_smooth():
    fed = make_polyhedron(N=60, d=5, n=3, R=2.0, slack=0.5, seed=3)
    x = fed.x_star()
    assert math.isclose(np.linalg.norm(x), 1.9, rel_tol=1e-12) and fed.loss(x) == 0.0
    assert fed.loss(np.zeros(5)) > 0
    orc = client_oracles(fed)
    rng = np.random.default_rng(0)
    for _ in range(10):
        a, b = rng.normal(size=(2, 5))
        ga, gb = orc.grads(np.stack([a, b]), [1, 1])
        assert np.linalg.norm(ga - gb) <= orc.L_i[1] * np.linalg.norm(a - b) * (1 + 1e-12)
    fed2 = make_polyhedron(N=60, d=5, n=3, l2=0.1, seed=3)
    assert np.linalg.norm(fed2.grad(fed2.x_star())) < 1e-10


def test_complexities():
    assert sp.limit(cx.corollary_18(), cx.mu, 0) == cx.delta_A * cx.D**2 / cx.eps
    assert cx.same_order(cx.TABLE_1["Acc-S-DANE"]["gc_rounds"], sp.limit(cx.corollary_25(), cx.mu, 0), cx.eps)
    assert cx.order(cx.TABLE_1["S-DANE"]["gc_rounds"], cx.eps) == 1 / cx.eps
    assert set(cx.TABLE_1) == set(cx.TABLE_1_PROVENANCE)
