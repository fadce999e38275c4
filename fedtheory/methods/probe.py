r"""Lower bounds for any linear :class:`~fedtheory.methods.ir.Method`: worst quadratic instances, run for real.

The federated PEP (:mod:`fedtheory.methods.pep`) bounds a method's worst case from above over the class

    n clients f_i(x) = ½(x − c_i)ᵀA_i(x − c_i),  μI ⪯ A_i ⪯ LI,  weights p,
    heterogeneity ‖c_i − o‖ ≤ C for some o  (or ζ: Σ_i p_i‖∇f_i(x*)‖² ≤ ζ²);

this module bounds it from below: :func:`lower_bound` searches concrete instances of the class and returns the
best value it finds **as computed by** :func:`fedtheory.methods.run` on that instance, with the instance as JSON
that :func:`replay` recomputes. A quadratic instance is also one of the smooth strongly convex class, so the
same number bounds that class from below (``function_class`` only goes into the notes).

Instances are parameterized so the hypotheses hold by construction (the design's probe rule): client i's
Hessian is A_i = U_i diag(λ_i) U_iᵀ with λ_i = μ + (L − μ)(1 + sin z)/2 ∈ [μ, L] (the ends exact at z = ±π/2)
and U_i a rotation (a Cayley transform of a skew matrix); centres are chosen inside the ball ‖c_i‖ ≤ C
(o = 0) or scaled to the ζ of the instance. Search: structured starts (spectra at {μ, L}, identical clients,
a grid of interior eigenvalues), random draws, then multi-start L-BFGS-B (:func:`fedtheory.certify.probe.probe`).

For a linear method (no nonlinear server rule) one round on a quadratic federation is affine in the stacked
state s = (server variables, client variables): R(s) = M s + b(c), with b linear in the centres. Each measure
uses that structure to maximize exactly over what it can, and over instances numerically:

- ``"rate"``: sup_{s ≠ s'} (‖R(s) − R(s')‖_W / ‖s − s'‖_W)  with ‖·‖_W² = ``Method.state_norm_sq`` (server
  variables weight 1, client variables their aggregation weights) — on one instance this is the operator norm
  of W^½ M W^-½, exact; the reported instance holds the top singular pair as the two states s, s'.
- ``"floor"``: sup ‖out − x*‖ over the fixed points of the round reachable from the method's initialization
  (when I − M is singular the round conserves some quantities ℓᵀs, e.g. SCAFFOLD's c − Σ p_i c_i, and only the
  fixed points with the conserved values of an initial state count; if ``out`` is not determined on that set
  the floor is reported as inf). The fixed point is linear in the centres, out − x* = T c, and max ‖Tc‖ over the
  balls is found by alternating exact trust-region steps (C model) or is a generalized singular value (ζ).
- ``"error"``: sup ‖out_T − x*‖ after T = ``rounds`` rounds from the method's initialization at x_0 = x* + D u,
  ‖u‖ = 1: out_T − x* = D·G u + h, maximized over the sphere exactly (trust-region subproblem, secular
  equation, hard case included). With the C model h = E c is linear in the centres and the maximum over u and
  the balls ‖c_i‖ ≤ C together is found per instance by block ascent (each block an exact trust-region step);
  with ζ the centres' directions are searched with the Hessians.
- ``"function-value"``: F(out_T) − F(x*) = ½‖Ā^½(D·G u + h)‖² with Ā = Σ p_i A_i, likewise.

The search evaluates many basis runs at once on a *direct sum* of copies of the instance (block-diagonal
Hessians, one copy per basis state), which every linear method treats block by block; the value finally reported
is recomputed on the instance itself, one ``run`` per basis state, and then by running the method from the
worst state or start it determines. Same seed → same instance and value.

>>> import math
>>> from fedtheory.methods import get
>>> v, inst = lower_bound(get("fedsplit", s=1 / math.sqrt(10)), measure="rate", mu=1.0, L=10.0, p=[0.5, 0.5])
>>> round(v, 9), round((math.sqrt(10) - 1) / (math.sqrt(10) + 1), 9)
(0.519493853, 0.519493853)
>>> replay(inst) == v
True
>>> v, inst = lower_bound("fedavg", measure="floor", mu=1.0, L=10.0, p=[0.5, 0.5], K=5, gamma=0.05, starts=2)
>>> round(v, 5), inst["details"]["fixed_point_residual"] < 1e-12     # certify_local_update's upper: 0.73875
(0.73874, True)
"""

from __future__ import annotations

import math
import time
from typing import Any, Mapping

import numpy as np
import scipy.optimize

__all__ = ["lower_bound", "replay", "MEASURES", "CLASSES"]

MEASURES = ("rate", "floor", "error", "function-value")
CLASSES = ("quadratic", "smooth-strongly-convex")
#: a fixed-point system whose relative residual exceeds this is reported as not solved
RESIDUAL_TOL = 1e-9
#: the largest direct sum one batched run is given, in entries of its dense (n, k·d, k·d) Hessian array (k jobs of
#: dimension d, n clients: 288 KiB); more jobs are split into chunks. The run allocates that array, its eigenvectors
#: and the simulator's scaled copy afresh, and larger ones page-fault on every run (SCAFFOLD's floor cross-check,
#: n = d = 4, 19 candidates' round maps on one CPU: 17.7k page faults and 0.11 s at k·d = 256, none and 0.03 s at
#: k·d = 96); one 5780-dimensional run of an extracted worst case (d = 34, 170 jobs) took 28 s
BATCH_ENTRIES = 4 * 96**2
#: local gradient evaluations per round up to which the search runs the literal steps (see :func:`_path`)
SEARCH_STEP_WORK = 32
#: block-ascent sweeps of the floor's centre maximization inside the search (the reported instance gets 30)
SEARCH_SWEEPS = 1
#: block-ascent sweeps when the cross-check (``search=False``) scores its candidates' floors: none, the centres
#: from the top singular vector (the reported candidate then gets 30)
CROSS_CHECK_SWEEPS = 0
#: L-BFGS-B iterations per start: the structured starts already sit at or near the worst cases found so far,
#: and a search evaluation costs a few ms, so the local phase polishes rather than explores
SEARCH_MAXITER = 8
#: and at most this many finite-difference gradients' worth of evaluations per start (a deterministic budget:
#: a time limit would make the result depend on the machine)
SEARCH_GRADIENTS = 3


# --------------------------------------------------------------------------------------------
# the method and its state as a vector
# --------------------------------------------------------------------------------------------


def _resolve_method(method: Any, hyper: Mapping[str, Any]):
    from fedtheory.methods import get

    return get(method, **dict(hyper))


