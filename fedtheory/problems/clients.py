r"""Batched client oracles in the *uniform view* used by DANE-type methods.

Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization*
(arXiv:2407.07084) write the problem as :math:`f = \frac1n\sum_{i=1}^n f_i` with uniform weights, and
sample clients uniformly without replacement. A federation with weights :math:`p_i` (unbalanced data)
is the same problem with rescaled clients :math:`\tilde f_i = n p_i f_i`, since
:math:`\sum_i p_i f_i = \frac1n \sum_i \tilde f_i` (the authors' code rescales client gradients the same
way). :class:`ClientOracles` serves these rescaled clients, batched over clients (one array operation
for any subset of clients, no Python loop over clients):

- ``grads(X, clients)``: :math:`\nabla\tilde f_i(X_k)` for client ``clients[k]`` at row ``X[k]``;
- ``stochastic_grads(X, clients, rng, batch_size)``: unbiased mini-batch gradients (finite sums) or
  gradients plus Gaussian noise of total variance ``noise**2`` (quadratics);
- ``loss(x)``, ``losses(X)``, ``grad(x)``: the global objective;
- ``prox(C, lin, lam, clients)``: the exact DANE subproblem
  :math:`\arg\min_x \tilde f_i(x) - \langle \ell_i, x\rangle + \frac\lambda2\|x - C_i\|^2`
  where it has a closed form (quadratics), else ``None``;
- ``L_i``, ``mu_i``: per-client smoothness and strong convexity (exact for quadratics, bounds otherwise),
  ``x_star()``, ``f_star()``.

Three families: :class:`QuadraticOracles` (a :class:`~fedtheory.problems.quadratic.QuadraticFederation`,
spectral), :class:`DiagonalQuadraticOracles` (diagonal Hessians, d = 1000 costs nothing) and
:class:`FiniteSumOracles` (anything with the finite-sum protocol: logistic or least-squares
federations, the polyhedron problem, a torch network). :func:`client_oracles` picks the right one.

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> q = make_quadratic(3, 4, mu=1.0, L=5.0, weights="random", seed=0)
>>> orc = client_oracles(q)
>>> x = np.ones(4)
>>> bool(np.allclose(orc.grads(np.tile(x, (3, 1))).mean(axis=0), q.grad(x)))      # (1/n) Σ ∇f̃_i = ∇f
True
>>> bool(abs(orc.loss(x) - q.loss(x)) < 1e-12), bool(np.allclose(orc.x_star(), q.x_star()))
(True, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ClientOracles", "QuadraticOracles", "DiagonalQuadraticOracles", "FiniteSumOracles", "client_oracles"]


def _rows(X: Any, d: int) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"points must have shape (k, {d}), got {X.shape}")
    return X


class ClientOracles:
    """The protocol (see the module docstring). Subclasses fill ``n``, ``d``, ``L_i``, ``mu_i``."""

    n: int
    d: int
    L_i: np.ndarray
    mu_i: np.ndarray
    noise: float = 0.0
    name = "clients"

    def _clients(self, clients: Any, k: int) -> np.ndarray:
        if (
            isinstance(clients, np.ndarray)
            and clients.dtype == np.int64
            and clients.ndim == 1
            and clients.size == k
            and (k == 0 or (clients.min() >= 0 and clients.max() < self.n))
        ):
            return clients  # the hot path: an already valid index array
        if clients is None:
            if k != self.n:
                raise ValueError(f"give `clients` for {k} rows (there are n={self.n} clients)")
            return np.arange(self.n)
        idx = np.asarray(clients, dtype=np.int64).ravel()
        if idx.size != k:
            raise ValueError(f"{idx.size} client indices for {k} rows")
        if idx.size and (idx.min() < 0 or idx.max() >= self.n):
            raise ValueError(f"client indices must lie in [0, {self.n}), got {idx.min()}..{idx.max()}")
        return idx

    @property
    def L(self) -> float:
        """max_i L_i: every rescaled client is L-smooth."""
        return float(np.max(self.L_i))

    @property
    def mu(self) -> float:
        """min_i μ_i: every rescaled client is μ-convex."""
        return float(np.min(self.mu_i))

    def grads(self, X: Any, clients: Any = None) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def stochastic_grads(
        self, X: Any, clients: Any, rng: np.random.Generator, batch_size: int | None = None
    ) -> np.ndarray:
        """Unbiased stochastic gradients; the base adds N(0, noise²/d·I) to the exact ones."""
        X = _rows(X, self.d)
        G = self.grads(X, clients)
        if self.noise > 0:
            G = G + rng.normal(size=G.shape) * (self.noise / np.sqrt(self.d))
        return G

    def client_losses(self, X: Any, clients: Any = None) -> np.ndarray:  # pragma: no cover - abstract
        """f̃_i(X_k) for client ``clients[k]`` at row ``X[k]``: (k,)."""
        raise NotImplementedError

    def grad(self, x: Any) -> np.ndarray:
        """∇f(x) = (1/n) Σ_i ∇f̃_i(x)."""
        x = np.asarray(x, dtype=np.float64)
        return self.grads(np.broadcast_to(x, (self.n, self.d)).copy()).mean(axis=0)

    def losses(self, X: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def loss(self, x: Any) -> float:
        """f(x)."""
        return float(self.losses(np.asarray(x, dtype=np.float64)[None])[0])

    def prox(self, C: Any, lin: Any, lam: float, clients: Any = None) -> np.ndarray | None:
        """The exact local subproblem's solution, where a closed form exists (``None`` otherwise)."""
        return None

    def x_star(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def f_star(self) -> float:
        """f(x*)."""
        return self.loss(self.x_star())

    def gaps(self, X: Any) -> np.ndarray:
        """f(x_t) − f* for rows x_t (``nan`` where f* is unknown, e.g. a network)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        try:
            fs = self.f_star()
        except ValueError:
            return np.full(X.shape[0], np.nan)
        return self.losses(X) - fs


# --------------------------------------------------------------------------------------------
# quadratics
# --------------------------------------------------------------------------------------------


class QuadraticOracles(ClientOracles):
    r"""Rescaled quadratic clients :math:`\tilde f_i(x) = \frac{n p_i}2 (x-c_i)^\top A_i (x-c_i)`.

    Built from a :class:`~fedtheory.problems.quadratic.QuadraticFederation`; the exact local solve
    uses the stored eigendecompositions (O(d²) per client). ``noise``: standard deviation of the
    additive Gaussian gradient noise of :meth:`stochastic_grads` (E‖ξ‖² = noise²).

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> orc = QuadraticOracles(make_quadratic(2, 3, mu=1.0, L=4.0, seed=1))
    >>> C = np.zeros((2, 3)); lin = np.ones((2, 3))
    >>> X = orc.prox(C, lin, 2.0)
    >>> bool(np.allclose(orc.grads(X) - lin + 2.0 * (X - C), 0, atol=1e-12))        # ∇F_i(X_i) = 0
    True
    """

    name = "quadratic"

    def __init__(self, problem: Any, *, noise: float = 0.0) -> None:
        self.problem = problem
        n = problem.n
        scale = n * np.asarray(problem.p, dtype=np.float64)
        self.scale = scale
        self.A = problem.A * scale[:, None, None]
        self.c = np.asarray(problem.c, dtype=np.float64)
        self.eigvals = problem.eigvals * scale[:, None]
        self.eigvecs = problem.eigvecs
        self.n, self.d = n, problem.d
        self.L_i = self.eigvals[:, -1].copy()
        self.mu_i = self.eigvals[:, 0].copy()
        self.noise = float(noise)
        self._b = np.einsum("nij,nj->ni", self.A, self.c)  # A_i c_i, so ∇f̃_i(x) = A_i x − b_i

    def uniform_federation(self):
        """The rescaled clients as a :class:`~fedtheory.problems.quadratic.QuadraticFederation` with p = 1/n."""
        from fedtheory.problems.quadratic import QuadraticFederation

        return QuadraticFederation(
            A=self.A, c=self.c, p=np.full(self.n, 1.0 / self.n), eigvals=self.eigvals, eigvecs=self.eigvecs
        )

    def grads(self, X: Any, clients: Any = None) -> np.ndarray:
        X = _rows(X, self.d)
        idx = self._clients(clients, X.shape[0])
        return np.einsum("kij,kj->ki", self.A[idx], X) - self._b[idx]

    def hess_vec(self, V: Any, clients: Any = None) -> np.ndarray:
        """∇²f̃_i · V_k for client ``clients[k]``: (k, d) (exact, no differencing)."""
        V = _rows(V, self.d)
        idx = self._clients(clients, V.shape[0])
        return np.einsum("kij,kj->ki", self.A[idx], V)

    def client_losses(self, X: Any, clients: Any = None) -> np.ndarray:
        X = _rows(X, self.d)
        idx = self._clients(clients, X.shape[0])
        R = X - self.c[idx]
        return 0.5 * np.einsum("ki,kij,kj->k", R, self.A[idx], R)

    def losses(self, X: Any) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        R = X[:, None, :] - self.c[None]  # (T, n, d)
        AR = np.einsum("nij,tnj->tni", self.A, R)
        return 0.5 * np.einsum("tni,tni->t", R, AR) / self.n

    def prox(self, C: Any, lin: Any, lam: float, clients: Any = None) -> np.ndarray:
        C = _rows(C, self.d)
        lin = _rows(lin, self.d)
        idx = self._clients(clients, C.shape[0])
        V, w = self.eigvecs[idx], self.eigvals[idx]
        rhs = self._b[idx] + lin + lam * C
        return np.einsum("kij,kj->ki", V, np.einsum("kji,kj->ki", V, rhs) / (w + lam))

    def x_star(self) -> np.ndarray:
        return np.linalg.solve(self.A.sum(axis=0), self._b.sum(axis=0))

    def gaps(self, X: Any) -> np.ndarray:
        """f(x_t) − f* = ½(x_t − x*)ᵀĀ(x_t − x*), exact for quadratics (no cancellation near x*)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        D = X - self.x_star()
        return 0.5 * np.einsum("ti,ij,tj->t", D, self.A.mean(axis=0), D)


class DiagonalQuadraticOracles(ClientOracles):
    r"""Clients :math:`f_i(x) = \frac12\sum_k a_{ik}x_k^2 - b_{ik}x_k + e_i` with diagonal Hessians a_i ≥ 0.

    Everything is elementwise (d = 1000 with 5 clients costs microseconds per gradient). ``const``
    (n,) adds e_i so that losses match a generator's own formula. A coordinate no client curves
    (Σ_i a_ik = 0) must have Σ_i b_ik = 0 (else f is unbounded below) and gets x*_k = 0.

    >>> import numpy as np
    >>> orc = DiagonalQuadraticOracles(np.array([[1.0, 2.0], [3.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 2.0]]))
    >>> orc.x_star().tolist(), orc.L_i.tolist(), orc.mu_i.tolist()
    ([0.25, 1.0], [2.0, 3.0], [1.0, 0.0])
    """

    name = "diagonal-quadratic"

    def __init__(self, a: Any, b: Any, const: Any = None, *, noise: float = 0.0) -> None:
        self.a = np.asarray(a, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)
        if self.a.ndim != 2 or self.a.shape != self.b.shape:
            raise ValueError(f"a and b must both have shape (n, d), got {self.a.shape} and {self.b.shape}")
        if np.any(self.a < 0):
            raise ValueError("diagonal Hessians must be >= 0 (convex clients)")
        self.n, self.d = self.a.shape
        self.const = np.zeros(self.n) if const is None else np.asarray(const, dtype=np.float64)
        self.L_i = self.a.max(axis=1)
        self.mu_i = self.a.min(axis=1)
        self.noise = float(noise)
        total = self.a.sum(axis=0)
        flat = total <= 0
        if np.any(flat & (np.abs(self.b.sum(axis=0)) > 0)):
            raise ValueError("a coordinate with no curvature has a non-zero linear term: f is unbounded below")
        self._x_star = np.where(flat, 0.0, self.b.sum(axis=0) / np.where(flat, 1.0, total))

    def grads(self, X: Any, clients: Any = None) -> np.ndarray:
        X = _rows(X, self.d)
        idx = self._clients(clients, X.shape[0])
        return self.a[idx] * X - self.b[idx]

    def hess_vec(self, V: Any, clients: Any = None) -> np.ndarray:
        """diag(a_i) · V_k for client ``clients[k]``: (k, d)."""
        V = _rows(V, self.d)
        return self.a[self._clients(clients, V.shape[0])] * V

    def client_losses(self, X: Any, clients: Any = None) -> np.ndarray:
        X = _rows(X, self.d)
        idx = self._clients(clients, X.shape[0])
        return 0.5 * np.einsum("ki,ki->k", self.a[idx] * X, X) - np.einsum("ki,ki->k", self.b[idx], X) + self.const[idx]

    def losses(self, X: Any) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        a, b = self.a.mean(axis=0), self.b.mean(axis=0)
        return 0.5 * (X * X) @ a - X @ b + self.const.mean()

    def prox(self, C: Any, lin: Any, lam: float, clients: Any = None) -> np.ndarray:
        C, lin = _rows(C, self.d), _rows(lin, self.d)
        idx = self._clients(clients, C.shape[0])
        return (self.b[idx] + lin + lam * C) / (self.a[idx] + lam)

    def x_star(self) -> np.ndarray:
        return self._x_star.copy()

    def f_star(self) -> float:
        # f(x*) = e − ½ Σ_k b̄_k²/ā_k written without cancellation against the constant
        a, b = self.a.mean(axis=0), self.b.mean(axis=0)
        safe = np.where(a > 0, a, 1.0)
        return float(self.const.mean() - 0.5 * np.sum(np.where(a > 0, b * b / safe, 0.0)))

    def gaps(self, X: Any) -> np.ndarray:
        """f(x_t) − f* for rows x_t, as ½Σ_k ā_k (x_k − x*_k)² (no cancellation near the optimum)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        D = X - self._x_star
        return 0.5 * (D * D) @ self.a.mean(axis=0)


# --------------------------------------------------------------------------------------------
# finite sums (logistic, least squares, polyhedron, torch networks)
# --------------------------------------------------------------------------------------------


class FiniteSumOracles(ClientOracles):
    """Rescaled clients of any finite-sum federation (``batched_grads``, ``counts``, ``p``, ``on``).

    ``L_i``/``mu_i`` come from the problem's own bounds where it has them (``client_smoothness`` or
    ``smoothness`` and ``l2``), else ``nan`` (solvers then need an explicit step).

    >>> import numpy as np
    >>> from fedtheory.problems.finite_sum import LogisticFederation
    >>> fed = LogisticFederation.random(3, [10, 20, 30], 4, seed=0)
    >>> orc = FiniteSumOracles(fed)
    >>> x = np.ones(4)
    >>> bool(np.allclose(orc.grad(x), fed.grad(x))), bool(np.all(orc.mu_i > 0))
    (True, True)
    """

    name = "finite-sum"

    def __init__(self, problem: Any, *, x_star: Any = None, f_star: float | None = None) -> None:
        self.problem = problem
        self.n, self.d = int(problem.n), int(problem.d)
        self.scale = self.n * np.asarray(problem.p, dtype=np.float64)
        self.arrays = problem.on("numpy")
        self.counts = np.asarray(problem.counts)
        per_client = getattr(problem, "client_smoothness", None)
        if callable(per_client):
            L = np.asarray(per_client(), dtype=np.float64)
        elif hasattr(problem, "a") and hasattr(problem, "_max_curvature"):
            ata = np.einsum("nmd,nme->nde", problem.a, problem.a) / problem.counts[:, None, None]
            L = problem._max_curvature * np.linalg.eigvalsh(ata)[:, -1] + getattr(problem, "l2", 0.0)
        else:
            L = np.full(self.n, np.nan)
        self.L_i = L * self.scale
        self.mu_i = float(getattr(problem, "l2", 0.0)) * self.scale
        self.noise = 0.0
        self._x_star = None if x_star is None else np.asarray(x_star, dtype=np.float64)
        self._f_star = f_star

    def grads(self, X: Any, clients: Any = None) -> np.ndarray:
        X = _rows(X, self.d)
        idx = self._clients(clients, X.shape[0])
        G = np.asarray(self.problem.batched_grads(self.arrays, X, None, clients=idx), dtype=np.float64)
        return G * self.scale[idx, None]

    def stochastic_grads(
        self, X: Any, clients: Any, rng: np.random.Generator, batch_size: int | None = None
    ) -> np.ndarray:
        """Mini-batch gradients: B samples per row drawn without replacement from that client's data."""
        X = _rows(X, self.d)
        idx = self._clients(clients, X.shape[0])
        if batch_size is None:
            return self.grads(X, idx)
        from fedtheory.problems.finite_sum import sample_batches

        batches = sample_batches(rng, self.counts, int(batch_size), idx)
        G = np.asarray(self.problem.batched_grads(self.arrays, X, batches, clients=idx), dtype=np.float64)
        return G * self.scale[idx, None]

    def client_losses(self, X: Any, clients: Any = None) -> np.ndarray:
        X = _rows(X, self.d)
        idx = self._clients(clients, X.shape[0])
        return np.asarray([float(self.problem.client_losses(x)[i]) * self.scale[i] for x, i in zip(X, idx)])

    def losses(self, X: Any) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        f, _ = self.problem.loss_and_grad_norm(self.arrays, X)
        return np.asarray(f, dtype=np.float64)

    def x_star(self) -> np.ndarray:
        if self._x_star is None:
            self._x_star = np.asarray(self.problem.x_star(), dtype=np.float64)
        return self._x_star.copy()

    def f_star(self) -> float:
        if self._f_star is None:
            self._f_star = self.loss(self.x_star())
        return float(self._f_star)


