"""Approximate rank, Lemma 1's piecewise Taylor approximation, Theorem 1's bound (fedtheory.analysis.low_rank)."""

import math

import numpy as np
import pytest

from fedtheory.analysis import low_rank as lr


def test_approximate_rank_counts_energy():
    M = np.diag([10.0, 1.0, 1.0, 1.0])  # 100 / 103 < 0.9? no: 0.97 ≥ 0.9
    assert lr.approximate_rank(M) == 1
    assert lr.approximate_rank(np.eye(5)) == 5
    assert lr.approximate_rank(np.eye(10), energy=0.5) == 5
    batch = np.stack([np.eye(3), np.zeros((3, 3)), np.ones((3, 3))])
    assert lr.approximate_rank(batch).tolist() == [3, 0, 1]


@pytest.mark.parametrize("d, q", [(1, 0.5), (1, 7.0), (2, 3.3), (3, 5.0)])
def test_grid_partition_is_an_l1_cover_of_radius_at_most_1_over_q(d, q):
    part = lr.L1GridPartition(d, q)
    assert part.radius <= 1 / q + 1e-15
    y = np.random.default_rng(0).uniform(size=(2000, d))
    cells = part.locate(y)
    assert np.all(np.abs(y - part.centers[cells]).sum(axis=1) <= 1 / q + 1e-12)
    if d == 1:
        assert part.n_cells <= lr.covering_number_bound(1, q)


def test_piecewise_taylor_reproduces_polynomials_of_degree_l():
    # g(y) = 1 + y1 − 2 y2 + 3 y1 y2 has degree 2: its degree-2 Taylor polynomial is exact in every cell
    def derivs(z):
        y1, y2 = z[:, 0], z[:, 1]
        cols = {
            (0, 0): 1 + y1 - 2 * y2 + 3 * y1 * y2,
            (0, 1): -2 + 3 * y1,
            (1, 0): 1 + 3 * y2,
            (0, 2): 0 * y1,
            (1, 1): 3 + 0 * y1,
            (2, 0): 0 * y1,
        }
        return np.stack([cols[s] for s in lr.multi_indices(2, 2)], axis=1)

    y = np.random.default_rng(1).uniform(size=(500, 2))
    P = lr.piecewise_taylor(derivs, lr.L1GridPartition(2, 3.0), 2, y)
    g = 1 + y[:, 0] - 2 * y[:, 1] + 3 * y[:, 0] * y[:, 1]
    assert np.max(np.abs(P - g)) < 1e-12


def test_lemma1_bound_holds_for_fourier_features():
    rng = np.random.default_rng(2)
    for _ in range(10):
        d, eta = int(rng.integers(1, 3)), float(rng.uniform(0.3, 3.5))
        f = lr.FourierFeatures(rng.normal(size=3), rng.normal(size=(3, d)) * 3, rng.uniform(0, 6, size=3))
        q = float(rng.uniform(1, 8))
        l = lr.holder_l(eta)
        y = rng.uniform(size=(800, d))
        err = np.abs(
            lr.piecewise_taylor(lambda z: f.derivatives(z, l), lr.L1GridPartition(d, q), l, y) - f.value(y)
        ).max()
        assert err <= lr.lemma1_bound(f.holder_constant(eta), eta, q) * (1 + 1e-9) + 1e-12


def test_fourier_derivatives_match_finite_differences():
    f = lr.FourierFeatures(np.array([1.5, -0.5]), np.array([[2.0, 1.0], [-1.0, 3.0]]), np.array([0.1, 0.7]))
    z = np.array([[0.3, 0.6]])
    D = f.derivatives(z, 1)[0]
    h = 1e-6
    fd = [
        (f.value(z + [[h, 0]]) - f.value(z - [[h, 0]]))[0] / (2 * h),
        (f.value(z + [[0, h]]) - f.value(z - [[0, h]]))[0] / (2 * h),
    ]
    idx = lr.multi_indices(2, 1)
    assert D[idx.index((1, 0))] == pytest.approx(fd[0], rel=1e-7)
    assert D[idx.index((0, 1))] == pytest.approx(fd[1], rel=1e-7)


def test_theorem1_bound_and_hypothesis():
    assert math.exp(lr.theorem1_log_bound(1, 1.0, 2.0, 20)) == pytest.approx(4.0 * (2 * math.e / 20) ** 2)
    with pytest.raises(ValueError, match="r >= e sqrt"):
        lr.theorem1_log_bound(2, 1.0, 1.0, 10)
    M = lr.DistanceKernel(1.0, 0.5).matrix(
        np.random.default_rng(3).uniform(size=(60, 1)), np.linspace(0, 1, 50)[:, None]
    )
    assert lr.low_rank_error(M, 10) <= math.exp(lr.theorem1_log_bound(1, 0.5, 1.0, 10))


def test_eq52_small_cases_exact():
    for d in range(1, 12):
        for l in range(0, 12):
            lhs, rhs = lr.stirling_binomial_bound_52(d, l)
            assert lhs <= rhs
