"""What the drivers share about clients: a quadratic federation's arrays on a backend, client sampling, and the levels
of model-heterogeneous clients.

Below both the LocalUpdate driver (:mod:`fedtheory.algorithms.local_update`) and the methods-as-data simulator
(:mod:`fedtheory.methods.simulate`), which the driver calls: each imports these from here, so neither imports the
other to get them.

>>> from fedtheory.backends import get_backend
>>> from fedtheory.problems.quadratic import make_quadratic
>>> F = prepare_quadratic(make_quadratic(n=3, d=2, mu=1.0, L=10.0, seed=0), get_backend("numpy"))
>>> F.n, F.d, tuple(F.A.shape)
(3, 2, (3, 2, 2))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CLIENT_SAMPLING",
    "ClientLevels",
    "ClientSampler",
    "QuadraticArrays",
    "batch_stream",
    "prepare_quadratic",
]

CLIENT_SAMPLING = ("with_replacement", "without_replacement")


@dataclass
class QuadraticArrays:
    """A quadratic federation's arrays on one backend/device (converted once per run): what the drivers' round
    kernels and client programs (MAML) read."""

    A: Any  # (n, d, d)
    c: Any  # (n, d)
    p: Any  # (n,)
    eigvals: Any  # (n, d)
    eigvecs: Any  # (n, d, d), A_i = V_i diag(λ_i) V_iᵀ
    n: int
    d: int


def prepare_quadratic(problem: Any, be) -> QuadraticArrays:
    """The federation's arrays on ``be``: from a QuadraticFederation (via its ``on``), from the
    ``FederationArrays`` that ``on`` returns, or passed through when already prepared."""
    if isinstance(problem, QuadraticArrays):
        return problem
    arrays = problem if isinstance(problem, dict) else problem.on(be)
    conv = be.asarray  # a no-op for arrays already on ``be`` (it keeps the autograd graph)
    A = conv(arrays["A"])
    n, d = int(A.shape[0]), int(A.shape[1])
    return QuadraticArrays(
        A=A,
        c=conv(arrays["c"]),
        p=conv(arrays["p"]),
        eigvals=conv(arrays["eigvals"]),
        eigvecs=conv(arrays["eigvecs"]),
        n=n,
        d=d,
    )


@dataclass(frozen=True)
class ClientSampler:
    """Algorithm 1's I_t: M clients per round and the weights that make q_t unbiased for Σ p_i q^i.

    ``"with_replacement"``: i.i.d. draws from P, q_t = (1/M) Σ_{i∈I_t} q^i (the paper's Algorithm 1);
    ``"without_replacement"``: M distinct clients uniformly, q_t = Σ_{i∈I_t} (n p_i/M) q^i (the
    paper's experiments sample without replacement within a round). ``M=None``: every client, weights p.

    >>> s = ClientSampler(M=2, scheme="without_replacement")
    >>> idx, w = s.draw(np.random.default_rng(0), np.array([0.5, 0.25, 0.25]))
    >>> len(set(idx.tolist())), float(w.sum() * 0 + len(w))
    (2, 2.0)
    """

    M: int | None = None
    scheme: str = "with_replacement"

    def __post_init__(self) -> None:
        if self.scheme not in CLIENT_SAMPLING:
            raise ValueError(f"client_sampling must be one of {CLIENT_SAMPLING}, got {self.scheme!r}")
        if self.M is not None and (isinstance(self.M, bool) or int(self.M) != self.M or self.M < 1):
            raise ValueError(f"clients_per_round M must be a positive integer, got {self.M!r}")

    def draw(self, rng: np.random.Generator, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(client indices, aggregation weights) for one round."""
        n = p.shape[0]
        if self.M is None:
            return np.arange(n), p
        M = int(self.M)
        if self.scheme == "with_replacement":
            return rng.choice(n, size=M, replace=True, p=p / p.sum()), np.full(M, 1.0 / M)
        if M > n:
            raise ValueError(f"clients_per_round M={M} exceeds the n={n} clients (sampling without replacement)")
        idx = rng.choice(n, size=M, replace=False)
        return idx, p[idx] * (n / M)


@dataclass(frozen=True)
class ClientLevels:
    """Which model level (sub-network, rank ratio) each sampled client trains: fixed per client, or drawn uniformly
    each round from a stream of its own (the dynamic setting), so the level draws never shift the batch and client
    draws of the run's main stream. What the model-heterogeneous drivers (FedHM, HeteroFL) share.

    ``levels``: one level index per client (length n), ``"dynamic"``, or None (every client at level 0). The dynamic
    stream is spawned from ``seed`` (an int, or None for fresh entropy; a Generator seed gives fresh entropy too).
    ``what`` names the level in the ValueError for a bad index.

    >>> cl = ClientLevels.of([0, 1, 1], n=3, count=2, seed=0)
    >>> cl.draw(np.array([2, 0])).tolist()
    [1, 0]
    >>> ClientLevels.of("dynamic", n=3, count=2, seed=0).draw(np.arange(4)).shape
    (4,)
    >>> ClientLevels.of([0, 2, 0], n=3, count=2, seed=0)
    Traceback (most recent call last):
    ...
    ValueError: levels must give each of the n=3 clients a level in 0..1, got [0, 2, 0]
    """

    fixed: np.ndarray | None
    rng: np.random.Generator | None
    count: int

    @classmethod
    def of(cls, levels: Any, *, n: int, count: int, seed: Any, what: str = "a level") -> "ClientLevels":
        if isinstance(levels, str):
            if levels != "dynamic":
                raise ValueError(f"levels must be per-client level indices or 'dynamic', got {levels!r}")
            entropy = None if seed is None or isinstance(seed, np.random.Generator) else int(seed)
            return cls(None, np.random.default_rng(np.random.SeedSequence(entropy).spawn(1)[0]), count)
        fixed = np.zeros(n, dtype=np.int64) if levels is None else np.asarray(levels, dtype=np.int64).ravel()
        if fixed.shape != (n,) or fixed.min() < 0 or fixed.max() >= count:
            raise ValueError(f"levels must give each of the n={n} clients {what} in 0..{count - 1}, got {levels!r}")
        return cls(fixed, None, count)

    def draw(self, clients: np.ndarray) -> np.ndarray:
        """The levels of this round's ``clients`` (the dynamic setting draws one per entry, in order)."""
        if self.fixed is not None:
            return self.fixed[clients]
        assert self.rng is not None  # dynamic levels: drawn each round
        return self.rng.integers(self.count, size=len(clients))


def batch_stream(seed: Any, counts: Any, batch_size: int | None) -> np.random.Generator:
    """The main random stream of a model-heterogeneous run (its clients and mini-batches): with mini-batches, one
    validation draw of ``sample_batches`` first (it raises on a batch larger than a client's data, before any
    work), then, when ``seed`` is not a Generator, the stream started afresh from ``seed``, so an int seed's
    draws do not depend on whether a batch size was given (a Generator keeps the validation draw).

    >>> int(batch_stream(0, np.array([4, 4]), 2).integers(100)) == int(np.random.default_rng(0).integers(100))
    True
    """
    from fedtheory.problems.finite_sum import sample_batches

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if batch_size is not None:
        sample_batches(rng, counts, int(batch_size))
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return rng
