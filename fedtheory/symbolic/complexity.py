r"""Communication and local-computation complexities of Jiang, Rodomanov & Stich, *Stabilized
Proximal-Point Methods for Federated Optimization* (arXiv:2407.07084), as sympy expressions.

- :func:`corollary_18` — S-DANE's rounds to ε: :math:`(1+\lambda/\mu)\ln(1+\mu D^2/(2\varepsilon))`, λ = 2δ_A.
- :func:`corollary_25` — Acc-S-DANE's: :math:`(1+2\sqrt{\lambda/\mu})\ln(1+\sqrt{2\mu D^2/\varepsilon})` (μ ≤ 4λ).
- :func:`theorem_5_rounds` / :func:`theorem_7_rounds` — partial participation (rebuilt orders).
- :func:`corollary_3_steps`, :func:`remark_19_steps` — local gradient calls per round for FGM+OGM-G, GD
  and FGM, from the explicit constants of :mod:`fedtheory.algorithms.local_solvers`.
- :data:`TABLE_1` — the rows of Table 1 (full participation), each entry a sympy expression (an order,
  log factors explicit) or ``None`` where the paper writes "unknown". The table's body was lost in
  conversion: the S-DANE and Acc-S-DANE rows are the paper's own theorems; the other rows are rebuilt
  from the cited works and marked so in :data:`TABLE_1_PROVENANCE`.
- :func:`order` — the leading order of an expression in a limit (ε → 0, μ → 0, ...), for comparing
  entries up to constants.

>>> from fedtheory.symbolic.complexity import corollary_18, delta_A, mu, D, eps
>>> import sympy as sp
>>> sp.limit(corollary_18(), mu, 0)
D**2*delta_A/eps
"""

from __future__ import annotations

import sympy as sp

__all__ = [
    "delta_A",
    "delta_B",
    "delta_s",
    "Delta_s",
    "sigma_s",
    "mu",
    "L",
    "D",
    "eps",
    "n",
    "lam",
    "R",
    "corollary_18",
    "corollary_25",
    "theorem_1_bound",
    "theorem_6_bounds",
    "theorem_5_rounds",
    "theorem_7_rounds",
    "corollary_3_steps",
    "remark_19_steps",
    "TABLE_1",
    "TABLE_1_PROVENANCE",
    "order",
    "same_order",
]

delta_A, delta_B, delta_s, Delta_s = sp.symbols("delta_A delta_B delta_s Delta_s", positive=True)
sigma_s, mu, L, D, eps, n, lam, R = sp.symbols("sigma_s mu L D epsilon n lambda R", positive=True)
eps = sp.Symbol("eps", positive=True)


def theorem_1_bound(lam_: sp.Expr = 2 * delta_A) -> sp.Expr:
    r"""Theorem 1's right side :math:`\mu D^2/(2[(1+\mu/\lambda)^R - 1])`.

    >>> sp.limit(theorem_1_bound(), mu, 0)
    D**2*delta_A/R
    """
    return mu * D**2 / (2 * ((1 + mu / lam_) ** R - 1))


def corollary_18(lam_: sp.Expr = 2 * delta_A) -> sp.Expr:
    r"""Rounds sufficient for f(x̄^R) − f* ≤ ε (Corollary 18): :math:`(1+\lambda/\mu)\ln(1+\frac{\mu D^2}{2\varepsilon})`.

    >>> corollary_18().subs({delta_A: 1, mu: 1, D: 1, eps: sp.Rational(1, 2)})
    3*log(2)
    """
    return (1 + lam_ / mu) * sp.log(1 + mu * D**2 / (2 * eps))


def theorem_6_bounds(lam_: sp.Expr = 2 * delta_A) -> tuple[sp.Expr, sp.Expr]:
    r"""Theorem 6's explicit bounds for μ ≤ 4λ: :math:`2\mu D^2/[(1+q)^R-(1-q)^R]^2` and :math:`2\lambda D^2/R^2`,
    q = √(μ/(4λ)).

    >>> sp.limit(theorem_6_bounds()[0], mu, 0)
    4*D**2*delta_A/R**2
    """
    q = sp.sqrt(mu / (4 * lam_))
    return 2 * mu * D**2 / ((1 + q) ** R - (1 - q) ** R) ** 2, 2 * lam_ * D**2 / R**2


