"""Yao et al., FedHM (arXiv:2111.14655), Appendix B: Theorem 2 (algebra, step (24), simulation), Theorem 3 (the proof's
steps (25)–(28), algebra, bound) and Theorem 1 (the order-of-magnitude form) with Theorem 2's remark.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from fedtheory.algorithms.fedhm import FactorizedLayer, FedHM, HybridLayout
from fedtheory.certify.params import Custom
from fedtheory.claims.probing import probe_by_tier
from fedtheory.claims.core import Control, claim
from fedtheory.problems.finite_sum import LogisticFederation

from ._problem import (
    EPS,
    Instance,
    RunTerms,
    _random_instance,
    _theory_instance,
    constants,
    factor_2_dropped,
    g_value,
    grad_g,
    make_instance,
    run_terms,
    sequences,
    sqrt_sigma_gap,
    theorem_2_rhs,
    theorem_3_rhs,
    theory_instances_with_runs,
    truncated_roots,
)

# --------------------------------------------------------------------------------------------
# Theorem 2
# --------------------------------------------------------------------------------------------


def _theorem_2_sum(E: int, K: int):
    """Sum (23)–(24) (corrected: ∇g(ĥ_t) at t ∈ ℰ) over t = 0..T−1 symbolically; return (bound on η/2 Σ G_t, target)."""
    eta, L, kap, M, P, flow = sp.symbols("eta L kappa_g M_g P f_low", positive=True)
    T = K * E
    G = sp.symbols(f"G0:{T}", nonnegative=True)
    A = sp.symbols(f"A0:{T}", nonnegative=True)
    gb = sp.symbols(f"gbar0:{T + 1}", real=True)
    D = sp.symbols(f"D0:{K}", real=True)
    Y = sp.symbols(f"Y0:{K}", nonnegative=True)
    total = 0
    for t in range(T):
        k, inE = t // E, t % E == 0
        # descent lemma + Lemma 2 (L/2·(η²M/P + η²A)) + Lemma 3 (first or second case)
        lemma3 = (
            -eta / 2 * G[t]
            - eta / 2 * A[t]
            + (eta * L**2 / (2 * P) * Y[k] if inE else 3 * eta**3 * L**2 * kap * E**2 + 3 * eta * L**2 / (2 * P) * Y[k])
        )
        step = gb[t] + (D[k] if inE else 0) + lemma3 + L / 2 * (eta**2 * M / P + eta**2 * A[t])
        if inE:
            step += 3 * eta**3 * L**2 * kap * E**2  # the paper adds this (harmless) term in (24)
        # gbar_{t+1} <= step  ⇔  η/2 G_t <= step − gbar_{t+1} + η/2 G_t
        total += step - gb[t + 1] + eta / 2 * G[t]
    rhs22 = (
        2 / (T * eta) * (gb[0] - flow)
        + 6 * eta**2 * L**2 * kap * E**2
        + eta * L * M / P
        + 2 / (T * eta) * sum(D)
        + 3 * L**2 * E / (T * P) * sum(Y)
    )
    return sp.expand(total), sp.expand(T * eta / 2 * rhs22), (eta, L, gb, A, Y, flow, T)


@claim(
    id="fedhm/theorem-2/algebra",
    ref="Theorem 2 (eqs. 22–24)",
    title="Theorem 2 follows from Lemmas 2–3 and the descent lemma by summing (23)–(24) over t",
    statement=r"Theorem 2: under Assumptions 3–4 and $0<\eta\le1/L_{\nabla g}$, $\frac1T\sum_{t=0}^{T-1}\mathbb E\|\nabla g(\hat h_t)\|^2"
    r"\le\frac2{T\eta}(f(w_0)-f_{\rm low})+6\eta^2L_{\nabla g}^2\kappa_gE^2+\frac{\eta L_{\nabla g}M_g}P+\frac2{T\eta}\sum_{t\in"
    r"\mathcal E}\mathbb E[g(\bar y_t)-g(\bar h_t)]+\frac{3L_{\nabla g}^2E}{TP}\sum_{t\in\mathcal E}\sum_p\mathbb E\|\bar y_t-y_{p,t}\|^2$ "
    r"(eq. 22) — the summation of the per-step bounds (23)–(24), checked symbolically.",
    kind="symbolic",
)
def theorem_2_algebra(ctx):
    proved = []
    for E in (1, 2, 3, 4):
        for K in (1, 2, 3):
            total, target, (eta, L, gb, A, Y, flow, T) = _theorem_2_sum(E, K)
            slack = sp.expand(target - total)
            expected = sp.expand(
                (gb[T] - flow)
                + sum((eta - L * eta**2) / 2 * a for a in A)
                + sum(eta * L**2 / sp.Symbol("P", positive=True) * y for y in Y)
            )
            if sp.simplify(slack - expected) != 0:
                return ctx.refuted(
                    measured={"E": E, "K": K, "slack": str(slack)},
                    counterexample={"E": E, "K": K, "slack": str(sp.simplify(slack - expected))},
                    notes="the summed per-step bounds do not give eq. (22)",
                )
            proved.append(f"E={E},K={K}")
    # and symbolically in E and K: per round the drift coefficients are (E−1)·3ηL²/(2P) + ηL²/(2P) ≤ 3ηL²E/(2P)
    e, eta, L, P = sp.symbols("E eta L P", positive=True)
    per_round_gap = sp.simplify(
        3 * eta * L**2 * e / (2 * P) - ((e - 1) * 3 * eta * L**2 / (2 * P) + eta * L**2 / (2 * P))
    )
    ok = per_round_gap == eta * L**2 / P
    decide = (
        ctx.decide
        if not ok
        else (
            lambda ok, **kw: ctx.proved(
                "sympy: the summed per-step bounds minus (Tη/2)·RHS(22) expand to a sum of nonnegative terms, for each E ≤ 4, K ≤ 3, "
                "and the per-round drift slack simplifies to ηL²/P",
                **kw,
            )
        )
    )
    return decide(
        ok,
        measured={"cases_proved": len(proved), "per_round_drift_slack": str(per_round_gap)},
        tolerance="exact (sympy)",
        notes="Target (Tη/2)·RHS(22) minus the summed bounds equals (E g(h̄_T) − f_low) + Σ_t (η − L η²)/2·"
        "E‖avg ∇g_p‖² + Σ_{t∈ℰ} (ηL²/P)·ΣE‖ȳ_t − y_{p,t}‖², nonnegative since f ≥ f_low, η ≤ 1/L_∇g. The "
        "sum uses ∇g(ĥ_t) = ∇g(ȳ_t) at t ∈ ℰ, as Lemma 3's second case gives; the last line of (24) writes "
        "∇g(h̄_t) there (a typo: fedhm/theorem-2/step-24). ℰ is printed {0, E, …, (E/T) − E}: read T − E. "
        "Proved for E ∈ {1, …, 4}, K ∈ {1, 2, 3} rounds, and the per-round drift coefficient for symbolic E.",
    )


def _runs(inst: Instance, n: int) -> list[RunTerms]:
    return [run_terms(inst, seed) for seed in range(n)]


@claim(
    id="fedhm/theorem-2/step-24",
    ref="Theorem 2 (eq. 24)",
    title="The last line of (24), as printed with ‖∇g(h̄_t)‖², holds on Algorithm 2's runs",
    statement=r"Eq. (24), last line: for $t\bmod E=0$, $\mathbb E[g(\bar h_{t+1})]\le\mathbb E[g(\bar h_t)]+\mathbb E[g(\bar y_t)-g(\bar h_t)]"
    r"-\frac\eta2\mathbb E\|\nabla g(\bar h_t)\|^2+3\eta^3L_{\nabla g}^2\kappa_gE^2+\frac{\eta^2L_{\nabla g}M_g}{2P}+"
    r"\frac{\eta L_{\nabla g}^2}{2P}\sum_p\mathbb E\|\bar y_t-y_{p,t}\|^2$ (the line before has $\|\nabla g(\bar y_t)\|^2$).",
    kind="simulation",
    control_exempt="the step has slack 95% on every run (its 3η³L²κ_gE² term, with κ_g of the whole ball, dwarfs the other "
    "terms) and no attaining instance is known, so no tightened form is known to be false; the step is a typo "
    "that the sum proving Theorem 2 does not use (fedhm/theorem-2/algebra, a sympy proof, uses ∇g(ȳ_t))",
)
def theorem_2_step_24(ctx):
    rng = ctx.rng
    worst_printed, worst_fixed, cases = -np.inf, -np.inf, 0
    for _ in range(6 if not ctx.full else 30):
        inst = _theory_instance(rng, ctx, batch=None, P=int(rng.integers(1, 4)), eta_fraction=1.0)
        c = constants(inst)
        seq = sequences(inst, 0)
        kap = seq.kappa_uv
        L, kg, eta, E, P = c.L_g(kap), c.kappa_g(kap), inst.algo.lr, seq.E, inst.P
        if eta * L > 1:  # (24) drops −(η − L η²)/2·E‖avg ∇g_p‖², which needs η ≤ 1/L_∇g
            continue
        for k in range(inst.rounds):
            t = k * E
            lhs = g_value(inst, seq.h_state[t + 1].mean(0))
            slack = 3 * eta**3 * L**2 * kg * E**2 + eta * L**2 / (2 * P) * float(np.sum((seq.y(t) - seq.ybar(t)) ** 2))
            gh = float(np.sum(grad_g(inst, seq.hbar(t)) ** 2))
            gy = float(np.sum(grad_g(inst, seq.ybar(t)) ** 2))
            base = g_value(inst, seq.ybar(t))
            worst_printed = max(worst_printed, (lhs - (base - eta / 2 * gh + slack)) / (abs(lhs) + 1e-300))
            worst_fixed = max(worst_fixed, (lhs - (base - eta / 2 * gy + slack)) / (abs(lhs) + 1e-300))
            cases += 1
    ok = worst_printed <= 1e-12 and worst_fixed <= 1e-12
    return ctx.decide(
        ok,
        measured={"printed_worst_excess": worst_printed, "corrected_worst_excess": worst_fixed, "cases": cases},
        tolerance="excess ≤ 1e-12 relative (full-batch runs: the expectations are the values)",
        notes="Printed with ∇g(h̄_t), the step does not follow from the line before it (which has ∇g(ȳ_t)); on "
        "every run the term 3η³L²κ_gE², large because κ_g bounds the whole ball, absorbs the swap. The sum "
        "that proves Theorem 2 uses ∇g(ĥ_t) = ∇g(ȳ_t), so the theorem does not depend on this line.",
    )


def _theorem_sim(ctx, which: int) -> dict:
    """Monte Carlo (batch 1) and full-batch runs: worst LHS/RHS of Theorem ``which`` (2 or 3)."""
    rng = ctx.rng
    out = {"worst_ratio_stochastic": 0.0, "worst_ratio_full_batch": 0.0, "instances": 0, "runs": 0}
    n_inst = 3 if not ctx.full else 12
    runs = 15 if not ctx.full else 80
    for i in range(2 * n_inst):
        batch = 1 if i < n_inst else None
        inst = _theory_instance(rng, ctx, batch=batch, rounds=int(rng.integers(2, 6)), P=int(rng.integers(1, 4)))
        c = constants(inst)
        rs = _runs(inst, runs if batch else 1)
        kap = max(r.kappa_uv for r in rs)
        if inst.algo.lr * c.L_g(kap) > 1:  # the theorems assume η ≤ 1/L_∇g on the ball the runs stay in
            out["skipped_eta_above_1_over_L"] = out.get("skipped_eta_above_1_over_L", 0) + 1
            continue
        lhs = float(np.mean([r.lhs for r in rs]))
        if which == 2:
            rhs = theorem_2_rhs(
                inst, c, kap, rs[0].f0, float(np.mean([r.jump for r in rs])), float(np.mean([r.drift for r in rs]))
            )
        else:
            k1 = float(np.max(np.mean([r.sigma1 for r in rs], axis=0)))
            k2 = float(np.max(np.mean([r.sigma2 for r in rs], axis=0)))
            rhs = theorem_3_rhs(inst, c, kap, rs[0].f0, k1, k2)
        key = "worst_ratio_stochastic" if batch else "worst_ratio_full_batch"
        out[key] = max(out[key], lhs / rhs)
        out["instances"] += 1
        out["runs"] += len(rs)

    def decode(z):
        u = 0.5 * (1 + np.tanh(z))
        return {
            "scale": float(10 ** (-1.5 + 2 * u[0])),
            "w_scale": float(10 ** (-1.5 + 2 * u[1])),
            "eta_fraction": 0.05 + 0.95 * u[2],
            "heterogeneity": 3 * u[3],
            "E": 1 + int(4 * u[4]),
            "rounds": 1 + int(8 * u[5]),
        }

    def violation(kw):
        inst = make_instance(np.random.default_rng(11), P=3, samples=4, ratios=(1.0, 0.34), batch=None, **kw)
        c = constants(inst)
        r = run_terms(inst, 0)
        if inst.algo.lr * c.L_g(r.kappa_uv) > 1:
            return -1.0  # outside the theorems' step-size hypothesis
        if which == 2:
            return r.lhs / theorem_2_rhs(inst, c, r.kappa_uv, r.f0, r.jump, r.drift)
        return r.lhs / theorem_3_rhs(inst, c, r.kappa_uv, r.f0, max(r.sigma1), max(r.sigma2))

    result = probe_by_tier(
        ctx, violation, Custom(6, decode), seed=rng, n_random=(16, 96), n_starts=(1, 4), maxiter=(15, 150), target=1.0
    )
    out["probe_worst_ratio"] = result.worst_value
    out["probe_evaluations"] = result.n_evaluations
    out["probe"] = result
    return out


@claim(
    id="fedhm/theorem-2/simulation",
    ref="Theorem 2",
    title="Theorem 2's bound against Algorithm 2 on problems with every constant computed",
    statement=r"Theorem 2 (eq. 22) on Algorithm 2's runs: $\frac1T\sum_t\mathbb E\|\nabla g(\hat h_t)\|^2$ (Monte Carlo) is at most the "
    r"right side with $f_{\rm low}=0$, $L_{\nabla g},\kappa_g,M_g$ of the ball and $\eta\le1/L_{\nabla g}$.",
    kind="probe",
    control_exempt="the bound is loose by construction and no instance near equality is known: the left side is at most κ_g "
    "(‖∇g‖² ≤ avg_p E‖∇G_p‖²) while the right side holds 6η²L²_∇gE²κ_g, so the ratio stays below 0.03 on every "
    "run and no tightened constant is known to be false; the derivation is checked exactly instead "
    "(fedhm/theorem-2/algebra, sympy) and its steps with controls (fedhm/theorem-2/step-24, Lemmas 1–3)",
)
def theorem_2_simulation(ctx):
    out = _theorem_sim(ctx, 2)
    result = out.pop("probe")
    worst = max(out["worst_ratio_stochastic"], out["worst_ratio_full_batch"], out["probe_worst_ratio"])
    ok = worst <= 1
    return ctx.decide(
        ok,
        measured=out,
        tolerance="LHS/RHS ≤ 1 (Monte Carlo means; the ratios are far below 1)",
        counterexample=None if ok else {"probe": result.to_json()},
        notes="Batch size 1 (Monte Carlo over runs) and full batch (M_g = 0); the probe varies data scale, w₀, "
        "η/L_∇g, heterogeneity, E and T on full-batch runs. The bound's slack is large.",
    )


# --------------------------------------------------------------------------------------------
# Theorem 3: the proof's steps (25)–(28), the algebra, the bound
# --------------------------------------------------------------------------------------------


def _instance_record(inst: Instance) -> dict:
    """What a replay needs to rebuild ``inst`` and re-run Algorithm 2 on it: the data, w₀ and the configuration."""
    return {
        "features": [inst.fed.a[p, : inst.fed.counts[p]].tolist() for p in range(inst.P)],
        "labels": [inst.fed.y[p, : inst.fed.counts[p]].tolist() for p in range(inst.P)],
        "params": inst.params,
        "x0": inst.x0.tolist(),
    }


def _stored_instance(cex: dict) -> Instance:
    """The full-batch instance of a stored counterexample (:func:`_instance_record`), rebuilt for the driver to re-run."""
    prm = cex["params"]
    layers, offset = [], 1
    for i, (m, n) in enumerate(prm["shapes"]):
        layers.append(FactorizedLayer(f"W{i + 1}", offset, (int(m), int(n)), "matrix"))
        offset += int(m) * int(n)
    P = len(cex["features"])
    fed = LogisticFederation(
        [np.asarray(a, dtype=float) for a in cex["features"]],
        [np.asarray(y, dtype=float) for y in cex["labels"]],
        p=np.full(P, 1.0 / P),
    )
    algo = FedHM(tuple(prm["ratios"]), int(prm["E"]), float(prm["eta"]), convention="matrix", dense_full_rank=False)
    return Instance(
        fed,
        HybridLayout(offset, tuple(layers)),
        algo,
        np.asarray(prm["levels"]),
        np.asarray(cex["x0"], dtype=float),
        int(prm["rounds"]),
        None,
        dict(prm),
    )


def _rerun_models(cex: dict) -> tuple[Instance, list, list, list]:
    """Re-run Algorithm 2 on a stored instance: (instance, w(ȳ_t), w(h̄_t), w_t) at every aggregation step t = kE."""
    inst = _stored_instance(cex)
    seq = sequences(inst, 0)
    ts = [k * seq.E for k in range(inst.rounds)]
    return (
        inst,
        [inst.space.w(seq.ybar(t)) for t in ts],
        [inst.space.w(seq.hbar(t)) for t in ts],
        [seq.server[k] for k in range(inst.rounds)],
    )


def _stale(stored, fresh) -> bool:
    """True when the stored driver outputs are not what the re-run driver gives (beyond rounding)."""
    stored, fresh = np.asarray(stored, dtype=float), np.asarray(fresh, dtype=float)
    return stored.shape != fresh.shape or float(np.abs(stored - fresh).max()) > 1e-9 * (1 + float(np.abs(fresh).max()))


def _replayed_models(cex: dict) -> tuple[Instance, list, list, list] | None:
    """What a replay of a stored counterexample compares: Algorithm 2 re-run on its data and w₀ (see
    :func:`_rerun_models`), at every aggregation step or at the stored ``round`` when it names one; ``None`` when the
    re-run no longer gives the stored models it holds (w(ȳ_t), w_t, w(h̄_t)): the counterexample is stale."""
    inst, ys, hs, ws = _rerun_models(cex)
    if "round" in cex:
        k = int(cex["round"])
        ys, hs, ws = ys[k], hs[k], ws[k]
    fresh = {"w_ybar": ys, "w_t": ws, "w_hbar": hs}
    if any(_stale(cex[key], models) for key, models in fresh.items() if key in cex):
        return None
    return inst, ys, hs, ws


def _replays_stored_run(target):
    """Register ``decide(cex, ctx, ys, hs, ws)`` as ``target``'s replayer: Algorithm 2 re-run on the stored data and
    w₀ (:func:`_replayed_models`; the stored models are only compared), and a stale counterexample inconclusive —
    nothing to decide when the re-run driver no longer gives the stored models."""

    def register(decide):
        def replay(cex, ctx):
            replayed = _replayed_models(cex)
            if replayed is None:
                return ctx.inconclusive(
                    notes="the re-run driver does not reproduce the stored models: the counterexample is stale"
                )
            return decide(cex, ctx, *replayed[1:])

        return target.replayer(replay)

    return register


def _step_25_26_instance(rng, init_rank: int | None) -> Instance:
    """A full-batch run of the family where steps (25) and (26) are searched: 2 to 4 rounds, 2 or 3 clients of
    heterogeneous ranks (γ ∈ {1, 0.34}), w₀ of rank ``init_rank`` (None: full rank)."""
    return _theory_instance(
        rng,
        None,
        batch=None,
        rounds=int(rng.integers(2, 5)),
        P=int(rng.integers(2, 4)),
        ratios=(1.0, 0.34),
        init_rank=init_rank,
    )


def _step_25_26_search(rng, want: str, tries: int):
    """A full-batch run where step (25) (summed over ℰ) or step (26) (at one t ∈ ℰ) fails."""
    for _ in range(tries):
        # a rank-1 w₀ makes the t = 0 truncation lossless, so the later rounds' small jumps decide the sum
        inst = _step_25_26_instance(rng, init_rank=1 if want == "25" else None)
        c = constants(inst)
        seq = sequences(inst, 0)
        ys, hs, ws = [], [], []
        for k in range(inst.rounds):
            t = k * seq.E
            ys.append(inst.space.w(seq.ybar(t)))
            hs.append(inst.space.w(seq.hbar(t)))
            ws.append(seq.server[k])
        data = {
            "features": [inst.fed.a[p, : inst.fed.counts[p]].tolist() for p in range(inst.P)],
            "labels": [inst.fed.y[p, : inst.fed.counts[p]].tolist() for p in range(inst.P)],
            "L_f": c.L_f,
            "params": inst.params,
            "x0": inst.x0.tolist(),
        }
        if want == "25":
            jump = sum(float(inst.fed.loss(a)) - float(inst.fed.loss(b)) for a, b in zip(ys, hs))
            rhs = c.L_f * sum(float(np.sum((a - b) ** 2)) for a, b in zip(ys, hs))
            if jump > rhs * (1 + 1e-6) + 1e-12:
                return {**data, "w_ybar": [a.tolist() for a in ys], "w_hbar": [b.tolist() for b in hs]}, jump, rhs
        else:
            for k, (a, b, w) in enumerate(zip(ys, hs, ws)):
                x, y = a - w, w - b
                size = 1e-7 * (1 + float(np.linalg.norm(w)))  # both gaps well above rounding
                nx, ny = float(np.linalg.norm(x)), float(np.linalg.norm(y))
                if min(nx, ny) > size and float(x @ y) > 1e-3 * nx * ny:
                    return (
                        {**data, "round": k, "w_ybar": a.tolist(), "w_t": w.tolist(), "w_hbar": b.tolist()},
                        float(x @ y),
                        0.0,
                    )
    return None, 0.0, 0.0


def _mp_loss(features, labels, w):
    total = mpmath.mpf(0)
    for feats, labs in zip(features, labels):
        s = mpmath.mpf(0)
        for a, y in zip(feats, labs):
            s += mpmath.log(
                1 + mpmath.exp(-mpmath.mpf(y) * mpmath.fsum(mpmath.mpf(x) * mpmath.mpf(v) for x, v in zip(a, w)))
            )
        total += s / len(feats)
    return total / len(features)


@claim(
    id="fedhm/theorem-3/step-25",
    ref="Theorem 3 (eq. 25)",
    title="Step (25): Σ_ℰ E[g(ȳ_t) − g(h̄_t)] ≤ L_f Σ_ℰ E‖w(ȳ_t) − w(h̄_t)‖² by Lipschitz continuity of f",
    statement=r"Eq. (25): ``by Lipschitz continuity of $f$, $\sum_{t\in\mathcal E}\mathbb E[g(\bar y_t)-g(\bar h_t)]=\sum_{t\in\mathcal E}"
    r"\mathbb E[f(w(\bar y_t))-f(w(\bar h_t))]\le L_f\sum_{t\in\mathcal E}\mathbb E[\|w(\bar y_t)-w(\bar h_t)\|^2]$''.",
    kind="simulation",
    expect="refuted",
)
def theorem_3_step_25(ctx):
    cex, jump, rhs = _step_25_26_search(ctx.rng, "25", 40)
    ok = cex is None
    return ctx.decide(
        ok,
        measured={"sum_of_jumps": jump, "L_f_times_sum_of_squared_distances": rhs},
        tolerance="strict, with a 1e-6 relative margin; replayed in 50-digit arithmetic",
        counterexample=cex,
        notes="Lipschitz continuity gives f(a) − f(b) ≤ L_f‖a − b‖, not ‖a − b‖²: when ‖w(ȳ_t) − w(h̄_t)‖ < 1 the "
        "squared norm is the smaller one. A full-batch run of Algorithm 2 (so the expectations are the "
        "values) where the sum of the jumps exceeds the printed bound. With the correct step the term "
        "2L_f/(Tη)·Σ√E‖·‖² enters Theorem 3 instead of the squared norms, which changes its κ_σ terms to "
        "square roots.",
    )


@_replays_stored_run(theorem_3_step_25)
def _(cex, ctx, ys, hs, _):
    with mpmath.workdps(50):
        jump = mpmath.fsum(
            _mp_loss(cex["features"], cex["labels"], a) - _mp_loss(cex["features"], cex["labels"], b)
            for a, b in zip(ys, hs)
        )
        # L_f from the data: max_p mean_j ‖a_j‖
        lf = max(
            mpmath.fsum(mpmath.sqrt(mpmath.fsum(mpmath.mpf(x) ** 2 for x in a)) for a in feats) / len(feats)
            for feats in cex["features"]
        )
        rhs = lf * mpmath.fsum(
            mpmath.fsum((mpmath.mpf(x) - mpmath.mpf(y)) ** 2 for x, y in zip(a, b)) for a, b in zip(ys, hs)
        )
    return ctx.decide(
        jump <= rhs,
        measured={"jump_mp": mpmath.nstr(jump, 15), "rhs_mp": mpmath.nstr(rhs, 15)},
        tolerance="50 digits",
        notes="Algorithm 2 re-run on the stored data and w₀, the step evaluated in mpmath",
    )


def _step_26_cosines(inst: Instance, seed: int) -> list[tuple[float, dict]]:
    """At each aggregation step t = kE > 0 of one run: cos∠(w(ȳ_t) − w_t, w_t − w(h̄_t)) (when both gaps are well above
    rounding) and the vectors."""
    seq = sequences(inst, seed)
    out = []
    for k in range(1, inst.rounds):
        t = k * seq.E
        a, b, w = inst.space.w(seq.ybar(t)), inst.space.w(seq.hbar(t)), seq.server[k]
        x, y = a - w, w - b
        nx, ny = float(np.linalg.norm(x)), float(np.linalg.norm(y))
        if min(nx, ny) > 1e-7 * (1 + float(np.linalg.norm(w))):
            out.append(
                (float(x @ y) / (nx * ny), {"round": k, "w_ybar": a.tolist(), "w_t": w.tolist(), "w_hbar": b.tolist()})
            )
    return out


@claim(
    id="fedhm/theorem-3/step-26",
    ref="Theorem 3 (eq. 26)",
    title="Step (26): E‖w(ȳ_t) − w(h̄_t)‖² ≤ E‖w(ȳ_t) − w_t‖² + E‖w_t − w(h̄_t)‖² on Algorithm 2's states",
    statement=r"Eq. (26): for any $t\in\mathcal E$, $\mathbb E\|w(\bar y_t)-w(\bar h_t)\|^2=\mathbb E\|w(\bar y_t)-w_t+w_t-w(\bar h_t)\|^2\le"
    r"\mathbb E\|w(\bar y_t)-w_t\|^2+\mathbb E\|w_t-w(\bar h_t)\|^2$ — holds exactly when the truncation error "
    r"$a=w(\bar y_t)-w_t$ and the averaging gap $b=w_t-w(\bar h_t)$ have $\mathbb E\langle a,b\rangle\le0$.",
    kind="probe",
    controls=[
        Control(
            "averaging-gap-sign-flipped",
            "⟨a, −b⟩ ≤ 0 with the averaging gap's sign flipped: ⟨a, b⟩ = Σ_i (1 − ā_i²)"
            "σ_i(u_iᵀŪV̄ᵀv_i − σ_i) is nonzero for heterogeneous ranks, so ⟨a, b⟩ ≤ 0 and ⟨a, −b⟩ ≤ 0 cannot both hold on "
            "such a state: the flipped statement must fail where the claim holds strictly",
            {"gap_sign": -1.0},
        )
    ],
)
def theorem_3_step_26(ctx):
    rng = ctx.rng
    sign = ctx.param("gap_sign", 1.0)
    best, best_cex, states = -np.inf, None, 0
    for _ in range(25 if not ctx.full else 150):
        kw = dict(
            batch=None,
            rounds=int(rng.integers(2, 6)),
            P=int(rng.integers(2, 6)),
            E=int(rng.integers(1, 7)),
            ratios=[(1.0, 0.34), (1.0, 0.5), (0.5,), (1.0, 0.67, 0.34), (0.67, 0.34)][int(rng.integers(5))],
            eta_fraction=float(rng.uniform(0.3, 1)),
            w_scale=float(10 ** rng.uniform(-1.5, 0.7)),
            scale=float(10 ** rng.uniform(-1, 0.5)),
            init_rank=[None, 1][int(rng.integers(2))],
            heterogeneity=float(rng.uniform(0, 4)),
            samples=int(rng.integers(1, 6)),
        )
        inst = _random_instance(rng, **kw)
        for cos, cex in _step_26_cosines(inst, 0):
            cos *= sign
            states += 1
            if cos > best:
                best, best_cex = cos, {**cex, **_instance_record(inst)}

    def decode(z):
        u = 0.5 * (1 + np.tanh(z))
        return {
            "scale": float(10 ** (-1 + 1.5 * u[0])),
            "w_scale": float(10 ** (-1.5 + 2.2 * u[1])),
            "eta_fraction": 0.3 + 0.7 * u[2],
            "heterogeneity": 4 * u[3],
            "E": 1 + int(6 * u[4]),
        }

    def violation(kw):
        inst = make_instance(
            np.random.default_rng(13), P=3, samples=3, ratios=(1.0, 0.67, 0.34), rounds=4, batch=None, **kw
        )
        return max([sign * c for c, _ in _step_26_cosines(inst, 0)], default=-1.0)

    result = probe_by_tier(
        ctx, violation, Custom(5, decode), seed=rng, n_random=(12, 80), n_starts=(1, 4), maxiter=(12, 120), target=1e-3
    )
    ok = best <= 1e-3 and result.worst_value <= 1e-3
    return ctx.decide(
        ok,
        measured={
            "largest_cosine_random": best,
            "largest_cosine_probe": result.worst_value,
            "states": states,
            "probe_evaluations": result.n_evaluations,
        },
        tolerance="cos∠(a, b) ≤ 1e-3 (full-batch runs, gaps above 1e-7·(1 + ‖w_t‖))",
        counterexample=None if ok else {**best_cex, "probe": result.to_json()},
        notes="The inequality the step invokes, ‖a + b‖² ≤ ‖a‖² + ‖b‖², is false in general (the valid one is "
        "2‖a‖² + 2‖b‖²) and the paper gives no reason why ⟨a, b⟩ ≤ 0 here. On Algorithm 2's states it held: "
        "⟨a, b⟩ = Σ_i (1 − ā_i²)σ_i(u_iᵀŪV̄ᵀv_i − σ_i) with ā_i the share of clients of rank ≥ i, and the "
        "clients' factor covariance w_t − ŪV̄ᵀ was positive along w_t's truncated directions in every state "
        "found (largest cosine reported). An unproven step that held, not a refutation.",
    )


@_replays_stored_run(theorem_3_step_26)
def _(cex, ctx, y, h, w):
    from fractions import Fraction

    a = [Fraction(x) - Fraction(v) for x, v in zip(y.tolist(), w.tolist())]
    b = [Fraction(x) - Fraction(v) for x, v in zip(w.tolist(), h.tolist())]
    inner = sum(x * y for x, y in zip(a, b))
    return ctx.decide(
        inner <= 0,
        measured={"inner_product_exact": float(inner)},
        tolerance="exact rationals",
        notes="Algorithm 2 re-run on the stored data and w₀; ‖a + b‖² − ‖a‖² − ‖b‖² = 2⟨a, b⟩, exactly",
    )


@claim(
    id="fedhm/theorem-3/step-27-and-y-identity",
    ref="Theorem 3 (eq. 27)",
    title="Eq. (27) and the factor identity ‖ȳ_t − y_{p,t}‖² = 2Σ_ℓ‖avg√Σ_r − √Σ_{r(p)}‖² on Algorithm 2's states",
    statement=r"Eq. (27): $\mathbb E\|w(\bar y_t)-w_t\|^2=\sum_{\ell=\rho+1}^L\mathbb E\|(\frac1P\sum_p\sqrt{\Sigma_{r(p,\ell),t}})^2-"
    r"\Sigma_t^\ell\|_F^2\le(L-\rho)\kappa_{\sigma_1}$, and $\mathbb E\|\bar y_t-y_{p,t}\|^2=2\sum_\ell\mathbb E\|\frac1P\sum_i"
    r"\sqrt{\Sigma_{r(i,\ell),t}}-\sqrt{\Sigma_{r(p,\ell),t}}\|_F^2\le2(L-\rho)\kappa_{\sigma_2}$ — on the aggregation states of runs.",
    kind="simulation",
    controls=[
        factor_2_dropped(
            "‖ȳ − y_p‖² = Σ_ℓ ‖avg√Σ − √Σ_p‖² without the factor 2 (U and V each carry the "
            "gap): false a priori at any aggregation step with heterogeneous ranks (γ ∈ {1, 0.67, 0.34})"
        )
    ],
)
def theorem_3_step_27(ctx):
    rng = ctx.rng
    worst, states = 0.0, 0
    for _ in range(5 if not ctx.full else 20):
        inst = _theory_instance(rng, ctx, ratios=(1.0, 0.67, 0.34), P=3)
        seq = sequences(inst, int(rng.integers(1000)))
        for k in range(inst.rounds):
            t = k * seq.E
            w = seq.server[k]
            a1, a2, per = sqrt_sigma_gap(inst, w)
            lhs1 = float(np.sum((inst.space.w(seq.ybar(t)) - w) ** 2))
            rhs1 = sum(x for x, _ in per)
            scale = sum(
                float(np.sum(np.linalg.svd(layer.to_matrix(w), compute_uv=False) ** 2)) for layer in inst.layout.layers
            )
            worst = max(worst, abs(lhs1 - rhs1) / scale)
            # per client: ‖ȳ − y_p‖² = 2 Σ_ℓ ‖avg√Σ − √Σ_p‖²
            for p in range(inst.P):
                lhs2 = float(np.sum((seq.ybar(t) - seq.y(t)[p]) ** 2))
                rhs2 = 0.0
                for layer in inst.layout.layers:
                    s = np.linalg.svd(layer.to_matrix(w), compute_uv=False)
                    roots = truncated_roots(
                        s, [layer.rank(inst.algo.ratios[inst.levels[i]], "matrix") for i in range(inst.P)]
                    )
                    rhs2 += ctx.param("factor_2", 2.0) * float(np.sum((roots.mean(0) - roots[p]) ** 2))
                worst = max(
                    worst,
                    abs(lhs2 - rhs2)
                    / (
                        sum(
                            float(np.sum(np.sqrt(np.linalg.svd(layer.to_matrix(w), compute_uv=False))))
                            for layer in inst.layout.layers
                        )
                        ** 2
                        + 1e-300
                    ),
                )
            states += 1
    tol = 500 * EPS
    return ctx.decide(
        worst <= tol,
        measured={"worst_relative_residual": worst, "states": states},
        tolerance=tol,
        notes="The server's y_{p,t} are the thin-SVD factors U√Σ_r, V√Σ_r, so both identities are exact; the "
        "inequalities are Assumption 5's definitions of κ_σ1, κ_σ2 (per layer).",
    )


@claim(
    id="fedhm/theorem-3/step-28",
    ref="Theorem 3 (eq. 28)",
    title="Eq. (28): ‖w_t − w(h̄_t)‖² ≤ κ_UV²(1/P)Σ_p‖h_{p,t} − h̄_t‖², then Lemma 1",
    statement=r"Eq. (28): for $t\in\mathcal E$, $t>0$, $\mathbb E\|w_t-w(\bar h_t)\|^2=\sum_\ell\mathbb E\|\frac1P\sum_pU_{p,t}(V_{p,t}-\bar V_t)^\top"
    r"\|_F^2\le\kappa_{UV}^2\sum_\ell\frac1P\sum_p\mathbb E\|V_{p,t}-\bar V_t\|_F^2\le\kappa_{UV}^2\frac1P\sum_p\mathbb E\|h_{p,t}-"
    r"\bar h_t\|^2\le6\eta^2\kappa_{UV}^2E^2\kappa_g+\frac{3\kappa_{UV}^2}P\sum_p\mathbb E\|\bar y_{t-E}-y_{p,t-E}\|^2$.",
    kind="simulation",
    controls=[
        Control(
            "uncentred-v",
            "(1/P)ΣU_pV_pᵀ − ŪV̄ᵀ = (1/P)ΣU_pV_pᵀ (V not centred): false a priori whenever ŪV̄ᵀ ≠ 0, "
            "i.e. at every generic state",
            {"centre_v": False},
        )
    ],
)
def theorem_3_step_28(ctx):
    rng = ctx.rng
    worst = {"identity": 0.0, "jensen_and_norms": -np.inf, "to_h": -np.inf, "mc_with_lemma_1": -np.inf}
    runs = 15 if not ctx.full else 60
    for inst, c, seqs, kappa in theory_instances_with_runs(
        rng, ctx, 3 if not ctx.full else 10, runs, ratios=(1.0, 0.67, 0.34), P=3
    ):
        eta, E = inst.algo.lr, inst.algo.local_steps
        lhs_k, rhs_k = {}, {}
        for s in seqs:
            for k in range(1, inst.rounds):
                t = k * E
                hs = s.h_state[t]
                hbar = hs.mean(0)
                gap = s.server[k] - inst.space.w(hbar)
                lhs = float(np.sum(gap**2))
                middle, vdist = 0.0, 0.0
                for (U, V), layer in zip(inst.space.factors(hs), inst.layout.layers):
                    Vbar = V.mean(0)
                    terms = np.einsum("pir,pjr->pij", U, V - Vbar[None] if ctx.param("centre_v", True) else V)
                    ident = layer.to_matrix(gap) - terms.mean(0)
                    worst["identity"] = max(
                        worst["identity"], float(np.abs(ident).max()) / (float(np.abs(terms).max()) + 1e-300)
                    )
                    middle += float(np.mean(np.sum(terms**2, axis=(1, 2))))
                    vdist += float(np.mean(np.sum((V - Vbar[None]) ** 2, axis=(1, 2))))
                hdist = float(np.mean(np.sum((hs - hbar[None]) ** 2, axis=1)))
                worst["jensen_and_norms"] = max(
                    worst["jensen_and_norms"],
                    (lhs - middle) / (lhs + middle + 1e-300),
                    (middle - kappa**2 * vdist) / (middle + kappa**2 * vdist + 1e-300),
                )
                worst["to_h"] = max(worst["to_h"], (vdist - hdist) / (vdist + hdist + 1e-300))
                drift = float(np.mean(np.sum((s.ybar(t - E) - s.y(t - E)) ** 2, axis=1)))
                lhs_k.setdefault(k, []).append(lhs)
                rhs_k.setdefault(k, []).append(6 * eta**2 * kappa**2 * E**2 * c.kappa_g(kappa) + 3 * kappa**2 * drift)
        for k in lhs_k:
            worst["mc_with_lemma_1"] = max(worst["mc_with_lemma_1"], float(np.mean(lhs_k[k]) / np.mean(rhs_k[k])) - 1)
    tol = 1e-12
    ok = (
        worst["identity"] <= 1e-12
        and worst["jensen_and_norms"] <= tol
        and worst["to_h"] <= tol
        and worst["mc_with_lemma_1"] <= 0
    )
    return ctx.decide(
        ok,
        measured=worst,
        tolerance={"pathwise": tol, "expectation": "Monte Carlo ratio ≤ 1"},
        notes="(1/P)ΣU_pV_pᵀ − ŪV̄ᵀ = (1/P)ΣU_p(V_p − V̄)ᵀ exactly; then Jensen, ‖U(·)‖_F ≤ ‖U‖_F‖·‖_F ≤ κ_UV‖·‖_F "
        "(the paper cites 'Assumption 5' for this step; it is Assumption 4) and ‖V_p − V̄‖ ≤ ‖h_p − h̄‖.",
    )


def _theorem_3_from_theorem_2():
    """Theorem 2's right side with (25)–(28) and the ȳ identity substituted, as the paper does; and Theorem 3's."""
    T, E, eta, L, kg, Mg, P, Lf, kuv, nl, ks1, ks2, f0, flow = sp.symbols(
        "T E eta L kappa_g M_g P L_f kappa_UV n_l kappa_s1 kappa_s2 f_0 f_low", positive=True
    )
    nE = T / E  # |ℰ|
    Ysum = nE * P * 2 * nl * ks2  # Σ_ℰ Σ_p E‖ȳ_t − y_{p,t}‖² ≤ |ℰ|·P·2(L − ρ)κ_σ2
    # (25)–(28): Σ_ℰ E[g(ȳ) − g(h̄)] ≤ L_f Σ_ℰ [(L − ρ)κ_σ1 + 6η²κ²E²κ_g + (3κ²/P)·Σ_p E‖ȳ_{t−E} − y_{p,t−E}‖²]
    jumps = Lf * (nE * nl * ks1 + nE * 6 * eta**2 * kuv**2 * E**2 * kg + 3 * kuv**2 / P * Ysum)
    thm2 = (
        2 / (T * eta) * (f0 - flow)
        + 6 * eta**2 * L**2 * kg * E**2
        + eta * L * Mg / P
        + 2 / (T * eta) * jumps
        + 3 * L**2 * E / (T * P) * Ysum
    )
    thm3 = (
        2 / (T * eta) * (f0 - flow)
        + 2 * Lf * nl * ks1 / (E * eta)
        + 6 * eta * kg * E * (eta * L**2 * E + 2 * Lf * kuv**2)
        + eta * L * Mg / P
        + 6 * nl * ks2 * (L**2 + 2 * Lf * kuv**2 / (E * eta))
    )
    return thm2, thm3


@claim(
    id="fedhm/theorem-3/algebra",
    ref="Theorem 3 (eq. 29)",
    title="Theorem 3 is Theorem 2 with (25)–(28) and the ȳ identity substituted (the algebra, given those steps)",
    statement=r"Theorem 3: under Assumptions 3–5, $\frac1T\sum_t\mathbb E\|\nabla g(\hat h_t)\|^2\le\frac2{T\eta}(f(w_0)-f_{\rm low})+\frac{2L_f"
    r"(L-\rho)\kappa_{\sigma_1}}{E\eta}+6\eta\kappa_gE(\eta L_{\nabla g}^2E+2L_f\kappa_{UV}^2)+\frac{\eta L_{\nabla g}M_g}P+6(L-\rho)"
    r"\kappa_{\sigma_2}(L_{\nabla g}^2+\frac{2L_f\kappa_{UV}^2}{E\eta})$ — equal to eq. (22) after substituting (25)–(28), "
    r"$|\mathcal E|=T/E$ and $\mathbb E\|\bar y_t-y_{p,t}\|^2\le2(L-\rho)\kappa_{\sigma_2}$.",
    kind="symbolic",
)
def theorem_3_algebra(ctx):
    thm2, thm3 = _theorem_3_from_theorem_2()
    diff = sp.simplify(thm2 - thm3)
    decide = (
        ctx.decide
        if diff != 0
        else (
            lambda ok, **kw: ctx.proved(
                "sympy: simplify(RHS(22) with (25)–(28) substituted − Theorem 3's RHS) == 0", **kw
            )
        )
    )
    return decide(
        diff == 0,
        measured={"difference": str(diff)},
        tolerance="exact (sympy)",
        notes="The assembly is right given its inputs, but one input is false: (25) (refuted: Lipschitz "
        "continuity bounds f(a) − f(b) by L_f‖a − b‖, not its square), and (26) invokes ‖a + b‖² ≤ ‖a‖² + ‖b‖², "
        "false in general, which held on Algorithm 2's states. The t − E index shift of (28) is absorbed by "
        "summing over all of ℰ.",
    )


def _step_25_inputs(rng, n: int) -> dict:
    """On ``n`` full-batch runs of the step-(25) family (rank-1 w₀, heterogeneous ranks, as fedhm/theorem-3/step-25 draws
    them): the jump sum J = Σ_ℰ [g(ȳ_t) − g(h̄_t)] against L_f Σ_ℰ ‖w(ȳ_t) − w(h̄_t)‖ (Lipschitz continuity of f: the correct
    form of step (25)) and against L_f Σ_ℰ ‖·‖² (the printed form), and Theorem 3's LHS/RHS on the same runs."""
    out = {
        "worst_jump_over_lipschitz": -np.inf,
        "worst_jump_over_printed_25": -np.inf,
        "worst_theorem_3_ratio": 0.0,
        "runs": 0,
    }
    for _ in range(n):
        inst = _step_25_26_instance(rng, init_rank=1)
        c = constants(inst)
        r = run_terms(inst, 0)
        seq = sequences(inst, 0)
        gaps = [inst.space.w(seq.ybar(k * seq.E)) - inst.space.w(seq.hbar(k * seq.E)) for k in range(inst.rounds)]
        lipschitz = c.L_f * sum(float(np.linalg.norm(d)) for d in gaps)
        printed = c.L_f * sum(float(d @ d) for d in gaps)
        scale = 1e-12 + 1e-9 * abs(r.jump)  # rounding of the loss differences
        out["worst_jump_over_lipschitz"] = max(
            out["worst_jump_over_lipschitz"], (r.jump - lipschitz) / (lipschitz + scale)
        )
        out["worst_jump_over_printed_25"] = max(
            out["worst_jump_over_printed_25"], (r.jump - printed) / (printed + scale)
        )
        if inst.algo.lr * c.L_g(r.kappa_uv) <= 1:
            ratio = r.lhs / theorem_3_rhs(inst, c, r.kappa_uv, r.f0, max(r.sigma1), max(r.sigma2))
            out["worst_theorem_3_ratio"] = max(out["worst_theorem_3_ratio"], ratio)
        out["runs"] += 1
    return out


