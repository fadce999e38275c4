"""Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions* — every numbered
statement as a claim.

Setting (Sections I-A, II-B): n = ms + r samples in [0,1]^d, r at the server and s at each of m
clients; a loss f(x; θ) smooth and strongly convex in θ ∈ R^p, (η, L2)-Hölder in x (ℓ¹ norm), with
non-singular and well-conditioned sampled gradient matrices G^(i) and bounded gradients. FedLRGD
(Algorithm 1) learns weights that let the server approximate the clients' gradients from its own,
then runs inexact GD; FedAve is FedPAQ without quantization. Definition 1 prices an algorithm by
Σ_t b_t + 1{communication}φτm.

This module holds Definition 1's timing models and Proposition 2; the package's ``low_rank.py`` (Lemma 1,
Theorem 1, Algorithm 1, Appendix A), ``complexity.py`` (Lemmas 2–4, Theorems 2–3, Proposition 1) and
``figure_statements.py`` (Figures 1–2) the rest; ``__init__.py`` keeps the inventory of all of them.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special
import scipy.stats
import sympy as sp

from fedtheory.analysis import timing_models as tm
from fedtheory.certify.params import Box, Product
from fedtheory.claims.probing import probe_by_tier
from fedtheory.claims.core import Control, claim
from fedtheory.symbolic import oracle_complexity as oc

EPS = float(np.finfo(np.float64).eps)


# --------------------------------------------------------------------------------------------
# Definition 1
# --------------------------------------------------------------------------------------------


@claim(
    id="fedlrgd/definition-1/oracle-complexity",
    ref="Definition 1",
    title="Federated oracle complexity: Γ = Σ_t b_t + 1{comm.}φτm; Algorithm 1 costs r² + rs + rS + φmr, FedAve T(b + φτm)",
    statement=r"Definition 1: $\Gamma(\mathcal A)\triangleq\sum_{t=1}^T b_t+\mathbb 1\{\text{clients communicate in epoch }t\}\phi\tau m$, "
    r"the sum over epochs of the orders (26) of the expected epoch times (25): Type A $2b+\log(\tau m)+\phi\tau m=\Theta(b+\phi\tau m)$, "
    r"Type B $2b=\Theta(b)$, Type C $\phi\tau m=\Theta(\phi\tau m)$; with $\phi=0$ it is the classical oracle complexity. "
    r"Applied to Algorithm 1 (epochs $r^2$; $rs+\phi m$; $(r-1)\times\phi m$; $rS$) it gives $r^2+rs+rS+\phi mr$ (Theorem 2), "
    r"and to FedAve $T(b+\phi\tau m)$ (Appendix D).",
    kind="symbolic",
)
def definition_1_oracle_complexity(ctx):
    """Sympy: Definition 1 summed over Algorithm 1's and FedAve's epochs; exact Θ constants of (25)→(26);
    the executed FedLRGD's gradient counters equal Γ at φ = 0."""
    r, s, S, phi, m, b, T, tau = (oc.SYMBOLS[k] for k in ("r", "s", "S", "phi", "m", "b", "T", "tau"))
    lrgd = sp.expand(oc.fedlrgd_complexity(r, s, S, phi, m) - (r**2 + r * s + r * S + phi * m * r))
    ave = sp.expand(oc.fedave_complexity(b, T, phi, tau, m) - T * (b + phi * tau * m))
    classical = sp.expand(oc.fedlrgd_complexity(r, s, S, 0, m) - (r**2 + r * s + r * S))
    # Θ in (26): A: 1 ≤ (2b + log τm + φτm)/(b + φτm) ≤ 2 + log(τm)/(φτm) ≤ 2 + 1/(eφ); B, C exact ratios 2 and 1.
    rng = ctx.rng
    bs = rng.integers(1, 10**4, size=4000)
    tms = np.exp(rng.uniform(0, math.log(1e12), size=4000))
    phis = np.exp(rng.uniform(math.log(1.0), math.log(1e6), size=4000))
    ratio_a = (2 * bs + np.log(tms) + phis * tms) / (bs + phis * tms)
    cap_a = 2 + 1 / (math.e * phis)
    # an executed FedLRGD run (ridge, r = p + 1) counts exactly these gradients
    from fedtheory.algorithms.fedlrgd import run_fedlrgd
    from fedtheory.problems.data_smooth import RidgeLoss

    server = np.c_[rng.normal(size=(4, 3)), rng.normal(size=4)]
    clients = np.c_[rng.normal(size=(5 * 6, 3)), rng.normal(size=30)].reshape(5, 6, 4)
    run = run_fedlrgd(RidgeLoss(0.5), server, clients, S=7, L1=50.0, phi=3.0, seed=rng)
    counted = (
        run.gradient_counts["epoch_1_server"]
        + run.gradient_counts["epoch_2_per_client"]
        + run.gradient_counts["epoch_last_server"]
    )
    ok = (
        lrgd == 0
        and ave == 0
        and classical == 0
        and bool(np.all(ratio_a >= 1))
        and bool(np.all(ratio_a <= cap_a))
        and counted == 4 * 4 + 4 * 6 + 4 * 7
        and run.complexity == counted + 3.0 * 5 * 4
    )
    ev = ctx.decide(
        ok,
        measured={
            "fedlrgd_residual": str(lrgd),
            "fedave_residual": str(ave),
            "typeA_ratio_min": float(ratio_a.min()),
            "typeA_ratio_max": float(ratio_a.max()),
            "executed_gradients": int(counted),
            "executed_complexity": run.complexity,
        },
        tolerance="exact (sympy expansion; integer counters); Θ of Type A shown with explicit constants 1 and 2 + 1/(eφ)",
        notes="Proved symbolically from the epoch lists of Algorithm 1 (r − 1 Type-C epochs as one symbolic block). "
        "Type A's ratio (25)/(26) lies in [1, 2 + log(τm)/(φτm)] ⊂ [1, 2 + 1/(eφ)], since log x ≤ x/e; sampled "
        "b ≤ 10⁴, τm ≤ 10¹², φ ∈ [1, 10⁶]. The executed run's counters (r², rs per client, rS) reproduce Γ.",
    )
    if ok:
        ev.proof = "sympy: expand(Γ(epochs) − closed form) == 0 for Algorithm 1 and FedAve; integer counters equal Γ"
    return ev


