"""Figures of Yao et al., *FedHM: Efficient Federated Learning for Heterogeneous Models via Low-rank
Factorization*.

Figure 7 is computed exactly: parameters and multiply–accumulates per layer group of the ResNets of
Appendix C.3, counted on the torch modules of :mod:`fedtheory.models.resnet`. Figures 2, 3, 4 and 8
are training curves on CIFAR-10/100 and Tiny-ImageNet; here they are rebuilt at CPU scale on a
substitute (scikit-learn's 8×8 digits split across heterogeneous clients, a small ReLU network) in
:mod:`figures.fedhm_training` (``full`` tier).
"""

from __future__ import annotations

from fedtheory.plotting.spec import figure, panel, series

#: Figure 7's three (dataset, network, input) columns (Appendix C: ResNet-18 on CIFAR-10, ResNet-34 on
#: CIFAR-100 and on Tiny-ImageNet, whose images are 64×64)
FIGURE_7_NETWORKS = (
    ("CIFAR-10 (ResNet-18)", 18, 10, 32),
    ("CIFAR-100 (ResNet-34)", 34, 100, 32),
    ("Tiny-ImageNet (ResNet-34)", 34, 200, 64),
)
FIGURE_7_GROUPS = ("conv1", "layer1", "layer2", "layer3", "layer4", "fc")
FIGURE_7_LABELS = ("Conv1", "Layer1", "Layer2", "Layer3", "Layer4", "FC Layer")


def figure_7_counts() -> list[dict]:
    """Per network: parameters and MACs per layer group, MACs both with element-wise operations
    (batch norm, ReLU; as thop counts them) and of the weights alone (convolutions and linear layers)."""
    import torch

    from fedtheory.models.counting import count_by_group
    from fedtheory.models.resnet import resnet

    out = []
    for label, depth, classes, side in FIGURE_7_NETWORKS:
        with torch.device("meta"):  # shapes only: counts need no weights in memory
            net = resnet(depth, classes)
        groups = count_by_group(net, (3, side, side), FIGURE_7_GROUPS, elementwise=True)
        out.append(
            {
                "label": label,
                "depth": depth,
                "classes": classes,
                "input": [3, side, side],
                "params": [groups[g]["params"] for g in FIGURE_7_GROUPS],
                "macs": [groups[g]["macs"] for g in FIGURE_7_GROUPS],
                "macs_weights_only": [groups[g]["macs_weights"] for g in FIGURE_7_GROUPS],
            }
        )
    return out


def _millions_per_group(counts: list, key: str, totals) -> list:
    """One bar series per network: its count ``key`` per layer group, in millions, with ``totals(network)`` as the
    series' params."""
    return [
        series(c["label"], FIGURE_7_LABELS, [v / 1e6 for v in c[key]], type="bar", params=totals(c)) for c in counts
    ]


@figure(
    requires=("torch",),
    id="fedhm/figure-7",
    caption="Parameters (a) and MACs (b) of the layer groups of ResNet-18 on CIFAR-10 and ResNet-34 on CIFAR-100 and "
    "Tiny-ImageNet (FC Layer: the fully connected classifier); counted on the built torch modules.",
)
def figure_7(ctx):
    counts = figure_7_counts()
    params_series = _millions_per_group(counts, "params", lambda c: {"total_params": sum(c["params"])})
    macs_series = _millions_per_group(
        counts,
        "macs",
        lambda c: {
            "total_macs": sum(c["macs"]),
            "macs_weights_only": c["macs_weights_only"],
            "total_macs_weights_only": sum(c["macs_weights_only"]),
        },
    )
    return {
        "params": {
            "networks": [{k: c[k] for k in ("label", "depth", "classes", "input")} for c in counts],
            "groups": list(FIGURE_7_GROUPS),
            "mac_convention": "multiply-accumulates of every convolution and linear layer per input sample, plus "
            "2 per batch-norm output and 1 per ReLU output (thop's convention; the weights-only "
            "counts are in each MAC series' params)",
            "unspecified_by_paper": "the MAC counting convention; the one plotted reproduces the text's 55.6%",
        },
        "panels": [
            panel("(a) Parameters of different layers", "layer", "parameters (M)", params_series),
            panel("(b) MACs of different layers", "layer", "MACs (M)", macs_series, yscale="log"),
        ],
    }
