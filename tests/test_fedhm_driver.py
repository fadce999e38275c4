"""The FedHM driver (Algorithms 1–2): layouts, server factorization, equivalence with FedAvg at full rank, padding,
eq. (2) weights, the Appendix B trace, and HeteroFL's width slimming."""

import importlib.util

import numpy as np
import pytest

from fedtheory.algorithms.fedhm import (
    FactorizedLayer,
    FactorSpace,
    FedHM,
    HybridLayout,
    run_fedhm,
    server_factors,
    softmax_weights,
    truncated_model,
)
from fedtheory.algorithms.local_update import LocalUpdate, run_local_update
from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def _uniform(fed_cls, n=4, d=13, seed=0):
    base = fed_cls.random(n=n, m=[12, 20, 9, 15][:n], d=d, seed=seed)
    feats = [base.a[i, : base.counts[i]] for i in range(n)]
    targs = [base.y[i, : base.counts[i]] for i in range(n)]
    return fed_cls(feats, targs, p=np.full(n, 1.0 / n), l2=0.01)


@pytest.mark.parametrize("fed_cls", [LeastSquaresFederation, LogisticFederation])
@pytest.mark.parametrize(
    "M,scheme,B", [(None, "with_replacement", None), (2, "with_replacement", 3), (3, "without_replacement", 4)]
)
def test_full_rank_is_fedavg_iterate_for_iterate(fed_cls, M, scheme, B):
    fed = _uniform(fed_cls)
    layout = HybridLayout.matrix(3, 4, offset=1, d=13)
    x0 = np.random.default_rng(3).normal(size=13) * 0.3
    kw = dict(batch_size=B, clients_per_round=M, client_sampling=scheme, seed=11)
    a = run_fedhm(fed, layout, FedHM((1.0,), 4, 0.05), x0, 12, **kw).x
    b = run_local_update(fed, LocalUpdate.fedavg(4, 0.05), x0, 12, **kw).to_numpy().x
    assert np.max(np.abs(a - b)) <= 1e-13 * (1 + np.max(np.abs(b)))


def test_padded_batched_clients_match_clients_run_alone():
    fed = _uniform(LogisticFederation)
    layout = HybridLayout.matrix(3, 4, offset=1, d=13)
    algo = FedHM((1.0, 0.67, 0.34), 3, 0.1, convention="matrix", dense_full_rank=False)
    x0 = np.random.default_rng(4).normal(size=13)
    levels = np.array([0, 1, 2, 1])
    together = run_fedhm(fed, layout, algo, x0, 5, levels=levels, seed=0, evaluate=False).x
    for p in range(4):  # the round's model of client p alone, at its own rank, from the same server model
        alone = run_fedhm(
            LogisticFederation([fed.a[p, : fed.counts[p]]], [fed.y[p, : fed.counts[p]]], l2=fed.l2),
            layout,
            FedHM((algo.ratios[levels[p]],), 3, 0.1, convention="matrix", dense_full_rank=False),
            together[2],
            1,
            evaluate=False,
        ).x[1]
        step = run_fedhm(fed, layout, algo, together[2], 1, levels=levels, seed=0, evaluate=False, trace=True)
        W = step.trace["space"].w(step.trace["h_end"][0][p])
        assert np.allclose(W, alone, atol=1e-13)


def test_trace_is_the_sgd_sequence_and_padding_stays_zero():
    fed = _uniform(LogisticFederation)
    layout = HybridLayout.matrix(3, 4, offset=1, d=13)
    algo = FedHM((1.0, 0.34), 3, 0.2, convention="matrix", dense_full_rank=False)
    h = run_fedhm(
        fed, layout, algo, np.ones(13) * 0.2, 3, levels=[0, 1, 0, 1], batch_size=2, seed=5, trace=True, evaluate=False
    )
    tr = h.trace
    for t in range(tr["h"].shape[0] - 1):
        if (t + 1) % 3:
            assert np.allclose(tr["h"][t + 1], tr["h"][t] - 0.2 * tr["G"][t], atol=1e-14)
    ((U, V),) = tr["space"].factors(tr["h"][:, 1])  # client 1, rank ⌊0.34·3⌋ = 1 of r_max 3
    assert np.all(U[..., 1:] == 0) and np.all(V[..., 1:] == 0)
    # the server model is the plain average (τ = ∞) of the recovered client models
    assert np.allclose(h.x[1], tr["space"].w(tr["h_end"][0]).mean(0), atol=1e-14)


def test_softmax_weights_and_dynamic_levels_are_reproducible():
    assert np.allclose(softmax_weights([1.0, 0.5, 0.25], 5.0).sum(), 1.0)
    assert softmax_weights([1.0, 0.5], 5.0)[0] > 0.5
    with pytest.raises(ValueError, match="tau"):
        softmax_weights([1.0], 0.0)
    fed = _uniform(LogisticFederation)
    layout = HybridLayout.matrix(3, 4, offset=1, d=13)
    algo = FedHM((1.0, 0.5), 2, 0.1, tau=5.0)
    a = run_fedhm(fed, layout, algo, np.zeros(13), 4, levels="dynamic", seed=2, evaluate=False)
    b = run_fedhm(fed, layout, algo, np.zeros(13), 4, levels="dynamic", seed=2, evaluate=False)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.levels, b.levels)
    assert np.allclose(a.weights.sum(axis=1), 1.0)


