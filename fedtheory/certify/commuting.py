r"""Certified worst floor of LocalUpdate over d = 1 (equivalently, for two clients, commuting) federations.

The all-dimension certificate (:func:`~fedtheory.certify.federated_pep.certify_local_update`) is dimension-free;
Theorem 5 of Charles & Konečný (arXiv:2103.05032) describes d = 1. Here the d = 1 class is certified on its own:
two clients f_i = λ_i(x − c_i)²/2, λ_i ∈ [μ, L], |c_i − o| ≤ C, weights p. The fixed point and the minimizer are

    x̄ = Σ p_i b_i c_i / Σ p_i b_i,   x* = Σ p_i λ_i c_i / Σ p_i λ_i,   b_i = b(λ_i) (the message eigenvalue),

so with c = (C, −C) (|c_1 − c_2| ≤ 2C is all that matters) the floor is

    V(λ_1, λ_2) = 2C p_1p_2 |r_1 − r_2| λ_1λ_2 / ((p_1λ_1 + p_2λ_2)(p_1λ_1r_1 + p_2λ_2r_2)),   r_i = b_i/λ_i,

Theorem 5's mean-absolute-deviation form 2Cπ_1π_2|r_1 − r_2|/(π_1r_1 + π_2r_2) with π_i ∝ p_iλ_i
(:func:`theorem5_form`; the two agree identically, checked in sympy by the tests). Two commuting clients in any
dimension reduce to d = 1: in the shared eigenbasis coordinate j of x̄ − x* is δ_j(c_1j − c_2j), so the floor is at
most max_j|δ_j|·‖c_1 − c_2‖.

The upper bound is a branch and bound over boxes of (log λ_1, log λ_2) with *rigorous* box bounds: for weights
θ_k ≥ 0, r(λ) = q(1 − γ(λ + α)) = Σθ_k(1 − γ(λ + α))^{k−1} is non-increasing in λ on [μ, L] (γ(L + α) < 1), so on
[l, h] it lies in [r(h), r(l)], and every factor of V is bounded by its values at the box ends. A box whose bound is
below the best value found (times 1 + ``rtol``) is dropped; the rest are split in four. The result is a
:class:`~fedtheory.certify.certificate.Certificate` whose ``value`` is the largest bound left (valid for every
(λ_1, λ_2)), and whose ``lower`` is what the real driver reaches on the best box's federation.

>>> cert = certify_floor_d1(1.0, 100.0, 10, 0.005)
>>> cert.status, round(cert.lower, 4), cert.gap < 1e-6
('certified', 0.456, True)
>>> from fedtheory.algorithms.theta import Theta
>>> free = certify_floor_d1(1.0, 100.0, 10, 0.005, p="free")          # the sup over the weights as well
>>> abs(free.value / lemma12_form(1.0, 100.0, 0.005, Theta.uniform(10)) - 1) < 1e-6
True
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from fedtheory.certify.certificate import Certificate, check_hypotheses, message_eigenvalue, replay_floor, theta_weights

__all__ = ["certify_floor_d1", "theorem5_form", "d1_floor_value", "lemma12_form"]

#: relative slack on every box bound, above float64 rounding of the handful of operations that form it
_ROUND = 1e-12


def _r(lam: np.ndarray, gamma: float, th, alpha: float) -> np.ndarray:
    return message_eigenvalue(lam, gamma, th, alpha) / lam


def d1_floor_value(l1: Any, l2: Any, gamma: float, th, alpha: float, p: np.ndarray, C: float) -> np.ndarray:
    """V(λ_1, λ_2) of the module docstring (vectorized), from the fixed-point and minimizer formulas.

    >>> from fedtheory.algorithms.theta import Theta
    >>> float(d1_floor_value(2.0, 2.0, 0.1, Theta.uniform(3), 0.0, np.array([0.5, 0.5]), 1.0))   # equal clients
    0.0
    """
    l1, l2 = np.asarray(l1, dtype=np.float64), np.asarray(l2, dtype=np.float64)
    r1, r2 = _r(l1, gamma, th, alpha), _r(l2, gamma, th, alpha)
    return (
        2 * C * p[0] * p[1] * np.abs(r1 - r2) * l1 * l2 / ((p[0] * l1 + p[1] * l2) * (p[0] * l1 * r1 + p[1] * l2 * r2))
    )


def theorem5_form(l1: float, l2: float, gamma: float, th, alpha: float, p: Any, C: float) -> float:
    """Theorem 5's form 2Cπ_1π_2|r_1 − r_2|/(π_1r_1 + π_2r_2), π_i = p_iλ_i/Σp_jλ_j (an independent evaluation).

    >>> from fedtheory.algorithms.theta import Theta
    >>> th = Theta.uniform(10)
    >>> p = np.array([0.5, 0.5])
    >>> abs(theorem5_form(20.0, 100.0, 0.005, th, 0.0, p, 1.0) - float(d1_floor_value(20.0, 100.0, 0.005, th, 0.0, p, 1.0))) < 1e-15
    True
    """
    lam = np.array([l1, l2], dtype=np.float64)
    pp = np.asarray(p, dtype=np.float64)
    r = _r(lam, gamma, th, alpha)
    pi = pp * lam / float(pp @ lam)
    return float(2 * C * pi[0] * pi[1] * abs(r[0] - r[1]) / (pi[0] * r[0] + pi[1] * r[1]))


def _pi_max(x, y, lo, hi):
    """max over π ∈ [lo, hi] of π(1 − π)(x − y)/(πx + (1 − π)y) for x > y > 0 (else 0): the function is unimodal
    in π with peak π* = √y/(√x + √y) (its derivative's numerator is y − 2πy − π²(x − y)), so clip π* to [lo, hi]."""
    ok = x > y
    xs, ys = np.where(ok, x, 2.0), np.where(ok, y, 1.0)
    pi = np.clip(np.sqrt(ys) / (np.sqrt(xs) + np.sqrt(ys)), lo, hi)
    return np.where(ok, pi * (1 - pi) * (xs - ys) / (pi * xs + (1 - pi) * ys), 0.0)


def _box_bound(lo1, hi1, lo2, hi2, plo, phi, gamma, th, alpha, C, weights: str):
    """A rigorous upper bound of V on each box [lo1, hi1] × [lo2, hi2] × [plo, phi]: r is non-increasing and every
    factor positive. Third coordinate p_1 (``weights="p"``): the product p_1p_2 is largest at the point of
    [plo, phi] nearest ½ and the denominators are linear in p_1, so smallest at an end. Third coordinate Theorem 5's
    π_1 (``"pi"``): V = 2Cπ_1π_2(r_1 − r_2)/(π_1r_1 + π_2r_2) grows with r_1 and falls with r_2 (r_1 > r_2; the
    other order by symmetry), so its box maximum is :func:`_pi_max` at (r_1 high, r_2 low)."""
    r1lo, r1hi = _r(hi1, gamma, th, alpha), _r(lo1, gamma, th, alpha)
    r2lo, r2hi = _r(hi2, gamma, th, alpha), _r(lo2, gamma, th, alpha)
    if weights == "pi":
        return 2 * C * np.maximum(_pi_max(r1hi, r2lo, plo, phi), _pi_max(r2hi, r1lo, 1 - phi, 1 - plo)) * (1 + _ROUND)
    diff = np.maximum(r1hi - r2lo, r2hi - r1lo)
    pm = np.clip(0.5, plo, phi)
    num = 2 * C * pm * (1 - pm) * diff * hi1 * hi2
    den1 = np.minimum(plo * lo1 + (1 - plo) * lo2, phi * lo1 + (1 - phi) * lo2)
    den2 = np.minimum(plo * lo1 * r1lo + (1 - plo) * lo2 * r2lo, phi * lo1 * r1lo + (1 - phi) * lo2 * r2lo)
    return num / (den1 * den2) * (1 + _ROUND)


def lemma12_form(mu: float, L: float, gamma: float, th, alpha: float = 0.0, C: float = 1.0) -> float:
    """2C(√b − √a)/(√b + √a) with [a, b] the range of the distortion eigenvalue q on [μ, L] (Lemma 12, from
    Theorem 5): by Theorem 5's equality case (r supported on {a, b}) it is the sup of the d = 1 floor over two
    clients *and* their weights p.

    >>> from fedtheory.algorithms.theta import Theta
    >>> round(lemma12_form(1.0, 4.0, 1 / 8, Theta.last(2)), 6)      # a = 1/2, b = 7/8
    0.277997
    """
    r = _r(np.array([mu, L], dtype=np.float64), gamma, th, alpha)
    a, b = float(r.min()), float(r.max())
    return 2 * C * (math.sqrt(b) - math.sqrt(a)) / (math.sqrt(b) + math.sqrt(a))


def certify_floor_d1(
    mu: float,
    L: float,
    K: int,
    gamma: float,
    *,
    theta: Any = "1:K",
    alpha: float = 0.0,
    p: Any = None,
    C: float = 1.0,
    rtol: float = 1e-7,
    max_boxes: int = 2_000_000,
):
    r"""Certified sup of ‖x̄ − x*‖ over two d = 1 (or commuting) clients: branch and bound (module docstring).

    ``value``: the upper bound (valid over all (λ_1, λ_2) ∈ [μ, L]²); ``lower``: the floor the real driver
    reaches on the best instance found; ``gap`` ≤ ``rtol`` unless the box budget ran out (``status`` then stays
    "certified" — the bound is valid, only looser — and ``notes`` say so). Weights θ_k must be ≥ 0 (the bound
    uses the monotonicity of r); a hypothesis outside the class raises ValueError naming it. ``p="free"`` takes the
    sup over the weights too (a third box coordinate p_1 ∈ [0, 1]); by Theorem 5's equality case that sup is
    :func:`lemma12_form`.

    >>> c = certify_floor_d1(1.0, 4.0, 1, 0.1)         # K = 1: gradient descent, floor 0
    >>> c.value < 1e-12, c.lower < 1e-12
    (True, True)
    """
    from fedtheory.problems.quadratic import QuadraticFederation

    t0 = time.perf_counter()
    if not (isinstance(C, (int, float, np.floating, np.integer)) and math.isfinite(float(C))):
        raise ValueError(f"C must be a finite number, got {C!r}")
    # the class's hypotheses, named as certify_local_update names them (two clients, the floor, C model)
    check_hypotheses(mu, L, K, gamma, alpha, 2, None, C, None, "floor", "quadratic", None, None, None, None, theta)
    th = theta_weights(theta, int(K))
    if np.any(np.asarray(th.weights) < 0):
        raise ValueError(f"hypothesis theta_k >= 0 violated (the box bounds use it): theta={th.weights.tolist()}")
    free = isinstance(p, str) and p == "free"
    if isinstance(p, str) and not free:
        raise ValueError(f"p must be 2 weights or 'free', got {p!r}")
    pp = np.array([0.5, 0.5]) if (p is None or free) else np.asarray(p, dtype=np.float64)
    if pp.shape != (2,) or np.any(pp <= 0) or abs(pp.sum() - 1) > 1e-9:
        raise ValueError(f"p must be 2 positive weights summing to 1 (two clients), got {np.asarray(p).tolist()}")
    mu, L, gamma, alpha, C = float(mu), float(L), float(gamma), float(alpha), float(C)

    def value(l1, l2, w1):
        if free:  # w1 = π_1: Theorem 5's weights, any π_1 ∈ [0, 1] is reached by some p
            r1, r2 = _r(l1, gamma, th, alpha), _r(l2, gamma, th, alpha)
            return 2 * C * w1 * (1 - w1) * np.abs(r1 - r2) / (w1 * r1 + (1 - w1) * r2)
        return d1_floor_value(l1, l2, gamma, th, alpha, (w1, 1 - w1), C)

    # boxes over (log λ_1, log λ_2, w): 64 × 64 to start; w = p_1 is a point when p is fixed, and when p is free
    # w = π_1 ∈ [0, 1] (π_i ∝ p_iλ_i), maximized exactly in each box (_pi_max), so never split
    edges = np.linspace(math.log(mu), math.log(L), 65)
    pe = np.array([0.0, 1.0]) if free else np.array([pp[0], pp[0]])
    lo1, lo2, plo = np.meshgrid(edges[:-1], edges[:-1], pe[:-1], indexing="ij")
    hi1, hi2, phi = np.meshgrid(edges[1:], edges[1:], pe[1:], indexing="ij")
    boxes = np.stack([a.ravel() for a in (lo1, hi1, lo2, hi2, plo, phi)])
    best, arg = -math.inf, (mu, mu, float(pp[0]))
    dropped_max, levels, exhausted = 0.0, 0, False
    while boxes.shape[1]:
        # widen each box by a few ulps: exp of adjacent log-edges must not leave a gap between boxes
        e = np.exp(boxes[:4])
        e[[0, 2]] = np.maximum(e[[0, 2]] * (1 - 1e-15), mu)
        e[[1, 3]] = np.minimum(e[[1, 3]] * (1 + 1e-15), L)
        U = _box_bound(e[0], e[1], e[2], e[3], boxes[4], boxes[5], gamma, th, alpha, C, "pi" if free else "p")
        # candidates: each box's centre and λ-corners (the worst case often sits on λ = μ or λ = L)
        c1 = np.concatenate([np.exp(0.5 * (boxes[0] + boxes[1])), e[0], e[0], e[1], e[1]])
        c2 = np.concatenate([np.exp(0.5 * (boxes[2] + boxes[3])), e[2], e[3], e[2], e[3]])
        if free:  # the best π_1 for these λ (_pi_max's peak, the same formula in either order)
            s1, s2 = np.sqrt(_r(c1, gamma, th, alpha)), np.sqrt(_r(c2, gamma, th, alpha))
            c3 = s2 / (s1 + s2)
        else:
            c3 = np.full(c1.shape, float(pp[0]))
        Vm = value(c1, c2, c3)
        k = int(np.argmax(Vm))
        if Vm[k] > best:
            best, arg = float(Vm[k]), (float(c1[k]), float(c2[k]), float(c3[k]))
        keep = U > best * (1 + rtol)
        if np.any(~keep):
            dropped_max = max(dropped_max, float(U[~keep].max()))
        boxes = boxes[:, keep]
        if boxes.shape[1] == 0:
            break
        if 4 * boxes.shape[1] > max_boxes:
            exhausted = True
            dropped_max = max(dropped_max, float(U[keep].max()))
            break
        children = [boxes]
        for axis in (0, 2):
            split = []
            for b in children:
                mid = 0.5 * (b[axis] + b[axis + 1])
                left, right = b.copy(), b.copy()
                left[axis + 1], right[axis] = mid, mid
                split += [left, right]
            children = split
        boxes = np.concatenate(children, axis=1)
        levels += 1
    upper = max(best, dropped_max)
    l1, l2, w1 = arg
    pp = np.array([w1 / l1, (1 - w1) / l2]) if free else np.array([w1, 1 - w1])
    pp = pp / pp.sum()
    prob = QuadraticFederation(A=[[[l1]], [[l2]]], c=[[C], [-C]], p=pp.tolist())
    replay, settle, rounds = replay_floor(prob, mu, L, gamma, th, alpha, "C")
    lower = replay * C
    notes = [f"{levels} refinement levels"]
    status = "certified"
    if exhausted:
        notes.append(f"box budget {max_boxes} reached: the bound is valid but looser than rtol={rtol:g}")
    if lower > upper * (1 + 1e-9) + 1e-15:
        status = "unreliable"
        notes.append(f"driver floor {lower!r} above the branch-and-bound value {upper!r}")
    hyp = {
        "mu": mu,
        "L": L,
        "K": int(K),
        "gamma": gamma,
        "theta": th.to_json(),
        "alpha": alpha,
        "clients": 2,
        "p": "free" if free else pp.tolist(),
        "C": C,
        "measure": "floor",
        "function_class": "quadratic",
        "dimension": 1,
        "engine": "branch-and-bound",
    }
    instance = {
        "problem": prob.to_json(),
        "theta": th.to_json(),
        "alpha": alpha,
        "gamma": gamma,
        "x0": "x_star",
        "rounds": rounds,
        "lambdas": [l1, l2],
        "p": pp.tolist(),
        "closed_form_value": best,
        "driver_distance_to_fixed_point": settle,
    }
    return Certificate(
        value=upper,
        lower=lower,
        gap=(upper - lower) / upper if upper > 0 else 0.0,
        instance=instance,
        hypotheses=hyp,
        claim_id="localupdate/theorem-5/certified-d1",
        solver="branch-and-bound (interval bounds)",
        status=status,
        seconds=time.perf_counter() - t0,
        notes="; ".join(notes),
    )
