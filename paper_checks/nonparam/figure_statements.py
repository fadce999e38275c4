"""Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx* — the text's statements about Figures 1–6 (Section 6),
checked on the regenerated data (``figures/nonparam.py``; its data functions are called, never files). The inventory
is in ``nonparam.py``.

Scales. Figures 1 and 4 run at the paper's scale in the fast tier. Figures 2–3 (mini-batches) and 5 are checked at the
paper's scale in the full tier (plain ids) and at a reduced scale in the fast tier (``…/reduced-scale``, marked
``substitute``: a failure there is ``not-reproduced``, no evidence against the paper): Figures 2–3 at M = 10, d = 50,
n_i = 250, B = 10, 25, 50 (the paper's ratios n/d = 5, B/d = 0.2, 0.5, 1), Figure 5 on 8 values of r with 2 trials.

Readings (what the paper leaves open, each run; ``refuted`` only when every reading fails):
* Figures 2–3: how a mini-batch step scales its gradient — the batch mean (``batch-mean``) or the batch's share of the
  client's loss, its sum over n_i (``client-share``, one pass over a client's batches ≈ one full-gradient step);
* Figure 4: how the θ_i^* with max pairwise distance Γ are drawn (:func:`heterogeneity_offsets` of the figures file);
* Figure 5's plateau value: Definition 1's ratio of mean squared errors, or the ratio of root-mean-square errors
  ‖θ̂ − θ^*‖₂ (the unsquared quantity the paper's Figures 1 and 3 plot).
Where a statement is quantitative ("≈ 7.5", "almost identical"), the tolerance is stated in the evidence.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from fedtheory.claims.core import Control, Reading, claim
from fedtheory.content import load_module

_FIG = Path(__file__).resolve().parents[2] / "figures" / "nonparam.py"
# The claims read one fixed realisation of each figure's experiment (seed 0), shared by all claims about that figure
# (each claim's own ctx.seed differs, and recomputing a figure per claim would multiply the cost).
FIG_SEED = 0
_ALGOS = (("fedavg", 1), ("fedavg", 5), ("fedavg", 10), ("fedprox", 1))

_GAP_61 = (
    "reduced scale: M = 10, d = 50, n_i = 250, batch sizes 10, 25, 50 (the paper's ratios n/d = 5 and "
    "B/d = 0.2, 0.5, 1) and 80 mini-batch rounds, instead of M = 25, d = 100, n_i = 500, B = 20, 50, 100"
)
_GAP_FIG5 = (
    "reduced scale: 8 subspace dimensions r ∈ {4, 12, 16, 23, 27, 40, 60, 100} and 2 trials per r, instead of "
    "r = 1, …, 100 and 20 trials"
)

SCALINGS = (
    Reading(
        "batch-mean",
        "each mini-batch step uses the batch's mean gradient, (1/B)X_Sᵀ(X_Sθ − y_S): a pass over the "
        "n_i/B batches takes n_i/B steps as large as a full-gradient step (FedProx: the batch loss (1/2B)‖·‖²)",
        {"batch_scaling": "batch"},
    ),
    Reading(
        "client-share",
        "each mini-batch step uses the gradient of the batch's share of the client's loss, "
        "(1/n_i)X_Sᵀ(X_Sθ − y_S): one pass over the batches ≈ one full-gradient step (FedProx: (1/2n_i)‖·‖²)",
        {"batch_scaling": "client"},
    ),
)


def _figs():
    return load_module(_FIG)


def _runs(ctx, scale: str, B, seed: int = FIG_SEED):
    """The Section 6.1 runs at ``scale`` with batch size B (None: full batch), under the reading's scaling."""
    return _figs().section_6_1_runs(seed, scale, B, ctx.param("batch_scaling", "batch"))["runs"]


def _batch_sizes(scale: str):
    return _figs().SCALES[scale]["batch_sizes"]


def _rounds_to(err: np.ndarray, factor: float = 1.1) -> int:
    """First round after which the error stays within ``factor`` of its final value."""
    ok = err <= factor * err[-1]
    bad = np.nonzero(~ok)[0]
    return int(bad[-1] + 1) if bad.size else 0


def _final(runs, key, quantity):
    return float(runs[key][quantity][-1])


