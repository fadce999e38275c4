"""Networks and the Appendix C procedure (fedtheory.models.activation_networks)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fedtheory.models.activation_networks import (  # noqa: E402
    activation_mlp,
    appendix_c_ranks,
    conv_net,
    flat_parameters,
    gradient_slices,
    train_classifier,
)


def test_gradient_slices_match_per_sample_autograd():
    net = activation_mlp(3, [4], 2, activation="sigmoid", seed=1)
    theta = flat_parameters(net)
    thetas = torch.stack(
        [theta, theta + 0.1 * torch.randn(theta.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))]
    )
    X = np.random.default_rng(0).normal(size=(5, 3))
    y = np.array([0, 1, 1, 0, 1])
    coords = [0, 3, 7, 20]
    S = gradient_slices(net, thetas, X, y, coords)
    assert S.shape == (4, 5, 2)
    for j in range(2):
        torch.nn.utils.vector_to_parameters(thetas[j].clone(), net.parameters())
        for i in range(5):
            net.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(torch.as_tensor(X[i : i + 1])), torch.as_tensor(y[i : i + 1]))
            loss.backward()
            g = torch.cat([p.grad.reshape(-1) for p in net.parameters()]).numpy()
            assert np.allclose(S[:, i, j], g[coords], rtol=1e-10, atol=1e-14)


def test_conv_net_shapes_and_activation_choice():
    net = conv_net(side=8, filters=3, hidden=5, activation="relu", seed=0)
    assert tuple(net(torch.zeros(2, 64, dtype=torch.float64)).shape) == (2, 10)
    with pytest.raises(ValueError, match="activation"):
        conv_net(activation="tanh")


def test_training_is_seeded_and_ranks_are_reproducible():
    X = np.random.default_rng(0).normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    runs = []
    for _ in range(2):
        net = activation_mlp(4, [6], 2, seed=3)
        train_classifier(net, X, y, lr=0.05, batch_size=10, epochs=5, seed=7)
        runs.append(appendix_c_ranks(net, X, y, k=8, n_coords=15, rng=np.random.default_rng(11))["ranks"])
    assert runs[0] == runs[1]
    assert all(1 <= r <= 8 for r in runs[0])


def test_appendix_c_rejects_bad_k():
    net = activation_mlp(2, [2], 2, seed=0)
    with pytest.raises(ValueError, match="k must lie"):
        appendix_c_ranks(net, np.zeros((3, 2)), np.zeros(3, dtype=int), k=5, rng=np.random.default_rng(0))
