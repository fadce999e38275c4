"""The ResNets of FedHM's Tables 5–6: full, width-slimmed (HeteroFL) and hybrid low-rank; parameter counts."""

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def _params(net):
    return sum(p.numel() for p in net.parameters())


def _meta(builder, *args, **kw):
    import torch

    with torch.device("meta"):
        return builder(*args, **kw)


def test_full_resnets_have_the_standard_sizes():
    from fedtheory.models.resnet import resnet18, resnet34, resnet50

    assert _params(_meta(resnet18, 10)) == 11_173_962
    assert _params(_meta(resnet34, 100)) == 21_328_292
    assert _params(_meta(resnet34, 200)) == 21_379_592
    assert _params(_meta(resnet50)) == 25_557_032


def test_hybrid_sizes_are_those_of_table_2():
    from fedtheory.models.resnet import hybrid_resnet

    assert [round(_params(_meta(hybrid_resnet, 18, 10, ratio=g)) / 1e6, 2) for g in (0.5, 0.25, 0.125)] == [
        4.16,
        2.21,
        1.24,
    ]
    assert [round(_params(_meta(hybrid_resnet, 34, 200, ratio=g)) / 1e6, 2) for g in (0.5, 0.25, 0.125)] == [
        8.45,
        5.04,
        3.33,
    ]
    # ρ counts dense main-path convolutions; ρ = 2 (Appendix C.2's value) gives other sizes
    assert round(_params(_meta(hybrid_resnet, 18, 10, ratio=0.5, rho=2)) / 1e6, 2) == 4.13


def test_width_slimming_rounds_channels():
    from fedtheory.models.resnet import resnet, slim_channels

    assert [slim_channels(c, 0.35) for c in (64, 128, 256, 512)] == [22, 45, 90, 179]
    assert round(_params(_meta(resnet, 18, 10, width=0.35)) / 1e6, 2) == 1.37
    assert round(_params(_meta(resnet, 34, 100, width=0.4)) / 1e6, 2) == 3.42


def test_forward_shapes_and_factorized_layers():
    import torch

    from fedtheory.models.low_rank import LowRankConv2d
    from fedtheory.models.resnet import hybrid_resnet18, resnet34

    net = hybrid_resnet18(10, ratio=0.25).eval()
    assert net(torch.zeros(2, 3, 32, 32)).shape == (2, 10)
    low = [m for m in net.modules() if isinstance(m, LowRankConv2d)]
    assert len(low) == 14 and {m.rank for m in net.layer4.modules() if isinstance(m, LowRankConv2d)} == {128}
    assert _meta(resnet34, 200)(torch.zeros(1, 3, 64, 64, device="meta")).shape == (1, 200)


def test_bad_arguments():
    from fedtheory.models.resnet import hybrid_resnet, resnet

    with pytest.raises(ValueError, match="depth"):
        resnet(50, 10)
    with pytest.raises(ValueError, match="rho"):
        hybrid_resnet(18, 10, ratio=0.5, rho=40)
    with pytest.raises(ValueError, match="width"):
        resnet(18, 10, width=0.0)
    with pytest.raises(ValueError, match="num_classes"):
        resnet(18, 0)
