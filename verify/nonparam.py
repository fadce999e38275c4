"""Cross-checks for the function-space and parameter-space FedAvg/FedProx of Su, Xu & Yang (*A Non-parametric View of
FedAvg and FedProx: Beyond Stationary Points*).

* the closed-form prediction dynamics (eq. 11 diagonalised) equal the literal local updates;
* parameter-space FedAvg: the closed-form θ-recursion equals the LocalUpdate driver (spectral and stepwise paths
  on the least-squares quadratic, and the literal finite-sum path) — one algorithm, one implementation;
* parameter-space FedProx: LocalUpdate(Θ_{1:K}, α = 1/η, γ, server lr = γ) approaches the exact proximal round as K
  grows, with the error exactly (I − γ(A_i + αI))^K applied to the initial gap;
* function space with the linear kernel equals parameter space (predictions and RKHS distances);
* mini-batches of the whole local data reproduce full-batch runs.
"""

from __future__ import annotations

import numpy as np

from fedtheory.algorithms.kernel_federated import KernelAlgorithm, run_kernel_federated
from fedtheory.algorithms.local_update import run_local_update
from fedtheory.algorithms.parameter_space import (
    ParameterDynamics,
    _moments,
    exact_prox_round,
    least_squares_quadratic,
    local_update_fedavg,
    local_update_fedprox,
    run_parameter_space,
)
from fedtheory.claims.agreement import agreement_claim, decide_within, relative_gap, worst_over_trials
from fedtheory.claims.controls import one_step_too_many
from fedtheory.claims.core import Control
from fedtheory.problems.finite_sum import LeastSquaresFederation
from fedtheory.problems.kernels import (
    KERNEL_FAMILIES,
    FeatureFunction,
    KernelFederation,
    LinearKernel,
    random_kernel_federation,
)

EPS = float(np.finfo(np.float64).eps)


def _random_least_squares(rng, *, singular: bool = False) -> LeastSquaresFederation:
    n, d = int(rng.integers(2, 6)), int(rng.integers(2, 7))
    counts = rng.integers(1 if singular else d, 3 * d + 2, size=n)
    feats = [rng.normal(size=(int(m), d)) * rng.uniform(0.3, 2) + rng.normal(size=d) for m in counts]
    theta = rng.normal(size=d)
    targs = [X @ (theta + 0.5 * rng.normal(size=d)) + 0.3 * rng.normal(size=X.shape[0]) for X in feats]
    return LeastSquaresFederation(feats, targs)


def _least_squares_instances(ctx, fast: int, full: int):
    """The random least-squares federations of a check (every second one with singular clients, n_i < d), each
    with its trial index, its clients' second moments A_i, b_i and the largest client curvature L = max_i λ_max(A_i).

    >>> from fedtheory.claims.core import CheckContext
    >>> [(trial, L > 0) for trial, fed, A, b, L in _least_squares_instances(CheckContext(seed=0), 2, 9)]
    [(0, True), (1, True)]
    """
    for trial in range(full if ctx.full else fast):
        fed = _random_least_squares(ctx.rng, singular=trial % 2 == 1)
        A, b = _moments(fed)
        yield trial, fed, A, b, float(np.linalg.eigvalsh(A)[:, -1].max())


