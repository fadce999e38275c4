"""Charles & Konečný, arXiv:2103.05032, Section 4.2: Table 2 (the tuned rates ρ) and Theorem 3 (with
momentum; refuted with constant 1, and its corrected constant).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import scipy.optimize
import sympy as sp

from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
from fedtheory.algorithms.surrogate import kappa, surrogate_hessian, surrogate_minimizer
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.rates import (
    iteration_polynomials,
    iteration_spectral_radius,
    rate_with_constant_one,
    table2_rate,
    transient_constant,
    tuned_server,
    worst_case_contraction,
)
from fedtheory.claims.core import Control, claim
from fedtheory.claims.probing import decide_with_probe, probe_phases as _probe_phases
from fedtheory.problems.quadratic import QuadraticFederation

from ._common import (
    EPS,
    _aligned_instance,
    _attaining,
    _instance_json,
    _mp_distortion,
    _probe_instances,
    _random_instance,
)

# ============================================================================================
# Section 4.2: Table 2 and Theorem 3
# ============================================================================================


def _spectral_radius_ratio(problem, theta, alpha, gamma, momentum, rho_scale: float = 1.0):
    """(radius − ρ, radius/ρ, κ): the tuned iteration's spectral radius on ∇²f̃ against Table 2's ρ(κ)
    (times ``rho_scale``: a negative control's tightened rate)."""
    kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    server = tuned_server(momentum, mu_t, L_t)
    eigs = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    radius = float(np.max(iteration_spectral_radius(server, eigs)))
    rho = table2_rate(kap, momentum) * rho_scale
    return radius - rho, radius / rho if rho > 0 else 1.0, kap


# At a double root of the characteristic polynomial (the tuned momentum methods sit there) an eigenvalue error
# δλ ≤ c·d·eps·‖H‖ (d ≤ 5 here) moves |z| by ~sqrt(η·δλ) = O(sqrt(d·eps)) absolutely (η‖H‖ ≤ 4).
_DOUBLE_ROOT_RADIUS_TOL = 10 * np.sqrt(64 * 5 * EPS)


#: Table 2's negative controls: the rate tightened; heavy-ball's tuned radius is ρ on all of [μ̃, L̃], so any instance reaches it
_TABLE2_CONTROLS = {
    "gd": Control(
        'rate-tightened',
        "the tuned radius claimed at most 0.995·ρ: false a priori, aligned clients make "
        "∇²f̃ attain μ̃ and L̃, where the tuned iteration's radius is exactly ρ (the check "
        "evaluates one fixed aligned instance on every run, so the control fires whatever "
        "the seed; run with the plain random sampling off)",
        {'rho_scale': 0.995, 'plain_sampling': False},
    ),
    "nesterov": Control(
        'rate-tightened',
        "the tuned radius claimed at most 0.995·ρ: false a priori, aligned clients "
        "make ∇²f̃ attain μ̃ and L̃, where the tuned iteration's radius is exactly "
        "ρ (the check evaluates one fixed aligned instance on every run, so the "
        "control fires whatever the seed; run with the plain random sampling off)",
        {'rho_scale': 0.995, 'plain_sampling': False},
    ),
    "heavy_ball": Control(
        "rate-tightened",
        "the tuned radius claimed at most 0.99·ρ: false a priori, aligned "
        "clients make ∇²f̃ attain μ̃ and L̃, where the tuned iteration's radius "
        "is exactly ρ (this claim's own aligned draws); for heavy-ball every "
        "instance has radius ρ, so the probe's random phase reaches it too",
        {"rho_scale": 0.99},
    ),
}


def _table2_claim(slug: str, momentum: str):
    @claim(
        id=f"localupdate/table-2/{slug}",
        ref="Table 2",
        title=f"Table 2 ({slug}): the tuned server iteration on f̃ has spectral radius at most ρ(κ)",
        statement=r"With $\kappa=\kappa(\alpha,\gamma,\Theta)$ of eq. (9), $\gamma<(L+\alpha)^{-1}$ and ServerOpt = gradient descent "
        + {
            "gd": r"without momentum, $\rho=\frac{\kappa-1}{\kappa+1}$",
            "nesterov": r"with Nesterov momentum, $\rho=1-\frac{2}{\sqrt{3\kappa+1}}$",
            "heavy_ball": r"with heavy-ball momentum, $\rho=\frac{\sqrt\kappa-1}{\sqrt\kappa+1}$",
        }[momentum]
        + r" is the convergence rate of LocalUpdate (Lessard et al. 2016, Prop. 1 tuning), read as the spectral radius of "
        r"the linear iteration; tight when $\nabla^2\tilde f$ attains $\tilde\mu$ and $\tilde L$.",
        kind="probe",
        controls=[_TABLE2_CONTROLS[momentum]],
    )
    def check(ctx):
        rng = ctx.rng
        tol = _DOUBLE_ROOT_RADIUS_TOL
        worst, worst_ratio = -np.inf, 0.0
        tight = []
        scale = ctx.param("rho_scale", 1.0)  # a control's tightened rate
        for trial in range((60 if not ctx.full else 300) if ctx.param("plain_sampling", True) else 0):
            problem, theta, alpha, gamma = _random_instance(rng, aligned=trial % 3 == 0)
            diff, ratio, _ = _spectral_radius_ratio(problem, theta, alpha, gamma, momentum, scale)
            worst, worst_ratio = max(worst, diff), max(worst_ratio, ratio)
            if trial % 3 == 0:
                tight.append(diff)
        # one fixed aligned (attaining) instance on every run, controls included: the radius is exactly ρ there, so
        # the tightened-rate control fires whatever the seed draws (issue 24)
        attained = _attaining(
            lambda inst: _spectral_radius_ratio(*inst, momentum, scale)[0], _aligned_instance(), neutral=-np.inf
        )
        worst = max(worst, attained)
        if np.isfinite(attained):  # (not when a test takes the fixed instance away)
            tight.append(attained)
        result = _probe_instances(
            lambda inst: _spectral_radius_ratio(*inst, momentum, scale)[0],
            rng,
            ctx,
            n_random=(32, 256),
            n_starts=(2, 8),
            maxiter=(40, 300),
        )
        worst = max(worst, result.worst_value)
        tight_gap = float(min(abs(t) for t in tight)) if tight else 0.0
        ok = worst <= tol and tight_gap <= tol
        return decide_with_probe(
            ctx,
            ok,
            result,
            {
                "worst_radius_minus_rho": worst,
                "worst_radius_over_rho": worst_ratio,
                "aligned_instances_min_abs_gap": tight_gap,
                **_probe_phases(result),
            },
            probe_name="probe_worst_radius_minus_rho",
            tolerance={"absolute": tol, "why": "sqrt(eigenvalue backward error) at a double root, d ≤ 5"},
            notes="Spectral radius from the closed-form roots of each eigenvalue's characteristic polynomial; eigenvalues of "
            "∇²f̃ = Σp_iQ_iA_i. Aligned (commuting) instances attain μ̃, L̃ so the radius equals ρ there (tightness). "
            "Whether ρ also bounds ‖x_T − x̃*‖/‖x_0 − x̃*‖ with constant 1 is Theorem 3's claim.",
        )

    return check


table_2_no_momentum = _table2_claim("no-momentum", "gd")
table_2_nesterov = _table2_claim("nesterov", "nesterov")
table_2_heavy_ball = _table2_claim("heavy-ball", "heavy_ball")


def _theorem3_ratios(problem, theta, alpha, gamma, momentum, x0, rounds, *, corrected=False, rho_scale=1.0):
    """Run LocalUpdate (the real driver, spectral path) with the tuned server; return per-T ratios
    ‖x_T − x*(α,γ,Θ)‖ / (c_T ρ^T ‖x_0 − x*(α,γ,Θ)‖) for the T above float64's floor, and the run's data.

    c_T = 1 is (14) as printed; ``corrected``: c_T = 1 + (1 + ρ)T (:func:`transient_constant`), with ρ
    widened by the double-root radius tolerance of the Table 2 claims (the iteration is tuned from
    float64 eigenvalue bounds, so its radius can exceed ρ by that much). ``rho_scale`` multiplies the rate
    in the bound (a negative control's tightened rate)."""
    kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
    rho = table2_rate(kap, momentum)
    server = tuned_server(momentum, mu_t, L_t)
    history = run_local_update(problem, LocalUpdate(theta, alpha, gamma, server), x0, rounds).to_numpy()
    x_star = surrogate_minimizer(problem, alpha, gamma, theta)
    e0 = np.linalg.norm(x0 - x_star)
    T = np.arange(rounds + 1)
    H_eigs = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
    # cond(∇²f̃) ≤ κ (Lemma 2); the float eigenvalues cannot stand in for it (λ_min can round to ≤ 0)
    solve_error = 16 * problem.d * EPS * kap * np.linalg.norm(x_star)
    slack = 64 * (T + 1) * problem.d * EPS * (np.linalg.norm(x0) + np.linalg.norm(x_star)) + solve_error
    rho_b = (_widened_rate(rho) if corrected else rho) * rho_scale
    bound = (transient_constant(rho_b, T, momentum) if corrected else 1.0) * rho_b**T * e0
    usable = bound >= 1e3 * slack
    ratios = (history.dist_surrogate - slack) / bound
    return ratios[usable], {
        "kappa": kap,
        "rho": rho,
        "server": server,
        "x_star": x_star,
        "eigs": H_eigs,
        "T": T[usable],
    }


def _best_hyperparameters(eigs, momentum: str, T: int = 300, starts: int = 4):
    """min over (η, β) of max_{1≤t≤T} c_t/ρ^t (c_t: exact worst case over x_0, :func:`worst_case_contraction`),
    ρ = Table 2's rate at κ = λ_max/λ_min: < 1 would mean some setting satisfies (14) up to T."""
    kap = float(eigs[-1] / eigs[0])
    rho = table2_rate(kap, momentum)
    tuned = tuned_server(momentum, float(eigs[0]), float(eigs[-1]))
    t = np.arange(1, T + 1)

    def log_excess(z):
        server = ServerOpt(momentum, lr=float(np.exp(z[0])), momentum=float(1 / (1 + np.exp(-z[1]))))
        c = worst_case_contraction(server, eigs, T)[1:]
        with np.errstate(divide="ignore"):
            return float(np.max(np.log(c) - t * np.log(rho)))

    z0 = np.array([math.log(tuned.lr), math.log(max(tuned.momentum, 1e-12) / max(1 - tuned.momentum, 1e-12))])
    best = min(
        (
            scipy.optimize.minimize(
                log_excess, z0 + dz, method="Nelder-Mead", options={"maxiter": 300, "xatol": 1e-10, "fatol": 1e-12}
            )
            for dz in ([0, 0], [0.3, -0.5], [-0.3, 0.5], [0.6, 0.6])[:starts]
        ),
        key=lambda r: r.fun,
    )
    return {
        "tuned_max_ratio": float(np.exp(log_excess(z0))),
        "best_max_ratio_over_eta_beta": float(np.exp(best.fun)),
        "best_eta": float(np.exp(best.x[0])),
        "best_beta": float(1 / (1 + np.exp(-best.x[1]))),
        "rate_with_constant_one_at_tuned": rate_with_constant_one(tuned, eigs, T),
        "rho_table2": rho,
        "T": T,
    }


def _theorem3_claim(slug: str, momentum: str, expect: str):
    @claim(
        id=f"localupdate/theorem-3/{slug}",
        ref="Theorem 3",
        title=f"Theorem 3 ({slug}): ‖x_T − x*(α,γ,Θ)‖ ≤ ρ^T ‖x_0 − x*(α,γ,Θ)‖ for all T ≥ 1",
        statement=r"Suppose $\gamma<(L+\alpha)^{-1}$ and ServerOpt is gradient descent "
        + {"gd": "with no momentum", "nesterov": "with Nesterov momentum", "heavy_ball": "with heavy-ball momentum"}[
            momentum
        ]
        + r". Then for some hyperparameter setting of ServerOpt, and $\rho$ as in Table 2, the iterates of (deterministic, "
        r"full-participation) LocalUpdate satisfy $\|x_T-x^*(\alpha,\gamma,\Theta)\|\le\rho^T\|x_0-x^*(\alpha,\gamma,\Theta)\|$ (14).",
        kind="simulation",
        expect=expect,
        controls=[
            Control(
                "rate-tightened-10pc",
                "the bound with 0.9ρ in place of ρ: false a priori, since for aligned "
                "clients ∇²f̃ attains μ̃ and L̃ and the tuned iteration contracts exactly by ρ along their "
                "eigenvectors (half the instances drawn are aligned)",
                {"rho_scale": 0.9},
            )
        ]
        if expect == "verified"
        else (),
    )
    def check(ctx):
        rng = ctx.rng
        worst, worst_case, worst_eigs = -np.inf, None, None
        for trial in range(30 if not ctx.full else 200):
            problem, theta, alpha, gamma = _random_instance(rng, aligned=trial % 2 == 0)
            x0 = rng.normal(size=problem.d) * float(rng.uniform(0.1, 10))
            ratios, info = _theorem3_ratios(
                problem, theta, alpha, gamma, momentum, x0, rounds=40, rho_scale=ctx.param("rho_scale", 1.0)
            )
            if ratios.size and ratios.max() > worst:
                worst, worst_eigs = float(ratios.max()), info["eigs"]
                worst_case = {
                    "problem": problem.to_json(),
                    "theta": theta.weights.tolist(),
                    "alpha": alpha,
                    "gamma": gamma,
                    "x0": x0.tolist(),
                    "T": int(np.argmax(ratios)),
                    "momentum": momentum,
                }
        result = None
        if worst <= 1:  # nothing found by sampling: let the adversary search (instances and x0)

            def violation(inst):
                problem, theta, alpha, gamma = inst
                r, _ = _theorem3_ratios(problem, theta, alpha, gamma, momentum, np.ones(problem.d), rounds=25)
                return float(r.max()) if r.size else 0.0

            result = _probe_instances(
                violation, rng, ctx, n=2, d=3, target=1.0, n_random=(24, 200), n_starts=(2, 8), maxiter=(30, 300)
            )
            worst = max(worst, result.worst_value)
        measured = {"worst_ratio": worst}
        if result is not None:
            measured.update(probe_worst=result.worst_value, probe_evaluations=result.n_evaluations)
        if worst <= 1:
            return ctx.verified(
                measured=measured,
                tolerance={
                    "absolute_slack": "64·(T+1)·d·eps·(‖x0‖+‖x*‖) + 16·d·eps·cond(∇²f̃)·‖x*‖; "
                    "T used only while ρ^T‖e0‖ ≥ 10³·slack"
                },
                notes="Tuned η = 2/(L̃+μ̃) with κ of eq. (9); gradient descent on f̃ contracts every eigen-direction "
                "by |1 − ηλ| ≤ (κ−1)/(κ+1) because μ̃ ≤ λ(∇²f̃) ≤ L̃ (Lemma 2), so the constant is 1.",
            )
        if momentum != "gd":  # the (η, β) search is about momentum (gd's control has no β)
            measured.update(_best_hyperparameters(worst_eigs, momentum))
        return ctx.refuted(measured=measured, counterexample=worst_case, notes=_THEOREM3_NOTES)

    @check.replayer
    def replay(cex, ctx):
        """Recompute the rounds of the stored instance in 60-digit arithmetic, then search (η, β)."""
        problem = QuadraticFederation.from_json(cex["problem"])
        theta, alpha, gamma = Theta(cex["theta"]), cex["alpha"], cex["gamma"]
        kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
        with mpmath.workdps(60):
            n, d = problem.n, problem.d
            mp = mpmath.mp
            H = mp.zeros(d, d)
            b = mp.zeros(d, 1)
            for i in range(n):
                A = mp.matrix(problem.A[i].tolist())
                Q = _mp_distortion(A, alpha, gamma, theta)
                H += mpmath.mpf(float(problem.p[i])) * Q * A
                b += mpmath.mpf(float(problem.p[i])) * Q * A * mp.matrix(problem.c[i].tolist())
            x_star = mp.lu_solve(H, b)
            mu_m, L_m = mpmath.mpf(mu_t), mpmath.mpf(L_t)
            kap_m = L_m / mu_m
            if momentum == "heavy_ball":
                eta = 4 / (mpmath.sqrt(L_m) + mpmath.sqrt(mu_m)) ** 2
                beta = ((mpmath.sqrt(kap_m) - 1) / (mpmath.sqrt(kap_m) + 1)) ** 2
                rho = (mpmath.sqrt(kap_m) - 1) / (mpmath.sqrt(kap_m) + 1)
            elif momentum == "nesterov":
                eta = 4 / (3 * L_m + mu_m)
                beta = (mpmath.sqrt(3 * kap_m + 1) - 2) / (mpmath.sqrt(3 * kap_m + 1) + 2)
                rho = 1 - 2 / mpmath.sqrt(3 * kap_m + 1)
            else:
                eta, beta, rho = 2 / (L_m + mu_m), mpmath.mpf(0), (kap_m - 1) / (kap_m + 1)
            x_prev = x = mp.matrix(cex["x0"])
            e0 = mpmath.norm(x - x_star)
            worst = mpmath.mpf(0)
            for T in range(1, cex["T"] + 2):
                y = x + beta * (x - x_prev) if momentum == "nesterov" else x
                x_next = (
                    (y - eta * H * (y - x_star))
                    if momentum != "heavy_ball"
                    else (x - eta * H * (x - x_star) + beta * (x - x_prev))
                )
                x_prev, x = x, x_next
                worst = max(worst, mpmath.norm(x - x_star) / (rho**T * e0))
        measured = {"replayed_worst_ratio_60_digits": float(worst)}
        if worst > 1 and momentum != "gd":
            measured.update(
                _best_hyperparameters(np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta)), momentum)
            )
        return ctx.decide(
            worst <= 1,
            measured=measured,
            counterexample=cex,
            notes="replayed in 60-digit arithmetic. " + (_THEOREM3_NOTES if worst > 1 else ""),
        )

    return check


