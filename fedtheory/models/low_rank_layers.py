"""The torch layers of a low-rank factorization (FedHM, Appendix A.2) and the functions that build and read them.

The matrix side (factorize, recover, unroll_conv, ...) is :mod:`fedtheory.models.factorization`, which needs no
torch; these names are also reachable from :mod:`fedtheory.models.low_rank` (``from fedtheory.models.low_rank
import LowRankConv2d``), which imports this module on first use of one of them.

>>> layer = LowRankLinear(6, 4, 2)
>>> tuple(factorized_layer(torch.nn.Linear(6, 4), rank=2).u.weight.shape)
(2, 6)
"""

from __future__ import annotations

# the examples build torch modules (tests/test_docstrings.py skips them without torch)
__doctest_requires__ = ("torch",)

from typing import Any

import numpy as np
import torch
from torch import nn

from fedtheory.models.factorization import (
    _is_torch,
    conv_factor_weights,
    factorize,
    layer_rank,
    recover,
    roll_conv,
    unroll_conv,
)

__all__ = ["LowRankLinear", "LowRankConv2d", "factorized_layer", "recovered_weight"]


class LowRankLinear(nn.Module):
    """A factorized fully connected layer x ↦ x U Vᵀ (+ b) (Appendix A.2): ``u`` (m → r, no bias)
    then ``v`` (r → n). Parameters r(m + n) (+ n), multiply-accumulates r(m + n) per sample.

    >>> layer = LowRankLinear(6, 4, 2)
    >>> sum(p.numel() for p in layer.parameters())            # 2·(6 + 4) + 4
    24
    >>> tuple(recovered_weight(layer).shape)                   # torch layout (out, in) = (UVᵀ)ᵀ
    (4, 6)
    """

    def __init__(self, in_features: int, out_features: int, rank: int, bias: bool = True) -> None:
        super().__init__()
        if rank < 1:
            raise ValueError(f"rank must be >= 1, got {rank}")
        self.in_features, self.out_features, self.rank = int(in_features), int(out_features), int(rank)
        self.u = nn.Linear(self.in_features, self.rank, bias=False)
        self.v = nn.Linear(self.rank, self.out_features, bias=bias)

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        return self.v(self.u(x))

    def factors(self) -> tuple["torch.Tensor", "torch.Tensor"]:
        """(U (m, r), V (n, r)) with the layer's matrix W = UVᵀ ∈ R^{m×n}."""
        return self.u.weight.t(), self.v.weight

    def set_factors(self, U: Any, V: Any) -> None:
        """Load U (m, r) and V (n, r) (numpy or torch)."""
        with torch.no_grad():
            self.u.weight.copy_(torch.as_tensor(np.asarray(U) if not _is_torch(U) else U).t())
            self.v.weight.copy_(torch.as_tensor(np.asarray(V) if not _is_torch(V) else V))


