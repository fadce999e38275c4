"""The text's statements about Figures 6, 11, 12 and 13 of Charles & Konečný, *Convergence and Accuracy
Trade-Offs in Federated Learning and Meta-Learning* (arXiv:2103.05032), checked on the figures' data.

The paper's figures train networks on FEMNIST, CIFAR-100 and Shakespeare; ours train a small MLP on
scikit-learn's digits split across clients (figures/localupdate_training.py says exactly how). Every
claim here calls the figure's data function and checks the statement on that data: a verdict is a
verdict about the substitute, not about the paper's data sets. Every claim names its gap to the paper's
setting (``substitute=``); a statement that fails on digits is ``not-reproduced`` (counterexample = the
figure and seed, replayed by retraining), never ``refuted``: it says nothing against the paper's
FEMNIST/CIFAR-100/Shakespeare curves.

Every claim about one figure reads the figure as ``fedtheory figures`` draws it by default (seed
``derive_seed(0, figure id)``), so all claims about a figure share one set of training runs (the
figure module caches them) and check the very curves the published PNG shows. The check's own seed
is not used: a second seed would mean training the whole figure again per claim.

Effect sizes on test accuracy are judged against the binomial standard error of a test accuracy a on
the n held-out digits, SE = sqrt(a(1-a)/n) (about 0.0095 for a = 0.967, n = 360): a difference within
2 SE is not detectable on this test set ("little to no effect"), one beyond 2 SE is an effect.
Training losses are compared with a relative tolerance of 1 %: two runs whose tail losses differ by
less than that are taken as tied.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from fedtheory.analysis.evaluation import rounds_to_reach
from fedtheory.claims.core import claim, derive_seed
from fedtheory.content import load_module
from fedtheory.plotting.spec import FigureContext

FIGURES = load_module(Path(__file__).resolve().parents[2] / "figures" / "localupdate_training.py")
FIGURE_BY_ID = {f.id: f for f in (FIGURES.figure_6, FIGURES.figure_11, FIGURES.figure_12, FIGURES.figure_13)}

#: effects on test accuracy are measured in binomial standard errors of the test accuracy
SE_MULTIPLE = 2.0
#: relative tolerance under which two tail training losses count as tied
LOSS_TIE = 0.01
#: "initially": the first half of a figure's rounds (1..R/2); "eventually": its last tail_rounds rounds
INITIAL_FRACTION = 0.5

SUBSTITUTE_NOTE = (
    "Checked on the substitute (digits, small MLP; see the figure's substitute sentence and params), "
    "not on the paper's data: a failure here (not-reproduced) means the statement does not carry over "
    "to this "
    "stand-in, and is no evidence against the paper's curves."
)


def figure_seed(fig_id: str) -> int:
    """The seed ``fedtheory figures`` gives the figure at its default run seed 0."""
    return derive_seed(0, fig_id)


@functools.lru_cache(maxsize=8)
def _figure_data(fig_id: str, seed: int, backend: str, device: str | None) -> dict:
    return FIGURE_BY_ID[fig_id].data(FigureContext(seed=seed, tier="full", backend=backend, device=device))


def figure_data(fig_id: str, ctx, seed: int | None = None) -> dict:
    """The figure's data function at ``seed`` (default: the figure's own seed), cached per process."""
    return _figure_data(fig_id, figure_seed(fig_id) if seed is None else int(seed), ctx.backend, ctx.device)


def _series(panel: dict) -> dict:
    return {s["label"]: s for s in panel["series"]}


def _mean_accuracy(s: dict) -> float:
    """Mean test accuracy over rounds 1..R: the area under the accuracy curve, a convergence-speed summary."""
    return float(np.nanmean(np.asarray(s["y"][1:], dtype=float)))


def _standard_error(accuracy: float, n_test: int) -> float:
    return math.sqrt(max(accuracy * (1.0 - accuracy), 0.0) / n_test)


# --------------------------------------------------------------------------------------------
# Figures 6 and 11: server momentum and proximal strength with tuned learning rates
# --------------------------------------------------------------------------------------------


def momentum_measurements(data: dict) -> tuple[bool, dict]:
    """Does each momentum curve converge faster than the no-momentum curve (Figure 6, left)?

    Faster on both usual measures: a larger mean test accuracy over the rounds (area under the curve)
    by more than SE_MULTIPLE standard errors, and fewer rounds to reach 95 % of the lowest tuned tail
    accuracy of the three curves.
    """
    left = _series(data["panels"][0])
    n_test = int(data["params"]["task"]["n_test"])
    gd = left["gradient"]
    se = _standard_error(float(gd["params"]["tail_mean_test_accuracy"]), n_test)
    target = 0.95 * min(float(s["params"]["tail_mean_test_accuracy"]) for s in left.values())
    measured = {
        "standard_error": se,
        "threshold": SE_MULTIPLE * se,
        "target_accuracy": target,
        "gradient": {
            "mean_accuracy": _mean_accuracy(gd),
            "rounds_to_target": rounds_to_reach(gd["y"], target),
            "tail_accuracy": gd["params"]["tail_mean_test_accuracy"],
            "gamma": gd["params"]["gamma"],
            "eta": gd["params"]["eta"],
        },
    }
    ok = True
    for label in ("nesterov", "momentum"):
        s = left[label]
        gain = _mean_accuracy(s) - _mean_accuracy(gd)
        measured[label] = {
            "mean_accuracy": _mean_accuracy(s),
            "gain_over_gradient": gain,
            "rounds_to_target": rounds_to_reach(s["y"], target),
            "tail_accuracy": s["params"]["tail_mean_test_accuracy"],
            "gamma": s["params"]["gamma"],
            "eta": s["params"]["eta"],
        }
        ok = (
            ok
            and gain > SE_MULTIPLE * se
            and measured[label]["rounds_to_target"] < measured["gradient"]["rounds_to_target"]
        )
    worst = min(measured[k]["gain_over_gradient"] for k in ("nesterov", "momentum"))
    return ok, {"worst_gain_over_gradient": worst, **measured}


def alpha_measurements(data: dict) -> tuple[bool, dict]:
    """Is every α curve within SE_MULTIPLE standard errors of α = 0 (Figure 6, right), in mean accuracy
    over the rounds (convergence) and in tail accuracy (the tuned end point)?"""
    right = _series(data["panels"][1])
    n_test = int(data["params"]["task"]["n_test"])
    base = right["α = 0"]
    base_tail = float(base["params"]["tail_mean_test_accuracy"])
    se = _standard_error(base_tail, n_test)
    measured = {
        "standard_error": se,
        "threshold": SE_MULTIPLE * se,
        "alpha_0": {
            "mean_accuracy": _mean_accuracy(base),
            "tail_accuracy": base_tail,
            "gamma": base["params"]["gamma"],
            "eta": base["params"]["eta"],
        },
    }
    worst = 0.0
    for label, s in right.items():
        if label == "α = 0":
            continue
        d_mean = _mean_accuracy(s) - _mean_accuracy(base)
        d_tail = float(s["params"]["tail_mean_test_accuracy"]) - base_tail
        worst = max(worst, abs(d_mean), abs(d_tail))
        measured[f"alpha_{s['params']['alpha']:g}"] = {
            "mean_accuracy_change": d_mean,
            "tail_accuracy_change": d_tail,
            "gamma": s["params"]["gamma"],
            "eta": s["params"]["eta"],
        }
    return worst <= SE_MULTIPLE * se, {"worst_change": worst, **measured}


MOMENTUM_STATEMENT = (
    r"Section 6 and Appendix E.3, Figure {n} (left): LocalUpdate with $\Theta=\Theta_{{1:50}}$, "
    r"$\alpha=0$, $M=10$ clients per round, $\gamma,\eta\in\{{10^{{-3}},10^{{-2.5}},\dots,10\}}$ "
    r"tuned for the best average test accuracy over the last 100 rounds, ServerOpt gradient "
    r"descent with Nesterov or heavy-ball momentum ($\beta=0.9$) or none: ``Server momentum "
    r"improves convergence'' (test accuracy against communication rounds)."
)
ALPHA_STATEMENT = (
    r"Section 6 and Appendix E.3, Figure {n} (right): LocalUpdate with $\Theta=\Theta_{{1:50}}$, "
    r"ServerOpt gradient descent without momentum, proximal strength $\alpha$ varied, $\gamma,\eta$ "
    r"tuned as in the left panel: ``$\alpha$ has little to no effect, provided we tune learning "
    r"rates'' (test accuracy against communication rounds)."
)

FIG6_NOTES = (
    "Substitute scaling (recorded in the figure params): K = 10 local steps instead of 50 (about the "
    "paper's number of local epochs on digits' small clients), 60 rounds, tuning window the last 12 "
    "rounds, (gamma, eta) tuned by nested line searches over the paper's grid instead of the full grid; "
    "alpha in {0, 0.01, 0.1, 1} (the paper's alpha values are not in its text). One seed per figure: "
    "Figure 11 is an independent replicate at its own seed. "
)


def _decide(ctx, fig_id: str, seed: int, ok: bool, measured: dict, tolerance: str, notes: str):
    measured = {"figure": fig_id, "figure_seed": seed, **measured}
    if ok:
        return ctx.verified(measured=measured, tolerance=tolerance, notes=notes)
    return ctx.refuted(
        measured=measured,
        tolerance=tolerance,
        notes=notes,
        counterexample={"figure": fig_id, "seed": seed, "backend": ctx.backend, "device": ctx.device},
    )


#: the gap between the substitute runs and the paper's setting, per figure (the claims' ``substitute``)
SUBSTITUTES = {
    6: "digits (scikit-learn, an MLP 64-32-10) instead of FEMNIST (a CNN); K = 10 local steps instead of 50; "
    "60 rounds, tuned on the last 12, instead of tuning on the last 100 rounds; (gamma, eta) by nested line "
    "searches instead of the full grid; one seed; CPU scale",
    12: "digits (scikit-learn, MLPs) instead of FEMNIST, CIFAR-100 and Shakespeare (CNN, ResNet-18, LSTM); "
    "300 rounds, 'eventually' = the last 60; one seed per figure; CPU scale",
    13: "digits (scikit-learn, MLPs) instead of FEMNIST, CIFAR-100 and Shakespeare (CNN, ResNet-18, LSTM); "
    "100 rounds, eta tuned on the last 20 instead of the last 100 rounds; one seed; CPU scale",
}
SUBSTITUTES[11] = SUBSTITUTES[6]

#: why the training claims that verify have no negative control
TRAINING_CONTROL_EXEMPT = (
    "a statement about trained networks on a substitute: no variant of it is known false before the runs (what "
    "training does is the measurement), so no a priori false control exists; the measurement functions are "
    "exercised on hand-made failing and passing curves in tests/test_localupdate_training.py"
)


def _figure_claim(fig_id: str, evaluate, tolerance: str, notes: str):
    """A check reading ``fig_id``'s data at the figure's seed, and its replay at a stored seed."""

    def check(ctx):
        seed = figure_seed(fig_id)
        ok, measured = evaluate(figure_data(fig_id, ctx, seed), ctx)
        return _decide(ctx, fig_id, seed, ok, measured, tolerance, notes)

    def replay(counterexample: dict, ctx):
        seed = int(counterexample["seed"])
        ok, measured = evaluate(figure_data(counterexample["figure"], ctx, seed), ctx)
        return _decide(
            ctx,
            counterexample["figure"],
            seed,
            ok,
            measured,
            tolerance,
            "Replay recomputes the figure's training runs at the stored seed, in float64: the deciding "
            "margins (tens of percent of a loss, points of accuracy) are far above round-off, so a "
            "high-precision replay has nothing to add to a network training run. " + notes,
        )

    return check, replay


MOMENTUM_TOLERANCE = (
    f"each momentum curve's mean test accuracy over the rounds must exceed the no-momentum curve's "
    f"by more than {SE_MULTIPLE:g} binomial standard errors of the tuned no-momentum test accuracy "
    f"(smaller differences are not detectable on the held-out digits), and it must reach 95 % of "
    f"the lowest tuned tail accuracy in strictly fewer rounds"
)
ALPHA_TOLERANCE = (
    f"|change| of mean test accuracy over the rounds and of tail test accuracy, for every alpha > 0 "
    f"against alpha = 0, at most {SE_MULTIPLE:g} binomial standard errors of the alpha = 0 test accuracy"
)


def _training_claim(
    n: int, expect: str, finding: str, *, slug: str, title: str, statement: str, measurements, tolerance: str
):
    """Figure n's (6 or 11) claim ``localupdate/figure-n/slug`` on the torch substitute's training runs:
    ``measurements(data)`` of the figure's data, judged against ``tolerance`` (a stored run is replayed)."""
    return _fig_claim(
        slug,
        n,
        f"Figure {n}: {title}",
        statement.format(n=n),
        lambda d, ctx: measurements(d),
        tolerance,
        FIG6_NOTES + finding,
        expect,
    )


