r"""Jiang, Rodomanov & Stich (arXiv:2407.07084), Sections 2–3 with full participation: S-DANE's Theorem 1, its
one-step Lemmas 16 and 17, Corollary 18, the stabilized proximal-point method of Section 2.1 and Remark 2. The
inventory is in ``__init__.py``; the accelerated method (Section 4) is in ``theorem_6.py``.

Every theorem is checked three ways: the inequality at every round of real runs (quadratics with exact
δ_A, unequal weights, non-commuting Hessians; ℓ2-logistic clients with a valid δ_A bound; the local
solvers GD, prox-linear GD, FGM, OGM-G, FGM+OGM-G, exact), an adversarial probe (instances and the worst
admissible local answers: points on the boundary of the accuracy test), and a PEP certificate for two
clients under δ-SOD.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from fedtheory.algorithms.dane import run_dane, run_sdane
from fedtheory.algorithms.local_solvers import FGM, GD, Boundary, DaneTest, FastGradNorm
from fedtheory.certify import pep
from fedtheory.certify.params import Ball, Box, Product, quadratic_instance_param
from fedtheory.claims.controls import scaled_below_reached, tightened_bound
from fedtheory.claims.core import Control, claim
from fedtheory.problems.clients import client_oracles
from fedtheory.problems.dissimilarity import delta_A, uniform_hessians
from fedtheory.symbolic import complexity as cx

from ._full_participation import H, PEP_RTOL, DROP_CONTROL, _logistic_federation, _solvers
from ._full_participation import _near_attaining_ratio, _subset_delta, _random_rate_parameters, _probed_step
from ._full_participation import _decide_one_step_lemma, _worst_one_step_gap_over_runs
from ._full_participation import _decide_theorem_probe, _decide_pep


# --------------------------------------------------------------------------------------------
# Theorem 1
# --------------------------------------------------------------------------------------------

THEOREM_1 = (
    r"Consider Algorithm 1 with $s=n$. Let each $f_i$ be $\mu$-convex, $\mu\ge0$, with $\delta_A$-SOD, and "
    r"$\lambda=2\delta_A$. If for every $r\ge0$, $\sum_{i=1}^n\|\nabla F_{i,r}(x_{i,r+1})\|^2\le\frac{\lambda^2}4"
    r"\sum_{i=1}^n\|x_{i,r+1}-v^r\|^2$ (6), then for every $R\ge1$: $f(\bar x^R)-f^\star+\frac\mu2\|v^R-x^\star\|^2"
    r"\le\frac{\mu D^2}{2[(1+\mu/\lambda)^R-1]}\le\frac{\lambda D^2}{2R}$, $\bar x^R=\sum_{r=1}^Rp^rx^r/\sum_{r=1}^Rp^r$, "
    r"$p=1+\mu/\lambda$, $D=\|x^0-x^\star\|$. (Rebuilt.)"
)


@claim(
    id="sdane/theorem-1/runs",
    ref="Theorem 1",
    kind="simulation",
    statement=THEOREM_1,
    controls=[
        scaled_below_reached(
            "bound-0.45",
            "the bound",
            0.45,
            "the two-client instance of _near_attaining_ratio (μ = 1, δ_A = 1/2, λ = 1, exact solves) reaches 1/2 "
            "of it after one round",
        )
    ],
    title="Theorem 1 at every round of real S-DANE runs (quadratics with exact δ_A; logistic clients)",
)
def theorem_1_runs(ctx):
    rng = ctx.rng
    worst, worst_case, runs, test_fail = -np.inf, None, 0, 0
    for trial in range(12 if not ctx.full else 60):
        q = H.random_federation(rng)
        orc = client_oracles(q)
        lam = 2 * delta_A(q)
        x0 = rng.normal(size=q.d) * 3
        for solver in _solvers(rng):
            for mu in (orc.mu, 0.0):
                h = run_sdane(q, x0, 30, lam=lam, mu=mu, solver=solver)
                test_fail += h.test_failures
                r = H.sdane_ratios(orc, h, x0, mu, lam)
                runs += 1
                if r.size and r.max() > worst:
                    worst = float(r.max())
                    worst_case = {
                        "problem": q.to_json(),
                        "x0": x0.tolist(),
                        "mu": mu,
                        "lam": lam,
                        "solver": getattr(solver, "name", "?"),
                    }
    # ℓ2-logistic clients: convex and L-smooth ⇒ δ_A ≤ L/2 (variance of co-coercive gradient differences), so λ = L is
    # Theorem 1's λ = 2δ for an admissible δ; μ = min_i n p_i l2.
    for trial in range(2 if not ctx.full else 12):
        fed = _logistic_federation(rng, trial)
        orc = client_oracles(fed)
        lam = orc.L
        x0 = rng.normal(size=fed.d) * 0.3
        for solver in (GD(), FGM(), FastGradNorm()):
            h = run_sdane(fed, x0, 25, lam=lam, mu=orc.mu, solver=solver)
            test_fail += h.test_failures
            xs = orc.x_star()
            D2 = float(np.sum((x0 - xs) ** 2))
            xbar = h.weighted_average(orc.mu)
            lhs = orc.gaps(xbar) + orc.mu / 2 * np.sum((h.v[1:] - xs) ** 2, axis=1)
            rhs = np.array([H.cx_bound(R, lam, orc.mu, D2) for R in range(1, h.rounds + 1)])
            use = rhs > 1e-9  # Newton's x* is accurate to ~1e-13: gaps below 1e-12 are not resolved
            worst = max(worst, float(((lhs - 1e-12) / rhs)[use].max()))
            runs += 1
    near = _near_attaining_ratio(False)
    scale = ctx.param("bound_scale", 1.0)
    worst = max(worst, near) / scale
    ok = worst <= 1 and test_fail == 0
    return ctx.decide(
        ok,
        measured={
            "worst_ratio": worst,
            "runs": runs,
            "rounds_failing_test": test_fail,
            "near_attaining_instance_ratio": near,
        },
        tolerance={
            "absolute_slack": "100·(R+1)·d·eps·(L+1)·(‖x0‖+‖x*‖+1)² subtracted from the left side; "
            "rounds used while the bound exceeds 10⁶× that"
        },
        counterexample=None if ok else worst_case,
        notes="Checks the rebuilt Theorem 1 (rebuild §4: f(x̄^R) − f* + μ/2‖v^R − x*‖² ≤ μD²/(2[(1+μ/λ)^R−1])) "
        "on 12 random federations × 7 local solvers (GD, prox-linear GD, FGM, OGM-G, FGM+OGM-G, exact, "
        "boundary-of-test) × μ ∈ {μ, 0}, 30 rounds, unequal weights (uniform view), non-commuting "
        "Hessians, plus ℓ2-logistic clients (breast-cancer data split by Dirichlet(0.5) and IID, and "
        "generated clients) with λ = L (valid: δ_A ≤ L/2 for convex L-smooth clients). "
        "Confirms the rebuild at every round. Each local solver stops by the per-client test, which "
        "implies (6). Also one known instance reaching 1/2 of the bound (_near_attaining_ratio), the basis of "
        "the control.",
    )


def _theorem1_violation(inst, R=15):
    (problem, *_), x0, w, frac = inst["inst"], inst["x0"], inst["w"], inst["frac"]
    orc = client_oracles(problem)
    lam = 2 * delta_A(problem)
    h = run_sdane(problem, x0, R, lam=lam, mu=orc.mu, solver=Boundary(weights=tuple(w), frac=frac))
    r = H.sdane_ratios(orc, h, x0, orc.mu, lam)
    return float(r.max()) if r.size else 0.0


@claim(
    id="sdane/theorem-1/probe",
    ref="Theorem 1",
    kind="probe",
    statement=THEOREM_1,
    control_exempt=(
        "the probe searches boundary local answers (fraction ∈ [0.5, 1] of the test), where no instance "
        "near the bound is known, so no tightened constant is known false on its search space; the "
        "near-attaining exact-solve instance and its control are in sdane/theorem-1/runs, the tightness of "
        "the worst case in sdane/theorem-1/pep"
    ),
    title="Theorem 1 under an adversarial search over instances and worst admissible local answers",
)
def theorem_1_probe(ctx):
    return _decide_theorem_probe(
        ctx,
        _theorem1_violation,
        notes="Searches n = 3, d = 3 federations (rotations, spectra in [1, L], L ∈ [2, 300], unequal "
        "weights), x0 in a ball, and the local answers: each client returns x_i* + t·u with t on "
        "the boundary of the test ‖∇F_i‖² = λ²/4‖x_i − v^r‖² (fraction ∈ [0.5, 1]) along u ∝ a·w "
        "+ b·H_iw + e·z (a, b, e searched). λ = 2δ_A exact, μ = the instance's μ, 25 rounds. "
        "Confirms the rebuilt Theorem 1.",
    )


@claim(
    id="sdane/theorem-1/pep",
    ref="Theorem 1",
    kind="certificate",
    statement=THEOREM_1,
    title="Theorem 1 certified by PEP for two clients under δ-SOD (R rounds, any dimension)",
    controls=[DROP_CONTROL],
)
def theorem_1_pep(ctx):
    cases = [(1, 0.0), (2, 0.0), (2, 0.5)] + ([(1, 0.5), (3, 0.0), (3, 0.5), (4, 0.0), (4, 0.5)] if ctx.full else [])
    drop = ctx.param("drop", None)
    results = [pep.two_client_sdane(R, 2.0, mu, 1.0, drop=drop) for R, mu in cases]
    extra = {}
    if ctx.full:

        def observed(*args, **kw):  # observations beside the verdict: an SDP not solved reliably is reported as such
            try:
                return pep.two_client_sdane(*args, **kw).ratio
            except RuntimeError as exc:
                return str(exc)

        extra["lambda_4/3_delta_ratio_R2"] = observed(2, 4 / 3, 0.0, 1.0)
        extra["lambda_delta_ratio_R2_outside_hypothesis"] = observed(2, 1.0, 0.0, 1.0)
        # the accuracy constant: the derivation's λ(λ − δ)/λ² = 1/2 at λ = 2δ is exactly tight; above it the bound fails
        extra["accuracy_constant_1/2_ratio_R2"] = observed(2, 2.0, 0.0, 1.0, c=0.5)
        extra["accuracy_constant_0.6_ratio_R2"] = observed(2, 2.0, 0.0, 1.0, c=0.6)
    return _decide_pep(
        ctx,
        results,
        observed=extra,
        why="SDP solved by Clarabel to ~1e-8; 1e-5 allowed",
        notes="Tightness: each worst case is extracted (the SDP's primal solution as points, gradients and "
        "values), replayed on the real S-DANE driver (run_sdane; the clients answer from the table, "
        "the local solver returns the extracted points, (6) is re-checked), and its data pass the "
        "interpolation conditions of f_1, f_2 (μ-convex) and g (δ-smooth), checked independently "
        "of PEPit; the value it reaches on the driver is within 1e-4 (measured ≤ 3e-8) of the PEP's: "
        "the certificate is the exact worst case of its class, so a dropped class constraint is "
        "seen (its control). The class is the PEP's: each function's data interpolable on its own; "
        "a joint extension with f_1 − f_2 = 2g everywhere is not constructed. Two μ-convex clients f_1, f_2 = f_1 − 2g with g δ-smooth (exactly δ_A-SOD for n = 2), δ = 1, "
        "λ = 2δ, free local points under (6); PEP value of f(x̄^R) − f* + μ/2‖v^R − x*‖² over ‖x^0 − x*‖ ≤ 1 "
        "against μ/(2[(1+μ/λ)^R−1]). The interpolation conditions written are necessary ones, so the PEP "
        "value bounds the true worst case from above: the theorem is certified for n = 2 and these R. "
        "Worst-case ratios 0.74–0.93 (the bound is nearly tight). Seen in the full tier: λ = 4δ/3 still "
        "satisfies the bound (ratio ≈ 0.95, but Clarabel only almost solves that SDP and SCS does not reach "
        "optimal on it either, their values about 1e-3 apart: reported as not solved reliably); λ = δ (outside the hypothesis) violates it by ~1.8×, consistent with the "
        "derived admissible range λ ≥ 4δ/3. Also seen (full tier): the accuracy constant of (6) can be "
        "doubled — with Σ‖∇F_i‖² ≤ λ²/2·Σ‖x_i − v‖² (= λ(λ − δ) at λ = 2δ, the leftover of Lemma 17) the "
        "PEP ratio is exactly 1 (tight), with 0.6λ² it is 1.76 (violated). Confirms the rebuilt Theorem 1 "
        "(λ = 2δ_A, constant λ²/4 in (6)), which is sufficient and a factor 2 conservative.",
    )


# --------------------------------------------------------------------------------------------
# Section 2.1: the stabilized proximal-point method
# --------------------------------------------------------------------------------------------


@claim(
    id="sdane/section-2.1/stabilized-ppm",
    ref="Section 2.1 (with Theorem 1 for n = 1)",
    kind="certificate",
    title="The stabilized PPM under the relaxed condition ‖∇F_k(x_{k+1})‖ ≤ λ‖x_{k+1} − v_k‖ keeps the PPM rate (tight)",
    controls=[
        tightened_bound(
            0.999,
            "the worst case λD²/(2K) at μ = 0",
            "f = (λ/K)|x| (pep.abs_stabilized_ppm, a plain loop)",
            {"closed_form_scale": 0.999},
            name="closed-form-0.999",
        )
    ],
    statement=r"The stabilized proximal-point method (3) with the relative accuracy condition "
    r"$\|\nabla F_k(x_{k+1})\|\le\lambda\|x_{k+1}-v_k\|$ has the iteration complexity of the exact method (2): "
    r"$f(\bar x_K)-f^\star+\frac\mu2\|v_K-x^\star\|^2\le\frac{\mu D^2}{2[(1+\mu/\lambda)^K-1]}\le\frac{\lambda D^2}{2K}$ "
    r"(Theorem 1 with $n=1$). (Rebuilt.)",
)
def stabilized_ppm_claim(ctx):
    Ks = (1, 2, 4) if not ctx.full else (1, 2, 4, 8, 12)
    res = [pep.stabilized_ppm(K, 1.0, mu) for K in Ks for mu in (0.0, 0.3)]
    worst = max(r.ratio for r in res)
    tight = [r.ratio for r in res if r.params["mu"] == 0.0]
    scale = ctx.param("closed_form_scale", 1.0)
    # the PEP's value against the attaining instance's, both ways: a loosened PEP overshoots, a wrong one undershoots
    closed = [
        abs(r.value - scale * pep.abs_stabilized_ppm(r.params["K"], 1.0)) / r.bound
        for r in res
        if r.params["mu"] == 0.0
    ]
    gap = pep.worst_gap(res)
    ok = worst <= 1 + PEP_RTOL and max(closed) <= pep.TIGHT_RTOL and gap <= pep.TIGHT_RTOL
    return ctx.decide(
        ok,
        measured={
            "worst_pep_over_bound": worst,
            "mu0_ratios": tight,
            "worst_relative_distance_to_attaining_instance": max(closed),
            "worst_gap_upper_vs_extracted_lower": gap,
        },
        tolerance={"relative": PEP_RTOL, "tightness": pep.TIGHT_RTOL},
        notes="Tightness: at μ = 0 the PEP value equals, to 1e-4, the value λD²/(2K) that the stabilized PPM "
        "reaches on f = (λ/K)|x| (x_0 = 1, each local point at the boundary of the condition), and every "
        "PEP's worst case, extracted and checked against the μ-convex interpolation conditions, reaches "
        "the PEP value to 1e-4. PEPit over all (μ-)convex f, ‖x_0 − x*‖ ≤ 1, λ = 1, relative accuracy c = 1 (‖∇F‖² ≤ λ²‖x − v‖²): "
        "the worst case equals λD²/(2K) exactly at μ = 0 (ratio 1 to solver accuracy: the bound is tight) "
        "and is below the bound for μ = 0.3. Confirms the rebuilt condition (constant 1 for n = 1, the "
        "[N] note of rebuild §2).",
    )


@claim(
    id="sdane/section-2.1/one-gradient-step",
    ref="Section 2.1 (with Theorem 1 for n = 1)",
    kind="certificate",
    title="One gradient step x = v − ∇f(v)/L satisfies the relaxed condition with λ = L (indeed with any λ ≥ L/2)",
    statement=r"When $f$ is $L$-smooth and $\lambda=L$, the relaxed accuracy condition $\|\nabla F(x)\|\le\lambda\|x-v\|$, "
    r"$F=f+\frac\lambda2\|\cdot-v\|^2$, is satisfied after one gradient step $x=v-\frac1L\nabla f(v)$ "
    r"(Nesterov 2013, Lemma 5).",
    controls=[
        Control(
            "lambda-0.2L",
            "the condition claimed also for λ = 0.2L: false, f = (L/4)‖x‖² gives "
            "‖∇F(x)‖ = 0.15L‖v‖ > λ‖x − v‖ = 0.1L‖v‖ after the step",
            {"claimed_lambdas": [1.0, 0.5, 0.2]},
        )
    ],
)
def one_gradient_step(ctx):
    ratios = {}
    claimed = [float(v) for v in ctx.param("claimed_lambdas", [1.0, 0.5])]
    for lam in sorted(set(claimed) | {0.45}, reverse=True):
        ratios[lam] = H.one_gradient_step_pep(
            lambda f, v, g0, x, lam=lam: (f.gradient(x) + lam * (x - v)) ** 2 - lam**2 * (x - v) ** 2
        )
    ok = all(ratios[lam] <= 1e-6 for lam in claimed)
    return ctx.decide(
        ok,
        measured={f"max_violation_lambda_{k}L": v for k, v in ratios.items()},
        tolerance={"pep": "1e-6 absolute, ‖∇f(v)‖ ≤ 1, L = 1"},
        notes="PEP over all convex 1-smooth f: max of ‖∇F(x)‖² − λ²‖x − v‖² after x = v − ∇f(v)/L is ≤ 0 for "
        "λ = L (the statement; it is ‖∇f(x) − ∇f(v)‖ ≤ L‖x − v‖) and also for λ = L/2 (co-coercivity), "
        "positive for λ = 0.45L. Confirms the rebuild's [D] remark that any λ ≥ L/2 works.",
    )


# --------------------------------------------------------------------------------------------
# Corollary 18
# --------------------------------------------------------------------------------------------


@claim(
    id="sdane/corollary-18",
    ref="Corollary 18",
    kind="symbolic",
    title="S-DANE reaches ε after (1 + λ/μ) ln(1 + μD²/(2ε)) rounds; δ_AD²/ε as μ → 0",
    statement=r"Under Theorem 1, $f(\bar x^R)-f^\star\le\varepsilon$ for $R\ge(1+\frac\lambda\mu)\ln(1+\frac{\mu D^2}{2\varepsilon})$ "
    r"(using $\ln(1+x)\ge\frac x{1+x}$); with $\lambda=2\delta_A$ this is $O(\frac{\delta_A+\mu}{\mu}\log(1+\frac{\mu D^2}\varepsilon))$ "
    r"and tends to $\frac{\delta_AD^2}{\varepsilon}$ as $\mu\to0$. (Rebuilt.)",
    controls=[
        Control(
            "half-the-rounds",
            "half of (1 + λ/μ)ln(1 + μD²/(2ε)) rounds suffice: false for μ < λ, where the "
            "exact requirement ln(1 + μD²/(2ε))/ln(1 + μ/λ) exceeds it (1/ln(1 + x) > (1 + 1/x)/2 for 0 < x ≤ 1)",
            {"rounds_factor": 0.5},
        )
    ],
)
def corollary_18(ctx):
    t = sp.Symbol("t", positive=True)
    # ln(1+t) − t/(1+t) vanishes at 0 and has derivative t/(1+t)² ≥ 0
    deriv = sp.simplify(sp.diff(sp.log(1 + t) - t / (1 + t), t))
    proof = sp.simplify(deriv - t / (1 + t) ** 2) == 0 and sp.limit(sp.log(1 + t) - t / (1 + t), t, 0) == 0
    lim = sp.limit(cx.corollary_18(), cx.mu, 0)
    # numeric: after ⌈R18⌉ rounds the bound μD²/(2[(1+μ/λ)^R−1]) is ≤ ε (grid + random, high precision)
    import mpmath

    worst = mpmath.mpf(0)
    rng = ctx.rng
    with mpmath.workdps(40):
        for _ in range(2000):
            lam, mu, D2, eps = _random_rate_parameters(rng, 1, (-8, 3))
            R = int(mpmath.ceil(ctx.param("rounds_factor", 1.0) * (1 + lam / mu) * mpmath.log(1 + mu * D2 / (2 * eps))))
            bound = mu * D2 / (2 * ((1 + mu / lam) ** R - 1))
            worst = max(worst, bound / eps)
    # on real runs: rounds to reach ε are at most ⌈R18⌉
    worst_rounds = 0.0
    for _ in range(4):
        q = H.random_federation(rng)
        orc = client_oracles(q)
        lam = 2 * delta_A(q)
        x0 = rng.normal(size=q.d) * 3
        h = run_sdane(q, x0, 60, lam=lam, mu=orc.mu, solver=GD())
        D2 = float(np.sum((x0 - orc.x_star()) ** 2))
        gaps = orc.gaps(h.weighted_average(orc.mu))
        for eps in D2 * lam * np.logspace(-1, -6, 6):
            R18 = math.ceil((1 + lam / orc.mu) * math.log1p(orc.mu * D2 / (2 * eps)))
            hit = np.flatnonzero(gaps <= eps)
            if R18 <= h.rounds:
                first = hit[0] + 1 if hit.size else np.inf
                worst_rounds = max(worst_rounds, first / R18)
    ok = proof and lim == cx.delta_A * cx.D**2 / cx.eps and worst <= 1 and worst_rounds <= 1
    return ctx.decide(
        ok,
        measured={
            "ln_inequality_proved": bool(proof),
            "limit_mu_0": str(lim),
            "worst_bound_over_eps_at_R18": float(worst),
            "worst_rounds_over_R18_runs": worst_rounds,
        },
        notes="ln(1+t) ≥ t/(1+t) proved (sympy: equality at 0, derivative t/(1+t)² ≥ 0), so R ≥ (1+λ/μ)ln(1+μD²/(2ε)) "
        "makes Theorem 1's bound ≤ ε (checked in 40 digits over 2000 random (λ, μ, D, ε)); the limit μ → 0 is "
        "δ_AD²/ε; real runs reach ε within ⌈R18⌉ rounds. Confirms the rebuilt Corollary 18.",
    )


# --------------------------------------------------------------------------------------------
# Lemma 16 and Lemma 17
# --------------------------------------------------------------------------------------------

LEMMA_16 = (
    r"Suppose $f_i$ ($i\in S$, $|S|=s$) are convex with $\delta_s$-SOD. Fix $v$, $\lambda>0$ and let "
    r"$F_i(x)=f_i(x)+\langle\nabla h_i^S(v),x\rangle+\frac\lambda2\|x-v\|^2$. For any points $\{x_i\}_{i\in S}$ with "
    r"$\bar x=\frac1s\sum x_i$: $\frac1s\sum_{i\in S}[f_i(x_i)+\langle\nabla f_i(x_i),v-x_i\rangle]-\frac1{2\lambda}"
    r"\|\frac1s\sum\nabla f_i(x_i)\|^2\ge f_S(\bar x)+\frac{\lambda-\delta_s}2\frac1s\sum\|x_i-v\|^2-\frac1{2\lambda}"
    r"\frac1s\sum\|\nabla F_i(x_i)\|^2$. (Rebuilt.)"
)


def lemma_16_gap(orc, A, S, v, X, lam, delta_scale=1.0):
    """(LHS − RHS, scale) of Lemma 16 for clients S at points X (s, d), with δ = the subset's own SOD constant."""
    s = len(S)
    V = np.broadcast_to(v, (s, orc.d)).copy()
    Gv = orc.grads(V, S)
    G = orc.grads(X, S)
    fX = orc.client_losses(X, S)
    xbar = X.mean(0)
    fS_xbar = float(np.mean(orc.client_losses(np.broadcast_to(xbar, (s, orc.d)).copy(), S)))
    lhs_terms = fX + np.einsum("ij,ij->i", G, V - X)
    gbar = G.mean(0)
    lhs = float(lhs_terms.mean()) - float(gbar @ gbar) / (2 * lam)
    gradF = G - (Gv - Gv.mean(0)) + lam * (X - V)
    U = float(np.mean(np.sum((X - V) ** 2, axis=1)))
    delta = _subset_delta(A, S) * delta_scale
    rhs = fS_xbar + (lam - delta) / 2 * U - float(np.mean(np.sum(gradF**2, axis=1))) / (2 * lam)
    scale = (
        abs(float(lhs_terms.mean()))
        + float(gbar @ gbar) / (2 * lam)
        + abs(fS_xbar)
        + (lam + delta) / 2 * U
        + float(np.mean(np.sum(gradF**2, axis=1))) / (2 * lam)
    )
    return lhs - rhs, scale


