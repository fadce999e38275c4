r"""Jiang, Rodomanov & Stich (arXiv:2407.07084), partial participation and stochastic local solvers:
Theorems 5, 7, 21, 26, Lemmas 15 and 23, Corollaries 22 and 27. The inventory is in ``sdane.py``.

The theorems are stated in expectation over the sampled clients S_r (uniform without replacement) and
the local solvers' randomness. Here expectations are computed **exactly**: over S_r by enumerating all
C(n, s) subsets (a tree of states over R rounds), over the local noise through the exact Gaussian moments
of SGD on quadratic clients with additive Gaussian gradient noise
(:func:`fedtheory.algorithms.local_solvers.sgd_output_moments`).

The rebuilt statements (the paper's formulas were lost in conversion) are the inequalities the proofs'
remaining words produce; they are re-derived in the claims' notes. In particular the rebuilt choice is
λ ≥ (4/3)(δ̃_s + γ), δ̃_s = δ_s + Δ_s, for any γ > 0, and ζ² enters through σ_s² = (n−s)/(s(n−1))ζ².
Because ζ² (a supremum over all x) is infinite for quadratics with different Hessians, the checks use
the variance at the points the proof uses (v^r, y^r; the maximum over the visited points) — a stronger
statement that implies the paper's — and, separately, shared-Hessian instances where ζ² is exact.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from fedtheory.algorithms.dane import acc_coefficient, acc_sdane_step, run_sdane, sdane_step
from fedtheory.algorithms.local_solvers import GD, Boundary, StabilizedTest, sgd_output_moments
from fedtheory.certify.params import Ball, Box, Product, quadratic_instance_param
from fedtheory.claims.probing import decide_with_probe, probe_by_tier
from fedtheory.claims.controls import scaled_below_reached, tightened_bound
from fedtheory.claims.core import claim
from fedtheory.claims.families import claim_family
from fedtheory.content import load_module
from fedtheory.problems.clients import QuadraticOracles, client_oracles
from fedtheory.problems.dissimilarity import (
    Delta_s,
    delta_s,
    gradient_variance,
    sampling_factor,
    subsets,
    uniform_hessians,
    zeta_sq,
)
from fedtheory.problems.quadratic import QuadraticFederation, make_quadratic

H = load_module(Path(__file__).with_name("definitions_and_lemmas.py"))


def _no_known_attaining(bound: str) -> str:
    """Why a rebuilt expected-value bound declares no tightened control: ``bound`` has no known attaining instance."""
    return (
        f"{bound}: no instance attaining the bound is known (exact expectations on quadratics stay below it, and the "
        "rebuilt constants are sufficient, not known tight), so no tightened variant is known false a priori"
    )


def _shared_hessian_federation(rng, n, d):
    A0 = make_quadratic(1, d, mu=float(10 ** rng.uniform(-2, 0)), L=float(10 ** rng.uniform(0.5, 1.5)), seed=rng).A[0]
    return QuadraticFederation(
        A=np.broadcast_to(A0, (n, d, d)).copy(), c=rng.normal(size=(n, d)) * 2, p=np.full(n, 1 / n)
    )


# --------------------------------------------------------------------------------------------
# Lemma 15
# --------------------------------------------------------------------------------------------


def lemma_15_ratio(q, s, xbar, gamma, exact_zeta=False):
    """max over every choice x(S) of E_S[f(x) − f_S(x) − (Δ_s+γ)/2‖x − x̄‖²], over σ_s²/(2γ).

    For quadratics φ_S(x) = h^S(x) − (Δ+γ)/2‖x − x̄‖² is strictly concave (‖∇²h^S‖ ≤ Δ_s), so its maximum is
    h^S(x̄) + ½∇h^S(x̄)ᵀM_S⁻¹∇h^S(x̄), M_S = (Δ_s+γ)I − ∇²h^S: the worst deterministic x(S), in closed form.
    """
    orc = client_oracles(q)
    A = uniform_hessians(q)
    n, d = A.shape[0], A.shape[1]
    Ds = Delta_s(q, s)
    X = np.broadcast_to(xbar, (n, d)).copy()
    G = orc.grads(X)
    gbar = G.mean(0)
    total = 0.0
    Ss = subsets(n, s)
    for S in Ss:
        gh = gbar - G[S].mean(0)  # ∇h^S(x̄)
        Hh = A.mean(0) - A[S].mean(0)
        M = (Ds + gamma) * np.eye(d) - 0.5 * (Hh + Hh.T)
        total += 0.5 * gh @ np.linalg.solve(M, gh)  # E_S h^S(x̄) = 0 is added exactly below
    hS = np.array(
        [orc.loss(xbar) - float(np.mean(orc.client_losses(np.broadcast_to(xbar, (s, d)).copy(), S))) for S in Ss]
    )
    lhs = total / len(Ss) + float(hS.mean())
    z2 = zeta_sq(q) if exact_zeta else gradient_variance(orc, xbar)
    rhs = sampling_factor(n, s) * z2 / (2 * gamma)
    return lhs, rhs


@claim(
    id="sdane/lemma-15",
    ref="Lemma 15",
    kind="probe",
    title="Lemma 15: E_S[f(x) − f_S(x)] ≤ E_S[(Δ_s+γ)/2‖x − x̄‖²] + σ_s²/(2γ) for the worst x(S)",
    statement=r"Suppose $f_1..f_n$ satisfy $\Delta_s$-ED and $\zeta^2$-BGV; $S$ uniform in $\binom{[n]}s$; $\bar x$ fixed and "
    r"$x$ a deterministic function of $S$. For any $\gamma>0$: $\mathbb E_S[f(x)-f_S(x)]\le\mathbb E_S[\frac{\Delta_s+\gamma}2"
    r"\|x-\bar x\|^2]+\frac{\sigma_s^2}{2\gamma}$, $\sigma_s^2=\frac{n-s}{s(n-1)}\zeta^2$ (B.13). (Rebuilt.)",
    controls=[
        tightened_bound(
            0.999,
            "(B.13)'s right side",
            "the worst x(S) on shared-Hessian quadratics (Δ_s = 0, E_S‖∇h^S(x̄)‖²/(2γ) = σ_s²/(2γ) exactly, Lemma 14)",
            {"rhs_scale": 0.999},
            name="rhs-0.999",
        )
    ],
)
def lemma_15(ctx):
    rng = ctx.rng
    worst, cases, tight = -np.inf, 0, 0.0
    for trial in range(30 if not ctx.full else 200):
        shared = trial % 3 == 0
        n = int(rng.integers(2, 6))
        q = (
            _shared_hessian_federation(rng, n, int(rng.integers(2, 5)))
            if shared
            else H.random_federation(rng, n=n, target=False)
        )
        for s in range(1, n):  # s = n: h^S ≡ 0 and σ_n = 0, both sides vanish
            xbar = rng.normal(size=q.d) * 3
            gamma = float(10 ** rng.uniform(-2, 2))
            lhs, rhs = lemma_15_ratio(q, s, xbar, gamma, exact_zeta=shared)
            rhs = rhs * ctx.param("rhs_scale", 1.0)
            worst = max(worst, lhs / rhs)
            if shared:
                tight = max(tight, abs(lhs / rhs - 1))
            cases += 1

    def violation(inst):
        (problem, *_), xbar = inst["inst"], inst["xbar"]
        lhs, rhs = lemma_15_ratio(problem, int(inst["s"]), xbar, float(inst["gamma"]))
        return lhs / rhs if rhs > 0 else -1.0

    from fedtheory.certify.params import IntRange

    P = Product(
        inst=quadratic_instance_param(n=4, d=3, mu=1.0, L=(2.0, 100.0), K=1),
        xbar=Ball(3, 5.0),
        s=IntRange(1, 3),
        gamma=Box(1e-2, 1e2, log=True),
    )
    res = probe_by_tier(
        ctx, violation, P, seed=rng, n_random=(40, 300), n_starts=(2, 8), maxiter=(50, 300), target=1 + 1e-9
    )
    worst = max(worst, res.worst_value)
    ok = worst <= 1 + 1e-9
    return decide_with_probe(
        ctx,
        ok,
        res,
        {"worst_lhs_over_rhs": worst, "cases": cases, "shared_hessian_max_abs_ratio_minus_1": tight},
        tolerance={"relative": 1e-9},
        notes="The left side is maximized over every deterministic choice x(S) in closed form (the concave "
        "maximization of h^S(x) − (Δ_s+γ)/2‖x − x̄‖²), so each case is the lemma's worst case; Δ_s exact "
        "(max over subsets). ζ² is the exact sup for shared-Hessian instances (1 in 3) and the variance at "
        "x̄ otherwise (heterogeneous Hessians have ζ² = ∞; the proof only uses the variance at x̄, and the "
        "checked form implies the paper's). Confirms the rebuilt (B.13), including σ_s²'s factor "
        "(n − s)/(s(n − 1)) (Lemma 14). Found: the lemma is tight (ratio 1 to rounding) for shared-Hessian "
        "quadratics, where Δ_s = 0 and the gradient variance is the same at every point.",
    )


# --------------------------------------------------------------------------------------------
# Theorems 5 and 7: exact expectations over client sampling
# --------------------------------------------------------------------------------------------

THEOREM_5 = (
    r"Consider Algorithm 1 with $s\in[n]$, $f_i$ $\mu$-convex with $\delta_s$-SOD, $\Delta_s$-ED, $\zeta^2$-BGV, "
    r"and (9): $\sum_{i\in S_r}\|\nabla F_{i,r}(x_{i,r+1})\|^2\le\frac{\lambda^2}4\sum_{i\in S_r}\|x_{i,r+1}-v^r\|^2$. "
    r"Rebuilt: for any $\gamma>0$ and $\lambda\ge\frac43(\tilde\delta_s+\gamma)$, "
    r"$\mathbb E[f(\bar x^R)]-f^\star+\frac\mu2\mathbb E\|v^R-x^\star\|^2\le\frac{\mu D^2}{2[(1+\mu/\lambda)^R-1]}"
    r"+\frac{\sigma_s^2}{2\gamma}$; with $\gamma=\sigma_s^2/\varepsilon$ this gives $\mathbb E f(\bar x^R)-f^\star\le\varepsilon$ after "
    r"$R=O((1+\frac{\tilde\delta_s}\mu+\frac{\sigma_s^2}{\mu\varepsilon})\log(1+\frac{\mu D^2}\varepsilon))$ rounds."
)


def _sampling_paths(orc, s, R, start, step, visit):
    """Every client-sampling path of ``R`` rounds, exactly: each round every state branches into all C(n, s) subsets
    S (equally likely) by ``step(state, S, r) -> (state, failed)``. Returns the leaves as ``(state, probability,
    failures on the path)`` and the maximum of ``visit(state)`` over the states the rounds start from."""
    Ss = subsets(orc.n, s)
    states = [(start, 1.0, 0)]
    max_visit = 0.0
    for r in range(R):
        nxt = []
        for state, prob, fails in states:
            max_visit = max(max_visit, visit(state))
            for S in Ss:
                new, failed = step(state, S, r)
                nxt.append((new, prob / len(Ss), fails + failed))
        states = nxt
    return states, max_visit


def _expected_sdane(orc, x0, R, s, lam, mu, solver, test):
    """Exact E over all subset paths of f(x̄^R) − f*, ‖v^R − x*‖², and the max gradient variance at the v visited."""
    xs = orc.x_star()
    p = 1 + mu / lam
    w = p ** np.arange(1, R + 1)
    w = w / w.sum()

    def step(state, S, r):  # state: (v, running weighted sum of x)
        v, acc = state
        x_new, v_new, rd = sdane_step(orc, v, S, lam, mu, solver, test, r=r)
        failed = int(not (rd.passed | (rd.at_resolution if rd.at_resolution is not None else False)).all())
        return (v_new, acc + w[r] * x_new), failed

    states, max_var = _sampling_paths(
        orc, s, R, (x0.copy(), np.zeros_like(x0)), step, lambda state: gradient_variance(orc, state[0])
    )
    Ef = sum(pr * orc.gaps(a[None])[0] for (_, a), pr, _ in states)
    Ed = sum(pr * float(np.sum((v - xs) ** 2)) for (v, _), pr, _ in states)
    return Ef, Ed, max_var, sum(f for *_, f in states)


def _near_attaining_partial(accelerated: bool, one_step: bool = False) -> float:
    """Theorem 5's (Theorem 7's) ratio after one round, s = n = 2 (no sampling term), on the two-client instance of
    sdane/theorem-1/runs: clients sharing the eigenpair (1, e_1), differing on e_2 by ±δ_A, x^0 = 5e_1, exact solves;
    one round contracts the e_1 error by λ/(λ + 1). Theorem 5 (δ_A = 1/2, γ = 1e-3, λ = 2(δ̃_2 + γ)): 2λ/(λ + 1)² ≈ 1/2;
    Theorem 7 (δ_A = 100, γ = 1e-3, λ = (4/3)(δ̃_2 + γ)): 1 − 1/(λ + 1)² ≈ 0.99994. ``one_step``: Theorem 5's one-round
    recurrence (δ_A = 100, λ = (4/3)(δ̃_2 + γ)), E[f(x⁺) − f* + (λ+μ)/2‖v⁺ − x*‖²]/(λ/2‖v − x*‖²) = 1 − 1/(λ + 1)²."""
    from fedtheory.algorithms.local_solvers import Exact

    q, x0 = H.near_attaining_federation(100.0 if accelerated or one_step else 0.5)
    orc = client_oracles(q)
    D2 = float(np.sum(x0**2))
    dt, gamma = delta_s(q, 2) + Delta_s(q, 2), 1e-3
    if one_step:
        lam = 4 / 3 * (dt + gamma)
        lhs, _ = _one_step_sdane(orc, x0, 2, lam, orc.mu, Exact(), StabilizedTest())
        return lhs / (lam / 2 * D2)
    if accelerated:
        lam = 4 / 3 * (dt + gamma)
        Ef, Ed, A_R, B_R, _, _, _ = _expected_acc(orc, x0, 1, 2, lam, orc.mu, Exact(), StabilizedTest())
        return (A_R * Ef + B_R / 2 * Ed) / (D2 / 2)
    lam = 2 * (dt + gamma)
    Ef, Ed, _, _ = _expected_sdane(orc, x0, 1, 2, lam, orc.mu, Exact(), StabilizedTest())
    return (Ef + orc.mu / 2 * Ed) / H.cx_bound(1, lam, orc.mu, D2)


def _scaled_below_near_partial(name: str, bound: str, factor: float, delta_A: str, reaches: str, after: str = ""):
    """The control of Theorems 5 and 7: ``bound`` scaled by ``factor``, below the ratio ``reaches`` that the
    two-client instance of :func:`_near_attaining_partial` (with that ``delta_A``), evaluated on every run, reaches."""
    return scaled_below_reached(
        name,
        bound,
        factor,
        f"the two-client instance of _near_attaining_partial (s = n, δ_A = {delta_A}, exact solves) reaches {reaches} "
        f"of it{after}",
    )


class _SampledInstance(NamedTuple):
    trial: int
    shared: bool  # the clients share one Hessian: ζ² is exact
    q: QuadraticFederation
    orc: Any
    x0: np.ndarray
    D2: float
    s: int
    dt: float  # δ̃_s = δ_s + Δ_s
    gamma: float


def _sampled_instances(ctx, rng):
    """The instances Theorems 5 and 7 run every sampling path on: per trial a federation of n = 4 clients in d = 3
    (every second one with a shared Hessian, where ζ² is exact), x^0 and D² = ‖x^0 − x*‖², then for each
    s ∈ {1, 2, 3} its δ̃_s and a γ within a decade of it."""
    for trial in range(2 if not ctx.full else 16):
        shared = trial % 2 == 1
        q = _shared_hessian_federation(rng, 4, 3) if shared else H.random_federation(rng, n=4, d=3, target=False)
        orc = client_oracles(q)
        x0 = rng.normal(size=q.d) * 3
        D2 = float(np.sum((x0 - orc.x_star()) ** 2))
        for s in (1, 2, 3):
            dt = delta_s(q, s) + Delta_s(q, s)
            gamma = float(10 ** rng.uniform(-1, 1)) * max(dt, 1e-2)
            yield _SampledInstance(trial, shared, q, orc, x0, D2, s, dt, gamma)


def _sampled_answers(ctx, rng, trial: int):
    """The local answers of a sampled run: the worst admissible ones, on the boundary of (9), drawn afresh; GD
    stopped by (9) for half the trials of the full tier."""
    return GD() if ctx.full and trial % 4 >= 2 else Boundary(weights=tuple(rng.normal(size=3)))


@claim(
    id="sdane/theorem-5/expectation",
    ref="Theorem 5",
    kind="simulation",
    statement=THEOREM_5,
    controls=[_scaled_below_near_partial("bound-0.45", "the bound", 0.45, "1/2", "≈ 1/2", " after one round")],
    title="Theorem 5 in exact expectation over all client-sampling paths (R rounds)",
)
def theorem_5_expectation(ctx):
    rng = ctx.rng
    worst, runs, fails = -np.inf, 0, 0
    for i in _sampled_instances(ctx, rng):
        for lam_factor in (4 / 3, 2.0):
            lam = lam_factor * (i.dt + i.gamma)
            R = 3
            solver = _sampled_answers(ctx, rng, i.trial)
            Ef, Ed, zvar, f = _expected_sdane(i.orc, i.x0, R, i.s, lam, i.orc.mu, solver, StabilizedTest())
            z2 = zeta_sq(i.q) if i.shared else zvar
            bound = H.cx_bound(R, lam, i.orc.mu, i.D2) + sampling_factor(i.q.n, i.s) * z2 / (2 * i.gamma)
            worst = max(worst, (Ef + i.orc.mu / 2 * Ed) / bound)
            fails += f
            runs += 1
    near = _near_attaining_partial(False)
    worst = max(worst, near) / ctx.param("bound_scale", 1.0)
    ok = worst <= 1 and fails == 0
    return ctx.decide(
        ok,
        measured={
            "worst_expectation_over_bound": worst,
            "instances": runs,
            "paths_failing_test": fails,
            "near_attaining_instance_ratio": near,
        },
        notes="Includes a known instance near the bound (_near_attaining_partial, s = n; the control's basis). "
        "n = 4, s ∈ {1, 2, 3}, R = 3 rounds: every one of C(4, s)³ sampling paths is run (the worst "
        "admissible local answers, on the boundary of (9); GD stopped by (9) too in the full tier), and E[f(x̄^R) − f*] + μ/2 E‖v^R − x*‖² is compared with "
        "μD²/(2[(1+μ/λ)^R−1]) + σ_s²/(2γ), for λ = (4/3)(δ̃_s + γ) (the smallest admissible) and 2(δ̃_s + γ). "
        "ζ² exact for shared-Hessian instances; otherwise the maximum gradient variance over the visited "
        "v^r (the proof applies Lemma 15 at x̄ = v^r). Derivation of the rebuilt bound: Lemma 17 at x = x*, "
        "add h^S(x^{r+1}) and bound it by Lemma 15 at x̄ = v^r with ‖x^{r+1} − v^r‖² ≤ (1/s)Σ‖x_i − v^r‖²; "
        "the leftover −(λ − δ_s − Δ_s − γ)/2·U + λ/8·U ≤ 0 iff λ ≥ (4/3)(δ̃_s + γ); Lemma 12 with the "
        "additive σ_s²/(2γλ). Confirms the rebuilt Theorem 5.",
    )


def _one_step_sdane(orc, v, s, lam, mu, solver, test, r=0):
    """E_S[f(x^{r+1}) − f* + (λ+μ)/2‖v^{r+1} − x*‖²] over all subsets, and the failures of the test."""
    xs = orc.x_star()
    tot, fails = 0.0, 0
    Ss = subsets(orc.n, s)
    for S in Ss:
        x_new, v_new, rd = sdane_step(orc, v, S, lam, mu, solver, test, r=r)
        tot += orc.gaps(x_new[None])[0] + (lam + mu) / 2 * float(np.sum((v_new - xs) ** 2))
        fails += int(not (rd.passed | rd.at_resolution).all())
    return tot / len(Ss), fails


@claim(
    id="sdane/theorem-5/one-step",
    ref="Theorem 5",
    kind="probe",
    statement=THEOREM_5,
    controls=[_scaled_below_near_partial("recurrence-0.99", "the recurrence's right side", 0.99, "100", "0.99994")],
    title="Theorem 5's one-round recurrence, exact over S_r, at every round of sampled runs and under adversarial answers",
)
def theorem_5_one_step(ctx):
    rng = ctx.rng
    worst, rounds, fails = -np.inf, 0, 0
    for _ in range(4 if not ctx.full else 20):
        q = H.random_federation(rng, n=4, d=3, target=False)
        orc = client_oracles(q)
        xs = orc.x_star()
        x0 = rng.normal(size=q.d) * 3
        s = int(rng.integers(1, 4))
        dt = delta_s(q, s) + Delta_s(q, s)
        gamma = float(10 ** rng.uniform(-1, 1)) * max(dt, 1e-2)
        lam = 4 / 3 * (dt + gamma)
        for solver in (GD(), Boundary(weights=tuple(rng.normal(size=3)))):
            h = run_sdane(q, x0, 10, lam=lam, mu=orc.mu, solver=solver, clients_per_round=s, seed=rng)
            for r in range(h.rounds):
                v = h.v[r]
                lhs, f = _one_step_sdane(orc, v, s, lam, orc.mu, solver, StabilizedTest(), r)
                rhs = lam / 2 * float(np.sum((v - xs) ** 2)) + sampling_factor(q.n, s) * gradient_variance(orc, v) / (
                    2 * gamma
                )
                slack = H.float_slack(orc, x0, r + 1)
                if rhs > 1e6 * slack:
                    worst = max(worst, (lhs - slack) / rhs)
                fails += f
                rounds += 1

    def violation(inst):
        (problem, *_), v, w = inst["inst"], inst["x0"], inst["w"]
        orc = client_oracles(problem)
        s = 2
        dt = delta_s(problem, s) + Delta_s(problem, s)
        gamma = float(inst["gf"]) * max(dt, 1e-2)
        lam = 4 / 3 * (dt + gamma)
        lhs, _ = _one_step_sdane(
            orc, v, s, lam, orc.mu, Boundary(weights=tuple(w), frac=inst["frac"]), StabilizedTest()
        )
        rhs = lam / 2 * float(np.sum((v - orc.x_star()) ** 2)) + sampling_factor(problem.n, s) * gradient_variance(
            orc, v
        ) / (2 * gamma)
        return lhs / rhs

    P = Product(
        inst=quadratic_instance_param(n=4, d=3, mu=1.0, L=(2.0, 100.0), K=1),
        x0=Ball(3, 5.0),
        w=Box(-1.0, 1.0, shape=3),
        frac=Box(0.5, 1.0),
        gf=Box(0.1, 10.0, log=True),
    )
    res = probe_by_tier(ctx, violation, P, seed=rng, n_random=(16, 100), n_starts=(2, 4), maxiter=(25, 150), target=1.0)
    near = _near_attaining_partial(False, one_step=True)
    worst = max(worst, res.worst_value, near) / ctx.param("bound_scale", 1.0)
    ok = worst <= 1 and fails == 0
    return decide_with_probe(
        ctx,
        ok,
        res,
        {"near_attaining_instance_ratio": near, "worst_ratio": worst, "rounds": rounds, "rounds_failing_test": fails},
        notes="The recurrence the theorem telescopes: E_S[f(x^{r+1}) − f* + (λ+μ)/2‖v^{r+1} − x*‖²] ≤ "
        "λ/2‖v^r − x*‖² + σ_s²(v^r)/(2γ), computed exactly over all C(n, s) subsets from each v^r of "
        "sampled runs (GD and boundary-of-test answers), λ = (4/3)(δ̃_s + γ), plus a probe over instances, "
        "v and the answers. Confirms the rebuild's derivation step by step.",
    )


THEOREM_7 = (
    r"Consider Algorithm 2 with $s\in[n]$, $f_i$ $\mu$-convex with $\delta_s$-SOD, $\Delta_s$-ED, $\zeta^2$-BGV and the "
    r"accuracy condition with $y^r$. Rebuilt: for any $\gamma>0$, $\lambda\ge\frac43(\tilde\delta_s+\gamma)$: "
    r"$A_R(\mathbb E f(x^R)-f^\star)+\frac{B_R}2\mathbb E\|v^R-x^\star\|^2\le\frac{D^2}2+\frac{\sigma_s^2}{2\gamma}\sum_{r=1}^RA_r$, "
    r"so $\mathbb Ef(x^R)-f^\star\le\frac{D^2}{2A_R}+\frac{R\sigma_s^2}{2\gamma}$; with $\lambda=\Theta(\tilde\delta_s+R\sigma_s^2/\varepsilon)$: "
    r"$R=\tilde O(\sqrt{\tilde\delta_s/\mu}+\frac{\sigma_s^2}{\mu\varepsilon})$ ($\mu>0$), "
    r"$O(\sqrt{\tilde\delta_sD^2/\varepsilon}+\frac{\sigma_s^2D^2}{\varepsilon^2})$ ($\mu=0$)."
)


def _expected_acc(orc, x0, R, s, lam, mu, solver, test):
    xs = orc.x_star()

    def step(state, S, r):  # state: (x, v, A, B)
        x, v, A, B = state
        xn, vn, A1, B1, _, rd = acc_sdane_step(orc, x, v, A, B, S, lam, mu, solver, test, r=r)
        return (xn, vn, A1, B1), int(not (rd.passed | rd.at_resolution).all())

    def centre_variance(state):  # the variance at y^r, the centre of the round
        x, v, A, B = state
        a = acc_coefficient(A, B, lam)
        return gradient_variance(orc, (A * x + a * v) / (A + a))

    states, max_var = _sampling_paths(orc, s, R, (x0.copy(), x0.copy(), 0.0, 1.0), step, centre_variance)
    A_R, B_R = states[0][0][2], states[0][0][3]
    As = [0.0]
    A, B = 0.0, 1.0
    for _ in range(R):
        a = acc_coefficient(A, B, lam)
        A, B = A + a, B + mu * a
        As.append(A)
    Ef = sum(pr * orc.gaps(x[None])[0] for (x, *_), pr, _ in states)
    Ed = sum(pr * float(np.sum((v - xs) ** 2)) for (_, v, *_), pr, _ in states)
    return Ef, Ed, A_R, B_R, sum(As[1:]), max_var, sum(f for *_, f in states)


@claim(
    id="sdane/theorem-7",
    ref="Theorem 7",
    kind="probe",
    statement=THEOREM_7,
    controls=[
        _scaled_below_near_partial("potential-0.99", "the potential bound", 0.99, "100", "0.99994", " after one round")
    ],
    title="Theorem 7 in exact expectation over all client-sampling paths",
)
def theorem_7(ctx):
    rng = ctx.rng
    worst, runs, fails = -np.inf, 0, 0
    for i in _sampled_instances(ctx, rng):
        lam = 4 / 3 * (i.dt + i.gamma)
        solver = _sampled_answers(ctx, rng, i.trial)
        Ef, Ed, A_R, B_R, sumA, zvar, f = _expected_acc(i.orc, i.x0, 3, i.s, lam, i.orc.mu, solver, StabilizedTest())
        z2 = zeta_sq(i.q) if i.shared else zvar
        noise = sampling_factor(i.q.n, i.s) * z2 / (2 * i.gamma)
        worst = max(worst, (A_R * Ef + B_R / 2 * Ed) / (i.D2 / 2 + noise * sumA))
        fails += f
        runs += 1

    # the one-round recurrence exactly over S_r, probed over instances, centres, A_r and the local answers
    def violation(inst):
        (problem, *_), x, v, w = inst["inst"], inst["x0"], inst["v"], inst["w"]
        orc = client_oracles(problem)
        s = 2
        dt = delta_s(problem, s) + Delta_s(problem, s)
        gamma = float(inst["gf"]) * max(dt, 1e-2)
        lam = 4 / 3 * (dt + gamma)
        A = float(inst["A"])
        B = 1 + orc.mu * A
        xs = orc.x_star()
        tot = 0.0
        Ss = subsets(problem.n, s)
        for S in Ss:
            xn, vn, A1, B1, y, _ = acc_sdane_step(
                orc, x, v, A, B, S, lam, orc.mu, Boundary(weights=tuple(w), frac=inst["frac"]), StabilizedTest()
            )
            tot += A1 * orc.gaps(xn[None])[0] + B1 / 2 * float(np.sum((vn - xs) ** 2))
        noise = sampling_factor(problem.n, s) * gradient_variance(orc, y) / (2 * gamma)
        rhs = A * orc.gaps(x[None])[0] + B / 2 * float(np.sum((v - xs) ** 2)) + A1 * noise
        return tot / len(Ss) / rhs

    P = Product(
        inst=quadratic_instance_param(n=4, d=3, mu=1.0, L=(2.0, 100.0), K=1),
        x0=Ball(3, 5.0),
        v=Ball(3, 5.0),
        w=Box(-1.0, 1.0, shape=3),
        frac=Box(0.5, 1.0),
        gf=Box(0.1, 10.0, log=True),
        A=Box(0.0, 50.0),
    )
    res = probe_by_tier(ctx, violation, P, seed=rng, n_random=(16, 100), n_starts=(2, 4), maxiter=(25, 150), target=1.0)
    near = _near_attaining_partial(True)
    worst = max(worst, near) / ctx.param("bound_scale", 1.0)
    ok = worst <= 1 and fails == 0 and res.worst_value <= 1
    return decide_with_probe(
        ctx,
        ok,
        res,
        {
            "worst_expectation_over_bound": worst,
            "near_attaining_instance_ratio": near,
            "instances": runs,
            "paths_failing_test": fails,
        },
        probe_name="probe_worst_one_round_ratio",
        notes="Includes a known instance near the bound (_near_attaining_partial, s = n; the control's basis). "
        "Probe: the one-round recurrence E_S[A_{r+1}(f(x^{r+1}) − f*) + B_{r+1}/2‖v^{r+1} − x*‖²] ≤ "
        "A_r(f(x^r) − f*) + B_r/2‖v^r − x*‖² + A_{r+1}σ_s²(y^r)/(2γ), exact over S_r, searched over "
        "instances, x^r, v^r, A_r and boundary-of-test answers. "
        "n = 4, s ∈ {1, 2, 3}, R = 3, every sampling path run with boundary-of-test answers (and GD in "
        "the full tier); A_R E[f(x^R) − f*] + B_R/2 E‖v^R − x*‖² "
        "against D²/2 + σ_s²/(2γ)Σ_{r≤R}A_r with λ = (4/3)(δ̃_s + γ). Derivation: Lemma 24 at x = x*, add "
        "A_{r+1}h^S(x^{r+1}) − A_rh^S(x^r) (E_S h^S(x^r) = 0 since x^r does not depend on S_r) and bound "
        "the first by Lemma 15 at x̄ = y^r; sum over r (Σ_r A_r ≤ R·A_R gives the rebuild's Rσ_s²/(2γ)). "
        "ζ² as in Theorem 5 (exact or the max variance at the visited y^r). Confirms the rebuilt Theorem 7.",
    )


# --------------------------------------------------------------------------------------------
# Lemma 23, Corollaries 22/27, Theorems 21/26: stochastic local solvers
# --------------------------------------------------------------------------------------------

LEMMA_23 = (
    r"Let $F$ be $\mu$-convex and $L$-smooth; SGD $x_{k+1}=x_k-\eta g_k$ with $\mathbb E g_k=\nabla F(x_k)$, "
    r"$\mathbb E\|g_k-\nabla F(x_k)\|^2\le\sigma^2$, $\eta\le\frac1{2L}$. Then for all $K\ge1$: "
    r"$\mathbb E[F(\bar x_K)-F^\star]+\frac\mu2\mathbb E\|x_K-x^\star\|^2\le\frac{\mu\|x_0-x^\star\|^2}{2[(1-\eta\mu)^{-K}-1]}+\eta\sigma^2$, "
    r"$\bar x_K=\sum_{k=1}^Kq^kx_k/\sum_{k=1}^Kq^k$, $q=(1-\eta\mu)^{-1}$ (C.8). (Rebuilt.)"
)


def _lemma23_ratio(Hm, b, x0, eta, K, var):
    xs = np.linalg.solve(Hm, b)
    mu = float(np.linalg.eigvalsh(Hm)[0])
    m_avg, P_avg = sgd_output_moments(Hm, b, x0, eta, K, var, average="weighted", mu=mu)
    m_last, P_last = sgd_output_moments(Hm, b, x0, eta, K, var, average="last")
    EF = 0.5 * (m_avg - xs) @ Hm @ (m_avg - xs) + 0.5 * np.trace(Hm @ P_avg)
    Ed = float(np.sum((m_last - xs) ** 2) + np.trace(P_last))
    R2 = float(np.sum((x0 - xs) ** 2))
    bound = mu * R2 / (2 * math.expm1(-K * math.log1p(-eta * mu))) + eta * var
    return (EF + mu / 2 * Ed) / bound


@claim(
    id="sdane/lemma-23",
    ref="Lemma 23",
    kind="probe",
    statement=LEMMA_23,
    control_exempt=_no_known_attaining(
        "Lemma 23's SGD bound (its noise term ησ² is ~4× the stationary value on 1-D quadratics)"
    ),
    title="Lemma 23 (SGD with constant step) in exact expectation on quadratics with Gaussian noise",
)
def lemma_23(ctx):
    rng = ctx.rng
    worst, beyond = -np.inf, -np.inf
    for _ in range(60 if not ctx.full else 400):
        d = int(rng.integers(1, 5))
        mu, L = float(10 ** rng.uniform(-2, 0)), float(10 ** rng.uniform(0, 2))
        Hm = make_quadratic(1, d, mu=mu, L=max(L, mu), seed=rng).A[0] if d > 1 else np.array([[mu]])
        Lh = float(np.linalg.eigvalsh(Hm)[-1])
        b, x0 = rng.normal(size=d), rng.normal(size=d) * 3
        var = float(10 ** rng.uniform(-3, 1))
        K = int(rng.integers(1, 80))
        eta = float(rng.uniform(0.01, 1)) / (2 * Lh)
        worst = max(worst, _lemma23_ratio(Hm, b, x0, eta, K, var))
        beyond = max(beyond, _lemma23_ratio(Hm, b, x0, float(rng.uniform(0.5, 1)) / Lh, K, var))

    def violation(inst):
        Lh = float(inst["L"])
        lam = np.array([1.0, float(inst["mid"]) * (Lh - 1) + 1, Lh])
        U = inst["U"]
        Hm = (U * lam) @ U.T
        return _lemma23_ratio(
            0.5 * (Hm + Hm.T),
            np.asarray(inst["b"]),
            np.asarray(inst["x0"]),
            float(inst["eta"]) / (2 * Lh),
            int(inst["K"]),
            float(inst["var"]),
        )

    from fedtheory.certify.params import IntRange, Rotation

    P = Product(
        L=Box(1.0, 100.0, log=True),
        mid=Box(0.0, 1.0),
        U=Rotation(3),
        b=Ball(3, 3.0),
        x0=Ball(3, 5.0),
        eta=Box(0.0, 1.0, open_lo=True),
        K=IntRange(1, 60),
        var=Box(1e-3, 10.0, log=True),
    )
    res = probe_by_tier(ctx, violation, P, seed=rng, n_random=(60, 400), n_starts=(2, 8), maxiter=(60, 300), target=1.0)
    worst = max(worst, res.worst_value)
    ok = worst <= 1 + 1e-12
    return decide_with_probe(
        ctx,
        ok,
        res,
        {"worst_ratio": worst, "worst_ratio_eta_up_to_1_over_L": beyond},
        tolerance={"relative": 1e-12},
        notes="F(x) = ½xᵀHx − bᵀx (spectrum in [μ, L]) with g = ∇F + ξ, ξ ~ N(0, σ²/d·I): the iterates are "
        "Gaussian, so E[F(x̄_K) − F*] and E‖x_K − x*‖² are exact. Derivation of the rebuilt (C.8): smoothness "
        "at x_{k+1} and μ-convexity give E[F(x_{k+1}) − F*] + ‖x_{k+1} − x*‖²/(2η) ≤ (1−ημ)‖x_k − x*‖²/(2η) "
        "+ ησ²(1+Lη)/2, then Lemma 12 with q = 1/(1−ημ). Confirms the rebuild; the derivation only needs "
        "η ≤ 1/L (checked too: worst ratio reported), so η ≤ 1/(2L) is sufficient but not necessary.",
    )


def sgd_local_plan(L_t: float, mu_t: float, lam: float, var: float, e_r: float, batch: int = 1) -> tuple[float, int]:
    r"""Corollary 22 (rebuilt): step η = min(1/(2L̃), 2b·e_r/(5L̃σ²)) and K = ⌈ln(1 + 10L̃μ̃/λ²)/(−ln(1 − ημ̃))⌉ so that
    mini-batch SGD's weighted average meets E‖∇F_i‖² ≤ λ²/10‖x_i* − c‖² + (4/5)e_r, which implies (C.6) with e_r."""
    eta = min(1 / (2 * L_t), 2 * batch * e_r / (5 * L_t * var)) if var > 0 else 1 / (2 * L_t)
    K = math.ceil(math.log1p(10 * L_t * mu_t / lam**2) / -math.log1p(-eta * mu_t))
    return eta, max(K, 1)