def _two_scales(
    *,
    id: str,
    paper_scale: str,
    reduced_scale: str,
    gap: str,
    expect: str = "verified",
    expect_reduced: str | None = None,
    record=None,
    **meta,
):
    """One statement checked twice: at the paper's scale (full tier, the plain id) and at a reduced scale (fast tier,
    ``<id>/reduced-scale``, ``substitute=gap``); ``fn(ctx, scale, seed)`` is the check and, with the stored scale
    and seed, the replay (it recomputes the figure's data). Every verdict closes its measured record with the scale
    (then ``record(ctx)``'s items) and carries the figure (``<paper>/figure-<n>`` of the id), scale and seed as its
    counterexample, what the replay recomputes."""
    controls = meta.pop("controls", ())
    exempt = meta.pop("control_exempt", None)
    figure = "/".join(id.split("/")[:2])

    def wrap(fn):
        def at_scale(ctx, scale, seed):
            evidence = fn(ctx, scale, seed)
            evidence.measured = {**evidence.measured, "scale": scale, **(record(ctx) if record else {})}
            evidence.counterexample = {"figure": figure, "scale": scale, "seed": seed}
            return evidence

        def replay(cex, ctx):
            return at_scale(ctx, cex["scale"], cex["seed"])

        made = []
        for cid, scale, tier, exp, sub in (
            (id, paper_scale, "full", expect, None),
            (id + "/reduced-scale", reduced_scale, "fast", expect_reduced or expect, gap),
        ):

            def check(ctx, _scale=scale):
                return at_scale(ctx, _scale, FIG_SEED)

            c = claim(id=cid, tier=tier, expect=exp, substitute=sub, controls=controls, control_exempt=exempt, **meta)(
                check
            )
            c.replayer(replay)
            made.append(c)
        return tuple(made)

    return wrap


def _scaling_record(ctx) -> dict:
    return {"batch_scaling": ctx.param("batch_scaling", "batch")}


#: a statement about Section 6.1's mini-batch runs (Figures 2–3), read under each mini-batch scaling (which its
#: record names)
_section_6_1 = functools.partial(
    _two_scales,
    paper_scale="paper",
    reduced_scale="medium",
    gap=_GAP_61,
    record=_scaling_record,
    kind="simulation",
    readings=SCALINGS,
)
#: a statement about Figure 5 (the subspace model)
_figure_5 = functools.partial(_two_scales, paper_scale="paper", reduced_scale="small", gap=_GAP_FIG5, kind="simulation")


# --------------------------------------------------------------------------------------------
# Figure 1 (full batch; the paper's scale in the fast tier)
# --------------------------------------------------------------------------------------------


@claim(
    id="nonparam/figure-1/stationarity",
    ref="Figure 1(a), Sections 1 and 6.1",
    title="FedAvg s = 1 drives ‖∇ℓ(θ_t)‖ to 0; FedProx and FedAvg s = 5, 10 stay well above 0",
    statement=r"While the gradient magnitude of FedAvg with $s=1$ quickly drops to 0, the gradient magnitudes under FedProx and FedAvg "
    r"with $s=5,10$ stay well above 0 (Fig. 1(a); 25 clients, $d=100$, $n_i=500$, noise $\mathcal N(0,0.25I)$, $\eta=0.1$).",
    kind="simulation",
    controls=[
        Control(
            "s5-reaches-zero",
            "the same statement with FedAvg s = 5 as the algorithm whose gradient drops to 0: "
            "false, since FedAvg with s > 1 local steps on clients with different empirical losses has a fixed "
            "point that is not a stationary point of ℓ (Pathak & Wainwright 2020; Section 1 of the paper)",
            {"zero_algorithm": ("fedavg", 5)},
        )
    ],
)
def figure_1_stationarity(ctx):
    runs = _runs(ctx, "paper", None)
    g0 = float(runs[("fedavg", 1)]["grad"][0])
    final = {f"{k}_s{s}": float(runs[(k, s)]["grad"][-1] / g0) for k, s in _ALGOS}
    zk, zs = ctx.param("zero_algorithm", ("fedavg", 1))
    zero = f"{zk}_s{zs}"
    ok = final[zero] <= 1e-10 and all(v >= 1e-5 for key, v in final.items() if key != zero)
    return ctx.decide(
        ok,
        measured={"final_relative_gradient": final, "scale": "paper"},
        tolerance={"zero": "≤ 1e-10 of the initial gradient", "above_zero": "≥ 1e-5 of the initial gradient"},
        notes="Runs through the LocalUpdate driver (FedProx: exact proximal steps, K to float64 resolution); "
        "ℓ(θ) = (1/N)Σ‖y_i − X_iθ‖² as in Section 6.1.",
    )