SOD_DROPPED = Control(
    "sod-term-dropped",
    "the lemma with δ_s replaced by 0 (the SOD term dropped): false for "
    "heterogeneous clients, the Cauchy–Schwarz steps of the SOD term are attained (x̄ − v along the top "
    "eigenvector of (1/s)Σ(A_i − A_S)², the x_i − x̄ along the gradient differences)",
    {"delta_scale": 0.0},
)


@claim(
    id="sdane/lemma-16",
    ref="Lemma 16",
    kind="probe",
    statement=LEMMA_16,
    controls=[SOD_DROPPED],
    title="Lemma 16 for arbitrary local points, every subset, quadratic clients with the subset's exact δ",
)
def lemma_16(ctx):
    rng = ctx.rng
    worst = -np.inf
    for _ in range(40 if not ctx.full else 300):
        q = H.random_federation(rng, target=False)
        orc = client_oracles(q)
        A = uniform_hessians(q)
        s = int(rng.integers(1, q.n + 1))
        S = np.sort(rng.choice(q.n, size=s, replace=False))
        v = rng.normal(size=q.d) * 3
        X = v + rng.normal(size=(s, q.d)) * float(10 ** rng.uniform(-2, 1))
        lam = float(10 ** rng.uniform(-1, 1)) * max(_subset_delta(A, S), 1e-3)
        gap, scale = lemma_16_gap(orc, A, S, v, X, lam, ctx.param("delta_scale", 1.0))
        worst = max(worst, -gap / scale)

    def violation(inst):
        orc, A, S, x0, X, lam = _probed_step(inst)
        gap, scale = lemma_16_gap(orc, A, S, x0, X, lam, ctx.param("delta_scale", 1.0))
        return -gap / scale

    P = Product(
        inst=quadratic_instance_param(n=3, d=3, mu=1.0, L=(2.0, 300.0), K=1),
        x0=Ball(3, 5.0),
        w=Box(-1.0, 1.0, shape=3),
        pts=Box(-3.0, 3.0, shape=9),
        lamf=Box(0.05, 5.0, log=True),
    )
    return _decide_one_step_lemma(
        ctx,
        worst,
        violation,
        P,
        why="(RHS − LHS) over the sum of the terms' magnitudes; float64 sums of O(10) terms: ~1e-15 expected, "
        "1e-10 allowed",
        notes="Lemma 16 needs no accuracy condition: the points x_i are arbitrary (random and probe-optimized), "
        "λ arbitrary > 0, S any subset, δ the subset's own exact SOD constant (≤ δ_s, so this is a "
        "stronger check). Worst values are ≤ 0 up to rounding (the lemma is tight when SOD is tight). "
        "Confirms the rebuilt Lemma 16 (constant (λ − δ_s)/2, derived in the rebuild and re-derived "
        "here: the SOD term is Σ⟨∇h_i(x̄) − ∇h_i(v), x_i − x̄⟩ ≤ δ‖x̄ − v‖·√V ≤ δ/2·U by Lemma 11).",
    )


