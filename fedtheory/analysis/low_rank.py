r"""Low-rank structure of functions smooth in their first argument: approximate rank, the piecewise
Taylor approximation of Lemma 1 and the rank bound of Theorem 1.

Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*, Section III-A:

* A function :math:`g(\cdot;\vartheta):[0,1]^d\to\mathbb R` is in the :math:`(\eta,L_2)`-Hölder class
  (eq. (6)) when it is :math:`l=\lceil\eta\rceil-1` times differentiable and every l-th partial
  derivative is :math:`(\eta-l)`-Hölder with constant :math:`L_2` in the **ℓ¹ norm**.
* **Lemma 1**: on a partition :math:`\mathcal S_{d,q}` of :math:`[0,1]^d` into pieces within ℓ¹
  distance 1/q of their centers, the piecewise Taylor polynomial of degree l satisfies
  :math:`\sup_y|g(y)-P_{q,l}(y)|\le L_2/(l!\,q^\eta)`.
* **Theorem 1**: for the latent variable model :math:`M_{ij}=g(y^{(i)};\vartheta^{(j)})` and
  :math:`r\ge e\sqrt d\,2^d(l+d)^d`,
  :math:`\frac1{nk}\|M-M_r\|_F^2\le\frac{L_2^2e^{2\eta/d}d^{\eta/d}4^\eta(l+d)^{2\eta}}{(l!)^2}r^{-2\eta/d}`.
* **Approximate rank** (Appendix C, eq. (77)): the least J whose top J squared singular values hold
  90 % of :math:`\|M\|_F^2`.

The partition built here (:class:`L1GridPartition`) is a grid of cubes whose ℓ¹ radius is at most 1/q;
it is the minimal ℓ¹ covering for d = 1 and a valid (not minimal) one for d ≥ 2, which is all Lemma 1
needs. The minimal covering number's bound :math:`d!(q+1)^d` used in (51) is :func:`covering_number_bound`.

>>> import numpy as np
>>> approximate_rank(np.diag([3.0, 1.0, 0.1]))           # 9/(9+1+0.01) < 0.9 <= 10/10.01
2
>>> part = L1GridPartition(d=2, q=4.0)
>>> part.cells_per_axis, part.radius <= 1 / 4.0
(4, True)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = [
    "approximate_rank",
    "multi_indices",
    "holder_l",
    "L1GridPartition",
    "covering_number_bound",
    "piecewise_taylor",
    "lemma1_bound",
    "FourierFeatures",
    "DistanceKernel",
    "theorem1_min_rank",
    "theorem1_log_bound",
    "stirling_binomial_bound_52",
    "low_rank_error",
    "rank_bound_51",
]


# --------------------------------------------------------------------------------------------
# approximate rank (77)
# --------------------------------------------------------------------------------------------


def approximate_rank(M: Any, energy: float = 0.9) -> Any:
    r"""Eq. (77): :math:`\min\{J:\sum_{i\le J}\sigma_i^2\ge0.9\|M\|_F^2\}`, batched over leading axes.

    A zero matrix gets 0 (the paper defines the quantity for non-zero matrices). ``energy`` is the
    captured fraction (0.9 in the paper).

    >>> import numpy as np
    >>> approximate_rank(np.stack([np.eye(4), np.zeros((4, 4))])).tolist()
    [4, 0]
    >>> approximate_rank(np.ones((5, 3)))
    1
    """
    if not 0 < energy <= 1:
        raise ValueError(f"energy fraction must lie in (0, 1], got {energy!r}")
    M = np.asarray(M, dtype=np.float64)
    if M.ndim < 2:
        raise ValueError(f"approximate_rank needs matrices (..., n, k), got shape {M.shape}")
    sv2 = np.linalg.svd(M, compute_uv=False) ** 2
    total = sv2.sum(axis=-1, keepdims=True)
    cum = np.cumsum(sv2, axis=-1)
    # the float64 sum of the same squares, so J = full rank always qualifies
    J = (cum < energy * total * (1 - 1e-12)).sum(axis=-1) + 1
    J = np.where(total[..., 0] > 0, J, 0)
    return int(J) if J.ndim == 0 else J


# --------------------------------------------------------------------------------------------
# Hölder classes, multi-indices, the partition of Section III-A
# --------------------------------------------------------------------------------------------


def holder_l(eta: float) -> int:
    r""":math:`l=\lceil\eta\rceil-1` (the number of derivatives of the Hölder class).

    >>> holder_l(2.0), holder_l(2.5), holder_l(0.3)
    (1, 2, 0)
    """
    eta = float(eta)
    if not (math.isfinite(eta) and eta > 0):
        raise ValueError(f"the Hölder exponent eta must be > 0, got eta={eta!r}")
    return int(math.ceil(eta)) - 1


def multi_indices(d: int, l: int) -> list[tuple[int, ...]]:
    """All s ∈ Z₊^d with |s| ≤ l, by degree then lexicographically; there are C(l+d, d).

    >>> multi_indices(2, 2)
    [(0, 0), (0, 1), (1, 0), (0, 2), (1, 1), (2, 0)]
    """
    out = []
    for deg in range(l + 1):
        out += sorted(s for s in itertools.product(range(deg + 1), repeat=d) if sum(s) == deg)
    return out


@dataclass(frozen=True)
class L1GridPartition:
    r"""A partition of :math:`[0,1]^d` into ``cells_per_axis``^d cubes of side h = 1/⌈qd/2⌉, each within
    ℓ¹ distance dh/2 ≤ 1/q of its center (a valid :math:`\mathcal S_{d,q}`; minimal for d = 1).

    >>> part = L1GridPartition(d=1, q=3.0)
    >>> part.centers.ravel().tolist(), part.locate(np.array([[0.0], [0.5], [1.0]])).tolist()
    ([0.25, 0.75], [0, 1, 1])
    """

    d: int
    q: float

    def __post_init__(self) -> None:
        if isinstance(self.d, bool) or int(self.d) != self.d or self.d < 1:
            raise ValueError(f"dimension d must be a positive integer, got d={self.d!r}")
        if not (math.isfinite(float(self.q)) and self.q > 0):
            raise ValueError(f"Lemma 1 needs q > 0, got q={self.q!r}")

    @property
    def cells_per_axis(self) -> int:
        return max(1, int(math.ceil(self.q * self.d / 2 - 1e-12)))

    @property
    def side(self) -> float:
        return 1.0 / self.cells_per_axis

    @property
    def radius(self) -> float:
        """ℓ¹ distance from a center to its cell's farthest corner: d·h/2."""
        return self.d * self.side / 2

    @property
    def n_cells(self) -> int:
        return self.cells_per_axis**self.d

    @property
    def centers(self) -> np.ndarray:
        """(n_cells, d) cell centers, cell index = Σ_j i_j · n^j (first coordinate fastest)."""
        n = self.cells_per_axis
        idx = np.arange(n**self.d)
        digits = np.stack([(idx // n**j) % n for j in range(self.d)], axis=1)
        return (digits + 0.5) / n

    def locate(self, y: Any) -> np.ndarray:
        """Cell index of each row of ``y`` (N, d) in [0, 1]^d (the point 1 belongs to the last cell)."""
        y = np.asarray(y, dtype=np.float64).reshape(-1, self.d)
        if np.any((y < 0) | (y > 1)):
            raise ValueError("points must lie in [0, 1]^d")
        n = self.cells_per_axis
        cell = np.minimum((y * n).astype(np.int64), n - 1)
        return (cell * (n ** np.arange(self.d))[None, :]).sum(axis=1)


def covering_number_bound(d: int, q: float) -> float:
    r"""The volumetric bound on the minimal ℓ¹ covering number used in (51): :math:`d!(q+1)^d`.

    >>> covering_number_bound(2, 3.0)
    32.0
    """
    return float(math.factorial(int(d)) * (q + 1.0) ** d)


def piecewise_taylor(
    derivatives: Callable[[np.ndarray], np.ndarray], partition: L1GridPartition, l: int, y: Any
) -> np.ndarray:
    r""":math:`P_{q,l}(y)=\sum_{I}P_I(y)\mathbb 1\{y\in I\}`, :math:`P_I` the degree-l Taylor polynomial
    at the center :math:`z_I` (eq. (49)).

    ``derivatives(z)`` returns, for centers z (N, d), the array (N, C(l+d,d)) of
    :math:`\nabla^sg(z)` in the order of :func:`multi_indices` (d, l).

    >>> f = FourierFeatures(c=np.array([1.0]), omega=np.array([[2.0]]), phase=np.array([0.3]))
    >>> part = L1GridPartition(d=1, q=8.0)
    >>> y = np.linspace(0, 1, 101)[:, None]
    >>> err = np.abs(piecewise_taylor(lambda z: f.derivatives(z, 2), part, 2, y) - f.value(y)).max()
    >>> bool(err <= lemma1_bound(f.holder_constant(3.0), 3.0, 8.0))
    True
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1, partition.d)
    cells = partition.locate(y)
    centers = partition.centers
    used, inverse = np.unique(cells, return_inverse=True)
    D = np.asarray(derivatives(centers[used]), dtype=np.float64)  # (U, n_idx)
    idx = multi_indices(partition.d, l)
    if D.shape != (used.size, len(idx)):
        raise ValueError(f"derivatives must return shape ({used.size}, {len(idx)}), got {D.shape}")
    diff = y - centers[cells]  # (N, d)
    powers = np.stack(
        [np.prod(diff ** np.array(s)[None, :], axis=1) / math.prod(math.factorial(k) for k in s) for s in idx], axis=1
    )  # (N, n_idx)
    return np.einsum("nk,nk->n", powers, D[inverse])


def lemma1_bound(L2: float, eta: float, q: float) -> float:
    r"""Lemma 1's uniform error bound :math:`L_2/(l!\,q^\eta)`.

    >>> lemma1_bound(1.0, 2.0, 10.0)
    0.01
    """
    return float(L2) / (math.factorial(holder_l(eta)) * float(q) ** float(eta))


# --------------------------------------------------------------------------------------------
# test functions with exact derivatives and rigorous Hölder constants
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FourierFeatures:
    r""":math:`g(y)=\sum_k c_k\cos(\omega_k^\top y+\phi_k)` on :math:`[0,1]^d` (one parameter ϑ = (c, ω, φ)).

    Exact derivatives :math:`\nabla^sg=\sum_kc_k\omega_k^s\cos(\omega_k^\top y+\phi_k+|s|\pi/2)`, and the
    ℓ¹ Hölder constant of order η from :math:`|\cos a-\cos b|\le\min(|a-b|,2)\le|a-b|^\beta2^{1-\beta}`
    (β = η − l) and :math:`|\omega^\top\Delta y|\le\|\omega\|_\infty\|\Delta y\|_1`.

    >>> f = FourierFeatures(c=np.array([2.0]), omega=np.array([[3.0, -1.0]]), phase=np.array([0.0]))
    >>> f.holder_constant(2.0)          # max_|s|=1 |c||ω^s| ‖ω‖_∞ = 2·3·3
    18.0
    """

    c: np.ndarray
    omega: np.ndarray  # (K, d)
    phase: np.ndarray

    def value(self, y: Any) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        return np.cos(y @ self.omega.T + self.phase[None, :]) @ self.c

    def derivatives(self, z: Any, l: int) -> np.ndarray:
        """(N, C(l+d,d)): ∇^s g(z) for s in :func:`multi_indices` (d, l)."""
        z = np.asarray(z, dtype=np.float64)
        d = self.omega.shape[1]
        u = z @ self.omega.T + self.phase[None, :]  # (N, K)
        cols = []
        for s in multi_indices(d, l):
            coef = self.c * np.prod(self.omega ** np.array(s)[None, :], axis=1)
            cols.append(np.cos(u + sum(s) * np.pi / 2) @ coef)
        return np.stack(cols, axis=1)

    def holder_constant(self, eta: float) -> float:
        """A rigorous (η, L₂) ℓ¹-Hölder constant L₂ (see the class docstring)."""
        l = holder_l(eta)
        beta = float(eta) - l
        d = self.omega.shape[1]
        wmax = np.abs(self.omega).max(axis=1)
        best = 0.0
        for s in multi_indices(d, l):
            if sum(s) != l:
                continue
            term = np.abs(self.c) * np.abs(np.prod(self.omega ** np.array(s)[None, :], axis=1)) * wmax**beta
            best = max(best, float(term.sum()) * 2 ** (1 - beta))
        return best


@dataclass(frozen=True)
class DistanceKernel:
    r""":math:`g(y;\vartheta)=L_2\|y-\vartheta\|_1^\eta` for η ∈ (0, 1] (l = 0): exactly
    :math:`(\eta,L_2)`-Hölder in ℓ¹ (the Hölder bound is attained at y = ϑ), the extremal case of Lemma 1.

    >>> k = DistanceKernel(L2=2.0, eta=0.5)
    >>> k.matrix(np.array([[0.0], [1.0]]), np.array([[0.0], [0.25]])).tolist()
    [[0.0, 1.0], [2.0, 1.7320508075688772]]
    """

    L2: float
    eta: float

    def __post_init__(self) -> None:
        if not 0 < self.eta <= 1:
            raise ValueError(f"DistanceKernel needs eta in (0, 1] (l = 0), got eta={self.eta!r}")

    def matrix(self, y: Any, theta: Any) -> np.ndarray:
        """M_ij = L2 ‖y_i − ϑ_j‖₁^η."""
        y, theta = np.asarray(y, dtype=np.float64), np.asarray(theta, dtype=np.float64)
        dist = np.abs(y[:, None, :] - theta[None, :, :]).sum(axis=2)
        return self.L2 * dist**self.eta


# --------------------------------------------------------------------------------------------
# Theorem 1
# --------------------------------------------------------------------------------------------


def theorem1_min_rank(d: int, eta: float) -> float:
    r"""Theorem 1's hypothesis :math:`r\ge e\sqrt d\,2^d(l+d)^d`.

    >>> round(theorem1_min_rank(1, 1.0), 4)
    5.4366
    """
    l = holder_l(eta)
    return math.e * math.sqrt(d) * 2**d * (l + d) ** d


def theorem1_log_bound(d: int, eta: float, L2: float, r: float) -> float:
    r"""Natural log of Theorem 1's bound
    :math:`\frac{L_2^2e^{2\eta/d}d^{\eta/d}4^\eta(l+d)^{2\eta}}{(l!)^2}r^{-2\eta/d}`.

    Raises ValueError when r is below :func:`theorem1_min_rank` (the theorem's hypothesis).

    >>> round(math.exp(theorem1_log_bound(1, 1.0, 1.0, 10)), 6)     # (2e/10)^2
    0.295562
    >>> theorem1_log_bound(1, 1.0, 1.0, 5)
    Traceback (most recent call last):
    ...
    ValueError: Theorem 1 hypothesis r >= e sqrt(d) 2^d (l+d)^d violated: r=5, d=1, eta=1, bound=5.43656
    """
    l = holder_l(eta)
    need = theorem1_min_rank(d, eta)
    if not r >= need:
        raise ValueError(
            f"Theorem 1 hypothesis r >= e sqrt(d) 2^d (l+d)^d violated: r={r:g}, d={d}, eta={eta:g}, bound={need:g}"
        )
    if not L2 > 0:
        raise ValueError(f"Theorem 1 needs a Hölder constant L2 > 0, got L2={L2!r}")
    return (
        2 * math.log(L2)
        + 2 * eta / d
        + eta / d * math.log(d)
        + eta * math.log(4)
        + 2 * eta * math.log(l + d)
        - 2 * math.lgamma(l + 1)
        - 2 * eta / d * math.log(r)
    )


def stirling_binomial_bound_52(d: int, l: int) -> tuple[int, float]:
    r"""Both sides of eq. (52): (:math:`d!\binom{l+d}{d}` exactly, :math:`e\sqrt d(l+d)^d`).

    >>> stirling_binomial_bound_52(3, 2)
    (60, 588.52...)
    """
    return math.factorial(d) * math.comb(l + d, d), math.e * math.sqrt(d) * (l + d) ** d


def rank_bound_51(d: int, l: int, q: float) -> float:
    r"""Eq. (51): :math:`\mathrm{rank}(N)\le d!\binom{l+d}{d}(q+1)^d`.

    >>> rank_bound_51(1, 0, 3.0)
    4.0
    """
    return float(math.factorial(d) * math.comb(l + d, d)) * (q + 1.0) ** d


def low_rank_error(M: Any, r: int) -> float:
    r""":math:`\frac1{nk}\|M-M_r\|_F^2`, M_r the best rank-r approximation (Eckart–Young–Mirsky):
    the tail sum of squared singular values over nk.

    >>> low_rank_error(np.diag([3.0, 2.0, 1.0]), 2)
    0.1111111111111111
    """
    M = np.asarray(M, dtype=np.float64)
    sv = np.linalg.svd(M, compute_uv=False)
    return float(np.sum(sv[int(r) :] ** 2) / M.size)
