"""Tests of fedtheory.analysis.rates and fedtheory.analysis.pareto (Table 2, eq. 17, frontiers)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
from fedtheory.algorithms.surrogate import kappa, kappa_bound_uniform, surrogate_hessian
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.pareto import frontier_uniform, pareto_mask
from fedtheory.analysis.rates import (
    MOMENTA,
    iteration_polynomials,
    iteration_spectral_radius,
    suboptimality_delta,
    rounds_to_contract,
    table2_rate,
    transient_constant,
    tuned_server,
    worst_case_contraction,
)
from fedtheory.problems.quadratic import make_quadratic


# --------------------------------------------------------------------------------------------
# Table 2
# --------------------------------------------------------------------------------------------


def test_table2_values():
    assert table2_rate(3.0, "gd") == pytest.approx(0.5, rel=1e-15)
    assert table2_rate(5.0, "nesterov") == pytest.approx(0.5, rel=1e-15)  # 1 − 2/√16
    assert table2_rate(9.0, "heavy_ball") == pytest.approx(0.5, rel=1e-15)  # (3 − 1)/(3 + 1)
    for m in MOMENTA:
        assert table2_rate(1.0, m) == 0.0
    k = np.array([1.0, 10.0, 1e4])
    assert np.all(table2_rate(k, "heavy_ball") < table2_rate(k, "nesterov") + 1e-15)
    assert np.all(table2_rate(k, "nesterov") <= table2_rate(k, "gd"))


def test_table2_rejects_kappa_below_one_and_unknown_momentum():
    with pytest.raises(ValueError, match=r"kappa >= 1 violated.*kappa=0.9"):
        table2_rate(0.9, "gd")
    with pytest.raises(ValueError, match="momentum must be one of"):
        table2_rate(2.0, "adam")


def test_tuned_server_parameters():
    s = tuned_server("heavy_ball", 1.0, 16.0)
    assert s.kind == "heavy_ball"
    assert s.lr == pytest.approx(4 / 25) and s.momentum == pytest.approx((3 / 5) ** 2)
    s = tuned_server("nesterov", 1.0, 5.0)
    assert s.lr == pytest.approx(4 / 16) and s.momentum == pytest.approx(2 / 6)
    assert tuned_server("gd", 2.0, 6.0).lr == pytest.approx(0.25)
    with pytest.raises(ValueError, match="mu_tilde <= L_tilde"):
        tuned_server("gd", 3.0, 1.0)


@pytest.mark.parametrize("momentum", MOMENTA)
@pytest.mark.parametrize("kap", [1.0, 1.5, 10.0, 1e3, 1e6])
def test_tuned_servers_attain_table2_rate_at_both_ends(momentum, kap):
    """Spectral radius of the tuned iteration is exactly ρ(κ) at λ = μ̃ and λ = L̃ and ≤ ρ between."""
    mu, L = 0.7, 0.7 * kap
    server = tuned_server(momentum, mu, L)
    rho = table2_rate(kap, momentum)
    ends = iteration_spectral_radius(server, np.array([mu, L]))
    # HB and Nesterov sit at a double root at an end: a last-ulp change of λ moves |z| by O(√eps)
    tol = 1e-14 if momentum == "gd" else 1e-7
    assert np.max(np.abs(ends - rho)) <= tol * max(rho, 1e-300) + 1e-15
    inside = iteration_spectral_radius(server, np.linspace(mu, L, 1001))
    assert np.max(inside) <= rho + 1e-7


def _companion_radius(server, lam):
    """Spectral radius of the explicit state-space matrix, by numpy eigenvalues."""
    h, b = server.lr * lam, server.momentum
    if server.kind == "gd":
        return abs(1 - h)
    if server.kind == "heavy_ball":
        T = np.array([[1 + b - h, -b], [1.0, 0.0]])
    else:
        T = np.array([[(1 + b) * (1 - h), -b * (1 - h)], [1.0, 0.0]])
    return float(np.max(np.abs(np.linalg.eigvals(T))))


@pytest.mark.parametrize("kind", ["gd", "heavy_ball", "nesterov"])
def test_spectral_radius_matches_companion_matrix(kind):
    rng = np.random.default_rng(3)
    for _ in range(200):
        server = ServerOpt(
            kind, lr=float(rng.uniform(0.01, 2)), momentum=0.0 if kind == "gd" else float(rng.uniform(0, 1))
        )
        lam = float(rng.uniform(0, 3))
        got = float(iteration_spectral_radius(server, lam))
        want = _companion_radius(server, lam)
        # numpy's eigvals of a defective matrix is itself √eps-accurate near a double root
        assert got == pytest.approx(want, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("kind", ["gd", "heavy_ball", "nesterov"])
def test_iteration_polynomials_match_explicit_simulation(kind):
    """P_t(λ) reproduces the server iteration run on the scalar quadratic ½λe² (x_{−1} = x_0)."""
    rng = np.random.default_rng(4)
    server = ServerOpt(kind, lr=0.3, momentum=0.0 if kind == "gd" else 0.6)
    lam = rng.uniform(0.1, 5.0, size=7)
    T = 30
    P = iteration_polynomials(server, lam, T)
    assert P.shape == (T + 1, 7)
    e_prev = e = np.ones_like(lam)
    sim = [e]
    for _ in range(T):
        if kind == "gd":
            nxt = e - server.lr * lam * e
        elif kind == "heavy_ball":
            nxt = e - server.lr * lam * e + server.momentum * (e - e_prev)
        else:
            y = e + server.momentum * (e - e_prev)
            nxt = y - server.lr * lam * y
        e_prev, e = e, nxt
        sim.append(e)
    np.testing.assert_allclose(P, np.stack(sim), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", ["gd", "heavy_ball", "nesterov"])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4)])
def test_iteration_polynomials_are_the_recurrence_bit_for_bit(kind, shape):
    """The closed-form recurrences of the docstring, written as the plain per-round loop, give the very same floats
    (the gd running product is one np.multiply.accumulate call; the explorer's probe results, replayed from stored
    instances, depend on every bit)."""
    rng = np.random.default_rng(5)
    server = ServerOpt(kind, lr=0.37, momentum=0.0 if kind == "gd" else 0.55)
    lam = rng.uniform(0.0, 6.0, size=shape)
    T = 40
    eta, beta = server.lr, server.momentum
    prev = cur = np.ones_like(lam)
    want = [cur]
    for _ in range(T):
        if kind == "gd":
            nxt = (1 - eta * lam) * cur
        elif kind == "heavy_ball":
            nxt = (1 + beta - eta * lam) * cur - beta * prev
        else:
            nxt = (1 - eta * lam) * ((1 + beta) * cur - beta * prev)
        prev, cur = cur, nxt
        want.append(cur)
    got = iteration_polynomials(server, lam, T)
    assert got.shape == (T + 1,) + shape
    assert got.tobytes() == np.stack(want).tobytes()
    assert iteration_polynomials(server, lam, 0).tolist() == np.ones((1,) + shape).tolist()


def test_iteration_polynomials_decay_at_the_spectral_radius():
    server = tuned_server("heavy_ball", 1.0, 100.0)
    lam = np.array([1.0, 30.0, 100.0])
    P = iteration_polynomials(server, lam, 400)
    rate = np.abs(P[-1]) ** (1 / 400)
    # double roots decay like t·ρ^t: the 400-th root is within ~1.5% of ρ
    np.testing.assert_allclose(rate, iteration_spectral_radius(server, lam), rtol=2e-2)


@pytest.mark.parametrize("kind", ["gd", "heavy_ball", "nesterov"])
def test_driver_error_is_iteration_polynomial_of_surrogate_hessian(kind):
    """x_t − x*(α,γ,Θ) = P_t(∇²f̃)(x_0 − x*(α,γ,Θ)): the driver's server rules are the recursions above."""
    prob = make_quadratic(3, 4, mu=1.0, L=10.0, weights="random", seed=5)
    theta, alpha, gamma = Theta([0.3, 1.0, 0.0, 0.5]), 0.2, 0.05
    _, L_t, mu_t = kappa(prob, alpha, gamma, theta)
    server = tuned_server(kind, mu_t, L_t)
    x0 = np.array([1.0, -2.0, 0.5, 3.0])
    h = run_local_update(prob, LocalUpdate(theta, alpha, gamma, server), x0, 25).to_numpy()
    lam, U = np.linalg.eigh(surrogate_hessian(prob, alpha, gamma, theta))
    P = iteration_polynomials(server, lam, 25)
    e0 = U.T @ (x0 - h.x_surrogate_star)
    predicted = np.einsum("ij,tj->ti", U, P * e0)
    np.testing.assert_allclose(h.x - h.x_surrogate_star, predicted, atol=1e-12 * np.linalg.norm(x0))


