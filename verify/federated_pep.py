"""Consistency of the federated PEP certificates (:mod:`fedtheory.certify.federated_pep`) with known worst cases.

- K = 1: LocalUpdate is gradient descent on F = Σp_if_i with step η; its fixed point is x* (floor 0) and its
  one-round contraction and T-round error are gradient descent's tight strongly convex rate
  ρ = max(|1 − ημ|, |1 − ηL|) (exact for both classes: quadratics attain it, and no smooth strongly convex
  function does worse);
- Drori–Teboulle: K = 1, μ = 0 is not a strongly convex case the floor can use; we check instead that the
  PEPit engine's smooth-strongly-convex class at K = 1 reproduces ρ^T for T = 1, 2, 3;
- the one-round rate certificate equals its closed form max_λ |1 − ηb(λ)| (the operator I − ηΣp_ib(A_i) is
  symmetric with spectrum in [1 − η max b, 1 − η min b], attained by identical clients);
- the two engines (spectral relaxation, PEPit's exact quadratic PEP) agree where both solve reliably;
- K = 1, μ = 0: the function-value certificate equals Drori & Teboulle's tight worst case of gradient descent,
  L‖x_0 − x*‖²/(4Nh + 2) (Drori & Teboulle, *Performance of first-order methods for smooth convex minimization:
  a novel approach*, Math. Program. 2014, Thm 3.1; attained by a Huber-type function);
- S-DANE's PEP compiled from its description (:func:`certify_sdane`: local points defined by the prox, free
  subproblem gradients e_i) over the class of :func:`~fedtheory.certify.pep.two_client_sdane` agrees with it at c > 0 (one SDP in two
  bases: 1e-6 at R = 1, Clarabel's accuracy at R ≤ 3); with exact solves it lies below two_client_sdane's inexact
  worst cases and is their c → 0 limit (two_client_sdane at c = 0 itself has no interior: see the notes);
- the quadratic PEP's own worst case (PEPit engine), rebuilt as a QuadraticFederation
  (:func:`~fedtheory.certify.interpolation.quadratic_interpolant`) and replayed in the real driver, attains the
  SDP's value (floor and T = 2 error).
"""

from __future__ import annotations

import functools

import numpy as np

from fedtheory.certify.federated_pep import certify_local_update, message_eigenvalue
from fedtheory.claims.agreement import consistency_claim
from fedtheory.claims.controls import tightened_bound
from fedtheory.claims.core import Control

#: agreement of a certified value with a closed form: the SDP margin (1e-5) plus Clarabel/SCS tolerances
RTOL = 2e-5


@consistency_claim(
    "verify/federated-pep/k1-gradient-descent",
    "K = 1: the certificates reproduce gradient descent (floor 0, rate max(|1 − ημ|, |1 − ηL|), error ρ^T D)",
    r"With $K=1$, LocalUpdate is gradient descent with step $\eta$ on $F=\sum_ip_if_i$: the certified floor is "
    r"$0$, the certified one-round contraction is $\rho=\max(|1-\eta\mu|,|1-\eta L|)$ and the certified "
    r"$\|x_T-x^*\|$ from $\|x_0-x^*\|\le D$ is $\rho^TD$ (quadratic and smooth strongly convex classes), "
    r"each to $10^{-5}$ relative.",
    [
        tightened_bound(
            0.99,
            "gradient descent's tight rate",
            "the worst quadratic (eigenvalue μ or L)",
            {"rate_factor": 0.99},
            name="rate-0.99",
        )
    ],
)
def k1_gradient_descent(ctx):
    factor = ctx.param("rate_factor", 1.0)
    mu, L, gamma = 1.0, 10.0, 0.05
    rows, ok = {}, True
    floor = certify_local_update(mu, L, 1, gamma, pieces=8, probe_starts=1, seed=ctx.seed % (2**31))
    rows["floor"] = floor.value
    ok &= floor.status == "certified" and floor.value <= 1e-6
    for eta in (0.15, 0.05):
        rho = factor * max(abs(1 - eta * mu), abs(1 - eta * L))
        r = certify_local_update(mu, L, 1, gamma, measure="rate", eta=eta, pieces=8, seed=ctx.seed % (2**31))
        rows[f"rate_eta{eta}"] = (r.value, r.lower, rho)
        ok &= r.status == "certified" and abs(r.value - rho) <= RTOL * rho
        for T in (1, 2, 3):
            e = certify_local_update(
                mu,
                L,
                1,
                gamma,
                measure="error",
                eta=eta,
                rounds=T,
                D=1.0,
                function_class="smooth-strongly-convex",
                probe_starts=1,
                seed=ctx.seed % (2**31),
            )
            rows[f"error_smooth_eta{eta}_T{T}"] = (e.value, e.lower, rho**T)
            ok &= e.status == "certified" and abs(e.value - rho**T) <= RTOL * rho**T
    return ctx.decide(
        ok, measured=rows, tolerance={"relative": RTOL, "why": "1e-5 reporting margin + the SDP's own accuracy"}
    )


