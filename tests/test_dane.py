"""DANE, S-DANE, Acc-S-DANE, Algorithm 3 and the baselines (arXiv:2407.07084): histories, counts, identities."""

import math

import numpy as np
import pytest

from fedtheory.algorithms.baselines import run_baseline
from fedtheory.algorithms.control_variates import run_scaffnew, run_scaffold
from fedtheory.algorithms.dane import (
    AdaptiveLambda,
    acc_coefficient,
    run_acc_sdane,
    run_dane,
    run_sdane,
    run_sdane_deep,
    sample_clients,
)
from fedtheory.algorithms.extragradient import run_acc_extragradient
from fedtheory.algorithms.local_solvers import GD, SGD, DaneTest, Exact
from fedtheory.problems.clients import client_oracles
from fedtheory.problems.dissimilarity import delta_A
from fedtheory.problems.finite_sum import LogisticFederation
from fedtheory.problems.polyhedron import make_polyhedron
from fedtheory.problems.quadratic import make_quadratic


@pytest.fixture
def quad():
    return make_quadratic(4, 5, mu=0.5, L=30.0, delta_A=2.0, weights="random", seed=0)


def test_history_counts(quad):
    h = run_sdane(quad, np.zeros(5), 12, lam=4.0, solver=GD())
    assert h.x.shape == (13, 5) and h.v.shape == (13, 5) and h.center.shape == (12, 5)
    assert h.local_evals.shape == (12, 4)
    per_round_max = h.local_evals.max(axis=1)
    assert h.oracle_max.tolist() == [0] + np.cumsum(per_round_max).tolist()
    assert h.oracle_sum[-1] == h.local_evals.sum()
    assert np.all(h.local_evals >= 1)  # ∇f_i(v^r) at least
    assert h.test_failures == 0 and h.comm_rounds[-1] == 12


def test_theorem_1_bound_holds_on_a_run(quad):
    orc = client_oracles(quad)
    lam, mu = 2 * delta_A(quad), orc.mu
    x0 = np.ones(5) * 3
    h = run_sdane(quad, x0, 25, lam=lam, mu=mu)
    D2 = np.sum((x0 - orc.x_star()) ** 2)
    R = np.arange(1, 26)
    bound = mu * D2 / (2 * np.expm1(R * np.log1p(mu / lam)))
    lhs = orc.gaps(h.weighted_average(mu)) + mu / 2 * np.sum((h.v[1:] - orc.x_star()) ** 2, axis=1)
    assert np.all(lhs <= bound)


def test_exact_sdane_is_dane_with_sampling(quad):
    a = run_sdane(quad, np.ones(5), 10, lam=3.0, mu=0.2, solver=Exact(), clients_per_round=2, seed=7)
    b = run_dane(quad, np.ones(5), 10, lam=3.0, solver=Exact(), clients_per_round=2, seed=7)
    assert np.array_equal(a.clients, b.clients)
    assert np.allclose(a.x, b.x, atol=1e-12) and np.allclose(a.v, a.x, atol=1e-12)


def test_dane_test_tightens_with_rounds(quad):
    h = run_dane(quad, np.ones(5) * 3, 30, lam=2 * delta_A(quad), solver=GD(), test=DaneTest())
    steps = h.local_evals.max(axis=1)
    assert steps[-5:].mean() > steps[:5].mean()


def test_acc_coefficients_and_invariant(quad):
    assert math.isclose(acc_coefficient(0.0, 1.0, 2.0), 0.5)
    a = acc_coefficient(3.0, 2.0, 1.5)
    assert math.isclose(1.5 * a * a, (3.0 + a) * 2.0)
    h = run_acc_sdane(quad, np.ones(5), 10, lam=2.0, mu=0.1)
    assert np.allclose(h.B, 1 + 0.1 * h.A)


def test_sampling_is_seeded_and_without_replacement(quad):
    a = run_sdane(quad, np.zeros(5), 6, lam=2.0, clients_per_round=3, seed=4)
    b = run_sdane(quad, np.zeros(5), 6, lam=2.0, clients_per_round=3, seed=4)
    assert np.array_equal(a.clients, b.clients) and np.array_equal(a.x, b.x)
    assert all(len(set(row.tolist())) == 3 for row in a.clients)
    assert sample_clients(None, 4, None).tolist() == [0, 1, 2, 3]


def test_adaptive_lambda_follows_local_dissimilarity(quad):
    h = run_sdane(quad, np.ones(5) * 2, 10, lam=AdaptiveLambda(1.0), mu=0.0, solver=GD(K=5), test=None)
    assert h.lam[0] == 1.0 and np.all(h.lam[1:] <= delta_A(quad) * (1 + 1e-9))
    with pytest.raises(ValueError, match="full participation"):
        run_sdane(quad, np.zeros(5), 2, lam=AdaptiveLambda(1.0), clients_per_round=2)


def test_stop_gap_and_errors(quad):
    h = run_sdane(quad, np.ones(5), 500, lam=2.0, stop_gap=1e-6)
    assert h.rounds < 500 and h.gap[-1] <= 1e-6
    with pytest.raises(ValueError, match="lambda must be finite and > 0"):
        run_sdane(quad, np.zeros(5), 1, lam=0.0)
    with pytest.raises(ValueError, match="x0 must have shape"):
        run_sdane(quad, np.zeros(3), 1, lam=1.0)
    with pytest.raises(ValueError, match="rounds must be"):
        run_acc_sdane(quad, np.zeros(5), -1, lam=1.0)


