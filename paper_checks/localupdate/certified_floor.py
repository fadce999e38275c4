"""Certified replacements for the accuracy-floor bounds of Charles & Konečný, *Convergence and Accuracy Trade-Offs
in Federated Learning and Meta-Learning* (arXiv:2103.05032) that fail for d ≥ 2 (Lemma 5, Theorem 4,
Corollary 1; see paper_checks/localupdate.py).

Each value here is a certificate from :func:`fedtheory.certify.federated_pep.certify_local_update`: an upper bound
valid over the whole class (n quadratic clients, μI ⪯ A_i ⪯ LI, ‖c_i − o‖ ≤ C, any dimension) and a lower bound
that a concrete federation reaches in the real driver. A claim below states an interval or a comparison; its
check takes every constant from ``ctx.param`` so a negative control reruns it against a known-false constant.

Findings (measured by these claims):

* at μ = 1, L = 1000, K = 100, γ = 1/(2L), n = 2 the worst floor is Δ/C = 15.2017 (upper and replayed lower
  agree to 10⁻⁶): Lemma 5's proved constant 8 fails by a factor 1.9, Theorem 4's right-hand side by far more;
* the certificates are tight on every grid point tried (gap ≤ 10⁻³): the relaxation is exact in practice;
* with smooth strongly convex (non-quadratic) clients FedAvg's worst floor is strictly larger than with
  quadratics: an explicit federation of such clients, replayed in the driver, reaches 1.6× (K = 2) and 1.29×
  (K = 4) the certified worst floor over all quadratic federations (localupdate/section-4.3/smooth-floor-larger);
* with exact local solves (Kγμ → ∞) the worst floor of two clients is proved to be C√(p(1−p))(κ₀ − 1)/√κ₀,
  tight at p = ½ (localupdate/lemma-5/corrected-limit): a corrected Lemma 5 in that limit.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
from fedtheory.algorithms.surrogate import surrogate_hessian
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.rates import suboptimality_delta
from fedtheory.algorithms.surrogate import kappa_bound_uniform
from fedtheory.certify.federated_pep import certify_local_update
from fedtheory.claims.controls import tightened_bound
from fedtheory.claims.core import Control, claim
from fedtheory.problems.quadratic import QuadraticFederation

_HERE = Path(__file__).resolve().parent
_LEMMA5_CEX = _HERE.parent / "counterexamples" / "localupdate" / "lemma-5.json"

#: the acceptance point and its certified interval for sup Δ/C (upper and lower agree to 1e-6 there)
ACCEPT = {"mu": 1.0, "L": 1000.0, "K": 100, "gamma": 0.5 / 1000.0}
ACCEPT_INTERVAL = (15.20, 15.21)
#: the fast grid: n = 2, γL = 1/2
FAST_GRID = [(10.0, 2), (10.0, 10), (100.0, 2), (100.0, 10)]
#: tightness required of a certificate: lower >= (1 - TIGHT)·upper (the reporting margin is 1e-5)
TIGHT = 1e-3


def _theorem4_rhs(mu, L, K, gamma, constant=8.0):
    """Theorem 4's right-hand side per unit C with κ of eq. (11) (Θ_{1:K}, α = 0)."""
    kap = float(kappa_bound_uniform(mu, L, 0.0, gamma, K))
    return constant * float(suboptimality_delta(L / mu, kap))


def _attained(c, factor: float = 1.0, tight: float = TIGHT) -> bool:
    """Certified, and the replayed instance reaches within ``tight`` of the upper bound; ``factor`` < 1 is a
    control's claim that the worst case lies below factor·upper, false once the instance reaches above it."""
    return c.status == "certified" and c.lower >= (1 - tight) * c.value and c.lower <= factor * c.value


def _row(c, mu, L, K, gamma):
    return {
        "kappa0": L / mu,
        "K": K,
        "gammaL": gamma * L,
        "upper": c.value,
        "lower": c.lower,
        "gap": c.gap,
        "status": c.status,
        "seconds": round(c.seconds, 2),
        "theorem4_rhs_8": _theorem4_rhs(mu, L, K, gamma),
        "theorem4_rhs_2": _theorem4_rhs(mu, L, K, gamma, 2.0),
    }


def _tighter_than_attained(factor, bound, attained_by):
    """The certificates' control: the certified value times ``factor`` < 1 taken for the bound, false since the
    instance replayed in the driver attains the certified value (read by the checks as ``upper_factor``)."""
    return tightened_bound(factor, bound, attained_by, {"upper_factor": factor}, name="tighter-than-attained")