@claim(
    id="sdane/lemma-16/pep",
    ref="Lemma 16",
    kind="certificate",
    statement=LEMMA_16,
    controls=[SOD_DROPPED],
    title="Lemma 16 certified by PEP for two convex clients under δ-SOD",
)
def lemma_16_pep(ctx):
    from PEPit import PEP

    from fedtheory.certify.pep import close_sod_pair, sod_pair

    worst = -np.inf
    for lam in (0.5, 1.0, 2.0, 5.0):
        pb = PEP()
        f1, g, f2, _ = sod_pair(pb, 0.0, 1.0)
        v = pb.set_initial_point()
        xs = [pb.set_initial_point(), pb.set_initial_point()]
        xbar = 0.5 * (xs[0] + xs[1])
        close_sod_pair(pb, f1, f2, [v, xs[0], xs[1], xbar], 0.0)
        gv = [f1.gradient(v), f2.gradient(v)]
        gS = 0.5 * (gv[0] + gv[1])
        gi = [f1.gradient(xs[0]), f2.gradient(xs[1])]
        fi = [f1(xs[0]), f2(xs[1])]
        U = 0.5 * ((xs[0] - v) ** 2 + (xs[1] - v) ** 2)
        pb.set_initial_condition(U <= 1)
        lhs = (
            0.5 * (fi[0] + gi[0] * (v - xs[0]) + fi[1] + gi[1] * (v - xs[1]))
            - (1 / (2 * lam)) * (0.5 * (gi[0] + gi[1])) ** 2
        )
        E = 0.5 * ((gi[0] - gv[0] + gS + lam * (xs[0] - v)) ** 2 + (gi[1] - gv[1] + gS + lam * (xs[1] - v)) ** 2)
        fbar = 0.5 * (f1(xbar) + f2(xbar))
        rhs = fbar + ((lam - 1.0 * ctx.param("delta_scale", 1.0)) / 2) * U - (1 / (2 * lam)) * E
        pb.set_performance_metric(rhs - lhs)
        worst = max(worst, float(pb.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)))
    ok = worst <= 1e-6
    return ctx.decide(
        ok,
        measured={"worst_rhs_minus_lhs": worst},
        tolerance={"absolute": 1e-6, "why": "SDP accuracy with (1/s)Σ‖x_i − v‖² ≤ 1, δ = 1"},
        notes="n = 2 convex clients with f_1 − f_2 = 2g, g 1-smooth (δ_A-SOD with δ = 1), λ ∈ {0.5, 1, 2, 5}: "
        "the PEP maximum of RHS − LHS is 0. Confirms the rebuilt Lemma 16 over all functions of the class.",
    )


