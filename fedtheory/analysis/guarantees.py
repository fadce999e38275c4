r"""What each method's theory promises, in common units: error after T rounds, rounds to ε, floor, local work.

Every guarantee here is a *valid* bound: it rests only on statements whose claims are verified (proved or
certified), listed in :data:`GUARANTEE_SOURCES` with the class of federations each holds for; a test
checks that every claim id cited there is declared ``expect="verified"`` in the content files. The common
unit is the distance to the empirical minimizer, ‖x − x*‖ (a function-value bound f − f* ≤ e converts
through μ-strong convexity: ‖x − x*‖ ≤ √(2e/μ)).

- :func:`local_update_guarantee` — LocalUpdate (FedAvg/FedProx/Reptile Θ_{1:K}, FOMAML Θ_K, MAML
  Θ_{2K+1}, mini-batch GD K = 1) with a tuned ServerOpt, Charles & Konečný (arXiv:2103.05032):
  ‖x_T − x*‖ ≤ c_T ρ^T (D + F) + F with ρ the class-wide rate (Theorem 3, Table 2) and F a floor on
  ‖x*(α,γ,Θ) − x*‖ valid for the asked class: Lemma 12 for d = 1, Lemma 12 per eigendirection for
  commuting clients, the federated-PEP certificate for d ≥ 2 (or none: Corollary 1's 8CΔ is refuted).
- :func:`sdane_guarantee` — S-DANE (Theorem 1) and Acc-S-DANE (Theorem 6) of Jiang, Rodomanov & Stich
  (arXiv:2407.07084) with λ ≥ 2δ_A, local steps per round from Corollary 3 / Remark 19.

>>> import numpy as np
>>> g = local_update_guarantee(mu=1.0, L=10.0, C=1.0, D=10.0, theta="uniform", gamma=0.05, K=[1, 10],
...                            function_class="d1")
>>> [round(float(r), 4) for r in g.rho], [round(float(f), 4) for f in g.floor]
([0.8182, 0.4269], [0.0, 0.6685])
>>> g.rounds_to(0.5).tolist()          # K = 10 never reaches 0.5: its floor is 0.67
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

from fedtheory.validation import positive_hypothesis

__all__ = [
    "Guarantee",
    "local_update_guarantee",
    "sdane_guarantee",
    "LOCAL_SOLVERS",
    "GUARANTEE_SOURCES",
    "FUNCTION_CLASSES",
    "source_claims",
    "register_source",
    "log_distortion_spread",
]

#: local solvers with a proven per-round step count for S-DANE's accuracy test (6)
LOCAL_SOLVERS = ("fgm+ogm-g", "fgm", "gd")


@dataclass
class Guarantee:
    """A method's bound evaluated over a batch of hyperparameter settings (all arrays share one length).

    ``error_after(T)``: the guaranteed ‖x_T − x*‖ after T rounds; ``rounds_to(eps)``: the fewest rounds
    whose guarantee is ≤ eps (``inf`` where the floor is above eps); ``floor``: the limit of the
    guarantee as T → ∞; ``local_steps``: local gradient evaluations per client per round;
    ``params``: the hyperparameters; ``claims``/``hypotheses``/``caveats``: where the bound comes from,
    what it assumes and what the project's checks found about it; ``function_class``: the class of
    federations the bound holds for; ``valid``: per setting, whether a verified statement gives a bound
    there (``error_after`` is ``inf`` where not); ``sources``: the :data:`GUARANTEE_SOURCES` used.
    """

    method: str
    params: dict
    floor: np.ndarray
    local_steps: np.ndarray
    claims: tuple
    hypotheses: tuple
    caveats: tuple = ()
    rho: np.ndarray | None = None
    function_class: str = "general"
    valid: np.ndarray | None = None
    sources: tuple = ()
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


_positive = positive_hypothesis


def _nonnegative(name: str, value: Any) -> float:
    v = float(value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"hypothesis {name} >= 0 violated: {name}={v:g}")
    return v


#: The statements a guarantee may rest on: name -> the claim ids that check it and the class it holds for.
#: Only statements whose claims are declared ``expect="verified"`` may appear here (a test loads the content
#: files by path and enforces it): Lemma 5, Theorem 4, Corollary 1 (the 8CΔ floor), Lemma 14, Theorem 6,
#: the 2C conjecture and Theorem 3 with momentum constant 1 are refuted and are never used.
GUARANTEE_SOURCES: dict[str, dict] = {
    "rate/gd": {
        "claims": (
            "localupdate/theorem-3/no-momentum",
            "localupdate/table-2/no-momentum",
            "localupdate/lemma-3",
            "localupdate/lemma-4",
        ),
        "holds_for": "every d: ‖x_T − x*(α,γ,Θ)‖ ≤ ρ^T‖x_0 − x*(α,γ,Θ)‖, ρ at the class-wide κ",
    },
    "rate/nesterov": {
        "claims": (
            "localupdate/theorem-3/nesterov-corrected",
            "localupdate/table-2/nesterov",
            "localupdate/lemma-3",
            "localupdate/lemma-4",
        ),
        "holds_for": "every d: constant 1 + (1+ρ)T (Theorem 3 corrected)",
    },
    "rate/heavy_ball": {
        "claims": (
            "localupdate/theorem-3/heavy-ball-corrected",
            "localupdate/table-2/heavy-ball",
            "localupdate/lemma-3",
            "localupdate/lemma-4",
        ),
        "holds_for": "every d: constant 1 + (1+ρ)T (Theorem 3 corrected)",
    },
    "floor/one-step": {
        "claims": ("localupdate/section-3/theta-1-no-distortion",),
        "holds_for": "every d: K(Θ) = 1 gives Q_i = I, so x*(α,γ,Θ) = x* (no floor)",
    },
    "floor/d1": {"claims": ("localupdate/lemma-12",), "holds_for": "d = 1: |x*(α,γ,Θ) − x*| ≤ 2C(√b − √a)/(√b + √a)"},
    "floor/commuting": {
        "claims": ("localupdate/lemma-12", "verify/explorer/commuting-floor"),
        "holds_for": "commuting clients (one shared eigenbasis), n clients: "
        "‖x*(α,γ,Θ) − x*‖ ≤ 2C√n(√b − √a)/(√b + √a) (Lemma 12 in each eigendirection)",
    },
    "s-dane": {
        "claims": (
            "sdane/theorem-1/runs",
            "sdane/theorem-1/probe",
            "sdane/theorem-1/pep",
            "sdane/corollary-18",
            "sdane/corollary-3/runs",
            "sdane/corollary-3/pep",
        ),
        "holds_for": "μ-convex, L-smooth, δ_A-SOD clients (any d)",
    },
    "acc-s-dane": {
        "claims": (
            "sdane/theorem-6/runs",
            "sdane/theorem-6/probe",
            "sdane/theorem-6/pep",
            "sdane/corollary-25",
            "sdane/corollary-3/runs",
            "sdane/corollary-3/pep",
        ),
        "holds_for": "μ-convex, L-smooth, δ_A-SOD clients (any d), μ ≤ 4λ",
    },
}

#: the classes of local-update federations a guarantee can be asked for
FUNCTION_CLASSES = {
    "d1": "d = 1",
    "commuting": "commuting clients (d ≥ 2)",
    "general": "d ≥ 2, general (non-commuting) clients",
}


def register_source(name: str, claims: tuple, holds_for: str) -> None:
    """Add a statement a guarantee may rest on (used for the certified worst cases of the federated PEP).

    >>> register_source("floor/d1", ("localupdate/lemma-12",), GUARANTEE_SOURCES["floor/d1"]["holds_for"])
    >>> GUARANTEE_SOURCES["floor/d1"]["claims"]
    ('localupdate/lemma-12',)
    """
    GUARANTEE_SOURCES[name] = {"claims": tuple(claims), "holds_for": holds_for}


def source_claims(*names: str) -> tuple:
    """The claim ids behind the named sources, in order, without repeats.

    >>> source_claims("floor/d1", "floor/commuting")
    ('localupdate/lemma-12', 'verify/explorer/commuting-floor')
    """
    out: list[str] = []
    for name in names:
        for c in GUARANTEE_SOURCES[name]["claims"]:
            if c not in out:
                out.append(c)
    return tuple(out)


def log_distortion_spread(mu: float, L: float, *, theta: str, alpha: Any, gamma: Any, K: Any) -> np.ndarray:
    """log(b/a) over the class: b/a = max_λ q(λ)/min_λ q(λ) = q(μ)/q(L) on [μ, L] (q decreases in λ for
    Θ_{1:K}, Θ_K and MAML's Θ_{2K+1} in Lemma 1's regime), the ratio Lemma 12's Δ is taken at.

    >>> round(float(log_distortion_spread(1.0, 10.0, theta="uniform", alpha=0.0, gamma=0.05, K=1)[0]), 12)
    0.0
    """
    from fedtheory.algorithms.theta import geometric_sum

    a, g, k = (np.atleast_1d(np.asarray(v, dtype=np.float64)).ravel() for v in np.broadcast_arrays(alpha, gamma, K))
    s_mu, s_L = g * (mu + a), g * (L + a)
    if theta == "uniform":
        return np.log(geometric_sum(s_mu, k)) - np.log(geometric_sum(s_L, k))
    steps = 2 * k + 1 if theta == "maml" else k
    return (steps - 1) * (np.log1p(-s_mu) - np.log1p(-s_L))


def local_update_guarantee(
    *,
    mu: float,
    L: float,
    C: float,
    D: float,
    theta: str = "uniform",
    alpha: Any = 0.0,
    gamma: Any,
    K: Any,
    momentum: str = "gd",
    function_class: str = "general",
    clients: int | None = None,
    certified_floor: Any = None,
) -> Guarantee:
    """A valid bound on ‖x_T − x*‖ for LocalUpdate over μI ⪯ A_i ⪯ LI, ‖c_i‖ ≤ C, ‖x_0 − x*‖ ≤ D.

    error_after(T) = c_T ρ^T (D + F) + F by the triangle inequality through x*(α,γ,Θ):
    ‖x_T − x*(α,γ,Θ)‖ ≤ c_T ρ^T ‖x_0 − x*(α,γ,Θ)‖ (Theorem 3 at the class-wide κ; c_T = 1 without
    momentum, 1 + (1+ρ)T with it, the corrected constant) and ‖x*(α,γ,Θ) − x*‖ ≤ F, a *floor* that only
    a verified statement may give, per ``function_class``:

    - ``"d1"``: F = 2CΔ₁₂ (Lemma 12), Δ₁₂ = (√b − √a)/(√b + √a), b/a = q(μ)/q(L);
    - ``"commuting"``: F = 2C√n Δ₁₂ (Lemma 12 in each shared eigendirection; needs ``clients`` = n);
    - ``"general"`` (d ≥ 2, non-commuting): F = 0 where K(Θ) = 1 (Q_i = I), else the certified worst
      case ``certified_floor(gamma, K, alpha)`` (an array, NaN where none is certified) of the federated
      PEP, else **no guarantee**: F = inf, and ``valid`` is False there.

    Corollary 1's 8CΔ (Lemma 5, Theorem 4) is refuted for d ≥ 2 and is never used. ``claims`` names the
    claim ids of every statement used; ``function_class`` and ``valid`` say where the bound holds.

    >>> g = local_update_guarantee(mu=1.0, L=4.0, C=0.0, D=1.0, gamma=0.0, K=1)     # plain GD, κ = 4
    >>> round(float(g.rho[0]), 12), float(g.error_after(2)[0])
    (0.6, 0.36)
    >>> g = local_update_guarantee(mu=1.0, L=10.0, C=1.0, D=1.0, gamma=0.05, K=[1, 10])   # d ≥ 2: K = 10 unknown
    >>> g.valid.tolist(), g.floor.tolist()[1]
    ([True, False], inf)
    """
    from fedtheory.analysis.pareto import worst_case_tradeoff
    from fedtheory.analysis.rates import rounds_to_contract, suboptimality_delta_from_log, transient_constant

    C, D = _nonnegative("C", C), _nonnegative("D", D)
    if function_class not in FUNCTION_CLASSES:
        raise ValueError(f"function_class must be one of {', '.join(FUNCTION_CLASSES)}, got {function_class!r}")
    if clients is not None and (int(clients) != clients or clients < 1):
        raise ValueError(f"clients must be a positive integer, got {clients!r}")
    if function_class == "commuting" and clients is None:
        raise ValueError("the commuting-class floor 2C√n·Δ depends on the number of clients n: give clients")
    out = worst_case_tradeoff(mu, L, theta=theta, alpha=alpha, gamma=gamma, K=K, momentum=momentum)
    rho = out["rho"]
    steps = out["K"] * (2 if theta == "maml" else 1) + (1 if theta == "maml" else 0)
    one_step = steps == 1
    delta12 = np.atleast_1d(
        suboptimality_delta_from_log(
            np.abs(
                log_distortion_spread(
                    float(mu), float(L), theta=theta, alpha=out["alpha"], gamma=out["gamma"], K=out["K"]
                )
            )
        )
    )
    sources = [f"rate/{momentum}"]
    extra_hyp = None
    if function_class == "d1":
        floor = 2 * C * delta12
        sources.append("floor/d1")
    elif function_class == "commuting" and clients is not None:  # checked above: given for this class
        floor = 2 * C * math.sqrt(int(clients)) * delta12
        sources.append("floor/commuting")
    else:
        floor = np.full(rho.shape, np.inf)
        if certified_floor is not None:
            cert = np.asarray(certified_floor(out["gamma"], out["K"], out["alpha"]), dtype=np.float64) * C
            floor = np.where(np.isfinite(cert), cert, floor)
            if np.any(np.isfinite(cert) & ~one_step) and "floor/certified" in GUARANTEE_SOURCES:
                sources.append("floor/certified")
                extra_hyp = getattr(certified_floor, "hypothesis", None)
        floor = np.where(one_step, 0.0, floor)
        if np.any(one_step):
            sources.append("floor/one-step")
    floor = np.where(one_step, 0.0, floor)
    valid = np.isfinite(floor)
    start = D + np.where(valid, floor, 0.0)

    def error_after(T: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            val = transient_constant(rho, T, momentum) * rho**T * start + np.where(valid, floor, 0.0)
        return np.where(valid, val, np.inf)

    def rounds_to(eps: float) -> np.ndarray:
        # a start near 0 overflows ε/start to inf: already within ε, which rounds_to_contract reads as 0 rounds
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = np.where(floor >= eps, 1.0, (eps - np.where(valid, floor, 0.0)) / start)
        return np.where(floor >= eps, np.inf, rounds_to_contract(rho, ratio, momentum))

    local = out["K"].astype(np.float64) + (1.0 if theta == "maml" else 0.0)
    hyps = [
        "0 < μ ≤ L (Assumption 1), ‖c_i‖ ≤ C (Assumption 2), ‖x_0 − x*‖ ≤ D",
        "γ < 1/(L + α) (Lemma 1)",
        f"ServerOpt tuned as in Table 2 at the class-wide μ̃, L̃ ({momentum}: η, β printed with the setting)",
        "full participation, full-batch clients (Section 4.2)",
        f"class: {FUNCTION_CLASSES[function_class]}" + (f", n = {int(clients)} clients" if clients else ""),
    ]
    if extra_hyp:
        hyps.append(extra_hyp)
    caveats = []
    if function_class == "general" and not np.all(valid):
        caveats.append(
            "no valid guarantee is known for d ≥ 2 at settings with K(Θ) > 1 that the certified table does "
            "not cover: Corollary 1's 8CΔ floor (Lemma 5, Theorem 4) is refuted there"
        )
    # np.full, not np.array of a list of strings: 20 times faster on a tuning grid of thousands of settings
    params = {
        "theta": np.full(len(rho), theta),
        "K": out["K"],
        "gamma": out["gamma"],
        "alpha": out["alpha"],
        "momentum": np.full(len(rho), momentum),
        "kappa": out["kappa"],
        "delta": delta12,
    }
    return Guarantee(
        method={"uniform": "LocalUpdate Θ_{1:K}", "last": "LocalUpdate Θ_K (FOMAML)", "maml": "MAML (Θ_{2K+1})"}[theta],
        params=params,
        floor=floor,
        local_steps=local,
        rho=rho,
        claims=source_claims(*sources),
        hypotheses=tuple(hyps),
        caveats=tuple(caveats),
        function_class=function_class,
        valid=valid,
        sources=tuple(sources),
        _error_after=error_after,
        _rounds_to=rounds_to,
    )


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


def sdane_guarantee(
    *, mu: float, L: float, delta_A: float, D: float, lam: Any, solver: str = "fgm+ogm-g", accelerated: bool = False
) -> Guarantee:
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
        raise ValueError(
            f"hypothesis lambda >= 2*delta_A (> 0) violated (Theorem {'6' if accelerated else '1'}): "
            f"lambda={lam[bad][0]:g}, delta_A={delta_A:g}"
        )
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

        claims = source_claims("acc-s-dane")
        method = "Acc-S-DANE"
    else:

        def error_after(T: np.ndarray) -> np.ndarray:
            grow = np.expm1(T * np.log1p(mu / lam))
            return np.where(T > 0, D / np.sqrt(np.where(grow > 0, grow, 1.0)), D)

        def rounds_to(eps: float) -> np.ndarray:
            need = np.log1p((D / eps) ** 2) / np.log1p(mu / lam)
            return np.where(D <= eps, 0.0, np.ceil(need - 1e-12))

        claims = source_claims("s-dane")
        method = "S-DANE"
    steps = _local_steps(solver, L, lam)
    hyps = (
        "each f_i μ-convex and L-smooth, δ_A-SOD (Definition 1)",
        "λ ≥ 2δ_A (Theorem 1 states λ = 2δ_A; the proof needs only (λ − δ_A)/2 ≥ λ/4)",
        "full participation; every local solve passes test (6)",
        "distance from f − f* through μ-strong convexity",
    )
    caveats = (
        "the S-DANE text lost its math in conversion: the bounds are the reconstruction's (sdane_reconstructed), "
        "checked by the sdane claims",
    )
    params = {"lambda": lam, "solver": np.full(len(lam), solver)}
    return Guarantee(
        method=method,
        params=params,
        floor=np.zeros_like(lam),
        local_steps=steps,
        claims=claims,
        function_class="any d",
        valid=np.ones(lam.shape, dtype=bool),
        sources=(method.lower(),),
        hypotheses=hyps + (("μ ≤ 4λ (Theorem 6)",) if accelerated else ()),
        caveats=caveats,
        _error_after=error_after,
        _rounds_to=rounds_to,
    )