@consistency_claim(
    "verify/federated-pep/rate-closed-form",
    "The one-round rate certificate equals max over λ ∈ [μ, L] of |1 − ηb(λ)|",
    r"For quadratic clients, $\sup\|R(x)-R(x')\|/\|x-x'\|=\max_{\lambda\in[\mu,L]}|1-\eta b(\lambda)|$ with "
    r"$b(\lambda)=\lambda q(1-\gamma(\lambda+\alpha))$, for FedAvg and FedProx ($K=4$, $\kappa_0=10$).",
    [Control("b-scaled", "the closed form with b scaled by 0.9", {"b_factor": 0.9})],
)
def rate_closed_form(ctx):
    bf = ctx.param("b_factor", 1.0)
    mu, L, K, gamma = 1.0, 10.0, 4, 0.05
    rows, ok = [], True
    for alpha, eta in ((0.0, 0.1), (2.0, 0.3)):
        grid = np.linspace(mu, L, 200_001)
        closed = float(np.max(np.abs(1 - eta * bf * message_eigenvalue(grid, gamma, np.ones(K), alpha))))
        c = certify_local_update(
            mu, L, K, gamma, alpha=alpha, measure="rate", eta=eta, pieces=16, seed=ctx.seed % (2**31)
        )
        rows.append({"alpha": alpha, "eta": eta, "closed_form": closed, "upper": c.value, "lower": c.lower})
        ok &= c.status == "certified" and abs(c.value - closed) <= RTOL * closed
    return ctx.decide(ok, measured={"rows": rows}, tolerance={"relative": RTOL})


@consistency_claim(
    "verify/federated-pep/engines-agree",
    "The spectral relaxation and PEPit's exact quadratic PEP give the same worst floor",
    r"For $n=2$ quadratic clients, $\kappa_0=10$, $K\in\{2,4\}$, $\gamma L=\tfrac12$: the spectral engine's "
    r"certified floor equals the PEPit engine's to $10^{-4}$ relative.",
    [Control("other-step", "the PEPit engine run at 1.1 γ (a planted mismatch)", {"gamma_factor": 1.1})],
)
def engines_agree(ctx):
    gf = ctx.param("gamma_factor", 1.0)
    rows, ok = [], True
    for K in (2, 4):
        s = certify_local_update(
            1.0, 10.0, K, 0.05, engine="spectral", pieces=16, probe_starts=1, seed=ctx.seed % (2**31)
        )
        q = certify_local_update(1.0, 10.0, K, 0.05 * gf, engine="pepit", probe_starts=1, seed=ctx.seed % (2**31))
        rows.append({"K": K, "spectral": s.value, "pepit": q.value, "pepit_solver": q.solver})
        ok &= s.status == q.status == "certified" and abs(s.value - q.value) <= 1e-4 * s.value
    return ctx.decide(ok, measured={"rows": rows}, tolerance={"relative": 1e-4})


#: agreement of the function-value SDP (before the 1e-5 reporting margin) with Drori–Teboulle's closed form:
#: Clarabel's relative duality gap is 1e-8 on data of size O(1), so 1e-6 leaves two orders of magnitude
DT_RTOL = 1e-6