class LowRankConv2d(nn.Module):
    """A factorized k×k convolution (Section 2.2): ``conv_u``, a k×1 convolution m → r (stride and
    padding along the height), then ``conv_v``, a 1×k convolution r → n (stride and padding along
    the width, and the bias). Parameters rk(m + n) (+ n).

    >>> import torch
    >>> layer = LowRankConv2d(3, 4, 3, rank=2, padding=1).double()
    >>> sum(p.numel() for p in layer.parameters())            # 2·3·(3 + 4) + 4
    46
    >>> dense = torch.nn.functional.conv2d
    >>> x = torch.randn(1, 3, 5, 5, dtype=torch.float64)
    >>> bool(torch.allclose(layer(x), dense(x, recovered_weight(layer), layer.conv_v.bias, padding=1)))
    True
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        rank: int,
        *,
        stride: int = 1,
        padding: int = 0,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if rank < 1:
            raise ValueError(f"rank must be >= 1, got {rank}")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size, self.rank = int(kernel_size), int(rank)
        self.stride, self.padding = int(stride), int(padding)
        k, s, p = self.kernel_size, self.stride, self.padding
        self.conv_u = nn.Conv2d(self.in_channels, self.rank, (k, 1), stride=(s, 1), padding=(p, 0), bias=False)
        self.conv_v = nn.Conv2d(self.rank, self.out_channels, (1, k), stride=(1, s), padding=(0, p), bias=bias)

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":
        return self.conv_v(self.conv_u(x))

    def factors(self) -> tuple["torch.Tensor", "torch.Tensor"]:
        """(U (mk, r), V (nk, r)) with the unrolled matrix W = UVᵀ ∈ R^{mk×nk}."""
        m, n, k, r = self.in_channels, self.out_channels, self.kernel_size, self.rank
        U = self.conv_u.weight[..., 0].permute(1, 2, 0).reshape(m * k, r)
        V = self.conv_v.weight[:, :, 0, :].permute(0, 2, 1).reshape(n * k, r)
        return U, V

    def set_factors(self, U: Any, V: Any) -> None:
        """Load U (mk, r) and V (nk, r) (numpy or torch) into the two convolutions."""
        cu, cv = conv_factor_weights(U, V, self.in_channels, self.out_channels, self.kernel_size)
        with torch.no_grad():
            self.conv_u.weight.copy_(torch.as_tensor(cu))
            self.conv_v.weight.copy_(torch.as_tensor(cv))


def factorized_layer(
    layer: Any, ratio: float | None = None, *, rank: int | None = None, convention: str = "channels"
) -> Any:
    """A :class:`LowRankLinear`/:class:`LowRankConv2d` replacing a dense ``nn.Linear``/``nn.Conv2d``,
    spectrally initialized (truncated SVD of its matrix, eq. (18)); the bias is copied.

    Give the rank ratio γ (``ratio``, through :func:`layer_rank`) or the ``rank``.

    >>> import torch
    >>> dense = torch.nn.Linear(8, 6).double()
    >>> low = factorized_layer(dense, rank=6)                  # full rank: UVᵀ = W up to rounding
    >>> bool(torch.allclose(recovered_weight(low), dense.weight))
    True
    """
    if isinstance(layer, nn.Linear):
        m, n, k = layer.in_features, layer.out_features, 1
        W = layer.weight.detach().t()
    elif isinstance(layer, nn.Conv2d):
        if (
            layer.groups != 1
            or layer.dilation != (1, 1)
            or layer.kernel_size[0] != layer.kernel_size[1]
            or layer.stride[0] != layer.stride[1]
            or layer.padding[0] != layer.padding[1]
        ):
            raise ValueError(
                "only square, ungrouped, undilated convolutions with equal strides/paddings are factorized"
            )
        m, n, k = layer.in_channels, layer.out_channels, layer.kernel_size[0]
        W = unroll_conv(layer.weight.detach())
    else:
        raise ValueError(f"can factorize nn.Linear or nn.Conv2d, got {type(layer).__name__}")
    if rank is None:
        if ratio is None:
            raise ValueError("give the rank ratio gamma (ratio=...) or the rank (rank=...)")
        rank = layer_rank(m, n, ratio, k=k, convention=convention)
    bias = layer.bias is not None
    low: LowRankLinear | LowRankConv2d
    if isinstance(layer, nn.Linear):
        low = LowRankLinear(m, n, rank, bias=bias)
    else:
        low = LowRankConv2d(m, n, k, rank, stride=layer.stride[0], padding=layer.padding[0], bias=bias)
    low = low.to(dtype=layer.weight.dtype, device=layer.weight.device)
    U, V = factorize(W, rank)
    low.set_factors(U, V)
    if bias:
        with torch.no_grad():
            target = low.v.bias if isinstance(low, LowRankLinear) else low.conv_v.bias
            assert target is not None and layer.bias is not None  # both made with a bias (bias above)
            target.copy_(layer.bias)
    return low


def recovered_weight(layer: Any) -> Any:
    """The dense weight (torch layout) of a factorized layer: (UVᵀ)ᵀ (out, in) for
    :class:`LowRankLinear`, the rolled (out, in, k, k) weight for :class:`LowRankConv2d` (eq. (1))."""
    U, V = layer.factors()
    W = recover(U, V)
    if isinstance(layer, LowRankLinear):
        return W.t()
    return roll_conv(W, layer.out_channels, layer.in_channels, layer.kernel_size)
