"""The law of the certified accuracy floor (issue 13) for Charles & Konečný, *Convergence and Accuracy Trade-Offs in
Federated Learning and Meta-Learning* (arXiv:2103.05032): FedAvg (Θ_{1:K}, α = 0) on two equal-weight quadratic
clients, μI ⪯ A_i ⪯ LI, ‖c_i − o‖ ≤ C, any dimension.

Law (:mod:`fedtheory.analysis.floor_law`): sup‖x*(0, γ, Θ_{1:K}) − x*‖/C = Φ(κ₀, κ) with κ₀ = L/μ,
κ = (1 − (1 − γL)^K)/(1 − (1 − γμ)^K) (eq. 11) and Φ(κ₀, κ) = max_t [h_{κ₀}(t) − h_κ(t)], h_k(t) = (k − 1)t/(1 + kt²),
the maximizer t² the positive root of a cubic. The worst case is a d = 2 pair with both spectra {μ, L} and
eigenbases at angle 2·atan t. Sympy proves the reduction and the limits; certificates (upper bound over every
dimension and spectrum, lower bound replayed) pin the worst floor to Φ.

Measured (seed 0 of the check runs, pieces = 16): on the 45-point grid κ₀ ∈ {3, 10, 100, 1000}, K ∈ {2, 5, 10, 100},
γL ∈ {0.1, 0.5, 0.9} with Kγμ ≤ 5, the certified upper bound is within [0.946, 1.28]·10⁻⁵ relative above Φ (the
reporting margin 10⁻⁵ plus the SDP's ±3·10⁻⁶) and the replayed instance within 5·10⁻¹² of Φ; the law's own d = 2
pair reaches Φ to 10⁻¹². Small steps: at κ₀ = 10, K = 5 the relative error of (K − 1)γD₁ is 4.2·10⁻³, 2.1·10⁻³,
1.0·10⁻³ at (K − 1)γL = 0.04, 0.02, 0.01. What is not proved: that no pair in any dimension beats the family
(the certificates measure it; a proof would bound ‖G(b(A₁), b(A₂)) − G(A₁, A₂)‖ over all admissible pairs).
"""

from __future__ import annotations

import math


from fedtheory.algorithms.surrogate import minimizer_distance
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.floor_law import floor_law, small_step_coefficient, worst_pair
from fedtheory.certify.federated_pep import certify_local_update, floor_d1
from fedtheory.claims.core import Control, claim

#: upper bound vs law: the certificate's reporting margin 1e-5 (SDP_MARGIN) plus the solver's error, measured
#: within 2.8e-6 relative (above) and 5.4e-7 (below) of the law on the 45-point grid of localupdate/floor-law/grid
UPPER_TOL = 2e-5
#: the law's own pair, solved by the library's surrogate minimizer, vs the law (float64 linear solves in d = 2)
PAIR_TOL = 1e-9
#: the fixed point in the middle regime where every claim must be sharp (the certified-fast-grid point)
ANCHOR = (100.0, 10, 0.5)


def _check_point(kap, K, gl, seed, law_fn):
    """One certificate against the law: (ok, row). ok: certified, upper ≤ law·(1 + UPPER_TOL), the certificate's
    replayed instance ≤ law·(1 + PAIR_TOL) and the law's own pair reaches law to PAIR_TOL."""
    g = gl / kap
    law = law_fn(kap, K, g)
    c = certify_local_update(1.0, kap, K, g, engine="spectral", pieces=16, probe_starts=2, seed=seed)
    pair = minimizer_distance(worst_pair(1.0, kap, K, g), 0.0, g, Theta.uniform(K))
    ok = (
        c.status == "certified"
        and c.value <= law * (1 + UPPER_TOL)
        and c.lower <= law * (1 + PAIR_TOL)
        and abs(pair - law) <= PAIR_TOL * law
    )
    row = {
        "kappa0": kap,
        "K": K,
        "gammaL": gl,
        "K_gamma_mu": K * g,
        "law": law,
        "upper": c.value,
        "lower": c.lower,
        "law_pair": pair,
        "upper_rel": (c.value - law) / law if law else None,
        "lower_rel": (c.lower - law) / law if law else None,
        "seconds": round(c.seconds, 2),
    }
    return ok, row