# --------------------------------------------------------------------------------------------
# Figures 12 and 13: client learning rate against training loss (Appendix F)
# --------------------------------------------------------------------------------------------


def _loss_curves(panel: dict) -> dict:
    """γ -> training-loss curve (rounds 0..R) of the runs a panel plots (diverged runs are omitted)."""
    return {float(s["params"]["gamma"]): np.asarray(s["y"], dtype=float) for s in panel["series"]}


def _tail(curve: np.ndarray, tail: int) -> float:
    return float(np.mean(curve[-tail:]))


def _initial_rounds(curve: np.ndarray) -> int:
    return max(1, int((curve.size - 1) * INITIAL_FRACTION))


def _initial(curve: np.ndarray) -> float:
    """Mean training loss over rounds 1..R/2 ("initially")."""
    return float(np.mean(curve[1 : _initial_rounds(curve) + 1]))


def crossing_measurements(data: dict, tail: int) -> tuple[bool, dict]:
    """In every panel, two client learning rates γ_hi > γ_lo whose loss curves cross: γ_hi lower at
    some round before the tail window and γ_lo lower over the last ``tail`` rounds, each by more than
    LOSS_TIE (relative).

    If γ changed only the speed along one trajectory (x_t^γ = x(c_γ t) with F(x(s)) decreasing), the
    curve of the faster γ would lie below the other at every round: curves that cross show that γ
    changes the point reached, not only the speed.
    """
    measured, ok = {}, True
    for panel in data["panels"]:
        curves = _loss_curves(panel)
        gammas = sorted(curves)
        best = None
        for i, lo in enumerate(gammas):
            for hi in gammas[i + 1 :]:
                before = curves[lo][1:-tail] / curves[hi][1:-tail]  # > 1: γ_hi ahead
                t_ahead = int(np.argmax(before)) + 1
                late = _tail(curves[hi], tail) / _tail(curves[lo], tail)  # > 1: γ_lo ahead at the end
                margin = min(float(before.max()), late)
                if best is None or margin > best["margin"]:
                    best = {
                        "gamma_high": hi,
                        "gamma_low": lo,
                        "round_high_most_ahead": t_ahead,
                        "loss_ratio_low_over_high_there": float(before.max()),
                        "tail_loss_ratio_high_over_low": late,
                        "margin": margin,
                    }
        crossed = best is not None and best["margin"] > 1.0 + LOSS_TIE
        measured[panel["title"]] = {**(best or {}), "crossed": bool(crossed)}
        ok = ok and crossed
    worst = min((m.get("margin", 0.0) for m in measured.values()), default=0.0)
    return ok, {"worst_crossing_margin": worst, **measured}


