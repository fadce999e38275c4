"""Figures 1–5 and 7–10 of Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated Learning
and Meta-Learning* (AISTATS 2021, arXiv:2103.05032): the (ρ, Δ) Pareto frontiers, computed from the
library's closed forms (Figures 1–4, 9) and, for MAML beyond Lemma 4's regime, from random matrices as
Appendix D.1 describes (Figures 5, 7, 8, 10). Figures 6 and 11–13 (network training) live in
``figures/localupdate_training.py``.

Conventions (the paper's, with the choices it leaves open stated in each figure's ``params``):

* ρ: Table 2's rate for the server optimizer (gradient descent with no, Nesterov or heavy-ball momentum);
* analytic curves: κ = φ(L)/φ(μ) (eq. 11) for Θ_{1:K} and ((1 − γ(L+α))/(1 − γ(μ+α)))^{K−1}L/μ (eq. 13)
  for Θ_K, Δ of eq. (17);
* simulated MAML curves: one random A = β₁BᵀB + β₂I with λ_min = μ and λ_max = L (Appendix D.1),
  κ = cond(Q(α,γ,Θ_K)A) from its eigenvalues (eq. 9, one client), Δ = (√b − √a)/(√b + √a) with
  b/a = cond(Q) ("substituting κ into Table 2 and Lemma 5", Appendix D.1). Section 5's text says eq. (17)
  instead; that reading puts Δ below 0 once κ > κ₀ and moves Figure 5's cusp off the one-shot
  suboptimality the paper observes, while Lemma 5's reading reproduces it — so Lemma 5's is used.
  Both agree inside Lemma 4's regime γ < 1/(KL + α);
* K ∈ [1, 10⁶]: 400 log-spaced integers (the paper does not say how many).

Every data function is cheap (closed forms, log space), so claims about a figure call it directly.
"""

from __future__ import annotations

import numpy as np

from fedtheory.analysis.pareto import frontier_last, frontier_random_matrices, frontier_uniform, log_K_grid
from fedtheory.plotting.spec import figure, panel, series

MU = 1.0
K_GRID = log_K_grid(10**6, 400)
MOMENTA = (("no momentum", "gd"), ("Nesterov", "nesterov"), ("heavy-ball", "heavy_ball"))
RHO, DELTA = "ρ (convergence rate)", "Δ (suboptimality)"

FIGURE_1_LS = (5.0, 50.0)
FIGURE_1_GAMMA = 0.01
FIGURE_1_K = 100
FIGURE_1_K_RANGE = np.unique(np.round(np.logspace(0, 5, 400)).astype(int))
FIGURE_1_GAMMA_FRACTIONS = np.logspace(-6, -1e-9, 400)  # γ = fraction / L, γ < 1/L
FIGURE_2_LS = (10.0, 100.0, 1000.0)
FIGURE_3_ALPHAS = (0.0, 0.5, 1.0, 5.0)
FIGURE_4_GAMMA_UNIFORM = 0.001
FIGURE_5_GAMMA = 0.001
FIGURE_5_DS = (5, 100)
FIGURE_7_LS = (2.0, 5.0, 10.0, 100.0)
FIGURE_9_GAMMA = 1e-7
FIGURE_9_ALPHAS = (0.0, 0.5, 1.0, 5.0, 10.0)
FIGURE_10_ALPHAS = (0.0, 0.5, 1.0, 5.0)
L_DEFAULT = 10.0


def _series(label: str, fr: dict, **params) -> dict:
    keep = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in params.items()}
    keep.update(K=fr["K"].tolist(), gamma=fr["gamma"].tolist())
    if "kappa" in fr:
        keep["kappa"] = fr["kappa"].tolist()
    return series(label, fr["rho"], fr["delta"], params=keep)


def _matrix_seed(ctx, *tags) -> np.random.Generator:
    """One generator per (figure seed, tags): each random matrix is reproducible on its own."""
    return np.random.default_rng([int(ctx.seed)] + [int(t) for t in tags])


# --------------------------------------------------------------------------------------------
# Figure 1
# --------------------------------------------------------------------------------------------