@agreement_claim(
    "verify/nonparam/spectral-equals-stepwise",
    "Su, Xu & Yang, Proposition 2 / eq. (39)",
    "Function space: the closed-form dynamics (P from client spectra, K_xP diagonalised) equal the literal local updates",
    r"For FedAvg (any $s$, $\gamma<1$) and FedProx, unbalanced clients and any kernel, the predictions $f_t(\mathbf x)=y+V(I-\eta\Lambda)^t"
    r"V^{-1}(f_0(\mathbf x)-y)$ and the coefficients of $f_t$ equal those of the local updates run step by step.",
    [
        one_step_too_many(
            "the literal local updates, against the closed form,",
            "its s local steps",
            {"s_offset": 1},
            name="stepwise-s-plus-1",
            consequence="for FedAvg the extra step multiplies each client's local map by "
            "I − ηK_{x_i} ≠ I (γ > 0), changing P and the trajectory",
        )
    ],
)
def spectral_equals_stepwise(ctx):
    rng = ctx.rng
    worst = 0.0
    trials = 14 if not ctx.full else 50
    for trial in range(trials):
        fed = random_kernel_federation(rng, family=KERNEL_FAMILIES[trial % 7], n_range=(1, 10))
        norm = float(fed.client_norms().max())
        if norm == 0:
            continue
        algo = (
            KernelAlgorithm.fedavg(float(rng.uniform(0.05, 0.99)) / norm, int(rng.integers(1, 12)))
            if trial % 2 == 0
            else KernelAlgorithm.fedprox(float(10 ** rng.uniform(-2, 2)) / norm)
        )
        a0 = rng.normal(size=fed.N) * 0.3
        T = 40
        fast = run_kernel_federated(fed, algo, T, f0=a0)
        off = ctx.param("s_offset", 0) if algo.kind == "fedavg" else 0
        slow = run_kernel_federated(fed, KernelAlgorithm(algo.kind, algo.eta, algo.s + off), T, f0=a0, path="stepwise")
        scale = float(np.abs(slow.predictions).max() + np.abs(fed.y).max())
        err_pred = float(np.abs(fast.predictions - slow.predictions).max() / scale)
        # the iterates as functions, at fresh points: f_t(x') = k(x', x)·a_t. Coefficients along null(G) are zero
        # functions, so values (not coefficients) are compared, relative to the rounding scale Σ_j |k(x', x_j)||a_j|.
        if fed.kernel.name == "precomputed":
            Xt = np.arange(fed.N, fed.kernel._G.shape[0], dtype=np.float64)
        else:
            Xt = fed.x[rng.integers(0, fed.N, size=20)] + 0.01 * rng.normal(size=(20, fed.x.shape[1]))
            if fed.kernel.name == "sobolev":
                Xt = np.clip(Xt, 0, 1)
        Kt = fed.kernel(Xt, fed.x)
        vf, vs = fast.coef @ Kt.T, slow.coef @ Kt.T
        S = np.abs(slow.coef) @ np.abs(Kt).T + np.abs(fast.coef) @ np.abs(Kt).T + 1
        err_fun = float(np.max(np.abs(vf - vs) / S))
        # the closed form's accuracy is set by cond(V)² = cond(P) ≤ κ and N·eps per operation
        allowed = 1e3 * T * fed.N * EPS * algo.kappa(fed.gamma(algo.eta))
        worst = max(worst, err_pred / allowed, err_fun / allowed)
    ok = worst <= 1.0
    return ctx.decide(
        ok,
        measured={"error_over_allowed": worst, "instances": trials},
        tolerance={
            "relative": "1e3·T·N·eps·κ on predictions and on values at fresh points (relative to "
            "Σ_j|k(x', x_j)||a_j|, the rounding scale of f(x') = k(x', x)·a)"
        },
        notes="Rank-deficient kernel matrices (finite-rank kernels, N > rank) included: the closed form drops the "
        "Λ = 0 directions (zero functions), the literal run carries coefficients along them; values agree.",
    )


@agreement_claim(
    "verify/nonparam/fedavg-parameter-space-equals-local-update",
    "Su, Xu & Yang, Section 3 (FedAvg) / Charles & Konečný, Algorithms 1–2",
    "Parameter-space FedAvg (η, s) is LocalUpdate(Θ_{1:s}, α = 0, γ = η, server GD lr = η) — closed form, spectral, stepwise, finite-sum",
    r"With $p_i=n_i/N$, LocalUpdate with $\Theta_{1:s}$, $\alpha=0$, $\gamma=\eta$ and server gradient descent of step $\eta$ produces "
    r"$\theta_t=\sum_iw_i\mathcal G_i^s(\theta_{t-1})$, the paper's FedAvg, equal to the closed form $\theta_t=\mathcal L\theta_{t-1}+o$.",
    [
        one_step_too_many(
            "the paper's rounds written out, against LocalUpdate(Θ_{1:s}),",
            "s gradient steps",
            {"s_offset": 1},
            name="literal-s-plus-1",
            consequence="the extra step changes θ_t whenever the local gradients at the iterate are "
            "non-zero (θ_0 = 0, b ≠ 0)",
        )
    ],
)
def fedavg_parameter_space(ctx):
    rng = ctx.rng
    worst = 0.0
    for trial, fed, A, b, L in _least_squares_instances(ctx, 10, 40):
        eta, s = float(rng.uniform(0.05, 0.99)) / L, int(rng.integers(1, 9))
        T = 30
        dyn = ParameterDynamics.from_least_squares(fed, "fedavg", eta, s)
        closed = dyn.trajectory(np.zeros(fed.d), np.arange(T + 1))
        q = least_squares_quadratic(fed)
        algo = local_update_fedavg(eta, s)
        runs = [run_local_update(q, algo, np.zeros(fed.d), T, path=p).to_numpy().x for p in ("spectral", "stepwise")]
        runs.append(run_local_update(fed, algo, np.zeros(fed.d), T).to_numpy().x)  # finite-sum, literal
        # the paper's rounds written out: s gradient steps per client, then the n_i/N-weighted average
        lit = [np.zeros(fed.d)]
        for _ in range(T):
            th = np.tile(lit[-1], (fed.n, 1))
            for _ in range(s + ctx.param("s_offset", 0)):
                th = th - eta * (np.einsum("nij,nj->ni", A, th) - b)
            lit.append(np.asarray(fed.p) @ th)
        runs.append(np.stack(lit))
        scale = float(np.abs(closed).max()) + 1
        for r in runs:
            worst = max(worst, float(np.abs(r - closed).max()) / scale / (1e3 * T * s * fed.d * EPS))
    ok = worst <= 1.0
    return ctx.decide(
        ok,
        measured={"error_over_allowed": worst},
        tolerance={"relative": "1e3·T·s·d·eps of max|θ_t|", "why": "T rounds of s contracting steps in float64"},
        notes="Half the federations have clients with n_i < d (singular A_i), handled by least_squares_quadratic "
        "(c_i = A_i^+b_i), which LeastSquaresFederation.to_quadratic refuses.",
    )