@claim(
    id="nonparam/figure-1/estimation-error",
    ref="Figure 1(b), Sections 1 and 6.1",
    title="All four reach almost the same ‖θ_t − θ^*‖ as FedAvg s = 1, and s = 5, 10 get there roughly s times faster",
    statement=r"Both FedAvg with $s=5,10$ and FedProx quickly converge to almost the same estimation error as FedAvg with $s=1$; the "
    r"convergence time of FedAvg with $s=5,10$ shrinks roughly by a factor of $s$ compared to $s=1$.",
    kind="simulation",
    controls=[
        Control(
            "speedup-s-squared",
            "the convergence time shrinking by s² instead of s: false, since a round of s "
            "local steps of size η contracts each eigendirection of a client's quadratic by at most (1 − ηλ)^s, "
            "s steps' worth, so the speed-up in rounds is at most about s (≤ 10 here, below s²/2 = 12.5, 50)",
            {"speedup_power": 2},
        )
    ],
)
def figure_1_error(ctx):
    runs = _runs(ctx, "paper", None)
    e1 = float(runs[("fedavg", 1)]["error"][-1])
    final_ratio = {f"{k}_s{s}": float(runs[(k, s)]["error"][-1] / e1) for k, s in _ALGOS}
    t1 = _rounds_to(runs[("fedavg", 1)]["error"])
    speedup = {f"s{s}": t1 / max(_rounds_to(runs[("fedavg", s)]["error"]), 1) for s in (5, 10)}
    power = ctx.param("speedup_power", 1)
    ok = all(abs(v - 1) <= 0.1 for v in final_ratio.values()) and all(
        s**power / 2 <= speedup[f"s{s}"] <= 2 * s**power for s in (5, 10)
    )
    return ctx.decide(
        ok,
        measured={
            "final_error_over_s1": final_ratio,
            "speedup_rounds_to_1.1x_final": speedup,
            "rounds_s1": t1,
            "scale": "paper",
        },
        tolerance={
            "same_error": "within 10% of FedAvg s = 1 (less than a line width on the paper's log axes, "
            "which span 2.5 decades)",
            "speedup": "between s/2 and 2s ('roughly s')",
        },
        notes="On one noise draw the four fixed points are different weighted least-squares estimators (weights P), "
        "so their errors differ by a few percent; their expected risks lie within a factor κ of each other.",
    )


# --------------------------------------------------------------------------------------------
# Figures 2–3 (mini-batches): the paper's scale in the full tier, a reduced one in the fast tier
# --------------------------------------------------------------------------------------------

_NOTES_SCALING = (
    "The paper does not say how a mini-batch step scales its gradient. With the batch mean (batch-mean) "
    "a client takes n_i/B full-size steps per pass (s·n_i/B per round): the incremental-gradient bias of "
    "steps η = 0.1 on batch Hessians whose top eigenvalue exceeds 1/η when B < d raises the plateaus of "
    "‖∇ℓ‖ and ‖θ − θ^*‖ several-fold and makes s = 1 converge in fewer rounds than full batch. With the "
    "batch's share of the client's loss (client-share) one pass is about one full-gradient step, and "
    "the figures' statements hold: they are not refuted, they depend on this reading."
)


@_section_6_1(
    id="nonparam/figure-2/s1-minibatch-not-stationary",
    ref="Figure 2, Section 6.1",
    title="With mini-batches, FedAvg s = 1's gradient magnitude rises significantly: it no longer reaches a stationary point",
    statement=r"For FedAvg $s=1$ with minibatch, its gradient magnitude rises up significantly and hence it can no longer reach the "
    r"stationary point.",
    controls=[
        Control(
            "full-batch",
            "the statement for a single batch B = n_i (full batch): false, since FedAvg s = 1 "
            "with full batch is gradient descent with η = 0.1 < 1/L on a strongly convex quadratic, which "
            "converges to the stationary point",
            {"full_batch_only": True},
        )
    ],
)
def figure_2_s1(ctx, scale, seed):
    full = _runs(ctx, scale, None, seed)
    g0 = float(full[("fedavg", 1)]["grad"][0])
    ratios = {}
    sizes = (None,) if ctx.param("full_batch_only", False) else _batch_sizes(scale)
    for B in sizes:
        ratios[str(B or "full")] = _final(_runs(ctx, scale, B, seed), ("fedavg", 1), "grad") / g0
    ok = all(r >= 1e-4 for r in ratios.values()) and _final(full, ("fedavg", 1), "grad") / g0 <= 1e-10
    return ctx.decide(
        ok,
        measured={"final_relative_gradient_by_batch": ratios},
        tolerance={"rises": "≥ 1e-4 of the initial gradient (full batch: ≤ 1e-10)"},
        notes="Mini-batches as Section 6.1 describes: a fixed partition per client, passed in order s times per round.",
    )