@claim(
    id="localupdate/lemma-5/certified",
    ref="Lemma 5",
    title="Certified worst floor at κ₀ = 1000, K = 100, γ = 1/(2L): sup‖x*(0,γ,Θ_{1:K}) − x*‖/C ∈ [15.20, 15.21]",
    statement=r"For $n=2$ clients $f_i=\tfrac12(x-c_i)^\top A_i(x-c_i)$, $I\preceq A_i\preceq 1000I$, $\|c_i-o\|\le C$, "
    r"any dimension, FedAvg ($\Theta_{1:100}$, $\gamma=1/2000$, $\alpha=0$, $p=(\tfrac12,\tfrac12)$): "
    r"$\sup\|x^*(\alpha,\gamma,\Theta)-x^*\|/C\in[15.20,15.21]$, above Lemma 5's $8$ and Theorem 4's "
    r"$8(\sqrt{\kappa_0}-\sqrt\kappa)/(\sqrt{\kappa_0}+\sqrt\kappa)$; and at the parameters of the stored "
    r"Lemma 5 counterexample the certificate bounds the counterexample's floor.",
    kind="certificate",
    controls=[
        Control(
            "below-attained",
            "the interval [14.9, 15.0], below the 15.2017 a federation reaches",
            {"interval": (14.9, 15.0)},
        ),
        Control(
            "cex-above",
            "the stored counterexample's floor scaled up by 1.5, beyond the certificate",
            {"cex_factor": 1.5},
        ),
    ],
)
def certified_floor(ctx):
    """Upper bound: the spectral relaxation (exact in the limit of fine pieces, a valid upper bound at any);
    lower bound: the probe's federation, replayed through run_local_update from x* until it settles."""
    lo, hi = ctx.param("interval", ACCEPT_INTERVAL)
    c = certify_local_update(
        ACCEPT["mu"],
        ACCEPT["L"],
        ACCEPT["K"],
        ACCEPT["gamma"],
        engine="spectral",
        pieces=16,
        probe_starts=2,
        seed=ctx.seed % (2**31),
    )
    # the stored Lemma 5 counterexample, certified at its own parameters (p, L, K, γ)
    data = json.loads(_LEMMA5_CEX.read_text())["counterexample"]
    prob = QuadraticFederation.from_json(data["problem"])
    theta = Theta.from_json(data["theta"])
    gamma = float(data["gamma"])
    C = float(prob.C)
    c2 = certify_local_update(
        float(prob.mu),
        float(prob.L),
        theta.K,
        gamma,
        p=prob.p.tolist(),
        C=C,
        engine="spectral",
        pieces=48,
        probe_starts=1,
        seed=ctx.seed % (2**31),
    )
    H = surrogate_hessian(prob, 0.0, gamma, theta)
    ev = np.linalg.eigvalsh(H)
    algo = LocalUpdate(theta, 0.0, gamma, ServerOpt("gd", lr=2 / (ev[0] + ev[-1])))
    rounds = int(math.ceil(math.log(1e-14) / math.log((ev[-1] - ev[0]) / (ev[-1] + ev[0])))) + 10
    cex_floor = float(run_local_update(prob, algo, prob.x_star(), rounds).to_numpy().dist_empirical[-1])
    cex_floor *= ctx.param("cex_factor", 1.0)
    ok = (
        c.status == "certified"
        and c2.status == "certified"
        and lo <= c.lower
        and c.value <= hi
        and c.gap <= 0.10
        and cex_floor <= c2.value
    )
    t4 = _theorem4_rhs(ACCEPT["mu"], ACCEPT["L"], ACCEPT["K"], ACCEPT["gamma"])
    return ctx.decide(
        ok,
        measured={
            "upper": c.value,
            "lower": c.lower,
            "gap": c.gap,
            "solver": c.solver,
            "seconds": c.seconds,
            "ratio_to_8": c.lower / 8.0,
            "theorem4_rhs": t4,
            "ratio_to_theorem4": c.lower / t4,
            "conjecture_2c_rhs": t4 / 4,
            "counterexample_floor": cex_floor,
            "counterexample_certified_upper": c2.value,
            "counterexample_certified_lower": c2.lower,
            "counterexample_lemma5_ratio": 7.7247,
        },
        tolerance={
            "interval": [lo, hi],
            "gap": "≤ 10 % (acceptance), measured ~1e-6",
            "sdp": "upper bound inflated by 1e-5 relative (fedtheory.certify.pep_clients.SDP_MARGIN)",
        },
        counterexample=None,
        notes="The attaining instance is in the certificate (c.instance); its floor is the "
        "driver's ‖x_T − x*‖ after it settles at x*(α,γ,Θ) (‖x_T − x*(α,γ,Θ)‖ ≤ 1e-12).",
    )


# Full tier (36 s): the fast tier certifies lemma-5/certified (κ₀ = 1000, K = 100) and certified-fedprox.
@claim(
    id="localupdate/lemma-5/certified-fast-grid",
    tier="full",
    ref="Lemma 5",
    title="Certified worst floors for κ₀ ∈ {10, 100}, K ∈ {2, 10}, γ = 1/(2L), n = 2: tight, against 8C and 2C",
    statement=r"For $n=2$ quadratic clients ($\mu I\preceq A_i\preceq LI$, $\|c_i-o\|\le C$) and FedAvg with "
    r"$\gamma L=\tfrac12$, at each $(\kappa_0,K)\in\{10,100\}\times\{2,10\}$ the worst floor "
    r"$\sup\|x^*(0,\gamma,\Theta_{1:K})-x^*\|/C$ is attained to $10^{-3}$ by a federation replayed in the driver "
    r"(upper and lower bound agree).",
    kind="certificate",
    controls=[_tighter_than_attained(0.999, "the certified worst floor", "the federation replayed in the driver")],
)
def certified_fast_grid(ctx):
    """Also records, per point, the certified floor against Lemma 5/Theorem 4's 8(√κ₀ − √κ)/(√κ₀ + √κ) and the
    2C conjecture (measured, not asserted: where each holds and by how much it fails)."""
    factor = ctx.param("upper_factor", 1.0)
    rows, ok = [], True
    for kap, K in FAST_GRID:
        c = certify_local_update(
            1.0, kap, K, 0.5 / kap, engine="spectral", pieces=16, probe_starts=2, seed=ctx.seed % (2**31)
        )
        rows.append(_row(c, 1.0, kap, K, 0.5 / kap))
        ok &= _attained(c, factor)
    for r in rows:
        r["holds_8"] = r["upper"] <= r["theorem4_rhs_8"]
        r["holds_2"] = r["upper"] <= r["theorem4_rhs_2"]
    return ctx.decide(ok, measured={"grid": rows}, tolerance={"tightness": TIGHT})


