"""Su, Xu & Yang, *A Non-parametric View of FedAvg and FedProx* — Section 5.1 (prediction error): Proposition 3,
Theorems 1–3, Lemmas 5–9, Remark 2 and the text's rate claims. The inventory is in ``nonparam.py``.

Expectations over the noise are computed exactly (the error is affine in ξ: mean² + trace), never sampled;
probabilities (Theorem 2, Lemma 8) are estimated by Monte Carlo and decided by an exact binomial test.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy import stats

from fedtheory.algorithms.kernel_federated import (
    KernelAlgorithm,
    PredictionDynamics,
    definitional_operators,
    run_kernel_federated,
)
from fedtheory.analysis import kernel_bounds as kb
from fedtheory.analysis.rate_fit import fit_exponential, fit_power_law
from fedtheory.certify.params import Box, Choice, Custom, IntRange, Product
from fedtheory.claims.probing import by_tier, probe_by_tier
from fedtheory.claims.core import Control, Reading, claim
from fedtheory.content import load_module
from fedtheory.problems.kernels import (
    KERNEL_FAMILIES,
    KernelFederation,
    LinearKernel,
    MercerSeries,
    SobolevKernel,
    gram_federation,
)

_base = load_module(Path(__file__).with_name("recursive_dynamics.py"))
random_federation, random_algorithm, gram_param = _base.random_federation, _base.random_algorithm, _base.gram_param
EPS = float(np.finfo(np.float64).eps)
ROUNDS = np.array([0, 1, 2, 3, 5, 10, 30, 100, 1000, 10**5])


# --------------------------------------------------------------------------------------------
# instances: a federation, an algorithm, a comparator f, an initial f_0, truths and noise levels
# --------------------------------------------------------------------------------------------


class Instance:
    """Everything Section 5.1's statements quantify over, with the exact quantities they compare.

    ``G``: Gram matrix of a dictionary Z whose first N points are the data; f = c_f·k_Z, f_0 = a_0·k_x,
    f_i^* given by values at each client's points (truth_values) — any values of ℋ-functions on the data;
    ``noise_var`` (N,) ≤ σ².
    """

    def __init__(
        self,
        fed: KernelFederation,
        algo: KernelAlgorithm,
        G: np.ndarray,
        c_f: np.ndarray,
        a0: np.ndarray,
        truth_values: np.ndarray,
        noise_var: np.ndarray,
        sigma: float,
    ) -> None:
        self.fed, self.algo, self.G = fed, algo, G
        N = fed.N
        self.f_values = G[:N] @ c_f
        self.f0_values = fed.gram @ a0
        diff = np.concatenate([a0, np.zeros(G.shape[0] - N)]) - c_f
        self.f0_dist_sq = float(max(diff @ G @ diff, 0.0))
        self.truth_values = truth_values
        self.Delta = truth_values - self.f_values
        self.noise_var = noise_var
        self.sigma = float(sigma)
        self.dyn = PredictionDynamics(fed, algo)
        self.kappa = algo.kappa(self.dyn.gamma)
        self.s = algo.bound_s
        self.lam = np.sort(np.clip(np.linalg.eigvalsh(fed.K_x), 0, None))[::-1]

    def expected_error(self, rounds) -> np.ndarray:
        return self.dyn.expected_prediction_error(
            self.f0_values, self.f_values, self.truth_values, self.noise_var, rounds
        )

    def to_json(self) -> dict:
        return {
            "G": self.G.tolist(),
            "counts": self.fed.counts.tolist(),
            "algo": self.algo.to_json(),
            "f_values": self.f_values.tolist(),
            "f0_values": self.f0_values.tolist(),
            "truth_values": self.truth_values.tolist(),
            "noise_var": self.noise_var.tolist(),
            "sigma": self.sigma,
        }


def random_instance(rng, *, family=None, gamma_max=1.0, s_max=12, kind=None, n_range=(1, 10)) -> Instance:
    """A real-kernel instance: random federation (truths, σ_i), f = some client's truth or a random expansion."""
    fed = random_federation(rng, family=family, n_range=n_range)
    algo = random_algorithm(rng, fed, gamma_max=gamma_max, s_max=s_max, kind=kind)
    # the dictionary Z: the data, then the extra centres the truths share (truth i lives on extra ∪ x_i)
    t0 = fed.truths[0]
    n_extra = t0.centers.shape[0] - int(fed.counts[0])
    Z = np.concatenate([fed.x, t0.centers[:n_extra]], axis=0)
    G = fed.kernel(Z)
    G = 0.5 * (G + G.T)
    Zn = G.shape[0]
    c_f = np.zeros(Zn)
    if rng.uniform() < 0.5:  # f = f_1^* (so Δ_f vanishes on client 1 and measures the heterogeneity elsewhere)
        c_f[fed.N :] = t0.coef[:n_extra]
        c_f[fed.slices[0]] = t0.coef[n_extra:]
    else:
        c_f = rng.normal(size=Zn) / np.sqrt(Zn)
    a0 = np.zeros(fed.N) if rng.uniform() < 0.5 else rng.normal(size=fed.N) / np.sqrt(fed.N)
    sigma = float(fed.noise_sd.max())
    noise_var = (fed.noise_sd**2)[fed.client]
    return Instance(fed, algo, G, c_f, a0, fed.truth_values(), noise_var, sigma)


COUNTS = (1, 2, 3)
EXTRA = 2


def gram_instance_param(
    *, kinds=("fedavg", "fedprox"), s_max: int = 12, rank: int | None = None, counts=COUNTS, extra: int = EXTRA
):
    """Adversarial instances: any Gram matrix (rank ≤ ``rank``), γ, s, f, f_0, heterogeneous truths and noise variances."""
    N = sum(counts)
    Zn = N + extra

    def build(p):
        G = p["G"]
        fed = gram_federation(G, counts)
        algo = _base._algo_from(p["kind"], fed, p["frac"], p["s"] if p["kind"] == "fedavg" else 1)
        truth = np.concatenate([G[fed.slices[i], :] @ p["truth"][i * Zn : (i + 1) * Zn] for i in range(len(counts))])
        return Instance(fed, algo, G, p["c_f"], p["a0"], truth, p["sigma"] ** 2 * p["noise_frac"], p["sigma"])

    return Product(
        G=gram_param(counts, extra=extra, rank=rank or 4),
        kind=Choice(list(kinds)),
        frac=Box(0.0, 1.0, open_lo=True, open_hi=True),
        s=IntRange(1, s_max),
        c_f=Custom(Zn, lambda z: z),
        a0=Custom(N, lambda z: z),
        truth=Custom(len(counts) * Zn, lambda z: z),
        sigma=Box(0.0, 2.0),
        noise_frac=Box(0.0, 1.0, shape=N),
    ).map(build)


def _search(ctx, violation, param, *, target, n_random=40, n_starts=2, maxiter=60):
    """Random phase then Nelder–Mead starts, each capped at ``maxfev`` evaluations (the instance space has ~80
    dimensions, so an uncapped simplex spends thousands of evaluations on shrink steps)."""
    return probe_by_tier(
        ctx,
        violation,
        param,
        seed=ctx.rng,
        n_random=(n_random, 4 * n_random),
        n_starts=(n_starts, 8),
        maxiter=(maxiter, 300),
        target=target,
        options={"maxfev": 250 if not ctx.full else 2000},
    )


def _verdict(ctx, worst_random, result, tol, *, measured=None, notes="", why=""):
    """Verified when the worst ratio (left side over the bound, from sampling and the probe) is ≤ 1 + tol; a control's
    ``bound_factor`` f checks the bound multiplied by f instead (ratio/f)."""
    factor = ctx.param("bound_factor", 1.0)
    worst = max(worst_random, result.worst_value) / factor
    ok = worst <= 1 + tol
    m = {
        "worst_ratio": worst,
        "random_worst_ratio": worst_random,
        "probe_worst": result.worst_value,
        "probe_evaluations": result.n_evaluations,
    }
    if factor != 1.0:
        m["bound_factor"] = factor
    m.update(measured or {})
    return ctx.decide(
        ok,
        measured=m,
        tolerance={"ratio": 1 + tol, "why": why},
        counterexample=None if ok else {"probe": result.to_json()},
        notes=notes,
    )