@consistency_claim(
    "verify/federated-pep/k1-drori-teboulle",
    "K = 1, μ = 0: the function-value certificate is gradient descent's tight worst case L D²/(4Nh + 2)",
    r"With $K=1$ local step, equal weights ($n=2$) and $L$-smooth convex clients ($\mu=0$), $N$ rounds of "
    r"FedAvg with server step $\eta=h/L$ are gradient descent with step $h/L$ on $F=\sum_ip_if_i$, and "
    r"the certified $\sup F(x_N)-F^*$ over $\|x_0-x^*\|\le D$ equals Drori–Teboulle's "
    r"$LD^2/(4Nh+2)$ to $10^{-6}$ relative, for $N\in\{1,2,3\}$, $h\in\{\tfrac12,1\}$, and PEPit's "
    r"own single-function example \texttt{wc\_gradient\_descent} to the same tolerance.",
    [
        Control(
            "dt-0.99",
            "Drori–Teboulle's bound scaled by 0.99 (below the worst case, which the Huber-type instance attains)",
            {"bound_factor": 0.99},
        )
    ],
)
def k1_drori_teboulle(ctx):
    # K = 1: each client's message is ∇f_i(x), the round is x − η∇F(x); F ranges over all L-smooth convex
    # functions with a minimizer (f_i = F is in the class for any heterogeneity radius), so the federated
    # worst case is gradient descent's: the heterogeneity C = 1 of the class does not enter
    import cvxpy as cp
    from PEPit.examples.unconstrained_convex_minimization import wc_gradient_descent

    factor = ctx.param("bound_factor", 1.0)
    L, D = 2.0, 1.5
    rows, ok = [], True
    for N in (1, 2, 3):
        for h in (0.5, 1.0):
            bound = factor * L * D**2 / (4 * N * h + 2)
            c = certify_local_update(
                0.0,
                L,
                1,
                0.25 / L,
                measure="function-value",
                eta=h / L,
                rounds=N,
                D=D,
                function_class="smooth-strongly-convex",
            )
            sdp = c.details.get("sdp_value")
            # second reference: PEPit's own single-function GD example (‖x_0 − x*‖ ≤ 1, so × D²)
            ref, _ = wc_gradient_descent(L, h / L, N, wrapper="cvxpy", solver=cp.CLARABEL, verbose=-1)
            rows.append(
                {
                    "N": N,
                    "h": h,
                    "drori_teboulle": bound,
                    "sdp_value": sdp,
                    "pepit_example": ref * D**2,
                    "upper": c.value,
                    "lower_quadratic": c.lower,
                    "solver": c.solver,
                    "seconds": c.seconds,
                }
            )
            ok &= c.status == "certified" and abs(sdp - bound) <= DT_RTOL * bound
            ok &= abs(sdp - ref * D**2) <= DT_RTOL * ref * D**2
    return ctx.decide(
        ok, measured={"rows": rows}, tolerance={"relative": DT_RTOL, "why": "Clarabel's 1e-8 duality gap on O(1) data"}
    )


#: agreement required between certify_sdane(c) (local points defined, free errors e_i) and two_client_sdane(c) (free
#: local points, (6) as a constraint) at c > 0. The two SDPs are one program in two bases of the Gram matrix (an
#: invertible linear change of the leaf points), so their optima are equal and only solver error separates them:
#: Clarabel stops at relative duality gap and feasibility 1e-8 on O(1) data; measured at R = 1 the two agree to
#: ≤ 1.5e-7, so 1e-6 leaves the solver's error a factor ~7 and catches any modelling difference (a 5% change of λ or
#: of c moves the value by ≥ 1e-3)
AGREE_RTOL = 1e-6
#: at R ≥ 2 Clarabel's "optimal" is less accurate than 1e-6: the *same* SDP (two_client_sdane(2, 1, 0.1, 1, c=0.25))
#: solved with the two settings of pep.CLARABEL_ATTEMPTS, both "optimal", gives 0.3200439 and 0.3200426 (4e-6), and
#: certify_sdane's basis 0.3200414 / 0.3200428; tighter Clarabel tolerances (1e-10) stop "inaccurate" at the same
#: values, SCS at eps 1e-9 does not converge in 2e6 iterations. Two independent solves each within ~8e-6: 2e-5
AGREE_RTOL_DEEP = 2e-5
#: the exact-solve evidence at c = 0, where two_client_sdane has no interior: c values at which it solves "optimal"
SDANE_CS = (1e-2, 1e-3, 1e-4)
SDANE_NOTES = (
    "Agreement at c = 0 itself is not checked against two_client_sdane: there (6) reads Σ‖∇F_i‖² ≤ 0, which "
    "leaves its SDP without interior; Clarabel and SCS both stop 'optimal_inaccurate' (R=1, λ=2, μ=0, δ=1: "
    "0.52522 and 0.52566 against the exact 0.524836). At c > 0 the two formulations are one SDP in two "
    "bases and are compared directly. Points where either solve is not Clarabel 'optimal' are reported "
    "and not compared: R=1, λ=1, c=0.05 (μ ∈ {0, 0.1}) stalls 'AlmostSolved' in both bases (the objective "
    "still creeping at 2e-7 per iteration: no strict complementarity there), and at R=3 two_client_sdane "
    "needs the SCS cross-check at some points where certify_sdane's basis is 'optimal' (R=3, λ=1, μ=0, "
    "c=0.01: 0.1375725 via CLARABEL+SCS against 0.1375691, 2.5e-5 apart); the reverse also occurs (Acc-S-DANE, R=2, "
    "λ=2, μ=0, c=0.01: certify_sdane unreliable, two_client_sdane optimal), so neither basis is uniformly "
    "better conditioned. Measured on the full grid: 35 of 48 points compared; worst relative difference "
    "1.5e-7 (R=1), 7.8e-6 (R=2), 4.5e-6 (R=3), 4.0e-7 (Acc-S-DANE, R=2)."
)
#: the inclusion check's slack: two SDP values, each to ~1e-8 relative (Clarabel's duality gap)
INCLUSION_RTOL = 1e-6