LEMMA_17 = (
    r"Consider Algorithm 1 with $f_i$ $\mu$-convex and $\delta_s$-SOD. For any $x$: "
    r"$f_{S_r}(x^{r+1})-f_{S_r}(x)+\frac{\lambda+\mu}2\|v^{r+1}-x\|^2\le\frac\lambda2\|v^r-x\|^2-\frac{\lambda-\delta_s}2"
    r"\frac1s\sum_{i\in S_r}\|x_{i,r+1}-v^r\|^2+\frac1{2\lambda}\frac1s\sum_{i\in S_r}\|\nabla F_{i,r}(x_{i,r+1})\|^2$ (C.1). (Rebuilt.)"
)


def lemma_17_gap(orc, A, S, v, X, lam, mu, x, delta_scale=1.0):
    """(RHS − LHS, scale) of (C.1) for one S-DANE step from v with client points X (any), δ = δ(S)."""
    s = len(S)
    V = np.broadcast_to(v, (s, orc.d)).copy()
    Gv = orc.grads(V, S)
    G = orc.grads(X, S)
    xn = X.mean(0)
    vn = (lam * v + mu * xn - G.mean(0)) / (lam + mu)
    fS = lambda z: float(np.mean(orc.client_losses(np.broadcast_to(z, (s, orc.d)).copy(), S)))  # noqa: E731
    gradF = G - (Gv - Gv.mean(0)) + lam * (X - V)
    U = float(np.mean(np.sum((X - V) ** 2, axis=1)))
    E = float(np.mean(np.sum(gradF**2, axis=1)))
    delta = _subset_delta(A, S) * delta_scale
    lhs = fS(xn) - fS(x) + (lam + mu) / 2 * float(np.sum((vn - x) ** 2))
    rhs = lam / 2 * float(np.sum((v - x) ** 2)) - (lam - delta) / 2 * U + E / (2 * lam)
    scale = (
        abs(fS(xn))
        + abs(fS(x))
        + (lam + mu) / 2 * float(np.sum((vn - x) ** 2))
        + lam / 2 * float(np.sum((v - x) ** 2))
        + (lam + delta) / 2 * U
        + E / (2 * lam)
    )
    return rhs - lhs, scale