def test_algorithm_3_option_2_is_algorithm_1():
    fed = LogisticFederation.random(4, 20, 3, l2=0.05, seed=1)
    a = run_sdane_deep(fed, np.ones(3), 5, lam=0.5, mu=0.02, K=3, lr=0.1, batch_size=5, control_variate=True, seed=3)
    b = run_sdane(fed, np.ones(3), 5, lam=0.5, mu=0.02, solver=SGD(K=3, step=0.1, batch_size=5), test=None, seed=3)
    assert np.allclose(a.x, b.x, atol=1e-13) and np.allclose(a.v, b.v, atol=1e-13)


def test_baselines_scaffold_scaffnew_extragradient_converge():
    fed = make_polyhedron(200, 10, 4, seed=0)
    orc = client_oracles(fed)
    x0 = np.zeros(10)
    step = 1 / orc.L
    for h in (
        run_scaffold(fed, x0, 30, K=5, step=step),
        run_scaffnew(fed, x0, 30, p=0.2, step=step, seed=0),
        run_acc_extragradient(fed, x0, 30, lam=0.3, mu=0.1),
        run_baseline(fed, "fedprox", x0, 30, step=step, K=5, lam=0.3),
    ):
        assert h.gap[-1] < 1e-2 * h.gap[0], h.method
    fa = run_baseline(fed, "fedavg", x0, 4, step=step, K=3, clients_per_round=2, seed=0)
    assert fa.local_evals.shape == (4, 2) and int(fa.oracle_max[-1]) == 12
    with pytest.raises(ValueError, match="baseline must be one of"):
        run_baseline(fed, "sgd", x0, 1, step=0.1)


# --------------------------------------------------------------------------------------------
# the drivers run fedtheory.methods: checked against the algorithms written out here
# --------------------------------------------------------------------------------------------


def _sdane_gd_loop(q, x0, rounds, lam, mu, lam_rule=None):
    """S-DANE (Algorithm 1) written out client by client on the uniform view: each client runs GD with step
    1/(L_i + λ) on F_i from v^r until ‖∇F_i‖² ≤ λ²/4‖x − v^r‖² (the stabilized test); ``lam_rule``: AdaptiveLambda."""
    n = q.n
    At = q.A * (n * np.asarray(q.p))[:, None, None]
    b = np.einsum("nij,nj->ni", At, q.c)
    L = np.linalg.eigvalsh(At)[:, -1]
    x, v, xs, evals = x0.copy(), x0.copy(), [x0.copy()], []
    G_prev = v_prev = None
    for _ in range(rounds):
        G = np.array([At[i] @ v - b[i] for i in range(n)])
        if lam_rule is not None and G_prev is not None:
            lam = lam_rule.next(G_prev, G, v_prev, v, lam)
        X, count = [], []
        for i in range(n):
            y, k = v.copy(), 0
            while True:
                gF = At[i] @ y - b[i] - (G[i] - G.mean(axis=0)) + lam * (y - v)
                if gF @ gF <= lam * lam / 4 * ((y - v) @ (y - v)):
                    break
                y, k = y - gF / (L[i] + lam), k + 1
            X.append(y)
            count.append(k + 1)
        X = np.array(X)
        g_new = np.mean([At[i] @ X[i] - b[i] for i in range(n)], axis=0)
        G_prev, v_prev = G, v
        x, v = X.mean(axis=0), (lam * v + mu * X.mean(axis=0) - g_new) / (lam + mu)
        xs.append(x.copy())
        evals.append(count)
    return np.array(xs), np.array(evals)


def test_sdane_driver_equals_the_written_out_algorithm(quad):
    x0 = np.ones(5) * 2
    h = run_sdane(quad, x0, 8, lam=3.0, mu=0.2, solver=GD())
    xs, evals = _sdane_gd_loop(quad, x0, 8, 3.0, 0.2)
    assert np.abs(h.x - xs).max() <= 1e-12 * np.abs(xs).max()
    assert np.array_equal(h.local_evals, evals)  # the same stopping step, client by client
    wrong, _ = _sdane_gd_loop(quad, x0, 8, 3.3, 0.2)  # control: another λ is another run
    assert np.abs(h.x - wrong).max() > 1e-6


def test_adaptive_lambda_equals_the_written_out_rule(quad):
    x0 = np.ones(5) * 2
    rule = AdaptiveLambda(1.0)
    h = run_sdane(quad, x0, 8, lam=rule, mu=0.0, solver=GD())
    xs, _ = _sdane_gd_loop(quad, x0, 8, 1.0, 0.0, lam_rule=rule)
    assert np.abs(h.x - xs).max() <= 1e-12 * np.abs(xs).max()
    assert len(set(h.lam.tolist())) > 2  # λ really moved
    fixed, _ = _sdane_gd_loop(quad, x0, 8, 1.0, 0.0)  # control: without the rule the run differs
    assert np.abs(h.x - fixed).max() > 1e-6


def test_drivers_are_methods_runs(quad):
    from fedtheory import methods

    m = methods.get("acc-sdane", lam=2.0, mu=0.1, solver=GD(), test=DaneTest())
    assert m.step_only and not m.pep_ready and m.round[5].solver.kind == "local"
    h = methods.run(m, quad, np.ones(5), 6)
    assert np.allclose(
        h.x, run_acc_sdane(quad, np.ones(5), 6, lam=2.0, mu=0.1, solver=GD(), test=DaneTest()).x, rtol=0, atol=1e-13
    )
    with pytest.raises(ValueError, match="step path only"):
        methods.run(m, quad, np.ones(5), 2, path="spectral")