def _client_moments(orc, i, center, lin, lam, eta, K, var):
    """Exact mean/cov of client i's SGD output (weighted average) on F_i = f_i − ⟨lin, ·⟩ + λ/2‖· − c‖²."""
    Hm = orc.A[i] + lam * np.eye(orc.d)
    b = orc.A[i] @ orc.c[i] + lin + lam * center
    return sgd_output_moments(Hm, b, center, eta, K, var, average="weighted", mu=orc.mu_i[i] + lam), Hm, b


def stochastic_round(orc, center, S, lam, var, e_r):
    """One round of Algorithm 1/2's local step with Corollary 22's SGD on every client of S: exact per-client
    Gaussian moments, E‖∇F_i‖², E‖x_i − c‖², and the plan (η, K)."""
    GC = orc.grads(np.broadcast_to(center, (len(S), orc.d)).copy(), S)
    lins = GC - GC.mean(0)
    out = []
    for k, i in enumerate(S):
        L_t, mu_t = orc.L_i[i] + lam, orc.mu_i[i] + lam
        eta, K = sgd_local_plan(L_t, mu_t, lam, var, e_r)
        (m, P), Hm, b = _client_moments(orc, i, center, lins[k], lam, eta, K, var)
        gF = Hm @ m - b
        EgF = float(gF @ gF + np.trace(Hm @ P @ Hm))
        Edist = float(np.sum((m - center) ** 2) + np.trace(P))
        out.append(
            {
                "m": m,
                "P": P,
                "EgF": EgF,
                "Edist": Edist,
                "eta": eta,
                "K": K,
                "R": float(np.linalg.norm(np.linalg.solve(Hm, b) - center)),
            }
        )
    return out


