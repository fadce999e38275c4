"""Cross-checks of the localupdate library pieces that the paper's claims rely on.

MAML clients (:mod:`fedtheory.algorithms.maml`) have two exact implementations — the closed-form reverse
recursion (numpy) and torch autograd through the taped inner steps — and two driver paths on quadratics
(Theorem 2's LocalUpdate operator, and the literal inner steps). The simulated Pareto frontiers
(:func:`fedtheory.analysis.pareto.frontier_spectrum`) work in log space; here they are checked against the
dense matrix Q(α, γ, Θ_K)A and against 50-digit arithmetic at K = 10⁶.
"""

from __future__ import annotations

import mpmath
import numpy as np

from fedtheory.algorithms.local_update import ServerOpt, run_local_update
from fedtheory.algorithms.maml import MAML, maml_messages
from fedtheory.analysis.pareto import frontier_problem, frontier_spectrum, frontier_uniform
from fedtheory.algorithms.theta import Theta
from fedtheory.claims.agreement import agreement_claim, decide_within
from fedtheory.claims.controls import one_step_too_many
from fedtheory.claims.core import Control
from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation
from fedtheory.problems.quadratic import make_quadratic

EPS = float(np.finfo(np.float64).eps)


@agreement_claim(
    "verify/localupdate/maml-closed-form-equals-autograd",
    "Theorem 2 (MAML message)",
    "MAML's message: closed-form reverse recursion = torch autograd through the inner steps",
    r"For quadratic, least-squares and logistic clients, with or without mini-batches and a proximal term, "
    r"$J_{K+1}^\top\nabla f_{S_{out}}(X_{K+1})$ by the recursion equals torch.autograd's gradient of "
    r"$f_{S_{out}}(X_{K+1}(x))$; and the driver's numpy and torch runs agree iterate for iterate.",
    [
        one_step_too_many(
            "autograd, compared with the closed-form message,",
            "K inner steps",
            {"k_offset": 1},
            name="one-more-inner-step",
            consequence="a different message",
        )
    ],
    kind="numeric",
    requires=("torch",),
)
def maml_autograd(ctx):
    rng = ctx.rng
    worst_msg, worst_run = 0.0, 0.0
    for Fed in (LeastSquaresFederation, LogisticFederation):
        fed = Fed.random(4, [6, 9, 7, 12], 3, seed=rng)
        for K, alpha in ((1, 0.0), (4, 0.6)):
            algo = MAML(K, 0.1, ServerOpt("gd", lr=1.0), alpha=alpha)
            # control: autograd through one inner step more (the last inner batch repeated)
            algo_b = MAML(K + ctx.param("k_offset", 0), 0.1, ServerOpt("gd", lr=1.0), alpha=alpha)

            def batches_b(b):
                return b if b is None or algo_b.K == K else np.concatenate([b, b[-1:]])

            inner = np.stack([np.stack([rng.choice(6, 3, replace=False) for _ in range(4)]) for _ in range(K)])
            outer = np.stack([rng.choice(6, 3, replace=False) for _ in range(4)])
            x = rng.normal(size=3)
            for batches in ((None, None), (inner, None), (inner, outer)):
                a = maml_messages(fed, x, algo, inner_batches=batches[0], outer_batch=batches[1])
                b = maml_messages(
                    fed, x, algo_b, inner_batches=batches_b(batches[0]), outer_batch=batches[1], method="autograd"
                )
                worst_msg = max(worst_msg, float(np.abs(a - b).max() / max(np.abs(a).max(), 1)))
        algo = MAML(3, 0.05, ServerOpt("heavy_ball", lr=0.1, momentum=0.5), alpha=0.3)
        seed = int(rng.integers(2**31))
        runs = [
            run_local_update(fed, algo, np.zeros(3), 15, batch_size=3, clients_per_round=2, seed=seed, backend=be)
            .to_numpy()
            .x
            for be in ("numpy", "torch")
        ]
        worst_run = max(worst_run, float(np.abs(runs[0] - runs[1]).max() / max(np.abs(runs[0]).max(), 1)))
    problem = make_quadratic(3, 5, mu=1.0, L=20.0, seed=rng)
    algo = MAML(6, 0.03, ServerOpt("gd", lr=0.1), alpha=0.4)
    x = rng.normal(size=5)
    worst_msg = max(
        worst_msg,
        float(np.abs(maml_messages(problem, x, algo) - maml_messages(problem, x, algo, method="autograd")).max()),
    )
    tol = 1e-12
    return ctx.decide(
        max(worst_msg, worst_run) <= tol,
        measured={"message_max_rel_gap": worst_msg, "driver_numpy_vs_torch": worst_run},
        tolerance={"relative": tol, "why": "same arithmetic in a different order, K ≤ 6 steps"},
    )