def client_oracles(problem: Any, **kw: Any) -> ClientOracles:
    """The :class:`ClientOracles` of a problem (already-built oracles are returned as they are).

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> type(client_oracles(make_quadratic(2, 2, mu=1.0, L=2.0, seed=0))).__name__
    'QuadraticOracles'
    >>> client_oracles(3)
    Traceback (most recent call last):
    ...
    ValueError: no client oracles for int: give a QuadraticFederation, a finite-sum federation or ClientOracles
    """
    if isinstance(problem, ClientOracles):
        return problem
    from fedtheory.problems.quadratic import QuadraticFederation

    if isinstance(problem, QuadraticFederation):
        return QuadraticOracles(problem, **kw)
    if hasattr(problem, "batched_grads") and hasattr(problem, "counts"):
        if kw:
            return FiniteSumOracles(problem, **kw)
        # the per-client smoothness bounds cost an eigendecomposition per client: build the oracles once per
        # federation object (stored on it; a federation's data is not meant to change after construction)
        cached = getattr(problem, "_client_oracles", None)
        if cached is None:
            cached = FiniteSumOracles(problem)
            try:
                problem._client_oracles = cached
            except AttributeError:  # pragma: no cover - a federation with __slots__
                pass
        return cached
    raise ValueError(
        f"no client oracles for {type(problem).__name__}: give a QuadraticFederation, a finite-sum "
        f"federation or ClientOracles"
    )
