r"""Networks with a chosen activation (logistic or ReLU), their training, and the gradient tensors of
Appendix C of Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*.

Appendix C trains (i) a one- or two-hidden-layer perceptron on MNIST and (ii) a convolutional network
(two 3×3 convolutions with 40 filters, 2×2 max-pooling, a 150-unit dense layer, a 10-way output) on
CIFAR-10, with logistic activations (ReLU in one variant), softmax cross-entropy, Adam (RMSprop in one
variant), batch 200, 25 (resp. 15) epochs. Then, at the trained weights θ*, it draws k perturbations
:math:`\theta^{(i)}=\theta^*+\frac{\|\theta^*\|_1}{p}g_i` (75), g_i standard Gaussian, and k test
samples, forms the k × k × p tensor :math:`\mathcal M_{i,j,q}=\partial f/\partial\theta_q(x^{(i)};\theta^{(j)})`
(76) and histograms the approximate ranks (77) of the slices :math:`\mathcal M_q` over coordinates
with :math:`|\theta^*_q|\ge0.005` (about 500 of them, drawn at random).

Everything here is plain ``torch.nn`` in float64, seeded; per-sample gradients use ``torch.func``
(``vmap`` of ``grad`` of a ``functional_call``), so a slice costs no Python loop over samples.

>>> net = activation_mlp(64, [16], 10, activation="sigmoid", seed=0)
>>> sum(p.numel() for p in net.parameters())
1210
>>> import torch
>>> tuple(conv_net(side=8, filters=4, hidden=12, seed=0)(torch.zeros(3, 64, dtype=torch.float64)).shape)
(3, 10)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from fedtheory.models.networks import ACTIVATIONS, init_weights, mlp

__all__ = ["activation_mlp", "conv_net", "train_classifier", "flat_parameters", "gradient_slices", "appendix_c_ranks"]

_ACTIVATIONS = ("sigmoid", "relu")  # the paper's two


def _activation(name: str) -> type:
    if name not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {_ACTIVATIONS}, got {name!r}")
    return ACTIVATIONS[name]


def activation_mlp(
    in_features: int, hidden: Sequence[int], out_features: int, *, activation: str = "sigmoid", seed: int | None = 0
) -> nn.Module:
    """Fully connected in → hidden... → out (logits), the activation between layers, Glorot-uniform weights
    and zero biases (Keras' defaults, as in the paper): :func:`fedtheory.models.networks.mlp`.

    >>> [tuple(p.shape) for p in activation_mlp(3, [4], 2).parameters()]
    [(4, 3), (4,), (2, 4), (2,)]
    """
    _activation(activation)
    return mlp(in_features, hidden, out_features, activation=activation, seed=seed, init="glorot")


class _Image(nn.Module):
    def __init__(self, side: int, channels: int) -> None:
        super().__init__()
        self.side, self.channels = side, channels

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], self.channels, self.side, self.side)


def conv_net(
    *,
    side: int = 8,
    channels: int = 1,
    filters: int = 40,
    hidden: int = 150,
    classes: int = 10,
    activation: str = "sigmoid",
    seed: int | None = 0,
) -> nn.Module:
    """Appendix C's CIFAR-10 architecture on side×side images: conv3×3(filters, same) – act – conv3×3
    (filters, same) – act – maxpool 2×2 – dense(hidden) – act – dense(classes); input rows of
    channels·side² values.

    >>> sum(p.numel() for p in conv_net(side=8, filters=4, hidden=12, seed=0).parameters())
    1098
    """
    act = _activation(activation)
    net = nn.Sequential(
        _Image(side, channels),
        nn.Conv2d(channels, filters, 3, padding=1),
        act(),
        nn.Conv2d(filters, filters, 3, padding=1),
        act(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(filters * (side // 2) ** 2, hidden),
        act(),
        nn.Linear(hidden, classes),
    )
    return init_weights(net, seed, "glorot")


def flat_parameters(module: nn.Module) -> torch.Tensor:
    """The module's parameters as one flat float64 vector."""
    return torch.nn.utils.parameters_to_vector(module.parameters()).detach().clone()


def train_classifier(
    module: nn.Module,
    X: Any,
    y: Any,
    *,
    optimizer: str = "adam",
    lr: float = 1e-3,
    batch_size: int = 200,
    epochs: int = 25,
    seed: int = 0,
) -> dict:
    """Minimize the mean softmax cross-entropy with Adam or RMSprop (shuffled mini-batches, seeded).

    Returns ``{"train_loss": [...per epoch], "train_accuracy": float}``; the module is trained in place.

    >>> from fedtheory.problems.datasets import load_dataset
    >>> X, y = load_dataset("iris")
    >>> net = activation_mlp(4, [8], 3, seed=0)
    >>> out = train_classifier(net, X, y, lr=0.05, batch_size=30, epochs=40)
    >>> out["train_accuracy"] > 0.9
    True
    """
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float64))
    yt = torch.as_tensor(np.asarray(y, dtype=np.int64))
    opt_cls = {"adam": torch.optim.Adam, "rmsprop": torch.optim.RMSprop}.get(optimizer)
    if opt_cls is None:
        raise ValueError(f"optimizer must be 'adam' or 'rmsprop', got {optimizer!r}")
    opt = opt_cls(module.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(int(seed))
    history = []
    for _ in range(int(epochs)):
        perm = torch.randperm(Xt.shape[0], generator=gen)
        total = 0.0
        for start in range(0, Xt.shape[0], int(batch_size)):
            idx = perm[start : start + int(batch_size)]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(module(Xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += float(loss.detach()) * idx.numel()
        history.append(total / Xt.shape[0])
    with torch.no_grad():
        acc = float((module(Xt).argmax(dim=1) == yt).double().mean())
    return {"train_loss": history, "train_accuracy": acc}


def _param_dict(module: nn.Module, flat: torch.Tensor) -> dict:
    out, start = {}, 0
    for name, prm in module.named_parameters():
        out[name] = flat[start : start + prm.numel()].reshape(prm.shape)
        start += prm.numel()
    return out


def gradient_slices(module: nn.Module, thetas: torch.Tensor, X: Any, y: Any, coords: Any) -> np.ndarray:
    r"""(len(coords), k_x, k_θ): :math:`\partial f/\partial\theta_q(x^{(i)};\theta^{(j)})` for the chosen
    coordinates q (eq. (76)'s slices :math:`\mathcal M_q`), f the per-sample cross-entropy.

    One ``vmap`` over samples per parameter vector (k_θ passes), keeping only ``coords``.

    >>> net = activation_mlp(2, [3], 2, seed=0)
    >>> th = flat_parameters(net)[None].repeat(2, 1)
    >>> gradient_slices(net, th, np.zeros((4, 2)), np.array([0, 1, 0, 1]), [0, 5]).shape
    (2, 4, 2)
    """
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float64))
    yt = torch.as_tensor(np.asarray(y, dtype=np.int64))
    cidx = torch.as_tensor(np.asarray(coords, dtype=np.int64))

    def sample_loss(flat: torch.Tensor, x: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        out = functional_call(module, _param_dict(module, flat), (x[None],))
        return nn.functional.cross_entropy(out, label[None])

    per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))
    cols = [per_sample(theta, Xt, yt)[:, cidx] for theta in thetas]  # each (k_x, n_coords)
    return torch.stack(cols, dim=2).permute(1, 0, 2).detach().cpu().numpy()


