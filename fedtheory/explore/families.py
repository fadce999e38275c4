"""The classes a guarantee is stated for, as families of instances, and the probe that searches them.

A family is ``(size, decode)``: every z ∈ R^size decodes to a member of the class — a quadratic federation and a
start x_0 — at the class's constants, so the hypotheses hold by construction (μ and L attained, ‖c_i‖ ≤ C,
‖x_0 − x*‖ = D; for the DANE family δ_A-similar clients with equal weights). :func:`class_family` builds the
local-update classes (d = 1, commuting, general d ≥ 2), :func:`dane_family` the DANE family's;
:func:`probe_family` maximizes a score over a family (random draws, then Nelder–Mead), and
:func:`probe_lower_bound` is that probe maximizing the exact error of a setting after T rounds: the best lower
bound known on the worst case where no guarantee exists.

These sit below the advice (:mod:`fedtheory.explore.tuning` shows such a lower bound) and the simulation of advice
(:mod:`fedtheory.explore.simulation` runs the advice on a family's random and hardest members); they evaluate
settings through :mod:`fedtheory.explore.exact` only.

>>> size, decode = class_family("general", {"mu": 1.0, "L": 10.0, "C": 1.0, "D": 2.0})
>>> q, x0 = decode(np.random.default_rng(0).normal(size=size))
>>> q.n, q.d, round(q.mu, 12), round(q.L, 12)
(2, 2, 1.0, 10.0)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedtheory.explore.exact import exact_errors
from fedtheory.problems.quadratic import QuadraticFederation

__all__ = [
    "class_family",
    "encode_general",
    "two_client_weights",
    "dane_family",
    "near_attaining_dane",
    "probe_family",
    "probe_lower_bound",
]


def _unit(z: np.ndarray) -> np.ndarray:
    return (1 + np.sin(z)) / 2


def _federation(lam: np.ndarray, U: np.ndarray, c: np.ndarray, p: np.ndarray, checked: bool = True):
    order = np.argsort(lam, axis=1)
    lam = np.take_along_axis(lam, order, axis=1)
    U = np.stack([U[i][:, order[i]] for i in range(lam.shape[0])])
    A = np.einsum("nij,nj,nkj->nik", U, lam, U)
    A, p = 0.5 * (A + np.swapaxes(A, 1, 2)), p / p.sum()
    if checked:
        return QuadraticFederation(A=A, c=c, p=p, eigvals=lam, eigvecs=U)
    # a probe's search decodes hundreds of members of a family that satisfy every hypothesis by construction;
    # QuadraticFederation's checks (half of a decode's CPU) run on the member it reports (class_family). Its
    # fields as the checked constructor stores them, float for float: symmetrizing the exactly symmetric A again
    # changes no bit, and the other fields are float64 copies of these arrays
    q = object.__new__(_SearchMember)
    q.A, q.c, q.p, q.eigvals, q.eigvecs, q.solution = A, c, p, lam, U, None
    return q


class _SearchMember(QuadraticFederation):
    """A member of a family decoded unchecked for a probe's search (:func:`_federation`), whose x* is solved once:
    its decode places x_0 from x* and the exact score (:class:`~fedtheory.explore.exact.ExactModel`) needs it
    again."""

    solution: np.ndarray | None

    def x_star(self) -> np.ndarray:
        if self.solution is None:
            self.solution = super().x_star()
        return self.solution


def _rotation(phi: float) -> np.ndarray:
    return np.array([[math.cos(phi), -math.sin(phi)], [math.sin(phi), math.cos(phi)]])


def two_client_weights(consts: dict) -> np.ndarray:
    """Weights of a 2-client federation that *is* a member of the advice's federation class (n = ``clients``
    with ``weights``, default equal): merging the clients of a group into one client with the group's total weight
    is the inverse of splitting a client, so (Σ_{i<⌊n/2⌋} p_i, the rest) is an n-client instance with weights p.
    No ``clients`` (the certified default class, weights in (1/M)·Z): (½, ½).

    >>> two_client_weights({"clients": 3}).tolist(), two_client_weights({"clients": 2, "weights": [0.1, 0.9]}).tolist()
    ([0.3333333333333333, 0.6666666666666667], [0.1, 0.9])
    >>> two_client_weights({}).tolist()
    [0.5, 0.5]
    """
    n = consts.get("clients")
    if not n or int(n) < 2:
        return np.array([0.5, 0.5])
    n = int(n)
    p = np.full(n, 1.0 / n) if consts.get("weights") is None else np.asarray(consts["weights"], dtype=np.float64)
    first = float(p[: n // 2].sum())
    return np.array([first, 1.0 - first])


def class_family(
    function_class: str, consts: dict, *, equal_weights: bool = False, checked: bool = True
) -> tuple[int, Any]:
    """(size, decode): z ∈ R^size ↦ (federation, x_0) in the class at the constants (μ, L attained by one client,
    ‖c_i‖ ≤ C, ‖x_0 − x*‖ = D). d = 1: 3 clients; commuting: the advice's n clients (at most 6) in d = 2 with
    one shared basis; general: 2 clients, d = 2, each with its own rotation (the family of the refutations).
    ``equal_weights``: the general family's weights fixed to :func:`two_client_weights` (a member of the
    certified federation class: ½, ½ for equal weights and even n). ``checked=False``: the federations skip
    :class:`~fedtheory.problems.quadratic.QuadraticFederation`'s checks (the same floats, for a probe's search,
    whose reported member is decoded checked again: :func:`probe_lower_bound`).

    >>> size, decode = class_family("general", {"mu": 1.0, "L": 10.0, "C": 1.0, "D": 2.0})
    >>> q, x0 = decode(np.zeros(size))
    >>> q.n, q.d, round(float(np.linalg.norm(x0 - q.x_star())), 12), q.commuting()
    (2, 2, 2.0, True)
    """
    mu, L, C, D = consts["mu"], consts["L"], consts.get("C", 0.0), consts["D"]
    if function_class == "d1":
        n, d = 3, 1
    elif function_class == "commuting":
        n, d = min(int(consts.get("clients") or 2), 6), 2
    else:
        n, d = 2, 2
    rot = 0 if d == 1 else (1 if function_class == "commuting" else n)
    size = rot + n * d + n * (d + 1) + n + 1

    def decode(z: np.ndarray):
        z = np.asarray(z, dtype=np.float64)
        k = 0
        if d == 1:
            U = np.ones((n, 1, 1))
        else:
            phis = z[k : k + rot]
            k += rot
            U = np.stack([_rotation(float(phis[0 if rot == 1 else i])) for i in range(n)])
        lam = mu + (L - mu) * _unit(z[k : k + n * d]).reshape(n, d)
        k += n * d
        lam[0, 0], lam[-1, -1] = mu, L  # μ and L attained
        raw = z[k : k + n * (d + 1)].reshape(n, d + 1)
        k += n * (d + 1)
        direction = raw[:, :d] / np.maximum(np.linalg.norm(raw[:, :d], axis=1, keepdims=True), 1e-300)
        c = C * _unit(raw[:, d:]) * direction
        if equal_weights:
            w = two_client_weights(consts) if n == 2 else np.ones(n)
        else:
            w = np.exp(np.clip(z[k : k + n], -20, 20))
        k += n
        q = _federation(lam, U, c, w, checked)
        x_star = q.x_star()
        omega = float(z[k])
        e = np.array([math.cos(omega), math.sin(omega)])[:d] if d == 2 else np.array([1.0 if omega >= 0 else -1.0])
        return q, x_star + D * e

    return size, decode


def encode_general(q, x0: np.ndarray, consts: dict) -> np.ndarray | None:
    """A z of :func:`class_family`'s general family (2 clients, d = 2) near the federation ``q`` with start
    ``x0``, to start a probe from a known hard instance (a certificate's); None for another shape.

    >>> size, decode = class_family("general", {"mu": 1.0, "L": 10.0, "C": 1.0, "D": 2.0})
    >>> z = np.random.default_rng(0).normal(size=size)
    >>> q, x0 = decode(z)
    >>> q2, x2 = decode(encode_general(q, x0, {"mu": 1.0, "L": 10.0, "C": 1.0, "D": 2.0}))
    >>> bool(np.allclose(q2.A, q.A) and np.allclose(q2.c, q.c) and np.allclose(x2, x0))
    True
    """
    mu, L, C, D = consts["mu"], consts["L"], consts.get("C", 0.0), consts["D"]
    if q.n != 2 or q.d != 2 or not L > mu:
        return None
    lam, V = np.asarray(q.eigvals), np.array(q.eigvecs)
    phis = []
    for i in range(2):
        if np.linalg.det(V[i]) < 0:
            V[i][:, 1] *= -1  # same A_i, a rotation
        phis.append(math.atan2(V[i][1, 0], V[i][0, 0]))
    zl = np.arcsin(np.clip(2 * (lam - mu) / (L - mu) - 1, -1, 1))
    c = np.asarray(q.c)
    r = np.linalg.norm(c, axis=1)
    raw = np.concatenate(
        [
            np.where(r[:, None] > 0, c / np.maximum(r, 1e-300)[:, None], 1.0),
            np.arcsin(np.clip(2 * r / max(C, 1e-300) - 1, -1, 1))[:, None],
        ],
        axis=1,
    )
    e = (x0 - q.x_star()) / max(D, 1e-300)
    return np.concatenate([phis, zl.ravel(), raw.ravel(), np.log(np.asarray(q.p)), [math.atan2(e[1], e[0])]])


def probe_family(score, size: int, decode, seed: Any, budget: str = "normal", starts=()):
    """The probe (:func:`fedtheory.certify.probe.probe`: random draws, then Nelder–Mead) maximizing
    ``score(federation, x0)`` over a family ``(size, decode)`` of :func:`class_family` or :func:`dane_family`,
    from ``starts`` (z vectors) besides its own; ``budget``: ``"normal"`` (96 draws, 4 starts of 150
    evaluations), ``"small"`` (24 draws, 2 starts of 60) or ``"tiny"`` (16 draws, 2 starts of 30).

    >>> size, decode = class_family("d1", {"mu": 1.0, "L": 4.0, "C": 1.0, "D": 1.0})
    >>> res = probe_family(lambda q, x0: float(q.L), size, decode, seed=0, budget="tiny")
    >>> res.worst_value                                   # L is attained by construction in every member
    4.0
    """
    # the probe's modules load only where a probe runs (its Nelder–Mead needs no scipy.optimize: see nelder_mead)
    from fedtheory.certify.params import Custom
    from fedtheory.certify.probe import probe

    # "tiny": the DANE family's probe, whose every evaluation runs the driver with its local solver
    n_random, n_starts, fev = {"normal": (96, 4, 150), "small": (24, 2, 60), "tiny": (16, 2, 30)}[budget]
    res = probe(
        lambda inst: score(*inst),
        Custom(size, decode),
        seed=seed,
        n_random=n_random,
        n_starts=n_starts,
        maxiter=fev,
        options={"maxfev": fev},
        starts=starts,
    )
    return res


def probe_lower_bound(
    consts: dict, setting: dict, T: int, *, seed: Any = 0, function_class: str = "general", budget: str = "normal"
) -> dict:
    """The largest ‖x_T − x*‖ a probe finds in the class at ``setting`` (complete, server included): a lower
    bound on the worst case (any guarantee must be at least this). Returns value, the instance (JSON,
    replayable) and a source line. ``budget``: ``"normal"`` (96 draws, 4 Nelder–Mead starts of 150
    evaluations) or ``"small"`` (24 draws, 2 starts of 60: what :func:`~fedtheory.explore.tuning.tune`
    spends to show a lower bound in about a tenth of a second).

    >>> lb = probe_lower_bound({"mu": 1.0, "L": 10.0, "C": 1.0, "D": 1.0},
    ...                        {"theta": "uniform", "K": 1, "gamma": 0.0, "alpha": 0.0, "server": "gd",
    ...                         "eta": 2 / 11, "beta": 0.0}, 5)
    >>> lb["value"] <= (9 / 11) ** 5 + 1e-12       # K = 1: GD, contraction (κ − 1)/(κ + 1) per round
    True
    """
    size, decode = class_family(function_class, consts, checked=False)
    res = probe_family(lambda q, x0: float(exact_errors(q, x0, setting, T)[-1]), size, decode, seed, budget)
    q, x0 = class_family(function_class, consts)[1](np.asarray(res.worst_z))  # the reported member, checked
    return {
        "value": float(res.worst_value),
        "instance": {"federation": q.to_json(spectral=False), "x0": x0.tolist()},
        "source": f"probe over {res.n_evaluations} instances, {q.n} clients, d = {q.d}, exact closed form",
        "evaluations": res.n_evaluations,
    }


def dane_family(consts: dict, *, n: int = 2, d: int = 2) -> tuple[int, Any]:
    """(size, decode): z ∈ R^size ↦ (federation, x_0) in the class of S-DANE's and Acc-S-DANE's guarantees at the
    constants: n quadratic clients with μI ⪯ A_i ⪯ LI, each with its own rotation, equal weights p_i = 1/n (the
    theorems' f = (1/n)Σf_i: the drivers' uniform view rescales a client by n·p_i, which unequal weights would
    take out of [μ, L] and past δ_A), δ_A(q) ≤ δ_A (the deviations A_i − Ā shrunk toward Ā when larger: a
    convex combination of A_i and Ā, so the spectra stay in [μ, L]) and ‖x_0 − x*‖ = D. The centres are 0
    (x* = 0): from x*, every local problem of the DANE family is solved by x*, so the error dynamics do not
    depend on them.

    >>> size, decode = dane_family({"mu": 1.0, "L": 10.0, "delta_A": 0.5, "D": 2.0})
    >>> q, x0 = decode(np.random.default_rng(0).normal(size=size) * 3)
    >>> q.n, q.d, q.delta_A() <= 0.5 + 1e-12, 1.0 - 1e-12 <= q.mu <= q.L <= 10.0 + 1e-12, float(np.linalg.norm(x0))
    (2, 2, True, True, 2.0)
    """
    mu, L, dA, D = consts["mu"], consts["L"], consts["delta_A"], consts["D"]
    n, d = int(n), int(d)
    if n < 2 or d != 2:
        raise ValueError(f"dane_family needs n >= 2 clients and d = 2, got n={n}, d={d}")
    size = n + n * d + 1

    def decode(z: np.ndarray):
        z = np.asarray(z, dtype=np.float64)
        U = np.stack([_rotation(float(phi)) for phi in z[:n]])
        lam = mu + (L - mu) * _unit(z[n : n + n * d]).reshape(n, d)
        q = _federation(lam, U, np.zeros((n, d)), np.ones(n))
        now = q.delta_A()
        if now > dA:
            Abar = np.einsum("i,ijk->jk", q.p, q.A)
            A = Abar + (dA / now) * (q.A - Abar)
            q = QuadraticFederation(A=0.5 * (A + np.swapaxes(A, 1, 2)), c=q.c, p=q.p)
        omega = float(z[-1])
        return q, D * np.array([math.cos(omega), math.sin(omega)])

    return size, decode


def near_attaining_dane(consts: dict):
    """(z, federation, x_0): the two-client instance known to come close to the DANE family's bounds, in
    :func:`dane_family`'s coordinates z. The clients share the eigenpair (μ, e_1) and differ on e_2 by ±δ
    (A_1 = diag(μ, μ + 2δ), A_2 = diag(μ, μ), equal weights, δ = min(δ_A, (L − μ)/2) = its δ_A), x* = 0,
    x_0 = D e_1: along e_1 the clients agree, so an exact S-DANE round contracts the error by exactly λ/(λ + μ)
    (at μ = 1, λ = 1 one round reaches 1/2 of Theorem 1's function-value bound: sdane/theorem-1/runs).

    >>> z, q, x0 = near_attaining_dane({"mu": 1.0, "L": 10.0, "delta_A": 0.5, "D": 2.0})
    >>> q.delta_A(), q.A[0].tolist(), x0.tolist()
    (0.5, [[1.0, 0.0], [0.0, 2.0]], [2.0, 0.0])
    >>> size, decode = dane_family({"mu": 1.0, "L": 10.0, "delta_A": 0.5, "D": 2.0})
    >>> q2, x2 = decode(z)
    >>> bool(np.allclose(q2.A, q.A) and np.allclose(x2, x0))
    True
    """
    mu, L, D = consts["mu"], consts["L"], consts["D"]
    delta = min(consts["delta_A"], (L - mu) / 2)
    q = QuadraticFederation(A=[np.diag([mu, mu + 2 * delta]), np.diag([mu, mu])], c=np.zeros((2, 2)), p=[0.5, 0.5])
    units = np.array([0.0, 2 * delta, 0.0, 0.0]) / (L - mu) if L > mu else np.zeros(4)
    z = np.concatenate([[0.0, 0.0], np.arcsin(np.clip(2 * units - 1, -1, 1)), [0.0]])
    return z, q, D * np.eye(2)[0]