def _max_rel(rows, key):
    """Largest |relative deviation| over the rows where the law is non-zero (a control's law may be 0)."""
    vals = [abs(r[key]) for r in rows if r[key] is not None]
    return max(vals) if vals else None


def _against_law(ctx, points, law_fn):
    """Every point's certificate against the law (:func:`_check_point`), decided together."""
    rows, ok = [], True
    for kap, K, gl in points:
        good, row = _check_point(kap, K, gl, ctx.seed % (2**31), law_fn)
        ok &= good
        rows.append(row)
    return ctx.decide(
        ok,
        measured={
            "points": rows,
            "max_upper_rel": _max_rel(rows, "upper_rel"),
            "max_lower_rel": _max_rel(rows, "lower_rel"),
        },
        tolerance={
            "upper": f"law·(1 + {UPPER_TOL}): SDP_MARGIN 1e-5 + solver error (≤ 2.8e-6 measured)",
            "lower": f"law pair and probe instance within {PAIR_TOL} relative",
        },
    )


def _law(ctx):
    """The law a claim checks, through ``ctx.param`` so a control can swap it for a known-false one."""
    which, offset = ctx.param("law", "phi"), ctx.param("K_offset", 0)
    if which == "d1":
        return lambda kap, K, g: floor_d1(1.0, kap, K, g)[0]
    return lambda kap, K, g: floor_law(1.0, kap, K + offset, g) if K + offset >= 1 else 0.0


@claim(
    id="localupdate/floor-law/reduction",
    ref="Lemma 5",
    title="Floor law, reduction: two clients with spectra {μ, L} at angle 2φ have floor max(h_{κ₀}(t) − h_κ(t), "
    "h_{κ₀}(1/t) − h_κ(1/t)), t = tan φ, and the sup over φ is Φ(κ₀, κ) at the root of a cubic",
    statement=r"For $A_{1,2}=R(\pm\phi)\,\mathrm{diag}(\mu,L)\,R(\pm\phi)^\top$, $B_i=b(A_i)$ with $b$ increasing, "
    r"$\kappa_0=L/\mu$, $\kappa=b(L)/b(\mu)$, $t=\tan\phi$: $G(B_1,B_2)-G(A_1,A_2)$ with "
    r"$G(X_1,X_2)=(X_1+X_2)^{-1}(X_1-X_2)$ is anti-diagonal with entries $h_{\kappa_0}(t)-h_\kappa(t)$ and "
    r"$h_{\kappa_0}(1/t)-h_\kappa(1/t)$, $h_k(t)=(k-1)t/(1+kt^2)$; $\partial_k h_k(t)=t(1+t^2)/(1+kt^2)^2>0$; "
    r"$h_{\kappa_0}(t)-h_\kappa(t)=(\kappa_0-\kappa)\sqrt u(1+u)/((1+\kappa u)(1+\kappa_0u))$, $u=t^2$, whose "
    r"stationary points are the roots of $\kappa\kappa_0u^3+(3\kappa\kappa_0-\kappa-\kappa_0)u^2+"
    r"(\kappa+\kappa_0-3)u-1$.",
    kind="symbolic",
)
def reduction(ctx):
    import sympy as sp

    phi, a, c, t, u, k, k0 = sp.symbols("phi a c t u kappa kappa0", positive=True)

    def R(x):
        return sp.Matrix([[sp.cos(x), -sp.sin(x)], [sp.sin(x), sp.cos(x)]])

    def G(lo, hi):
        X1 = R(phi) * sp.diag(lo, hi) * R(phi).T
        X2 = R(-phi) * sp.diag(lo, hi) * R(-phi).T
        return (X1 + X2).inv() * (X1 - X2)

    def h(kk, tt):
        return (kk - 1) * tt / (1 + kk * tt**2)

    # a, c: the eigenvalues of A (μ, κ₀μ) or of B (b(μ), κ b(μ)); G is scale-free, so only the ratio enters
    diff = (G(a, k * a) - G(c, k0 * c)).subs(phi, sp.atan(t))
    target = sp.Matrix([[0, h(k0, t) - h(k, t)], [h(k0, 1 / t) - h(k, 1 / t), 0]])
    zero = sp.simplify(diff - target)
    deriv = sp.simplify(sp.diff(h(k, t), k) - t * (1 + t**2) / (1 + k * t**2) ** 2)
    factored = sp.simplify(
        (h(k0, sp.sqrt(u)) - h(k, sp.sqrt(u))) - (k0 - k) * sp.sqrt(u) * (1 + u) / ((1 + k * u) * (1 + k0 * u))
    )
    F = sp.sqrt(u) * (1 + u) / ((1 + k * u) * (1 + k0 * u))
    stationary = sp.numer(sp.together(sp.diff(sp.log(F), u)))
    cubic = k * k0 * u**3 + (3 * k * k0 - k - k0) * u**2 + (k + k0 - 3) * u - 1
    ratio = sp.simplify(stationary / cubic)
    ok = zero == sp.zeros(2, 2) and deriv == 0 and factored == 0 and ratio.is_number and ratio != 0
    if not ok:
        return ctx.refuted(
            measured={"residual": str(zero), "deriv": str(deriv), "factored": str(factored), "ratio": str(ratio)}
        )
    return ctx.proved(
        "sympy: simplify(G(B) − G(A) − antidiag(h_κ₀(t) − h_κ(t), h_κ₀(1/t) − h_κ(1/t))) = 0 at "
        "φ = atan t; ∂_k h_k = t(1 + t²)/(1 + kt²)²; the factored form; d/du log F ∝ the cubic",
        measured={"cubic": str(cubic), "stationary_over_cubic": str(ratio)},
        notes="So the norm of the anti-diagonal matrix is the larger entry; φ → π/2 − φ swaps them "
        "(t → 1/t), and the sup over φ is max_t (h_κ₀ − h_κ)(t) = Φ(κ₀, κ) ≥ 0 (κ ≤ κ₀). The cubic "
        "has one sign change (leading +, 3κκ₀ − κ − κ₀ > 0, constant −1), hence one positive "
        "root. That the family is the worst case over all dimensions and spectra is measured by "
        "the certificates (localupdate/floor-law/certified), not proved here.",
    )