@_section_6_1(
    id="nonparam/figure-2/fedprox-tracks-s1",
    ref="Figure 2, Section 6.1",
    title="With mini-batches, FedProx's gradient magnitude mostly coincides with FedAvg s = 1's",
    statement=r"For FedProx with minibatch, its curve mostly coincides with that of FedAvg $s=1$.",
    controls=[
        Control(
            "full-batch",
            "the statement with full batches: false, since full-batch FedAvg s = 1 is gradient "
            "descent and reaches the stationary point while full-batch FedProx's fixed point is not stationary "
            "when the clients' minimisers differ (Pathak & Wainwright 2020), so their gradients differ by "
            "orders of magnitude",
            {"full_batch_only": True},
        )
    ],
)
def figure_2_fedprox(ctx, scale, seed):
    ratios = {}
    sizes = (None,) if ctx.param("full_batch_only", False) else _batch_sizes(scale)
    for B in sizes:
        r = _runs(ctx, scale, B, seed)
        ratios[str(B or "full")] = _final(r, ("fedprox", 1), "grad") / _final(r, ("fedavg", 1), "grad")
    ok = all(0.5 <= v <= 2 for v in ratios.values())
    return ctx.decide(
        ok,
        measured={"final_gradient_fedprox_over_fedavg_s1": ratios},
        tolerance={"coincides": "final gradient magnitudes within a factor 2 (a log-scale plot over ~4 decades)"},
    )


@_section_6_1(
    id="nonparam/figure-2/minibatch-stationarity",
    expect="reading-dependent",
    ref="Figure 2, Section 6.1",
    title="For FedAvg s = 5 and 10, the batch size's impact on the gradient magnitude is negligible",
    statement=r"As illustrated in Fig. 2, for $s=5$ and $s=10$ the impacts of different batch sizes on the gradient magnitude are negligible.",
)
def figure_2_local_steps(ctx, scale, seed):
    full = _runs(ctx, scale, None, seed)
    ratios = {}
    for B in _batch_sizes(scale):
        r = _runs(ctx, scale, B, seed)
        for s in (5, 10):
            ratios[f"B{B}_s{s}"] = _final(r, ("fedavg", s), "grad") / _final(full, ("fedavg", s), "grad")
    worst = max(max(v, 1 / v) for v in ratios.values())
    return ctx.decide(
        worst <= 2,
        measured={
            "final_gradient_minibatch_over_full": ratios,
            "worst_factor": worst,
        },
        tolerance={"negligible": "within a factor 2 of the full-batch plateau"},
        notes=_NOTES_SCALING,
    )


@_section_6_1(
    id="nonparam/figure-3/minibatch-estimation-error",
    expect="reading-dependent",
    ref="Figure 3, Section 6.1",
    title="Mini-batches have almost no effect on the estimation error: the final errors are almost identical",
    statement=r"The minibatch has almost no effect on the estimation error. The final estimation errors are almost identical in each of the "
    r"four figures in Fig. 3. The convergence speed of FedAvg $s=1$ only decreases a bit with minibatch.",
)
def figure_3(ctx, scale, seed):
    full = _runs(ctx, scale, None, seed)
    finals = {"full": {f"{k}_s{s}": _final(full, (k, s), "error") for k, s in _ALGOS}}
    speed = {"full": _rounds_to(full[("fedavg", 1)]["error"])}
    for B in _batch_sizes(scale):
        r = _runs(ctx, scale, B, seed)
        finals[str(B)] = {f"{k}_s{s}": _final(r, (k, s), "error") for k, s in _ALGOS}
        speed[str(B)] = _rounds_to(r[("fedavg", 1)]["error"])
    allv = [v for d in finals.values() for v in d.values()]
    spread = max(allv) / min(allv)
    slower = [speed[B] / max(speed["full"], 1) for B in speed if B != "full"]
    a_bit = all(1 <= v <= 1.5 for v in slower)
    ok = spread <= 1.25 and a_bit
    return ctx.decide(
        ok,
        measured={
            "final_errors": finals,
            "max_over_min_final_error": spread,
            "rounds_to_1.1x_final_fedavg_s1": speed,
        },
        tolerance={
            "almost_identical": "max/min of the final errors ≤ 1.25",
            "speed": "FedAvg s = 1 with mini-batches needs between 1 and 1.5 times the rounds of full "
            "batch ('only decreases a bit')",
        },
        notes=_NOTES_SCALING,
    )


