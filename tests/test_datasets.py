"""Bundled data sets and partitioners."""

import numpy as np
import pytest

from fedtheory.problems.datasets import federate, load_dataset, partition_dirichlet, partition_iid, substitute_sentence


@pytest.mark.parametrize(
    "name, shape",
    [
        ("digits", (1797, 64)),
        ("breast_cancer", (569, 30)),
        ("iris", (150, 4)),
        ("wine", (178, 13)),
        ("ijcnn1_like", (5000, 22)),
    ],
)
def test_shapes_and_standardization(name, shape):
    X, y = load_dataset(name)
    assert X.shape == shape and y.shape == (shape[0],)
    sd = X.std(axis=0)
    assert np.allclose(X.mean(axis=0), 0, atol=1e-12)
    assert np.allclose(sd[sd > 0], 1, atol=1e-12)


def test_generated_set_is_seeded():
    assert np.array_equal(load_dataset("ijcnn1_like", seed=3)[0], load_dataset("ijcnn1_like", seed=3)[0])
    assert not np.array_equal(load_dataset("ijcnn1_like", seed=3)[0], load_dataset("ijcnn1_like", seed=4)[0])


def test_unknown_dataset_names_the_substitute():
    with pytest.raises(ValueError, match="for CIFAR-10 use its substitute 'digits'"):
        load_dataset("cifar-10")


def test_partitions_cover_every_sample_once():
    y = load_dataset("digits")[1]
    for parts in (partition_iid(y.size, 7, seed=0), partition_dirichlet(y, 7, 0.2, seed=0)):
        allidx = np.concatenate(parts)
        assert np.array_equal(np.sort(allidx), np.arange(y.size))


def test_dirichlet_concentration_controls_heterogeneity():
    y = load_dataset("digits")[1]

    def label_skew(alpha):
        parts = partition_dirichlet(y, 10, alpha, seed=1)
        hist = np.array([np.bincount(y[p], minlength=10) / len(p) for p in parts])
        return float(np.abs(hist - np.bincount(y) / y.size).sum(axis=1).mean())

    assert label_skew(0.05) > 2 * label_skew(100.0)
    assert partition_dirichlet(y, 10, 0.3, seed=5)[0].tolist() == partition_dirichlet(y, 10, 0.3, seed=5)[0].tolist()


def test_bad_partitions():
    with pytest.raises(ValueError, match="alpha must be > 0"):
        partition_dirichlet(np.zeros(10), 2, 0.0)
    with pytest.raises(ValueError, match="n_clients"):
        partition_iid(3, 4)


def test_federate_and_substitute_sentence():
    X, y = load_dataset("breast_cancer")
    fed = federate(X, y, partition_iid(y.size, 4, seed=0), model="logistic", l2=0.1)
    assert fed.counts.sum() == y.size and set(np.unique(fed.y[fed.mask > 0])) == {-1.0, 1.0}
    with pytest.raises(ValueError, match="binary labels"):
        federate(*load_dataset("iris"), partition_iid(150, 3), model="logistic")
    assert "the paper used MNIST" in substitute_sentence("MNIST", "digits")