def _method_spec(m) -> dict:
    """The JSON description that :func:`_rebuild` turns back into the method (name + hyperparameters)."""
    from fedtheory.certify.params import jsonable

    return {"name": m.name, "hyper": jsonable(dict(m.hyper))}


def _rebuild(spec: Mapping[str, Any]):
    """The method a spec describes. The LocalUpdate presets store Θ as JSON and hyperparameters their factory
    does not take (α, β for FedAvg), so they are rebuilt through ``local-update`` under their own name."""
    from fedtheory.algorithms.theta import Theta
    from fedtheory.methods import get

    hyper = {k: v for k, v in dict(spec["hyper"]).items() if v is not None}
    if isinstance(hyper.get("theta"), dict):
        hyper["theta"] = Theta.from_json(hyper["theta"])
        from fedtheory.methods.library import local_update

        return local_update(name=spec["name"], **hyper)
    return get(spec["name"], **hyper)


class _Layout:
    """The stacked state vector s = (server vars, each d; client vars, each n·d row by row) and its W weights."""

    def __init__(self, m, n: int, d: int) -> None:
        self.m, self.n, self.d = m, n, d
        self.size = d * len(m.server) + n * d * len(m.client)

    def unpack(self, s: np.ndarray) -> dict:
        out, k = {}, 0
        for v in self.m.server:
            out[v] = np.array(s[k : k + self.d])
            k += self.d
        for v in self.m.client:
            out[v] = np.array(s[k : k + self.n * self.d]).reshape(self.n, self.d)
            k += self.n * self.d
        return out

    def pack(self, state: Mapping[str, Any]) -> np.ndarray:
        parts = [np.asarray(state[v], dtype=np.float64).ravel() for v in self.m.server + self.m.client]
        return np.concatenate(parts) if parts else np.zeros(0)

    def weights(self, p: np.ndarray) -> np.ndarray:
        """W: the diagonal of the state norm (``Method.state_norm_sq`` is sᵀ diag(W) s)."""
        w = self.m.aggregation_weights(p)
        parts = [np.ones(self.d)] * len(self.m.server) + [np.repeat(w, self.d)] * len(self.m.client)
        return np.concatenate(parts) if parts else np.zeros(0)

    def norm_sq(self, s: np.ndarray, p: np.ndarray) -> float:
        st = self.unpack(s)
        return self.m.state_norm_sq({v: st[v] for v in self.m.server}, {v: st[v] for v in self.m.client}, p)

    def output(self, p: np.ndarray) -> np.ndarray:
        """P with out = P s: the server output variable, or the aggregation-weighted mean of a client one."""
        P = np.zeros((self.d, self.size))
        k = 0
        for v in self.m.server:
            if v == self.m.output:
                P[:, k : k + self.d] = np.eye(self.d)
            k += self.d
        w = self.m.aggregation_weights(p)
        for v in self.m.client:
            if v == self.m.output:
                for i in range(self.n):
                    P[:, k + i * self.d : k + (i + 1) * self.d] = w[i] * np.eye(self.d)
            k += self.n * self.d
        if self.m.output not in self.m.server + self.m.client:
            raise ValueError(
                f"method {self.m.name!r}: output {self.m.output!r} is not a state variable, so a fixed "
                "point of the state does not determine it"
            )
        return P


# --------------------------------------------------------------------------------------------
# running jobs through fedtheory.methods.run (one by one, or all at once on a direct sum)
# --------------------------------------------------------------------------------------------


def _fed(q, c):
    from fedtheory.problems.quadratic import QuadraticFederation

    return QuadraticFederation(A=q.A, c=c, p=q.p, eigvals=q.eigvals, eigvecs=q.eigvecs)


def _fast_fed(A, c, p, lam, V):
    """A QuadraticFederation assembled without re-validating its decomposition: only for the search's own
    instances, which are built as U diag(λ) Uᵀ (consistent by construction); the validation costs more than
    the run itself there. Every reported value runs on a validated federation (:func:`_fed`, ``from_json``)."""
    from fedtheory.problems.quadratic import QuadraticFederation

    q = object.__new__(QuadraticFederation)
    q.A, q.c, q.p, q.eigvals, q.eigvecs = A, np.asarray(c, dtype=np.float64), p, lam, V
    return q


def _path(m, batched: bool = False) -> str:
    """Reported values take the spectral path (exact closed forms; every method accepted here is linear). The
    search's batched runs take the literal steps when the local work is small: the same arithmetic up to
    rounding, and ~5x less overhead per call at these sizes (measured: 0.7 ms vs 3.6 ms for FedSplit, n=d=3)."""
    if batched and m.local_work() <= SEARCH_STEP_WORK:
        return "step"
    return "spectral"


