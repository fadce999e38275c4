"""Dissimilarity measures of S-DANE (Jiang, Rodomanov & Stich, arXiv:2407.07084): exact values on small cases."""

import math

import numpy as np
import pytest

from fedtheory.problems.clients import DiagonalQuadraticOracles
from fedtheory.problems.dissimilarity import (
    Delta_s,
    delta_A,
    delta_B,
    delta_s,
    delta_tilde,
    estimate_along,
    gradient_variance,
    local_sod,
    sampling_factor,
    sigma_s_sq,
    subsets,
    uniform_hessians,
    zeta_sq,
)
from fedtheory.problems.quadratic import QuadraticFederation, make_quadratic


def scalar(values, p=None):
    n = len(values)
    return QuadraticFederation(A=[[[v]] for v in values], c=[[0.0]] * n, p=p or [1 / n] * n)


def test_scalar_values_by_hand():
    q = scalar([0.0, 2.0, 4.0])
    # s = 2: subsets {0,2} have deviations ±2; s = 3: variance of (0, 2, 4) = 8/3
    assert delta_s(q, 2) == 2.0
    assert math.isclose(delta_s(q, 3) ** 2, 8 / 3)
    assert delta_s(q, 1) == 0.0
    assert Delta_s(q, 1) == 2.0 and Delta_s(q, 2) == 1.0 and Delta_s(q, 3) == 0.0
    assert delta_tilde(q, 2) == 3.0
    assert delta_B(q) == 2.0


def test_uniform_view_rescales_by_n_p():
    q = scalar([1.0, 3.0], p=[0.25, 0.75])
    assert uniform_hessians(q)[:, 0, 0].tolist() == [0.5, 4.5]
    assert math.isclose(delta_A(q), 2.0)  # deviations ±2 around 2.5
    assert not math.isclose(delta_A(q), q.delta_A())  # the weighted measure differs


def test_delta_A_matches_quadratic_federation_with_uniform_weights():
    q = make_quadratic(4, 5, mu=1.0, L=10.0, delta_A=1.7, seed=3)
    assert math.isclose(delta_A(q), 1.7, rel_tol=1e-12)
    assert math.isclose(delta_s(q, 4), 1.7, rel_tol=1e-12)
    assert delta_A(q) <= delta_B(q)


def test_diagonal_fast_path_equals_dense():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 5, size=(3, 6))
    orc = DiagonalQuadraticOracles(a, rng.normal(size=(3, 6)))
    dense = QuadraticFederation(A=np.einsum("nd,de->nde", a, np.eye(6)), c=np.zeros((3, 6)), p=np.full(3, 1 / 3))
    assert math.isclose(delta_A(orc), delta_A(dense), rel_tol=1e-12)
    assert math.isclose(delta_B(orc), delta_B(dense), rel_tol=1e-12)


def test_zeta_sq_finite_only_for_shared_hessians():
    A = np.broadcast_to(np.diag([1.0, 2.0]), (3, 2, 2)).copy()
    c = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    q = QuadraticFederation(A=A, c=c, p=np.full(3, 1 / 3))
    z = zeta_sq(q)
    for x in (np.zeros(2), np.array([100.0, -7.0])):
        assert math.isclose(gradient_variance(q, x), z, rel_tol=1e-10)
    assert math.isinf(zeta_sq(make_quadratic(3, 2, mu=1.0, L=2.0, seed=0)))


def test_sampling_factor_and_sigma():
    assert sampling_factor(5, 5) == 0.0 and sampling_factor(5, 1) == 1.0
    assert sigma_s_sq(math.inf, 4, 4) == 0.0
    assert math.isclose(sigma_s_sq(3.0, 4, 2), 1.0)
    with pytest.raises(ValueError, match="1 <= s <= n"):
        sampling_factor(3, 4)


def test_local_sod_bounded_by_delta_and_estimates():
    q = make_quadratic(4, 3, mu=1.0, L=8.0, delta_A=1.5, seed=1)
    rng = np.random.default_rng(2)
    for _ in range(20):
        assert local_sod(q, rng.normal(size=3), rng.normal(size=3)) <= 1.5 * (1 + 1e-12)
    est = estimate_along(q, rng.normal(size=(5, 3)))
    assert est["delta_A"] <= 1.5 * (1 + 1e-12) and math.isinf(zeta_sq(q)) and est["points"] == 5
    assert math.isnan(local_sod(q, np.ones(3), np.ones(3)))


def test_subsets_and_errors():
    assert subsets(3, 3).tolist() == [[0, 1, 2]]
    with pytest.raises(ValueError, match="exceed the limit"):
        subsets(40, 20)
    with pytest.raises(ValueError, match="quadratic federation"):
        uniform_hessians(object())