def _expected_step(orc, v, S, mu, B, a, moments):
    """E_ξ[f(x^{r+1}) − f*], E_ξ‖v^{r+1} − x*‖² and E_ξ v^{r+1} for the update v⁺ = (Bv + a(μx̄ − ḡ))/(B + μa) with
    independent Gaussian client outputs: S-DANE's with B = λ, a = 1; Acc-S-DANE's with its B_r and a_{r+1}."""
    s = len(S)
    xs = orc.x_star()
    Abar = orc.A.mean(0)
    m = np.mean([mo["m"] for mo in moments], axis=0)
    P = sum(mo["P"] for mo in moments) / s**2
    Ef = 0.5 * (m - xs) @ Abar @ (m - xs) + 0.5 * np.trace(Abar @ P)
    # ḡ = mean(A_i x_i − b_i): v⁺ is affine in each x_i with matrix a(μI − A_i)/(s(B + μa))
    gbar_mean = np.mean([orc.A[i] @ mo["m"] - orc.A[i] @ orc.c[i] for i, mo in zip(S, moments)], axis=0)
    B1 = B + mu * a
    v_mean = (B * v + mu * a * m - a * gbar_mean) / B1
    cov = sum((Mi := a * (mu * np.eye(orc.d) - orc.A[i]) / (s * B1)) @ mo["P"] @ Mi.T for i, mo in zip(S, moments))
    return float(Ef), float(np.sum((v_mean - xs) ** 2) + np.trace(cov)), v_mean


