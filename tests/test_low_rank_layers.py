"""Low-rank factorization of FC and convolution layers (FedHM, Section 2.2): SVD factors, recovery, padding, layers."""

import importlib.util

import numpy as np
import pytest

from fedtheory.models.low_rank import (
    eckart_young_error,
    factorize,
    layer_rank,
    pad_factors,
    padded_average,
    recover,
    roll_conv,
    unroll_conv,
)

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def test_full_rank_factors_recover_the_matrix_and_truncation_attains_eckart_young():
    rng = np.random.default_rng(0)
    for m, n in [(5, 3), (3, 5), (4, 4), (1, 6)]:
        W = rng.normal(size=(m, n))
        U, V = factorize(W, min(m, n))
        assert np.allclose(recover(U, V), W, atol=1e-12)
        for r in range(1, min(m, n) + 1):
            U, V = factorize(W, r)
            assert U.shape == (m, r) and V.shape == (n, r)
            err = np.linalg.norm(W - recover(U, V))
            assert abs(err - eckart_young_error(W, r)) <= 1e-12 * (1 + np.linalg.norm(W))
            # balanced factors: UᵀU = VᵀV = Σ_r
            assert np.allclose(U.T @ U, V.T @ V, atol=1e-12)


def test_rank_beyond_the_matrix_pads_with_zero_columns():
    U, V = factorize(np.eye(2), 4)
    assert U.shape == (2, 4) and np.all(U[:, 2:] == 0) and np.allclose(recover(U, V), np.eye(2))


def test_eckart_young_norms_and_errors():
    W = np.diag([3.0, 2.0, 1.0])
    assert eckart_young_error(W, 3) == 0.0
    assert eckart_young_error(W, 0, norm="spectral") == 3.0
    with pytest.raises(ValueError, match="norm"):
        eckart_young_error(W, 1, norm="nuclear")
    with pytest.raises(ValueError, match="rank must be >= 1"):
        factorize(W, 0)


def test_padding_keeps_the_product_and_padded_average_pads_to_the_largest_rank():
    rng = np.random.default_rng(1)
    U, V = rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
    Up, Vp = pad_factors(U, V, 5)
    assert np.array_equal(recover(Up, Vp), recover(U, V))
    Ua, Va = padded_average([(U, V), (Up, Vp)], weights=[0.25, 0.75])
    assert Ua.shape == (4, 5) and np.allclose(Ua[:, :2], U) and np.all(Ua[:, 2:] == 0)
    with pytest.raises(ValueError, match="same rank"):
        pad_factors(U, V[:, :1], 3)
    with pytest.raises(ValueError, match="one weight per factor pair"):
        padded_average([(U, V)], weights=[0.5, 0.5])


def test_layer_rank_conventions():
    assert layer_rank(64, 64, 0.125, k=3) == 8  # Table 5: γ·c_out
    assert layer_rank(64, 128, 0.25, k=3) == 32
    assert layer_rank(64, 64, 0.125, k=3, convention="matrix") == 24  # Section 2.2: γ·min(mk, nk)
    assert layer_rank(128, 10, 0.3) == 3  # FC: γ·min(m, n), 0.3·10 is not 2.99…
    assert layer_rank(5, 5, 0.01) == 1  # at least rank 1
    with pytest.raises(ValueError, match="rank ratio"):
        layer_rank(4, 4, 1.5)
    with pytest.raises(ValueError, match="convention"):
        layer_rank(4, 4, 0.5, convention="tucker")


def test_unroll_and_roll_are_inverse_and_index_as_section_2_2():
    rng = np.random.default_rng(2)
    w = rng.normal(size=(5, 3, 3, 3))  # (out n, in m, k, k)
    W = unroll_conv(w)
    assert W.shape == (9, 15)
    assert W[2 * 3 + 1, 4 * 3 + 2] == w[4, 2, 1, 2]  # W[(i, a), (o, b)] = w[o, i, a, b]
    assert np.array_equal(roll_conv(W, 5, 3, 3), w)
    with pytest.raises(ValueError, match="square"):
        unroll_conv(np.zeros((2, 2, 3, 1)))


@needs_torch
@pytest.mark.parametrize("stride,padding,k", [(1, 1, 3), (2, 1, 3), (1, 0, 3), (2, 2, 5), (1, 0, 1)])
def test_low_rank_conv_is_the_dense_conv_with_the_recovered_weight(stride, padding, k):
    import torch

    from fedtheory.models.low_rank import LowRankConv2d, recovered_weight

    torch.manual_seed(0)
    layer = LowRankConv2d(4, 6, k, rank=3, stride=stride, padding=padding).double()
    x = torch.randn(2, 4, 9, 7, dtype=torch.float64)
    dense = torch.nn.functional.conv2d(x, recovered_weight(layer), layer.conv_v.bias, stride=stride, padding=padding)
    assert torch.allclose(layer(x), dense, atol=1e-12)


@needs_torch
def test_factorized_layer_spectral_initialization_and_set_factors():
    import torch

    from fedtheory.models.low_rank import LowRankLinear, factorized_layer, recovered_weight

    torch.manual_seed(1)
    conv = torch.nn.Conv2d(3, 4, 3, padding=1).double()
    full = factorized_layer(conv, rank=9)  # rank(W) = min(9, 12)
    x = torch.randn(1, 3, 5, 5, dtype=torch.float64)
    assert torch.allclose(full(x), conv(x), atol=1e-10)
    low = factorized_layer(conv, ratio=0.5)  # ⌊0.5·4⌋ = 2
    assert low.rank == 2
    err = torch.linalg.norm(recovered_weight(low) - conv.weight).item()
    assert abs(err - eckart_young_error(unroll_conv(conv.weight.detach().numpy()), 2)) < 1e-10
    lin = LowRankLinear(3, 2, 2).double()
    U, V = np.ones((3, 2)), np.arange(4.0).reshape(2, 2)
    lin.set_factors(U, V)
    assert np.allclose(recovered_weight(lin).detach().numpy(), (U @ V.T).T)
    with pytest.raises(ValueError, match="ratio"):
        factorized_layer(torch.nn.Linear(3, 2))
    with pytest.raises(ValueError, match="nn.Linear or nn.Conv2d"):
        factorized_layer(torch.nn.ReLU(), rank=1)
