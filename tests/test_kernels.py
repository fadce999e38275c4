"""Kernels, RKHS functions and federated kernel-regression data (fedtheory.problems.kernels)."""

import numpy as np
import pytest

from fedtheory.problems.kernels import (
    KERNEL_FAMILIES,
    FeatureFunction,
    GaussianKernel,
    KernelExpansion,
    KernelFederation,
    LinearKernel,
    MercerSeries,
    MonomialKernel,
    PolynomialKernel,
    PrecomputedKernel,
    RandomFeatureKernel,
    ReluNTKKernel,
    SobolevKernel,
    empirical_norm,
    gram_federation,
    normalized_gram,
    random_kernel_federation,
    rkhs_inner,
    rkhs_norm,
)

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "kernel,points",
    [
        (GaussianKernel(0.3), RNG.uniform(size=(12, 2))),
        (SobolevKernel(), RNG.uniform(size=12)),
        (PolynomialKernel(3, 0.5), RNG.normal(size=(12, 2))),
        (LinearKernel(), RNG.normal(size=(12, 3))),
        (MonomialKernel(4), RNG.uniform(-1, 1, size=12)),
        (RandomFeatureKernel(2, 7, seed=1), RNG.normal(size=(12, 2))),
        (ReluNTKKernel(), RNG.normal(size=(12, 3))),
    ],
)
def test_gram_matrices_are_symmetric_psd(kernel, points):
    G = kernel(points)
    assert np.allclose(G, G.T, atol=1e-14)
    assert np.linalg.eigvalsh(0.5 * (G + G.T))[0] >= -1e-10 * np.abs(G).max()
    assert np.allclose(kernel.diag(points), np.diag(G), atol=1e-14)


@pytest.mark.parametrize(
    "kernel,points,rank",
    [
        (PolynomialKernel(2, 1.0), RNG.normal(size=(9, 2)), 6),
        (PolynomialKernel(3, 0.0), RNG.normal(size=(9, 2)), 4),
        (LinearKernel(), RNG.normal(size=(9, 3)), 3),
        (MonomialKernel(5), RNG.uniform(-1, 1, size=9), 6),
        (RandomFeatureKernel(2, 5, seed=3), RNG.normal(size=(9, 2)), 5),
    ],
)
def test_feature_maps_reproduce_the_kernel(kernel, points, rank):
    F = kernel.features(points)
    p = points.shape[1] if points.ndim == 2 else 1
    assert F.shape[1] == rank == kernel.finite_rank(p)
    assert np.allclose(F @ F.T, kernel(points), atol=1e-12)


def test_infinite_rank_kernels_have_no_feature_map():
    with pytest.raises(ValueError, match="infinite-dimensional"):
        GaussianKernel().features([0.0])
    assert SobolevKernel().finite_rank() is None


def test_sobolev_mercer_expansion_reproduces_the_kernel():
    k = SobolevKernel()
    x = np.array([0.1, 0.45, 0.9])
    L = 40000
    Phi = k.mercer_eigenfunctions(x, L)
    approx = (Phi * k.mercer_eigenvalues(L)[None, :]) @ Phi.T
    assert np.allclose(approx, k(x), atol=5e-5)


def test_reproducing_property_and_norms():
    k = GaussianKernel(0.4)
    c = np.array([0.3, 0.7, 0.95])
    f = KernelExpansion(k, c, [1.0, -2.0, 0.5])
    x = np.array([0.2])
    # ⟨f, k_x⟩ = f(x)
    assert np.isclose(rkhs_inner(f, KernelExpansion(k, x, [1.0])), f.values(x)[0])
    assert np.isclose(rkhs_norm(f) ** 2, f.coef @ k(c) @ f.coef)
    # linear kernel: the expansion and the feature function are one element of ℋ
    lin = LinearKernel()
    X = RNG.normal(size=(4, 3))
    a = RNG.normal(size=4)
    e = KernelExpansion(lin, X, a)
    g = FeatureFunction(lin, X.T @ a)
    assert np.isclose(rkhs_norm(e), rkhs_norm(g))
    assert np.isclose(rkhs_inner(e, g), g.norm_sq())
    # Mercer series against an expansion: ⟨Σβφ, k_x⟩ = Σβφ(x)
    m = MercerSeries(SobolevKernel(), [1.0, 0.2])
    assert np.isclose(rkhs_inner(m, KernelExpansion(SobolevKernel(), [0.4], [2.0])), 2 * m.values([0.4])[0])
    assert np.isclose(empirical_norm([1.0, -1.0, 1.0, -1.0]), 1.0)