def _sdane_agreement_rows(points, lam_factor=1.0, c_factor=1.0):
    """Per (R, λ, μ, δ, c, accelerated): two_client_sdane(c) beside certify_sdane(c_factor·c) at lam_factor·λ, each
    with its solver ("CLARABEL" exactly when Clarabel's status is "optimal") or the error that stopped it."""
    import time

    from fedtheory.certify.federated_pep import certify_sdane
    from fedtheory.certify.pep import two_client_sdane

    rows = []
    for R, lam, mu, delta, c, acc in points:
        row = {"R": R, "lam": lam, "mu": mu, "delta": delta, "c": c, "accelerated": acc}
        for key, fn, args in (
            ("two_client_sdane", two_client_sdane, (R, lam, mu, delta, c)),
            ("certify_sdane", certify_sdane, (R, lam_factor * lam, mu, delta, c_factor * c)),
        ):
            t0 = time.perf_counter()
            try:
                r = fn(*args[:4], c=args[4], accelerated=acc)
                row[key] = {"value": r.value, "solver": r.solver, "gap": r.gap}
            except RuntimeError as exc:
                row[key] = {"value": None, "solver": f"unreliable: {exc}"}
            row[key]["seconds"] = time.perf_counter() - t0
        a, b = row["two_client_sdane"], row["certify_sdane"]
        row["compared"] = a["solver"] == b["solver"] == "CLARABEL"
        row["rel_diff"] = (b["value"] - a["value"]) / a["value"] if row["compared"] else None
        row["rtol"] = AGREE_RTOL if R == 1 else AGREE_RTOL_DEEP
        rows.append(row)
    return rows


def _sdane_agreement_ok(rows, min_compared):
    compared = [r for r in rows if r["compared"]]
    return (len(compared) >= min_compared and all(abs(r["rel_diff"]) <= r["rtol"] for r in compared)), len(compared)


_SDANE_CONTROLS = [
    Control(
        "lambda-1.05",
        "certify_sdane at 1.05 λ against two_client_sdane at λ (the worst case moves with λ: "
        "0.98 at λ = 1 against 0.79 at λ = 2, R = 1, c = 1/4; a 5% step moves it by ~1e-2, 10⁴ tolerances)",
        {"lam_factor": 1.05},
    ),
    Control(
        "c-1.05",
        "certify_sdane at 1.05 c against two_client_sdane at c (a larger c admits more local points, "
        "and the worst case grows with c: 0.58 at c = 0.01 against 0.79 at c = 1/4, R = 1, λ = 2)",
        {"c_factor": 1.05},
    ),
]


