"""Helpers shared by fedhm's size sections (not content: no claims): the results tables' data, and the ResNets of
Tables 5–6 counted from their description alone (the independent reference for every size claim).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from fedtheory.content import load_module

EPS = float(np.finfo(np.float64).eps)
HERE = Path(__file__).resolve().parent


def _on_meta(build, *args, **kwargs):
    """``build(*args, **kwargs)`` on torch's meta device: the network's modules and shapes, no weights in memory
    (what the size and architecture checks count)."""
    import torch

    with torch.device("meta"):
        return build(*args, **kwargs)


def _tables():
    return load_module(HERE / "results_tables.py")


# --------------------------------------------------------------------------------------------
# Independent reference counts: the ResNets of Tables 5–6 counted from their description alone
# --------------------------------------------------------------------------------------------
# Every size claim builds the torch models (fedtheory.models.resnet), counts them twice (torch's parameters and
# fedtheory.models.counting.count) and compares both with the closed-form count below, written from Tables 1, 5 and 6
# without using the model code. A disagreement is an error of this repository's model or counting code, not a finding
# about the paper, so it raises (status error) for every claim, verified or refuted, and on every replay.

_STAGE_CHANNELS = (64, 128, 256, 512)
_BLOCKS = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3)}


def _conv3x3_reference(m: int, n: int, stride: int, h: int, w: int, rank: int | None) -> tuple[int, int, int, int]:
    """(params, weight MACs, output height, output width) of a 3×3 convolution m → n (padding 1, no bias), dense
    (Table 1: mnk², mnk²HW) or factorized at ``rank`` as Table 5 draws it: conv_u a 3×1 convolution m → r with the
    stride along the height, conv_v a 1×3 convolution r → n with the stride along the width."""
    ho, wo = (h - 1) // stride + 1, (w - 1) // stride + 1
    if rank is None:
        return 9 * m * n, 9 * m * n * ho * wo, ho, wo
    return 3 * rank * (m + n), 3 * m * rank * ho * w + 3 * rank * n * ho * wo, ho, wo


def _reference_resnet(depth: int, classes: int, side: int = 32, *, channels=_STAGE_CHANNELS, rank=None) -> dict:
    """Per layer group (conv1, layer1–4, fc): parameters, weight MACs and element-wise operations (2 per batch-norm
    output, 1 per ReLU output) of the CIFAR ResNet-``depth`` on a ``side``×``side`` input. ``rank(index, m, n)``: the
    rank of the index-th main-path 3×3 convolution (the stem is 1) or None for a dense one."""
    rank = rank or (lambda index, m, n: None)
    groups = {
        g: {"params": 0, "macs_weights": 0, "elementwise": 0}
        for g in ("conv1", "layer1", "layer2", "layer3", "layer4", "fc")
    }

    def add(group, params=0, macs=0, ops=0):
        groups[group]["params"] += params
        groups[group]["macs_weights"] += macs
        groups[group]["elementwise"] += ops

    c0 = channels[0]
    p, mac, h, w = _conv3x3_reference(3, c0, 1, side, side, rank(1, 3, c0))
    add("conv1", p + 2 * c0, mac, 3 * c0 * h * w)  # batch norm (2 per output) and ReLU (1)
    index, cin = 1, c0
    for stage, (c, blocks) in enumerate(zip(channels, _BLOCKS[depth])):
        group = f"layer{stage + 1}"
        for b in range(blocks):
            stride = 2 if stage > 0 and b == 0 else 1
            p1, m1, ho, wo = _conv3x3_reference(cin, c, stride, h, w, rank(index + 1, cin, c))
            p2, m2, _, _ = _conv3x3_reference(c, c, 1, ho, wo, rank(index + 2, c, c))
            out = c * ho * wo
            add(group, p1 + p2 + 4 * c, m1 + m2, 2 * out + out + 2 * out + out)  # bn1, relu1, bn2, relu2
            if stride != 1 or cin != c:  # 1×1 projection shortcut with its batch norm
                add(group, cin * c + 2 * c, cin * c * ho * wo, 2 * out)
            index, cin, h, w = index + 2, c, ho, wo
    add("fc", cin * classes + classes, cin * classes)
    return groups


def _reference_total(groups: dict, what: str = "params") -> int:
    if what == "macs_elementwise":
        return sum(g["macs_weights"] + g["elementwise"] for g in groups.values())
    return sum(g[what] for g in groups.values())


def _reference_rank(kind: str, value: float, rho: int, convention: str = "channels"):
    """The rank rule of a size claim: dense ('width'), Table 5's ⌊γ·c_out⌋ after the first ρ main-path convolutions
    ('hybrid', convention 'channels'), Section 2.2's ⌊γ·rank(W)⌋ with W ∈ R^{3m×3n} ('matrix'), or a fixed rank for every
    3×3 convolution ('every')."""
    if kind == "width":
        return None
    if kind == "every":
        return lambda index, m, n: int(value)
    if convention == "matrix":
        return lambda index, m, n: None if index <= rho else max(1, math.floor(value * min(3 * m, 3 * n)))
    return lambda index, m, n: None if index <= rho else max(1, math.floor(value * n))


#: ρ of Tables 5 and 6 counted as dense main-path 3×3 convolutions: ResNet-18 keeps the stem and layer1's first block
#: (Table 5 draws them dense), ResNet-34 the stem, layer1 and layer2 (Table 6: 1 + 6 + 8 = 15)
TABLE_RHO = {18: 3, 34: 15}


def _slim(c: int, s: float) -> int:
    return max(1, math.floor(s * c + 0.5))


@functools.lru_cache(maxsize=None)
def _counted(
    kind: str,
    depth: int,
    classes: int,
    value: float,
    rho: int | None = None,
    convention: str = "channels",
    side: int = 32,
) -> dict:
    """Build the torch model, count it (torch parameters; ``counting.count`` for parameters and weight MACs, also with
    element-wise operations) and return the counts after checking them against :func:`_reference_resnet`.

    ``kind``: 'width' (HeteroFL's width slimming at s = ``value``), 'hybrid' (FedHM's [ρ, L, γ] network at γ = ``value``)
    or 'every' (every 3×3 convolution factorized at rank ``value``). Raises RuntimeError when the model or counting code
    disagrees with the reference."""
    import torch

    from fedtheory.models.counting import count
    from fedtheory.models.low_rank import LowRankConv2d
    from fedtheory.models.resnet import hybrid_resnet, resnet

    rho = TABLE_RHO[depth] if rho is None else rho
    with torch.device("meta"):
        if kind == "width":
            net = resnet(depth, classes, width=value)
        elif kind == "hybrid":
            net = hybrid_resnet(depth, classes, ratio=value, rho=rho, convention=convention)
        else:
            net = resnet(depth, classes)
            for name, mod in [
                (n, m) for n, m in net.named_modules() if isinstance(m, torch.nn.Conv2d) and m.kernel_size == (3, 3)
            ]:
                parent = net.get_submodule(name.rsplit(".", 1)[0]) if "." in name else net
                setattr(
                    parent,
                    name.rsplit(".", 1)[-1],
                    LowRankConv2d(
                        mod.in_channels, mod.out_channels, 3, int(value), stride=mod.stride[0], padding=1, bias=False
                    ),
                )
    counted = {"torch_params": int(sum(p.numel() for p in net.parameters()))}
    c = count(net, (3, side, side), elementwise=True)  # one forward pass; the weight MACs are its conv/linear layers
    counted.update(
        params=c.params,
        macs_weights=sum(layer["macs"] for layer in c.layers if layer["type"] in ("Conv2d", "Linear")),
        macs_elementwise=c.macs,
    )
    channels = [_slim(ch, value) for ch in _STAGE_CHANNELS] if kind == "width" else _STAGE_CHANNELS
    ref = _reference_resnet(depth, classes, side, channels=channels, rank=_reference_rank(kind, value, rho, convention))
    reference = {
        "torch_params": _reference_total(ref),
        "params": _reference_total(ref),
        "macs_weights": _reference_total(ref, "macs_weights"),
        "macs_elementwise": _reference_total(ref, "macs_elementwise"),
    }
    if counted != reference:
        raise RuntimeError(
            f"the model/counting code disagrees with the closed-form count of Tables 1, 5–6 for "
            f"{kind} ResNet-{depth} ({classes} classes, value {value}, rho {rho}): counted {counted}, "
            f"reference {reference}"
        )
    return counted


def _param_count(
    kind: str, depth: int, classes: int, value: float, rho: int | None = None, convention: str = "channels"
) -> int:
    """Parameters of a size claim's model, counted on the torch model and checked against the reference."""
    return _counted(kind, depth, classes, value, rho, convention)["params"]
