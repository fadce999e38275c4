r"""Jiang, Rodomanov & Stich (arXiv:2407.07084), Section 4 with full participation: Acc-S-DANE's Theorem 6, its
one-step Lemma 24, Corollary 25 and the "Stabilized Catalyst". Checked as Theorem 1 is (``theorem_1.py``): real
runs, an adversarial probe of the local answers, a PEP certificate for two clients.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from fedtheory.algorithms.dane import acc_coefficient, run_acc_sdane
from fedtheory.algorithms.local_solvers import FGM, GD, Boundary, FastGradNorm
from fedtheory.certify import pep
from fedtheory.certify.params import Ball, Box, Product, quadratic_instance_param
from fedtheory.claims.controls import scaled_below_reached, tightened_bound
from fedtheory.claims.core import Control, claim
from fedtheory.problems.clients import client_oracles
from fedtheory.problems.dissimilarity import delta_A
from fedtheory.problems.finite_sum import LogisticFederation
from fedtheory.symbolic import complexity as cx

from ._full_participation import H, PEP_RTOL, DROP_CONTROL, _logistic_federation, _solvers
from ._full_participation import _near_attaining_ratio, _subset_delta, _random_rate_parameters, _probed_step
from ._full_participation import _decide_one_step_lemma, _worst_one_step_gap_over_runs
from ._full_participation import _decide_theorem_probe, _decide_pep


# --------------------------------------------------------------------------------------------
# Theorem 6 and Lemma 24
# --------------------------------------------------------------------------------------------

THEOREM_6 = (
    r"Consider Algorithm 2 with $s=n$, $f_i$ $\mu$-convex with $\delta_A$-SOD, $\lambda=2\delta_A$, and "
    r"$\sum_i\|\nabla F_{i,r}(x_{i,r+1})\|^2\le\frac{\lambda^2}4\sum_i\|x_{i,r+1}-y^r\|^2$. Then for all $R\ge1$: "
    r"$A_R[f(x^R)-f^\star]+\frac{B_R}2\|v^R-x^\star\|^2\le\frac{D^2}2$, so $f(x^R)-f^\star+\frac\mu2\|v^R-x^\star\|^2\le\frac{D^2}{2A_R}$; "
    r"if $\mu\le4\lambda$: $f(x^R)-f^\star\le\frac{2\mu D^2}{[(1+q)^R-(1-q)^R]^2}\le\frac{2\lambda D^2}{R^2}$, $q=\sqrt{\mu/(4\lambda)}$; "
    r"if $\mu>4\lambda$: $f(x^R)-f^\star\le2\lambda D^2(1+q)^{-2(R-1)}$. (Rebuilt.)"
)


def _explicit_ratios(orc, h, x0, mu, lam):
    """Theorem 6's explicit bounds: (f(x^R) − f* − slack)/bound for the q ≤ 1 or q > 1 case, every R."""
    xs = orc.x_star()
    D2 = float(np.sum((x0 - xs) ** 2))
    q = math.sqrt(mu / (4 * lam))
    R = np.arange(1, h.rounds + 1)
    if q <= 1:
        b1 = 2 * mu * D2 / ((1 + q) ** R - (1 - q) ** R) ** 2 if mu > 0 else 2 * lam * D2 / R**2
        b2 = 2 * lam * D2 / R**2
        bound = np.maximum(np.minimum(b1, b2), 0) if mu > 0 else b2
        bound = b1 if mu > 0 else b2
        ratios_chain = b1 / b2  # the second inequality: b1 ≤ b2
    else:
        bound = 2 * lam * D2 * (1 + q) ** (-2.0 * (R - 1))
        ratios_chain = np.zeros_like(bound)
    slack = H.float_slack(orc, x0, h.rounds)
    use = bound >= 1e6 * slack
    return ((orc.gaps(h.x[1:]) - slack) / bound)[use], float(np.max(ratios_chain))


