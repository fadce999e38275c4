r"""Federated quadratics with exact, controllable constants.

Client i holds :math:`f_i(x) = \tfrac12 (x - c_i)^\top A_i (x - c_i)` and the federation minimizes
:math:`F(x) = \sum_i p_i f_i(x)` (weights :math:`p_i > 0`, :math:`\sum_i p_i = 1`). Every Hessian is
stored with its eigendecomposition :math:`A_i = V_i \operatorname{diag}(\lambda_i) V_i^\top` (eigenvalues
ascending, eigenvectors as columns), computed once, so drivers can apply any function of a Hessian
(K local steps, a proximal step, a distortion polynomial) in O(d²) per client.

:func:`make_quadratic` builds instances whose constants are *exactly* the requested ones: every
client's spectrum lies in [μ, L] with both ends attained by every client, the centres lie in the
ball of radius C with C attained, and the average second-order dissimilarity δ_A (S-DANE, Jiang,
Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization*, arXiv:2407.07084)
hits a target to ~1e-13 relative.

>>> from fedtheory.problems.quadratic import make_quadratic
>>> q = make_quadratic(3, 4, mu=0.5, L=10.0, C=2.0, delta_A=1.25, seed=0)
>>> q.n, q.d, q.mu, q.L
(3, 4, 0.5, 10.0)
>>> abs(q.C - 2.0) < 1e-14, abs(q.delta_A() - 1.25) < 1e-13
(True, True)
>>> float(np.linalg.norm(q.grad(q.x_star()))) < 1e-12
True
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["FederationArrays", "QuadraticFederation", "make_quadratic"]

_EPS = float(np.finfo(np.float64).eps)


# --------------------------------------------------------------------------------------------
# shared numerics
# --------------------------------------------------------------------------------------------


def _symmetrize(A: np.ndarray) -> np.ndarray:
    return 0.5 * (A + np.swapaxes(A, -1, -2))


def _mean_hessian(A: np.ndarray, p: np.ndarray) -> np.ndarray:
    return _symmetrize(np.einsum("i,ijk->jk", p, A))


def _delta_A(A: np.ndarray, p: np.ndarray) -> float:
    # Σ p_i (A_i − Ā)², not Σ p_i A_i² − Ā²: the deviations are formed first so that a small δ
    # relative to L is not lost to cancellation.
    D = A - _mean_hessian(A, p)
    n, d = D.shape[0], D.shape[1]
    # Σ_i p_i D_i D_iᵀ (D_i symmetric) as one matrix product X Xᵀ with X = [√p_1 D_1, ..., √p_n D_n]
    X = np.transpose(np.sqrt(p)[:, None, None] * D, (1, 0, 2)).reshape(d, n * d)
    M = _symmetrize(X @ X.T)
    top = float(np.linalg.eigvalsh(M)[-1])
    return math.sqrt(max(top, 0.0))


def _reconstruct(eigvals: np.ndarray, eigvecs: np.ndarray) -> np.ndarray:
    return _symmetrize((eigvecs * eigvals[:, None, :]) @ np.swapaxes(eigvecs, 1, 2))


def _float_array(x: Any, name: str) -> np.ndarray:
    try:
        a = np.array(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers ({exc})") from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has non-finite entries")
    return a


def _check_weights(p: np.ndarray, n: int, where: str) -> None:
    if p.shape != (n,):
        raise ValueError(f"{where}: weights p must have shape ({n},), got {p.shape}")
    if np.any(p <= 0):
        raise ValueError(f"{where}: weights must satisfy p_i > 0, got min p_i = {float(p.min())!r}")
    total = float(p.sum())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{where}: weights must satisfy sum p_i = 1, got sum = {total!r}")


class FederationArrays(dict):
    """A federation's arrays on one backend: a dict whose keys are also attributes.

    Keys: ``A`` (n,d,d), ``c`` (n,d), ``p`` (n,), ``eigvals`` (n,d), ``eigvecs`` (n,d,d), all backend
    arrays, and ``backend`` (the :class:`fedtheory.backends.Backend`).

    >>> FederationArrays(p=1.0).p
    1.0
    """

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


# --------------------------------------------------------------------------------------------
# the federation
# --------------------------------------------------------------------------------------------


@dataclass(eq=False)
class QuadraticFederation:
    r"""n quadratic clients :math:`f_i(x) = \tfrac12 (x - c_i)^\top A_i (x - c_i)` with weights p.

    Fields (float64 numpy): ``A`` (n,d,d) symmetric, ``c`` (n,d), ``p`` (n,) with p_i > 0 and
    Σp_i = 1 (to 1e-9; not renormalized, so a JSON round trip is exact), ``eigvals`` (n,d) ascending
    and ``eigvecs`` (n,d,d) with eigenvectors as columns, ``A_i = V_i diag(λ_i) V_iᵀ``. The
    decomposition is computed once here when not given; when given it is checked against A. A is
    symmetrized (an asymmetry beyond 1e-10 relative is an error). Positive definiteness is not
    required here (a convex, μ = 0 client is a legitimate object); :meth:`from_matrices` and
    :func:`make_quadratic` guarantee it.

    >>> q = QuadraticFederation(A=[[[2.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 2.0]]],
    ...                         c=[[1.0, 0.0], [0.0, 1.0]], p=[0.5, 0.5])
    >>> q.n, q.d, q.mu, q.L, q.C
    (2, 2, 1.0, 2.0, 1.0)
    >>> q.x_star().tolist(), q.delta_A(), q.delta_B(), q.commuting()
    ([0.6666666666666666, 0.6666666666666666], 0.5, 0.5, True)
    >>> q
    QuadraticFederation(n=2, d=2, mu=1.0, L=2.0, C=1.0)
    """

    A: Any
    c: Any
    p: Any
    eigvals: Any = None
    eigvecs: Any = None

    def __post_init__(self) -> None:
        A = _float_array(self.A, "A")
        if A.ndim != 3 or A.shape[1] != A.shape[2] or A.shape[0] < 1 or A.shape[1] < 1:
            raise ValueError(f"A must have shape (n, d, d) with n, d >= 1, got {A.shape}")
        n, d = A.shape[0], A.shape[1]
        scale = max(float(np.abs(A).max()), np.finfo(np.float64).tiny)
        asym = float(np.abs(A - np.swapaxes(A, 1, 2)).max())
        if asym > 1e-10 * scale:
            i = int(np.argmax(np.abs(A - np.swapaxes(A, 1, 2)).reshape(n, -1).max(axis=1)))
            raise ValueError(f"A[{i}] is not symmetric (max |A - A^T| = {asym:.3g}, max |A| = {scale:.3g})")
        self.A = _symmetrize(A)
        c = _float_array(self.c, "c")
        if c.shape != (n, d):
            raise ValueError(f"c must have shape (n, d) = ({n}, {d}), got {c.shape}")
        self.c = c
        p = _float_array(self.p, "p")
        _check_weights(p, n, "QuadraticFederation")
        self.p = p
        if (self.eigvals is None) != (self.eigvecs is None):
            raise ValueError("give both eigvals and eigvecs, or neither")
        if self.eigvals is None:
            w, V = np.linalg.eigh(self.A)
        else:
            w = _float_array(self.eigvals, "eigvals")
            V = _float_array(self.eigvecs, "eigvecs")
            if w.shape != (n, d) or V.shape != (n, d, d):
                raise ValueError(
                    f"eigvals/eigvecs must have shapes ({n}, {d}) and ({n}, {d}, {d}), got {w.shape} and {V.shape}"
                )
            if np.any(np.diff(w, axis=1) < 0):
                raise ValueError("eigvals must be ascending along each client's row")
            # A stale or foreign decomposition would silently make every spectral driver wrong.
            resid = float(np.abs(np.einsum("nij,njk->nik", self.A, V) - V * w[:, None, :]).max())
            ortho = float(np.abs(np.einsum("nji,njk->nik", V, V) - np.eye(d)).max())
            if resid > 1e-9 * scale * max(d, 1) or ortho > 1e-9 * max(d, 1):
                raise ValueError(
                    f"eigvals/eigvecs do not decompose A (max |A V - V diag(w)| = {resid:.3g}, "
                    f"max |V^T V - I| = {ortho:.3g})"
                )
        self.eigvals, self.eigvecs = w, V

    # constructors -----------------------------------------------------------------------------
    @classmethod
    def from_matrices(cls, A: Any, c: Any, p: Any = None) -> "QuadraticFederation":
        """A validated federation from client Hessians ``A`` (n,d,d), centres ``c`` (n,d), weights ``p``.

        Checks shapes, symmetry (to 1e-10 relative), positive definiteness of every A_i, and weights
        (p_i > 0, Σ p_i = 1 to 1e-9, then renormalized); ``p=None`` means uniform. Each failure is a
        ValueError naming what is wrong.

        >>> q = QuadraticFederation.from_matrices([[[1.0]], [[3.0]]], [[0.0], [1.0]])
        >>> q.p.tolist(), q.x_star().tolist()
        ([0.5, 0.5], [0.75])
        >>> QuadraticFederation.from_matrices([[[1.0, 0.0], [0.0, -1.0]]], [[0.0, 0.0]])
        Traceback (most recent call last):
        ...
        ValueError: A[0] is not positive definite (smallest eigenvalue -1.0)
        """
        A = _float_array(A, "A")
        if A.ndim != 3:
            raise ValueError(f"A must have shape (n, d, d), got {A.shape}")
        n = A.shape[0]
        if p is None:
            p = np.full(n, 1.0 / max(n, 1))
        else:
            p = _float_array(p, "p")
            _check_weights(p, n, "from_matrices")
            p = p / p.sum()
        q = cls(A=A, c=c, p=p)
        bad = np.flatnonzero(q.eigvals[:, 0] <= 0)
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"A[{i}] is not positive definite (smallest eigenvalue {float(q.eigvals[i, 0])!r})")
        return q

    def to_json(self, spectral: bool = True) -> dict:
        """A JSON-able dict of the instance: ``A``, ``c``, ``p`` (and ``eigvals``, ``eigvecs``).

        Floats are written as Python floats, whose ``repr`` round-trips exactly, so
        :meth:`from_json` rebuilds bit-identical arrays: a stored counterexample replays exactly.
        ``spectral=True`` (default) also stores the eigendecomposition, so the replayed instance uses
        the very eigenvalues the original did (e.g. μ and L exactly) instead of recomputing them.

        >>> q = make_quadratic(2, 3, mu=1.0, L=5.0, seed=1)
        >>> r = QuadraticFederation.from_json(json.dumps(q.to_json()))
        >>> r == q and np.array_equal(r.eigvals, q.eigvals)
        True
        """
        out = {"family": "quadratic", "A": self.A.tolist(), "c": self.c.tolist(), "p": self.p.tolist()}
        if spectral:
            out["eigvals"] = self.eigvals.tolist()
            out["eigvecs"] = self.eigvecs.tolist()
        return out

    @classmethod
    def from_json(cls, data: Any) -> "QuadraticFederation":
        """The federation stored by :meth:`to_json` (a dict, or its JSON text).

        >>> QuadraticFederation.from_json('{"A": [[[2.0]]], "c": [[1.0]], "p": [1.0]}').x_star().tolist()
        [1.0]
        """
        if isinstance(data, (str, bytes)):
            data = json.loads(data)
        if not isinstance(data, dict):
            raise ValueError(f"from_json needs a dict or JSON object text, got {type(data).__name__}")
        if data.get("family", "quadratic") != "quadratic":
            raise ValueError(f"from_json: family {data['family']!r} is not 'quadratic'")
        missing = [k for k in ("A", "c", "p") if k not in data]
        if missing:
            raise ValueError(f"from_json: missing key(s) {', '.join(missing)}")
        return cls(A=data["A"], c=data["c"], p=data["p"], eigvals=data.get("eigvals"), eigvecs=data.get("eigvecs"))

    # constants --------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of clients."""
        return int(self.A.shape[0])

    @property
    def d(self) -> int:
        """Dimension."""
        return int(self.A.shape[1])

    @property
    def mu(self) -> float:
        """Smallest eigenvalue over all clients (every f_i is μ-strongly convex)."""
        return float(self.eigvals[:, 0].min())

    @property
    def L(self) -> float:
        """Largest eigenvalue over all clients (every f_i is L-smooth)."""
        return float(self.eigvals[:, -1].max())

    @property
    def C(self) -> float:
        """max_i ‖c_i‖: the radius of the smallest origin-centred ball holding every client optimum."""
        return float(np.linalg.norm(self.c, axis=1).max())

    def mean_hessian(self) -> np.ndarray:
        """Ā = Σ_i p_i A_i, the Hessian of F.

        >>> QuadraticFederation(A=[[[1.0]], [[3.0]]], c=[[0.0], [0.0]], p=[0.25, 0.75]).mean_hessian().tolist()
        [[2.5]]
        """
        return _mean_hessian(self.A, self.p)

    def delta_A(self) -> float:
        r"""The average second-order dissimilarity δ_A = sqrt(λ_max(Σ_i p_i (A_i − Ā)²)).

        S-DANE (Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated
        Optimization*, arXiv:2407.07084) assumes :math:`\frac1n\sum_i \|\nabla h_i(x) - \nabla h_i(y)\|^2
        \le \delta_A^2 \|x-y\|^2` for :math:`h_i = f - f_i`; on quadratics with uniform weights this is
        exactly :math:`\delta_A^2 = \lambda_{\max}(\frac1n\sum_i (A_i - \bar A)^2)`. Here the problem's own
        weights p replace 1/n. Always δ_A ≤ (L − μ)/2 (Σ p_i (A_i − Ā)² ⪯ (L I − Ā)(Ā − μ I)).

        >>> QuadraticFederation(A=[[[1.0]], [[3.0]]], c=[[0.0], [0.0]], p=[0.5, 0.5]).delta_A()
        1.0
        """
        return _delta_A(self.A, self.p)

    def delta_B(self) -> float:
        """The maximal second-order dissimilarity δ_B = max_i ‖A_i − Ā‖₂ (≥ δ_A).

        >>> QuadraticFederation(A=[[[1.0]], [[3.0]]], c=[[0.0], [0.0]], p=[0.25, 0.75]).delta_B()
        1.5
        """
        D = self.A - self.mean_hessian()
        return float(np.abs(np.linalg.eigvalsh(D)).max())

    def commuting(self, tol: float = 1e-12) -> bool:
        """Whether all Hessians commute: ‖A_iA_j − A_jA_i‖_F ≤ tol·‖A_i‖_F‖A_j‖_F for every pair.

        The right side bounds the commutator itself (‖AB − BA‖_F ≤ 2‖A‖_F‖B‖_F); ``tol`` is raised to
        4·d·eps where float64 rounding of the products alone could exceed it.

        >>> make_quadratic(3, 3, mu=1.0, L=2.0, commuting=True, seed=0).commuting()
        True
        >>> make_quadratic(3, 3, mu=1.0, L=2.0, commuting=False, seed=0).commuting()
        False
        """
        tol = max(float(tol), 4 * self.d * _EPS)
        A = self.A
        norms = np.linalg.norm(A.reshape(self.n, -1), axis=1)
        for i in range(self.n - 1):
            Aj = A[i + 1 :]
            K = A[i] @ Aj - Aj @ A[i]
            k = np.linalg.norm(K.reshape(K.shape[0], -1), axis=1)
            if np.any(k > tol * norms[i] * norms[i + 1 :]):
                return False
        return True

    # evaluation -------------------------------------------------------------------------------
    def _x(self, x: Any) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim not in (1, 2) or x.shape[-1] != self.d:
            raise ValueError(f"x must have shape ({self.d},) or (m, {self.d}), got {x.shape}")
        return x

    def x_star(self) -> np.ndarray:
        """The exact minimizer of F: the solution of Ā x = Σ_i p_i A_i c_i.

        >>> q = make_quadratic(4, 3, mu=1.0, L=4.0, seed=2)
        >>> float(np.abs(q.grad(q.x_star())).max()) < 1e-13
        True
        """
        b = np.einsum("i,ijk,ik->j", self.p, self.A, self.c)
        return np.linalg.solve(self.mean_hessian(), b)

    def client_grads(self, x: Any) -> np.ndarray:
        """∇f_i(x) = A_i (x − c_i) for every client: (n, d) for x of shape (d,), (m, n, d) for (m, d).

        >>> QuadraticFederation(A=[[[2.0]], [[4.0]]], c=[[1.0], [0.0]], p=[0.5, 0.5]).client_grads([1.0]).tolist()
        [[0.0], [4.0]]
        """
        x = self._x(x)
        r = x[..., None, :] - self.c
        return np.einsum("nij,...nj->...ni", self.A, r)

    def grad(self, x: Any) -> np.ndarray:
        """∇F(x) = Σ_i p_i A_i (x − c_i): (d,) for x of shape (d,), (m, d) for (m, d).

        >>> QuadraticFederation(A=[[[2.0]], [[4.0]]], c=[[1.0], [0.0]], p=[0.5, 0.5]).grad([[1.0], [0.0]]).tolist()
        [[2.0], [-1.0]]
        """
        return np.einsum("n,...ni->...i", self.p, self.client_grads(x))

    def loss(self, x: Any) -> Any:
        """F(x) = Σ_i p_i ½(x − c_i)ᵀA_i(x − c_i): a float for x of shape (d,), an (m,) array for (m, d).

        >>> q = QuadraticFederation(A=[[[2.0]], [[4.0]]], c=[[1.0], [0.0]], p=[0.5, 0.5])
        >>> q.loss([1.0]), q.loss([[1.0], [0.0]]).tolist()
        (1.0, [1.0, 0.5])
        """
        x = self._x(x)
        r = x[..., None, :] - self.c
        Ar = np.einsum("nij,...nj->...ni", self.A, r)
        out = 0.5 * np.einsum("n,...ni,...ni->...", self.p, r, Ar)
        return float(out) if x.ndim == 1 else out

    # backends ---------------------------------------------------------------------------------
    def on(self, backend: Any = "numpy", device: Any = None) -> FederationArrays:
        """The arrays A, c, p, eigvals, eigvecs on a backend (a name or a Backend) and device.

        >>> arrs = make_quadratic(2, 3, mu=1.0, L=2.0, seed=0).on("numpy")
        >>> arrs.A.shape, arrs["eigvecs"].shape, arrs.backend.name
        ((2, 3, 3), (2, 3, 3), 'numpy')
        """
        from fedtheory.backends import get_backend

        be = get_backend(backend, device=device)
        return FederationArrays(
            A=be.asarray(self.A),
            c=be.asarray(self.c),
            p=be.asarray(self.p),
            eigvals=be.asarray(self.eigvals),
            eigvecs=be.asarray(self.eigvecs),
            backend=be,
        )

    # dunder -----------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        """Exact equality of A, c and p (the decomposition follows from A)."""
        if not isinstance(other, QuadraticFederation):
            return NotImplemented
        return np.array_equal(self.A, other.A) and np.array_equal(self.c, other.c) and np.array_equal(self.p, other.p)

    __hash__ = None  # type: ignore[assignment]  # mutable arrays: unhashable, as Python spells it

    def __repr__(self) -> str:
        return f"QuadraticFederation(n={self.n}, d={self.d}, mu={self.mu!r}, L={self.L!r}, C={self.C!r})"


