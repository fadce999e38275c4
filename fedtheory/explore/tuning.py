"""Tune hyperparameters against a derived bound, before running anything.

Given problem constants and one budget — communication rounds (``rounds``), local work per client
(``work``, local gradient evaluations), or a target accuracy (``eps``, distance to x*) — :func:`tune`
searches the method's hyperparameters for the setting whose *guaranteed* error (or guaranteed rounds to
``eps``) is best, and returns it with the bound's value, the hypotheses it relies on, the claims that
check it, and the runner-up settings. The bounds are :mod:`fedtheory.analysis.guarantees`'s; the search
is a log-spaced grid refined once around its best point.

>>> adv = tune("fedavg", mu=1.0, L=10.0, C=0.1, D=10.0, eps=0.5)
>>> adv.feasible, adv.best["theta"], adv.best["K"] > 1
(True, 'uniform', True)
>>> adv.value <= tune("gd", mu=1.0, L=10.0, C=0.1, D=10.0, eps=0.5).value     # local steps help here
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedtheory.explore.results import Result, fmt

__all__ = ["METHODS", "Advice", "tune", "method_guarantee"]

#: method -> (kind, what it is)
METHODS = {
    "gd": ("local-update", "gradient descent / FedSGD: LocalUpdate with K = 1"),
    "fedavg": ("local-update", "FedAvg / local SGD / Reptile: Θ_{1:K}, α = 0"),
    "fedprox": ("local-update", "FedProx: Θ_{1:K}, α > 0"),
    "fomaml": ("local-update", "FOMAML: Θ_K, α = 0"),
    "maml": ("local-update", "MAML with K inner steps: Θ_{2K+1} (Theorem 2), α = 0"),
    "s-dane": ("dane", "S-DANE (Algorithm 1), λ ≥ 2δ_A, local solver by accuracy test (6)"),
    "acc-s-dane": ("dane", "Acc-S-DANE (Algorithm 2), λ ≥ 2δ_A, μ ≤ 4λ"),
}
_THETA = {"gd": "uniform", "fedavg": "uniform", "fedprox": "uniform", "fomaml": "last", "maml": "maml"}
BUDGETS = ("rounds", "work", "eps")


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (choose one of {', '.join(METHODS)})")
    return method


def _grid_local_update(method: str, L: float, mu: float, K_max: int, points: int,
                       center: dict | None = None) -> dict[str, np.ndarray]:
    """(K, γ, α) settings for a local-update method: a log grid, or a finer one around ``center``."""
    if method == "gd":
        return {"K": np.array([1.0]), "gamma": np.array([0.0]), "alpha": np.array([0.0])}
    if center is None:
        Ks = np.unique(np.round(np.geomspace(1, K_max, points)))
        fr = np.geomspace(1e-4, 1 - 1e-6, points)
        alphas = np.geomspace(1e-3 * mu, 1e3 * L, max(points // 4, 5)) if method == "fedprox" else np.zeros(1)
    else:
        K0, f0, a0 = center["K"], center["gamma"] * (L + center["alpha"]), center["alpha"]
        Ks = np.unique(np.clip(np.round(K0 * np.geomspace(0.5, 2.0, 21)), 1, K_max))
        fr = np.unique(np.clip(f0 * np.geomspace(0.7, 1.4, 21), 1e-6, 1 - 1e-9))
        alphas = a0 * np.geomspace(0.5, 2.0, 9) if method == "fedprox" else np.zeros(1)
    K, f, a = (g.ravel() for g in np.meshgrid(Ks, fr, alphas, indexing="ij"))
    return {"K": K, "gamma": f / (L + a), "alpha": a}


def method_guarantee(method: str, consts: dict, settings: dict, momentum: str = "gd"):
    """The :class:`~fedtheory.analysis.guarantees.Guarantee` of ``method`` at ``settings`` (arrays)."""
    from fedtheory.analysis.guarantees import local_update_guarantee, sdane_guarantee

    kind = METHODS[_check_method(method)][0]
    if kind == "local-update":
        return local_update_guarantee(mu=consts["mu"], L=consts["L"], C=consts.get("C", 0.0), D=consts["D"],
                                      theta=_THETA[method], alpha=settings["alpha"], gamma=settings["gamma"],
                                      K=settings["K"], momentum=momentum)
    if consts.get("delta_A") is None:
        raise ValueError(f"{method} needs delta_A, the δ_A-SOD constant of the clients (Definition 1 of the sdane paper)")
    solver = str(np.atleast_1d(settings["solver"])[0])
    return sdane_guarantee(mu=consts["mu"], L=consts["L"], delta_A=consts["delta_A"], D=consts["D"],
                           lam=settings["lambda"], solver=solver, accelerated=(method == "acc-s-dane"))


def _objective(g, budget: str, amount: float) -> tuple[np.ndarray, np.ndarray]:
    """(value to minimize, tie-break) for every setting of guarantee ``g``."""
    steps = np.maximum(g.local_steps, 1.0)
    if budget == "rounds":
        return g.error_after(amount), steps
    if budget == "work":
        T = np.floor(amount / steps)
        return g.error_after(T), T
    R = g.rounds_to(amount)
    return R, R * steps


def _best(value: np.ndarray, tie: np.ndarray, count: int = 5) -> np.ndarray:
    ok = np.isfinite(value)
    order = np.lexsort((tie, np.where(ok, value, np.inf)))
    return order[:count]


@dataclass
class Advice(Result):
    """The tuned setting of one method for one budget, with what the bound promises and why."""

    method: str
    constants: dict
    budget: dict
    feasible: bool
    best: dict
    value: float
    predicted: dict
    claims: tuple
    hypotheses: tuple
    caveats: tuple
    runner_ups: list
    evaluated: int
    message: str = ""
    server: dict | None = None
    title_suffix: str = field(default="", repr=False)

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"fedtheory explore tune: {self.method}"

    def columns(self) -> list[str]:
        return ["rank", "setting", "bound", "rounds", "local steps/round", "floor"]

    def rows(self) -> list[list[Any]]:
        out = []
        for rank, r in enumerate([{"setting": self.best, **self.predicted}] + self.runner_ups, start=1):
            setting = ", ".join(f"{k}={fmt(v)}" for k, v in r["setting"].items())
            out.append([rank, setting, r["bound"], r["rounds"], r["local_steps"], r["floor"]])
        return out

    def notes(self) -> list[str]:
        what = {"rounds": "guaranteed ‖x_T − x*‖ after T rounds", "work": "guaranteed ‖x_T − x*‖ within the local work",
                "eps": "guaranteed rounds to ‖x − x*‖ ≤ eps"}[self.budget["kind"]]
        lines = [f"budget: {self.budget['kind']} = {fmt(self.budget['amount'])}; 'bound' is the {what}; "
                 f"{self.evaluated} settings evaluated"]
        if self.message:
            lines.append(self.message)
        if self.server:
            lines.append("server: " + ", ".join(f"{k}={fmt(v)}" for k, v in self.server.items()))
        lines.append("claims: " + ", ".join(self.claims))
        lines += ["hypothesis: " + h for h in self.hypotheses]
        lines += ["caveat: " + c for c in self.caveats]
        return lines

    def to_json(self) -> dict:
        return {"kind": "tune", "method": self.method, "constants": self.constants, "budget": self.budget,
                "feasible": self.feasible, "best": self.best, "value": self.value, "predicted": self.predicted,
                "server": self.server, "claims": list(self.claims), "hypotheses": list(self.hypotheses),
                "caveats": list(self.caveats), "runner_ups": self.runner_ups, "evaluated": self.evaluated,
                "message": self.message}

    def curve(self, T_max: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(rounds, guaranteed error) of the best setting, T = 0..T_max."""
        g = method_guarantee(self.method, self.constants, {k: np.array([v]) for k, v in self.best.items()},
                             self.best.get("momentum", "gd"))
        if T_max is None:
            T_max = int(min(max(self.predicted["rounds"] if math.isfinite(self.predicted["rounds"]) else 100, 10), 10**5))
        T = np.arange(T_max + 1)
        return T, np.array([float(g.error_after(t)[0]) for t in T])

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        T, err = self.curve()
        ax.semilogy(T, err, label=f"{self.method} (best)")
        if self.predicted["floor"] > 0:
            ax.axhline(self.predicted["floor"], ls="--", color="0.5", label="floor 8CΔ")
        ax.set_xlabel("communication rounds")
        ax.set_ylabel("guaranteed ‖x_T − x*‖")
        ax.legend(loc="best")


