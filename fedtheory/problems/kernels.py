r"""Kernels, RKHS functions and federated kernel-regression data (Su, Xu & Yang, Section 2).

Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx: Beyond Stationary Points*: client i
holds n_i points x_ij with responses y_ij = f_i^*(x_ij) + ξ_ij, f_i^* in the RKHS ℋ of a positive
semidefinite kernel k. The paper's normalisations, used everywhere here:

* the normalised Gram matrix of n points **x** is (K_**x**)_{ab} = k(x_a, x_b)/n (its own n: the
  pooled K_**x** divides by N = Σ n_i, a client's K_{**x**_i} by n_i);
* the empirical norm ‖f‖_N² = (1/N) Σ_ij f(x_ij)² (eq. 14) and the RKHS norm ‖f‖_ℋ.

Kernels (:class:`Kernel`): :class:`GaussianKernel` (RBF, infinite rank), :class:`PolynomialKernel`
((x·z + c)^m, finite rank, explicit feature map), :class:`LinearKernel` (x·z: linear regression),
:class:`MonomialKernel` (features [1, x, …, x^m] of Section 6.4), :class:`RandomFeatureKernel`
(random Fourier features [RR+07], finite rank), :class:`SobolevKernel` (min(x, z) on [0, 1]: the
first-order Sobolev space, infinite-dimensional, with its Mercer expansion) and
:class:`ReluNTKKernel` (the two-layer NTK of Section 2, E_w[σ'(wᵀx)σ'(wᵀz)] for ReLU).

RKHS elements with exact norms and inner products: :class:`KernelExpansion` (Σ c_j k(·, z_j)),
:class:`FeatureFunction` (θ·ϕ for a finite-rank kernel) and :class:`MercerSeries`
(Σ β_ℓ φ_ℓ for a kernel with a known Mercer expansion, eq. 2–3).

>>> import numpy as np
>>> k = GaussianKernel(bandwidth=0.5)
>>> x = np.linspace(0, 1, 4)
>>> K = normalized_gram(k, x)
>>> K.shape, bool(np.allclose(K, k(x) / 4))
((4, 4), True)
>>> f = KernelExpansion(k, x[:2], [1.0, -1.0])
>>> round(rkhs_norm(f) ** 2, 12) == round(2 - 2 * float(k(x[:1], x[1:2])[0, 0]), 12)
True
>>> fed = KernelFederation.sample(SobolevKernel(), [3, 5], truths=MercerSeries(SobolevKernel(), [1.0, 0.5]),
...                               noise_sd=0.1, seed=0)
>>> fed.M, fed.N, fed.weights.tolist()
(2, 8, [0.375, 0.625])
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Sequence

import numpy as np

__all__ = [
    "Kernel",
    "GaussianKernel",
    "PolynomialKernel",
    "LinearKernel",
    "MonomialKernel",
    "RandomFeatureKernel",
    "SobolevKernel",
    "ReluNTKKernel",
    "PrecomputedKernel",
    "as_points",
    "normalized_gram",
    "RKHSFunction",
    "KernelExpansion",
    "FeatureFunction",
    "MercerSeries",
    "ZeroFunction",
    "rkhs_inner",
    "rkhs_norm",
    "empirical_norm",
    "KernelFederation",
    "KERNEL_FAMILIES",
    "random_kernel_federation",
    "gram_federation",
]


def as_points(X: Any) -> np.ndarray:
    """Points as a float64 array (n, p): a 1-D array is n scalar points.

    >>> as_points([0.5, 1.0]).shape, as_points([[1.0, 2.0]]).shape
    ((2, 1), (1, 2))
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 0:
        X = X.reshape(1, 1)
    elif X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"points must be an array (n,) or (n, p), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("points must be finite")
    return X


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------


