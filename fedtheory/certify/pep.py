r"""Worst-case certificates (performance estimation, through PEPit) for stabilized proximal-point methods.

Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization*
(arXiv:2407.07084). Each function builds a PEP with PEPit (Taylor, Hendrickx & Glineur's interpolation
conditions; the SDP is solved by Clarabel through cvxpy), returns the numerical worst case beside the
theorem's bound, in the manner of PEPit's own examples:

- :func:`stabilized_ppm` — the stabilized proximal-point method (3) on one μ-convex f, with the relative
  accuracy condition :math:`\|\nabla F_k(x_{k+1})\|^2 \le c\lambda^2\|x_{k+1} - v_k\|^2`;
- :func:`classical_ppm` — the proximal-point method (2) (prox-centre x_k) under the same relative
  condition, optionally tightened by 1/(k+1)² (DANE's test, Remark 2);
- :func:`two_client_sdane` — S-DANE (Alg. 1) or Acc-S-DANE (Alg. 2) with **two** μ-convex clients under
  δ-SOD, over R rounds, with the accuracy condition (6). For n = 2, δ_A-SOD says exactly that
  g = (f_1 − f_2)/2 has a δ-Lipschitz gradient, so the class is written with f_1 (μ-convex, a PEPit
  leaf), g (δ-smooth, a leaf), f_2 = f_1 − 2g and μ-convexity of f_2 imposed on every point where it
  is evaluated. These are necessary conditions, so the PEP value is an **upper bound** on the true
  worst case (a valid certificate when it is below the theorem's bound);
- :func:`gd_gradient_norm` (Lemma 20), :func:`fast_gradient_norm` (FGM then OGM-G, Corollary 3),
  :func:`cocoercivity_gap` (Lemma 9).

Every function returns a :class:`PepResult` (value, bound, ratio, solver time).

>>> r = stabilized_ppm(K=2, lam=1.0, mu=0.0)
>>> bool(r.ratio <= 1 + 1e-6), r.bound
(True, 0.25)
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PepResult", "stabilized_ppm", "classical_ppm", "two_client_sdane", "stabilized_catalyst", "gd_gradient_norm",
           "fast_gradient_norm", "cocoercivity_gap", "sdane_bound", "acc_sdane_bound", "SOLVER"]

SOLVER = "CLARABEL"
#: relative accuracy of the SDP solutions (Clarabel's default tolerances are 1e-8): ratios are compared to 1 + this.
SDP_RTOL = 1e-5


@dataclass
class PepResult:
    """A PEP's worst case ``value`` (the solver's dual bound), the theory's ``bound``, their ``ratio``,
    the problem's parameters and the solve time."""

    value: float
    bound: float
    params: dict
    seconds: float

    @property
    def ratio(self) -> float:
        return self.value / self.bound if self.bound > 0 else math.inf

    def to_json(self) -> dict:
        return {"value": self.value, "bound": self.bound, "ratio": self.ratio, "params": self.params,
                "seconds": self.seconds}


#: Clarabel settings tried in turn: its defaults, then without Ruiz equilibration (on the ill-scaled PEP SDPs
#: of several rounds the equilibrated problem stalls at "almost solved"; unscaled it reaches "optimal")
CLARABEL_ATTEMPTS = ({}, {"equilibrate_enable": False, "max_iter": 1000})
#: SCS tolerance of the cross-check of a solve Clarabel reports as inaccurate, and the agreement required
CROSS_CHECK_EPS = 1e-7
CROSS_CHECK_RTOL = 1e-3


def _solve(problem: Any, *, wrapper: str = "cvxpy") -> tuple[float, float]:
    """Solve with Clarabel (the settings of CLARABEL_ATTEMPTS in turn, first "optimal" wins). A solution it
    only calls inaccurate counts when SCS (a different algorithm, first order) reaches "optimal" at
    CROSS_CHECK_EPS on the same SDP and agrees to CROSS_CHECK_RTOL; the value returned is then the larger one
    plus their gap (the worst case is a maximum: an upper estimate is the safe certificate for a "≤ bound"
    claim, and the claims' margins dwarf the gap). Otherwise RuntimeError. ``wrapper`` names the PEPit
    wrapper (``"cvxpy"``, or one registered in ``PEPit.wrappers.WRAPPERS`` such as
    :mod:`fedtheory.certify.federated_pep`'s)."""
    value, secs, _ = _solve_detail(problem, wrapper=wrapper)
    return value, secs