def appendix_c_ranks(
    module: nn.Module,
    X_test: Any,
    y_test: Any,
    *,
    k: int,
    n_coords: int = 500,
    threshold: float = 0.005,
    all_weights: bool = False,
    energy: float = 0.9,
    rng: np.random.Generator,
) -> dict:
    """Appendix C's procedure at the module's current (trained) weights θ*.

    Draws k test samples (uniformly, without replacement) and k perturbations (75); keeps coordinates
    with |θ*_q| ≥ ``threshold`` (all of them with ``all_weights``); draws ``n_coords`` of those
    uniformly (the paper's footnote 12: about 500); returns their approximate ranks (77) and the counts.

    >>> net = activation_mlp(4, [6], 3, seed=0)
    >>> from fedtheory.problems.datasets import load_dataset
    >>> X, y = load_dataset("iris")
    >>> out = appendix_c_ranks(net, X, y, k=10, n_coords=20, rng=np.random.default_rng(0))
    >>> len(out["ranks"]), 1 <= min(out["ranks"]) <= max(out["ranks"]) <= 10
    (20, True)
    """
    from fedtheory.analysis.low_rank import approximate_rank

    X_test, y_test = np.asarray(X_test), np.asarray(y_test)
    if not 1 <= k <= X_test.shape[0]:
        raise ValueError(f"k must lie in [1, number of test samples = {X_test.shape[0]}], got k={k}")
    theta_star = flat_parameters(module)
    p = theta_star.numel()
    rows = rng.choice(X_test.shape[0], size=int(k), replace=False)
    g = torch.as_tensor(rng.normal(size=(int(k), p)))
    thetas = theta_star[None] + theta_star.abs().sum() / p * g
    eligible = np.arange(p) if all_weights else np.nonzero(np.abs(theta_star.numpy()) >= threshold)[0]
    if eligible.size == 0:
        raise ValueError(f"no weight has |theta*_q| >= {threshold}")
    coords = rng.choice(eligible, size=min(int(n_coords), eligible.size), replace=False)
    slices = gradient_slices(module, thetas, X_test[rows], y_test[rows], coords)
    ranks = np.asarray(approximate_rank(slices, energy=energy))
    nonzero = ranks > 0
    return {
        "ranks": ranks[nonzero].tolist(),
        "zero_slices": int((~nonzero).sum()),
        "coords": coords.tolist(),
        "p": int(p),
        "eligible": int(eligible.size),
        "test_rows": rows.tolist(),
    }


