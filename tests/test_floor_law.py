"""fedtheory.analysis.floor_law: the closed-form worst floor Φ(κ₀, κ) of two equal-weight quadratic clients."""

import math

import numpy as np
import pytest

from fedtheory.algorithms.surrogate import kappa_bound_uniform, minimizer_distance
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.floor_law import floor_law, floor_law_root, small_step_coefficient, two_client_floor, worst_pair
from fedtheory.certify.federated_pep import floor_d1, message_eigenvalue


def _phi_brute(k0, k):
    t = np.geomspace(1e-6, 1e3, 400_001)
    return float(np.max((k0 - 1) * t / (1 + k0 * t * t) - (k - 1) * t / (1 + k * t * t)))


@pytest.mark.parametrize("k0,k", [(3.0, 2.0), (10.0, 1.0), (100.0, 20.4), (1000.0, 999.0), (1e4, 3.0), (2.0, 1.5)])
def test_phi_is_the_max_over_t(k0, k):
    assert two_client_floor(k0, k) == pytest.approx(_phi_brute(k0, k), rel=1e-7)


def test_root_is_stationary_and_positive():
    for k0, k in [(3.0, 1.2), (50.0, 7.0), (1e3, 1e3 - 1e-3)]:
        u = floor_law_root(k0, k)
        assert u > 0
        cubic = k * k0 * u**3 + (3 * k * k0 - k - k0) * u**2 + (k + k0 - 3) * u - 1
        assert abs(cubic) <= 1e-10 * (k * k0 * u**3 + 1)


def test_monotone_in_kappa_and_limit():
    k0 = 40.0
    vals = [two_client_floor(k0, k) for k in np.linspace(k0, 1.0, 30)]
    assert all(b > a for a, b in zip(vals, vals[1:]))
    assert vals[-1] == pytest.approx((k0 - 1) / (2 * math.sqrt(k0)), rel=1e-13)


def test_law_matches_a_general_2x2_search():
    """No 2 × 2 pair with free spectra in [μ, L] and free angle beats the law (random search)."""
    mu, L, K, g = 1.0, 30.0, 6, 0.4 / 30.0
    law = floor_law(mu, L, K, g)
    rng = np.random.default_rng(0)
    th = np.ones(K)

    def G(X1, X2):
        return np.linalg.solve(X1 + X2, X1 - X2)

    def b(A):
        w, V = np.linalg.eigh(A)
        return (V * message_eigenvalue(w, g, th)) @ V.T

    best = 0.0
    for _ in range(3000):
        lam = rng.uniform(mu, L, size=4)
        lam[rng.random(4) < 0.3] = mu
        lam[rng.random(4) < 0.3] = L
        a = rng.uniform(0, np.pi)
        R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        A1, A2 = R @ np.diag(lam[:2]) @ R.T, np.diag(lam[2:])
        best = max(best, np.linalg.norm(G(b(A1), b(A2)) - G(A1, A2), 2))
    assert best <= law * (1 + 1e-12)
    assert best >= 0.9 * law  # the search gets close: the family is where the worst case lives


def test_worst_pair_attains_law_and_beats_commuting():
    mu, L, K, g = 1.0, 100.0, 10, 0.005
    prob = worst_pair(mu, L, K, g, C=2.0)
    assert minimizer_distance(prob, 0.0, g, Theta.uniform(K)) == pytest.approx(floor_law(mu, L, K, g, C=2.0), rel=1e-12)
    assert floor_law(mu, L, K, g) > 1.5 * floor_d1(mu, L, K, g)[0]


def test_kappa_is_eq_11():
    mu, L, K, g = 1.0, 10.0, 7, 0.03
    k = float(message_eigenvalue(L, g, np.ones(K)) / message_eigenvalue(mu, g, np.ones(K)))
    assert k == pytest.approx(float(kappa_bound_uniform(mu, L, 0.0, g, K)), rel=1e-13)


def test_small_step_first_order():
    mu, L, K = 1.0, 10.0, 4
    D1 = small_step_coefficient(mu, L)
    errs = [abs(floor_law(mu, L, K, s / L) / ((K - 1) * s / L * D1) - 1) for s in (1e-2, 5e-3)]
    assert errs[1] / errs[0] == pytest.approx(0.5, abs=0.05)


def test_bad_input():
    with pytest.raises(ValueError, match="1 <= kappa <= kappa0"):
        two_client_floor(10.0, 11.0)
    with pytest.raises(ValueError, match="kappa0 = L/mu >= 1"):
        two_client_floor(0.5, 1.0)
    with pytest.raises(ValueError, match="gamma < 1/L"):
        floor_law(1.0, 10.0, 3, 0.2)
    with pytest.raises(ValueError, match="0 < mu <= L"):
        small_step_coefficient(2.0, 1.0)