THEOREM_21 = (
    r"Theorem 5 with stochastic local solvers: if for every $r$, $\frac1s\sum_{i\in S_r}\mathbb E_\xi\|\nabla F_{i,r}(x_{i,r+1})\|^2"
    r"\le\frac{\lambda^2}4\frac1s\sum_{i\in S_r}\mathbb E_\xi\|x_{i,r+1}-v^r\|^2+e_r$ (C.6), with independent local "
    r"randomness, then (rebuilt) $\mathbb E[f(\bar x^R)]-f^\star+\frac\mu2\mathbb E\|v^R-x^\star\|^2\le\frac{\mu D^2}{2[(1+\mu/\lambda)^R-1]}"
    r"+\frac{\sigma_s^2}{2\gamma}+\frac{\sum_{r<R}p^re_r}{2\lambda\sum_{r<R}p^r}$, $p=1+\mu/\lambda$, $\lambda\ge\frac43(\tilde\delta_s+\gamma)$."
)


def _stochastic_checks(ctx, accelerated: bool):
    """(C.6) and the one-round recurrence in exact expectation over the local SGD noise and over S_r."""
    rng = ctx.rng
    worst_c6, worst_step, rounds, Kmax = -np.inf, -np.inf, 0, 0
    for _ in range(3 if not ctx.full else 12):
        q = H.random_federation(rng, n=4, d=3, L=float(10 ** rng.uniform(0.5, 1.5)), target=False)
        var = float(10 ** rng.uniform(-2, 0))
        orc = QuadraticOracles(q, noise=math.sqrt(var))
        xs = orc.x_star()
        s = int(rng.integers(2, 5))
        dt = delta_s(q, s) + Delta_s(q, s)
        gamma = max(dt, 1e-2)
        lam = 4 / 3 * (dt + gamma)
        mu = orc.mu
        e_r = lam * float(10 ** rng.uniform(-4, -2))
        x = v = rng.normal(size=q.d) * 3
        A, B = 0.0, 1.0
        for r in range(6):
            Ss = subsets(q.n, s)
            if accelerated:
                a = acc_coefficient(A, B, lam)
                A1, B1 = A + a, B + mu * a
                center = (A * x + a * v) / A1
            else:
                center = v
            tot = 0.0
            for S in Ss:
                mom = stochastic_round(orc, center, S, lam, var, e_r)
                Kmax = max(Kmax, max(mo["K"] for mo in mom))
                lhs = np.mean([mo["EgF"] for mo in mom])
                rhs = lam**2 / 4 * np.mean([mo["Edist"] for mo in mom]) + e_r
                worst_c6 = max(worst_c6, lhs / rhs)
                if accelerated:
                    Ef, Ed, _ = _expected_step(orc, v, S, mu, B, a, mom)
                    tot += A1 * Ef + B1 / 2 * Ed
                else:
                    Ef, Ed, _ = _expected_step(orc, v, S, mu, lam, 1.0, mom)
                    tot += Ef + (lam + mu) / 2 * Ed
            lhs = tot / len(Ss)
            noise = sampling_factor(q.n, s) * gradient_variance(orc, center) / (2 * gamma) + e_r / (2 * lam)
            if accelerated:
                rhs = A * orc.gaps(x[None])[0] + B / 2 * float(np.sum((v - xs) ** 2)) + A1 * noise
            else:
                rhs = lam / 2 * float(np.sum((v - xs) ** 2)) + noise
            worst_step = max(worst_step, lhs / rhs)
            rounds += 1
            # move along one realized path: a random subset and a sample of the Gaussian outputs
            S = Ss[int(rng.integers(len(Ss)))]
            mom = stochastic_round(orc, center, S, lam, var, e_r)
            X = np.stack([rng.multivariate_normal(mo["m"], mo["P"]) for mo in mom])
            G = orc.grads(X, S)
            xn = X.mean(0)
            if accelerated:
                v = (B * v + mu * a * xn - a * G.mean(0)) / B1
                x, A, B = xn, A1, B1
            else:
                v = (lam * v + mu * xn - G.mean(0)) / (lam + mu)
    return worst_c6, worst_step, rounds, Kmax