# --------------------------------------------------------------------------------------------
# eq. (17) and Pareto frontiers
# --------------------------------------------------------------------------------------------


def test_suboptimality_delta():
    assert suboptimality_delta(9.0, 1.0) == 0.5
    assert suboptimality_delta(10.0, 10.0) == 0.0
    np.testing.assert_allclose(suboptimality_delta(16.0, np.array([1.0, 4.0])), [0.6, 1 / 3])
    with pytest.raises(ValueError, match="kappa0 >= 1"):
        suboptimality_delta(0.5, 1.0)


def _brute_force_mask(r, d):
    n = len(r)
    keep = np.ones(n, dtype=bool)
    for i in range(n):
        for j in range(n):
            if r[j] <= r[i] and d[j] <= d[i] and (r[j] < r[i] or d[j] < d[i]):
                keep[i] = False
                break
    return keep


def test_pareto_mask_matches_brute_force_with_ties():
    rng = np.random.default_rng(6)
    for _ in range(50):
        n = int(rng.integers(1, 60))
        r = rng.integers(0, 8, size=n).astype(float)  # many ties on both axes
        d = rng.integers(0, 8, size=n).astype(float)
        np.testing.assert_array_equal(pareto_mask(r, d), _brute_force_mask(r, d))
    assert pareto_mask([], []).shape == (0,)
    with pytest.raises(ValueError, match="NaN"):
        pareto_mask([0.0, np.nan], [1.0, 0.0])