def corollary_25(lam_: sp.Expr = 2 * delta_A) -> sp.Expr:
    r"""Rounds sufficient for Acc-S-DANE (Corollary 25, μ ≤ 4λ): :math:`(1+2\sqrt{\lambda/\mu})\ln(1+\sqrt{2\mu D^2/\varepsilon})`.

    >>> sp.simplify(sp.limit(corollary_25(), mu, 0))
    4*D*sqrt(delta_A)/sqrt(eps)
    """
    return (1 + 2 * sp.sqrt(lam_ / mu)) * sp.log(1 + sp.sqrt(2 * mu * D**2 / eps))


def theorem_5_rounds() -> sp.Expr:
    r"""Theorem 5's order (rebuilt): :math:`(1 + \tilde\delta_s/\mu + \sigma_s^2/(\mu\varepsilon))\ln(1 + \mu D^2/\varepsilon)`,
    δ̃_s = δ_s + Δ_s.

    >>> sp.limit(theorem_5_rounds(), mu, 0)
    D**2*(Delta_s + delta_s + sigma_s**2/eps)/eps
    """
    return (1 + (delta_s + Delta_s) / mu + sigma_s**2 / (mu * eps)) * sp.log(1 + mu * D**2 / eps)


def theorem_7_rounds() -> tuple[sp.Expr, sp.Expr]:
    r"""Theorem 7's orders (rebuilt): (μ > 0) :math:`\sqrt{\tilde\delta_s/\mu}\ln(\cdot) + \sigma_s^2/(\mu\varepsilon)`,
    (μ = 0) :math:`\sqrt{\tilde\delta_s D^2/\varepsilon} + \sigma_s^2D^2/\varepsilon^2`."""
    dt = delta_s + Delta_s
    return (
        sp.sqrt(dt / mu) * sp.log(1 + mu * D**2 / eps) + sigma_s**2 / (mu * eps),
        sp.sqrt(dt * D**2 / eps) + sigma_s**2 * D**2 / eps**2,
    )


def corollary_3_steps(lam_: sp.Expr = 2 * delta_A) -> sp.Expr:
    r"""Local gradient calls per round of FGM+OGM-G (Corollary 3): the K with
    :math:`2(L+\lambda)/((K/2+1)^2/\sqrt2) \le \lambda/3`, i.e. K ≈ 2(√(6√2(L+λ)/λ) − 1) = O(√(L/δ_A)).

    >>> sp.limit(corollary_3_steps() / sp.sqrt(L / delta_A), L, sp.oo)
    2*2**(1/4)*sqrt(3)
    """
    return 2 * (sp.sqrt(6 * sp.sqrt(2) * (L + lam_) / lam_) - 1)


def remark_19_steps(lam_: sp.Expr = 2 * delta_A) -> tuple[sp.Expr, sp.Expr]:
    r"""GD and FGM local steps sufficient for (C.4) (Remark 19): :math:`3(L+\lambda)/\lambda - 1` and
    :math:`2\sqrt{\kappa}\ln(3\sqrt{(L+\lambda)(L+2\lambda)}/\lambda)`, κ = (L+λ)/λ (μ = 0).

    >>> gd, fgm = remark_19_steps()
    >>> sp.limit(gd / (L / delta_A), L, sp.oo), sp.limit(fgm / (sp.sqrt(L / delta_A) * sp.log(L / delta_A)), L, sp.oo)
    (3/2, sqrt(2))
    """
    kappa = (L + lam_) / lam_
    return 3 * (L + lam_) / lam_ - 1, 2 * sp.sqrt(kappa) * sp.log(3 * sp.sqrt((L + lam_) * (L + 2 * lam_)) / lam_)


# --------------------------------------------------------------------------------------------
# Table 1
# --------------------------------------------------------------------------------------------

