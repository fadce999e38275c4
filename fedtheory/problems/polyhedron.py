r"""The polyhedron-feasibility problem of Section 5 (Figure 3) as a finite-sum federation.

Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization*
(arXiv:2407.07084), following Rodomanov, Jiang & Stich (arXiv:2406.06398): find x with
:math:`\langle a_j, x\rangle \le b_j` for all j = 1..N by minimizing :math:`f = \frac1n\sum_i f_i`,

.. math:: f_i(x) = \frac1{m_i}\sum_{j\in\mathcal D_i}[\langle a_j, x\rangle - b_j]_+^2 \;(+\tfrac{l_2}{2}\|x\|^2),

where the constraints are split across n clients. The generator draws :math:`a_j \sim U[-1, 1]^d`, a point
x* of norm 0.95·R in a Gaussian direction, and :math:`b = Ax^* + s` with slack s ≥ 0, so x* is feasible
and f* = 0 (without l2), while the starting point 0 is infeasible. Each f_i is convex and
:math:`2\lambda_{\max}(A_i^\top A_i/m_i)`-smooth (not strongly convex: the paper's "strongly convex" label is
matched, as in the authors' code, only by the algorithms' μ parameter; ``l2 > 0`` adds a real one).

It is a :class:`~fedtheory.problems.finite_sum.FiniteSumFederation` (loss ℓ(u; b) = [u − b]_+²), so the
LocalUpdate driver (FedAvg, FedProx, GD) and the DANE-type drivers run on it unchanged.

>>> import numpy as np
>>> fed = make_polyhedron(N=200, d=10, n=4, R=5.0, seed=0)
>>> fed.n, fed.d, fed.counts.tolist()
(4, 10, [50, 50, 50, 50])
>>> fed.loss(fed.x_star()), bool(fed.loss(np.zeros(10)) > 0)
(0.0, True)
>>> bool(np.allclose(fed.grad(fed.x_star()), 0))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.problems.finite_sum import FiniteSumFederation

__all__ = ["PolyhedronFederation", "make_polyhedron"]


class PolyhedronFederation(FiniteSumFederation):
    """Clients holding constraints (a_j, b_j); f_i = mean_j [⟨a_j, x⟩ − b_j]_+² (+ l2/2 ‖x‖²).

    ``feasible``: a known feasible point (returned by :meth:`x_star` when l2 = 0, where f* = 0).
    """

    name = "polyhedron"
    _max_curvature = 2.0

    def __init__(self, features: Any, targets: Any, p: Any = None, *, l2: float = 0.0, feasible: Any = None) -> None:
        super().__init__(features, targets, p, l2=l2)
        self.feasible = None if feasible is None else np.asarray(feasible, dtype=np.float64)

    def _residual(self, be, u, y):
        z = u - y
        return 2 * be.maximum(z, z * 0)

    def _sample_loss(self, be, u, y):
        z = u - y
        r = be.maximum(z, z * 0)
        return r * r

    def _curvature(self, u, y):
        return 2.0 * (u > y)

    def client_smoothness(self) -> np.ndarray:
        """L_i = 2 λ_max(A_iᵀA_i/m_i) + l2 for each client (an upper bound on f_i's smoothness)."""
        ata = np.einsum("nmd,nme->nde", self.a, self.a) / self.counts[:, None, None]
        return 2.0 * np.linalg.eigvalsh(ata)[:, -1] + self.l2

    def x_star(self) -> np.ndarray:
        """A minimizer: the generator's feasible point when l2 = 0 (f* = 0), else Newton's method."""
        if self.l2 == 0 and self.feasible is not None:
            return self.feasible.copy()
        return super().x_star()


def make_polyhedron(
    N: int = 1000, d: int = 100, n: int = 10, *, R: float = 5.0, slack: float = 1.0, l2: float = 0.0, seed: Any = 0
) -> PolyhedronFederation:
    r"""A random feasible polyhedron {x : Ax ≤ b} with N constraints in R^d split evenly over n clients.

    a_j ~ U[−1, 1]^d; x* = 0.95 R g/‖g‖ with g Gaussian; b = Ax* + s, s_j ~ U[0, ``slack``]. The paper's
    scale is N = 10⁴, d = 10³, R = 10⁶; the authors' smoke test uses N = 1000, d = 100, R = 5 (the default).

    >>> fed = make_polyhedron(N=30, d=3, n=3, seed=1)
    >>> bool(np.all(np.concatenate([fed.a[i] @ fed.x_star() - fed.y[i] for i in range(3)]) <= 0))
    True
    >>> make_polyhedron(N=5, d=2, n=10)
    Traceback (most recent call last):
    ...
    ValueError: make_polyhedron needs 1 <= n <= N (each client holds at least one constraint), got n=10, N=5
    """
    N, d, n = int(N), int(d), int(n)
    if d < 1 or not (1 <= n <= N):
        raise ValueError(
            f"make_polyhedron needs 1 <= n <= N (each client holds at least one constraint), got n={n}, N={N}"
        )
    if not (0 < R < np.inf and 0 <= slack < np.inf):  # NaN fails both; inf would plant a NaN point
        raise ValueError(f"make_polyhedron needs finite R > 0 and slack >= 0, got R={R}, slack={slack}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    A = rng.uniform(-1.0, 1.0, size=(N, d))
    g = rng.normal(size=d)
    x_star = 0.95 * R * g / np.linalg.norm(g)
    b = A @ x_star + slack * rng.uniform(size=N)
    parts = np.array_split(rng.permutation(N), n)
    return PolyhedronFederation([A[p] for p in parts], [b[p] for p in parts], l2=l2, feasible=x_star)
