r"""Explicit smooth strongly convex functions through finite data: PEP worst cases as concrete clients.

A PEP's worst case is a table {(x_k, g_k, f_k)} per function. Taylor, Hendrickx & Glineur (2017, Thm 4) say when
some f ∈ F_{μ,L} (L-smooth, μ-strongly convex) has f(x_k) = f_k and ∇f(x_k) = g_k; this module builds such an f
explicitly, so a worst case can be replayed through a real driver at any point, not only at the table's.

Construction. h = f − μ/2‖·‖² is convex and ℓ-smooth, ℓ = L − μ, with data (x_k, s_k = g_k − μx_k,
h_k = f_k − μ/2‖x_k‖²). Its conjugate must be 1/ℓ-strongly convex with h*(s_k) = h*_k = ⟨s_k, x_k⟩ − h_k and
x_k ∈ ∂h*(s_k), so it lies above each quadratic below, and the smallest candidate is their maximum

.. math:: \varphi(y) = \max_k\; h^*_k + \langle x_k, y - s_k\rangle + \tfrac1{2\ell}\|y - s_k\|^2 ,

and h = φ* (the largest convex ℓ-smooth function through the data). Being a maximum of 1/ℓ-strongly convex
quadratics, φ is 1/ℓ-strongly convex, so h is convex and
ℓ-smooth and f = h + μ/2‖·‖² ∈ F_{μ,L} **whatever the data** (so an instance rebuilt from an SDP solution that is
off by solver tolerance is still exactly in the class). Piece j of φ lies below piece k at s_k exactly when
h_j ≥ h_k + ⟨s_k, x_j − x_k⟩ + ‖s_j − s_k‖²/(2ℓ), the interpolation condition of the pair; when they all hold,
φ(s_k) = h*_k with x_k ∈ ∂φ(s_k), so h(x_k) = h_k and ∇h(x_k) = s_k: f interpolates the data.

Evaluation. By minimax (the simplex is compact, the inner problem strongly concave) and the closed-form inner
maximum,

.. math:: h(x) = \min_{\alpha\in\Delta} \tfrac\ell2\Big\|x - \sum_k\alpha_k z_k\Big\|^2 + \sum_k \alpha_k b_k,
          \qquad z_k = x_k - s_k/\ell,\quad b_k = h_k - \|s_k\|^2/(2\ell),

the Moreau envelope of the convex hull of the points (z_k, b_k), with ∇h(x) = ℓ(x − Σα_k z_k) (z̄ = Σα_kz_k is
unique: the problem is ℓ-strongly convex in z̄). The small convex QP in α is solved exactly, point by point, by
the primal active-set method: from the best vertex, move to the minimizer on the current face's affine hull (a
linear solve through the SVD of the face's edge vectors; stop where a weight reaches 0 and drop it; along a
descent direction of zero curvature when the face's z_k are affinely dependent), then add the index whose partial
derivative b_k − ⟨z_k, ∇h⟩ is most below the support's common value, until none is — the optimality conditions,
checked to rounding. A few linear solves of size ≤ m per point, no tolerance-driven iteration, and on a PEP worst
case (many interpolation conditions tight, so many (z_k, b_k) on one face of the lower hull to the SDP's
accuracy) it walks to the optimal face instead of choosing between nearly optimal ones.

μ = L (ℓ = 0) is the quadratic μ/2‖x‖² + ⟨s, x⟩ + const: h is affine, built from the first data point (the data
interpolate exactly when all s_k agree and h is affine along them).

>>> import numpy as np
>>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
>>> f = lambda x: 0.5 * x[0] ** 2 + 2.0 * x[1] ** 2 + np.log1p(np.exp(x[0] - x[1]))   # in F_{1, 4.5}
>>> g = lambda x: np.array([x[0], 4 * x[1]]) + np.array([1.0, -1.0]) / (1 + np.exp(x[1] - x[0]))
>>> fi = SmoothStronglyConvexInterpolant(X, [g(x) for x in X], [f(x) for x in X], mu=1.0, L=4.5)
>>> bool(fi.interpolation_error() < 1e-12), bool(fi.class_violation(seed=0) < 1e-9)
(True, True)
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

__all__ = [
    "SmoothStronglyConvexInterpolant",
    "InterpolatedFederation",
    "enclosing_radius",
    "heterogeneity",
    "replay_floor",
    "quadratic_interpolant",
    "CLASS_RTOL",
]

#: a face whose edge vectors have condition number above this counts as affinely dependent (its zero-curvature
#: direction is followed instead of solving on it)
_COND = 1e10
#: largest violation of the F_{μ,L} interpolation conditions that an evaluated sample of an interpolant may show,
#: relative to the sample's scale (max(1, |f|, ‖x‖², ‖g‖²/L)): the evaluation is exact up to rounding (measured
#: ≤ 1e-15 on data in general position, on garbage data and on the K = 2, 4, 8, 10 floor worst cases), while a
#: function outside the class (an L half the true one, a gradient off by 50 %) violates them by ≥ 0.1. 1e-10
#: leaves five orders of magnitude for the conditioning of worse data
CLASS_RTOL = 1e-10


class SmoothStronglyConvexInterpolant:
    """An explicit f ∈ F_{μ,L} through the data X (m, d), G (m, d), F (m,) (see the module docstring).

    ``value(x)``, ``grad(x)``, ``values_and_grads(X)`` (rows), ``interpolation_error()`` (how far f is from the
    data at the data points: 0 up to rounding when the data satisfy the interpolation conditions),
    ``data_violation()`` (those conditions' largest violation, :func:`fedtheory.certify.pep.interpolation_violation`),
    ``class_violation(...)`` (the conditions on f's own values at random points: ≤ rounding for every data),
    ``to_json()``/``from_json``.

    >>> fi = SmoothStronglyConvexInterpolant([[0.0], [1.0]], [[0.0], [2.0]], [0.0, 1.0], mu=1.0, L=3.0)
    >>> fi.value([0.0]), fi.value([1.0]), fi.grad([1.0]).tolist()     # the data: f = x² at 0 and 1
    (0.0, 1.0, [2.0])
    >>> round(fi.value([0.5]), 12)                                   # between them f'' = L = 3, not x²'s 2
    0.3125
    """

    def __init__(self, X: Any, G: Any, F: Any, mu: float, L: float) -> None:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        G = np.atleast_2d(np.asarray(G, dtype=np.float64))
        F = np.asarray(F, dtype=np.float64).ravel()
        m = F.shape[0]
        if m < 1 or X.shape[0] != m or G.shape != X.shape:
            raise ValueError(
                f"data must be X (m, d), G (m, d), F (m,) with m >= 1, got {X.shape}, {G.shape}, {F.shape}"
            )
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(G)) and np.all(np.isfinite(F))):
            raise ValueError("data must be finite")
        mu, L = float(mu), float(L)
        if not (0 <= mu <= L and math.isfinite(L) and L > 0):
            raise ValueError(f"hypothesis 0 <= mu <= L < inf, L > 0 violated: mu={mu!r}, L={L!r}")
        self.X, self.G, self.F, self.mu, self.L = X, G, F, mu, L
        self.m, self.d = X.shape
        self.ell = L - mu
        S = G - mu * X
        H = F - 0.5 * mu * np.einsum("kd,kd->k", X, X)
        if self.ell <= 1e-12 * L:
            # μ = L: h is affine (f a quadratic with Hessian μI); built from the first point
            self.ell = 0.0
            self._s0, self._h0, self._x0 = S[0], H[0], X[0]
            return
        Z = X - S / self.ell
        self.b = H - np.einsum("kd,kd->k", S, S) / (2 * self.ell)
        self.z0 = Z[0]
        D = Z - self.z0
        scale = max(1.0, float(np.abs(D).max(initial=0.0)))
        if m > 1:
            _, sv, Vt = np.linalg.svd(D, full_matrices=False)
            r = int(np.sum(sv > 1e-12 * scale))
            self.U = Vt[:r].T  # (d, r): the affine hull of the z_k
        else:
            self.U = np.zeros((self.d, 0))
        self.W = D @ self.U  # (m, r) hull coordinates of the z_k
        self.r = self.U.shape[1]

    def _face(self, S: list, w: np.ndarray) -> tuple[np.ndarray, bool]:
        """On support S: (α_S minimizing the objective on aff{z_k : k ∈ S}, True), or, when those z_k are affinely
        dependent (to _COND), (a direction d with Σd = 0, W_Sᵀd = 0 along which the objective decreases
        linearly, False)."""
        W, b, ell = self.W, self.b, self.ell
        if len(S) == 1:
            return np.ones(1), True
        E = (W[S[1:]] - W[S[0]]).T
        Ue, sv, Vt = np.linalg.svd(E, full_matrices=False)
        if sv[-1] > 0 and sv[0] / sv[-1] <= _COND and E.shape[0] >= E.shape[1]:
            db = b[S[1:]] - b[S[0]]
            beta = (Vt.T / sv) @ (Ue.T @ (w - W[S[0]])) - ((Vt.T / sv**2) @ (Vt @ db)) / ell
            return np.concatenate([[1.0 - beta.sum()], beta]), True
        v = Vt[-1] if E.shape[0] >= E.shape[1] else np.linalg.svd(E)[2][-1]
        d = np.concatenate([[-v.sum()], v])
        return (d if float(b[S] @ d) <= 0 else -d), False

    def _active_set(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """The primal active-set method on the simplex for one point (hull coordinates w): (h's value without
        the orthogonal part, z̄). From the best vertex, alternately move to the current face's minimizer (stopping
        at the first weight that reaches 0, which leaves the support) and add the index whose partial derivative
        b_k − ⟨z_k, ∇h⟩ is most below the support's common value, until none is (the optimality conditions)."""
        W, b, ell = self.W, self.b, self.ell
        scale = 1.0 + np.abs(b).max() + ell * (np.abs(W).max(initial=0.0) + np.abs(w).max(initial=0.0)) ** 2
        vertex = 0.5 * ell * np.sum((w[None] - W) ** 2, axis=1) + b
        S, a = [int(np.argmin(vertex))], np.ones(1)
        for _ in range(50 * self.m):
            target, exact = self._face(S, w)
            d = target - a if exact else target
            if np.abs(d).max() > 1e-15:
                neg = d < 0
                t_max = float(np.min(a[neg] / -d[neg])) if np.any(neg) else math.inf
                t = min(1.0, t_max) if exact else t_max
                a = a + t * d
                if t == t_max:  # a weight reached 0: it leaves the support
                    keep = a > 1e-15
                    keep[int(np.argmin(np.where(neg, a, np.inf)))] = False
                    S, a = [k for k, kp in zip(S, keep) if kp], a[keep]
                    a = a / a.sum()
                    continue
            zbar = a @ W[S]
            gk = b - W @ (ell * (w - zbar))
            nu = float(a @ gk[S])
            k = int(np.argmin(gk))
            if gk[k] >= nu - 1e-14 * scale or k in S:
                return 0.5 * ell * float(np.sum((w - zbar) ** 2)) + float(a @ b[S]), zbar
            S, a = S + [k], np.concatenate([a, [0.0]])
        raise ValueError("the active-set method did not converge (degenerate data)")

    # ---- evaluation
    def values_and_grads(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """f and ∇f at the rows of X (k, d): (k,), (k, d).

        >>> fi = SmoothStronglyConvexInterpolant([[0.0], [1.0]], [[0.0], [2.0]], [0.0, 1.0], mu=1.0, L=3.0)
        >>> v, g = fi.values_and_grads([[2.0], [-1.0]])
        >>> v.round(12).tolist(), g.ravel().round(12).tolist()   # by hand: h = min_α (x − α/2)² + α/4, + x²/2
        ([4.5, 1.5], [5.0, -3.0])
        """
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        if X.ndim != 2 or X.shape[1] != self.d:
            raise ValueError(f"points must have shape (k, {self.d}), got {X.shape}")
        quad = 0.5 * self.mu * np.einsum("kd,kd->k", X, X)
        if self.ell == 0.0:
            return quad + self._h0 + (X - self._x0) @ self._s0, self.mu * X + self._s0
        ell = self.ell
        Y = X - self.z0
        w = Y @ self.U  # (k, r): coordinates in the hull of the z_k
        perp = Y - w @ self.U.T  # the rest only adds ℓ/2‖·‖² to h
        perp2 = np.einsum("kd,kd->k", perp, perp)
        k = X.shape[0]
        hv, zb = zip(*(self._active_set(wk) for wk in w)) if k else ((), ())
        h = np.array(hv, dtype=np.float64) + 0.5 * ell * perp2
        return quad + h, self.mu * X + ell * (Y - np.array(zb).reshape(k, self.r) @ self.U.T)

    def value(self, x: Any) -> float:
        """f(x) at one point."""
        return float(self.values_and_grads(np.asarray(x, dtype=np.float64)[None])[0][0])

    def grad(self, x: Any) -> np.ndarray:
        """∇f(x) at one point."""
        return self.values_and_grads(np.asarray(x, dtype=np.float64)[None])[1][0]

    # ---- checks
    def interpolation_error(self) -> float:
        """max_k max(|f(x_k) − f_k|, ‖∇f(x_k) − g_k‖), relative to max(1, |f_k|, ‖g_k‖): ~1e-15 when the data
        satisfy the interpolation conditions, about their violation otherwise.

        >>> flat = SmoothStronglyConvexInterpolant([[0.0], [1.0]], [[0.0], [0.0]], [0.0, 0.0], 1.0, 2.0)
        >>> flat.interpolation_error() > 0.1                     # no 1-strongly convex f is flat at two points
        True
        """
        v, g = self.values_and_grads(self.X)
        scale = max(1.0, float(np.abs(self.F).max()), float(np.abs(self.G).max()))
        return float(max(np.abs(v - self.F).max(), np.linalg.norm(g - self.G, axis=1).max()) / scale)

    def data_violation(self) -> float:
        """The largest violation of the F_{μ,L} interpolation conditions on the data (≤ 0: they interpolate)."""
        from fedtheory.certify.pep import interpolation_violation

        return interpolation_violation(self.X, self.G, self.F, mu=self.mu, L=self.L)

    def class_violation(
        self, samples: int = 64, seed: Any = 0, mu: float | None = None, L: float | None = None
    ) -> float:
        """Largest violation of the interpolation conditions of F_{mu,L} (default: f's own μ, L) on f evaluated at
        the data points and ``samples`` seeded random points around them, relative to the sample's scale: ≤
        :data:`CLASS_RTOL` for a member of the class. An ``L`` below f's true smoothness (or a wrong gradient)
        shows up as a violation at the data's scale.

        >>> fi = SmoothStronglyConvexInterpolant([[0.0], [1.0]], [[0.0], [2.0]], [0.0, 1.0], mu=1.0, L=3.0)
        >>> fi.class_violation(L=1.5) > 0.01                        # f = x² is 2-smooth, not 1.5-smooth
        True
        """
        from fedtheory.certify.pep import interpolation_violation

        rng = np.random.default_rng(seed)
        centre = self.X.mean(axis=0)
        spread = max(1.0, float(np.abs(self.X - centre).max()))
        P = np.vstack(
            [
                self.X,
                centre + 2 * spread * rng.uniform(-1, 1, size=(samples, self.d)),
                self.X[rng.integers(0, self.m, samples)] + 1e-3 * spread * rng.normal(size=(samples, self.d)),
            ]
        )
        v, g = self.values_and_grads(P)
        mu_ = self.mu if mu is None else float(mu)
        L_ = self.L if L is None else float(L)
        scale = max(1.0, float(np.abs(v).max()), float((P**2).sum(axis=1).max()), float((g**2).sum(axis=1).max()) / L_)
        if L_ - mu_ <= 1e-12 * L_:
            # F_{L,L} (the conditions' μ/(1 − μ/L) term is 0/0): h = f − L/2‖·‖² must be affine
            S, H = g - L_ * P, v - 0.5 * L_ * np.einsum("kd,kd->k", P, P)
            lin = H[:, None] - H[None, :] - np.einsum("jd,ijd->ij", S, P[:, None, :] - P[None, :, :])
            return max(float(np.abs(lin).max()), float(np.abs(S - S[0]).max())) / scale
        return interpolation_violation(P, g, v, mu=mu_, L=L_) / scale

    # ---- storage
    def to_json(self) -> dict:
        """The data table and the class: enough to rebuild the same function."""
        return {"X": self.X.tolist(), "G": self.G.tolist(), "F": self.F.tolist(), "mu": self.mu, "L": self.L}

    @classmethod
    def from_json(cls, data: dict) -> "SmoothStronglyConvexInterpolant":
        """Inverse of :meth:`to_json`."""
        return cls(data["X"], data["G"], data["F"], data["mu"], data["L"])


class InterpolatedFederation:
    """n interpolated clients f_i ∈ F_{μ,L} (:class:`SmoothStronglyConvexInterpolant`) with weights p, in the
    finite-sum protocol of :mod:`fedtheory.problems.finite_sum` (one "sample" per client, numpy only), so
    :func:`~fedtheory.algorithms.local_update.run_local_update` runs on it literally and
    :func:`~fedtheory.problems.clients.client_oracles` serves it. ``l2`` = μ: f_i = h_i + μ/2‖x‖² with h_i convex.

    ``x_star()`` / ``client_minimizers()`` minimize by Nesterov's method to ‖∇‖ ≤ ``tol``, so each is within
    ‖∇‖/μ ≤ tol/μ of the true minimizer (strong convexity).

    >>> import numpy as np
    >>> c1 = SmoothStronglyConvexInterpolant([[1.0, 0.0]], [[0.0, 0.0]], [0.0], 1.0, 4.0)    # minimizer (1, 0)
    >>> c2 = SmoothStronglyConvexInterpolant([[-1.0, 0.0]], [[0.0, 0.0]], [0.0], 1.0, 4.0)
    >>> fed = InterpolatedFederation([c1, c2], [0.5, 0.5])
    >>> bool(np.abs(fed.x_star()).max() < 1e-12), np.round(fed.client_minimizers(), 9).tolist()
    (True, [[1.0, 0.0], [-1.0, 0.0]])
    """

    name = "interpolated"

    def __init__(self, clients: list, p: Any, *, tol: float = 1e-13) -> None:
        if len(clients) < 1:
            raise ValueError("an InterpolatedFederation needs at least one client")
        self.clients = list(clients)
        d = {c.d for c in self.clients}
        mus, Ls = {c.mu for c in self.clients}, {c.L for c in self.clients}
        if len(d) != 1:
            raise ValueError(f"clients must share one dimension, got {sorted(d)}")
        p = np.asarray(p, dtype=np.float64).ravel()
        if p.shape != (len(self.clients),) or np.any(p <= 0) or abs(p.sum() - 1) > 1e-9:
            raise ValueError(f"p must be {len(self.clients)} positive weights summing to 1, got {p.tolist()}")
        self.p = p
        self._d = d.pop()
        self.mu, self.L = min(mus), max(Ls)
        self.l2 = self.mu
        self.counts = np.ones(len(self.clients), dtype=np.int64)
        self.tol = float(tol)
        self._x_star: np.ndarray | None = None
        self._minimizers: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.clients)

    @property
    def d(self) -> int:
        return self._d

    def client_smoothness(self) -> np.ndarray:
        """Each client's L (an upper bound on its smoothness; exact for PEP worst cases)."""
        return np.array([c.L for c in self.clients])

    def on(self, backend: Any = "numpy", device: Any = None) -> dict:
        """``{"backend", "problem", "p"}``; numpy only (the interpolants are evaluated on the host)."""
        from fedtheory.backends import get_backend

        be = get_backend(backend, device=device)
        if be.name != "numpy":
            raise ValueError(f"InterpolatedFederation runs on the numpy backend only, got {be.name!r}")
        return {"backend": be, "problem": self, "p": self.p}

    def _eval(self, X: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        v, g = np.empty(X.shape[0]), np.empty_like(X)
        for i in np.unique(rows):
            sel = rows == i
            v[sel], g[sel] = self.clients[int(i)].values_and_grads(X[sel])
        return v, g

    def batched_grads(self, arrays: dict, X: Any, idx: Any = None, clients: Any = None) -> np.ndarray:
        """∇f_{clients[k]}(X_k) for each row (``idx``, a mini-batch of the single sample, changes nothing)."""
        rows = np.arange(self.n) if clients is None else np.asarray(clients, dtype=np.int64).ravel()
        return self._eval(X, rows)[1]

    def loss_and_grad_norm(self, arrays: dict, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """F(x_t) and ‖∇F(x_t)‖ for the rows of X (T, d)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        T = X.shape[0]
        rows = np.repeat(np.arange(self.n)[None], T, axis=0).ravel()
        v, g = self._eval(np.repeat(X, self.n, axis=0), rows)
        F = v.reshape(T, self.n) @ self.p
        gF = np.einsum("n,tnd->td", self.p, g.reshape(T, self.n, self.d))
        return F, np.linalg.norm(gF, axis=1)

    def client_losses(self, x: Any) -> np.ndarray:
        """f_i(x) for every client: (n,)."""
        X = np.broadcast_to(np.asarray(x, dtype=np.float64), (self.n, self.d))
        return self._eval(X, np.arange(self.n))[0]

    def client_grads(self, x: Any) -> np.ndarray:
        """∇f_i(x) for every client: (n, d)."""
        X = np.broadcast_to(np.asarray(x, dtype=np.float64), (self.n, self.d))
        return self._eval(X, np.arange(self.n))[1]

    def loss(self, x: Any) -> float:
        """F(x) = Σ_i p_i f_i(x)."""
        return float(self.p @ self.client_losses(x))

    def grad(self, x: Any) -> np.ndarray:
        """∇F(x)."""
        return self.p @ self.client_grads(x)

    def _minimize(self, grad, x0: np.ndarray) -> np.ndarray:
        """Nesterov's constant-momentum method on a μ-strongly convex L-smooth function, to ‖∇‖ ≤ tol·(1 + ‖x‖)
        (rows minimized independently; ValueError if it does not get there)."""
        mu, L = self.mu, self.L
        if not mu > 0:
            raise ValueError(
                f"hypothesis mu > 0 violated: mu={mu!r} (without strong convexity the minimizer is "
                "neither unique nor certified by the gradient's norm)"
            )
        q = math.sqrt(mu / L)
        beta = (1 - q) / (1 + q)
        x = y = np.array(x0, dtype=np.float64)
        best, best_g = x.copy(), np.full(x.shape[0], np.inf)
        for _ in range(200 + int(80 / max(q, 1e-6))):
            g_x = grad(x)
            gn = np.linalg.norm(g_x, axis=1)
            better = gn < best_g
            best[better], best_g[better] = x[better], gn[better]
            if np.all(best_g <= self.tol * (1 + np.linalg.norm(best, axis=1))):
                return best
            x_new = y - grad(y) / L
            y = x_new + beta * (x_new - x)
            x = x_new
        raise ValueError(f"the minimizer was not reached to ‖∇‖ <= {self.tol:g} (best {best_g.max():.3g})")

    def x_star(self, x0: Any = None) -> np.ndarray:
        """argmin Σ p_i f_i (cached), to ‖∇F‖ ≤ tol·(1 + ‖x‖)."""
        if self._x_star is None:
            start = np.zeros(self.d) if x0 is None else np.asarray(x0, dtype=np.float64)
            self._x_star = self._minimize(lambda Y: np.stack([self.grad(y) for y in Y]), start[None])[0]
        return self._x_star.copy()

    def x_star_error(self) -> float:
        """‖∇F(x*)‖/μ at the computed x*: a bound on its distance to the true minimizer (strong convexity)."""
        return float(np.linalg.norm(self.grad(self.x_star()))) / self.mu

    def client_minimizers(self, x0: Any = None) -> np.ndarray:
        """argmin f_i for every client (n, d) (cached), each to ‖∇f_i‖ ≤ tol·(1 + ‖x‖)."""
        if self._minimizers is None:
            start = np.zeros((self.n, self.d)) if x0 is None else np.asarray(x0, dtype=np.float64)
            self._minimizers = self._minimize(lambda Y: self._eval(Y, np.arange(self.n))[1], start)
        return self._minimizers.copy()

    def class_violation(self, samples: int = 64, seed: Any = 0) -> float:
        """The largest :meth:`SmoothStronglyConvexInterpolant.class_violation` over the clients (f_i ∈ F_{μ,L})."""
        return max(c.class_violation(samples, seed=seed) for c in self.clients)

    def to_json(self) -> dict:
        """``{"kind": "interpolated", "p", "clients": [each client's data table and class]}``."""
        return {"kind": "interpolated", "p": self.p.tolist(), "clients": [c.to_json() for c in self.clients]}

    @classmethod
    def from_json(cls, data: dict) -> "InterpolatedFederation":
        """Inverse of :meth:`to_json`.

        >>> c = SmoothStronglyConvexInterpolant([[1.0]], [[0.0]], [0.0], 1.0, 2.0)
        >>> InterpolatedFederation.from_json(InterpolatedFederation([c, c], [0.5, 0.5]).to_json()).n
        2
        """
        if data.get("kind") != "interpolated":
            raise ValueError(f"not an interpolated federation: kind={data.get('kind')!r}")
        return cls([SmoothStronglyConvexInterpolant.from_json(c) for c in data["clients"]], data["p"])


#: up to this many points :func:`enclosing_radius` finds the smallest ball exactly, over the subsets of the points
#: (2^m circumscribed balls of at most d + 1 points: 4 clients take ~1 ms; the cone program it replaces ~30 ms)
EXACT_BALL_POINTS = 8


def _smallest_ball_centre(P: np.ndarray) -> np.ndarray:
    """The centre of the smallest ball holding the rows of P: that ball is the circumscribed ball of some affinely
    independent subset S (centre in S's affine hull, equidistant from S), so it is the smallest of those balls
    that holds every row (enumerated; a tolerance of 1e-12 relative on containment, as r is re-evaluated)."""
    m, d = P.shape
    scale = max(float(np.abs(P).max()), 1e-300)
    best, centre = math.inf, P.mean(axis=0)
    for size in range(1, min(m, d + 1) + 1):
        for S in itertools.combinations(range(m), size):
            B = P[list(S[1:])] - P[S[0]]
            G = B @ B.T
            if size > 1 and np.linalg.matrix_rank(G, tol=1e-12 * max(float(np.trace(G)), 1e-300)) < size - 1:
                continue  # affinely dependent: its ball is another subset's
            o = P[S[0]] + (B.T @ np.linalg.solve(G, 0.5 * np.diag(G)) if size > 1 else 0.0)
            r = float(np.linalg.norm(P - o, axis=1).max())
            if r < best * (1 - 1e-15) - 1e-15 * scale:
                best, centre = r, o
    return centre


def enclosing_radius(points: Any) -> tuple[float, np.ndarray]:
    """(r, o): a centre o and r = max_i ‖c_i − o‖, the smallest such r (two points: their midpoint; up to
    :data:`EXACT_BALL_POINTS`: the smallest of the circumscribed balls of the points' subsets that holds them all,
    exactly up to rounding; more: a second-order cone program, up to the solver's accuracy). r is evaluated at the
    returned o, so every c_i lies within r of o whatever the accuracy: (r, o) is always a valid heterogeneity bound.

    >>> r, o = enclosing_radius([[0.0, 0.0], [2.0, 0.0]])
    >>> r, o.tolist()
    (1.0, [1.0, 0.0])
    >>> round(enclosing_radius([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])[0], 6)
    1.0
    """
    P = np.atleast_2d(np.asarray(points, dtype=np.float64))
    if P.shape[0] <= 2:
        o = P.mean(axis=0)
    elif P.shape[0] <= EXACT_BALL_POINTS:
        o = _smallest_ball_centre(P)
    else:
        import cvxpy as cp

        o_var, t = cp.Variable(P.shape[1]), cp.Variable()
        prob = cp.Problem(cp.Minimize(t), [cp.norm(P[i] - o_var) <= t for i in range(P.shape[0])])
        try:
            prob.solve(solver="CLARABEL")
            o = np.asarray(o_var.value, dtype=np.float64)
        except Exception:  # any valid centre will do: the mean
            o = P.mean(axis=0)
        if o is None or not np.all(np.isfinite(o)):
            o = P.mean(axis=0)
    return float(np.linalg.norm(P - o, axis=1).max()), o


def heterogeneity(fed: InterpolatedFederation, het: str = "C") -> tuple[float, np.ndarray | None]:
    """The federation's heterogeneity, as an upper bound: ``het="C"``: the :func:`enclosing_radius` of the client
    minimizers plus their error (max_i ‖∇f_i‖/μ), with its centre; ``"zeta"``: (Σp_i‖∇f_i(x*)‖²)^½ plus its error
    (L·‖x* error‖), centre ``None``.

    >>> c1 = SmoothStronglyConvexInterpolant([[1.0]], [[0.0]], [0.0], 1.0, 4.0)
    >>> c2 = SmoothStronglyConvexInterpolant([[-1.0]], [[0.0]], [0.0], 1.0, 4.0)
    >>> r, o = heterogeneity(InterpolatedFederation([c1, c2], [0.5, 0.5]))
    >>> round(r, 12), o.tolist()
    (1.0, [0.0])
    """
    if het == "C":
        cm = fed.client_minimizers()
        cm_err = max(float(np.linalg.norm(g)) for g in fed._eval(cm, np.arange(fed.n))[1]) / fed.mu
        radius, centre = enclosing_radius(cm)
        return radius + cm_err, centre
    if het == "zeta":
        G = fed.client_grads(fed.x_star())
        # ∇f_i moves by ≤ L·‖x* error‖
        return float(np.sqrt(fed.p @ np.sum(G**2, axis=1))) + fed.L * fed.x_star_error(), None
    raise ValueError(f"het must be 'C' or 'zeta', got {het!r}")


def replay_floor(
    fed: InterpolatedFederation,
    theta: Any,
    alpha: float,
    gamma: float,
    x0: Any,
    eta: float,
    *,
    het: str = "C",
    rounds: int | None = None,
    max_rounds: int = 5000,
) -> dict:
    """Run the real LocalUpdate driver (server GD with step ``eta``) on ``fed`` from ``x0`` until it settles at its
    fixed point x̄ (``rounds=None``: in chunks of 25, 25, 50, 100, ... rounds until the fixed-point residual
    ‖x_T − x_{T−1}‖/η is ≤ 1e-12·L(1 + ‖x‖), at most ``max_rounds``; else exactly ``rounds``), and measure the floor per unit heterogeneity.

    Returns ``{"distance"``: ‖x_T − x*‖ minus x*'s certified error ‖∇F(x*)‖/μ (a lower bound on the true distance),
    ``"heterogeneity"``: the instance's C (the radius of :func:`enclosing_radius` of the client minimizers, plus
    their error ‖∇f_i‖/μ) or ζ = (Σp_i‖∇f_i(x*)‖²)^½ (plus its error, ``het="zeta"``), ``"floor"``: their ratio,
    ``"rounds"``, ``"residual"``: ‖x_T − x_{T−1}‖/η (the driver's fixed-point residual), ``"x_T"``, ``"x_star"``,
    ``"centre"}``.

    >>> c1 = SmoothStronglyConvexInterpolant([[1.0]], [[0.0]], [0.0], 1.0, 4.0)
    >>> c2 = SmoothStronglyConvexInterpolant([[-1.0]], [[0.0]], [0.0], 1.0, 4.0)
    >>> out = replay_floor(InterpolatedFederation([c1, c2], [0.5, 0.5]), [1.0, 1.0], 0.0, 0.1, [0.3], 0.1)
    >>> out["floor"] < 1e-12, out["residual"] < 1e-12                 # identical curvatures: no drift
    (True, True)
    """
    from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
    from fedtheory.algorithms.theta import Theta

    th = theta if isinstance(theta, Theta) else Theta(theta)
    algo = LocalUpdate(th, float(alpha), float(gamma), ServerOpt("gd", lr=float(eta)))
    x = np.asarray(x0, dtype=np.float64)
    done, step = 0, math.inf
    while True:
        chunk = int(rounds) - done if rounds is not None else min(max(25, done), max_rounds - done)
        if chunk <= 0:
            break
        h = run_local_update(fed, algo, x, chunk).to_numpy()
        x, done = h.x[-1], done + chunk
        step = float(np.linalg.norm(h.x[-1] - h.x[-2]))
        # settled: the fixed-point residual ‖Σp_iq_i(x_T)‖ = step/η at 1e-12 of the gradients' scale L(1 + ‖x‖)
        # (x_T is then within ~1e-12·κ(1 + ‖x‖) of x̄; rounding alone leaves ~1e-15 of it)
        if rounds is None and step / float(eta) <= 1e-12 * fed.L * (1 + float(np.linalg.norm(x))):
            break
    xs, xs_err = fed.x_star(), fed.x_star_error()
    dist = max(float(np.linalg.norm(x - xs)) - xs_err, 0.0)
    size, centre = heterogeneity(fed, het)
    return {
        "distance": dist,
        "heterogeneity": size,
        "floor": dist / size if size > 0 else math.inf,
        "rounds": done,
        "residual": step / float(eta),
        "x_T": x,
        "x_star": xs,
        "centre": centre,
    }


def quadratic_interpolant(
    X: Any, G: Any, mu: float, L: float, *, rank_rtol: float = 1e-10, extreme_tol: float = 1e-6
) -> tuple[np.ndarray, np.ndarray]:
    r"""A symmetric A with spectrum in [μ, L] and A u_k ≈ g_k, from data rows u_k = x_k − c (c the quadratic's
    minimizer) and g_k (the gradients there): the quadratic ½(x − c)ᵀA(x − c) through a PEP's table. Returns
    (eigenvalues, eigenvectors) of A, eigenvalues clipped to [μ, L] — so A is in the class **whatever the data**,
    and interpolates them exactly when they satisfy the class's interpolation conditions (Bousselmi, Hendrickx &
    Glineur: UᵀG symmetric and (L + μ)GᵀU − GᵀG − μL·UᵀU ⪰ 0, U and G stacking the u_k and g_k as columns).

    Construction, centred: A = m·I + B with m = (L + μ)/2, R = (L − μ)/2, so the class is ‖B‖ ≤ R and the data
    read B u_k = h_k := g_k − m·u_k. On an orthonormal basis E of span{u_k} (SVD, rank cut at ``rank_rtol``
    relative) the data fix B's columns BE = W; the block a = EᵀW/R is symmetric (by UᵀG's symmetry) and
    b = E⊥ᵀW/R completes a column ‖[a; b]‖ ≤ 1 (by the LMI). Davis, Kahan & Weinberger's completion (SIAM J.
    Numer. Anal. 19, 1982): b = K(I − a²)^½ with ‖K‖ ≤ 1, and [[a, bᵀ], [b, −KaKᵀ]] is a symmetric contraction.
    K is computed on a's eigenbasis (directions with (1 − a_j²)^½ ≤ ``extreme_tol`` carry b = 0 in exact data
    and get K = 0); noise in the data (a slightly outside [−1, 1], ‖K‖ slightly above 1) is clipped, and the final
    eigenvalue clip puts A in the class exactly.

    Data read back from an interior-point solve (a PEP's worst case) are exact only to the solver's accuracy
    ε ≈ 1e-9 on the Gram matrix, i.e. ~√ε on the points: a singular direction of the points at that level, or an
    extreme direction with (1 − a_j²)^½ at that level, is noise, and dividing by it amplifies the noise (see
    :data:`fedtheory.certify.pep_clients.NOISY_TABLE`, which raises both cuts for such data).

    >>> rng = np.random.default_rng(0)
    >>> Q = np.linalg.qr(rng.normal(size=(5, 5)))[0]
    >>> A = Q @ np.diag([1.0, 1.0, 3.0, 7.0, 10.0]) @ Q.T            # in the class μ = 1, L = 10
    >>> U = rng.normal(size=(3, 5))                                   # three points, five dimensions
    >>> lam, V = quadratic_interpolant(U, U @ A, 1.0, 10.0)
    >>> bool(np.abs(U @ (V * lam) @ V.T - U @ A).max() < 1e-12), bool(lam.min() >= 1.0), bool(lam.max() <= 10.0)
    (True, True, True)
    """
    U = np.atleast_2d(np.asarray(X, dtype=np.float64))
    Gm = np.atleast_2d(np.asarray(G, dtype=np.float64))
    mu, L = float(mu), float(L)
    if U.shape != Gm.shape:
        raise ValueError(f"points and gradients must have the same shape, got {U.shape} and {Gm.shape}")
    if not 0 <= mu <= L:
        raise ValueError(f"hypothesis 0 <= mu <= L violated: mu={mu:g}, L={L:g}")
    d = U.shape[1]
    m, R = 0.5 * (L + mu), 0.5 * (L - mu)
    if R == 0:
        return np.full(d, mu), np.eye(d)
    H = Gm - m * U
    Ef, s, Vt = np.linalg.svd(U.T, full_matrices=True)
    r = int(np.sum(s > rank_rtol * (s[0] if s.size else 0.0))) if s.size else 0
    E, Eperp = Ef[:, :r], Ef[:, r:]
    W = H.T @ Vt[:r].T / s[:r] / R  # B E / R: the data's images of the basis
    a = E.T @ W
    a = 0.5 * (a + a.T)
    b = Eperp.T @ W
    ev, P = np.linalg.eigh(a)
    ev = np.clip(ev, -1.0, 1.0)
    sq = np.sqrt(np.maximum(1.0 - ev**2, 0.0))
    inv = np.where(sq > extreme_tol, 1.0 / np.where(sq > extreme_tol, sq, 1.0), 0.0)
    K = (b @ P) * inv @ P.T  # b = K (I − a²)^½ on the non-extreme directions
    if K.size:
        Uk, sk, Vk = np.linalg.svd(K, full_matrices=False)
        K = (Uk * np.minimum(sk, 1.0)) @ Vk
    a = (P * ev) @ P.T
    b = K @ (P * sq) @ P.T
    Bc = np.block([[a, b.T], [b, -K @ a @ K.T]])
    B = Ef @ Bc @ Ef.T * R
    lam, V = np.linalg.eigh(m * np.eye(d) + 0.5 * (B + B.T))
    return np.clip(lam, mu, L), V
