r"""The accuracy floor of FedAvg with exact local solves: a proved, tight replacement for Lemma 5 in that limit.

Charles & Konečný (arXiv:2103.05032) bound how far LocalUpdate's fixed point x̄ sits from the minimizer x* of
F = Σ p_i f_i (Lemma 5: 8C(√b − √a)/(√b + √a)); the bound fails for d ≥ 2 (fedtheory's localupdate claims). As
Kγμ → ∞ every client's message becomes (x − c_i)/γ, so x̄ = Σ p_i c_i, the average of the local minimizers
(one-shot averaging). For two clients with weights (p, 1 − p), μI ⪯ A_i ⪯ LI, ‖c_i − o‖ ≤ C, in any dimension:

    ‖x̄ − x*‖ ≤ C·√(p(1 − p))·(κ − 1)/√κ,    κ = L/μ,                                            (★)

with equality in every d ≥ 2 exactly when |1 − 2p|√κ ≤ (κ − 1)√(p(1 − p)) — at p = ½ (C(κ − 1)/(2√κ)) and, for
any p, once κ is large enough; with commuting A_i (d = 1) the worst case at p = ½ is C(κ − 1)/(κ + 1), smaller by
the factor 2√κ/(κ + 1).

Proof (each algebraic step is checked by :func:`proof_steps`):

1. S(x̄ − x*) = p(1 − p)(A_2 − A_1)v with S = pA_1 + (1 − p)A_2, v = c_1 − c_2, so x̄ − x* = p(1 − p)y with
   Sy = (A_2 − A_1)v.
2. Put z = A_1(py + v); then A_1(py + v) = A_2(v − (1 − p)y) = z, and with P = A_1⁻¹, Q = A_2⁻¹:
   y = (P − Q)z, v = ((1 − p)P + pQ)z (z ↦ v is a bijection). So ‖y‖/‖v‖ = ‖(P − Q)z‖/‖((1 − p)P + pQ)z‖.
3. P, Q have spectra in [1/L, 1/μ], so with c = (1/μ + 1/L)/2, r = (1/μ − 1/L)/2 and ‖z‖ = 1:
   Pz = cz + ra, Qz = cz + rb with ‖a‖, ‖b‖ ≤ 1 (‖P − cI‖ ≤ r).
4. With h = a − b, m = (1 − p)a + pb: (1 − p)‖a‖² + p‖b‖² = ‖m‖² + p(1 − p)‖h‖², so
   ‖m‖² ≤ 1 − p(1 − p)‖h‖².
5. ‖y‖/‖v‖ = r‖h‖/‖cz + rm‖ ≤ ‖h‖/(t − ‖m‖) with t = c/r = (κ + 1)/(κ − 1) > 1 ≥ ‖m‖; with
   s = √(p(1 − p))‖h‖ ≤ 1 this is ≤ s/(√(p(1 − p))(t − √(1 − s²))).
6. Lagrange's identity (√(1 − s²) + s·w)² + (w√(1 − s²) − s)² = (1 + w²) for w = √(t² − 1) gives
   √(1 − s²) + s·w ≤ t, i.e. s/(t − √(1 − s²)) ≤ 1/w.
7. 1/√(t² − 1) = (κ − 1)/(2√κ), and ‖v‖ ≤ 2C: ‖x̄ − x*‖ ≤ p(1 − p)·2C·(κ − 1)/(2√κ·√(p(1 − p))) = (★).
8. Equality needs ‖a‖ = ‖b‖ = 1, m = −σz with σ = 1/t and s = √(1 − 1/t²) (so ‖h‖ = η = s/√(p(1 − p))); the
   two unit norms hold iff 2⟨m, h⟩ = (1 − 2p)η², i.e. ⟨z, h⟩ = −(1 − 2p)η²t/2, possible iff
   |1 − 2p|ηt/2 ≤ 1, which is |1 − 2p|√κ ≤ (κ − 1)√(p(1 − p)). Then P = cI + rR_a, Q = cI + rR_b with R_a, R_b
   the reflections taking z to a and to b (eigenvalues ±1, so A_i has spectrum {μ, L}): :func:`worst_instance`.

>>> round(averaging_floor_bound(1.0, 100.0), 12)        # C(κ − 1)/(2√κ) at κ = 100
4.95
>>> all(proof_steps().values())
True
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

__all__ = ["attained", "averaging_floor_bound", "commuting_averaging_floor", "proof_steps", "worst_instance"]


def _check_class(mu: float, L: float, p: float, C: float) -> None:
    if not (math.isfinite(mu) and math.isfinite(L) and 0 < mu <= L):
        raise ValueError(f"hypothesis 0 < mu <= L violated: mu={mu!r}, L={L!r}")
    if not 0 < p < 1:
        raise ValueError(f"hypothesis 0 < p < 1 (two client weights p, 1 - p) violated: p={p!r}")
    if not (math.isfinite(C) and C > 0):
        raise ValueError(f"hypothesis C > 0 violated: C={C!r}")


def averaging_floor_bound(mu: float, L: float, p: float = 0.5, C: float = 1.0) -> float:
    """The right-hand side of (★): C√(p(1 − p))(κ − 1)/√κ, the tight worst floor at p = ½ (module docstring).

    >>> averaging_floor_bound(1.0, 1.0)                     # identical curvature: the average is x*
    0.0
    >>> averaging_floor_bound(1.0, 4.0, p=1.5)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis 0 < p < 1 (two client weights p, 1 - p) violated: p=1.5
    """
    _check_class(mu, L, p, C)
    kappa = L / mu
    return C * math.sqrt(p * (1 - p)) * (kappa - 1) / math.sqrt(kappa)


def commuting_averaging_floor(mu: float, L: float, C: float = 1.0) -> float:
    """The worst floor of one-shot averaging with commuting A_i (equivalently d = 1), p = ½: C(κ − 1)/(κ + 1)
    (coordinatewise x̄ − x* = (a_2 − a_1)(c_1 − c_2)/(2(a_1 + a_2)), largest at {a_1, a_2} = {μ, L}).

    >>> round(commuting_averaging_floor(1.0, 3.0), 12)
    0.5
    """
    _check_class(mu, L, 0.5, C)
    return C * (L - mu) / (L + mu)


def proof_steps() -> dict[str, bool]:
    """Each algebraic step of the module's proof, checked exactly with sympy (True = the residual is 0).

    Steps 1–2 use non-commuting symbols (matrices that need not commute; P·A_1 = A_1·P = I imposed by
    substitution); steps 4 and 6 are polynomial identities (4 holds coordinatewise, hence for inner products);
    step 7 simplifies with κ > 1.

    >>> sorted(proof_steps())
    ['1 fixed-point difference', '2 change of variables', '4 weighted parallelogram', '6 Lagrange identity', '7 closed form']
    """
    A1, A2, P, Q, c1, c2, z = sp.symbols("A1 A2 P Q c1 c2 z", commutative=False)
    p = sp.Symbol("p", positive=True)
    S = p * A1 + (1 - p) * A2
    step1 = sp.expand(
        S * (p * c1 + (1 - p) * c2) - (p * A1 * c1 + (1 - p) * A2 * c2) - p * (1 - p) * (A2 - A1) * (c1 - c2)
    )
    # y = (P − Q)z, v = ((1 − p)P + pQ)z solve S y = (A_2 − A_1) v
    step2 = sp.expand(S * (P - Q) * z - (A2 - A1) * ((1 - p) * P + p * Q) * z).subs({A1 * P: 1, A2 * Q: 1})
    a, b, s, w = sp.symbols("a b s w", real=True)
    step4 = sp.expand((1 - p) * a**2 + p * b**2 - ((1 - p) * a + p * b) ** 2 - p * (1 - p) * (a - b) ** 2)
    root = sp.sqrt(1 - s**2)
    step6 = sp.expand((root + s * w) ** 2 + (w * root - s) ** 2 - (root**2 + s**2) * (1 + w**2))
    # κ = 1 + e with e > 0, so that √((κ+1)²/(κ−1)² − 1) simplifies without |κ − 1|
    e = sp.Symbol("e", positive=True)
    kap = 1 + e
    t = (kap + 1) / (kap - 1)
    step7 = sp.simplify(1 / sp.sqrt(t**2 - 1) - (kap - 1) / (2 * sp.sqrt(kap)))
    return {
        "1 fixed-point difference": step1 == 0,
        "2 change of variables": sp.expand(step2) == 0,
        "4 weighted parallelogram": step4 == 0,
        "6 Lagrange identity": sp.simplify(step6) == 0,
        "7 closed form": step7 == 0,
    }


def _reflection(z: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The Householder reflection taking the unit vector z to the unit vector a (symmetric, eigenvalues ±1)."""
    w = z - a
    nw = float(w @ w)
    if nw < 1e-300:
        return np.eye(len(z))
    return np.eye(len(z)) - 2.0 * np.outer(w, w) / nw


