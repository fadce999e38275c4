"""Tests of fedtheory.analysis.pareto's frontiers beyond Θ_{1:K} (Charles & Konečný, arXiv:2103.05032, Section 5)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.pareto import (
    frontier,
    frontier_last,
    frontier_problem,
    frontier_random_matrices,
    frontier_spectrum,
    frontier_uniform,
    log_distortions,
    log_K_grid,
    random_spectrum,
)
from fedtheory.analysis.rates import suboptimality_delta, table2_rate, table2_rate_from_log
from fedtheory.problems.quadratic import make_quadratic


def test_log_K_grid_is_sorted_unique_and_spans():
    K = log_K_grid(10**6, 400)
    assert K[0] == 1 and K[-1] == 10**6 and np.all(np.diff(K) > 0)


def test_frontier_last_matches_eq13_and_enforces_lemma4():
    fr = frontier_last(1.0, 10.0, 0.5, gammas=0.001, Ks=[1, 10, 50])
    expect = ((1 - 0.001 * 10.5) / (1 - 0.001 * 1.5)) ** (np.array([1, 10, 50]) - 1) * 10
    assert np.allclose(fr["kappa"], expect, rtol=1e-13)
    assert np.allclose(fr["rho"], table2_rate(expect, "gd"))
    assert np.allclose(fr["delta"], suboptimality_delta(10.0, expect))
    with pytest.raises(ValueError, match="K\\*L"):
        frontier_last(1.0, 10.0, 0.0, gammas=0.001, Ks=[200])


def test_frontier_dispatch_and_alpha_path():
    a = frontier(1.0, 10.0, theta="uniform", gammas=0.01, Ks=[5])
    b = frontier_uniform(1.0, 10.0, 0.0, gammas=0.01, Ks=[5])
    assert np.array_equal(a["kappa"], b["kappa"])
    path = frontier_uniform(1.0, 10.0, np.array([0.0, 0.5, 1.0]), Ks=100)  # γ = 1/(2(L + α)) per α
    assert np.allclose(path["gamma"], 1 / (2 * (10 + np.array([0.0, 0.5, 1.0]))))
    with pytest.raises(ValueError, match="theta"):
        frontier(1.0, 10.0, theta="middle")


def test_random_spectrum_extremes_and_seed():
    lam = random_spectrum(50, 1.0, 7.0, seed=3)
    assert lam[0] == 1.0 and lam[-1] == 7.0 and np.all(np.diff(lam) >= 0)
    assert np.array_equal(lam, random_spectrum(50, 1.0, 7.0, seed=3))
    with pytest.raises(ValueError):
        random_spectrum(1, 1.0, 7.0, seed=0)


def test_log_distortions_match_mpmath_at_huge_K():
    lam = np.array([1.0, 3.0, 10.0])
    got = log_distortions(lam, 0.2, 0.001, [10**6], "last")[0]
    with mpmath.workdps(40):
        ref = [
            float(mpmath.log((1 - mpmath.mpf(0.001) * (mpmath.mpf(v) + mpmath.mpf(0.2))) ** (10**6 - 1))) for v in lam
        ]
    assert np.allclose(got, ref, rtol=1e-13)


def test_frontier_spectrum_inside_lemma4_equals_analytic():
    """Inside γ < 1/(KL + α) and with μ, L attained, the simulated point is the analytic Θ_K point (both Δ forms)."""
    lam = random_spectrum(30, 1.0, 10.0, seed=1)
    Ks = np.array([1, 5, 20, 80])
    for delta in ("lemma5", "eq17"):
        fr = frontier_spectrum(lam, gamma=0.001, Ks=Ks, theta="last", delta=delta)
        an = frontier_last(1.0, 10.0, 0.0, gammas=0.001, Ks=Ks)
        assert np.allclose(fr["rho"], an["rho"], rtol=1e-12)
        assert np.allclose(fr["delta"], an["delta"], rtol=1e-10, atol=1e-14)


def test_frontier_spectrum_beyond_threshold_stays_in_unit_square_with_lemma5_form():
    fr = frontier_random_matrices(1.0, 10.0, 100, gamma=0.001, Ks=log_K_grid(), seed=0)
    assert np.all((fr["rho"] >= 0) & (fr["rho"] <= 1)) and np.all((fr["delta"] >= 0) & (fr["delta"] <= 1))
    eq17 = frontier_random_matrices(1.0, 10.0, 100, gamma=0.001, Ks=[10**4], seed=0, delta="eq17")
    assert eq17["delta"][0] < 0  # κ > κ₀ there: eq. (17) leaves [0, 1]
    with pytest.raises(ValueError, match="delta"):
        frontier_spectrum([1.0, 2.0], gamma=0.01, Ks=[2], delta="other")


def test_table2_rate_from_log_agrees_and_survives_overflow():
    k = np.array([1.0, 2.0, 10.0, 1e6])
    for m in ("gd", "nesterov", "heavy_ball"):
        assert np.allclose(table2_rate_from_log(np.log(k), m), table2_rate(k, m), rtol=1e-13, atol=1e-16)
        assert table2_rate_from_log(1e5, m) == 1.0


def test_frontier_problem_uses_eq9():
    prob = make_quadratic(3, 3, mu=1.0, L=8.0, weights="random", seed=2)  # non-commuting: κ(9) ≤ bound
    fr = frontier_problem(prob, [Theta.uniform(K) for K in (1, 4, 16)], gammas=0.05)
    bound = frontier_uniform(1.0, 8.0, 0.0, gammas=0.05, Ks=[1, 4, 16])["kappa"]
    assert np.all(fr["kappa"] <= bound * (1 + 1e-12))
    assert fr["kappa"][0] == pytest.approx(8.0)