def tightened(attained: str, factor: float = 0.99) -> Control:
    """The negative control 'the bound times ``factor``', false because ``attained`` (an instance in the searched class
    where the bound holds with equality, or approaches it)."""
    return Control(
        f"bound-times-{factor:g}",
        f"the bound multiplied by {factor:g}: false, since {attained}",
        {"bound_factor": factor},
    )


_S1_EQUALITY = (
    "for FedAvg with s = 1 (P = I, κ = 1, L = I − ηK_x symmetric, Λ_i = λ_i; the check includes such an instance) "
)


def s1_instance() -> Instance:
    """A fixed FedAvg s = 1 instance (P = I: the steps _S1_EQUALITY names hold with equality there), evaluated by
    the checks whose control rests on it on every run, so the control fires whatever the seed draws."""
    return random_instance(np.random.default_rng(20240), kind="fedavg", s_max=1)


def _sampled_then_probed(
    ctx,
    ratio,
    tol: float,
    *,
    why: str,
    notes: str = "",
    trials=12,
    attaining=s1_instance,
    floor=-math.inf,
    measured=None,
):
    """``ratio`` (left side over the bound) on ``trials`` random instances (a number, or a (fast, full) pair),
    cycling through the kernel families, and on ``attaining()`` (an instance where the bound holds with equality or
    nearly, evaluated on every run so that the controls fire whatever the seed; none when None), then the probe;
    :func:`_verdict` at ratio ≤ 1 + ``tol``. ``floor`` starts the running worst (0 where the ratio is a norm's)."""
    rng = ctx.rng
    n = by_tier(ctx, trials=trials)["trials"]
    worst = max(
        [floor] + [ratio(random_instance(rng, family=KERNEL_FAMILIES[i % len(KERNEL_FAMILIES)])) for i in range(n)]
    )
    measured = dict(measured or {})
    if attaining is not None:
        measured["attaining_instance_ratio"] = attained = ratio(attaining())
        worst = max(worst, attained)
    result = _search(ctx, ratio, gram_instance_param(), target=1 + tol)
    return _verdict(ctx, worst, result, tol, measured=measured, why=why, notes=notes)


_tightened_theorem_1 = tightened(
    "for FedAvg with s = 1, f_0 − f along an eigenvector of K_x with Λ = 1/(η(2t+1)), ‖f_0 − f‖_ℋ² ≫ 1 (so the +1 of "
    "the variance term is negligible), Δ_f = 0 and σ → 0 (so T → ∞), E‖f_t − f‖_N² → (2t/(2t+1))^{2t}‖f_0 − f‖_ℋ²/"
    "(η(2t+1)), whose ratio to ‖f_0 − f‖_ℋ²/(2eηt) exceeds 0.95 for t ≥ 5: the bound with 3κ replaced by 0.9κ fails "
    "there (the check includes such an instance, at t = 19)",
    0.3,
)


# --------------------------------------------------------------------------------------------
# Proposition 3 and its pieces
# --------------------------------------------------------------------------------------------


def _prop3_ratio(inst: Instance, rounds=ROUNDS[1:]) -> float:
    t = np.asarray(rounds)
    lhs = inst.expected_error(t)
    d1 = kb.delta_1(inst.dyn.Lambda, inst.algo.eta, inst.s, t)
    d2 = kb.delta_2(inst.dyn.Lambda, inst.algo.eta, t)
    rhs = 3 * inst.kappa * (d1 * inst.f0_dist_sq + d2 * inst.sigma**2 + inst.Delta @ inst.Delta / inst.fed.N)
    scale = 1e3 * inst.fed.N * EPS * (np.abs(inst.f_values).max() + np.abs(inst.truth_values).max() + 1) ** 2
    return float(np.max((lhs - scale) / np.maximum(rhs, 1e-300)))


def _prop3_attaining() -> Instance:
    """An instance where (16) holds with 3κ replaced by κ = 1, at every t: FedAvg s = 1, σ = 0, f = 0 and every
    truth 0 (so Δ_f = 0), G = I (K_x = I/N: every eigenvector maximises (1 − ηΛ)^{2t}Λ) and f_0 = a_0·k_x with
    a_0 a unit vector, so E‖f_t − f‖_N² = (1 − ηΛ)^{2t}Λ‖f_0 − f‖_ℋ² = δ_1(t)‖f_0 − f‖_ℋ²: the left side is a
    third of the bound."""
    counts, extra = COUNTS, EXTRA
    N = sum(counts)
    G = np.eye(N + extra)
    fed = gram_federation(G, counts)
    algo = _base._algo_from("fedavg", fed, 0.5, 1)
    a0 = np.zeros(N)
    a0[0] = 1.0
    return Instance(fed, algo, G, np.zeros(N + extra), a0, np.zeros(N), np.zeros(N), 0.0)


@claim(
    id="nonparam/proposition-3",
    ref="Proposition 3",
    title="E‖f_t − f‖_N² ≤ 3κ(δ_1(t)‖f_0 − f‖_ℋ² + δ_2(t)σ² + ‖Δ_f‖₂²/N) for all f ∈ ℋ, t ≥ 1",
    statement=r"For any $f\in\mathcal H$ and all $t\ge1$, $\mathbb E_\xi\|f_t-f\|_N^2\le3\kappa(\delta_1(t)\|f_0-f\|_{\mathcal H}^2+"
    r"\delta_2(t)\sigma^2+\frac1N\|\Delta_f\|_2^2)$ (16), $\delta_1,\delta_2$ of (17)–(18), "
    r"$\Delta_f=(f_1^*(\mathbf x_1),\dots,f_M^*(\mathbf x_M))-f(\mathbf x)$ (19); noise independent, zero-mean, variance $\le\sigma^2$; "
    r"$\gamma<1$ (FedAvg), FedProx with $s=1$.",
    kind="probe",
    controls=[
        tightened(
            "with σ = 0, Δ_f = 0, FedAvg s = 1 and f_0 − f = c·k_x for c the eigenvector of K_x that maximises (1"
            " − ηλ)^{2t}λ, E‖f_t − f‖_N² = δ_1(t)‖f_0 − f‖_ℋ² exactly: the bound with 3κ replaced by 0.99κ fails "
            "there (the check includes such an instance)",
            0.99 / 3,
        )
    ],
)
def proposition_3(ctx):
    # the attaining instance, every run, so the control (the bound times 0.33) fires whatever the seed
    return _sampled_then_probed(
        ctx,
        _prop3_ratio,
        0.0,
        trials=(16, 40),
        attaining=_prop3_attaining,
        floor=0.0,
        why="exact expectation (mean² + trace), minus a 1e3·N·eps·scale² rounding allowance",
        notes="E over ξ in closed form from eq. (42); f = c·k_Z on a dictionary with points beyond the data; "
        "truths arbitrary per client; noise variances heterogeneous, σ² their maximum.",
    )


@claim(
    id="nonparam/proposition-3/delta-1",
    ref="Proposition 3, eq. (17)",
    title="δ_1(t) = (1/s)max_i(1 − ηΛ_i)^{2t}Λ_i ≤ 1/(2eηts)",
    statement=r"$\delta_1(t)=\frac1s\max_i(1-\eta\Lambda_i)^{2t}\Lambda_i\le\frac1{2e\eta ts}$ for $t\ge1$ (17).",
    kind="probe",
    controls=[
        tightened(
            "max_Λ(1 − ηΛ)^{2t}Λ/s at Λ = 1/(η(2t+1)) equals (2t/(2t+1))^{2t}/(ηs(2t+1)), whose ratio to "
            "1/(2eηts) tends to 1 as t → ∞ (above 0.99 from t ≈ 50)"
        )
    ],
)
def proposition_3_delta_1(ctx):
    def ratio(inst, rounds=ROUNDS[1:]):
        t = np.asarray(rounds)
        return float(
            np.max(kb.delta_1(inst.dyn.Lambda, inst.algo.eta, inst.s, t) / kb.delta_1_bound(inst.algo.eta, inst.s, t))
        )

    # the bound is asymptotically tight: Λ = 1/(η(2t + 1)) gives 2e·(2t/(2t+1))^{2t}·t/(2t+1) → 1
    t = 10**6
    tight = float(2 * math.e * (2 * t / (2 * t + 1)) ** (2 * t) * t / (2 * t + 1))
    return _sampled_then_probed(
        ctx,
        ratio,
        1e-12,
        trials=16,
        attaining=None,
        measured={"tightness_at_t_1e6": tight},
        why="closed forms in float64 (relative error ≲ 1e-14)",
        notes="Uses ηΛ_i ∈ [0, 1] (Lemma 2). Tightness: sup over Λ of the left side times 2eηts tends to 1.",
    )