@claim(
    id="fedhm/theorem-3/simulation",
    ref="Theorem 3",
    title="Theorem 3's bound against Algorithm 2 with κ_σ1, κ_σ2 measured on the runs, and its (25) input on runs that separate "
    "the true step from the printed one",
    statement=r"Theorem 3 on Algorithm 2's runs: $\frac1T\sum_t\mathbb E\|\nabla g(\hat h_t)\|^2$ is at most its right side with the "
    r"problem's constants, $\kappa_{UV}$ of the run, $\kappa_{\sigma_1},\kappa_{\sigma_2}$ the largest (Monte Carlo) expectations of "
    r"Assumption 5's quantities over $t\in\mathcal E$ and layers, $\eta\le1/L_{\nabla g}$; and on full-batch runs where the "
    r"truncation jumps are small, the jump sum that its $\kappa_{\sigma_1}$ term bounds obeys the correct form of step (25), "
    r"$\sum_{\mathcal E}[g(\bar y_t)-g(\bar h_t)]\le L_f\sum_{\mathcal E}\|w(\bar y_t)-w(\bar h_t)\|$.",
    kind="probe",
    controls=[
        Control(
            "step-25-as-printed",
            "the jump sum against the printed step (25), L_f Σ‖w(ȳ_t) − w(h̄_t)‖²: false a priori "
            "(f(b + εu) − f(b) ≈ ε⟨∇f(b), u⟩ exceeds L_f ε² for small ε wherever ∇f ≠ 0), so the runs must expose it "
            "— the bound's own ratio (≤ 0.03) could not",
            {"step_25": "squared"},
        )
    ],
)
def theorem_3_simulation(ctx):
    out = _theorem_sim(ctx, 3)
    result = out.pop("probe")
    step = _step_25_inputs(ctx.rng, 8 if not ctx.full else 30)
    out.update({f"step_25_family_{k}": v for k, v in step.items()})
    worst = max(
        out["worst_ratio_stochastic"],
        out["worst_ratio_full_batch"],
        out["probe_worst_ratio"],
        step["worst_theorem_3_ratio"],
    )
    form = ctx.param("step_25", "lipschitz")
    jump_excess = step["worst_jump_over_printed_25" if form == "squared" else "worst_jump_over_lipschitz"]
    ok = worst <= 1 and jump_excess <= 0
    return ctx.decide(
        ok,
        measured=out,
        tolerance="LHS/RHS ≤ 1; jump sum ≤ its bound up to 1e-9 relative (loss rounding)",
        counterexample=None if ok else {"probe": result.to_json(), "step_25_form": form},
        notes="The printed bound held on every run and in the adversarial search, by a wide margin (ratios ≤ 0.03: "
        "it cannot tell a true derivation from one with a false step, so the jump sum its κ_σ1 term comes from "
        "is checked on the same kind of runs: it obeys the Lipschitz form, and the control shows these runs "
        "break the printed squared form, fedhm/theorem-3/step-25). The slack of the other terms (κ_g, L_∇g of "
        "the whole ball) covers the false step here. Heterogeneous ranks (γ ∈ {1, 1/3}) make κ_σ2 > 0.",
    )


