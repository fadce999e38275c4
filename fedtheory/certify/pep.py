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

from fedtheory.problems.clients import ClientOracles

__all__ = [
    "PepResult",
    "stabilized_ppm",
    "classical_ppm",
    "two_client_sdane",
    "stabilized_catalyst",
    "gd_gradient_norm",
    "fast_gradient_norm",
    "cocoercivity_gap",
    "sdane_bound",
    "acc_sdane_bound",
    "SOLVER",
    "interpolation_violation",
    "huber_gd_gradient_norm",
    "abs_stabilized_ppm",
    "CLASS_ATOL",
    "TIGHT_RTOL",
    "worst_gap",
    "sod_pair",
    "sod_start",
    "close_sod_pair",
    "sdane_pep",
    "solve_sdane",
    "check_sdane",
]

SOLVER = "CLARABEL"
#: relative accuracy of the SDP solutions (Clarabel's default tolerances are 1e-8): ratios are compared to 1 + this.
SDP_RTOL = 1e-5


#: largest violation of an interpolation (class) condition that the extracted worst-case instance may show and
#: still count as a member of the class: the SDP is solved to ~1e-8 on data of size O(1) (‖x_0 − x*‖ ≤ 1), so an
#: honest primal solution violates no condition by more than ~1e-7; a dropped class constraint that matters
#: violates it at the scale of the worst case itself (≥ 1e-3 in every certificate here)
CLASS_ATOL = 1e-6
#: largest violation of the accuracy condition (6) that the replayed worst case may show, on the scale of its largest
#: right side: PEPit reads the points back from the Gram matrix (PSD only to solver accuracy, negative eigenvalues
#: clipped), which moves the quadratic forms of (6) by up to ~1e-6 at R = 4 (measured 6e-7); a dropped constraint
#: moves a class condition by ≥ 0.1
TEST_ATOL = 1e-5
#: relative agreement required between a PEP's value and its lower bound, or a known closed-form worst case
#: (SDP accuracy ~1e-8 relative; the gaps measured are ≤ 3e-8): a missing constraint that matters moves the
#: value by far more (0.36 → 0.40 without client 2's strong convexity in two_client_sdane(2, 2, 0.5, 1))
TIGHT_RTOL = 1e-4


def worst_gap(results: list) -> float:
    """The largest tightness gap of PEP results (``inf`` when one has no valid lower bound).

    >>> worst_gap([PepResult(1.0, 2.0, {}, 0.0, lower=1.0 - 1e-9), PepResult(1.0, 2.0, {}, 0.0, lower=0.5)])
    0.5
    >>> worst_gap([PepResult(1.0, 2.0, {}, 0.0, lower=float("nan"))])
    inf
    """
    gaps = [r.gap for r in results]
    return math.inf if any(not math.isfinite(g) for g in gaps) else max(gaps)


@dataclass
class PepResult:
    """A PEP's worst case ``value`` (the solver's dual bound, an upper bound on the true worst case), the
    theory's ``bound``, their ``ratio``, the problem's parameters and the solve time.

    ``lower`` is the value reached by the extracted worst-case instance (the SDP's primal solution read back
    as points, gradients and function values), replayed where the certificate says so on the real driver;
    it is a valid lower bound only when ``class_violation`` (the largest violation of the class's
    interpolation conditions on that data, checked by :func:`interpolation_violation`, independently of
    PEPit) is ≤ :data:`CLASS_ATOL` — otherwise ``lower`` is ``nan``. ``gap`` = (value − lower)/value
    measures how tight the certificate is: a PEP missing a class constraint that matters has a worst case
    outside the class, so its lower bound is lost."""

    value: float
    bound: float
    params: dict
    seconds: float
    lower: float | None = None
    class_violation: float | None = None
    replay: dict | None = None
    #: which solver produced ``value``: ``"CLARABEL"`` (Clarabel's status "optimal") or ``"CLARABEL+SCS"``
    #: (Clarabel inaccurate, SCS optimal and agreeing; see :func:`_solve_detail`); ``None`` where not recorded
    solver: str | None = None

    @property
    def ratio(self) -> float:
        return self.value / self.bound if self.bound > 0 else math.inf

    @property
    def gap(self) -> float:
        """Relative tightness gap (value − lower)/max(|value|, 1e-12); ``nan`` without a valid lower bound."""
        if self.lower is None or not math.isfinite(self.lower):
            return math.nan
        return (self.value - self.lower) / max(abs(self.value), 1e-12)

    def to_json(self) -> dict:
        return {
            "value": self.value,
            "bound": self.bound,
            "ratio": self.ratio,
            "params": self.params,
            "seconds": self.seconds,
            "lower": self.lower,
            "class_violation": self.class_violation,
            "gap": self.gap,
            "replay": self.replay,
            "solver": self.solver,
        }