# --------------------------------------------------------------------------------------------
# the generator
# --------------------------------------------------------------------------------------------


def _random_rotations(rng: np.random.Generator, m: int, d: int) -> np.ndarray:
    """m Haar-distributed rotations in SO(d): QR of Gaussians, signs fixed, one column flipped if det < 0."""
    G = rng.standard_normal((m, d, d))
    Q, R = np.linalg.qr(G)
    Q = Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]
    neg = np.linalg.det(Q) < 0
    Q[neg, :, 0] *= -1.0
    return Q


def _rotation_planes(R: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """R ∈ SO(d) as rotations by angles θ_j in orthogonal planes span(p_j, q_j) (real Schur form).

    R z = Σ_j [rotation by θ_j in (p_j, q_j)] z, exactly the geodesic generator: R(s) built by
    :func:`_rotation_path` is expm(s·logm(R)). Returns P (d, m), Q (d, m), θ (m,), m = ⌊d/2⌋,
    padded with zero planes.
    """
    import scipy.linalg

    d = R.shape[0]
    m = d // 2
    P, Qm, th = np.zeros((d, m)), np.zeros((d, m)), np.zeros(m)
    if m == 0:
        return P, Qm, th
    T, Z = scipy.linalg.schur(R, output="real")
    j, k, minus = 0, 0, []
    while k < d:
        if k + 1 < d and T[k + 1, k] != 0.0:  # LAPACK zeroes the subdiagonal exactly between blocks
            a, b, c = T[k, k], T[k, k + 1], T[k + 1, k]
            P[:, j], Qm[:, j], th[j] = Z[:, k], Z[:, k + 1], math.atan2(0.5 * (c - b), a)
            j, k = j + 1, k + 2
        else:
            if T[k, k] < 0:  # eigenvalue −1: paired below into rotations by π
                minus.append(k)
            k += 1
    if len(minus) % 2:
        raise ValueError("rotation path needs det = +1")  # unreachable: rotations are made in SO(d)
    for a, b in zip(minus[::2], minus[1::2]):
        P[:, j], Qm[:, j], th[j] = Z[:, a], Z[:, b], math.pi
        j += 1
    return P, Qm, th


def _rotation_path(P: np.ndarray, Q: np.ndarray, th: np.ndarray, s: float) -> np.ndarray:
    """R(s) = I + Σ_j (cos sθ_j − 1)(p_jp_jᵀ + q_jq_jᵀ) + sin sθ_j (q_jp_jᵀ − p_jq_jᵀ), batched.

    Written as I plus a correction so that R(0) is the identity exactly.
    """
    cm1 = np.cos(s * th) - 1.0
    sn = np.sin(s * th)
    d = P.shape[-2]
    Pt, Qt = np.swapaxes(P, -1, -2), np.swapaxes(Q, -1, -2)
    return (
        np.eye(d)
        + (P * cm1[..., None, :]) @ Pt
        + (Q * cm1[..., None, :]) @ Qt
        + (Q * sn[..., None, :]) @ Pt
        - (P * sn[..., None, :]) @ Qt
    )


def _finish(lam: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, eigvals ascending, eigvecs) from per-client eigenvalues (any order) and eigenvector columns."""
    order = np.argsort(lam, axis=1, kind="stable")
    w = np.take_along_axis(lam, order, axis=1)
    V = np.take_along_axis(U, order[:, None, :], axis=2)
    return _reconstruct(w, V), w, V


def _check_real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"make_quadratic needs a finite real {name}, got {name}={value!r}")
    return float(value)


def make_quadratic(
    n: int,
    d: int,
    *,
    mu: float,
    L: float,
    C: float = 1.0,
    weights: Any = "uniform",
    commuting: bool = False,
    delta_A: float | None = None,
    seed: int | np.random.Generator | None = 0,
) -> QuadraticFederation:
    r"""A random federated quadratic whose constants are exactly μ, L, C (and δ_A when asked).

    - Spectra: client i's eigenvalues are μ, L and d − 2 interior values uniform in [μ, L], so every
      client attains both μ and L (d = 1 therefore needs μ = L). A_i = U_i diag(λ_i) U_iᵀ with U_i a
      Haar rotation in SO(d); ``commuting=True`` shares one U (and the eigenvalue order: all clients'
      μ-eigenvectors coincide, and so do their L-eigenvectors), ``commuting=False`` draws one per
      client (generically non-commuting for d ≥ 2 and μ < L).
    - Centres: uniform in the ball of radius C, the farthest rescaled to norm exactly C.
    - Weights: ``"uniform"`` (1/n), ``"random"`` (½(1/n + Dirichlet(1)), so p_i ≥ 1/(2n)), or an array
      (p_i > 0 summing to 1; renormalized).
    - ``delta_A``: the average dissimilarity δ_A (:meth:`QuadraticFederation.delta_A`) is made equal
      to the target to ~1e-13 relative. The random instance is joined to the homogeneous one
      (every client equal to client 0, δ_A = 0) by a path that keeps every spectrum in [μ, L] with
      both ends attained: U_i(s) = U_0 expm(s·logm(U_0ᵀU_i)) and λ_i(s) = clip(λ_0 + s(λ_i − λ_0),
      μ, L) (s > 1 continues the rotations and pushes interior eigenvalues towards μ or L); s is
      found by Brent's method. With ``commuting=True`` only the eigenvalues move. A target the path
      does not reach raises ValueError with the largest value it found. (float64 resolves δ_A of
      the stored matrices only to about eps·L/δ_A relative, so "exact" means ~1e-13 for
      δ_A ≳ 1e-3·L and a few eps·L/δ_A below that.)
    - The same ``seed`` (an int, or a numpy Generator, which is advanced) gives identical arrays.

    Hypotheses, each a ValueError naming it and the values: n ≥ 1, d ≥ 1, 0 < μ ≤ L, C ≥ 0,
    0 ≤ δ_A ≤ (L − μ)/2. The last bound holds for *every* federation with spectra in [μ, L]
    (Σ p_i (A_i − Ā)² ⪯ (L I − Ā)(Ā − μ I) ⪯ (L − μ)²/4 · I), and is attained (n = 2, A_1 = diag(μ, L),
    A_2 = diag(L, μ)); it is sharper than δ_A ≤ max_i ‖A_i − Ā‖ ≤ L − μ.

    >>> q = make_quadratic(4, 5, mu=0.1, L=10.0, C=3.0, weights="random", delta_A=2.0, seed=7)
    >>> q.mu, q.L, bool(np.all(q.eigvals[:, 0] == 0.1) and np.all(q.eigvals[:, -1] == 10.0))
    (0.1, 10.0, True)
    >>> abs(q.delta_A() / 2.0 - 1) < 1e-13, abs(q.C / 3.0 - 1) < 1e-14, q.commuting()
    (True, True, False)
    >>> make_quadratic(3, 2, mu=2.0, L=1.0)
    Traceback (most recent call last):
    ...
    ValueError: make_quadratic needs 0 < mu <= L (strong convexity mu, smoothness L), got mu=2.0, L=1.0
    """
    # hypotheses ---------------------------------------------------------------------------------
    for name, v in (("n", n), ("d", d)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"make_quadratic needs an integer {name} >= 1, got {name}={v!r}")
    n, d = int(n), int(d)
    mu, L, C = _check_real("mu", mu), _check_real("L", L), _check_real("C", C)
    if not 0 < mu <= L:
        raise ValueError(
            f"make_quadratic needs 0 < mu <= L (strong convexity mu, smoothness L), got mu={mu!r}, L={L!r}"
        )
    if C < 0:
        raise ValueError(f"make_quadratic needs C >= 0 (radius of the ball of client optima), got C={C!r}")
    if d == 1 and mu < L:
        raise ValueError(
            f"make_quadratic: with d=1 a client has one eigenvalue and cannot attain both "
            f"mu={mu!r} and L={L!r}; every client attaining both needs d >= 2 or mu == L "
            f"(use QuadraticFederation.from_matrices for scalar clients)"
        )
    target = None
    if delta_A is not None:
        target = _check_real("delta_A", delta_A)
        bound = (L - mu) / 2
        if target < 0:
            raise ValueError(f"make_quadratic needs delta_A >= 0, got delta_A={target!r}")
        if target > bound:
            raise ValueError(
                f"make_quadratic needs delta_A <= (L - mu)/2 = {bound!r} (no federation with spectra "
                f"in [mu, L] exceeds it), got delta_A={target!r} with mu={mu!r}, L={L!r}"
            )
    if not isinstance(commuting, (bool, np.bool_)):
        raise ValueError(f"commuting must be True or False, got {commuting!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    # weights, spectra, rotations, centres (always drawn in this order) ------------------------
    if isinstance(weights, str):
        if weights == "uniform":
            p = np.full(n, 1.0 / n)
        elif weights == "random":
            p = 0.5 * (1.0 / n + rng.dirichlet(np.ones(n)))
            p = p / p.sum()
        else:
            raise ValueError(f"weights must be 'uniform', 'random' or an array, got {weights!r}")
    else:
        p = _float_array(weights, "weights")
        _check_weights(p, n, "make_quadratic")
        p = p / p.sum()

    if d == 1:
        lam = np.full((n, 1), mu)
    else:
        interior = np.sort(mu + (L - mu) * rng.uniform(size=(n, d - 2)), axis=1)
        lam = np.concatenate([np.full((n, 1), mu), np.clip(interior, mu, L), np.full((n, 1), L)], axis=1)
    U = _random_rotations(rng, 1 if commuting else n, d)
    if commuting:
        U = np.broadcast_to(U, (n, d, d)).copy()

    if C > 0:
        g = rng.standard_normal((n, d))
        dirs = g / np.linalg.norm(g, axis=1, keepdims=True)
        r = C * rng.uniform(size=n) ** (1.0 / d)
        r[int(np.argmax(r))] = C
        c = r[:, None] * dirs
    else:
        c = np.zeros((n, d))

    if target is None:
        A, w, V = _finish(lam, U)
        return QuadraticFederation(A=A, c=c, p=p, eigvals=w, eigvecs=V)

    # δ_A target: path from homogeneous (s = 0) through the random instance (s = 1) and beyond ----
    planes: tuple[np.ndarray, ...] | None
    if commuting:
        planes = None
    else:
        rel = np.einsum("ji,njk->nik", U[0], U)  # U_0ᵀU_i ∈ SO(d)
        parts = [_rotation_planes(R) for R in rel]
        planes = tuple(np.stack([pt[k] for pt in parts]) for k in range(3))

    def build(s: float):
        lam_s = np.clip(lam[0] + s * (lam - lam[0]), mu, L)
        U_s = U if planes is None else U[0] @ _rotation_path(planes[0], planes[1], planes[2], s)
        return _finish(lam_s, U_s)

    def delta(s: float) -> float:
        return _delta_A(build(s)[0], p)

    s_star = _solve_for_delta(delta, target, n=n, d=d, mu=mu, L=L, commuting=bool(commuting))
    A, w, V = build(s_star)
    return QuadraticFederation(A=A, c=c, p=p, eigvals=w, eigvecs=V)


# Grid on which the path is scanned for the first crossing of the target: fine on [0, 1] (where the
# path interpolates to the random instance), then out to s = 16 (rotations continue, interior
# eigenvalues saturate at μ or L).
_S_GRID = np.concatenate([np.linspace(0.0, 1.0, 33)[1:], 1.0 + np.arange(1, 121) / 8.0])


def _solve_for_delta(delta, target: float, *, n: int, d: int, mu: float, L: float, commuting: bool) -> float:
    """The smallest grid-bracketed s with delta(s) = target, polished by Brent's method."""
    d0 = delta(0.0)
    if target <= d0:
        # target 0 (or below float64's resolution of the homogeneous instance): all clients equal
        return 0.0
    if n == 1:
        raise ValueError(
            f"make_quadratic cannot reach delta_A={target!r} with n=1: the single client is the "
            f"mean, so delta_A = 0 is the only attainable value"
        )
    if commuting and d == 2:
        raise ValueError(
            f"make_quadratic cannot reach delta_A={target!r} with commuting=True and d=2: every client "
            f"is U diag(mu, L) U^T with the shared U, so delta_A = 0 is the only attainable value "
            f"(use commuting=False or d >= 3)"
        )
    s_prev, best = 0.0, d0
    values = []
    for s in _S_GRID:
        val = delta(float(s))
        best = max(best, val)
        if val >= target:
            return _brent(delta, target, s_prev, float(s))
        values.append(val)
        s_prev = float(s)
    # No grid point reaches the target: it may still sit under a peak between grid points (a target
    # at or near the path's maximum). Polish the three highest peaks.
    from scipy.optimize import minimize_scalar

    grid = np.concatenate([[0.0], _S_GRID])
    on_grid = np.asarray([d0] + values)
    for k in np.argsort(on_grid)[::-1][:3]:
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
        res = minimize_scalar(lambda t: -delta(t), bounds=(lo, hi), method="bounded", options={"xatol": 1e-13})
        s_peak, peak = float(res.x), -float(res.fun)
        best = max(best, peak)
        if peak >= target:
            return _brent(delta, target, float(lo), s_peak)
        if peak >= target * (1 - 1e-14):
            return s_peak  # a flat maximum equal to the target up to rounding
    raise ValueError(
        f"make_quadratic cannot reach delta_A={target!r} for n={n}, d={d}, mu={mu!r}, L={L!r}, "
        f"commuting={commuting}: its construction reaches at most about {best:.6g} with this seed "
        f"(every federation has delta_A <= (L - mu)/2 = {(L - mu) / 2:.6g}); try "
        f"{'commuting=False, ' if commuting else ''}more clients or another seed"
    )


def _brent(delta, target: float, lo: float, hi: float) -> float:
    """s in [lo, hi] with delta(s) = target, given delta(lo) < target <= delta(hi)."""
    from scipy.optimize import brentq

    return float(brentq(lambda t: delta(t) - target, lo, hi, xtol=1e-300, rtol=4 * _EPS, maxiter=500))