# Full tier (72 s): a fast-tier check of certify_sdane against the compiled PEP is
# verify/methods-pep/agrees-with-certify-sdane.
@consistency_claim(
    "verify/federated-pep/sdane-agreement",
    "S-DANE's compiled PEP (certify_sdane) agrees with two_client_sdane to 1e-6",
    r"For two $\mu$-convex clients under $\delta$-SOD and one round of S-DANE with local accuracy $c>0$, "
    r"\texttt{certify\_sdane} (compiled from S-DANE's description: each local point defined by the prox, "
    r"$\nabla f_i(x_i)=\nabla f_i(v)-\nabla f(v)-\lambda(x_i-v)+e_i$ with free $e_i$, "
    r"$\sum_i\|e_i\|^2\le c\lambda^2\sum_i\|x_i-v\|^2$) and \texttt{two\_client\_sdane} "
    r"(free local points under condition (6)) give the same worst case to $10^{-6}$ relative, both solved "
    r"to Clarabel \emph{optimal}, for $\lambda\in\{1,2\}$, $\mu\in\{0,\tfrac1{10}\}$, $\delta=1$, "
    r"$c\in\{\tfrac14,\tfrac1{100}\}$ and $c=\tfrac1{20}$ at $\lambda=2$. With exact solves ($c=0$, "
    r"\texttt{certify\_sdane} by elimination) the worst case $v_0$ satisfies $v_0\le v(c)$ for "
    r"$c\in\{10^{-2},10^{-3},10^{-4}\}$, and the extrapolation of $v(c)$ to $c=0$, linear in $\sqrt c$ "
    r"from $c\in\{10^{-3},10^{-4}\}$, equals $v_0$ within $2|b|\sqrt{c_1c_2}$ ($b$: the quadratic "
    r"coefficient of the fit through all three $c$), $(R,\lambda,\mu,\delta)\in\{(1,2,0,1),(2,2,\tfrac12,1),"
    r"(2,1,0,\tfrac12)\}$.",
    _SDANE_CONTROLS,
    tier="full",
)
def sdane_agreement(ctx):
    from fedtheory.certify.federated_pep import certify_sdane
    from fedtheory.certify.pep import two_client_sdane

    lf, cf = ctx.param("lam_factor", 1.0), ctx.param("c_factor", 1.0)
    points = [
        (1, lam, mu, 1.0, c, False)
        for lam in (1.0, 2.0)
        for mu in (0.0, 0.1)
        for c in (0.25, 0.05, 0.01)
        if not (lam == 1.0 and c == 0.05)
    ]
    agreement = _sdane_agreement_rows(points, lf, cf)
    ok, ncompared = _sdane_agreement_ok(agreement, len(points))
    rows = []
    for R, lam, mu, delta in ((1, 2.0, 0.0, 1.0), (2, 2.0, 0.5, 1.0), (2, 1.0, 0.0, 0.5)):
        ex = certify_sdane(R, lf * lam, mu, delta)
        vs = np.array([two_client_sdane(R, lam, mu, delta, c=c).value for c in SDANE_CS])
        s = np.sqrt(SDANE_CS)
        lin = vs[2] - (vs[1] - vs[2]) * s[2] / (s[1] - s[2])
        b = float(np.polyfit(s, vs, 2)[0])
        tol = 2 * abs(b) * s[1] * s[2]
        inclusion = bool(np.all(ex.value <= vs * (1 + INCLUSION_RTOL)))
        agree = abs(lin - ex.value) <= tol
        rows.append(
            {
                "R": R,
                "lam": lam,
                "mu": mu,
                "delta": delta,
                "exact": ex.value,
                "exact_lower": ex.lower,
                "exact_solver": ex.solver,
                "inexact": dict(zip(map(str, SDANE_CS), vs.tolist())),
                "extrapolated": lin,
                "rel_diff": (lin - ex.value) / ex.value,
                "tolerance_abs": tol,
                "inclusion": inclusion,
            }
        )
        ok &= inclusion and agree and ex.gap < 1e-4
    worst = max(abs(r["rel_diff"]) for r in agreement if r["compared"]) if ncompared else None
    return ctx.decide(
        ok,
        measured={"agreement": agreement, "worst_rel_diff": worst, "compared": ncompared, "exact": rows},
        tolerance={
            "agreement_relative": AGREE_RTOL,
            "why": "one SDP in two bases; Clarabel's 1e-8 gap on O(1) data, measured agreement <= 1.5e-7",
            "extrapolation": "2|b|sqrt(c1 c2) per setting",
            "inclusion_relative": INCLUSION_RTOL,
        },
        notes=SDANE_NOTES,
    )