def test_server_factors_truncation_and_level_sizes():
    layout = HybridLayout.matrix(3, 3, offset=0, d=9)
    w = np.diag([3.0, 2.0, 1.0]).ravel()
    assert np.allclose(truncated_model(w, layout, [2]), np.diag([3.0, 2.0, 0.0]).ravel())
    ((U, V),) = server_factors(w, layout, [1], pad_to=[3])
    assert U.shape == (3, 3) and np.allclose(U @ V.T, np.diag([3.0, 0, 0]))
    algo = FedHM((1.0, 0.34), 2, 0.1)
    assert [algo.level_params(layout, i) for i in range(2)] == [9, 6]  # rank 1: 1·(3 + 3)


def test_layer_kinds_roundtrip_and_bad_inputs():
    rng = np.random.default_rng(0)
    for layer in (
        FactorizedLayer("a", 2, (3, 5), "matrix"),
        FactorizedLayer("b", 0, (4, 3), "linear"),
        FactorizedLayer("c", 1, (2, 3, 3, 3), "conv"),
    ):
        w = rng.normal(size=(2, layer.offset + layer.size))
        M = layer.to_matrix(w)
        assert M.shape == (2, layer.m, layer.n)
        assert np.array_equal(layer.from_matrix(M), w[:, layer.offset :])
    assert FactorizedLayer("b", 0, (4, 3), "linear").to_matrix(np.arange(12.0))[0, 1] == 3.0  # W = weightᵀ
    with pytest.raises(ValueError, match="kind"):
        FactorizedLayer("x", 0, (2, 2), "tucker")
    with pytest.raises(ValueError, match="overlaps"):
        HybridLayout(8, (FactorizedLayer("a", 0, (2, 2), "matrix"), FactorizedLayer("b", 2, (2, 2), "matrix")))
    fed = _uniform(LogisticFederation)
    with pytest.raises(ValueError, match="layout is for"):
        run_fedhm(fed, HybridLayout.matrix(2, 2), FedHM((1.0,), 1, 0.1), np.zeros(13), 1)
    with pytest.raises(ValueError, match="levels"):
        run_fedhm(
            fed, HybridLayout.matrix(3, 4, offset=1, d=13), FedHM((1.0,), 1, 0.1), np.zeros(13), 1, levels=[0, 1, 0, 0]
        )
    with pytest.raises(ValueError, match="trace needs every level factorized"):
        run_fedhm(fed, HybridLayout.matrix(3, 4, offset=1, d=13), FedHM((1.0,), 1, 0.1), np.zeros(13), 1, trace=True)
    with pytest.raises(ValueError, match="rank ratios"):
        FedHM((0.0,), 1, 0.1)


def test_factor_space_gradient_is_the_chain_rule():
    rng = np.random.default_rng(1)
    fed = _uniform(LogisticFederation)
    space = FactorSpace(HybridLayout.matrix(3, 4, offset=1, d=13), (3,))
    h = rng.normal(size=space.dim)
    g = space.grad(h, fed.grad(space.w(h)))
    eps = 1e-6
    for i in rng.choice(space.dim, size=6, replace=False):
        e = np.zeros(space.dim)
        e[i] = eps
        fd = (fed.loss(space.w(h + e)) - fed.loss(space.w(h - e))) / (2 * eps)
        assert abs(fd - g[i]) < 1e-7


@needs_torch
def test_network_layout_and_heterofl_masks():
    import torch

    from fedtheory.algorithms.width_slimming import run_heterofl, slimming_masks
    from fedtheory.models.federation import TorchModelFederation
    from fedtheory.models.networks import digits_cnn, mlp
    from fedtheory.problems.datasets import load_dataset, partition_iid

    cnn = digits_cnn((4, 8), seed=0)
    lay = HybridLayout.from_module(cnn, rho=1)
    assert [(l.kind, l.m, l.n) for l in lay.layers] == [("conv", 12, 24)]
    X, y = load_dataset("iris")
    parts = partition_iid(150, 3, seed=0)
    net = mlp(4, [8], 3, seed=0)
    fed = TorchModelFederation(net, [X[p] for p in parts], [y[p] for p in parts], p=np.full(3, 1 / 3))
    x0 = fed.initial_point()
    # HeteroFL with every client at full width is FedAvg
    a = run_heterofl(fed, slimming_masks(net, [1.0]), x0, 4, local_steps=3, lr=0.1, batch_size=5, seed=1).x
    b = run_local_update(fed, LocalUpdate.fedavg(3, 0.1), x0, 4, batch_size=5, seed=1).to_numpy().x
    assert np.max(np.abs(a - b)) < 1e-13
    # FedHM at full rank on a network is FedAvg too
    lay = HybridLayout.from_module(net, rho=0, keep_last_dense=False)
    c = run_fedhm(fed, lay, FedHM((1.0,), 3, 0.1), x0, 4, batch_size=5, seed=1, evaluate=False).x
    assert np.max(np.abs(c - b)) < 1e-13
    # a slimmed client's masked coordinates stay zero
    masks = slimming_masks(net, [1.0, 0.5])
    h = run_heterofl(fed, masks, x0, 2, local_steps=2, lr=0.1, levels=[1, 1, 1], seed=0)
    assert np.array_equal(h.x[-1][masks[1] == 0], x0[masks[1] == 0])
    assert torch.is_tensor(torch.as_tensor(h.x))
