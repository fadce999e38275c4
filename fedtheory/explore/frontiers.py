"""The (ρ, floor) frontier along one swept hyperparameter, with every point's hyperparameters.

ρ is the class-wide rate (Theorem 3, Table 2 at the class-wide κ of
:func:`fedtheory.analysis.pareto.worst_case_tradeoff`), valid in every dimension. The floor is a *valid*
bound on ‖x*(α,γ,Θ) − x*‖ per unit C for the asked class (:func:`fedtheory.analysis.guarantees.
local_update_guarantee`): 2Δ (Lemma 12) for d = 1, 2√n·Δ for n commuting clients, and for general
d ≥ 2 the certified worst case where tabulated, 0 at K(Θ) = 1, else none (the point is marked invalid:
Corollary 1's 8CΔ is refuted). The non-dominated points are taken among the valid ones
(:func:`~fedtheory.analysis.pareto.pareto_mask`).

>>> fr = frontier(mu=1.0, L=10.0, sweep="K", lo=1, hi=1000, points=50, gamma=0.01, function_class="d1")
>>> len(fr) > 30, bool(fr.pareto.any()), fr.rows()[0][:2]
(True, True, [1, 0.01])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.guarantees import FUNCTION_CLASSES, local_update_guarantee, source_claims
from fedtheory.analysis.pareto import pareto_mask, worst_case_tradeoff
from fedtheory.explore import certified
from fedtheory.explore.results import Result, entry, envelope

__all__ = ["Frontier", "frontier", "SWEEPS", "SERVERS"]

SWEEPS = ("K", "gamma", "alpha")
SERVERS = ("gd", "nesterov", "heavy_ball")
#: most swept points one call computes, and what each costs (measured peak of the computation, ~170 B;
#: the table, JSON and plot add more): a bound that fails in a millisecond instead of a MemoryError later
MAX_POINTS = 10**6
BYTES_PER_POINT = 200


def check_points(points: int) -> int:
    """``points`` if 1 <= points <= :data:`MAX_POINTS`, else ValueError naming the memory it would take.

    >>> check_points(10**8)
    Traceback (most recent call last):
    ...
    ValueError: points=100000000 would take about 20 GB (200 bytes per point) and is above the limit of 1000000 points
    """
    points = int(points)
    if points < 1:
        raise ValueError(f"points must be >= 1, got {points}")
    if points > MAX_POINTS:
        raise ValueError(
            f"points={points} would take about {points * BYTES_PER_POINT / 1e9:.3g} GB "
            f"({BYTES_PER_POINT} bytes per point) and is above the limit of {MAX_POINTS} points"
        )
    return points


def _grid(sweep: str, lo: float, hi: float, points: int) -> np.ndarray:
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        raise ValueError(f"sweep range needs finite lo <= hi, got lo={lo:g}, hi={hi:g}")
    points = check_points(points)
    if sweep == "K":
        if lo < 1:
            raise ValueError(f"hypothesis K >= 1 violated: the K range starts at {lo:g}")
        if hi > 2.0**53:  # beyond, float64 cannot tell K from K + 1 and the int64 grid overflows
            raise ValueError(
                f"the K range ends at {hi:g}, above 2^53 = {2.0**53:.4g} local steps, where float64 "
                f"no longer counts steps exactly"
            )
        return np.unique(np.round(np.geomspace(lo, hi, points)).astype(np.int64)).astype(np.float64)
    if sweep == "alpha" and lo == 0:
        return (
            np.concatenate([[0.0], np.geomspace(max(hi, 1e-300) * 1e-6, hi, max(points - 1, 1))])
            if hi > 0
            else np.zeros(1)
        )
    if lo <= 0:
        raise ValueError(f"a log-spaced {sweep} range needs lo > 0, got lo={lo:g}")
    return np.geomspace(lo, hi, points)


@dataclass
class Frontier(Result):
    """A swept frontier: arrays over points, the valid floor per C, the Pareto mask and the fixed parameters."""

    params: dict
    sweep: str
    K: np.ndarray
    gamma: np.ndarray
    alpha: np.ndarray
    kappa: np.ndarray
    rho: np.ndarray
    floor: np.ndarray
    valid: np.ndarray
    pareto: np.ndarray
    claims: tuple = ()
    function_class: str = "general"

    title = "fedtheory explore frontier"

    def __len__(self) -> int:
        return int(self.rho.shape[0])

    @property
    def delta(self) -> np.ndarray:
        """The floor per C (inf where the class has no valid floor: no guarantee, never a number).

        >>> fr = frontier(mu=1.0, L=10.0, sweep="K", points=3)      # d ≥ 2: only K = 1 has a valid floor
        >>> fr.delta.tolist()
        [0.0, inf, inf]
        """
        return np.where(self.valid, self.floor, np.inf)

    def columns(self) -> list[str]:
        return ["K", "gamma", "alpha", "kappa", "rho", "floor/C", "valid", "pareto"]

    def rows(self) -> list[list[Any]]:
        return [
            [
                int(self.K[i]),
                float(self.gamma[i]),
                float(self.alpha[i]),
                float(self.kappa[i]),
                float(self.rho[i]),
                float(self.floor[i]) if self.valid[i] else None,
                bool(self.valid[i]),
                bool(self.pareto[i]),
            ]
            for i in range(len(self))
        ]

    def notes(self) -> list[str]:
        p = self.params
        lines = [
            f"theta={p['theta']}, server={p['server']}, mu={p['mu']:g}, L={p['L']:g}; swept {self.sweep} over "
            f"{len(self)} points, {int(self.valid.sum())} with a valid floor, {int(self.pareto.sum())} non-dominated",
            f"class: {FUNCTION_CLASSES[self.function_class]}; rho: the class-wide rate (every d); floor/C: a valid "
            "bound on ‖x*(α,γ,Θ) − x*‖/C for this class",
            "claims: " + ", ".join(self.claims),
        ]
        if not self.valid.all():
            lines.append(
                "no valid guarantee known for d ≥ 2 at the invalid points (K(Θ) > 1 off the certified table): "
                "Corollary 1's 8CΔ floor is refuted there"
            )
        return lines

    def entries(self) -> list[dict]:
        p = self.params
        return [
            entry(
                p["theta"],
                {
                    "theta": p["theta"],
                    "K": int(self.K[i]),
                    "gamma": float(self.gamma[i]),
                    "alpha": float(self.alpha[i]),
                    "server": p["server"],
                },
                guaranteed=None,
                rounds=None,
                floor=float(self.floor[i]) if self.valid[i] else None,
                local_steps=float(self.K[i]),
                rho=float(self.rho[i]),
                valid=bool(self.valid[i]),
                claims=self.claims,
                function_class=self.function_class,
            )
            | {"pareto": bool(self.pareto[i]), "kappa": float(self.kappa[i])}
            for i in range(len(self))
        ]

    def to_json(self) -> dict:
        return envelope(
            "frontier",
            function_class=self.function_class,
            constants={"mu": self.params["mu"], "L": self.params["L"], "clients": self.params.get("clients")},
            entries=self.entries(),
            claims=self.claims,
            hypotheses=("0 < μ ≤ L (Assumption 1)", "γ < 1/(L + α) (Lemma 1)"),
            caveats=(),
            message="" if self.valid.all() else "no valid floor at the invalid points",
            extra={"params": self.params, "sweep": self.sweep},
        )

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        v = self.valid
        order = np.argsort(self.rho[v], kind="stable")
        ax.plot(self.rho[v][order], self.floor[v][order], "-", color="0.6", lw=1, label="valid points")
        ax.plot(self.rho[self.pareto], self.floor[self.pareto], "o", ms=3, label="non-dominated")
        ax.set_xlabel("ρ (convergence rate)")
        ax.set_ylabel("valid floor per C")
        ax.set_title(f"{self.params['theta']}, {self.params['server']}: sweep {self.sweep} ({self.function_class})")
        ax.legend(loc="best")


def frontier(
    *,
    mu: float,
    L: float,
    theta: str = "uniform",
    alpha: float = 0.0,
    gamma: float | None = None,
    K: int | None = None,
    server: str = "gd",
    sweep: str = "K",
    values: Any = None,
    lo: float | None = None,
    hi: float | None = None,
    points: int = 400,
    weights: Any = None,
    function_class: str = "general",
    clients: int | None = None,
) -> Frontier:
    """Sweep ``sweep`` (``"K"``, ``"gamma"`` or ``"alpha"``) over ``values`` (or ``points`` log-spaced in
    [``lo``, ``hi``]) with the other hyperparameters fixed; return the (ρ, Δ) frontier.

    Defaults: K in [1, 10⁶]; γ in (0, 1/(L + α)) (the fixed γ defaults to 1/(2(L + α)), as in the paper's
    Figures 2–3); α in [0, 10L] (capped below 1/γ − L when γ is fixed); the fixed K defaults to 100. ``theta``: ``"uniform"`` (Θ_{1:K}),
    ``"last"`` (Θ_K), ``"maml"`` (Θ_{2K+1}) or ``"custom"`` with ``weights`` θ_1..θ_K (K ≤ 64; sweep γ or
    α; custom Θ has a valid floor only at K(Θ) = 1); ``server``: ``"gd"``, ``"nesterov"`` or ``"heavy_ball"``;
    ``function_class`` (``"d1"``, ``"commuting"`` with ``clients`` = n, ``"general"``) picks the valid floor.
    Hypotheses (0 < μ ≤ L, γ < 1/(L + α), K ≥ 1, α ≥ 0) raise ValueError naming the violated one.

    >>> frontier(mu=1.0, L=10.0, sweep="gamma", values=[0.05, 0.2], K=10)
    Traceback (most recent call last):
    ...
    ValueError: hypothesis gamma < 1/(L + alpha) violated: gamma=0.2, L=10, alpha=0 (1/(L+alpha)=0.1; Lemma 1)
    """
    if sweep not in SWEEPS:
        raise ValueError(f"sweep must be one of {SWEEPS}, got {sweep!r}")
    check_points(points if values is None else np.size(values))
    theta_arg: Any = theta
    if theta == "custom":
        if weights is None:
            raise ValueError("theta 'custom' needs weights (theta_1, ..., theta_K)")
        theta_arg = Theta(weights)
        if sweep == "K":
            raise ValueError("a custom Theta fixes K = K(Theta): sweep gamma or alpha")
        K = theta_arg.K
    elif weights is not None:
        raise ValueError(f"weights are for theta 'custom', not {theta!r}")
    if server not in SERVERS:
        raise ValueError(f"server must be one of {SERVERS}, got {server!r}")
    mu, L, alpha = float(mu), float(L), float(alpha)
    if not (0 < mu <= L < np.inf):
        raise ValueError(f"hypothesis 0 < mu <= L < inf violated (Assumption 1): mu={mu:g}, L={L:g}")
    if values is not None:
        grid = np.atleast_1d(np.asarray(values, dtype=np.float64)).ravel()
    else:
        alpha_hi = 10 * L if gamma is None else min(10 * L, (1 - 1e-9) * (1 / float(gamma) - L))  # γ < 1/(L + α)
        default = {"K": (1.0, 1e6), "gamma": (1e-6 / (L + alpha), (1 - 1e-9) / (L + alpha)), "alpha": (0.0, alpha_hi)}[
            sweep
        ]
        grid = _grid(sweep, default[0] if lo is None else float(lo), default[1] if hi is None else float(hi), points)
    fixed_K = 100 if K is None else K
    kw: dict[str, Any] = {"K": fixed_K, "alpha": alpha}
    if sweep == "K":
        kw["K"] = grid
    elif sweep == "alpha":
        kw["alpha"] = grid
    if sweep == "gamma":
        kw["gamma"] = grid
    else:
        kw["gamma"] = 1.0 / (2.0 * (L + np.asarray(kw["alpha"]))) if gamma is None else gamma
    out = worst_case_tradeoff(mu, L, theta=theta_arg, momentum=server, **kw)
    if theta == "custom":
        valid = out["K"] == 1
        floor = np.zeros(out["rho"].shape)
        claims = source_claims(f"rate/{server}", "floor/one-step")
    else:
        lookup = (
            certified.certified_floor_lookup(mu, L, theta, server, clients) if function_class == "general" else None
        )
        g = local_update_guarantee(
            mu=mu,
            L=L,
            C=1.0,
            D=0.0,
            theta=theta,
            alpha=out["alpha"],
            gamma=out["gamma"],
            K=out["K"],
            momentum=server,
            function_class=function_class,
            clients=clients,
            certified_floor=lookup,
        )
        assert g.valid is not None  # local_update_guarantee always sets it
        valid, floor, claims = g.valid, np.where(g.valid, g.floor, np.nan), g.claims
    params = {
        "mu": mu,
        "L": L,
        "theta": theta,
        "server": server,
        "sweep": sweep,
        "clients": clients,
        "weights": None if weights is None else [float(v) for v in np.ravel(weights)],
        "alpha": None if sweep == "alpha" else alpha,
        "K": None if sweep == "K" else int(fixed_K),
        "gamma": None if sweep == "gamma" else (None if gamma is None else float(gamma)),
        "gamma_default": "1/(2(L+alpha))" if gamma is None and sweep != "gamma" else None,
    }
    pareto = np.zeros(valid.shape, dtype=bool)
    if valid.any():
        pareto[valid] = pareto_mask(out["rho"][valid], floor[valid])
    return Frontier(
        params=params,
        sweep=sweep,
        K=out["K"],
        gamma=out["gamma"],
        alpha=out["alpha"],
        kappa=out["kappa"],
        rho=out["rho"],
        floor=floor,
        valid=valid,
        pareto=pareto,
        claims=tuple(claims),
        function_class=function_class,
    )