class NetworkLoss:
    r"""A network's per-sample cross-entropy as a loss smooth in the data, for FedLRGD (Algorithm 1 needs no
    convexity to run): data rows x = (features, label), parameters θ = the flat weight vector.

    Provides the protocol :func:`fedtheory.algorithms.fedlrgd.run_fedlrgd` uses: ``grads(X, thetas)``
    (n, k, p) per-sample gradients at every parameter vector (``torch.func``: vmap over samples and
    parameters), ``objective`` and ``gradient`` of F = mean loss.

    >>> net = activation_mlp(2, [3], 2, seed=0)
    >>> loss = NetworkLoss(net)
    >>> X = np.array([[0.1, 0.9, 1.0], [0.8, 0.2, 0.0]])
    >>> th = flat_parameters(net).numpy()
    >>> loss.grads(X, np.stack([th, th])).shape
    (2, 2, 17)
    >>> bool(np.allclose(loss.gradient(X, th), loss.grads(X, th[None])[:, 0].mean(axis=0)))
    True
    """

    def __init__(self, module: nn.Module) -> None:
        self.module = module.double()

        def sample_loss(flat: torch.Tensor, x: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
            out = functional_call(self.module, _param_dict(self.module, flat), (x[None],))
            return nn.functional.cross_entropy(out, label[None])

        self._loss = sample_loss
        self._grads = vmap(vmap(grad(sample_loss), in_dims=(0, None, None)), in_dims=(None, 0, 0))

    @staticmethod
    def _split(X: Any) -> tuple[torch.Tensor, torch.Tensor]:
        Xt = torch.as_tensor(np.asarray(X, dtype=np.float64))
        return Xt[:, :-1], Xt[:, -1].round().long()

    def grads(self, X: Any, thetas: Any, backend: Any = None) -> Any:
        """(n, k, p) per-sample gradients; returned on ``backend`` (numpy by default)."""
        from fedtheory.backends import get_backend

        be = backend if hasattr(backend, "einsum") else get_backend(backend or "numpy")
        feats, labels = self._split(be.to_numpy(X) if be.name != "numpy" else X)
        th = torch.as_tensor(np.asarray(be.to_numpy(thetas) if be.name != "numpy" else thetas, dtype=np.float64))
        return be.asarray(self._grads(th, feats, labels).detach().cpu().numpy())

    def objective(self, X: Any, theta: Any) -> float:
        feats, labels = self._split(X)
        th = torch.as_tensor(np.asarray(theta, dtype=np.float64))
        with torch.no_grad():
            out = functional_call(self.module, _param_dict(self.module, th), (feats,))
            return float(nn.functional.cross_entropy(out, labels))

    def gradient(self, X: Any, theta: Any) -> np.ndarray:
        return self.grads(X, np.asarray(theta, dtype=np.float64)[None])[:, 0].mean(axis=0)


__all__.append("NetworkLoss")
