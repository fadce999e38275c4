r"""Jiang, Rodomanov & Stich (arXiv:2407.07084), full participation: Theorems 1 and 6, their one-step
lemmas (16, 17, 24), Corollaries 18 and 25, the stabilized proximal-point method of Section 2.1,
Remark 2 and the "Stabilized Catalyst" of Section 4. The inventory is in ``sdane.py``.

Every theorem is checked three ways: the inequality at every round of real runs (quadratics with exact
δ_A, unequal weights, non-commuting Hessians; ℓ2-logistic clients with a valid δ_A bound; the local
solvers GD, prox-linear GD, FGM, OGM-G, FGM+OGM-G, exact), an adversarial probe (instances and the worst
admissible local answers: points on the boundary of the accuracy test), and a PEP certificate for two
clients under δ-SOD.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import sympy as sp

from fedtheory.algorithms.dane import acc_coefficient, run_acc_sdane, run_dane, run_sdane
from fedtheory.algorithms.local_solvers import FGM, GD, OGMG, Boundary, DaneTest, Exact, FastGradNorm, ProxLinearGD
from fedtheory.certify import pep
from fedtheory.certify.params import Ball, Box, Product, quadratic_instance_param
from fedtheory.certify.probe import probe
from fedtheory.claims.controls import tightened_bound
from fedtheory.claims.core import Control, claim
from fedtheory.claims.probing import decide_by_probe
from fedtheory.content import load_module
from fedtheory.problems.clients import client_oracles
from fedtheory.problems.dissimilarity import delta_A, delta_s, uniform_hessians
from fedtheory.problems.finite_sum import LogisticFederation
from fedtheory.symbolic import complexity as cx

H = load_module(Path(__file__).with_name("definitions_and_lemmas.py"))
EPS = H.EPS
PEP_RTOL = pep.SDP_RTOL

#: the defect issue 15 found passing every check: the two-client PEP without client 2's μ-convexity
DROP_CONTROL = Control(
    "pep-without-client-2-strong-convexity",
    "the PEP with f_2 only convex (its μ-convexity dropped) taken for the theorem's class: it is the PEP of a larger "
    "class (f_2 convex, not μ-convex, admitted), so its worst case (μ = 0.5) is an instance outside the class and "
    "the certificate must not find it attained inside — the tightness comparison must fail",
    {"drop": "client-2-strong-convexity"},
)


def _pep_tightness(results) -> dict:
    """The certificates' tightness measurements: worst relative gap between the PEP value and the value the
    extracted worst case reaches on the real driver, and the worst class violation of that instance."""
    return {
        "worst_gap_upper_vs_replayed_lower": pep.worst_gap(results),
        "worst_class_violation": max(r.class_violation for r in results),
        "lower": {f"R{r.params['R']}_mu{r.params['mu']}": r.lower for r in results},
    }


def _logistic_federation(rng, trial):
    """ℓ2-logistic clients: scikit-learn's breast-cancer data split by Dirichlet(0.5) (even trials; IID every
    fourth) or generated clients with shifted features (odd trials)."""
    from fedtheory.problems.datasets import federate, load_dataset, partition_dirichlet, partition_iid

    if trial % 2 == 0:
        X, y = load_dataset("breast_cancer")
        seed = int(rng.integers(1 << 30))
        parts = partition_iid(len(y), 4, seed=seed) if trial % 4 == 2 else partition_dirichlet(y, 4, 0.5, seed=seed)
        return federate(X, y, parts, model="logistic", l2=0.05)
    return LogisticFederation.random(4, [20, 30, 40, 50], 3, heterogeneity=1.0, l2=0.05, seed=rng)


def _solvers(rng):
    return [
        GD(),
        ProxLinearGD(),
        FGM(),
        OGMG(),
        FastGradNorm(),
        Exact(),
        Boundary(weights=tuple(rng.normal(size=3)), seed=int(rng.integers(1 << 30))),
    ]


def _near_attaining_ratio(accelerated: bool) -> float:
    """The theorem's ratio after one round on a known instance that comes close to its bound: two clients sharing
    the eigenpair (1, e_1) and differing on e_2 by ±δ_A, x* = 0, x^0 = 5e_1, exact local solves. Along e_1 the
    clients agree and one round contracts the error by λ/(λ + 1), so Theorem 1 (μ = 1, δ_A = 1/2, λ = 1) reaches
    2λ/(λ + 1)² = 1/2 of its bound and Theorem 6's potential (μ = 0, δ_A = 100, λ = 200) λ/(λ + 1) = 200/201."""
    q, x0 = H.near_attaining_federation(100.0 if accelerated else 0.5)
    orc = client_oracles(q)
    lam = 2 * delta_A(q)
    if accelerated:
        h = run_acc_sdane(q, x0, 1, lam=lam, mu=0.0, solver=Exact())
        return float(H.acc_ratios(orc, h, x0, 0.0).max())
    h = run_sdane(q, x0, 1, lam=lam, mu=orc.mu, solver=Exact())
    return float(H.sdane_ratios(orc, h, x0, orc.mu, lam).max())


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
        Control(
            "bound-0.45",
            "the bound scaled by 0.45: false, the two-client instance of _near_attaining_ratio "
            "(μ = 1, δ_A = 1/2, λ = 1, exact solves) reaches 1/2 of it after one round",
            {"bound_scale": 0.45},
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
    P = H.federation_param(3, 3)
    res = probe(
        _theorem1_violation,
        P,
        seed=ctx.rng,
        n_random=16 if not ctx.full else 100,
        n_starts=2 if not ctx.full else 4,
        maxiter=30 if not ctx.full else 150,
        target=1.0,
    )
    return decide_by_probe(
        ctx,
        res,
        measured={"failed_evaluations": res.n_failed},
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
    tight = _pep_tightness(results)
    worst = max(r.ratio for r in results)
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
    ok = worst <= 1 + PEP_RTOL and tight["worst_gap_upper_vs_replayed_lower"] <= pep.TIGHT_RTOL
    return ctx.decide(
        ok,
        measured={
            "worst_pep_over_bound": worst,
            **{f"R{r.params['R']}_mu{r.params['mu']}": r.ratio for r in results},
            **tight,
            **extra,
        },
        tolerance={
            "relative": PEP_RTOL,
            "why": "SDP solved by Clarabel to ~1e-8; 1e-5 allowed",
            "tightness": pep.TIGHT_RTOL,
            "class": pep.CLASS_ATOL,
            "test_6": pep.TEST_ATOL,
        },
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
    from PEPit import PEP
    from PEPit.functions import SmoothConvexFunction

    ratios = {}
    claimed = [float(v) for v in ctx.param("claimed_lambdas", [1.0, 0.5])]
    for lam in sorted(set(claimed) | {0.45}, reverse=True):
        pb = PEP()
        f = pb.declare_function(SmoothConvexFunction, L=1.0)
        v = pb.set_initial_point()
        g0 = f.gradient(v)
        pb.set_initial_condition(g0**2 <= 1)
        x = v - g0
        pb.set_performance_metric((f.gradient(x) + lam * (x - v)) ** 2 - lam**2 * (x - v) ** 2)
        ratios[lam] = float(pb.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0))
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


def _random_rate_parameters(rng, mu_scale: float, log10_mu_range: tuple[float, float]):
    """λ, μ = mu_scale·λ·10^U(log10_mu_range), D² and ε = D²λ·10^U(−12, 0) as 40-digit mpmath numbers, drawn in
    this order (Corollaries 18 and 25 sample their rate's parameters the same way)."""
    import mpmath

    lam = mpmath.mpf(10 ** rng.uniform(-3, 3))
    mu = mu_scale * lam * mpmath.mpf(10 ** rng.uniform(*log10_mu_range))
    D2 = mpmath.mpf(10 ** rng.uniform(-2, 4))
    eps = D2 * lam * mpmath.mpf(10 ** rng.uniform(-12, 0))
    return lam, mu, D2, eps


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


def _subset_delta(A, S):
    D = A[S] - A[S].mean(0)
    M = np.einsum("sij,sjk->ik", D, D) / len(S)
    return math.sqrt(max(float(np.linalg.eigvalsh(0.5 * (M + M.T))[-1]), 0.0))


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
        (problem, *_), x0 = inst["inst"], inst["x0"]
        orc = client_oracles(problem)
        A = uniform_hessians(problem)
        S = np.arange(problem.n)
        Z = np.asarray(inst["pts"]).reshape(problem.n, problem.d)
        lam = float(inst["lamf"]) * max(_subset_delta(A, S), 1e-6)
        gap, scale = lemma_16_gap(orc, A, S, x0, x0 + Z, lam, ctx.param("delta_scale", 1.0))
        return -gap / scale

    P = Product(
        inst=quadratic_instance_param(n=3, d=3, mu=1.0, L=(2.0, 300.0), K=1),
        x0=Ball(3, 5.0),
        w=Box(-1.0, 1.0, shape=3),
        pts=Box(-3.0, 3.0, shape=9),
        lamf=Box(0.05, 5.0, log=True),
    )
    res = probe(
        violation,
        P,
        seed=rng,
        n_random=40 if not ctx.full else 400,
        n_starts=2 if not ctx.full else 10,
        maxiter=50 if not ctx.full else 400,
        target=1e-9,
    )
    worst = max(worst, res.worst_value)
    tol = 1e-10
    ok = worst <= tol
    return ctx.decide(
        ok,
        measured={
            "worst_relative_violation": worst,
            "probe_worst": res.worst_value,
            "probe_evaluations": res.n_evaluations,
        },
        tolerance={
            "relative": tol,
            "why": "(RHS − LHS) over the sum of the terms' magnitudes; float64 sums of "
            "O(10) terms: ~1e-15 expected, 1e-10 allowed",
        },
        counterexample=None if ok else {"probe": res.to_json()},
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
    rng = ctx.rng
    worst = -np.inf
    rounds = 0
    for _ in range(5 if not ctx.full else 40):
        q = H.random_federation(rng, target=False)
        orc = client_oracles(q)
        A = uniform_hessians(q)
        s = int(rng.integers(1, q.n + 1))
        lam = float(rng.uniform(0.5, 3)) * max(delta_s(q, s), 1e-3)
        x0 = rng.normal(size=q.d) * 3
        for solver in (GD(K=2), FGM(), Boundary(weights=tuple(rng.normal(size=3)), frac=float(rng.uniform(0, 3)))):
            h = run_sdane(q, x0, 15, lam=lam, mu=orc.mu, solver=solver, clients_per_round=s, seed=rng, record=True)
            for r in range(h.rounds):
                S = h.clients[r]
                for x in (orc.x_star(), rng.normal(size=q.d) * 3):
                    gap, scale = lemma_17_gap(
                        orc, A, S, h.v[r], h.client_x[r], lam, orc.mu, x, ctx.param("delta_scale", 1.0)
                    )
                    worst = max(worst, -gap / scale)
                rounds += 1

    def violation(inst):
        (problem, *_), x0 = inst["inst"], inst["x0"]
        orc = client_oracles(problem)
        A = uniform_hessians(problem)
        S = np.arange(problem.n)
        Z = np.asarray(inst["pts"]).reshape(problem.n, problem.d)
        lam = float(inst["lamf"]) * max(_subset_delta(A, S), 1e-6)
        gap, scale = lemma_17_gap(
            orc, A, S, x0, x0 + Z, lam, orc.mu, np.asarray(inst["x"]), ctx.param("delta_scale", 1.0)
        )
        return -gap / scale

    P = Product(
        inst=quadratic_instance_param(n=3, d=3, mu=1.0, L=(2.0, 300.0), K=1),
        x0=Ball(3, 5.0),
        pts=Box(-3.0, 3.0, shape=9),
        lamf=Box(0.05, 5.0, log=True),
        x=Ball(3, 5.0),
    )
    res = probe(
        violation,
        P,
        seed=rng,
        n_random=40 if not ctx.full else 400,
        n_starts=2 if not ctx.full else 10,
        maxiter=50 if not ctx.full else 400,
        target=1e-9,
    )
    worst = max(worst, res.worst_value)
    tol = 1e-10
    ok = worst <= tol
    return ctx.decide(
        ok,
        measured={
            "worst_relative_violation": worst,
            "probe_worst": res.worst_value,
            "rounds_checked": rounds,
            "probe_evaluations": res.n_evaluations,
        },
        tolerance={"relative": tol, "why": "(LHS − RHS) over the terms' magnitudes, float64"},
        counterexample=None if ok else {"probe": res.to_json()},
        notes="(C.1) holds for any local points (no accuracy condition), any x, any λ > 0, s ≤ n, with δ the "
        "sampled subset's exact SOD constant: checked at every round of S-DANE runs (GD with K = 2, FGM, "
        "and boundary answers up to 3× outside the test) at x = x* and a random x, plus a probe over "
        "instances, points, x and λ. Confirms the rebuilt Lemma 17.",
    )


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
        Control(
            "potential-0.98",
            "the potential bound D²/2 scaled by 0.98: false, the two-client instance of "
            "_near_attaining_ratio (μ = 0, δ_A = 100, λ = 200, exact solves) reaches 200/201 of it after one "
            "round",
            {"bound_scale": 0.98},
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

    res = probe(
        violation,
        H.federation_param(3, 3),
        seed=ctx.rng,
        n_random=16 if not ctx.full else 100,
        n_starts=2 if not ctx.full else 4,
        maxiter=30 if not ctx.full else 150,
        target=1.0,
    )
    return decide_by_probe(
        ctx,
        res,
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
    worst = max(r.ratio for r in results)
    tight = _pep_tightness(results)
    ok = worst <= 1 + PEP_RTOL and tight["worst_gap_upper_vs_replayed_lower"] <= pep.TIGHT_RTOL
    return ctx.decide(
        ok,
        measured={
            "worst_pep_over_bound": worst,
            **{f"R{r.params['R']}_mu{r.params['mu']}": r.ratio for r in results},
            **tight,
        },
        tolerance={"relative": PEP_RTOL, "tightness": pep.TIGHT_RTOL, "class": pep.CLASS_ATOL, "test_6": pep.TEST_ATOL},
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
    rng = ctx.rng
    worst, rounds = -np.inf, 0
    for _ in range(5 if not ctx.full else 40):
        q = H.random_federation(rng, target=False)
        orc = client_oracles(q)
        Am = uniform_hessians(q)
        s = int(rng.integers(1, q.n + 1))
        lam = float(rng.uniform(0.5, 3)) * max(delta_s(q, s), 1e-3)
        x0 = rng.normal(size=q.d) * 3
        for solver in (GD(K=2), FGM(), Boundary(weights=tuple(rng.normal(size=3)), frac=float(rng.uniform(0, 3)))):
            h = run_acc_sdane(q, x0, 15, lam=lam, mu=orc.mu, solver=solver, clients_per_round=s, seed=rng, record=True)
            for r in range(h.rounds):
                for z in (orc.x_star(), rng.normal(size=q.d) * 3):
                    gap, scale = lemma_24_gap(
                        orc, Am, h.clients[r], h.x[r], h.v[r], h.A[r], h.B[r], h.client_x[r], lam, orc.mu, z
                    )
                    worst = max(worst, -gap / scale)
                rounds += 1

    def violation(inst):
        (problem, *_), x0 = inst["inst"], inst["x0"]
        orc = client_oracles(problem)
        Am = uniform_hessians(problem)
        S = np.arange(problem.n)
        Z = np.asarray(inst["pts"]).reshape(problem.n, problem.d)
        lam = float(inst["lamf"]) * max(_subset_delta(Am, S), 1e-6)
        A = float(inst["A"])
        gap, scale = lemma_24_gap(
            orc, Am, S, x0, np.asarray(inst["v"]), A, 1 + orc.mu * A, x0 + Z, lam, orc.mu, np.asarray(inst["z"])
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
    res = probe(
        violation,
        P,
        seed=rng,
        n_random=40 if not ctx.full else 400,
        n_starts=2 if not ctx.full else 10,
        maxiter=50 if not ctx.full else 400,
        target=1e-9,
    )
    worst = max(worst, res.worst_value)
    tol = 1e-10
    ok = worst <= tol
    return ctx.decide(
        ok,
        measured={"worst_relative_violation": worst, "probe_worst": res.worst_value, "rounds_checked": rounds},
        tolerance={"relative": tol},
        counterexample=None if ok else {"probe": res.to_json()},
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