@figure(
    id="localupdate/figure-1",
    caption="Pareto frontiers (ρ, Δ) for μ = 1, α = 0, Θ = Θ_{1:K}, L ∈ {5, 50}, ServerOpt = gradient descent: "
    "γ = 0.01 fixed and K varied (left); K = 100 fixed and γ varied (right).",
)
def figure_1(ctx):
    """ρ = (κ−1)/(κ+1) (Table 2, no momentum) and Δ of eq. (17), with κ = φ(L)/φ(μ) of eq. (11)."""
    left, right = [], []
    for L in FIGURE_1_LS:
        by_K = frontier_uniform(MU, L, 0.0, gammas=FIGURE_1_GAMMA, Ks=FIGURE_1_K_RANGE)
        left.append(_series(f"L = {L:g}", by_K, L=L))
        by_gamma = frontier_uniform(MU, L, 0.0, gammas=FIGURE_1_GAMMA_FRACTIONS / L, Ks=FIGURE_1_K)
        right.append(_series(f"L = {L:g}", by_gamma, L=L))
    return {
        "params": {
            "mu": MU,
            "L": list(FIGURE_1_LS),
            "alpha": 0.0,
            "theta": "Theta_{1:K}",
            "server": "gd",
            "left": {
                "gamma": FIGURE_1_GAMMA,
                "K_range": [int(FIGURE_1_K_RANGE[0]), int(FIGURE_1_K_RANGE[-1])],
                "K_points": int(FIGURE_1_K_RANGE.size),
            },
            "right": {
                "K": FIGURE_1_K,
                "gamma_range_times_L": [float(FIGURE_1_GAMMA_FRACTIONS[0]), float(FIGURE_1_GAMMA_FRACTIONS[-1])],
                "gamma_points": int(FIGURE_1_GAMMA_FRACTIONS.size),
            },
            "kappa": "eq. (11): phi(L)/phi(mu)",
            "rho": "Table 2, no momentum",
            "delta": "eq. (17)",
            "unspecified_by_paper": "the swept ranges of K (1..1e5) and gamma (1e-6/L .. 1/L); chosen to cover "
            "the whole curve",
        },
        "panels": [
            panel("γ = 0.01, varying K", RHO, DELTA, left),
            panel("K = 100, varying γ", RHO, DELTA, right),
        ],
    }


# --------------------------------------------------------------------------------------------
# Figure 2: server momentum
# --------------------------------------------------------------------------------------------


@figure(
    id="localupdate/figure-2",
    caption="Pareto frontiers for μ = 1, varying L, ServerOpt = gradient descent with no, Nesterov or heavy-ball "
    "momentum; α = 0, γ = (2L)^{-1}, Θ = Θ_{1:K}, K ∈ [1, 10⁶].",
)
def figure_2(ctx):
    """One panel per L; κ of eq. (11) at γ = 1/(2L), ρ from Table 2 for each momentum type, Δ of eq. (17)."""
    panels = []
    for L in FIGURE_2_LS:
        curves = [
            _series(name, frontier_uniform(MU, L, 0.0, gammas=1 / (2 * L), Ks=K_GRID, momentum=m), momentum=m, L=L)
            for name, m in MOMENTA
        ]
        panels.append(panel(f"L = {L:g}", RHO, DELTA, curves))
    return {
        "params": {
            "mu": MU,
            "L": list(FIGURE_2_LS),
            "alpha": 0.0,
            "gamma": "1/(2L)",
            "theta": "Theta_{1:K}",
            "K_range": [1, 10**6],
            "K_points": int(K_GRID.size),
            "unspecified_by_paper": "the values of L (the caption says 'varying L'): 10, 100, 1000",
        },
        "panels": panels,
    }


# --------------------------------------------------------------------------------------------
# Figure 3: proximal client updates
# --------------------------------------------------------------------------------------------


@figure(
    id="localupdate/figure-3",
    caption="Pareto frontiers for μ = 1, L = 10, Θ = Θ_{1:K}, γ = ½(L + α)^{-1}, ServerOpt = gradient descent; "
    "α ∈ {0, 0.5, 1.0, 5.0}, K ∈ [1, 10⁶].",
)
def figure_3(ctx):
    curves = [
        _series(f"α = {a:g}", frontier_uniform(MU, L_DEFAULT, a, gammas=1 / (2 * (L_DEFAULT + a)), Ks=K_GRID), alpha=a)
        for a in FIGURE_3_ALPHAS
    ]
    return {
        "params": {
            "mu": MU,
            "L": L_DEFAULT,
            "alphas": list(FIGURE_3_ALPHAS),
            "gamma": "1/(2(L+alpha))",
            "theta": "Theta_{1:K}",
            "server": "gd",
            "K_range": [1, 10**6],
            "K_points": int(K_GRID.size),
        },
        "panels": [panel("varying α (FedAvg α = 0, FedProx α > 0)", RHO, DELTA, curves)],
    }