@claim(
    id="sdane/theorem-6/runs",
    ref="Theorem 6",
    kind="simulation",
    statement=THEOREM_6,
    controls=[
        scaled_below_reached(
            "potential-0.98",
            "the potential bound D²/2",
            0.98,
            "the two-client instance of _near_attaining_ratio (μ = 0, δ_A = 100, λ = 200, exact solves) reaches "
            "200/201 of it after one round",
        )
    ],
    title="Theorem 6 at every round of real Acc-S-DANE runs, both regimes μ ≤ 4λ and μ > 4λ",
)
def theorem_6_runs(ctx):
    rng = ctx.rng
    worst, worst_exp, chain, runs, test_fail = -np.inf, -np.inf, 0.0, 0, 0
    for trial in range(10 if not ctx.full else 50):
        big_mu = trial % 3 == 2  # μ > 4λ = 8δ_A: nearly homogeneous, well-conditioned clients
        q = (
            H.random_federation(
                rng, mu=1.0, L=float(rng.uniform(1.5, 3)), frac=float(rng.uniform(0.001, 0.02)), weights="uniform"
            )
            if big_mu
            else H.random_federation(rng)
        )
        orc = client_oracles(q)
        lam = 2 * delta_A(q)
        x0 = rng.normal(size=q.d) * 3
        for solver in _solvers(rng):
            for mu in (orc.mu,) if big_mu else (orc.mu, 0.0):
                h = run_acc_sdane(q, x0, 30, lam=lam, mu=mu, solver=solver)
                test_fail += h.test_failures
                worst = max(worst, float(H.acc_ratios(orc, h, x0, mu).max()))
                e, c = _explicit_ratios(orc, h, x0, mu, lam)
                if e.size:
                    worst_exp = max(worst_exp, float(e.max()))
                chain = max(chain, c)
                runs += 1
    for trial in range(2 if not ctx.full else 12):
        fed = _logistic_federation(rng, trial)
        orc = client_oracles(fed)
        x0 = rng.normal(size=fed.d) * 0.3
        for solver in (GD(), FGM(), FastGradNorm()):
            h = run_acc_sdane(fed, x0, 25, lam=orc.L, mu=orc.mu, solver=solver)
            xs = orc.x_star()
            D2 = float(np.sum((x0 - xs) ** 2))
            lhs = h.A[1:] * orc.gaps(h.x[1:]) + h.B[1:] / 2 * np.sum((h.v[1:] - xs) ** 2, axis=1)
            worst = max(worst, float(((lhs - 1e-12 * (h.A[1:] + h.B[1:])) / (D2 / 2)).max()))
            test_fail += h.test_failures
            runs += 1
    near = _near_attaining_ratio(True)
    worst = max(worst, near) / ctx.param("bound_scale", 1.0)
    ok = worst <= 1 and worst_exp <= 1 and chain <= 1 + 1e-12 and test_fail == 0
    return ctx.decide(
        ok,
        measured={
            "worst_potential_ratio": worst,
            "near_attaining_instance_ratio": near,
            "worst_explicit_bound_ratio": worst_exp,
            "max_b1_over_b2": chain,
            "runs": runs,
            "rounds_failing_test": test_fail,
        },
        tolerance={"absolute_slack": "as Theorem 1 (float64 error of iterates), times A_R + B_R"},
        notes="Checks the rebuilt Theorem 6: the potential A_R(f(x^R) − f*) + B_R/2‖v^R − x*‖² ≤ D²/2 at every "
        "round, the explicit bound 2μD²/[(1+q)^R − (1−q)^R]² ≤ 2λD²/R² (q ≤ 1) and 2λD²(1+q)^{−2(R−1)} "
        "(q > 1: nearly homogeneous federations with μ > 8δ_A), over 7 local solvers, μ ∈ {μ, 0}, "
        "plus ℓ2-logistic clients (breast cancer, Dirichlet/IID; generated) with λ = L ≥ 2δ_A, and one known "
        "instance reaching 200/201 of the potential bound (_near_attaining_ratio: the bound is tight "
        "as δ_A/μ grows; the control's basis). Confirms the rebuild.",
    )


@claim(
    id="sdane/theorem-6/probe",
    ref="Theorem 6",
    kind="probe",
    statement=THEOREM_6,
    control_exempt=(
        "the probe searches boundary local answers (fraction ∈ [0.5, 1] of the test), where no instance "
        "near the bound is known, so no tightened constant is known false on its search space; the "
        "near-attaining exact-solve instance and its control are in sdane/theorem-6/runs, the tightness of "
        "the worst case in sdane/theorem-6/pep"
    ),
    title="Theorem 6 under an adversarial search over instances and worst admissible local answers",
)
def theorem_6_probe(ctx):
    def violation(inst):
        (problem, *_), x0, w, frac = inst["inst"], inst["x0"], inst["w"], inst["frac"]
        orc = client_oracles(problem)
        lam = 2 * delta_A(problem)
        h = run_acc_sdane(problem, x0, 15, lam=lam, mu=orc.mu, solver=Boundary(weights=tuple(w), frac=frac))
        return float(H.acc_ratios(orc, h, x0, orc.mu).max())

    return _decide_theorem_probe(
        ctx,
        violation,
        notes="As sdane/theorem-1/probe, for Algorithm 2's potential A_R(f(x^R) − f*) + "
        "B_R/2‖v^R − x*‖² ≤ D²/2. Confirms the rebuilt Theorem 6.",
    )


