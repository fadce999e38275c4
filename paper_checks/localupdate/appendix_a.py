"""Charles & Konečný, arXiv:2103.05032, Appendix A and Table 1: FedAvg, model-delta and the special cases of
LocalUpdate, run on the driver against literal implementations.
"""

from __future__ import annotations

import numpy as np

from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
from fedtheory.algorithms.maml import MAML
from fedtheory.algorithms.theta import Theta
from fedtheory.claims.agreement import decide_within
from fedtheory.claims.core import Control, claim
from fedtheory.problems.finite_sum import LeastSquaresFederation
from fedtheory.problems.quadratic import make_quadratic

from ._common import _TABLE1_CONTROL


@claim(
    id="localupdate/section-a/fedavg-is-localupdate",
    ref="Appendix A",
    title="FedAvg (local SGD with model averaging) is LocalUpdate with Θ_{1:K}, server GD with η = γ",
    statement=r"With $M$ sampled clients each taking $K$ mini-batch SGD steps of rate $\gamma$ and $x_{t+1}=\frac1M\sum_{i\in I_t}x_t^i$: "
    r"$x_{t+1}=x_t-\gamma\frac1M\sum_{i\in I_t}\sum_kg_k^i$, i.e. LocalUpdate with $\Theta_{1:K}$ and ServerOpt = GD, $\eta=\gamma$ "
    r"(FedProx alike with $\alpha>0$).",
    kind="simulation",
    controls=[_TABLE1_CONTROL],
)
def fedavg_is_localupdate(ctx):
    seed = int(ctx.rng.integers(2**31))
    fed = LeastSquaresFederation.random(6, [10, 14, 9, 12, 20, 11], 4, seed=seed)
    worst = 0.0
    for alpha in (0.0, 0.7):
        K, gamma, B, M, T = 5, 0.05, 3, 3, 20
        algo = LocalUpdate(Theta.uniform(K + ctx.param("extra_step", False)), alpha, gamma, ServerOpt("gd", lr=gamma))
        h = run_local_update(fed, algo, np.zeros(4), T, batch_size=B, clients_per_round=M, seed=seed).to_numpy()
        ref = _model_averaging_reference(fed, np.zeros(4), T, K, gamma, alpha, B, M, seed)
        worst = max(worst, float(np.abs(h.x - ref).max() / max(np.abs(ref).max(), 1)))
    return decide_within(
        ctx,
        worst,
        1e-12,
        name="max_relative_iterate_gap",
        notes="Reference: clients' models averaged (Appendix A), the same seeded client and batch draws "
        "as the driver (clients i.i.d. from P, then K batches per client).",
    )


def _ls_batch_grad(fed, i, S, x):
    a, y = fed.a[i, S], fed.y[i, S]
    return a.T @ (a @ x - y) / len(S)


def _draws(rng, fed, M, B, n_batches, scheme="with_replacement"):
    """The driver's draw order per round: clients (Algorithm 1's I_t), then n_batches batches per client."""
    from fedtheory.problems.finite_sum import sample_batches

    if M is None:
        idx = np.arange(fed.n)
    elif scheme == "with_replacement":
        idx = rng.choice(fed.n, size=M, replace=True, p=fed.p / fed.p.sum())
    else:
        idx = rng.choice(fed.n, size=M, replace=False)
    batches = [sample_batches(rng, fed.counts, B, idx) for _ in range(n_batches)] if B is not None else None
    return idx, batches


def _reference_iterates(fed, seed, x0, T, *, M, B, n_batches, step, scheme="with_replacement"):
    """A literal reference's iterates x_0, …, x_T: each round draws the clients and ``n_batches`` mini-batches per
    client in the driver's order (:func:`_draws`, from a generator seeded like the driver's), then
    ``step(x, idx, batches)`` gives the next point. Only the draws are shared; each reference writes its own step."""
    rng, x = np.random.default_rng(seed), np.array(x0, dtype=float)
    xs = [x.copy()]
    for _ in range(T):
        idx, batches = _draws(rng, fed, M, B, n_batches, scheme)
        x = step(x, idx, batches)
        xs.append(x.copy())
    return np.array(xs)


