"""The literal step path's fast kernels: least squares' local steps in the sample space, and the cost model."""

import numpy as np
import pytest

from fedtheory import methods
from fedtheory.methods import choose_path, get
from fedtheory.problems.finite_sum import LeastSquaresFederation


def _literal(fed, arr, x, K, gamma, theta, scale):
    """K steps written out with batched_grads: the reference the sample-space kernel must reproduce."""
    Y, msg = np.tile(x, (fed.n, 1)), 0.0
    for k in range(K):
        g = scale * fed.batched_grads(arr, Y)
        msg = msg + theta[k] * g
        Y = Y - gamma * g
    return Y, msg


@pytest.mark.parametrize("theta", [(1.0, 1.0, 1.0, 1.0), (0.5, 0.0, 2.0, 0.25), (0.0, 0.0, 0.0, 0.0)])
def test_sample_space_steps_equal_the_literal_steps(theta):
    # ragged clients (padding and its mask), fewer samples than dimensions, a per-client scale (uniform view)
    fed = LeastSquaresFederation.random(4, m=[3, 6, 5, 2], d=8, seed=3)
    arr, x = fed.on("numpy"), np.linspace(-1.0, 1.0, 8)
    scale = np.array([[0.5], [1.5], [1.0], [1.0]])
    Y, msg = fed.sample_space_steps(arr, x, 4, 0.07, theta, True, fed.residual_weights(arr, scale), fed.gram(arr))
    Y_ref, msg_ref = _literal(fed, arr, x, 4, 0.07, theta, scale)
    assert np.max(np.abs(Y - Y_ref)) <= 1e-13 * np.max(np.abs(Y_ref))
    assert np.max(np.abs(msg - msg_ref)) <= 1e-13 * max(1.0, np.max(np.abs(msg_ref)))
    assert Y.shape == msg.shape == (4, 8)


def test_sample_space_refuses_a_ridge_term():
    fed = LeastSquaresFederation.random(2, m=3, d=5, seed=0, l2=0.1)
    with pytest.raises(ValueError, match="l2 = 0"):
        fed.sample_space_steps(fed.on("numpy"), np.zeros(5), 2, 0.1, (1.0, 1.0), False)


def _hand_fedavg(fed, K, T, gamma):
    """FedAvg written out (all clients batched with einsum): the iterate the simulator must reproduce."""
    x = np.zeros(fed.d)
    for _ in range(T):
        X = np.tile(x, (fed.n, 1))
        for _ in range(K):
            X = (
                X
                - gamma
                * np.einsum("nmd,nm->nd", fed.a, np.einsum("nmd,nd->nm", fed.a, X) - fed.y)
                / fed.counts[:, None]
            )
        x = fed.p @ X
    return x


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_step_path_on_wide_least_squares_matches_a_hand_loop(backend):
    if backend == "torch":
        pytest.importorskip("torch")
    # m < d and enough rounds that the simulator builds the Gram matrices and runs in the sample space
    fed = LeastSquaresFederation.random(5, m=6, d=15, seed=1)
    fed.p = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    K, T, gamma = 6, 40, 0.5 / fed.smoothness()
    h = methods.run("fedavg", fed, np.zeros(15), T, K=K, gamma=gamma, path="step", backend=backend).to_numpy()
    x = _hand_fedavg(fed, K, T, gamma)
    assert np.max(np.abs(h.x[-1] - x)) <= 1e-12 * np.max(np.abs(x))


def test_cost_model_prices_sample_space_steps():
    fed = LeastSquaresFederation.random(10, m=50, d=200, seed=0)
    gamma = 0.5 / fed.smoothness()
    # K = 100: 99 steps of 2m² flops beat the eigendecomposition's set-up; FedAvg's K = 1000 too, as one product
    # with the steps' summed operator a round; SCAFFOLD's shifted steps cannot be summed: spectral
    assert choose_path(get("fedavg", K=100, gamma=gamma), fed, 50) == "step"
    assert choose_path(get("fedavg", K=1000, gamma=gamma), fed, 50) == "step"
    assert choose_path(get("scaffold", K=1000, gamma=gamma), fed, 50) == "spectral"
    # with a ridge term the steps run literally (4md each), and K = 100 goes spectral
    ridge = LeastSquaresFederation.random(10, m=50, d=200, seed=0, l2=0.1)
    assert choose_path(get("fedavg", K=100, gamma=gamma), ridge, 50) == "spectral"


