r"""What each method's theory promises, in common units: error after T rounds, rounds to ε, floor, local work.

Every guarantee here is a derived bound of one of the papers, evaluated vectorized over
hyperparameters, with the claim ids that check it and the hypotheses it relies on. The common unit is
the distance to the empirical minimizer, ‖x − x*‖ (a function-value bound f − f* ≤ e converts through
μ-strong convexity: ‖x − x*‖ ≤ √(2e/μ)).

- :func:`local_update_guarantee` — LocalUpdate (FedAvg/FedProx/Reptile Θ_{1:K}, FOMAML Θ_K, MAML
  Θ_{2K+1}, mini-batch GD K = 1) with a tuned ServerOpt, Charles & Konečný (arXiv:2103.05032),
  Corollary 1: ‖x_T − x*‖ ≤ ρ^T ‖x_0 − x*(α,γ,Θ)‖ + 8CΔ ≤ ρ^T(D + 8CΔ) + 8CΔ with ρ, Δ the
  class-wide values of :func:`fedtheory.analysis.pareto.worst_case_tradeoff` (with momentum ρ^T becomes
  (1 + (1+ρ)T)ρ^T: Theorem 3's constant 1 is refuted, this one is proven).
- :func:`sdane_guarantee` — S-DANE (Theorem 1) and Acc-S-DANE (Theorem 6) of Jiang, Rodomanov & Stich
  (arXiv:2407.07084) with λ ≥ 2δ_A, local steps per round from Corollary 3 / Remark 19.

>>> import numpy as np
>>> g = local_update_guarantee(mu=1.0, L=10.0, C=1.0, D=10.0, theta="uniform", gamma=0.05, K=[1, 10])
>>> [round(float(r), 4) for r in g.rho], [round(float(f), 4) for f in g.floor]
([0.8182, 0.4269], [0.0, 2.674])
>>> g.rounds_to(0.5).tolist()          # K = 10 never reaches 0.5: its floor is 2.67
[15.0, inf]
>>> s = sdane_guarantee(mu=1.0, L=100.0, delta_A=1.0, D=10.0, lam=2.0)
>>> int(s.rounds_to(1e-3)[0]), int(s.local_steps[0])              # rounds, FGM+OGM-G steps per round
(46, 40)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Guarantee", "local_update_guarantee", "sdane_guarantee", "LOCAL_SOLVERS"]

#: local solvers with a proven per-round step count for S-DANE's accuracy test (6)
LOCAL_SOLVERS = ("fgm+ogm-g", "fgm", "gd")


@dataclass
class Guarantee:
    """A method's bound evaluated over a batch of hyperparameter settings (all arrays share one length).

    ``error_after(T)``: the guaranteed ‖x_T − x*‖ after T rounds; ``rounds_to(eps)``: the fewest rounds
    whose guarantee is ≤ eps (``inf`` where the floor is above eps); ``floor``: the limit of the
    guarantee as T → ∞; ``local_steps``: local gradient evaluations per client per round;
    ``params``: the hyperparameters; ``claims``/``hypotheses``/``caveats``: where the bound comes from,
    what it assumes and what the project's checks found about it.
    """

    method: str
    params: dict
    floor: np.ndarray
    local_steps: np.ndarray
    claims: tuple
    hypotheses: tuple
    caveats: tuple = ()
    rho: np.ndarray | None = None
    _error_after: Any = field(default=None, repr=False)
    _rounds_to: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        return int(self.floor.shape[0])

    def error_after(self, T: Any) -> np.ndarray:
        """Guaranteed ‖x_T − x*‖ after T rounds (T broadcasts against the settings)."""
        return self._error_after(np.asarray(T, dtype=np.float64))

    def rounds_to(self, eps: float) -> np.ndarray:
        """Fewest rounds T with error_after(T) ≤ eps (float array; ``inf`` when the floor is ≥ eps)."""
        if not eps > 0:
            raise ValueError(f"target accuracy eps must be > 0, got {eps}")
        return self._rounds_to(float(eps))


def _positive(name: str, value: Any) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"hypothesis {name} > 0 violated: {name}={v:g}")
    return v


def _nonnegative(name: str, value: Any) -> float:
    v = float(value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"hypothesis {name} >= 0 violated: {name}={v:g}")
    return v


_LU_CLAIMS = {   # with momentum, (14) needs the constant 1 + (1+ρ)T: the corrected claims, not Theorem 3 as printed
    "gd": ("localupdate/theorem-3/no-momentum", "localupdate/table-2/no-momentum"),
    "nesterov": ("localupdate/theorem-3/nesterov-corrected", "localupdate/table-2/nesterov"),
    "heavy_ball": ("localupdate/theorem-3/heavy-ball-corrected", "localupdate/table-2/heavy-ball"),
}


def local_update_guarantee(*, mu: float, L: float, C: float, D: float, theta: str = "uniform", alpha: Any = 0.0,
                           gamma: Any, K: Any, momentum: str = "gd") -> Guarantee:
    """Corollary 1 of Charles & Konečný for LocalUpdate over the class μI ⪯ A_i ⪯ LI, ‖c_i‖ ≤ C, ‖x_0 − x*‖ ≤ D.

    error_after(T) = c_T ρ^T (D + 8CΔ) + 8CΔ, using ‖x_0 − x*(α,γ,Θ)‖ ≤ D + ‖x*(α,γ,Θ) − x*‖ ≤ D + 8CΔ
    (Theorem 4); c_T = 1 without momentum and 1 + (1+ρ)T with it (Theorem 3 corrected,
    :func:`~fedtheory.analysis.rates.transient_constant`); ρ, Δ from
    :func:`~fedtheory.analysis.pareto.worst_case_tradeoff`; floor 8CΔ; local
    steps K(Θ) per round (2K + 1 gradient evaluations for MAML's K inner steps and outer gradient are
    counted as K + 1). Hypotheses are enforced there (ValueError naming them).

    >>> g = local_update_guarantee(mu=1.0, L=4.0, C=0.0, D=1.0, gamma=0.0, K=1)     # plain GD, κ = 4
    >>> round(float(g.rho[0]), 12), float(g.error_after(2)[0])
    (0.6, 0.36)
    """
    from fedtheory.analysis.pareto import worst_case_tradeoff
    from fedtheory.analysis.rates import rounds_to_contract, transient_constant

    C, D = _nonnegative("C", C), _nonnegative("D", D)
    out = worst_case_tradeoff(mu, L, theta=theta, alpha=alpha, gamma=gamma, K=K, momentum=momentum)
    rho, floor = out["rho"], 8 * C * out["delta"]
    start = D + floor

    def error_after(T: np.ndarray) -> np.ndarray:
        return transient_constant(rho, T, momentum) * rho ** T * start + floor

    def rounds_to(eps: float) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(floor >= eps, 1.0, (eps - floor) / start)
        return np.where(floor >= eps, np.inf, rounds_to_contract(rho, ratio, momentum))

    steps = out["K"].astype(np.float64) + (1.0 if theta == "maml" else 0.0)
    hyps = ["0 < μ ≤ L (Assumption 1), ‖c_i‖ ≤ C (Assumption 2)", "γ < 1/(L + α) (Lemma 1)",
            f"ServerOpt tuned as in Table 2 ({momentum}: η, β of Lessard et al. 2016, Prop. 1)",
            "full participation, full-batch clients (Section 4.2)"]
    if theta in ("last", "maml"):
        hyps.append("Δ of eq. (17) needs γ < 1/(KL + α) (Lemmas 4, 6); outside it Lemma 5's Δ is used")
    caveats = ["the 8CΔ term (Lemma 5 / Theorem 4 / Corollary 1) is refuted for d ≥ 2 with non-commuting A_i "
               "(localupdate/lemma-5, localupdate/corollary-1); it holds for d = 1 and commuting clients "
               "(localupdate/theorem-5, localupdate/corollary-2)"]
    if momentum != "gd":
        caveats.append("with momentum, Theorem 3's (14) with constant 1 is refuted (localupdate/theorem-3/" +
                       momentum.replace("_", "-") + "); the bound uses the proven constant 1 + (1+ρ)T instead")
    params = {"theta": np.array([theta] * len(rho)), "K": out["K"], "gamma": out["gamma"], "alpha": out["alpha"],
              "momentum": np.array([momentum] * len(rho)), "kappa": out["kappa"], "delta": out["delta"]}
    return Guarantee(method={"uniform": "LocalUpdate Θ_{1:K}", "last": "LocalUpdate Θ_K (FOMAML)",
                             "maml": "MAML (Θ_{2K+1})"}[theta],
                     params=params, floor=floor, local_steps=steps, rho=rho,
                     claims=("localupdate/corollary-1", "localupdate/theorem-4", *_LU_CLAIMS[momentum]),
                     hypotheses=tuple(hyps), caveats=tuple(caveats),
                     _error_after=error_after, _rounds_to=rounds_to)


def _local_steps(solver: str, L: float, lam: np.ndarray) -> np.ndarray:
    """Per-round local gradient calls that pass test (6): Corollary 3 (FGM+OGM-G), Remark 19 (GD, FGM)."""
    if solver == "fgm+ogm-g":
        return np.ceil(2 * (np.sqrt(6 * np.sqrt(2) * (L + lam) / lam) - 1))
    if solver == "gd":
        return np.ceil(3 * (L + lam) / lam) - 1
    if solver == "fgm":
        kappa = (L + lam) / lam
        return np.ceil(2 * np.sqrt(kappa) * np.log(3 * np.sqrt((L + lam) * (L + 2 * lam)) / lam))
    raise ValueError(f"local solver must be one of {LOCAL_SOLVERS}, got {solver!r}")


def sdane_guarantee(*, mu: float, L: float, delta_A: float, D: float, lam: Any, solver: str = "fgm+ogm-g",
                    accelerated: bool = False) -> Guarantee:
    """S-DANE (Theorem 1) or Acc-S-DANE (Theorem 6), full participation, λ ≥ 2δ_A, in distance units.

    S-DANE: f(x̄^R) − f* ≤ μD²/(2[(1+μ/λ)^R − 1]), so ‖x̄^R − x*‖ ≤ D/√((1+μ/λ)^R − 1).
    Acc-S-DANE (μ ≤ 4λ): f(x^R) − f* ≤ 2μD²/[(1+q)^R − (1−q)^R]², q = √(μ/(4λ)), so
    ‖x^R − x*‖ ≤ 2D/[(1+q)^R − (1−q)^R]. No floor (both converge to x*). Local steps per round from
    Corollary 3 (FGM+OGM-G), Remark 19 (GD: ⌈3(L+λ)/λ⌉ − 1; FGM). The sympy forms of these bounds live in
    :mod:`fedtheory.symbolic.complexity`; they are checked against each other in the tests.

    >>> g = sdane_guarantee(mu=1.0, L=10.0, delta_A=1.0, D=1.0, lam=2.0, solver="gd")
    >>> round(float(g.error_after(1)[0]) ** 2, 12), g.local_steps.tolist()       # D²/((1 + 1/2)¹ − 1)
    (2.0, [17.0])
    """
    mu, L, D = _positive("mu", mu), _positive("L", L), _nonnegative("D", D)
    delta_A = _nonnegative("delta_A", delta_A)
    if not mu <= L:
        raise ValueError(f"hypothesis mu <= L violated: mu={mu:g}, L={L:g}")
    lam = np.atleast_1d(np.asarray(lam, dtype=np.float64)).ravel()
    bad = ~(lam >= 2 * delta_A) | ~(lam > 0)
    if bad.any():
        raise ValueError(f"hypothesis lambda >= 2*delta_A (> 0) violated (Theorem {'6' if accelerated else '1'}): "
                         f"lambda={lam[bad][0]:g}, delta_A={delta_A:g}")
    if accelerated:
        bad = mu > 4 * lam
        if bad.any():
            raise ValueError(f"hypothesis mu <= 4*lambda violated (Theorem 6): mu={mu:g}, lambda={lam[bad][0]:g}")
        q = np.sqrt(mu / (4 * lam))

        def error_after(T: np.ndarray) -> np.ndarray:
            with np.errstate(over="ignore"):
                gap = (1 + q) ** T - (1 - q) ** T
            return np.where(T > 0, 2 * D / np.where(gap > 0, gap, 1.0), D)

        def rounds_to(eps: float) -> np.ndarray:
            # (1+q)^R − (1−q)^R is increasing in R: bisection in R on the log scale, vectorized
            lo, hi = np.zeros_like(q), np.ones_like(q)
            while np.any(error_after(hi) > eps):
                hi = np.where(error_after(hi) > eps, hi * 2, hi)
            for _ in range(64):
                mid = np.floor((lo + hi) / 2)
                ok = error_after(mid) <= eps
                hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
                if np.all(hi - lo <= 1):
                    break
            return np.where(D <= eps, 0.0, hi)
        claims = ("sdane/theorem-6", "sdane/corollary-25", "sdane/corollary-3")
        method = "Acc-S-DANE"
    else:
        def error_after(T: np.ndarray) -> np.ndarray:
            grow = np.expm1(T * np.log1p(mu / lam))
            return np.where(T > 0, D / np.sqrt(np.where(grow > 0, grow, 1.0)), D)

        def rounds_to(eps: float) -> np.ndarray:
            need = np.log1p((D / eps) ** 2) / np.log1p(mu / lam)
            return np.where(D <= eps, 0.0, np.ceil(need - 1e-12))
        claims = ("sdane/theorem-1", "sdane/corollary-18", "sdane/corollary-3")
        method = "S-DANE"
    steps = _local_steps(solver, L, lam)
    hyps = ("each f_i μ-convex and L-smooth, δ_A-SOD (Definition 1)", "λ ≥ 2δ_A (Theorem 1 states λ = 2δ_A; the proof "
            "needs only (λ − δ_A)/2 ≥ λ/4)", "full participation; every local solve passes test (6)",
            "distance from f − f* through μ-strong convexity")
    caveats = ("the S-DANE text lost its math in conversion: the bounds are the reconstruction's (sdane_reconstructed), "
               "checked by the sdane claims",)
    params = {"lambda": lam, "solver": np.array([solver] * len(lam))}
    return Guarantee(method=method, params=params, floor=np.zeros_like(lam), local_steps=steps, claims=claims,
                     hypotheses=hyps + (("μ ≤ 4λ (Theorem 6)",) if accelerated else ()), caveats=caveats,
                     _error_after=error_after, _rounds_to=rounds_to)
