"""Table 1's parameter and MAC formulas, symbolic and counted on torch modules."""

import importlib.util

import pytest
import sympy as sp

from fedtheory.models.counting import SYMBOLS, TABLE_1, balanced_smaller_condition, table_1_value

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def test_table_1_formulas():
    m, n, k, r, H, W = SYMBOLS
    assert TABLE_1["vanilla_conv"]["params"] == m * n * k**2
    assert sp.expand(TABLE_1["factorized_conv"]["params"] - (r * m * k + r * n * k)) == 0
    assert table_1_value("factorized_fc", "params", m=10, n=4, r=2) == 28
    with pytest.raises(ValueError, match="needs"):
        table_1_value("vanilla_conv", "macs", m=1, n=1, k=3)
    with pytest.raises(ValueError, match="unknown Table 1 row"):
        table_1_value("tucker", "params")


def test_balanced_condition():
    m, n, k, r, H, W = SYMBOLS
    cond = balanced_smaller_condition()
    for mm, nn, kk in [(4, 10, 3), (4, 12, 3), (4, 13, 3), (8, 8, 5)]:
        ours = table_1_value("factorized_conv", "params", m=mm, n=nn, k=kk, r=2)
        theirs = table_1_value("pufferfish_conv", "params", m=mm, n=nn, k=kk, r=2)
        assert (ours < theirs) == bool(cond.subs({n: nn, k: kk, m: mm}))


@needs_torch
def test_counts_on_modules_match_the_formulas_at_stride_one():
    import torch

    from fedtheory.models.counting import count, pufferfish_conv
    from fedtheory.models.low_rank import LowRankConv2d, LowRankLinear

    m, n, k, r, H = 6, 10, 3, 4, 8
    cases = {
        "vanilla_fc": (torch.nn.Linear(m, n, bias=False), (m,)),
        "factorized_fc": (LowRankLinear(m, n, r, bias=False), (m,)),
        "vanilla_conv": (torch.nn.Conv2d(m, n, k, padding=1, bias=False), (m, H, H)),
        "factorized_conv": (LowRankConv2d(m, n, k, r, padding=1, bias=False), (m, H, H)),
        "pufferfish_conv": (pufferfish_conv(m, n, k, r, padding=1), (m, H, H)),
    }
    for row, (mod, shape) in cases.items():
        c = count(mod, shape)
        assert c.params == table_1_value(row, "params", m=m, n=n, k=k, r=r)
        assert c.macs == table_1_value(row, "macs", m=m, n=n, k=k, r=r, H=H, W=H)


@needs_torch
def test_group_counts_sum_to_the_total_and_elementwise_adds_operations():
    import torch

    from fedtheory.models.counting import count, count_by_group
    from fedtheory.models.resnet import STAGES, resnet18

    with torch.device("meta"):
        net = resnet18(10)
    groups = count_by_group(net, (3, 32, 32), STAGES)
    total = count(net, (3, 32, 32))
    assert sum(g["params"] for g in groups.values()) == total.params == 11_173_962
    assert sum(g["macs"] for g in groups.values()) == total.macs
    assert count(net, (3, 32, 32), elementwise=True).macs > total.macs
    with pytest.raises(ValueError, match="no group"):
        count_by_group(net, (3, 32, 32), STAGES[:-1])