_THEOREM3_NOTES = (
    "Refuted as stated (constant 1 in (14), all T ≥ 1). Table 2's ρ is the spectral radius of the tuned iteration "
    "(verified in localupdate/table-2/*), but at Lessard et al.'s tuned parameters the characteristic polynomial has a "
    "double root at the extreme eigenvalues of ∇²f̃ (a Jordan block), so ‖x_T − x̃*‖ grows like T·ρ^T along those "
    "directions; and the first round (buffer empty, x_{−1} = x_0) is a plain gradient step. 'best_max_ratio_over_eta_beta' "
    "is an adversarial search over all (η, β) of max_{t≤T} (worst-case ‖x_t − x̃*‖/‖x_0 − x̃*‖)/ρ^t: it stays above 1, "
    "so no hyperparameter setting the search finds satisfies (14) — whenever ∇²f̃ attains μ̃ and L̃ (aligned clients), "
    "ρ_HB is the minimal spectral radius, so any other (η, β) has a larger radius and fails for large T. Lessard et al. "
    "give rates in the sense ‖x_T − x*‖ ≤ c·ρ^T‖x_0 − x*‖ (or ρ + ε); the proof of Theorem 3 drops the constant. "
    "With c_T = 1 + (1+ρ)T the bound holds, and for heavy-ball it is attained (localupdate/theorem-3/*-corrected)."
)