def monotone_tail_measurements(data: dict, tail: int, panels=(0, 1)) -> tuple[bool, dict]:
    """In the chosen panels, every pair γ_1 < γ_2 of plotted (non-diverged) runs has
    tail loss(γ_1) <= (1 + LOSS_TIE) tail loss(γ_2): smaller client learning rates end lower."""
    measured, ok = {}, True
    for k in panels:
        panel = data["panels"][k]
        curves = _loss_curves(panel)
        gammas = sorted(curves)
        tails = {g: _tail(curves[g], tail) for g in gammas}
        worst = max((tails[g1] / tails[g2], g1, g2) for i, g1 in enumerate(gammas) for g2 in gammas[i + 1 :])
        measured[panel["title"]] = {
            "tail_loss": {f"{g:g}": v for g, v in tails.items()},
            "worst_ratio_smaller_over_larger": worst[0],
            "worst_pair": [worst[1], worst[2]],
            "holds": worst[0] <= 1.0 + LOSS_TIE,
        }
        ok = ok and worst[0] <= 1.0 + LOSS_TIE
    return ok, {
        "worst_ratio_smaller_over_larger": max(m["worst_ratio_smaller_over_larger"] for m in measured.values()),
        **measured,
    }


def early_best_surpassed_measurements(data: dict, tail: int) -> tuple[bool, dict]:
    """Panel (b) (the CIFAR-100 stand-in): the γ with the lowest mean loss over the first half of
    the rounds, ahead of every other γ there by more than LOSS_TIE ("performs better than all other
    methods"), is surpassed over the last ``tail`` rounds by a smaller γ (by more than LOSS_TIE), and
    γ = 0 ends comparable (within LOSS_TIE) to the best. The paper's own values (γ = 10^-2 best
    initially, surpassed by 10^-3) are reported beside it."""
    panel = data["panels"][1]
    curves = _loss_curves(panel)
    initial = {g: _initial(c) for g, c in curves.items()}
    early_best = min(initial, key=initial.get)
    runner_up = min((v for g, v in initial.items() if g != early_best), default=math.inf)
    leads = runner_up > (1.0 + LOSS_TIE) * initial[early_best]
    tails = {g: _tail(c, tail) for g, c in curves.items()}
    final_best = min(tails, key=tails.get)
    smaller = {g: v for g, v in tails.items() if g < early_best}
    surpassed = any(v * (1.0 + LOSS_TIE) < tails[early_best] for v in smaller.values())
    zero_comparable = 0.0 in tails and tails[0.0] <= (1.0 + LOSS_TIE) * tails[final_best]
    literal = {}
    if {1e-2, 1e-3, 0.0} <= set(curves):
        literal = {
            "gamma_1e-2_best_initially": early_best == 1e-2,
            "gamma_1e-3_below_1e-2_at_end": tails[1e-3] * (1.0 + LOSS_TIE) < tails[1e-2],
            "gamma_0_within_tie_of_1e-3_at_end": tails[0.0] <= (1.0 + LOSS_TIE) * tails[1e-3],
        }
    measured = {
        "early_best_tail_over_best_smaller_ratio": (
            tails[early_best] / min(smaller.values()) if smaller else float("nan")
        ),
        "panel": panel["title"],
        "initial_rounds": _initial_rounds(curves[early_best]),
        "initial_best_gamma": early_best,
        "initial_lead_over_runner_up": runner_up / initial[early_best],
        "final_best_gamma": final_best,
        "initial_mean_loss": {f"{g:g}": v for g, v in sorted(initial.items())},
        "tail_loss": {f"{g:g}": v for g, v in sorted(tails.items())},
        "early_best_surpassed_by_smaller_gamma": bool(surpassed),
        "gamma_0_comparable_to_best": bool(zero_comparable),
        "paper_values_on_substitute": literal,
    }
    return bool(leads and surpassed and zero_comparable), measured


