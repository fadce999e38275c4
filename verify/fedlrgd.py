"""Cross-checks for Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*:
FedAve is the one LocalUpdate driver; the exact FedAve moments agree with it; FedLRGD runs the same
on numpy and torch."""

from __future__ import annotations

import math

import numpy as np

from fedtheory.claims.agreement import agreement_claim, decide_within, relative_gap, worst_over_trials
from fedtheory.claims.controls import one_step_too_few, one_step_too_many

EPS = float(np.finfo(np.float64).eps)


def _model_averaging_reference(fed, x0, b, steps, clients_per_period):
    """FedPAQ's Algorithm 1 without quantization, written out: every listed client runs b full-batch
    gradient steps from the server model and the server averages the local models."""
    x = np.asarray(x0, dtype=np.float64)
    xs = [x]
    for eta, active in zip(steps, clients_per_period):
        local = []
        for c in active:
            y = x.copy()
            for _ in range(b):
                y = y - eta * fed.client_grads(y)[c]
            local.append(y)
        x = np.mean(local, axis=0)
        xs.append(x)
    return np.stack(xs)


@agreement_claim(
    "verify/fedave/local-update-is-model-averaging",
    "Appendix D (FedAve) / LocalUpdate",
    "FedAve (model averaging, FedPAQ without quantization) is LocalUpdate with Θ_{1:b} and server lr = client lr",
    r"For any finite-sum federation, step sizes $\eta_k$ and $b$ local full-batch steps, "
    r"$\theta_{k+1}=\frac1{|S_k|}\sum_{c\in S_k}\theta^{(c)}_{k,b}$ equals one round of LocalUpdate$(\Theta_{1:b},\alpha=0,"
    r"\gamma=\eta_k)$ with server gradient descent of rate $\eta_k$ on the averaged message $\sum_j g_j$.",
    [
        one_step_too_few(
            "model averaging, against FedAve,",
            "its b local steps",
            {"reference_steps_offset": -1},
            name="reference-one-local-step-fewer",
            consequence="a different method, whose iterates differ",
        )
    ],
    kind="numeric",
)
def fedave_is_local_update(ctx):
    from fedtheory.algorithms.fedlrgd import fedpaq_step, run_fedave
    from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation

    rng = ctx.rng

    def gap(trial):
        n, d = int(rng.integers(2, 6)), int(rng.integers(2, 5))
        fed = (
            LeastSquaresFederation.random(n, 12, d, l2=0.1, seed=rng)
            if trial % 2 == 0
            else LogisticFederation.random(n, 12, d, l2=0.1, seed=rng)
        )
        b, T = int(rng.integers(2, 6)), 8
        x0 = rng.normal(size=d)
        step = 0.05 if trial < 2 else fedpaq_step(mu=0.1, b=b)
        steps = [step(k) if callable(step) else step for k in range(T)]
        res = run_fedave(fed, b=b, T=T, step=step, x0=x0, seed=0)
        ref = _model_averaging_reference(fed, x0, b + ctx.param("reference_steps_offset", 0), steps, [range(n)] * T)
        return relative_gap(res.x, ref)

    tol = 1e3 * EPS
    return decide_within(
        ctx,
        worst_over_trials(ctx, 4, gap),
        tol,
        name="worst_relative_gap",
        tolerance=tol,
        notes="Least squares and logistic federations, constant steps and FedPAQ's η_k = 4/(μ(kb+1)); every "
        "client active (τ = 1), full local batches, so both sides are deterministic.",
    )


