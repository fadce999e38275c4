"""Figures of Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated Learning and
Meta-Learning* (arXiv:2103.05032), computed exactly from the library's closed forms."""
from __future__ import annotations

import numpy as np

from fedtheory.analysis.pareto import frontier_uniform
from fedtheory.plotting.spec import figure, panel, series

FIGURE_1_MU = 1.0
FIGURE_1_LS = (5.0, 50.0)
FIGURE_1_GAMMA = 0.01
FIGURE_1_K = 100
# The paper does not give the ranges swept; these cover the whole attainable curve.
FIGURE_1_K_RANGE = np.unique(np.round(np.logspace(0, 5, 400)).astype(int))
FIGURE_1_GAMMA_FRACTIONS = np.concatenate([np.logspace(-6, -1e-9, 400)])  # γ = fraction / L, γ < 1/L


@figure(
    id="localupdate/figure-1",
    caption="Pareto frontiers (ρ, Δ) for μ = 1, α = 0, Θ = Θ_{1:K}, L ∈ {5, 50}, ServerOpt = gradient descent: "
            "γ = 0.01 fixed and K varied (left); K = 100 fixed and γ varied (right).",
)
def figure_1(ctx):
    """ρ = (κ−1)/(κ+1) (Table 2, no momentum) and Δ of eq. (17), with κ = φ(L)/φ(μ) of eq. (11)."""
    left, right = [], []
    for L in FIGURE_1_LS:
        by_K = frontier_uniform(FIGURE_1_MU, L, 0.0, gammas=FIGURE_1_GAMMA, Ks=FIGURE_1_K_RANGE)
        left.append(series(f"L = {L:g}", by_K["rho"], by_K["delta"], params={"L": L, "gamma": FIGURE_1_GAMMA,
                                                                           "K": by_K["K"].tolist()}))
        gammas = FIGURE_1_GAMMA_FRACTIONS / L
        by_gamma = frontier_uniform(FIGURE_1_MU, L, 0.0, gammas=gammas, Ks=FIGURE_1_K)
        right.append(series(f"L = {L:g}", by_gamma["rho"], by_gamma["delta"],
                            params={"L": L, "K": FIGURE_1_K, "gamma": by_gamma["gamma"].tolist()}))
    return {
        "params": {"mu": FIGURE_1_MU, "L": list(FIGURE_1_LS), "alpha": 0.0, "theta": "Theta_{1:K}", "server": "gd",
                   "left": {"gamma": FIGURE_1_GAMMA, "K_range": [int(FIGURE_1_K_RANGE[0]), int(FIGURE_1_K_RANGE[-1])],
                            "K_points": int(FIGURE_1_K_RANGE.size)},
                   "right": {"K": FIGURE_1_K, "gamma_range_times_L": [float(FIGURE_1_GAMMA_FRACTIONS[0]),
                                                                      float(FIGURE_1_GAMMA_FRACTIONS[-1])],
                             "gamma_points": int(FIGURE_1_GAMMA_FRACTIONS.size)},
                   "kappa": "eq. (11): phi(L)/phi(mu)", "rho": "Table 2, no momentum", "delta": "eq. (17)",
                   "unspecified_by_paper": "the swept ranges of K and gamma; chosen to cover the whole curve"},
        "panels": [
            panel("γ = 0.01, varying K", "ρ (convergence rate)", "Δ (suboptimality)", left),
            panel("K = 100, varying γ", "ρ (convergence rate)", "Δ (suboptimality)", right),
        ],
    }
