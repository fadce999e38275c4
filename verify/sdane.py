"""Cross-checks of the DANE-type drivers (Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for
Federated Optimization*, arXiv:2407.07084) against independent implementations and against each other.

- Scaffold (full-gradient control variates, server step 1) is DANE with λ = 0 and K local GD steps;
- S-DANE with exact local solves is DANE (checked against a plain, client-by-client DANE written here);
- every local solver, run to float64 resolution, lands on the exact subproblem minimizer.
"""

from __future__ import annotations

import numpy as np

from fedtheory.algorithms.control_variates import run_scaffold
from fedtheory.algorithms.dane import run_dane, run_sdane
from fedtheory.algorithms.local_solvers import (
    FGM,
    GD,
    OGMG,
    SGD,
    Exact,
    FastGradNorm,
    ProxLinearGD,
    StabilizedTest,
    Subproblem,
)
from fedtheory.claims.agreement import agreement_claim, decide_within, relative_gap, worst_over_trials
from fedtheory.claims.controls import one_step_too_few
from fedtheory.claims.core import Control
from fedtheory.problems.clients import client_oracles
from fedtheory.problems.finite_sum import LogisticFederation
from fedtheory.problems.quadratic import make_quadratic


@agreement_claim(
    "verify/sdane/scaffold-is-dane-gd-lambda-0",
    "Section 5 (baselines)",
    "Scaffold with full-gradient control variates and server step 1 equals DANE-GD with λ = 0",
    r"Scaffold's local step $y\leftarrow y-\eta(\nabla f_i(y)-c_i+c)$ with $c_i=\nabla f_i(x^r)$, $c=\frac1s\sum_{i\in S}c_i$ "
    r"and $x^{r+1}=\frac1s\sum y_i$ is gradient descent on DANE's subproblem with $\lambda=0$, so the two produce "
    r"the same iterates (full and partial participation).",
    [
        one_step_too_few(
            "DANE-GD, against Scaffold,",
            "its K local steps",
            {"dane_steps_offset": -1},
            name="dane-one-local-step-fewer",
            consequence="a different method, whose iterates differ",
        )
    ],
)
def scaffold_is_dane(ctx):
    rng = ctx.rng

    def gap(trial):
        if trial % 2:
            problem = LogisticFederation.random(4, [15, 25, 35, 20], 3, l2=0.05, seed=rng)
        else:
            problem = make_quadratic(5, 4, mu=0.5, L=20.0, weights="random", seed=rng)
        d = client_oracles(problem).d
        x0 = rng.normal(size=d)
        K, step = int(rng.integers(2, 12)), float(rng.uniform(0.01, 0.05))
        s = int(rng.choice([problem.n, 2]))
        seed = int(rng.integers(1 << 30))
        a = run_scaffold(problem, x0, 15, K=K, step=step, clients_per_round=s, seed=seed)
        b = run_dane(
            problem,
            x0,
            15,
            lam=0.0,
            solver=GD(K=K + ctx.param("dane_steps_offset", 0), step=step),
            test=None,
            clients_per_round=s,
            seed=seed,
        )
        return relative_gap(b.x, a.x)

    return decide_within(
        ctx,
        worst_over_trials(ctx, (6, 30), gap),
        1e-12,
        notes="Two implementations (control_variates.run_scaffold, dane.run_dane with the GD solver) on "
        "quadratics with unequal weights and logistic clients, K ∈ [1, 11], same sampled sets.",
    )


def _plain_dane(problem, x0, rounds, lam):
    """DANE written client by client with numpy.linalg.solve (no library driver): exact local solves."""
    orc = client_oracles(problem)
    x = np.asarray(x0, dtype=np.float64)
    xs = [x]
    for _ in range(rounds):
        G = np.stack([orc.A[i] @ (x - orc.c[i]) for i in range(orc.n)])
        gbar = G.mean(axis=0)
        pts = []
        for i in range(orc.n):
            # minimize ½(z − c_i)ᵀA_i(z − c_i) − ⟨∇f_i(x) − ∇f(x), z⟩ + λ/2‖z − x‖²
            rhs = orc.A[i] @ orc.c[i] + (G[i] - gbar) + lam * x
            pts.append(np.linalg.solve(orc.A[i] + lam * np.eye(orc.d), rhs))
        x = np.mean(pts, axis=0)
        xs.append(x)
    return np.stack(xs)