@claim(
    id="localupdate/lemma-5/certified-fedprox",
    ref="Lemma 5",
    title="FedProx (α > 0): the certified worst floor is attained, and the proximal term lowers it",
    statement=r"For $n=2$ quadratic clients with $\kappa_0=10$, $K=4$, $\gamma L=\tfrac12$ and FedProx's $\alpha=L/5$, "
    r"the certified worst floor is attained to $10^{-3}$ and is below FedAvg's ($\alpha=0$).",
    kind="certificate",
    controls=[Control("prox-raises", "the reversed claim: FedProx's worst floor above FedAvg's", {"direction": -1.0})],
)
def certified_fedprox(ctx):
    sign = ctx.param("direction", 1.0)
    L, K, g = 10.0, 4, 0.05
    prox = certify_local_update(
        1.0, L, K, g, alpha=L / 5, engine="spectral", pieces=16, probe_starts=2, seed=ctx.seed % (2**31)
    )
    avg = certify_local_update(1.0, L, K, g, engine="spectral", pieces=16, probe_starts=2, seed=ctx.seed % (2**31))
    ok = _attained(prox) and avg.status == "certified" and sign * (avg.lower - prox.value) > 0
    return ctx.decide(
        ok,
        measured={
            "fedprox_upper": prox.value,
            "fedprox_lower": prox.lower,
            "fedavg_upper": avg.value,
            "fedavg_lower": avg.lower,
        },
        tolerance={"tightness": TIGHT},
    )


@claim(
    id="localupdate/section-4.3/smooth-floor-larger",
    ref="Section 4.3",
    title="Beyond quadratics: explicit smooth strongly convex clients push FedAvg's floor above every quadratic "
    "federation's",
    statement=r"For $n=2$ clients, $\kappa_0=10$, $K\in\{2,4\}$, $\gamma L=\tfrac12$, $\|c_i-o\|\le C$: the worst "
    r"floor over $L$-smooth $\mu$-strongly convex clients is attained to $10^{-3}$ by an explicit federation "
    r"of such clients (interpolating the PEP's worst case) replayed in the driver, and that attained floor "
    r"is at least $1.2$ times the certified upper bound over quadratic clients.",
    kind="certificate",
    controls=[
        Control("factor-2", "the claim that the smooth class doubles the floor", {"factor": 2.0}),
        Control(
            "claimed-too-smooth",
            "the stored clients declared (L/2)-smooth: the replay's class check must reject them",
            {"claimed_L_factor": 0.5},
        ),
    ],
)
def smooth_floor_larger(ctx):
    """Smooth side: the PEP's worst case rebuilt as explicit F_{μ,L} clients
    (:mod:`fedtheory.certify.interpolation`: f_i = μ/2‖x‖² + (ℓ/2‖·‖² □ a convex piecewise-linear function),
    L-smooth and μ-strongly convex by construction whatever the SDP's accuracy), run through ``run_local_update``
    until it settles, divided by the heterogeneity the rebuilt clients really have — a **lower** bound on the smooth
    class's worst floor. Quadratic side: the spectral certificate's **upper** bound over all quadratic federations.
    A lower bound of one class above the upper bound of the other is a rigorous separation. The stored instance
    is replayed from its JSON here: its clients pass the class check (interpolation inequalities of F_{μ,L} on
    random pairs of points), the driver reaches the certificate's value again, and its heterogeneity is C."""
    from fedtheory.algorithms.theta import Theta
    from fedtheory.certify.interpolation import CLASS_RTOL, InterpolatedFederation, replay_floor

    factor = ctx.param("factor", 1.2)
    l_factor = ctx.param("claimed_L_factor", 1.0)
    rows, ok = [], True
    mu, L, g = 1.0, 10.0, 0.05
    for K in (2, 4):
        s = certify_local_update(
            mu, L, K, g, function_class="smooth-strongly-convex", probe_starts=1, seed=ctx.seed % (2**31)
        )
        q = certify_local_update(mu, L, K, g, engine="spectral", pieces=16, probe_starts=2, seed=ctx.seed % (2**31))
        row = {
            "K": K,
            "smooth_upper": s.value,
            "smooth_lower": s.lower,
            "smooth_gap": s.gap,
            "smooth_quadratic_probe_lower": s.details.get("quadratic_lower"),
            "quadratic_upper": q.value,
            "quadratic_lower": q.lower,
            "separation": None if not (s.lower and q.value) else s.lower / q.value,
            "smooth_seconds": round(s.seconds, 2),
            "quadratic_seconds": round(q.seconds, 2),
            "smooth_solver": s.solver,
        }
        inst = s.instance or {}
        explicit = inst.get("problem", {}).get("kind") == "interpolated"
        if explicit:
            fed = InterpolatedFederation.from_json(inst["problem"])
            viol = max(c.class_violation(seed=ctx.seed % (2**31), L=l_factor * c.L) for c in fed.clients)
            out = replay_floor(
                fed,
                Theta.from_json(inst["theta"]),
                inst["alpha"],
                inst["gamma"],
                inst["x0"],
                inst["server"]["lr"],
                rounds=inst["rounds"],
            )
            replayed = out["distance"] / out["heterogeneity"]
            row.update(
                {
                    "replay_class_violation": viol,
                    "replay_floor": replayed,
                    "replay_heterogeneity": out["heterogeneity"],
                    "replay_residual": out["residual"],
                    "instance_dimension": fed.d,
                }
            )
            explicit = (
                viol <= CLASS_RTOL
                and abs(replayed - s.lower) <= 1e-9 * s.lower
                and out["heterogeneity"] <= 1.0 + 1e-9
                and out["residual"] <= 1e-9
            )
        rows.append(row)
        ok &= explicit and _attained(s) and q.status == "certified" and s.lower >= factor * q.value
    return ctx.decide(
        ok,
        measured={"rows": rows},
        tolerance={
            "tightness": TIGHT,
            "class": f"relative violation <= {CLASS_RTOL} "
            "(fedtheory.certify.interpolation.CLASS_RTOL: the evaluation is exact up to rounding, "
            "measured ~1e-15; a planted violation, L/2, gives ~0.8)",
            "replay": "1e-9 relative (same float64 computation, same order)",
        },
        notes="The smooth lower bound is a concrete non-quadratic federation (stored in the "
        "certificate's instance: each client's PEP table, μ, L, p, the start and the rounds), not "
        "the SDP: the separation does not rest on the solver. Its SDP upper bound is reported "
        "beside it (gap ~1e-5: the reporting margin).",
    )