@claim(
    id="localupdate/floor-law/limits",
    ref="Lemma 5",
    title="Floor law, limits: Φ(κ₀, 1) = (κ₀ − 1)/(2√κ₀), and Δ/C = (K − 1)γ·κ₀(L − μ)M(κ₀)/2 + O(γ²) as γ → 0",
    statement=r"$\Phi(\kappa_0,1)=(\kappa_0-1)/(2\sqrt{\kappa_0})$ (the cubic factors as $(u+1)^2(\kappa_0u-1)$); "
    r"$\partial_\kappa\Phi(\kappa_0,\kappa)|_{\kappa=\kappa_0}=-M(\kappa_0)$ with "
    r"$M(\kappa_0)=\sqrt v(1+v)/(1+\kappa_0v)^2$, $v$ the positive root of $\kappa_0v^2+3(\kappa_0-1)v-1$ "
    r"(the cubic at $\kappa=\kappa_0$ is $(1+\kappa_0u)(\kappa_0u^2+3(\kappa_0-1)u-1)$); and "
    r"$\kappa=\frac{1-(1-\gamma L)^K}{1-(1-\gamma\mu)^K}=\kappa_0\bigl(1-\tfrac{(K-1)\gamma(L-\mu)}{2}\bigr)+O(\gamma^2)$, "
    r"so $\Delta/C=(K-1)\gamma\,\kappa_0(L-\mu)M(\kappa_0)/2+O(\gamma^2)$.",
    kind="symbolic",
)
def limits(ctx):
    import sympy as sp

    u, k0, K, g, mu, L = sp.symbols("u kappa0 K gamma mu L", positive=True)

    def cubic(k):
        return k * k0 * u**3 + (3 * k * k0 - k - k0) * u**2 + (k + k0 - 3) * u - 1

    def F(k):
        return (k0 - k) * sp.sqrt(u) * (1 + u) / ((1 + k * u) * (1 + k0 * u))

    at1 = sp.expand(cubic(1) - (u + 1) ** 2 * (k0 * u - 1))
    limit_value = sp.simplify(F(1).subs(u, 1 / k0) - (k0 - 1) / (2 * sp.sqrt(k0)))
    at_k0 = sp.expand(cubic(k0) - (1 + k0 * u) * (k0 * u**2 + 3 * (k0 - 1) * u - 1))
    # ∂_κ F at κ = κ₀ (F vanishes there, so the envelope theorem gives ∂_κΦ = ∂_κF at the maximizer)
    dF = sp.simplify(
        sp.diff(F(sp.Symbol("k")), sp.Symbol("k")).subs(sp.Symbol("k"), k0) + sp.sqrt(u) * (1 + u) / (1 + k0 * u) ** 2
    )
    # κ's expansion in γ at fixed integer K: symbolic K through the binomial series of (1 − γλ)^K
    kap = (1 - (1 - g * L) ** K) / (1 - (1 - g * mu) ** K)
    series = sp.series(kap, g, 0, 2).removeO()
    first = sp.simplify(series - (L / mu) * (1 - (K - 1) * g * (L - mu) / 2))
    ok = at1 == 0 and limit_value == 0 and at_k0 == 0 and dF == 0 and first == 0
    if not ok:
        return ctx.refuted(
            measured={
                "at1": str(at1),
                "limit": str(limit_value),
                "at_k0": str(at_k0),
                "dF": str(dF),
                "series": str(first),
            }
        )
    return ctx.proved(
        "sympy: cubic(κ = 1) = (u + 1)²(κ₀u − 1) and F(1) at u = 1/κ₀ = (κ₀ − 1)/(2√κ₀); cubic(κ = κ₀) "
        "factors; ∂_κF|κ₀ = −√u(1 + u)/(1 + κ₀u)²; series of κ in γ to first order",
        measured={"kappa_series": str(sp.simplify(series))},
        notes="The limit κ → 1 is Kγμ → ∞ (the lead's localupdate/lemma-5/certified-limit proves the "
        "certified side); M(κ₀)'s maximizer v = 2/(√(9(κ₀ − 1)² + 4κ₀) + 3(κ₀ − 1)) is the positive "
        "root of the quadratic factor. For large κ₀, D₁ ≈ 9κ₀(L − μ)/(32√(3κ₀)).",
    )


