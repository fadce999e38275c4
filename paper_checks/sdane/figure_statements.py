r"""Jiang, Rodomanov & Stich (arXiv:2407.07084): the text's statements about Figures 1–5, checked on the
figures' own data (``figures/sdane.py``'s data functions; never files from --out). The inventory is in
``sdane.py``. Figures 3–5 use a CPU scale or substitute data (the figures say so), so a statement found
false here is a statement about that setting, not a refutation of the paper's runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fedtheory.claims.core import claim
from fedtheory.claims.figures import figure_data
from fedtheory.content import load_module

H = load_module(Path(__file__).with_name("definitions_and_lemmas.py"))
FIGURES = Path(__file__).resolve().parents[2] / "figures" / "sdane.py"


def _figure_data(ctx, name):
    """The data of figure ``name`` as ``fedtheory figures`` plots it at the claim's seed and tier."""
    return figure_data(FIGURES, name, seed=ctx.seed, tier=ctx.tier)


def _refuted_unless(ctx, ok: bool, measured: dict, counterexample: dict, verified_notes: str, refuted_notes: str):
    """``verified`` (with ``verified_notes``) when ``ok``, else ``refuted`` with the replayable ``counterexample``
    and ``refuted_notes`` (the finding): the check's and its replay's verdict."""
    if ok:
        return ctx.verified(measured=measured, notes=verified_notes)
    return ctx.refuted(measured=measured, counterexample=counterexample, notes=refuted_notes)


#: what a replay that no longer refutes says
_NO_LONGER_REFUTES = "the stored configuration no longer refutes"

#: why a statement read off one figure declares no control
READ_OFF_ONE_FIGURE = (
    "a comparison of methods read off one regenerated figure: the figure is the only evidence about "
    "these runs, so no variant of the statement is known false independently of this run"
)
#: what a claim whose statement is read off one regenerated figure declares
READ_OFF_THE_FIGURE = {"kind": "simulation", "control_exempt": READ_OFF_ONE_FIGURE}


def _series(data, panel_index):
    return {s["label"]: (np.asarray(s["x"]), np.asarray(s["y"])) for s in data["panels"][panel_index]["series"]}


def _first_x_below(xy, level):
    x, y = xy
    hit = np.flatnonzero(y <= level)
    return float(x[hit[0]]) if hit.size else np.inf


@claim(
    id="sdane/figure-1/text",
    ref="Figure 1",
    **READ_OFF_THE_FIGURE,
    title="Figure 1: S-DANE converges as fast as DANE in rounds with far fewer local oracle calls; Acc-S-DANE is best in both",
    statement=r"``S-DANE converges as fast as DANE in terms of communication rounds, but with much fewer local gradient oracle "
    r"calls. Acc-S-DANE achieves the best performance among the three methods.''",
)
def figure_1_text(ctx):
    data = _figure_data(ctx, "figure_1")
    rounds, calls = _series(data, 0), _series(data, 1)
    level = 1.5 * max(float(y[-1]) for _, y in rounds.values())  # a level every method reaches
    r = {k: _first_x_below(v, level) for k, v in rounds.items()}
    c = {k: _first_x_below(v, level) for k, v in calls.items()}
    ok = (
        r["S-DANE"] <= 1.25 * r["DANE"]
        and c["S-DANE"] <= 0.5 * c["DANE"]
        and r["Acc-S-DANE"] <= min(r["S-DANE"], r["DANE"])
        and c["Acc-S-DANE"] <= min(c["S-DANE"], c["DANE"])
    )
    return ctx.decide(
        ok,
        measured={
            "level": level,
            "rounds_to_level": r,
            "oracle_calls_to_level": c,
            "sdane_over_dane_rounds": r["S-DANE"] / r["DANE"],
            "sdane_over_dane_calls": c["S-DANE"] / c["DANE"],
        },
        tolerance={"as fast": "S-DANE's rounds ≤ 1.25× DANE's", "much fewer": "S-DANE's calls ≤ ½ DANE's"},
        notes="Read at the level 1.5× the worst final gap (every method reaches it). The paper's data: the same "
        "problem family and the paper's n, m, d, λ; 100 rounds in the fast tier. The statement is the "
        "paper's words (no rebuilt formula); confirmed on this regeneration.",
    )


