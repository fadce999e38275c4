r"""Dissimilarity measures of Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated
Optimization* (arXiv:2407.07084), exact for quadratics and estimated along trajectories otherwise.

Clients are taken in the paper's uniform view :math:`f = \frac1n\sum_i f_i` (a weighted federation's
clients are rescaled to :math:`n p_i f_i`, see :mod:`fedtheory.problems.clients`). With
:math:`f_S = \frac1s\sum_{i\in S} f_i`, :math:`h_i^S = f_S - f_i`, :math:`h^S = f - f_S`:

- **δ_s-SOD** (Definition 1): for all x, y and all S of size s,
  :math:`\frac1s\sum_{i\in S}\|\nabla h_i^S(x) - \nabla h_i^S(y)\|^2 \le \delta_s^2\|x-y\|^2`.
  For quadratics (Hessians A_i) the smallest such δ_s is exactly
  :math:`\max_S \sqrt{\lambda_{\max}(\frac1s\sum_{i\in S}(A_i - A_S)^2)}`; δ_A := δ_n (the average SOD,
  :meth:`~fedtheory.problems.quadratic.QuadraticFederation.delta_A`), δ_1 = 0.
- **δ_B** (max SOD): :math:`\max_i \|A_i - \bar A\|_2 \ge \delta_A`.
- **Δ_s-ED** (Definition 4): :math:`\|\nabla h^S(x) - \nabla h^S(y)\| \le \Delta_s\|x-y\|`; for quadratics
  :math:`\Delta_s = \max_S\|\bar A - A_S\|_2`, Δ_n = 0.
- **ζ²-BGV** (Definition 3): :math:`\frac1n\sum_i\|\nabla f_i(x) - \nabla f(x)\|^2 \le \zeta^2` for all x. On
  quadratics it is finite only when all Hessians coincide (the deviation is affine in x); then it is
  :math:`\frac1n\sum_i\|A c_i - \overline{Ac}\|^2`. :func:`gradient_variance` gives the variance at a point.
- **σ_s²** := (n − s)/(s(n − 1)) ζ² (the sampling noise of Lemma 14); :func:`sampling_factor`.
- Trajectory estimates (:func:`local_sod`, :func:`estimate_along`): the local ratio between two points,
  the quantity the adaptive λ of Section 5 uses.

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> q = make_quadratic(4, 3, mu=1.0, L=9.0, delta_A=2.0, seed=0)
>>> bool(abs(delta_s(q, 4) - 2.0) < 1e-12), delta_s(q, 1), bool(delta_B(q) >= delta_A(q))
(True, 0.0, True)
>>> Delta_s(q, 4) < 1e-12, bool(Delta_s(q, 1) > 0)
(True, True)
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

__all__ = [
    "uniform_hessians",
    "delta_A",
    "delta_B",
    "delta_s",
    "Delta_s",
    "delta_tilde",
    "zeta_sq",
    "gradient_variance",
    "sampling_factor",
    "sigma_s_sq",
    "local_sod",
    "local_ed",
    "estimate_along",
    "subsets",
]

MAX_SUBSETS = 20_000


def uniform_hessians(problem: Any) -> np.ndarray:
    """The clients' Hessians in the uniform view, n p_i A_i: (n, d, d) (a quadratic federation or its oracles).

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> uniform_hessians(QuadraticFederation(A=[[[1.0]], [[3.0]]], c=[[0.0], [0.0]], p=[0.25, 0.75]))[:, 0, 0].tolist()
    [0.5, 4.5]
    """
    from fedtheory.problems.clients import DiagonalQuadraticOracles, QuadraticOracles

    if isinstance(problem, QuadraticOracles):
        return problem.A
    if isinstance(problem, DiagonalQuadraticOracles):
        return np.einsum("nd,de->nde", problem.a, np.eye(problem.d))
    A = getattr(problem, "A", None)
    p = getattr(problem, "p", None)
    if A is None or p is None:
        raise ValueError(
            f"exact dissimilarities need a quadratic federation; got {type(problem).__name__} "
            f"(use estimate_along for other problems)"
        )
    A = np.asarray(A, dtype=np.float64)
    return A * (A.shape[0] * np.asarray(p, dtype=np.float64))[:, None, None]


def _uniform_federation(problem: Any):
    from fedtheory.problems.quadratic import QuadraticFederation

    A = uniform_hessians(problem)
    n, d = A.shape[0], A.shape[1]
    return QuadraticFederation(A=A, c=np.zeros((n, d)), p=np.full(n, 1.0 / n))


def subsets(n: int, s: int, limit: int = MAX_SUBSETS) -> np.ndarray:
    """All s-element subsets of range(n) as rows (C(n, s), s); ValueError beyond ``limit`` subsets.

    >>> subsets(4, 2).tolist()
    [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    """
    if not (1 <= s <= n):
        raise ValueError(f"subset size s must satisfy 1 <= s <= n = {n}, got s={s}")
    count = math.comb(n, s)
    if count > limit:
        raise ValueError(f"{count} subsets of size {s} of {n} clients exceed the limit {limit} for exact enumeration")
    return np.asarray(list(itertools.combinations(range(n), s)), dtype=np.int64).reshape(count, s)


def delta_A(problem: Any) -> float:
    r"""δ_A = √λ_max((1/n)Σ_i(A_i − Ā)²) of the uniform view (Definition 1 with s = n), exact.

    Builds on :meth:`~fedtheory.problems.quadratic.QuadraticFederation.delta_A` (which weights by p);
    with uniform weights the two agree.

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> delta_A(QuadraticFederation(A=[[[1.0]], [[3.0]]], c=[[0.0], [0.0]], p=[0.5, 0.5]))
    1.0
    >>> from fedtheory.problems.clients import DiagonalQuadraticOracles
    >>> delta_A(DiagonalQuadraticOracles(np.array([[1.0, 2.0], [3.0, 2.0]]), np.zeros((2, 2))))
    1.0
    """
    diag = _diagonal(problem)
    if diag is not None:  # diagonal Hessians: the matrices commute, so λ_max is a max over coordinates
        return float(np.sqrt(np.max(np.mean((diag - diag.mean(axis=0)) ** 2, axis=0))))
    return _uniform_federation(problem).delta_A()


def _diagonal(problem: Any) -> np.ndarray | None:
    from fedtheory.problems.clients import DiagonalQuadraticOracles

    return problem.a if isinstance(problem, DiagonalQuadraticOracles) else None


def delta_B(problem: Any) -> float:
    """δ_B = max_i ‖A_i − Ā‖₂ of the uniform view (the max-SOD of SONATA / Acc-Extragradient), exact."""
    diag = _diagonal(problem)
    if diag is not None:
        return float(np.abs(diag - diag.mean(axis=0)).max())
    return _uniform_federation(problem).delta_B()


def _top_eig_of_squares(D: np.ndarray) -> np.ndarray:
    """λ_max(mean_j D_j²) for a batch D (m, s, d, d) of symmetric matrices: (m,)."""
    M = np.einsum("msij,msjk->mik", D, D) / D.shape[1]
    M = 0.5 * (M + np.swapaxes(M, 1, 2))
    return np.linalg.eigvalsh(M)[:, -1]


def delta_s(problem: Any, s: int, limit: int = MAX_SUBSETS) -> float:
    r"""The exact δ_s of Definition 1 for quadratics: max over all S of size s of √λ_max((1/s)Σ_{i∈S}(A_i − A_S)²).

    The sup over x, y of the ratio in (5) is attained at the top eigenvector of that matrix, so this is
    the smallest admissible δ_s. Enumerates the C(n, s) subsets (ValueError beyond ``limit``).

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> q = QuadraticFederation(A=[[[0.0]], [[2.0]], [[4.0]]], c=[[0.0]] * 3, p=[1 / 3] * 3)
    >>> delta_s(q, 2), round(delta_s(q, 3), 12)
    (2.0, 1.632993161855)
    """
    A = uniform_hessians(problem)
    n = A.shape[0]
    S = subsets(n, s, limit)
    AS = A[S]  # (m, s, d, d)
    D = AS - AS.mean(axis=1, keepdims=True)
    top = _top_eig_of_squares(D)
    return float(math.sqrt(max(float(top.max()), 0.0)))


def Delta_s(problem: Any, s: int, limit: int = MAX_SUBSETS) -> float:
    r"""The exact Δ_s of Definition 4 for quadratics: max over S of size s of ‖Ā − A_S‖₂ (Δ_n = 0).

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> q = QuadraticFederation(A=[[[0.0]], [[2.0]], [[4.0]]], c=[[0.0]] * 3, p=[1 / 3] * 3)
    >>> Delta_s(q, 1), Delta_s(q, 2)
    (2.0, 1.0)
    """
    A = uniform_hessians(problem)
    n = A.shape[0]
    S = subsets(n, s, limit)
    diff = A.mean(axis=0)[None] - A[S].mean(axis=1)
    diff = 0.5 * (diff + np.swapaxes(diff, 1, 2))
    return float(np.abs(np.linalg.eigvalsh(diff)).max())


def delta_tilde(problem: Any, s: int, limit: int = MAX_SUBSETS) -> float:
    r"""The combined measure of Section 3, rebuilt as :math:`\tilde\delta_s = \delta_s + \Delta_s`
    (so δ̃_n = δ_A and δ̃_1 = Δ_1; the paper's exact weighting was lost in conversion).

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> q = QuadraticFederation(A=[[[0.0]], [[2.0]], [[4.0]]], c=[[0.0]] * 3, p=[1 / 3] * 3)
    >>> delta_tilde(q, 1)
    2.0
    """
    return delta_s(problem, s, limit) + Delta_s(problem, s, limit)


def zeta_sq(problem: Any, rtol: float = 1e-12) -> float:
    r"""The exact ζ² of Definition 3 for quadratics: finite only when all (rescaled) Hessians coincide.

    ∇f_i(x) − ∇f(x) = (A_i − Ā)x − (A_ic_i − mean_j A_jc_j) is affine in x, so its average squared norm is
    bounded over all x exactly when every A_i = Ā; then ζ² = (1/n)Σ‖A c_i − mean_j A c_j‖². Otherwise ``inf``.

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> zeta_sq(QuadraticFederation(A=[[[2.0]], [[2.0]]], c=[[1.0], [-1.0]], p=[0.5, 0.5]))
    4.0
    >>> zeta_sq(QuadraticFederation(A=[[[1.0]], [[2.0]]], c=[[0.0], [0.0]], p=[0.5, 0.5]))
    inf
    """
    A = uniform_hessians(problem)
    scale = max(float(np.abs(A).max()), np.finfo(np.float64).tiny)
    if float(np.abs(A - A.mean(axis=0)).max()) > rtol * scale:
        return math.inf
    c = np.asarray(problem.c, dtype=np.float64)
    b = np.einsum("nij,nj->ni", A, c)
    dev = b - b.mean(axis=0)
    return float(np.mean(np.einsum("ni,ni->n", dev, dev)))


def gradient_variance(oracles: Any, x: Any) -> float:
    """(1/n)Σ_i‖∇f_i(x) − ∇f(x)‖² at one point x (the quantity ζ² bounds for every x).

    >>> from fedtheory.problems.quadratic import QuadraticFederation
    >>> from fedtheory.problems.clients import client_oracles
    >>> orc = client_oracles(QuadraticFederation(A=[[[2.0]], [[2.0]]], c=[[1.0], [-1.0]], p=[0.5, 0.5]))
    >>> gradient_variance(orc, [5.0])
    4.0
    """
    from fedtheory.problems.clients import client_oracles

    orc = client_oracles(oracles)
    x = np.asarray(x, dtype=np.float64)
    G = orc.grads(np.broadcast_to(x, (orc.n, orc.d)).copy())
    D = G - G.mean(axis=0)
    return float(np.mean(np.einsum("ni,ni->n", D, D)))


def sampling_factor(n: int, s: int) -> float:
    """(n − s)/(s(n − 1)) of Lemma 14 (0 at s = n, 1 at s = 1; 0 for n = 1).

    >>> sampling_factor(10, 10), sampling_factor(10, 1), sampling_factor(4, 2)
    (0.0, 1.0, 0.3333333333333333)
    """
    if not (1 <= s <= n):
        raise ValueError(f"need 1 <= s <= n, got s={s}, n={n}")
    return 0.0 if n == 1 else (n - s) / (s * (n - 1))


def sigma_s_sq(zeta2: float, n: int, s: int) -> float:
    """σ_s² = (n − s)/(s(n − 1)) ζ² (an ``inf`` ζ² at s = n gives 0: no sampling noise)."""
    f = sampling_factor(n, s)
    return 0.0 if f == 0 else f * zeta2


def local_sod(oracles: Any, x: Any, y: Any, clients: Any = None) -> float:
    r"""The local SOD ratio between two points: √((1/s)Σ_{i∈S}‖∇h_i^S(x) − ∇h_i^S(y)‖²)/‖x − y‖.

    For quadratics it never exceeds δ_s (δ_A for S = [n]); along a trajectory it is what the adaptive λ
    of Section 5 measures. ``nan`` when x = y.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> q = make_quadratic(3, 4, mu=1.0, L=5.0, delta_A=1.0, seed=0)
    >>> bool(local_sod(q, np.zeros(4), np.ones(4)) <= 1.0 + 1e-12)
    True
    """
    from fedtheory.problems.clients import client_oracles

    orc = client_oracles(oracles)
    idx = np.arange(orc.n) if clients is None else np.asarray(clients, dtype=np.int64)
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    step = float(np.linalg.norm(x - y))
    if step == 0:
        return math.nan
    Gx = orc.grads(np.broadcast_to(x, (idx.size, orc.d)).copy(), idx)
    Gy = orc.grads(np.broadcast_to(y, (idx.size, orc.d)).copy(), idx)
    D = (Gx - Gx.mean(axis=0)) - (Gy - Gy.mean(axis=0))
    return math.sqrt(float(np.mean(np.einsum("ij,ij->i", D, D)))) / step


def local_ed(oracles: Any, x: Any, y: Any, clients: Any) -> float:
    """The local ED ratio ‖∇h^S(x) − ∇h^S(y)‖/‖x − y‖ (h^S = f − f_S); ``nan`` when x = y."""
    from fedtheory.problems.clients import client_oracles

    orc = client_oracles(oracles)
    idx = np.asarray(clients, dtype=np.int64)
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    step = float(np.linalg.norm(x - y))
    if step == 0:
        return math.nan
    hx = orc.grad(x) - orc.grads(np.broadcast_to(x, (idx.size, orc.d)).copy(), idx).mean(axis=0)
    hy = orc.grad(y) - orc.grads(np.broadcast_to(y, (idx.size, orc.d)).copy(), idx).mean(axis=0)
    return float(np.linalg.norm(hx - hy)) / step


def estimate_along(oracles: Any, points: Any) -> dict:
    """Trajectory estimates of δ_A (max local SOD between consecutive points) and ζ² (max gradient
    variance at the points): lower bounds of the worst-case constants, for problems without closed forms.

    >>> from fedtheory.problems.finite_sum import LogisticFederation
    >>> est = estimate_along(LogisticFederation.random(3, 20, 2, seed=0), np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 1.0]]))
    >>> sorted(est), est["points"]
    (['delta_A', 'points', 'zeta_sq'], 3)
    """
    from fedtheory.problems.clients import client_oracles

    orc = client_oracles(oracles)
    P = np.atleast_2d(np.asarray(points, dtype=np.float64))
    ratios = [local_sod(orc, P[k + 1], P[k]) for k in range(P.shape[0] - 1)]
    ratios = [r for r in ratios if math.isfinite(r)]
    return {
        "delta_A": max(ratios) if ratios else math.nan,
        "zeta_sq": max(gradient_variance(orc, p) for p in P),
        "points": int(P.shape[0]),
    }