def _solve_detail(problem: Any, *, wrapper: str = "cvxpy") -> tuple[float, float, str]:
    """:func:`_solve`, also returning which solver(s) produced the value (``"CLARABEL"`` or
    ``"CLARABEL+SCS"``)."""
    import warnings

    start = time.perf_counter()
    value, status = None, None
    # safe_mode looks the wrapper's name up as a Python package; a registered wrapper is no package
    extra = {} if wrapper == "cvxpy" else {"safe_mode": False}
    for settings in CLARABEL_ATTEMPTS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # cvxpy's "may be inaccurate": handled below
            try:
                attempt = problem.solve(wrapper=wrapper, solver=SOLVER, verbose=0, **extra, **settings)
            except Exception:                              # cvxpy's SolverError (Clarabel NumericalError)
                attempt = None
        if attempt is not None and (value is None or problem.wrapper.prob.status == "optimal"):
            value, status = attempt, problem.wrapper.prob.status
        if status == "optimal":
            break
    solver = SOLVER
    if status != "optimal":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                other = problem.solve(wrapper=wrapper, solver="SCS", verbose=0, eps_abs=CROSS_CHECK_EPS,
                                      eps_rel=CROSS_CHECK_EPS, max_iters=100_000, **extra)
                other_status = problem.wrapper.prob.status
            except Exception:
                other, other_status = None, "failed"
        if value is None and other is None:
            raise RuntimeError("the PEP has no finite worst case (unbounded or infeasible SDP), or no solver "
                               "could solve it")
        if (value is None or other is None or other_status != "optimal"
                or abs(other - value) > CROSS_CHECK_RTOL * max(abs(value), 1e-12)):
            raise RuntimeError(f"the PEP's SDP was not solved reliably: {SOLVER} {status} ({value}), "
                               f"SCS {other_status} ({other})")
        value = max(float(value), float(other)) + abs(float(value) - float(other))
        solver = f"{SOLVER}+SCS"
    return float(value), time.perf_counter() - start, solver


def _convex_leaf(problem: Any, mu: float):
    from PEPit.functions import ConvexFunction, StronglyConvexFunction

    # reuse_gradient: the clients are differentiable (one gradient per point), as the theorems assume
    if mu > 0:
        return problem.declare_function(StronglyConvexFunction, mu=mu, reuse_gradient=True)
    return problem.declare_function(ConvexFunction, reuse_gradient=True)


def _weighted_average(points: list, weights: np.ndarray):
    w = np.asarray(weights, dtype=np.float64) / np.sum(weights)
    out = float(w[0]) * points[0]
    for wi, p in zip(w[1:], points[1:]):
        out = out + float(wi) * p
    return out


def sdane_bound(R: int, lam: float, mu: float, D2: float = 1.0) -> float:
    r"""Theorem 1's right side μD²/(2[(1 + μ/λ)^R − 1]) (λD²/(2R) at μ = 0).

    >>> sdane_bound(4, 2.0, 0.0)
    0.25
    """
    if mu == 0:
        return lam * D2 / (2 * R)
    return mu * D2 / (2 * math.expm1(R * math.log1p(mu / lam)))


def acc_sdane_bound(R: int, lam: float, mu: float, D2: float = 1.0) -> float:
    """Theorem 6's D²/(2A_R) with Algorithm 2's exact A_R (A_0 = 0, B_0 = 1, λa² = (A + a)B).

    >>> acc_sdane_bound(1, 2.0, 0.0)
    1.0
    """
    from fedtheory.algorithms.dane import acc_coefficient

    A, B = 0.0, 1.0
    for _ in range(R):
        a = acc_coefficient(A, B, lam)
        A, B = A + a, B + mu * a
    return D2 / (2 * A)


# --------------------------------------------------------------------------------------------
# single function: stabilized vs classical proximal point
# --------------------------------------------------------------------------------------------