def _decide_stochastic(ctx, accelerated: bool, notes: str):
    """Theorems 21 and 26: (C.6) and the one-round recurrence hold (ratios ≤ 1) on every instance."""
    c6, step, rounds, Kmax = _stochastic_checks(ctx, accelerated)
    return ctx.decide(
        c6 <= 1 and step <= 1,
        measured={
            "worst_C6_lhs_over_rhs": c6,
            "worst_recurrence_ratio": step,
            "rounds": rounds,
            "max_local_steps": Kmax,
        },
        notes=notes,
    )


THEOREMS_21_AND_26 = claim_family(
    _decide_stochastic,
    {
        "id": "sdane/theorem-21",
        "ref": "Theorem 21",
        "statement": THEOREM_21,
        "control_exempt": _no_known_attaining("Theorem 21's recurrence with additive e_r (rebuilt)"),
        "title": "Theorem 21: with Corollary 22's SGD, (C.6) and the one-round recurrence hold in exact expectation",
        "args": {
            "accelerated": False,
            "notes": "Quadratic clients with additive Gaussian gradient noise (E‖ξ‖² = σ²), n = 4, s ∈ {2, 3, 4}, "
            "λ = (4/3)(δ̃_s + γ); every client runs Corollary 22's mini-batch SGD (η, K of sgd_local_plan). "
            "Exact over the noise (Gaussian moments) and over S_r (all subsets): (C.6) with additive e_r holds, "
            "and E[f(x^{r+1}) − f* + (λ+μ)/2‖v^{r+1} − x*‖²] ≤ λ/2‖v^r − x*‖² + σ_s²(v^r)/(2γ) + e_r/(2λ); "
            "Lemma 12 (verified) telescopes it into the rebuilt bound. The rebuild leaves (C.6)'s additive e_r "
            "uncertain; without it, SGD with a constant step cannot meet (C.6) as x_i* − v^r → 0, so the "
            "additive form is the one kept (it matches the rebuild's Corollary 22 shape).",
        },
    },
    {
        "id": "sdane/theorem-26",
        "ref": "Theorem 26",
        "control_exempt": _no_known_attaining("Theorem 26's recurrence with additive e_r (rebuilt)"),
        "statement": r"Theorem 7 with stochastic local solvers: under (C.6) with $y^r$ and additive $e_r$ (rebuilt), "
        r"$A_R(\mathbb Ef(x^R)-f^\star)+\frac{B_R}2\mathbb E\|v^R-x^\star\|^2\le\frac{D^2}2+\sum_{r=1}^RA_r(\frac{\sigma_s^2}{2\gamma}+\frac{e_{r-1}}{2\lambda})$.",
        "title": "Theorem 26: Acc-S-DANE with Corollary 27's SGD, (C.6) and the one-round recurrence in exact expectation",
        "args": {
            "accelerated": True,
            "notes": "As sdane/theorem-21 for Algorithm 2 (centre y^r): E[A_{r+1}(f(x^{r+1}) − f*) + "
            "B_{r+1}/2‖v^{r+1} − x*‖²] ≤ A_r(f(x^r) − f*) + B_r/2‖v^r − x*‖² + A_{r+1}(σ_s²(y^r)/(2γ) + "
            "e_r/(2λ)) exactly over the noise and S_r. Confirms the rebuilt Theorem 26 (additive e_r as in Theorem 21).",
        },
    },
    kind="simulation",
)