# --------------------------------------------------------------------------------------------
# Figures 4–5 (federation gains)
# --------------------------------------------------------------------------------------------


def _gain_series(data):
    out = {}
    for ip, p in enumerate(data["panels"]):
        for s in p["series"]:
            if s["params"].get("reference"):
                continue
            out[("scarce" if ip == 0 else "rich", s["params"]["kind"], s["params"]["s"])] = (
                np.array(s["x"]),
                np.array(s["y"]),
            )
    return out


def _crossing(x, y) -> float:
    """Γ where FG crosses 1 (log-linear interpolation)."""
    idx = np.nonzero((y[:-1] >= 1) & (y[1:] < 1))[0]
    if not idx.size:
        return float("nan")
    i = idx[0]
    lx, ly = np.log(x[i : i + 2]), np.log(y[i : i + 2])
    return float(np.exp(lx[0] + (0 - ly[0]) * (lx[1] - lx[0]) / (ly[1] - ly[0])))


_FIG4: dict = {}


def _fig4_data(seed: int, scale: str, heterogeneity: str) -> dict:
    key = (seed, scale, heterogeneity)
    if key not in _FIG4:
        _FIG4[key] = _figs().figure_4_data(seed, scale, heterogeneity)
    return _FIG4[key]


GENERATORS = (
    Reading(
        "gaussian",
        "θ_i^* = θ^* + h_i, h_i i.i.d. Gaussian rescaled so that max_{i,k}‖θ_i^* − θ_k^*‖ = Γ (most clients "
        "sit well inside that diameter)",
        {"heterogeneity": "gaussian"},
    ),
    Reading(
        "simplex",
        "every pair of clients at distance exactly Γ (a regular simplex of truths)",
        {"heterogeneity": "simplex"},
    ),
    Reading(
        "two-clusters",
        "two clusters of truths Γ apart, each holding half the data-scarce and half the data-rich clients",
        {"heterogeneity": "two-clusters"},
    ),
    Reading(
        "isolated",
        "the plotted client keeps θ^* and every other client sits at distance Γ from it (sharing one "
        "truth): the plotted client's truth keeps ‖θ_j^*‖ ≈ √d ≈ 10, as the text's threshold assumes",
        {"heterogeneity": "isolated"},
    ),
)


def _fig4(ctx, seed: int = FIG_SEED):
    return _fig4_data(seed, "paper", ctx.param("heterogeneity", "gaussian"))


@claim(
    id="nonparam/figure-4/gain-versus-heterogeneity",
    ref="Figure 4, Section 6.2",
    title="Federation gains: FedAvg (s = 1, 5, 10) and FedProx nearly indistinguishable; FG drops with Γ; scarce client ≫ rich client",
    statement=r"The models trained under FedAvg with different $s$ and under FedProx have almost indistinguishable federation gains; the "
    r"federation gain drops with increasing model heterogeneity $\Gamma$, while that of the data-scarce client is much higher than "
    r"that of the data-rich client.",
    kind="simulation",
    expect="reading-dependent",
    readings=GENERATORS,
    controls=[
        Control(
            "rich-over-scarce",
            "the data-rich client's gain much higher than the data-scarce client's: false, "
            "since at equal federated risk the scarce client's local minimax risk (≥ (1 − n_j/d)B² ≈ 50 for "
            "n_j = 50 < d) exceeds the rich client's (≈ σ²d/n_j = 0.05) by orders of magnitude",
            {"swap_clients": True},
        )
    ],
)
def figure_4_qualitative(ctx):
    ser = _gain_series(_fig4(ctx))
    hi, lo = ("rich", "scarce") if ctx.param("swap_clients", False) else ("scarce", "rich")
    spread, rise, gap = 0.0, 0.0, np.inf
    for who in ("scarce", "rich"):
        ys = np.stack([ser[(who, k, s)][1] for k, s in _ALGOS])
        spread = max(spread, float(np.max(ys.max(0) / ys.min(0))))
        # "drops with Γ": no value exceeds the running minimum of the smaller Γ by more than 10% (at Γ ≪ ‖θ^*‖ the
        # truths barely move, and the local benchmark's bias ‖(I − Π_j)θ_j^*‖² may wobble with the direction of h_j)
        run_min = np.minimum.accumulate(ys, axis=1)
        rise = max(rise, float(np.max(ys[:, 1:] / run_min[:, :-1])))
    mono = rise <= 1.1 and all(
        ser[(w, k, s)][1][-1] <= ser[(w, k, s)][1][0] / 100 for w in ("scarce", "rich") for k, s in _ALGOS
    )
    for k, s in _ALGOS:
        gap = min(gap, float(np.min(ser[(hi, k, s)][1] / ser[(lo, k, s)][1])))
    ok = spread <= 1.1 and mono and gap >= 2
    return ctx.decide(
        ok,
        measured={
            "max_ratio_across_algorithms": spread,
            "max_rise_over_running_min": rise,
            "drops": mono,
            f"min_{hi}_over_{lo}": gap,
        },
        tolerance={
            "indistinguishable": "max/min across algorithms ≤ 1.1 at every Γ",
            "much_higher": "≥ 2× at every Γ",
            "drops": "never 10% above the running minimum, and ≥ 100× smaller at the largest Γ than at the smallest",
        },
        notes="R^Fed is minimised over integer rounds t, as (31) prescribes. Under the isolated generator the "
        "optimum at Γ ≈ 10 falls within a few rounds, where FedAvg s = 10's coarser step per round "
        "misses it: the algorithms' gains then differ by up to ~1.3–1.5× (the same in every design draw "
        "tried), beyond 'almost indistinguishable'; the other generators keep them within 5%.",
    )