#: agreement of the value the PEP-extracted quadratic instance reaches in the driver with the SDP's value: the
#: extracted clients interpolate the SDP's table only up to the solver's accuracy (Clarabel's 1e-8 duality gap; the
#: tables' interpolation residuals, relative to their gradients, measured ≤ 1e-3 — in directions the measure barely
#: sees: the driver's values sit within 2e-7 of the SDP's), so 1e-3 relative is loose against float64 and the
#: solver, and tight against a wrong extraction (a client off the worst case, a lost rescaling: ≥ 1e-2)
EXTRACT_RTOL = 1e-3
#: the points: κ₀ = 10, γL = ½, FedAvg and FedProx (α = L/5), (K, n) ∈ {(2, 2), (4, 2), (2, 3)}
EXTRACT_POINTS = ((2, 2, 0.0), (4, 2, 0.0), (2, 3, 0.0), (2, 2, 2.0))


@functools.lru_cache(maxsize=4)
def _extraction_runs(seed):
    """The certificates of the quadratic-extraction claim, once per seed (its controls change the statement, not
    the computation). The spectral error engine costs 10–30 s a point, so it is compared at the first point only."""
    mu, L, gamma = 1.0, 10.0, 0.05
    out = []
    for j, (K, n, alpha) in enumerate(EXTRACT_POINTS):
        for measure, extra in (("floor", {}), ("error", {"eta": 0.1, "rounds": 2, "D": 1.0})):
            q = certify_local_update(
                mu,
                L,
                K,
                gamma,
                clients=n,
                alpha=alpha,
                measure=measure,
                engine="pepit",
                probe_starts=1,
                seed=seed,
                **extra,
            )
            s = None
            if measure == "floor" or j == 0:
                s = certify_local_update(
                    mu,
                    L,
                    K,
                    gamma,
                    clients=n,
                    alpha=alpha,
                    measure=measure,
                    engine="spectral",
                    probe_starts=1,
                    pieces=16,
                    seed=seed,
                    **extra,
                )
            out.append((K, n, alpha, measure, q, s))
    return tuple(out)


# Full tier (86 s): the fast tier extracts and replays worst cases in tests/test_quadratic_extraction.py and in
# verify/certificate-crosscheck/rank-deficient-extraction.
@consistency_claim(
    "verify/federated-pep/quadratic-extraction",
    "The quadratic PEP's worst case, rebuilt as a QuadraticFederation and replayed in the driver, attains the SDP",
    r"For quadratic clients ($\mu=1$, $L=10$, $\gamma L=\tfrac12$; $(K,n,\alpha)\in\{(2,2,0),(4,2,0),(2,3,0),"
    r"(2,2,L/5)\}$), the floor and the error after $T=2$ rounds (server GD, $\eta=0.1$, $D=1$, $C=1$): the "
    r"instance extracted from PEPit's SDP solution (each client $A_i$ through its table, spectrum in "
    r"$[\mu,L]$ checked on the stored instance) reaches, in the real driver, the SDP's value to $10^{-3}$ "
    r"relative and never exceeds the certified value; the spectral engine's certificate agrees with the "
    r"PEPit engine's to $10^{-4}$ relative (every floor; the error at the first point).",
    [
        Control(
            "sdp-1.01", "the claim that the extracted instance reaches 1.01 × the SDP's value", {"sdp_factor": 1.01}
        ),
        Control(
            "class-0.99L",
            "class membership checked against [μ, 0.99 L] (the worst case needs curvature "
            "L: an instance whose spectrum was not repaired to [μ, L] fails the same check)",
            {"L_factor": 0.99},
        ),
    ],
    tier="full",
)
def quadratic_extraction(ctx):
    from fedtheory.problems.quadratic import QuadraticFederation

    sf, lf = ctx.param("sdp_factor", 1.0), ctx.param("L_factor", 1.0)
    mu, L = 1.0, 10.0
    rows, ok = [], True
    for K, n, alpha, measure, q, s in _extraction_runs(ctx.seed % (2**31)):
        sdp, ext = q.details.get("sdp_value"), q.details.get("extracted_lower")
        row = {
            "K": K,
            "n": n,
            "alpha": alpha,
            "measure": measure,
            "sdp_value": sdp,
            "extracted_lower": ext,
            "probe_lower": q.details.get("probe_lower"),
            "pepit": q.value,
            "seconds_pepit": q.seconds,
            "spectral": None if s is None else s.value,
            "seconds_spectral": None if s is None else s.seconds,
            "extraction": q.details.get("extraction"),
        }
        inst = q.details.get("extracted_instance")
        good = q.status == "certified" and sdp is not None and ext is not None and inst is not None
        if good:
            prob = QuadraticFederation.from_json(inst["problem"])  # the stored instance rebuilds
            spec = np.linalg.eigvalsh(prob.A)
            in_class = bool(spec.min() >= mu * (1 - 1e-12) and spec.max() <= lf * L * (1 + 1e-12))
            row.update(
                {
                    "spectrum": [float(spec.min()), float(spec.max())],
                    "in_class": in_class,
                    "rel_diff": (ext - sf * sdp) / sdp,
                }
            )
            good = (
                in_class
                and inst.get("source") == "pepit-extracted"
                and q.lower >= ext
                and abs(ext - sf * sdp) <= EXTRACT_RTOL * sdp
                and ext <= q.value
            )
            if s is not None:
                good = good and s.status == "certified" and abs(s.value - q.value) <= 1e-4 * q.value
        rows.append(row)
        ok &= bool(good)
    return ctx.decide(
        ok,
        measured={"rows": rows},
        tolerance={
            "relative": EXTRACT_RTOL,
            "engines_relative": 1e-4,
            "why": "the extracted clients interpolate the SDP's table up to the solver's "
            "accuracy; measured driver values within 2e-7 of the SDP's",
        },
    )