theorem_3_no_momentum = _theorem3_claim("no-momentum", "gd", "verified")
theorem_3_nesterov = _theorem3_claim("nesterov", "nesterov", "refuted")
theorem_3_heavy_ball = _theorem3_claim("heavy-ball", "heavy_ball", "refuted")


def _symbolic_transient_identity(momentum: str, t_max: int = 12) -> dict:
    """Prove, for t ≤ t_max, the identity behind the corrected constant, and (heavy-ball) its attainment.

    Any e_{t+1} = (z₁+z₂)e_t − z₁z₂e_{t−1} with e_{−1} = e_0 = 1 has e_t = h_t − z₁z₂h_{t−1},
    h_t = Σ_{j≤t} z₁^j z₂^{t−j} (so |e_t| ≤ (t+1)r^t + r²·t·r^{t−1} when |z_i| ≤ r). Both tuned
    momentum methods are of this form per eigenvalue (heavy-ball: z₁+z₂ = 1+β−ηλ, z₁z₂ = β; Nesterov:
    z₁+z₂ = (1+β)(1−ηλ), z₁z₂ = β(1−ηλ)). For heavy-ball at λ = L̃, 1+β−ηL̃ = −2ρ and β = ρ², a
    double root at −ρ, where e_t = (−1)^t(1+(1+ρ)t)ρ^t exactly.
    """
    z1, z2 = sp.symbols("z1 z2")
    h = [sum(z1**j * z2 ** (t - j) for j in range(t + 1)) for t in range(t_max + 1)]
    prev, cur = sp.Integer(1), sp.Integer(1)
    identity = True
    for t in range(1, t_max + 1):
        prev, cur = cur, sp.expand((z1 + z2) * cur - z1 * z2 * prev)
        identity &= sp.expand(cur - (h[t] - z1 * z2 * h[t - 1])) == 0
    out = {"e_t = h_t - z1 z2 h_{t-1} for t <= %d" % t_max: bool(identity)}
    if momentum == "heavy_ball":
        mu_, L_ = sp.symbols("mu L", positive=True)
        sk = sp.sqrt(L_ / mu_)
        rho_ = (sk - 1) / (sk + 1)
        eta_ = 4 / (sp.sqrt(L_) + sp.sqrt(mu_)) ** 2
        b_at_L = sp.simplify(1 + rho_**2 - eta_ * L_ + 2 * rho_)
        r = sp.symbols("rho", positive=True)
        prev, cur, attained = sp.Integer(1), sp.Integer(1), True
        for t in range(1, t_max + 1):
            prev, cur = cur, sp.expand(-2 * r * cur - r**2 * prev)
            attained &= sp.expand(cur - (-1) ** t * (1 + (1 + r) * t) * r**t) == 0
        out["1 + beta - eta L_tilde = -2 rho"] = b_at_L == 0
        out["e_t = (-1)^t (1+(1+rho)t) rho^t at lambda = L_tilde, t <= %d" % t_max] = bool(attained)
    return out


