"""Charles & Konečný, arXiv:2103.05032: the statements the text makes about Figures 1–5 and 7–10, checked on
the data of figures/localupdate.py (the network-training Figures 6 and 11–13: training_figures.py).
"""

from __future__ import annotations

import math

import numpy as np

from fedtheory.algorithms.surrogate import kappa_bound_uniform
from fedtheory.analysis.rates import table2_rate
from fedtheory.claims.core import Control, claim
from fedtheory.claims.figures import distance_to_curve as _distance_to_curve
from fedtheory.claims.figures import series_by_label as _series_by_label
from fedtheory.claims.figures import xy as _xy
from fedtheory.symbolic import tradeoff as symt

from ._common import _PROOFS, _figure_data, _proved_if

# ============================================================================================
# Statements about the figures (computed by figures/localupdate.py's data functions)
# ============================================================================================


def _chord_ends(x) -> tuple[int, int]:
    """The chord's end points (the curve's largest and smallest ρ) that :func:`_nonlinearity` measures from."""
    return int(np.argmax(x)), int(np.argmin(x))


def _bent_from_chord(x, y, factor: float, ends: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The curve with each point's vertical offset from the chord (between the points ``ends``, by default
    :func:`_chord_ends`) scaled by ``factor`` (x unchanged, so the chord's ends stay): its :func:`_nonlinearity` is
    exactly ``factor`` times the curve's; ``factor`` 0 puts every point on the chord.

    >>> x, y = np.array([0.0, 0.5, 1.0]), np.array([1.0, 0.25, 0.0])
    >>> round(_nonlinearity(*_bent_from_chord(x, y, 2.0)) / _nonlinearity(x, y), 12)
    2.0
    """
    i, j = ends if ends is not None else _chord_ends(x)
    chord = y[i] + (x - x[i]) * (y[j] - y[i]) / (x[j] - x[i])
    return x, chord + factor * (y - chord)


def _nonlinearity(x, y) -> float:
    """Max distance of the curve from the chord joining its ends, relative to the chord's length."""
    i, j = _chord_ends(x)
    n = np.array([y[j] - y[i], -(x[j] - x[i])])
    length = float(np.hypot(*n))
    return float(np.abs((x - x[i]) * n[0] + (y - y[i]) * n[1]).max() / length**2 * length)


def _figure_1_paths(ctx, series: int):
    """Figure 1's K-path (panel 0: K varied) and γ-path (panel 1: γ varied) for the L of ``series`` (0: L = 5,
    1: L = 50; a control swaps it through the parameter "series"), as ``kx, ky, gx, gy``."""
    panels = _figure_data(1, ctx.seed)["panels"]
    which = ctx.param("series", series)
    return (*_xy(panels[0]["series"][which]), *_xy(panels[1]["series"][which]))


@claim(
    id="localupdate/figure-1/nearly-identical-for-l5",
    ref="Figure 1",
    title="Figure 1: for L = 5, varying K and varying γ give nearly identical curves",
    statement=r"\"When $L=5$, we obtain nearly identical curves\" (Figure 1: $\gamma=0.01$, $K$ varied vs $K=100$, $\gamma$ varied).",
    kind="numeric",
    controls=[
        Control(
            "l50",
            "the same reading for L = 50: false a priori, the γ-path there stops "
            "at ρ = ρ(1/(1 − (1 − μ/L)^100)) ≈ 0.15 (the closed-form γ-limit of "
            "(11)), not ρ ≈ 0",
            {"series": 1},
        )
    ],
)
def fig1_identical(ctx):
    kx, ky, gx, gy = _figure_1_paths(ctx, 0)  # control: L = 50 (series 1)
    gap = float(_distance_to_curve(gx, gy, kx, ky).max())
    overlap = float(_distance_to_curve(kx[kx >= gx.min()], ky[kx >= gx.min()], gx, gy).max())
    ok = max(gap, overlap) <= 0.01 and gx.min() <= 1e-3
    return ctx.decide(
        ok,
        measured={
            "gamma_curve_to_K_curve_max_distance": gap,
            "K_curve_to_gamma_curve_max_distance": overlap,
            "gamma_path_min_rho": float(gx.min()),
        },
        tolerance="'nearly identical' read as: every point within 0.01 of the other curve (1% of the unit "
        "square) in both directions, and both reach ρ ≈ 0 (≤ 1e-3)",
    )


@claim(
    id="localupdate/figure-1/l50-gamma-path-misses-rho-zero",
    ref="Figure 1",
    title="Figure 1: for L = 50, fixing K = 100 and varying γ does not reach ρ ≈ 0 (varying K does)",
    statement=r"\"The curves for $L=50$ are similar, except that when we fix $K$ and vary $\gamma$, we do not reach $\rho\approx0$. "
    r"[...] varying $K$ leads [to] a larger set of attainable $(\rho,\Delta)$.\"",
    kind="numeric",
    controls=[
        Control(
            "l5",
            "the same reading for L = 5: false a priori, there the γ-limit of "
            "(11) is 1/(1 − 0.8^100) = 1 + 2e-10, so the γ-path reaches ρ ≈ 0",
            {"series": 0},
        )
    ],
)
def fig1_l50(ctx):
    kx, ky, gx, gy = _figure_1_paths(ctx, 1)  # control: L = 5 (series 0)
    similar = float(_distance_to_curve(gx, gy, kx, ky).max())
    ok = gx.min() >= 0.05 and kx.min() <= 1e-3 and similar <= 0.01 and kx.min() < gx.min() and kx.max() >= gx.max()
    return ctx.decide(
        ok,
        measured={
            "gamma_path_min_rho": float(gx.min()),
            "K_path_min_rho": float(kx.min()),
            "gamma_points_to_K_curve": similar,
        },
        tolerance="ρ ≈ 0 read as ρ ≤ 1e-3; 'does not reach' as min ρ ≥ 0.05; 'similar' as within 0.01",
        notes="The γ-path's attainable set is a proper subset of the K-path's: same curve, shorter range.",
    )


@claim(
    id="localupdate/figure-1/gamma-limit-vs-k-limit",
    ref="Figure 1",
    title="Figure 1: lim_{γ→1/L} κ(0,γ,Θ_{1:K}) = 1/(1 − (1 − μ/L)^K) > 1, while K → ∞ gives κ → 1",
    statement=r"\"Formally, this is because in (11), $\lim_{\gamma\to L^{-1}}(\kappa)\neq0$. Intuitively, $K\to\infty$ recovers "
    r"one-shot averaging while $\gamma\to L^{-1}$ does not\" — read as: the γ-limit of κ exceeds 1 ($\rho>0$), the "
    r"$K$-limit equals 1 ($\rho=0$).",
    kind="numeric",
    controls=[
        Control(
            "exponent-99",
            "the γ-limit with exponent K − 1 = 99: false a priori (it "
            "differs from the limit at K = 100 by a factor ~(1 − μ/L)^99 "
            "μ/L ≫ 1e-9 at L = 50)",
            {"k_offset": -1},
        )
    ],
)
def fig1_limit(ctx):
    rows = []
    ok = True
    for L in (5.0, 50.0):
        limit = 1 / (1 - (1 - 1 / L) ** (100 + ctx.param("k_offset", 0)))  # control: exponent 99
        near = kappa_bound_uniform(1.0, L, 0.0, (1 - 1e-12) / L, 100)
        far = kappa_bound_uniform(1.0, L, 0.0, 0.01, 10**9)
        rows.append({"L": L, "gamma_limit_closed_form": limit, "gamma_near_1_over_L": near, "K_1e9": far})
        ok &= abs(near / limit - 1) < 1e-9 and limit > 1 and abs(far - 1) < 1e-9
    rho50 = table2_rate(rows[1]["gamma_limit_closed_form"], "gd")
    data_min = float(_xy(_figure_data(1, ctx.seed)["panels"][1]["series"][1])[0].min())
    ok &= abs(data_min - rho50) < 1e-3
    return ctx.decide(
        ok,
        measured={"rows": rows, "L50_rho_limit": rho50, "figure_gamma_path_min_rho": data_min},
        tolerance="closed form vs γ = (1 − 1e-12)/L to 1e-9; figure's minimum within 1e-3 of the limit",
        notes="κ is always ≥ 1; the paper's '≠ 0' means κ ↛ 1 (ρ ↛ 0): at γ = 1/L, φ(L) = L·1/(γL) and "
        "φ(μ) = (1 − (1 − μ/L)^K)/γ.",
    )


@claim(
    id="localupdate/figure-1/closer-to-linear-as-l-decreases",
    ref="Figure 1",
    title="Figure 1: the trade-off is closer to linear for L/μ = 5 than for 50",
    statement=r"\"Notably, the convergence-accuracy trade-off becomes closer to a linear trade-off as $L/\mu$ decreases.\"",
    kind="numeric",
    controls=[
        Control(
            "bent-curve",
            "the L = 5 curve replaced by L = 50's with its offsets from "
            "its chord doubled (y − chord ↦ 2(y − chord) at each ρ): a curve "
            "exactly twice as far from linear as L = 50's, so 'closer to "
            "linear' is false a priori and the nonlinearity measure must "
            "see the bend",
            {"bend": 2.0},
        )
    ],
)
def fig1_linear(ctx):
    d = _figure_data(1, ctx.seed)
    dev = [_nonlinearity(*_xy(s)) for s in d["panels"][0]["series"]]
    if ctx.param("bend", None):  # control: L = 50's curve bent further from its chord stands for L = 5
        dev[0] = _nonlinearity(*_bent_from_chord(*_xy(d["panels"][0]["series"][1]), ctx.param("bend", 1.0)))
    return ctx.decide(
        dev[0] < dev[1],
        measured={"nonlinearity_L5": dev[0], "nonlinearity_L50": dev[1]},
        tolerance="strict ordering of the max distance from the chord (relative to its length)",
    )


@claim(
    id="localupdate/figure-2/strict-ordering-of-momentum",
    ref="Figure 2",
    title="Figure 2: heavy-ball better than Nesterov better than no momentum",
    statement=r"\"We see a strict ordering of the server optimization methods. Heavy-ball momentum is better than Nesterov "
    r"momentum, which is better than no momentum.\"",
    kind="symbolic",
)
def fig2_order(ctx):
    d = _figure_data(2, ctx.seed)
    margin = np.inf
    for p in d["panels"]:
        s = _series_by_label(p)
        rg, rn, rh = (np.asarray(s[k]["x"]) for k in ("no momentum", "Nesterov", "heavy-ball"))
        kap = np.asarray(s["no momentum"]["params"]["kappa"])
        inner = kap > 1 + 1e-9
        margin = min(margin, float(np.min(rg[inner] - rn[inner])), float(np.min(rn[inner] - rh[inner])))
        same_delta = np.allclose(s["no momentum"]["y"], s["heavy-ball"]["y"]) and np.allclose(
            s["no momentum"]["y"], s["Nesterov"]["y"]
        )
        if not same_delta:
            margin = -1.0
    sym_ok = symt.momentum_ordering_factors() == (0, 0)
    return _proved_if(
        ctx,
        _PROOFS["fig2_order"],
        margin > 0 and sym_ok,
        measured={"min_rho_gap_at_equal_delta": margin, "symbolic": sym_ok},
        tolerance="strict: positive gaps wherever κ > 1",
        notes="At each K all three share Δ (eq. 17 depends on κ only) and ρ_HB < ρ_N < ρ_GD for every κ > 1: "
        "(κ+1)² − (3κ+1) = κ(κ−1) and (3κ+1) − (√κ+1)² = 2√κ(√κ−1) (proved symbolically).",
    )


@claim(
    id="localupdate/figure-2/momentum-benefit-grows-with-l",
    ref="Figure 2",
    title="Figure 2: the benefit of momentum is more pronounced as L/μ increases",
    statement=r"\"One important finding is that the benefit of momentum is more pronounced as $L/\mu$ increases.\"",
    kind="numeric",
    controls=[
        Control(
            "no-benefit-at-largest-l",
            "at the largest L the momentum curves replaced by "
            "the no-momentum one (no benefit: speed-up exactly "
            "1, below the smaller L's, where ρ_HB < ρ_GD < 1 "
            "makes it > 1): the benefit does not grow, false a "
            "priori",
            {"no_benefit_at_largest_l": True},
        )
    ],
)
def fig2_benefit(ctx):
    """Benefit = rounds saved: at equal Δ (same K), a server with rate ρ needs ∝ 1/log(1/ρ) rounds, so the speed-up
    of heavy-ball (and Nesterov) over no momentum is log ρ_mom / log ρ_GD; compared at Δ = 0 (K = 1) and at its
    maximum over the frontier. The raw distance ρ_GD − ρ_HB on the plot is reported too (it does not grow)."""
    d = _figure_data(2, ctx.seed)
    speedup_hb, speedup_n, speedup_max, gaps, areas = [], [], [], [], []
    for p in d["panels"]:
        s = _series_by_label(p)
        names = ("no momentum", "Nesterov", "heavy-ball")
        if ctx.param("no_benefit_at_largest_l", False) and p is d["panels"][-1]:
            names = ("no momentum",) * 3  # control: no momentum benefit at the largest L
        rg, rn, rh = (np.asarray(s[k]["x"]) for k in names)
        dl = np.asarray(s["no momentum"]["y"])
        inner = rg > 1e-6
        sp_h = np.log(rh[inner]) / np.log(rg[inner])
        speedup_hb.append(float(sp_h[0]))
        speedup_n.append(float(np.log(rn[0]) / np.log(rg[0])))
        speedup_max.append(float(sp_h.max()))
        gaps.append(float(rg[0] - rh[0]))
        order = np.argsort(dl)
        areas.append(float(np.trapezoid((rg - rh)[order], dl[order])))
    ok = all(np.diff(speedup_hb) > 0) and all(np.diff(speedup_n) > 0) and all(np.diff(speedup_max) > 0)
    return ctx.decide(
        ok,
        measured={
            "L": d["params"]["L"],
            "rounds_speedup_heavy_ball_at_delta0": speedup_hb,
            "rounds_speedup_nesterov_at_delta0": speedup_n,
            "rounds_speedup_heavy_ball_max_over_frontier": speedup_max,
            "plot_gap_rho_gd_minus_hb_at_delta0": gaps,
            "plot_area_between_gd_and_hb": areas,
        },
        tolerance="strictly increasing in L (speed-ups in communication rounds)",
        notes="Read as convergence benefit (rounds to a given accuracy ∝ 1/log(1/ρ)): ~√κ for heavy-ball. "
        "Measured as horizontal distance on the (ρ, Δ) plot the gap at Δ = 0 shrinks with L (curves "
        "crowd toward ρ = 1), so the statement holds in rounds, not in plotted ρ.",
    )


@claim(
    id="localupdate/figure-2/heavy-ball-frontier-symmetric",
    ref="Figure 2",
    title="Figure 2: the heavy-ball frontiers are symmetric about ρ = Δ",
    statement=r"\"The Pareto frontiers for heavy-ball momentum appear to be symmetric about the line $\rho=\Delta$.\"",
    kind="numeric",
    controls=[
        Control(
            "no-momentum",
            "the no-momentum frontier claimed symmetric about ρ = Δ: "
            "false a priori — its end points are ((κ₀−1)/(κ₀+1), 0) and "
            "(0, (√κ₀−1)/(√κ₀+1)), which are not reflections of each "
            "other",
            {"series": "no momentum"},
        )
    ],
)
def fig2_symmetric(ctx):
    d = _figure_data(2, ctx.seed)
    worst = 0.0
    for p in d["panels"]:
        x, y = _xy(_series_by_label(p)[ctx.param("series", "heavy-ball")])  # control: "no momentum"
        worst = max(worst, float(_distance_to_curve(y, x, x, y).max()))
    return ctx.decide(
        worst <= 5e-3,
        measured={"max_distance_of_reflected_points_to_curve": worst},
        tolerance="5e-3: 400 log-spaced K; the reflection of a point lies on the curve but between grid points",
        notes="Exact for the underlying curve: localupdate/section-5/heavy-ball-symmetry-conjecture.",
    )


def _planted(series: dict, ctx, *, first: bool = False) -> dict:
    """The series, with a point planted when a negative control asks for it: at (1.5, 1.5) — outside the unit square
    every (ρ, Δ) lies in — for ``planted``, at the point ``planted_at`` otherwise; appended, or put first."""
    point = ctx.param("planted_at", None) or ((1.5, 1.5) if ctx.param("planted", False) else None)
    if point is None:
        return series
    x, y = np.asarray(series["x"], float), np.asarray(series["y"], float)
    if first:
        return dict(series, x=np.r_[point[0], x], y=np.r_[point[1], y])
    return dict(series, x=np.r_[x, point[0]], y=np.r_[y, point[1]])


def _planted_point(within: str) -> Control:
    """The control of a statement that compared curves lie within ``within`` of a reference curve: :func:`_planted`
    puts a point at (1.5, 1.5) in each compared curve."""
    return Control(
        "planted-point",
        "a point planted at (ρ, Δ) = (1.5, 1.5) in each compared curve (a planted departure): false a priori for the "
        f"reading 'within {within} of the reference curve', which lies in [0, 1]² (ρ, Δ ∈ [0, 1]: "
        "localupdate/section-5/rho-delta-in-unit-square), so it is ≥ 0.7 away",
        {"planted": True},
    )


def _on_curve_and_range(sub, ref, tol=2e-3):
    sx, sy = _xy(sub)
    rx, ry = _xy(ref)
    dist = float(_distance_to_curve(sx, sy, rx, ry).max())
    return dist, dist <= tol


@claim(
    id="localupdate/figure-3/alpha-frontier-subset-of-fedavg",
    ref="Figure 3",
    title="Figure 3: changing α does not bring the frontier closer to 0; α > 0 gives a subset of the α = 0 frontier",
    statement=r"\"In all settings we examined, changing $\alpha$ did not bring the Pareto frontier closer to 0. Instead, the "
    r"frontier for $\alpha>0$ was simply a subset of the frontier for $\alpha=0$.\" \"FedAvg can always attain the "
    r"same $(\rho,\Delta)$ as FedProx [...] The reverse is not true, as FedProx cannot recover one-shot averaging.\"",
    kind="numeric",
    controls=[
        Control(
            "reversed-inclusion",
            "the α = 0 frontier claimed a subset of the largest "
            "α's: false a priori, α = 0 reaches one-shot "
            "averaging (κ → 1) while α > 0 caps κ at "
            "L(μ+α)/(μ(L+α)) > 1",
            {"swap": True},
        )
    ],
)
def fig3_subset(ctx):
    d = _figure_data(3, ctx.seed)
    series_ = d["panels"][0]["series"]
    if ctx.param("swap", False):  # control: the α = 0 frontier claimed a subset of the largest α's
        series_ = [series_[-1], series_[0]]
    base = series_[0]
    dists = {s["label"]: _on_curve_and_range(s, base)[0] for s in series_[1:]}
    min_rho = {s["label"]: float(np.min(s["x"])) for s in series_}
    ok = max(dists.values()) <= 2e-3 and min_rho[base["label"]] <= 1e-3 and min(list(min_rho.values())[1:]) > 0.05
    return ctx.decide(
        ok,
        measured={"max_distance_to_alpha0_curve": dists, "min_rho": min_rho},
        tolerance="on the α = 0 curve within 2e-3 (polyline interpolation); one-shot averaging = ρ ≤ 1e-3",
        notes="Every analytic (ρ, Δ) is a function of κ alone, so all frontiers lie on one curve and differ "
        "only in the κ range they reach; α > 0 caps κ below at L(μ+α)/(μ(L+α)) > 1 as K → ∞.",
    )


@claim(
    id="localupdate/figure-3/frontier-shrinks-as-alpha-grows",
    ref="Figure 3",
    title="Figure 3: as α increases, the frontier becomes a smaller subset",
    statement=r"\"As $\alpha$ increases, the frontier becomes a smaller subset of the frontier for $\alpha=0$.\"",
    kind="numeric",
    controls=[
        Control(
            "wrong-limit",
            "the K → ∞ limit taken as (L + α)/(μ + α): false a priori "
            "(it is L(μ+α)/(μ(L+α)), and the two differ for every α ≥ 0 "
            "when L > μ)",
            {"wrong_limit": True},
        )
    ],
)
def fig3_shrinks(ctx):
    d = _figure_data(3, ctx.seed)
    kmins = [float(np.min(s["params"]["kappa"])) for s in d["panels"][0]["series"]]
    limits = [10 * (1 + a) / (10 + a) for a in d["params"]["alphas"]]
    if ctx.param("wrong_limit", False):  # control: (L + α)/(μ + α), a wrong limit
        limits = [(10 + a) / (1 + a) for a in d["params"]["alphas"]]
    ok = all(np.diff(kmins) > 0) and np.allclose(kmins, limits, rtol=1e-3)
    return ctx.decide(
        ok,
        measured={"alphas": d["params"]["alphas"], "kappa_min": kmins, "kappa_limit_L(mu+a)/(mu(L+a))": limits},
        tolerance="κ_min strictly increasing in α; equal to the K → ∞ limit to 1e-3 (K = 10⁶)",
    )


@claim(
    id="localupdate/figure-4/maml-frontier-subset-of-fedavg",
    ref="Figure 4",
    title="Figure 4: for each ServerOpt the MAML frontier is a subset of the FedAvg frontier (the same when ρ is large)",
    statement=r"\"For each ServerOpt, the MAML frontier is a subset of the FedAvg frontier. [...] these two fundamentally "
    r"different methods attain the same frontier when $\rho$ is large.\"",
    kind="numeric",
    controls=[
        Control(
            "reversed-inclusion",
            "the FedAvg frontier claimed a subset of MAML's: "
            "false a priori, within Lemma 4's regime MAML (Θ_K) "
            "keeps κ ≥ ψ(L)/ψ(μ) > 1 at every admissible K, while "
            "FedAvg reaches κ → 1 (ρ → 0)",
            {"swap": True},
        )
    ],
)
def fig4_subset(ctx):
    d = _figure_data(4, ctx.seed)
    rows = {}
    ok = True
    for p in d["panels"]:
        s = _series_by_label(p)
        sub, ref = (
            ("FedAvg (Θ_{1:K})", "MAML (Θ_K)") if ctx.param("swap", False) else ("MAML (Θ_K)", "FedAvg (Θ_{1:K})")
        )
        dist, on = _on_curve_and_range(s[sub], s[ref])  # control: the reversed inclusion
        mx, fx = np.asarray(s["MAML (Θ_K)"]["x"]), np.asarray(s["FedAvg (Θ_{1:K})"]["x"])
        rows[p["title"]] = {
            "max_distance": dist,
            "maml_rho_range": [float(mx.min()), float(mx.max())],
            "fedavg_rho_range": [float(fx.min()), float(fx.max())],
        }
        ok &= on and abs(mx.max() - fx.max()) < 1e-12 and mx.min() > fx.min()
    return ctx.decide(ok, measured=rows, tolerance="within 2e-3 of the FedAvg polyline; same largest ρ (K = 1, κ = κ₀)")


@claim(
    id="localupdate/figure-4/momentum-similar-near-rho-zero",
    ref="Figure 4",
    title="Figure 4: the momentum types reach similar suboptimality as ρ → 0",
    statement=r"\"In Figure 4, the various types of momentum lead to similar suboptimality when the convergence rate is close to 0.\"",
    kind="numeric",
    controls=[
        Control(
            "with-maml",
            "MAML's end point claimed to share FedAvg's Δ near ρ = 0: "
            "false a priori, within Lemma 4's regime MAML stops at κ > 1, "
            "i.e. at a smaller Δ and a larger ρ than FedAvg's K = 10⁶ end",
            {"with_maml": True},
        )
    ],
)
def fig4_near_zero(ctx):
    d = _figure_data(4, ctx.seed)
    ends = {
        p["title"]: (
            float(np.min(_series_by_label(p)["FedAvg (Θ_{1:K})"]["x"])),
            float(np.asarray(_series_by_label(p)["FedAvg (Θ_{1:K})"]["y"])[-1]),
        )
        for p in d["panels"]
    }
    if ctx.param("with_maml", False):  # control: the MAML end point joins the comparison
        p = d["panels"][0]
        ends["MAML"] = (
            float(np.min(_series_by_label(p)["MAML (Θ_K)"]["x"])),
            float(np.asarray(_series_by_label(p)["MAML (Θ_K)"]["y"])[-1]),
        )
    deltas = [v[1] for v in ends.values()]
    ok = max(deltas) - min(deltas) <= 1e-12 and max(v[0] for v in ends.values()) <= 0.05
    return ctx.decide(
        ok,
        measured={"end_points_rho_delta": ends},
        tolerance="same Δ to 1e-12 at K = 10⁶, where ρ ≤ 0.05",
        notes="Δ depends on κ only and κ → 1 for every momentum: one-shot averaging needs no momentum.",
    )


def _noiseless_d5(word: str) -> Control:
    """The control of "``word`` for d = 5" (seed-to-seed spread of the d = 5 frontiers): one seed's curve for every
    seed."""
    return Control(
        "noiseless-d5",
        "the d = 5 frontiers replaced by one seed's, repeated: a d = 5 curve known to have no seed-to-seed noise "
        f"(spread 0), so '{word} for d = 5' is false a priori and the spread measure must read 0",
        {"noiseless_d5": True},
    )


def _simulated_parts(d, panel_index=0):
    s = _series_by_label(d["panels"][panel_index])
    return s["FedAvg (Θ_{1:K})"], [s[k] for k in s if k.startswith("MAML")]


@claim(
    id="localupdate/figure-5/identical-for-small-k",
    ref="Figure 5",
    title="Figure 5: simulated MAML and FedAvg frontiers are identical while γ < 1/(KL + α)",
    statement=r"\"The Pareto frontiers are identical for small $K$ (mirroring Figure 4), but diverge when $\gamma\ge(KL+\alpha)^{-1}$.\"",
    kind="numeric",
    controls=[
        Control(
            "identical-beyond",
            "the curves claimed identical also for γKL ≥ 2: false a "
            "priori, beyond Lemma 4's regime ψ peaks inside (μ, L) "
            "and κ depends on intermediate eigenvalues (Section 4.1)",
            {"beyond": True},
        )
    ],
)
def fig5_identical(ctx):
    d = _figure_data(5, ctx.seed)
    fedavg, mamls = _simulated_parts(d)
    fx, fy = _xy(fedavg)
    inside, beyond = 0.0, np.inf
    for s in mamls:
        K = np.asarray(s["params"]["K"])
        x, y = _xy(s)
        dist = _distance_to_curve(x, y, fx, fy)
        regime = K * 10.0 * 0.001 >= 2 if ctx.param("beyond", False) else K * 10.0 * 0.001 < 1  # control: beyond
        inside = max(inside, float(dist[regime].max()))
        beyond = min(beyond, float(dist[K * 10.0 * 0.001 >= 2].min()))
    ok = inside <= 2e-3 and beyond >= 0.02
    return ctx.decide(
        ok,
        measured={"max_distance_for_gamma_KL_lt_1": inside, "min_distance_for_gamma_KL_ge_2": beyond},
        tolerance="identical: within 2e-3 of the FedAvg polyline; diverged: ≥ 0.02 away once γKL ≥ 2",
        notes="Inside Lemma 4's regime κ = ψ(L)/ψ(μ) and cond(Q) = κ₀/κ, so the point is FedAvg's at that κ.",
    )


@claim(
    id="localupdate/figure-5/maml-moves-away-from-origin",
    ref="Figure 5",
    title="Figure 5: beyond the threshold the MAML frontier moves further from 0",
    statement=r"\"The frontier for MAML then moves further from 0.\"",
    kind="numeric",
    controls=[
        Control(
            "from-k1",
            "the distance to the origin claimed non-decreasing from K = 1 "
            "on: false a priori, before the cusp the curve follows FedAvg's "
            "toward smaller ρ (from ρ = (κ₀−1)/(κ₀+1) ≈ 0.82, Δ = 0 at K = 1)",
            {"from_start": True},
        )
    ],
)
def fig5_away(ctx):
    d = _figure_data(5, ctx.seed)
    _, mamls = _simulated_parts(d)
    rows = {}
    ok = True
    for s in mamls:
        x, y = _xy(s)
        i = 0 if ctx.param("from_start", False) else int(np.argmin(x))  # control: from K = 1, before the cusp
        r = np.hypot(x[i:], y[i:])
        rows[s["label"]] = {
            "cusp_distance": float(r[0]),
            "final_point": [float(x[-1]), float(y[-1])],
            "monotone_fraction": float(np.mean(np.diff(r) >= -1e-12)),
        }
        ok &= np.all(np.diff(r) >= -1e-12) and x[-1] > 0.99 and y[-1] > 0.99
    return ctx.decide(
        ok, measured=rows, tolerance="distance to the origin non-decreasing in K after the cusp; ends near (1, 1)"
    )


@claim(
    id="localupdate/figure-5/noisy-for-d5-stable-for-d100",
    ref="Figure 5",
    title="Figure 5: the MAML frontier is noisy for d = 5 and stabilizes for d = 100",
    statement=r"\"The MAML frontier is noisy for $d=5$ (as $\rho,\Delta$ depend on random eigenvalues of $A$), but stabilizes "
    r"for $d=100$.\"",
    kind="numeric",
    controls=[_noiseless_d5("noisy")],
)
def fig5_noise(ctx):
    curves = {5: [], 100: []}
    for seed in range(8 if not ctx.full else 32):
        _, mamls = _simulated_parts(_figure_data(5, ctx.seed + seed))
        for s in mamls:
            curves[int(s["params"]["d"])].append(np.asarray(s["x"]))
    K = np.asarray(_simulated_parts(_figure_data(5, ctx.seed))[1][0]["params"]["K"])
    window = (K * 0.001 * 10 >= 1) & (K <= 1000)
    if ctx.param("noiseless_d5", False):  # control: one seed's d = 5 curve for every seed
        curves[5] = [curves[5][0]] * len(curves[5])
    spread = {d: float(np.std(np.array(c)[:, window], axis=0).max()) for d, c in curves.items()}
    ok = spread[5] > 3 * spread[100]
    return ctx.decide(
        ok,
        measured={"max_std_of_rho_over_seeds": spread, "K_window": [int(K[window][0]), int(K[window][-1])]},
        tolerance="d = 5's seed-to-seed spread of ρ at least 3× d = 100's, over K from the threshold to 10³",
        notes="Beyond the threshold λ_max(QA) is set by the eigenvalue nearest 1/(Kγ); with d = 100 the "
        "spectrum fills [μ, L] densely (a Marchenko–Pastur shape), with d = 5 it is a few random points.",
    )


@claim(
    id="localupdate/figure-5/cusp-at-one-shot-suboptimality",
    ref="Figure 5",
    title="Figure 5: the MAML curve's cusp sits at the suboptimality of FedAvg's ρ = 0 intercept",
    statement=r"\"The curve for MAML when $d=100$ has a clear cusp. This seems to occur at the same suboptimality (ie. $y$-value) "
    r"as the intersection of the FedAvg curve with the $y$-axis.\" (The text says Figure 4; only Figure 5 has $d$.)",
    kind="numeric",
    controls=[
        Control(
            "rho-form",
            "the intercept taken as (κ₀ − 1)/(κ₀ + 1) = 0.82 (ρ's form) "
            "instead of (√κ₀ − 1)/(√κ₀ + 1) = 0.52: false a priori",
            {"gd_form": True},
        )
    ],
)
def fig5_cusp(ctx):
    """The cusp (minimum ρ) and its Δ vs (√κ₀ − 1)/(√κ₀ + 1), on the figure and on a fine K grid. Explanation
    found here: the cusp is where ψ(μ) = ψ(L), i.e. cond(Q) = ((1 − γμ)/(1 − γL))^{K−1} = L/μ = κ₀, so the
    Lemma-5 suboptimality there is exactly (√κ₀ − 1)/(√κ₀ + 1)."""
    from fedtheory.analysis.pareto import frontier_spectrum

    d = _figure_data(5, ctx.seed)
    fedavg, mamls = _simulated_parts(d)
    k0 = 10.0
    intercept = (math.sqrt(k0) - 1) / (math.sqrt(k0) + 1)
    if ctx.param("gd_form", False):  # control: (κ₀ − 1)/(κ₀ + 1), ρ's form instead of Δ's
        intercept = (k0 - 1) / (k0 + 1)
    rows = {}
    ok = True
    for s in mamls:
        x, y = _xy(s)
        i = int(np.argmin(x))
        lam = np.asarray(s["params"]["eigenvalues"])
        fine = frontier_spectrum(lam, gamma=0.001, Ks=np.arange(100, 600), theta="last")
        j = int(np.argmin(fine["rho"]))
        rows[s["label"]] = {
            "figure_cusp_delta": float(y[i]),
            "fine_cusp_K": int(fine["K"][j]),
            "fine_cusp_delta": float(fine["delta"][j]),
            "log_cond_Q_minus_log_kappa0": float(fine["log_cond_Q"][j] - math.log(k0)),
        }
        ok &= abs(y[i] - intercept) <= 0.01 and abs(fine["delta"][j] - intercept) <= 2e-3
    fed_intercept = float(np.asarray(fedavg["y"])[np.argmin(fedavg["x"])])
    ok &= abs(fed_intercept - intercept) <= 1e-6
    return ctx.decide(
        ok,
        measured={"fedavg_y_intercept": fed_intercept, "one_shot_formula": intercept, **rows},
        tolerance="figure grid: |Δ_cusp − intercept| ≤ 0.01; unit-step K grid: ≤ 2e-3 (one K step moves "
        "log cond(Q) by γ(L − μ) ≈ 0.009)",
        notes="Why (the paper is 'unsure'): for γ ≥ 1/(KL), κ = ψ_max / min(ψ(μ), ψ(L)); the minimum over K "
        "of κ (the cusp in ρ) is at the switch ψ(μ) = ψ(L), where cond(Q) = κ₀ exactly, and Appendix "
        "D.1's Δ = (√cond(Q) − 1)/(√cond(Q) + 1) is then FedAvg's one-shot value (√κ₀ − 1)/(√κ₀ + 1).",
    )


@claim(
    id="localupdate/figure-7/discrepancy-grows-with-l",
    ref="Figure 7",
    title="Figure 7: as L grows the MAML and FedAvg curves diverge sooner (small L: MAML recovers most of FedAvg)",
    statement=r"\"As $L$ increases with respect to $\mu$, the discrepancy between the MAML curves and the FedAvg curves grows. "
    r"In particular, for small $L/\mu$, the MAML curve recovers most of the FedAvg curve before diverging, while for "
    r"large $L/\mu$, the two diverge almost immediately.\"",
    kind="numeric",
    controls=[
        Control(
            "departs-at-smallest-l",
            "at the smallest L the MAML curve made to depart "
            "from FedAvg's at its first point (a point planted "
            "at (ρ, Δ) = (1.5, 1.5), outside the unit square "
            "FedAvg's curve lies in): MAML then recovers none of "
            "FedAvg's curve at small L, false a priori, and the "
            "departure detector must see it",
            {"planted": True},
        )
    ],
)
def fig7_discrepancy(ctx):
    d = _figure_data(7, ctx.seed)
    fractions, cusps = [], []
    for p in d["panels"]:
        fedavg, mamls = _simulated_parts(d, d["panels"].index(p))
        fx, fy = _xy(fedavg)
        s = [m for m in mamls if m["params"]["d"] == 100][0]
        if p is d["panels"][0]:
            s = _planted(s, ctx, first=True)  # control: a departure at the first point, smallest L
        x, y = _xy(s)
        dist = _distance_to_curve(x, y, fx, fy)
        dep = int(np.argmax(dist > 0.01))
        fractions.append(float((fx.max() - x[dep]) / (fx.max() - fx.min())))
        cusps.append(float(x.min()))
    ok = all(np.diff(fractions) < 0) and all(np.diff(cusps) > 0) and fractions[0] > 0.8 and fractions[-1] < 0.1
    return ctx.decide(
        ok,
        measured={
            "L": d["params"]["L"],
            "fraction_of_fedavg_rho_range_traversed_before_departure": fractions,
            "maml_min_rho": cusps,
        },
        tolerance="departure: first K with distance > 0.01 from the FedAvg curve (d = 100); 'most' > 80% at "
        "L = 2, 'almost immediately' < 10% at L = 100; strictly monotone in L",
    )


@claim(
    id="localupdate/figure-7/noisy-for-d5",
    ref="Figure 7",
    title="Figure 7: d = 5 is noisy, d = 100 approaches a limit, for every L",
    statement=r"\"Again, we see that when $d=5$, there is some noise in $(\rho,\Delta)$, which seems to approach some limiting "
    r"behavior for $d=100$.\"",
    kind="numeric",
    controls=[_noiseless_d5("noise")],
)
def fig7_noise(ctx):
    spreads = {}
    seeds = range(6 if not ctx.full else 24)
    datas = [_figure_data(7, ctx.seed + s) for s in seeds]
    ok = True
    for pi, L in enumerate(datas[0]["params"]["L"]):
        c = {5: [], 100: []}
        for dd in datas:
            for s in _simulated_parts(dd, pi)[1]:
                c[int(s["params"]["d"])].append(np.asarray(s["x"]))
        if ctx.param("noiseless_d5", False):  # control: one seed's d = 5 curve for every seed
            c[5] = [c[5][0]] * len(c[5])
        K = np.asarray(_simulated_parts(datas[0], pi)[1][0]["params"]["K"])
        window = (K * 0.001 * L >= 1) & (K * 0.001 * L <= 50)
        sp5, sp100 = (float(np.std(np.array(c[dd_])[:, window], axis=0).max()) for dd_ in (5, 100))
        spreads[f"L={L:g}"] = {"d5": sp5, "d100": sp100}
        ok &= sp5 > 2 * sp100
    return ctx.decide(
        ok,
        measured={"max_std_of_rho_over_seeds": spreads},
        tolerance="d = 5's spread > 2× d = 100's in every panel (window 1 ≤ γKL ≤ 50)",
    )


@claim(
    id="localupdate/figure-8/momentum-helps-maml-and-fedavg",
    ref="Figure 8",
    title="Figure 8: momentum helps convergence in all cases, FedAvg or MAML",
    statement=r"\"While the differences are not huge, we see that momentum helps convergence in all cases, FedAvg or MAML.\"",
    kind="numeric",
    controls=[
        Control(
            "heavy-ball-as-no-momentum",
            "the heavy-ball panel's curves replaced by the "
            "no-momentum panel's, which is slower than "
            "Nesterov wherever κ > 1 (ρ_N < ρ_GD: "
            "localupdate/figure-2/strict-ordering-of-momentum): "
            "'heavy-ball helps' is false a priori",
            {"heavy_ball_panel": "no momentum"},
        )
    ],
)
def fig8_helps(ctx):
    d = _figure_data(8, ctx.seed)
    panels = {p["title"]: _series_by_label(p) for p in d["panels"]}
    margin = np.inf
    for label in panels["no momentum"]:
        titles = ("no momentum", "Nesterov", ctx.param("heavy_ball_panel", "heavy-ball"))  # control: no momentum
        rg, rn, rh = (np.asarray(panels[t][label]["x"]) for t in titles)
        kap = np.asarray(panels["no momentum"][label]["params"]["kappa"])
        inner = (kap > 1 + 1e-9) & (rg < 1 - 1e-12)
        margin = min(margin, float(np.min(rg[inner] - rn[inner])), float(np.min(rn[inner] - rh[inner])))
    return ctx.decide(
        margin > 0,
        measured={"min_rho_improvement_at_equal_K": margin},
        tolerance="strict, wherever κ > 1 and ρ < 1 in float64",
        notes="The panels share the random matrix (per d), so each K has the same κ and Δ in all three.",
    )


@claim(
    id="localupdate/figure-8/momentum-changes-maml-concavity",
    ref="Figure 8",
    title="Figure 8: momentum changes the concavity of the MAML d = 100 frontier (more rounded: heavy-ball > Nesterov)",
    statement=r"\"The type of momentum changes the concavity of the MAML Pareto frontier for $d=100$. As we add momentum, the "
    r"region to the right of the MAML curve becomes more convex, becoming more rounded for heavy-ball momentum than for "
    r"Nesterov momentum.\"",
    kind="numeric",
    controls=[
        Control(
            "heavy-ball-as-chord",
            "the heavy-ball MAML curve replaced by its own chord "
            "(a straight line from the cusp to (1, 1): no "
            "rounding, area 0 above the chord, below Nesterov's "
            "positive one): 'more rounded for heavy-ball' is "
            "false a priori and the area measure must read 0",
            {"flatten": "heavy-ball"},
        )
    ],
)
def fig8_concavity(ctx):
    d = _figure_data(8, ctx.seed)
    areas = {}
    for p in d["panels"]:
        x, y = _xy(_series_by_label(p)["MAML (Θ_K), d = 100"])
        if p["title"] == ctx.param("flatten", None):  # control: the upper branch straightened to its chord
            x, y = _bent_from_chord(x, y, 0.0, ends=(len(x) - 1, int(np.argmin(x))))
        i = int(np.argmin(x))
        ux, uy = x[i:], y[i:]
        areas[p["title"]] = float(np.trapezoid(uy, ux) - 0.5 * (uy[0] + uy[-1]) * (ux[-1] - ux[0]))
    a = [areas["no momentum"], areas["Nesterov"], areas["heavy-ball"]]
    ok = a[0] < 0 < a[1] < a[2]
    return ctx.decide(
        ok,
        measured={"signed_area_of_upper_branch_above_its_chord": areas},
        tolerance="sign change (no momentum < 0 < Nesterov) and strict ordering Nesterov < heavy-ball",
        notes="Upper branch: from the cusp to (1, 1). Area above the chord > 0 means the curve bulges up-left, "
        "i.e. the region to its right is convex (rounded); < 0 means it sags.",
    )


@claim(
    id="localupdate/figure-9/proximal-alters-extent-not-shape",
    ref="Figure 9",
    title="Figure 9: a proximal term only changes how much of the MAML frontier is traversed",
    statement=r"\"Adding a proximal term simply alters how much of the Pareto frontier is traversed; it does not change the "
    r"fundamental shape [...] the only restriction on the shape of the curve seems to be coming from the fact that "
    r"larger $\alpha$ reduces the set of $\gamma$ satisfying $\gamma<(KL+\alpha)^{-1}$.\"",
    kind="numeric",
    controls=[_planted_point("2e-3")],
)
def fig9_extent(ctx):
    d = _figure_data(9, ctx.seed)
    series_ = d["panels"][0]["series"]
    base = series_[0]
    dists = {s["label"]: _on_curve_and_range(_planted(s, ctx), base)[0] for s in series_[1:]}
    nK = [len(s["x"]) for s in series_]
    kmin = [float(np.min(s["params"]["kappa"])) for s in series_]
    ok = max(dists.values()) <= 2e-3 and all(np.diff(kmin) <= 0) and all(np.diff(nK) <= 0)
    return ctx.decide(
        ok,
        measured={"max_distance_to_alpha0_curve": dists, "admissible_K_points": nK, "kappa_min": kmin},
        tolerance="on the α = 0 curve within 2e-3 (same shape); the extent moves monotonically with α",
        notes="At γ = 1e-7 the admissible K (γ(KL + α) < 1) barely depends on α ≤ 10 (K < 10⁶ − α/L) and α "
        "lowers κ for Θ_K (localupdate/section-4.1/alpha-decreases-kappa-last), so larger α traverses "
        "marginally further; the curves coincide, as the paper's 'plots of varying width' suggest.",
    )


@claim(
    id="localupdate/figure-10/alpha-shrinks-fedavg",
    ref="Figure 10",
    title="Figure 10: increasing α shrinks the FedAvg curve",
    statement=r"\"While increasing $\alpha$ shrinks the space of the Pareto curve of FedAvg [...]\"",
    kind="numeric",
    controls=[
        Control(
            "largest-alpha-reaches-zero",
            "the largest α's FedAvg curve with a point "
            "planted at ρ = 0 (a curve that does not "
            "shrink: it reaches the α = 0 curve's end and "
            "beyond): 'increasing α shrinks' is false a "
            "priori",
            {"planted_at": [0.0, 1.0]},
        )
    ],
)
def fig10_fedavg(ctx):
    d = _figure_data(10, ctx.seed)
    last = len(d["panels"]) - 1
    mins = [
        float(np.min(_xy(_planted(_simulated_parts(d, i)[0], ctx) if i == last else _simulated_parts(d, i)[0])[0]))
        for i in range(len(d["panels"]))
    ]
    return ctx.decide(
        all(np.diff(mins) > 0),
        measured={"alphas": d["params"]["alphas"], "fedavg_min_rho": mins},
        tolerance="strictly increasing minimum ρ",
    )


@claim(
    id="localupdate/figure-10/maml-curves-unchanged",
    ref="Figure 10",
    title="Figure 10: α does not change the simulated MAML curves by a meaningful amount",
    statement=r"\"[...] it does not seem to change the MAML curves by a meaningful amount.\"",
    kind="numeric",
    controls=[_planted_point("0.01")],
)
def fig10_maml(ctx):
    d = _figure_data(10, ctx.seed)
    out = {}
    for dim in (5, 100):
        base = [s for s in _simulated_parts(d, 0)[1] if s["params"]["d"] == dim][0]
        bx, by = _xy(base)
        for i in range(1, len(d["panels"])):
            s = [m for m in _simulated_parts(d, i)[1] if m["params"]["d"] == dim][0]
            x, y = _xy(_planted(s, ctx))
            out[f"d={dim}, {d['panels'][i]['title']}"] = max(
                float(_distance_to_curve(x, y, bx, by).max()), float(_distance_to_curve(bx, by, x, y).max())
            )
    return ctx.decide(
        max(out.values()) <= 0.01,
        measured={"hausdorff_distance_to_alpha0_maml_curve": out},
        tolerance="'not meaningful' read as Hausdorff distance ≤ 0.01 (1% of the unit square)",
    )