def stabilized_ppm(K: int, lam: float, mu: float = 0.0, c: float = 1.0) -> PepResult:
    r"""Worst case of f(x̄^K) − f* + μ/2‖v^K − x*‖² for the stabilized PPM (3) under relative accuracy c.

    x_{k+1} is any point with ‖∇f(x_{k+1}) + λ(x_{k+1} − v_k)‖² ≤ cλ²‖x_{k+1} − v_k‖²,
    v_{k+1} = (λv_k + μx_{k+1} − ∇f(x_{k+1}))/(λ + μ), x̄^K the p^k-weighted average (p = 1 + μ/λ),
    ‖x_0 − x*‖ ≤ 1. Bound: Theorem 1 with n = 1 (δ = 0), valid for c ≤ 1.
    """
    from PEPit import PEP

    pb = PEP()
    f = _convex_leaf(pb, mu)
    xs = f.stationary_point()
    fs = f(xs)
    x0 = pb.set_initial_point()
    pb.set_initial_condition((x0 - xs) ** 2 <= 1)
    v, xk = x0, []
    for _ in range(K):
        x = pb.set_initial_point()
        g, _ = f.oracle(x)
        pb.add_constraint((g + lam * (x - v)) ** 2 <= c * lam ** 2 * (x - v) ** 2)
        v = (lam * v + mu * x - g) * (1.0 / (lam + mu))
        xk.append(x)
    xbar = _weighted_average(xk, (1 + mu / lam) ** np.arange(1, K + 1))
    pb.set_performance_metric(f(xbar) - fs + (mu / 2) * (v - xs) ** 2)
    value, secs = _solve(pb)
    return PepResult(value, sdane_bound(K, lam, mu), {"K": K, "lam": lam, "mu": mu, "c": c}, secs)


def classical_ppm(K: int, lam: float, c: float = 0.25, tighten: bool = False, average: bool = False) -> PepResult:
    r"""Worst case of f(x_K) − f* (or f(x̄_K), x̄_K = mean of x_1..x_K, with ``average``) for the PPM (2),
    prox-centre x_k, under the relative accuracy condition ‖∇F_k(x_{k+1})‖² ≤ cλ²‖x_{k+1} − x_k‖² (divided by
    (k+1)² with ``tighten``: DANE's test), f convex, ‖x_0 − x*‖ ≤ 1; ``bound`` is the exact method's λ/(2K).
    """
    from PEPit import PEP

    pb = PEP()
    f = _convex_leaf(pb, 0.0)
    xs = f.stationary_point()
    fs = f(xs)
    x = pb.set_initial_point()
    pb.set_initial_condition((x - xs) ** 2 <= 1)
    iterates = []
    for k in range(K):
        xn = pb.set_initial_point()
        g, _ = f.oracle(xn)
        factor = c / (k + 1) ** 2 if tighten else c
        pb.add_constraint((g + lam * (xn - x)) ** 2 <= factor * lam ** 2 * (xn - x) ** 2)
        x = xn
        iterates.append(x)
    out = _weighted_average(iterates, np.ones(K)) if average else x
    pb.set_performance_metric(f(out) - fs)
    value, secs = _solve(pb)
    return PepResult(value, lam / (2 * K), {"K": K, "lam": lam, "c": c, "tighten": tighten, "average": average}, secs)


# --------------------------------------------------------------------------------------------
# two clients under δ-SOD
# --------------------------------------------------------------------------------------------