@claim(
    id="localupdate/lemma-5/certified-grid",
    ref="Lemma 5",
    title="Certified worst floor over a grid of κ₀, K, γL (n = 2, 3) against 8C and the 2C conjecture",
    statement=r"For $n=2$ quadratic clients, $\kappa_0\in\{10,100,1000\}$, $K\in\{1,2,5,10,20,50,100\}$, "
    r"$\gamma L\in\{0.1,0.5,0.9\}$, and for $n=3$ at $K\in\{2,10\}$, $\gamma L=\tfrac12$: every certificate "
    r"is reliable and attained to $10^{-2}$.",
    kind="certificate",
    tier="full",
    controls=[_tighter_than_attained(0.99, "the certified worst floor", "the federation replayed in the driver")],
)
def certified_grid(ctx):
    factor = ctx.param("upper_factor", 1.0)
    rows, ok = [], True
    for n in (2, 3):
        for kap in (10.0, 100.0, 1000.0):
            for K in (1, 2, 5, 10, 20, 50, 100):
                for gl in (0.1, 0.5, 0.9):
                    if n == 3 and (K not in (2, 10) or gl != 0.5):  # n = 3: a slice (its probe is 3-d)
                        continue
                    c = certify_local_update(
                        1.0,
                        kap,
                        K,
                        gl / kap,
                        clients=n,
                        engine="spectral",
                        pieces=16,
                        probe_starts=3,
                        seed=ctx.seed % (2**31),
                    )
                    r = _row(c, 1.0, kap, K, gl / kap)
                    r["n"] = n
                    rows.append(r)
                    if c.value is None or c.value < 1e-6:
                        ok &= c.status == "certified"
                        continue
                    ok &= _attained(c, factor, tight=1e-2)
                    # (K = 1 rows: floor 0 exactly; the driver's 1e-16 is rounding, handled above)
    return ctx.decide(ok, measured={"grid": rows}, tolerance={"tightness": 1e-2})


@claim(
    id="localupdate/corollary-1/certified",
    ref="Corollary 1",
    title="Certified ‖x_T − x*‖ after T rounds of FedAvg with server GD (quadratics, n = 2)",
    statement=r"For $n=2$ quadratic clients, $\kappa_0=10$, $K=2$, $\gamma L=\tfrac12$, server GD with $\eta=0.1$, "
    r"$\|x_0-x^*\|\le C$, $T=2$: the certified worst $\|x_T-x^*\|/C$ is attained to $10^{-3}$ by a "
    r"federation and start replayed in the driver.",
    kind="certificate",
    tier="full",
    controls=[
        _tighter_than_attained(0.999, "the certified worst error", "the federation and start replayed in the driver")
    ],
)
def certified_error(ctx):
    factor = ctx.param("upper_factor", 1.0)
    c = certify_local_update(
        1.0,
        10.0,
        2,
        0.05,
        measure="error",
        eta=0.1,
        rounds=2,
        D=1.0,
        pieces=16,
        probe_starts=3,
        seed=ctx.seed % (2**31),
    )
    ok = _attained(c, factor)
    return ctx.decide(
        ok,
        measured={"upper": c.value, "lower": c.lower, "gap": c.gap, "solver": c.solver},
        tolerance={"tightness": TIGHT},
    )