@agreement_claim(
    "verify/fedave/moments-match-driver",
    "Lemma 3 (exact moments)",
    "The exact FedAve moment recursion matches the LocalUpdate driver's Monte Carlo mean under client sampling",
    r"With $\tau m$ clients drawn uniformly without replacement per period and exact local gradients on quadratic "
    r"(least-squares) clients, $\mathbb E\theta_T$ and $\mathbb E\|\theta_T-\theta^*\|^2$ from fedave_moments equal the "
    r"driver's averages over independent runs (up to Monte Carlo error).",
    [
        one_step_too_many(
            "the exact moments, against the driver,",
            "its b = 3 local steps",
            {"moments_b_offset": 1},
            name="moments-of-b-plus-1",
            consequence="a different method, whose mean and spread differ",
        )
    ],
)
def fedave_moments_match(ctx):
    from fedtheory.algorithms.fedlrgd import run_fedave
    from fedtheory.analysis.fedave_moments import fedave_moments
    from fedtheory.problems.finite_sum import LeastSquaresFederation

    rng = ctx.rng
    fed = LeastSquaresFederation.random(5, 20, 3, l2=0.2, heterogeneity=2.0, seed=rng)
    q = fed.to_quadratic()
    b, T, M, eta = 3, 6, 2, 0.05
    x0 = rng.normal(size=3) * 3
    mom = fedave_moments(
        q.A,
        q.c,
        np.zeros_like(q.A),
        b=b + ctx.param("moments_b_offset", 0),
        steps=[eta] * T,
        M=M,
        theta0=x0,
        center=fed.x_star(),
    )
    runs = 400 if not ctx.full else 4000
    finals = np.stack(
        [
            run_fedave(fed, b=b, T=T, step=eta, x0=x0, tau=M / 5, seed=int(s)).x[-1]
            for s in rng.integers(0, 2**31, size=runs)
        ]
    )
    dist2 = np.sum((finals - fed.x_star()) ** 2, axis=1)
    z_mean = np.abs(finals.mean(axis=0) - mom["mean"][-1]) / (finals.std(axis=0, ddof=1) / math.sqrt(runs) + 1e-300)
    z_dist = abs(dist2.mean() - mom["dist2"][-1]) / (dist2.std(ddof=1) / math.sqrt(runs))
    ok = float(z_mean.max()) < 5 and z_dist < 5
    return ctx.decide(
        ok,
        measured={"max_mean_z": float(z_mean.max()), "dist2_z": float(z_dist), "runs": runs},
        tolerance="|Monte Carlo − exact| < 5 standard errors",
        notes="Heterogeneous least-squares clients (5 clients, 2 per period, b = 3, η = 0.05); the moments use "
        "the clients' quadratics (A_i, c_i) and inclusion probabilities of sampling without replacement.",
    )


@agreement_claim(
    "verify/fedlrgd/numpy-equals-torch",
    "Algorithm 1",
    "FedLRGD gives the same iterates on the numpy and torch backends",
    r"Algorithm 1 written once against the array backend: the numpy and torch (cpu, float64) runs of the same "
    r"instance agree to rounding.",
    [
        one_step_too_few(
            "torch, against numpy,",
            "its S = 30 iterations",
            {"torch_S_offset": -1},
            name="torch-one-iteration-fewer",
            consequence="gradient steps move the iterate (θ is not stationary here)",
        )
    ],
    kind="numeric",
    requires=("torch",),
)
def fedlrgd_backends(ctx):
    from fedtheory.algorithms.fedlrgd import run_fedlrgd
    from fedtheory.problems.data_smooth import SoftLogisticLoss

    rng = ctx.rng
    loss = SoftLogisticLoss(mu=0.1)
    server, clients = rng.uniform(size=(4, 3)), rng.uniform(size=(5, 6, 3))
    th = rng.normal(size=(4, 2))
    a = run_fedlrgd(loss, server, clients, S=30, L1=1.0, varthetas=th, backend="numpy")
    b = run_fedlrgd(
        loss,
        server,
        clients,
        S=30 + ctx.param("torch_S_offset", 0),
        L1=1.0,
        varthetas=th,
        backend="torch",
        device="cpu",
    )
    ta, tb = np.asarray(a.theta), np.asarray(b.theta)
    # the final iterates on the scale of the whole numpy run, then every iterate when both ran as long
    gap = float(np.max(np.abs(ta[-1] - tb[-1])) / (1 + np.max(np.abs(ta))))
    if ta.shape == tb.shape:
        gap = max(gap, relative_gap(tb, ta))
    tol = 1e3 * float(a.g_condition.max()) * EPS
    return decide_within(
        ctx,
        gap,
        tol,
        name="max_relative_gap",
        tolerance={"relative": tol, "why": "1e3·cond(G)·eps: the weights solve with G^{(i)}"},
        G_condition=float(a.g_condition.max()),
    )