# --------------------------------------------------------------------------------------------
# Theorem 1: the order-of-magnitude form
# --------------------------------------------------------------------------------------------


def _nonneg_rational(expr) -> bool:
    """A positivity certificate: expr (of positive symbols) is a ratio of polynomials whose coefficients are all ≥ 0."""
    num, den = sp.fraction(sp.together(sp.expand(expr)))
    parts = [sp.expand(num), sp.expand(den)]
    for part in parts:
        if part.free_symbols:
            if any(c < 0 for c in sp.Poly(part, *sorted(part.free_symbols, key=str)).coeffs()):
                return False
        elif part < 0:
            return False
    return True


@claim(
    id="fedhm/theorem-1",
    ref="Theorem 1",
    title="Theorem 1 (informal) is Theorem 3 in order-of-magnitude form, with T rounds of E steps",
    statement=r"Theorem 1: under Assumptions 1–2, $\frac1{TE}\sum_i\mathbb E\|\nabla g(\hat h_i)\|^2\le\mathcal O\big(\frac{f(w_0)-f_{\rm low}}"
    r"{TE\eta}+\frac{\kappa_g\eta}P+\kappa_g\max\{E\eta,E^2\eta^2\}+\kappa_\sigma(1+\frac1{E\eta})\big)$ — from Theorem 3 with "
    r"$\kappa_\sigma=\max\{\kappa_{\sigma_1},\kappa_{\sigma_2}\}$, $M_g=\mathcal O(\kappa_g)$ and Algorithm 2's $TE$ iterations.",
    kind="symbolic",
)
def theorem_1(ctx):
    T, E, eta, L, kg, P, Lf, kuv, nl, ks, f0, flow, u = sp.symbols(
        "T E eta L kappa_g P L_f kappa_UV n_l kappa_sigma f_0 f_low u", positive=True
    )
    TE = T * E  # Algorithm 2's iterations
    # Theorem 3's five terms, with κ_σ1, κ_σ2 ≤ κ_σ and M_g ≤ κ_g (a variance is at most the second moment)
    terms = [
        2 / (TE * eta) * (f0 - flow),
        2 * Lf * nl * ks / (E * eta),
        6 * eta * kg * E * (eta * L**2 * E + 2 * Lf * kuv**2),
        eta * L * kg / P,
        6 * nl * ks * (L**2 + 2 * Lf * kuv**2 / (E * eta)),
    ]
    consts = [2, 2 * Lf * nl, 6 * L**2 + 12 * Lf * kuv**2, L, 6 * nl * (L**2 + 2 * Lf * kuv**2)]
    x = E * eta
    proved = []
    for case, sub in (("E*eta <= 1", u / (1 + u)), ("E*eta >= 1", 1 + u)):
        mx = x if case.startswith("E*eta <= 1") else x**2
        orders = [(f0 - flow) / (TE * eta), ks / (E * eta), kg * mx, kg * eta / P, ks * (1 + 1 / (E * eta))]
        for i, (term, cst, order) in enumerate(zip(terms, consts, orders)):
            gap = (cst * order - term).subs(eta, sub / E)  # Eη = sub in the case's range
            if not (sp.simplify(gap) == 0 or _nonneg_rational(gap)):
                return ctx.refuted(
                    measured={"case": case, "term": i, "gap": str(sp.simplify(gap))},
                    counterexample={"case": case, "term": i},
                    notes="a term is not dominated by its order",
                )
            proved.append(f"{case}: term {i + 1}")
    return ctx.proved(
        "sympy: each of Theorem 3's terms is dominated by a constant times Theorem 1's (gap 0 or a ratio of "
        "polynomials with nonnegative coefficients), for Eη ≤ 1 and Eη ≥ 1",
        measured={"dominations_proved": len(proved), "constants": [str(c) for c in consts]},
        tolerance="exact: after Eη = u/(1+u) or 1+u (u > 0), each gap is 0 or a ratio of polynomials with "
        "nonnegative coefficients",
        notes="Each of Theorem 3's terms is at most an explicit constant (in L_∇g, L_f, κ_UV, L − ρ) times the "
        "matching term of Theorem 1, so Theorem 1 follows from Theorem 3. It inherits Theorem 3's status: the "
        "printed bound held in every simulation, but its proof has a false step (eq. 25) and an unproven one "
        "(eq. 26).",
    )


