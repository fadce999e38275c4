"""FedHM (Yao et al., *FedHM: Efficient Federated Learning for Heterogeneous Models via Low-rank Factorization*) and
HeteroFL against the one LocalUpdate driver: with every client at full rank (γ = 1, the unfactorized network) FedHM
is FedAvg, and so is HeteroFL with every client at full width — iterate for iterate, on the same client samples
and mini-batches (both drivers draw them as :func:`~fedtheory.algorithms.local_update.run_local_update` does).
"""

from __future__ import annotations

import numpy as np

from fedtheory.algorithms.fedhm import FedHM, HybridLayout, run_fedhm
from fedtheory.algorithms.local_update import LocalUpdate, run_local_update
from fedtheory.claims.agreement import agreement_claim, decide_within, relative_gap, worst_over_trials
from fedtheory.claims.controls import one_step_too_many
from fedtheory.claims.probing import by_tier
from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation

EPS = float(np.finfo(np.float64).eps)
SAMPLING = ((None, "with_replacement"), (3, "with_replacement"), (3, "without_replacement"), (5, "without_replacement"))


def _uniform_federation(kind, rng, n: int, d: int):
    """Unbalanced clients with equal weights p = 1/n (FedHM's eq. (2) averages uniformly at equal γ)."""
    cls = LeastSquaresFederation if kind == "least_squares" else LogisticFederation
    base = cls.random(n=n, m=[int(rng.integers(6, 30)) for _ in range(n)], d=d, seed=rng)
    feats = [base.a[i, : base.counts[i]] for i in range(n)]
    targs = [base.y[i, : base.counts[i]] for i in range(n)]
    return cls(feats, targs, p=np.full(n, 1.0 / n), l2=float(rng.choice([0.0, 0.01])))


#: both equivalences' control: the FedAvg reference run with E + 1 local steps on the same draws
FEDAVG_ONE_MORE_LOCAL_STEP = one_step_too_many(
    "FedAvg on the same draws",
    "E local steps",
    {"reference_extra_steps": 1},
    name="fedavg-one-more-local-step",
    consequence="a different algorithm, whose iterates differ from E steps' whenever a local gradient is nonzero",
)


@agreement_claim(
    "verify/fedhm/full-rank-is-fedavg-linear",
    "Algorithms 1-2 with every γ_p = 1",
    "FedHM with every client at full rank is FedAvg (least squares and logistic clients, numpy)",
    r"With every client at rank ratio $\gamma_p=1$ (the unfactorized model), FedHM's round — E local SGD steps, recovery "
    r"(eq. 1, the identity here), softmax aggregation (eq. 2, uniform at equal $\gamma$) — equals LocalUpdate with "
    r"$\Theta_{1:E}$, $\alpha=0$ and server step $\eta=\gamma$ (FedAvg), iterate for iterate, for any client sampling and "
    r"mini-batches.",
    [FEDAVG_ONE_MORE_LOCAL_STEP],
)
def full_rank_is_fedavg_linear(ctx):
    rng = ctx.rng
    trials = (12, 48)

    def gap_over_tolerance(trial):
        kind = ("least_squares", "logistic")[trial % 2]
        n, (m, k) = int(rng.integers(5, 8)), [(3, 4), (2, 5), (4, 4)][trial % 3]
        d = 1 + m * k
        fed = _uniform_federation(kind, rng, n, d)
        layout = HybridLayout.matrix(m, k, offset=1, d=d)
        curvature = 1.0 if kind == "least_squares" else 0.25
        L_sample = curvature * float(np.max(np.sum(fed.a**2, axis=2))) + fed.l2
        gamma = float(rng.uniform(0.2, 1.5)) / L_sample  # every (mini-batch) step non-expansive: γ ≤ 2/L
        E, rounds = int(rng.integers(1, 6)), 15
        M, scheme = SAMPLING[trial % len(SAMPLING)]
        B = None if trial % 4 == 0 else int(rng.integers(1, 6))
        x0 = rng.normal(size=d) * float(rng.uniform(0.1, 3))
        kw = dict(batch_size=B, clients_per_round=M, client_sampling=scheme, seed=int(rng.integers(10**6)))
        a = run_fedhm(fed, layout, FedHM((1.0,), E, gamma), x0, rounds, evaluate=False, **kw).x
        b = (
            run_local_update(
                fed, LocalUpdate.fedavg(E + ctx.param("reference_extra_steps", 0), gamma), x0, rounds, **kw
            )
            .to_numpy()
            .x
        )
        return relative_gap(a, b) / (8 * rounds * (E + 2) * (d + 1) * EPS)

    return decide_within(
        ctx,
        worst_over_trials(ctx, trials, gap_over_tolerance),
        1.0,
        name="worst_difference_over_tolerance",
        cases=by_tier(ctx, trials=trials)["trials"],
        tolerance={
            "relative": "8·rounds·(E+2)·(d+1)·eps of 1 + max|x|",
            "why": "the two drivers round differently (x − γΣ_k g_k against Σ_p α_p x_p); with γ ≤ 2/L of "
            "every mini-batch loss (convex clients) each local step is non-expansive, so rounding "
            "errors add up without amplification: a few ulps per dot product of length d, per step",
        },
        notes="Clients unbalanced (6–29 samples) with equal weights p_i = 1/n, as eq. (2) averages uniformly at equal "
        "γ_p; sampling with and without replacement, full and mini-batches.",
    )