def _ratio_grid():
    bs = [1, 2, 3, 5, 10, 30, 100, 300, 1000, 3000, 10000]
    ks = [1, 2, 3, 10, 100, 10**3, 10**4, 10**6, 10**9, 10**12, 10**15]
    return bs, ks


@claim(
    id="fedlrgd/definition-1/straggler-model",
    ref="Definition 1",
    title="Erlang straggler model: a(x) of (16), the Gumbel limit (17), E[b + max Y] = Θ(2b + log τm) (19)-(21), server 2b (20)",
    statement=r"With $Y\sim$ Erlang$(b,1)$, $F_Y$ is a von Mises function with auxiliary function "
    r"$a(x)=\sum_{k=0}^{b-1}\frac{(b-1)!}{(b-k-1)!}x^{-k}$ (16); "
    r"$\frac{\max\{Y_1..Y_k\}-F_Y^{-1}(1-k^{-1})}{a(F_Y^{-1}(1-k^{-1}))}\to$ Gumbel (17); the expected Type-A computation time "
    r"$b+\mathbb E\max\{Y_1..Y_{\tau m}\}\approx\log(\tau m)+2b$ (19), read as $\Theta(b+\log\tau m)$ in (21), (26); "
    r"a server epoch takes $b+\mathbb E[Y]=2b$ (20).",
    kind="simulation",
    controls=[
        Control(
            "erlang-b-plus-1",
            "the simulated maximum of k Erlang(b, 1) compared with the exact E max of "
            "Erlang(b + 1, 1): false, each Erlang(b + 1) dominates Erlang(b) stochastically (one more Exp(1) "
            "stage), so the means differ by at least 1",
            {"reference_shape_offset": 1},
        )
    ],
)
def definition_1_straggler(ctx):
    """Exact quadrature of E max and the exact CDF of the normalized maximum, plus batched simulation."""
    x = sp.Symbol("x", positive=True)
    # (16): a(x) = (1 − F)/f = Γ(b, x)/(x^{b−1}e^{−x}) exactly, b = 1..10
    aux_ok = []
    for b in range(1, 11):
        upper = sp.uppergamma(b, x)
        exact = sp.simplify(sp.expand_func(upper) / (x ** (b - 1) * sp.exp(-x)))
        aux_ok.append(sp.simplify(exact - tm.erlang_auxiliary_closed_form(b, x)) == 0)
    # (20): E[Y] = b symbolically
    y = sp.Symbol("y", positive=True)
    b_sym = 5
    mean_y = sp.integrate(y * y ** (b_sym - 1) * sp.exp(-y) / sp.factorial(b_sym - 1), (y, 0, sp.oo))
    # (17): sup-distance of the normalized maximum's exact CDF to the Gumbel CDF decreases in k
    dists = {b: [tm.normalized_max_gumbel_distance(b, k) for k in (10, 10**3, 10**6, 10**12)] for b in (1, 5, 50)}
    monotone = all(all(u > v for u, v in zip(ds, ds[1:])) for ds in dists.values())
    # (19)/(21): ratio of exact b + E max to 2b + log(τm)
    bs, ks = _ratio_grid()
    ratios = np.array([[(b + tm.expected_max_erlang(b, k)) / (2 * b + math.log(k)) for k in ks] for b in bs])
    gumbel_rel = max(
        abs(tm.gumbel_mean_approximation(b, k) / tm.expected_max_erlang(b, k) - 1) for b in bs for k in ks if k >= 10**6
    )
    # (18): F^{-1}(1 − 1/k) ≈ log k + b, stated for 'τm very large': enforced for k ≥ 10³, reported for k ≥ 2
    q18_all = np.array(
        [[tm.erlang_upper_quantile(b, 1.0 / k) / tm.quantile_estimate_18(b, k) for k in ks if k >= 2] for b in bs]
    )
    q18 = np.array(
        [[tm.erlang_upper_quantile(b, 1.0 / k) / tm.quantile_estimate_18(b, k) for k in ks if k >= 10**3] for b in bs]
    )
    # simulation of the straggler maximum and of a server epoch
    rng = ctx.rng
    z_scores = []
    for b, k in ((1, 50), (4, 200), (20, 1000)):
        sim = tm.simulate_max_erlang(b, k, 4000 if not ctx.full else 40000, rng)
        ref = tm.expected_max_erlang(b + ctx.param("reference_shape_offset", 0), k)
        z_scores.append(abs(sim.mean() - ref) / (sim.std(ddof=1) / math.sqrt(sim.size)))
    server = 7 + rng.gamma(7, 1.0, size=20000)
    z_server = abs(server.mean() - 14) / (server.std(ddof=1) / math.sqrt(server.size))
    ok = (
        all(aux_ok)
        and mean_y == b_sym
        and monotone
        and dists[1][-1] < 1e-9
        and dists[50][-1] < 0.01
        and ratios.min() >= 0.5
        and ratios.max() <= 2.0
        and q18.min() >= 0.5
        and q18.max() <= 2.0
        and max(z_scores) < 5
        and z_server < 5
    )
    return ctx.decide(
        ok,
        measured={
            "ratio_exact_over_2b_plus_log_min": float(ratios.min()),
            "ratio_max": float(ratios.max()),
            "gumbel_mean_rel_error_k_ge_1e6": float(gumbel_rel),
            "quantile_over_log_k_plus_b_min_k_ge_1e3": float(q18.min()),
            "quantile_over_log_k_plus_b_max_k_ge_1e3": float(q18.max()),
            "quantile_over_log_k_plus_b_min_k_ge_2": float(q18_all.min()),
            "gumbel_cdf_distance": {str(b): [float(v) for v in ds] for b, ds in dists.items()},
            "simulation_max_z": float(max(z_scores)),
            "server_epoch_z": float(z_server),
        },
        tolerance={
            "theta": "Θ read with explicit constants: 1/2 ≤ (b + E max)/(2b + log τm) ≤ 2 and "
            "1/2 ≤ F⁻¹(1 − 1/k)/(log k + b) ≤ 2 (k ≥ 10³: the paper's 'τm very large') on b ≤ 10⁴, τm ≤ 10¹⁵",
            "simulation": "|sample mean − exact| < 5 standard errors",
            "gumbel": "exact CDF distance decreasing in k",
        },
        notes="(16) proved for b = 1..10 with sympy (a = Γ(b,x)/(x^{b−1}e^{−x})). E max computed by quadrature of "
        "1 − F^k (log1p/expm1), never by the approximation. The paper's '≈' in (19) is not a bound: the exact "
        "ratio stays within the measured range, so Θ(b + log τm) in (21) holds with constants near 1. The "
        "Gumbel approximation of the mean (first line of (19)) is accurate to the measured relative error for "
        "k ≥ 10⁶; the CDF distance decays like 1/log k for b > 1, so the limit (17) is slow for large b.",
    )


