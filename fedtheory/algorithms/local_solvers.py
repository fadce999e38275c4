r"""Pluggable local solvers for DANE-type subproblems, each stopped by an accuracy test.

Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization*
(arXiv:2407.07084): in every round, client i approximately minimizes

.. math:: F_i(x) = f_i(x) - \langle \ell_i, x\rangle + \frac\lambda2\|x - c\|^2,

with prox-centre c (x^r for DANE, v^r for S-DANE, y^r for Acc-S-DANE) and drift correction
:math:`\ell_i = \nabla f_i(c) - \nabla f_S(c)` (zero without control variate). "Any local solver may
be used" as long as it meets the round's accuracy test; here the solvers are batched over the
sampled clients (one array operation per step for all of them) and each client stops on its own
test:

- :class:`StabilizedTest` — S-DANE's condition (6)/(9), per client:
  :math:`\|\nabla F_i(x)\|^2 \le c\lambda^2\|x - c\|^2` with c = 1/4 (summing over clients gives (6));
- :class:`DaneTest` — DANE's tightening condition :math:`\|\nabla F_i(x)\|^2\le \frac{c\lambda^2}{(r+1)^2}\|x-c\|^2 + a`;
- ``None`` — run a fixed number of steps K.

Solvers: :class:`GD` (step 1/(L_i+λ)), :class:`ProxLinearGD` (the regularizer handled exactly, as in the
authors' code), :class:`FGM` (Nesterov, strongly convex), :class:`OGMG` (Kim & Fessler's OGM-G in
doubling blocks), :class:`FastGradNorm` (FGM then OGM-G: ‖∇F(x_K)‖ = O(L̃‖x_0 − x*‖/K²), the method of
Corollary 3), :class:`SGD` (mini-batch, Corollary 22 / Lemma 23), :class:`Exact` (closed form on
quadratics) and :class:`Boundary` (the worst admissible answer on quadratics: a point on the boundary of
the test, for adversarial probes). Every gradient evaluation at a new point counts as one oracle call; the gradient at the
centre is the driver's (it is the message of step 3 of Algorithm 1) and is not counted here.

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> from fedtheory.problems.clients import client_oracles
>>> orc = client_oracles(make_quadratic(4, 5, mu=1.0, L=50.0, delta_A=2.0, seed=0))
>>> C = np.zeros((4, 5)); GC = orc.grads(C); lin = GC - GC.mean(axis=0)
>>> sub = Subproblem(orc, np.arange(4), C, lin, lam=4.0, G_center=GC)
>>> res = GD().solve(sub, StabilizedTest())
>>> bool(res.passed.all()), bool(res.evals.max() <= GD.steps_bound(50.0, 4.0))
(True, True)
>>> gF = sub.grad_F(res.X, res.G)
>>> bool(np.all((gF ** 2).sum(1) <= 0.25 * 4.0 ** 2 * ((res.X - C) ** 2).sum(1)))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Subproblem",
    "LocalResult",
    "StabilizedTest",
    "DaneTest",
    "GD",
    "ProxLinearGD",
    "FGM",
    "OGMG",
    "FastGradNorm",
    "SGD",
    "Exact",
    "Boundary",
    "ogm_g_thetas",
    "sgd_output_moments",
    "SOLVERS",
]

DEFAULT_MAX_STEPS = 20_000
_EPS = float(np.finfo(np.float64).eps)


# --------------------------------------------------------------------------------------------
# the subproblem and the tests
# --------------------------------------------------------------------------------------------


@dataclass
class Subproblem:
    r"""One round's local subproblems for the clients ``clients``: F_i(x) = f_i(x) − ⟨ℓ_i, x⟩ + λ/2‖x − c_i‖².

    ``center`` (s, d) and ``lin`` (s, d) row per client; ``G_center``: ∇f_i at the centre (s, d), known
    to the client already; ``r``: the round (for tightening tests); ``rng``: for stochastic solvers.
    """

    oracles: Any
    clients: np.ndarray
    center: np.ndarray
    lin: np.ndarray
    lam: float
    G_center: np.ndarray = None  # type: ignore[assignment]  # None until __post_init__ computes it
    r: int = 0
    rng: Any = None

    def __post_init__(self) -> None:
        self.clients = np.asarray(self.clients, dtype=np.int64)
        self.center = np.asarray(self.center, dtype=np.float64)
        self.lin = np.asarray(self.lin, dtype=np.float64)
        if not (np.isfinite(self.lam) and self.lam >= 0):
            raise ValueError(f"the proximal weight lambda must be finite and >= 0, got {self.lam!r}")
        if self.G_center is None:
            self.G_center = self.oracles.grads(self.center, self.clients)

    @property
    def L(self) -> np.ndarray:
        """Per-client smoothness of F_i: L_i + λ."""
        return self.oracles.L_i[self.clients] + self.lam

    @property
    def mu(self) -> np.ndarray:
        """Per-client strong convexity of F_i: μ_i + λ."""
        return self.oracles.mu_i[self.clients] + self.lam

    def grad_F(self, X: np.ndarray, G: np.ndarray, rows: Any = slice(None)) -> np.ndarray:
        """∇F_i(X) from ∇f_i(X) = G (rows: which clients)."""
        return G - self.lin[rows] + self.lam * (X - self.center[rows])

    @property
    def resolution0_sq(self) -> np.ndarray:
        """:meth:`resolution_sq` at the centre (cached): a cheap pre-filter for the resolution stop."""
        if getattr(self, "_res0", None) is None:
            self._res0 = self.resolution_sq(self.center, self.G_center)
        return self._res0

    def resolution_sq(self, X: np.ndarray, G: np.ndarray, rows: Any = slice(None)) -> np.ndarray:
        """(32·eps·scale)², scale = ‖∇f_i(X)‖ + ‖ℓ_i‖ + λ(‖X‖ + ‖c_i‖): below this float64 cannot resolve ∇F_i."""
        nrm = lambda A: np.sqrt(np.einsum("ij,ij->i", A, A))  # noqa: E731
        scale = nrm(G) + nrm(self.lin[rows]) + self.lam * (nrm(X) + nrm(self.center[rows]))
        return (32 * _EPS * scale) ** 2


@dataclass(frozen=True)
class StabilizedTest:
    r"""S-DANE's accuracy condition, client by client: :math:`\|\nabla F_i(x)\|^2 \le c\,\lambda^2\|x-c_i\|^2`.

    Theorem 1's (6) with c = 1/4 sums these over the clients; the per-client form is what a client can
    check alone (the authors' code does the same) and implies (6).

    >>> StabilizedTest().passed(np.array([1.0, 5.0]), np.array([1.0, 1.0]), lam=4.0, r=0).tolist()
    [True, False]
    """

    c: float = 0.25
    atol: float = 0.0

    def threshold(self, lam: float, r: int) -> float:
        return self.c * lam * lam

    def passed(self, gradF_sq: np.ndarray, dist_sq: np.ndarray, lam: float, r: int) -> np.ndarray:
        return gradF_sq <= self.threshold(lam, r) * dist_sq + self.atol


@dataclass(frozen=True)
class DaneTest:
    r"""DANE's tightening condition: :math:`\|\nabla F_i(x)\|^2 \le \frac{c\lambda^2}{(r+1)^2}\|x-x^r\|^2 + a`.

    Remark 2: DANE needs the extra (r+1)² (the authors' code uses c = 2, a = 1e-6 in its experiments).

    >>> DaneTest(c=2.0).threshold(lam=1.0, r=3)
    0.125
    """

    c: float = 0.25
    atol: float = 0.0

    def threshold(self, lam: float, r: int) -> float:
        return self.c * lam * lam / (r + 1) ** 2

    def passed(self, gradF_sq: np.ndarray, dist_sq: np.ndarray, lam: float, r: int) -> np.ndarray:
        return gradF_sq <= self.threshold(lam, r) * dist_sq + self.atol


@dataclass
class LocalResult:
    """What a local solve returns: points X (s, d), ∇f_i(X) (s, d), gradient evaluations per client
    (s,), whether each client's test held at X (s,), the test's two sides at X, and ``at_resolution``
    (s,): the test failed only because ∇F_i is below what float64 resolves (the iterate has converged to
    machine precision; solvers stop there rather than loop to ``max_steps``)."""

    X: np.ndarray
    G: np.ndarray
    evals: np.ndarray
    passed: np.ndarray
    gradF_sq: np.ndarray | None = field(default=None)
    dist_sq: np.ndarray | None = field(default=None)
    at_resolution: np.ndarray | None = field(default=None)


def _sq(A: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", A, A)


def _finish(sub: Subproblem, X: np.ndarray, G: np.ndarray, evals: np.ndarray, test: Any) -> LocalResult:
    gF = _sq(sub.grad_F(X, G))
    dist = _sq(X - sub.center)
    passed = np.ones(X.shape[0], bool) if test is None else test.passed(gF, dist, sub.lam, sub.r)
    at_res = ~passed & (gF <= sub.resolution_sq(X, G))
    return LocalResult(X=X, G=G, evals=evals, passed=passed, gradF_sq=gF, dist_sq=dist, at_resolution=at_res)


def _stop(sub: Subproblem, test: Any, X: np.ndarray, G: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Which of ``rows`` stop: their test holds, or ∇F_i is below float64's resolution."""
    gF = _sq(sub.grad_F(X, G, rows))
    return test.passed(gF, _sq(X - sub.center[rows]), sub.lam, sub.r) | (gF <= sub.resolution_sq(X, G, rows))


def _steps_from_L(sub: Subproblem, step: Any) -> np.ndarray:
    if step is not None:
        return np.broadcast_to(np.asarray(step, dtype=np.float64), sub.clients.shape).copy()
    L = sub.L
    if not np.all(np.isfinite(L)):
        raise ValueError("the clients' smoothness is unknown here: give the local solver an explicit step")
    return 1.0 / L


class _Iterative:
    """Shared loop: a one-step update on the active clients, a test after each step, K or the test stops."""

    K: int | None = None
    max_steps: int = DEFAULT_MAX_STEPS

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        raise NotImplementedError  # pragma: no cover


# --------------------------------------------------------------------------------------------
# first-order solvers
# --------------------------------------------------------------------------------------------


@dataclass
class GD(_Iterative):
    r"""Gradient descent on F_i with step 1/(L_i + λ) (or ``step``), from the centre.

    ``K``: a fixed number of steps (the test is then only reported); ``None``: until the test holds.
    Remark 19 / Lemma 20: with the tight constant ‖∇F(x_K)‖ ≤ L̃‖x_0 − x*‖/(K+1), the S-DANE test holds
    after at most :meth:`steps_bound` steps.
    """

    K: int | None = None
    step: Any = None
    max_steps: int = DEFAULT_MAX_STEPS
    name = "gd"

    @staticmethod
    def steps_bound(L: float, lam: float) -> int:
        """Steps after which (C.4) ‖∇F‖ ≤ (λ/3)‖x* − c‖ holds for GD: K + 1 ≥ 3(L + λ)/λ.

        >>> GD.steps_bound(9.0, 1.0)
        29
        """
        return max(0, math.ceil(3 * (L + lam) / lam) - 1)

    def _step(self, sub, X, G, gF, rows, eta):
        return X - eta[:, None] * gF

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        eta = _steps_from_L(sub, self.step)
        return _run_simple(self, sub, test, eta)


@dataclass
class ProxLinearGD(GD):
    r"""The authors' local step: :math:`x_{k+1} = \frac{x_k/\eta + \lambda c + \ell_i - \nabla f_i(x_k)}{1/\eta + \lambda}`.

    A gradient step on f_i − ⟨ℓ_i, ·⟩ with the quadratic λ/2‖x − c‖² handled exactly; step η = 1/L_i by
    default.
    """

    name = "prox-linear-gd"

    def _step(self, sub, X, G, gF, rows, eta):
        inv = 1.0 / eta[:, None]
        return (X * inv + sub.lam * sub.center[rows] + sub.lin[rows] - G) / (inv + sub.lam)

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        if self.step is None:
            L = sub.oracles.L_i[sub.clients]
            if not np.all(np.isfinite(L)) or np.any(L <= 0):
                raise ValueError("prox-linear GD needs an explicit step when the clients' smoothness is unknown")
            eta = 1.0 / L
        else:
            eta = np.broadcast_to(np.asarray(self.step, dtype=np.float64), sub.clients.shape).copy()
        return _run_simple(self, sub, test, eta)


def _run_simple(solver, sub: Subproblem, test: Any, eta: np.ndarray) -> LocalResult:
    """GD-like loop: one gradient at each new iterate; the test (or K) decides each client's stop.

    ∇F_i is formed once per iterate and reused by the next step and the test; while every client is active
    the arrays are sliced, not fancy-indexed (no copies on the hot path).
    """
    s = sub.clients.size
    X, G = sub.center.copy(), sub.G_center.copy()
    gF = sub.grad_F(X, G)
    evals = np.zeros(s, dtype=np.int64)
    fixed = solver.K is not None
    limit = solver.K if fixed else solver.max_steps
    if not fixed and test is None:
        raise ValueError("give the local solver a number of steps K or an accuracy test")
    active = np.ones(s, bool)
    if not fixed:
        active &= ~_stop_from(sub, test, X, G, gF, slice(None))
    everyone = slice(None)
    rows: slice | np.ndarray
    for _ in range(int(limit)):
        if active.all():
            rows, idx = everyone, None
        else:
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            rows = idx
        Xn = solver._step(sub, X[rows], G[rows], gF[rows], rows, eta[rows])
        Gn = sub.oracles.grads(Xn, sub.clients[rows])
        gFn = sub.grad_F(Xn, Gn, rows)
        X[rows], G[rows], gF[rows] = Xn, Gn, gFn
        evals[rows] += 1
        if not fixed:
            done = _stop_from(sub, test, Xn, Gn, gFn, rows)
            if done.any():
                active[np.flatnonzero(done) if idx is None else idx[done]] = False
    return _finish(sub, X, G, evals, test)


def _stop_from(sub: Subproblem, test: Any, X: np.ndarray, G: np.ndarray, gF: np.ndarray, rows: Any) -> np.ndarray:
    """:func:`_stop` from an already formed ∇F_i; the float64-resolution check only where the test fails."""
    gF_sq = _sq(gF)
    done = test.passed(gF_sq, _sq(X - sub.center[rows]), sub.lam, sub.r)
    if not done.all():
        # only rows whose ∇F_i is within 10³ of the resolution at the centre can be at float64's resolution
        near = ~done & (gF_sq <= sub.resolution0_sq[rows] * 1e6)
        bad = np.flatnonzero(near)
        if bad.size == 0:
            return done
        sub_rows = bad if isinstance(rows, slice) else rows[bad]
        done[bad] = gF_sq[bad] <= sub.resolution_sq(X[bad], G[bad], sub_rows)
    return done


@dataclass
class FGM(_Iterative):
    r"""Nesterov's fast gradient method for the (μ_i+λ)-convex, (L_i+λ)-smooth F_i (constant momentum).

    x_{k+1} = y_k − ∇F(y_k)/L̃, y_{k+1} = x_{k+1} + β(x_{k+1} − x_k), β = (√κ − 1)/(√κ + 1) (Bubeck,
    Thm 3.18: F(x_K) − F* ≤ (L̃+μ̃)/2‖x_0 − x*‖² e^{−K/√κ}). Stopped by the test, it is evaluated at y (where the
    gradient is computed anyway) and y is returned; with a fixed K the guaranteed point x_K is returned (one
    more gradient evaluation).
    """

    K: int | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    name = "fgm"

    @staticmethod
    def steps_bound(L: float, lam: float, mu: float = 0.0) -> int:
        r"""Steps K after which (C.4) holds at FGM's x_K (Bubeck, Thm 3.18; Remark 19):
        :math:`\sqrt{\tilde L(\tilde L+\tilde\mu)}\,e^{-K/(2\sqrt\kappa)} \le \lambda/3`, κ = L̃/μ̃.

        >>> FGM.steps_bound(100.0, 1.0)
        115
        """
        Lt, mt = L + lam, mu + lam
        kappa = Lt / mt
        return max(1, math.ceil(2 * math.sqrt(kappa) * math.log(3 * math.sqrt(Lt * (Lt + mt)) / lam)))

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        Lt, mt = sub.L, sub.mu
        if not np.all(np.isfinite(Lt)):
            raise ValueError("FGM needs the clients' smoothness")
        sq = np.sqrt(Lt / mt)
        beta = (sq - 1) / (sq + 1)
        s = sub.clients.size
        Y, G = sub.center.copy(), sub.G_center.copy()
        Xprev = Y.copy()
        evals = np.zeros(s, dtype=np.int64)
        if self.K is None and test is None:
            raise ValueError("give FGM a number of steps K or an accuracy test")
        active = np.ones(s, bool)
        if self.K is None:
            active &= ~_stop(sub, test, Y, G, np.arange(s))
        for _ in range(int(self.K if self.K is not None else self.max_steps)):
            rows = np.flatnonzero(active)
            if rows.size == 0:
                break
            Xn = Y[rows] - sub.grad_F(Y[rows], G[rows], rows) / Lt[rows, None]
            Yn = Xn + beta[rows, None] * (Xn - Xprev[rows])
            Gn = sub.oracles.grads(Yn, sub.clients[rows])
            Xprev[rows], Y[rows], G[rows] = Xn, Yn, Gn
            evals[rows] += 1
            if self.K is None:
                active[rows[_stop(sub, test, Yn, Gn, rows)]] = False
        if self.K is not None and self.K > 0:
            GX = sub.oracles.grads(Xprev, sub.clients)
            return _finish(sub, Xprev, GX, evals + 1, test)
        return _finish(sub, Y, G, evals, test)


def ogm_g_thetas(N: int) -> np.ndarray:
    r"""OGM-G's θ̃_0, ..., θ̃_N (Kim & Fessler 2021): θ̃_N = 1, θ̃_i = (1 + √(1 + 4θ̃_{i+1}²))/2,
    θ̃_0 = (1 + √(1 + 8θ̃_1²))/2. Guarantee: ‖∇f(x_N)‖² ≤ 2L(f(x_0) − f*)/θ̃_0², and θ̃_0 ≥ (N+2)/√2.

    >>> th = ogm_g_thetas(3)
    >>> float(th[-1]), bool(th[0] >= 5 / 2 ** 0.5)
    (1.0, True)
    """
    if N < 1:
        raise ValueError(f"OGM-G needs N >= 1 steps, got {N}")
    th = [1.0]
    for i in range(N - 1, -1, -1):
        factor = 8.0 if i == 0 else 4.0
        th.append((1 + math.sqrt(1 + factor * th[-1] ** 2)) / 2)
    return np.asarray(th[::-1])


def _ogm_g_block(sub: Subproblem, X0: np.ndarray, G0: np.ndarray, rows: np.ndarray, N: int):
    """N OGM-G steps on the clients ``rows`` from X0 (∇f at X0 = G0); returns x_N, ∇f(x_N) (N evals)."""
    Lt = sub.L[rows, None]
    th = ogm_g_thetas(N)
    X, G = X0, G0
    Yold = X0
    for i in range(N):
        Ynew = X - sub.grad_F(X, G, rows) / Lt
        a = (th[i] - 1) * (2 * th[i + 1] - 1) / (th[i] * (2 * th[i] - 1))
        b = (2 * th[i + 1] - 1) / (2 * th[i] - 1)
        X = Ynew + a * (Ynew - Yold) + b * (Ynew - X)
        Yold = Ynew
        G = sub.oracles.grads(X, sub.clients[rows])
    return X, G


def _fgm_convex_block(sub: Subproblem, X0: np.ndarray, G0: np.ndarray, rows: np.ndarray, k: int):
    """k steps of Nesterov's FGM for smooth convex F (t-sequence): F(x_k) − F* ≤ 2L̃‖x_0 − x*‖²/(k+1)².

    Returns x_k and ∇f(x_k) (k evaluations: y_1..y_{k−1} and x_k).
    """
    Lt = sub.L[rows, None]
    X, Y, G = X0, X0, G0
    t = 1.0
    for j in range(k):
        Xn = Y - sub.grad_F(Y, G, rows) / Lt
        tn = (1 + math.sqrt(1 + 4 * t * t)) / 2
        Y = Xn + ((t - 1) / tn) * (Xn - X)
        X, t = Xn, tn
        G = sub.oracles.grads(Y if j < k - 1 else X, sub.clients[rows])
    return X, G


def _solve_in_doubling_blocks(
    sub: Subproblem, test: Any, K: int | None, max_steps: int, block, first: int, who: str
) -> LocalResult:
    """The driver of a solver whose steps come in blocks of a length fixed in advance: with ``K`` given, one block
    of K steps; otherwise blocks of ``first``, 2·``first``, 4·``first``, ... steps on the clients whose ``test``
    still fails, until it holds or ``max_steps`` is spent (every block's evaluations counted).
    ``block(X, G, rows, length)`` runs one block on ``rows`` from X (∇f there: G) and returns x, ∇f(x).

    >>> _solve_in_doubling_blocks(None, None, None, 10, None, 1, "OGM-G")
    Traceback (most recent call last):
    ValueError: give OGM-G a number of steps K or an accuracy test
    """
    if K is None and test is None:
        raise ValueError(f"give {who} a number of steps K or an accuracy test")
    s = sub.clients.size
    X, G = sub.center.copy(), sub.G_center.copy()
    evals = np.zeros(s, dtype=np.int64)
    if K is not None:
        if K > 0:
            X, G = block(X, G, np.arange(s), int(K))
            evals[:] = K
        return _finish(sub, X, G, evals, test)
    active = ~_stop(sub, test, X, G, np.arange(s))
    length = first
    while np.any(active) and evals.max() < max_steps:
        rows = np.flatnonzero(active)
        Xn, Gn = block(X[rows], G[rows], rows, length)
        X[rows], G[rows] = Xn, Gn
        evals[rows] += length
        active[rows[_stop(sub, test, Xn, Gn, rows)]] = False
        length *= 2
    return _finish(sub, X, G, evals, test)


@dataclass
class OGMG(_Iterative):
    """OGM-G (Kim & Fessler 2021) in doubling blocks N = 1, 2, 4, ... restarted from the last output
    until the test holds (OGM-G's coefficients depend on N, so a block's length is fixed in advance).
    With ``K`` given: one block of K steps."""

    K: int | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    name = "ogm-g"

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        # each block restarts from the last block's output
        return _solve_in_doubling_blocks(
            sub,
            test,
            self.K,
            self.max_steps,
            first=1,
            who="OGM-G",
            block=lambda X, G, rows, N: _ogm_g_block(sub, X, G, rows, N),
        )


@dataclass
class FastGradNorm(_Iterative):
    r"""FGM for ⌈K/2⌉ steps, then OGM-G for ⌊K/2⌋ steps: :math:`\|\nabla F(x_K)\| \le
    \frac{2\tilde L\|x_0-x^*\|}{(\lceil K/2\rceil+1)(\lfloor K/2\rfloor+1)}` (FGM: F − F* ≤ 2L̃R²/(k+1)²;
    OGM-G: ‖∇F‖² ≤ 2L̃(F(x_0) − F*)/(N+1)²). This is the "method designed for fast gradient-norm
    minimization" of Corollary 3. With ``K=None`` it runs K = 2, 4, 8, ... from the centre until the
    test holds (every attempt's evaluations are counted).
    """

    K: int | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    name = "fgm+ogm-g"

    @staticmethod
    def gradient_bound_factor(K: int) -> float:
        """c(K) with ‖∇F(x_K)‖ ≤ c(K)·L̃‖x_0 − x*‖: 2/((⌈K/2⌉ + 1)·θ̃_0(⌊K/2⌋)).

        >>> FastGradNorm.gradient_bound_factor(1)
        1.0
        """
        N = K // 2
        theta0 = 1.0 if N == 0 else float(ogm_g_thetas(N)[0])
        return 2.0 / ((math.ceil(K / 2) + 1) * theta0)

    @staticmethod
    def steps_bound(L: float, lam: float) -> int:
        r"""The smallest K with c(K)(L + λ) ≤ λ/3, so that (C.4) holds: K = O(√(L/λ)).

        >>> FastGradNorm.steps_bound(100.0, 1.0)
        55
        """
        K = 1
        while FastGradNorm.gradient_bound_factor(K) * (L + lam) > lam / 3:
            K += 1
        return K

    def _run(self, sub: Subproblem, rows: np.ndarray, K: int):
        k1, N = math.ceil(K / 2), K // 2
        X, G = sub.center[rows], sub.G_center[rows]
        if k1:
            X, G = _fgm_convex_block(sub, X, G, rows, k1)
        if N:
            X, G = _ogm_g_block(sub, X, G, rows, N)
        return X, G

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        # every attempt starts again from the centre (FGM's guarantee is from x_0), so X, G are not carried
        return _solve_in_doubling_blocks(
            sub,
            test,
            self.K,
            self.max_steps,
            first=2,
            who="the solver",
            block=lambda X, G, rows, K: self._run(sub, rows, K),
        )


@dataclass
class SGD(_Iterative):
    r"""Mini-batch SGD on F_i with constant step η for K steps (Corollary 22 / Lemma 23).

    Stochastic gradients come from the oracles (mini-batches of ``batch_size`` samples on finite sums;
    Gaussian noise on quadratics). ``average="weighted"`` returns Lemma 23's
    :math:`\bar x_K=\sum_{k=1}^K q^k x_k/\sum_k q^k`, q = 1/(1 − η(μ_i + λ)); ``"last"`` returns x_K. With
    ``test`` and ``K=None`` the (exact) test is checked after each step — an oracle a client with all its
    data can afford; otherwise K is fixed. Evaluations: K stochastic calls + 1 exact gradient at the
    output (the message ∇f_i(x_{i,r+1})).
    """

    K: int | None = None
    step: Any = None
    batch_size: int | None = None
    average: str = "last"
    max_steps: int = DEFAULT_MAX_STEPS
    name = "sgd"

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        if self.average not in ("last", "weighted"):
            raise ValueError(f"SGD average must be 'last' or 'weighted', got {self.average!r}")
        rng = sub.rng if sub.rng is not None else np.random.default_rng(0)
        eta = _steps_from_L(sub, None if self.step is None else self.step)
        if self.step is None:
            eta = eta / 2  # Lemma 23 needs η ≤ 1/(2L̃)
        s = sub.clients.size
        X = sub.center.copy()
        evals = np.zeros(s, dtype=np.int64)
        limit = self.K if self.K is not None else self.max_steps
        if self.K is None and test is None:
            raise ValueError("give SGD a number of steps K or an accuracy test")
        if self.average == "weighted" and np.any(eta * sub.mu >= 1):
            raise ValueError("Lemma 23's weighted average needs eta*(mu_i + lambda) < 1")
        q = 1.0 / (1.0 - eta * sub.mu) if self.average == "weighted" else np.ones(s)
        Sx, Sw = np.zeros_like(X), np.zeros(s)
        w = np.ones(s)
        active = np.ones(s, bool)
        for _ in range(int(limit)):
            rows = np.flatnonzero(active)
            if rows.size == 0:
                break
            Gs = sub.oracles.stochastic_grads(X[rows], sub.clients[rows], rng, self.batch_size)
            X[rows] = X[rows] - eta[rows, None] * sub.grad_F(X[rows], Gs, rows)
            evals[rows] += 1
            w[rows] = w[rows] * q[rows]
            Sx[rows] += w[rows, None] * X[rows]
            Sw[rows] += w[rows]
            if self.K is None:
                out = X[rows] if self.average == "last" else Sx[rows] / Sw[rows, None]
                Gt = sub.oracles.grads(out, sub.clients[rows])
                active[rows[_stop(sub, test, out, Gt, rows)]] = False
        out = (
            X
            if self.average == "last" or evals.max() == 0
            else np.where(Sw[:, None] > 0, Sx / np.maximum(Sw, 1e-300)[:, None], X)
        )
        G = sub.oracles.grads(out, sub.clients)
        return _finish(sub, out, G, evals + 1, test)


@dataclass
class Exact:
    """The exact minimizer of F_i (closed form on quadratics); zero local gradient evaluations counted."""

    name = "exact"

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        X = sub.oracles.prox(sub.center, sub.lin, sub.lam, sub.clients)
        if X is None:
            raise ValueError(f"exact local solves need a closed form; {type(sub.oracles).__name__} has none")
        G = sub.oracles.grads(X, sub.clients)
        return _finish(sub, X, G, np.zeros(sub.clients.size, dtype=np.int64), test)


SOLVERS = {
    "gd": GD,
    "prox-linear-gd": ProxLinearGD,
    "fgm": FGM,
    "ogm-g": OGMG,
    "fgm+ogm-g": FastGradNorm,
    "sgd": SGD,
    "exact": Exact,
}


# --------------------------------------------------------------------------------------------
# the worst admissible local solver, and exact SGD moments (quadratics)
# --------------------------------------------------------------------------------------------


@dataclass
class Boundary:
    r"""An adversarial local solver on quadratic clients: a point *on the boundary* of the accuracy test.

    F_i(x) = ½(x − x_i*)ᵀH_i(x − x_i*) + const with H_i = A_i + λI, so x = x_i* + t·u passes
    ‖∇F_i(x)‖² ≤ cλ²‖x − c_i‖² exactly for t in an interval [t₋, t₊] ∋ 0; this solver returns
    t = ``frac``·t₊ along the direction u ∝ a·w + b·H_iw + e·z_i (w = x_i* − c_i, z_i a fixed random
    vector per client from ``seed``), ``weights`` = (a, b, e). ``frac`` = 1 is the worst inexactness the
    theorems allow, the instance a probe searches over. Counts zero gradient evaluations.

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> from fedtheory.problems.clients import client_oracles
    >>> orc = client_oracles(make_quadratic(3, 4, mu=1.0, L=9.0, seed=0))
    >>> C = np.zeros((3, 4)); GC = orc.grads(C)
    >>> sub = Subproblem(orc, np.arange(3), C, GC - GC.mean(0), 2.0, G_center=GC)
    >>> res = Boundary(weights=(1.0, 0.5, 0.3)).solve(sub, StabilizedTest())
    >>> bool(np.allclose(res.gradF_sq, 0.25 * 4.0 * res.dist_sq, rtol=1e-8)), bool(res.passed.all())
    (True, True)
    """

    weights: tuple = (0.0, 0.0, 1.0)
    frac: float = 1.0
    seed: int = 0
    name = "boundary"

    def solve(self, sub: Subproblem, test: Any = None) -> LocalResult:
        orc = sub.oracles
        if not hasattr(orc, "hess_vec"):
            raise ValueError("the boundary solver needs quadratic clients (oracles with hess_vec)")
        c = test.c if test is not None and hasattr(test, "c") else 0.25
        thr = test.threshold(sub.lam, sub.r) if test is not None else c * sub.lam**2
        Xs = orc.prox(sub.center, sub.lin, sub.lam, sub.clients)
        W = Xs - sub.center
        H_W = orc.hess_vec(W, sub.clients) + sub.lam * W  # H_i w
        Z = np.random.default_rng(self.seed).normal(size=(orc.n, orc.d))[sub.clients]
        a, b, e = (float(t) for t in self.weights)
        U = a * W + b * H_W + e * Z
        norms = np.linalg.norm(U, axis=1)
        U = np.where(
            norms[:, None] > 0, U / np.where(norms > 0, norms, 1.0)[:, None], Z / np.linalg.norm(Z, axis=1)[:, None]
        )
        HU = orc.hess_vec(U, sub.clients) + sub.lam * U
        qa = _sq(HU) - thr
        wu = np.einsum("ij,ij->i", W, U)
        qb = thr * wu
        qc = thr * _sq(W)
        t_plus = (qb + np.sqrt(np.maximum(qb * qb + qa * qc, 0.0))) / qa
        # 1e-9 inside the boundary; where rounding of the computed ∇F_i still puts the answer outside the test
        # (near convergence), step back towards x_i* until the computed test holds
        t = self.frac * (1 - 1e-9) * t_plus
        X = Xs + t[:, None] * U
        G = orc.grads(X, sub.clients)
        for _ in range(200):
            if test is None:
                break
            bad = ~_stop(sub, test, X, G, np.arange(sub.clients.size))
            if not bad.any():
                break
            t[bad] *= 0.8
            X[bad] = Xs[bad] + t[bad, None] * U[bad]
            G[bad] = orc.grads(X[bad], sub.clients[bad])
        return _finish(sub, X, G, np.zeros(sub.clients.size, dtype=np.int64), test)


def sgd_output_moments(
    H: np.ndarray,
    b: np.ndarray,
    x0: np.ndarray,
    eta: float,
    K: int,
    noise_var: float,
    average: str = "last",
    mu: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact mean and covariance of K SGD steps on F(x) = ½xᵀHx − bᵀx with additive Gaussian noise.

    x_{k+1} = x_k − η(Hx_k − b + ξ_k), ξ_k ~ N(0, (noise_var/d)·I) independent (E‖ξ‖² = noise_var). The
    iterates are Gaussian; ``average="last"`` gives x_K, ``"weighted"`` Lemma 23's
    x̄_K = Σ_{k=1}^K q^k x_k/Σ q^k with q = 1/(1 − ημ) (μ = λ_min(H) unless given). In H's eigenbasis the
    coordinates are independent AR(1) processes e_k = m e_{k−1} − ηξ_k (m = 1 − ηh), so
    E ē = e_0 Σ_k w_k m^k and Var ē = η²σ_c² Σ_j c_j², c_j = Σ_{k>j} w_k m^{k−1−j} (a reversed first-order
    recursion, run by scipy's lfilter): O(K·d) work, no K × d² loop. Returns (mean (d,), covariance (d, d)).

    >>> import numpy as np
    >>> m, P = sgd_output_moments(np.eye(2), np.ones(2), np.zeros(2), 0.5, 60, 0.0)
    >>> bool(np.allclose(m, 1.0)), bool(np.allclose(P, 0.0))
    (True, True)
    >>> m, P = sgd_output_moments(np.array([[2.0]]), np.zeros(1), np.zeros(1), 0.25, 1, 4.0)
    >>> float(P[0, 0])                                    # one step: η²·σ²
    0.25
    """
    from scipy.signal import lfilter

    H = 0.5 * (np.asarray(H, dtype=np.float64) + np.asarray(H, dtype=np.float64).T)
    b = np.asarray(b, dtype=np.float64)
    d = H.shape[0]
    K = int(K)
    h, V = np.linalg.eigh(H)
    x_star = V @ ((V.T @ b) / h)
    e0 = V.T @ (np.asarray(x0, dtype=np.float64) - x_star)
    m = 1.0 - eta * h
    s2 = eta * eta * noise_var / d
    if average == "last":
        mean = m**K * e0
        var = s2 * np.array(
            [
                K if abs(mj) == 1 else -math.expm1(2 * K * math.log(abs(mj))) / (1 - mj * mj) if mj != 0 else 1.0
                for mj in m
            ]
        )
    elif average == "weighted":
        mu = float(h[0]) if mu is None else float(mu)
        logq = -math.log1p(-eta * mu)
        w = np.exp((np.arange(1, K + 1) - K) * logq)  # q^k / q^K, normalized below (no overflow)
        w = w / w.sum()
        mean = np.empty(d)
        var = np.empty(d)
        for j in range(d):
            powers = m[j] ** np.arange(1, K + 1)
            mean[j] = e0[j] * float(w @ powers)
            # c_j for j = K−1..0: c = w_{j+1} + m c_{j+1}  (reverse the sequence and filter)
            c = lfilter([1.0], [1.0, -m[j]], w[::-1])
            var[j] = s2 * float(c @ c)
    else:
        raise ValueError(f"average must be 'last' or 'weighted', got {average!r}")
    mean_x = x_star + V @ mean
    cov = (V * var) @ V.T
    return mean_x, 0.5 * (cov + cov.T)


SOLVERS["boundary"] = Boundary  # defined after the table above