def _local_sgd(fed, i, j, x, batches, gamma, n_steps, alpha=0.0):
    """Client ``i``'s (the ``j``-th sampled) model after ``n_steps`` mini-batch SGD steps of rate ``gamma`` from ``x``
    on f_i + (α/2)‖· − x‖² (α = 0: plain local SGD)."""
    xi = x.copy()
    for k in range(n_steps):
        xi = xi - gamma * (_ls_batch_grad(fed, i, batches[k][j], xi) + alpha * (xi - x))
    return xi


def _model_averaging_step(fed, K, gamma, alpha):
    """FedAvg / FedProx written literally: the sampled clients' models after K local steps, averaged."""
    return lambda x, idx, batches: np.mean(
        [_local_sgd(fed, i, j, x, batches, gamma, K, alpha) for j, i in enumerate(idx)], axis=0
    )


def _model_averaging_reference(fed, x0, T, K, gamma, alpha, B, M, seed):
    return _reference_iterates(
        fed, seed, x0, T, M=M, B=B, n_batches=K, step=_model_averaging_step(fed, K, gamma, alpha)
    )


@claim(
    id="localupdate/section-a/model-delta-conflates-rates",
    ref="Appendix A",
    title="Model-delta averaging uses the product ηγ; at γ = 0 it makes no progress, LocalUpdate does",
    statement=r"With $x_{t+1}=x_t-\frac\eta M\sum_{i\in I_t}(x_t-x_t^i)$: $x_{t+1}=x_t-\frac{\eta\gamma}M\sum_i\sum_kg_k^i$ "
    r"(LocalUpdate with server rate $\eta\gamma$), so at $\gamma=0$, $x_{t+1}=x_t$, while LocalUpdate with $\gamma=0$ "
    r"and $\eta>0$ (FedSGD) moves.",
    kind="simulation",
    controls=[
        Control(
            "server-rate-eta",
            "model-delta averaging equated with LocalUpdate at server rate η instead of "
            "ηγ: false a priori for γ ≠ 1 (the local steps carry the factor γ)",
            {"server_rate": "eta"},
        )
    ],
)
def model_delta(ctx):
    seed = int(ctx.rng.integers(2**31))
    fed = LeastSquaresFederation.random(4, 12, 3, seed=seed)
    K, gamma, eta, B, M, T = 4, 0.04, 2.5, 4, 2, 15
    server_lr = eta * gamma if ctx.param("server_rate", "eta*gamma") == "eta*gamma" else eta
    h = run_local_update(
        fed,
        LocalUpdate(Theta.uniform(K), 0.0, gamma, ServerOpt("gd", lr=server_lr)),
        np.ones(3),
        T,
        batch_size=B,
        clients_per_round=M,
        seed=seed,
    ).to_numpy()

    def model_delta_step(x, idx, batches):
        delta = sum((x - _local_sgd(fed, i, j, x, batches, gamma, K)) / M for j, i in enumerate(idx))
        return x - eta * delta

    xs = _reference_iterates(fed, seed, np.ones(3), T, M=M, B=B, n_batches=K, step=model_delta_step)
    gap = float(np.abs(h.x - np.array(xs)).max())
    frozen = run_local_update(
        fed, LocalUpdate(Theta.uniform(K), 0.0, 0.0, ServerOpt("gd", lr=eta * 0.0 + 1e-300)), np.ones(3), 3, seed=seed
    ).to_numpy()
    moves = run_local_update(
        fed, LocalUpdate(Theta.uniform(K), 0.0, 0.0, ServerOpt("gd", lr=0.1)), np.ones(3), 3, seed=seed
    ).to_numpy()
    ok = gap <= 1e-12 and np.abs(frozen.x[-1] - 1).max() < 1e-250 and np.abs(moves.x[-1] - 1).max() > 1e-3
    return ctx.decide(
        ok,
        measured={
            "model_delta_vs_localupdate_eta_gamma": gap,
            "localupdate_gamma0_moves_by": float(np.abs(moves.x[-1] - 1).max()),
        },
        tolerance={"iterates": 1e-12},
        notes="Model-delta at γ = 0 is LocalUpdate with server rate ηγ = 0 (represented by a 1e-300 step, "
        "ServerOpt needs lr > 0): x stays put; decoupled LocalUpdate (η independent of γ) is FedSGD.",
    )


