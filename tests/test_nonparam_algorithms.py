"""Function-space and parameter-space FedAvg/FedProx of Su, Xu & Yang, their operators, bounds and federation gains."""

import math

import numpy as np
import pytest
import sympy as sp

from fedtheory.algorithms.kernel_federated import (
    KernelAlgorithm,
    P_matrix,
    PredictionDynamics,
    definitional_operators,
    limit_coefficients,
    operator_in_orthonormal_basis,
    run_kernel_federated,
)
from fedtheory.algorithms.local_update import run_local_update
from fedtheory.algorithms.parameter_space import (
    ParameterDynamics,
    exact_prox_round,
    least_squares_quadratic,
    local_update_fedavg,
    local_update_fedprox,
    run_parameter_space,
)
from fedtheory.analysis import federation_gain as fg
from fedtheory.analysis import kernel_bounds as kb
from fedtheory.analysis.rate_fit import fit_exponential, fit_power_law
from fedtheory.problems.finite_sum import LeastSquaresFederation
from fedtheory.problems.kernels import (
    GaussianKernel,
    KernelFederation,
    LinearKernel,
    SobolevKernel,
    ZeroFunction,
    random_kernel_federation,
)


def _fed(seed=0, family="gaussian"):
    return random_kernel_federation(np.random.default_rng(seed), family=family, M=3, n_range=(2, 7))


@pytest.mark.parametrize("kind,s", [("fedavg", 1), ("fedavg", 4), ("fedprox", 1)])
@pytest.mark.parametrize("family", ["gaussian", "sobolev", "linear", "gram"])
def test_closed_form_equals_literal_steps(kind, s, family):
    fed = _fed(1, family)
    algo = KernelAlgorithm(kind, 0.7 / float(fed.client_norms().max()), s)
    a0 = np.random.default_rng(2).normal(size=fed.N)
    fast = run_kernel_federated(fed, algo, 15, f0=a0)
    slow = run_kernel_federated(fed, algo, 15, f0=a0, path="stepwise")
    assert np.allclose(fast.predictions, slow.predictions, atol=1e-10 * (1 + np.abs(slow.predictions).max()))


def test_spectral_P_matches_definition_and_lemma_1():
    fed = _fed(3)
    algo = KernelAlgorithm.fedavg(0.5 / float(fed.client_norms().max()), 3)
    ops = definitional_operators(fed.gram, fed.counts, "fedavg", algo.eta, 3)
    assert np.allclose(P_matrix(fed, algo), ops["P"], atol=1e-13)
    assert np.allclose(ops["Psi"], algo.eta / fed.N * ops["E_x"] @ ops["P"], atol=1e-13)
    dyn = PredictionDynamics(fed, algo)
    assert np.allclose(dyn.V @ np.diag(dyn.Lambda) @ dyn.V_inv, fed.K_x @ dyn.P, atol=1e-12)


def test_definitional_operators_are_exact_on_sympy():
    g, eta = sp.symbols("g eta", positive=True)
    ops = definitional_operators(sp.Matrix([[g]]), [1], "fedavg", eta, 2)
    assert sp.simplify(ops["P"][0, 0] - (2 - eta * g)) == 0
    assert sp.simplify(ops["L"][0, 0] - (1 - eta * g) ** 2) == 0


def test_kappa_and_gamma_hypotheses():
    assert KernelAlgorithm.fedavg(0.1, 1).kappa(0.3) == pytest.approx(1.0)
    assert KernelAlgorithm.fedprox(1.0).kappa(5.0) == 6.0
    with pytest.raises(ValueError, match="gamma < 1"):
        KernelAlgorithm.fedavg(0.1, 2).kappa(1.2)
    fed = KernelFederation(LinearKernel(), [[[1.0]]], [[0.0]])
    with pytest.raises(ValueError, match="gamma < 1"):
        PredictionDynamics(fed, KernelAlgorithm.fedavg(2.5, 2))
    PredictionDynamics(fed, KernelAlgorithm.fedprox(100.0))  # FedProx: any γ