@claim(
    id="sdane/figure-2/text",
    ref="Figure 2",
    **READ_OFF_THE_FIGURE,
    title="Figure 2: with the same fixed number of local steps, S-DANE is more efficient than DANE",
    statement=r"``We also test S-DANE and DANE with the same fixed number of local steps. [...] S-DANE is again more efficient.''",
)
def figure_2_text(ctx):
    data = _figure_data(ctx, "figure_2")
    finals = {}
    for k, p in enumerate(data["panels"]):
        s = _series(data, k)
        finals[p["title"]] = {m: float(y[-1]) for m, (x, y) in s.items()}
    ok = all(v["S-DANE"] < v["DANE"] for v in finals.values())
    return ctx.decide(
        ok,
        measured={"final_gaps": finals},
        notes="Final f(x^R) − f* of each method in each fixed-K panel (K = 10 and 50 local GD steps; the "
        "paper's K was lost). The statement is the paper's words; confirmed on this regeneration.",
    )


FIGURE_3_SUBSTITUTE = (
    "CPU scale: N = 1000 constraints in R^100, R = 5, instead of the paper's N = 10⁴, d = 10³, R = 10⁶"
)


@claim(
    id="sdane/figure-3/full-participation",
    ref="Figure 3",
    substitute=FIGURE_3_SUBSTITUTE,
    **READ_OFF_THE_FIGURE,
    title="Figure 3 (n = 10, full participation): S-DANE and Acc-S-DANE are the best of all methods",
    statement=r"``Our proposed methods are consistently the best among all these algorithms'' (GD, DANE-GD, Scaffold, "
    r"Scaffnew, FedProx-GD, Acc-Extragradient; full participation, n = 10).",
)
def figure_3_full(ctx):
    data = _figure_data(ctx, "figure_3")
    full = {m: float(y[-1]) for m, (x, y) in _series(data, 0).items()}
    ranked = sorted(full, key=full.get)
    ok = set(ranked[:2]) == {"S-DANE", "Acc-S-DANE"}
    return ctx.decide(
        ok,
        measured={"ranking": ranked, "final_gaps": full},
        notes="CPU scale (see the figure's params). 'Best' = the two smallest final f − f*. The statement is "
        "the paper's words; confirmed at this scale in both tiers.",
    )


def _sampling_speedups(seed, tier):
    """Acc-S-DANE's speed-up over S-DANE in rounds, per s, at the levels both reach (Figure 3's sampled panels)."""
    data = figure_data(FIGURES, "figure_3", seed=seed, tier=tier)
    out = {}
    for k in range(1, len(data["panels"])):
        s = _series(data, k)
        floor = max(float(np.min(s["S-DANE"][1])), float(np.min(s["Acc-S-DANE"][1])))
        levels = [lv for lv in 10.0 ** -np.arange(1, 13) if lv >= floor]
        speed = {f"{lv:.0e}": _first_x_below(s["S-DANE"], lv) / _first_x_below(s["Acc-S-DANE"], lv) for lv in levels}
        out[data["panels"][k]["title"]] = {
            "speedup_by_level": speed,
            "final_S-DANE": float(s["S-DANE"][1][-1]),
            "final_Acc-S-DANE": float(s["Acc-S-DANE"][1][-1]),
            "speedup_at_deepest_common_level": speed[min(speed, key=lambda k: float(k))],
        }
    return out


def _sampling_verdict(seed, tier):
    """Whether the speed-up at s = 10 is the smallest (s = 80, 40, 10), and the measured record."""
    out = _sampling_speedups(seed, tier)
    sp = [v["speedup_at_deepest_common_level"] for v in out.values()]  # s = 80, 40, 10
    return sp[-1] < min(sp[:-1]), {"by_s": out, "speedups_80_40_10": sp}


