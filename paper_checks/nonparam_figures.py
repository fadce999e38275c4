"""Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx* — the text's statements about Figures 1–6 (Section 6),
checked on the regenerated data (``figures/nonparam.py``; its data functions are called, never files). The inventory
is in ``nonparam.py``.

The fast tier computes Figures 1–3 at a medium scale with the paper's ratios (M = 10, d = 50, n_i = 250, batch
sizes 10, 25, 50: B/d = 0.2, 0.5, 1 and n/d = 5 as in the paper), Figure 4 on a coarser Γ grid with one design draw
and Figure 5 on a coarse grid of r with 2 trials;
the full tier uses the paper's scale everywhere. Where a statement is quantitative ("≈ 7.5", "almost identical"), the
tolerance is stated in the evidence; where the paper leaves the generator unspecified, the choice is the figure's.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from fedtheory.claims.core import claim
from fedtheory.content import load_module

_FIG = Path(__file__).resolve().parents[1] / "figures" / "nonparam.py"
# The claims read one fixed realisation of each figure's experiment (seed 0), shared by all claims about that figure
# (each claim's own ctx.seed differs, and recomputing a figure per claim would triple the cost).
FIG_SEED = 0
_ALGOS = (("fedavg", 1), ("fedavg", 5), ("fedavg", 10), ("fedprox", 1))


def _figs():
    return load_module(_FIG)


def _scale(ctx, fast: str = "medium") -> str:
    return "paper" if ctx.full else fast


def _runs(ctx, B):
    return _figs().section_6_1_runs(FIG_SEED, _scale(ctx), B)["runs"]


def _rounds_to(err: np.ndarray, factor: float = 1.1) -> int:
    """First round after which the error stays within ``factor`` of its final value."""
    ok = err <= factor * err[-1]
    bad = np.nonzero(~ok)[0]
    return int(bad[-1] + 1) if bad.size else 0


_NOTES_FIG2 = ("Not reproduced from the paper's specification: with a fixed partition passed s times per round (the "
               "paper's description) or with batches drawn per step, the plateau of ‖∇ℓ‖ for s = 5, 10 grows several-fold "
               "as B shrinks (the incremental/stochastic-gradient bias of steps η = 0.1 on batch Hessians whose top "
               "eigenvalue exceeds 1/η when B < d). On the paper's log axes the curves stay ordered but are not "
               "batch-size invariant. Replay: recompute the figure's data at the stored scale.")

_NOTES_FIG3 = ("Two parts fail on the regenerated data. (1) The final errors differ by up to ~1.5× (smallest batch "
               "largest), the same order of magnitude — 'almost identical' only on log axes. (2) With mini-batches FedAvg "
               "s = 1 takes n/B steps per round, so it reaches its plateau in far fewer rounds than full batch: its "
               "convergence speed per round increases, it does not decrease.")

_NOTES_FIG4 = ("With heterogeneity θ_i^* = θ^* + h_i (Gaussian h_i rescaled so that max_{i,k}‖θ_i^* − θ_k^*‖ = Γ, the "
               "paper's definition of Γ; its generator is unspecified), FG crosses 1 at Γ ≈ 2× the paper's values for "
               "both clients, i.e. ≈ 2× Theorem 5's thresholds — consistent with the theorem (constants unspecified), "
               "not with the text's 'closely matching'. The crossing depends on how far client j sits from the "
               "consensus θ̄ for a given max pairwise distance, which the paper does not fix.")

_NOTES_FIG5 = ("With FG as in Definition 1 (a ratio of mean squared errors) the plateau is ≈ 1e4: R^Loc ≈ (1 − n_j/d)‖θ^*‖² "
               "≈ 50 (n_j = 50 < d) over R^Fed ≈ σ²d/N ≈ 0.005. Its square root, ≈ 105, matches the text's 107: the "
               "paper's figure evidently plots the ratio of root-mean-square errors ‖θ̂ − θ^*‖₂, not Definition 1's FG "
               "(Figure 1 also plots unsquared errors). A ratio of 107 in squared errors would need R^Fed ≈ 0.47, far "
               "above the σ²d/N the federated model attains.")


# --------------------------------------------------------------------------------------------
# Figure 1
# --------------------------------------------------------------------------------------------

@claim(
    id="nonparam/figure-1/stationarity",
    ref="Figure 1(a), Sections 1 and 6.1",
    title="FedAvg s = 1 drives ‖∇ℓ(θ_t)‖ to 0; FedProx and FedAvg s = 5, 10 stay well above 0",
    statement=r"While the gradient magnitude of FedAvg with $s=1$ quickly drops to 0, the gradient magnitudes under FedProx and FedAvg "
              r"with $s=5,10$ stay well above 0 (Fig. 1(a); 25 clients, $d=100$, $n_i=500$, noise $\mathcal N(0,0.25I)$, $\eta=0.1$).",
    kind="simulation",
)
def figure_1_stationarity(ctx):
    runs = _runs(ctx, None)
    g0 = float(runs[("fedavg", 1)]["grad"][0])
    final = {f"{k}_s{s}": float(runs[(k, s)]["grad"][-1] / g0) for k, s in _ALGOS}
    ok = final["fedavg_s1"] <= 1e-10 and all(v >= 1e-5 for key, v in final.items() if key != "fedavg_s1")
    return ctx.decide(ok, measured={"final_relative_gradient": final, "scale": _scale(ctx)},
                      tolerance={"zero": "≤ 1e-10 of the initial gradient", "above_zero": "≥ 1e-5 of the initial gradient"},
                      notes="Runs through the LocalUpdate driver (FedProx: exact proximal steps, K to float64 resolution); "
                            "ℓ(θ) = (1/N)Σ‖y_i − X_iθ‖² as in Section 6.1.")


@claim(
    id="nonparam/figure-1/estimation-error",
    ref="Figure 1(b), Sections 1 and 6.1",
    title="All four reach almost the same ‖θ_t − θ^*‖ as FedAvg s = 1, and s = 5, 10 get there roughly s times faster",
    statement=r"Both FedAvg with $s=5,10$ and FedProx quickly converge to almost the same estimation error as FedAvg with $s=1$; the "
              r"convergence time of FedAvg with $s=5,10$ shrinks roughly by a factor of $s$ compared to $s=1$.",
    kind="simulation",
)
def figure_1_error(ctx):
    runs = _runs(ctx, None)
    e1 = float(runs[("fedavg", 1)]["error"][-1])
    final_ratio = {f"{k}_s{s}": float(runs[(k, s)]["error"][-1] / e1) for k, s in _ALGOS}
    t1 = _rounds_to(runs[("fedavg", 1)]["error"])
    speedup = {f"s{s}": t1 / max(_rounds_to(runs[("fedavg", s)]["error"]), 1) for s in (5, 10)}
    ok = all(abs(v - 1) <= 0.1 for v in final_ratio.values()) and all(s / 2 <= speedup[f"s{s}"] <= 2 * s for s in (5, 10))
    return ctx.decide(ok, measured={"final_error_over_s1": final_ratio, "speedup_rounds_to_1.1x_final": speedup,
                                    "rounds_s1": t1, "scale": _scale(ctx)},
                      tolerance={"same_error": "within 10% of FedAvg s = 1 (less than a line width on the paper's log axes, "
                                               "which span 2.5 decades)", "speedup": "between s/2 and 2s ('roughly s')"},
                      notes="On one noise draw the four fixed points are different weighted least-squares estimators (weights P), "
                            "so their errors differ by a few percent; their expected risks lie within a factor κ of each other.")


# --------------------------------------------------------------------------------------------
# Figures 2–3 (mini-batches)
# --------------------------------------------------------------------------------------------

def _final(runs, key, quantity):
    return float(runs[key][quantity][-1])


@claim(
    id="nonparam/figure-2/s1-minibatch-not-stationary",
    ref="Figure 2, Section 6.1",
    title="With mini-batches, FedAvg s = 1's gradient magnitude rises significantly: it no longer reaches a stationary point",
    statement=r"For FedAvg $s=1$ with minibatch, its gradient magnitude rises up significantly and hence it can no longer reach the "
              r"stationary point.",
    kind="simulation",
)
def figure_2_s1(ctx):
    full = _runs(ctx, None)
    g0 = float(full[("fedavg", 1)]["grad"][0])
    ratios = {}
    for B in _figs().SCALES[_scale(ctx)]["batch_sizes"]:
        ratios[B] = _final(_runs(ctx, B), ("fedavg", 1), "grad") / g0
    ok = all(r >= 1e-4 for r in ratios.values()) and _final(full, ("fedavg", 1), "grad") / g0 <= 1e-10
    return ctx.decide(ok, measured={"final_relative_gradient_by_batch": ratios, "scale": _scale(ctx)},
                      tolerance={"rises": "≥ 1e-4 of the initial gradient (full batch: ≤ 1e-10)"},
                      notes="Mini-batches as Section 6.1 describes: a fixed partition per client, passed in order s times per round.")


@claim(
    id="nonparam/figure-2/fedprox-tracks-s1",
    ref="Figure 2, Section 6.1",
    title="With mini-batches, FedProx's gradient magnitude mostly coincides with FedAvg s = 1's",
    statement=r"For FedProx with minibatch, its curve mostly coincides with that of FedAvg $s=1$.",
    kind="simulation",
)
def figure_2_fedprox(ctx):
    ratios = {}
    for B in _figs().SCALES[_scale(ctx)]["batch_sizes"]:
        r = _runs(ctx, B)
        ratios[B] = _final(r, ("fedprox", 1), "grad") / _final(r, ("fedavg", 1), "grad")
    ok = all(0.5 <= v <= 2 for v in ratios.values())
    return ctx.decide(ok, measured={"final_gradient_fedprox_over_fedavg_s1": ratios, "scale": _scale(ctx)},
                      tolerance={"coincides": "final gradient magnitudes within a factor 2 (a log-scale plot over ~4 decades)"})


@claim(
    id="nonparam/figure-2/minibatch-stationarity",
    ref="Figure 2, Section 6.1",
    title="For FedAvg s = 5 and 10, the batch size's impact on the gradient magnitude is negligible",
    statement=r"As illustrated in Fig. 2, for $s=5$ and $s=10$ the impacts of different batch sizes on the gradient magnitude are negligible.",
    kind="simulation",
    expect="refuted",
)
def figure_2_local_steps(ctx):
    full = _runs(ctx, None)
    ratios = {}
    for B in _figs().SCALES[_scale(ctx)]["batch_sizes"]:
        r = _runs(ctx, B)
        for s in (5, 10):
            ratios[f"B{B}_s{s}"] = _final(r, ("fedavg", s), "grad") / _final(full, ("fedavg", s), "grad")
    worst = max(max(v, 1 / v) for v in ratios.values())
    ok = worst <= 2
    evidence = dict(measured={"final_gradient_minibatch_over_full": ratios, "worst_factor": worst, "scale": _scale(ctx)},
                    tolerance={"negligible": "within a factor 2 of the full-batch plateau"})
    if ok:
        return ctx.verified(**evidence)
    return ctx.refuted(**evidence, counterexample={"figure": "nonparam/figure-2", "scale": _scale(ctx), "seed": FIG_SEED},
                       notes=_NOTES_FIG2)


@figure_2_local_steps.replayer
def _(cex, ctx):
    figs = _figs()
    full = figs.section_6_1_runs(cex["seed"], cex["scale"], None)["runs"]
    worst = 0.0
    for B in figs.SCALES[cex["scale"]]["batch_sizes"]:
        r = figs.section_6_1_runs(cex["seed"], cex["scale"], B)["runs"]
        for s in (5, 10):
            v = float(r[("fedavg", s)]["grad"][-1] / full[("fedavg", s)]["grad"][-1])
            worst = max(worst, v, 1 / v)
    return ctx.decide(worst <= 2, measured={"worst_factor": worst}, counterexample=cex, notes=_NOTES_FIG2)


@claim(
    id="nonparam/figure-3/minibatch-estimation-error",
    ref="Figure 3, Section 6.1",
    title="Mini-batches have almost no effect on the estimation error: the final errors are almost identical",
    statement=r"The minibatch has almost no effect on the estimation error. The final estimation errors are almost identical in each of the "
              r"four figures in Fig. 3. The convergence speed of FedAvg $s=1$ only decreases a bit with minibatch.",
    kind="simulation",
    expect="refuted",
)
def figure_3(ctx):
    full = _runs(ctx, None)
    finals = {"full": {f"{k}_s{s}": _final(full, (k, s), "error") for k, s in _ALGOS}}
    speed = {"full": _rounds_to(full[("fedavg", 1)]["error"])}
    for B in _figs().SCALES[_scale(ctx)]["batch_sizes"]:
        r = _runs(ctx, B)
        finals[B] = {f"{k}_s{s}": _final(r, (k, s), "error") for k, s in _ALGOS}
        speed[B] = _rounds_to(r[("fedavg", 1)]["error"])
    allv = [v for d in finals.values() for v in d.values()]
    spread = max(allv) / min(allv)
    slower = all(speed[B] >= speed["full"] for B in speed if B != "full")
    ok = spread <= 1.25 and slower
    evidence = dict(measured={"final_errors": {str(k): v for k, v in finals.items()}, "max_over_min_final_error": spread,
                              "rounds_to_1.1x_final_fedavg_s1": {str(k): v for k, v in speed.items()}, "scale": _scale(ctx)},
                    tolerance={"almost_identical": "max/min of the final errors ≤ 1.25",
                               "speed": "FedAvg s = 1 with mini-batches needs at least as many rounds as full batch"})
    if ok:
        return ctx.verified(**evidence)
    return ctx.refuted(**evidence, counterexample={"figure": "nonparam/figure-3", "scale": _scale(ctx), "seed": FIG_SEED},
                       notes=_NOTES_FIG3)


@figure_3.replayer
def _(cex, ctx):
    figs = _figs()
    allv = []
    for B in (None,) + tuple(figs.SCALES[cex["scale"]]["batch_sizes"]):
        r = figs.section_6_1_runs(cex["seed"], cex["scale"], B)["runs"]
        allv += [float(r[k]["error"][-1]) for k in r]
    spread = max(allv) / min(allv)
    return ctx.decide(spread <= 1.25, measured={"max_over_min_final_error": spread}, counterexample=cex, notes=_NOTES_FIG3)


# --------------------------------------------------------------------------------------------
# Figures 4–5 (federation gains)
# --------------------------------------------------------------------------------------------

def _gain_series(data):
    out = {}
    for ip, p in enumerate(data["panels"]):
        for s in p["series"]:
            if s["params"].get("reference"):
                continue
            out[("scarce" if ip == 0 else "rich", s["params"]["kind"], s["params"]["s"])] = (np.array(s["x"]), np.array(s["y"]))
    return out


def _crossing(x, y) -> float:
    """Γ where FG crosses 1 (log-linear interpolation)."""
    idx = np.nonzero((y[:-1] >= 1) & (y[1:] < 1))[0]
    if not idx.size:
        return float("nan")
    i = idx[0]
    lx, ly = np.log(x[i:i + 2]), np.log(y[i:i + 2])
    return float(np.exp(lx[0] + (0 - ly[0]) * (lx[1] - lx[0]) / (ly[1] - ly[0])))


_FIG4: dict = {}


def _fig4_data(seed: int, scale: str) -> dict:
    if (seed, scale) not in _FIG4:
        _FIG4[(seed, scale)] = _figs().figure_4_data(seed, scale)
    return _FIG4[(seed, scale)]


def _fig4(ctx):
    return _fig4_data(FIG_SEED, _scale(ctx, "small"))


@claim(
    id="nonparam/figure-4/gain-versus-heterogeneity",
    ref="Figure 4, Section 6.2",
    title="Federation gains: FedAvg (s = 1, 5, 10) and FedProx nearly indistinguishable; FG drops with Γ; scarce client ≫ rich client",
    statement=r"The models trained under FedAvg with different $s$ and under FedProx have almost indistinguishable federation gains; the "
              r"federation gain drops with increasing model heterogeneity $\Gamma$, while that of the data-scarce client is much higher than "
              r"that of the data-rich client.",
    kind="simulation",
)
def figure_4_qualitative(ctx):
    ser = _gain_series(_fig4(ctx))
    spread, rise, gap = 0.0, 0.0, np.inf
    for who in ("scarce", "rich"):
        ys = np.stack([ser[(who, k, s)][1] for k, s in _ALGOS])
        spread = max(spread, float(np.max(ys.max(0) / ys.min(0))))
        # "drops with Γ": no value exceeds the running minimum of the smaller Γ by more than 10% (at Γ ≪ ‖θ^*‖ the
        # truths barely move, and the local benchmark's bias ‖(I − Π_j)θ_j^*‖² may wobble with the direction of h_j)
        run_min = np.minimum.accumulate(ys, axis=1)
        rise = max(rise, float(np.max(ys[:, 1:] / run_min[:, :-1])))
    mono = rise <= 1.1 and all(ser[(w, k, s)][1][-1] <= ser[(w, k, s)][1][0] / 100 for w in ("scarce", "rich") for k, s in _ALGOS)
    for k, s in _ALGOS:
        gap = min(gap, float(np.min(ser[("scarce", k, s)][1] / ser[("rich", k, s)][1])))
    ok = spread <= 1.1 and mono and gap >= 2
    return ctx.decide(ok, measured={"max_ratio_across_algorithms": spread, "max_rise_over_running_min": rise,
                                    "drops": mono, "min_scarce_over_rich": gap},
                      tolerance={"indistinguishable": "max/min across algorithms ≤ 1.1 at every Γ", "much_higher": "≥ 2× at every Γ",
                                 "drops": "never 10% above the running minimum, and ≥ 100× smaller at the largest Γ than at the smallest"})


@claim(
    id="nonparam/figure-4/crossing-points",
    ref="Figure 4, Section 6.2",
    title="FG drops below 1 at Γ ≈ 7.5 (scarce) and Γ ≈ 0.3 (rich), closely matching the thresholds ≈ 7 and ≈ 0.22 after Theorem 5",
    statement=r"The federation gain of a data scarce client drops below 1 at $\Gamma\approx7.5$, whereas that of a data rich client drops "
              r"below 1 at $\Gamma\approx0.3$, closely matching the predicted thresholds $\sqrt{1-n_j/d}\|\theta_j^*\|_2\approx7$ and "
              r"$\sigma\sqrt{d/n_j}\approx0.22$.",
    kind="simulation",
    expect="refuted",
)
def figure_4_crossings(ctx):
    data = _fig4(ctx)
    ser = _gain_series(data)
    cross = {who: float(np.median([_crossing(*ser[(who, k, s)]) for k, s in _ALGOS])) for who in ("scarce", "rich")}
    thr = data["params"]["thresholds"]
    paper = {"scarce": 7.5, "rich": 0.3}
    vs_paper = {w: cross[w] / paper[w] for w in cross}
    vs_theory = {w: cross[w] / thr[w] for w in cross}
    sq_gain_scarce_small_gamma = float(ser[("scarce", "fedavg", 1)][1][0])
    ok = all(2 / 3 <= v <= 1.5 for v in vs_paper.values())
    evidence = dict(measured={"crossings": cross, "over_paper_values": vs_paper, "over_theorem_5_thresholds": vs_theory,
                              "thresholds": thr, "scarce_gain_at_smallest_gamma": sq_gain_scarce_small_gamma},
                    tolerance={"approx": "crossing within [2/3, 3/2] of the paper's 7.5 and 0.3"})
    if ok:
        return ctx.verified(**evidence)
    return ctx.refuted(**evidence, counterexample={"figure": "nonparam/figure-4", "seed": FIG_SEED, "scale": _scale(ctx, "small")},
                       notes=_NOTES_FIG4)


@figure_4_crossings.replayer
def _(cex, ctx):
    ser = _gain_series(_fig4_data(cex["seed"], cex.get("scale", "small")))
    cross = float(np.median([_crossing(*ser[("scarce", k, s)]) for k, s in _ALGOS]))
    return ctx.decide(2 / 3 <= cross / 7.5 <= 1.5, measured={"scarce_crossing": cross}, counterexample=cex, notes=_NOTES_FIG4)


_FIG5: dict = {}


def _fig5_data(seed: int, scale: str) -> dict:
    if (seed, scale) not in _FIG5:
        _FIG5[(seed, scale)] = _figs().figure_5_data(seed, scale)
    return _FIG5[(seed, scale)]


def _fig5(ctx):
    return _fig5_data(FIG_SEED, _scale(ctx, "small"))


@claim(
    id="nonparam/figure-5/gain-versus-subspace-dimension",
    ref="Figure 5, Section 6.3",
    title="Subspace model: gains nearly identical across algorithms, scarce ≈ rich up to r ≈ 27, a jump as r crosses d log d/M, and a "
          "rich client's gain falls as r → d",
    statement=r"For any fixed $r$ the federation gains of FedAvg $s=1,5,10$ and FedProx are almost identical; up to $r\approx27$ the curves of "
              r"the data-scarce and data-rich clients are roughly the same; both jump significantly as $M r$ reaches $d\log d$ ($r\approx16$ to "
              r"$23$); the data-rich client's gain first increases and then quickly decreases as $r$ approaches 100.",
    kind="simulation",
)
def figure_5_qualitative(ctx):
    ser = _gain_series(_fig5(ctx))
    r = ser[("scarce", "fedavg", 1)][0]
    spread = 0.0
    for who in ("scarce", "rich"):
        ys = np.stack([ser[(who, k, s)][1] for k, s in _ALGOS])
        spread = max(spread, float(np.max(ys.max(0) / ys.min(0))))
    sc, ri = ser[("scarce", "fedavg", 1)][1], ser[("rich", "fedavg", 1)][1]
    low = r <= 27
    same = float(np.max(np.maximum(sc[low] / ri[low], ri[low] / sc[low])))
    before, after = float(np.max(sc[r <= 12])), float(np.min(sc[(r >= 27) & (r <= 60)]))
    jump = after / before
    peak = int(np.argmax(ri))
    rich_falls = 0 < peak < len(r) - 1 and ri[-1] <= ri[peak] / 10
    ok = spread <= 1.1 and same <= 2 and jump >= 100 and rich_falls
    return ctx.decide(ok, measured={"max_ratio_across_algorithms": spread, "max_scarce_rich_ratio_r_le_27": same,
                                    "jump_factor_r12_to_r27": jump, "rich_peak_r": int(r[peak]),
                                    "rich_gain_at_r_100_over_peak": float(ri[-1] / ri[peak])},
                      tolerance={"identical": "≤ 1.1", "roughly_same": "within 2×", "jump": "≥ 100× between r ≤ 12 and r ∈ [27, 60]",
                                 "falls": "rich gain at r = 100 ≤ peak/10 with an interior peak"},
                      notes="The coupon-collector threshold d log d/M = 23 for M = 20, d = 100: with fewer coordinates covered by "
                            "the union of the clients' subspaces, θ^* is not identifiable by the federation.")


@claim(
    id="nonparam/figure-5/scarce-plateau",
    ref="Figure 5(a), Section 6.3",
    title="A data-scarce client's federation gain increases with r and then stabilizes around 107",
    statement=r"For a data scarce client, as $r$ increases, the federation gain first increases and then stabilizes around 107.",
    kind="simulation",
    expect="refuted",
)
def figure_5_plateau(ctx):
    ser = _gain_series(_fig5(ctx))
    r, sc = ser[("scarce", "fedavg", 1)]
    plateau = float(np.median(sc[r >= 40]))
    stable = float(np.max(sc[r >= 40]) / np.min(sc[r >= 40]))
    ok = 107 / 2 <= plateau <= 107 * 2
    evidence = dict(measured={"plateau_gain_definition_1": plateau, "sqrt_plateau": plateau ** 0.5,
                              "max_over_min_for_r_ge_40": stable},
                    tolerance={"around": "within a factor 2 of 107"})
    if ok:
        return ctx.verified(**evidence)
    return ctx.refuted(**evidence, counterexample={"figure": "nonparam/figure-5", "seed": FIG_SEED, "full": ctx.full},
                       notes=_NOTES_FIG5)


@figure_5_plateau.replayer
def _(cex, ctx):
    data = _fig5_data(cex["seed"], "paper" if cex.get("full") else "small")
    ser = _gain_series(data)
    r, sc = ser[("scarce", "fedavg", 1)]
    plateau = float(np.median(sc[r >= 40]))
    return ctx.decide(107 / 2 <= plateau <= 214, measured={"plateau": plateau, "sqrt_plateau": plateau ** 0.5}, counterexample=cex, notes=_NOTES_FIG5)


# --------------------------------------------------------------------------------------------
# Figure 6 and the new figure
# --------------------------------------------------------------------------------------------

@claim(
    id="nonparam/figure-6/polynomial-rates",
    ref="Figure 6, Section 6.4",
    title="Fitting U₅: the four curves are very similar, 1/MSE is roughly linear in N with similar slopes, s = 10's slightly smaller",
    statement=r"The four curves of the prediction errors under FedAvg with different $s$ and FedProx are very similar; each curve of the "
              r"reciprocal errors is mostly a straight line, with similar slopes, the slope of $s=10$ being slightly smaller than the others.",
    kind="simulation",
)
def figure_6(ctx):
    data = _figs().figure_6_data(FIG_SEED, "paper")
    mse = {(s["params"]["kind"], s["params"]["s"]): (np.array(s["x"]), np.array(s["y"])) for s in data["panels"][0]["series"]}
    ys = np.stack([mse[a][1] for a in _ALGOS])
    similar = float(np.max(ys.max(0) / ys.min(0)))
    slopes, r2 = {}, {}
    for a in _ALGOS:
        N, m = mse[a]
        inv = 1 / m
        c = np.polyfit(N, inv, 1)
        pred = np.polyval(c, N)
        slopes[a] = float(c[0])
        r2[a] = float(1 - np.sum((inv - pred) ** 2) / np.sum((inv - inv.mean()) ** 2))
    sl = np.array(list(slopes.values()))
    ok = similar <= 1.25 and min(r2.values()) >= 0.95 and sl.max() / sl.min() <= 1.25 and slopes[("fedavg", 10)] == sl.min()
    return ctx.decide(ok, measured={"max_ratio_across_algorithms": similar, "min_r2_linear_fit_of_1_over_mse": min(r2.values()),
                                    "slopes": {f"{k}_s{s}": v for (k, s), v in slopes.items()}},
                      tolerance={"similar": "≤ 1.25", "straight": "R² ≥ 0.95", "similar_slopes": "max/min ≤ 1.25",
                                 "s10": "the smallest slope"},
                      notes="Exact expectation over the noise of the converged federated model (the figure's recorded choice).")


@claim(
    id="nonparam/figure-sobolev-rate/bounds-hold",
    ref="New figure (1/t rate on the Sobolev kernel); Lemma 6, Theorem 1",
    title="On the new figure's data: measured bias ≤ worst case over the unit ball ≤ κ/(2eηts), and E‖f_t − f^*‖² ≤ Theorem 1's bound for t ≤ T",
    statement=r"For the first-order Sobolev kernel: $\|f_t-f^*\|_N^2\le\|L^tK_{\mathbf x}L^{t\top}\|_2\|f^*\|_{\mathcal H}^2\le\frac{\kappa}{2e\eta ts}$ "
              r"($\|f^*\|_{\mathcal H}=1$, $\sigma=0$) and, with noise, Theorem 1's bound up to $T$.",
    kind="simulation",
)
def figure_sobolev(ctx):
    data = _figs().rate_figure_data(FIG_SEED, "paper" if ctx.full else "small")
    worst = 0.0
    groups: dict = {}
    for s in data["panels"][0]["series"]:
        groups.setdefault((s["params"]["kind"], s["params"]["s"]), []).append(np.array(s["y"]))
    for meas, wc, bound in groups.values():
        worst = max(worst, float(np.max(meas / wc)), float(np.max(wc / bound)))
    noisy: dict = {}
    for s in data["panels"][1]["series"]:
        noisy.setdefault((s["params"]["kind"], s["params"]["s"]), []).append((np.array(s["x"]), np.array(s["y"])))
    for parts in noisy.values():
        if len(parts) == 2:
            (tx, e), (bx, b) = parts
            worst = max(worst, float(np.max(e[np.isin(tx, bx)] / b)))
    tol = 1e-9
    return ctx.decide(worst <= 1 + tol, measured={"worst_ratio": worst}, tolerance={"ratio": 1 + tol})