_NOTES_FIG4 = (
    "The crossing of FG = 1 depends on how the θ_i^* with a given max pairwise distance Γ are drawn, which the "
    "paper does not say: how far the plotted client sits from the federated consensus, and how its own ‖θ_j^*‖ "
    "(hence its local risk (1 − n_j/d)‖θ_j^*‖²) grows with Γ. The evidence lists each generator's crossings; "
    "FG is Definition 1's, with R^Fed minimised over t as (31) prescribes."
)


_CROSS_META = dict(
    ref="Figure 4, Section 6.2",
    title="FG drops below 1 at Γ ≈ 7.5 (scarce) and Γ ≈ 0.3 (rich), closely matching the thresholds ≈ 7 and ≈ 0.22 after Theorem 5",
    statement=r"The federation gain of a data scarce client drops below 1 at $\Gamma\approx7.5$, whereas that of a data rich client drops "
    r"below 1 at $\Gamma\approx0.3$, closely matching the predicted thresholds $\sqrt{1-n_j/d}\|\theta_j^*\|_2\approx7$ and "
    r"$\sigma\sqrt{d/n_j}\approx0.22$.",
    kind="simulation",
    readings=GENERATORS,
)
#: design draws whose median crossing the paper-scale check takes (the paper's figure is one random draw; a single
#: draw's scarce crossing varies by ±50% between draws, so one draw cannot decide "≈ 7.5" either way)
CROSSING_DRAWS = 8


def _crossings(data) -> dict:
    ser = _gain_series(data)
    return {who: float(np.median([_crossing(*ser[(who, k, s)]) for k, s in _ALGOS])) for who in ("scarce", "rich")}


def _decide_crossings(ctx, cross: dict, thr: dict, cex: dict, extra: dict):
    """The paper's values within [2/3, 3/2]; the crossings beside Theorem 5's thresholds."""
    paper = {"scarce": 7.5, "rich": 0.3}
    vs_paper = {w: cross[w] / paper[w] for w in cross}
    vs_theory = {w: cross[w] / thr[w] for w in cross}
    ok = all(2 / 3 <= v <= 1.5 for v in vs_paper.values())
    return ctx.decide(
        ok,
        measured={
            "crossings": cross,
            "over_paper_values": vs_paper,
            "over_theorem_5_thresholds": vs_theory,
            "thresholds": thr,
            **extra,
        },
        tolerance={
            "approx": "crossing within [2/3, 3/2] of the paper's 7.5 and 0.3 (the text calls 0.3 vs "
            "0.22, a ratio 1.36, 'closely matching')"
        },
        counterexample={**cex, "heterogeneity": ctx.param("heterogeneity", "gaussian")},
        notes=_NOTES_FIG4,
    )