CLIENT_SAMPLING_NOTES = (
    "Full-tier configuration of Figure 3 (n = 100 clients of 10 constraints, 200 rounds, λ the best of {0.3, 1, 3} per "
    "method and s, as the paper tunes λ on a grid). Acc-S-DANE's speed-up over S-DANE (rounds to the same f − f*) does not "
    "shrink as s decreases; at s = 10 S-DANE does not even reach the levels Acc-S-DANE reaches. A finding about this "
    "regeneration (CPU scale N = 1000, d = 100, R = 5), not about the paper's run: the feasibility problem interpolates "
    "(x* is feasible for every client, so ∇f_i(x*) = 0 and the gradient variance ζ²(x) vanishes at the solution), hence "
    "Theorem 7's sampling term σ_s²/(2γ) — the reason the advantage should vanish — fades near x* here. The replay re-runs "
    "the figure's sampled panels from the stored seed (a float64 simulation; the margins are far above rounding)."
)


@claim(
    id="sdane/figure-3/client-sampling",
    ref="Figure 3",
    kind="simulation",
    tier="full",
    expect="not-reproduced",
    substitute=FIGURE_3_SUBSTITUTE,
    title="Figure 3 (n = 100, s ∈ {80, 40, 10}): Acc-S-DANE's improvement over S-DANE does not disappear as s decreases",
    statement=r"``We decrease the number of sampled clients from 80 to 10 [...] the improvement of Acc-S-DANE over S-DANE "
    r"gradually disappears as s decreases'' — read as: the speed-up in rounds at s = 10 is below those at s = 80 "
    r"and s = 40.",
)
def figure_3_sampling(ctx):
    ok, measured = _sampling_verdict(ctx.seed, "full")
    cex = {"seed": ctx.seed, "tier": "full", "speedups_80_40_10": measured["speedups_80_40_10"]}
    return _refuted_unless(ctx, ok, measured, cex, "the speed-up at s = 10 is the smallest", CLIENT_SAMPLING_NOTES)


@figure_3_sampling.replayer
def _replay_figure_3_sampling(cex, ctx):
    ok, measured = _sampling_verdict(int(cex["seed"]), cex["tier"])
    return _refuted_unless(ctx, ok, measured, cex, _NO_LONGER_REFUTES, CLIENT_SAMPLING_NOTES)


def _figure_4_verdict(seed):
    data = figure_data(FIGURES, "figure_4", seed=seed, tier="full")
    acc = _series(data, 0)
    name = next(k for k in acc if k.startswith("S-DANE"))
    best = {k: float(np.max(y)) for k, (x, y) in acc.items()}
    others = max(v for k, v in best.items() if k != name)
    first = {k: _first_x_below((x, -y), -others) for k, (x, y) in acc.items()}
    lr = {s["label"]: s["params"].get("lr") for s in data["panels"][0]["series"]}
    ok = best[name] >= others and first[name] <= min(first.values())
    never = {k: (v if np.isfinite(v) else None) for k, v in first.items()}  # None: never reached in the run
    return ok, {"best_accuracy": best, "rounds_to_others_best": never, "tuned_lr": lr}


FIGURE_4_NOTES = (
    "Substitute setting (digits, an MLP 64-32-10, 10 clients by Dirichlet(0.5), full local batches, 40 rounds; every "
    "method's step the best of {0.1, 0.2, 0.4}): S-DANE without control variate (θ = 0.99, η = the local step, λ = 1e-3) "
    "beats FedAvg/FedProx early, but Scaffold and Scaffnew reach higher test accuracy. The paper's premise — control "
    "variates make deep-network training less efficient (CIFAR-10/ResNet-18) — does not hold on this small convex-like "
    "task, so the statement fails here; it is a finding about the substitute, not about the paper's run. The replay "
    "re-computes the figure from the stored seed (float64 torch; margins ≥ 0.8 accuracy points)."
)