def interpolation_violation(X: Any, G: Any, F: Any, mu: float = 0.0, L: float = math.inf) -> float:
    r"""Largest violation of the interpolation conditions of the class F_{μ,L} (Taylor, Hendrickx & Glineur,
    2017, Thm 4 and its extension to −L ≤ μ < L) on the data (x_i, g_i, f_i):

    .. math:: f_i \ge f_j + \langle g_j, x_i - x_j\rangle + \frac1{2L}\|g_i - g_j\|^2
              + \frac{\mu}{2(1-\mu/L)}\|x_i - x_j - (g_i - g_j)/L\|^2

    (L = ∞: f_i ≥ f_j + ⟨g_j, x_i − x_j⟩ + μ/2‖x_i − x_j‖²; μ = −L: L-smooth, not necessarily convex). The data
    come from some function of the class exactly when the returned value is ≤ 0. Written from the theorem,
    independently of PEPit's own constraints (so it can see a constraint a PEP forgot).

    >>> x = [[0.0], [1.0], [-2.0]]
    >>> q = lambda a: ([[a * xi[0]] for xi in x], [a * xi[0] ** 2 / 2 for xi in x])   # a/2·x²
    >>> interpolation_violation(x, *q(1.0), mu=0.5, L=2.0) <= 1e-12                  # in F_{0.5,2}
    True
    >>> interpolation_violation(x, *q(3.0), mu=0.5, L=2.0) > 0.1                     # not 2-smooth
    True
    >>> interpolation_violation(x, *q(-1.0), mu=-1.0, L=1.0) <= 1e-12                # 1-smooth, concave
    True
    """
    X, G, F = (np.asarray(a, dtype=np.float64) for a in (X, G, F))
    X, G = X.reshape(len(F), -1), G.reshape(len(F), -1)
    dX = X[:, None, :] - X[None, :, :]
    dG = G[:, None, :] - G[None, :, :]
    rhs = F[None, :] + np.einsum("jk,ijk->ij", G, dX)
    if math.isfinite(L):
        rhs = rhs + np.einsum("ijk,ijk->ij", dG, dG) / (2 * L)
        W = dX - dG / L
        rhs = rhs + mu / (2 * (1 - mu / L)) * np.einsum("ijk,ijk->ij", W, W)
    else:
        rhs = rhs + mu / 2 * np.einsum("ijk,ijk->ij", dX, dX)
    viol = rhs - F[:, None]
    np.fill_diagonal(viol, -np.inf)
    return float(viol.max()) if len(F) > 1 else 0.0


def _leaf_class(f: Any) -> tuple[float, float]:
    """(μ, L) of a PEPit leaf function of the classes used here."""
    from PEPit.functions import (
        ConvexFunction,
        SmoothConvexFunction,
        SmoothFunction,
        SmoothStronglyConvexFunction,
        StronglyConvexFunction,
    )

    if isinstance(f, SmoothStronglyConvexFunction):
        return float(f.mu), float(f.L)
    if isinstance(f, SmoothConvexFunction):
        return 0.0, float(f.L)
    if isinstance(f, SmoothFunction):
        return -float(f.L), float(f.L)
    if isinstance(f, StronglyConvexFunction):
        return float(f.mu), math.inf
    if isinstance(f, ConvexFunction):
        return 0.0, math.inf
    raise TypeError(f"no interpolation conditions known here for {type(f).__name__}")