@agreement_claim(
    "verify/sdane/sdane-exact-is-dane",
    "Algorithm 1",
    "S-DANE with exact local solves equals a plain DANE implementation",
    r"With exact local solves, Algorithm 1's $x^r$ equals DANE's (4) for every $\mu\ge0$, and $v^r=x^r$.",
    [
        Control(
            "dane-one-round-ahead",
            "S-DANE's x^r against the plain DANE's x^{r+1}: different points, the exact "
            "DANE iterates move at every round from x^0 ≠ x*",
            {"reference_shift": 1},
        )
    ],
)
def sdane_exact_is_dane(ctx):
    rng = ctx.rng

    def gap(trial):
        q = make_quadratic(
            int(rng.integers(2, 6)),
            int(rng.integers(2, 6)),
            mu=float(rng.uniform(0.1, 1)),
            L=float(rng.uniform(2, 50)),
            weights="random",
            seed=rng,
        )
        x0 = rng.normal(size=q.d) * 3
        lam = float(rng.uniform(0.2, 10))
        mu = float(rng.choice([0.0, client_oracles(q).mu]))
        h = run_sdane(q, x0, 20, lam=lam, mu=mu, solver=Exact())
        k = int(ctx.param("reference_shift", 0))
        ref = _plain_dane(q, x0, 20 + k, lam)[k:]
        # v^r against x^r on the scale of the reference run
        return max(relative_gap(h.x, ref), float(np.abs(h.v - h.x).max() / (np.abs(ref).max() + 1)))

    return decide_within(
        ctx,
        worst_over_trials(ctx, (6, 30), gap),
        1e-10,
        notes="Library S-DANE (spectral exact solves of the uniform view) against a client-by-client DANE with "
        "numpy.linalg.solve; 20 rounds, unequal weights.",
    )


@agreement_claim(
    "verify/sdane/local-solvers-agree",
    "Section 5 (implementation)",
    "Every local solver, run to float64 resolution, reaches the exact subproblem minimizer",
    r"GD, prox-linear GD, FGM, OGM-G, FGM+OGM-G and SGD without noise, stopped by an accuracy test with a "
    r"vanishing constant, return $\arg\min F_i$ (closed form on quadratics).",
    [
        Control(
            "other-subproblem",
            "the solvers' points against the minimizer of the subproblem with λ·1.01: a "
            "different strongly convex function, whose minimizer differs",
            {"exact_lam_scale": 1.01},
        )
    ],
    kind="numeric",
)
def local_solvers_agree(ctx):
    rng = ctx.rng
    worst = {}
    for _ in range(5):
        q = make_quadratic(4, 5, mu=1.0, L=30.0, delta_A=2.0, weights="random", seed=rng)
        orc = client_oracles(q)
        C = rng.normal(size=(4, 5))
        GC = orc.grads(C)
        sub = Subproblem(
            orc, np.arange(4), C, GC - GC.mean(0), float(rng.uniform(0.5, 5)), G_center=GC, rng=np.random.default_rng(0)
        )
        ref = Subproblem(
            orc, np.arange(4), C, GC - GC.mean(0), sub.lam * ctx.param("exact_lam_scale", 1.0), G_center=GC
        )
        exact = Exact().solve(ref).X
        test = StabilizedTest(c=1e-26)
        for solver in (GD(), ProxLinearGD(), FGM(), OGMG(), FastGradNorm(), SGD(step=0.5 / float(sub.L.max()))):
            X = solver.solve(sub, test).X
            worst[solver.name] = max(worst.get(solver.name, 0.0), relative_gap(X, exact))
    ok = max(worst.values()) <= 1e-10
    return ctx.decide(
        ok,
        measured=worst,
        tolerance={"relative": 1e-10, "why": "stops at float64's resolution of ∇F_i"},
        notes="Noise-free quadratics, so SGD is GD with step 1/(2L̃).",
    )