def early_advantage_measurements(tuned: dict, fixed: dict) -> tuple[bool, dict]:
    """In every panel, with η tuned (Figure 13) the best γ > 0 over the first half of the rounds is
    ahead of γ = 0 by a larger factor than with η = 0.01 fixed (Figure 12), and by more than LOSS_TIE.

    The factor is the mean loss of γ = 0 over the first half of the figure's rounds divided by the
    smallest such mean over γ > 0 ("much better initially" when the server learning rate is tuned,
    against the fixed-η experiment it repeats)."""
    measured, ok = {}, True
    for p13, p12 in zip(tuned["panels"], fixed["panels"]):
        row = {}
        for name, panel in (("tuned_eta", p13), ("fixed_eta", p12)):
            curves = _loss_curves(panel)
            initial = {g: _initial(c) for g, c in curves.items()}
            positive = {g: v for g, v in initial.items() if g > 0}
            if 0.0 not in initial or not positive:
                row[name] = {"advantage": float("nan")}
                continue
            g_best = min(positive, key=positive.get)
            row[name] = {
                "best_gamma": g_best,
                "advantage": initial[0.0] / positive[g_best],
                "initial_loss_gamma_0": initial[0.0],
                "initial_loss_best_gamma": positive[g_best],
            }
        holds = row["tuned_eta"]["advantage"] > 1.0 + LOSS_TIE and row["tuned_eta"]["advantage"] > row["fixed_eta"][
            "advantage"
        ] * (1.0 + LOSS_TIE)
        row["holds"] = bool(holds)
        measured[p13["title"]] = row
        ok = ok and holds
    worst = min(m["tuned_eta"]["advantage"] / m["fixed_eta"]["advantage"] for m in measured.values())
    return bool(ok), {"worst_ratio_tuned_over_fixed_advantage": worst, **measured}


