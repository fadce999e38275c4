r"""The record of a certificate and the pieces every LocalUpdate certificate shares.

:class:`Certificate` is what every certifier returns (the federated PEP of
:mod:`fedtheory.certify.federated_pep`, the d = 1 branch and bound of :mod:`fedtheory.certify.commuting`,
:func:`fedtheory.methods.pep.certify`). For LocalUpdate's class (n clients, K local steps of size γ, proximal
weight α, message weights Θ) this module also holds the hypothesis check (:func:`check_hypotheses`), the reading of
Θ (:func:`theta_weights`), the message eigenvalue b(λ) (:func:`message_eigenvalue`) and the replay of an instance's
floor through the real driver (:func:`replay_floor`). It sits below both certifiers, so neither imports the other's
private names (no import circle in :mod:`fedtheory.certify`).

>>> round(float(message_eigenvalue(2.0, 0.25, theta_weights("1:K", 2))), 12)     # λ + λ(1 − γλ)
3.0
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Certificate",
    "MEASURES",
    "CLASSES",
    "ENGINES",
    "theta_weights",
    "message_eigenvalue",
    "quadratic_federation",
    "check_hypotheses",
    "heterogeneity_scale",
    "replay_floor",
]

MEASURES = ("floor", "rate", "error", "function-value")
CLASSES = ("quadratic", "smooth-strongly-convex")
ENGINES = ("spectral", "pepit")


@dataclass
class Certificate:
    """One certified worst case: ``value`` (the upper bound; ``None`` when unreliable), ``lower`` (the value a
    concrete instance reaches in the real driver), ``gap`` = (value − lower)/value, ``instance`` (JSON: the
    federation and algorithm that attain ``lower``), ``hypotheses`` (the class and algorithm asked for),
    ``claim_id``, ``solver``, ``status`` (``"certified"`` | ``"unreliable"``), ``seconds``, ``notes``.

    >>> c = Certificate(2.0, 1.5, 0.25, None, {"mu": 1}, "x", "CLARABEL", "certified", 0.1)
    >>> c.to_json()["gap"]
    0.25
    """

    value: float | None
    lower: float | None
    gap: float | None
    instance: dict | None
    hypotheses: dict
    claim_id: str
    solver: str
    status: str
    seconds: float
    notes: str = ""
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """A JSON-able dict of every field."""
        return asdict(self)


def theta_weights(theta: Any, K: int):
    """Θ from a :class:`~fedtheory.algorithms.theta.Theta`, ``"1:K"`` (uniform), ``"K"`` (last step) or weights.

    >>> theta_weights("K", 3).weights.tolist()
    [0.0, 0.0, 1.0]
    """
    from fedtheory.algorithms.theta import Theta

    if isinstance(theta, Theta):
        return theta
    if isinstance(theta, str):
        if theta in ("1:K", "uniform"):
            return Theta.uniform(K)
        if theta in ("K", "last"):
            return Theta.last(K)
        raise ValueError(f"theta must be '1:K', 'K' or a weight vector, got {theta!r}")
    return Theta(theta)


def message_eigenvalue(lam: Any, gamma: float, theta: Any, alpha: float = 0.0) -> np.ndarray:
    """b(λ) = λ·q(1 − γ(λ + α)): the eigenvalue of a client's message operator Q_iA_i at A_i's eigenvalue λ.

    ``theta``: a :class:`~fedtheory.algorithms.theta.Theta` or a weight sequence θ_1..θ_K.

    >>> [round(float(v), 12) for v in message_eigenvalue([1.0, 2.0], 0.25, [1, 1])]   # λ + λ(1 − λ/4)
    [1.75, 3.0]
    """
    from fedtheory.algorithms.surrogate import distortion_eigenvalues

    lam = np.asarray(lam, dtype=np.float64)
    return lam * np.asarray(distortion_eigenvalues(lam, alpha, gamma, theta_weights(theta, 1)))


def quadratic_federation(lam, V, A, c, p):
    """The QuadraticFederation of clients A_i = V_i diag(λ_i) V_iᵀ (symmetrized), centres c_i and weights p, with
    its eigendecomposition given (no solve): how the certificates and probes build the instances they replay.

    >>> import numpy as np
    >>> lam, V = np.array([[1.0, 4.0]]), np.eye(2)[None]
    >>> quadratic_federation(lam, V, V * lam[:, None, :] @ V, np.zeros((1, 2)), np.ones(1)).L
    4.0
    """
    from fedtheory.problems.quadratic import QuadraticFederation

    return QuadraticFederation(A=0.5 * (A + np.swapaxes(A, 1, 2)), c=c, p=p, eigvals=lam, eigvecs=V)


def heterogeneity_scale(prob, het):
    """The instance's heterogeneity in the certificate's units (max‖c_i‖ = C, or (Σp‖∇f_i(x*)‖²)^½ = ζ)."""
    if het == "C":
        return float(np.linalg.norm(prob.c, axis=1).max())
    xs = prob.x_star()
    g = np.einsum("nij,nj->ni", prob.A, xs[None, :] - prob.c)
    return float(np.sqrt(prob.p @ np.sum(g**2, axis=1)))


def replay_floor(prob, mu, L, gamma, th, alpha, het):
    """Run the driver from x* until it settles at its fixed point; the distance it reaches, per unit C (or ζ)."""
    from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
    from fedtheory.algorithms.surrogate import surrogate_hessian

    H = surrogate_hessian(prob, alpha, gamma, th)
    ev = np.linalg.eigvalsh(0.5 * (H + H.T))
    eta = 2.0 / (ev[0] + ev[-1])
    rate = (ev[-1] - ev[0]) / (ev[-1] + ev[0])
    rounds = 5
    if rate > 0:
        rounds = int(min(200_000, max(50, math.ceil(math.log(1e-14) / math.log(max(rate, 1e-300))) + 20)))
    algo = LocalUpdate(th, alpha, gamma, ServerOpt("gd", lr=eta))
    h = run_local_update(prob, algo, prob.x_star(), rounds).to_numpy()
    return float(h.dist_empirical[-1]) / heterogeneity_scale(prob, het), float(h.dist_surrogate[-1]), rounds


def check_hypotheses(
    mu, L, K, gamma, alpha, clients, p, C, zeta, measure, function_class, engine, rounds, D, eta, theta
):
    """Raise ValueError naming the first hypothesis of LocalUpdate's certified class that the arguments violate.

    >>> check_hypotheses(1.0, 4.0, 2, 0.5, 0.0, 2, None, 1.0, None, "floor", "quadratic", None, None, None, None, "1:K")
    Traceback (most recent call last):
    ...
    ValueError: hypothesis 0 < gamma < 1/(L + alpha) violated: gamma=0.5, L=4, alpha=0 (1/(L+alpha)=0.25; Lemma 1)
    """
    for name, v in (("mu", mu), ("L", L), ("gamma", gamma), ("alpha", alpha)):
        if not (isinstance(v, (int, float, np.floating, np.integer)) and math.isfinite(float(v))):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if measure == "function-value" and mu == 0 and L > 0:
        if K != 1 and zeta is None:
            raise ValueError(
                f"hypothesis mu > 0 violated: mu=0 with the C model and K={K!r} >= 2 leaves the "
                "function-value PEP unbounded; use mu > 0, K = 1 or the zeta model"
            )
    elif not 0 < mu <= L:
        raise ValueError(f"hypothesis 0 < mu <= L violated: mu={mu:g}, L={L:g}")
    if isinstance(K, bool) or int(K) != K or K < 1:
        raise ValueError(f"K must be an integer >= 1, got {K!r}")
    if alpha < 0:
        raise ValueError(f"hypothesis alpha >= 0 violated: alpha={alpha:g}")
    if not 0 < gamma * (L + alpha) < 1:
        raise ValueError(
            f"hypothesis 0 < gamma < 1/(L + alpha) violated: gamma={gamma:g}, L={L:g}, alpha={alpha:g} "
            f"(1/(L+alpha)={1 / (L + alpha):g}; Lemma 1)"
        )
    if isinstance(clients, bool) or int(clients) != clients or clients < 2:
        raise ValueError(f"clients must be an integer >= 2, got {clients!r}")
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    if function_class not in CLASSES:
        raise ValueError(f"function_class must be one of {CLASSES}, got {function_class!r}")
    if engine is not None and engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "spectral" and function_class != "quadratic":
        raise ValueError("engine 'spectral' is exact for quadratic clients only; use engine='pepit'")
    if zeta is not None and not (zeta > 0):
        raise ValueError(f"zeta must be > 0, got {zeta!r}")
    if zeta is None and not (C > 0):
        raise ValueError(f"C must be > 0, got {C!r}")
    if measure == "function-value" and engine == "spectral":
        raise ValueError("measure 'function-value' has the PEPit engine only; use engine='pepit'")
    if measure in ("rate", "error", "function-value") and not (eta is not None and eta > 0):
        raise ValueError(f"measure {measure!r} needs a server step eta > 0, got {eta!r}")
    if measure in ("error", "function-value") and (
        rounds is None or int(rounds) != rounds or rounds < 1 or D is None or not D >= 0
    ):
        raise ValueError(f"measure {measure!r} needs rounds >= 1 and D >= 0, got rounds={rounds!r}, D={D!r}")