@claim(id="nonparam/figure-4/crossing-points", expect="reading-dependent", **_CROSS_META)
def figure_4_crossings(ctx, seeds=None):
    """The median over CROSSING_DRAWS single design draws (seeds 0, 1, …) of each draw's crossing."""
    seeds = list(range(CROSSING_DRAWS)) if seeds is None else list(seeds)
    figs, gen = _figs(), ctx.param("heterogeneity", "gaussian")
    per_draw = {"scarce": [], "rich": []}
    thr = None
    for seed in seeds:
        data = figs.figure_4_data(seed, "single-draw", gen)
        thr = thr or data["params"]["thresholds"]
        for who, v in _crossings(data).items():
            per_draw[who].append(v)
    cross = {who: float(np.median(v)) for who, v in per_draw.items()}
    return _decide_crossings(
        ctx,
        cross,
        thr,
        {"figure": "nonparam/figure-4", "scale": "single-draw", "seeds": seeds},
        {"per_draw_crossings": per_draw, "statistic": f"median over {len(seeds)} design draws"},
    )


@figure_4_crossings.replayer
def _(cex, ctx):
    return figure_4_crossings.check(ctx, cex["seeds"])  # recomputes every stored draw's figure data


_FIG5: dict = {}


def _fig5_data(seed: int, scale: str) -> dict:
    if (seed, scale) not in _FIG5:
        _FIG5[(seed, scale)] = _figs().figure_5_data(seed, scale)
    return _FIG5[(seed, scale)]


@_figure_5(
    id="nonparam/figure-5/gain-versus-subspace-dimension",
    ref="Figure 5, Section 6.3",
    title="Subspace model: gains nearly identical across algorithms, scarce ≈ rich up to r ≈ 27, a jump as r crosses d log d/M, and a "
    "rich client's gain falls as r → d",
    statement=r"For any fixed $r$ the federation gains of FedAvg $s=1,5,10$ and FedProx are almost identical; up to $r\approx27$ the curves of "
    r"the data-scarce and data-rich clients are roughly the same; both jump significantly as $M r$ reaches $d\log d$ ($r\approx16$ to "
    r"$23$); the data-rich client's gain first increases and then quickly decreases as $r$ approaches 100.",
    controls=[
        Control(
            "same-at-r-100",
            "the data-scarce and data-rich curves roughly the same (within 2×) at r = 100 instead "
            "of r ≤ 27: false, since at r = d both share R^Fed while their local minimax risks differ ≈ 800-fold: "
            "≥ (1 − n_j/d)‖θ^*‖² ≈ 50 for n_j = 50 against σ²d/(n_j − d − 1) ≈ 0.06 for n_j = 500 (Mourtada 2019)",
            {"same_r": (100, 100)},
        )
    ],
)
def figure_5_qualitative(ctx, scale, seed):
    ser = _gain_series(_fig5_data(seed, scale))
    r = ser[("scarce", "fedavg", 1)][0]
    spread = 0.0
    for who in ("scarce", "rich"):
        ys = np.stack([ser[(who, k, s)][1] for k, s in _ALGOS])
        spread = max(spread, float(np.max(ys.max(0) / ys.min(0))))
    sc, ri = ser[("scarce", "fedavg", 1)][1], ser[("rich", "fedavg", 1)][1]
    lo_r, hi_r = ctx.param("same_r", (0, 27))
    low = (r >= lo_r) & (r <= hi_r)
    same = float(np.max(np.maximum(sc[low] / ri[low], ri[low] / sc[low])))
    before, after = float(np.max(sc[r <= 12])), float(np.min(sc[(r >= 27) & (r <= 60)]))
    jump = after / before
    falling = ri
    peak = int(np.argmax(falling))
    falls = 0 < peak < len(r) - 1 and falling[-1] <= falling[peak] / 10
    ok = spread <= 1.1 and same <= 2 and jump >= 100 and falls
    return ctx.decide(
        ok,
        measured={
            "max_ratio_across_algorithms": spread,
            f"max_scarce_rich_ratio_r_{lo_r}_to_{hi_r}": same,
            "jump_factor_r12_to_r27": jump,
            "peak_r": int(r[peak]),
            "gain_at_r_100_over_peak": float(falling[-1] / falling[peak]),
        },
        tolerance={
            "identical": "≤ 1.1",
            "roughly_same": "within 2×",
            "jump": "≥ 100× between r ≤ 12 and r ∈ [27, 60]",
            "falls": "rich gain at r = 100 ≤ peak/10 with an interior peak",
        },
        notes="The coupon-collector threshold d log d/M = 23 for M = 20, d = 100: with fewer coordinates covered by "
        "the union of the clients' subspaces, θ^* is not identifiable by the federation.",
    )