@consistency_claim(
    "verify/federated-pep/sdane-agreement/grid",
    "S-DANE / Acc-S-DANE with inexact local solves: certify_sdane and two_client_sdane agree (full grid)",
    r"As \texttt{verify/federated-pep/sdane-agreement}, for S-DANE at $R\in\{1,2,3\}$ and Acc-S-DANE at "
    r"$R=2$, $\lambda\in\{1,2\}$, "
    r"$\mu\in\{0,\tfrac1{10}\}$, $\delta=1$, $c\in\{\tfrac14,\tfrac1{20},\tfrac1{100}\}$: wherever both "
    r"are solved to Clarabel \emph{optimal} (at least half of the 48 points) they agree to $10^{-6}$ "
    r"relative at $R=1$ and to $2\cdot10^{-5}$ at $R\in\{2,3\}$, where Clarabel's own accuracy is "
    r"measured at $\sim8\cdot10^{-6}$ (see the notes).",
    _SDANE_CONTROLS[:1],
    tier="full",
)
def sdane_agreement_grid(ctx):
    lf, cf = ctx.param("lam_factor", 1.0), ctx.param("c_factor", 1.0)
    # Acc-S-DANE at R = 2 only: at R = 1 it is S-DANE (A_0 = 0, a = 1/λ: the same centre, v-update and output)
    points = [
        (R, lam, mu, 1.0, c, acc)
        for R, acc in ((1, False), (2, False), (3, False), (2, True))
        for lam in (1.0, 2.0)
        for mu in (0.0, 0.1)
        for c in (0.25, 0.05, 0.01)
    ]
    agreement = _sdane_agreement_rows(points, lf, cf)
    ok, ncompared = _sdane_agreement_ok(agreement, len(points) // 2)
    worst = {
        f"R{R}{'-acc' if acc else ''}": max(
            (abs(r["rel_diff"]) for r in agreement if r["compared"] and r["R"] == R and r["accelerated"] == acc),
            default=None,
        )
        for R, acc in ((1, False), (2, False), (3, False), (2, True))
    }
    return ctx.decide(
        ok,
        measured={"agreement": agreement, "worst_rel_diff_by_R": worst, "compared": ncompared},
        tolerance={
            "R1_relative": AGREE_RTOL,
            "R2_R3_relative": AGREE_RTOL_DEEP,
            "why": "R = 1: Clarabel's 1e-8 gap; R >= 2: two solves each within Clarabel's "
            "measured self-consistency ~8e-6 (AGREE_RTOL_DEEP)",
        },
        notes=SDANE_NOTES + " The R >= 2 tolerance 2e-5 is wider than the fast claim's 1e-6 because "
        "Clarabel does not reach 1e-6 there (not because the formulations differ).",
    )