FIG12_NOTES = (
    "Substitute scaling (recorded in the figure params): 300 rounds, tail window the last 60, one MLP "
    "per panel standing in for the paper's CNN/ResNet-18/LSTM, B = 20/20/4 as in the paper. "
    "The runs are finite: a statement about where training ends is checked at the end of the horizon. "
)

FIG12_SETUP = (
    r"LocalUpdate with $\alpha=0$, $\Theta=\Theta_{1:10}$, $M=10$ clients per round, ServerOpt gradient "
    r"descent without momentum, client learning rate $\gamma\in\{0,10^{-3},10^{-2},10^{-1},1,10\}$"
)


def _fig_claim(cid: str, n: int, title: str, statement: str, evaluate, tolerance: str, notes: str, expect: str):
    fig_id = f"localupdate/figure-{n}"
    check, replay = _figure_claim(fig_id, evaluate, tolerance, notes + SUBSTITUTE_NOTE)
    c = claim(
        id=f"{fig_id}/{cid}",
        ref=f"Figure {n}",
        title=title,
        statement=statement,
        kind="simulation",
        tier="full",
        expect=expect,
        requires=("torch",),
        substitute=SUBSTITUTES[n],
        control_exempt=TRAINING_CONTROL_EXEMPT if expect == "verified" else None,
    )(check)
    c.replayer(replay)
    return c