@claim(
    id="sdane/theorem-6/pep",
    ref="Theorem 6",
    kind="certificate",
    statement=THEOREM_6,
    title="Theorem 6 certified by PEP for two clients under δ-SOD",
    controls=[DROP_CONTROL],
)
def theorem_6_pep(ctx):
    cases = [(1, 0.0), (2, 0.0), (2, 0.5)] + ([(3, 0.0), (3, 0.5)] if ctx.full else [])
    drop = ctx.param("drop", None)
    results = [pep.two_client_sdane(R, 2.0, mu, 1.0, accelerated=True, drop=drop) for R, mu in cases]
    return _decide_pep(
        ctx,
        results,
        notes="Tightness as sdane/theorem-1/pep, replayed on run_acc_sdane. As sdane/theorem-1/pep for Algorithm 2: PEP value of f(x^R) − f* + μ/2‖v^R − x*‖² against "
        "D²/(2A_R) with Algorithm 2's exact A_R (δ = 1, λ = 2). Certifies the rebuilt Theorem 6 for n = 2.",
    )


LEMMA_24 = (
    r"Consider Algorithm 2 with $f_i$ $\mu$-convex and $\delta_s$-SOD. For any $x$: "
    r"$A_{r+1}[f_S(x^{r+1})-f_S(x)]+\frac{B_{r+1}}2\|v^{r+1}-x\|^2\le A_r[f_S(x^r)-f_S(x)]+\frac{B_r}2\|v^r-x\|^2"
    r"-A_{r+1}[\frac{\lambda-\delta_s}2\frac1s\sum\|x_{i,r+1}-y^r\|^2-\frac1{2\lambda}\frac1s\sum\|\nabla F_{i,r}(x_{i,r+1})\|^2]$ "
    r"(D.1; the leftover is $\le0$ under the accuracy test). (Rebuilt.)"
)


def lemma_24_gap(orc, A_mat, S, x, v, A, B, X, lam, mu, z):
    s = len(S)
    a = acc_coefficient(A, B, lam)
    A1, B1 = A + a, B + mu * a
    y = (A * x + a * v) / A1
    Y = np.broadcast_to(y, (s, orc.d)).copy()
    Gy = orc.grads(Y, S)
    G = orc.grads(X, S)
    xn = X.mean(0)
    vn = (B * v + mu * a * xn - a * G.mean(0)) / B1
    fS = lambda p: float(np.mean(orc.client_losses(np.broadcast_to(p, (s, orc.d)).copy(), S)))  # noqa: E731
    gradF = G - (Gy - Gy.mean(0)) + lam * (X - Y)
    U = float(np.mean(np.sum((X - Y) ** 2, axis=1)))
    E = float(np.mean(np.sum(gradF**2, axis=1)))
    delta = _subset_delta(A_mat, S)
    lhs = A1 * (fS(xn) - fS(z)) + B1 / 2 * float(np.sum((vn - z) ** 2))
    rhs = A * (fS(x) - fS(z)) + B / 2 * float(np.sum((v - z) ** 2)) - A1 * ((lam - delta) / 2 * U - E / (2 * lam))
    scale = (
        A1 * (abs(fS(xn)) + abs(fS(z)))
        + B1 / 2 * float(np.sum((vn - z) ** 2))
        + A * (abs(fS(x)) + abs(fS(z)))
        + B / 2 * float(np.sum((v - z) ** 2))
        + A1 * ((lam + delta) / 2 * U + E / (2 * lam))
    )
    return rhs - lhs, scale