_log_eps = sp.log(1 / eps)
#: rows of Table 1: (general-convex rounds, local grads/round, strongly-convex rounds, local grads/round, guarantee)
TABLE_1: dict[str, dict] = {
    "Scaffnew": {
        "gc_rounds": None,
        "gc_local": None,
        "sc_rounds": sp.sqrt(L / mu) * _log_eps,
        "sc_local": sp.sqrt(L / mu),
        "guarantee": "in expectation",
    },
    "SONATA": {
        "gc_rounds": None,
        "gc_local": None,
        "sc_rounds": delta_B / mu * _log_eps,
        "sc_local": None,
        "guarantee": "deterministic",
    },
    "DANE": {
        "gc_rounds": delta_A * D**2 / eps,
        "gc_local": sp.sqrt(L / delta_A) * sp.log(1 / eps),
        "sc_rounds": delta_A / mu * _log_eps,
        "sc_local": sp.sqrt(L / delta_A) * sp.log(1 / eps),
        "guarantee": "deterministic",
    },
    "FedRed": {
        "gc_rounds": delta_A * D**2 / eps,
        "gc_local": L / delta_A,
        "sc_rounds": delta_A / mu * _log_eps,
        "sc_local": L / delta_A,
        "guarantee": "in expectation",
    },
    "S-DANE": {
        "gc_rounds": delta_A * D**2 / eps,
        "gc_local": sp.sqrt(L / delta_A),
        "sc_rounds": delta_A / mu * sp.log(1 + mu * D**2 / eps),
        "sc_local": sp.sqrt(L / delta_A),
        "guarantee": "deterministic",
    },
    "Inexact Acc-SONATA": {
        "gc_rounds": None,
        "gc_local": None,
        "sc_rounds": sp.sqrt(delta_B / mu) * _log_eps,
        "sc_local": None,
        "guarantee": "deterministic",
    },
    "Acc-Extragradient": {
        "gc_rounds": sp.sqrt(delta_B * D**2 / eps),
        "gc_local": sp.sqrt(L / delta_B),
        "sc_rounds": sp.sqrt(delta_B / mu) * _log_eps,
        "sc_local": sp.sqrt(L / delta_B),
        "guarantee": "deterministic",
    },
    "Catalyzed SVRP": {
        "gc_rounds": None,
        "gc_local": None,
        "sc_rounds": (n + n ** sp.Rational(3, 4) * sp.sqrt(delta_B / mu)) * _log_eps,
        "sc_local": None,
        "guarantee": "in expectation",
    },
    "AccSVRS": {
        "gc_rounds": None,
        "gc_local": None,
        "sc_rounds": (n + n ** sp.Rational(3, 4) * sp.sqrt(delta_A / mu)) * _log_eps,
        "sc_local": None,
        "guarantee": "in expectation",
    },
    "Acc-S-DANE": {
        "gc_rounds": sp.sqrt(delta_A * D**2 / eps),
        "gc_local": sp.sqrt(L / delta_A),
        "sc_rounds": sp.sqrt(delta_A / mu) * sp.log(1 + mu * D**2 / eps),
        "sc_local": sp.sqrt(L / delta_A),
        "guarantee": "deterministic",
    },
}
TABLE_1_PROVENANCE = {
    **{
        k: "rebuilt from the cited work (the converted table lost its body); not a statement of this paper"
        for k in TABLE_1
    },
    "S-DANE": "this paper's Theorem 1 / Corollaries 3 and 18",
    "Acc-S-DANE": "this paper's Theorem 6 / Corollaries 3 and 25",
}


def order(expr: sp.Expr, var: sp.Symbol, point: sp.Expr = 0) -> sp.Expr:
    """The leading term of ``expr`` as ``var`` → ``point`` (a power times logs), constants dropped.

    >>> order(3 * D**2 * delta_A / eps + 5, eps)
    1/eps
    """
    lead = sp.limit(sp.log(expr) / sp.log(var), var, point) if point in (0, sp.oo) else None
    if lead is None or not lead.is_finite:
        raise ValueError(f"cannot read the order of {expr} as {var} -> {point}")
    power = var**lead
    rest = sp.limit(expr / power, var, point)
    if rest.is_finite and rest != 0:
        return power
    return sp.simplify(power * sp.log(1 / var) if point == 0 else power * sp.log(var))


def same_order(a: sp.Expr, b: sp.Expr, var: sp.Symbol, point: sp.Expr = 0) -> bool:
    """Whether a/b tends to a finite non-zero constant as ``var`` → ``point``.

    >>> same_order(corollary_18(), delta_A / mu * sp.log(1 / eps), eps)
    True
    """
    ratio = sp.limit(sp.simplify(a / b), var, point)
    return bool(ratio.is_finite and ratio != 0)
