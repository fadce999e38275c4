r"""Parameters and multiply–accumulates (MACs) of full-rank and factorized layers: symbolic (FedHM's
Table 1) and counted on real torch modules.

Yao et al., *FedHM: Efficient Federated Learning for Heterogeneous Models via Low-rank
Factorization*, Section 3.1 and Table 1. Notation: a fully connected layer maps R^m → R^n; a
convolution has m input and n output channels, k×k filters and an H×W input feature map; r is the
rank. :data:`TABLE_1` holds the table's formulas as sympy expressions (the ``O(·)`` entries as their
leading terms); :func:`count` counts a module's trainable parameters and, by forward hooks on every
``nn.Conv2d``/``nn.Linear`` during one forward pass, its MACs (weights × output positions; biases,
batch norm and activations are not multiply–accumulates of weights and are left out, as in the
usual profilers' convolution/linear counts).

>>> import sympy as sp
>>> m, n, k, r, H, W = SYMBOLS
>>> TABLE_1["factorized_conv"]["params"], TABLE_1["factorized_conv"]["macs"]
(k*r*(m + n), H*W*k*r*(m + n))
>>> import torch
>>> from fedtheory.models.low_rank import LowRankConv2d
>>> c = count(LowRankConv2d(8, 16, 3, rank=4, padding=1, bias=False), (8, 10, 10))
>>> c.params == 4 * 3 * (8 + 16), c.macs == 10 * 10 * 3 * 4 * (8 + 16)
(True, True)
"""

from __future__ import annotations

# the docstring examples build torch modules (tests/test_docstrings.py skips them without torch)
__doctest_requires__ = ("torch",)

from dataclasses import dataclass, field
from typing import Any, Sequence

import sympy as sp

__all__ = [
    "SYMBOLS",
    "TABLE_1",
    "table_1_value",
    "Count",
    "count",
    "count_by_group",
    "pufferfish_conv",
    "balanced_smaller_condition",
]

SYMBOLS = sp.symbols("m n k r H W", positive=True, integer=True)
_m, _n, _k, _r, _H, _W = SYMBOLS

#: Table 1, row by row: parameters and computational complexity (leading term of the O(·) entries)
TABLE_1 = {
    "vanilla_fc": {"params": _m * _n, "macs": _m * _n, "big_o": True},
    "factorized_fc": {"params": _r * (_m + _n), "macs": _r * (_m + _n), "big_o": True},
    "vanilla_conv": {"params": _m * _n * _k**2, "macs": _m * _n * _k**2 * _H * _W, "big_o": True},
    "factorized_conv": {"params": _r * _k * (_m + _n), "macs": _r * _k * _H * _W * (_m + _n), "big_o": False},
    "pufferfish_conv": {"params": _r * (_m * _k**2 + _n), "macs": _r * _H * _W * (_m * _k**2 + _n), "big_o": False},
}


def table_1_value(row: str, what: str, **values: int) -> int:
    """A Table 1 entry at concrete m, n, k, r, H, W (the symbols a row does not use may be omitted).

    >>> table_1_value("vanilla_conv", "macs", m=3, n=4, k=3, H=5, W=5)
    2700
    """
    if row not in TABLE_1:
        raise ValueError(f"unknown Table 1 row {row!r} (rows: {', '.join(TABLE_1)})")
    if what not in ("params", "macs"):
        raise ValueError(f"what must be 'params' or 'macs', got {what!r}")
    expr = TABLE_1[row][what]
    subs = {s: int(values[s.name]) for s in SYMBOLS if s.name in values}
    missing = sorted(s.name for s in expr.free_symbols if s not in subs)
    if missing:
        raise ValueError(f"Table 1 {row}/{what} needs {', '.join(missing)}")
    return int(expr.subs(subs))


def balanced_smaller_condition() -> sp.Basic:
    """The exact condition under which FedHM's factorized convolution has fewer parameters (and, at
    stride 1, fewer MACs) than Pufferfish's for k > 1: rk(m + n) < r(mk² + n) ⟺ n < km.

    >>> balanced_smaller_condition()
    n < k*m
    """
    return sp.StrictLessThan(_n, _k * _m)


@dataclass
class Count:
    """Trainable parameters and MACs of a module (per input sample), with per-layer detail."""

    params: int
    macs: int
    layers: list = field(default_factory=list)