def test_driver_input_errors():
    fed = _fed(4)
    algo = KernelAlgorithm.fedavg(0.1, 1)
    with pytest.raises(ValueError, match="batch size"):
        run_kernel_federated(fed, algo, 3, batch_size=100)
    with pytest.raises(ValueError, match="rounds"):
        run_kernel_federated(fed, algo, [3, 1])
    with pytest.raises(ValueError, match="f0"):
        run_kernel_federated(fed, algo, 3, f0=np.zeros(fed.N + 1))
    with pytest.raises(ValueError, match="kind"):
        KernelAlgorithm("sgd", 0.1)


def test_limit_interpolates_for_positive_definite_kernels():
    fed = KernelFederation(
        GaussianKernel(0.05), [np.linspace(0, 1, 4), np.linspace(0.1, 0.9, 3)], [np.arange(4.0), np.arange(3.0)]
    )
    a = limit_coefficients(fed, KernelAlgorithm.fedavg(0.5 / float(fed.client_norms().max()), 3))
    assert np.allclose(fed.gram @ a, fed.y, atol=1e-8)


def test_orthonormal_basis_removes_redundant_coefficients():
    G = np.ones((3, 3))
    assert operator_in_orthonormal_basis(np.eye(3) * 2, G).shape == (1, 1)


def _ls(seed=0, singular=False):
    rng = np.random.default_rng(seed)
    d = 4
    counts = [2, 9, 6] if singular else [5, 9, 6]
    feats = [rng.normal(size=(n, d)) for n in counts]
    return LeastSquaresFederation(feats, [X @ rng.normal(size=d) for X in feats])


@pytest.mark.parametrize("singular", [False, True])
def test_parameter_space_closed_form_equals_local_update(singular):
    fed = _ls(1, singular)
    dyn = ParameterDynamics.from_least_squares(fed, "fedavg", 0.1, 3)
    h = run_local_update(least_squares_quadratic(fed), local_update_fedavg(0.1, 3), np.zeros(4), 20).to_numpy()
    assert np.allclose(h.x, dyn.trajectory(np.zeros(4), np.arange(21)), atol=1e-12)


def test_fedprox_through_local_update_is_the_exact_prox():
    fed = _ls(2)
    h = run_parameter_space(fed, "fedprox", 0.2, 3)
    from fedtheory.algorithms.parameter_space import _moments

    A, b = _moments(fed)
    th = np.zeros(4)
    for t in range(1, 4):
        th = exact_prox_round(A, b, np.asarray(fed.p), th, 0.2)
        assert np.allclose(h.theta[t], th, atol=1e-13)
    assert local_update_fedprox(0.2, L=5.0).alpha == 5.0
    with pytest.raises(ValueError, match="gamma"):
        local_update_fedprox(0.2, L=5.0, gamma=1.0)


def test_partition_minibatches_with_whole_batches_equal_full_batch():
    rng = np.random.default_rng(3)
    feats = [rng.normal(size=(8, 3)) for _ in range(3)]
    fed = LeastSquaresFederation(feats, [X @ np.ones(3) + rng.normal(size=8) for X in feats])
    a = run_parameter_space(fed, "fedavg", 0.05, 5, s=2, batch_size=8, batch_scheme="partition", seed=0).theta
    b = run_parameter_space(fed, "fedavg", 0.05, 5, s=2).theta
    assert np.allclose(a, b, atol=1e-13)
    with pytest.raises(ValueError, match="divisible"):
        run_parameter_space(fed, "fedavg", 0.05, 2, batch_size=3, batch_scheme="partition")


def test_expected_error_matches_monte_carlo():
    fed = _ls(4)
    from fedtheory.algorithms.parameter_space import _moments

    A, _ = _moments(fed)
    theta = np.array([1.0, -1.0, 0.5, 0.0])
    dyn = ParameterDynamics(A, np.asarray(fed.p), fed.counts, "fedprox", 0.3)
    exact = dyn.expected_sq_error(np.zeros(4), theta, 0.25, [7], b_mean=np.einsum("mij,j->mi", A, theta))[0]
    rng = np.random.default_rng(0)
    draws = []
    for _ in range(3000):
        b = np.stack(
            [fed.a[i, :m].T @ (fed.a[i, :m] @ theta + 0.5 * rng.normal(size=m)) / m for i, m in enumerate(fed.counts)]
        )
        draws.append(np.sum((dyn.trajectory(np.zeros(4), [7], b=b)[0] - theta) ** 2))
    assert abs(np.mean(draws) - exact) <= 4 * np.std(draws) / math.sqrt(len(draws))