# ============================================================================================
# Table 1: special cases of LocalUpdate, run on the driver against literal implementations
# ============================================================================================


def _table1_run(fed, algo, x0, T, *, B, M, seed, scheme="with_replacement", extra_step: bool = False):
    """The driver's iterates; ``extra_step`` (a negative control) appends one local step to Θ (an off-by-one in K)."""
    if extra_step:
        algo = LocalUpdate(
            Theta(np.r_[algo.theta.weights, algo.theta.weights[-1]]), algo.alpha, algo.gamma, algo.server
        )
    return (
        run_local_update(fed, algo, x0, T, batch_size=B, clients_per_round=M, client_sampling=scheme, seed=seed)
        .to_numpy()
        .x
    )


def _table1_check(ctx, n_clients, algo, T, *, B, M, n_batches, step, what, notes="", scheme="with_replacement"):
    """One row of Table 1 on a random least-squares federation of ``n_clients`` in R³: the driver running ``algo``
    (with the control's extra step when asked) against the literal reference whose round is ``step(fed)(x, idx,
    batches)``, on the same seeded draws, iterate for iterate."""
    fed, seed = _table1_fed(ctx, n_clients)
    extra_step = ctx.param("extra_step", False)
    xs = _table1_run(fed, algo, np.zeros(3), T, B=B, M=M, seed=seed, scheme=scheme, extra_step=extra_step)
    ref = _reference_iterates(fed, seed, np.zeros(3), T, M=M, B=B, n_batches=n_batches, step=step(fed), scheme=scheme)
    return _table1_decide(ctx, _rel_gap(xs, ref), what, notes)


def _table1_decide(ctx, gap, what, notes=""):
    return ctx.decide(
        gap <= 1e-12,
        measured={"max_relative_iterate_gap": gap},
        tolerance={"relative": 1e-12, "why": "same float64 operations up to summation order"},
        notes=f"Reference: {what}, written literally in this claim; the same seeded client and batch draws "
        f"as the driver (clients, then each step's mini-batch). " + notes,
    )


def _rel_gap(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1.0))


def _table1_fed(ctx, n):
    seed = int(ctx.rng.integers(2**31))
    return LeastSquaresFederation.random(n, [9 + 2 * i for i in range(n)], 3, seed=seed), seed


def _table1_claim(claim_id, title, statement):
    """A row of Table 1: a simulation against a literal reference, controlled by one extra local step."""
    return claim(
        id=claim_id, ref="Table 1", title=title, statement=statement, kind="simulation", controls=[_TABLE1_CONTROL]
    )


@_table1_claim(
    "localupdate/table-1/minibatch-sgd",
    "Mini-batch SGD = LocalUpdate with Θ_1, |P| = 1, α = 0, γ = 0",
    r"Table 1: with one client, $\Theta=\Theta_1$, $\alpha=0$, $\gamma=0$ and ServerOpt = GD, LocalUpdate is "
    r"mini-batch SGD $x_{t+1}=x_t-\eta\frac1B\sum_{z\in S_t}\nabla f(x_t;z)$.",
)
def table1_sgd(ctx):
    eta, B, T = 0.05, 4, 25

    def sgd(fed):
        return lambda x, idx, batches: x - eta * _ls_batch_grad(fed, 0, batches[0][0], x)

    algo = LocalUpdate(Theta.uniform(1), 0.0, 0.0, ServerOpt("gd", lr=eta))
    return _table1_check(ctx, 1, algo, T, B=B, M=None, n_batches=1, step=sgd, what="SGD on the client's mini-batches")