def _fedavg_sensitivity(fed, x0, E, lr, rounds, kw, rng) -> float:
    """‖FedAvg(x0 + δ) − FedAvg(x0)‖_∞ / ‖δ‖_∞ on the same draws: how much a rounding-size perturbation grows."""
    delta = rng.normal(size=x0.size) * 1e-7 * (1 + float(np.max(np.abs(x0))))
    a = run_local_update(fed, LocalUpdate.fedavg(E, lr), x0, rounds, **kw).to_numpy().x
    b = run_local_update(fed, LocalUpdate.fedavg(E, lr), x0 + delta, rounds, **kw).to_numpy().x
    return max(1.0, float(np.max(np.abs(a - b)) / np.max(np.abs(delta))))


def nets_items(rng):
    """The two small networks the equivalence runs on (builders of a seed)."""
    from fedtheory.models.networks import digits_cnn, mlp

    return [("mlp", lambda s: mlp(64, [16, 16], 10, seed=s)), ("cnn", lambda s: digits_cnn((4, 8), seed=s))]


def fed_for(build, X, y, rng):
    """300 digits over 6 Dirichlet(0.5) clients with equal weights, on a freshly seeded network."""
    from fedtheory.models.federation import TorchModelFederation
    from fedtheory.problems.datasets import partition_dirichlet

    idx = rng.choice(len(y), size=300, replace=False)
    parts = partition_dirichlet(y[idx], 6, 0.5, seed=int(rng.integers(10**6)), min_size=8)
    net = build(int(rng.integers(100)))
    return TorchModelFederation(net, [X[idx][p] for p in parts], [y[idx][p] for p in parts], p=np.full(6, 1 / 6))


def _compare_on_network(fed, rng, extra_steps: int = 0) -> dict:
    """FedAvg, FedHM at γ = 1 and HeteroFL at width 1 on the same draws; differences relative to 1 + max|x|."""
    from fedtheory.algorithms.width_slimming import run_heterofl, slimming_masks

    net, x0 = fed.module, fed.initial_point()
    E, lr, rounds = 3, 0.05, 3
    kw = dict(batch_size=8, clients_per_round=4, client_sampling="without_replacement", seed=int(rng.integers(10**6)))
    ref = run_local_update(fed, LocalUpdate.fedavg(E + extra_steps, lr), x0, rounds, **kw).to_numpy().x
    fedhm = run_fedhm(
        fed, HybridLayout.from_module(net, rho=1), FedHM((1.0,), E, lr), x0, rounds, evaluate=False, **kw
    ).x
    hetero = run_heterofl(fed, slimming_masks(net, [1.0]), x0, rounds, local_steps=E, lr=lr, **kw).x
    amp = _fedavg_sensitivity(fed, x0, E, lr, rounds, kw, rng)
    scale = 1.0 + float(np.max(np.abs(ref)))
    return {
        "fedhm_relative_difference": float(np.max(np.abs(fedhm - ref))) / scale,
        "heterofl_relative_difference": float(np.max(np.abs(hetero - ref))) / scale,
        "tolerance": 64 * rounds * (E + 2) * EPS * amp,
        "measured_perturbation_growth": amp,
    }


@agreement_claim(
    "verify/fedhm/full-rank-is-fedavg-network",
    "Algorithms 1-2 with every γ_p = 1; HeteroFL at full width",
    "On torch networks, FedHM at full rank and HeteroFL at full width are FedAvg",
    r"On a network (a ReLU perceptron and a small CNN, TorchModelFederation), FedHM with every $\gamma_p=1$ and HeteroFL with "
    r"every client at width 1 produce FedAvg's iterates (LocalUpdate with $\Theta_{1:E}$, server step $\eta=\gamma$) on the "
    r"same draws.",
    [FEDAVG_ONE_MORE_LOCAL_STEP],
    requires=("torch",),
)
def full_rank_is_fedavg_network(ctx):
    from fedtheory.problems.datasets import load_dataset

    rng = ctx.rng
    X, y = load_dataset("digits")
    rows = {}
    ok = True
    for name, build in nets_items(rng):
        rows[name] = _compare_on_network(fed_for(build, X, y, rng), rng, ctx.param("reference_extra_steps", 0))
        ok &= (
            rows[name]["fedhm_relative_difference"] <= rows[name]["tolerance"]
            and rows[name]["heterofl_relative_difference"] <= rows[name]["tolerance"]
        )
    return ctx.decide(
        ok,
        measured=rows,
        tolerance={
            "relative": "64·rounds·(E+2)·eps × the measured growth of a perturbation of x0",
            "why": "the drivers round differently; a network's local steps can amplify a rounding error, so "
            "the amplification is measured by running FedAvg from x0 + δ (δ ~ 1e-7) on the same draws",
        },
        notes="Non-IID Dirichlet(0.5) digits over 6 clients, 4 sampled per round without replacement, mini-batches "
        "of 8; the FedHM layout factorizes the network's middle layers, which γ = 1 leaves dense.",
    )