@claim(
    id="localupdate/theorem-5/certified-d1",
    ref="Theorem 5",
    title="d = 1 / commuting clients: the certified worst floor equals Lemma 12's closed form from Theorem 5 (weights "
    "free), is attained at p = ½ where Theorem 5's mean-absolute-deviation form gives it, and the all-dimension "
    "certificate exceeds it",
    statement=r"For two clients in $d=1$ (equivalently commuting $A_i$), $\lambda_i\in[\mu,L]$, $|c_i-o|\le C$, and "
    r"LocalUpdate with $\theta_k\ge0$, $\alpha\ge0$, $\gamma(L+\alpha)<1$: (a) over $\lambda_1,\lambda_2$ and the "
    r"weights $p$, $\sup|x^*(\alpha,\gamma,\Theta)-x^*| = 2C(\sqrt b-\sqrt a)/(\sqrt b+\sqrt a)$ with $[a,b]$ the "
    r"range of $Q_i(\alpha,\gamma,\Theta)$ (Lemma 12 via Theorem 5's equality case), attained in the driver; "
    r"(b) at $p=(\tfrac12,\tfrac12)$ the certified worst floor is attained in the driver to $10^{-6}$ and equals "
    r"Theorem 5's form $2C\pi_1\pi_2|r_1-r_2|/(\pi_1r_1+\pi_2r_2)$ at the attaining $(\lambda_1,\lambda_2)$; "
    r"(c) at $\kappa_0=100$, $K=10$, $\gamma L=\tfrac12$ the all-dimension certificate exceeds (b) by a factor "
    r"$>1.5$.",
    kind="certificate",
    controls=[
        Control(
            "no-dimension-effect",
            "the claim that d ≥ 2 does not raise the worst floor (factor 1.5 → 1/1.5)",
            {"factor": 1 / 1.5, "direction": -1.0},
        ),
        Control(
            "lemma12-0.999",
            "the d = 1 sup equal to 0.999 × Lemma 12's form, false by Theorem 5's "
            "equality case (r supported on {a, b} reaches the form exactly)",
            {"law_factor": 0.999},
        ),
    ],
)
def certified_d1(ctx):
    """Certificates from :func:`fedtheory.certify.commuting.certify_floor_d1`: a branch and bound over
    (λ_1, λ_2) (and the weights) with rigorous box bounds, its best instance replayed through the real driver.
    Grid for (a): κ₀ ∈ {10, 100, 1000}, K ∈ {2, 10, 100}, Θ ∈ {Θ_{1:K}, Θ_K (K ≤ 10)}, α ∈ {0, L/5},
    γ = 1/(2(L + α)); (b) at six of those points in the fast tier, all in the full tier."""
    from fedtheory.algorithms.surrogate import distortion_eigenvalues
    from fedtheory.certify.commuting import certify_floor_d1, lemma12_form, theorem5_form

    factor, direction = ctx.param("factor", 1.5), ctx.param("direction", 1.0)
    law_factor = ctx.param("law_factor", 1.0)
    ok = True
    free_rows, fixed_rows = [], []
    points = []
    for kap in (10.0, 100.0, 1000.0):
        for K in (2, 10, 100):
            for th in ("1:K", "K"):
                if th == "K" and K == 100:  # Θ_K at K = 100: a = (1/2)^99, weights of 1e-15 (no float64 replay)
                    continue
                for al in (0.0, kap / 5):
                    points.append((kap, K, th, al))
    for kap, K, th, al in points:
        g = 0.5 / (kap + al)
        theta = Theta.uniform(K) if th == "1:K" else Theta.last(K)
        law = law_factor * lemma12_form(1.0, kap, g, theta, al)
        c = certify_floor_d1(1.0, kap, K, g, theta=theta, alpha=al, p="free")
        free_rows.append(
            {
                "kappa0": kap,
                "K": K,
                "theta": th,
                "alpha": al,
                "upper": c.value,
                "lower": c.lower,
                "lemma12": law,
                "instance": {"lambdas": c.instance["lambdas"], "p": c.instance["p"]},
            }
        )
        ok &= c.status == "certified" and abs(c.value - law) <= 1e-9 * law and abs(c.lower - law) <= 1e-9 * law
    fixed_points = (
        points
        if ctx.full
        else [pt for pt in points if pt[1] in (2, 10) and pt[3] == 0.0 and pt[0] in (10.0, 100.0)][:6]
    )
    for kap, K, th, al in fixed_points:
        g = 0.5 / (kap + al)
        theta = Theta.uniform(K) if th == "1:K" else Theta.last(K)
        c = certify_floor_d1(1.0, kap, K, g, theta=theta, alpha=al)
        l1, l2 = c.instance["lambdas"]
        mad = theorem5_form(l1, l2, g, theta, al, [0.5, 0.5], 1.0)
        free = lemma12_form(1.0, kap, g, theta, al)
        fixed_rows.append(
            {
                "kappa0": kap,
                "K": K,
                "theta": th,
                "alpha": al,
                "upper": c.value,
                "lower": c.lower,
                "gap": c.gap,
                "theorem5_form": mad,
                "lambdas": [l1, l2],
                "notes": c.notes,
            }
        )
        ok &= (
            c.status == "certified"
            and c.gap <= 1e-6
            and abs(mad - c.lower) <= 1e-9 * max(mad, 1e-300)
            and c.value <= free * (1 + 1e-9)
        )
    # (c) the dimension effect at the original point
    mu, L, K, g = 1.0, 100.0, 10, 0.005
    d1 = certify_floor_d1(mu, L, K, g)
    q = np.asarray(distortion_eigenvalues(np.array([mu, L]), 0.0, g, Theta.uniform(K)))
    a, b = float(q.min()), float(q.max())
    lemma12 = 2 * (math.sqrt(b) - math.sqrt(a)) / (math.sqrt(b) + math.sqrt(a))
    c = certify_local_update(mu, L, K, g, engine="spectral", pieces=16, probe_starts=2, seed=ctx.seed % (2**31))
    ok &= c.status == "certified" and d1.value <= c.value and direction * (c.lower - factor * d1.value) > 0
    return ctx.decide(
        ok,
        measured={
            "weights_free": free_rows,
            "weights_half": fixed_rows,
            "d1_worst_at_original_point": d1.value,
            "lemma12_rhs": lemma12,
            "certified_upper": c.value,
            "certified_lower": c.lower,
            "dimension_factor": c.lower / d1.value,
        },
        tolerance={
            "free": "1e-9 relative: the box bound is exact at (μ, L) (1e-12 rounding margin) "
            "and the driver settles to float64",
            "half": "gap ≤ 1e-6 (branch and bound to 1e-7, driver); Theorem 5's form at the instance within 1e-9",
        },
        notes="The all-dimension certificate cannot be restricted to commuting clients (the SDP is "
        "dimension-free); two commuting clients reduce to d = 1 because coordinate j of the "
        "floor is δ_j(c_1j − c_2j), so it is at most max_j|δ_j|·‖c_1 − c_2‖ (not so for three "
        "or more clients: localupdate/lemma-5/commuting-2c). With the weights free, Lemma 12's "
        "bound is the exact d = 1 worst case; at fixed p = ½ it is not attained (weights_half).",
    )