@_table1_claim(
    "localupdate/table-1/lookahead",
    "Lookahead = LocalUpdate with Θ_{1:K}, |P| = 1, α = 0, γ > 0",
    r"Table 1 (Zhang et al., 2019): $K$ fast SGD steps of rate $\gamma$ from the slow weights $\phi$, then "
    r"$\phi\leftarrow\phi+a(\theta_K-\phi)$ — LocalUpdate with one client, $\Theta_{1:K}$, server GD with $\eta=a\gamma$.",
)
def table1_lookahead(ctx):
    K, gamma, a, B, T = 5, 0.05, 0.5, 3, 20

    def lookahead(fed):
        return lambda phi_w, idx, batches: phi_w + a * (_local_sgd(fed, 0, 0, phi_w, batches, gamma, K) - phi_w)

    algo = LocalUpdate(Theta.uniform(K), 0.0, gamma, ServerOpt("gd", lr=a * gamma))
    return _table1_check(
        ctx, 1, algo, T, B=B, M=None, n_batches=K, step=lookahead, what="Lookahead's fast/slow weights"
    )


@_table1_claim(
    "localupdate/table-1/fedsgd",
    "FedSGD = LocalUpdate with Θ_{1:K}, α = 0, γ = 0",
    r"Table 1: with $\gamma=0$ every local gradient is taken at $x_t$, so each client sends $\sum_{k\le K}g_k(x_t)$: "
    r"FedSGD (McMahan et al., 2017) with $K$ mini-batches per client.",
)
def table1_fedsgd(ctx):
    K, eta, B, M, T = 3, 0.02, 3, 3, 20

    def fedsgd(fed):
        def step(x, idx, batches):
            q = sum(sum(_ls_batch_grad(fed, i, batches[k][j], x) for k in range(K)) for j, i in enumerate(idx)) / M
            return x - eta * q

        return step

    algo = LocalUpdate(Theta.uniform(K), 0.0, 0.0, ServerOpt("gd", lr=eta))
    what = "FedSGD: K mini-batch gradients at the server point per client"
    return _table1_check(ctx, 5, algo, T, B=B, M=M, n_batches=K, step=fedsgd, what=what)


@_table1_claim(
    "localupdate/table-1/fedavg-reptile",
    "FedAvg / Reptile = LocalUpdate with Θ_{1:K}, α = 0, γ > 0",
    r"Table 1: Reptile (Nichol et al., 2018) — each task runs $K$ SGD steps to $\tilde\phi_i$ and "
    r"$x\leftarrow x+\epsilon\frac1M\sum_i(\tilde\phi_i-x)$ — is LocalUpdate with $\Theta_{1:K}$, server GD $\eta=\epsilon\gamma$ "
    r"($\epsilon=1$: FedAvg, Appendix A).",
)
def table1_reptile(ctx):
    K, gamma, eps_meta, B, M, T = 4, 0.05, 0.7, 3, 2, 20

    def reptile(fed):
        def step(x, idx, batches):
            meta = np.zeros(3)
            for j, i in enumerate(idx):
                meta += (fed.n * fed.p[i] / M) * (_local_sgd(fed, i, j, x, batches, gamma, K) - x)
            return x + eps_meta * meta

        return step

    return _table1_check(
        ctx,
        5,
        LocalUpdate(Theta.uniform(K), 0.0, gamma, ServerOpt("gd", lr=eps_meta * gamma)),
        T,
        B=B,
        M=M,
        n_batches=K,
        step=reptile,
        what="Reptile's meta-step on the tasks' adapted weights",
        notes="Clients sampled without replacement, weighted n·p_i/M (unbiased; the paper's experiments).",
        scheme="without_replacement",
    )