def count(module: Any, input_shape: Sequence[int], *, elementwise: bool = False) -> Count:
    """Parameters and MACs of ``module`` on one input of shape ``input_shape`` (no batch axis).

    MACs of a convolution: (C_in/groups)·k_h·k_w per output element; of a linear layer: in·out per
    sample. ``elementwise=True`` adds the operations some profilers (thop) also count: 2 per output
    element of a batch norm, 1 per output element of an ``nn.ReLU`` module. The forward pass runs in
    eval mode on zeros, under ``torch.no_grad``.

    >>> import torch
    >>> count(torch.nn.Linear(5, 3), (5,)).macs, count(torch.nn.Linear(5, 3), (5,)).params
    (15, 18)
    """
    import torch
    from torch import nn

    layers: list[dict] = []

    def hook(mod, inputs, output):
        if isinstance(mod, nn.Conv2d):
            per_out = (mod.in_channels // mod.groups) * mod.kernel_size[0] * mod.kernel_size[1]
            macs = int(output[0].numel()) * per_out
        elif isinstance(mod, nn.Linear):
            macs = int(mod.in_features * mod.out_features * (output[0].numel() // mod.out_features))
        elif isinstance(mod, nn.modules.batchnorm._BatchNorm):
            macs = 2 * int(output[0].numel())
        else:
            macs = int(output[0].numel())
        layers.append(
            {
                "name": names[mod],
                "type": type(mod).__name__,
                "macs": macs,
                "params": int(sum(p.numel() for p in mod.parameters(recurse=False))),
            }
        )

    names = {mod: name for name, mod in module.named_modules()}
    kinds = (nn.Conv2d, nn.Linear) + ((nn.modules.batchnorm._BatchNorm, nn.ReLU) if elementwise else ())
    handles = [mod.register_forward_hook(hook) for mod in module.modules() if isinstance(mod, kinds)]
    was_training = module.training
    try:
        module.eval()
        first = next(module.parameters())
        with torch.no_grad():  # on the module's device: a module built on "meta" is counted without memory
            module(torch.zeros(1, *map(int, input_shape), dtype=first.dtype, device=first.device))
    finally:
        for h in handles:
            h.remove()
        module.train(was_training)
    params = int(sum(p.numel() for p in module.parameters() if p.requires_grad))
    return Count(params=params, macs=int(sum(layer["macs"] for layer in layers)), layers=layers)


def count_by_group(
    module: Any, input_shape: Sequence[int], groups: Sequence[str], *, elementwise: bool = False
) -> dict[str, dict[str, int]]:
    """Parameters and MACs per top-level child named in ``groups`` (e.g. conv1, layer1–4, fc: Figure 7).

    ``macs`` follows ``elementwise`` (see :func:`count`); ``macs_weights`` always counts the convolutions and linear
    layers alone, from the same forward pass. Every trainable parameter and every counted MAC must fall in one
    group (else ValueError).

    >>> import torch
    >>> net = torch.nn.Sequential()
    >>> net.add_module("a", torch.nn.Linear(4, 3)); net.add_module("b", torch.nn.Linear(3, 2))
    >>> count_by_group(net, (4,), ["a", "b"])
    {'a': {'params': 15, 'macs': 12, 'macs_weights': 12}, 'b': {'params': 8, 'macs': 6, 'macs_weights': 6}}
    """
    total = count(module, input_shape, elementwise=elementwise)
    out = {g: {"params": 0, "macs": 0, "macs_weights": 0} for g in groups}
    for name, p in module.named_parameters():
        if p.requires_grad:
            top = name.split(".", 1)[0]
            if top not in out:
                raise ValueError(f"parameter {name} is in no group of {list(groups)}")
            out[top]["params"] += int(p.numel())
    for layer in total.layers:
        top = layer["name"].split(".", 1)[0]
        if top not in out:
            raise ValueError(f"layer {layer['name']} is in no group of {list(groups)}")
        out[top]["macs"] += layer["macs"]
        if layer["type"] in ("Conv2d", "Linear"):
            out[top]["macs_weights"] += layer["macs"]
    return out


def pufferfish_conv(m: int, n: int, k: int, rank: int, *, stride: int = 1, padding: int = 0) -> Any:
    """Pufferfish's factorized convolution (Wang et al. 2021, Table 1's last row): a k×k convolution
    m → r followed by a 1×1 convolution r → n (no biases).

    >>> count(pufferfish_conv(8, 16, 3, 4, padding=1), (8, 10, 10)).params == 4 * (8 * 9 + 16)
    True
    """
    from torch import nn

    return nn.Sequential(
        nn.Conv2d(m, rank, k, stride=stride, padding=padding, bias=False), nn.Conv2d(rank, n, 1, bias=False)
    )
