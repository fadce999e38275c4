"""Tests of the LocalUpdate driver (Algorithms 1–2 of Charles & Konečný, arXiv:2103.05032)."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.algorithms.local_update import (
    History,
    LocalUpdate,
    ServerOpt,
    client_pseudo_gradients,
    run_local_update,
)
from fedtheory.algorithms.surrogate import kappa, surrogate_grad, surrogate_minimizer
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.rates import tuned_server
from fedtheory.problems.quadratic import make_quadratic

EPS = np.finfo(np.float64).eps
SERVERS = ("gd", "heavy_ball", "nesterov")


def _loop_client_update(A, c, x, alpha, gamma, theta):
    """Algorithm 2 for one client, written out with plain numpy (no batching, no shared code)."""
    xk = x.copy()
    out = np.zeros_like(x)
    for t in theta.weights:
        g = A @ (xk - c) + alpha * (xk - x)
        out += t * g
        xk = xk - gamma * g
    return out


@pytest.fixture(scope="module")
def problem():
    return make_quadratic(4, 6, mu=1.0, L=25.0, C=2.0, weights="random", commuting=False, seed=11)


THETAS = [Theta.uniform(1), Theta.uniform(9), Theta.last(9), Theta([0.3, 0.0, 1.2, 0.0, 0.7])]


# --------------------------------------------------------------------------------------------
# data validation
# --------------------------------------------------------------------------------------------


def test_server_opt_and_local_update_validate():
    with pytest.raises(ValueError, match="kind must be one of"):
        ServerOpt("adagrad", lr=0.1)
    with pytest.raises(ValueError, match="lr must be > 0"):
        ServerOpt("gd", lr=0.0)
    with pytest.raises(ValueError, match=r"momentum must lie in \[0, 1\]"):
        ServerOpt("heavy_ball", lr=0.1, momentum=1.5)
    with pytest.raises(ValueError, match="'gd' has no momentum"):
        ServerOpt("gd", lr=0.1, momentum=0.5)
    with pytest.raises(ValueError, match="gamma must be >= 0"):
        LocalUpdate(Theta.uniform(2), 0.0, -0.1, ServerOpt("gd", 1.0))
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        LocalUpdate(Theta.uniform(2), -1.0, 0.1, ServerOpt("gd", 1.0))
    with pytest.raises(ValueError, match="ServerOpt"):
        LocalUpdate(Theta.uniform(2), 0.0, 0.1, "gd")
    algo = LocalUpdate([1.0, 2.0], 0, 0.1, ServerOpt("gd", 1))  # sequences become Θ, ints become floats
    assert algo.theta == Theta([1.0, 2.0]) and isinstance(algo.alpha, float) and algo.K == 2
    assert hash(algo) == hash(LocalUpdate(Theta([1.0, 2.0]), 0.0, 0.1, ServerOpt("gd", 1.0)))
    with pytest.raises(Exception):
        algo.gamma = 0.2  # frozen: the algorithm is data


def test_presets_follow_table_1_and_appendix_a():
    fedavg = LocalUpdate.fedavg(5, 0.01)
    assert fedavg.theta == Theta.uniform(5) and fedavg.alpha == 0 and fedavg.server == ServerOpt("gd", lr=0.01)
    assert LocalUpdate.fedprox(5, 0.01, 0.3).alpha == 0.3
    assert LocalUpdate.fomaml(5, 0.01, server=ServerOpt("gd", 1.0)).theta == Theta.last(5)


# --------------------------------------------------------------------------------------------
# messages: stepwise, spectral, Theorem 1
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta", THETAS, ids=repr)
@pytest.mark.parametrize("alpha", [0.0, 0.8])
def test_messages_stepwise_equals_loop_and_spectral(problem, theta, alpha):
    gamma = 0.9 / (problem.L + alpha)
    algo = LocalUpdate(theta, alpha, gamma, ServerOpt("gd", 1.0))
    x = np.linspace(-2, 3, problem.d)
    step = client_pseudo_gradients(problem, x, algo, path="stepwise")
    spec = client_pseudo_gradients(problem, x, algo, path="spectral")
    loop = np.stack([_loop_client_update(problem.A[i], problem.c[i], x, alpha, gamma, theta) for i in range(problem.n)])
    scale = theta.K * problem.d * EPS * theta.w * problem.L * np.linalg.norm(x - problem.c, axis=1)[:, None]
    assert np.all(np.abs(step - loop) <= scale)
    assert np.all(np.abs(spec - step) <= scale)


@pytest.mark.parametrize("theta", THETAS, ids=repr)
def test_theorem_1_message_is_distorted_gradient(problem, theta):
    """ClientUpdate(i, x) = Q_iA_i(x − c_i) with Q_i by explicit matrix powers; the average is ∇f̃(x)."""
    alpha, gamma = 0.4, 0.7 / (problem.L + 0.4)
    x = np.full(problem.d, 1.5)
    msg = client_pseudo_gradients(problem, x, LocalUpdate(theta, alpha, gamma, ServerOpt("gd", 1.0)), path="stepwise")
    for i in range(problem.n):
        M = np.eye(problem.d) - gamma * (problem.A[i] + alpha * np.eye(problem.d))
        Q = sum(t * np.linalg.matrix_power(M, k) for k, t in enumerate(theta.weights))
        np.testing.assert_allclose(msg[i], Q @ problem.A[i] @ (x - problem.c[i]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(problem.p @ msg, surrogate_grad(problem, x, alpha, gamma, theta), atol=1e-12)


def test_huge_K_is_exact_and_equals_the_limit(problem):
    """Θ_{1:K}, K = 10⁶: (1 − γ(λ+α))^K underflows, so Q_iA_i = (A_i + αI)^{-1}A_i/γ exactly (K → ∞)."""
    alpha, gamma = 0.5, 0.5 / (problem.L + 0.5)
    x = np.ones(problem.d)
    for backend in ("numpy",):
        msg = client_pseudo_gradients(
            problem,
            x,
            LocalUpdate(Theta.uniform(10**6), alpha, gamma, ServerOpt("gd", 1.0)),
            path="spectral",
            backend=backend,
        )
        assert np.all(np.isfinite(msg))
        for i in range(problem.n):
            limit = np.linalg.solve(problem.A[i] + alpha * np.eye(problem.d), problem.A[i] @ (x - problem.c[i])) / gamma
            np.testing.assert_allclose(msg[i], limit, rtol=1e-12, atol=1e-12 * np.abs(limit).max())
    # Θ_K, K = 10⁶: m^{K−1} underflows to 0 for every eigenvalue: the message is exactly zero
    last = client_pseudo_gradients(problem, x, LocalUpdate(Theta.last(10**6), alpha, gamma, ServerOpt("gd", 1.0)))
    assert np.all(last == 0)
    # tiny γ: (1 − γλ)^{K−1} is O(1) and must be the log-space value, not 0 or 1
    g = 1e-8
    msg = client_pseudo_gradients(problem, x, LocalUpdate(Theta.last(10**6), 0.0, g, ServerOpt("gd", 1.0)))
    lam, V = problem.eigvals[0], problem.eigvecs[0]
    want = V @ (np.exp((10**6 - 1) * np.log1p(-g * lam)) * lam * (V.T @ (x - problem.c[0])))
    np.testing.assert_allclose(msg[0], want, rtol=1e-10)


def test_unknown_path_and_sampling_are_rejected(problem):
    algo = LocalUpdate.fedavg(2, 0.01)
    with pytest.raises(ValueError, match="path must be one of"):
        client_pseudo_gradients(problem, np.zeros(problem.d), algo, path="fast")
    with pytest.raises(ValueError, match="client_sampling must be one of"):
        run_local_update(problem, algo, np.zeros(problem.d), 3, clients_per_round=2, client_sampling="round-robin")
    with pytest.raises(ValueError, match="x0 must have shape"):
        run_local_update(problem, algo, np.zeros(problem.d + 1), 3)


# --------------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SERVERS)
@pytest.mark.parametrize("theta", THETAS[1:], ids=repr)
def test_run_spectral_equals_stepwise(problem, kind, theta):
    alpha = 0.3
    gamma = 0.8 / (problem.L + alpha)
    _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    algo = LocalUpdate(theta, alpha, gamma, tuned_server(kind, mu_t, L_t))
    x0 = np.arange(problem.d, dtype=float) - 2
    T = 30
    a = run_local_update(problem, algo, x0, T, path="spectral").to_numpy()
    b = run_local_update(problem, algo, x0, T, path="stepwise").to_numpy()
    S = np.max(np.linalg.norm(b.x, axis=1)) + np.max(np.linalg.norm(problem.c, axis=1))
    allowed = T * theta.K * problem.d * EPS * (1 + algo.server.lr * theta.w * problem.L) * S
    assert np.max(np.linalg.norm(a.x - b.x, axis=1)) <= allowed
    assert a.path == "spectral" and b.path == "stepwise" and a.algo is algo


def test_history_contents(problem):
    theta, alpha, gamma = Theta.uniform(4), 0.2, 0.02
    _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    algo = LocalUpdate(theta, alpha, gamma, tuned_server("heavy_ball", mu_t, L_t))
    x0 = np.zeros(problem.d)
    h = run_local_update(problem, algo, x0, 300)
    assert isinstance(h, History) and h.rounds == 300
    for f in ("x", "dist_surrogate", "dist_empirical", "loss", "grad_norm", "comm_rounds", "oracle_calls"):
        assert getattr(h, f).shape[0] == 301
    np.testing.assert_array_equal(h.x[0], x0)
    np.testing.assert_array_equal(h.comm_rounds, np.arange(301))
    np.testing.assert_array_equal(h.oracle_calls, np.arange(301) * problem.n * 4)
    x_t = surrogate_minimizer(problem, alpha, gamma, theta)
    np.testing.assert_allclose(h.x_surrogate_star, x_t, rtol=1e-12)
    np.testing.assert_allclose(h.x_star, problem.x_star(), rtol=1e-12)
    np.testing.assert_allclose(h.dist_surrogate, np.linalg.norm(h.x - x_t, axis=1), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(h.dist_empirical, np.linalg.norm(h.x - problem.x_star(), axis=1), rtol=1e-10)
    np.testing.assert_allclose(h.loss, [problem.loss(x) for x in h.x], rtol=1e-12)
    np.testing.assert_allclose(h.grad_norm, [np.linalg.norm(problem.grad(x)) for x in h.x], rtol=1e-9, atol=1e-13)
    # it converges to x*(α,γ,Θ), which is not x* (γ > 0, K > 1): the accuracy price of Section 4.3
    assert h.dist_surrogate[-1] < 1e-12 * h.dist_surrogate[0]
    assert h.dist_empirical[-1] > 1e-6


def test_momentum_first_round_is_a_gradient_step(problem):
    """x_{−1} = x_0: heavy-ball and Nesterov start with x_1 = x_0 − η q(x_0)."""
    theta, alpha, gamma = Theta.uniform(3), 0.0, 0.01
    x0 = np.ones(problem.d)
    firsts = [
        run_local_update(problem, LocalUpdate(theta, alpha, gamma, ServerOpt(k, 0.05, m)), x0, 1).x[1]
        for k, m in (("gd", 0.0), ("heavy_ball", 0.9), ("nesterov", 0.9))
    ]
    np.testing.assert_allclose(firsts[1], firsts[0], rtol=1e-15)
    np.testing.assert_allclose(firsts[2], firsts[0], rtol=1e-15)


def test_nesterov_queries_the_lookahead_point(problem):
    theta, alpha, gamma = Theta([1.0, 0.5]), 0.1, 0.02
    server = ServerOpt("nesterov", lr=0.03, momentum=0.7)
    algo = LocalUpdate(theta, alpha, gamma, server)
    x0 = np.linspace(0, 1, problem.d)
    h = run_local_update(problem, algo, x0, 3)
    q = lambda y: problem.p @ client_pseudo_gradients(problem, y, algo)  # noqa: E731
    x_prev, x = x0, x0
    for t in range(3):
        y = x + 0.7 * (x - x_prev)
        x_prev, x = x, y - 0.03 * q(y)
        np.testing.assert_allclose(h.x[t + 1], x, rtol=1e-13)


def test_huge_K_run_is_fast_and_finite(problem):
    import time

    alpha, gamma = 0.0, 0.5 / problem.L
    theta = Theta.uniform(10**6)
    _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    start = time.perf_counter()
    h = run_local_update(
        problem, LocalUpdate(theta, alpha, gamma, tuned_server("gd", mu_t, L_t)), np.zeros(problem.d), 50
    )
    assert time.perf_counter() - start < 2.0
    assert np.all(np.isfinite(h.x)) and int(h.oracle_calls[-1]) == 50 * problem.n * 10**6
    assert h.dist_surrogate[-1] < 1e-10 * max(1.0, h.dist_surrogate[0])


def test_torch_backend_keeps_tensors_and_matches_numpy(problem):
    torch = pytest.importorskip("torch")
    theta, alpha, gamma = Theta([0.5, 1.0, 0.25]), 0.4, 0.02
    algo = LocalUpdate(theta, alpha, gamma, ServerOpt("heavy_ball", 0.05, 0.5))
    x0 = np.linspace(-1, 1, problem.d)
    for path in ("spectral", "stepwise"):
        h = run_local_update(problem, algo, x0, 20, path=path, backend="torch", device="cpu")
        for f in ("x", "dist_surrogate", "dist_empirical", "loss", "grad_norm", "comm_rounds", "oracle_calls"):
            assert isinstance(getattr(h, f), torch.Tensor) and getattr(h, f).device.type == "cpu"
        assert h.backend == "torch" and h.device == "cpu"
        ref = run_local_update(problem, algo, x0, 20, path=path).x
        np.testing.assert_allclose(h.to_numpy().x, ref, rtol=1e-12, atol=1e-14)


def test_torch_autograd_through_a_run(problem):
    """Tensors end to end: the final loss differentiates with respect to x_0."""
    torch = pytest.importorskip("torch")
    algo = LocalUpdate(Theta.uniform(5), 0.0, 0.01, ServerOpt("gd", 0.05))
    x0 = torch.zeros(problem.d, dtype=torch.float64, requires_grad=True)
    h = run_local_update(problem, algo, x0, 10, backend="torch", device="cpu")
    h.loss[-1].backward()
    assert x0.grad is not None and torch.isfinite(x0.grad).all() and float(x0.grad.abs().sum()) > 0


def test_geometric_sum_on_arrays_is_the_masked_form_entry_by_entry():
    """geometric_sum on a numpy array evaluates each regime's formula only where it applies (the tuner's grids):
    every entry has the bits the masked form gives that entry alone (a 0-d array takes the masked form), at s = 0,
    in (0, 1), at and beyond 1, NaN and inf, for scalar, array and broadcast K."""
    from fedtheory.algorithms.theta import geometric_sum

    rng = np.random.default_rng(0)
    edges = np.array([0.0, -0.0, 1e-300, 1e-17, 0.3, 0.999999, 1.0, 1.5, 2.0, 3.7, np.inf, np.nan, -0.25])
    s = np.concatenate([edges, rng.random(40), 1 + 3 * rng.random(5)])
    for K in (1, 2, 7.0, 10**6, rng.integers(0, 40, s.size).astype(float), rng.integers(1, 9, (3, 1)).astype(float)):
        out = geometric_sum(s, K)
        s_b, K_b = np.broadcast_arrays(s, K)
        one_by_one = np.array([geometric_sum(np.asarray(v), k) for v, k in zip(s_b.ravel(), K_b.ravel())])
        assert out.shape == s_b.shape and out.dtype == np.float64
        assert out.ravel().tobytes() == one_by_one.astype(np.float64).tobytes()