def test_relu_ntk_is_accurate_for_nearly_parallel_inputs():
    k = ReluNTKKernel()
    X = np.array([[1.0, 0.0], [1.0, 1e-9]])
    # angle 1e-9: k = (π − 1e-9)/(2π); arccos of a rounded cosine would be off by ~1e-8
    assert abs(k(X)[0, 1] - (np.pi - 1e-9) / (2 * np.pi)) < 1e-15
    with pytest.raises(ValueError, match="non-zero inputs"):
        k([[0.0, 0.0]])


def test_precomputed_kernel_validates():
    with pytest.raises(ValueError, match="positive semidefinite"):
        PrecomputedKernel([[1.0, 2.0], [2.0, 1.0]])
    k = PrecomputedKernel(np.eye(3))
    with pytest.raises(ValueError, match="point indices"):
        k([0.5])


def test_federation_normalisations_and_unbalanced_clients():
    k = GaussianKernel(0.5)
    xs = [RNG.uniform(size=2), RNG.uniform(size=5), RNG.uniform(size=1)]
    fed = KernelFederation(k, xs, [np.zeros(2), np.zeros(5), np.zeros(1)])
    assert fed.N == 8 and fed.counts.tolist() == [2, 5, 1]
    assert np.allclose(fed.weights, [2 / 8, 5 / 8, 1 / 8])
    assert np.allclose(fed.K_x, normalized_gram(k, np.concatenate(xs)))
    blocks = fed.client_blocks()
    for i, sl in enumerate(fed.slices):
        n = fed.counts[i]
        assert np.allclose(blocks[i, :n, :n], k(xs[i]) / n)
        assert np.all(blocks[i, n:, :] == 0) and np.all(blocks[i, :, n:] == 0)
    assert np.isclose(fed.gamma(2.0), 2.0 * max(np.linalg.eigvalsh(k(x) / len(x))[-1] for x in xs))


def test_federation_bad_input_messages():
    with pytest.raises(ValueError, match="same number"):
        KernelFederation(LinearKernel(), [[[1.0]]], [])
    with pytest.raises(ValueError, match="client 0"):
        KernelFederation(LinearKernel(), [[[1.0], [2.0]]], [[1.0]])
    with pytest.raises(ValueError, match="noise_sd"):
        KernelFederation(LinearKernel(), [[[1.0]]], [[1.0]], noise_sd=-1.0)


@pytest.mark.parametrize("family", KERNEL_FAMILIES)
def test_random_federations_are_valid_and_seeded(family):
    a = random_kernel_federation(np.random.default_rng(5), family=family, M=3)
    b = random_kernel_federation(np.random.default_rng(5), family=family, M=3)
    assert a.M == 3 and np.array_equal(a.y, b.y)
    assert np.allclose(a.truth_values(), np.concatenate([t.values(x) for t, x in zip(a.truths, a.xs)]))


def test_gram_federation_uses_indices():
    fed = gram_federation(np.diag([1.0, 2.0, 3.0, 4.0]), [1, 2])
    assert fed.x.ravel().tolist() == [0.0, 1.0, 2.0]
    assert np.allclose(fed.gram, np.diag([1.0, 2.0, 3.0]))