@claim(
    id="nonparam/proposition-3/delta-2",
    ref="Proposition 3, eq. (18); Lemma 7",
    title="δ_2(t) ≤ (1/N)Σ min{1, ηtΛ_i} ≤ ηts ℛ²(1/√(ηts))",
    statement=r"$\delta_2(t)=\frac1N\sum_i(1-(1-\eta\Lambda_i)^t)^2\le\frac1N\sum_i\min\{1,\eta t\Lambda_i\}\le\eta ts\,\mathcal R^2(1/\sqrt{\eta ts})$ "
    r"(18), Lemma 7, with $\mathcal R$ of (20).",
    kind="probe",
    controls=[
        tightened(
            _S1_EQUALITY + "the second step is an equality: ηtsℛ²(1/√(ηts)) = (1/N)Σmin{1, ηtλ_i} = (1/N)Σmin{1, ηtΛ_i}"
        )
    ],
)
def proposition_3_delta_2(ctx):
    def ratio(inst, rounds=ROUNDS[1:]):
        t = np.asarray(rounds)
        d2 = kb.delta_2(inst.dyn.Lambda, inst.algo.eta, t)
        mid = kb.delta_2_min_bound(inst.dyn.Lambda, inst.algo.eta, t)
        rad = kb.delta_2_rademacher_bound(inst.lam, inst.algo.eta, inst.s, t)
        return float(max(np.max(d2 / np.maximum(mid, 1e-300)), np.max(mid / np.maximum(rad, 1e-300))))

    return _sampled_then_probed(
        ctx,
        ratio,
        1e-9,
        trials=16,
        why="eigenvalues of K_x and K_xP (relative 1e-9 above rounding)",
        notes="The second step uses Λ_i ≤ λ_i s (Lemma 3).",
    )


_DELTA2_NOTES = (
    "Capped at 1 and non-decreasing hold in both readings (0 ≤ ηΛ_i ≤ 1). The limit is the fraction of positive Λ_i, "
    "rank(K_x)/N: it is 1 exactly when K_x is nonsingular (distinct covariates under a strictly positive "
    "definite kernel — the infinite-dimensional kernels of Section 5.1's 1/t rate). For a kernel matrix of "
    "rank d < N (any finite-rank kernel with N > d, the case of Theorem 3, whose proof itself uses "
    "δ_2(t) ≤ d/N) it is d/N: the linear kernel on two points gives δ_2(∞) = 1/2 (replayed exactly). The "
    "paper's remark evidently has the nonsingular case in mind; nothing downstream uses the limit."
)

SCOPES = (
    Reading(
        "any-kernel",
        "any kernel and covariates, as Proposition 3's setting allows (finite-rank kernels with N > rank included)",
        {"scope": "any"},
    ),
    Reading(
        "nonsingular",
        "a nonsingular kernel matrix K_x (distinct covariates, a strictly positive definite kernel: "
        "the setting of the 1/t rate the remark comments on)",
        {"scope": "nonsingular"},
    ),
)
_PLANTED = {"kernel": "linear", "x": [[1.0], [2.0]], "clients": [2], "eta": 0.1, "s": 1}


def _delta2_limit(Lam, eta: float) -> float:
    """δ_2 at a t where every Λ_i ≥ 1e-10·max Λ has (1 − ηΛ_i)^t ≤ e^{−40} (smaller Λ_i count as zero)."""
    Lam = np.asarray(Lam, dtype=float)
    pos = Lam[Lam >= 1e-10 * max(float(Lam.max()), 1e-300)]
    t = math.ceil(40.0 / (eta * float(pos.min()))) if pos.size else 1
    return float(kb.delta_2(Lam, eta, t))


@claim(
    id="nonparam/section-5.1/variance-term-dynamics",
    ref="Section 5.1, after Proposition 3",
    title="δ_2(t) is capped at 1, increasing in t, and converges to 1 as t → ∞",
    statement=r"$\delta_2(t)$ is capped at 1 and is increasing in $t$. Specifically, it converges to 1 as $t\to\infty$, capturing the "
    r"phenomenon of over-fitting to noises.",
    kind="numeric",
    expect="reading-dependent",
    readings=SCOPES,
)
def variance_term_dynamics(ctx):
    rng = ctx.rng
    nonsingular = ctx.param("scope", "any") == "nonsingular"
    cap_ok, mono_ok, limits, tried = True, True, [], 0
    while len(limits) < 20 and tried < 400:
        inst = random_instance(rng, family=KERNEL_FAMILIES[tried % 7])
        tried += 1
        Lam = inst.dyn.Lambda
        if nonsingular and float(np.min(Lam)) < 1e-8 * float(np.max(Lam)):
            continue  # outside this reading's scope (numerically singular K_x)
        d = kb.delta_2(Lam, inst.algo.eta, np.arange(0, 200))
        cap_ok &= bool(np.all(d <= 1 + 1e-12))
        mono_ok &= bool(np.all(np.diff(d) >= -1e-15))
        limits.append(_delta2_limit(Lam, inst.algo.eta))
    if len(limits) < 20:
        return ctx.inconclusive(notes=f"only {len(limits)} in-scope instances in {tried} draws")
    planted = None
    if not nonsingular:
        # a finite-rank kernel with N > rank is in this reading's scope: the linear kernel on two points
        fed = KernelFederation(LinearKernel(), [np.array(_PLANTED["x"])], [np.zeros(2)])
        dyn = PredictionDynamics(fed, KernelAlgorithm.fedavg(_PLANTED["eta"], _PLANTED["s"]))
        planted = _delta2_limit(dyn.Lambda, _PLANTED["eta"])
        limits.append(planted)
    worst = float(min(limits))
    ok = cap_ok and mono_ok and abs(worst - 1) <= 1e-9
    return ctx.decide(
        ok,
        measured={
            "capped_at_1": cap_ok,
            "non_decreasing": mono_ok,
            "smallest_limit": worst,
            "instances": len(limits),
            "planted_linear_2_points_limit": planted,
        },
        tolerance={"limit": "|δ_2(∞) − 1| ≤ 1e-9 (δ_2 at a t where every positive (1 − ηΛ_i)^t ≤ e^{−40})"},
        counterexample=None if ok or planted is None or abs(planted - 1) <= 1e-9 else dict(_PLANTED),
        notes=_DELTA2_NOTES,
    )


@variance_term_dynamics.replayer
def _(cex, ctx):
    """Exact: K_x = (1/2)xxᵀ has rank 1, so K_xP has one non-zero eigenvalue and δ_2(t) ≤ 1/2 for every t."""
    import sympy as sp

    x = sp.Matrix([sp.Rational(str(v[0])) for v in cex["x"]])
    eta = sp.Rational(str(cex["eta"]))
    K = x * x.T / 2
    P = sp.eye(2)  # s = 1: P = I
    KP = K * P
    lam = sp.Matrix(KP).eigenvals()
    nonzero = sum(m for v, m in lam.items() if v != 0)
    t = sp.Symbol("t", positive=True, integer=True)
    delta2 = sum(m * (1 - (1 - eta * v) ** t) ** 2 for v, m in lam.items()) / 2
    limit = sp.limit(delta2, t, sp.oo)
    return ctx.decide(
        limit == 1,
        measured={"exact_limit": str(limit), "nonzero_eigenvalues": int(nonzero)},
        counterexample=cex,
        notes=_DELTA2_NOTES + " Replay: exact sympy computation.",
    )


# --------------------------------------------------------------------------------------------
# Lemmas 5–7
# --------------------------------------------------------------------------------------------