def attained(mu: float, L: float, p: float = 0.5) -> bool:
    """Whether (★) holds with equality (in d ≥ 2): |1 − 2p|√κ ≤ (κ − 1)√(p(1 − p)) (step 8).

    >>> attained(1.0, 10.0, 0.25), attained(1.0, 2.0, 0.25), attained(1.0, 2.0, 0.5)
    (True, False, True)
    """
    _check_class(mu, L, p, 1.0)
    kappa = L / mu
    return abs(1 - 2 * p) * math.sqrt(kappa) <= (kappa - 1) * math.sqrt(p * (1 - p))


def worst_instance(mu: float, L: float, C: float = 1.0, d: int = 2, p: float = 0.5):
    """The federation attaining (★) (step 8): A_1, A_2 with spectrum {μ, L, L, ...} and c_1, c_2 = ±v/2,
    ‖v‖ = 2C, weights (p, 1 − p), as a :class:`~fedtheory.problems.quadratic.QuadraticFederation` (o = 0).
    ValueError where (★) is not attained (:func:`attained`).

    >>> prob = worst_instance(1.0, 100.0)
    >>> round(float(np.linalg.norm(prob.c.mean(axis=0) - prob.x_star())), 10)
    4.95
    """
    from fedtheory.problems.quadratic import QuadraticFederation

    _check_class(mu, L, p, C)
    if isinstance(d, bool) or int(d) != d or d < 2:
        raise ValueError(f"the attaining instance needs d >= 2 (in d = 1 the worst case is smaller), got d={d!r}")
    if not attained(mu, L, p):
        raise ValueError(
            f"(★) is not attained: |1 - 2p|·sqrt(kappa) <= (kappa - 1)·sqrt(p(1 - p)) violated at "
            f"p={p!r}, kappa={L / mu!r}"
        )
    d = int(d)
    lo, hi = 1.0 / L, 1.0 / mu
    c, r = (lo + hi) / 2, (hi - lo) / 2
    zv, ev = np.eye(d)[0], np.eye(d)[1]
    if r == 0:  # μ = L: every client has the same curvature, the floor is 0
        a = b = zv
    else:
        t = c / r
        sigma = 1.0 / t
        eta = math.sqrt(1.0 - sigma**2) / math.sqrt(p * (1 - p))
        hz = -(1 - 2 * p) * eta**2 * t / 2
        h = hz * zv + math.sqrt(max(eta**2 - hz**2, 0.0)) * ev
        a, b = -sigma * zv + p * h, -sigma * zv - (1 - p) * h
    Pm = c * np.eye(d) + r * _reflection(zv, a)
    Qm = c * np.eye(d) + r * _reflection(zv, b)
    # the directions outside span(z, e) get curvature L (any value in [μ, L] works: v has no component there)
    A = []
    for M in (Pm, Qm):
        ew, V = np.linalg.eigh(M)
        inv = 1.0 / ew
        inv[2:] = L
        A.append((V * inv) @ V.T)
    v = ((1 - p) * Pm + p * Qm) @ zv
    v *= 2 * C / np.linalg.norm(v)
    return QuadraticFederation(A=np.array(A), c=np.array([v / 2, -v / 2]), p=[p, 1 - p])