COROLLARY_22 = (
    r"Under Theorem 21, each $f_i$ $L$-smooth, mini-batch gradients with variance $\sigma^2/b$, SGD with a certain step "
    r"$\eta$ meets (C.6) after (rebuilt) $K=\lceil\ln(1+10\tilde L\tilde\mu/\lambda^2)/(-\ln(1-\eta\tilde\mu))\rceil"
    r"=O\big((\frac{\tilde L}{\tilde\mu}+\frac{\tilde L\sigma^2}{\tilde\mu be_r})\log(1+\frac{\tilde L\tilde\mu}{\lambda^2})\big)$ "
    r"mini-batch calls, $\tilde L=L+\lambda$, $\tilde\mu=\mu+\lambda$, $\eta=\min(\frac1{2\tilde L},\frac{2be_r}{5\tilde L\sigma^2})$."
)


def _corollary_22_check(ctx, accelerated: bool, notes: str):
    """Corollaries 22 and 27: the SGD plan meets (C.6) and (C.7) (ratios ≤ 1) at random centres, exactly in expectation."""
    rng = ctx.rng
    worst, worst_c7, count = -np.inf, -np.inf, 0
    for _ in range(12 if not ctx.full else 100):
        q = H.random_federation(rng, n=int(rng.integers(2, 5)), d=3, L=float(10 ** rng.uniform(0.3, 1.5)), target=False)
        var = float(10 ** rng.uniform(-3, 0))
        orc = QuadraticOracles(q, noise=math.sqrt(var))
        lam = float(rng.uniform(0.5, 3)) * max(delta_s(q, q.n), 1e-2)
        e_r = lam * float(10 ** rng.uniform(-4, -1) if not ctx.full else 10 ** rng.uniform(-6, -1))
        center = rng.normal(size=q.d) * float(10 ** rng.uniform(-3, 1))
        if accelerated:
            center = center + orc.x_star()  # y^r near or far from the optimum
        S = np.arange(q.n)
        mom = stochastic_round(orc, center, S, lam, var, e_r)
        lhs = np.mean([mo["EgF"] for mo in mom])
        rhs = lam**2 / 4 * np.mean([mo["Edist"] for mo in mom]) + e_r
        worst = max(worst, lhs / rhs)
        for mo in mom:
            worst_c7 = max(worst_c7, mo["EgF"] / (lam**2 / 10 * mo["R"] ** 2 + 0.8 * e_r))
        count += 1
    return ctx.decide(
        worst <= 1 and worst_c7 <= 1,
        measured={"worst_C6_ratio": worst, "worst_C7_ratio": worst_c7, "instances": count},
        notes=notes,
    )