@_table1_claim(
    "localupdate/table-1/fedprox",
    "FedProx / MetaMinibatchProx = LocalUpdate with Θ_{1:K}, α > 0, γ > 0",
    r"Table 1: clients take $K$ SGD steps on $f_i(\cdot)+\frac\alpha2\|\cdot-x_t\|^2$ and the server averages the "
    r"models — LocalUpdate with $\Theta_{1:K}$, $\alpha>0$, server GD $\eta=\gamma$.",
)
def table1_fedprox(ctx):
    K, gamma, alpha, B, M, T = 5, 0.05, 1.3, 3, 3, 20
    algo = LocalUpdate(Theta.uniform(K), alpha, gamma, ServerOpt("gd", lr=gamma))
    return _table1_check(
        ctx,
        5,
        algo,
        T,
        B=B,
        M=M,
        n_batches=K,
        step=lambda fed: _model_averaging_step(fed, K, gamma, alpha),
        what="proximal local SGD with model averaging",
    )


@_table1_claim(
    "localupdate/table-1/fomaml",
    "FOMAML = LocalUpdate with Θ_K, α = 0, γ > 0",
    r"Table 1: first-order MAML — adapt with $K-1$ SGD steps, send the (first-order) gradient at the adapted point, "
    r"meta-step with rate $\beta$ — is LocalUpdate with $\Theta_K$, server GD $\eta=\beta$.",
)
def table1_fomaml(ctx):
    K, gamma, beta, B, M, T = 4, 0.05, 0.1, 3, 3, 20

    def fomaml(fed):
        def step(x, idx, batches):
            g = np.zeros(3)
            for j, i in enumerate(idx):
                g += _ls_batch_grad(fed, i, batches[K - 1][j], _local_sgd(fed, i, j, x, batches, gamma, K - 1)) / M
            return x - beta * g

        return step

    algo = LocalUpdate(Theta.last(K), 0.0, gamma, ServerOpt("gd", lr=beta))
    return _table1_check(ctx, 5, algo, T, B=B, M=M, n_batches=K, step=fomaml, what="FOMAML's adapted-point gradient")


@_table1_claim(
    "localupdate/table-1/maml",
    "MAML = LocalUpdate with Θ_{2K+1}, α = 0, on quadratics (full batch; Theorem 2)",
    r"Table 1: MAML with $K$ full-batch inner steps on quadratic clients is LocalUpdate with $\Theta_{2K+1}$, $\alpha=0$.",
)
def table1_maml(ctx):
    """Three runs, iterate for iterate: the driver with MAML clients (exact Jacobians through the inner steps, stepwise
    path), the driver with LocalUpdate(Θ_{2K+1}), and MAML written here with dense Jacobian products."""
    rng = ctx.rng
    problem = make_quadratic(4, 4, mu=1.0, L=20.0, weights="random", seed=rng)
    K, gamma, beta, T = 3, 0.02, 0.05, 25
    server = ServerOpt("gd", lr=beta)
    a = run_local_update(problem, MAML(K, gamma, server), np.zeros(4), T, path="stepwise").to_numpy().x
    # control: Θ_{2K+2} (an off-by-one in K) in place of Θ_{2K+1}
    b = (
        run_local_update(
            problem,
            LocalUpdate(Theta.last(2 * K + 1 + ctx.param("extra_step", False)), 0.0, gamma, server),
            np.zeros(4),
            T,
            path="stepwise",
        )
        .to_numpy()
        .x
    )
    x, ref = np.zeros(4), [np.zeros(4)]
    for _ in range(T):
        g = np.zeros(4)
        for i in range(problem.n):
            X, J = x.copy(), np.eye(4)
            for _k in range(K):
                X = X - gamma * problem.A[i] @ (X - problem.c[i])
                J = (np.eye(4) - gamma * problem.A[i]) @ J
            g += problem.p[i] * (J.T @ problem.A[i] @ (X - problem.c[i]))
        x = x - beta * g
        ref.append(x.copy())
    gap = max(_rel_gap(a, ref), _rel_gap(b, ref))
    return _table1_decide(
        ctx,
        gap,
        "MAML by dense forward Jacobians J = Π(I − γA_i)",
        "The driver's MAML uses the reverse recursion (numpy) or torch autograd (torch backend).",
    )