def _lemma5_ratio(inst, rounds=ROUNDS[1:]) -> float:
    dyn, eta, s = inst.dyn, inst.algo.eta, inst.s
    worst = 0.0
    for t in rounds:
        I_Lt = np.eye(inst.fed.N) - dyn.L_power(int(t))
        g = (
            1 - (1 - eta * dyn.Lambda) ** int(t)
            if t < 10**4
            else 1 - np.exp(int(t) * np.log1p(-np.minimum(eta * dyn.Lambda, 1 - 1e-16)))
        )
        mid = math.sqrt(inst.kappa) * float(np.linalg.norm(g))
        rad = math.sqrt(inst.kappa * inst.fed.N * eta * t * s) * float(
            kb.empirical_rademacher(inst.lam, 1 / math.sqrt(eta * t * s))
        )
        worst = max(worst, float(np.linalg.norm(I_Lt) / max(mid, 1e-300)), mid / max(rad, 1e-300))
    return worst


@claim(
    id="nonparam/lemma-5",
    ref="Lemma 5",
    title="‖I − L^t‖_F ≤ √κ‖I − (I − ηΛ)^t‖_F ≤ √(κNηts) ℛ(1/√(ηts))",
    statement=r"$\|I-L^t\|_F\le\sqrt\kappa\|I-(I-\eta\Lambda)^t\|_F\le\sqrt{\kappa N\eta ts}\,\mathcal R(1/\sqrt{\eta ts})$, $L=I-\eta K_{\mathbf x}P$.",
    kind="probe",
    controls=[
        tightened(_S1_EQUALITY + "the first step is an equality: I − L^t = V(I − (I − ηΛ)^t)Vᵀ with V orthogonal")
    ],
)
def lemma_5(ctx):
    return _sampled_then_probed(
        ctx, _lemma5_ratio, 1e-8, why="L^t through V(I − ηΛ)^tV^{−1} (error ≲ cond(V)·N·eps ≤ 1e-8 here)"
    )


def _lemma6_ratio(inst, rounds=ROUNDS[1:]) -> float:
    """sup over ‖f_0 − f‖_ℋ ≤ 1 of (1/N)‖L^t(f_0 − f)(x)‖² is ‖L^tK_xL^{tᵀ}‖₂ (Lemma 4), against κδ_1(t)."""
    dyn = inst.dyn
    worst = 0.0
    for t in rounds:
        Lt = dyn.L_power(int(t))
        sup = float(np.linalg.norm(Lt @ inst.fed.K_x @ Lt.T, 2))
        bound = inst.kappa * kb.delta_1(dyn.Lambda, inst.algo.eta, inst.s, int(t))
        floor = 64 * inst.fed.N * EPS * float(np.linalg.norm(inst.fed.K_x, 2)) * inst.kappa
        worst = max(worst, (sup - floor) / max(bound, 1e-300))
    return worst


@claim(
    id="nonparam/lemma-6",
    ref="Lemma 6",
    title="Bias: (1/N)‖L^t(f_0(x) − f(x))‖² ≤ κδ_1(t)‖f_0 − f‖_ℋ²",
    statement=r"For all $t\ge1$, $\frac1N\|L^t(f_0(\mathbf x)-f(\mathbf x))\|_2^2\le\kappa\delta_1(t)\|f_0-f\|_{\mathcal H}^2$.",
    kind="probe",
    controls=[
        tightened(
            _S1_EQUALITY + "the supremum over the unit ball is ‖L^tK_xL^t‖₂ = max_i(1 − ηλ_i)^{2t}λ_i = δ_1(t) exactly"
        )
    ],
)
def lemma_6(ctx):
    return _sampled_then_probed(
        ctx,
        _lemma6_ratio,
        1e-8,
        why="spectral norms from eigendecompositions, minus 64·N·eps·‖K_x‖κ",
        notes="The supremum over f_0 − f in the unit ball is computed exactly: ‖L^tK_xL^{tᵀ}‖₂ (Lemma 4, (36)).",
    )


def _lemma7_ratio(inst, rounds=ROUNDS[1:]) -> float:
    """sup over E ξξᵀ ⪯ σ²I of (1/N)E‖(I − L^t)ξ‖² is σ²‖I − L^t‖_F²/N, against κσ²δ_2(t)."""
    worst = 0.0
    for t in rounds:
        F2 = float(np.linalg.norm(np.eye(inst.fed.N) - inst.dyn.L_power(int(t))) ** 2) / inst.fed.N
        bound = inst.kappa * kb.delta_2(inst.dyn.Lambda, inst.algo.eta, int(t))
        worst = max(worst, (F2 - 1e3 * inst.fed.N * EPS) / max(bound, 1e-300))
    return worst


@claim(
    id="nonparam/lemma-7",
    ref="Lemma 7",
    title="Variance: (1/N)E‖(I − L^t)ξ‖² ≤ κσ²δ_2(t)",
    statement=r"For all $t\ge1$, $\frac1N\mathbb E\|(I-L^t)\xi\|_2^2\le\kappa\sigma^2\delta_2(t)$ (44), whenever $\mathbb E[\xi\xi^\top]\preceq\sigma^2I$.",
    kind="probe",
    controls=[
        tightened(
            _S1_EQUALITY + "with E ξξᵀ = σ²I, (1/N)E‖(I − L^t)ξ‖² = σ²(1/N)Σ(1 − (1 − ηλ_i)^t)² = σ²δ_2(t) exactly"
        )
    ],
)
def lemma_7(ctx):
    return _sampled_then_probed(
        ctx,
        _lemma7_ratio,
        1e-8,
        why="Frobenius norms of L^t from the eigendecomposition",
        notes="The supremum over noise covariances ⪯ σ²I (correlated noise included) is attained "
        "at σ²I, where E‖(I − L^t)ξ‖² = σ²‖I − L^t‖_F²: the check covers the whole hypothesis.",
    )


# --------------------------------------------------------------------------------------------
# Theorem 1
# --------------------------------------------------------------------------------------------


def _theorem1_ratio(inst) -> float:
    if inst.sigma == 0:
        return 0.0  # T = ∞ and the bound at t → ∞ is 3κ‖Δ‖²/N; covered by sampling σ > 0
    T = kb.early_stopping_time(inst.lam, inst.algo.eta, inst.s, inst.sigma, t_max=10**7)
    if T < 1:
        return 0.0
    ts = np.unique(np.concatenate([[1, T], np.round(np.logspace(0, np.log10(T), 12))]).astype(np.int64))
    lhs = inst.expected_error(ts)
    rhs = np.array(
        [
            kb.theorem_1_bound(
                inst.kappa, inst.algo.eta, inst.s, int(t), T, inst.f0_dist_sq, inst.Delta @ inst.Delta, inst.fed.N
            )
            for t in ts
        ]
    )
    return float(np.max(lhs / rhs))


def _theorem1_attaining() -> Instance:
    """The control's instance, where (21)'s bound is within a factor 0.33 of equality: FedAvg s = 1 (κ = 1), G = I
    (every eigenvector of K_x = I/N maximises), Δ_f = 0, σ = 1e-12 (so T reaches the search's cap 10⁷ and the
    rounds checked include t = 19), ηΛ = 1/(2·19 + 1) and ‖f_0 − f‖_ℋ² = 10⁶ ≫ 1: at t = 19 the ratio of the left
    side to the bound is (1/3)·2e·19/39·(38/39)^38 ≈ 0.329."""
    N = sum(COUNTS)
    G = np.eye(N + EXTRA)
    fed = gram_federation(G, COUNTS)
    t_star = 19
    algo = KernelAlgorithm.fedavg(1.0 / ((2 * t_star + 1) * float(np.linalg.eigvalsh(fed.K_x).max())), 1)
    a0 = np.zeros(N)
    a0[0] = 1e3
    return Instance(fed, algo, G, np.zeros(N + EXTRA), a0, np.zeros(N), np.full(N, 1e-24), 1e-12)