def test_bounds_and_hypotheses():
    lam = np.array([1.0, 0.1, 0.0])
    T = kb.early_stopping_time(lam, 0.5, 2, 0.5)
    assert T >= 1 and kb.early_stopping_time(lam, 0.5, 2, 0.0) == math.inf
    # u·ℛ(1/√u) is non-decreasing, so the admissible rounds are {1..T}
    u = 0.5 * 2 * np.arange(1, 200)
    g = u * kb.empirical_rademacher(lam, 1 / np.sqrt(u))
    assert np.all(np.diff(g) >= -1e-15)
    with pytest.raises(ValueError, match="t <= T"):
        kb.theorem_1_bound(1.0, 0.5, 2, T + 1, T, 1.0, 0.0, 3)
    with pytest.raises(ValueError, match="rho_N > 0"):
        kb.theorem_4_bound(1.0, 0.1, 1, 0.0, 2, 1, 1.0, 1.0, 10)
    assert kb.delta_1([0.2, 0.9], 1.0, 1, 5) <= kb.delta_1_bound(1.0, 1, 5)


def test_federation_gain_pieces():
    X = np.random.default_rng(0).normal(size=(30, 3))
    r0 = fg.ridge_worst_case_risk([X], 0.0, 2.0, 0.25)
    assert np.isclose(r0, 0.25 * np.trace(np.linalg.inv(X.T @ X)))  # unbiased: no bias, any B
    assert fg.ridge_worst_case_risk([X], float("inf"), 2.0, 0.25) == pytest.approx(4.0)
    assert fg.genie_lower_bound(2, 4, 2.0) == 2.0
    assert fg.heterogeneity_thresholds(50, 100, 0.5, 10.0) == pytest.approx(10 * math.sqrt(0.5))
    with pytest.raises(ValueError, match="risks"):
        fg.federation_gain(-1.0, 1.0)


def test_rate_fits():
    t = np.arange(1, 300)
    assert fit_power_law(t, 1 / t, t_min=5)["slope"] == pytest.approx(-1.0)
    assert fit_exponential(t, np.exp(-0.2 * t), floor=1e-300)["rate"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="at least 3 points"):
        fit_power_law([1, 2], [1.0, 0.5])


def test_sobolev_worst_case_bias_is_one_over_t():
    fed = KernelFederation.sample(SobolevKernel(), [30, 50], truths=ZeroFunction(SobolevKernel()), noise_sd=0.0, seed=1)
    algo = KernelAlgorithm.fedavg(0.9 / float(fed.client_norms().max()), 2)
    dyn = PredictionDynamics(fed, algo)
    ts = np.array([10, 30, 100, 300])
    sup = np.array([np.linalg.norm(dyn.L_power(int(t)) @ fed.K_x @ dyn.L_power(int(t)).T, 2) for t in ts])
    assert abs(fit_power_law(ts, sup)["slope"] + 1) < 0.1
    assert np.all(sup <= algo.kappa(dyn.gamma) * kb.delta_1_bound(algo.eta, 2, ts))


def test_early_stopping_driver():
    fed = KernelFederation.sample(SobolevKernel(), [15, 25], truths=ZeroFunction(SobolevKernel()), noise_sd=0.4, seed=3)
    algo = KernelAlgorithm.fedavg(0.5 / float(fed.client_norms().max()), 2)
    from fedtheory.algorithms.kernel_federated import early_stopping_rounds

    T = early_stopping_rounds(fed, algo)
    h = run_kernel_federated(fed, algo, "early-stopping")
    assert h.rounds[-1] == T
    with pytest.raises(ValueError, match="early-stopping"):
        run_kernel_federated(fed, algo, "forever")
