"""The localupdate findings, reproduced with the library alone (no claim engine): small, fixed instances.

Charles & Konečný, arXiv:2103.05032. These guard the library functions the claims use: if one of them
changed so that a finding disappeared, these would say which.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from fedtheory.algorithms.surrogate import (
    kappa_bound_last,
    kappa_bound_uniform,
    lemma5_bound,
    matrix_weighted_discrepancy,
    minimizer_distance,
)
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.rates import rate_with_constant_one, table2_rate, tuned_server
from fedtheory.problems.quadratic import QuadraticFederation
from fedtheory.symbolic import tradeoff


def _rotated_pair(L: float, angle: float) -> QuadraticFederation:
    """Two clients A_i = R(±angle/2) diag(L, 1) R(±angle/2)ᵀ, centres ±e₁, equal weights (μ = 1, C = 1)."""
    A = []
    for t in (angle / 2, -angle / 2):
        R = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
        A.append(R @ np.diag([L, 1.0]) @ R.T)
    return QuadraticFederation(A=np.array(A), c=[[1.0, 0.0], [-1.0, 0.0]], p=[0.5, 0.5])


def test_lemma5_fails_for_non_commuting_clients():
    prob = _rotated_pair(1000.0, math.radians(5))  # ratio ≈ 2.85 (50-digit value in the claim's notes)
    theta, gamma = Theta.uniform(5), 0.5 / 1000.0
    assert minimizer_distance(prob, 0.0, gamma, theta) > lemma5_bound(prob, 0.0, gamma, theta, constant=8.0)


def test_lemma12_holds_in_one_dimension():
    prob = QuadraticFederation(A=[[[1.0]], [[50.0]], [[7.0]]], c=[[1.0], [-1.0], [0.3]], p=[0.2, 0.5, 0.3])
    for K in (2, 10, 100):
        for theta in (Theta.uniform(K), Theta.last(K)):
            gamma = 0.9 / 50.0
            assert minimizer_distance(prob, 0.0, gamma, theta) <= lemma5_bound(prob, 0.0, gamma, theta, constant=2.0)


def test_lemma14_counterexample_exact():
    P1, P2 = sp.Matrix([[2, -3], [-3, 5]]), sp.Matrix([[5, -3], [-3, 2]])
    M = P1 * (P1 + P2).inv()
    assert max(float(e) for e in (M.T * M).eigenvals()) > 1  # ‖P₁P⁻¹‖ > 1
    assert all(0 < float(e) < 1 for e in M.eigenvals())  # …though its eigenvalues are in (0, 1)


def test_theorem6_fails_on_commuting_pairs():
    def pair(t, x, y):
        R = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
        return R @ np.diag(x) @ R.T, R @ np.diag(y) @ R.T

    X1, Y1 = pair(0.0, [1.0, 100.0], [1.0, 10.0])
    X2, Y2 = pair(0.1, [1.0, 100.0], [1.0, 1000.0])  # ratio ≈ 8
    a, b = 1.0, 100.0
    assert matrix_weighted_discrepancy(np.array([X1, X2]), np.array([Y1, Y2])) > 2 * (b - a) / b


def test_heavy_ball_constant_one_rate_exceeds_table2():
    server = tuned_server("heavy_ball", 1.0, 16.0)
    assert rate_with_constant_one(server, [1.0, 16.0], 100) > table2_rate(16.0, "heavy_ball")
    gd = tuned_server("gd", 1.0, 16.0)
    assert math.isclose(rate_with_constant_one(gd, [1.0, 16.0], 100), table2_rate(16.0, "gd"), rel_tol=1e-12)


def test_section41_alpha_monotonicity_differs_between_theta_kinds():
    # Θ_{1:K}, large K: α increases κ (the text says it decreases); Θ_K: α decreases κ.
    k = kappa_bound_uniform(1.0, 10.0, np.array([0.0, 1.0]), 0.05, 1000)
    assert k[1] > k[0]
    k = kappa_bound_last(1.0, 10.0, np.array([0.0, 1.0]), 0.001, 50)
    assert k[1] < k[0]
    # equality with α > 0 (one local step, or γ = 0)
    assert kappa_bound_uniform(1.0, 10.0, 1.0, 0.05, 1) == 10.0


def test_symbolic_identities():
    assert tradeoff.heavy_ball_symmetry_residuals() == (0, 0)
    assert tradeoff.maml_theorem2_residual(1, 3, sp.Symbol("alpha", positive=True)) == sp.zeros(1, 1)
    assert tradeoff.phi_derivative_residual() == 0 and tradeoff.psi_derivative_residual() == 0
