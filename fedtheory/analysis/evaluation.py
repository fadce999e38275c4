"""Evaluating trained networks and tuning hyperparameters on a grid, for the experiments of papers.

A :class:`~fedtheory.models.federation.TorchModelFederation` trains a network whose parameters are one
flat vector x; the LocalUpdate driver's :class:`~fedtheory.algorithms.local_update.History` keeps every
server iterate x_t. This module scores those iterates on data the clients never saw:

* :func:`holdout_split`: a seeded, class-stratified train/test split (scikit-learn's
  ``train_test_split``), the stand-in for a data set's own test clients;
* :func:`network_outputs`, :func:`accuracy`, :func:`cross_entropy`: the network at many parameter
  vectors at once (``vmap`` over the rows of X), on any features and labels; rows holding a
  non-finite parameter score NaN (a diverged run has no accuracy, rather than the accuracy of argmax
  over NaN logits);
* :func:`tail_mean`: the average over the last rounds (how Charles & Konečný select learning rates,
  "best average test accuracy over the last 100 rounds"), with diverged runs scoring ±inf;
* :func:`rounds_to_reach`: the first round at which a curve reaches a level (a convergence speed);
* :func:`scan_grid`: a line search over a grid of hyperparameter values, from the large end down,
  that stops at the first value not better than the best so far (the score taken as unimodal in the
  log of the value), so diverging values cost only a short probe and hopeless small values are not run.

>>> import numpy as np
>>> from fedtheory.models.networks import mlp
>>> from fedtheory.models.federation import TorchModelFederation
>>> from fedtheory.problems.datasets import load_dataset
>>> X, y = load_dataset("iris")
>>> train, test = holdout_split(y, 0.2, seed=0)
>>> fed = TorchModelFederation(mlp(4, [8], 3, seed=0), [X[train]], [y[train]])
>>> acc = accuracy(fed, np.stack([fed.initial_point()] * 2), X[test], y[test])
>>> acc.shape, bool(0.0 <= acc[0] <= 1.0), len(test)
((2,), True, 30)
"""

from __future__ import annotations

# the docstring examples build torch modules (tests/test_docstrings.py skips them without torch)
__doctest_requires__ = ("torch",)

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "accuracy",
    "cross_entropy",
    "holdout_split",
    "network_outputs",
    "rounds_to_reach",
    "scan_grid",
    "tail_mean",
]


def holdout_split(labels: Any, test_fraction: float = 0.2, *, seed: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """(train indices, test indices), sorted, with every class in the same proportion in both (seeded).

    >>> y = np.repeat([0, 1], [80, 20])
    >>> tr, te = holdout_split(y, 0.25, seed=3)
    >>> len(tr), len(te), int(y[te].sum())
    (75, 25, 5)
    >>> holdout_split(y, 1.5)
    Traceback (most recent call last):
    ...
    ValueError: test_fraction must lie in (0, 1), got 1.5
    """
    from sklearn.model_selection import train_test_split

    labels = np.asarray(labels)
    fraction = float(test_fraction)
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction}")
    state = int(seed.integers(2**31 - 1)) if isinstance(seed, np.random.Generator) else int(seed or 0)
    train, test = train_test_split(np.arange(labels.size), test_size=fraction, stratify=labels, random_state=state)
    return np.sort(train), np.sort(test)


def _rows(federation: Any, xs: Any) -> tuple[Any, bool]:
    import torch

    X = torch.as_tensor(np.asarray(xs.detach().cpu() if isinstance(xs, torch.Tensor) else xs, dtype=np.float64))
    if X.ndim not in (1, 2) or X.shape[-1] != federation.d:
        raise ValueError(f"parameters must have shape (d,) or (T, d) with d = {federation.d}, got {tuple(X.shape)}")
    return (X[None, :], True) if X.ndim == 1 else (X, False)