@agreement_claim(
    "verify/nonparam/fedprox-local-update-limit",
    "Su, Xu & Yang, eq. (5) / Charles & Konečný, Algorithms 1–2",
    "LocalUpdate(Θ_{1:K}, α = 1/η, γ, lr = γ) → the exact FedProx round as K → ∞, with error (I − γ(A_i + αI))^K(θ − θ_i^prox)",
    r"For $0<\gamma<1/(L+\alpha)$, $\alpha=1/\eta$: one LocalUpdate round returns $\sum_iw_i\theta_{i,K}$ with "
    r"$\theta_{i,K}-\theta_i^{\rm prox}=(I-\gamma(A_i+\alpha I))^K(\theta-\theta_i^{\rm prox})$, "
    r"$\theta_i^{\rm prox}=(I+\eta A_i)^{-1}(\theta+\eta b_i)$; so it converges to the exact round of (5) geometrically.",
    [
        Control(
            "exponent-K-plus-1",
            "the error formula with exponent K + 1: false, since 0 < 1 − γ(λ + α) < 1, so (1 − γ(λ + α))^{K+1} ≠ "
            "(1 − γ(λ + α))^K on the non-zero initial gap (visible at K = 1, 2, 5)",
            {"K_offset": 1},
        )
    ],
)
def fedprox_limit(ctx):
    rng = ctx.rng
    worst_formula, worst_final, decays = 0.0, 0.0, []
    for trial, fed, A, b, L in _least_squares_instances(ctx, 8, 30):
        eta = float(10 ** rng.uniform(-2, 1)) / L
        alpha = 1 / eta
        gamma = float(rng.uniform(0.2, 0.999)) / (L + alpha)
        theta = rng.normal(size=fed.d) * 2
        q = least_squares_quadratic(fed)
        prox_local = np.linalg.solve(np.eye(fed.d)[None] + eta * A, (theta[None, :] + eta * b)[..., None])[..., 0]
        exact = exact_prox_round(A, b, np.asarray(fed.p), theta, eta)
        gaps = []
        for K in (1, 2, 5, 20, 100, 10**4):
            lu = local_update_fedprox(eta, L, K=K, gamma=gamma)
            x1 = run_local_update(q, lu, theta, 1).to_numpy().x[1]
            lam, V = np.linalg.eigh(A)
            Kc = K + ctx.param("K_offset", 0)
            pred_local = prox_local + np.einsum(
                "nij,nj,nkj,nk->ni", V, (1 - gamma * (lam + alpha)) ** Kc, V, theta[None, :] - prox_local
            )
            pred = np.asarray(fed.p) @ pred_local
            scale = float(np.linalg.norm(theta) + np.linalg.norm(exact))
            worst_formula = max(worst_formula, float(np.linalg.norm(x1 - pred)) / scale)
            gaps.append(float(np.linalg.norm(x1 - exact)) / scale)
        worst_final = max(worst_final, gaps[-1])
        decays.append(gaps)
    default = local_update_fedprox(0.1, 2.0)
    ok = worst_formula <= 1e-12 and worst_final <= 1e-13
    return ctx.decide(
        ok,
        measured={
            "formula_max_relative_error": worst_formula,
            "gap_at_K_1e4_max": worst_final,
            "gap_by_K_first_instance": decays[0],
            "default_K_for_eta_0.1_L_2": default.K,
        },
        tolerance={
            "formula": 1e-12,
            "limit": 1e-13,
            "why": "spectral path of LocalUpdate (exact in K) against the closed form; eps-level",
        },
        notes="Instances include singular clients (n_i < d). The default K of local_update_fedprox puts "
        "(1 − γα)^K below eps/16, so the parameter-space FedProx runs equal the exact rounds to float64.",
    )