@claim(
    id="sdane/lemma-17",
    ref="Lemma 17",
    kind="probe",
    statement=LEMMA_17,
    control_exempt="(C.1) is Lemma 16 (whose SOD-term control fires) plus μ-convexity steps that add slack; with the "
    "SOD term dropped the search finds no violation (tried), and no instance attaining (C.1) is known, "
    "so no tightened variant is known false a priori",
    title="Lemma 17 (C.1) at every round of real runs (full and partial participation) and for adversarial local points",
)
def lemma_17(ctx):
    def gap(orc, A, h, r, lam, x):
        return lemma_17_gap(orc, A, h.clients[r], h.v[r], h.client_x[r], lam, orc.mu, x, ctx.param("delta_scale", 1.0))

    worst, rounds = _worst_one_step_gap_over_runs(ctx, run_sdane, gap)

    def violation(inst):
        orc, A, S, x0, X, lam = _probed_step(inst)
        gap, scale = lemma_17_gap(orc, A, S, x0, X, lam, orc.mu, np.asarray(inst["x"]), ctx.param("delta_scale", 1.0))
        return -gap / scale

    P = Product(
        inst=quadratic_instance_param(n=3, d=3, mu=1.0, L=(2.0, 300.0), K=1),
        x0=Ball(3, 5.0),
        pts=Box(-3.0, 3.0, shape=9),
        lamf=Box(0.05, 5.0, log=True),
        x=Ball(3, 5.0),
    )
    return _decide_one_step_lemma(
        ctx,
        worst,
        violation,
        P,
        measured={"rounds_checked": rounds},
        why="(LHS − RHS) over the terms' magnitudes, float64",
        notes="(C.1) holds for any local points (no accuracy condition), any x, any λ > 0, s ≤ n, with δ the "
        "sampled subset's exact SOD constant: checked at every round of S-DANE runs (GD with K = 2, FGM, "
        "and boundary answers up to 3× outside the test) at x = x* and a random x, plus a probe over "
        "instances, points, x and λ. Confirms the rebuilt Lemma 17.",
    )


