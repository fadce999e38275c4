r"""One complete LocalUpdate setting on one quadratic federation: its exact error curve and its driver run.

For quadratic clients f_i(x) = ½(x − c_i)ᵀA_i(x − c_i), one round of LocalUpdate with full participation is
server descent on the surrogate f̃ (Theorem 1 of Charles & Konečný, arXiv:2103.05032): the aggregated
pseudo-gradient is H̃x − b̃ with H̃ = Σ p_iQ_iA_i, b̃ = Σ p_iQ_iA_ic_i and Q_iA_i = V_i diag(q(γ(λ_ij + α))λ_ij) V_iᵀ
from each client's eigendecomposition (computed once, batched). With H̃ = W diag(h) Wᵀ the iterates are *exactly*

    x_t − x* = W (P_t(h) ∘ u + v),   u = Wᵀ(x_0 − x̃*),  v = Wᵀ(x̃* − x*),  x̃* = H̃⁻¹b̃,

with P_t the server's iteration polynomials (:func:`fedtheory.analysis.rates.iteration_polynomials`: gd,
heavy-ball, Nesterov; x_{−1} = x_0). :class:`ExactModel` holds one federation's eigendecompositions,
:func:`instance_errors` evaluates the closed form for many server steps at once, :func:`exact_curve` for one complete setting, and
:func:`measured_curve` runs the same setting on the driver
(:func:`~fedtheory.algorithms.local_update.run_local_update`), so the two can be compared round by round.

A *complete setting* is a dict with ``theta`` (``"uniform"``: Θ_{1:K}, ``"last"``: Θ_K, ``"maml"``), ``K``,
``gamma``, ``alpha``, ``server`` (``"gd"``, ``"heavy_ball"``, ``"nesterov"``), ``eta`` and ``beta``.

This module is the bottom of the explorer's layers: the instance mode (:mod:`fedtheory.explore.instance`), the
class families and their probe (:mod:`fedtheory.explore.families`) and the simulation of advice
(:mod:`fedtheory.explore.simulation`) all evaluate settings through it, and it imports no other explorer module.

>>> from fedtheory.problems.quadratic import make_quadratic
>>> q = make_quadratic(3, 2, mu=1.0, L=5.0, C=1.0, seed=0)
>>> s = {"theta": "uniform", "K": 3, "gamma": 0.05, "alpha": 0.0, "server": "gd", "eta": 0.5, "beta": 0.0}
>>> x0 = np.zeros(2)
>>> bool(np.allclose(exact_curve(ExactModel(q), s, x0, 10), measured_curve(q, s, x0, 10), rtol=1e-10, atol=1e-12))
True
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.rates import iteration_polynomials

__all__ = [
    "ExactModel",
    "instance_errors",
    "setting_theta",
    "complete_setting",
    "exact_curve",
    "exact_errors",
    "driver_algorithm",
    "measured_curve",
]


def setting_theta(theta: str, K: int, gamma: float, alpha: float):
    """The Θ of a setting: Θ_{1:K} (``"uniform"``), Θ_K (``"last"``) or MAML's (``"maml"``: Θ_{2K+1} at α = 0,
    Theorem 2; :func:`~fedtheory.algorithms.maml.maml_theta`).

    >>> setting_theta("uniform", 3, 0.1, 0.0).K, setting_theta("last", 3, 0.1, 0.0).K
    (3, 3)
    """
    return _theta(theta, int(K), float(gamma), float(alpha))


@lru_cache(maxsize=256)
def _theta(theta: str, K: int, gamma: float, alpha: float):
    # a probe evaluates one setting on hundreds of instances: its Θ (immutable) is built once
    if theta == "maml":
        from fedtheory.algorithms.maml import maml_theta  # here: only MAML's settings load its driver

        return maml_theta(K, gamma, alpha)
    return Theta.uniform(K) if theta == "uniform" else Theta.last(K)


class ExactModel:
    """Closed forms of LocalUpdate on one quadratic federation (eigendecompositions reused throughout).

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> m = ExactModel(make_quadratic(3, 2, mu=1.0, L=5.0, seed=1))
    >>> h, W, x_tilde = m.surrogate("uniform", 1, 0.0, 0.0)       # K = 1: f̃ = f
    >>> bool(np.allclose(x_tilde, m.x_star))
    True
    """

    def __init__(self, q) -> None:
        self.q = q
        lam, V = np.asarray(q.eigvals), np.asarray(q.eigvecs)
        self.lam, self.p = lam, np.asarray(q.p)
        self.n, self.d = lam.shape
        self.V_all = np.concatenate(list(V), axis=1)  # (d, n·d): one GEMM per setting
        self.c_rot = np.einsum("nji,nj->ni", V, q.c)  # V_iᵀc_i
        self.x_star = q.x_star()
        self.mu, self.L = float(lam.min()), float(lam.max())

    def surrogate(self, theta: str, K: int, gamma: float, alpha: float):
        """(h, W, x̃*): the eigendecomposition H̃ = W diag(h) Wᵀ of Σ p_iQ_iA_i and x̃* = H̃⁻¹b̃."""
        th = setting_theta(theta, K, gamma, alpha)
        g = np.asarray(th.polynomial_s(gamma * (self.lam + alpha))) * self.lam  # eigenvalues of Q_iA_i
        pg = self.p[:, None] * g
        b = self.V_all @ (pg * self.c_rot).reshape(-1)
        H = (self.V_all * pg.reshape(-1)) @ self.V_all.T  # one GEMM, d × n·d × d
        h, W = np.linalg.eigh(0.5 * (H + H.T))
        x_tilde = W @ ((W.T @ b) / h)
        return h, W, x_tilde


def instance_errors(
    h: np.ndarray,
    W: np.ndarray,
    x_tilde: np.ndarray,
    x_star: np.ndarray,
    x0: np.ndarray,
    kind: str,
    eta: Any,
    beta: float,
    T: int,
) -> np.ndarray:
    """Exact ‖x_t − x*‖, t = 0..T, for every η in ``eta`` (shape (len(eta), T + 1)).

    >>> h, W = np.array([1.0, 4.0]), np.eye(2)
    >>> instance_errors(h, W, np.zeros(2), np.zeros(2), np.array([1.0, 0.0]), "gd", [0.5], 0.0, 2).tolist()
    [[1.0, 0.5, 0.25]]
    """
    eta = np.atleast_1d(np.asarray(eta, dtype=np.float64))
    u, v = W.T @ (x0 - x_tilde), W.T @ (x_tilde - x_star)
    # P_t depends on (ηλ, β) only: one call with lr = 1 on the scaled spectra covers every η
    P = iteration_polynomials(ServerOpt(kind, lr=1.0, momentum=float(beta)), eta[:, None] * h[None, :], int(T))
    return np.sqrt(np.sum((P * u + v) ** 2, axis=-1)).T


def complete_setting(setting: dict) -> dict:
    """The complete setting's fields of an advised setting (the explorer's advice also carries its method, claims,
    ...), with β = 0 where the advice has none.

    >>> complete_setting({"theta": "uniform", "K": 2.0, "gamma": 0.1, "alpha": 0, "server": "gd", "eta": 1,
    ...                   "beta": None, "rho": 0.5})["beta"]
    0.0
    """
    return {
        "method": setting.get("method", ""),
        "theta": setting["theta"],
        "K": int(setting["K"]),
        "gamma": float(setting["gamma"]),
        "alpha": float(setting["alpha"]),
        "server": setting["server"],
        "eta": float(setting["eta"]),
        "beta": float(setting["beta"] or 0.0),
    }


def exact_curve(model: ExactModel, s: dict, x0: np.ndarray, T: int) -> np.ndarray:
    """Exact ‖x_t − x*‖, t = 0..T, of the complete setting ``s`` on ``model``'s federation from ``x0``.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> m = ExactModel(make_quadratic(2, 2, mu=1.0, L=4.0, seed=0))
    >>> s = {"theta": "uniform", "K": 1, "gamma": 0.0, "alpha": 0.0, "server": "gd", "eta": 0.4, "beta": 0.0}
    >>> np.round(exact_curve(m, s, m.x_star, 3), 12).tolist()      # started at x*: stays there (to rounding)
    [0.0, 0.0, 0.0, 0.0]
    """
    h, W, x_tilde = model.surrogate(s["theta"], s["K"], s["gamma"], s["alpha"])
    return instance_errors(h, W, x_tilde, model.x_star, x0, s["server"], [s["eta"]], s["beta"], T)[0]


def exact_errors(q, x0: np.ndarray, setting: dict, T: int) -> np.ndarray:
    """Exact ‖x_t − x*‖, t = 0..T, of an advised ``setting`` (:func:`complete_setting`) on the quadratic federation
    ``q`` from ``x0``: what a probe evaluates once per instance it draws.

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> q = make_quadratic(2, 2, mu=1.0, L=4.0, seed=0)
    >>> s = {"theta": "uniform", "K": 1, "gamma": 0.0, "alpha": 0.0, "server": "gd", "eta": 0.4, "beta": None}
    >>> bool(np.allclose(exact_errors(q, np.zeros(2), s, 5), measured_curve(q, complete_setting(s), np.zeros(2), 5)))
    True
    """
    return exact_curve(ExactModel(q), complete_setting(setting), x0, T)


def driver_algorithm(s: dict):
    """The driver's algorithm for a complete setting: LocalUpdate, or the MAML client program (its K inner steps
    run).

    >>> driver_algorithm({"theta": "last", "K": 4, "gamma": 0.1, "alpha": 0.0, "server": "gd", "eta": 1.0,
    ...                   "beta": 0.0}).theta.K
    4
    """
    server = ServerOpt(s["server"], lr=s["eta"], momentum=s["beta"] if s["server"] != "gd" else 0.0)
    if s["theta"] == "maml":
        from fedtheory.algorithms.maml import MAML

        return MAML(K=int(s["K"]), gamma=s["gamma"], server=server, alpha=s["alpha"], outer="full")
    return LocalUpdate(setting_theta(s["theta"], s["K"], s["gamma"], s["alpha"]), s["alpha"], s["gamma"], server)


def measured_curve(problem, s: dict, x0: np.ndarray, T: int) -> np.ndarray:
    """‖x_t − x*‖, t = 0..T, measured on the driver for the complete setting ``s`` on ``problem`` (any federation
    the driver runs: quadratic, least squares, logistic).

    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> q = make_quadratic(2, 2, mu=1.0, L=4.0, seed=0)
    >>> s = {"theta": "uniform", "K": 1, "gamma": 0.0, "alpha": 0.0, "server": "gd", "eta": 0.4, "beta": 0.0}
    >>> measured_curve(q, s, np.zeros(2), 3).shape
    (4,)
    """
    with np.errstate(all="ignore"):
        return np.asarray(run_local_update(problem, driver_algorithm(s), x0, T).to_numpy().dist_empirical)