@agreement_claim(
    "verify/localupdate/maml-spectral-equals-stepwise",
    "Theorem 2 (MAML on the driver)",
    "The driver's MAML: Theorem 2's spectral operator = the literal inner steps (with α > 0 and client sampling)",
    r"On quadratics, LocalUpdate's spectral path with $\Theta'$ of maml\_theta and the stepwise Jacobian "
    r"recursion give the same iterates.",
    [
        one_step_too_many(
            "the stepwise path, compared with the spectral path,",
            "K inner steps",
            {"k_offset": 1},
            name="one-more-inner-step",
            consequence="a different message",
        )
    ],
)
def maml_spectral(ctx):
    rng = ctx.rng
    worst = 0.0
    for alpha, M in ((0.0, None), (0.8, 2)):
        problem = make_quadratic(4, 4, mu=1.0, L=30.0, weights="random", seed=rng)
        algo = MAML(5, 0.5 / (problem.L + alpha), ServerOpt("nesterov", lr=0.05, momentum=0.4), alpha=alpha)
        seed = int(rng.integers(2**31))
        a = run_local_update(problem, algo, np.ones(4), 30, clients_per_round=M, seed=seed).to_numpy().x
        algo_b = MAML(
            5 + ctx.param("k_offset", 0),
            0.5 / (problem.L + alpha),
            ServerOpt("nesterov", lr=0.05, momentum=0.4),
            alpha=alpha,
        )  # control: the stepwise run with one inner step more
        b = (
            run_local_update(problem, algo_b, np.ones(4), 30, path="stepwise", clients_per_round=M, seed=seed)
            .to_numpy()
            .x
        )
        worst = max(worst, float(np.abs(a - b).max() / max(np.abs(a).max(), 1)))
    return decide_within(ctx, worst, 1e-12, name="max_rel_gap")


@agreement_claim(
    "verify/localupdate/simulated-frontier-equals-dense",
    "Appendix D.1 (simulated frontiers)",
    "Log-space simulated frontier = dense Q(α,γ,Θ_K)A (K ≤ 300) and 50-digit arithmetic (K = 10⁶)",
    r"frontier\_spectrum's κ = cond(Q(α,γ,Θ_K)A) and cond(Q) agree with a dense matrix power and with "
    r"mpmath, including K = 10⁶ where (1 − γλ)^{K−1} underflows float64.",
    [
        Control(
            "exponent-k",
            "the dense reference with (I − γ(A + αI))^K in place of ^(K − 1): a different κ "
            "for K ≥ 1, γ > 0, false a priori (and the mpmath side with it)",
            {"k_offset": 1},
        )
    ],
    kind="numeric",
)
def simulated_dense(ctx):
    rng = ctx.rng
    worst_dense, worst_mp = 0.0, 0.0
    for _ in range(5):
        d = int(rng.integers(3, 12))
        lam = np.sort(1 + 9 * rng.uniform(size=d))
        lam[0], lam[-1] = 1.0, 10.0
        U, _ = np.linalg.qr(rng.normal(size=(d, d)))
        A = (U * lam) @ U.T
        alpha, gamma = float(rng.uniform(0, 2)), 0.001
        fr = frontier_spectrum(lam, alpha=alpha, gamma=gamma, Ks=[1, 37, 300], theta="last")
        for K, kap in zip(fr["K"], fr["kappa"]):
            # control: the dense power with exponent K in place of K − 1
            Q = np.linalg.matrix_power(
                np.eye(d) - gamma * (A + alpha * np.eye(d)), int(K) - 1 + ctx.param("k_offset", 0)
            )
            ev = np.linalg.eigvals(Q @ A).real
            worst_dense = max(worst_dense, abs(ev.max() / ev.min() / kap - 1))
        big = frontier_spectrum(lam, alpha=alpha, gamma=gamma, Ks=[10**6], theta="last")
        with mpmath.workdps(50):
            vals = [
                (1 - mpmath.mpf(gamma) * (mpmath.mpf(float(v)) + mpmath.mpf(alpha)))
                ** (10**6 - 1 + ctx.param("k_offset", 0))
                * mpmath.mpf(float(v))
                for v in lam
            ]
            log_k = mpmath.log(max(vals) / min(vals))
        worst_mp = max(worst_mp, abs(float(log_k) / float(big["log_kappa"][0]) - 1))
    ok = worst_dense <= 1e-9 and worst_mp <= 1e-12
    return ctx.decide(
        ok,
        measured={"dense_rel_gap": worst_dense, "log_kappa_rel_gap_K1e6": worst_mp},
        tolerance={"dense": "1e-9 (K − 1 ≤ 299 matrix products)", "mpmath": "1e-12 on log κ"},
    )


@agreement_claim(
    "verify/localupdate/problem-frontier-equals-analytic",
    "Section 5 (Pareto frontiers)",
    "An aligned federation attaining μ and L has exactly the analytic frontier (κ of eq. 9 = bound (11))",
    r"For clients sharing an eigenbasis with every spectrum attaining $\mu$ and $L$, frontier\_problem "
    r"(κ of eq. 9 from the matrices) equals frontier\_uniform (eq. 11).",
    [
        Control(
            "k-plus-1",
            "the matrices' κ at K equated with the analytic κ at K + 1: false a priori, (11) "
            "is strictly decreasing in K for γ > 0",
            {"k_offset": 1},
        )
    ],
    kind="numeric",
)
def problem_frontier(ctx):
    rng = ctx.rng
    problem = make_quadratic(3, 4, mu=1.0, L=25.0, weights="random", commuting=True, seed=rng)
    Ks = [1, 3, 10, 100, 1000]
    a = frontier_problem(problem, [Theta.uniform(K) for K in Ks], gammas=0.01)
    # control: the analytic frontier one local step further (K + 1)
    b = frontier_uniform(1.0, 25.0, 0.0, gammas=0.01, Ks=[K + ctx.param("k_offset", 0) for K in Ks])
    gap = float(np.max(np.abs(a["kappa"] / b["kappa"] - 1)))
    return decide_within(ctx, gap, 1e-12, name="kappa_rel_gap")