# --------------------------------------------------------------------------------------------
# Remark 2
# --------------------------------------------------------------------------------------------


@claim(
    id="sdane/remark-2/classical-ppm",
    ref="Remark 2",
    kind="certificate",
    title="Remark 2: under S-DANE's fixed relative accuracy, the classical prox-centre loses the λD²/(2K) guarantee; "
    "DANE's 1/(r+1)² tightening restores it",
    controls=[
        Control(
            "stabilized-centre",
            "the 'fixed test loses the guarantee' half for the stabilized centre v_k "
            "(same test, same averaged iterate): false, Theorem 1 with n = 1 (proved in the rebuild, c = 1/4 ≤ 1) "
            "gives f(x̄_K) − f* ≤ λD²/(2K)",
            {"centre": "stabilized"},
        )
    ],
    statement=r"To achieve Theorem 1's guarantee, DANE (prox-centre $x^r$) requires the accuracy condition with an extra "
    r"$(r+1)^2$ in the denominator, "
    r"$\sum_i\|\nabla F_{i,r}(x_{i,r+1})\|^2\le\frac{c\lambda^2}{(r+1)^2}\sum_i\|x_{i,r+1}-x^r\|^2$, "
    r"while S-DANE's (6) has none. (Rebuilt; shown here for $n=1$, where DANE is the proximal-point method (2).)",
)
def remark_2_classical(ctx):
    Kav = (4, 8) if not ctx.full else (4, 8, 16)
    if ctx.param("centre", "classical") == "stabilized":
        fixed_avg = [pep.stabilized_ppm(K, 1.0, 0.0, c=0.25) for K in Kav]
    else:
        fixed_avg = [pep.classical_ppm(K, 1.0, c=0.25, average=True) for K in Kav]
    tight = [pep.classical_ppm(K, 1.0, c=0.25, tighten=True) for K in (4, 8)]
    stab = [pep.stabilized_ppm(K, 1.0, 0.0, c=0.25) for K in (4, 8)]
    extra = {}
    if ctx.full:
        extra["fixed_last_iterate_K16"] = pep.classical_ppm(16, 1.0, c=0.25).ratio
    # "exceeds the bound" needs an instance: the extracted worst case's value (a lower bound), not the PEP's
    worst_fixed = max(r.lower / r.bound if math.isfinite(r.lower) else -math.inf for r in fixed_avg)
    ok = (
        worst_fixed > 1 + 1e-3
        and max(r.ratio for r in tight) <= 1 + PEP_RTOL
        and max(r.ratio for r in stab) <= 1 + PEP_RTOL
    )
    return ctx.decide(
        ok,
        measured={
            "fixed_test_average_ratio": {r.params["K"]: r.ratio for r in fixed_avg},
            "fixed_test_average_attained_ratio": worst_fixed,
            "tightened_test_last_ratio": {r.params["K"]: r.ratio for r in tight},
            "stabilized_same_test_ratio": {r.params["K"]: r.ratio for r in stab},
            **extra,
        },
        tolerance={"relative": PEP_RTOL, "violation": "a ratio above 1 + 1e-3 (far above SDP accuracy)"},
        notes="n = 1, λ = 1, c = 1/4 (S-DANE's constant), f convex, ‖x_0 − x*‖ ≤ 1, ratio = PEP worst case / "
        "λD²/(2K). Proximal-point with prox-centre x_k under the fixed test: the averaged iterate's worst "
        "case exceeds λD²/(2K) (1.26 at K = 4, 1.54 at K = 8) and the last iterate's ratio grows with K "
        "(above 1 at K = 16, full tier); with DANE's (k+1)² tightening the ratio stays below 1, and the "
        "stabilized centre v_k under the same fixed test stays below 1. Supports Remark 2; confirms the "
        "rebuilt DANE condition's role (its constant c was lost; c = 1/4 used).",
    )