def two_client_sdane(R: int, lam: float, mu: float, delta: float, c: float = 0.25, accelerated: bool = False) -> PepResult:
    r"""Worst case of S-DANE (Theorem 1) or Acc-S-DANE (Theorem 6) with n = 2 μ-convex clients under δ-SOD.

    Clients f_1, f_2 = f_1 − 2g with g δ-smooth (so δ_A ≤ δ); f = f_1 − g; full participation; in each
    round the two local points are free subject to (6): Σ_i‖∇F_{i,r}(x_{i,r+1})‖² ≤ cλ²Σ_i‖x_{i,r+1} − c^r‖²;
    ‖x^0 − x*‖ ≤ 1. Metric and bound: S-DANE: f(x̄^R) − f* + μ/2‖v^R − x*‖² against
    μ/(2[(1+μ/λ)^R − 1]); Acc-S-DANE: f(x^R) − f* + μ/2‖v^R − x*‖² against 1/(2A_R).

    >>> r = two_client_sdane(R=1, lam=2.0, mu=0.0, delta=1.0)
    >>> bool(r.ratio <= 1)
    True
    """
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    from fedtheory.algorithms.dane import acc_coefficient

    pb = PEP()
    f1 = _convex_leaf(pb, mu)
    g = pb.declare_function(SmoothFunction, L=delta)
    f2 = f1 - 2 * g
    f = f1 - g
    xs = f.stationary_point()
    fs = f(xs)
    x0 = pb.set_initial_point()
    pb.set_initial_condition((x0 - xs) ** 2 <= 1)
    x, v = x0, x0
    A, B = 0.0, 1.0
    iterates = []
    for _ in range(R):
        if accelerated:
            a = acc_coefficient(A, B, lam)
            center = (A / (A + a)) * x + (a / (A + a)) * v if A > 0 else v
        else:
            center = v
        gc = [f1.gradient(center), f2.gradient(center)]
        gS = 0.5 * (gc[0] + gc[1])
        pts = [pb.set_initial_point(), pb.set_initial_point()]
        grads, E, U = [], None, None
        for fi, xi, gci in zip((f1, f2), pts, gc):
            gi = fi.gradient(xi)
            grads.append(gi)
            e = (gi - gci + gS + lam * (xi - center)) ** 2
            u = (xi - center) ** 2
            E = e if E is None else E + e
            U = u if U is None else U + u
        pb.add_constraint(E <= c * lam ** 2 * U)
        xbar = 0.5 * (pts[0] + pts[1])
        gbar = 0.5 * (grads[0] + grads[1])
        if accelerated:
            v = (B * v + mu * a * xbar - a * gbar) * (1.0 / (B + mu * a))
            A, B = A + a, B + mu * a
        else:
            v = (lam * v + mu * xbar - gbar) * (1.0 / (lam + mu))
        x = xbar
        iterates.append(xbar)
    out = x if accelerated else _weighted_average(iterates, (1 + mu / lam) ** np.arange(1, R + 1))
    metric = f(out) - fs + (mu / 2) * (v - xs) ** 2
    # every point where either client is evaluated: both leaves everywhere, so f_2's list is complete
    for p in [xs] + [pt for pt, _, _ in f1.list_of_points] + [out, v]:
        f1.gradient(p)
        f2.gradient(p)
    pts2 = f2.list_of_points
    for a_i in range(len(pts2)):
        for b_i in range(len(pts2)):
            if a_i != b_i:
                xa, ga, fa = pts2[a_i]
                xb, gb, fb = pts2[b_i]
                pb.add_constraint(fa >= fb + gb * (xa - xb) + (mu / 2) * (xa - xb) ** 2)
    pb.set_performance_metric(metric)
    value, secs = _solve(pb)
    bound = acc_sdane_bound(R, lam, mu) if accelerated else sdane_bound(R, lam, mu)
    return PepResult(value, bound, {"R": R, "lam": lam, "mu": mu, "delta": delta, "c": c, "accelerated": accelerated,
                                    "n": 2}, secs)


def stabilized_catalyst(R: int, L: float = 1.0, mu: float = 0.0) -> PepResult:
    r"""Acc-S-DANE with n = 1, λ = L and one gradient step x_{r+1} = y_r − ∇f(y_r)/L as the local solver
    ("Stabilized Catalyst", Section 4), f μ-convex and L-smooth, ‖x_0 − x*‖ ≤ 1: worst
    f(x_R) − f* + μ/2‖v_R − x*‖² against Theorem 6's 1/(2A_R) (δ = 0).

    >>> bool(stabilized_catalyst(2).ratio <= 1 + 1e-6)
    True
    """
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    from fedtheory.algorithms.dane import acc_coefficient

    pb = PEP()
    f = pb.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
    xs = f.stationary_point()
    fs = f(xs)
    x0 = pb.set_initial_point()
    pb.set_initial_condition((x0 - xs) ** 2 <= 1)
    x, v, A, B = x0, x0, 0.0, 1.0
    for _ in range(R):
        a = acc_coefficient(A, B, L)
        y = (A / (A + a)) * x + (a / (A + a)) * v if A > 0 else v
        x = y - (1.0 / L) * f.gradient(y)
        v = (B * v + mu * a * x - a * f.gradient(x)) * (1.0 / (B + mu * a))
        A, B = A + a, B + mu * a
    pb.set_performance_metric(f(x) - fs + (mu / 2) * (v - xs) ** 2)
    value, secs = _solve(pb)
    return PepResult(value, 1.0 / (2 * A), {"R": R, "L": L, "mu": mu}, secs)