@claim(
    id="fedlrgd/definition-1/mm1-queue",
    ref="Definition 1",
    title="M/M/1 communication model: the time S for τm departures is Erlang(τm, 1), E S = τm (22)-(24)",
    statement=r"Client updates enter a FIFO M/M/1 queue with arrival rate 1 and service rate $\nu>1$, in steady state; by Burke's "
    r"theorem the departure process $D(t)$ is Poisson(1), so $S=\inf\{t\ge0:D(t)=\tau m\}$ (22) is Erlang$(\tau m,1)$, "
    r"$\mathbb E[S]=\tau m$ (23), and the expected communication time per epoch is $\phi\tau m$ (24).",
    kind="simulation",
    controls=[
        Control(
            "erlang-shape-plus-1",
            "the departure time of τm updates compared with Erlang(τm + 1, 1): false, by "
            "Burke's theorem departures form a Poisson(1) process, so S is Erlang(τm, 1) with mean τm",
            {"reference_shape_offset": 1},
        )
    ],
)
def definition_1_mm1(ctx):
    """Batched simulation from the stationary queue length; mean and Kolmogorov–Smirnov against Erlang(τm, 1)."""
    rng = ctx.rng
    reps = 20000 if not ctx.full else 200000
    rows = []
    for nu in (1.1, 2.0, 10.0):
        for tm_clients in (1, 10, 60):
            S = tm.simulate_mm1_departures(tm_clients, nu, reps, rng)
            shape = tm_clients + ctx.param("reference_shape_offset", 0)
            z = abs(S.mean() - shape) / math.sqrt(tm_clients / reps)
            ks = scipy.stats.kstest(S, scipy.stats.gamma(shape).cdf)
            rows.append(
                {"nu": nu, "tau_m": tm_clients, "mean": float(S.mean()), "z": float(z), "ks_p": float(ks.pvalue)}
            )
    ok = all(r["z"] < 5 for r in rows) and min(r["ks_p"] for r in rows) > 1e-4
    return ctx.decide(
        ok,
        measured={
            "max_mean_z": max(r["z"] for r in rows),
            "min_ks_pvalue": min(r["ks_p"] for r in rows),
            "cases": rows,
            "phi_tau_m": "E[communication] = φ·E[S] = φτm by linearity",
        },
        tolerance={
            "mean": "|mean − τm| < 5 standard errors (Var S = τm under the claim)",
            "distribution": "KS p-value > 1e-4 for each of 9 cases (family-wise false alarm ≈ 1e-3)",
        },
        notes="Replications start from the stationary number in system (geometric, ρ = 1/ν) with the in-service update's "
        "residual service Exp(ν) (memorylessness); departures D_k = max(A_k, D_{k−1}) + service_k. "
        f"{reps} replications per case.",
    )