def test_frontier_uniform_matches_scalar_formulas_and_is_a_tradeoff():
    mu, L, alpha, gamma = 1.0, 50.0, 0.0, 0.01
    Ks = np.unique(np.round(np.logspace(0, 6, 300)))
    fr = frontier_uniform(mu, L, alpha, gammas=gamma, Ks=Ks)
    assert set(fr) == {"K", "gamma", "alpha", "kappa", "rho", "delta"}
    assert all(v.shape == Ks.shape for v in fr.values())
    i = 37
    K = fr["K"][i]
    q = lambda lam: sum((1 - gamma * (lam + alpha)) ** k for k in range(K))  # noqa: E731
    kap = (L * q(L)) / (mu * q(mu))
    assert fr["kappa"][i] == pytest.approx(kap, rel=1e-12)
    assert fr["rho"][i] == pytest.approx((kap - 1) / (kap + 1), rel=1e-12)
    assert fr["delta"][i] == pytest.approx((np.sqrt(L) - np.sqrt(kap)) / (np.sqrt(L) + np.sqrt(kap)), rel=1e-12)
    # more local steps: faster (ρ down) but less accurate (Δ up); every point is Pareto-optimal
    assert np.all(np.diff(fr["rho"]) <= 1e-15) and np.all(np.diff(fr["delta"]) >= -1e-15)
    assert fr["K"][0] == 1 and fr["kappa"][0] == pytest.approx(L / mu, rel=1e-13)
    assert fr["rho"][-1] < 1e-12  # K → ∞, α = 0: one-shot averaging, κ → 1
    # before κ saturates at 1 (ρ → 0), every point is Pareto-optimal; among the saturated ones (ρ and
    # Δ equal up to the last ulps) a last-ulp tie can dominate
    mask = pareto_mask(fr["rho"], fr["delta"])
    assert mask[fr["rho"] > 1e-12].all() and mask[fr["rho"] == 0].sum() >= 1


