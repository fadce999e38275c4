r"""Jiang, Rodomanov & Stich (arXiv:2407.07084): local computation (Corollary 3, Remarks 4 and 19,
Lemma 20) and the communication orders of Table 1 as fitted slopes. The inventory is in ``sdane.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fedtheory.algorithms.dane import run_acc_sdane, run_sdane
from fedtheory.algorithms.local_solvers import FGM, GD, Exact, FastGradNorm, StabilizedTest
from fedtheory.certify import pep
from fedtheory.claims.controls import tightened_bound
from fedtheory.claims.core import Control, claim
from fedtheory.claims.families import claim_family
from fedtheory.content import load_module
from fedtheory.problems.clients import client_oracles
from fedtheory.problems.dissimilarity import delta_A
from fedtheory.problems.quadratic import QuadraticFederation, make_quadratic

H = load_module(Path(__file__).with_name("definitions_and_lemmas.py"))


def _federation_with_ratio(rng, ratio, *, L_over_delta=None, n=4, d=4):
    """Uniform-weight quadratic with δ_A/μ = ratio exactly (μ = 1), L = L_over_delta·δ_A (default 20δ_A)."""
    delta = float(ratio)
    Ld = L_over_delta if L_over_delta is not None else 20.0
    for _ in range(6):
        try:
            return make_quadratic(n, d, mu=1.0, L=delta * Ld, delta_A=delta, weights="uniform", seed=rng)
        except ValueError:  # δ_A too close to its maximum (L − μ)/2 for the generator's path: spread the spectrum
            Ld *= 1.5
    raise ValueError(f"no federation reached delta_A/mu = {ratio}")


def _smoothness_sweep(rng, T: int):
    """T S-DANE instances with L/δ_A log-spaced from 3 to 300 (δ_A/μ = 10; the generator may spread a spectrum
    by 1.5× to reach δ_A): each federation, its oracles and λ = 2δ_A (Theorem 1's choice).

    >>> [(round(orc.L / delta_A(q)), lam / delta_A(q)) for q, orc, lam in _smoothness_sweep(np.random.default_rng(0), 2)]
    [(3, 2.0), (316, 2.0)]
    """
    for t in range(T):
        Ld = float(10 ** (0.5 + 2.0 * t / (T - 1)))  # L/δ_A from 3 to 300
        q = _federation_with_ratio(rng, 10.0, L_over_delta=Ld)
        yield q, client_oracles(q), 2 * delta_A(q)


def _fixed_K_runs(rng, solver_for, rounds=20, trials=6, ratios=(3.0, 10.0, 30.0, 100.0, 300.0)):
    """S-DANE with a fixed-K local solver chosen from (L, λ, μ); returns (failures of (6), ratios, K's)."""
    fails, Ks, rows = 0, [], []
    for t in range(trials):
        ratio = ratios[t % len(ratios)]
        q = _federation_with_ratio(rng, ratio, L_over_delta=float(10 ** rng.uniform(0.5, 2.5)))
        orc = client_oracles(q)
        lam = 2 * delta_A(q)
        solver = solver_for(orc.L, lam, orc.mu)
        x0 = rng.normal(size=q.d) * 3
        h = run_sdane(q, x0, rounds, lam=lam, mu=orc.mu, solver=solver, test=StabilizedTest())
        fails += h.test_failures
        Ks.append(solver.K)
        rows.append(orc.L / delta_A(q))
    return fails, np.asarray(rows), np.asarray(Ks)


@claim(
    id="sdane/corollary-3/runs",
    ref="Corollary 3",
    kind="simulation",
    title="Corollary 3: FGM+OGM-G meets (6) after O(√(L/δ_A)) local gradients per round, independent of r",
    statement=r"Under Theorem 1 with each $f_i$ $L$-smooth, a method for fast gradient-norm minimization (OGM-G, or Lan et al.) "
    r"run from $v^r$ satisfies (6) after $O(\sqrt{L/\delta_A})$ evaluations of $\nabla f_i$ per round, independently "
    r"of $r$ and $\varepsilon$. (Rebuilt; the method here: FGM for ⌈K/2⌉ steps then OGM-G for ⌊K/2⌋, "
    r"$\|\nabla F(x_K)\|\le c(K)\tilde L\|v^r-x^\star_{i,r}\|$ with $c(K)=2/((\lceil K/2\rceil+1)\tilde\theta_0(\lfloor K/2\rfloor))$.)",
    controls=[
        Control(
            "order-0.4",
            "the a-priori K grows at most like (L/δ_A)^0.4: false, c(K) ∝ 1/K² makes the smallest "
            "K with c(K)(L + λ) ≤ λ/3 grow like √(L/δ_A) (slope 1/2 up to integer rounding)",
            {"slope_max": 0.4},
        )
    ],
)
def corollary_3_runs(ctx):
    rng = ctx.rng
    # (a) the a-priori K = FastGradNorm.steps_bound(L, λ) meets (6) at every round (no test: fixed K)
    fails, Lrat, Ks = _fixed_K_runs(
        rng, lambda L, lam, mu: FastGradNorm(K=FastGradNorm.steps_bound(L, lam)), trials=6 if not ctx.full else 30
    )
    slope_bound = float(np.polyfit(np.log(Lrat), np.log(Ks), 1)[0])
    # (b) stopped by the test (doubling K from the centre): steps per round stay below 2·bound, do not grow with r
    worst_over, growth, meas = 0.0, 0.0, []
    for q, orc, lam in _smoothness_sweep(rng, 5 if not ctx.full else 12):
        h = run_sdane(q, rng.normal(size=q.d) * 3, 30, lam=lam, mu=orc.mu, solver=FastGradNorm())
        steps = h.local_evals.max(axis=1) - 1
        bound = 2 * FastGradNorm.steps_bound(orc.L, lam)
        worst_over = max(worst_over, float(steps.max()) / bound)
        half = len(steps) // 2
        growth = max(growth, float(steps[half:].max()) / max(float(steps[:half].max()), 1))
        meas.append((orc.L / lam, float(np.mean(steps))))
    m = np.asarray(meas)
    slope_meas = float(np.polyfit(np.log(m[:, 0]), np.log(m[:, 1]), 1)[0])
    ok = fails == 0 and slope_bound <= ctx.param("slope_max", 0.5 + 0.05) and worst_over <= 1 and growth <= 1
    return ctx.decide(
        ok,
        measured={
            "rounds_failing_6_with_fixed_K": fails,
            "slope_K_bound_vs_L_over_delta": slope_bound,
            "slope_measured_steps_vs_L_over_lambda": slope_meas,
            "worst_steps_over_2x_bound": worst_over,
            "late_over_early_steps": growth,
        },
        tolerance={"slope": "0.05 over 1/2 for the bound (integer rounding of K)"},
        notes="Quadratic federations with δ_A/μ ∈ [3, 300] and L/δ_A ∈ [3, 300], λ = 2δ_A. With K fixed to the "
        "analytic bound (the smallest K with c(K)(L+λ) ≤ λ/3, i.e. (C.4)), (6) holds at every round; K grows "
        "like √(L/δ_A) (fitted slope ≈ 0.5); stopped by the test, the measured steps stay below twice the "
        "bound (the doubling restarts) and later rounds need no more than earlier ones. The measured steps' "
        "fitted slope (reported) is not 1/2 over this range: easy instances stop at the minimum K = 2 while "
        "hard ones need K close to the bound, so the measured counts approach the √(L/δ_A) bound from below. "
        "Confirms the rebuilt Corollary 3, with the explicit constant of the FGM+OGM-G pair.",
    )


@claim(
    id="sdane/corollary-3/pep",
    ref="Corollary 3",
    kind="certificate",
    title="Corollary 3's local guarantee ‖∇F(x_K)‖ ≤ c(K)L̃‖x_0 − x*‖ for FGM+OGM-G, certified by PEP",
    statement=r"FGM ($\lceil K/2\rceil$ steps) then OGM-G ($\lfloor K/2\rfloor$ steps) on an $\tilde L$-smooth convex $F$: "
    r"$\|\nabla F(x_K)\|\le\frac{2\tilde L\|x_0-x^\star\|}{(\lceil K/2\rceil+1)\tilde\theta_0(\lfloor K/2\rfloor)}=O(\tilde L\|x_0-x^\star\|/K^2)$.",
    controls=[
        tightened_bound(
            0.999,
            "the K = 1 worst case (L/2)² (one gradient step)",
            "a Huber function (pep.huber_gd_gradient_norm)",
            {"closed_form_scale": 0.999},
            name="closed-form-0.999",
        )
    ],
)
def corollary_3_pep(ctx):
    Ks = (1, 2, 3, 4, 6) if not ctx.full else (1, 2, 3, 4, 6, 8, 10, 12)
    res = [pep.fast_gradient_norm(K) for K in Ks]
    worst = max(r.ratio for r in res)
    target = ctx.param("closed_form_scale", 1.0) * pep.huber_gd_gradient_norm(1)
    closed = abs(res[0].value - target) / target
    gap = pep.worst_gap(res)
    ok = worst <= 1 + pep.SDP_RTOL and closed <= pep.TIGHT_RTOL and gap <= pep.TIGHT_RTOL
    return ctx.decide(
        ok,
        measured={
            "worst_pep_over_bound_squared": worst,
            **{f"K{r.params['K']}": r.ratio for r in res},
            "K1_relative_distance_to_huber": closed,
            "worst_gap_upper_vs_extracted_lower": gap,
        },
        tolerance={"relative": pep.SDP_RTOL, "tightness": pep.TIGHT_RTOL},
        notes="Tightness: the K = 1 PEP equals the Huber instance's (L/2)² to 1e-4 and every worst case, "
        "extracted and checked against the smooth convex interpolation conditions, reaches the PEP "
        "value to 1e-4. PEPit over all convex 1-smooth F, ‖x_0 − x*‖ ≤ 1: the worst ‖∇F(x_K)‖² is below (c(K))², so the "
        "step counts of sdane/corollary-3/runs rest on a certified constant (the bound is 2–4× loose). "
        "The paper cites OGM-G / Lan et al. without the constant (lost); this confirms the rebuilt "
        "O(L̃‖x_0 − x*‖/K²) form with an explicit constant.",
    )


@claim(
    id="sdane/lemma-20",
    ref="Lemma 20",
    kind="certificate",
    title="Lemma 20: GD with step 1/L has ‖∇f(x_k)‖ ≤ L‖x_0 − x*‖/(k+1), with non-increasing gradient norms",
    statement=r"Let $f$ be convex and $L$-smooth and $x_{k+1}=x_k-\frac1L\nabla f(x_k)$. Then $\|\nabla f(x_k)\|$ is non-increasing "
    r"and $\|\nabla f(x_k)\|\le\frac{cL\|x_0-x^\star\|}{k+1}$ (C.5) (from Nesterov's Thm 2.2.5; rebuilt with the tight "
    r"$c=1$, which implies any larger constant).",
    controls=[
        tightened_bound(
            0.999,
            "the worst ‖∇f(x_N)‖² = (L/(N+1))²",
            "the Huber function with a = L/(N+1) (pep.huber_gd_gradient_norm, a plain loop)",
            {"closed_form_scale": 0.999},
            name="closed-form-0.999",
        )
    ],
)
def lemma_20(ctx):
    Ns = (1, 2, 3, 5) if not ctx.full else (1, 2, 3, 5, 8, 12)
    res = [pep.gd_gradient_norm(N) for N in Ns]
    worst = max(r.ratio for r in res)
    scale = ctx.param("closed_form_scale", 1.0)
    closed = max(abs(r.value - scale * pep.huber_gd_gradient_norm(r.params["N"])) / r.bound for r in res)
    gap = pep.worst_gap(res)
    # one gradient step does not increase ‖∇f‖
    mono = H.one_gradient_step_pep(lambda f, x, g, x1: f.gradient(x1) ** 2 - g**2)
    ok = worst <= 1 + pep.SDP_RTOL and mono <= 1e-6 and closed <= pep.TIGHT_RTOL and gap <= pep.TIGHT_RTOL
    return ctx.decide(
        ok,
        measured={
            "worst_pep_over_bound": worst,
            "tight_ratios": [r.ratio for r in res],
            "max_gradient_norm_increase": mono,
            "worst_relative_distance_to_huber": closed,
            "worst_gap_upper_vs_extracted_lower": gap,
        },
        tolerance={
            "relative": pep.SDP_RTOL,
            "monotonicity": "1e-6 absolute (‖∇f(x_k)‖ ≤ 1)",
            "tightness": pep.TIGHT_RTOL,
        },
        notes="Tightness: each PEP equals the Huber instance's (L/(N+1))² to 1e-4 (upper = lower). PEPit: the worst ‖∇f(x_N)‖ equals L‖x_0 − x*‖/(N+1) (ratio 1: tight), and one GD step never "
        "increases ‖∇f‖ (the proof's remaining text). The paper's constant was lost; c = 1 is the tightest "
        "possible, so the rebuilt (C.5) holds for whatever constant the paper took from Nesterov.",
    )


@claim(
    id="sdane/remark-19",
    ref="Remark 19",
    kind="simulation",
    title="Remark 19: K + 1 ≥ 3(L+λ)/λ GD steps, or 2√κ ln(3√(L̃(L̃+μ̃))/λ) FGM steps, meet (C.4) and hence (6)",
    statement=r"With GD from $v^r$ (step $1/(L+\lambda)$, last point), Lemma 20 gives $\|\nabla F(x_K)\|\le\frac{(L+\lambda)\|x_0-x^\star\|}{K+1}$, "
    r"so $K\ge3(L+\lambda)/\lambda-1$ steps satisfy (C.4); with FGM (Bubeck, Thm 3.18) "
    r"$K=O(\sqrt{\kappa}\log\frac{L+\lambda}\lambda)$ suffice. (Rebuilt constants.)",
    controls=[
        Control(
            "no-local-steps",
            "K = 0 local steps (each client returns the centre v^r) meets (6): false, (6) at "
            "x = v^r asks ∇F_i(v^r) = 0, i.e. v^r already optimal for every client's subproblem",
            {"gd_steps": 0, "fgm_steps": 0},
        )
    ],
)
def remark_19(ctx):
    rng = ctx.rng
    kg, kf = ctx.param("gd_steps", None), ctx.param("fgm_steps", None)
    f_gd, _, _ = _fixed_K_runs(
        rng, lambda L, lam, mu: GD(K=GD.steps_bound(L, lam) if kg is None else kg), trials=5 if not ctx.full else 25
    )
    f_fgm, _, _ = _fixed_K_runs(
        rng,
        lambda L, lam, mu: FGM(K=FGM.steps_bound(L, lam, mu) if kf is None else kf),
        trials=5 if not ctx.full else 25,
    )
    ok = f_gd == 0 and f_fgm == 0
    return ctx.decide(
        ok,
        measured={"rounds_failing_6_gd": f_gd, "rounds_failing_6_fgm": f_fgm},
        notes="Fixed K from the explicit bounds (GD.steps_bound, FGM.steps_bound) at every round of S-DANE runs "
        "(δ_A/μ ∈ [3, 300], L/δ_A ∈ [3, 300]): (6) never fails. (C.4) ⇒ (6): ‖x_i − v‖ ≥ ‖x_i* − v‖ − "
        "‖∇F_i‖/(λ+μ). Confirms the rebuilt Remark 19.",
    )


@claim(
    id="sdane/remark-4",
    ref="Remark 4",
    kind="simulation",
    control_exempt="O(·) upper bounds on test-stopped step counts: the counts depend on the instance (easy ones stop "
    "early), so no smaller order is known false on these instances a priori; the explicit bounds' own "
    "control is in sdane/remark-19 and sdane/corollary-3/runs",
    title="Remark 4: GD needs O(L/δ_A) and FGM O(√(L/δ_A) log) local steps per round, a constant number",
    statement=r"For standard GD the number of oracle calls per round is $O(L/\delta_A)$; the fast gradient method needs "
    r"$O(\sqrt{L/\delta_A}\log\frac L{\delta_A})$; the difference to Corollary 3 is a logarithmic factor, so each "
    r"device can run a constant number of standard local (F)GD steps.",
)
def remark_4(ctx):
    rng = ctx.rng
    rows = []
    worst = 0.0
    for q, orc, lam in _smoothness_sweep(rng, 6 if not ctx.full else 12):
        x0 = rng.normal(size=q.d) * 3
        gd = run_sdane(q, x0, 25, lam=lam, mu=orc.mu, solver=GD())
        fg = run_sdane(q, x0, 25, lam=lam, mu=orc.mu, solver=FGM())
        s_gd = gd.local_evals.max() - 1
        s_fg = fg.local_evals.max() - 1
        worst = max(worst, s_gd / (GD.steps_bound(orc.L, lam)), s_fg / FGM.steps_bound(orc.L, lam, orc.mu))
        rows.append((orc.L / lam, s_gd, s_fg))
    r = np.asarray(rows, dtype=float)
    slope_gd = float(np.polyfit(np.log(r[:, 0]), np.log(r[:, 1]), 1)[0])
    slope_fg = float(np.polyfit(np.log(r[:, 0]), np.log(r[:, 2]), 1)[0])
    ok = worst <= 1 and slope_gd <= 1.1 and slope_fg <= 0.75
    return ctx.decide(
        ok,
        measured={"slope_gd_steps": slope_gd, "slope_fgm_steps": slope_fg, "worst_steps_over_bound": worst},
        tolerance={"slopes": "GD ≤ 1 + 0.1; FGM ≤ 0.5 + 0.25 (the log factor over L/λ ∈ [1.5, 150])"},
        notes="Test-stopped GD and FGM inside S-DANE on quadratics with L/δ_A from 3 to 300: the per-round maximum "
        "of local steps never exceeds Remark 19's bounds and grows with fitted slopes ≈ 1 (GD) and ≈ 1/2 "
        "(FGM, plus its log) in L/λ; it does not grow with r or ε. Confirms the rebuilt Remark 4.",
    )


# --------------------------------------------------------------------------------------------
# Table 1 as fitted slopes
# --------------------------------------------------------------------------------------------


def _hard_family(rng, ratio, n=3, d=4):
    """Clients sharing the eigenpair (μ = 1, e_1), heterogeneous elsewhere with δ_A = ratio: DANE-type methods
    contract the e_1 error only by λ/(λ+μ) per round, so the rounds-to-ε attain the δ/μ order."""
    block = make_quadratic(n, d - 1, mu=1.0, L=6.0 * ratio, delta_A=float(ratio), weights="uniform", seed=rng)
    A = np.zeros((n, d, d))
    A[:, 0, 0] = 1.0
    A[:, 1:, 1:] = block.A
    c = np.zeros((n, d))
    c[:, 1:] = block.c
    return QuadraticFederation(A=A, c=c, p=np.full(n, 1.0 / n))


def _rounds_to(h, eps_rel):
    hit = np.flatnonzero(h.gap <= eps_rel * h.gap[0])
    return int(hit[0]) if hit.size else np.inf


def _slope_check(ctx, accelerated: bool):
    """Table 1's order of S-DANE (Acc-S-DANE when ``accelerated``) as a fitted log-log slope on the hard family."""
    rng = ctx.rng
    ratios = np.array([3.0, 10.0, 30.0, 100.0]) if not ctx.full else np.array([3.0, 10.0, 30.0, 100.0, 300.0])
    rounds = []
    for ratio in ratios:
        q = _hard_family(rng, ratio)
        orc = client_oracles(q)
        lam = 2 * delta_A(q)
        x0 = np.zeros(q.d)
        x0[0] = 5.0
        x0 += orc.x_star()
        runner = run_acc_sdane if accelerated else run_sdane
        h = runner(q, x0, 20000, lam=lam, mu=orc.mu, solver=Exact(), stop_gap=1e-4 * orc.gaps(x0[None])[0])
        rounds.append(_rounds_to(h, 1e-4))
    slope = float(np.polyfit(np.log(ratios), np.log(rounds), 1)[0])
    theory = ctx.param("exponent", 0.5 if accelerated else 1.0)
    ok = abs(slope - theory) <= 0.1
    return ctx.decide(
        ok,
        measured={"fitted_slope": slope, "theory": theory, "rounds": rounds, "delta_over_mu": ratios.tolist()},
        tolerance={"slope": "±0.1 around the theoretical exponent (the log factor is constant: ε fixed)"},
        notes=("Acc-S-DANE" if accelerated else "S-DANE") + " with exact local solves on a family whose "
        "clients share the eigenpair (μ = 1, e_1) and differ elsewhere with δ_A/μ ∈ {3, …, 100}, λ = 2δ_A, "
        "rounds to reduce f − f* by 10⁴ from x^0 − x* = 5e_1: the fitted log-log slope matches "
        f"Table 1's order (δ_A/μ)^{theory:g} — the bound's order is attained, not only an upper bound. "
        "Confirms the rebuilt Table 1 entry.",
    )


TABLE_1_SLOPES = claim_family(
    _slope_check,
    {
        "id": "sdane/table-1/sdane-rounds-slope",
        "title": "Table 1, S-DANE: rounds to ε grow like δ_A/μ (fitted slope 1 on a hard family)",
        "statement": r"S-DANE's strongly convex communication complexity is "
        r"$O(\frac{\delta_A}\mu\log(1+\frac{\mu D^2}\varepsilon))$.",
        "controls": [
            Control(
                "accelerated-order",
                "S-DANE's rounds grow like √(δ_A/μ): false on this family, whose shared e_1 "
                "error contracts by exactly λ/(λ + μ) per round with exact solves, i.e. Θ(λ/μ) rounds",
                {"exponent": 0.5},
            )
        ],
        "args": {"accelerated": False},
    },
    {
        "id": "sdane/table-1/acc-sdane-rounds-slope",
        "title": "Table 1, Acc-S-DANE: rounds to ε grow like √(δ_A/μ) (fitted slope 1/2 on a hard family)",
        "statement": r"Acc-S-DANE's strongly convex communication complexity is "
        r"$O(\sqrt{\delta_A/\mu}\log(1+\frac{\mu D^2}\varepsilon))$.",
        "controls": [
            Control(
                "unaccelerated-order",
                "Acc-S-DANE's rounds grow like δ_A/μ (exponent 1): false, Theorem 6 (proved in "
                "the rebuild, certified in sdane/theorem-6/pep) bounds them by O(√(δ_A/μ) log)",
                {"exponent": 1.0},
            )
        ],
        "args": {"accelerated": True},
    },
    ref="Table 1",
    kind="simulation",
)