class Kernel:
    """A positive semidefinite kernel k: 𝒳 × 𝒳 → ℝ.

    ``k(X, Z)`` is the Gram matrix (len X, len Z) (``Z=None``: ``Z = X``); ``finite_rank(p)`` is
    the dimension of the RKHS on ℝ^p (``None``: infinite); finite-rank kernels give ``features(X)``
    (n, rank) with k(x, z) = ϕ(x)·ϕ(z) and linearly independent coordinate functions, so
    ‖θ·ϕ‖_ℋ = ‖θ‖₂ (eq. 3).
    """

    name = "kernel"
    rank: int | None = None

    def finite_rank(self, p: int = 1) -> int | None:
        """Dimension of the RKHS on inputs in ℝ^p (``None``: infinite-dimensional).

        >>> LinearKernel().finite_rank(3), GaussianKernel().finite_rank(3), MonomialKernel(5).finite_rank()
        (3, None, 6)
        """
        return self.rank

    def __call__(self, X: Any, Z: Any = None) -> np.ndarray:
        X = as_points(X)
        Z = X if Z is None else as_points(Z)
        return self._gram(X, Z)

    def _gram(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def diag(self, X: Any) -> np.ndarray:
        """k(x, x) for every point (n,).

        >>> GaussianKernel().diag([0.0, 3.0]).tolist()
        [1.0, 1.0]
        """
        X = as_points(X)
        return np.array([self._gram(X[i : i + 1], X[i : i + 1])[0, 0] for i in range(X.shape[0])])

    def features(self, X: Any) -> np.ndarray:
        """ϕ(X) (n, rank) for a finite-rank kernel."""
        raise ValueError(f"{self.name} kernel has an infinite-dimensional RKHS: no finite feature map")

    def to_json(self) -> dict:
        return {"kernel": self.name, **{k: v for k, v in vars(self).items() if not k.startswith("_")}}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


def _sqdist(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    d2 = (X * X).sum(1)[:, None] + (Z * Z).sum(1)[None, :] - 2 * X @ Z.T
    return np.maximum(d2, 0.0)


class GaussianKernel(Kernel):
    """RBF kernel exp(−‖x − z‖²/(2h²)), infinite rank, strictly positive definite on distinct points.

    >>> round(float(GaussianKernel(bandwidth=1.0)([0.0], [1.0])[0, 0]), 12) == round(float(np.exp(-0.5)), 12)
    True
    """

    name = "gaussian"

    def __init__(self, bandwidth: float = 1.0) -> None:
        if not (np.isfinite(bandwidth) and bandwidth > 0):
            raise ValueError(f"GaussianKernel bandwidth must be > 0, got {bandwidth!r}")
        self.bandwidth = float(bandwidth)

    def _gram(self, X, Z):
        return np.exp(-_sqdist(X, Z) / (2 * self.bandwidth**2))

    def diag(self, X):
        return np.ones(as_points(X).shape[0])


def _multi_indices(p: int, degree: int) -> list[tuple[int, ...]]:
    """Exponent vectors (α_0, α_1, …, α_p) with Σ α = degree (α_0: the power of the offset)."""
    out = []
    for combo in itertools.combinations_with_replacement(range(p + 1), degree):
        alpha = [0] * (p + 1)
        for j in combo:
            alpha[j] += 1
        out.append(tuple(alpha))
    return out


class PolynomialKernel(Kernel):
    """(x·z + c)^m with c ≥ 0: finite rank (dimension of the polynomials of degree ≤ m, = m if c = 0 homogeneous).

    ``features(X)`` is the exact feature map: √(m!/(α_0!⋯α_p!) c^{α_0}) x^α over exponent vectors.

    >>> k = PolynomialKernel(degree=2, offset=1.0)
    >>> X = np.array([[0.3, -1.0], [2.0, 0.5]])
    >>> F = k.features(X)
    >>> F.shape, bool(np.allclose(F @ F.T, k(X)))
    ((2, 6), True)
    """

    name = "polynomial"

    def __init__(self, degree: int = 2, offset: float = 1.0) -> None:
        if isinstance(degree, bool) or int(degree) != degree or degree < 1:
            raise ValueError(f"PolynomialKernel degree must be a positive integer, got {degree!r}")
        if not (np.isfinite(offset) and offset >= 0):
            raise ValueError(f"PolynomialKernel offset must be >= 0, got {offset!r}")
        self.degree, self.offset = int(degree), float(offset)

    def _gram(self, X, Z):
        return (X @ Z.T + self.offset) ** self.degree

    def _indices(self, p: int) -> list[tuple[int, ...]]:
        idx = _multi_indices(p, self.degree)
        return [a for a in idx if a[0] == 0] if self.offset == 0 else idx

    def finite_rank(self, p: int = 1) -> int:
        """Dimension of the RKHS on ℝ^p.

        >>> PolynomialKernel(3, 1.0).finite_rank(1), PolynomialKernel(2, 0.0).finite_rank(3)
        (4, 6)
        """
        return len(self._indices(p))

    def features(self, X):
        X = as_points(X)
        m = self.degree
        cols = []
        for a in self._indices(X.shape[1]):
            coef = math.factorial(m) / math.prod(math.factorial(t) for t in a) * self.offset ** a[0]
            cols.append(math.sqrt(coef) * np.prod(X ** np.array(a[1:])[None, :], axis=1))
        return np.stack(cols, axis=1)


class LinearKernel(Kernel):
    """k(x, z) = x·z: the RKHS of linear functions θ·x with ‖θ·x‖_ℋ = ‖θ‖₂ (linear regression).

    >>> LinearKernel()([[1.0, 2.0]], [[3.0, 4.0]]).tolist()
    [[11.0]]
    """

    name = "linear"

    def finite_rank(self, p: int = 1) -> int:
        return int(p)

    def _gram(self, X, Z):
        return X @ Z.T

    def features(self, X):
        return as_points(X).copy()


class MonomialKernel(Kernel):
    """Scalar inputs, ϕ(x) = [1, x, …, x^m] (Section 6.4's feature map), k(x, z) = Σ_j x^j z^j; rank m + 1.

    >>> MonomialKernel(2).features([2.0]).tolist()
    [[1.0, 2.0, 4.0]]
    """

    name = "monomial"

    def __init__(self, degree: int = 5) -> None:
        if isinstance(degree, bool) or int(degree) != degree or degree < 0:
            raise ValueError(f"MonomialKernel degree must be a non-negative integer, got {degree!r}")
        self.degree = int(degree)
        self.rank = self.degree + 1

    def features(self, X):
        X = as_points(X)
        if X.shape[1] != 1:
            raise ValueError(f"MonomialKernel takes scalar inputs, got points of dimension {X.shape[1]}")
        return X[:, :1] ** np.arange(self.degree + 1)[None, :]

    def _gram(self, X, Z):
        return self.features(X) @ self.features(Z).T


class RandomFeatureKernel(Kernel):
    """Random Fourier features [RR+07]: ϕ(x) = √(2/D) cos(Wx + b), W ~ N(0, I/h²), b ~ U[0, 2π); rank D.

    A finite-rank kernel approximating the Gaussian kernel of bandwidth h; the draw is fixed by ``seed``.

    >>> k = RandomFeatureKernel(input_dim=2, n_features=50, seed=0)
    >>> k.features(np.zeros((3, 2))).shape, k.rank
    ((3, 50), 50)
    """

    name = "random-features"

    def __init__(self, input_dim: int, n_features: int, bandwidth: float = 1.0, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.input_dim, self.n_features, self.bandwidth, self.seed = (
            int(input_dim),
            int(n_features),
            float(bandwidth),
            int(seed),
        )
        self.rank = self.n_features
        self._W = rng.normal(size=(self.n_features, self.input_dim)) / self.bandwidth
        self._b = rng.uniform(0, 2 * np.pi, size=self.n_features)

    def features(self, X):
        X = as_points(X)
        if X.shape[1] != self.input_dim:
            raise ValueError(f"RandomFeatureKernel expects points of dimension {self.input_dim}, got {X.shape[1]}")
        return np.sqrt(2.0 / self.n_features) * np.cos(X @ self._W.T + self._b[None, :])

    def _gram(self, X, Z):
        return self.features(X) @ self.features(Z).T


class SobolevKernel(Kernel):
    r"""k(x, z) = min(x, z) on [0, 1]: the first-order Sobolev space {f: f(0) = 0, f' ∈ L²}, ‖f‖_ℋ² = ∫ f'².

    Infinite-dimensional, with the Mercer expansion (eq. 2) under the uniform law on [0, 1]:
    μ_ℓ = ((ℓ − ½)π)^{−2}, φ_ℓ(x) = √2 sin((ℓ − ½)πx), ℓ = 1, 2, … (eigenvalues decay as ℓ^{−2}).

    >>> k = SobolevKernel()
    >>> k([0.2, 0.7], [0.5]).ravel().tolist()
    [0.2, 0.5]
    >>> x = np.array([0.3]); L = 20000
    >>> bool(abs((k.mercer_eigenvalues(L) * k.mercer_eigenfunctions(x, L)[0] ** 2).sum() - 0.3) < 1e-4)
    True
    """

    name = "sobolev"

    def _gram(self, X, Z):
        if X.shape[1] != 1 or Z.shape[1] != 1:
            raise ValueError("SobolevKernel takes scalar inputs in [0, 1]")
        if X.min(initial=0.0) < 0 or X.max(initial=0.0) > 1 or Z.min(initial=0.0) < 0 or Z.max(initial=0.0) > 1:
            raise ValueError("SobolevKernel inputs must lie in [0, 1]")
        return np.minimum(X, Z.T)

    def diag(self, X):
        return as_points(X)[:, 0].copy()

    @staticmethod
    def mercer_eigenvalues(L: int) -> np.ndarray:
        """μ_1 ≥ … ≥ μ_L."""
        ell = np.arange(1, int(L) + 1)
        return 1.0 / ((ell - 0.5) * np.pi) ** 2

    @staticmethod
    def mercer_eigenfunctions(X: Any, L: int) -> np.ndarray:
        """φ_ℓ(x) for ℓ = 1..L at every point: (n, L)."""
        x = as_points(X)[:, 0]
        ell = np.arange(1, int(L) + 1)
        return np.sqrt(2.0) * np.sin(np.outer(x, (ell - 0.5) * np.pi))


class ReluNTKKernel(Kernel):
    r"""The two-layer NTK of Section 2 for ReLU: k(x, z) = E_{w~N(0,I)}[σ'(wᵀx)σ'(wᵀz)] = (π − ∠(x, z))/(2π).

    Positive definite on pairwise non-parallel inputs (Remark 1), infinite rank.

    >>> ReluNTKKernel()([[1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]]).round(12).tolist()
    [[0.25, 0.5]]
    """

    name = "relu-ntk"

    def _gram(self, X, Z):
        nx = np.linalg.norm(X, axis=1)
        nz = np.linalg.norm(Z, axis=1)
        if np.any(nx == 0) or np.any(nz == 0):
            raise ValueError("ReluNTKKernel needs non-zero inputs (the angle to 0 is undefined)")
        # ∠(x, z) = 2·atan2(‖x̂ − ẑ‖, ‖x̂ + ẑ‖): accurate for nearly parallel inputs, where arccos of a rounded
        # cosine loses half the digits (its derivative is infinite at 1)
        U, W = X / nx[:, None], Z / nz[:, None]
        diff = np.sqrt(np.maximum(2.0 - 2.0 * (U @ W.T), 0.0))
        summ = np.sqrt(np.maximum(2.0 + 2.0 * (U @ W.T), 0.0))
        small = diff < 0.1
        if small.any():  # recompute the short differences exactly rather than through 2 − 2cos
            ii, jj = np.nonzero(small)
            diff[ii, jj] = np.linalg.norm(U[ii] - W[jj], axis=1)
        angle = 2.0 * np.arctan2(diff, summ)
        return (np.pi - angle) / (2 * np.pi)

    def diag(self, X):
        return np.full(as_points(X).shape[0], 0.5)


class PrecomputedKernel(Kernel):
    """A kernel given by its Gram matrix on an indexed set of points: the inputs are the indices 0..n−1.

    Every PSD matrix is the Gram matrix of some kernel on some points, so a federation built on a
    ``PrecomputedKernel`` ranges over the whole hypothesis class of Sections 4–5 (any kernel, any
    covariates, any rank); the probes search it directly.

    >>> k = PrecomputedKernel([[2.0, 1.0], [1.0, 2.0]])
    >>> k([1, 0], [1]).ravel().tolist(), k.rank
    ([2.0, 1.0], 2)
    >>> PrecomputedKernel([[1.0, 2.0], [2.0, 1.0]])
    Traceback (most recent call last):
    ...
    ValueError: PrecomputedKernel needs a positive semidefinite Gram matrix (smallest eigenvalue -1)
    """

    name = "precomputed"

    def __init__(self, gram: Any) -> None:
        G = np.asarray(gram, dtype=np.float64)
        if G.ndim != 2 or G.shape[0] != G.shape[1] or not np.all(np.isfinite(G)):
            raise ValueError(f"PrecomputedKernel needs a finite square Gram matrix, got shape {G.shape}")
        G = 0.5 * (G + G.T)
        w = np.linalg.eigvalsh(G)
        if w[0] < -1e-10 * max(float(np.abs(w).max()), 1e-300):
            raise ValueError(
                f"PrecomputedKernel needs a positive semidefinite Gram matrix (smallest eigenvalue {w[0]:.3g})"
            )
        self._G = G
        self.rank = int(np.sum(w > 1e-12 * max(float(w[-1]), 1e-300)))

    def _index(self, X: np.ndarray) -> np.ndarray:
        idx = np.rint(X[:, 0]).astype(np.int64)
        if X.shape[1] != 1 or np.any(np.abs(X[:, 0] - idx) > 0) or np.any(idx < 0) or np.any(idx >= self._G.shape[0]):
            raise ValueError(f"PrecomputedKernel inputs are point indices in 0..{self._G.shape[0] - 1}")
        return idx

    def _gram(self, X, Z):
        return self._G[np.ix_(self._index(X), self._index(Z))]

    def to_json(self) -> dict:
        return {"kernel": self.name, "gram": self._G.tolist()}


def normalized_gram(kernel: Kernel, X: Any) -> np.ndarray:
    """The paper's K_**x**: (K_**x**)_{ab} = k(x_a, x_b)/n for n points.

    >>> normalized_gram(LinearKernel(), [[1.0], [2.0]]).tolist()
    [[0.5, 1.0], [1.0, 2.0]]
    """
    X = as_points(X)
    return kernel(X) / X.shape[0]


# --------------------------------------------------------------------------------------------
# RKHS elements
# --------------------------------------------------------------------------------------------


class RKHSFunction:
    """An element f of ℋ with exact values f(X), ‖f‖_ℋ² and inner products.

    Subclasses give ``values(X)``, ``norm_sq()`` and ``inner(g)`` (⟨f, g⟩_ℋ). By the reproducing
    property (eq. 1), ⟨f, Σ c_j k(·, z_j)⟩ = Σ c_j f(z_j) for every f, which is how mixed types meet.
    """

    kernel: Kernel

    def __call__(self, X: Any) -> np.ndarray:
        return self.values(X)

    def values(self, X: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def norm_sq(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def inner(self, other: "RKHSFunction") -> float:
        if isinstance(other, KernelExpansion):
            return other.inner(self)
        raise TypeError(f"no RKHS inner product between {type(self).__name__} and {type(other).__name__}")


class ZeroFunction(RKHSFunction):
    """The zero function (the paper's usual f_0).

    >>> ZeroFunction(LinearKernel()).values([[1.0], [2.0]]).tolist(), ZeroFunction(LinearKernel()).norm_sq()
    ([0.0, 0.0], 0.0)
    """

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def values(self, X):
        return np.zeros(as_points(X).shape[0])

    def norm_sq(self):
        return 0.0

    def inner(self, other):
        return 0.0


class KernelExpansion(RKHSFunction):
    """f = Σ_j c_j k(·, z_j): ‖f‖² = cᵀ k(Z, Z) c, f(X) = k(X, Z) c.

    >>> f = KernelExpansion(LinearKernel(), [[1.0, 0.0]], [2.0])
    >>> f.values([[3.0, 4.0]]).tolist(), f.norm_sq()
    ([6.0], 4.0)
    """

    def __init__(self, kernel: Kernel, centers: Any, coef: Any) -> None:
        self.kernel = kernel
        self.centers = as_points(centers)
        self.coef = np.asarray(coef, dtype=np.float64).ravel()
        if self.coef.shape[0] != self.centers.shape[0]:
            raise ValueError(
                f"KernelExpansion needs one coefficient per center, got {self.coef.shape[0]} and "
                f"{self.centers.shape[0]}"
            )

    def values(self, X):
        return self.kernel(X, self.centers) @ self.coef

    def norm_sq(self):
        return float(max(self.coef @ self.kernel(self.centers) @ self.coef, 0.0))

    def inner(self, other):
        return float(self.coef @ other.values(self.centers))


class FeatureFunction(RKHSFunction):
    """f = θ·ϕ for a finite-rank kernel: f(X) = ϕ(X)θ, ‖f‖_ℋ = ‖θ‖₂ (eq. 3).

    >>> f = FeatureFunction(MonomialKernel(2), [0.0, 1.0, -1.0])
    >>> f.values([2.0]).tolist(), f.norm_sq()
    ([-2.0], 2.0)
    """

    def __init__(self, kernel: Kernel, theta: Any) -> None:
        self.kernel = kernel
        self.theta = np.asarray(theta, dtype=np.float64).ravel()

    def values(self, X):
        return self.kernel.features(X) @ self.theta

    def norm_sq(self):
        return float(self.theta @ self.theta)

    def inner(self, other):
        if isinstance(other, FeatureFunction) and other.kernel is self.kernel:
            return float(self.theta @ other.theta)
        if isinstance(other, ZeroFunction):
            return 0.0
        return super().inner(other)


class MercerSeries(RKHSFunction):
    """f = Σ_ℓ β_ℓ φ_ℓ in a kernel's Mercer basis: ‖f‖_ℋ² = Σ β_ℓ²/μ_ℓ, ‖f‖_{L²}² = Σ β_ℓ² (eq. 3).

    >>> f = MercerSeries(SobolevKernel(), [1.0])
    >>> round(f.norm_sq(), 12) == round((np.pi / 2) ** 2, 12)
    True
    """

    def __init__(self, kernel: Kernel, beta: Any) -> None:
        if not hasattr(kernel, "mercer_eigenvalues"):
            raise ValueError(f"{kernel.name} kernel has no closed-form Mercer expansion")
        self.kernel = kernel
        self.beta = np.asarray(beta, dtype=np.float64).ravel()

    def values(self, X):
        return self.kernel.mercer_eigenfunctions(X, self.beta.size) @ self.beta

    def norm_sq(self):
        return float((self.beta**2 / self.kernel.mercer_eigenvalues(self.beta.size)).sum())

    def l2_norm_sq(self) -> float:
        """‖f‖²_{L²(P)} under the Mercer law (uniform on [0, 1] for the Sobolev kernel)."""
        return float(self.beta @ self.beta)

    def inner(self, other):
        if isinstance(other, MercerSeries) and other.kernel is self.kernel:
            m = min(self.beta.size, other.beta.size)
            return float((self.beta[:m] * other.beta[:m] / self.kernel.mercer_eigenvalues(m)).sum())
        if isinstance(other, ZeroFunction):
            return 0.0
        return super().inner(other)


def rkhs_inner(f: RKHSFunction, g: RKHSFunction) -> float:
    """⟨f, g⟩_ℋ.

    >>> k = LinearKernel()
    >>> rkhs_inner(KernelExpansion(k, [[1.0]], [2.0]), FeatureFunction(k, [3.0]))
    6.0
    """
    if isinstance(f, KernelExpansion):
        return f.inner(g)
    return g.inner(f) if isinstance(g, KernelExpansion) else f.inner(g)


def rkhs_norm(f: RKHSFunction) -> float:
    """‖f‖_ℋ.

    >>> rkhs_norm(FeatureFunction(LinearKernel(), [3.0, 4.0]))
    5.0
    """
    return math.sqrt(max(f.norm_sq(), 0.0))


def empirical_norm(values: Any) -> float:
    """‖f‖_N = √((1/N) Σ f(x_j)²) from the values f(**x**) (eq. 14).

    >>> round(empirical_norm([3.0, 4.0]) ** 2, 12)
    12.5
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    return float(np.sqrt(np.mean(v * v)))


# --------------------------------------------------------------------------------------------
# federated kernel-regression data
# --------------------------------------------------------------------------------------------


class KernelFederation:
    """M clients with covariates **x**_i (n_i points) and responses y_i, under one kernel (Section 2).

    ``covariates``: list of M arrays (n_i,) or (n_i, p) (unbalanced sizes allowed); ``responses``:
    list of M arrays (n_i,). ``truths`` (optional): one :class:`RKHSFunction` per client (f_i^*), or
    one shared by all; ``noise_sd`` (optional): σ, or per-client σ_i (the variance bound of Section 2).

    Pooled arrays follow the paper's stacking **x** = (**x**_1, …, **x**_M): ``x`` (N, p), ``y`` (N,),
    ``client`` (N,) (the client of each point), ``slices``; ``weights`` w_i = n_i/N (eq. 4).
    The Gram matrix G = k(**x**, **x**), K_**x** = G/N and the client blocks K_{**x**_i} = G_ii/n_i
    are computed once (``gram``, ``K_x``, ``client_blocks``; ``client_spectra`` are their
    eigendecompositions, padded to (M, n_max, n_max) with zero rows/columns).
    """

    def __init__(
        self,
        kernel: Kernel,
        covariates: Sequence[Any],
        responses: Sequence[Any],
        *,
        truths: Any = None,
        noise_sd: Any = None,
    ) -> None:
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a Kernel, got {type(kernel).__name__}")
        xs = [as_points(c) for c in covariates]
        ys = [np.asarray(r, dtype=np.float64).ravel() for r in responses]
        if not xs or len(xs) != len(ys):
            raise ValueError(
                f"covariates and responses must list the same number M >= 1 of clients, got {len(xs)} and {len(ys)}"
            )
        p = xs[0].shape[1]
        for i, (a, b) in enumerate(zip(xs, ys)):
            if a.shape[0] < 1 or a.shape[0] != b.shape[0]:
                raise ValueError(
                    f"client {i}: needs n_i >= 1 points and one response per point, got {a.shape[0]} and {b.shape[0]}"
                )
            if a.shape[1] != p:
                raise ValueError(f"client {i}: covariates of dimension {a.shape[1]}, others have {p}")
            if not np.all(np.isfinite(b)):
                raise ValueError(f"client {i}: responses must be finite")
        self.kernel = kernel
        self.xs, self.ys = xs, ys
        self.counts = np.array([a.shape[0] for a in xs], dtype=np.int64)
        self.N = int(self.counts.sum())
        self.M = len(xs)
        self.weights = self.counts / self.N
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)])
        self.slices = [slice(int(self.offsets[i]), int(self.offsets[i + 1])) for i in range(self.M)]
        self.x = np.concatenate(xs, axis=0)
        self.y = np.concatenate(ys)
        self.client = np.repeat(np.arange(self.M), self.counts)
        if truths is not None and isinstance(truths, RKHSFunction):
            truths = [truths] * self.M
        if truths is not None and len(truths) != self.M:
            raise ValueError(f"truths must be one RKHSFunction or one per client ({self.M}), got {len(truths)}")
        self.truths = truths
        if noise_sd is not None:
            sd = np.broadcast_to(np.asarray(noise_sd, dtype=np.float64), (self.M,)).copy()
            if np.any(sd < 0) or not np.all(np.isfinite(sd)):
                raise ValueError(f"noise_sd must be finite and >= 0, got {sd.tolist()}")
            noise_sd = sd
        self.noise_sd = noise_sd
        self._gram: np.ndarray | None = None
        self._spectra: tuple[np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:
        return f"KernelFederation(kernel={self.kernel!r}, M={self.M}, N={self.N})"

    # pooled objects ---------------------------------------------------------------------------
    @property
    def gram(self) -> np.ndarray:
        """G = k(**x**, **x**) (N, N), unnormalised."""
        if self._gram is None:
            G = self.kernel(self.x)
            self._gram = 0.5 * (G + G.T)
        return self._gram

    @property
    def K_x(self) -> np.ndarray:
        """K_**x** = G/N."""
        return self.gram / self.N

    @property
    def n_max(self) -> int:
        return int(self.counts.max())

    @property
    def mask(self) -> np.ndarray:
        """(M, n_max): 1 on a client's real points, 0 on padding."""
        return (np.arange(self.n_max)[None, :] < self.counts[:, None]).astype(np.float64)

    @property
    def padded_index(self) -> np.ndarray:
        """(M, n_max) pooled index of each client's j-th point (padding repeats the client's first point)."""
        j = np.minimum(np.arange(self.n_max)[None, :], self.counts[:, None] - 1)
        return self.offsets[:-1, None] + j

    def client_blocks(self) -> np.ndarray:
        """K_{**x**_i} = G_ii/n_i, padded with zeros: (M, n_max, n_max)."""
        idx = self.padded_index
        G = self.gram[idx[:, :, None], idx[:, None, :]]
        m = self.mask
        return G * m[:, :, None] * m[:, None, :] / self.counts[:, None, None]

    def client_spectra(self) -> tuple[np.ndarray, np.ndarray]:
        """Eigendecompositions of the padded client blocks (ascending): (M, n_max), (M, n_max, n_max)."""
        if self._spectra is None:
            lam, V = np.linalg.eigh(self.client_blocks())
            self._spectra = (np.maximum(lam, 0.0), V)
        return self._spectra

    def client_norms(self) -> np.ndarray:
        """‖K_{**x**_i}‖₂ per client (M,)."""
        return self.client_spectra()[0][:, -1]

    def gamma(self, eta: float) -> float:
        """γ = η max_i ‖K_{**x**_i}‖₂ (Section 4).

        >>> fed = KernelFederation(LinearKernel(), [[[1.0]], [[2.0], [0.0]]], [[0.0], [0.0, 0.0]])
        >>> fed.gamma(0.5)
        1.0
        """
        return float(eta) * float(self.client_norms().max())

    def truth_values(self) -> np.ndarray:
        """(f_1^*(**x**_1), …, f_M^*(**x**_M)) stacked (N,)."""
        if self.truths is None:
            raise ValueError("this federation has no truths f_i^*")
        return np.concatenate([self.truths[i].values(self.xs[i]) for i in range(self.M)])

    def noise_variances(self) -> np.ndarray:
        """σ_i² of each point's client (N,)."""
        if self.noise_sd is None:
            raise ValueError("this federation has no noise level")
        return self.noise_sd[self.client] ** 2

    def with_responses(self, y: Any) -> "KernelFederation":
        """The same covariates, kernel, truths and noise level with new pooled responses y (N,)."""
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.shape[0] != self.N:
            raise ValueError(f"with_responses needs N = {self.N} responses, got {y.shape[0]}")
        new = KernelFederation(
            self.kernel, self.xs, [y[s] for s in self.slices], truths=self.truths, noise_sd=self.noise_sd
        )
        new._gram, new._spectra = self._gram, self._spectra
        return new

    # constructors -----------------------------------------------------------------------------
    @classmethod
    def sample(
        cls,
        kernel: Kernel,
        counts: Sequence[int],
        *,
        truths: Any,
        noise_sd: Any = 0.0,
        covariates: Callable[[np.random.Generator, int, int], np.ndarray] | None = None,
        seed: Any = None,
    ) -> "KernelFederation":
        """Draw covariates (``covariates(rng, client, n_i)``; default uniform on [0, 1]) and responses
        y_ij = f_i^*(x_ij) + σ_i g_ij with Gaussian g. Seeded.

        >>> fed = KernelFederation.sample(GaussianKernel(), [2, 3], truths=ZeroFunction(GaussianKernel()),
        ...                               noise_sd=0.0, seed=1)
        >>> fed.y.tolist()
        [0.0, 0.0, 0.0, 0.0, 0.0]
        """
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        counts = [int(c) for c in counts]
        M = len(counts)
        truths_list = [truths] * M if isinstance(truths, RKHSFunction) else list(truths)
        sd = np.broadcast_to(np.asarray(noise_sd, dtype=np.float64), (M,))
        xs, ys = [], []
        for i, n in enumerate(counts):
            x = as_points(rng.uniform(size=n) if covariates is None else covariates(rng, i, n))
            xs.append(x)
            ys.append(truths_list[i].values(x) + sd[i] * rng.normal(size=n))
        return cls(kernel, xs, ys, truths=truths_list, noise_sd=sd)


# --------------------------------------------------------------------------------------------
# random instances of the hypothesis class
# --------------------------------------------------------------------------------------------

KERNEL_FAMILIES = ("gaussian", "sobolev", "polynomial", "linear", "random-features", "relu-ntk", "gram")


def _random_kernel(rng: np.random.Generator, family: str, p: int) -> tuple[Kernel, Callable]:
    """A kernel of ``family`` and a covariate sampler (rng, client, n) -> points, clients shifted (covariate shift)."""
    shift = rng.uniform(0, 1, size=(64, p))

    def box(r, i, n):
        c = shift[i % 64]
        return np.clip(c + 0.35 * r.uniform(-1, 1, size=(n, p)), 0.0, 1.0)

    if family == "gaussian":
        return GaussianKernel(float(10 ** rng.uniform(-1.3, 0))), box
    if family == "sobolev":
        return SobolevKernel(), lambda r, i, n: box(r, i, n)[:, :1]
    if family == "polynomial":
        return PolynomialKernel(int(rng.integers(1, 4)), float(rng.uniform(0, 2))), lambda r, i, n: 2 * box(r, i, n) - 1
    if family == "linear":
        return LinearKernel(), lambda r, i, n: r.normal(size=(n, p)) * rng.uniform(0.3, 2)
    if family == "random-features":
        return RandomFeatureKernel(p, int(rng.integers(2, 12)), seed=int(rng.integers(1 << 30))), box
    if family == "relu-ntk":
        return ReluNTKKernel(), lambda r, i, n: r.normal(size=(n, max(p, 2))) + shift[i % 64, :1]
    raise ValueError(f"unknown kernel family {family!r} (choose from {KERNEL_FAMILIES})")


def gram_federation(
    gram: Any, counts: Sequence[int], responses: Any = None, *, truths: Any = None, noise_sd: Any = None
) -> KernelFederation:
    """A federation on a :class:`PrecomputedKernel`: the first N = Σ n_i indices are the data, in client order.

    Indices past N are extra points (for truths and comparators outside the data's span).
    ``responses``: pooled y (N,) (default zeros).

    >>> fed = gram_federation(np.eye(4), [1, 2], [1.0, 2.0, 3.0])
    >>> fed.N, fed.x.ravel().tolist(), float(fed.K_x[0, 0])
    (3, [0.0, 1.0, 2.0], 0.3333333333333333)
    """
    counts = [int(c) for c in counts]
    N = sum(counts)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    y = np.zeros(N) if responses is None else np.asarray(responses, dtype=np.float64).ravel()
    xs = [np.arange(offsets[i], offsets[i + 1], dtype=np.float64) for i in range(len(counts))]
    return KernelFederation(
        PrecomputedKernel(gram),
        xs,
        [y[offsets[i] : offsets[i + 1]] for i in range(len(counts))],
        truths=truths,
        noise_sd=noise_sd,
    )


def random_kernel_federation(
    rng: np.random.Generator,
    *,
    family: str | None = None,
    M: int | None = None,
    n_range: tuple[int, int] = (1, 12),
    p: int | None = None,
    extra: int = 3,
    heterogeneity: float | None = None,
    noise: tuple[float, float] = (0.0, 1.0),
) -> KernelFederation:
    """A random instance of the paper's setting: unbalanced clients, covariate shift, heterogeneous f_i^* and σ_i.

    ``family`` (default random) from :data:`KERNEL_FAMILIES` (``"gram"``: a random PSD Gram matrix of
    random rank, so finite- and full-rank cases both occur); client sizes uniform in ``n_range``;
    truths f_i^* = f^* + h_i, KernelExpansions on ``extra`` points outside the data plus data points,
    with client deviations h_i of relative size ``heterogeneity`` (default random, 0 a quarter of the
    time); noise σ_i uniform in ``noise``; responses drawn.

    >>> fed = random_kernel_federation(np.random.default_rng(0), family="sobolev", M=3)
    >>> fed.M, fed.kernel.name, len(fed.truths)
    (3, 'sobolev', 3)
    """
    family = family or str(rng.choice(KERNEL_FAMILIES))
    M = M or int(rng.integers(1, 6))
    counts = rng.integers(n_range[0], n_range[1] + 1, size=M)
    p = p or int(rng.integers(1, 4))
    if family == "gram":
        Ntot = int(counts.sum()) + extra
        r = int(rng.integers(1, Ntot + 1))
        B = rng.normal(size=(Ntot, r)) * rng.uniform(0.2, 2.0, size=r)[None, :]
        G = B @ B.T
        kernel: Kernel = PrecomputedKernel(G)
        xs = None
        centers = np.arange(int(counts.sum()), Ntot, dtype=np.float64)[:, None]
    else:
        kernel, sampler = _random_kernel(rng, family, p)
        xs = [as_points(sampler(rng, i, int(n))) for i, n in enumerate(counts)]
        centers = as_points(sampler(rng, 63, extra))
    if heterogeneity is None:
        heterogeneity = float(rng.choice([0.0, rng.uniform(0, 2)], p=[0.25, 0.75]))
    base = rng.normal(size=centers.shape[0])
    sd = rng.uniform(*noise, size=M)
    if xs is None:
        offsets = np.concatenate([[0], np.cumsum(counts)])
        xs = [np.arange(offsets[i], offsets[i + 1], dtype=np.float64)[:, None] for i in range(M)]
    truths = []
    for i in range(M):
        allc = np.concatenate([centers, xs[i]], axis=0) if xs[i].shape[0] else centers
        coef = np.concatenate([base, np.zeros(xs[i].shape[0])]) + heterogeneity * rng.normal(
            size=allc.shape[0]
        ) / np.sqrt(allc.shape[0])
        truths.append(KernelExpansion(kernel, allc, coef))
    ys = [truths[i].values(xs[i]) + sd[i] * rng.normal(size=xs[i].shape[0]) for i in range(M)]
    return KernelFederation(kernel, xs, ys, truths=truths, noise_sd=sd)
