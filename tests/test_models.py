"""Torch networks as federations: gradients, the LocalUpdate driver on them, backends agree."""

import importlib.util

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def _federation(loss="cross_entropy"):
    from fedtheory.models.federation import TorchModelFederation
    from fedtheory.models.networks import mlp
    from fedtheory.problems.datasets import load_dataset, partition_dirichlet

    X, y = load_dataset("wine")
    parts = partition_dirichlet(y, 4, 0.5, seed=0, min_size=5)
    targets = [y[p] for p in parts] if loss == "cross_entropy" else [np.eye(3)[y[p]] for p in parts]
    return TorchModelFederation(mlp(13, [6], 3, seed=1), [X[p] for p in parts], targets, loss=loss, l2=1e-3)


@pytest.mark.parametrize("loss", ["cross_entropy", "mse"])
def test_batched_gradients_match_per_client_autograd(loss):
    import torch

    fed = _federation(loss)
    arrays = fed.on("torch", device="cpu")
    rng = np.random.default_rng(0)
    X = fed.initial_point() + 0.1 * rng.normal(size=(fed.n, fed.d))
    G = fed.batched_grads(arrays, torch.as_tensor(X)).numpy()
    for i in range(fed.n):
        x = torch.as_tensor(X[i]).requires_grad_(True)
        m = int(fed.counts[i])
        w = torch.full((m,), 1.0 / m, dtype=torch.float64)
        value = fed._client_loss(x, arrays["a"][i, :m], arrays["y"][i, :m], w)
        (g,) = torch.autograd.grad(value, x)
        assert np.allclose(G[i], g.numpy(), rtol=1e-12, atol=1e-14)


def test_fedavg_on_a_network_numpy_and_torch_agree():
    from fedtheory.algorithms.local_update import LocalUpdate, run_local_update

    fed = _federation()
    kw = dict(batch_size=4, clients_per_round=3, client_sampling="without_replacement", seed=2)
    a = run_local_update(fed, LocalUpdate.fedprox(3, 0.05, alpha=0.1), fed.initial_point(), 8, **kw).to_numpy()
    b = run_local_update(
        fed, LocalUpdate.fedprox(3, 0.05, alpha=0.1), fed.initial_point(), 8, backend="torch", device="cpu", **kw
    ).to_numpy()
    assert np.allclose(a.x, b.x, rtol=1e-12, atol=1e-14)
    assert a.loss[-1] < a.loss[0]
    assert np.all(np.isnan(a.dist_empirical))  # no unique minimizer to measure against


def test_bad_inputs():
    from fedtheory.models.federation import TorchModelFederation
    from fedtheory.models.networks import mlp

    with pytest.raises(ValueError, match="loss must be one of"):
        TorchModelFederation(mlp(2, [], 2), [np.zeros((3, 2))], [np.zeros(3, int)], loss="hinge")
    with pytest.raises(ValueError, match="same number"):
        TorchModelFederation(mlp(2, [], 2), [np.zeros((3, 2))], [])