@agreement_claim(
    "verify/nonparam/linear-kernel-function-space-equals-parameter-space",
    "Su, Xu & Yang, Section 2 (f = θ·ϕ, eq. 3)",
    "With the linear kernel, function-space FedAvg/FedProx equal the parameter-space runs (predictions and RKHS distances)",
    r"For $k(x,z)=x^\top z$, $f_t=\theta_t\cdot x$: $f_t(\mathbf x)=X\theta_t$ and $\|f_t-\theta^*\cdot x\|_{\mathcal H}=\|\theta_t-\theta^*\|_2$, "
    r"with $\theta_t$ from the LocalUpdate driver.",
    [
        one_step_too_many(
            "the parameter-space run, against the function-space run,",
            "its s local steps",
            {"s_offset": 1},
            name="parameter-s-plus-1",
            consequence="for FedAvg one more local gradient step changes θ_t (θ_0 = 0, non-zero responses)",
        )
    ],
)
def linear_kernel_equivalence(ctx):
    rng = ctx.rng
    worst = 0.0
    for trial, fed_ls, _, _, L in _least_squares_instances(ctx, 8, 30):
        feats = [fed_ls.a[i, : int(m)] for i, m in enumerate(fed_ls.counts)]
        targs = [fed_ls.y[i, : int(m)] for i, m in enumerate(fed_ls.counts)]
        kfed = KernelFederation(LinearKernel(), feats, targs)
        kind = ("fedavg", "fedprox")[trial % 2]
        eta, s = float(rng.uniform(0.1, 0.9)) / L, int(rng.integers(1, 6)) if kind == "fedavg" else 1
        T = 25
        h = run_parameter_space(fed_ls, kind, eta, T, s=s + (ctx.param("s_offset", 0) if kind == "fedavg" else 0))
        k = run_kernel_federated(kfed, KernelAlgorithm(kind, eta, s), T, path="stepwise")
        X = np.concatenate(feats)
        pred_err = relative_gap(h.theta @ X.T, k.predictions)
        theta_star = rng.normal(size=fed_ls.d)
        rk = np.sqrt(k.rkhs_error_sq(kfed, FeatureFunction(LinearKernel(), theta_star)))
        pr = np.linalg.norm(h.theta - theta_star[None, :], axis=1)
        dist_err = relative_gap(rk, pr)  # pr ≥ 0: max|pr| = max pr
        worst = max(worst, pred_err, dist_err)
    return decide_within(
        ctx,
        worst,
        1e-9,
        tolerance={
            "relative": 1e-9,
            "why": "two independent float64 computations (N-dimensional coefficients vs "
            "d-dimensional θ); ℋ-distances through aᵀGa − 2aᵀf(x) + ‖f‖² lose ~√eps "
            "near 0 only below the scale used",
        },
        notes="θ_0 = 0, so f_t stays in span{k_x}; FedProx in parameter space is LocalUpdate with K to float64 "
        "resolution, in function space the exact proximal step.",
    )


@agreement_claim(
    "verify/nonparam/full-local-batch-equals-full-batch",
    "Su, Xu & Yang, Section 6.1 (mini-batches)",
    "Mini-batches holding a client's whole data reproduce the full-batch runs (function space; parameter-space FedProx)",
    r"With $B_i=n_i$, each local (mini-batch) step of FedAvg is a full gradient step and each batch proximal step of FedProx "
    r"is the exact step (5).",
    [
        Control(
            "batch-one-short",
            "mini-batches of n_i − 1 samples reproducing the full-batch run: false, each step then omits one "
            "sample's residual term, which is non-zero for generic responses",
            {"batch_shrink": 1},
        )
    ],
)
def full_local_batch(ctx):
    rng = ctx.rng

    def gap(trial):
        worst = 0.0
        n = int(rng.integers(2, 8))
        fed = random_kernel_federation(rng, family=KERNEL_FAMILIES[trial % 7], n_range=(n, n))
        norm = float(fed.client_norms().max())
        if norm == 0:
            return worst
        for algo in (KernelAlgorithm.fedavg(0.7 / norm, 3), KernelAlgorithm.fedprox(2.0 / norm)):
            full = run_kernel_federated(fed, algo, 10, path="stepwise")
            mini = run_kernel_federated(
                fed, algo, 10, batch_size=n - ctx.param("batch_shrink", 0), seed=int(rng.integers(1 << 30))
            )
            worst = max(worst, relative_gap(mini.predictions, full.predictions))
        ls = _random_least_squares(rng)
        m = int(ls.counts.min())
        if np.all(ls.counts == m):
            A, _ = _moments(ls)
            eta = 0.5 / float(np.linalg.eigvalsh(A)[:, -1].max())
            a = run_parameter_space(ls, "fedprox", eta, 5, s=1, batch_size=m, seed=0).theta
            b = run_parameter_space(ls, "fedprox", eta, 5).theta
            worst = max(worst, relative_gap(a, b))
        return worst

    return decide_within(ctx, worst_over_trials(ctx, (6, 20), gap), 1e-10)