def _tail_rounds(data: dict) -> int:
    return int(data["params"]["tail_rounds"])


MOMENTUM_FINDING = (
    "Finding on the substitute (both replicates, Figures 6 and 11): neither momentum type converges detectably "
    "faster on both measures (see measured: gains in mean accuracy over the rounds between -2.7 and +1.0 standard "
    "errors, and rounds to the target from 2 fewer to 4 more than without momentum). The tuned eta differ by "
    "half-decades chosen on tail-accuracy differences of about one test example (visited_gamma_eta_score in the "
    "figure params), and the early rise follows the chosen eta more than the momentum type: at 60 rounds, with "
    "every tuned run at its plateau within ~40, this stand-in does not resolve the effect the paper sees on "
    "FEMNIST. Nothing here bears on the quadratic theory behind Figure 2 (Table 2's accelerated rates). "
)
ALPHA_FINDING = (
    "Finding on the substitute: the tuned end points stay close (tail accuracy within about 2 points for every "
    "alpha), but the early rise differs by more than 2 SE: alpha = 1 is slower on both replicates (its tuned "
    "gamma is 10^-0.5 instead of 1: with gamma = 1 it reaches only 0.78 to 0.83 tail accuracy), and in Figure 6 alpha = 0.01 and 0.1 rise faster than alpha = 0 only "
    "because the tuning picked eta = 1 for them and eta = 10^-0.5 for alpha = 0 on a tail-accuracy difference of "
    "about one test example (a proximal term gamma*alpha = 0.01 per local step barely changes the local update). "
    "So the statement fails here through alpha = 1 and through tuning noise, not through a systematic effect of "
    "small alpha. "
)

