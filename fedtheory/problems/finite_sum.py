r"""Finite-sum federations: clients that hold samples, so mini-batches and stochastic gradients exist.

Client i holds m_i samples z_{ij} = (a_{ij}, y_{ij}) and the loss

.. math:: f_i(x) = \frac{1}{m_i}\sum_{j=1}^{m_i} \ell(x; a_{ij}, y_{ij}) + \frac{\lambda}{2}\|x\|^2,

with weights p_i (default m_i / Σ m, the pooled empirical risk). Clients may be unbalanced: samples are
stored padded to (n, m_max, d) with a mask, so every gradient is one batched array operation (no
Python loop over clients or samples), on numpy or on torch (cpu or cuda).

Two losses ship: :class:`LeastSquaresFederation` (ℓ = ½(aᵀx − y)², linear regression) and
:class:`LogisticFederation` (ℓ = log(1 + exp(−y aᵀx)), y ∈ {−1, +1}). A least-squares federation is a
quadratic one: :meth:`LeastSquaresFederation.to_quadratic` gives the
:class:`~fedtheory.problems.quadratic.QuadraticFederation` with the same gradients.

The LocalUpdate driver (:func:`fedtheory.algorithms.local_update.run_local_update`) runs on these with
mini-batches of size B (``batch_size``) drawn without replacement from each client's samples. It
needs only this protocol, so any model whose clients hold samples (a torch network with a flat
parameter vector, say) can subclass :class:`FiniteSumFederation` and override it:

- ``n``, ``d``, ``p`` (n,), ``counts`` (n,) int: clients, parameter dimension, weights, samples per client;
- ``on(backend, device) -> dict`` with at least ``"backend"`` and ``"problem"`` (self);
- ``batched_grads(arrays, X, idx=None, clients=None) -> (k, d)``: each row's client gradient at its
  own point (``idx`` (k, B): mini-batch sample indices, ``None``: full local loss);
- ``loss_and_grad_norm(arrays, X) -> (F(x_t), ‖∇F(x_t)‖)`` for the rows x_t of ``X`` (T, d);
- ``x_star()`` (ValueError when there is no unique minimizer).

>>> import numpy as np
>>> fed = LeastSquaresFederation.random(n=3, m=[20, 30, 50], d=4, seed=0)
>>> fed.n, fed.d, fed.counts.tolist(), fed.p.tolist()
(3, 4, [20, 30, 50], [0.2, 0.3, 0.5])
>>> x = np.ones(4)
>>> bool(np.allclose(fed.grad(x), fed.to_quadratic().grad(x), atol=1e-12))
True
>>> bool(np.linalg.norm(fed.grad(fed.x_star())) < 1e-12)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FiniteSumFederation", "LeastSquaresFederation", "LogisticFederation", "sample_batches", "check_batch_size"]


def _as_rng(seed: Any) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def check_batch_size(B: int, counts: np.ndarray) -> None:
    """ValueError unless 1 ≤ B ≤ min_i m_i (a mini-batch is drawn without replacement from one client).

    >>> check_batch_size(3, np.array([2, 5]))
    Traceback (most recent call last):
    ...
    ValueError: batch size B must satisfy 1 <= B <= min_i m_i = 2, got B=3
    """
    m = int(np.min(counts))
    if B < 1 or B > m:
        raise ValueError(f"batch size B must satisfy 1 <= B <= min_i m_i = {m}, got B={B}")


def sample_batches(
    rng: np.random.Generator, counts: np.ndarray, B: int, clients: np.ndarray | None = None
) -> np.ndarray:
    """For each client (or each of ``clients``), B distinct sample indices drawn uniformly from range(m_i).

    One vectorized draw: the B smallest of m_i uniform keys are a uniform B-subset (keys of padded
    slots are +inf). Returns an int64 array (len(clients), B).

    >>> idx = sample_batches(np.random.default_rng(0), np.array([3, 5]), 3)
    >>> idx.shape, sorted(idx[0].tolist())
    ((2, 3), [0, 1, 2])
    """
    counts = np.asarray(counts)
    rows = counts if clients is None else counts[clients]
    check_batch_size(B, rows)
    m_max = int(counts.max())
    keys = rng.random((rows.size, m_max))
    keys[np.arange(m_max)[None, :] >= rows[:, None]] = np.inf
    return np.argpartition(keys, B - 1, axis=1)[:, :B].astype(np.int64)


#: client data up to this size take batched BLAS mat-vecs in :meth:`FiniteSumFederation.batched_grads`, larger
#: data einsum (measured single-threaded: BLAS 2x faster at 8 MB, einsum 1.3x faster at 80 MB)
BLAS_MAX_BYTES = 16 * 2**20
#: :meth:`LeastSquaresFederation.message_mean_kernel` runs over the clients' data (and Gram matrices) in one piece up
#: to this size, in blocks of about MEAN_KERNEL_BLOCK_BYTES beyond it. Measured single-threaded on the 2-core EPYC
#: (1 MiB L2, 32 MiB L3), m = 50, d = 200, µs a round, one piece / blocks of 512 KiB, 1 MiB, 2 MiB: n = 1000 K = 1
#: 17 000 / 11 200, 11 100, 11 100; K = 10 38 700 / 26 700, 23 900, 23 100; n = 100 (10 MB) K = 1 336 / 400, 366,
#: 354; K = 10 2 610 / 3 250, 2 750, 2 720: blocks pay beyond the last-level cache, not within it
MEAN_KERNEL_SINGLE_BYTES = 16 * 2**20
MEAN_KERNEL_BLOCK_BYTES = 2**20


def summed_operator_flops(steps: int, m: int) -> float:
    """Flops of building one client's S = Σ_{k<K}(I − H)^k by doubling (:func:`_summed_powers`): at most three
    m × m products of 2m³ flops per bit of K.

    >>> summed_operator_flops(4, 10)
    18000.0
    """
    return 3.0 * int(steps).bit_length() * 2.0 * m**3


def summed_steps_pay(steps: int, rounds: int, m: int) -> bool:
    """Whether K local steps in the sample space run cheaper as one product with S built once
    (:func:`summed_operator_flops`, then 2m² flops a round) than as K − 1 products of 2m² flops every round.

    >>> summed_steps_pay(1000, 50, 50), summed_steps_pay(2, 50, 50)
    (True, False)
    """
    return summed_operator_flops(steps, m) < rounds * (steps - 2) * 2.0 * m * m


#: :func:`moments_pay`: building the weighted moments G (a symmetric rank-k update of n·m·d² flops) costs this
#: many flops of a round's mat-vecs per flop. Measured single-threaded on the 2-core EPYC, m = 50, d = 200: G in
#: 0.87 ms (n = 10) and 11.8 ms (n = 100), a round's two passes over the samples 47 µs and 440 µs, a round on G
#: 10-12 µs: 0.37 and 0.54; break-even at 25-27 rounds
MOMENTS_BUILD_COST = 0.5
#: ... and this many once the samples exceed MOMENTS_CACHE_BYTES, where a round's passes run at the memory's pace
#: (n = 100, m = 50, d = 400, 16 MB: a round 2.7 ms, G 28 ms: 0.10; d = 800: 0.17; n = 1000, d = 200: break-even
#: at about 6 rounds)
MOMENTS_BUILD_COST_BEYOND_CACHE = 0.2
MOMENTS_CACHE_BYTES = 8 * 2**20


def moments_pay(samples: int, d: int, rounds: int) -> bool:
    """Whether gradient descent on the clients' weighted average (FedAvg's round at K = 1) runs cheaper on the
    weighted moments G = Σ_j w_j a_ja_jᵀ (d × d) and b = Σ_j w_j y_ja_j, built once, than on the samples: a round
    is then one d × d mat-vec (2d² flops) instead of two passes over the ``samples`` × d data (4·samples·d), for a
    build of samples·d² flops at :data:`MOMENTS_BUILD_COST` (:data:`MOMENTS_BUILD_COST_BEYOND_CACHE` for data
    beyond :data:`MOMENTS_CACHE_BYTES`). Never when G would be larger than the data (d > samples).

    >>> moments_pay(500, 200, 50), moments_pay(500, 200, 10), moments_pay(50, 200, 10**6)
    (True, False, False)
    >>> moments_pay(5000, 400, 25), moments_pay(5000, 800, 25)             # 16 and 32 MB of samples
    (True, False)
    """
    if d > samples:
        return False
    cost = MOMENTS_BUILD_COST if 8 * samples * d <= MOMENTS_CACHE_BYTES else MOMENTS_BUILD_COST_BEYOND_CACHE
    return cost * samples * d * d < rounds * (4.0 * samples * d - 2.0 * d * d)


def _moments_kernel(flat: Any, y_flat: Any, sample_weights: Any, theta: float, block_rows: int | None = None) -> Any:
    """``kernel(x, gamma)`` → θ(Gx − b) with G = Σ_j w_j a_ja_jᵀ and b = Σ_j w_j y_ja_j over the rows of ``flat``
    (n·m, d) with weights ``sample_weights`` (n·m,): the gradient of the clients' weighted average, i.e. the weighted
    sum of one full-batch local step's messages (γ plays no part). G and b are built once; a round is one mat-vec.
    Numpy arrays build G in blocks of ``block_rows`` rows with BLAS's symmetric rank-k update (half a general
    product's flops, no copy of all the data): w·Σ AᵀA for equal weights (no scaled copy at all), Σ BᵀB with
    B = √w ⊙ A for weights ≥ 0; tensors (a GPU) in one piece.

    >>> rng = np.random.default_rng(0)
    >>> A, y, w = rng.normal(size=(6, 3)), rng.normal(size=6), rng.random(6)
    >>> g = _moments_kernel(A, y, w, 0.5, block_rows=4)(np.ones(3), 0.1)
    >>> bool(np.allclose(g, 0.5 * A.T @ (w * (A @ np.ones(3) - y)), rtol=1e-14, atol=1e-15))
    True
    """
    if isinstance(flat, np.ndarray):
        rows, d = flat.shape
        step = rows if block_rows is None else max(1, int(block_rows))
        equal = bool(np.all(sample_weights == sample_weights[0]))
        root = np.sqrt(sample_weights) if not equal and bool(np.all(sample_weights >= 0)) else None
        G = np.zeros((d, d))
        for lo in range(0, rows, step):
            A = flat[lo : lo + step]
            if equal:
                G += A.T @ A  # numpy hands AᵀA (one buffer, transposed) to BLAS's syrk
            elif root is not None:
                B = A * root[lo : lo + step, None]
                G += B.T @ B
            else:
                G += (A * sample_weights[lo : lo + step, None]).T @ A
        if equal:
            G *= sample_weights[0]
    else:
        G = (flat * sample_weights[:, None]).T @ flat
    b = (y_flat * sample_weights) @ flat

    def gradient_of_the_average(x: Any, gamma: float) -> Any:
        out = G @ x - b
        return out * theta if theta != 1.0 else out

    return gradient_of_the_average


def _summed_powers(H: np.ndarray, steps: int) -> np.ndarray:
    """S = Σ_{k<K} P^k with P = I − H for every (m, m) matrix of ``H`` (n, m, m), by doubling over K's bits from the
    top, from S_1 = I, P^1 = P: S_{2j} = S_j + P^j S_j, P^{2j} = (P^j)², and S_{2j+1} = S_{2j} + P^{2j},
    P^{2j+1} = P^{2j}P.

    >>> H = np.array([[[0.3, 0.1], [0.1, 0.2]]])
    >>> P, S = np.eye(2) - H[0], np.zeros((2, 2))
    >>> for k in range(7):
    ...     S = S + np.linalg.matrix_power(P, k)
    >>> bool(np.allclose(_summed_powers(H, 7)[0], S, rtol=1e-14, atol=1e-15))
    True
    """
    # I and I − H written with indexing alone, so that a tensor (a GPU) takes the same lines as a numpy array
    diagonal = list(range(H.shape[-1]))
    P = -H
    P[..., diagonal, diagonal] += 1.0
    S, Q = H * 0.0, P  # S_1 = I and P^1: K's leading bit
    S[..., diagonal, diagonal] = 1.0
    for bit in bin(int(steps))[3:]:
        S += Q @ S
        Q = Q @ Q
        if bit == "1":
            S += Q
            Q = Q @ P
    return S


def _per_gamma(cache: dict, gamma: float, build: Any) -> Any:
    """``build(gamma)``, kept in ``cache``: a run has one step size, or a few (at most 5 are kept)."""
    value = cache.get(gamma)
    if value is None:
        if len(cache) > 4:
            cache.clear()
        value = cache[gamma] = build(gamma)
    return value


def launch_bound(a: Any) -> bool:
    """Whether arrays like ``a`` live on an accelerator, where a small kernel costs its launch (about 5-10 µs)
    rather than its flops, so that fewer, larger kernels pay (a torch tensor off the CPU).

    >>> launch_bound(np.ones(3))
    False
    """
    device = getattr(a, "device", None)
    return device is not None and getattr(device, "type", "cpu") != "cpu"


def _tensor_mean_kernel(
    a: Any, y: Any, coef: Any, w: Any, theta: float, gram: Any, steps: int, summed: bool, moments: bool = False
) -> Any:
    """:meth:`LeastSquaresFederation.message_mean_kernel` on tensors (a GPU): the same algebra in one piece, with
    no preallocated buffers and nothing in place on what a gradient may flow through (x); a round is 4 kernels
    with the summed operator S (``summed``), 3 more a step without it; with ``moments`` (K = 1) the weighted
    moments G = Σ_i w_i sc_i/m_i A_iᵀA_i and b = Σ_i w_i sc_i/m_i A_iᵀy_i are built once and a round is
    θ(Gx − b): one mat-vec. ``a`` (n, m, d), ``y`` (n, m), ``coef`` sc_i/m_i (broadcast to (n, m)), ``w`` (n,)."""
    n, m, d = a.shape
    flat, y_flat = a.reshape(n * m, d), y.reshape(n * m)
    sample_weights = (coef * w[:, None]).broadcast_to((n, m)).reshape(n * m)
    if moments:
        return _moments_kernel(flat, y_flat, sample_weights, theta)
    coef_rows = coef.broadcast_to((n, m))[:, :, None]
    scaled: dict = {}  # γ -> γ·diag(sc_i/m_i)·A_iA_iᵀ, or S (summed)

    def step_operator(gamma: float) -> Any:
        H = (gamma * coef_rows) * gram
        return _summed_powers(H, steps) if summed else H

    def kernel(x: Any, gamma: float) -> Any:
        H = None if steps == 1 else _per_gamma(scaled, gamma, step_operator)
        e = flat @ x - y_flat
        if summed:
            e = (e.reshape(n, 1, m) @ H).reshape(n * m)
        elif H is not None:
            e = total = e.reshape(n, m)
            for _ in range(steps - 1):
                e = e - (e[:, None, :] @ H)[:, 0, :]
                total = total + e
            e = total.reshape(n * m)
        out = (e * sample_weights) @ flat
        return out * theta if theta != 1.0 else out

    return kernel


class FiniteSumFederation:
    """Clients with samples (a_ij, y_ij), loss f_i(x) = mean_j ℓ(x; a_ij, y_ij) + (λ/2)‖x‖².

    ``features``: a list of n arrays (m_i, d) (or one (n, m, d) array); ``targets``: a list of n arrays
    (m_i,); ``p``: client weights (default m_i/Σm); ``l2``: λ ≥ 0. Subclasses define the per-sample
    gradient coefficient through :meth:`_residual` (∇ℓ = r(aᵀx, y)·a) and :meth:`_sample_loss`.

    Arrays: ``a`` (n, m_max, d) zero-padded, ``y`` (n, m_max), ``mask`` (n, m_max), ``counts`` (n,).
    """

    name = "finite-sum"

    def __init__(self, features: Any, targets: Any, p: Any = None, *, l2: float = 0.0) -> None:
        feats = [np.asarray(f, dtype=np.float64) for f in features]
        targs = [np.asarray(t, dtype=np.float64).ravel() for t in targets]
        if len(feats) == 0 or len(feats) != len(targs):
            raise ValueError(
                f"features and targets must list the same number n >= 1 of clients, got {len(feats)} and {len(targs)}"
            )
        d = feats[0].shape[-1] if feats[0].ndim == 2 else None
        for i, (f, t) in enumerate(zip(feats, targs)):
            if f.ndim != 2 or f.shape[1] != d:
                raise ValueError(f"client {i}: features must have shape (m_i, {d}), got {f.shape}")
            if f.shape[0] < 1 or t.shape[0] != f.shape[0]:
                raise ValueError(
                    f"client {i}: needs m_i >= 1 samples and one target per sample, got {f.shape[0]} and {t.shape[0]}"
                )
            if not (np.all(np.isfinite(f)) and np.all(np.isfinite(t))):
                raise ValueError(f"client {i}: features and targets must be finite")
        assert d is not None  # every client's features were checked (m_i, d) above
        l2 = float(l2)
        if not (np.isfinite(l2) and l2 >= 0):
            raise ValueError(f"l2 regularization must be >= 0, got {l2}")
        n = len(feats)
        self.counts = np.array([f.shape[0] for f in feats], dtype=np.int64)
        m_max = int(self.counts.max())
        self.a = np.zeros((n, m_max, d))
        self.y = np.zeros((n, m_max))
        self.mask = np.zeros((n, m_max))
        for i, (f, t) in enumerate(zip(feats, targs)):
            self.a[i, : f.shape[0]] = f
            self.y[i, : f.shape[0]] = t
            self.mask[i, : f.shape[0]] = 1.0
        self._check_targets(self.y[self.mask > 0])
        if p is None:
            p = self.counts / self.counts.sum()
        from fedtheory.problems.quadratic import _check_weights

        p = np.asarray(p, dtype=np.float64).ravel()
        _check_weights(p, n, type(self).__name__)
        self.p = p
        self.l2 = l2
        self._dense = bool(self.counts.min() == m_max)  # no padding: the mask is all ones
        self._blas = self.a.nbytes <= BLAS_MAX_BYTES
        self._x_star: np.ndarray | None = None
        self._quadratic: Any = None
        self._device_arrays: dict = {}  # (backend, device) -> on()'s arrays on a GPU, copied there once

    # shape ------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self.a.shape[0])

    @property
    def d(self) -> int:
        return int(self.a.shape[2])

    def _check_targets(self, y: np.ndarray) -> None:
        """Subclasses restrict the targets (labels ±1 for logistic regression)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, d={self.d}, m={self.counts.tolist() if self.n <= 8 else '...'}, l2={self.l2})"

    # the loss, per subclass -------------------------------------------------------------------
    def _residual(self, be, u: Any, y: Any) -> Any:  # pragma: no cover - abstract
        """dℓ/du at u = aᵀx (elementwise)."""
        raise NotImplementedError

    def _sample_loss(self, be, u: Any, y: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    # arrays on a backend ----------------------------------------------------------------------
    def on(self, backend: Any = "numpy", device: Any = None) -> dict:
        """``{"a", "y", "mask", "counts", "p", "backend"}`` on a backend (float64; counts as float); on a GPU
        copied there on the first call and kept."""
        from fedtheory.backends import get_backend

        be = get_backend(backend, device=device)
        # on a GPU the data are copied once per federation and device (the data do not change, as to_quadratic
        # assumes): a run at n = 1000 would otherwise spend more on the 80 MB copy than on its rounds
        key = None if be.device is None or str(be.device) == "cpu" else (be.name, str(be.device))
        if key in self._device_arrays:
            return dict(self._device_arrays[key])
        arrays = {
            "a": be.asarray(self.a),
            "y": be.asarray(self.y),
            "mask": be.asarray(self.mask),
            "counts": be.asarray(self.counts.astype(np.float64)),
            "p": be.asarray(self.p),
            "backend": be,
            "problem": self,
        }
        if key is None:
            return arrays
        self._device_arrays[key] = arrays
        return dict(arrays)  # a caller's copy: the kept one is not changed by what it adds

    def batched_grads(self, arrays: dict, X: Any, idx: Any = None, clients: Any = None, *, factor: Any = None) -> Any:
        """Gradients of the clients' (mini-batch) losses at their own points: (k, d).

        ``X`` (k, d): one point per row, for the clients ``clients`` (an int index array, default all
        n), or (d,): the same point for every row (under the full local loss then one mat-vec over every
        client's samples, not k of them); ``idx`` (k, B): sample indices of each row's mini-batch (``None``: the
        full local loss). ``factor`` (a number or a (k, 1) array): return factor·∇ with the factor folded into
        the residuals (m values per row, not d), as the simulator's local steps want γ∇f_i.
        Runs on the arrays' backend (``arrays = self.on(...)``).

        >>> fed = LeastSquaresFederation.random(3, 5, 2, seed=0, l2=0.1)
        >>> arr, x = fed.on("numpy"), np.array([0.5, -1.0])
        >>> g = fed.batched_grads(arr, np.tile(x, (3, 1)))
        >>> bool(np.allclose(fed.batched_grads(arr, x, factor=0.3), 0.3 * g, rtol=1e-14, atol=0))
        True
        """
        be = arrays["backend"]
        a, y, mask, counts = arrays["a"], arrays["y"], arrays["mask"], arrays["counts"]
        shared = len(X.shape) == 1
        if idx is None:
            if clients is not None:
                rows = _index(be, np.asarray(clients))
                a, y, mask, counts = a[rows], y[rows], mask[rows], counts[rows]
            # data that fits in cache: batched BLAS mat-vecs (einsum's loops 1.5-2x slower, measured at 8 MB);
            # beyond it the pass is bandwidth-bound and einsum's single sweep wins (1.2-1.4x at 80 MB). Padded
            # samples are masked only when some client has fewer than m_max samples
            if shared:
                k, m = int(a.shape[0]), int(a.shape[1])
                u = be.matmul(a.reshape(k * m, int(a.shape[2])), X).reshape(k, m)
            elif self._blas:
                # as a row times A_iᵀ: torch's batched GEMM with a one-column result is 3-5x slower (numpy ~1.1x)
                u = be.matmul(X[:, None, :], a.swapaxes(1, 2))[:, 0, :]
            else:
                u = be.einsum("kmd,kd->km", a, X)
            r = self._residual(be, u, y)
            if not self._dense:
                r = r * mask
            if factor is not None:
                r = r * (factor / counts[:, None])
            g = be.matmul(r[:, None, :], a)[:, 0, :] if self._blas else be.einsum("km,kmd->kd", r, a)
            if factor is None:
                g = g / counts[:, None]
        else:
            rows = _index(be, np.arange(self.n) if clients is None else np.asarray(clients))
            ii = _index(be, idx)
            ab, yb = a[rows[:, None], ii], y[rows[:, None], ii]  # (k, B, d), (k, B): only the batch is copied
            u = be.matmul(ab, X[..., None])[..., 0]
            r = self._residual(be, u, yb)
            if factor is None:
                g = be.matmul(r[:, None, :], ab)[:, 0, :] / int(idx.shape[1])
            else:
                g = be.matmul((r * (factor / int(idx.shape[1])))[:, None, :], ab)[:, 0, :]
        if not self.l2:
            return g
        return g + self.l2 * X if factor is None else g + (self.l2 * factor) * X

    def loss_and_grad_norm(self, arrays: dict, X: Any, chunk_elems: int = 1 << 22) -> tuple[Any, Any]:
        """F(x_t) and ‖∇F(x_t)‖ for every row x_t of ``X`` (T, d), on the arrays' backend (chunked over T).

        >>> fed = LeastSquaresFederation.random(2, 6, 3, seed=0)
        >>> f, g = fed.loss_and_grad_norm(fed.on("numpy"), np.ones((2, 3)))
        >>> bool(np.isclose(f[0], fed.loss(np.ones(3)))), bool(np.isclose(g[1], np.linalg.norm(fed.grad(np.ones(3)))))
        (True, True)
        """
        be = arrays["backend"]
        a, y, mask, counts, p = arrays["a"], arrays["y"], arrays["mask"], arrays["counts"], arrays["p"]
        T = int(X.shape[0])
        step = max(1, chunk_elems // max(1, a.shape[0] * a.shape[1]))
        losses, norms = [], []
        for start in range(0, T, step):
            Xc = X[start : start + step]
            u = be.einsum("nmd,td->tnm", a, Xc)
            per = self._sample_loss(be, u, y[None]) * mask[None]
            li = be.einsum("tnm->tn", per) / counts[None]
            reg = 0.5 * self.l2 * be.einsum("td,td->t", Xc, Xc)
            losses.append(be.einsum("n,tn->t", p, li) + reg)
            r = self._residual(be, u, y[None]) * mask[None] / counts[None, :, None]
            g = be.einsum("n,tnm,nmd->td", p, r, a) + self.l2 * Xc
            norms.append(be.sqrt(be.einsum("td,td->t", g, g)))
        if len(losses) == 1:
            return losses[0], norms[0]
        return be.concat(losses), be.concat(norms)

    # numpy conveniences (the global objective) ------------------------------------------------
    def client_grads(self, x: Any) -> np.ndarray:
        """∇f_i(x) for every client at one point x (d,): (n, d).

        >>> fed = LogisticFederation.random(n=2, m=10, d=3, seed=1)
        >>> fed.client_grads(np.zeros(3)).shape
        (2, 3)
        """
        arrays = self.on("numpy")
        X = np.broadcast_to(np.asarray(x, dtype=np.float64), (self.n, self.d))
        return self.batched_grads(arrays, X)

    def grad(self, x: Any) -> np.ndarray:
        """∇F(x) = Σ_i p_i ∇f_i(x)."""
        return self.p @ self.client_grads(x)

    def client_losses(self, x: Any) -> np.ndarray:
        """f_i(x) for every client: (n,)."""
        from fedtheory.backends import get_backend

        be = get_backend("numpy")
        x = np.asarray(x, dtype=np.float64)
        u = np.einsum("nmd,d->nm", self.a, x)
        per = self._sample_loss(be, u, self.y) * self.mask
        return per.sum(axis=1) / self.counts + 0.5 * self.l2 * float(x @ x)

    def loss(self, x: Any) -> float:
        """F(x) = Σ_i p_i f_i(x)."""
        return float(self.p @ self.client_losses(x))

    def hessian(self, x: Any) -> np.ndarray:
        """∇²F(x) (d, d), for losses with a second derivative (:meth:`_curvature`)."""
        x = np.asarray(x, dtype=np.float64)
        u = np.einsum("nmd,d->nm", self.a, x)
        w = self._curvature(u, self.y) * self.mask / self.counts[:, None] * self.p[:, None]
        return np.einsum("nm,nmd,nme->de", w, self.a, self.a) + self.l2 * np.eye(self.d)

    def _curvature(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def x_star(self) -> np.ndarray:
        """argmin F by Newton's method with backtracking, to ‖∇F‖ ≤ 1e-13·(1 + ‖x‖) (cached).

        Raises ValueError when F has no unique minimizer (a singular Hessian at the solution).
        """
        if self._x_star is None:
            x = np.zeros(self.d)
            for _ in range(200):
                g = self.grad(x)
                if np.linalg.norm(g) <= 1e-13 * (1 + np.linalg.norm(x)):
                    break
                H = self.hessian(x)
                try:
                    step = np.linalg.solve(H, g)
                except np.linalg.LinAlgError:
                    raise ValueError(
                        f"{type(self).__name__}: the Hessian is singular, so F has no unique minimizer "
                        f"(add l2 > 0 or more samples than the dimension)"
                    ) from None
                t, f0 = 1.0, self.loss(x)
                while self.loss(x - t * step) > f0 - 0.25 * t * float(g @ step) and t > 1e-12:
                    t *= 0.5
                x = x - t * step
            self._x_star = x
        return self._x_star.copy()

    def smoothness(self) -> float:
        """An upper bound on every client's smoothness constant L_i (max over clients).

        Uses the curvature bound of ℓ (1 for least squares, ¼ for logistic): L_i ≤ c·λ_max(A_iᵀA_i/m_i) + λ.
        """
        ata = np.einsum("nmd,nme->nde", self.a, self.a) / self.counts[:, None, None]
        return float(self._max_curvature * np.linalg.eigvalsh(ata)[:, -1].max() + self.l2)

    _max_curvature = 1.0


def _index(be, idx: Any) -> Any:
    """An integer index array on the backend's device."""
    if be.name == "numpy":
        return np.asarray(idx)
    import torch

    if isinstance(idx, torch.Tensor):
        return idx.to(be.device)
    return torch.as_tensor(np.asarray(idx), device=be.device)


class LeastSquaresFederation(FiniteSumFederation):
    """Linear regression: ℓ(x; a, y) = ½(aᵀx − y)², f_i(x) = (1/2m_i)‖A_i x − y_i‖² + (λ/2)‖x‖².

    >>> fed = LeastSquaresFederation([np.eye(2)], [np.array([1.0, 2.0])])
    >>> fed.loss(np.zeros(2)), fed.grad(np.zeros(2)).tolist()
    (1.25, [-0.5, -1.0])
    """

    name = "least-squares"

    def _residual(self, be, u, y):
        return u - y

    def _sample_loss(self, be, u, y):
        return 0.5 * (u - y) ** 2

    def _curvature(self, u, y):
        return np.ones_like(u)

    def gram(self, arrays: dict) -> Any:
        """The clients' Gram matrices A_iA_iᵀ, (n, m_max, m_max) on the arrays' backend (one batched GEMM).

        >>> fed = LeastSquaresFederation.random(2, 3, 5, seed=0)
        >>> bool(np.allclose(fed.gram(fed.on("numpy"))[1], fed.a[1] @ fed.a[1].T))
        True
        """
        be, a = arrays["backend"], arrays["a"]
        return be.matmul(a, a.transpose(-1, -2) if be.name != "numpy" else np.swapaxes(a, 1, 2))

    def residual_weights(self, arrays: dict, scale: Any = None) -> Any:
        """sc_i/m_i on each client's real samples, 0 on the padding: (n, m_max), or (n, 1) when no client is
        padded (``scale``: sc_i as an (n, 1) array, None: 1). Computed once per run by the simulator.

        >>> fed = LeastSquaresFederation.random(2, [1, 2], 3, seed=0)
        >>> fed.residual_weights(fed.on("numpy")).tolist()
        [[1.0, 0.0], [0.5, 0.5]]
        """
        w = 1.0 / arrays["counts"][:, None] if scale is None else scale / arrays["counts"][:, None]
        return w if self._dense else w * arrays["mask"]

    def sample_space_steps(
        self,
        arrays: dict,
        x: Any,
        steps: int,
        gamma: float,
        weights: tuple | None,
        want_point: bool,
        coef: Any = None,
        gram: Any = None,
        reduce: Any = None,
    ) -> tuple[Any, Any]:
        r"""K full-batch local gradient steps y ← y − γ sc_i∇f_i(y) from the same point x on every client,
        run in each client's sample space (λ = 0): with u = A_i y and r_k = (sc_i/m_i)(u_k − y_i),
        u_{k+1} = u_k − γ(A_iA_iᵀ)r_k, y_K = x − γA_iᵀΣ_k r_k and the message Σ_k θ_k∇f_i(y_k) = A_iᵀΣ_k θ_k r_k.

        The same iterates as the literal steps (to rounding), at two passes over the data per round (A_ix and one
        A_iᵀ) instead of two per step, plus a step of 2m_i² flops on the Gram matrix (``gram``: from
        :meth:`gram`, needed when ``steps`` > 1). Returns (y_K or None, message or None); ``coef``: sc_i/m_i, from
        :meth:`residual_weights` (default: sc_i = 1). ``reduce``: client weights w (n,); the message is then
        Σ_i w_i·message_i (d,), one flat pass A_flatᵀ(w·Σ_k θ_k r_k) over every client's samples (no point: needs
        ``want_point`` False).

        >>> fed = LeastSquaresFederation.random(3, 4, 6, seed=0)
        >>> arr, x = fed.on("numpy"), np.ones(6)
        >>> Y, msg = fed.sample_space_steps(arr, x, 3, 0.1, (1.0, 1.0, 1.0), True, gram=fed.gram(arr))
        >>> Z, acc = np.tile(x, (3, 1)), 0
        >>> for _ in range(3):
        ...     g = fed.batched_grads(arr, Z); acc = acc + g; Z = Z - 0.1 * g
        >>> bool(np.allclose(Y, Z, rtol=1e-13, atol=0)), bool(np.allclose(msg, acc, rtol=1e-13, atol=1e-15))
        (True, True)
        """
        if self.l2:
            raise ValueError("sample_space_steps needs l2 = 0 (a ridge term moves y outside the samples' span)")
        if reduce is not None and want_point:
            raise ValueError(
                "sample_space_steps: reduce (the weighted sum of the messages) returns no point; pass want_point=False"
            )
        be = arrays["backend"]
        if reduce is not None and be.name == "numpy" and weights is not None and len(set(weights)) == 1:
            # the weighted sum of messages with one θ: the kernel the simulator builds once per run
            return None, self.message_mean_kernel(arrays, steps, weights[0], reduce, coef, gram)(x, gamma)
        if be.name != "numpy":
            extra = [v for v in (coef, gram, reduce) if v is not None]
            host = be.host_views(arrays["a"], arrays["y"], arrays["mask"], arrays["counts"], x, *extra)
            if host is not None:
                # torch on the CPU without autograd: the same loop on zero-copy numpy views (bit-identical to the
                # numpy backend); torch's 2-3.5 µs per operation against numpy's 1-2 µs is a third of a step at n = 100
                from fedtheory.backends import get_backend

                views = dict(arrays, backend=get_backend("numpy"), a=host[0], y=host[1], mask=host[2], counts=host[3])
                it = iter(host[5:])
                Y, msg = self.sample_space_steps(
                    views,
                    host[4],
                    steps,
                    gamma,
                    weights,
                    want_point,
                    None if coef is None else next(it),
                    None if gram is None else next(it),
                    None if reduce is None else next(it),
                )
                return (None if Y is None else be.asarray(Y)), (None if msg is None else be.asarray(msg))
        a, y = arrays["a"], arrays["y"]
        n, m, d = a.shape
        inv = self.residual_weights(arrays) if coef is None else coef
        inplace = be.name == "numpy"
        u = be.matmul(a.reshape(n * m, d), x).reshape(n, m)
        uniform = weights is not None and all(t == weights[0] for t in weights)
        r_sum = r_msg = None  # Σ_k r_k (the point), Σ_k θ_k r_k (the message)
        for k in range(steps):
            r = (u - y) * inv
            last = k + 1 == steps
            if want_point or uniform or not last:
                r_sum = r if r_sum is None else (r_sum.__iadd__(r) if inplace else r_sum + r)
            if weights is not None and not uniform and weights[k] != 0:
                term = weights[k] * r
                r_msg = term if r_msg is None else (r_msg.__iadd__(term) if inplace else r_msg + term)
            if not last and gamma != 0:
                du = be.matmul(r[:, None, :], gram)[:, 0, :]  # rᵀ(A_iA_iᵀ): symmetric, a row form
                if inplace:
                    u -= gamma * du
                else:
                    u = u - gamma * du

        def transposed(r: Any) -> Any:  # A_iᵀr_i, as batched_grads chooses (BLAS or one sweep)
            if reduce is not None:  # Σ_i w_i A_iᵀr_i: one pass over all the samples
                return be.matmul((r * reduce[:, None]).reshape(n * m), a.reshape(n * m, d))
            return be.matmul(r[:, None, :], a)[:, 0, :] if self._blas else be.einsum("km,kmd->kd", r, a)

        back = transposed(r_sum) if r_sum is not None and (want_point or uniform) else None
        Y = x - gamma * back if want_point and back is not None else None
        if weights is None:
            return Y, None
        if uniform:
            msg = back if weights[0] == 1.0 else weights[0] * back
        elif r_msg is None:
            msg = be.zeros(d if reduce is not None else (n, d))
        else:
            msg = transposed(r_msg)
        return Y, msg

    def message_mean_kernel(
        self,
        arrays: dict,
        steps: int,
        theta: float,
        w: Any,
        coef: Any = None,
        gram: Any = None,
        rounds: int | None = None,
    ) -> Any:
        r"""``kernel(x, gamma)`` → Σ_i w_i·θ·Σ_{k<K} sc_i∇f_i(y_{ik}) (d,): the weighted sum of the messages of K
        full-batch local steps y ← y − γ sc_i∇f_i(y) from the same point x on every client, in their sample space
        (λ = 0), with one weight θ on every step — :meth:`sample_space_steps` with ``reduce=w``, everything that
        depends on neither x nor γ prepared once (the simulator calls it every round of a run).

        With e_k = A_iy_k − y_i: e_{k+1} = e_k − γ·e_kᵀ(diag(sc_i/m_i)A_iA_iᵀ) and the sum is
        θ·A_flatᵀ(w_i sc_i/m_i ⊙ Σ_k e_k): one mat-vec A_flat x, K − 1 batched (1 × m)·(m × m) products on the
        γ-scaled Gram matrices (``gram``, from :meth:`gram`; needed when ``steps`` > 1) and one mat-vec back — four
        numpy calls a round at K = 1 (gradient descent on the average), three more a step. Tensors (a GPU) take
        the same algebra in torch's kernels, in one piece; ``coef``: sc_i/m_i from :meth:`residual_weights` (default sc_i = 1).

        Σ_k e_k = e_0·S with S = Σ_{k<K} (I − H)^k, H = γ·diag(sc_i/m_i)A_iA_iᵀ, depends on neither x nor the round:
        when the run's ``rounds`` make it pay (:func:`summed_steps_pay`), S is built once per γ by doubling
        (2–3 batched m × m products per bit of K) and a round costs one (1 × m)·(m × m) product whatever K is.
        At K = 1 the sum is θ(Gx − b) with the weighted moments G = Σ_i w_i sc_i/m_i A_iᵀA_i and b: when the
        ``rounds`` pay for building them (:func:`moments_pay`; on a GPU whenever there is more than one round), a
        round is one d × d mat-vec (:func:`_moments_kernel`).

        >>> fed = LeastSquaresFederation.random(3, [4, 2, 4], 6, seed=0)
        >>> arr, x, w = fed.on("numpy"), np.ones(6), np.array([0.2, 0.5, 0.3])
        >>> _, msg = fed.sample_space_steps(arr, x, 3, 0.1, (0.5, 0.5, 0.5), False, gram=fed.gram(arr))
        >>> mean = fed.message_mean_kernel(arr, 3, 0.5, w, gram=fed.gram(arr))(x, 0.1)
        >>> bool(np.allclose(mean, w @ msg, rtol=1e-13, atol=1e-15))
        True
        """
        if self.l2:
            raise ValueError("message_mean_kernel needs l2 = 0 (a ridge term moves y outside the samples' span)")
        if steps > 1 and gram is None:
            raise ValueError(f"message_mean_kernel: {steps} local steps need the Gram matrices (gram=fed.gram(arrays))")
        summed = steps > 1 and rounds is not None and summed_steps_pay(steps, rounds, int(arrays["a"].shape[1]))
        if not isinstance(arrays["a"], np.ndarray):  # tensors (a GPU): torch's kernels, one piece
            coef = self.residual_weights(arrays) if coef is None else coef
            # a GPU's round costs its kernels' launches, not their flops: S (a few batched products, once) from
            # K = 3 on, and at K = 1 the clients' d × d moments, once, so that a round is one mat-vec
            few_launches = rounds is not None and rounds > 1 and launch_bound(arrays["a"])
            summed = summed or (few_launches and steps > 2)
            moments = few_launches and steps == 1
            return _tensor_mean_kernel(arrays["a"], arrays["y"], coef, w, float(theta), gram, steps, summed, moments)
        a = np.asarray(arrays["a"])
        n, m, d = a.shape
        flat = a.reshape(n * m, d)
        y_flat = np.asarray(arrays["y"]).reshape(n * m)
        coef = np.asarray(self.residual_weights(arrays) if coef is None else coef)
        # w_i sc_i/m_i per sample (0 on padding): the weights of Σ_k e_k in the pass back
        sample_weights = np.ascontiguousarray(np.broadcast_to(coef * np.asarray(w)[:, None], (n, m))).reshape(n * m)
        theta = float(theta)
        gram = None if steps == 1 else np.asarray(gram)
        coef_rows = np.broadcast_to(coef, (n, m))[:, :, None]
        # data beyond the caches: the clients in blocks of about MEAN_KERNEL_BLOCK_BYTES, so that the pass back (and
        # the Gram steps) read a block from the core's cache, not from memory: one sweep over the data, not two
        per_client = 8 * m * (d + (m if steps > 1 else 0))
        size = n if per_client * n <= MEAN_KERNEL_SINGLE_BYTES else max(1, MEAN_KERNEL_BLOCK_BYTES // per_client)
        if steps == 1 and rounds is not None and moments_pay(n * m, d, rounds):
            # gradient descent on the average: its moments once, then one d × d mat-vec a round
            return _moments_kernel(flat, y_flat, sample_weights, theta, block_rows=size * m)
        blocks = [
            (flat[lo * m : hi * m], y_flat[lo * m : hi * m], sample_weights[lo * m : hi * m], lo, hi)
            for lo, hi in ((lo, min(lo + size, n)) for lo in range(0, n, size))
        ]
        scaled: dict = {}  # γ -> γ·diag(sc_i/m_i)·A_iA_iᵀ, or S (summed): a run has one γ, or a few
        moved = np.empty((size, 1, m))

        def step_operator(gamma: float) -> np.ndarray:
            if not summed:
                return (gamma * coef_rows) * gram
            H = np.empty_like(gram)  # block by block: the doubling's temporaries stay the size of a block
            for _, _, _, lo, hi in blocks:
                H[lo:hi] = _summed_powers((gamma * coef_rows[lo:hi]) * gram[lo:hi], steps)
            return H

        def kernel(x: Any, gamma: float) -> np.ndarray:
            H = None if steps == 1 else _per_gamma(scaled, gamma, step_operator)
            out: Any = None
            for A, yb, wb, lo, hi in blocks:
                e = A @ x
                e -= yb
                if H is not None and summed:
                    mv = moved[: hi - lo]
                    np.matmul(e.reshape(hi - lo, 1, m), H[lo:hi], out=mv)
                    e = mv.reshape((hi - lo) * m)
                elif H is not None:
                    e = e.reshape(hi - lo, m)
                    total = e.copy()
                    Hb, mv = H[lo:hi], moved[: hi - lo]
                    for _ in range(steps - 1):
                        np.matmul(e[:, None, :], Hb, out=mv)
                        e -= mv[:, 0, :]
                        total += e
                    e = total.reshape((hi - lo) * m)
                e *= wb
                part = e @ A
                if out is None:
                    out = part
                else:
                    out += part
            if theta != 1.0:
                out *= theta
            return out

        return kernel

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """(A_i, b_i) = (A_iᵀA_i/m_i + λI, A_iᵀy_i/m_i) for every client: (n, d, d) and (n, d).

        >>> A, b = LeastSquaresFederation([np.eye(2)], [np.array([1.0, 2.0])]).moments()
        >>> A.tolist(), b.tolist()
        ([[[0.5, 0.0], [0.0, 0.5]]], [[0.5, 1.0]])
        """
        w = self.mask / self.counts[:, None]
        Aw = self.a * w[:, :, None]
        A = np.matmul(np.swapaxes(Aw, 1, 2), self.a)  # batched GEMM
        b = np.matmul(np.swapaxes(Aw, 1, 2), self.y[:, :, None])[..., 0]
        return 0.5 * (A + np.swapaxes(A, 1, 2)) + self.l2 * np.eye(self.d), b

    def to_quadratic(self):
        """The :class:`~fedtheory.problems.quadratic.QuadraticFederation` with the same gradients:
        A_i = A_iᵀA_i/m_i + λI and c_i = A_i⁺ b_i, b_i = A_iᵀy_i/m_i (the minimum-norm local solution).

        Singular clients (m_i < d, λ = 0) are allowed: b_i lies in range(A_i), so
        A_i(x − c_i) = A_i x − b_i = ∇f_i(x) still. f_i and the quadratic differ by a constant, so the
        iterates of any first-order method agree.

        >>> fed = LeastSquaresFederation.random(n=2, m=[3, 8], d=5, seed=1)        # client 0: 3 < d samples
        >>> x = np.ones(5)
        >>> bool(np.allclose(fed.to_quadratic().grad(x), fed.grad(x), atol=1e-12))
        True
        """
        from fedtheory.problems.quadratic import QuadraticFederation

        if self._quadratic is not None:  # the data do not change: built once per federation
            return self._quadratic
        A, b = self.moments()
        lam, V = np.linalg.eigh(A)
        # eigenvalues below the eigensolver's resolution are the null space (16·d·eps relative)
        tol = lam[:, -1:] * self.d * np.finfo(np.float64).eps * 16
        inv = np.where(lam > tol, 1.0 / np.where(lam > tol, lam, 1.0), 0.0)
        c = np.matmul(V, (inv * np.matmul(np.swapaxes(V, 1, 2), b[..., None])[..., 0])[..., None])[..., 0]
        self._quadratic = QuadraticFederation(A=A, c=c, p=self.p, eigvals=lam, eigvecs=V)
        return self._quadratic

    @classmethod
    def random(
        cls,
        n: int,
        m: Any,
        d: int,
        *,
        noise: float = 0.5,
        heterogeneity: float = 1.0,
        l2: float = 0.0,
        seed: Any = None,
    ) -> "LeastSquaresFederation":
        """Gaussian features, y = aᵀ(x₀ + h_i) + noise, client shifts h_i ~ N(0, heterogeneity²·I/d). Seeded.

        >>> LeastSquaresFederation.random(2, 5, 3, seed=0).counts.tolist()
        [5, 5]
        """
        rng = _as_rng(seed)
        counts = np.broadcast_to(np.asarray(m, dtype=np.int64), (n,))
        x0 = rng.normal(size=d) / np.sqrt(d)
        feats, targs = [], []
        for mi in counts:
            a = rng.normal(size=(int(mi), d))
            h = rng.normal(size=d) * heterogeneity / np.sqrt(d)
            feats.append(a)
            targs.append(a @ (x0 + h) + noise * rng.normal(size=int(mi)))
        return cls(feats, targs, l2=l2)


class LogisticFederation(FiniteSumFederation):
    """ℓ2-regularized logistic regression: ℓ(x; a, y) = log(1 + exp(−y aᵀx)), labels y ∈ {−1, +1}.

    >>> fed = LogisticFederation([np.array([[1.0, 0.0]])], [np.array([1.0])])
    >>> round(fed.loss(np.zeros(2)), 12) == round(float(np.log(2)), 12)
    True
    """

    name = "logistic"
    _max_curvature = 0.25

    def _check_targets(self, y: np.ndarray) -> None:
        if not np.all(np.isin(y, (-1.0, 1.0))):
            raise ValueError("LogisticFederation labels must be -1 or +1")

    def _residual(self, be, u, y):
        # −y·σ(−y u), written with exp of a non-positive number only (no overflow)
        z = -y * u
        s = be.where(z >= 0, 1 / (1 + be.exp(-be.abs(z))), be.exp(-be.abs(z)) / (1 + be.exp(-be.abs(z))))
        return -y * s

    def _sample_loss(self, be, u, y):
        z = -y * u
        return be.maximum(z, z * 0) + be.log1p(be.exp(-be.abs(z)))

    def _curvature(self, u, y):
        s = 1 / (1 + np.exp(-np.abs(u)))
        return s * (1 - s)

    @classmethod
    def random(
        cls, n: int, m: Any, d: int, *, heterogeneity: float = 1.0, l2: float = 1e-2, seed: Any = None
    ) -> "LogisticFederation":
        """Gaussian features with client-shifted means; labels from a noisy linear model. Seeded.

        >>> LogisticFederation.random(3, 8, 2, seed=0).n
        3
        """
        rng = _as_rng(seed)
        counts = np.broadcast_to(np.asarray(m, dtype=np.int64), (n,))
        w = rng.normal(size=d)
        feats, targs = [], []
        for mi in counts:
            a = rng.normal(size=(int(mi), d)) + heterogeneity * rng.normal(size=d)
            logits = a @ w + rng.normal(size=int(mi))
            feats.append(a)
            targs.append(np.where(logits >= 0, 1.0, -1.0))
        return cls(feats, targs, l2=l2)