def test_frontier_uniform_gamma_path_and_hypothesis():
    fr = frontier_uniform(1.0, 5.0, 0.5, gammas=np.linspace(0, 0.99, 50) / 5.5, Ks=100, momentum="heavy_ball")
    np.testing.assert_allclose(fr["rho"], table2_rate(fr["kappa"], "heavy_ball"))
    np.testing.assert_allclose(fr["kappa"], kappa_bound_uniform(1.0, 5.0, 0.5, fr["gamma"], 100))
    with pytest.raises(ValueError, match=r"gamma < 1/\(L \+ alpha\) violated"):
        frontier_uniform(1.0, 5.0, 0.5, gammas=[0.1, 0.2], Ks=10)


def test_frontier_uniform_is_fast():
    Ks = np.arange(1, 10_001)
    frontier_uniform(1.0, 10.0, 0.0, gammas=0.05, Ks=Ks)  # warm-up
    start = time.perf_counter()
    fr = frontier_uniform(1.0, 10.0, 0.0, gammas=0.05, Ks=Ks)
    elapsed = time.perf_counter() - start
    assert fr["rho"].shape == (10_000,)
    assert elapsed < 0.5, f"10⁴ frontier points took {elapsed:.3f}s"  # milliseconds in practice


def test_worst_case_contraction_is_the_driver_worst_case():
    from fedtheory.analysis.rates import rate_with_constant_one, worst_case_contraction

    prob = make_quadratic(1, 2, mu=1.0, L=9.0, commuting=True, seed=0)
    server = tuned_server("heavy_ball", 1.0, 9.0)
    c = worst_case_contraction(server, [1.0, 9.0], 6)
    # along each eigenvector the driver's error ratio is |P_t(λ)|: start on the maximizing one
    for t in (1, 3, 6):
        lam = [1.0, 9.0][int(np.argmax(np.abs(iteration_polynomials(server, [1.0, 9.0], t)[t])))]
        v = prob.eigvecs[0][:, list(prob.eigvals[0]).index(lam)]
        h = run_local_update(prob, LocalUpdate(Theta.uniform(1), 0.0, 0.0, server), prob.x_star() + v, t).to_numpy()
        assert h.dist_empirical[t] == pytest.approx(c[t], rel=1e-10)
    gd = tuned_server("gd", 1.0, 9.0)
    assert rate_with_constant_one(gd, [1.0, 4.0, 9.0], 20) == pytest.approx(0.8, rel=1e-12)
    assert rate_with_constant_one(server, [1.0, 9.0], 50) > table2_rate(9.0, "heavy_ball")  # Theorem 3's finding


@pytest.mark.parametrize("momentum", ["heavy_ball", "nesterov"])
def test_transient_constant_bounds_the_exact_worst_case_and_heavy_ball_attains_it(momentum):
    for condition in (2.0, 30.0, 1e4):
        server = tuned_server(momentum, 1.0, condition)
        rho = table2_rate(condition, momentum)
        T = np.arange(151)
        c = worst_case_contraction(server, np.linspace(1.0, condition, 2001), 150)
        ratio = c / (transient_constant(rho, T, momentum) * rho**T)
        # tolerance: float (η, β) can split the double root by O(sqrt(eps))·ρ, i.e. ≤ 150·sqrt(eps) over 150 steps
        tol = 150 * np.sqrt(np.finfo(float).eps)
        assert ratio.max() <= 1 + tol
        if momentum == "heavy_ball":
            assert ratio[1:].min() >= 1 - tol  # attained at λ = L̃ for every T


def test_rounds_to_contract_matches_brute_force():
    T = np.arange(0, 100001, dtype=np.float64)  # past every answer below (the largest is 20713)
    for momentum in ("gd", "heavy_ball", "nesterov"):
        for rho in (0.0, 0.05, 0.3, 0.7, 0.95, 0.999):
            values = transient_constant(rho, T, momentum) * np.power(rho, T)
            for ratio in (5.0, 1.0, 0.9, 1e-2, 1e-9):
                above = np.nonzero(values > ratio)[0]
                expected = 0.0 if above.size == 0 else above[-1] + 1.0
                assert rounds_to_contract(rho, ratio, momentum) == expected, (momentum, rho, ratio)
    assert rounds_to_contract(1.0, 2.0, "heavy_ball") == np.inf and rounds_to_contract(1.0, 2.0, "gd") == 0.0
    with pytest.raises(ValueError, match="ratio > 0"):
        rounds_to_contract(0.5, 0.0, "gd")