def test_torch_sample_space_kernel_on_host_views_and_under_autograd():
    """torch on the CPU without autograd runs the sample-space loop on numpy views (the numpy backend's bits); with
    a point that requires grad the loop runs in torch, agrees to rounding and differentiates."""
    torch = pytest.importorskip("torch")
    fed = LeastSquaresFederation.random(4, m=[3, 6, 5, 2], d=8, seed=3)
    arr_np, arr_t = fed.on("numpy"), fed.on("torch", device="cpu")
    x = np.linspace(-1.0, 1.0, 8)
    theta = (0.5, 0.0, 2.0, 0.25)
    Y_np, msg_np = fed.sample_space_steps(arr_np, x, 4, 0.07, theta, True, gram=fed.gram(arr_np))
    Y_t, msg_t = fed.sample_space_steps(arr_t, torch.tensor(x), 4, 0.07, theta, True, gram=fed.gram(arr_t))
    assert isinstance(Y_t, torch.Tensor) and isinstance(msg_t, torch.Tensor)
    assert np.array_equal(Y_t.numpy(), Y_np) and np.array_equal(msg_t.numpy(), msg_np)
    xg = torch.tensor(x, requires_grad=True)
    Y_g, msg_g = fed.sample_space_steps(arr_t, xg, 4, 0.07, theta, True, gram=fed.gram(arr_t))
    assert Y_g.grad_fn is not None
    np.testing.assert_allclose(Y_g.detach().numpy(), Y_np, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(msg_g.detach().numpy(), msg_np, rtol=1e-13, atol=1e-15)
    Y_g.sum().backward()
    assert xg.grad is not None and bool(torch.isfinite(xg.grad).all()) and float(xg.grad.abs().sum()) > 0


@pytest.mark.parametrize("theta", [(1.0, 1.0, 1.0, 1.0), (0.5, 0.0, 2.0, 0.25)])
def test_sample_space_message_mean_is_the_weighted_sum_of_the_messages(theta):
    fed = LeastSquaresFederation.random(4, m=[3, 6, 5, 2], d=8, seed=3)
    arr, x = fed.on("numpy"), np.linspace(-1.0, 1.0, 8)
    w = np.array([0.1, 0.4, 0.3, 0.2])
    _, msg = fed.sample_space_steps(arr, x, 4, 0.07, theta, False, gram=fed.gram(arr))
    _, mean = fed.sample_space_steps(arr, x, 4, 0.07, theta, False, gram=fed.gram(arr), reduce=w)
    assert mean.shape == (8,)
    assert np.max(np.abs(mean - w @ msg)) <= 1e-13 * max(1.0, np.max(np.abs(w @ msg)))
    with pytest.raises(ValueError, match="want_point=False"):
        fed.sample_space_steps(arr, x, 4, 0.07, theta, True, gram=fed.gram(arr), reduce=w)


@pytest.mark.parametrize("K", [1, 3])
def test_fedavg_round_fuses_message_and_mean_and_keeps_the_iterates(K):
    """FedAvg's local steps and the mean of their messages run as one flat pass (K = 1: gradient descent on the
    average); the iterates are the hand loop's. Under client sampling the round is not fused."""
    from fedtheory.backends import get_backend
    from fedtheory.methods.simulate import _compile_message_mean, _StepSpace

    fed = LeastSquaresFederation.random(5, m=6, d=15, seed=1)
    fed.p = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    T, gamma = 30, 0.5 / fed.smoothness()
    method = get("fedavg", K=K, gamma=gamma)
    space = _StepSpace(fed, method, get_backend("numpy"))
    ops = list(method.round)
    assert _compile_message_mean(ops, 0, method, space, sampled=False) is not None
    assert _compile_message_mean(ops, 0, method, space, sampled=True) is None
    h = methods.run(method, fed, np.zeros(15), T, path="step")
    x = _hand_fedavg(fed, K, T, gamma)
    assert np.max(np.abs(h.x[-1] - x)) <= 1e-12 * np.max(np.abs(x))


@pytest.mark.parametrize(
    "K, theta, rounds", [(1, 1.0, None), (1, 0.5, None), (4, 1.0, None), (4, 0.25, None), (37, 0.25, 500)]
)
@pytest.mark.parametrize("blocked", [False, True])
def test_message_mean_kernel_is_the_weighted_sum_of_literal_messages(K, theta, rounds, blocked, monkeypatch):
    """The run's kernel for FedAvg's fused round (in one piece, and in blocks of clients as for data beyond the
    caches; K = 37 over 500 rounds: the steps' summed operator built by doubling) against the literal steps'
    messages weighted by hand: ragged clients (padding), m < d, a per-client scale, θ ≠ 1."""
    from fedtheory.problems import finite_sum

    assert rounds is None or finite_sum.summed_steps_pay(K, rounds, 6)  # K = 37: the summed operator

    if blocked:  # K = 1: blocks of 3 and 2 clients; K = 4 (the Gram rows count too): one client a block
        monkeypatch.setattr(finite_sum, "MEAN_KERNEL_SINGLE_BYTES", 0)
        monkeypatch.setattr(finite_sum, "MEAN_KERNEL_BLOCK_BYTES", 2 * 8 * 6 * (8 + 6) - 1)
    fed = LeastSquaresFederation.random(5, m=[3, 6, 5, 2, 6], d=8, seed=4)
    arr, x = fed.on("numpy"), np.linspace(-1.0, 1.0, 8)
    scale = np.array([[0.5], [1.5], [1.0], [1.0], [2.0]])
    w = np.array([0.1, 0.4, 0.2, 0.2, 0.1])
    _, msg = _literal(fed, arr, x, K, 0.07, (theta,) * K, scale)
    gram = fed.gram(arr) if K > 1 else None
    kernel = fed.message_mean_kernel(arr, K, theta, w, fed.residual_weights(arr, scale), gram, rounds=rounds)
    ref = w @ msg
    for _ in range(2):  # a second call reuses the scaled Gram matrices
        mean = kernel(x, 0.07)
        assert mean.shape == (8,)
        assert np.max(np.abs(mean - ref)) <= 1e-13 * np.max(np.abs(ref))
    assert np.max(np.abs(kernel(x, 0.0) - w @ _literal(fed, arr, x, K, 0.0, (theta,) * K, scale)[1])) <= 1e-13 * np.max(
        np.abs(ref)
    )
    with pytest.raises(ValueError, match="need the Gram matrices"):
        fed.message_mean_kernel(arr, 2, 1.0, w)
    with pytest.raises(ValueError, match="l2 = 0"):
        LeastSquaresFederation.random(2, m=3, d=5, seed=0, l2=0.1).message_mean_kernel(arr, 1, 1.0, w[:2])


@pytest.mark.parametrize("n, K", [(6, 1), (6, 3)])
def test_fedavg_blocked_kernel_matches_the_hand_loop(n, K, monkeypatch):
    """The whole run with the data in blocks (as at n = 1000, m = 50, d = 200): the hand loop's iterates."""
    from fedtheory.problems import finite_sum

    monkeypatch.setattr(finite_sum, "MEAN_KERNEL_SINGLE_BYTES", 0)
    monkeypatch.setattr(finite_sum, "MEAN_KERNEL_BLOCK_BYTES", 3000)
    fed = LeastSquaresFederation.random(n, m=7, d=12, seed=2)
    T, gamma = 25, 0.5 / fed.smoothness()
    h = methods.run("fedavg", fed, np.zeros(12), T, K=K, gamma=gamma, path="step")
    x = _hand_fedavg(fed, K, T, gamma)
    assert np.max(np.abs(h.x[-1] - x)) <= 1e-12 * np.max(np.abs(x))
    assert h.oracle_calls.tolist() == [t * K * n for t in range(T + 1)]


@pytest.mark.parametrize("blocked", [False, True])
def test_fedavg_at_one_step_runs_on_the_weighted_moments_when_the_rounds_pay(blocked, monkeypatch):
    """K = 1 is gradient descent on the clients' weighted average: when the rounds pay for G = Σ w_j a_ja_jᵀ
    (moments_pay), a round is one d × d mat-vec — the hand loop's and the sample-space kernel's iterates to 1e-14,
    on ragged clients (padding), in one piece and in blocks; over few rounds the samples' kernel runs instead."""
    from fedtheory.problems import finite_sum

    if blocked:
        monkeypatch.setattr(finite_sum, "MEAN_KERNEL_SINGLE_BYTES", 0)
        monkeypatch.setattr(finite_sum, "MEAN_KERNEL_BLOCK_BYTES", 3000)
    built = []
    kernel = finite_sum._moments_kernel
    monkeypatch.setattr(finite_sum, "_moments_kernel", lambda *a, **k: built.append(k) or kernel(*a, **k))
    fed = LeastSquaresFederation.random(6, m=[7, 3, 7, 5, 7, 6], d=12, seed=2)
    T, gamma = 40, 0.5 / fed.smoothness()
    assert finite_sum.moments_pay(6 * 7, 12, T) and not finite_sum.moments_pay(6 * 7, 12, 1)
    h = methods.run("fedavg", fed, np.zeros(12), T, K=1, gamma=gamma, path="step")
    assert len(built) == 1 and (built[0]["block_rows"] < 42) == blocked
    x = _hand_fedavg(fed, 1, T, gamma)
    assert np.max(np.abs(h.x[-1] - x)) <= 1e-14 * np.max(np.abs(x))
    monkeypatch.setattr(finite_sum, "moments_pay", lambda *a: False)  # the samples' kernel, for comparison
    samples = methods.run("fedavg", fed, np.zeros(12), T, K=1, gamma=gamma, path="step")
    assert len(built) == 1 and not np.array_equal(samples.x, h.x)  # another path: the bits differ
    assert np.max(np.abs(samples.x - h.x)) <= 1e-14 * np.max(np.abs(h.x))
    monkeypatch.undo()
    built.clear()
    monkeypatch.setattr(finite_sum, "_moments_kernel", lambda *a, **k: built.append(k) or kernel(*a, **k))
    methods.run("fedavg", fed, np.zeros(12), 1, K=1, gamma=gamma, path="step")
    assert built == []  # one round does not pay for G


def test_moments_kernel_with_signed_weights_and_the_cost_model():
    """Weights of either sign (no square root: the general product), and equal weights (G = w·AᵀA), give the same
    gradient of the average; G is never built larger than the data."""
    from fedtheory.problems.finite_sum import _moments_kernel, moments_pay

    rng = np.random.default_rng(1)
    A, y, x = rng.normal(size=(9, 4)), rng.normal(size=9), rng.normal(size=4)
    for w in (rng.random(9), rng.normal(size=9), np.full(9, 0.3)):
        ref = 0.5 * (A.T @ (w * (A @ x - y)))
        for rows in (None, 2):
            g = _moments_kernel(A, y, w, 0.5, block_rows=rows)(x, 0.3)
            assert np.max(np.abs(g - ref)) <= 1e-14 * np.max(np.abs(ref))
    assert not moments_pay(10, 11, 10**9) and moments_pay(500, 200, 50) and not moments_pay(500, 200, 20)
    # beyond the caches a round's passes run at the memory's pace: G pays sooner (n = 100, m = 50, d = 400: 16 MB)
    assert moments_pay(5000, 400, 25) and not moments_pay(5000, 800, 25) and moments_pay(5000, 800, 50)


def test_a_run_that_draws_nothing_creates_no_generator_and_sampled_runs_still_reproduce(monkeypatch):
    """No generator is seeded for a run without draws (its cost is a small run's round); runs that draw (sampled
    clients, mini-batches) reproduce from their seed and count the sampled clients' oracle calls."""
    fed = LeastSquaresFederation.random(6, m=8, d=5, seed=0)
    with monkeypatch.context() as patch:

        def refuse(seed=None):
            raise AssertionError("a run without draws seeded a generator")

        patch.setattr(np.random, "default_rng", refuse)
        h = methods.run("fedavg", fed, np.zeros(5), 4, K=2, gamma=0.05, seed=3)
        assert h.oracle_calls.tolist() == [0, 12, 24, 36, 48]
        with pytest.raises(AssertionError, match="seeded a generator"):
            methods.run("fedavg", fed, np.zeros(5), 4, K=2, gamma=0.05, clients_per_round=2, seed=3)
    a = methods.run("fedavg", fed, np.zeros(5), 6, K=2, gamma=0.05, clients_per_round=3, batch_size=4, seed=7)
    b = methods.run("fedavg", fed, np.zeros(5), 6, K=2, gamma=0.05, clients_per_round=3, batch_size=4, seed=7)
    assert np.array_equal(a.x, b.x) and a.oracle_calls.tolist() == [t * 2 * 3 for t in range(7)]
    c = methods.run("fedavg", fed, np.zeros(5), 6, K=2, gamma=0.05, clients_per_round=3, batch_size=4, seed=8)
    assert not np.array_equal(a.x, c.x)


@pytest.mark.parametrize("seed", [-1, "abc", 1.5])
def test_a_bad_seed_is_rejected_even_when_the_run_draws_nothing(seed):
    fed = LeastSquaresFederation.random(3, m=4, d=2, seed=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        methods.run("fedavg", fed, np.zeros(2), 2, K=2, gamma=0.05, seed=seed)


@pytest.mark.parametrize(
    "seed", [None, 3, [1, 2], np.random.SeedSequence(3), np.random.PCG64(3), np.random.default_rng(3)]
)
def test_every_seed_numpy_accepts_runs_also_when_the_run_draws_nothing(seed):
    fed = LeastSquaresFederation.random(3, m=4, d=2, seed=0)
    a = methods.run("fedavg", fed, np.zeros(2), 2, K=2, gamma=0.05, seed=seed)
    b = methods.run("fedavg", fed, np.zeros(2), 2, K=2, gamma=0.05)
    assert np.array_equal(a.x, b.x)  # nothing is drawn: the seed does not change the run
