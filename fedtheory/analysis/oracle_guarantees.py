r"""FedLRGD against FedAve in federated oracle complexity (Definition 1), as the explorer reads them.

Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*: Theorem 2 bounds FedLRGD's
Γ = r² + rs + rS + φmr (r of eq. 47, S of eq. 48) to reach F − F* ≤ ε; Theorem 3 bounds FedAve's
Γ through the program (79) min_{b,T} T(b + φτm) s.t. m²/(T²b²) + b/(mT) ≤ ε/(pC), solved exactly here
(:class:`~fedtheory.symbolic.oracle_complexity.FedAveProgram`). Both come with the claim ids that check
them and with what those checks found.

>>> res = oracle_guarantees(d=1, p=1, eta=6.0, alpha=1.0, L1=2.0, mu=1.0, L2=1.0, B=1.0, epsilon=0.5,
...                         initial_gap=0.0, m=10, s=5, phi=100.0)
>>> sorted(res), round(res["fedlrgd"]["log10_complexity"], 3)
(['fedave', 'fedlrgd'], 10.507)
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["oracle_guarantees", "ORACLE_CLAIMS"]

ORACLE_CLAIMS = {
    "fedlrgd": ("fedlrgd/theorem-2/complexity", "fedlrgd/definition-1/oracle-complexity"),
    "fedave": (
        "fedlrgd/theorem-3/closed-form",
        "fedlrgd/theorem-3/geometric-program",
        "fedlrgd/definition-1/oracle-complexity",
    ),
}
ORACLE_CAVEATS = {
    "fedlrgd": (
        "Theorem 2's hypotheses cannot hold together on R^p (fedlrgd/theorem-2/hypotheses is vacuous): the "
        "bound is evaluated as a formula, not as a guarantee",
    ),
    "fedave": (
        "Theorem 3 rests on Lemma 3, refuted for heterogeneous clients (fedlrgd/lemma-3/heterogeneous); it holds "
        "for homogeneous (i.i.d.) clients (fedlrgd/lemma-3/homogeneous)",
        "C is the unspecified constant of Lemma 3 / Theorem 3 (default 1)",
    ),
}


def oracle_guarantees(
    *,
    d: int,
    p: int,
    eta: float,
    alpha: float,
    L1: float,
    mu: float,
    L2: float,
    B: float,
    epsilon: float,
    initial_gap: float,
    m: int,
    phi: float,
    s: int = 1,
    tau: float = 1.0,
    C: float = 1.0,
) -> dict[str, dict[str, Any]]:
    """Γ of FedLRGD (Theorem 2) and of FedAve (Theorem 3's program, exact optimum), with their settings.

    Hypotheses raise ValueError naming them (:class:`~fedtheory.symbolic.oracle_complexity.FedLRGDSetting`
    and :class:`~fedtheory.symbolic.oracle_complexity.FedAveProgram`). Returns, per method,
    ``{"log10_complexity", "setting", "claims", "caveats", "hypotheses"}``.
    """
    from fedtheory.symbolic.oracle_complexity import FedAveProgram, FedLRGDSetting

    lrgd = FedLRGDSetting(
        d=d,
        p=p,
        eta=eta,
        alpha=alpha,
        L1=L1,
        mu=mu,
        L2=L2,
        B=B,
        epsilon=epsilon,
        initial_gap=initial_gap,
        m=m,
        s=s,
        phi=phi,
        tau=tau,
    ).check()
    log10_r = lrgd.log10_rank()
    prog = FedAveProgram(m=m, phi=phi, tau=tau, C=C, varepsilon=epsilon / p).check(theorem=False)
    gamma, b, T = prog.exact_min()
    out = {
        "fedlrgd": {
            "log10_complexity": lrgd.log10_complexity(),
            "setting": {"log10_r": log10_r, "S": lrgd.iterations(), "s": s},
            "claims": ORACLE_CLAIMS["fedlrgd"],
            "caveats": ORACLE_CAVEATS["fedlrgd"],
            "hypotheses": (
                "Section II-B: μ-strongly convex, L1-smooth, (η, L2)-Hölder smooth in data, bounded by B",
                "η > (2α + 2)d, τ = 1, 0 < ε ≤ 9(B+3)⁴p/(8μ) (Theorem 2)",
            ),
        },
        "fedave": {
            "log10_complexity": math.log10(gamma),
            "setting": {"b": b, "T": T, "C": C},
            "claims": ORACLE_CLAIMS["fedave"],
            "caveats": ORACLE_CAVEATS["fedave"],
            "hypotheses": (
                "Lemma 3's setting (FedPAQ): μ-strongly convex, L1-smooth, bounded variance",
                "program (79) with ε/p and constant C; τ ∈ (0, 1]",
            ),
        },
    }
    try:
        lo, hi = prog.theorem3_sandwich()
        out["fedave"]["theorem3_sandwich_log10"] = (math.log10(lo), math.log10(hi))
    except ValueError as exc:  # (88) or ε ≤ 1 fails: the exact optimum stands, the sandwich does not apply
        out["fedave"]["theorem3_sandwich_log10"] = None
        out["fedave"]["sandwich_note"] = str(exc)
    return out