#: Figures 6 and 11 make the same two statements: what each measures and how it is judged
_MOMENTUM = {
    "slug": "server-momentum-improves-convergence",
    "title": "server momentum improves convergence (tuned learning rates)",
    "statement": MOMENTUM_STATEMENT,
    "measurements": momentum_measurements,
    "tolerance": MOMENTUM_TOLERANCE,
}
_ALPHA = {
    "slug": "alpha-little-effect",
    "title": "the proximal strength alpha has little to no effect when learning rates are tuned",
    "statement": ALPHA_STATEMENT,
    "measurements": alpha_measurements,
    "tolerance": ALPHA_TOLERANCE,
}
figure_6_momentum = _training_claim(6, "not-reproduced", MOMENTUM_FINDING, **_MOMENTUM)
figure_6_alpha = _training_claim(6, "not-reproduced", ALPHA_FINDING, **_ALPHA)
figure_11_momentum = _training_claim(11, "not-reproduced", MOMENTUM_FINDING, **_MOMENTUM)
figure_11_alpha = _training_claim(11, "not-reproduced", ALPHA_FINDING, **_ALPHA)

figure_12_crossing = _fig_claim(
    "client-lr-changes-point-reached",
    12,
    "Figure 12: the client learning rate changes the point reached, not only the speed",
    r"Appendix F, Figure 12: " + FIG12_SETUP + r", $\eta=0.01$, on FEMNIST, CIFAR-100 and Shakespeare: ``on all "
    r"three tasks [...] the choice of client learning rate can impact not just the speed of convergence, but what "
    r"point the algorithm converges to''.",
    lambda d, ctx: crossing_measurements(d, _tail_rounds(d)),
    f"in every panel, some pair gamma_hi > gamma_lo with loss(gamma_lo)/loss(gamma_hi) > 1 + {LOSS_TIE:g} at some "
    f"round before the tail window and tail loss(gamma_hi)/tail loss(gamma_lo) > 1 + {LOSS_TIE:g} (a crossing)",
    FIG12_NOTES + "A pure change of speed along one trajectory cannot make two decreasing loss curves cross, so a "
    "crossing shows that gamma changes the point reached; the limit itself lies beyond any finite run. ",
    "verified",
)

figure_12_monotone = _fig_claim(
    "smaller-client-lr-lower-loss",
    12,
    "Figure 12: smaller client learning rates eventually reach lower training losses (FEMNIST, CIFAR-100)",
    r"Appendix F, Figure 12: " + FIG12_SETUP + r", $\eta=0.01$: ``For both FEMNIST and CIFAR-100, smaller client "
    r"learning rates eventually reach lower training losses than higher learning rates''.",
    lambda d, ctx: monotone_tail_measurements(d, _tail_rounds(d)),
    f"panels (a) and (b): for every plotted gamma_1 < gamma_2, tail loss(gamma_1) <= (1 + {LOSS_TIE:g}) tail "
    f"loss(gamma_2); 'eventually' = the mean over the last tail_rounds rounds",
    FIG12_NOTES + "Ties within 1 % are allowed: the surrogate's minimizer moves by O(gamma) (Section 4), so the "
    "smallest client learning rates (0, 1e-3, 1e-2) are expected to end almost level. ",
    "verified",
)

