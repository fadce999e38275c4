"""Small networks from plain ``torch.nn`` (no torchvision), float64, seeded.

Sized for the offline substitutes (scikit-learn's 8×8 digits): a multilayer perceptron and a small
convolutional network. Every builder takes a ``seed`` so the initial weights are reproducible.

>>> net = mlp(64, [32], 10, seed=0)
>>> sum(p.numel() for p in net.parameters())
2410
>>> cnn = digits_cnn(seed=0)
>>> import torch
>>> tuple(cnn(torch.zeros(2, 64, dtype=torch.float64)).shape)
(2, 10)
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

__all__ = ["mlp", "digits_cnn", "count_parameters", "init_weights", "ACTIVATIONS", "INITS"]


INITS = ("torch", "glorot")


def init_weights(module: nn.Module, seed: int | None, scheme: str = "torch") -> nn.Module:
    """Re-initialize every Linear/Conv layer from a seeded generator; return the module in float64.

    ``"torch"``: PyTorch's default, U(±1/√fan_in) for weights and biases; ``"glorot"``: Glorot-uniform
    weights, U(±√(6/(fan_in + fan_out))), and zero biases (Keras' defaults).

    >>> net = init_weights(nn.Linear(3, 2), seed=0, scheme="glorot")
    >>> float(net.bias.detach().abs().sum()), net.weight.dtype
    (0.0, torch.float64)
    """
    if scheme not in INITS:
        raise ValueError(f"init scheme must be one of {INITS}, got {scheme!r}")
    gen = torch.Generator().manual_seed(int(seed or 0))
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            w = layer.weight
            receptive = w[0, 0].numel() if w.dim() > 2 else 1
            fan_in, fan_out = w.shape[1] * receptive, w.shape[0] * receptive
            with torch.no_grad():
                if scheme == "torch":
                    bound = 1.0 / fan_in**0.5
                    w.uniform_(-bound, bound, generator=gen)
                    if layer.bias is not None:
                        layer.bias.uniform_(-bound, bound, generator=gen)
                else:
                    bound = (6.0 / (fan_in + fan_out)) ** 0.5
                    w.uniform_(-bound, bound, generator=gen)
                    if layer.bias is not None:
                        layer.bias.zero_()
    return module.double()


ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid}


def mlp(
    in_features: int,
    hidden: Sequence[int],
    out_features: int,
    *,
    activation: str = "relu",
    seed: int | None = 0,
    init: str = "torch",
) -> nn.Module:
    """Fully connected network in → hidden... → out with ``activation`` (relu, tanh, sigmoid) between
    layers; weights from :func:`init_weights` (``init``: ``"torch"`` or ``"glorot"``).

    >>> [tuple(p.shape) for p in mlp(3, [4], 2).parameters()]
    [(4, 3), (4,), (2, 4), (2,)]
    """
    act = ACTIVATIONS.get(activation)
    if act is None:
        raise ValueError(f"activation must be one of {tuple(ACTIVATIONS)}, got {activation!r}")
    sizes = [int(in_features), *map(int, hidden), int(out_features)]
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(act())
    return init_weights(nn.Sequential(*layers), seed, init)


class _Image(nn.Module):
    """Reshape flat 64-pixel rows to 1×8×8 images."""

    def __init__(self, side: int) -> None:
        super().__init__()
        self.side = side

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], 1, self.side, self.side)


def digits_cnn(
    channels: Sequence[int] = (8, 16), classes: int = 10, *, side: int = 8, seed: int | None = 0
) -> nn.Module:
    """Conv(3×3)-ReLU-MaxPool twice, then a linear classifier; input rows of side² pixels.

    >>> count_parameters(digits_cnn(seed=0))
    1898
    """
    c1, c2 = map(int, channels)
    net = nn.Sequential(
        _Image(side),
        nn.Conv2d(1, c1, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(c2 * (side // 4) ** 2, classes),
    )
    return init_weights(net, seed)


def count_parameters(module: nn.Module) -> int:
    """Number of trainable scalars.

    >>> count_parameters(mlp(2, [], 1))
    3
    """
    return int(sum(p.numel() for p in module.parameters() if p.requires_grad))