@claim(
    id="localupdate/floor-law/certified",
    ref="Lemma 5",
    title="Floor law against certificates: the certified worst floor equals Φ(κ₀, κ) at random (κ₀, K, γL)",
    statement=r"For $n=2$ quadratic clients ($\mu I\preceq A_i\preceq LI$, $\|c_i-o\|\le C$, any dimension, "
    r"$p=(\tfrac12,\tfrac12)$) and FedAvg ($\Theta_{1:K}$, $\alpha=0$, $0<\gamma<1/L$): "
    r"$\sup\|x^*(0,\gamma,\Theta_{1:K})-x^*\|/C=\Phi(\kappa_0,\kappa)$, checked at $(\kappa_0,K,\gamma L)="
    r"(100,10,\tfrac12)$ and two random points ($\kappa_0\in[3,10^3]$ log-uniform, $K\in[2,50]$, "
    r"$\gamma L\in[0.05,0.95]$, $K\gamma\mu\le3$).",
    kind="certificate",
    controls=[
        Control(
            "K-off-by-one",
            "the law at K − 1 local steps: Φ is strictly decreasing in κ and κ strictly "
            "decreasing in K (so the law at K − 1 is strictly below the attained Φ)",
            {"K_offset": -1},
        ),
        Control(
            "commuting",
            "the d = 1 (commuting) worst case, known below the all-dimension floor at "
            "(100, 10, ½) (localupdate/theorem-5/certified-d1: factor > 1.5)",
            {"law": "d1"},
        ),
    ],
)
def certified(ctx):
    """Upper side: the certificate's SDP bound (over every dimension and spectrum) ≤ law·(1 + 2e-5); lower side:
    the law's own pair (:func:`~fedtheory.analysis.floor_law.worst_pair`) reaches the law, and the certificate's
    probe instance does not exceed it."""
    law_fn = _law(ctx)
    rng = ctx.rng
    points = [ANCHOR]
    while len(points) < (3 if not ctx.full else 12):
        kap = float(10 ** rng.uniform(math.log10(3), 3))
        K = int(round(10 ** rng.uniform(math.log10(2), math.log10(50))))
        gl = float(rng.uniform(0.05, 0.95))
        if K * gl / kap <= 3:  # Kγμ > 3: κ ≈ 1, the limit regime (certified-limit), slow for the SDP
            points.append((kap, K, gl))
    return _against_law(ctx, points, law_fn)