def _limit_law(kappa0: float, factor: float = 1.0) -> float:
    """C(κ₀ − 1)/(2√κ₀) at C = 1, times a control's ``factor``: the worst floor of two equal-weight clients in the
    limit Kγμ → ∞ (localupdate/lemma-5/corrected-limit proves it), which both lemma-5 law claims hold certificates to.

    >>> _limit_law(100.0)
    4.95
    """
    return factor * (kappa0 - 1) / (2 * math.sqrt(kappa0))


def _two_client_floor(ctx, kappa0: float, K: int, gamma: float):
    """The certified worst floor of two equal-weight clients under FedAvg at μ = 1, L = κ₀ (16 pieces, two probe
    starts, the run's seed): the certificate both lemma-5 law claims compare with :func:`_limit_law`."""
    return certify_local_update(
        1.0, kappa0, K, gamma, engine="spectral", pieces=16, probe_starts=2, seed=ctx.seed % (2**31)
    )


@claim(
    id="localupdate/lemma-5/certified-limit",
    ref="Lemma 5",
    title="Law of the certified constant: as Kγμ → ∞ the worst floor of two equal-weight clients tends to "
    "C(κ₀ − 1)/(2√κ₀)",
    statement=r"For $n=2$, $p=(\tfrac12,\tfrac12)$, quadratic clients with $\kappa_0=L/\mu$ and FedAvg with "
    r"$K\gamma\mu\ge50$ (so $(1-\gamma\mu)^K\le e^{-50}$ and $b(\lambda)=1/\gamma$ to float64 precision): "
    r"$\sup\|x^*(0,\gamma,\Theta_{1:K})-x^*\| = C\,\frac{\kappa_0-1}{2\sqrt{\kappa_0}}$ to $2\cdot10^{-5}$, "
    r"for $\kappa_0\in\{10,100\}$.",
    kind="certificate",
    controls=[Control("law-0.99", "the law with constant 0.99", {"law_factor": 0.99})],
)
def certified_limit(ctx):
    """In the limit every client's message is (x − c_i)/γ, so x̄ is the plain mean of the c_i and the floor is
    sup C‖(A_1 + A_2)⁻¹(A_1 − A_2)‖; the certificates (upper and replayed lower bound) pin it to the closed form,
    which localupdate/lemma-5/corrected-limit proves (fedtheory.symbolic.averaging_floor). This claim is the
    certificates' consistency with the proved value; for finite K the corrected bound is localupdate/lemma-5/corrected."""
    factor = ctx.param("law_factor", 1.0)
    rows, ok = [], True
    for kap, K in ((10.0, 1000), (100.0, 10000)):
        gamma = 0.5 / kap
        law = _limit_law(kap, factor)
        c = _two_client_floor(ctx, kap, K, gamma)
        rows.append({"kappa0": kap, "K": K, "K_gamma_mu": K * gamma, "law": law, "upper": c.value, "lower": c.lower})
        ok &= c.status == "certified" and abs(c.value - law) <= 2e-5 * law and abs(c.lower - law) <= 2e-5 * law
    return ctx.decide(
        ok, measured={"rows": rows}, tolerance={"relative": 2e-5, "why": "SDP margin 1e-5; (1 − γμ)^K ≤ e^-50"}
    )


#: the largest Kγμ of localupdate/lemma-5/corrected's random points (see its docstring)
_LEMMA5_KGM_MAX = 12.0


# Full tier (45 s of certificates): the fast tier keeps the proved limit (lemma-5/corrected-limit), the law of the
# constant (lemma-5/certified-limit) and the certified points (lemma-5/certified, certified-fedprox).
@claim(
    id="localupdate/lemma-5/corrected",
    tier="full",
    ref="Lemma 5",
    title="A corrected Lemma 5 for two equal-weight clients: ‖x*(0,γ,Θ_{1:K}) − x*‖ ≤ C(κ₀ − 1)/(2√κ₀)",
    statement=r"For $n=2$ quadratic clients with $p=(\tfrac12,\tfrac12)$, $\mu I\preceq A_i\preceq LI$, $\|c_i-o\|\le C$, in "
    r"any dimension, and FedAvg ($\Theta_{1:K}$, $\alpha=0$) with $0<\gamma<1/L$: "
    r"$\|x^*(0,\gamma,\Theta_{1:K})-x^*\|\le C\,\frac{\kappa_0-1}{2\sqrt{\kappa_0}}$, $\kappa_0=L/\mu$, "
    r"with equality in the limit $K\gamma\mu\to\infty$.",
    kind="certificate",
    controls=[Control("law-0.9", "the bound with constant 0.9 (the limit attains 1)", {"law_factor": 0.9})],
)
def corrected_lemma_5(ctx):
    """Each certificate is the exact worst case over every federation at its (κ₀, K, γ) (upper bound from the SDP,
    lower bound replayed in the driver), so the bound is checked over the whole class at each sampled point; the
    points (κ₀, K, γL) are drawn at random (log-uniform κ₀ ∈ [3, 10³], K ∈ [1, 200] with Kγμ ≤ 12, γL ∈ (0, 1)),
    plus a saturated point where the bound is attained. Proved in the limit Kγμ → ∞
    (localupdate/lemma-5/corrected-limit, where it is tight). For finite K the certified floor follows the
    closed-form law Φ(κ₀, κ) (localupdate/floor-law/*), which is decreasing in κ with Φ(κ₀, 1) = (κ₀ − 1)/(2√κ₀)
    (sympy); that no federation beats the law is measured by certificates, not proved, so for finite K this
    remains a conjecture the certificates support.

    The random points keep Kγμ ≤ 12. Between about 12 and 50, b(λ) = (1 − (1 − γλ)^K)/γ is within a factor
    e^{−Kγμ} of the constant 1/γ but not equal to it in float64, and the spectral program, which scales that
    deviation to order one, is nearly degenerate: Clarabel is no longer "optimal" (Kγμ = 10 already needs the SCS
    cross-check, ~90 s on a loaded machine) and at Kγμ = 19 and 26 one certificate ran past 15 minutes (seed 7
    drew κ₀ = 3.91, K = 136, γL = 0.76, Kγμ = 26: the claim timed out at 600 s). That regime is the approach to the limit Kγμ → ∞, which
    localupdate/lemma-5/corrected-limit proves and the saturated point (Kγμ = 50, where b is constant in float64)
    certifies on every run."""
    factor = ctx.param("law_factor", 1.0)
    rng = ctx.rng
    points = [(100.0, 10000, 0.5)]
    for _ in range(3 if not ctx.full else 30):
        kap, gl = float(10 ** rng.uniform(0.5, 3.0)), float(rng.uniform(0.02, 0.99))
        # K log-uniform up to 200, and Kγμ = K·γL/κ₀ ≤ _LEMMA5_KGM_MAX (the docstring says why)
        k_max = max(1.0, min(200.0, math.floor(_LEMMA5_KGM_MAX * kap / gl)))
        points.append((kap, int(round(10 ** rng.uniform(0, np.log10(k_max)))), gl))
    rows, ok = [], True
    for kap, K, gl in points:
        law = _limit_law(kap, factor)
        c = _two_client_floor(ctx, kap, K, gl / kap)
        rows.append(
            {"kappa0": kap, "K": K, "gammaL": gl, "upper": c.value, "lower": c.lower, "law": law, "status": c.status}
        )
        ok &= c.status == "certified" and c.lower <= law * (1 + 1e-9) and c.value <= law * (1 + 2e-5)
    worst = max(r["lower"] / r["law"] for r in rows)
    return ctx.decide(
        ok,
        measured={"points": rows, "worst_lower_over_law": worst},
        tolerance={"upper": "law·(1 + 2e-5): the SDP margin", "lower": "law·(1 + 1e-9)"},
        notes="Lemma 5's 8C(√b − √a)/(√b + √a) and Theorem 4's 8C(√κ₀ − √κ)/(√κ₀ + √κ) fail "
        "(localupdate/lemma-5, theorem-4); this constant depends on κ₀ only and grows like √κ₀/2, "
        "which the Lemma 5 counterexamples' growth with L/μ already showed to be unavoidable.",
    )