@claim(
    id="sdane/remark-2/dane-runs",
    ref="Remark 2",
    kind="simulation",
    control_exempt="a qualitative statement (DANE's local steps grow with r, S-DANE's stay bounded) read off runs; the "
    "step counts depend on the instances, so no variant is known false independently of these runs",
    title="Remark 2 in runs: with GD locally, DANE's tightening test makes local steps grow with r; S-DANE's stay bounded",
    statement=r"DANE's accuracy condition has the overhead $(r+1)^2$, so its local work per round grows with $r$, whereas "
    r"S-DANE's condition (6) is met by a constant number of local GD steps (Remark 4).",
)
def remark_2_runs(ctx):
    rng = ctx.rng
    slopes, sd_max, bounds = [], [], []
    for _ in range(4 if not ctx.full else 16):
        q = H.random_federation(rng, mu=1e-3, L=float(rng.uniform(30, 100)), frac=0.3)
        orc = client_oracles(q)
        lam = 2 * delta_A(q)
        x0 = rng.normal(size=q.d) * 3
        d = run_dane(q, x0, 40, lam=lam, solver=GD(), test=DaneTest(c=0.25))
        s = run_sdane(q, x0, 40, lam=lam, mu=orc.mu, solver=GD())
        steps = d.local_evals.max(axis=1).astype(float)
        r = np.arange(1, d.rounds + 1)
        use = d.gap[1:] > 1e-10 * d.gap[0]  # while the run has not converged to float64
        slopes.append(np.polyfit(np.log(r[use]), steps[use], 1)[0] if use.sum() > 5 else np.nan)
        sd_max.append(int(s.local_evals.max()))
        bounds.append(GD.steps_bound(orc.L, lam) + 1)
    ok = np.nanmin(slopes) > 0 and all(m <= b for m, b in zip(sd_max, bounds))
    return ctx.decide(
        ok,
        measured={
            "dane_steps_per_log_round_min": float(np.nanmin(slopes)),
            "sdane_max_steps": sd_max,
            "sdane_step_bounds": bounds,
        },
        notes="GD (step 1/(L_i+λ)) on random quadratics (λ = 2δ_A): DANE's per-round max local steps grow "
        "linearly in log(r+1) (fitted slope > 0, the (r+1)² of its test), S-DANE's never exceed "
        "Remark 19's bound ⌈3(L+λ)/λ⌉ (+1 for ∇f_i(v^r)). Confirms the rebuilt DANE test's effect "
        "(c = 1/4 chosen; the paper's constant was lost).",
    )