COROLLARIES_22_AND_27 = claim_family(
    _corollary_22_check,
    {
        "id": "sdane/corollary-22",
        "ref": "Corollary 22",
        "statement": COROLLARY_22,
        "control_exempt": _no_known_attaining("Corollary 22's SGD plan (constants ours)"),
        "title": "Corollary 22: the rebuilt SGD step and step count meet (C.6), exactly in expectation",
        "args": {
            "accelerated": False,
            "notes": "Derivation (rebuilt, constants ours): ‖x_i − v‖² ≥ ‖x_i* − v‖²/2 − ‖∇F_i‖²/λ² makes "
            "E‖∇F_i‖² ≤ λ²/10‖x_i* − v‖² + (4/5)e_r (C.7) sufficient for (C.6); Lemma 23 with 2L̃(F − F*) ≥ ‖∇F‖² "
            "gives (C.7) for the stated η and K. Checked exactly (Gaussian moments) for random centres near and "
            "far from the optimum. Confirms the rebuilt corollary; the paper's own constants are unknown.",
        },
    },
    {
        "id": "sdane/corollary-27",
        "ref": "Corollary 27",
        "control_exempt": _no_known_attaining("Corollary 27's SGD plan (constants ours)"),
        "statement": r"Corollary 22 for Algorithm 2 (Theorem 26): the same mini-batch SGD plan meets (C.6) with "
        r"centre $y^r$ (``the proof is the same as the one for Corollary 22'').",
        "title": "Corollary 27: Corollary 22's SGD plan meets (C.6) at Acc-S-DANE's centres",
        "args": {
            "accelerated": True,
            "notes": "The local subproblem only sees its centre, so Corollary 22's argument applies verbatim with "
            "y^r; checked exactly as there. Confirms the rebuild.",
        },
    },
    kind="numeric",
)
