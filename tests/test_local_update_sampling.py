"""LocalUpdate beyond full-batch quadratics: mini-batches, client sampling, server Adam, finite sums."""

import importlib.util

import numpy as np
import pytest

from fedtheory.algorithms import LocalUpdate, ServerOpt, Theta, run_local_update
from fedtheory.algorithms.local_update import ClientSampler, client_pseudo_gradients
from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation, sample_batches
from fedtheory.problems.quadratic import make_quadratic

HAS_TORCH = importlib.util.find_spec("torch") is not None


def test_full_batch_least_squares_equals_its_quadratic():
    fed = LeastSquaresFederation.random(4, [12, 20, 9, 30], 3, seed=0)
    algo = LocalUpdate(
        Theta([1.0, 0.5, 2.0]), alpha=0.3, gamma=0.02, server=ServerOpt("heavy_ball", lr=0.2, momentum=0.5)
    )
    a = run_local_update(fed, algo, np.ones(3), 30).to_numpy()
    b = run_local_update(fed.to_quadratic(), algo, np.ones(3), 30, path="stepwise").to_numpy()
    assert np.allclose(a.x, b.x, rtol=0, atol=1e-12)
    assert np.allclose(a.dist_surrogate, b.dist_surrogate, rtol=0, atol=1e-12)
    assert np.allclose(a.x_star, b.x_star, atol=1e-12)


def test_batch_of_all_samples_is_the_full_batch():
    fed = LogisticFederation.random(3, 10, 4, seed=1)
    algo = LocalUpdate.fedprox(4, 0.1, alpha=0.5)
    a = run_local_update(fed, algo, np.zeros(4), 10, batch_size=10, seed=3).to_numpy()
    b = run_local_update(fed, algo, np.zeros(4), 10).to_numpy()
    assert np.allclose(a.x, b.x, rtol=0, atol=1e-13)


def test_mini_batches_are_seeded_and_change_the_path():
    fed = LogisticFederation.random(3, 10, 4, seed=1)
    algo = LocalUpdate.fedavg(4, 0.1)
    a = run_local_update(fed, algo, np.zeros(4), 10, batch_size=2, seed=3).to_numpy()
    b = run_local_update(fed, algo, np.zeros(4), 10, batch_size=2, seed=3).to_numpy()
    c = run_local_update(fed, algo, np.zeros(4), 10, batch_size=2, seed=4).to_numpy()
    assert np.array_equal(a.x, b.x) and not np.allclose(a.x, c.x)


def test_batches_are_uniform_subsets():
    rng = np.random.default_rng(0)
    counts = np.array([4, 7])
    hits = np.zeros((2, 7))
    for _ in range(4000):
        idx = sample_batches(rng, counts, 2)
        assert all(len(set(r)) == 2 for r in idx.tolist())
        assert idx[0].max() < 4
        np.add.at(hits, (np.array([[0, 0], [1, 1]]), idx), 1)
    freq = hits / 4000
    assert np.allclose(freq[0, :4], 2 / 4, atol=0.03) and np.all(freq[0, 4:] == 0)
    assert np.allclose(freq[1], 2 / 7, atol=0.03)


@pytest.mark.parametrize("scheme", ["with_replacement", "without_replacement"])
def test_client_sampling_is_unbiased(scheme):
    prob = make_quadratic(5, 3, mu=1.0, L=5.0, weights="random", seed=2)
    algo = LocalUpdate(Theta.uniform(3), 0.0, 0.05, ServerOpt("gd", lr=1.0))
    x = np.array([1.0, -2.0, 0.5])
    msgs = client_pseudo_gradients(prob, x, algo)
    exact = prob.p @ msgs
    sampler = ClientSampler(M=2, scheme=scheme)
    rng = np.random.default_rng(0)
    draws = []
    for _ in range(20000):
        idx, w = sampler.draw(rng, prob.p)
        draws.append(w @ msgs[idx])
    draws = np.array(draws)
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - exact) <= 5 * se)


def test_sampling_every_client_without_replacement_is_full_participation():
    prob = make_quadratic(4, 3, mu=1.0, L=5.0, weights="random", seed=2)
    algo = LocalUpdate(Theta.uniform(3), 0.0, 0.05, ServerOpt("gd", lr=0.1))
    a = run_local_update(prob, algo, np.ones(3), 20, clients_per_round=4, client_sampling="without_replacement", seed=0)
    b = run_local_update(prob, algo, np.ones(3), 20)
    assert np.allclose(a.x, b.x, rtol=0, atol=1e-13)


def test_adam_matches_the_textbook_update():
    prob = make_quadratic(2, 2, mu=1.0, L=3.0, seed=0)
    server = ServerOpt("adam", lr=0.1, momentum=0.8, beta2=0.9, eps=1e-6)
    algo = LocalUpdate(Theta.uniform(1), 0.0, 0.0, server)
    h = run_local_update(prob, algo, np.ones(2), 3).to_numpy()
    x, m, v = np.ones(2), np.zeros(2), np.zeros(2)
    for t in range(1, 4):
        g = prob.grad(x)
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        x = x - 0.1 * (m / (1 - 0.8**t)) / (np.sqrt(v / (1 - 0.9**t)) + 1e-6)
        assert np.allclose(h.x[t], x, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(batch_size=11), "1 <= B <= min_i m_i = 10"),
        (dict(clients_per_round=4, client_sampling="without_replacement"), "exceeds the n=3 clients"),
        (dict(client_sampling="sometimes"), "client_sampling must be one of"),
        (dict(clients_per_round=0), "positive integer"),
    ],
)
def test_bad_sampling_arguments(kwargs, needle):
    fed = LogisticFederation.random(3, 10, 2, seed=0)
    with pytest.raises(ValueError, match=needle):
        run_local_update(fed, LocalUpdate.fedavg(2, 0.1), np.zeros(2), 2, **kwargs)


def test_quadratic_has_no_mini_batches():
    with pytest.raises(ValueError, match="batch_size needs clients that hold samples"):
        run_local_update(
            make_quadratic(2, 2, mu=1.0, L=2.0, seed=0), LocalUpdate.fedavg(2, 0.1), np.zeros(2), 2, batch_size=1
        )


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_numpy_and_torch_agree_with_batches_and_sampling():
    fed = LogisticFederation.random(5, [8, 12, 9, 15, 10], 3, seed=5)
    algo = LocalUpdate(Theta.uniform(3), 0.1, 0.05, ServerOpt("adam", lr=0.05))
    kw = dict(batch_size=4, clients_per_round=3, seed=7)
    a = run_local_update(fed, algo, np.zeros(3), 15, **kw).to_numpy()
    b = run_local_update(fed, algo, np.zeros(3), 15, backend="torch", device="cpu", **kw)
    assert type(b.x).__module__.startswith("torch")
    b = b.to_numpy()
    assert np.allclose(a.x, b.x, rtol=1e-12, atol=1e-14)
    assert np.allclose(a.loss, b.loss, rtol=1e-12)


def test_a_generator_seed_is_not_advanced_by_validation():
    fed = LogisticFederation.random(3, 10, 4, seed=1)
    algo = LocalUpdate.fedavg(2, 0.1)
    a = run_local_update(fed, algo, np.zeros(4), 5, batch_size=3, seed=np.random.default_rng(9)).to_numpy()
    b = run_local_update(fed, algo, np.zeros(4), 5, batch_size=3, seed=9).to_numpy()
    assert np.array_equal(a.x, b.x)