@claim(
    id="nonparam/theorem-1",
    ref="Theorem 1",
    title="With early stopping: E‖f_t − f‖_N² ≤ 3κ/(2eηts)(‖f_0 − f‖_ℋ² + 1) + 3κ‖Δ_f‖²/N for 1 ≤ t ≤ T",
    statement=r"For any $f\in\mathcal H$ and $1\le t\le T$, $T=\max\{t:\mathcal R(1/\sqrt{\eta ts})\le\frac{1}{\sqrt{2e}\sigma\eta ts}\}$ (21): "
    r"$\mathbb E_\xi\|f_t-f\|_N^2\le\frac{3\kappa}{2e\eta ts}(\|f_0-f\|_{\mathcal H}^2+1)+\frac{3\kappa}{N}\|\Delta_f\|_2^2$.",
    kind="probe",
    controls=[_tightened_theorem_1],
)
def theorem_1(ctx):
    # the control's attaining instance, every run, so the control (the bound times 0.3) fires whatever the seed;
    # T is a real restriction: past T the variance term overtakes (2eηts)^{-1}
    return _sampled_then_probed(
        ctx,
        _theorem1_ratio,
        0.0,
        trials=(14, 30),
        attaining=_theorem1_attaining,
        floor=0.0,
        why="exact expectation against the bound; no rounding allowance needed (ratios ≪ 1)",
        notes="T computed by bisection (u·ℛ(1/√u) is non-decreasing); rounds t ∈ {1, T} and a log grid between.",
    )


# --------------------------------------------------------------------------------------------
# Theorem 2 (probabilities: Monte Carlo + exact binomial test)
# --------------------------------------------------------------------------------------------


def _exceedances(inst, t: int, T, samples, noise: str) -> tuple[int, int, float]:
    """Number of noise draws with ‖f_t − f‖_N² ≥ the level of (22), the number of draws, and that level."""
    N = inst.fed.N
    Lt = inst.dyn.L_power(int(t))
    mean = Lt @ (inst.f0_values - inst.f_values) + (np.eye(N) - Lt) @ inst.Delta
    A = np.eye(N) - Lt
    xi = samples * np.sqrt(inst.noise_var)[None, :]
    err = np.mean((mean[None, :] + xi @ A.T) ** 2, axis=1)
    level = kb.theorem_2_threshold(
        inst.kappa, inst.algo.eta, inst.s, int(t), T, inst.f0_dist_sq, inst.Delta @ inst.Delta, N
    )
    return int(np.sum(err >= level)), samples.shape[0], level


def _binomial_evidence(k: int, n: int, p: float) -> float:
    """−log10 P(Binomial(n, p) ≥ k): large when k exceedances are implausible under the claimed bound p."""
    if k == 0:
        return 0.0
    return float(-stats.binom.logsf(k - 1, n, min(max(p, 0.0), 1.0)) / math.log(10))


def _tail_bound(inst, t: int, noise: str) -> float:
    u = inst.algo.eta * t * inst.s
    if noise == "gaussian":
        return kb.theorem_2_gaussian_tail(inst.fed.N, inst.sigma, inst.algo.eta, inst.s, t)
    # p = 4, explicit constant c_4 = 3e/2 (Chebyshev with the exact variance of ξᵀQξ); Student-t(5): E z⁴ = 9
    M4 = 9.0 * float(np.max(inst.noise_var)) ** 2
    return min(1.0, 1.5 * math.e * M4 * u / (inst.fed.N * inst.sigma**2))


def _draws(rng, noise: str, n: int, N: int) -> np.ndarray:
    if noise == "gaussian":
        return rng.normal(size=(n, N))
    return rng.standard_t(5, size=(n, N)) / math.sqrt(5 / 3)  # unit variance, heavy tails


def _standardized_gap(inst, t: int, T) -> float:
    """(level − E err)/sd(err) under Gaussian noise of the instance's variances: small = exceedance likely."""
    N = inst.fed.N
    Lt = inst.dyn.L_power(int(t))
    m = Lt @ (inst.f0_values - inst.f_values) + (np.eye(N) - Lt) @ inst.Delta
    A = np.eye(N) - Lt
    C = (A * inst.noise_var[None, :]) @ A.T
    mean = (m @ m + np.trace(C)) / N
    sd = math.sqrt(max(4 * m @ C @ m + 2 * np.sum(C * C), 1e-300)) / N
    level = kb.theorem_2_threshold(
        inst.kappa, inst.algo.eta, inst.s, int(t), T, inst.f0_dist_sq, inst.Delta @ inst.Delta, N
    )
    return (level - mean) / sd