NORMALISATIONS = (
    Reading("squared", "FG as Definition 1: the ratio of mean squared errors R^Loc/R^Fed", {"power": 1.0}),
    Reading(
        "unsquared",
        "the ratio of root-mean-square errors √(R^Loc/R^Fed), the unsquared ‖θ̂ − θ^*‖₂ the paper's "
        "Figures 1 and 3 plot",
        {"power": 0.5},
    ),
)

_NOTES_FIG5 = (
    "With FG as in Definition 1 (a ratio of mean squared errors) the plateau is ≈ 1e4: R^Loc ≈ (1 − n_j/d)‖θ^*‖² "
    "≈ 50 (n_j = 50 < d) over R^Fed ≈ σ²d/N ≈ 0.005; a ratio of 107 in squared errors would need R^Fed ≈ 0.47, "
    "far above the σ²d/N the federated model attains. Its square root, the ratio of unsquared errors, is ≈ 107: "
    "the figure evidently plots that."
)


@_figure_5(
    id="nonparam/figure-5/scarce-plateau",
    expect="reading-dependent",
    ref="Figure 5(a), Section 6.3",
    title="A data-scarce client's federation gain increases with r and then stabilizes around 107",
    statement=r"For a data scarce client, as $r$ increases, the federation gain first increases and then stabilizes around 107.",
    readings=NORMALISATIONS,
)
def figure_5_plateau(ctx, scale, seed):
    ser = _gain_series(_fig5_data(seed, scale))
    r, sc = ser[("scarce", "fedavg", 1)]
    sc = sc ** ctx.param("power", 1.0)
    plateau = float(np.median(sc[r >= 40]))
    stable = float(np.max(sc[r >= 40]) / np.min(sc[r >= 40]))
    ok = 107 / 2 <= plateau <= 107 * 2
    return ctx.decide(
        ok,
        measured={"plateau": plateau, "max_over_min_for_r_ge_40": stable},
        tolerance={"around": "within a factor 2 of 107"},
        notes=_NOTES_FIG5,
    )


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
    control_exempt="a description of one computed figure (similar curves, straight reciprocals, s = 10 the smallest "
    "slope): no variant of it is known false independently of this computation",
)
def figure_6(ctx):
    data = _figs().figure_6_data(FIG_SEED, "paper")
    mse = {
        (s["params"]["kind"], s["params"]["s"]): (np.array(s["x"]), np.array(s["y"]))
        for s in data["panels"][0]["series"]
    }
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
    ok = (
        similar <= 1.25
        and min(r2.values()) >= 0.95
        and sl.max() / sl.min() <= 1.25
        and slopes[("fedavg", 10)] == sl.min()
    )
    return ctx.decide(
        ok,
        measured={
            "max_ratio_across_algorithms": similar,
            "min_r2_linear_fit_of_1_over_mse": min(r2.values()),
            "slopes": {f"{k}_s{s}": v for (k, s), v in slopes.items()},
        },
        tolerance={
            "similar": "≤ 1.25",
            "straight": "R² ≥ 0.95",
            "similar_slopes": "max/min ≤ 1.25",
            "s10": "the smallest slope",
        },
        notes="Exact expectation over the noise of the converged federated model (the figure's recorded choice).",
    )


@claim(
    id="nonparam/figure-sobolev-rate/bounds-hold",
    ref="New figure (1/t rate on the Sobolev kernel); Lemma 6, Theorem 1",
    title="On the new figure's data: measured bias ≤ worst case over the unit ball ≤ κ/(2eηts), and E‖f_t − f^*‖² ≤ Theorem 1's bound for t ≤ T",
    statement=r"For the first-order Sobolev kernel: $\|f_t-f^*\|_N^2\le\|L^tK_{\mathbf x}L^{t\top}\|_2\|f^*\|_{\mathcal H}^2\le\frac{\kappa}{2e\eta ts}$ "
    r"($\|f^*\|_{\mathcal H}=1$, $\sigma=0$) and, with noise, Theorem 1's bound up to $T$.",
    kind="simulation",
    control_exempt="the project's own figure: the chain measured ≤ worst case ≤ bound is tight only asymptotically and "
    "at the unit ball's extremal truth, not at this figure's fixed truth, so no tightened constant is "
    "known to be false for it",
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