# --------------------------------------------------------------------------------------------
# local solvers
# --------------------------------------------------------------------------------------------

def gd_gradient_norm(N: int, L: float = 1.0) -> PepResult:
    r"""Worst ‖∇f(x_N)‖² of gradient descent with step 1/L on a convex L-smooth f, ‖x_0 − x*‖ ≤ 1;
    bound (L/(N+1))² (the tight constant of Lemma 20 as rebuilt).

    >>> r = gd_gradient_norm(2)
    >>> round(r.ratio, 4)
    1.0
    """
    from PEPit import PEP
    from PEPit.functions import SmoothConvexFunction

    pb = PEP()
    f = pb.declare_function(SmoothConvexFunction, L=L)
    xs = f.stationary_point()
    x = pb.set_initial_point()
    pb.set_initial_condition((x - xs) ** 2 <= 1)
    for _ in range(N):
        x = x - (1.0 / L) * f.gradient(x)
    pb.set_performance_metric(f.gradient(x) ** 2)
    value, secs = _solve(pb)
    return PepResult(value, (L / (N + 1)) ** 2, {"N": N, "L": L}, secs)


def fast_gradient_norm(K: int, L: float = 1.0) -> PepResult:
    r"""Worst ‖∇f(x_K)‖² of FGM (⌈K/2⌉ steps) then OGM-G (⌊K/2⌋ steps) on a convex L-smooth f,
    ‖x_0 − x*‖ ≤ 1, against the analytic (c(K)L)² of
    :meth:`~fedtheory.algorithms.local_solvers.FastGradNorm.gradient_bound_factor`.
    """
    from PEPit import PEP
    from PEPit.functions import SmoothConvexFunction

    from fedtheory.algorithms.local_solvers import FastGradNorm, ogm_g_thetas

    pb = PEP()
    f = pb.declare_function(SmoothConvexFunction, L=L)
    xs = f.stationary_point()
    x0 = pb.set_initial_point()
    pb.set_initial_condition((x0 - xs) ** 2 <= 1)
    k1, N = math.ceil(K / 2), K // 2
    x, y, t = x0, x0, 1.0
    for _ in range(k1):
        xn = y - (1.0 / L) * f.gradient(y)
        tn = (1 + math.sqrt(1 + 4 * t * t)) / 2
        y = xn + ((t - 1) / tn) * (xn - x)
        x, t = xn, tn
    if N:
        th = ogm_g_thetas(N)
        yold = x
        for i in range(N):
            ynew = x - (1.0 / L) * f.gradient(x)
            a = (th[i] - 1) * (2 * th[i + 1] - 1) / (th[i] * (2 * th[i] - 1))
            b = (2 * th[i + 1] - 1) / (2 * th[i] - 1)
            x = ynew + a * (ynew - yold) + b * (ynew - x)
            yold = ynew
    pb.set_performance_metric(f.gradient(x) ** 2)
    value, secs = _solve(pb)
    return PepResult(value, (FastGradNorm.gradient_bound_factor(K) * L) ** 2, {"K": K, "L": L}, secs)


def cocoercivity_gap(L: float = 1.0) -> PepResult:
    r"""Worst value of f(x) + ⟨∇f(x), y − x⟩ + ‖∇f(x) − ∇f(y)‖²/(2L) − f(y) over convex L-smooth f with
    ‖x − y‖ ≤ 1: Lemma 9 (B.5) says it is ≤ 0 (``bound`` 0; read ``value``).
    """
    from PEPit import PEP
    from PEPit.functions import SmoothConvexFunction

    pb = PEP()
    f = pb.declare_function(SmoothConvexFunction, L=L)
    x = pb.set_initial_point()
    y = pb.set_initial_point()
    pb.set_initial_condition((x - y) ** 2 <= 1)
    gx, fx = f.oracle(x)
    gy, fy = f.oracle(y)
    pb.set_performance_metric(fx + gx * (y - x) + (1.0 / (2 * L)) * (gx - gy) ** 2 - fy)
    value, secs = _solve(pb)
    return PepResult(value, 0.0, {"L": L}, secs)