def _row(g, i: int, budget: str, amount: float, keys: list[str]) -> dict:
    setting = {k: (v[i].item() if isinstance(v[i], np.generic) else v[i]) for k, v in g.params.items() if k in keys}
    R = float(g.rounds_to(amount)[i]) if budget == "eps" else (
        float(np.floor(amount / max(float(g.local_steps[i]), 1.0))) if budget == "work" else float(amount))
    bound = float(g.rounds_to(amount)[i]) if budget == "eps" else float(g.error_after(R)[i])
    return {"setting": setting, "bound": bound, "rounds": R, "local_steps": float(g.local_steps[i]),
            "floor": float(g.floor[i]), "rho": None if g.rho is None else float(g.rho[i])}


def tune(method: str, *, mu: float, L: float, D: float, C: float = 0.0, delta_A: float | None = None,
         rounds: int | None = None, work: float | None = None, eps: float | None = None, momentum: str = "gd",
         K_max: int = 10**4, points: int = 60) -> Advice:
    """Best hyperparameters of ``method`` (one of :data:`METHODS`) under exactly one budget.

    Constants: μ, L (Assumption 1), C (‖c_i‖ ≤ C, heterogeneity of the local-update methods), D = ‖x_0 −
    x*‖, δ_A (the DANE family). ``momentum``: the server of local-update methods (``"gd"``,
    ``"nesterov"``, ``"heavy_ball"``). Local-update methods search K ∈ [1, K_max] and γ(L + α) ∈ [1e-4, 1)
    (α for FedProx); the DANE family searches λ ∈ [2δ_A, 2·10⁴δ_A] and the local solver.

    >>> tune("fedavg", mu=1.0, L=10.0, D=1.0, rounds=10, eps=0.1)
    Traceback (most recent call last):
    ...
    ValueError: give exactly one budget (rounds, work or eps), got rounds, eps
    """
    _check_method(method)
    given = [(k, v) for k, v in (("rounds", rounds), ("work", work), ("eps", eps)) if v is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one budget (rounds, work or eps), got {', '.join(k for k, _ in given) or 'none'}")
    budget, amount = given[0][0], float(given[0][1])
    if not (math.isfinite(amount) and amount > 0):
        raise ValueError(f"budget {budget} must be a positive number, got {amount:g}")
    if budget == "rounds" and amount != int(amount):
        raise ValueError(f"budget rounds must be an integer, got {amount:g}")
    if budget == "eps" and math.isfinite(float(D)) and amount < float(D) * np.finfo(np.float64).eps:
        # ‖x − x*‖ for iterates of size ~D is known to about D·2.2e-16 at best: a smaller target has no
        # float64 meaning, and its "guarantee" (ρ underflowing to 0) could never be checked
        raise ValueError(f"target eps={amount:g} is below float64 resolution at the scale D={float(D):g} "
                         f"(D·2.2e-16 = {float(D) * np.finfo(np.float64).eps:.3g}): ask for eps >= that")
    mu, L = float(mu), float(L)
    if not (0 < mu <= L < np.inf):
        raise ValueError(f"hypothesis 0 < mu <= L < inf violated (Assumption 1): mu={mu:g}, L={L:g}")
    consts = {"mu": mu, "L": L, "D": float(D), "C": float(C), "delta_A": None if delta_A is None else float(delta_A)}
    kind = METHODS[method][0]
    evaluated = 0
    if kind == "local-update":
        keys = ["theta", "K", "gamma", "alpha", "momentum"]
        settings = _grid_local_update(method, L, mu, int(K_max), int(points))
        g = method_guarantee(method, consts, settings, momentum)
        value, tie = _objective(g, budget, amount)
        evaluated += len(g)
        order = _best(value, tie)
        if method != "gd" and np.isfinite(value[order[0]]):
            center = {k: float(settings[k][order[0]]) for k in ("K", "gamma", "alpha")}
            fine = _grid_local_update(method, L, mu, int(K_max), int(points), center=center)
            settings = {k: np.concatenate([settings[k], fine[k]]) for k in settings}
            g = method_guarantee(method, consts, settings, momentum)
            value, tie = _objective(g, budget, amount)
            evaluated += len(fine["K"])
            order = _best(value, tie)
    else:
        if consts["delta_A"] is None:
            raise ValueError(f"{method} needs delta_A, the δ_A-SOD constant of the clients (Definition 1 of the sdane paper)")
        from fedtheory.analysis.guarantees import LOCAL_SOLVERS

        keys = ["lambda", "solver"]
        base = 2 * max(consts["delta_A"], 1e-12 * mu)
        lams = base * np.geomspace(1.0, 1e4, 4 * int(points))
        if method == "acc-s-dane":
            lams = np.unique(np.maximum(lams, mu / 4))
        parts = [method_guarantee(method, consts, {"lambda": lams, "solver": s}) for s in LOCAL_SOLVERS]
        values = [_objective(p, budget, amount) for p in parts]
        value = np.concatenate([v for v, _ in values])
        tie = np.concatenate([t for _, t in values])
        evaluated = int(value.size)
        order = _best(value, tie)
        which, index = np.divmod(order, lams.size)
        rows = [_row(parts[w], int(i), budget, amount, keys) for w, i in zip(which, index)]
        return _advice(method, consts, budget, amount, rows, parts[0], value[order[0]], evaluated, None)
    rows = [_row(g, int(i), budget, amount, keys) for i in order]
    server = None
    if rows and np.isfinite(value[order[0]]):
        server = _server(method, consts, rows[0]["setting"], momentum)
    return _advice(method, consts, budget, amount, rows, g, value[order[0]], evaluated, server)


def _server(method: str, consts: dict, setting: dict, momentum: str) -> dict | None:
    """The tuned ServerOpt (η, β) of the best local-update setting, from the class-wide μ̃, L̃."""
    from fedtheory.analysis.pareto import worst_case_tradeoff
    from fedtheory.analysis.rates import tuned_server

    out = worst_case_tradeoff(consts["mu"], consts["L"], theta=_THETA[method], alpha=setting["alpha"],
                              gamma=setting["gamma"], K=setting["K"], momentum=momentum)
    mu_t, L_t = math.exp(out["log_mu_tilde"][0]), math.exp(out["log_L_tilde"][0])
    if not (0 < mu_t <= L_t < math.inf):
        return None
    s = tuned_server(momentum, mu_t, L_t)
    return {"kind": s.kind, "lr": s.lr, "momentum": s.momentum, "mu_tilde": mu_t, "L_tilde": L_t}


def _advice(method, consts, budget, amount, rows, g, best_value, evaluated, server) -> Advice:
    feasible = bool(np.isfinite(best_value))
    message = ""
    if not feasible:
        message = (f"no setting reaches eps={amount:g}: the smallest accuracy floor found is "
                   f"{min(r['floor'] for r in rows):.4g}" if rows else "no setting evaluated")
    best = rows[0]
    # runner-ups: the next settings that differ from the best (distinct rows)
    return Advice(method=method, constants=consts, budget={"kind": budget, "amount": amount}, feasible=feasible,
                  best=best["setting"], value=float(best_value),
                  predicted={k: best[k] for k in ("bound", "rounds", "local_steps", "floor", "rho")},
                  claims=g.claims, hypotheses=g.hypotheses, caveats=g.caveats, runner_ups=rows[1:],
                  evaluated=evaluated, message=message, server=server)