@claim(
    id="sdane/lemma-24",
    ref="Lemma 24",
    kind="probe",
    statement=LEMMA_24,
    control_exempt="a one-step potential inequality whose leftover is ≤ 0 under the test; no instance attaining it is "
    "known for Acc-S-DANE's coupled centre y^r, so no tightened constant is known false a priori",
    title="Lemma 24 (D.1) at every round of real Acc-S-DANE runs and for adversarial points",
)
def lemma_24(ctx):
    def gap(orc, Am, h, r, lam, z):
        return lemma_24_gap(orc, Am, h.clients[r], h.x[r], h.v[r], h.A[r], h.B[r], h.client_x[r], lam, orc.mu, z)

    worst, rounds = _worst_one_step_gap_over_runs(ctx, run_acc_sdane, gap)

    def violation(inst):
        orc, Am, S, x0, X, lam = _probed_step(inst)
        A = float(inst["A"])
        gap, scale = lemma_24_gap(
            orc, Am, S, x0, np.asarray(inst["v"]), A, 1 + orc.mu * A, X, lam, orc.mu, np.asarray(inst["z"])
        )
        return -gap / scale

    P = Product(
        inst=quadratic_instance_param(n=3, d=3, mu=1.0, L=(2.0, 300.0), K=1),
        x0=Ball(3, 5.0),
        v=Ball(3, 5.0),
        pts=Box(-3.0, 3.0, shape=9),
        lamf=Box(0.05, 5.0, log=True),
        A=Box(0.0, 100.0),
        z=Ball(3, 5.0),
    )
    return _decide_one_step_lemma(
        ctx,
        worst,
        violation,
        P,
        measured={"rounds_checked": rounds},
        notes="(D.1) for arbitrary local points, any x, A_r ≥ 0 with B_r = 1 + μA_r (Algorithm 2's invariant), "
        "using λa² = A_{r+1}B_r; δ = the subset's exact SOD constant. Confirms the rebuilt Lemma 24.",
    )


# --------------------------------------------------------------------------------------------
# Corollary 25, Stabilized Catalyst
# --------------------------------------------------------------------------------------------


@claim(
    id="sdane/corollary-25",
    ref="Corollary 25",
    kind="symbolic",
    title="Acc-S-DANE reaches ε after (1 + 2√(λ/μ)) ln(1 + √(2μD²/ε)) rounds (μ ≤ 4λ); 4√(δ_AD²/ε) as μ → 0",
    statement=r"Under Theorem 6 with $\mu\le4\lambda$: $R\ge(1+2\sqrt{\lambda/\mu})\ln(1+\sqrt{2\mu D^2/\varepsilon})$ rounds suffice; "
    r"if $\mu>4\lambda$, $2\lambda D^2(1+q)^{-2(R-1)}\le\varepsilon$ suffices. The limit $\mu\to0$ is $4\sqrt{\delta_AD^2/\varepsilon}$. (Rebuilt.)",
    controls=[
        Control(
            "half-the-rounds",
            "half of (1 + 2√(λ/μ))ln(1 + √(2μD²/ε)) rounds suffice: false for small "
            "q = √(μ/(4λ)) and ε, where (1+q)^R − (1−q)^R ≈ 2 sinh(qR) needs R ≈ ln(√(2μD²/ε))/q, about twice "
            "that",
            {"rounds_factor": 0.5},
        )
    ],
)
def corollary_25(ctx):
    import mpmath

    lim = sp.simplify(sp.limit(cx.corollary_25(), cx.mu, 0))
    rng = ctx.rng
    worst = mpmath.mpf(0)
    with mpmath.workdps(40):
        for _ in range(2000):
            lam, mu, D2, eps = _random_rate_parameters(rng, 4, (-8, 0))
            q = mpmath.sqrt(mu / (4 * lam))
            R = int(
                mpmath.ceil(
                    ctx.param("rounds_factor", 1.0)
                    * (1 + 2 * mpmath.sqrt(lam / mu))
                    * mpmath.log(1 + mpmath.sqrt(2 * mu * D2 / eps))
                )
            )
            bound = 2 * mu * D2 / ((1 + q) ** R - (1 - q) ** R) ** 2
            worst = max(worst, bound / eps)
        for _ in range(500):  # μ > 4λ
            lam, mu, D2, eps = _random_rate_parameters(rng, 4, (0.01, 4))
            q = mpmath.sqrt(mu / (4 * lam))
            R = max(1, int(mpmath.ceil(1 + mpmath.log(2 * lam * D2 / eps) / (2 * mpmath.log(1 + q)))))
            worst = max(worst, 2 * lam * D2 * (1 + q) ** (-2 * (R - 1)) / eps)
    ok = worst <= 1 and sp.simplify(lim - 4 * cx.D * sp.sqrt(cx.delta_A / cx.eps)) == 0
    return ctx.decide(
        ok,
        measured={"worst_bound_over_eps": float(worst), "limit_mu_0": str(lim)},
        notes="With 1/ln(1+q) ≤ 1 + 1/q and (1−q)^R ≤ 1, R ≥ (1+2√(λ/μ))ln(1+√(2μD²/ε)) makes Theorem 6's "
        "2μD²/[(1+q)^R−(1−q)^R]² ≤ ε (40-digit check over random parameters, both regimes); the μ → 0 "
        "limit with λ = 2δ_A is 4√(δ_AD²/ε). Confirms the rebuilt Corollary 25.",
    )