def _widened_rate(rho: float) -> float:
    """Table 2's ρ plus the double-root radius tolerance: the rate the corrected Theorem 3 bound is checked with."""
    return min(rho + _DOUBLE_ROOT_RADIUS_TOL, 1.0)


def _log_excess(
    c: np.ndarray, rho: float, momentum: str, scale: float = 1.0, constant_one: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """log(c_t / ((1 + (1+ρ)t) ρ^t)) for each row t of ``c`` (ρ > 0), and the rows that count: t ≥ 1 (t = 0 is
    the identity) with ρ^t inside float64's range. A negative control scales the constant by ``scale`` or puts
    1 in its place (``constant_one``: (14) as printed)."""
    t = np.arange(c.shape[0])
    t_col = t.reshape((-1,) + (1,) * (c.ndim - 1))
    constant = np.ones_like(t_col, dtype=float) if constant_one else transient_constant(rho, t_col, momentum)
    with np.errstate(divide="ignore"):
        log_ratio = np.log(c) - np.log(scale * constant) - t_col * np.log(rho)
    return log_ratio, (t >= 1) & (t * np.log(rho) > -600)


def _worst_over_spectrum(kappa_t: float, momentum: str, T: int = 200, grid: int = 801) -> tuple[float, float]:
    """max over t ≤ T and λ ∈ [1, κ̃] (dense grid with both ends) of |P_t(λ)| / (c_t ρ'^t), ρ' = ρ + τ,
    and the same ratio at λ = κ̃ with ρ itself (heavy-ball's attainment): the exact sup over x_0 and over
    every symmetric ∇²f̃ with spectrum in [μ̃, L̃] (μ̃ = 1 by scaling)."""
    lam = np.concatenate([np.linspace(1.0, kappa_t, grid), np.geomspace(1.0, kappa_t, grid)])
    server = tuned_server(momentum, 1.0, kappa_t)
    rho = table2_rate(kappa_t, momentum)
    P = np.abs(iteration_polynomials(server, lam, T))
    if rho == 0:  # κ̃ = 1: one step is exact, the bound says e_t = 0 for t ≥ 1
        return (0.0 if P[1:].max() <= 4 * EPS else np.inf), 1.0
    log_ratio, usable = _log_excess(P, _widened_rate(rho), momentum)
    at_L, usable_at_L = _log_excess(P[:, grid - 1], rho, momentum)
    return float(np.exp(log_ratio[usable].max())), float(np.exp(at_L[usable_at_L]).min())


#: the corrected Theorem 3's negative controls
_THEOREM3_CORRECTED_CONTROLS = {
    "heavy_ball": Control(
        'constant-tightened',
        "the constant 0.995·(1 + (1+ρ)T): false, since tuned heavy-ball "
        "attains 1 + (1+ρ)T exactly at λ = L̃ (proved symbolically in this "
        "claim); the check evaluates one fixed aligned instance (∇²f̃ attains "
        "L̃) on every run, where the ratio exceeds 1, so the control fires "
        "by construction at any seed (plain random sampling off; without it "
        "only the probe's optimizer crosses, ≈ 1.004).",
        {'constant_scale': 0.995, 'plain_sampling': False},
    ),
    "nesterov": Control(
        "constant-one",
        "(14) as printed, constant 1 for all T: false a priori, tuned Nesterov has a "
        "double root at +ρ (λ = μ̃) where |e_t| = (1 + (1 − ρ)t)ρ^t > ρ^t (the "
        "probe's random phase reaches it: every instance with κ̃ > 1 has that "
        "direction)",
        {"constant_one": True, "plain_sampling": False},
    ),
}


def _theorem3_corrected_plain(ctx, rng, momentum: str, measured: dict) -> tuple[bool, dict | None]:
    """The corrected Theorem 3's non-adversarial part: the exact sup over a dense spectrum grid, the driver on
    random federations, and (heavy-ball) attainment on the driver; fills ``measured``, returns whether it holds
    and the driver run closest to breaking it."""
    tau = _DOUBLE_ROOT_RADIUS_TOL
    ok = True
    # the exact sup over x_0 and over all spectra in [μ̃, L̃]: the polynomial on a dense grid, κ̃ up to 10⁶
    kappas = np.concatenate([[1.0, 1.5, 4.0, 100.0, 1e6], 10 ** rng.uniform(0, 6, size=12 if not ctx.full else 60)])
    spectrum = [_worst_over_spectrum(float(k), momentum) for k in kappas]
    worst_spectrum = max(w for w, _ in spectrum)
    measured["worst_ratio_over_spectrum"] = worst_spectrum
    ok &= worst_spectrum <= 1.0
    if momentum == "heavy_ball":  # attainment at λ = L̃ up to t·τ/ρ (the double root's float split)
        at_L = [a for (_, a), k in zip(spectrum, kappas) if k > 1]
        measured["min_ratio_at_L_tilde"] = min(at_L)
        ok &= min(at_L) >= 1 - 200 * tau / table2_rate(kappas[kappas > 1].min(), momentum)
    # the real driver on random federations (d ≥ 2, unequal weights; aligned ones attain μ̃, L̃)
    worst_run, worst_case = -np.inf, None
    for trial in range(20 if not ctx.full else 120):
        problem, theta, alpha, gamma = _random_instance(rng, aligned=trial % 2 == 0)
        x0 = rng.normal(size=problem.d) * float(rng.uniform(0.1, 10))
        ratios, info = _theorem3_ratios(problem, theta, alpha, gamma, momentum, x0, rounds=60, corrected=True)
        ratios = ratios[info["T"] >= 1]  # T = 0 is the identity
        if ratios.size and ratios.max() > worst_run:
            worst_run = float(ratios.max())
            worst_case = _instance_json(problem, theta, alpha, gamma, x0=x0.tolist(), momentum=momentum)
    measured["worst_ratio_driver_runs"] = worst_run
    ok &= worst_run <= 1.0
    if momentum == "heavy_ball":
        # attainment on the driver: aligned clients (∇²f̃ attains L̃), x_0 − x̃* along the top eigenvector,
        # κ̃ ≤ 10⁴ so that x̃* is accurate; at T = 10 the widened ρ lowers the ratio by at most 10·2τ/ρ
        for _ in range(1000):
            problem, theta, alpha, gamma = _random_instance(rng, aligned=True)
            if 2 <= kappa(problem, alpha, gamma, theta)[0] <= 1e4:
                break
        else:
            raise RuntimeError("no aligned instance with 2 <= kappa <= 1e4 in 1000 draws")
        H = surrogate_hessian(problem, alpha, gamma, theta)
        x0 = surrogate_minimizer(problem, alpha, gamma, theta) + np.linalg.eigh(H)[1][:, -1]
        ratios, info = _theorem3_ratios(problem, theta, alpha, gamma, momentum, x0, rounds=10, corrected=True)
        measured["driver_ratio_top_eigenvector_T10"] = float(ratios[-1])
        ok &= ratios.size == 11 and ratios[-1] >= 1 - 10 * 2 * tau / info["rho"] - 1e-9
    return bool(ok), worst_case


def _theorem3_corrected_claim(slug: str, momentum: str):
    name = {"nesterov": "Nesterov", "heavy_ball": "heavy-ball"}[momentum]

    @claim(
        id=f"localupdate/theorem-3/{slug}-corrected",
        ref="Theorem 3",
        title=f"Theorem 3 ({name}) with the constant it needs: ‖x_T − x̃*‖ ≤ (1 + (1+ρ)T) ρ^T ‖x_0 − x̃*‖"
        + (", attained" if momentum == "heavy_ball" else ""),
        statement=r"Under Theorem 3's hypotheses ($\gamma<(L+\alpha)^{-1}$, deterministic full-participation LocalUpdate, "
        rf"ServerOpt = gradient descent with {name} momentum at Table 2's tuned $(\eta,\beta)$, $x_{{-1}}=x_0$), "
        r"for every $T\ge 0$: $\|x_T-x^*(\alpha,\gamma,\Theta)\|\le(1+(1+\rho)T)\,\rho^T\,\|x_0-x^*(\alpha,\gamma,\Theta)\|$ "
        r"with $\rho$ of Table 2 at $\kappa(\alpha,\gamma,\Theta)$. This corrects (14), refuted with constant 1 "
        rf"(localupdate/theorem-3/{slug}); it is not in the paper."
        + (
            r" For heavy-ball the constant is attained: when $\nabla^2\tilde f$ attains $\tilde L$ and $x_0-x^*$ is "
            r"its eigenvector, equality holds for every $T$."
            if momentum == "heavy_ball"
            else ""
        ),
        kind="probe",
        controls=[_THEOREM3_CORRECTED_CONTROLS[momentum]],
    )
    def check(ctx):
        rng = ctx.rng
        tau = _DOUBLE_ROOT_RADIUS_TOL
        measured = {"symbolic": _symbolic_transient_identity(momentum)}
        ok = all(measured["symbolic"].values())
        plain = ctx.param("plain_sampling", True)
        scale, one = ctx.param("constant_scale", 1.0), ctx.param("constant_one", False)  # a control's constant
        worst_case = None
        if plain:
            plain_ok, worst_case = _theorem3_corrected_plain(ctx, rng, momentum, measured)
            ok &= plain_ok
        # the adversary: instances (non-commuting, unequal weights, any Θ, α, γ) maximizing the exact sup over x_0

        def violation(inst):
            problem, theta, alpha, gamma = inst
            kap, L_t, mu_t = kappa(problem, alpha, gamma, theta)
            eigs = np.linalg.eigvalsh(surrogate_hessian(problem, alpha, gamma, theta))
            c = worst_case_contraction(tuned_server(momentum, mu_t, L_t), eigs, 80)
            log_ratio, keep = _log_excess(c, _widened_rate(table2_rate(kap, momentum)), momentum, scale, one)
            return float(np.exp(log_ratio[keep].max())) if keep.any() else 0.0

        result = _probe_instances(violation, rng, ctx, target=1.0)
        # lemma-2's aligned instance, every run: ∇²f̃ attains L̃, where tuned heavy-ball's constant is attained, so a
        # tightened constant fails here by construction, whatever the seed
        attained = _attaining(violation, _aligned_instance(), neutral=0.0)
        measured.update(
            probe_worst=result.worst_value,
            probe_evaluations=result.n_evaluations,
            probe_failed_evaluations=result.n_failed,
            attaining_instance_ratio=attained,
            **_probe_phases(result),
        )
        ok &= result.worst_value <= 1.0 and result.n_failed == 0 and attained <= 1.0
        return ctx.decide(
            ok,
            measured=measured,
            tolerance={
                "rho_widened_by": tau,
                "why": "the tuned (η, β) come from float64 bounds μ̃, L̃; at the double root an O(d·eps) eigenvalue error "
                "moves the radius by O(sqrt(d·eps)) (the Table 2 claims' tolerance), so ρ + τ is used in the bound",
                "driver_slack": "as localupdate/theorem-3/*: 64·(T+1)·d·eps·(‖x0‖+‖x*‖) + solve error",
            },
            counterexample=None if ok else {"driver": worst_case, "probe": result.to_json()},
            notes="Proof: the symbolic identity e_t = h_t − z₁z₂h_{t−1} (any two-step recursion with x_{−1} = x_0) and "
            "|z_i| ≤ ρ (Table 2, localupdate/table-2/*) give |e_t| ≤ (t+1)ρ^t + ρ²·tρ^{t−1} in every eigendirection of "
            "∇²f̃ = Σp_iQ_iA_i (symmetric, so the norm bound holds for the vector). "
            + (
                "At λ = L̃ tuned heavy-ball has the double root −ρ and equality, so 1 + (1+ρ)T cannot be lowered; "
                "explorer guarantees with heavy-ball use this constant."
                if momentum == "heavy_ball"
                else "Tuned Nesterov has its double root at +ρ (λ = μ̃), where |e_t| = (1 + (1−ρ)t)ρ^t, so the constant "
                "is valid, not shown tight; explorer guarantees with Nesterov use it."
            ),
        )

    return check


theorem_3_nesterov_corrected = _theorem3_corrected_claim("nesterov", "nesterov")
theorem_3_heavy_ball_corrected = _theorem3_corrected_claim("heavy-ball", "heavy_ball")