def network_outputs(federation: Any, xs: Any, features: Any) -> np.ndarray:
    """The federation's network at each parameter row of ``xs`` applied to ``features``: (T, N, out).

    ``xs``: (d,) or (T, d) flat parameter vectors (numpy or torch); ``features``: (N, ...) inputs.

    >>> from fedtheory.models.networks import mlp
    >>> from fedtheory.models.federation import TorchModelFederation
    >>> fed = TorchModelFederation(mlp(2, [], 1, seed=0), [np.ones((3, 2))], [np.zeros(3)], loss="mse")
    >>> x = np.array([1.0, 2.0, 0.5])                      # weight (1, 2), bias 0.5
    >>> network_outputs(fed, x, np.array([[1.0, 1.0], [0.0, 1.0]]))[0, :, 0].tolist()
    [3.5, 2.5]
    """
    import torch
    from torch.func import functional_call, vmap

    X, _ = _rows(federation, xs)
    A = torch.as_tensor(np.asarray(features, dtype=np.float64))
    module = federation.module

    def apply(flat: torch.Tensor) -> torch.Tensor:
        return functional_call(module, federation._params(flat), (A,))

    with torch.no_grad():
        return vmap(apply)(X).cpu().numpy()


def _finite_rows(federation: Any, xs: Any) -> np.ndarray:
    X, _ = _rows(federation, xs)
    return np.isfinite(X.numpy()).all(axis=1)


def accuracy(federation: Any, xs: Any, features: Any, labels: Any) -> Any:
    """Fraction of ``labels`` the network predicts (argmax of its outputs) at each row of ``xs``.

    Returns a float for one parameter vector (d,), an array (T,) for rows (T, d); NaN where a row
    holds a non-finite parameter.

    >>> from fedtheory.models.networks import mlp
    >>> from fedtheory.models.federation import TorchModelFederation
    >>> fed = TorchModelFederation(mlp(1, [], 2, seed=0), [np.ones((2, 1))], [np.zeros(2, dtype=int)])
    >>> x = np.array([1.0, -1.0, 0.0, 0.0])              # logits (a, -a): class 0 when a > 0
    >>> accuracy(fed, x, np.array([[1.0], [-2.0]]), np.array([0, 0]))
    0.5
    >>> accuracy(fed, np.stack([x, x * np.nan]), np.array([[1.0]]), np.array([0])).tolist()
    [1.0, nan]
    """
    _, single = _rows(federation, xs)
    out = network_outputs(federation, xs, features)
    hits = (out.argmax(axis=-1) == np.asarray(labels)[None, :]).mean(axis=1)
    hits = np.where(_finite_rows(federation, xs), hits, np.nan)
    return float(hits[0]) if single else hits


def cross_entropy(federation: Any, xs: Any, features: Any, labels: Any) -> Any:
    """Mean cross-entropy of the network's outputs (logits) against class ``labels``, per row of ``xs``.

    No ℓ2 term (this is a held-out loss); NaN for rows with non-finite parameters.

    >>> from fedtheory.models.networks import mlp
    >>> from fedtheory.models.federation import TorchModelFederation
    >>> fed = TorchModelFederation(mlp(1, [], 2, seed=0), [np.ones((2, 1))], [np.zeros(2, dtype=int)])
    >>> round(cross_entropy(fed, np.zeros(4), np.array([[3.0]]), np.array([1])), 12) == round(math.log(2), 12)
    True
    """
    import torch

    _, single = _rows(federation, xs)
    out = torch.as_tensor(network_outputs(federation, xs, features))
    y = torch.as_tensor(np.asarray(labels, dtype=np.int64))
    logp = torch.log_softmax(out, dim=-1)
    losses = -logp.gather(-1, y.expand(out.shape[0], -1)[..., None])[..., 0].mean(dim=1).numpy()
    losses = np.where(_finite_rows(federation, xs), losses, np.nan)
    return float(losses[0]) if single else losses