# --------------------------------------------------------------------------------------------
# Figure 4: FedAvg vs MAML (analytic)
# --------------------------------------------------------------------------------------------


@figure(
    id="localupdate/figure-4",
    caption="Pareto frontiers for μ = 1, L = 10, α = 0, Θ = Θ_{1:K} (FedAvg, γ = 0.001) and Θ_K (MAML, "
    "γ = (2LK)^{-1}), K ∈ [1, 10⁶]; ServerOpt = gradient descent with no, Nesterov or heavy-ball momentum.",
)
def figure_4(ctx):
    panels = []
    for name, m in MOMENTA:
        fedavg = frontier_uniform(MU, L_DEFAULT, 0.0, gammas=FIGURE_4_GAMMA_UNIFORM, Ks=K_GRID, momentum=m)
        maml = frontier_last(MU, L_DEFAULT, 0.0, gammas=1 / (2 * L_DEFAULT * K_GRID), Ks=K_GRID, momentum=m)
        panels.append(
            panel(
                name,
                RHO,
                DELTA,
                [_series("FedAvg (Θ_{1:K})", fedavg, momentum=m), _series("MAML (Θ_K)", maml, momentum=m)],
            )
        )
    return {
        "params": {
            "mu": MU,
            "L": L_DEFAULT,
            "alpha": 0.0,
            "gamma_fedavg": FIGURE_4_GAMMA_UNIFORM,
            "gamma_maml": "1/(2LK)",
            "K_range": [1, 10**6],
            "K_points": int(K_GRID.size),
            "kappa": "eq. (11) and eq. (13)",
            "delta": "eq. (17)",
            "unspecified_by_paper": "the caption's K ∈ [0, 10⁶] is read as [1, 10⁶] (K = 0 local steps sends nothing)",
        },
        "panels": panels,
    }


# --------------------------------------------------------------------------------------------
# simulated MAML frontiers (Appendix D.1): Figures 5, 7, 8, 10
# --------------------------------------------------------------------------------------------


def _simulated_panel(ctx, title: str, L: float, *, alpha: float = 0.0, momentum: str = "gd", tag: int = 0) -> dict:
    curves = [
        _series(
            "FedAvg (Θ_{1:K})",
            frontier_uniform(MU, L, alpha, gammas=FIGURE_5_GAMMA, Ks=K_GRID, momentum=momentum),
            L=L,
            alpha=alpha,
        )
    ]
    for d in FIGURE_5_DS:
        fr = frontier_random_matrices(
            MU,
            L,
            d,
            gamma=FIGURE_5_GAMMA,
            Ks=K_GRID,
            alpha=alpha,
            theta="last",
            momentum=momentum,
            delta="lemma5",
            seed=_matrix_seed(ctx, tag, d),
        )
        curves.append(
            _series(f"MAML (Θ_K), d = {d}", fr, L=L, alpha=alpha, d=d, eigenvalues=fr["eigenvalues"].round(12))
        )
    return panel(title, RHO, DELTA, curves)


_SIMULATED = {
    "gamma": FIGURE_5_GAMMA,
    "theta": "Theta_K (MAML), simulated; Theta_{1:K} (FedAvg) analytic, same gamma",
    "d": list(FIGURE_5_DS),
    "K_range": [1, 10**6],
    "K_points": int(K_GRID.size),
    "matrix": "A = b1 B^T B + b2 I, B with i.i.d. N(0,1) entries (d x d), scaled so lambda_min = mu, "
    "lambda_max = L (Appendix D.1); one matrix per (panel, d), seeded from the figure seed",
    "kappa": "cond(Q(alpha,gamma,Theta_K) A), eq. (9) for one client",
    "delta": "Lemma 5 form (sqrt b - sqrt a)/(sqrt b + sqrt a), b/a = cond(Q) (Appendix D.1)",
}


