"""The certified worst accuracy floor of FedAvg (fedtheory's federated PEP) beside the bounds it replaces, for
Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated Learning and Meta-Learning*
(arXiv:2103.05032).

Not a figure of the paper: the paper's Lemma 5 / Theorem 4 bound (8C, and the conjectured 2C) fails for d ≥ 2,
and this figure shows by how much. For n = 2 quadratic clients (μ = 1, κ₀ = L ∈ {10, 100, 1000}, γL = 1/2,
Θ_{1:K}, α = 0) it plots against Kγ·L: the certified worst floor sup‖x*(0,γ,Θ_{1:K}) − x*‖/C (upper bound of
:func:`~fedtheory.certify.federated_pep.certify_local_update`; its replayed lower bound agrees to 10⁻⁵ and is
kept in each series' params), Theorem 4's 8(√κ₀ − √κ)/(√κ₀ + √κ) and 2(√κ₀ − √κ)/(√κ₀ + √κ), and the exact
d = 1 worst floor (:func:`~fedtheory.certify.federated_pep.floor_d1`), and the proved limit Kγμ → ∞,
(κ₀ − 1)/(2√κ₀) (:func:`~fedtheory.symbolic.averaging_floor.averaging_floor_bound`, claim
``localupdate/lemma-5/corrected-limit``), which the certified floor approaches from below, and the closed-form law
Φ(κ₀, κ) of :mod:`fedtheory.analysis.floor_law` that the certificates follow (``localupdate/floor-law/*``).
"""

from __future__ import annotations

from fedtheory.algorithms.surrogate import kappa_bound_uniform
from fedtheory.analysis.rates import suboptimality_delta
from fedtheory.certify.federated_pep import certify_local_update, floor_d1
from fedtheory.plotting.spec import figure, panel, series
from fedtheory.analysis.floor_law import floor_law
from fedtheory.symbolic.averaging_floor import averaging_floor_bound

KAPPAS = (10.0, 100.0, 1000.0)
KS = (1, 2, 5, 10, 20, 50, 100)
GAMMA_L = 0.5


def certified_floor_data(kappas=KAPPAS, Ks=KS, gamma_L=GAMMA_L, seed: int = 0) -> dict:
    """The figure's data: per κ₀, the certified floor (upper, lower), Theorem 4's 8·δ and 2·δ and the d = 1 worst.

    >>> d = certified_floor_data(kappas=(10.0,), Ks=(1, 2), seed=0)
    >>> [round(v, 4) for v in d[10.0]["upper"]]
    [0.0, 0.2623]
    """
    out = {}
    for kap in kappas:
        gamma = gamma_L / kap
        rows = {
            "x": [],
            "upper": [],
            "lower": [],
            "t4_8": [],
            "t4_2": [],
            "d1": [],
            "status": [],
            "limit": [],
            "law": [],
        }
        for K in Ks:
            c = certify_local_update(1.0, kap, K, gamma, engine="spectral", pieces=16, probe_starts=2, seed=seed)
            k = float(kappa_bound_uniform(1.0, kap, 0.0, gamma, K))
            delta = float(suboptimality_delta(kap, k))
            rows["x"].append(K * gamma * kap)
            rows["upper"].append(c.value)
            rows["lower"].append(c.lower)
            rows["status"].append(c.status)
            rows["t4_8"].append(8 * delta)
            rows["t4_2"].append(2 * delta)
            rows["d1"].append(floor_d1(1.0, kap, K, gamma)[0])
            rows["limit"].append(averaging_floor_bound(1.0, kap))
            rows["law"].append(floor_law(1.0, kap, K, gamma))
        out[kap] = rows
    return out


@figure(
    id="localupdate/figure-certified-floor",
    caption="Certified worst accuracy floor sup‖x*(0,γ,Θ_{1:K}) − x*‖/C of FedAvg (n = 2 quadratic clients, μ = 1, "
    "γL = 1/2) against Kγ·L, for κ₀ ∈ {10, 100, 1000}, beside Theorem 4's 8(√κ₀ − √κ)/(√κ₀ + √κ), the 2C "
    "conjecture, the exact d = 1 worst floor, the closed-form law Φ(κ₀, κ) and the proved limit (κ₀ − 1)/(2√κ₀) as "
    "Kγμ → ∞.",
    tier="full",
)
def figure_certified_floor(ctx):
    data = certified_floor_data(seed=int(ctx.seed) % (2**31))
    panels = []
    for kap, rows in data.items():
        xs = rows["x"]
        panels.append(
            panel(
                f"κ₀ = {kap:g}",
                "Kγ·L",
                "floor / C",
                [
                    series("Theorem 4: 8(√κ₀ − √κ)/(√κ₀ + √κ)", xs, rows["t4_8"]),
                    series("conjecture: 2(√κ₀ − √κ)/(√κ₀ + √κ)", xs, rows["t4_2"]),
                    series("exact worst floor in d = 1", xs, rows["d1"]),
                    series("proved limit Kγμ → ∞: (κ₀ − 1)/(2√κ₀)", xs, rows["limit"]),
                    series("law Φ(κ₀, κ) (closed form, certificates agree)", xs, rows["law"]),
                    series(
                        "certified (PEP upper bound)",
                        xs,
                        rows["upper"],
                        type="scatter",
                        params={"lower": rows["lower"], "status": rows["status"]},
                    ),
                ],
                xscale="log",
            )
        )
    return {
        "params": {
            "mu": 1.0,
            "kappas": list(KAPPAS),
            "K": list(KS),
            "gamma_L": GAMMA_L,
            "clients": 2,
            "p": [0.5, 0.5],
            "theta": "Theta_{1:K}",
            "alpha": 0.0,
            "pieces": 16,
        },
        "panels": panels,
    }