def tail_mean(values: Any, window: int, *, diverged: float = -math.inf) -> float:
    """Mean of the last ``window`` entries; ``diverged`` (default −inf) if any entry is non-finite.

    Use ``diverged=math.inf`` for a loss (smaller is better), the default for an accuracy.

    >>> tail_mean([0.1, 0.5, 0.7], 2)
    0.6
    >>> tail_mean([1.0, float("nan")], 1, diverged=math.inf)
    inf
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    w = int(window)
    if w < 1 or w > v.size:
        raise ValueError(f"window must satisfy 1 <= window <= {v.size} (the curve's length), got {window}")
    tail = v[-w:]
    if not np.all(np.isfinite(tail)):
        return float(diverged)
    return float(tail.mean())


def rounds_to_reach(values: Any, level: float, *, above: bool = True) -> float:
    """First index t with values[t] ≥ level (``above``) or ≤ level (``above=False``); inf if never.

    >>> rounds_to_reach([0.1, 0.4, 0.8, 0.9], 0.75)
    2.0
    >>> rounds_to_reach([2.3, 1.0, 0.5], 0.1, above=False)
    inf
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    hit = (v >= level) if above else (v <= level)
    hit &= np.isfinite(v)
    idx = np.flatnonzero(hit)
    return float(idx[0]) if idx.size else math.inf


def scan_grid(
    score: Callable[[float], float],
    grid: Sequence[float],
    *,
    maximize: bool = True,
    floor: float | None = None,
    patience: int = 3,
) -> dict:
    """Line search over ``grid`` from its largest value down; returns
    ``{"best", "best_score", "visited": [[value, score], ...], "stopped"}``.

    The score is taken as unimodal along the grid over the range where training makes progress (as
    a tail loss or accuracy is in the log of a learning rate): values above the stability limit
    diverge and score ∓inf (cheap when ``score`` probes them briefly), and once the score has peaked,
    smaller values only do worse. So the scan stops at the first value that is not better than the
    best so far, once the best is better than ``floor`` (the no-progress level, e.g. the accuracy of
    a constant predictor; ``None``: any finite score counts as progress). Before that, a value that
    makes no progress does not end the scan, but ``patience`` consecutive finite ones at the floor do
    (a stalled region). ``visited`` records every value tried, so the choice can be audited.

    >>> f = lambda v: -(math.log10(v) + 1.0) ** 2           # peak at 0.1
    >>> r = scan_grid(f, [10.0 ** e for e in (-3, -2, -1, 0, 1)])
    >>> r["best"], [v for v, _ in r["visited"]], r["stopped"]
    (0.1, [10.0, 1.0, 0.1, 0.01], 'past the peak')
    >>> g = lambda v: 0.1 if v >= 1 else 0.9 - abs(math.log10(v) + 1.0) / 10    # stalls for v >= 1
    >>> scan_grid(g, [10.0 ** e for e in (-3, -2, -1, 0, 1)], floor=0.1)["best"]
    0.1
    >>> scan_grid(g, [10.0 ** e for e in (-3, -2, -1, 0, 1)], floor=0.1, patience=1)["stopped"]
    'stalled'
    >>> scan_grid(lambda v: v, [1.0, 2.0], maximize=False)["best"]
    1.0
    """
    values = sorted({float(v) for v in grid}, reverse=True)
    if not values:
        raise ValueError("grid must hold at least one value")
    if int(patience) < 1:
        raise ValueError(f"patience must be a positive integer, got {patience}")
    sign = 1.0 if maximize else -1.0
    level = -math.inf if floor is None else sign * float(floor)
    best, best_score, visited, stalled, stopped = None, -math.inf * sign, [], 0, "grid exhausted"
    for v in values:
        s = float(score(v))
        visited.append([v, s])
        progressed = sign * best_score > level
        if best is None or sign * s > sign * best_score:
            best, best_score = v, s
        elif progressed:
            stopped = "past the peak"
            break
        if math.isfinite(s):  # a diverged value neither counts as stalled nor resets the count
            stalled = 0 if sign * s > level else stalled + 1
            if stalled >= int(patience) and not sign * best_score > level:
                stopped = "stalled"
                break
    return {"best": best, "best_score": best_score, "visited": visited, "stopped": stopped}