# --------------------------------------------------------------------------------------------
# Proposition 2
# --------------------------------------------------------------------------------------------


def _prop2_violation(inst):
    b, q = inst["b"], inst["q"]
    lo, hi = tm.erlang_quantile_bounds(b, q)
    quant = tm.erlang_upper_quantile(b, 1.0 / q)
    return max(lo / quant, quant / hi)


@claim(
    id="fedlrgd/proposition-2",
    ref="Proposition 2",
    title="Erlang quantile: ½log(q−1) + ½log b ≤ F_Y^{-1}(1 − 1/q) ≤ 2log(q−1) + 2b log(2b) when (q−1)b ≥ 55",
    statement=r"For $Y\sim$ Erlang$(b,1)$, $b\in\mathbb N$, and any integer $q\in\mathbb N$ with $(q-1)b\ge55$: "
    r"$\tfrac12\log(q-1)+\tfrac12\log(b)\le F_Y^{-1}(1-\tfrac1q)\le2\log(q-1)+2b\log(2b)$.",
    kind="probe",
    control_exempt="both bounds hold with room (the lower bound drops all but one term of the series, the upper adds "
    "2b log 2b); no attaining instance exists, so no tightened constant is known false a priori",
)
def proposition_2(ctx):
    """Quantiles from the inverse regularized upper incomplete gamma (accurate for tiny tails); random
    integers (b, q) log-uniform with (q − 1)b ≥ 55, then an adversarial probe on (log b, log(q − 1))."""
    rng = ctx.rng
    worst = 0.0
    worst_at = None
    n = 3000 if not ctx.full else 30000
    for _ in range(n):
        b = int(round(math.exp(rng.uniform(0, math.log(1e5)))))
        qmin = 1 + math.ceil(55 / b)
        q = int(round(math.exp(rng.uniform(math.log(qmin), math.log(1e200)))))
        q = max(q, qmin)
        v = _prop2_violation({"b": b, "q": q})
        if v > worst:
            worst, worst_at = v, (b, q)

    def decode(z):
        raw = Product(lb=Box(0.0, math.log(1e5)), lq=Box(0.0, math.log(1e250))).decode(z)
        b = max(1, int(round(math.exp(raw["lb"]))))
        q = max(int(round(math.exp(raw["lq"]))) + 1, 1 + math.ceil(55 / b))
        return {"b": b, "q": q}

    from fedtheory.certify.params import Custom

    res = probe_by_tier(
        ctx,
        _prop2_violation,
        Custom(2, decode, sample=lambda r: r.uniform(-3, 3, size=2)),
        seed=rng,
        n_random=64,
        n_starts=(4, 12),
        maxiter=80,
        target=1.0,
    )
    worst_all = max(worst, res.worst_value)
    # the smallest admissible case, where the lower bound is closest: b = 1, q = 56 (exponential quantile log 56)
    corner = _prop2_violation({"b": 1, "q": 56})
    return ctx.decide(
        worst_all <= 1.0,
        measured={
            "worst_ratio": worst_all,
            "random_worst": worst,
            "random_worst_at_b_q": list(worst_at),
            "probe_worst": res.worst_value,
            "probe_at": res.worst_instance,
            "corner_b1_q56": corner,
        },
        tolerance="none needed: the worst ratio is far from 1 (quantiles from scipy.special.gammainccinv, relative error ~1e-14)",
        notes="Ratio = max(lower/quantile, quantile/upper), > 1 on a counterexample. b ≤ 10⁵, q ≤ 10²⁵⁰. Both bounds hold "
        "with room: the lower bound is loose by ≥ the measured factor (it drops all but one term of the series), the "
        "upper by the 2b log 2b term.",
    )
