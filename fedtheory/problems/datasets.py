"""Bundled data and how it is split across clients.

Nothing here downloads anything: the data sets are scikit-learn's bundled ones (``digits``,
``breast_cancer``, ``iris``, ``wine``) or generated ones shaped like a paper's (``ijcnn1_like``). Where a
paper used MNIST, CIFAR, FEMNIST, Shakespeare or a LIBSVM file, :data:`SUBSTITUTES` names the stand-in
and :func:`substitute_sentence` gives the sentence a figure's ``substitute`` field carries.

Partitioners return one index array per client: :func:`partition_iid` (a seeded shuffle cut into near
equal parts) and :func:`partition_dirichlet` (per class, client shares drawn from Dirichlet(α·1); small α
is strongly non-IID). :func:`federate` turns (features, labels, parts) into a finite-sum federation.

>>> X, y = load_dataset("breast_cancer")
>>> X.shape, sorted(set(y.tolist()))
((569, 30), [0, 1])
>>> parts = partition_dirichlet(y, n_clients=5, alpha=0.5, seed=0)
>>> sum(len(p) for p in parts), min(len(p) for p in parts) >= 2
(569, True)
>>> fed = federate(X, y, parts, model="logistic", l2=1e-3)
>>> fed.n, fed.d
(5, 30)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "DATASETS",
    "SUBSTITUTES",
    "load_dataset",
    "substitute_sentence",
    "partition_iid",
    "partition_dirichlet",
    "federate",
]

DATASETS = ("digits", "breast_cancer", "iris", "wine", "ijcnn1_like")

#: what each stand-in replaces when a paper's data cannot be used offline
SUBSTITUTES = {
    "MNIST": "digits",
    "FEMNIST": "digits",
    "CIFAR-10": "digits",
    "CIFAR-100": "digits",
    "Shakespeare": "digits",
    "ijcnn1": "ijcnn1_like",
    "a9a": "breast_cancer",
    "w8a": "breast_cancer",
}


def _rng(seed: Any) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def load_dataset(name: str, *, standardize: bool = True, seed: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """(features (N, d) float64, labels (N,) int) of a bundled or generated data set.

    ``digits``: 1797 8×8 images, 10 classes (pixel values scaled to [0, 1] rather than standardized
    when ``standardize`` is False); ``breast_cancer``: 569 × 30, binary; ``iris``, ``wine``: small
    multi-class; ``ijcnn1_like``: ``make_classification`` with ijcnn1's shape (22 features, about 9.7 %
    positives), 5000 samples, seeded. ``standardize``: zero mean, unit variance per feature (constant
    features left at zero).

    >>> X, y = load_dataset("digits", standardize=False)
    >>> X.shape, float(X.max()), len(set(y.tolist()))
    ((1797, 64), 1.0, 10)
    >>> load_dataset("mnist")
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'mnist' (bundled: digits, breast_cancer, iris, wine, ijcnn1_like); for MNIST use its substitute 'digits'
    """
    key = str(name).strip().lower()
    if key not in DATASETS:
        hint = next((f"; for {k} use its substitute {v!r}" for k, v in SUBSTITUTES.items() if k.lower() == key), "")
        raise ValueError(f"unknown dataset {name!r} (bundled: {', '.join(DATASETS)}){hint}")
    from sklearn import datasets as skd

    if key == "ijcnn1_like":
        X, y = skd.make_classification(
            n_samples=5000,
            n_features=22,
            n_informative=12,
            n_redundant=4,
            weights=[0.903],
            flip_y=0.01,
            class_sep=1.0,
            random_state=_seed_int(seed),
        )
    else:
        loader = {
            "digits": skd.load_digits,
            "breast_cancer": skd.load_breast_cancer,
            "iris": skd.load_iris,
            "wine": skd.load_wine,
        }[key]
        bunch = loader()
        X, y = bunch.data, bunch.target
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    if standardize:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    elif key == "digits":
        X = X / 16.0
    return X, y


def _seed_int(seed: Any) -> int:
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**31 - 1))
    return int(seed or 0)


def substitute_sentence(paper_data: str, used: str, detail: str = "") -> str:
    """The sentence a figure's ``substitute`` field carries.

    >>> substitute_sentence("FEMNIST", "digits", "split across 20 clients by Dirichlet(0.3)")
    "Substitute data: the paper used FEMNIST; this figure uses scikit-learn's bundled digits (split across 20 clients by Dirichlet(0.3)), so the numbers are not the paper's."
    """
    what = (
        "scikit-learn's bundled digits"
        if used == "digits"
        else (
            "scikit-learn's bundled breast-cancer data"
            if used == "breast_cancer"
            else "a make_classification set shaped like ijcnn1"
            if used == "ijcnn1_like"
            else used
        )
    )
    extra = f" ({detail})" if detail else ""
    return f"Substitute data: the paper used {paper_data}; this figure uses {what}{extra}, so the numbers are not the paper's."


def partition_iid(n_samples: int, n_clients: int, seed: Any = None) -> list[np.ndarray]:
    """A seeded shuffle of range(n_samples) cut into ``n_clients`` parts whose sizes differ by at most 1.

    >>> [len(p) for p in partition_iid(10, 3, seed=0)]
    [4, 3, 3]
    """
    if n_clients < 1 or n_clients > n_samples:
        raise ValueError(f"need 1 <= n_clients <= n_samples, got n_clients={n_clients}, n_samples={n_samples}")
    perm = _rng(seed).permutation(n_samples)
    return [np.sort(p) for p in np.array_split(perm, n_clients)]


def partition_dirichlet(
    labels: Any, n_clients: int, alpha: float, *, seed: Any = None, min_size: int = 2, max_tries: int = 1000
) -> list[np.ndarray]:
    """Non-IID split: for each class, client shares ~ Dirichlet(α·1); redrawn until every client has
    ``min_size`` samples (the usual recipe of Hsu et al. 2019). Seeded; every sample goes to one client.

    >>> y = np.repeat(np.arange(4), 50)
    >>> parts = partition_dirichlet(y, 4, alpha=0.1, seed=1)
    >>> sorted(np.concatenate(parts).tolist()) == list(range(200))
    True
    """
    labels = np.asarray(labels)
    if not alpha > 0:
        raise ValueError(f"Dirichlet concentration alpha must be > 0, got {alpha}")
    if n_clients < 1 or n_clients * min_size > labels.size:
        raise ValueError(f"cannot give {n_clients} clients {min_size} samples each from {labels.size} samples")
    rng = _rng(seed)
    classes = np.unique(labels)
    for _ in range(max_tries):
        parts: list[list[int]] = [[] for _ in range(n_clients)]
        for c in classes:
            idx = rng.permutation(np.flatnonzero(labels == c))
            shares = rng.dirichlet(np.full(n_clients, float(alpha)))
            cuts = (np.cumsum(shares)[:-1] * idx.size).astype(int)
            for i, chunk in enumerate(np.split(idx, cuts)):
                parts[i].extend(chunk.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [np.sort(np.asarray(p, dtype=np.int64)) for p in parts]
    raise ValueError(
        f"no Dirichlet({alpha}) split gave every one of {n_clients} clients {min_size} samples "
        f"in {max_tries} draws; raise alpha or lower n_clients"
    )


def federate(X: Any, y: Any, parts: list, *, model: str = "logistic", l2: float = 0.0, positive_class: Any = None):
    """A finite-sum federation of the clients ``parts`` (index arrays into X, y).

    ``model="logistic"``: binary labels mapped to ±1 (``positive_class`` is +1; default the larger label);
    ``model="least_squares"``: y used as a real target.

    >>> X, y = load_dataset("iris")
    >>> fed = federate(X, (y == 0).astype(float), partition_iid(150, 3, seed=0), model="least_squares")
    >>> type(fed).__name__, fed.counts.tolist()
    ('LeastSquaresFederation', [50, 50, 50])
    """
    from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if model == "logistic":
        values = np.unique(y)
        if positive_class is None:
            if values.size != 2:
                raise ValueError(
                    f"logistic federation needs binary labels (or positive_class=...), got {values.size} classes"
                )
            positive_class = values.max()
        signs = np.where(y == positive_class, 1.0, -1.0)
        return LogisticFederation([X[p] for p in parts], [signs[p] for p in parts], l2=l2)
    if model == "least_squares":
        return LeastSquaresFederation([X[p] for p in parts], [np.asarray(y, dtype=np.float64)[p] for p in parts], l2=l2)
    raise ValueError(f"model must be 'logistic' or 'least_squares', got {model!r}")