def _data(f: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The solved PEP's points, gradients and values of ``f`` (leaf or combination): (k, dim), (k, dim), (k,)."""
    pts = f.list_of_points
    return (
        np.array([p.eval() for p, _, _ in pts]),
        np.array([g.eval() for _, g, _ in pts]),
        np.array([float(v.eval()) for _, _, v in pts]),
    )


def _extract(pb: Any, metric: Any, classes: list) -> tuple[float, float]:
    """(lower, class_violation) of a solved PEP: the metric at the primal solution and the largest violation of
    the interpolation conditions of each (function, μ, L) in ``classes``; lower is nan when that violation
    exceeds CLASS_ATOL (the extracted instance is then not in the class, so it proves nothing)."""
    viol = max(interpolation_violation(*_data(f), mu=mu, L=L) for f, mu, L in classes)
    lower = float(metric.eval())
    return (lower if viol <= CLASS_ATOL else math.nan), viol


def _leaves(*fs: Any) -> list:
    return [(f, *_leaf_class(f)) for f in fs]


#: Clarabel settings tried in turn: its defaults, then without Ruiz equilibration (on the ill-scaled PEP SDPs
#: of several rounds the equilibrated problem stalls at "almost solved"; unscaled it reaches "optimal"), then with a
#: larger static regularization (the quadratic class's pairwise symmetry equalities are linearly dependent in the
#: federated error PEP, and Clarabel's KKT factorization fails at the default 1e-8: K = 2, T = 2, κ₀ = 10 then
#: reaches "optimal", 0.49412463 against SCS's 0.49412469)
CLARABEL_ATTEMPTS: tuple[dict[str, Any], ...] = (
    {},
    {"equilibrate_enable": False, "max_iter": 1000},
    {"static_regularization_constant": 1e-7},
)
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


def _resolve(problem: Any, **solver_kwargs: Any) -> float | None:
    """Re-solve a PEP that PEPit has already turned into a cvxpy problem, with other solver settings, and do the
    reading-back PEPit's ``PEP._solve_with_wrapper`` does after its solve (dual values into the constraints, the
    points' values, the dual objective from ``check_feasibility``, which is what ``PEP.solve`` returns).

    ``problem.solve`` would rebuild the cvxpy problem from PEPit's expressions and cvxpy would compile it again;
    here the same ``cvxpy.Problem`` is solved again, and cvxpy reuses its compiled conic data for the same solver
    (another solver compiles once for itself). The conic data are those a rebuilt problem would give and the
    solver starts afresh, so the values are those of ``problem.solve(wrapper=..., verbose=0, **solver_kwargs)``. Returns None where the solver
    reports no value (unbounded), as PEPit does; solver errors propagate."""
    wrapper = problem.wrapper
    for constraint in problem._list_of_prepared_constraints:  # as PEPit: no stale duals survive a solve
        constraint._dual_variable_value = 0.0
    for psd in problem._list_of_prepared_psd:
        psd._dual_variable_value = np.zeros_like(psd.matrix_of_expressions)
    # warm_start=False: cvxpy's default would hand Clarabel its previous solver object to update(), whose
    # answer differs from a fresh solver's in the 9th digit; a fresh one gives exactly a rebuilt problem's values
    _, _, wc_value = wrapper.solve(warm_start=False, **solver_kwargs)
    if wc_value is None:
        return None
    problem.residual = wrapper.assign_dual_values()
    G_value, F_value = wrapper.get_primal_variables()
    problem.G_value, problem.F_value = G_value, F_value
    problem._eval_points_and_function_values(F_value, G_value, verbose=0)
    return problem.check_feasibility(wc_value, verbose=0)


def _pepit_quietly(call: Any) -> Any:
    """``call()`` with stdout captured: PEPit prints its duality-gap warning ("the duality gap seems surprisingly
    large ...", ``PEP.check_feasibility``) on stdout whatever ``verbose`` says, which corrupted a command's
    ``--json -``. The text comes back as a RuntimeWarning (stderr, or a claim's notes); whether the value is
    reliable is decided by the solver policy here (Clarabel's status, the SCS cross-check), not by that print.

    >>> import warnings
    >>> def pepit_like():
    ...     print("(PEPit) Warning: the gap")
    ...     print("        is large.")
    ...     return 1.5
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _pepit_quietly(pepit_like)
    1.5
    >>> str(caught[0].message)
    '(PEPit) Warning: the gap is large.'
    """
    import contextlib
    import io
    import re
    import warnings

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            return call()
    finally:
        text = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", printed.getvalue()).split())
        if text:
            warnings.warn(text, RuntimeWarning, stacklevel=3)


def _solve_detail(problem: Any, *, wrapper: str = "cvxpy") -> tuple[float, float, str]:
    """:func:`_solve`, also returning which solver(s) produced the value (``"CLARABEL"`` or
    ``"CLARABEL+SCS"``). PEPit builds the cvxpy problem once (the first attempt); every later attempt and the
    SCS cross-check re-solve that same problem (:func:`_resolve`), so cvxpy compiles it once per solver."""
    import warnings

    start = time.perf_counter()
    value, status = None, None
    # safe_mode looks the wrapper's name up as a Python package; a registered wrapper is no package
    extra = {} if wrapper == "cvxpy" else {"safe_mode": False}
    before = getattr(problem, "wrapper", None)
    built = None  # PEPit's wrapper holding this call's cvxpy problem

    def attempt_with(**solver_kwargs: Any) -> float | None:
        nonlocal built
        if built is not None:
            return _pepit_quietly(lambda: _resolve(problem, **solver_kwargs))
        try:
            return _pepit_quietly(lambda: problem.solve(wrapper=wrapper, verbose=0, **extra, **solver_kwargs))
        finally:  # built even when the solver then failed
            w = getattr(problem, "wrapper", None)
            if w is not None and w is not before and getattr(w, "prob", None) is not None:
                built = w

    for settings in CLARABEL_ATTEMPTS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # cvxpy's "may be inaccurate": handled below
            try:
                attempt = attempt_with(solver=SOLVER, **settings)
            except Exception:  # cvxpy's SolverError (Clarabel NumericalError)
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
                other = attempt_with(solver="SCS", eps_abs=CROSS_CHECK_EPS, eps_rel=CROSS_CHECK_EPS, max_iters=100_000)
                other_status = problem.wrapper.prob.status
            except Exception:
                other, other_status = None, "failed"
        if value is None and other is None:
            raise RuntimeError(
                "the PEP has no finite worst case (unbounded or infeasible SDP), or no solver could solve it"
            )
        if (
            value is None
            or other is None
            or other_status != "optimal"
            or abs(other - value) > CROSS_CHECK_RTOL * max(abs(value), 1e-12)
        ):
            raise RuntimeError(
                f"the PEP's SDP was not solved reliably: {SOLVER} {status} ({value}), SCS {other_status} ({other})"
            )
        value = max(float(value), float(other)) + abs(float(value) - float(other))
        solver = f"{SOLVER}+SCS"
    assert value is not None  # solved to "optimal", or cross-checked above (else raised)
    return float(value), time.perf_counter() - start, solver


def _convex_leaf(problem: Any, mu: float):
    from PEPit.functions import ConvexFunction, StronglyConvexFunction

    # reuse_gradient: the clients are differentiable (one gradient per point), as the theorems assume
    if mu > 0:
        return problem.declare_function(StronglyConvexFunction, mu=mu, reuse_gradient=True)
    return problem.declare_function(ConvexFunction, reuse_gradient=True)


def sod_pair(problem: Any, mu: float, delta: float) -> tuple:
    r"""Two μ-convex clients under δ-SOD in a PEPit problem: (f_1, g, f_2, f) with f_1 a μ-convex leaf, g a
    δ-smooth leaf, f_2 = f_1 − 2g and f = (f_1 + f_2)/2 = f_1 − g. For n = 2, δ_A-SOD says exactly that
    g = (f_1 − f_2)/2 has a δ-Lipschitz gradient. f_2's μ-convexity is not a leaf's: impose it with
    :func:`close_sod_pair` once every point is declared.

    >>> from PEPit import PEP
    >>> f1, g, f2, f = sod_pair(PEP(), 0.5, 1.0)
    >>> type(g).__name__
    'SmoothFunction'
    """
    from PEPit.functions import SmoothFunction

    f1 = _convex_leaf(problem, mu)
    g = problem.declare_function(SmoothFunction, L=delta)
    return f1, g, f1 - 2 * g, f1 - g


def sod_start(problem: Any, mu: float, delta: float) -> tuple:
    """:func:`sod_pair`, then x* (stationary for f), f(x*) and a start x^0 with ‖x^0 − x*‖ ≤ 1: the setting of
    the S-DANE certificates. Returns (f_1, g, f_2, f, x*, f*, x^0).

    >>> from PEPit import PEP
    >>> len(sod_start(PEP(), 0.0, 1.0))
    7
    """
    f1, g, f2, f = sod_pair(problem, mu, delta)
    xs = f.stationary_point()
    x0 = problem.set_initial_point()
    problem.set_initial_condition((x0 - xs) ** 2 <= 1)
    return f1, g, f2, f, xs, f(xs), x0


def close_sod_pair(problem: Any, f1: Any, f2: Any, points: list, mu2: float) -> None:
    """Evaluate both clients of :func:`sod_pair` at ``points`` and at every point f_1 is evaluated at (so f_2's
    list is complete), then impose f_2's μ₂-convexity between every pair of its points.

    >>> from PEPit import PEP
    >>> pb = PEP(); f1, g, f2, f = sod_pair(pb, 0.0, 1.0)
    >>> close_sod_pair(pb, f1, f2, [pb.set_initial_point(), pb.set_initial_point()], 0.0)
    >>> len(f2.list_of_points)
    2
    """
    for p in list(points) + [pt for pt, _, _ in f1.list_of_points]:
        f1.gradient(p)
        f2.gradient(p)
    pts2 = f2.list_of_points
    for a_i in range(len(pts2)):
        for b_i in range(len(pts2)):
            if a_i != b_i:
                xa, ga, fa = pts2[a_i]
                xb, gb, fb = pts2[b_i]
                problem.add_constraint(fa >= fb + gb * (xa - xb) + (mu2 / 2) * (xa - xb) ** 2)


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
        pb.add_constraint((g + lam * (x - v)) ** 2 <= c * lam**2 * (x - v) ** 2)
        v = (lam * v + mu * x - g) * (1.0 / (lam + mu))
        xk.append(x)
    xbar = _weighted_average(xk, (1 + mu / lam) ** np.arange(1, K + 1))
    metric = f(xbar) - fs + (mu / 2) * (v - xs) ** 2
    pb.set_performance_metric(metric)
    value, secs = _solve(pb)
    lower, viol = _extract(pb, metric, _leaves(f))
    return PepResult(value, sdane_bound(K, lam, mu), {"K": K, "lam": lam, "mu": mu, "c": c}, secs, lower, viol)


def abs_stabilized_ppm(K: int, lam: float, c: float = 1.0) -> float:
    r"""The stabilized PPM (3) (μ = 0) on the known attaining instance f(x) = (λ/K)|x| in one dimension, x_0 = 1,
    x* = 0, each local point the farthest the relative condition ‖∇F_k(x)‖² ≤ cλ²‖x − v_k‖² admits on the
    way to the prox point: x_{k+1} = v_k − s/(λ(1 + √c)), s = λ/K. Returns f(x̄_K) − f*; at c = 1 it is
    λ/(2K), Theorem 1's bound (n = 1, D = 1), so that bound is attained. A plain loop, independent of PEPit.

    >>> abs_stabilized_ppm(4, 2.0)
    0.25
    """
    s, v, xs = lam / K, 1.0, []
    for _ in range(K):
        x = v - s / (lam * (1 + math.sqrt(c)))
        g = s * np.sign(x)
        if (g + lam * (x - v)) ** 2 > c * lam**2 * (x - v) ** 2 * (1 + 1e-12):
            raise AssertionError("the local point violates the relative accuracy condition")
        v = v - g / lam
        xs.append(x)
    return float(s * abs(np.mean(xs)))


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
        pb.add_constraint((g + lam * (xn - x)) ** 2 <= factor * lam**2 * (xn - x) ** 2)
        x = xn
        iterates.append(x)
    out = _weighted_average(iterates, np.ones(K)) if average else x
    metric = f(out) - fs
    pb.set_performance_metric(metric)
    value, secs = _solve(pb)
    lower, viol = _extract(pb, metric, _leaves(f))
    return PepResult(
        value, lam / (2 * K), {"K": K, "lam": lam, "c": c, "tighten": tighten, "average": average}, secs, lower, viol
    )


# --------------------------------------------------------------------------------------------
# two clients under δ-SOD
# --------------------------------------------------------------------------------------------


def two_client_sdane(
    R: int, lam: float, mu: float, delta: float, c: float = 0.25, accelerated: bool = False, drop: str | None = None
) -> PepResult:
    r"""Worst case of S-DANE (Theorem 1) or Acc-S-DANE (Theorem 6) with n = 2 μ-convex clients under δ-SOD.

    Clients f_1, f_2 = f_1 − 2g with g δ-smooth (so δ_A ≤ δ); f = f_1 − g; full participation; in each
    round the two local points are free subject to (6): Σ_i‖∇F_{i,r}(x_{i,r+1})‖² ≤ cλ²Σ_i‖x_{i,r+1} − c^r‖²;
    ‖x^0 − x*‖ ≤ 1. Metric and bound: S-DANE: f(x̄^R) − f* + μ/2‖v^R − x*‖² against
    μ/(2[(1+μ/λ)^R − 1]); Acc-S-DANE: f(x^R) − f* + μ/2‖v^R − x*‖² against 1/(2A_R).

    The worst case found is replayed on the real driver (:func:`~fedtheory.algorithms.dane.run_sdane` /
    :func:`~fedtheory.algorithms.dane.run_acc_sdane`): the clients answer from the extracted table of points,
    gradients and values (a query anywhere else is an error, so the driver must reproduce the PEP's iterates),
    the local solver returns the extracted local points, and ``lower`` is the driver's metric once (6) holds
    and f_1, f_2 (μ-convex) and g (δ-smooth) pass :func:`interpolation_violation`. ``drop`` removes a class
    constraint from the PEP (``"client-2-strong-convexity"``: f_2 only convex, not μ-convex) — a loosened PEP
    for negative controls; its value only grows, and where the dropped constraint matters its worst case leaves
    the class, so ``lower`` is lost.

    >>> r = two_client_sdane(R=1, lam=2.0, mu=0.0, delta=1.0)
    >>> bool(r.ratio <= 1), bool(r.gap < 1e-4)
    (True, True)
    """
    if drop not in (None, "client-2-strong-convexity"):
        raise ValueError(f"drop must be None or 'client-2-strong-convexity', got drop={drop!r}")

    def free_local_points(pb: Any, f1: Any, g: Any, f2: Any, center: Any, gc: list, gS: Any) -> tuple:
        # the local points are leaves; (6) holds as a constraint on their gradients
        pts = [pb.set_initial_point(), pb.set_initial_point()]
        grads: list = []
        E: Any = None
        U: Any = None
        for fi, xi, gci in zip((f1, f2), pts, gc):
            gi = fi.gradient(xi)
            grads.append(gi)
            e = (gi - gci + gS + lam * (xi - center)) ** 2
            u = (xi - center) ** 2
            E = e if E is None else E + e
            U = u if U is None else U + u
        pb.add_constraint(E <= c * lam**2 * U)
        return pts, grads

    return sdane_pep(
        R,
        lam,
        mu,
        delta,
        c,
        accelerated,
        free_local_points,
        mu2=0.0 if drop == "client-2-strong-convexity" else mu,
        params={"drop": drop},
    )


def sdane_pep(
    R: int,
    lam: float,
    mu: float,
    delta: float,
    c: float,
    accelerated: bool,
    local: Any,
    *,
    mu2: float | None = None,
    wrapper: str = "cvxpy",
    params: dict | None = None,
) -> PepResult:
    r"""The S-DANE / Acc-S-DANE PEP over two μ-convex clients under δ-SOD (:func:`sod_start`), R rounds, with the
    local step left to ``local``: the round loop, metric, class closure (:func:`close_sod_pair`, f_2 μ₂-convex
    with μ₂ = ``mu2``, default μ), solve (:func:`_solve_detail` with ``wrapper``; the solver that produced the value
    goes to ``PepResult.solver``), interpolation check and replay on the real driver shared by
    :func:`two_client_sdane` (free local points, (6) as a constraint) and
    ``verify/_literal_peps.py``'s literal S-DANE PEP (local gradients defined by elimination);
    :func:`fedtheory.certify.federated_pep.certify_sdane` compiles its PEP and shares :func:`solve_sdane`.

    ``local(pb, f1, g, f2, center, gc, gS)`` receives the prox-centre c^r, the clients' gradients there
    [∇f_1(c^r), ∇f_2(c^r)] and ∇f(c^r); it declares the two local points x_{i,r+1} with whatever constraints its
    formulation of (6) (Σ_i‖∇F_{i,r}(x_{i,r+1})‖² ≤ cλ²Σ_i‖x_{i,r+1} − c^r‖², with
    ∇F_{i,r}(x) = ∇f_i(x) − ∇f_i(c^r) + ∇f(c^r) + λ(x − c^r)) needs, and returns (points, gradients ∇f_i there).

    Hypotheses R ≥ 1, λ > 0, μ ≥ 0, δ > 0, c ≥ 0: a ValueError names the one violated.

    >>> sdane_pep(1, 2.0, 0.0, 1.0, -0.1, False, None)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis c >= 0 violated: c=-0.1 (the relative accuracy of condition (6))
    """
    from PEPit import PEP

    from fedtheory.algorithms.dane import acc_coefficient

    R = check_sdane(R, lam, mu, delta, c)
    pb = PEP()
    f1, g, f2, f, xs, fs, x0 = sod_start(pb, mu, delta)
    x, v = x0, x0
    A, B = 0.0, 1.0
    iterates, vs, locals_ = [], [], []
    for _ in range(R):
        if accelerated:
            a = acc_coefficient(A, B, lam)
            center = (A / (A + a)) * x + (a / (A + a)) * v if A > 0 else v
        else:
            center = v
        gc = [f1.gradient(center), f2.gradient(center)]
        gS = 0.5 * (gc[0] + gc[1])
        pts, grads = local(pb, f1, g, f2, center, gc, gS)
        locals_.append(pts)
        xbar = 0.5 * (pts[0] + pts[1])
        gbar = 0.5 * (grads[0] + grads[1])
        if accelerated:
            v = (B * v + mu * a * xbar - a * gbar) * (1.0 / (B + mu * a))
            A, B = A + a, B + mu * a
        else:
            v = (lam * v + mu * xbar - gbar) * (1.0 / (lam + mu))
        x = xbar
        iterates.append(xbar)
        vs.append(v)
    out = x if accelerated else _weighted_average(iterates, (1 + mu / lam) ** np.arange(1, R + 1))
    metric = f(out) - fs + (mu / 2) * (v - xs) ** 2
    close_sod_pair(pb, f1, f2, [xs] + iterates + vs + [out], mu if mu2 is None else mu2)
    pb.set_performance_metric(metric)
    return solve_sdane(
        pb, f1, g, f2, xs, x0, locals_, R, lam, mu, delta, c, accelerated, wrapper=wrapper, params=params
    )


def check_sdane(R: Any, lam: float, mu: float, delta: float, c: float) -> int:
    """R as an int, after the S-DANE PEPs' hypotheses R ≥ 1, λ > 0, μ ≥ 0, δ > 0, c ≥ 0 (ValueError naming the one
    violated).

    >>> check_sdane(2, 1.0, 0.0, 1.0, 0.0)
    2
    """
    if isinstance(R, bool) or int(R) != R or R < 1:
        raise ValueError(f"R must be an integer >= 1, got {R!r}")
    if not (lam > 0 and mu >= 0 and delta > 0):
        raise ValueError(f"hypothesis lam > 0, mu >= 0, delta > 0 violated: lam={lam!r}, mu={mu!r}, delta={delta!r}")
    if not c >= 0:
        raise ValueError(f"hypothesis c >= 0 violated: c={c!r} (the relative accuracy of condition (6))")
    return int(R)


def solve_sdane(
    pb: Any,
    f1: Any,
    g: Any,
    f2: Any,
    xs: Any,
    x0: Any,
    local_points: list,
    R: int,
    lam: float,
    mu: float,
    delta: float,
    c: float,
    accelerated: bool,
    *,
    wrapper: str = "cvxpy",
    params: dict | None = None,
) -> PepResult:
    """Solve a built S-DANE / Acc-S-DANE PEP over the δ-SOD pair (f_1, g, f_2 = f_1 − 2g; metric already set) and
    report it as a :class:`PepResult`: the value (:func:`_solve_detail` with ``wrapper``), the paper's bound, the
    class check of the worst case (f_1, f_2 μ-convex, g δ-smooth) and its replay on the real driver with the
    PEP's local points (``local_points``: per round, the two clients' PEPit points) as ``lower``. Shared by
    :func:`sdane_pep` and :func:`fedtheory.certify.federated_pep.certify_sdane` (whose PEP
    :func:`fedtheory.methods.pep.build_pep` compiles)."""
    value, secs, solver = _solve_detail(pb, wrapper=wrapper)
    bound = acc_sdane_bound(R, lam, mu) if accelerated else sdane_bound(R, lam, mu)
    viol = max(
        interpolation_violation(*_data(f1), mu=mu),
        interpolation_violation(*_data(f2), mu=mu),
        interpolation_violation(*_data(g), mu=-delta, L=delta),
    )
    replay = _replay_two_client(
        f1, f2, xs, x0, [[p.eval() for p in pts] for pts in local_points], R, lam, mu, c, accelerated
    )
    ok = viol <= CLASS_ATOL and replay["test_violation"] <= TEST_ATOL
    return PepResult(
        value,
        bound,
        {"R": R, "lam": lam, "mu": mu, "delta": delta, "c": c, "accelerated": accelerated, "n": 2, **(params or {})},
        secs,
        replay["metric"] if ok else math.nan,
        viol,
        replay,
        solver,
    )


class _TableClients(ClientOracles):
    """Client oracles answering from a finite table of (point, gradient, value) per client: the extracted PEP
    worst case. A query at a point not in the table raises (the driver left the PEP's trajectory)."""

    name = "pep-table"

    def __init__(self, tables: list, x_star: np.ndarray, mu: float) -> None:
        self.tables = tables
        self.n, self.d = len(tables), len(x_star)
        self.L_i = np.full(self.n, math.inf)
        self.mu_i = np.full(self.n, float(mu))
        self.noise = 0.0
        self._xs = np.asarray(x_star, dtype=np.float64)
        scale = max(float(np.abs(t[0]).max()) for t in tables) + 1.0
        self.tol = 1e-9 * scale

    def _lookup(self, i: int, x: np.ndarray) -> int:
        X = self.tables[i][0]
        dist = np.linalg.norm(X - x, axis=1)
        k = int(np.argmin(dist))
        if dist[k] > self.tol:
            raise ValueError(
                f"the driver queried client {i} at a point the PEP instance does not define "
                f"(nearest at distance {dist[k]:.3g})"
            )
        return k

    def _clients(self, clients: Any, k: int) -> np.ndarray:
        return np.arange(self.n) if clients is None else np.asarray(clients, dtype=np.int64).ravel()

    def grads(self, X: Any, clients: Any = None) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        idx = self._clients(clients, X.shape[0])
        return np.stack([self.tables[i][1][self._lookup(i, x)] for i, x in zip(idx, X)])

    def client_losses(self, X: Any, clients: Any = None) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        idx = self._clients(clients, X.shape[0])
        return np.array([self.tables[i][2][self._lookup(i, x)] for i, x in zip(idx, X)])

    def grad(self, x: Any) -> np.ndarray:
        return self.grads(np.broadcast_to(x, (self.n, self.d)).copy()).mean(axis=0)

    def losses(self, X: Any) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        return np.array([np.mean(self.client_losses(np.broadcast_to(x, (self.n, self.d)).copy())) for x in X])

    def prox(self, C: Any, lin: Any, lam: float, clients: Any = None) -> None:
        return None

    def x_star(self) -> np.ndarray:
        return self._xs

    def f_star(self) -> float:
        return float(self.losses(self._xs[None])[0])

    def gaps(self, X: Any) -> np.ndarray:
        return self.losses(X) - self.f_star()


@dataclass
class _GivenLocalPoints:
    """A local solver returning given points (round r: ``points[r]``, one row per client)."""

    points: list
    name = "pep-worst-case"

    def solve(self, sub: Any, test: Any = None):
        from fedtheory.algorithms.local_solvers import _finish

        X = np.asarray(self.points[sub.r], dtype=np.float64)[sub.clients]
        return _finish(sub, X, sub.oracles.grads(X, sub.clients), np.zeros(sub.clients.size, dtype=np.int64), test)


def _replay_two_client(
    f1: Any, f2: Any, xs: Any, x0: Any, local_points: list, R: int, lam: float, mu: float, c: float, accelerated: bool
) -> dict:
    """Re-run the real S-DANE / Acc-S-DANE driver on the extracted two-client worst case (see two_client_sdane)."""
    from fedtheory.algorithms.dane import run_acc_sdane, run_sdane

    orc = _TableClients([_data(f1), _data(f2)], xs.eval(), mu)
    run = run_acc_sdane if accelerated else run_sdane
    try:
        h = run(orc, x0.eval(), R, lam=lam, mu=mu, solver=_GivenLocalPoints(local_points), test=None)
    except ValueError as exc:
        return {"metric": math.nan, "test_violation": math.inf, "error": str(exc)}
    xs_ = orc.x_star()
    assert h.v is not None  # the run records its prox centres v (the metric reads them)
    if accelerated:
        out_gap = float(h.gap[-1])
    else:
        out_gap = float(orc.gaps(h.weighted_average(mu)[-1][None])[0])
    metric = out_gap + mu / 2 * float(np.sum((h.v[-1] - xs_) ** 2))
    # on the SDP's scale (data O(1), the largest right side of (6) in the run): the solver holds each constraint to
    # ~1e-8 of that scale, not of a late round's small right side
    rhs = c * lam**2 * h.test_rhs
    test_violation = float(np.max(h.test_lhs - rhs) / max(1.0, float(np.max(rhs))))
    return {"metric": metric, "test_violation": test_violation, "rounds": h.rounds, "method": h.method}


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
    metric = f(x) - fs + (mu / 2) * (v - xs) ** 2
    pb.set_performance_metric(metric)
    value, secs = _solve(pb)
    lower, viol = _extract(pb, metric, _leaves(f))
    return PepResult(value, 1.0 / (2 * A), {"R": R, "L": L, "mu": mu}, secs, lower, viol)


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
    metric = f.gradient(x) ** 2
    pb.set_performance_metric(metric)
    value, secs = _solve(pb)
    lower, viol = _extract(pb, metric, _leaves(f))
    return PepResult(value, (L / (N + 1)) ** 2, {"N": N, "L": L}, secs, lower, viol)


def huber_gd_gradient_norm(N: int, L: float = 1.0) -> float:
    r"""‖∇f(x_N)‖² of gradient descent with step 1/L from x_0 = 1 on the known attaining instance, the Huber
    function f(x) = a|x| − a²/(2L) (|x| ≥ a/L), Lx²/2 (|x| ≤ a/L), a = L/(N+1) (convex, L-smooth, x* = 0): every
    step moves by a/L and x_N = a/L sits on the kink, so ‖∇f(x_N)‖² = (L/(N+1))², Lemma 20's bound. A plain
    loop, independent of PEPit.

    >>> huber_gd_gradient_norm(3, 2.0)
    0.25
    """
    a = L / (N + 1)
    grad = lambda x: a * np.sign(x) if abs(x) >= a / L else L * x  # noqa: E731
    x = 1.0
    for _ in range(N):
        x = x - grad(x) / L
    return float(grad(x) ** 2)


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
    metric = f.gradient(x) ** 2
    pb.set_performance_metric(metric)
    value, secs = _solve(pb)
    lower, viol = _extract(pb, metric, _leaves(f))
    return PepResult(value, (FastGradNorm.gradient_bound_factor(K) * L) ** 2, {"K": K, "L": L}, secs, lower, viol)


def cocoercivity_gap(L: float = 1.0, scale: float = 1.0) -> PepResult:
    r"""Worst value of f(x) + ⟨∇f(x), y − x⟩ + scale·‖∇f(x) − ∇f(y)‖²/(2L) − f(y) over convex L-smooth f with
    ‖x − y‖ ≤ 1: Lemma 9 (B.5) says it is ≤ 0 at scale 1 (``bound`` 0; read ``value``), attained (= 0) by
    f = L/2‖·‖², for which any scale > 1 makes it (scale − 1)L/2·‖x − y‖² > 0.
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
    metric = fx + gx * (y - x) + (scale / (2 * L)) * (gx - gy) ** 2 - fy
    pb.set_performance_metric(metric)
    value, secs = _solve(pb)
    lower, viol = _extract(pb, metric, _leaves(f))
    return PepResult(value, 0.0, {"L": L, "scale": scale}, secs, lower, viol)