@claim(
    id="sdane/figure-4/text",
    ref="Figure 4",
    kind="simulation",
    tier="full",
    requires=("torch",),
    expect="not-reproduced",
    substitute="scikit-learn's digits and a small network (MLP 64-32-10) on CPU, 40 rounds, instead of CIFAR-10 and "
    "ResNet-18",
    title="Figure 4 (substitute): S-DANE without control variate does not reach the best accuracy on digits",
    statement=r"``S-DANE reaches [X]% accuracy within 50 communication rounds while all the other methods are still below "
    r"[X]% after [Y] epochs'' (the numbers were lost in conversion; checked as: S-DANE's best test accuracy within "
    r"the run is the highest, and it reaches the others' best accuracy first).",
)
def figure_4_text(ctx):
    ok, measured = _figure_4_verdict(ctx.seed)
    first = "S-DANE attains the highest accuracy first on the substitute"
    return _refuted_unless(ctx, ok, measured, {"seed": ctx.seed}, first, FIGURE_4_NOTES)


@figure_4_text.replayer
def _replay_figure_4(cex, ctx):
    ok, measured = _figure_4_verdict(int(cex["seed"]))
    return _refuted_unless(ctx, ok, measured, cex, _NO_LONGER_REFUTES, FIGURE_4_NOTES)


#: gradient norms below this fraction of the largest initial ‖∇f(x⁰)‖ are rounding (1e3·eps): figure 5's check ranks
#: no two runs there
_GRAD_RESOLUTION = 1e3 * float(np.finfo(np.float64).eps)


@claim(
    id="sdane/figure-5/text",
    ref="Figure 5",
    **READ_OFF_THE_FIGURE,
    substitute="a make_classification set shaped like LIBSVM's ijcnn1 (22 features, ~9.7 % positives) instead of "
    "ijcnn1 itself",
    title="Figure 5 (substitute): S-DANE with adaptive λ converges faster than the best-tuned baselines",
    statement=r"``S-DANE with adaptive λ converges much faster than the other best-tuned algorithms'' (ℓ2-logistic regression, "
    r"10 clients, i.i.d. and non-i.i.d. splits).",
)
def figure_5_text(ctx):
    data = _figure_data(ctx, "figure_5")
    out = {}
    ok = True
    for k, p in enumerate(data["panels"]):
        s = _series(data, k)
        name = next(m for m in s if m.startswith("S-DANE"))
        # below the float64 resolution of ‖∇f‖ two runs cannot be ranked: such final values count as equal (at
        # seed 1 S-DANE and Scaffold both ended near 1e-15 and rounding alone decided the order)
        floor = _GRAD_RESOLUTION * max(float(y[0]) for x, y in s.values())
        final = {m: max(float(y[-1]), floor) for m, (x, y) in s.items()}
        best_other = min(v for m, v in final.items() if m != name)
        # rounds S-DANE needs to reach the best baseline's final gradient norm (the baselines need all the rounds)
        r = _first_x_below(s[name], best_other)
        rounds = float(max(x[-1] for x, y in s.values()))
        out[p["title"]] = {
            "final_grad_norms": final,
            "sdane_rounds_to_best_baseline_final": r,
            "rounds": rounds,
            "resolution_floor": floor,
        }
        ok &= final[name] <= best_other and r < rounds
    return ctx.decide(
        ok,
        measured=out,
        notes="'Converges faster' is read as: S-DANE ends with the smallest ‖∇f‖ and reaches the best-tuned "
        "baseline's final ‖∇f‖ in fewer rounds than the run's length (final values below 1e3·eps·"
        "‖∇f(x⁰)‖ count as equal: float64 cannot rank them); baselines best-tuned on the "
        "figure's grids. Substitute data (see the figure); the adaptive rule is the rebuilt one "
        "(factor 1). Confirmed on the substitute. Seed sensitivity (surveyed over figure seeds 0–5): "
        "on the non-IID split S-DANE is always clearly ahead; on the IID split best-tuned Scaffold is close "
        "(ahead at 1e-6·‖∇f(x^0)‖ for seed 0, tied at 1e-10), S-DANE ahead for seeds 1–5.",
    )
