r"""Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization*
(arXiv:2407.07084, NeurIPS 2024) — every numbered statement as a claim.

The converted text of the paper lost all of its mathematics; the statements checked here are the
*rebuilt* ones (statement structure from the text, formulas rebuilt from the proofs' remaining words
and re-derived). Every claim's notes say which rebuilt formula it checks and whether the check confirms
or contradicts it; a refutation of a rebuilt formula is a finding against the rebuild, not the paper.

Setting: f = (1/n)Σ f_i (a weighted federation enters through its uniform view ñ p_i f_i), f_i μ-convex;
δ_s-SOD (Definition 1), Δ_s-ED (Definition 4), ζ²-BGV (Definition 3). Algorithms 1–3 and DANE live in
:mod:`fedtheory.algorithms.dane`, the local solvers in :mod:`fedtheory.algorithms.local_solvers`, the
PEP certificates in :mod:`fedtheory.certify.pep`, the complexities in :mod:`fedtheory.symbolic.complexity`.

This module holds the shared helpers, the definitions, Lemmas 9–14 and Table 1; the other claims live in the
package's other modules (which load this one for the helpers), the inventory in its ``__init__.py``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

from fedtheory.certify.params import Ball, Box, Product, Spectrum, quadratic_instance_param
from fedtheory.claims.probing import probe_by_tier
from fedtheory.claims.controls import tightened_bound
from fedtheory.claims.core import Control, claim
from fedtheory.problems.clients import client_oracles
from fedtheory.problems.dissimilarity import (
    Delta_s,
    delta_A,
    delta_s,
    delta_tilde,
    gradient_variance,
    subsets,
    uniform_hessians,
    zeta_sq,
)
from fedtheory.problems.finite_sum import LogisticFederation
from fedtheory.problems.quadratic import QuadraticFederation, make_quadratic
from fedtheory.symbolic import complexity as cx

EPS = float(np.finfo(np.float64).eps)


# --------------------------------------------------------------------------------------------
# shared helpers (the package's other modules load this one for them)
# --------------------------------------------------------------------------------------------


def random_federation(rng, *, n=None, d=None, mu=None, L=None, frac=None, weights="random", C=3.0, target=True):
    """A random non-commuting federated quadratic with exact μ (before rescaling), L and, with ``target``,
    δ_A = frac·(L − μ)/2 exactly (otherwise whatever the random rotations give: cheaper)."""
    n = int(rng.integers(2, 6)) if n is None else n
    d = int(rng.integers(3, 7)) if d is None else d
    mu = float(10 ** rng.uniform(-3, 0)) if mu is None else mu
    L = float(10 ** rng.uniform(0.5, 2.5)) if L is None else L
    frac = float(rng.uniform(0.05, 0.9)) if frac is None else frac
    for _ in range(8):
        try:
            return make_quadratic(
                n, d, mu=mu, L=L, delta_A=frac * (L - mu) / 2 if target else None, C=C, weights=weights, seed=rng
            )
        except ValueError:  # the generator's path cannot reach this δ_A for this draw: aim lower
            frac *= 0.5
    raise ValueError(f"no federation with n={n}, d={d} reached delta_A = {frac:.3g}·(L − μ)/2")


def federation_param(n: int, d: int, *, L=(2.0, 300.0), weights="random"):
    """Probe parameterization: a federated quadratic (μ = 1 attained, L in a range, unequal weights, rotations)
    and an initial point in the ball of radius 5; decodes to (problem, x0, extra)."""
    return Product(
        inst=quadratic_instance_param(n=n, d=d, mu=1.0, L=L, C=(0.5, 5.0), K=1, weights=weights),
        x0=Ball(d, 5.0),
        w=Box(-1.0, 1.0, shape=3),
        frac=Box(0.5, 1.0),
    )


def float_slack(orc, x0, rounds: int) -> float:
    """Absolute float64 error allowed on f(x) − f* and ‖x − x*‖² terms after ``rounds`` rounds:
    rounds·d·eps·(L + 1)·(‖x0‖ + ‖x*‖ + 1)², ×100 margin (iterates carry O(eps) relative error per round)."""
    scale = (np.linalg.norm(x0) + np.linalg.norm(orc.x_star()) + 1.0) ** 2
    return 100 * (rounds + 1) * orc.d * EPS * (orc.L + 1.0) * scale


def sdane_ratios(orc, h, x0, mu: float, lam: float) -> np.ndarray:
    """Theorem 1 per round R: [f(x̄^R) − f* + μ/2‖v^R − x*‖² − slack] / (μD²/(2[(1+μ/λ)^R − 1])), rounds where the
    bound is above 10⁶·slack."""
    xs = orc.x_star()
    D2 = float(np.sum((x0 - xs) ** 2))
    R = np.arange(1, h.rounds + 1)
    xbar = h.weighted_average(mu)
    lhs = orc.gaps(xbar) + mu / 2 * np.sum((h.v[1:] - xs) ** 2, axis=1)
    rhs = np.array([cx_bound(r, lam, mu, D2) for r in R])
    slack = float_slack(orc, x0, h.rounds)
    use = rhs >= 1e6 * slack
    return ((lhs - slack) / rhs)[use]


def near_attaining_federation(dA: float):
    """(q, x0): two clients sharing the eigenpair (1, e_1) and differing on e_2 by ±δ_A (δ_A = ``dA``, μ = 1), x* = 0,
    x^0 = 5e_1. Along e_1 the clients agree, so an exact round contracts the error by exactly λ/(λ + 1): the instance
    the theorems' checks use to come close to their bounds (and their controls' basis)."""
    q = QuadraticFederation(A=[np.diag([1.0, 1.0 + 2 * dA]), np.diag([1.0, 1.0])], c=np.zeros((2, 2)), p=[0.5, 0.5])
    return q, np.array([5.0, 0.0])


def cx_bound(R: int, lam: float, mu: float, D2: float) -> float:
    """μD²/(2[(1+μ/λ)^R − 1]) (λD²/(2R) at μ = 0), computed with expm1/log1p."""
    return lam * D2 / (2 * R) if mu == 0 else mu * D2 / (2 * math.expm1(R * math.log1p(mu / lam)))


def acc_ratios(orc, h, x0, mu: float) -> np.ndarray:
    """Theorem 6 per round: [A_R(f(x^R) − f*) + B_R/2‖v^R − x*‖² − slack·A_R] / (D²/2)."""
    xs = orc.x_star()
    D2 = float(np.sum((x0 - xs) ** 2))
    A, B = h.A[1:], h.B[1:]
    lhs = A * orc.gaps(h.x[1:]) + B / 2 * np.sum((h.v[1:] - xs) ** 2, axis=1)
    slack = float_slack(orc, x0, h.rounds) * (A + B)
    return (lhs - slack) / (D2 / 2)


# --------------------------------------------------------------------------------------------
# Definition 1 (δ_s-SOD)
# --------------------------------------------------------------------------------------------


def _sod_ratio(orc, S, x, y) -> float:
    Gx = orc.grads(np.broadcast_to(x, (len(S), orc.d)).copy(), S)
    Gy = orc.grads(np.broadcast_to(y, (len(S), orc.d)).copy(), S)
    D = (Gx - Gx.mean(0)) - (Gy - Gy.mean(0))
    return math.sqrt(float(np.mean(np.einsum("ij,ij->i", D, D)))) / float(np.linalg.norm(x - y))


@claim(
    id="sdane/definition-1/exact-quadratic",
    ref="Definition 1",
    title="δ_s-SOD of quadratics: the library's δ_s is the smallest constant in (5), attained",
    statement=r"Definition 1: $f_1..f_n$ have $\delta_s$-SOD of size $s$ if for all $x,y$ and all $S\in\binom{[n]}{s}$, "
    r"$\frac1s\sum_{i\in S}\|\nabla h_i^S(x)-\nabla h_i^S(y)\|^2\le\delta_s^2\|x-y\|^2$ (5), $h_i^S=f_S-f_i$. "
    r"For quadratics $f_i=\frac12(x-c_i)^\top A_i(x-c_i)$ the smallest such $\delta_s$ is "
    r"$\max_S\sqrt{\lambda_{\max}(\frac1s\sum_{i\in S}(A_i-A_S)^2)}$.",
    kind="numeric",
    controls=[
        Control(
            "delta-0.999",
            "δ_s stated as 0.999× the formula: false, the top eigenvector of the maximizing "
            "subset attains the formula's value",
            {"delta_scale": 0.999},
        )
    ],
)
def definition_1_exact(ctx):
    """Random pairs never exceed the library's δ_s (gradients only, an independent path); the top eigenvector
    of the maximizing subset attains it; δ_1 = 0 and δ_n = δ_A of QuadraticFederation."""
    rng = ctx.rng
    worst_over, worst_attain, checks = 0.0, 0.0, 0
    for _ in range(60 if ctx.full else 20):
        q = random_federation(rng, n=int(rng.integers(2, 6)))
        orc = client_oracles(q)
        for s in range(1, q.n + 1):
            ds = delta_s(q, s) * ctx.param("delta_scale", 1.0)
            if s == 1 and ds != 0.0:
                return ctx.refuted(measured={"delta_1": ds}, notes="δ_1 must be 0")
            for _ in range(6):
                S = np.sort(rng.choice(q.n, size=s, replace=False))
                x, y = rng.normal(size=q.d) * 3, rng.normal(size=q.d) * 3
                r = _sod_ratio(orc, S, x, y)
                worst_over = max(worst_over, r / ds - 1 if ds > 0 else r)
                checks += 1
            if ds > 0:  # attainment: top eigenvector of the maximizing subset
                A = uniform_hessians(q)
                best, arg = -1.0, None
                for S in subsets(q.n, s):
                    D = A[S] - A[S].mean(0)
                    M = np.einsum("sij,sjk->ik", D, D) / s
                    w, V = np.linalg.eigh(0.5 * (M + M.T))
                    if w[-1] > best:
                        best, arg = w[-1], (S, V[:, -1])
                S, u = arg
                x = rng.normal(size=q.d)
                worst_attain = max(worst_attain, abs(_sod_ratio(orc, S, x + u, x) / ds - 1))
        dA_lib = QuadraticFederation(A=uniform_hessians(q), c=q.c, p=np.full(q.n, 1 / q.n)).delta_A()
        if abs(delta_s(q, q.n) - dA_lib) > 1e-12 * max(dA_lib, 1):
            return ctx.refuted(measured={"delta_n": delta_s(q, q.n), "delta_A": dA_lib}, notes="δ_n ≠ δ_A")
    tol = 1e-9
    ok = worst_over <= tol and worst_attain <= tol
    return ctx.decide(
        ok,
        measured={"worst_ratio_minus_1": worst_over, "attainment_error": worst_attain, "pairs": checks},
        tolerance={
            "relative": tol,
            "why": "gradient differences of O(1) vectors in float64 (d ≤ 6), "
            "compared with an eigenvalue: ~1e-13 expected, 1e-9 allowed",
        },
        notes="Confirms the rebuilt formulas δ_A² = λ_max((1/n)Σ(A_i−Ā)²), δ_1 = 0, δ_n = δ_A (rebuild §1 [D]). "
        "Unequal weights enter through the uniform view n p_i A_i.",
    )


def _nonconvex_spectrum_param(n, d):
    """Symmetric clients with spectra in [−L, L] (L-smooth, not convex), L attained by client 0."""

    def build(s):
        lam = np.stack([s["lam"][f"l{i}"] for i in range(n)])
        U = np.stack([s["U"][f"U{i}"] for i in range(n)])
        A = (U * lam[:, None, :]) @ np.swapaxes(U, 1, 2)
        return QuadraticFederation(A=0.5 * (A + np.swapaxes(A, 1, 2)), c=np.zeros((n, d)), p=np.full(n, 1 / n)), float(
            s["L"]
        )

    from fedtheory.certify.params import Rotation

    return Product(
        L=Box(1.0, 10.0),
        U=Product({f"U{i}": Rotation(d) for i in range(n)}),
        lam=Product({f"l{i}": Spectrum(d, lambda s: -s["L"], lambda s: s["L"]) for i in range(n)}),
    ).map(build)


@claim(
    id="sdane/definition-1/properties",
    ref="Definition 1",
    title="After Definition 1: δ_1 = 0, δ_n = δ_A; L-smooth ⇒ δ_s ≤ 2L; convex and L-smooth ⇒ δ_s ≤ L; the Hessian "
    "condition is sufficient",
    statement=r"Clearly $\delta_1=0$ and $\delta_n=\delta_A$. If each $f_i$ is $L$-smooth then $\delta_s\le2L$; if also convex, "
    r"$\delta_s\le L$. For $C^2$ functions, $\frac1s\sum_{i\in S}\|\nabla^2f_i(x)-\nabla^2f_S(x)\|^2\le\delta_s^2$ "
    r"for all $x$ is sufficient for (5).",
    kind="probe",
    controls=[
        Control(
            "convex-constant-0.45",
            "δ_s ≤ 0.45L for convex L-smooth clients: false, A_1 = diag(μ, L), "
            "A_2 = diag(L, μ) give δ_2 = (L − μ)/2, above 0.45L once L > 10μ (L reaches 100μ in the search)",
            {"convex_constant": 0.45},
        )
    ],
)
def definition_1_properties(ctx):
    rng = ctx.rng
    # convex: probe max δ_s / L over quadratic instances (spectra in [1, L], both attained)
    n, d = 4, 3

    def convex_violation(inst):
        problem = inst[0]
        orc = client_oracles(problem)
        return max(delta_s(problem, s) for s in range(2, n + 1)) / (ctx.param("convex_constant", 1.0) * orc.L)

    P = quadratic_instance_param(n=n, d=d, mu=1.0, L=(1.5, 100.0), K=1, weights="random")
    conv = probe_by_tier(
        ctx, convex_violation, P, seed=rng, n_random=(40, 200), n_starts=(2, 6), maxiter=(60, 300), target=1.0
    )
    Pn = _nonconvex_spectrum_param(n, d)
    nonc = probe_by_tier(
        ctx,
        lambda inst: max(delta_s(inst[0], s) for s in range(2, n + 1)) / (2 * inst[1]),
        Pn,
        seed=rng,
        n_random=(40, 200),
        n_starts=(2, 6),
        maxiter=(60, 300),
        target=1.0,
    )
    # sufficient Hessian condition on logistic clients: local SOD ratio between x, y ≤ max over the segment of
    # sqrt((1/s)Σ‖H_i − H_S‖₂²) (the mean-value integral is at most that maximum; 65 points on the segment)
    worst_hess = 0.0
    for _ in range(8 if not ctx.full else 40):
        fed = LogisticFederation.random(4, [15, 25, 30, 40], 3, heterogeneity=1.5, l2=1e-2, seed=rng)
        orc = client_oracles(fed)
        x, y = rng.normal(size=3) * 2, rng.normal(size=3) * 2
        S = np.arange(4)
        ratio = _sod_ratio(orc, S, x, y)
        vals = []
        for t in np.linspace(0, 1, 65):
            z = (1 - t) * x + t * y
            u = np.einsum("nmd,d->nm", fed.a, z)
            sig = 1 / (1 + np.exp(-np.abs(u)))
            w = sig * (1 - sig) * fed.mask / fed.counts[:, None] * orc.scale[:, None]
            H = np.einsum("nm,nmd,nme->nde", w, fed.a, fed.a)
            Dh = H - H.mean(0)
            vals.append(math.sqrt(np.mean(np.linalg.norm(Dh, ord=2, axis=(1, 2)) ** 2)))
        worst_hess = max(worst_hess, ratio / max(vals))
    ok = conv.worst_value <= 1 and nonc.worst_value <= 1 and worst_hess <= 1 + 1e-3
    return ctx.decide(
        ok,
        measured={
            "worst_delta_over_L_convex": conv.worst_value,
            "worst_delta_over_2L_smooth": nonc.worst_value,
            "worst_sod_over_hessian_bound_logistic": worst_hess,
            "probe_evaluations": conv.n_evaluations + nonc.n_evaluations,
        },
        tolerance={"hessian": "1e-3 relative: the bound's maximum is taken over 65 points of the segment"},
        notes="Confirms the rebuilt remarks after Definition 1 (rebuild §1). Sharper facts seen: convex "
        "quadratics with spectra in [μ, L] have δ_s ≤ (L − μ)/2 (ratio ≤ 0.5), and even non-convex "
        "L-smooth quadratics have δ_s ≤ L (the squared deviations of matrices with spectra in [−L, L] "
        "average to at most L²), so 2L is loose for them. δ_1 = 0 and δ_n = δ_A are checked in "
        "sdane/definition-1/exact-quadratic.",
        counterexample=None if ok else {"convex": conv.to_json(), "nonconvex": nonc.to_json()},
    )


# --------------------------------------------------------------------------------------------
# Definition 3 (ζ²-BGV) and Definition 4 (Δ_s-ED)
# --------------------------------------------------------------------------------------------


@claim(
    id="sdane/definition-3",
    ref="Definition 3",
    title="ζ²-BGV: exact for shared-Hessian quadratics, infinite for heterogeneous Hessians, finite for logistic clients",
    statement=r"Definition 3: $f_1..f_n$ have $\zeta^2$-BGV if for all $x$, "
    r"$\frac1n\sum_{i=1}^n\|\nabla f_i(x)-\nabla f(x)\|^2\le\zeta^2$ (7).",
    kind="numeric",
    controls=[
        Control(
            "zeta-0.999",
            "ζ² of shared-Hessian quadratics stated as 0.999× the library's value: false, "
            "their gradient deviations c̄ − c_i are constant in x, so the variance equals ζ² at every x",
            {"zeta_scale": 0.999},
        )
    ],
)
def definition_3(ctx):
    rng = ctx.rng
    worst_const, grow = 0.0, []
    for _ in range(10 if not ctx.full else 50):
        n, d = int(rng.integers(2, 6)), int(rng.integers(2, 6))
        A0 = make_quadratic(1, d, mu=1.0, L=10.0, seed=rng).A[0]
        c = rng.normal(size=(n, d)) * 2
        q = QuadraticFederation(A=np.broadcast_to(A0, (n, d, d)).copy(), c=c, p=np.full(n, 1 / n))
        z2 = zeta_sq(q) * ctx.param("zeta_scale", 1.0)
        for _ in range(5):
            v = gradient_variance(q, rng.normal(size=d) * 10 ** rng.uniform(0, 4))
            worst_const = max(worst_const, abs(v / z2 - 1))
        qh = random_federation(rng)
        if not math.isinf(zeta_sq(qh)):
            return ctx.refuted(measured={"zeta_sq": zeta_sq(qh)}, notes="heterogeneous Hessians must have ζ² = inf")
        u = rng.normal(size=qh.d)
        ts = 10.0 ** np.arange(3, 7)
        grow.append(float(np.polyfit(np.log(ts), np.log([gradient_variance(qh, t * u) for t in ts]), 1)[0]))
    # logistic, balanced clients (p_i = 1/n, so the l2 terms cancel in ∇f_i − ∇f): variance bounded by
    # mean_i (‖∇ℓ_i‖ + mean_j ‖∇ℓ_j‖)², with ‖∇ℓ_i(x)‖ ≤ max_j ‖a_ij‖ (|ℓ'| ≤ 1)
    fed = LogisticFederation.random(5, 30, 3, heterogeneity=2.0, seed=rng)
    orc = client_oracles(fed)
    gmax = np.linalg.norm(fed.a, axis=2).max(axis=1)
    bound = float(np.mean((gmax + gmax.mean()) ** 2))
    unbalanced = client_oracles(LogisticFederation.random(3, [10, 20, 40], 3, seed=rng))
    u = rng.normal(size=3)
    unbalanced_growth = gradient_variance(unbalanced, 1e4 * u) / gradient_variance(unbalanced, 1e2 * u)
    far = max(gradient_variance(orc, rng.normal(size=3) * 10 ** rng.uniform(-1, 4)) for _ in range(40))
    ok = worst_const <= 1e-10 and abs(min(grow) - 2) <= 0.05 and far <= bound
    return ctx.decide(
        ok,
        measured={
            "shared_hessian_variance_minus_zeta_sq": worst_const,
            "heterogeneous_variance_growth_exponent_min": min(grow),
            "logistic_max_variance_over_bound": far / bound,
            "unbalanced_logistic_growth": unbalanced_growth,
        },
        tolerance={"relative": 1e-10, "why": "float64 on O(1e8) norms with d ≤ 5"},
        notes="ζ² is the supremum over all x: with heterogeneous Hessians the deviation is affine in x "
        "(the variance along a ray grows like t²: fitted exponent 2 for t ∈ [10³, 10⁶]), so Theorems 5/7 apply to quadratics "
        "only with shared Hessians; balanced logistic clients have bounded gradient deviations, but "
        "unbalanced ℓ2-regularized ones do not: in the uniform view n p_i f_i the regularizers "
        "n p_i l2 differ, so ∇f_i − ∇f has a term (n p_i − 1) l2 x (measured growth reported). The checks of "
        "Theorems 5/7 therefore also use the pointwise variance at the visited points, which is all "
        "the proof (Lemma 15 at x̄ = v^r) needs. Confirms the rebuilt Definition 3 (7) as the library "
        "computes it.",
    )


@claim(
    id="sdane/definition-4",
    ref="Definition 4",
    title="Δ_s-ED of quadratics: exact, attained, Δ_n = 0, Δ_s ≤ L for convex L-smooth clients",
    statement=r"Definition 4: $\|\nabla h^S(x)-\nabla h^S(y)\|\le\Delta_s\|x-y\|$ for all $x,y$, $S\in\binom{[n]}{s}$, "
    r"$h^S=f-f_S$ (8); for $C^2$ functions equivalently $\|\nabla^2f(x)-\nabla^2f_S(x)\|\le\Delta_s$; "
    r"if each $f_i$ is $L$-smooth and convex then $\Delta_s\le L$; $\Delta_n=0$.",
    kind="probe",
    controls=[
        tightened_bound(
            0.999,
            "Δ_s = max_S‖Ā − A_S‖₂",
            "the extreme eigenvector of the maximizing subset",
            {"Delta_scale": 0.999},
            name="Delta-0.999",
        )
    ],
)
def definition_4(ctx):
    from fedtheory.problems.dissimilarity import local_ed

    rng = ctx.rng
    worst_over, worst_attain = 0.0, 0.0
    for _ in range(10 if not ctx.full else 40):
        q = random_federation(rng)
        orc = client_oracles(q)
        A = uniform_hessians(q)
        if Delta_s(q, q.n) > 1e-12 * orc.L:
            return ctx.refuted(measured={"Delta_n": Delta_s(q, q.n)}, notes="Δ_n must vanish")
        for s in range(1, q.n):
            Ds = Delta_s(q, s) * ctx.param("Delta_scale", 1.0)
            for S in subsets(q.n, s):
                x, y = rng.normal(size=q.d), rng.normal(size=q.d)
                worst_over = max(worst_over, local_ed(orc, x, y, S) / Ds - 1)
            best = max(subsets(q.n, s), key=lambda S: np.abs(np.linalg.eigvalsh(A.mean(0) - A[S].mean(0))).max())
            w, V = np.linalg.eigh(A.mean(0) - A[best].mean(0))
            u = V[:, int(np.argmax(np.abs(w)))]
            worst_attain = max(worst_attain, abs(local_ed(orc, u, 0 * u, best) / Ds - 1))
    P = quadratic_instance_param(n=4, d=3, mu=1.0, L=(1.5, 100.0), K=1, weights="random")
    res = probe_by_tier(
        ctx,
        lambda inst: max(Delta_s(inst[0], s) for s in (1, 2, 3)) / client_oracles(inst[0]).L,
        P,
        seed=rng,
        n_random=(40, 200),
        n_starts=(2, 6),
        maxiter=(60, 300),
        target=1.0,
    )
    ok = worst_over <= 1e-9 and worst_attain <= 1e-9 and res.worst_value <= 1
    return ctx.decide(
        ok,
        measured={
            "worst_ratio_minus_1": worst_over,
            "attainment_error": worst_attain,
            "worst_Delta_over_L": res.worst_value,
            "probe_evaluations": res.n_evaluations,
        },
        tolerance={"relative": 1e-9},
        notes="Confirms the rebuilt Definition 4 and its remarks (rebuild §1): Δ_s = max_S ‖Ā − A_S‖₂, "
        "Δ_n = 0, Δ_s ≤ L for convex L-smooth clients (worst ratio reported).",
    )


@claim(
    id="sdane/section-3/delta-tilde",
    ref="Section 3 (before Theorem 5)",
    title="The combined measure δ̃_s = δ_s + Δ_s (rebuilt): δ̃_n = δ_A and δ̃_1 ≤ L",
    statement=r"``We work with a new second-order dissimilarity measure $\tilde\delta_s$. Note that $\tilde\delta_n=\delta_A$ "
    r"and $\tilde\delta_1\le L$'' — rebuilt as $\tilde\delta_s:=\delta_s+\Delta_s$.",
    kind="probe",
    controls=[
        Control(
            "delta-A-0.999",
            "δ̃_n = 0.999·δ_A: false, Δ_n = 0 and δ_n = δ_A exactly, so δ̃_n = δ_A > 0",
            {"delta_A_scale": 0.999},
        )
    ],
)
def delta_tilde_claim(ctx):
    rng = ctx.rng
    worst_n = 0.0
    for _ in range(10):
        q = random_federation(rng)
        worst_n = max(worst_n, abs(delta_tilde(q, q.n) / (ctx.param("delta_A_scale", 1.0) * delta_A(q)) - 1))
    P = quadratic_instance_param(n=4, d=3, mu=1.0, L=(1.5, 100.0), K=1, weights="random")
    res = probe_by_tier(
        ctx,
        lambda inst: delta_tilde(inst[0], 1) / client_oracles(inst[0]).L,
        P,
        seed=rng,
        n_random=(40, 200),
        n_starts=(2, 6),
        maxiter=60,
        target=1.0,
    )
    ok = worst_n <= 1e-10 and res.worst_value <= 1
    return ctx.decide(
        ok,
        measured={"delta_tilde_n_vs_delta_A": worst_n, "worst_delta_tilde_1_over_L": res.worst_value},
        tolerance={"relative": 1e-10},
        notes="The paper's exact combination was lost (rebuild §1, [R-L]); δ_s + Δ_s satisfies both stated facts "
        "(δ_1 = 0 and Δ_1 ≤ L), which is consistent with the rebuild. A weighting δ_s + 2Δ_s would fail "
        "δ̃_1 ≤ L whenever Δ_1 > L/2 (seen: max Δ_1/L from the probe of sdane/definition-4).",
    )


# --------------------------------------------------------------------------------------------
# Definitions 5–6 and Lemma 9 (PEP certificates and numeric checks)
# --------------------------------------------------------------------------------------------


def _logistic_point_pairs(rng, l2: float, federations: int = 10, pairs: int = 10):
    """Random points on ℓ2-logistic clients: ``federations`` random federations (3 clients, 20 samples, d = 4) and on
    each ``pairs`` draws of x, y (N(0, 9) entries) and a client i; yields (federation, its oracles, x, y, i).

    >>> [(x.shape, 0 <= i < 3) for fed, o, x, y, i in _logistic_point_pairs(np.random.default_rng(0), 0.1, 1, 2)]
    [((4,), True), ((4,), True)]
    """
    for _ in range(federations):
        fed = LogisticFederation.random(3, 20, 4, l2=l2, seed=rng)
        o = client_oracles(fed)
        for _ in range(pairs):
            x, y = rng.normal(size=(2, o.d)) * 3
            yield fed, o, x, y, int(rng.integers(o.n))


def _pep_max(build) -> float:
    from PEPit import PEP

    pb = PEP()
    metric = build(pb)
    pb.set_performance_metric(metric)
    return float(pb.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0))


def one_gradient_step_pep(metric) -> float:
    """The worst value of ``metric(f, v, g, x)`` over 1-smooth convex f after one gradient step x = v − g from a
    point v with g = ∇f(v), ‖g‖² ≤ 1 (a PEP, exact up to the SDP solver)."""
    from PEPit.functions import SmoothConvexFunction

    def build(pb):
        f = pb.declare_function(SmoothConvexFunction, L=1.0)
        v = pb.set_initial_point()
        g = f.gradient(v)
        pb.set_initial_condition(g**2 <= 1)
        return metric(f, v, g, v - g)

    return _pep_max(build)


@claim(
    id="sdane/definition-5",
    ref="Definition 5",
    title="μ-convexity (B.1) and its consequence (B.2): ‖∇f(x) − ∇f(y)‖ ≥ μ‖x − y‖",
    statement=r"$f$ is $\mu$-convex if $f(y)\ge f(x)+\langle\nabla f(x),y-x\rangle+\frac\mu2\|y-x\|^2$ (B.1); then "
    r"$\|\nabla f(x)-\nabla f(y)\|\ge\mu\|x-y\|$ (B.2) (Nesterov, Thm 2.1.10).",
    kind="certificate",
    controls=[
        Control(
            "B2-constant-1.01",
            "(B.2) with 1.01μ: false, f = μ/2‖x‖² has ‖∇f(x) − ∇f(y)‖ = μ‖x − y‖",
            {"b2_scale": 1.01},
        )
    ],
)
def definition_5(ctx):
    from PEPit.functions import StronglyConvexFunction

    def build(pb):
        f = pb.declare_function(StronglyConvexFunction, mu=1.0, reuse_gradient=True)
        x, y = pb.set_initial_point(), pb.set_initial_point()
        pb.set_initial_condition((x - y) ** 2 <= 1)
        return ctx.param("b2_scale", 1.0) ** 2 * (x - y) ** 2 - (f.gradient(x) - f.gradient(y)) ** 2

    pep = _pep_max(build)
    rng = ctx.rng
    worst_b1, worst_b2 = -np.inf, -np.inf
    for _ in range(10):
        q = random_federation(rng)
        orc = client_oracles(q)
        fed = LogisticFederation.random(3, 20, 4, l2=0.1, seed=rng)
        lorc = client_oracles(fed)
        for o in (orc, lorc):
            for _ in range(10):
                x, y = rng.normal(size=(2, o.d)) * 3
                i = int(rng.integers(o.n))
                gx, gy = o.grads(np.stack([x, y]), [i, i])
                mu_i = o.mu_i[i]
                worst_b2 = max(worst_b2, mu_i * np.linalg.norm(x - y) / np.linalg.norm(gx - gy) - 1)
                if o is orc:  # (B.1) on a quadratic client: f_i(y) − f_i(x) − ⟨∇f_i(x), y − x⟩ = ½(y−x)ᵀA_i(y−x)
                    Ai = o.A[i]
                    gap = 0.5 * (y - x) @ Ai @ (y - x)
                    worst_b1 = max(worst_b1, mu_i / 2 * np.sum((y - x) ** 2) / gap - 1)
    ok = pep <= 1e-6 and worst_b1 <= 1e-9 and worst_b2 <= 1e-9
    return ctx.decide(
        ok,
        measured={
            "pep_max_mu2_dist2_minus_grad_gap2": pep,
            "worst_B1_ratio_minus_1": worst_b1,
            "worst_B2_ratio_minus_1": worst_b2,
        },
        tolerance={"pep": "1e-6 absolute (SDP accuracy, ‖x − y‖ ≤ 1, μ = 1)", "numeric": 1e-9},
        notes="PEPit over all 1-strongly convex functions certifies (B.2); quadratic clients (exact μ_i of the "
        "uniform view) and ℓ2-logistic clients (μ_i = n p_i l2) satisfy (B.1)/(B.2). Confirms the rebuild.",
    )


@claim(
    id="sdane/definition-6",
    ref="Definition 6",
    title="L-smoothness (B.3) and its consequence (B.4)",
    statement=r"$f$ is $L$-smooth if $\|\nabla f(x)-\nabla f(y)\|\le L\|x-y\|$ (B.3); then "
    r"$f(y)\le f(x)+\langle\nabla f(x),y-x\rangle+\frac L2\|y-x\|^2$ (B.4) (Nesterov, Lemma 1.2.3).",
    kind="certificate",
    controls=[
        Control(
            "B4-constant-0.99", "(B.4) with 0.99·L/2: false, f = L/2‖x‖² meets (B.4) with equality", {"b4_scale": 0.99}
        )
    ],
)
def definition_6(ctx):
    from PEPit.functions import SmoothFunction

    def build(pb):
        f = pb.declare_function(SmoothFunction, L=1.0)
        x, y = pb.set_initial_point(), pb.set_initial_point()
        pb.set_initial_condition((x - y) ** 2 <= 1)
        gx, fx = f.oracle(x)
        _, fy = f.oracle(y)
        return fy - fx - gx * (y - x) - 0.5 * ctx.param("b4_scale", 1.0) * (y - x) ** 2

    pep = _pep_max(build)
    rng = ctx.rng
    worst = 0.0
    for _, o, x, y, i in _logistic_point_pairs(rng, l2=0.1):
        gx, gy = o.grads(np.stack([x, y]), [i, i])
        worst = max(worst, np.linalg.norm(gx - gy) / (o.L_i[i] * np.linalg.norm(x - y)))
    ok = pep <= 1e-6 and worst <= 1
    return ctx.decide(
        ok,
        measured={"pep_max_B4_violation": pep, "logistic_worst_grad_ratio_over_L": worst},
        tolerance={"pep": "1e-6 absolute (SDP accuracy, ‖x − y‖ ≤ 1, L = 1)"},
        notes="PEPit over all 1-smooth (not necessarily convex) functions certifies (B.4); the library's "
        "smoothness bounds for logistic clients (¼λ_max(A_iᵀA_i/m_i) + l2, rescaled) hold. Confirms the rebuild.",
    )


@claim(
    id="sdane/lemma-9",
    ref="Lemma 9",
    title="(B.5): f(y) ≥ f(x) + ⟨∇f(x), y − x⟩ + ‖∇f(x) − ∇f(y)‖²/(2L) for convex L-smooth f",
    statement=r"Let $f$ be convex and $L$-smooth. Then for all $x,y$: "
    r"$f(y)\ge f(x)+\langle\nabla f(x),y-x\rangle+\frac1{2L}\|\nabla f(x)-\nabla f(y)\|^2$ (B.5) (Nesterov, Thm 2.1.5).",
    kind="certificate",
    controls=[
        Control(
            "constant-3/(4L)",
            "(B.5) with 3/(4L) in place of 1/(2L): false, f = L/2‖x‖² makes it (L/4)‖x − y‖² > 0",
            {"scale": 1.5},
        )
    ],
)
def lemma_9(ctx):
    from fedtheory.certify.pep import cocoercivity_gap

    pep = cocoercivity_gap(1.0, scale=ctx.param("scale", 1.0))
    rng = ctx.rng
    worst = -np.inf
    for fed, o, x, y, i in _logistic_point_pairs(rng, l2=0.05):
        loss = lambda z: float(fed.client_losses(z)[i] * o.scale[i])  # noqa: E731
        gx, gy = o.grads(np.stack([x, y]), [i, i])
        lhs = loss(x) + gx @ (y - x) + np.sum((gx - gy) ** 2) / (2 * o.L_i[i])
        worst = max(worst, (lhs - loss(y)) / max(abs(loss(y)), 1.0))
    # the worst case 0 is attained (f = L/2‖x‖², equality), so the PEP's value must be 0 both ways
    ok = abs(pep.value) <= 1e-6 and pep.lower is not None and abs(pep.lower) <= 1e-6 and worst <= 1e-12
    return ctx.decide(
        ok,
        measured={
            "pep_worst_violation": pep.value,
            "logistic_worst_relative_violation": worst,
            "extracted_lower": pep.lower,
            "class_violation": pep.class_violation,
        },
        tolerance={"pep": "1e-6 absolute (SDP accuracy, ‖x − y‖ ≤ 1, L = 1)", "numeric": 1e-12},
        notes="PEPit certificate over all convex 1-smooth functions, plus ℓ2-logistic clients with their "
        "smoothness bounds. Confirms the rebuilt (B.5).",
    )


# --------------------------------------------------------------------------------------------
# Lemmas 10–14: identities and inequalities
# --------------------------------------------------------------------------------------------


def _vec(name, d):
    return sp.Matrix(sp.symbols(f"{name}1:{d + 1}", real=True))


@claim(
    id="sdane/lemma-10",
    ref="Lemma 10",
    title="Young's inequalities (B.6), (B.7): proved as sums of squares",
    statement=r"For any $x,y\in\mathbb R^d$ and $\gamma>0$: $\langle x,y\rangle\le\frac\gamma2\|x\|^2+\frac1{2\gamma}\|y\|^2$ (B.6), "
    r"$\|x+y\|^2\le(1+\gamma)\|x\|^2+(1+\gamma^{-1})\|y\|^2$ (B.7).",
    kind="symbolic",
)
def lemma_10(ctx):
    g = sp.Symbol("gamma", positive=True)
    proved = []
    for d in (1, 2, 3):
        x, y = _vec("x", d), _vec("y", d)
        sos = (sp.sqrt(g) * x - y / sp.sqrt(g)).dot(sp.sqrt(g) * x - y / sp.sqrt(g))
        b6 = g / 2 * x.dot(x) + y.dot(y) / (2 * g) - x.dot(y)
        b7 = (1 + g) * x.dot(x) + (1 + 1 / g) * y.dot(y) - (x + y).dot(x + y)
        if sp.simplify(sp.expand(b6 - sos / 2)) != 0 or sp.simplify(sp.expand(b7 - sos)) != 0:
            return ctx.refuted(measured={"d": d}, notes="the sum-of-squares identity failed")
        proved.append(d)
    return ctx.proved(
        "sympy: rhs − lhs of (B.6) and (B.7) expand to ½‖√γx − y/√γ‖² and ‖√γx − y/√γ‖² (d = 1, 2, 3)",
        measured={"dimensions_proved": proved},
        notes="rhs − lhs of (B.6) is ½‖√γx − y/√γ‖², of (B.7) ‖√γx − y/√γ‖² (sympy, exact, any d by "
        "coordinate-wise structure). Confirms the rebuild.",
    )


@claim(
    id="sdane/lemma-11",
    ref="Lemma 11",
    title="(B.8): (1/n)Σ‖a_i − v‖² = ‖ā − v‖² + (1/n)Σ‖a_i − ā‖²",
    statement=r"For vectors $a_1..a_n$ with mean $\bar a$ and any $v$: "
    r"$\frac1n\sum_i\|a_i-v\|^2=\|\bar a-v\|^2+\frac1n\sum_i\|a_i-\bar a\|^2$ (B.8) (Jiang et al. 2024, Lemma 14).",
    kind="symbolic",
)
def lemma_11(ctx):
    for n in (1, 2, 3, 4):
        for d in (1, 2):
            a = [_vec(f"a{i}_", d) for i in range(n)]
            v = _vec("v", d)
            abar = sum(a, sp.zeros(d, 1)) / n
            lhs = sum((ai - v).dot(ai - v) for ai in a) / n
            rhs = (abar - v).dot(abar - v) + sum((ai - abar).dot(ai - abar) for ai in a) / n
            if sp.expand(lhs - rhs) != 0:
                return ctx.refuted(measured={"n": n, "d": d}, notes="identity failed")
    return ctx.proved(
        "sympy: expand(lhs − rhs) == 0 for n ≤ 4, d ≤ 2",
        measured={"cases": "n ≤ 4, d ≤ 2 (symbolic)"},
        notes="Exact polynomial identity (sympy). Confirms the rebuild.",
    )


@claim(
    id="sdane/lemma-12",
    ref="Lemma 12",
    title="(B.9): F_{r+1} + qD_{r+1} ≤ D_r ⇒ Σq^{r−1}F_r/S_R + q^R D_R/S_R ≤ D_0/S_R",
    statement=r"Let $q\ge1$ and $(F_r)_{r\ge1},(D_r)_{r\ge0}$ non-negative with $F_{r+1}+qD_{r+1}\le D_r$ for all $r\ge0$. Then "
    r"for all $R\ge1$: $\frac{\sum_{r=1}^Rq^{r-1}F_r}{S_R}+\frac{q^R}{S_R}D_R\le\frac{D_0}{S_R}$, "
    r"$S_R=\sum_{r=1}^Rq^{r-1}$ (B.9).",
    kind="symbolic",
)
def lemma_12(ctx):
    q = sp.Symbol("q", positive=True)
    for R in range(1, 7):
        F = sp.symbols(f"F1:{R + 1}", nonnegative=True)
        Dn = sp.symbols(f"D0:{R + 1}", nonnegative=True)
        s = sp.symbols(f"s0:{R}", nonnegative=True)
        # the hypothesis with slack: D_r = F_{r+1} + q D_{r+1} + s_r
        subs = {}
        for r in range(R - 1, -1, -1):
            subs[Dn[r]] = F[r] + q * Dn[r + 1] + s[r]
        D0 = Dn[0]
        for _ in range(R):
            D0 = D0.subs(subs)
        gap = sp.expand(D0 - sum(q ** (r - 1) * F[r - 1] for r in range(1, R + 1)) - q**R * Dn[R])
        target = sp.expand(sum(q**r * s[r] for r in range(R)))
        if sp.simplify(gap - target) != 0:
            return ctx.refuted(measured={"R": R}, notes="telescoping identity failed")
    # random and adversarial numeric sequences
    rng = ctx.rng
    worst = -np.inf
    for _ in range(200):
        R = int(rng.integers(1, 30))
        qq = 1 + float(10 ** rng.uniform(-4, 1))
        Fs = rng.uniform(0, 1, R) * rng.integers(0, 2, R)
        rng.uniform(0, 10)  # a draw no longer used, kept so the random stream (and the measured values) stay
        Dfut = [float(rng.uniform(0, 1))]
        # build backwards so that D_r = F_{r+1} + q D_{r+1} + slack (tight when slack = 0)
        D = np.zeros(R + 1)
        D[R] = Dfut[0]
        for r in range(R - 1, -1, -1):
            D[r] = Fs[r] + qq * D[r + 1] + float(rng.uniform(0, 1)) * rng.integers(0, 2)
        lhs = sum(qq ** (r - 1) * Fs[r - 1] for r in range(1, R + 1)) + qq**R * D[R]
        worst = max(worst, (lhs - D[0]) / D[0] if D[0] > 0 else lhs)
    ok = worst <= 1e-12
    if ok:
        return ctx.proved(
            "sympy: D_0 − [Σq^{r−1}F_r + q^R D_R] − Σ_r q^r s_r expands to 0 for R ≤ 6",
            measured={"symbolic_R_proved": 6, "numeric_worst_relative": worst},
            tolerance={"numeric": 1e-12},
            notes="Proved: D_0 − [Σq^{r−1}F_r + q^R D_R] = Σ_r q^r s_r ≥ 0 with slacks s_r ≥ 0 (sympy, R ≤ 6); "
            "dividing by S_R > 0 gives (B.9). Tight sequences (zero slack) attain equality. Confirms the rebuild.",
        )
    return ctx.decide(
        ok,
        measured={"symbolic_R_proved": 6, "numeric_worst_relative": worst},
        tolerance={"numeric": 1e-12},
        notes="Proved: D_0 − [Σq^{r−1}F_r + q^R D_R] = Σ_r q^r s_r ≥ 0 with slacks s_r ≥ 0 (sympy, R ≤ 6); "
        "dividing by S_R > 0 gives (B.9). Tight sequences (zero slack) attain equality. Confirms the rebuild.",
    )


def _lemma13_bounds(R, lam, mu):
    q = mpmath.sqrt(mu / (4 * lam))
    if q <= 1:
        return ((1 + q) ** R - (1 - q) ** R) ** 2 / (4 * mu) if mu > 0 else mpmath.mpf(R) ** 2 / (4 * lam)
    return (1 + q) ** (2 * (R - 1)) / (4 * lam)


@claim(
    id="sdane/lemma-13",
    ref="Lemma 13",
    title="Growth of A_R (B.10)/(B.11): A_R ≥ [(1+q)^R − (1−q)^R]²/(4μ) ≥ R²/(4λ) (q ≤ 1), ≥ (1+q)^{2(R−1)}/(4λ) (q > 1)",
    statement=r"Let $A_0=0$ and $(A_r)$ non-decreasing with $\lambda(A_{r+1}-A_r)^2\ge A_{r+1}(1+\mu A_r)$, $q=\sqrt{\mu/(4\lambda)}$. "
    r"If $q\le1$: $A_R\ge\frac1{4\mu}[(1+q)^R-(1-q)^R]^2\ge\frac{R^2}{4\lambda}$ (B.10); otherwise "
    r"$A_R\ge\frac1{4\lambda}(1+q)^{2(R-1)}$ (B.11). (Rebuilt; c.f. Nesterov's Lemma 2.2.4.)",
    kind="numeric",
    controls=[
        Control(
            "bound-1.1",
            "(B.10)/(B.11) with the bound multiplied by 1.1: false, at μ = 0 Algorithm 2's A_R has "
            "√A_{r+1} − √A_r → 1/(2√λ), so A_R/(R²/(4λ)) → 1 and 1.1·R²/(4λ) exceeds A_R for large R",
            {"bound_scale": 1.1},
        )
    ],
)
def lemma_13(ctx):
    rng = ctx.rng
    worst = mpmath.mpf(0)
    worst_case = None
    with mpmath.workdps(40):
        for trial in range(150 if not ctx.full else 2000):
            lam = mpmath.mpf(10 ** rng.uniform(-3, 3))
            mu = mpmath.mpf(0) if trial % 5 == 0 else lam * mpmath.mpf(10 ** rng.uniform(-6, 2))
            A, B = mpmath.mpf(0), mpmath.mpf(1)
            for R in range(1, 61):
                # minimal admissible A_{R}: λa² = (A + a)(1 + μA), times an optional slack ≥ 1
                a = B / (2 * lam) + mpmath.sqrt(B * B / (4 * lam * lam) + A * B / lam)
                if trial % 3 == 1:
                    a *= 1 + mpmath.mpf(rng.uniform(0, 0.5))
                A = A + a
                B = 1 + mu * A
                bound = _lemma13_bounds(R, lam, mu) * mpmath.mpf(ctx.param("bound_scale", 1.0))
                ratio = bound / A
                if ratio > worst:
                    worst, worst_case = ratio, {"lam": float(lam), "mu": float(mu), "R": R}
                if (
                    mu > 0
                    and mpmath.sqrt(mu / (4 * lam)) <= 1
                    and bound < R * R / (4 * lam) * (1 - mpmath.mpf(10) ** -30)
                ):
                    return ctx.refuted(measured={"R": R}, notes="(B.10)'s second inequality failed")
    ok = worst <= 1
    return ctx.decide(
        ok,
        measured={"worst_bound_over_A_R": float(worst), "worst_case": worst_case},
        tolerance={"arithmetic": "40-digit mpmath; ratios compared with 1 exactly"},
        counterexample=None if ok else worst_case,
        notes="Algorithm 2's A_R (equality λa² = A_{r+1}B_r, B_r = 1 + μA_r) is the smallest admissible "
        "sequence (A_{r+1} is increasing in A_r), sampled with and without slack, λ ∈ [1e-3, 1e3], "
        "μ/λ ∈ {0} ∪ [1e-6, 1e2], R ≤ 60. Confirms the rebuilt (B.10)/(B.11). Derivation gives the "
        "stronger A_R ≥ (1+q)^{2(R−1)}/λ when q > 1 (A_1 = 1/λ); the rebuild's 1/(4λ) is weaker, still valid.",
    )


@claim(
    id="sdane/lemma-14",
    ref="Lemma 14",
    title="Sampling without replacement (B.12): E‖a_S − ā‖² = (n−s)/(s(n−1)) · (1/n)Σ‖a_i − ā‖²",
    statement=r"Let $a_1..a_n\in\mathbb R^d$, $\bar a=\frac1n\sum a_i$, $S$ uniform in $\binom{[n]}{s}$, $a_S=\frac1s\sum_{i\in S}a_i$. "
    r"Then $\mathbb E\|a_S-\bar a\|^2=\frac{n-s}{s(n-1)}\cdot\frac1n\sum_i\|a_i-\bar a\|^2$ (B.12).",
    kind="numeric",
    controls=[
        Control(
            "with-replacement-factor",
            "the factor (n − s)/(sn) in place of (n − s)/(s(n − 1)): false whenever "
            "s < n and the a_i are not all equal",
            {"factor_denominator": "sn"},
        )
    ],
)
def lemma_14(ctx):
    rng = ctx.rng
    cases = 0
    for n in range(2, 8 if not ctx.full else 10):
        for s in range(1, n + 1):
            for _ in range(3):
                d = int(rng.integers(1, 4))
                a = [[Fraction(int(v)) for v in rng.integers(-20, 21, size=d)] for _ in range(n)]
                abar = [sum(a[i][k] for i in range(n)) / n for k in range(d)]
                var = sum(sum((a[i][k] - abar[k]) ** 2 for k in range(d)) for i in range(n)) / n
                total, count = Fraction(0), 0
                for S in itertools.combinations(range(n), s):
                    aS = [sum(a[i][k] for i in S) / s for k in range(d)]
                    total += sum((aS[k] - abar[k]) ** 2 for k in range(d))
                    count += 1
                lhs = total / count
                den = s * n if ctx.param("factor_denominator", "s(n-1)") == "sn" else s * (n - 1)
                rhs = Fraction(n - s, den) * var
                if lhs != rhs:
                    return ctx.refuted(
                        measured={"n": n, "s": s, "lhs": str(lhs), "rhs": str(rhs)},
                        counterexample={"n": n, "s": s, "a": [[str(v) for v in row] for row in a]},
                    )
                cases += 1
    return ctx.verified(
        measured={"exact_cases": cases},
        notes="Exact rational arithmetic over all C(n, s) subsets, n ≤ 7 (9 in the full tier), every s, "
        "integer vectors. Confirms the rebuilt factor (n − s)/(s(n − 1)).",
    )


# --------------------------------------------------------------------------------------------
# Table 1
# --------------------------------------------------------------------------------------------


@claim(
    id="sdane/table-1/entries",
    ref="Table 1",
    title="Table 1, S-DANE and Acc-S-DANE rows: each entry equals the order derived from the paper's own results",
    statement=r"Table 1 (full participation): S-DANE: GC rounds $\frac{\delta_AD^2}{\varepsilon}$, SC rounds "
    r"$\frac{\delta_A}{\mu}\log(1+\frac{\mu D^2}{\varepsilon})$, local gradients $\sqrt{L/\delta_A}$ per round; "
    r"Acc-S-DANE: $\sqrt{\delta_AD^2/\varepsilon}$, $\sqrt{\delta_A/\mu}\log(1+\frac{\mu D^2}{\varepsilon})$, "
    r"$\sqrt{L/\delta_A}$. (Rebuilt: the table's body was lost in conversion.)",
    kind="symbolic",
)
def table_1_entries(ctx):
    T = cx.TABLE_1
    checks = {}
    lam = 2 * cx.delta_A
    # general convex: μ → 0 limits of Corollaries 18/25, then order in ε
    gc18 = sp.limit(cx.corollary_18(lam), cx.mu, 0)
    gc25 = sp.simplify(sp.limit(cx.corollary_25(lam), cx.mu, 0))
    checks["S-DANE gc_rounds"] = sp.simplify(gc18 / T["S-DANE"]["gc_rounds"])
    checks["Acc-S-DANE gc_rounds"] = sp.simplify(gc25 / T["Acc-S-DANE"]["gc_rounds"])
    # strongly convex: ratio tends to a constant as μ/δ_A → 0 and as ε → 0
    for name, expr in (("S-DANE", cx.corollary_18(lam)), ("Acc-S-DANE", cx.corollary_25(lam))):
        entry = T[name]["sc_rounds"]
        checks[f"{name} sc_rounds (mu->0)"] = sp.limit(sp.limit(expr / entry, cx.eps, 0), cx.mu, 0)
        checks[f"{name} sc_rounds (eps->0)"] = sp.limit(expr / entry, cx.eps, 0)
    loc = cx.corollary_3_steps(lam)
    for name in ("S-DANE", "Acc-S-DANE"):
        for col in ("gc_local", "sc_local"):
            checks[f"{name} {col} (L->oo)"] = sp.limit(loc / T[name][col], cx.L, sp.oo)
    ok = all(v.is_finite and v.is_positive for v in checks.values())
    ev = ctx.decide(
        ok,
        measured={k: str(v) for k, v in checks.items()},
        notes="Each entry divided by the paper's own complexity (Corollary 18: (1+λ/μ)ln(1+μD²/(2ε)); "
        "Corollary 25: (1+2√(λ/μ))ln(1+√(2μD²/ε)); Corollary 3: FGM+OGM-G steps) tends to a positive "
        "constant (λ = 2δ_A). The SC rounds match up to constants only in the regime μ ≪ δ_A (the "
        "table drops the additive 1 of 1 + λ/μ); the Acc-S-DANE SC entry's log(1 + μD²/ε) matches "
        "log(1 + √(2μD²/ε)) up to a factor 2 as ε → 0. The other rows are rebuilt from the cited works "
        "(see TABLE_1_PROVENANCE) and enter only sdane/table-1/comparisons.",
    )
    if ok:  # exact sympy limits: a proof (a wrong entry gives 0 or ∞, which fails)
        ev.proof = "sympy: every limit of (paper's complexity)/(table entry) is exact, finite and positive"
    return ev


@claim(
    id="sdane/table-1/comparisons",
    ref="Table 1",
    title="Table 1's comparisons: S-DANE matches DANE's rounds; Acc-S-DANE has the best round complexity of the table",
    statement=r"S-DANE has DANE's communication complexity with a better local complexity (no $\log$ factor); "
    r"Acc-S-DANE's $\sqrt{\delta_A/\mu}\log$ / $\sqrt{\delta_AD^2/\varepsilon}$ is the best known among all "
    r"listed methods (using $\delta_A\le\delta_B\le L$, $n\ge1$).",
    kind="symbolic",
)
def table_1_comparisons(ctx):
    T = cx.TABLE_1
    res = {}
    res["S-DANE vs DANE gc rounds"] = sp.simplify(T["S-DANE"]["gc_rounds"] / T["DANE"]["gc_rounds"])
    res["S-DANE/DANE local (eps->0)"] = sp.limit(T["S-DANE"]["sc_local"] / T["DANE"]["sc_local"], cx.eps, 0)
    # Acc-S-DANE sc rounds against every other known sc entry: substitute δ_A = t·δ_B, δ_B = u·L (t, u ∈ (0, 1]),
    # and check the ratio other/acc stays bounded below by a positive constant as μ, ε → 0
    t, u = sp.symbols("t u", positive=True)
    acc = T["Acc-S-DANE"]["sc_rounds"]
    worst = {}
    for name, row in T.items():
        other = row["sc_rounds"]
        if other is None or name == "Acc-S-DANE":
            continue
        r = (other / acc).subs({cx.delta_A: t * cx.delta_B}).subs({cx.delta_B: u * cx.L})
        lim = sp.limit(sp.limit(r, cx.eps, 0), cx.mu, 0)
        worst[name] = str(lim)
        # the ratio must not tend to 0 for any t, u ∈ (0, 1] and n ≥ 1: check at the extremes
        for tv in (sp.Rational(1, 10**6), 1):
            for uv in (sp.Rational(1, 10**6), 1):
                val = sp.limit(sp.limit(r.subs({t: tv, u: uv, cx.n: 1}), cx.eps, 0), cx.mu, 0)
                if val == 0:
                    return ctx.refuted(
                        measured={"row": name, "t": str(tv), "u": str(uv)},
                        notes=f"{name} beats Acc-S-DANE in this regime",
                    )
    ok = res["S-DANE vs DANE gc rounds"] == 1 and res["S-DANE/DANE local (eps->0)"] == 0
    ev = ctx.decide(
        ok,
        measured={**{k: str(v) for k, v in res.items()}, "other_over_acc_sc_limits": worst},
        notes="Orders compared as μ, ε → 0 with δ_A = tδ_B, δ_B = uL, t, u ∈ (0, 1]: every other row's "
        "SC rounds over Acc-S-DANE's tends to ∞ or a positive constant (never 0). The other rows are "
        "rebuilt from the cited works, not the paper (provenance in fedtheory.symbolic.complexity).",
    )
    if ok:  # exact sympy simplifications and limits
        ev.proof = (
            "sympy: the ratios simplify exactly (S-DANE/DANE rounds = 1, local ratio → 0) and no other row's limit is 0"
        )
    return ev