@figure(
    id="localupdate/figure-5",
    caption="Simulated Pareto frontiers for μ = 1, L = 10, α = 0, γ = 0.001, Θ = Θ_K (MAML), ServerOpt = gradient "
    "descent: random A ∈ R^{d×d} with μ ⪯ A ⪯ L, K ∈ [1, 10⁶], d ∈ {5, 100}; compared with Θ_{1:K} (FedAvg).",
)
def figure_5(ctx):
    return {
        "params": dict(_SIMULATED, mu=MU, L=L_DEFAULT, alpha=0.0, server="gd"),
        "panels": [_simulated_panel(ctx, "L = 10", L_DEFAULT)],
    }


@figure(
    id="localupdate/figure-7",
    caption="Simulated MAML Pareto frontiers for μ = 1, γ = 0.001, Θ = Θ_K, ServerOpt = gradient descent, "
    "L ∈ {2, 5, 10, 100}, K ∈ [1, 10⁶]; compared with Θ_{1:K} at the same L.",
)
def figure_7(ctx):
    return {
        "params": dict(_SIMULATED, mu=MU, L=list(FIGURE_7_LS), alpha=0.0, server="gd"),
        "panels": [_simulated_panel(ctx, f"L = {L:g}", L, tag=i) for i, L in enumerate(FIGURE_7_LS)],
    }


@figure(
    id="localupdate/figure-8",
    caption="Simulated MAML Pareto frontiers for μ = 1, L = 10, γ = 0.001, Θ = Θ_K, ServerOpt = gradient descent "
    "with no, Nesterov or heavy-ball momentum; K ∈ [1, 10⁶]; compared with Θ_{1:K} and the same ServerOpt.",
)
def figure_8(ctx):
    # One random matrix per d shared by the three panels (tag 0), so panels differ only in ServerOpt.
    return {
        "params": dict(
            _SIMULATED,
            mu=MU,
            L=L_DEFAULT,
            alpha=0.0,
            servers=[m for _, m in MOMENTA],
            matrix_reuse="the same random A (per d) in all three panels",
        ),
        "panels": [_simulated_panel(ctx, name, L_DEFAULT, momentum=m) for name, m in MOMENTA],
    }


@figure(
    id="localupdate/figure-9",
    caption="Pareto frontiers for μ = 1, L = 10, γ = 10⁻⁷, Θ = Θ_K and varying α; K ∈ [1, 10⁶] with "
    "γ < (KL + α)^{-1}; ServerOpt = gradient descent.",
)
def figure_9(ctx):
    curves = []
    for a in FIGURE_9_ALPHAS:
        Ks = K_GRID[FIGURE_9_GAMMA * (K_GRID * L_DEFAULT + a) < 1]  # only γ < 1/(KL + α), as the paper says
        curves.append(_series(f"α = {a:g}", frontier_last(MU, L_DEFAULT, a, gammas=FIGURE_9_GAMMA, Ks=Ks), alpha=a))
    return {
        "params": {
            "mu": MU,
            "L": L_DEFAULT,
            "gamma": FIGURE_9_GAMMA,
            "alphas": list(FIGURE_9_ALPHAS),
            "theta": "Theta_K",
            "server": "gd",
            "kappa": "eq. (13)",
            "delta": "eq. (17)",
            "K": "K_GRID restricted to gamma < 1/(K L + alpha) (Lemma 4's hypothesis)",
            "unspecified_by_paper": "the values of alpha ('varying alpha'): 0, 0.5, 1, 5, 10",
        },
        "panels": [panel("Θ_K, varying α", RHO, DELTA, curves)],
    }


@figure(
    id="localupdate/figure-10",
    caption="Simulated Pareto frontiers for μ = 1, L = 10, γ = 0.001, Θ = Θ_K (MAML), ServerOpt = gradient descent, "
    "α ∈ {0, 0.5, 1, 5}, K ∈ [1, 10⁶]; compared with Θ_{1:K} (FedAvg) and the same α.",
)
def figure_10(ctx):
    return {
        "params": dict(
            _SIMULATED,
            mu=MU,
            L=L_DEFAULT,
            alphas=list(FIGURE_10_ALPHAS),
            server="gd",
            unspecified_by_paper="the caption lists alpha in {0, 0.5, 1, 10} but its panels are labelled "
            "0, 0.5, 1.0, 5.0; the panel labels are used",
            matrix_reuse="the same random A (per d) in all panels, so they differ only in alpha",
        ),
        "panels": [_simulated_panel(ctx, f"α = {a:g}", L_DEFAULT, alpha=a) for a in FIGURE_10_ALPHAS],
    }
