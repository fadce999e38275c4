r"""The ResNets of FedHM (Yao et al., *FedHM: Efficient Federated Learning for Heterogeneous Models via
Low-rank Factorization*, Appendix C.3, Tables 5–6), built from plain ``torch.nn`` for counting.

The CIFAR-style ResNet: a 3×3 stride-1 stem (no max-pool), four stages of BasicBlocks with 64, 128,
256, 512 channels (stride 2 from the second stage, a 1×1 convolution + batch norm on the shortcut
when the shape changes), global average pooling and a fully connected classifier. ResNet-18 has
blocks (2, 2, 2, 2), ResNet-34 (3, 4, 6, 3). The same network serves 32×32 (CIFAR) and 64×64
(Tiny-ImageNet) inputs: parameters do not depend on the input size, multiply–accumulates do.

Three variants:

* :func:`resnet` ``(..., width=s)``: HeteroFL's width slimming, every stage's channels round(s·c);
* :func:`hybrid_resnet` ``(..., ratio=γ, rho=ρ)``: FedHM's [ρ, L, γ] hybrid network: the first ρ
  main-path 3×3 convolutions (the stem counts as the first) stay dense, every later one becomes a
  :class:`~fedtheory.models.low_rank.LowRankConv2d` of rank ⌊γ·c_out⌋ (Table 5: conv_u(c, c·r, 3, 1),
  conv_v(c·r, c, 1, 3)); shortcut 1×1 convolutions and the classifier stay dense. ρ = 3 for
  ResNet-18 (stem + the first block of layer1, as Table 5 draws it) and ρ = 15 for ResNet-34 (stem +
  layer1 + layer2, Table 6) reproduce the model sizes of Tables 2, 3, 7 and 8;
* :func:`resnet50`: the ImageNet bottleneck ResNet-50 of Section 2.2's remark on its last blocks.

>>> from fedtheory.models.networks import count_parameters
>>> count_parameters(resnet18(10)), count_parameters(resnet34(100))
(11173962, 21328292)
>>> count_parameters(hybrid_resnet18(10, ratio=0.125))            # Table 2: 1.24M
1236042
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from fedtheory.models.low_rank import LowRankConv2d, layer_rank

__all__ = [
    "BLOCKS",
    "PAPER_RHO",
    "BasicBlock",
    "Bottleneck",
    "ResNet",
    "resnet",
    "resnet18",
    "resnet34",
    "resnet50",
    "hybrid_resnet",
    "hybrid_resnet18",
    "hybrid_resnet34",
    "slim_channels",
    "STAGES",
]

BLOCKS = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3)}
STAGES = ("conv1", "layer1", "layer2", "layer3", "layer4", "fc")
#: the number ρ of leading dense main-path convolutions that reproduces the paper's model sizes
#: (Appendix C.2 states ρ = 2 for ResNet-18; Table 5 and Tables 2–3 correspond to 3, see the claims)
PAPER_RHO = {18: 3, 34: 15}


def slim_channels(channels: int, width: float) -> int:
    """HeteroFL's slimmed width round(s·c) (≥ 1): the rounding that reproduces Tables 2–3's sizes.

    >>> [slim_channels(c, 0.62) for c in (64, 128, 256, 512)]
    [40, 79, 159, 317]
    """
    if not 0 < width <= 1:
        raise ValueError(f"width ratio must lie in (0, 1], got {width}")
    return max(1, int(round(channels * width)))


def _conv3x3(m: int, n: int, stride: int, rank: int | None) -> nn.Module:
    if rank is None:
        return nn.Conv2d(m, n, 3, stride=stride, padding=1, bias=False)
    return LowRankConv2d(m, n, 3, rank, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """Two 3×3 convolutions with batch norm and a residual connection; either convolution may be
    factorized (``ranks`` = (r1, r2), ``None`` for dense)."""

    expansion = 1

    def __init__(
        self, in_planes: int, planes: int, stride: int = 1, ranks: Sequence[int | None] = (None, None)
    ) -> None:
        super().__init__()
        self.conv1 = _conv3x3(in_planes, planes, stride, ranks[0])
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu1 = nn.ReLU()
        self.conv2 = _conv3x3(planes, planes, 1, ranks[1])
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu2 = nn.ReLU()  # modules (not torch.relu) so element-wise operation counts can see them
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu1(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu2(out + self.shortcut(x))


class Bottleneck(nn.Module):
    """1×1 → 3×3 → 1×1 bottleneck (ResNet-50), expansion 4."""

    expansion = 4

    def __init__(self, in_planes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        out = planes * self.expansion
        self.conv1 = nn.Conv2d(in_planes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU()
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != out:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    """Stem, ``layer1``–``layer4``, average pool and ``fc`` (the names Figure 7 groups by)."""

    def __init__(self, stem: nn.Module, layers: Sequence[nn.Module], fc: nn.Module) -> None:
        super().__init__()
        self.conv1 = stem
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.fc = fc

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv1(x)
        out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
        out = torch.flatten(nn.functional.adaptive_avg_pool2d(out, 1), 1)
        return self.fc(out)


def _check_blocks(depth: int) -> Sequence[int]:
    if depth not in BLOCKS:
        raise ValueError(f"depth must be one of {sorted(BLOCKS)} (ResNet-18, ResNet-34), got {depth}")
    return BLOCKS[depth]


def _build(blocks: Sequence[int], num_classes: int, channels: Sequence[int], rank_of) -> ResNet:
    """``rank_of(index, c_in, c_out)`` → rank or None for the index-th main-path 3×3 conv (stem = 1)."""
    if num_classes < 1:
        raise ValueError(f"num_classes must be >= 1, got {num_classes}")
    c0 = channels[0]
    stem_rank = rank_of(1, 3, c0)
    stem = nn.Sequential(_conv3x3(3, c0, 1, stem_rank), nn.BatchNorm2d(c0), nn.ReLU())
    index, in_planes, layers = 1, c0, []
    for stage, (planes, count) in enumerate(zip(channels, blocks)):
        stage_blocks = []
        for b in range(count):
            stride = 2 if stage > 0 and b == 0 else 1
            r1 = rank_of(index + 1, in_planes, planes)
            r2 = rank_of(index + 2, planes, planes)
            index += 2
            stage_blocks.append(BasicBlock(in_planes, planes, stride, (r1, r2)))
            in_planes = planes
        layers.append(nn.Sequential(*stage_blocks))
    return ResNet(stem, layers, nn.Linear(in_planes, num_classes))


def resnet(depth: int, num_classes: int, *, width: float = 1.0) -> ResNet:
    """ResNet-``depth`` (18 or 34) for ``num_classes`` classes; ``width`` < 1 slims every stage to
    round(width·c) channels (HeteroFL, width slimming).

    >>> from fedtheory.models.networks import count_parameters
    >>> count_parameters(resnet(18, 10, width=0.62))           # 4.29M as Table 2 prints; 0.62 is fitted, C.2 states no such ratio
    4293347
    """
    blocks = _check_blocks(depth)
    channels = [slim_channels(c, width) for c in (64, 128, 256, 512)]
    return _build(blocks, num_classes, channels, lambda i, m, n: None)


def resnet18(num_classes: int = 10, *, width: float = 1.0) -> ResNet:
    """ResNet-18 (Table 5, left column)."""
    return resnet(18, num_classes, width=width)


def resnet34(num_classes: int = 100, *, width: float = 1.0) -> ResNet:
    """ResNet-34 (Table 6, left column)."""
    return resnet(34, num_classes, width=width)


def hybrid_resnet(
    depth: int, num_classes: int, *, ratio: float, rho: int | None = None, convention: str = "channels"
) -> ResNet:
    """FedHM's [ρ, L, γ] hybrid ResNet: main-path 3×3 convolutions ρ+1, …, L factorized at rank ratio γ.

    ``rho`` defaults to :data:`PAPER_RHO` (3 for ResNet-18, 15 for ResNet-34); ``convention`` is
    :func:`~fedtheory.models.low_rank.layer_rank`'s (``"channels"``: r = ⌊γ·c_out⌋ as Table 5 writes;
    ``"matrix"``: r = ⌊γ·min(3c_in, 3c_out)⌋, Section 2.2's definition). γ = 1 with ``"channels"`` keeps
    the rank-c_out factorization (not the dense layer).

    >>> from fedtheory.models.networks import count_parameters
    >>> [count_parameters(hybrid_resnet(34, 100, ratio=g)) for g in (0.5, 0.25, 0.125)]
    [8401316, 4985252, 3277220]
    """
    blocks = _check_blocks(depth)
    rho = PAPER_RHO[depth] if rho is None else int(rho)
    total = 1 + 2 * sum(blocks)
    if not 0 <= rho <= total:
        raise ValueError(f"rho must lie in [0, {total}] (main-path convolutions of ResNet-{depth}), got {rho}")

    def rank_of(index: int, m: int, n: int):
        return None if index <= rho else layer_rank(m, n, ratio, k=3, convention=convention)

    return _build(blocks, num_classes, (64, 128, 256, 512), rank_of)


def hybrid_resnet18(num_classes: int = 10, *, ratio: float, rho: int | None = None) -> ResNet:
    """Table 5's low-rank ResNet-18 (ρ = 3 unless given)."""
    return hybrid_resnet(18, num_classes, ratio=ratio, rho=rho)


def hybrid_resnet34(num_classes: int = 100, *, ratio: float, rho: int | None = None) -> ResNet:
    """Table 6's low-rank ResNet-34 (ρ = 15 unless given)."""
    return hybrid_resnet(34, num_classes, ratio=ratio, rho=rho)


def resnet50(num_classes: int = 1000) -> ResNet:
    """The ImageNet ResNet-50 (7×7 stride-2 stem and max-pool, bottleneck stages (3, 4, 6, 3)).

    >>> from fedtheory.models.networks import count_parameters
    >>> count_parameters(resnet50())
    25557032
    """
    stem = nn.Sequential(
        nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(3, stride=2, padding=1),
    )
    in_planes, layers = 64, []
    for stage, (planes, count) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3))):
        stage_blocks = []
        for b in range(count):
            stride = 2 if stage > 0 and b == 0 else 1
            stage_blocks.append(Bottleneck(in_planes, planes, stride))
            in_planes = planes * Bottleneck.expansion
        layers.append(nn.Sequential(*stage_blocks))
    return ResNet(stem, layers, nn.Linear(in_planes, num_classes))