@claim(
    id="sdane/section-4/stabilized-catalyst",
    ref="Section 4 (with Theorem 6, n = 1)",
    kind="certificate",
    title="Stabilized Catalyst: Algorithm 2 with n = 1, λ = L and one gradient step attains the accelerated rate 2LD²/R²",
    statement=r"With $n=1$, $\lambda=L$ and $f$ $L$-smooth convex, one gradient step $x_{r+1}=y_r-\frac1L\nabla f(y_r)$ satisfies "
    r"$\|\nabla F_r(x_{r+1})\|\le\lambda\|x_{r+1}-y_r\|$, and Algorithm 2 gives "
    r"$f(x^R)-f^\star\le\frac{D^2}{2A_R}\le\frac{2LD^2}{R^2}$ (Catalyst's rate without its log overhead).",
    controls=[
        tightened_bound(
            0.999,
            "the R = 1, μ = 0 worst case LD²/6 (one gradient step from x_0, tight worst case LD²/(4N+2))",
            "a Huber function (Drori & Teboulle 2014)",
            {"closed_form_scale": 0.999},
            name="closed-form-0.999",
        )
    ],
)
def stabilized_catalyst(ctx):
    Rs = (1, 2, 3) if not ctx.full else (1, 2, 3, 4, 6)
    res = [pep.stabilized_catalyst(R, 1.0, mu) for R in Rs for mu in (0.0, 0.1)]
    worst = max(r.ratio for r in res)
    r1 = next(r for r in res if r.params["R"] == 1 and r.params["mu"] == 0.0)
    closed = abs(r1.value - ctx.param("closed_form_scale", 1.0) / 6) * 6
    gap = pep.worst_gap(res)
    rng = ctx.rng
    worst_run = -np.inf
    for _ in range(4):
        fed = LogisticFederation.random(1, 60, 4, l2=1e-3, seed=rng)
        orc = client_oracles(fed)
        x0 = rng.normal(size=4)
        h = run_acc_sdane(fed, x0, 40, lam=orc.L, mu=0.0, solver=GD(K=1, step=1 / orc.L), test=None)
        # the condition with constant 1 (n = 1, δ = 0) held in every round

        lhs, rhs = h.test_lhs, h.test_rhs
        if np.any(lhs > orc.L**2 * rhs * (1 + 1e-12)):
            return ctx.refuted(
                measured={"round": int(np.argmax(lhs - orc.L**2 * rhs))},
                notes="one gradient step violated ‖∇F‖ ≤ λ‖x − y‖",
            )
        D2 = float(np.sum((x0 - orc.x_star()) ** 2))
        R = np.arange(1, h.rounds + 1)
        bound = 2 * orc.L * D2 / R**2
        use = bound > 1e-9
        worst_run = max(worst_run, float(((orc.gaps(h.x[1:]) - 1e-12) / bound)[use].max()))
    ok = worst <= 1 + PEP_RTOL and worst_run <= 1 and closed <= pep.TIGHT_RTOL and gap <= pep.TIGHT_RTOL
    return ctx.decide(
        ok,
        measured={
            "worst_pep_over_D2_over_2A_R": worst,
            "worst_run_over_2LD2_R2": worst_run,
            "R1_relative_distance_to_L_over_6": closed,
            "worst_gap_upper_vs_extracted_lower": gap,
        },
        tolerance={"pep": PEP_RTOL, "tightness": pep.TIGHT_RTOL},
        notes="Tightness: at R = 1, μ = 0 the PEP equals one gradient step's known tight worst case LD²/6 to "
        "1e-4, and every worst case, extracted and checked against the F_{μ,L} interpolation conditions, "
        "reaches the PEP value to 1e-4 (the bound itself is not tight: ratios < 1). PEPit over all convex (and 0.1-strongly convex) 1-smooth f: Algorithm 2 with n = 1, λ = L and a "
        "single gradient step as local solver stays below D²/(2A_R) (A_R ≥ R²/(4L)); logistic runs satisfy "
        "the condition with constant 1 at every round and f(x^R) − f* ≤ 2LD²/R². Note n = 1 means δ = 0, "
        "so the condition's constant is λ² (not λ²/4), the leftover of Lemma 24 being λ(λ − δ). Confirms "
        "the rebuilt Stabilized Catalyst statement.",
    )