def _theorem2_check(ctx, noise: str):
    """Random instances, then an adversary minimising the standardised gap between the level of (22) and the error;
    every case is decided by Monte Carlo and an exact binomial test against the explicit bound."""
    rng = ctx.rng
    n_samples = 20000 if ctx.full else 4000
    worst_evidence, worst_freq_over_bound, checked = 0.0, 0.0, 0
    cases = []
    for trial in range(24 if ctx.full else 10):
        inst = random_instance(rng, family=KERNEL_FAMILIES[trial % 7], n_range=(1, 6))
        if inst.sigma <= 0:
            continue
        T = kb.early_stopping_time(inst.lam, inst.algo.eta, inst.s, inst.sigma, t_max=10**7)
        if T < 2:
            continue
        cases += [(inst, t, T) for t in sorted({1, max(1, T // 2), T - 1})]

    def decode_t(p):
        inst = p["inst"]
        if inst.sigma <= 0:
            return inst, 0, 0
        T = kb.early_stopping_time(inst.lam, inst.algo.eta, inst.s, inst.sigma, t_max=10**7)
        return inst, max(1, int(round(p["t"] * (T - 1)))), T

    def violation(p):
        inst, t, T = decode_t(p)
        return -1e6 if T < 2 else -_standardized_gap(inst, t, T)

    result = _search(ctx, violation, Product(inst=gram_instance_param(), t=Box(0.0, 1.0)), target=None)
    if result.worst_instance is not None and result.worst_value > -1e6:
        cases.append(decode_t(result.worst_instance))
    min_gap = -result.worst_value
    for inst, t, T in cases:
        z = _draws(rng, noise, n_samples * (5 if (inst, t, T) is cases[-1] else 1), inst.fed.N)
        k, n, _ = _exceedances(inst, t, T, z, noise)
        bound = _tail_bound(inst, t, noise)
        worst_evidence = max(worst_evidence, _binomial_evidence(k, n, bound))
        worst_freq_over_bound = max(worst_freq_over_bound, (k / n) / max(bound, 1e-300))
        checked += 1
    return worst_evidence, worst_freq_over_bound, checked, min_gap


def _decide_theorem2(ctx, noise, notes):
    """Theorem 2 for one noise law, decided by the exact binomial test of :func:`_theorem2_check`: refuted when some
    case's exceedances have p-value below 1e-6 under the bound."""
    evidence, freq_ratio, checked, gap = _theorem2_check(ctx, noise)
    return ctx.decide(
        evidence < 6.0,
        measured={
            "max_minus_log10_p_value": evidence,
            "max_frequency_over_bound": freq_ratio,
            "cases": checked,
            "adversarial_min_standardized_gap": gap,
        },
        tolerance={"test": "refute when P(Binomial(n, bound) ≥ observed exceedances) < 1e-6"},
        notes=notes,
    )


@claim(
    id="nonparam/theorem-2/sub-gaussian",
    ref="Theorem 2 (sub-Gaussian noise)",
    title="P(‖f_t − f‖_N² ≥ 3κ/(2eηts)(‖f_0 − f‖² + 3) + 3κ‖Δ_f‖²/N) ≤ exp(−cN/(σ²ηts)) for t < T",
    statement=r"For any $f\in\mathcal H$ and $t<T$, with $\xi$ independent zero-mean sub-Gaussian (norm $\le\sigma$), "
    r"$\varepsilon_t\le\exp(-cN/(\sigma^2\eta ts))$ for a universal $c>0$, $\varepsilon_t$ of (22).",
    kind="simulation",
    control_exempt="a tail bound with an unspecified constant c: the check is a statistical test whose smallest "
    "standardized gap is 58; no constant is known for which the bound is false",
)
def theorem_2_sub_gaussian(ctx):
    return _decide_theorem2(
        ctx,
        "gaussian",
        notes="The paper's c is universal but unspecified; for Gaussian noise (variances ≤ σ²) the proof goes through "
        "with Laurent–Massart in place of Hanson–Wright (c_1 = 1/16), giving c = 1/(16e), which is what is "
        "tested. Probabilities by Monte Carlo over the noise, decided by an exact binomial test; t ∈ {1, T/2, T−1} "
        "on random instances, plus the instance and t < T an adversary finds with the smallest standardised gap "
        "(level − mean)/sd (Gaussian moments), tested with 5× the draws.",
    )


@claim(
    id="nonparam/theorem-2/heavy-tailed",
    ref="Theorem 2 (heavy-tailed noise)",
    title="With E|ξ_i|^p ≤ M_p (p ≥ 4): ε_t ≤ c_pM_p(ηts/(Nσ²))^{p/4} for t < T",
    statement=r"If the $\xi_i$ are independent, zero-mean, $\mathbb E\xi_i^2\le\sigma^2$ and $\mathbb E|\xi_i|^p\le M_p<\infty$, $p\ge4$, "
    r"then $\varepsilon_t\le c_pM_p(\frac{\eta ts}{N\sigma^2})^{p/4}$ for a $c_p$ depending only on $p$.",
    kind="simulation",
    control_exempt="a tail bound with an unspecified constant C_p: the check is a statistical test whose smallest "
    "standardized gap is 35; no constant is known for which the bound is false",
)
def theorem_2_heavy_tailed(ctx):
    return _decide_theorem2(
        ctx,
        "student-t",
        notes="p = 4 with an explicit constant: Var(ξᵀQξ) ≤ (M_4 + 2σ⁴)‖Q‖_F² ≤ 3M_4‖Q‖_F² (independent, "
        "zero-mean ξ) and Chebyshev give ε_t ≤ (3e/2)M_4·ηts/(Nσ²) through the paper's chain (δ = Nκ/(eηts), "
        "‖Q‖_F ≤ κ√(Nηts)ℛ, t ≤ T); tested with Student-t(5) noise (finite 4th moment, heavy tails). Note the "
        "units: the printed bound is not invariant under rescaling ξ (σ enters through T).",
    )


# --------------------------------------------------------------------------------------------
# Theorem 3 and the rate claims
# --------------------------------------------------------------------------------------------


def _theorem3_ratio(inst) -> float:
    N = inst.fed.N
    lam = inst.lam
    d = int(np.sum(lam > 1e-10 * lam[0]))
    if d == 0:
        return 0.0
    t = ROUNDS
    lhs = inst.expected_error(t)
    rhs = kb.theorem_3_bound(
        inst.kappa,
        inst.algo.eta,
        inst.s,
        float(lam[d - 1]),
        d,
        t,
        inst.sigma,
        inst.f0_dist_sq,
        inst.Delta @ inst.Delta,
        N,
    )
    return float(np.max(lhs / rhs))


@claim(
    id="nonparam/theorem-3",
    ref="Theorem 3",
    title="Rank-d kernel matrix: E‖f_t − f‖_N² ≤ 3(κ/(ηs))‖f_0 − f‖²e^{−2(ηs/κ)λ_dt} + 3κσ²d/N + 3κ‖Δ_f‖²/N",
    statement=r"If $K_{\mathbf x}$ has finite rank $d$, then for all $t$: $\mathbb E_\xi\|f_t-f\|_N^2\le3\frac{\kappa}{\eta s}\|f_0-f\|_{\mathcal H}^2"
    r"\exp(-2\frac{\eta s}{\kappa}\lambda_dt)+3\kappa\sigma^2\frac dN+\frac{3\kappa}N\|\Delta_f\|_2^2$.",
    kind="probe",
    control_exempt="the bound has slack ≥ 3× at every instance sampled or searched (worst 0.30); no attaining instance "
    "is known, so no tightened constant is known to be false",
)
def theorem_3(ctx):
    rng = ctx.rng
    worst = 0.0
    for trial in range(24 if ctx.full else 10):
        worst = max(
            worst,
            _theorem3_ratio(
                random_instance(rng, family=("linear", "polynomial", "random-features", "gram")[trial % 4])
            ),
        )
    result = _search(ctx, _theorem3_ratio, gram_instance_param(rank=3), target=1.0)
    return _verdict(
        ctx,
        worst,
        result,
        0.0,
        why="exact expectation against the bound",
        notes="d = numerical rank of K_x (eigenvalues above 1e-10·λ_1); the probe searches Gram matrices of rank ≤ 3 "
        "on 6 data points + 2 extra points; t ∈ {0, …, 10⁵}.",
    )


@claim(
    id="nonparam/section-5.1/exponential-finite-rank",
    ref="Section 5.1 / Theorem 3 (text)",
    title="For finite-rank kernels the error decays exponentially, at least at the rate 2ηsλ_d/κ",
    statement=r"When the kernel matrix $K_{\mathbf x}$ has rank $d$, the convergence rate improves to $\exp(-c_dt)$; by Theorem 3, "
    r"$c_d\ge2\eta s\lambda_d/\kappa$.",
    kind="simulation",
    control_exempt="Theorem 3's rate is a lower bound on the fitted rate with slack ≥ 1.37× on every run; the exact rate"
    " of the attaining instance is not known a priori",
)
def exponential_finite_rank(ctx):
    """Run FedAvg/FedProx literally (stepwise driver), noise-free, on finite-rank kernels; fit log-error vs t."""
    rng = ctx.rng
    worst = np.inf
    fits = []
    for trial in range(6 if not ctx.full else 20):
        fed = random_federation(
            rng, family=("polynomial", "random-features", "linear")[trial % 3], n_range=(3, 10), M=3
        )
        algo = random_algorithm(rng, fed, gamma_max=0.9, s_max=5, kind=("fedavg", "fedprox")[trial % 2])
        f_star = fed.truths[0]
        fed0 = fed.with_responses(np.concatenate([f_star.values(x) for x in fed.xs]))  # homogeneous, noise-free: Δ = 0
        dyn = PredictionDynamics(fed0, algo)
        lam = np.sort(np.linalg.eigvalsh(fed0.K_x))[::-1]
        d = int(np.sum(lam > 1e-10 * lam[0]))
        kap = algo.kappa(dyn.gamma)
        predicted = 2 * algo.eta * algo.bound_s * lam[d - 1] / kap
        T = int(min(400, max(30, 40 / max(predicted, 1e-12))))
        h = run_kernel_federated(fed0, algo, T, path="stepwise")
        err = np.mean((h.predictions - fed0.y[None, :]) ** 2, axis=1)
        floor = 1e4 * fed0.N * EPS**2 * float(np.max(fed0.y**2) + 1)
        try:
            fit = fit_exponential(h.rounds, err, floor=floor, t_min=1)
        except ValueError:
            continue
        fits.append({"fitted_rate": fit["rate"], "theorem_3_rate": predicted, "points": fit["points"]})
        worst = min(worst, fit["rate"] / predicted)
    ok = len(fits) >= 3 and worst >= 1 - 1e-3
    return ctx.decide(
        ok,
        measured={"min_fitted_over_theorem_rate": worst, "fits": fits},
        tolerance={
            "ratio": "fitted rate ≥ (1 − 1e-3)·2ηsλ_d/κ",
            "why": "least-squares slope of log error on points above 1e4·N·eps²·max y² (before the float floor)",
        },
        notes="f_0 = 0, y = f^*(x) with one truth for all clients (Δ = 0, σ = 0) so only the bias term remains; "
        "the fitted exponential rate must be at least Theorem 3's exponent.",
    )


def _sobolev_federation(rng, counts, smoothness: float = 0.1, noise: float = 0.0):
    """Sobolev kernel min(x, z), uniform covariates with client shifts, truth Σβ_ℓφ_ℓ with β_ℓ² ∝ μ_ℓℓ^{−1−ε}, ‖f^*‖_ℋ = 1."""
    k = SobolevKernel()
    L = 4000
    mu = k.mercer_eigenvalues(L)
    ell = np.arange(1, L + 1)
    beta = np.sqrt(mu * ell ** (-1 - smoothness))
    beta /= math.sqrt(float(np.sum(beta**2 / mu)))
    f_star = MercerSeries(k, beta)
    return KernelFederation.sample(
        k,
        counts,
        truths=f_star,
        noise_sd=noise,
        seed=rng,
        covariates=lambda r, i, n: np.sort(r.uniform(0.05 * (i % 3), 1.0, size=n)),
    ), f_star


@claim(
    id="nonparam/section-5.1/rate-one-over-t",
    ref="Section 5.1 / Theorem 1 (text); abstract",
    title="In general (infinite-dimensional ℋ) the estimation error decays at the rate 1/t, and no faster in the worst case",
    statement=r"The estimation errors decay with a rate of $1/t$ in general; $\delta_1(t)\le\frac1{2e\eta ts}$ decreases at rate $c/t$, and "
    r"one cannot hope for a rate strictly better than $O(1/t)$ since $\lambda_N$ is not bounded away from 0.",
    kind="simulation",
    control_exempt="a qualitative rate statement (decay like 1/t) checked by fitted slopes; no sharper rate is known to "
    "be false for the figure's fixed instance",
)
def rate_one_over_t(ctx):
    """Sobolev kernel (eigenvalues ∝ ℓ^{−2}), N = 120 points in 3 unbalanced clients, FedAvg s = 2 run literally.

    (a) the run's bias (σ = 0, Δ = 0, f_0 = 0, f^* with ‖f^*‖_ℋ = 1 and slowly decaying Mercer coefficients) stays
    below κ‖f^*‖²/(2eηts) at every round t ≤ 1000 — it decays at least as fast as 1/t; (b) the worst case over the
    unit ball, sup_{‖f_0 − f‖ ≤ 1}(1/N)‖L^t(f_0 − f)(x)‖² = ‖L^tK_xL^{tᵀ}‖₂, has fitted slope within 0.1 of −1 on
    t ∈ [10, 1000] (the rate is exactly 1/t, not faster) and stays below the same bound."""
    rng = ctx.rng
    fed, f_star = _sobolev_federation(rng, [20, 40, 60])
    algo = KernelAlgorithm.fedavg(0.9 / float(fed.client_norms().max()), 2)
    T = 1000
    h = run_kernel_federated(fed, algo, T, path="stepwise")
    err = np.mean((h.predictions - fed.y[None, :]) ** 2, axis=1)
    dyn = PredictionDynamics(fed, algo)
    kap = algo.kappa(dyn.gamma)
    run_bound = kap * f_star.norm_sq() * kb.delta_1_bound(algo.eta, algo.s, h.rounds[1:])
    run_ratio = float(np.max(err[1:] / run_bound))
    run_fit = fit_power_law(h.rounds, err, t_min=10, t_max=T)
    ts = np.unique(np.round(np.logspace(1, 3, 25)).astype(int))
    sup = np.array([np.linalg.norm(dyn.L_power(int(t)) @ fed.K_x @ dyn.L_power(int(t)).T, 2) for t in ts])
    sup_fit = fit_power_law(ts, sup)
    bound = kb.delta_1_bound(algo.eta, algo.s, ts) * kap
    ok = run_ratio <= 1 and abs(sup_fit["slope"] + 1) <= 0.1 and bool(np.all(sup <= bound))
    return ctx.decide(
        ok,
        measured={
            "run_bias_over_one_over_t_bound_max": run_ratio,
            "run_bias_slope": run_fit["slope"],
            "worst_case_slope": sup_fit["slope"],
            "worst_case_over_kappa_delta1_bound_max": float(np.max(sup / bound)),
        },
        tolerance={
            "run": "bias ≤ κ‖f^*‖²/(2eηts) at every round",
            "slope": "worst case within ±0.1 of −1",
            "why": "finite-N discreteness of the spectrum bends the curve near t ~ 1/(ηΛ_N) ≫ 1000; 0.1 in "
            "slope is the deviation of a log-log fit over two decades",
        },
        notes="λ_N of the Sobolev kernel matrix decays like N^{−2}, so for t ≪ 1/(ηλ_N) the spectrum looks "
        "continuous and the worst-case bias is Θ(1/t): Theorem 1's bias term is rate-optimal.",
    )


# --------------------------------------------------------------------------------------------
# Lemmas 8–9
# --------------------------------------------------------------------------------------------


def _lemma9_ratio(inst, S: np.ndarray) -> float:
    """A_ab = ⟨𝒯Ψ_a, 𝒯Ψ_b⟩ against (sη/N)‖𝒯(ℐ − ℒ)𝒯‖ and (sη/N)Tr, for 𝒯 = S in an orthonormal basis of span{k_Z}."""
    fed, algo, G = inst.fed, inst.algo, inst.G
    ops = definitional_operators(G, fed.counts, algo.kind, algo.eta, algo.s if algo.kind == "fedavg" else 1)
    D, Q = np.linalg.eigh(0.5 * (G + G.T))
    keep = D > 1e-12 * D[-1]
    root = np.sqrt(D[keep])
    Qk = Q[:, keep]
    B = root[:, None] * (Qk.T @ ops["Psi"])  # Ψ_a in the basis
    Lb = (root[:, None] * (Qk.T @ ops["L"] @ Qk)) / root[None, :]
    k = B.shape[0]
    S = S[:k, :k]
    S = 0.5 * (S + S.T)
    TB = S @ B
    A = TB.T @ TB
    M = S @ (np.eye(k) - 0.5 * (Lb + Lb.T)) @ S
    c = inst.s * algo.eta / fed.N
    floor = 64 * k * EPS * float(np.abs(A).max() + 1e-300)
    r1 = (float(np.linalg.norm(A, 2)) - floor) / max(c * float(np.linalg.norm(M, 2)), 1e-300)
    r2 = (float(np.trace(A)) - floor) / max(c * float(np.trace(M)), 1e-300)
    return max(r1, r2)


@claim(
    id="nonparam/lemma-9",
    ref="Lemma 9",
    title="For self-adjoint 𝒯: ‖A‖₂ ≤ (sη/N)‖𝒯(ℐ − ℒ)𝒯‖_op and Tr A ≤ (sη/N)Tr(𝒯(ℐ − ℒ)𝒯), A_ij = ⟨𝒯Ψ_i, 𝒯Ψ_j⟩",
    statement=r"If $\mathcal T:\mathcal H\to\mathcal H$ is self-adjoint and $A_{ij}=\langle\mathcal T\Psi_i,\mathcal T\Psi_j\rangle_{\mathcal H}$, then "
    r"$\|A\|_2\le\frac{s\eta}N\|\mathcal T(\mathcal I-\mathcal L)\mathcal T\|_{op}$ and $\mathsf{Tr}(A)\le\frac{s\eta}N\mathsf{Tr}(\mathcal T(\mathcal I-\mathcal L)\mathcal T)$.",
    kind="probe",
    controls=[
        tightened(
            "for FedAvg with s = 1, ℐ − ℒ = η𝒫 and Ψ_i = (η/N)k_{x_i}, so Tr A = (η²/N²)Σ_i‖𝒯k_{x_i}‖² = "
            "(sη/N)Tr(𝒯(ℐ − ℒ)𝒯) exactly"
        )
    ],
)
def lemma_9(ctx):
    rng = ctx.rng
    Zn = sum(COUNTS) + EXTRA
    worst = 0.0
    for trial in range(20):
        p = gram_instance_param().base
        inst = gram_instance_param().decode(p.sample(rng))
        worst = max(worst, _lemma9_ratio(inst, rng.normal(size=(Zn, Zn))))

    param = Product(inst=gram_instance_param(counts=(1, 2), extra=1), S=Custom(16, lambda z: z.reshape(4, 4)))
    result = _search(ctx, lambda p: _lemma9_ratio(p["inst"], p["S"]), param, target=1 + 1e-8, n_random=40, maxiter=40)
    return _verdict(
        ctx,
        worst,
        result,
        1e-8,
        why="norms and traces of small symmetric matrices (error ~ |Z|·eps)",
        notes="𝒯 ranges over self-adjoint operators on span{k_Z} (Z: data + 2 extra points), 0 on its complement; "
        "ℒ in an orthonormal basis of span{k_Z}. Tr(𝒯(ℐ − ℒ)𝒯) is finite since ℐ − ℒ vanishes off span{k_x}.",
    )


@claim(
    id="nonparam/lemma-8",
    ref="Lemma 8",
    title="W.p. ≥ 1 − exp(−cN/(σ²ηts)), ‖f_t − f‖_ℋ ≤ ‖f_0 − f‖_ℋ + 1 + √(ηst/N)‖Δ_f‖₂ for all f, t ≤ T",
    statement=r"There is a universal $c$ such that for any $t\le T$, with probability at least $1-\exp(-cN/(\sigma^2\eta ts))$, "
    r"$\|f_t-f\|_{\mathcal H}\le\|f_0-f\|_{\mathcal H}+1+\sqrt{\eta st/N}\|\Delta_f\|_2$ for all $f\in\mathcal H$.",
    kind="simulation",
    control_exempt="a high-probability statement checked on the event with slack (worst 0.87) and by frequency tests; no"
    " attaining instance is known",
)
def lemma_8(ctx):
    """Two parts. (i) On every noise draw, the bound holds for random and adversarial f whenever ξᵀΣξ ≤ 1 (the event of
    the proof) — checked with f = c·k_Z over a dictionary beyond the data; (ii) P(ξᵀΣξ > 1) against
    exp(−N/(32eσ²ηts)) (Gaussian noise; explicit constant from Laurent–Massart with δ = 1/(2e)) by a binomial test."""
    rng = ctx.rng
    n_samples = 2000 if not ctx.full else 10000
    worst_det, worst_evidence, cases = 0.0, 0.0, 0
    for trial in range(10 if not ctx.full else 30):
        inst = random_instance(rng, family=KERNEL_FAMILIES[trial % 7], n_range=(1, 6))
        if inst.sigma <= 0:
            continue
        T = kb.early_stopping_time(inst.lam, inst.algo.eta, inst.s, inst.sigma, t_max=10**7)
        if T < 1:
            continue
        fed, dyn, G = inst.fed, inst.dyn, inst.G
        N = fed.N
        for t in sorted({1, T}):
            Sigma = dyn.sigma_matrix(int(t))
            xi = rng.normal(size=(n_samples, N)) * np.sqrt(inst.noise_var)[None, :]
            quad = np.einsum("ka,ab,kb->k", xi, Sigma, xi)
            k = int(np.sum(quad > 1))
            bound = math.exp(-N / (32 * math.e * inst.sigma**2 * inst.algo.eta * inst.s * t))
            worst_evidence = max(worst_evidence, _binomial_evidence(k, n_samples, bound))
            # (i): deterministic part on a few draws inside the event, random comparators f on the dictionary
            incr = -(inst.algo.eta / N)  # coefficient map of f_t from y (closed form): a_t(y)
            for j in np.nonzero(quad <= 1)[0][:5]:
                y = inst.truth_values + xi[j]
                a_t = dyn.coefficient_increments(inst.f0_values * 0, y, [int(t)])[0]
                for _ in range(6):
                    c_f = rng.normal(size=G.shape[0])
                    fvals = G[:N] @ c_f
                    diff = np.concatenate([a_t, np.zeros(G.shape[0] - N)]) - c_f  # f_0 = 0
                    lhs = math.sqrt(max(diff @ G @ diff, 0.0))
                    f0f = math.sqrt(max(c_f @ G @ c_f, 0.0))
                    Delta = inst.truth_values - fvals
                    rhs = kb.lemma_8_bound(f0f, inst.algo.eta, inst.s, int(t), N, float(np.linalg.norm(Delta)))
                    worst_det = max(worst_det, lhs / rhs)
            del incr
            cases += 1
    ok = worst_det <= 1 + 1e-9 and worst_evidence < 6.0
    return ctx.decide(
        ok,
        measured={"worst_ratio_on_event": worst_det, "max_minus_log10_p_value": worst_evidence, "cases": cases},
        tolerance={"deterministic": 1 + 1e-9, "test": "refute when P(Binomial(n, bound) ≥ k) < 1e-6"},
        notes="f_0 = 0; Σ of eq. (63) in closed form. The universal c is made explicit for Gaussian noise: "
        "c = 1/(32e) (Laurent–Massart with ‖Σ‖ ≤ ηst/N, σ²TrΣ ≤ 1/(2e)).",
    )


# --------------------------------------------------------------------------------------------
# Remark 2: population L² error and the minimax rate
# --------------------------------------------------------------------------------------------


@claim(
    id="nonparam/remark-2",
    ref="Remark 2",
    title="For i.i.d. covariates the early-stopped estimate attains the centralized minimax rate in L²(P) (Sobolev: N^{−2/3})",
    statement=r"When the $\mathbf x_i$ are i.i.d., the bounds extend to $\mathbb E_{x\sim\mathbb P}[(f_t(x)-f(x))^2]$ and, for kernels including "
    r"Sobolev classes, yield the centralized minimax-optimal estimation error rate.",
    kind="simulation",
    controls=[
        Control(
            "parametric-rate",
            "an N^{−1} rate (slope −1) instead of N^{−2/3}: false, since N^{−2/3} is the minimax rate of this "
            "Sobolev class (Remark 2), so no estimator attains N^{−1} uniformly",
            {"target_slope": -1.0},
        )
    ],
)
def remark_2(ctx):
    """First-order Sobolev kernel (minimax rate N^{−2/3} over its unit ball), uniform covariates, M = 4 unbalanced clients,
    σ = 0.5, FedAvg s = 3 stopped at T of (21); E_ξ‖f_T − f^*‖²_{L²} exactly (Mercer coefficients), averaged over
    covariate draws; fitted slope over N ∈ {64, …, 512}."""
    rng = ctx.rng
    k = SobolevKernel()
    Ns = [48, 96, 192, 384] if not ctx.full else [64, 128, 256, 512, 1024]
    reps = 2 if not ctx.full else 8
    L = 1000
    mu = k.mercer_eigenvalues(L)
    ell = np.arange(1, L + 1)
    beta = np.sqrt(mu * ell ** (-1.2))
    beta /= math.sqrt(float(np.sum(beta**2 / mu)))
    f_star = MercerSeries(k, beta)
    sigma = 0.5
    errors = []
    for N in Ns:
        vals = []
        for _ in range(reps):
            counts = np.array([1, 2, 3, 4]) * N // 10
            counts[-1] = N - counts[:-1].sum()
            fed = KernelFederation.sample(k, counts, truths=f_star, noise_sd=sigma, seed=rng)
            algo = KernelAlgorithm.fedavg(0.5 / float(fed.client_norms().max()), 3)
            lam = np.sort(np.linalg.eigvalsh(fed.K_x))[::-1]
            T = kb.early_stopping_time(lam, algo.eta, algo.s, sigma, t_max=10**8)
            dyn = PredictionDynamics(fed, algo)
            V, Vi, P = dyn.V, dyn.V_inv, dyn.P
            gs = np.where(
                dyn.Lambda > 0, (1 - (1 - algo.eta * dyn.Lambda) ** T) / np.maximum(algo.eta * dyn.Lambda, 1e-300), 0.0
            )
            AT = (algo.eta / fed.N) * P @ (V * gs[None, :]) @ Vi  # a_T = AT y (f_0 = 0)
            Phi = k.mercer_eigenfunctions(fed.x, L)  # (N, L)
            B = (mu[:, None] * Phi.T) @ AT  # Mercer coefficients of f_T = B y
            mean = B @ fed.truth_values() - beta
            vals.append(float(mean @ mean + sigma**2 * np.sum(B * B)))
        errors.append(float(np.mean(vals)))
    fit = fit_power_law(Ns, errors)
    ok = abs(fit["slope"] - ctx.param("target_slope", -2 / 3)) <= 0.15
    return ctx.decide(
        ok,
        measured={"fitted_slope": fit["slope"], "minimax_slope": -2 / 3, "errors": errors, "N": Ns},
        tolerance={
            "slope": "within ±0.15 of −2/3",
            "why": "a log-log fit over three doublings of N with few covariate draws; the truth sits at the "
            "edge of the unit ball (β_ℓ² ∝ μ_ℓℓ^{−1.2}), where the rate is the minimax one up to logs",
        },
        notes="Population error ‖f_T − f^*‖²_{L²(uniform)} = Σ_ℓ(β_ℓ(f_T) − β_ℓ^*)² with β_ℓ(f_T) = μ_ℓΣ_ja_jφ_ℓ(x_j), "
        f"truncated at ℓ ≤ {L}; expectation over ξ exact, over covariates by averaging.",
    )