def _run_jobs(m, q, jobs: list, rounds: int, batched: bool, instances: list | None = None) -> list:
    """Each job (state dict or None, x0 (d,), c (n, d)): (output after ``rounds``, final state as a dict).

    ``batched``: one run on the direct sum of len(jobs) copies of the instance (block-diagonal A_i, job j in
    block j): a linear method acts block by block, so each block is that job's run (used inside the search;
    the values reported come from ``batched=False``, one run per job on the instance itself). ``instances``
    (batched only): job j's own instance in block j instead of ``q`` (all of one n and d), so that one run
    evaluates many instances."""
    from fedtheory.methods import run

    n, d = q.n, q.d
    if not batched:
        out = []
        for state, x0, c in jobs:
            h = run(m, _fed(q, c), np.asarray(x0, dtype=np.float64), rounds, path=_path(m), state=state)
            out.append((np.asarray(h.x[-1]), {k: np.asarray(v) for k, v in h.state.items()}))
        return out
    most = math.isqrt(BATCH_ENTRIES // n)  # the direct sum's largest dimension k·d
    if len(jobs) > 1 and len(jobs) * d > most:
        # the direct sum's dense arrays cost n·(k·d)² per operation: chunks keep each run small
        step = max(1, most // d)
        return [
            r
            for i in range(0, len(jobs), step)
            for r in _run_jobs(
                m, q, jobs[i : i + step], rounds, True, None if instances is None else instances[i : i + step]
            )
        ]
    k = len(jobs)
    per_job = [q] * k if instances is None else list(instances)
    A = np.zeros((n, k * d, k * d))
    for j, qj in enumerate(per_job):
        A[:, j * d : (j + 1) * d, j * d : (j + 1) * d] = qj.A
    lam = np.concatenate([qj.eigvals for qj in per_job], axis=1)
    order = np.argsort(lam, axis=1, kind="stable")
    lam = np.take_along_axis(lam, order, axis=1)
    # the direct sum's eigenvectors in that order: column c is job order[c] // d's eigenvector order[c] % d, zero
    # outside that job's block, so it is placed directly (gathering the dense (k·d)² matrix cost more than the run)
    job, col = np.divmod(order, d)
    clients = np.arange(n)[:, None]
    V = np.zeros((n, k * d, k * d))
    E = np.stack([qj.eigvecs for qj in per_job])  # (job, client, row, column)
    V[clients[..., None], job[..., None] * d + np.arange(d), np.arange(k * d)[None, :, None]] = E[job, clients, :, col]
    c = np.concatenate([np.asarray(cj, dtype=np.float64) for _, _, cj in jobs], axis=1)
    big = _fast_fed(A, c, q.p, lam, V)
    x0 = np.concatenate([np.asarray(x, dtype=np.float64) for _, x, _ in jobs])
    state = None
    if jobs[0][0] is not None:
        state = {}
        for v in m.server:
            state[v] = np.concatenate([st[v] for st, _, _ in jobs])
        for v in m.client:
            state[v] = np.concatenate([st[v] for st, _, _ in jobs], axis=1)
    h = run(m, big, x0, rounds, path=_path(m, True), state=state)
    X = np.asarray(h.x[-1])
    res = []
    for j in range(k):
        blk = slice(j * d, (j + 1) * d)
        st = {v: np.asarray(h.state[v])[blk] for v in m.server}
        st.update({v: np.asarray(h.state[v])[:, blk] for v in m.client})
        res.append((X[blk], st))
    return res


def _round_maps(m, lay: _Layout, q, batched: bool, centres: bool | np.ndarray = False) -> tuple:
    """M, the linear part of one round (column k: R(e_k) on the instance with centres 0, where R(0) = 0), and with
    ``centres`` also B, R(0) = B vec(c) (column (i, j): one round from the zero state with c = e_j at client i) —
    or, ``centres`` an (n, d) array c, the one column b = R(0) on the centres c, so that R(s) = M s + b on q's
    Hessians with those centres (the affine round of :func:`fedtheory.methods.pep`'s floor extraction); all from
    one job list, so the search makes one run per instance."""
    jobs = _round_jobs(lay, q.n, q.d, centres)
    return _maps_of(lay, [lay.pack(st) for _, st in _run_jobs(m, q, jobs, 1, batched)] if jobs else [])


def _round_jobs(lay: _Layout, n: int, d: int, centres: bool | np.ndarray) -> list:
    """The jobs of :func:`_round_maps`: one round from each basis state (centres 0), then with ``centres`` from the
    zero state with each unit centre, or with the centres given (an (n, d) array: one job)."""
    zc, zx = np.zeros((n, d)), np.zeros(d)
    E = np.eye(lay.size)
    jobs = [(lay.unpack(E[k]), zx, zc) for k in range(lay.size)]
    if isinstance(centres, np.ndarray):
        jobs.append((lay.unpack(np.zeros(lay.size)), zx, np.asarray(centres, dtype=np.float64).reshape(n, d)))
    elif centres:
        for i in range(n):
            for j in range(d):
                c = np.zeros((n, d))
                c[i, j] = 1.0
                jobs.append((lay.unpack(np.zeros(lay.size)), zx, c))
    return jobs


def _maps_of(lay: _Layout, cols: list) -> tuple:
    """M from the basis states' columns, and B from the centre jobs' columns after them (None without any)."""
    M = np.column_stack(cols[: lay.size]) if lay.size else np.zeros((0, 0))
    B = np.column_stack(cols[lay.size :]) if len(cols) > lay.size else None
    return M, B


def _round_maps_many(m, lay: _Layout, qs: list, centres: bool = False) -> list:
    """:func:`_round_maps` (batched) of many instances of one n and d from one job list: every (instance, job)
    pair is a block of one direct sum, so a list of candidates costs one run (chunked at BATCH_ENTRIES)."""
    if not qs:
        return []
    jobs = _round_jobs(lay, qs[0].n, qs[0].d, centres)
    if not jobs:
        return [_maps_of(lay, []) for _ in qs]
    res = _run_jobs(m, qs[0], jobs * len(qs), 1, True, instances=[q for q in qs for _ in jobs])
    cols = [lay.pack(st) for _, st in res]
    k = len(jobs)
    return [_maps_of(lay, cols[i * k : (i + 1) * k]) for i in range(len(qs))]


def _init_matrix(m, lay: _Layout, q) -> np.ndarray:
    """S0 with s_0 = S0 x_0: the method's initial state (every init is x_0 or 0, so it is linear in x_0)."""
    d = q.d
    # zero rounds copy x_0 or write 0: exact on the direct sum too, so one run gives every column
    res = _run_jobs(m, q, [(None, np.eye(d)[j], q.c) for j in range(d)], 0, True)
    return np.column_stack([lay.pack(st) for _, st in res])


def _minimizer_matrix(q) -> np.ndarray:
    """X with x* = X vec(c): x* = Ā⁻¹ Σ p_i A_i c_i."""
    Abar = np.einsum("i,ijk->jk", q.p, q.A)
    return np.linalg.solve(Abar, np.concatenate([q.p[i] * q.A[i] for i in range(q.n)], axis=1))


# --------------------------------------------------------------------------------------------
# exact maximization of ‖B u + e‖ over the unit sphere (the trust-region subproblem, maximized)
# --------------------------------------------------------------------------------------------


def max_on_sphere(B: Any, e: Any) -> tuple[float, np.ndarray]:
    r"""max_{‖u‖ = 1} ‖B u + e‖ and a maximizer: the secular equation (λI − BᵀB)u = Bᵀe, λ ≥ λ_max(BᵀB),
    with the hard case (Bᵀe orthogonal to the top eigenspace) completed along it.

    >>> v, u = max_on_sphere(np.diag([2.0, 1.0]), np.array([0.0, 3.0]))
    >>> round(v, 12), np.round(u, 12).tolist()             # ‖(2u₁, u₂ + 3)‖ is largest at u = (0, 1)
    (4.0, [0.0, 1.0])
    >>> round(max_on_sphere(np.eye(2), np.zeros(2))[0], 12)  # hard case: any unit u
    1.0
    """
    B = np.atleast_2d(np.asarray(B, dtype=np.float64))
    e = np.asarray(e, dtype=np.float64).ravel()
    H, g = B.T @ B, B.T @ e
    sig, Q = np.linalg.eigh(H)
    gh = Q.T @ g
    smax = float(sig[-1])
    scale = max(smax, float(np.linalg.norm(g)), 1e-300)
    top = sig >= smax - 1e-12 * scale
    gnorm = float(np.linalg.norm(g))

    def u_of(lam: float) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):  # λ at λ_max: ‖u‖ = inf, ψ = −1, as it should
            return gh / (lam - sig)

    if gnorm <= 1e-300:
        u = Q[:, -1]
    elif float(np.linalg.norm(gh[top])) > 1e-12 * gnorm:
        # ψ(λ) = 1/‖u(λ)‖ − 1 increases from −1 (λ → λ_max⁺) to ≥ 0 at λ_max + ‖g‖
        def psi(lam: float) -> float:
            nu = float(np.linalg.norm(u_of(lam)))
            return 1.0 / nu - 1.0 if math.isfinite(nu) else -1.0

        lo, hi = smax, smax + gnorm
        lo_eps = lo + 1e-300 + 1e-16 * scale
        if psi(lo_eps) >= 0:
            lam = lo_eps
        else:
            lam = scipy.optimize.brentq(psi, lo_eps, hi + 1e-15 * scale, xtol=1e-300, rtol=1e-15, maxiter=500)
        u = Q @ u_of(lam)
    else:
        rest = np.divide(gh, smax - sig, out=np.zeros_like(gh), where=~top)
        r = float(np.linalg.norm(rest))
        if r <= 1.0:
            t = math.sqrt(max(1.0 - r * r, 0.0))
            u = Q @ rest + t * Q[:, -1]
        else:  # the secular root lies above λ_max after all

            def u_rest(lam: float) -> np.ndarray:  # the top components are 0: never divide by λ − λ_max
                return np.divide(gh, lam - sig, out=np.zeros_like(gh), where=~top)

            def psi2(lam: float) -> float:
                return 1.0 / float(np.linalg.norm(u_rest(lam))) - 1.0

            lam = scipy.optimize.brentq(psi2, smax, smax + gnorm, xtol=1e-300, rtol=1e-15, maxiter=500)
            u = Q @ u_rest(lam)
    if not np.all(np.isfinite(u)) or not float(np.linalg.norm(u)) > 0:
        u = Q[:, -1]  # the secular solve underflowed (B ≈ 0): any unit vector is exact
    u = u / float(np.linalg.norm(u))
    # guard against rounding in the secular solve: the top eigenvector (either sign) is always a candidate
    best = (float(np.linalg.norm(B @ u + e)), u)
    for cand in (Q[:, -1], -Q[:, -1]):
        v = float(np.linalg.norm(B @ cand + e))
        if v > best[0]:
            best = (v, cand)
    return best


def _max_over_balls(T: np.ndarray, n: int, d: int, sweeps: int = 30) -> tuple[float, np.ndarray]:
    """max ‖Σ_i T_i c_i‖ over ‖c_i‖ ≤ 1 (a convex function: the maximum sits on the spheres). Block-coordinate
    ascent, each block an exact :func:`max_on_sphere`, from the top singular vector split into blocks."""
    if not np.any(T):
        return 0.0, np.zeros(n * d)
    _, _, Vt = np.linalg.svd(T)
    c = Vt[0].reshape(n, d).copy()
    for i in range(n):
        nrm = np.linalg.norm(c[i])
        c[i] = c[i] / nrm if nrm > 1e-12 else np.eye(d)[0]
    val = float(np.linalg.norm(T @ c.ravel()))
    for _ in range(sweeps):
        old = val
        for i in range(n):
            Ti = T[:, i * d : (i + 1) * d]
            r = T @ c.ravel() - Ti @ c[i]
            _, c[i] = max_on_sphere(Ti, r)
        val = float(np.linalg.norm(T @ c.ravel()))
        if val <= old * (1 + 1e-15):
            break
    return val, c.ravel()


# --------------------------------------------------------------------------------------------
# instances
# --------------------------------------------------------------------------------------------


class _Space:
    """z → (A_i = U_i diag(λ_i) U_iᵀ, unit centre directions): per client d spectrum reals (sine map onto
    [μ, L], ends exact at ±π/2), d(d−1)/2 rotation reals; then ``n_dirs`` unit vectors in ℝᵈ (centres, x_0)."""

    def __init__(self, n: int, d: int, mu: float, L: float, p: np.ndarray, n_dirs: int = 0) -> None:
        self.n, self.d, self.mu, self.L, self.p, self.n_dirs = n, d, mu, L, p, n_dirs
        self.iu = np.triu_indices(d, 1)
        self.per = d + d * (d - 1) // 2
        self.size = n * self.per + n_dirs * d

    def rotation(self, z: np.ndarray) -> np.ndarray:
        """The Cayley transform (I − S)⁻¹(I + S) of the skew S with upper triangle z: a rotation for every z
        (I − S is invertible for skew S), the identity at z = 0, and 50x cheaper than expm (a search evaluates
        thousands of instances)."""
        S = np.zeros((self.d, self.d))
        S[self.iu] = z
        S = S - S.T
        I = np.eye(self.d)
        return np.linalg.solve(I - S, I + S)

    def spectrum_z(self, lam: np.ndarray) -> np.ndarray:
        t = np.clip(2 * (np.asarray(lam) - self.mu) / max(self.L - self.mu, 1e-300) - 1, -1, 1)
        return np.arcsin(t)

    def decode(self, z: np.ndarray, fast: bool = True):
        from fedtheory.certify.certificate import quadratic_federation as _build

        n, d = self.n, self.d
        lam: Any = []
        U: Any = []
        for i in range(n):
            zi = z[i * self.per : (i + 1) * self.per]
            li = self.mu + (self.L - self.mu) * (1 + np.sin(zi[:d])) / 2
            Ui = self.rotation(zi[d:])
            order = np.argsort(li, kind="stable")
            lam.append(li[order])
            U.append(Ui[:, order])
        lam, U = np.array(lam), np.array(U)
        A = np.einsum("nij,nj,nkj->nik", U, lam, U)
        dirs = []
        k = n * self.per
        for _ in range(self.n_dirs):
            u = z[k : k + d]
            dirs.append(u / max(float(np.linalg.norm(u)), 1e-300))
            k += d
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
        q = _fast_fed(A, np.zeros((n, d)), self.p, lam, U) if fast else _build(lam, U, A, np.zeros((n, d)), self.p)
        return q, np.array(dirs).reshape(self.n_dirs, d)

    def structured(self, rng: np.random.Generator, count: int, grid: int = 5) -> list:
        """Starts where worst cases of these methods sit: identical clients (one shared U), spectra at the ends
        {μ, L} and at interior grid values, plus extremes with random rotations per client."""
        n, d = self.n, self.d
        out = []
        vals = np.linspace(self.mu, self.L, grid)
        for g in vals:
            pats = [np.r_[[self.mu] * (d - 1), [g]], np.r_[[g], [self.L] * (d - 1)]]
            if d >= 3:
                pats.append(np.r_[[self.mu], [g] * (d - 2), [self.L]])
            for lam in pats:
                z = np.zeros(self.size)
                for i in range(n):
                    z[i * self.per : i * self.per + d] = self.spectrum_z(np.sort(lam))
                z[n * self.per :] = rng.normal(size=self.n_dirs * d)
                out.append(z)
        for _ in range(count):
            z = rng.normal(size=self.size)
            for i in range(n):
                ext = np.full(d, np.pi / 2)
                ext[rng.integers(d)] = -np.pi / 2
                if rng.random() < 0.5:
                    ext = -ext
                z[i * self.per : i * self.per + d] = ext
            out.append(z)
        return out


# --------------------------------------------------------------------------------------------
# per-instance values (search: batched; report: one run per job)
# --------------------------------------------------------------------------------------------


def _rate_of(m, lay, q, batched, maps=None):
    M, _ = _round_maps(m, lay, q, batched) if maps is None else maps
    w = np.sqrt(lay.weights(q.p))
    Mw = (w[:, None] * M) / w[None, :]
    U, s, Vt = np.linalg.svd(Mw)
    return float(s[0]), Vt[0] / w, M


def _fixed_point_maps(m, lay, q, S0, batched, maps=None):
    """F (state per unit centre, s* = F vec(c)) over the fixed points reachable from an initial state, and how
    well the system was solved. Returns F, residual, conserved count, and whether out is determined.

    ``maps``: the round's (M, B) on q's Hessians if already computed (they do not depend on q's centres)."""
    M, B = _round_maps(m, lay, q, batched, centres=True) if maps is None else maps
    S = lay.size
    I_M = np.eye(S) - M
    U, sv, Vt = np.linalg.svd(I_M)
    tol = 1e-10 * max(1.0, float(sv[0]))
    P = lay.output(q.p)
    if sv[-1] > tol:  # a unique fixed point per centre: solve directly
        F = np.linalg.solve(I_M, B)
        resid = float(np.abs(I_M @ F - B).max()) / max(1.0, float(np.abs(B).max()))
        return F, resid, 0, 0.0, P
    Lnull = U[:, sv <= tol]  # left null space: ℓᵀ s is conserved by the round (if ℓᵀ b = 0)
    d = q.d
    Kmat = np.block([[I_M, np.zeros((S, d))], [Lnull.T, -Lnull.T @ S0]])
    rhs = np.vstack([B, np.zeros((Lnull.shape[1], B.shape[1]))])
    sol, *_ = np.linalg.lstsq(Kmat, rhs, rcond=None)
    resid = float(np.abs(Kmat @ sol - rhs).max()) / max(1.0, float(np.abs(rhs).max()))
    _, ks, kVt = np.linalg.svd(Kmat)
    ktol = 1e-10 * max(1.0, float(ks[0]))
    rank = int(np.sum(ks > ktol))
    N = kVt[rank:].T[:S]  # directions of the fixed-point set (state part)
    free = float(np.abs(P @ N).max()) if N.size else 0.0
    return sol[:S], resid, Lnull.shape[1], free, P


def _floor_of(m, lay, q, S0, het, batched, sweeps=30, maps=None):
    F, resid, n_cons, free, P = _fixed_point_maps(m, lay, q, S0, batched, maps)
    n, d = q.n, q.d
    T = P @ F - _minimizer_matrix(q)
    if free > 1e-8:
        return math.inf, None, {"out_not_determined": free, "conserved": n_cons, "residual": resid}
    if het == "C":
        val, c = _max_over_balls(T, n, d, sweeps)
        return val, c.reshape(n, d), {"conserved": n_cons, "residual": resid}
    # ζ model: ζ(c)² = Σ p_i‖A_i(x*(c) − c_i)‖² = ‖Z vec(c)‖²; the ratio's sup is a generalized singular value
    X = _minimizer_matrix(q)
    Z = np.vstack([math.sqrt(q.p[i]) * q.A[i] @ (X - np.eye(n * d)[i * d : (i + 1) * d]) for i in range(n)])
    Uz, sz, Vzt = np.linalg.svd(Z)
    r = int(np.sum(sz > 1e-12 * sz[0]))
    Nz = Vzt[r:].T
    if Nz.size and float(np.abs(T @ Nz).max()) > 1e-8:
        return math.inf, None, {"out_not_determined_at_zeta_0": float(np.abs(T @ Nz).max())}
    Tr = T @ Vzt[:r].T / sz[:r][None, :]
    _, ts, tVt = np.linalg.svd(Tr)
    c = Vzt[:r].T @ (tVt[0] / sz[:r])
    return float(ts[0]), c.reshape(n, d), {"conserved": n_cons, "residual": resid}


def _error_parts(m, q, x_star, rounds, batched):
    """out_T − x* = G (x_0 − x*) + h on the instance (centres as given): d + 1 runs from the method's init."""
    d = q.d
    jobs = [(None, x_star, q.c)] + [(None, x_star + np.eye(d)[j], q.c) for j in range(d)]
    res = _run_jobs(m, q, jobs, rounds, batched)
    base = res[0][0]
    G = np.column_stack([res[j + 1][0] - base for j in range(d)])
    return G, base - x_star


def _error_linear(m, q, rounds, batched) -> tuple[np.ndarray, np.ndarray]:
    """out_T = G x_0 + K vec(c) from the method's init (both linear: every init is x_0 or 0, every primitive is
    linear in the state and the centres), so out_T − x* = D·G u + (G X + K − X) vec(c) at x_0 = x* + D u."""
    n, d = q.n, q.d
    jobs = [(None, np.eye(d)[j], np.zeros((n, d))) for j in range(d)]
    for i in range(n):
        for j in range(d):
            c = np.zeros((n, d))
            c[i, j] = 1.0
            jobs.append((None, np.zeros(d), c))
    outs = [o for o, _ in _run_jobs(m, q, jobs, rounds, batched)]
    G = np.column_stack(outs[:d])
    K = np.column_stack(outs[d:])
    X = _minimizer_matrix(q)
    return G, G @ X + K - X


def _sqrt_psd(A):
    w, V = np.linalg.eigh(A)
    return (V * np.sqrt(np.clip(w, 0, None))) @ V.T


def _scale_centres(q, c_dir, het, scale, fast=False):
    """The instance with centres c_dir scaled so its heterogeneity (max‖c_i‖, or ζ) is exactly ``scale``."""
    from fedtheory.certify.certificate import heterogeneity_scale as _het_scale

    make = (lambda c: _fast_fed(q.A, c, q.p, q.eigvals, q.eigvecs)) if fast else (lambda c: _fed(q, c))
    q1 = make(c_dir)
    h = _het_scale(q1, het)
    if not h > 0:
        return q1, 0.0
    return make(c_dir * (scale / h)), h


# --------------------------------------------------------------------------------------------
# the API
# --------------------------------------------------------------------------------------------


def _check(measure, mu, L, p, C, zeta, rounds, D, dim, starts, function_class):
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    if function_class not in CLASSES:
        raise ValueError(f"function_class must be one of {CLASSES}, got {function_class!r}")
    for name, v in (("mu", mu), ("L", L)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if not 0 < mu <= L:
        raise ValueError(f"hypothesis 0 < mu <= L violated: mu={mu!r}, L={L!r}")
    pp = np.asarray(p, dtype=np.float64).ravel() if p is not None else None
    if pp is None or pp.size < 2 or np.any(~np.isfinite(pp)) or np.any(pp <= 0) or abs(pp.sum() - 1) > 1e-9:
        raise ValueError(f"hypothesis p = n >= 2 positive weights summing to 1 violated: p={p!r}")
    if zeta is None and not (isinstance(C, (int, float, np.integer, np.floating)) and math.isfinite(C) and C > 0):
        raise ValueError(f"hypothesis C > 0 (heterogeneity radius) violated: C={C!r}")
    if zeta is not None and not (
        isinstance(zeta, (int, float, np.integer, np.floating)) and math.isfinite(zeta) and zeta > 0
    ):
        raise ValueError(f"hypothesis zeta > 0 violated: zeta={zeta!r}")
    if measure in ("error", "function-value"):
        if rounds is None or isinstance(rounds, bool) or int(rounds) != rounds or rounds < 1:
            raise ValueError(f"measure {measure!r} needs rounds >= 1 (an integer), got rounds={rounds!r}")
        if D is None or not (math.isfinite(D) and D >= 0):
            raise ValueError(f"measure {measure!r} needs D >= 0 (‖x_0 − x*‖ <= D), got D={D!r}")
    if dim is not None and (isinstance(dim, bool) or int(dim) != dim or dim < 1):
        raise ValueError(f"dim must be an integer >= 1, got {dim!r}")
    if isinstance(starts, bool) or int(starts) != starts or starts < 1:
        raise ValueError(f"starts must be an integer >= 1, got {starts!r}")
    return pp


def lower_bound(
    method: Any,
    *,
    measure: str,
    mu: float,
    L: float,
    p: Any,
    C: float = 1.0,
    zeta: float | None = None,
    rounds: int | None = None,
    D: float | None = None,
    dim: int | None = None,
    starts: int = 4,
    seed: int = 0,
    function_class: str = "quadratic",
    search: bool = True,
    **hyper: Any,
) -> tuple[float, dict]:
    r"""The largest value of ``measure`` found on quadratic federations of the class, computed by
    :func:`fedtheory.methods.run` on the instance returned (a lower bound on the method's worst case).

    ``method``: a :class:`~fedtheory.methods.ir.Method`, or a registered name with ``**hyper``; ``measure``:
    ``"rate"``, ``"floor"``, ``"error"`` or ``"function-value"`` (see the module docstring); μ, L: the class
    μI ⪯ A_i ⪯ LI; ``p``: the n ≥ 2 weights; ``C`` (‖c_i − o‖ ≤ C) or ``zeta`` (Σ p_i‖∇f_i(x*)‖² ≤ ζ²);
    ``rounds``, ``D``: T and ‖x_0 − x*‖ for error and function value; ``dim``: the instances' dimension
    (default max(2, n)); ``starts``: optimizer starts (the random phase draws 4·starts); ``seed``: every draw
    (same seed, same result). Returns (value, instance): the instance is JSON (the federation, the method's
    name and hyperparameters, the states or x_0 used, the measure, ``details``) and :func:`replay` recomputes
    the value from it.

    ``search=False``: the cross-check of an upper bound whose gap another lower bound already closed (see
    :func:`fedtheory.methods.pep.certify`): the structured starts and 2·``starts`` random draws, scored (the rate
    and the floor: all candidates' rounds in one run on their direct sum), no local search; the best candidate
    is reported exactly as above (maximized centres or start, replayed through ``run``). It stays a real check:
    its instances come from the class, not from the SDP, and include the extreme spectra where these methods'
    worst cases sit, so an upper bound below the worst case they reach is caught (the certificate's
    ``lower > upper`` test), at about a tenth of the search's evaluations.

    Search budget: ~5 grid values × 3 spectrum patterns of identical clients plus 2·``starts`` extreme spectra
    with random rotations, 2·``starts`` random draws, then ``starts`` L-BFGS-B runs of at most
    ``SEARCH_GRADIENTS`` finite-difference gradients each (deterministic, no time limit). Measured with
    n = d = 3, starts = 4 (one CPU): rate 0.6–2.3 s, floor 1.5–5.4 s for FedAvg, SCAFFOLD and FedSplit. More
    ``starts`` search further (FedAvg's n = 3 floor: 0.6978 at starts = 4, 0.7387 with a ~10× larger budget).

    A hypothesis outside the class raises ValueError naming it:

    >>> lower_bound("fedsplit", measure="rate", mu=2.0, L=1.0, p=[0.5, 0.5], s=1.0)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis 0 < mu <= L violated: mu=2.0, L=1.0
    >>> v, inst = lower_bound("scaffold", measure="floor", mu=1.0, L=10.0, p=[0.5, 0.5], K=3, gamma=0.05, starts=1)
    >>> v < 1e-12, inst["details"]["conserved_quantities"]           # SCAFFOLD's fixed point is x*
    (True, 2)
    """
    t0 = time.perf_counter()
    pp = _check(measure, mu, L, p, C, zeta, rounds, D, dim, starts, function_class)
    m = _resolve_method(method, hyper)
    if not m.linear:
        raise ValueError(
            f"method {m.name!r} has a nonlinear server rule: its round is not affine on quadratics, "
            "and this probe needs that structure (no lower bound computed)"
        )
    mu, L = float(mu), float(L)
    n = int(pp.size)
    d = int(dim) if dim is not None else max(2, n)
    het = "C" if zeta is None else "zeta"
    scale = float(C) if zeta is None else float(zeta)
    # T and D of the error measures (_check requires both there; the rate and the floor read neither)
    horizon, dist = (0, 0.0) if rounds is None or D is None else (int(rounds), float(D))
    rng = np.random.default_rng(int(seed))
    lay = _Layout(m, n, d)
    spec = _method_spec(m)
    notes = []
    try:
        rebuilt = _rebuild(spec)
        same = rebuilt.describe() == m.describe() and dict(rebuilt.hyper) == dict(m.hyper)
    except ValueError as err:
        rebuilt, same = None, False
        notes.append(f"method not rebuildable from name + hyper ({err})")
    if not same:
        notes.append("the method's name + hyper do not rebuild it: replay(instance, method=...) needs the Method")
    if measure in ("rate", "floor") and any(type(op).__name__ == "Scalars" for op in m.round):
        notes.append(
            "the round's coefficients follow host scalars: rate and floor are those of the first round "
            "(initial scalars)"
        )
    if function_class != "quadratic":
        notes.append("lower bound from a quadratic instance (quadratics belong to the smooth strongly convex class)")
    space = _Space(n, d, mu, L, pp, n_dirs=n if measure in ("error", "function-value") and het == "zeta" else 0)
    S0 = None

    # the search's objective on one decoded instance (batched runs)
    def objective(inst, maps=None) -> float:
        q, dirs = inst
        if measure == "rate":
            return _rate_of(m, lay, q, True, maps)[0]
        if measure == "floor":
            v = _floor_of(m, lay, q, S0, het, True, sweeps=SEARCH_SWEEPS if search else CROSS_CHECK_SWEEPS, maps=maps)[
                0
            ]
            return v if math.isfinite(v) else 1e300
        if het == "C":
            # C model: out_T − x* = D·G u + E c is convex in (u, c), so the maximum over the sphere and the balls
            # ‖c_i‖ ≤ C sits on their boundaries and block ascent (exact trust-region steps) finds it per instance
            return _error_best(q, *_error_linear(m, q, horizon, True))[0]
        qs, _ = _scale_centres(q, dirs[:n], het, scale, fast=True)
        xs = qs.x_star()
        G, h = _error_parts(m, qs, xs, horizon, True)
        if measure == "error":
            return max_on_sphere(dist * G, h)[0]
        R = _sqrt_psd(np.einsum("i,ijk->jk", qs.p, qs.A))
        return 0.5 * max_on_sphere(R @ (dist * G), R @ h)[0] ** 2

    def _error_best(q, G, E, sweeps=SEARCH_SWEEPS + 2):
        """max over u (sphere) and c (‖c_i‖ ≤ C) of ‖D G u + E c‖ (or ½‖Ā^½(·)‖²), the maximizer (u, c)."""
        Tm = np.hstack([dist * G, scale * E])
        if measure == "function-value":
            Tm = _sqrt_psd(np.einsum("i,ijk->jk", q.p, q.A)) @ Tm
        v, w = _max_over_balls(Tm, n + 1, d, sweeps)
        return (v if measure == "error" else 0.5 * v * v), w[:d], w[d:].reshape(n, d)

    from fedtheory.certify.params import Custom
    from fedtheory.certify.probe import probe

    if measure == "floor":
        q0, _ = space.decode(np.zeros(space.size))
        S0 = _init_matrix(m, lay, q0)
    cands = space.structured(rng, 2 * starts)
    if not search:  # the search's random draws, taken here (no local search follows)
        cands += [rng.normal(size=space.size) for _ in range(2 * starts)]
        # the grid's patterns repeat at its ends (identical clients with spectrum (μ, …, μ, L) at g = μ and at g = L,
        # likewise (μ, L, …, L) for d ≥ 3): a cross-check scores each instance once
        distinct: dict = {}
        for z in cands:
            distinct.setdefault(z.tobytes(), z)
        cands = list(distinct.values())
    scored = []
    decoded, maps_of = [], {}
    for z in cands:
        try:
            decoded.append((space.decode(z), z))
        except (ValueError, np.linalg.LinAlgError):
            continue
    if not search and measure in ("rate", "floor"):
        # one run for every candidate's round (their direct sum) instead of one per candidate
        many = _round_maps_many(m, lay, [inst[0] for inst, _ in decoded], centres=measure == "floor")
        maps_of = {id(z): mp for (_, z), mp in zip(decoded, many)}
    for inst, z in decoded:
        try:
            scored.append((objective(inst, maps_of.get(id(z))), z))
        except (ValueError, np.linalg.LinAlgError):
            continue
    scored.sort(key=lambda t: -t[0])
    if search:
        res = probe(
            objective,
            Custom(space.size, space.decode),
            rng=rng,
            n_random=2 * starts,
            n_starts=starts - max(1, starts // 2),
            maxiter=SEARCH_MAXITER,
            method="L-BFGS-B",
            starts=[z for _, z in scored[: max(1, starts // 2)]],
            options={"maxfun": SEARCH_GRADIENTS, "maxls": 5},
        )
        best = scored[0][0] if scored else -math.inf
        best_z = np.asarray(res.worst_z) if res.worst_value >= best else scored[0][1]
        search_value = max(res.worst_value, best)
        evaluations, failed = res.n_evaluations + len(cands), res.n_failed
    elif scored:
        search_value, best_z = scored[0]
        evaluations, failed = len(cands), len(cands) - len(scored)
    else:
        raise ValueError(f"none of the {len(cands)} candidate instances could be evaluated (no lower bound)")
    q, dirs = space.decode(best_z, fast=False)

    instance: dict = {
        "measure": measure,
        "method": spec,
        "mu": mu,
        "L": L,
        "p": pp.tolist(),
        "C": None if zeta else scale,
        "zeta": zeta,
        "rounds": rounds,
        "D": D,
        "dim": d,
        "function_class": function_class,
        "seed": int(seed),
        "path": _path(m),
    }
    details: dict = {
        "search_value": float(search_value),
        "evaluations": evaluations,
        "failed_evaluations": failed,
        "local_search": bool(search),
    }
    if measure == "rate":
        q = _fed(q, np.zeros((n, d)))  # the rate does not depend on the centres
        _, s_top, _ = _rate_of(m, lay, q, False)
        instance.update(federation=q.to_json(), state=lay.unpack(s_top), state_prime=lay.unpack(np.zeros(lay.size)))
    elif measure == "floor":
        # the round's maps on the reported Hessians, once: they do not depend on the centres, so the scaled and
        # the unit-heterogeneity instances below share them. The cross-check takes them from one run on the
        # direct sum (same arithmetic up to rounding): the value reported is the replay from the fixed point
        # they give, whose residual through the real round _value checks either way
        maps = _round_maps(m, lay, q, not search, centres=True)
        _, c_unit, info = _floor_of(m, lay, q, S0, het, False, maps=maps)
        if c_unit is None:
            instance.update(federation=q.to_json(), fixed_point=None)
            details.update(info)
            notes.append("out is not determined on the reachable fixed points: the floor is unbounded")
        else:
            qs, h0 = _scale_centres(q, c_unit, het, scale)
            if not h0 > 0:
                qs = _fed(q, c_unit)  # heterogeneity 0: every centre at o, the floor is 0
            F, resid, n_cons, _, _ = _fixed_point_maps(m, lay, qs, S0, False, maps)
            s_star = F @ qs.c.ravel()
            instance.update(federation=qs.to_json(), fixed_point=lay.unpack(s_star))
            details.update(conserved_quantities=n_cons, fixed_point_solve_residual=resid)
            if n_cons:
                notes.append(
                    f"I − M is singular: {n_cons} conserved quantities fixed at their initial values, "
                    "fixed point by least squares (residual checked)"
                )
            # linearity in the centres is verified, not assumed: the floor at unit heterogeneity, scaled
            if h0 > 0:
                qu = _fed(q, c_unit / h0)
                su = F @ qu.c.ravel()  # F does not depend on the centres: the replays below check linearity
                vu = _floor_replay(m, lay, qu, su)[0]
                details["unit_heterogeneity_value"] = vu
    else:
        if het == "C":
            _, _, c_unit = _error_best(q, *_error_linear(m, q, horizon, False), sweeps=30)
            qs, _ = _scale_centres(q, c_unit, het, scale)
        else:
            qs, _ = _scale_centres(q, dirs[:n], het, scale)
        xs = qs.x_star()
        G, hvec = _error_parts(m, qs, xs, horizon, False)
        if measure == "error":
            _, u = max_on_sphere(dist * G, hvec)
        else:
            R = _sqrt_psd(np.einsum("i,ijk->jk", qs.p, qs.A))
            _, u = max_on_sphere(R @ (dist * G), R @ hvec)
        instance.update(federation=qs.to_json(), x0=(xs + dist * u).tolist())
    instance["notes"] = notes
    instance["details"] = details
    method_for_value = m
    value, extra = _value(method_for_value, instance)
    details.update(extra)
    if measure == "floor" and "unit_heterogeneity_value" in details and math.isfinite(value):
        vu = details["unit_heterogeneity_value"]
        details["scaling_check"] = value / (scale * vu) if vu > 0 else (1.0 if value == 0 else math.inf)
        if vu > 0 and abs(details["scaling_check"] - 1) > 1e-8:
            notes.append(f"the floor is not linear in the heterogeneity here (ratio {details['scaling_check']!r})")
    details["value"] = value
    details["seconds"] = time.perf_counter() - t0
    if same and rebuilt is not None:
        rv = _value(rebuilt, instance)[0]
        if not (rv == value or abs(rv - value) <= 1e-12 * max(1.0, abs(value))):
            notes.append(f"the rebuilt method gives {rv!r}, not {value!r}")
    from fedtheory.certify.params import jsonable

    return float(value), jsonable(instance)


def _floor_replay(m, lay, q, s_star) -> tuple[float, float]:
    """One round from the fixed point through run: the distance of its output to x*, and the relative
    residual ‖R(s*) − s*‖_W / max(‖s*‖_W, scale) that certifies s* is a fixed point of the real round."""
    out, st = _run_jobs(m, q, [(lay.unpack(s_star), np.zeros(q.d), q.c)], 1, False)[0]
    s1 = lay.pack(st)
    ref = max(math.sqrt(lay.norm_sq(s_star, q.p)), float(np.abs(q.c).max()), 1e-300)
    resid = math.sqrt(lay.norm_sq(s1 - s_star, q.p)) / ref
    return float(np.linalg.norm(out - q.x_star())), resid


def _value(m, instance: Mapping[str, Any]) -> tuple[float, dict]:
    from fedtheory.problems.quadratic import QuadraticFederation

    measure = instance["measure"]
    q = QuadraticFederation.from_json(instance["federation"])
    lay = _Layout(m, q.n, q.d)
    if measure == "rate":
        s = lay.pack(instance["state"])
        s2 = lay.pack(instance["state_prime"])
        (_, a), (_, b) = _run_jobs(
            m, q, [(lay.unpack(s), np.zeros(q.d), q.c), (lay.unpack(s2), np.zeros(q.d), q.c)], 1, False
        )
        num = lay.norm_sq(lay.pack(a) - lay.pack(b), q.p)
        den = lay.norm_sq(s - s2, q.p)
        return math.sqrt(num / den), {}
    if measure == "floor":
        if instance.get("fixed_point") is None:
            return math.inf, {}
        v, resid = _floor_replay(m, lay, q, lay.pack(instance["fixed_point"]))
        if resid > RESIDUAL_TOL:
            raise ValueError(f"the stored fixed point is not one of the real round: relative residual {resid:.3g}")
        return v, {"fixed_point_residual": resid}
    x0 = np.asarray(instance["x0"], dtype=np.float64)
    out = _run_jobs(m, q, [(None, x0, q.c)], int(instance["rounds"]), False)[0][0]
    e = out - q.x_star()
    if measure == "error":
        return float(np.linalg.norm(e)), {}
    Abar = np.einsum("i,ijk->jk", q.p, q.A)
    return 0.5 * float(e @ Abar @ e), {}  # F(x) − F* exactly, for F = Σ p_i f_i quadratic


def replay(instance: Mapping[str, Any], *, method: Any = None) -> float:
    """The value of a stored instance, recomputed through :func:`fedtheory.methods.run` (the method rebuilt from
    its name and hyperparameters, or ``method=`` when it cannot be).

    >>> import numpy as np
    >>> v, inst = lower_bound("fedavg", measure="error", mu=1.0, L=10.0, p=[0.5, 0.5], rounds=3, D=1.0,
    ...                       K=2, gamma=0.05, starts=1)
    >>> replay(inst) == v
    True
    >>> replay({"measure": "speed"})
    Traceback (most recent call last):
    ...
    ValueError: instance measure must be one of ('rate', 'floor', 'error', 'function-value'), got 'speed'
    """
    if not isinstance(instance, Mapping):
        raise ValueError(f"replay needs the instance dict lower_bound returned, got {type(instance).__name__}")
    if instance.get("measure") not in MEASURES:
        raise ValueError(f"instance measure must be one of {MEASURES}, got {instance.get('measure')!r}")
    missing = [k for k in ("federation", "method") if k not in instance]
    if missing:
        raise ValueError(f"instance lacks {', '.join(missing)}")
    m = _resolve_method(method, {}) if method is not None else _rebuild(instance["method"])
    return _value(m, instance)[0]