@claim(
    id="fedhm/theorem-2/remark-full-rank-drift-vanishes",
    ref="Theorem 2 (remarks)",
    title="With every participant at full rank the heterogeneity term of Theorem 2 vanishes",
    statement=r"Remark after Theorem 2: the final term $\frac{3L_{\nabla g}^2E}{TP}\sum_{t\in\mathcal E}\sum_p\mathbb E\|\bar y_t-y_{p,t}\|^2$ "
    r"``appears due to the heterogeneity of the devices ... If all of the participants in the network used full rank models "
    r"(i.e., for all $p$, $U_p^\ell\in\mathbb R^{m\times r}$, ... with $r=\max\{m,n\}$), then this term would vanish.''",
    kind="simulation",
    controls=[
        Control(
            "heterogeneous-as-full-rank",
            "the 'full-rank' runs at ranks γ ∈ {1, 1/3}: the factors then differ "
            "(ȳ_t ≠ y_{p,t}) whenever w_t's second singular value is nonzero, so the drift cannot vanish",
            {"full_ratios": (1.0, 0.34)},
        )
    ],
)
def theorem_2_remark(ctx):
    rng = ctx.rng
    full_drift, hetero_drift = 0.0, 0.0
    for _ in range(4 if not ctx.full else 12):
        inst = _theory_instance(rng, ctx, ratios=tuple(ctx.param("full_ratios", (1.0,))), batch=1)
        full_drift = max(full_drift, run_terms(inst, int(rng.integers(100))).drift)
        inst = _theory_instance(rng, ctx, ratios=(1.0, 0.34), P=2, batch=1)
        hetero_drift = max(hetero_drift, run_terms(inst, int(rng.integers(100))).drift)
    ok = full_drift <= 1e-24 and hetero_drift > 1e-6
    return ctx.decide(
        ok,
        measured={"drift_sum_all_full_rank": full_drift, "drift_sum_heterogeneous": hetero_drift},
        tolerance="≤ 1e-24: every y_{p,t} is the same factorization of w_t, and the float mean of P equal vectors "
        "differs from each by ≤ P·eps·|y| per entry (|y| < 10, under 60 entries, a few rounds)",
        notes="At equal ranks every participant receives the same factors, so ȳ_t = y_{p,t}; this holds for any common "
        "rank, not only the full one. The printed r = max{m, n} should read min{m, n} (the rank of W ∈ R^{m×n}; "
        "a larger r only pads zeros).",
    )