figure_12_cifar = _fig_claim(
    "cifar-100-early-best-surpassed",
    12,
    "Figure 12 (CIFAR-100): the best early client learning rate is surpassed by a smaller one; gamma = 0 ends comparable",
    r"Appendix F, Figure 12 (b), CIFAR-100: " + FIG12_SETUP + r", $\eta=0.01$: ``While $\gamma=10^{-2}$ initially "
    r"performs better than all other methods, it is eventually surpassed by $\gamma=10^{-3}$, and $\gamma=0$ ends up "
    r"obtaining a comparable accuracy''.",
    lambda d, ctx: early_best_surpassed_measurements(d, _tail_rounds(d)),
    f"panel (b): the gamma with the lowest mean loss over the first half of the rounds, lower than every other "
    f"gamma's there by more than {LOSS_TIE:g} (relative), has a tail loss more than {LOSS_TIE:g} above some smaller "
    f"gamma's, and gamma = 0's tail loss is within {LOSS_TIE:g} of the lowest",
    FIG12_NOTES + "Which gamma leads early depends on the data's gradient scale, so the substitute cannot test the "
    "paper's values (10^-2 leads, 10^-3 overtakes); it checks the pattern they illustrate (the early leader is "
    "overtaken by a smaller gamma, gamma = 0 ends comparable) and reports the paper's values on the substitute in "
    "measured.paper_values_on_substitute. ",
    "verified",
)


def _figure_13_early(d13: dict, ctx) -> tuple[bool, dict]:
    return early_advantage_measurements(d13, figure_data("localupdate/figure-12", ctx))


figure_13_early = _fig_claim(
    "larger-client-lr-much-better-initially",
    13,
    "Figure 13: with a tuned server learning rate, larger client learning rates do much better initially",
    r"Appendix F, Figure 13: " + FIG12_SETUP + r", $\eta\in\{10^{-3},10^{-2.5},\dots,10\}$ tuned per $\gamma$ "
    r"(smallest average training loss over the last 100 rounds): ``when the server learning rate is tuned, larger "
    r"client learning rates may do much better initially'' (than in Figure 12, where $\eta=0.01$).",
    _figure_13_early,
    f"in every panel, with losses averaged over the first half of each figure's rounds: loss(gamma = 0) / min over "
    f"gamma > 0 of loss(gamma) exceeds 1 + {LOSS_TIE:g} and exceeds (1 + {LOSS_TIE:g}) times the same factor in "
    f"Figure 12 (eta = 0.01)",
    "Figure 13 here runs 100 rounds (tail window 20), Figure 12 300; 'initially' is the first half of each figure's "
    "rounds, each figure at its own seed (so the client splits differ between the two figures). ",
    "verified",
)

figure_13_monotone = _fig_claim(
    "smaller-client-lr-lower-loss",
    13,
    "Figure 13: again, smaller client learning rates eventually reach lower training losses (FEMNIST, CIFAR-100)",
    r"Appendix F, Figure 13: " + FIG12_SETUP + r", $\eta$ tuned per $\gamma$: ``Again, we see similar behavior'' "
    r"to Figure 12, where ``for both FEMNIST and CIFAR-100, smaller client learning rates eventually reach lower "
    r"training losses than higher learning rates''.",
    lambda d, ctx: monotone_tail_measurements(d, _tail_rounds(d)),
    f"panels (a) and (b): for every plotted gamma_1 < gamma_2, tail loss(gamma_1) <= (1 + {LOSS_TIE:g}) tail "
    f"loss(gamma_2) over the last tail_rounds rounds",
    "Figure 13 here runs 100 rounds (tail window 20). Finding on the substitute: with eta tuned per gamma, the "
    "larger client learning rates (0.1, 1) end 2 to 5 times below gamma <= 10^-2 (see measured): the tuned server "
    "step lets them converge fast, and the MLP fits the 1437 training digits almost exactly (tail losses down to "
    "~0.03), so the gamma-dependent gap that smaller client learning rates close (the surrogate's bias of Section 4) "
    "does not show within the horizon. The 'similar behavior' of Figure 13 does not carry over to this stand-in. ",
    "not-reproduced",
)