def _one_shot_floor(prob) -> float:
    """‖Σ p_i c_i − x*‖: FedAvg's fixed point in the limit Kγμ → ∞ (every message (x − c_i)/γ)."""
    return float(np.linalg.norm(prob.p @ prob.c - prob.x_star()))


@claim(
    id="localupdate/lemma-5/corrected-limit",
    ref="Lemma 5",
    title="Proved: with exact local solves (Kγμ → ∞), two clients' floor is ≤ C√(p(1−p))(κ₀ − 1)/√κ₀, tight in "
    "every d ≥ 2 at p = ½ and whenever |1 − 2p|√κ₀ ≤ (κ₀ − 1)√(p(1 − p))",
    statement=r"For two clients $f_i=\tfrac12(x-c_i)^\top A_i(x-c_i)$ with weights $(p,1-p)$, $\mu I\preceq A_i\preceq LI$, "
    r"$\|c_i-o\|\le C$, in any dimension, FedAvg's fixed point in the limit of exact local solves, "
    r"$\bar x=pc_1+(1-p)c_2$, satisfies $\|\bar x-x^*\|\le C\sqrt{p(1-p)}\,(\kappa_0-1)/\sqrt{\kappa_0}$, "
    r"$\kappa_0=L/\mu$, with equality in every $d\ge2$ exactly when $|1-2p|\sqrt{\kappa_0}\le(\kappa_0-1)\sqrt{p(1-p)}$ "
    r"(so at $p=\tfrac12$; attained by $A_i$ with spectrum $\{\mu,L\}$); with commuting $A_i$ the worst "
    r"case at $p=\tfrac12$ is $C(\kappa_0-1)/(\kappa_0+1)$.",
    kind="symbolic",
    controls=[
        Control(
            "commuting-value",
            "the commuting-class value 2C√(p(1−p))(κ₀−1)/(κ₀+1) as the bound: false "
            "in d ≥ 2, since step 8's instance reaches C(κ₀−1)/(2√κ₀) > C(κ₀−1)/(κ₀+1)",
            {"law": "commuting"},
        )
    ],
)
def corrected_limit(ctx):
    """The proof is in :mod:`fedtheory.symbolic.averaging_floor` (steps 1–8; the algebra is checked exactly by
    sympy). Numerically, against the same bound: (a) step 8's instance reaches it (exactly in the one-shot average,
    at p ∈ {½, 0.3, 0.1} where the equality condition holds, and in the real driver at Kγμ = 50); (b) random
    federations (d ∈ {2, 3, 5}, random p, spectra, rotations, centres) and (c) an adversarial probe stay below it;
    (d) the spectral certificate at Kγμ = 50 (the whole class) meets it at p = ¼, κ₀ = 10 (attained) and stays
    strictly below it at p = ¼, κ₀ = 2 (where the equality condition fails). Any failure refutes the claim."""
    from fedtheory.certify.federated_pep import _build, _instance, _replay_floor
    from fedtheory.certify.params import Custom
    from fedtheory.certify.probe import probe
    from fedtheory.symbolic.averaging_floor import attained as equality_holds
    from fedtheory.symbolic.averaging_floor import (
        averaging_floor_bound,
        commuting_averaging_floor,
        proof_steps,
        worst_instance,
    )

    law = ctx.param("law", "star")

    def bound(mu, L, p, C):
        if law == "commuting":
            return 2 * math.sqrt(p * (1 - p)) * commuting_averaging_floor(mu, L, C)
        return averaging_floor_bound(mu, L, p, C)

    steps = proof_steps()
    ok = all(steps.values())
    # (a) attainment, one-shot and in the driver
    attained = []
    for kap in (2.0, 10.0, 100.0, 1000.0):
        for d in (2, 3):
            for p in (0.5, 0.3, 0.1):
                if not equality_holds(1.0, kap, p):
                    continue
                prob = worst_instance(1.0, kap, 1.0, d, p)
                r = _one_shot_floor(prob) / bound(1.0, kap, p, 1.0)
                attained.append({"kappa0": kap, "d": d, "p": p, "ratio": r})
                ok &= abs(r - 1) <= 1e-10
    kap, K = 100.0, 10000
    prob = worst_instance(1.0, kap, 1.0, 2)
    drv, settle, _ = _replay_floor(prob, 1.0, kap, 0.5 / kap, Theta.uniform(K), 0.0, "C")
    driver_ratio = drv / bound(1.0, kap, 0.5, 1.0)
    ok &= abs(driver_ratio - 1) <= 1e-9
    # (b) random federations: o = 0, ‖c_i‖ ≤ C = 1
    rng = ctx.rng
    worst_random = 0.0
    for _ in range(600 if ctx.full else 200):
        d = int(rng.choice([2, 3, 5]))
        kap = float(10 ** rng.uniform(0.1, 3))
        p = float(rng.uniform(0.05, 0.95))
        lam, V, A, c, _ = _instance(rng.normal(size=2 * (d + d * d) + 2 * d), 2, d, 1.0, kap)
        c = c * rng.uniform(0, 1, size=(2, 1))
        fed = _build(lam, V, A, c, [p, 1 - p])
        worst_random = max(worst_random, _one_shot_floor(fed) / bound(1.0, kap, p, 1.0))
    ok &= worst_random <= 1 + 1e-12
    # (c) adversarial probe over (spectra, rotations, centres) at p ∈ {½, ¼}, κ₀ = 10, d = 2
    probes = {}
    for p in (0.5, 0.25):

        def decode(z, p=p):
            lam, V, A, c, _ = _instance(z, 2, 2, 1.0, 10.0)
            return _build(lam, V, A, c, [p, 1 - p])

        res = probe(
            lambda fed, p=p: _one_shot_floor(fed) / bound(1.0, 10.0, p, 1.0),
            Custom(2 * 6 + 4, decode),
            seed=ctx.seed % (2**31),
            n_random=64,
            n_starts=4,
            maxiter=300,
            method="L-BFGS-B",
        )
        probes[str(p)] = {"worst": res.worst_value, "random_worst": res.random_worst_value, "failed": res.n_failed}
        ok &= res.worst_value <= 1 + 1e-12 and res.n_failed == 0
    # (d) the whole class at p = ¼ through the certificate (Kγμ = 50): attained at κ₀ = 10, not at κ₀ = 2
    certs = {}
    for kap, K in ((10.0, 1000), (2.0, 200)):
        cert = certify_local_update(
            1.0,
            kap,
            K,
            0.5 / kap,
            p=[0.25, 0.75],
            engine="spectral",
            pieces=16,
            probe_starts=2,
            seed=ctx.seed % (2**31),
        )
        b = bound(1.0, kap, 0.25, 1.0)
        row = {
            "upper": cert.value,
            "lower": cert.lower,
            "status": cert.status,
            "upper_over_bound": None if cert.value is None else cert.value / b,
            "lower_over_bound": None if cert.lower is None else cert.lower / b,
        }
        certs[f"kappa0={kap:g}"] = row
        ok &= cert.status == "certified" and row["upper_over_bound"] <= 1 + 2e-5
        if equality_holds(1.0, kap, 0.25):
            ok &= row["lower_over_bound"] >= 1 - 1e-6
        else:
            ok &= row["upper_over_bound"] < 1 - 1e-3
    measured = {
        "proof_steps": steps,
        "attained": attained,
        "driver_ratio_kappa100_K10000": driver_ratio,
        "driver_distance_to_fixed_point": settle,
        "random_worst_ratio": worst_random,
        "probe": probes,
        "certificates_p_quarter": certs,
    }
    tol = {
        "attainment": "1e-10 (one-shot, κ₀ ≤ 10³: rounding ~1e-13); driver 1e-9 ((1 − γμ)^K ≤ e^-50)",
        "random/probe": "ratio ≤ 1 + 1e-12",
        "certificate": "upper ≤ bound·(1 + 2e-5) (SDP margin 1e-5); attained: lower ≥ bound·(1 − 1e-6) "
        "(e^-50 limit error, driver settling); not attained: upper < bound·(1 − 1e-3)",
    }
    if not ok:
        return ctx.refuted(measured=measured, tolerance=tol)
    return ctx.proved(
        "sympy: steps 1, 2 (non-commuting symbols), 4, 6 (polynomial identities) and 7 "
        "(closed form, κ₀ = 1 + e) of fedtheory.symbolic.averaging_floor expand to 0; steps 3, 5 are "
        "‖P − cI‖ ≤ r and the triangle inequality; step 8 attains the bound",
        measured=measured,
        tolerance=tol,
        notes="This corrects Lemma 5 in the exact-local-solve limit: the paper's 8C(√b − √a)/(√b + √a) is "
        "not a valid bound there (localupdate/lemma-5) and the commuting value C(κ₀−1)/(κ₀+1) "
        "understates the worst case by 2√κ₀/(κ₀+1). For finite K the same constant is supported "
        "by certificates (localupdate/lemma-5/corrected) but not proved. Where the equality condition "
        "fails (p far from ½ at small κ₀) (★) is valid but not tight (certificates_p_quarter).",
    )