# Full tier (27 s): the fast tier keeps the law's symbolic small-step limit (floor-law/limits).
@claim(
    id="localupdate/floor-law/small-step",
    tier="full",
    ref="Lemma 5",
    title="Floor law, small steps: the certified floor over (K − 1)γ·D₁(μ, L) tends to 1, error linear in γ",
    statement=r"For $n=2$ quadratic clients, $\kappa_0=10$, $K=5$: with $D_1=\kappa_0(L-\mu)M(\kappa_0)/2$, the "
    r"certified worst floor $\Delta$ satisfies $|\Delta/((K-1)\gamma D_1C)-1|=O((K-1)\gamma L)$: at "
    r"$(K-1)\gamma L\in\{0.04,0.02,0.01\}$ each halving of $\gamma$ halves the relative error "
    r"(ratio in $[0.4,0.6]$) and the last is below $0.05$.",
    kind="certificate",
    controls=[
        Control(
            "K-not-K-1",
            "the coefficient with K in place of K − 1: at K = 1 the floor is 0 while KγD₁ "
            "is not, so the ratio tends to (K − 1)/K = 0.8, not 1",
            {"steps_offset": 1},
        )
    ],
)
def small_step(ctx):
    kap, K = 10.0, 5
    off = ctx.param("steps_offset", 0)
    D1 = small_step_coefficient(1.0, kap)
    rows = []
    for s in (0.04, 0.02, 0.01):
        g = s / ((K - 1) * kap)
        c = certify_local_update(1.0, kap, K, g, engine="spectral", pieces=16, probe_starts=2, seed=ctx.seed % (2**31))
        pred = (K - 1 + off) * g * D1
        rows.append(
            {
                "K_minus_1_gammaL": s,
                "upper": c.value,
                "lower": c.lower,
                "first_order": pred,
                "rel_err_upper": abs(c.value / pred - 1) if c.value else None,
                "rel_err_lower": abs(c.lower / pred - 1),
                "status": c.status,
            }
        )
    e = [r["rel_err_lower"] for r in rows]
    ratios = [e[i + 1] / e[i] for i in range(2)]
    ok = (
        all(
            r["status"] == "certified"
            and r["rel_err_upper"] is not None
            and abs(r["upper"] - r["lower"]) <= UPPER_TOL * r["upper"]
            for r in rows
        )
        and all(0.4 <= q <= 0.6 for q in ratios)
        and e[-1] < 0.05
    )
    return ctx.decide(
        ok,
        measured={"rows": rows, "D1": D1, "halving_ratios": ratios},
        tolerance={
            "halving": "[0.4, 0.6]: first-order error halves with γ",
            "certificate": f"upper and lower within {UPPER_TOL}",
        },
    )


@claim(
    id="localupdate/floor-law/grid",
    ref="Lemma 5",
    title="Floor law against certificates on the grid κ₀ ∈ {3, 10, 100, 1000}, K ∈ {2, 5, 10, 100}, γL ∈ {0.1, 0.5, 0.9}",
    statement=r"At every grid point with $K\gamma\mu\le 5$, the certified worst floor (upper bound and replayed "
    r"instance) equals $\Phi(\kappa_0,\kappa)$ to $2\cdot10^{-5}$ and the law's pair reaches it.",
    kind="certificate",
    tier="full",
    controls=[
        Control("K-off-by-one", "the law at K − 1 local steps (strictly below the attained Φ)", {"K_offset": -1})
    ],
)
def grid(ctx):
    """Points with Kγμ > 5 (κ within e⁻⁵ of 1) are the limit regime, checked by localupdate/lemma-5/certified-limit;
    there the SDP is slow (one point took 855 s on a shared core)."""
    points = [
        (kap, K, gl)
        for kap in (3.0, 10.0, 100.0, 1000.0)
        for K in (2, 5, 10, 100)
        for gl in (0.1, 0.5, 0.9)
        if K * gl / kap <= 5
    ]
    return _against_law(ctx, points, _law(ctx))
