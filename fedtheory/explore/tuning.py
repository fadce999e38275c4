"""Tune hyperparameters against a derived bound, before running anything.

Given problem constants and one budget — communication rounds (``rounds``), local work per client
(``work``, local gradient evaluations), or a target accuracy (``eps``, distance to x*) — :func:`tune`
searches the method's hyperparameters for the setting whose *guaranteed* error (or guaranteed rounds to
``eps``) is best, and returns it with the bound's value, the hypotheses it relies on, the claims that
check it, the class of federations it holds for, and the runner-up settings (distinct in print). The
bounds are :mod:`fedtheory.analysis.guarantees`'s — only verified statements — and the search is a
log-spaced grid refined once around its best point. Every setting is printed complete: Θ, K, γ, α and
the server (kind, η, β) the guarantee assumes.

``function_class`` says which federations the guarantee must hold for: ``"d1"`` (d = 1, Lemma 12),
``"commuting"`` (clients share an eigenbasis; the floor grows with √n, so ``clients`` = n is needed) or
``"general"`` (d ≥ 2, the default). For the general class only K(Θ) = 1 (no floor) and settings with a
certified worst case carry a guarantee; elsewhere the advice says that no valid guarantee is known and
reports the best lower bound known (a probe) for the setting the d = 1 theory would pick.

>>> adv = tune("fedavg", mu=1.0, L=10.0, C=0.1, D=10.0, eps=0.5, function_class="d1")
>>> adv.feasible, adv.best["theta"], adv.best["K"] > 1, adv.best["eta"] > 0
(True, 'uniform', True, True)
>>> adv.value <= tune("gd", mu=1.0, L=10.0, C=0.1, D=10.0, eps=0.5).value     # local steps help here
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedtheory.explore.results import Result, entry, envelope, fmt, setting_text

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
    grid = _raw_grid(method, L, mu, K_max, points, center)
    # K(Θ) = 1 ignores γ and α (Q_i = I): one setting, printed as γ = α = 0
    one = grid["K"] == 1
    grid["gamma"], grid["alpha"] = np.where(one, 0.0, grid["gamma"]), np.where(one, 0.0, grid["alpha"])
    rows = np.unique(np.stack([grid["K"], grid["gamma"], grid["alpha"]], axis=1), axis=0)
    return {"K": rows[:, 0], "gamma": rows[:, 1], "alpha": rows[:, 2]}


def _raw_grid(method: str, L: float, mu: float, K_max: int, points: int,
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
    """The :class:`~fedtheory.analysis.guarantees.Guarantee` of ``method`` at ``settings`` (arrays); the class
    and the number of clients come from ``consts`` (``function_class``, ``clients``)."""
    from fedtheory.analysis.guarantees import local_update_guarantee, sdane_guarantee
    from fedtheory.explore.certified import certified_floor_lookup

    kind = METHODS[_check_method(method)][0]
    if kind == "local-update":
        klass = consts.get("function_class", "general")
        lookup = (certified_floor_lookup(consts["mu"], consts["L"], _THETA[method], momentum, consts.get("clients"))
                  if klass == "general" else None)
        return local_update_guarantee(mu=consts["mu"], L=consts["L"], C=consts.get("C", 0.0), D=consts["D"],
                                      theta=_THETA[method], alpha=settings["alpha"], gamma=settings["gamma"],
                                      K=settings["K"], momentum=momentum, function_class=klass,
                                      clients=consts.get("clients"), certified_floor=lookup)
    if consts.get("delta_A") is None:
        raise ValueError(f"{method} needs delta_A, the δ_A-SOD constant of the clients (Definition 1 of the sdane paper)")
    solver = str(np.atleast_1d(settings["solver"])[0])
    return sdane_guarantee(mu=consts["mu"], L=consts["L"], delta_A=consts["delta_A"], D=consts["D"],
                           lam=settings["lambda"], solver=solver, accelerated=(method == "acc-s-dane"))


#: below RESOLUTION·(T + 1)·D a bound on ‖x_T − x*‖ cannot be checked in float64 (it is 10³ times the float slack
#: :func:`~fedtheory.explore.simulation.simulate` allows per round); settings whose bound is below it are equal,
#: and the cheaper one wins the tie
RESOLUTION = 1e3 * 64 * float(np.finfo(np.float64).eps)


def _objective(g, budget: str, amount: float, D: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(value to minimize, tie-break) for every setting of guarantee ``g``; error bounds are floored at the float64
    resolution RESOLUTION·(T + 1)·D (see :data:`RESOLUTION`)."""
    steps = np.maximum(g.local_steps, 1.0)
    if budget == "eps":
        R = g.rounds_to(amount)
        return R, R * steps
    T = np.full(steps.shape, float(amount)) if budget == "rounds" else np.floor(amount / steps)
    value = g.error_after(T)
    with np.errstate(invalid="ignore"):
        value = np.where(np.isfinite(value), np.maximum(value, RESOLUTION * (T + 1) * D), value)
    return value, (steps if budget == "rounds" else T)


def _best(value: np.ndarray, tie: np.ndarray, count: int = 5) -> np.ndarray:
    """Indices of the ``count`` best settings (value, then tie-break); the best first."""
    ok = np.isfinite(value)
    order = np.lexsort((tie, np.where(ok, value, np.inf)))
    return order[:count]


@dataclass
class Advice(Result):
    """The tuned setting of one method for one budget, with what the bound promises, for which class, and why.

    ``best``: the complete setting (Θ, K, γ, α, server kind, η, β — or λ and the local solver);
    ``value``: the guaranteed objective (error after the rounds or work, or rounds to eps);
    ``runner_ups``: the next settings, distinct to the printed precision; ``lower_bound``: where the
    asked class has no valid guarantee at the setting the d = 1 theory would pick, the best lower bound
    known there (a probe's instance and the error it reaches), else None.
    """

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
    function_class: str = "general"
    lower_bound: dict | None = None
    title_suffix: str = field(default="", repr=False)

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"fedtheory explore tune: {self.method} (class: {_class_text(self.function_class)})"

    def columns(self) -> list[str]:
        return ["rank", "setting", "guaranteed", "rounds", "local steps/round", "floor"]

    def rows(self) -> list[list[Any]]:
        out = []
        for rank, r in enumerate([{"setting": self.best, **self.predicted}] + self.runner_ups, start=1):
            out.append([rank, setting_text(r["setting"]), r["bound"], r["rounds"], r["local_steps"], r["floor"]])
        return out

    def notes(self) -> list[str]:
        what = {"rounds": "guaranteed ‖x_T − x*‖ after T rounds", "work": "guaranteed ‖x_T − x*‖ within the local work",
                "eps": "guaranteed rounds to ‖x − x*‖ ≤ eps"}[self.budget["kind"]]
        lines = [f"budget: {self.budget['kind']} = {fmt(self.budget['amount'])}; 'guaranteed' is the {what}, valid for "
                 f"{_class_text(self.function_class)}; {self.evaluated} settings evaluated"]
        if self.message:
            lines.append(self.message)
        lines.append("claims: " + ", ".join(self.claims))
        lines += ["hypothesis: " + h for h in self.hypotheses]
        lines += ["caveat: " + c for c in self.caveats]
        return lines

    def entries(self) -> list[dict]:
        rows = [{"setting": self.best, **self.predicted}] + self.runner_ups
        return [entry(self.method, r["setting"], guaranteed=r["bound"] if self.feasible else None, rounds=r["rounds"],
                      floor=r["floor"], local_steps=r["local_steps"], rho=r.get("rho"), valid=self.feasible,
                      claims=self.claims, function_class=self.function_class,
                      lower_bound=self.lower_bound if i == 0 else None) for i, r in enumerate(rows)]

    def to_json(self) -> dict:
        return envelope("tune", function_class=self.function_class, constants=self.constants, entries=self.entries(),
                        claims=self.claims, hypotheses=self.hypotheses, caveats=self.caveats, message=self.message,
                        extra={"method": self.method, "budget": self.budget, "feasible": self.feasible,
                               "value": self.value, "evaluated": self.evaluated})

    def curve(self, T_max: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(rounds, guaranteed error) of the best setting, T = 0..T_max."""
        keys = ("K", "gamma", "alpha") if METHODS[self.method][0] == "local-update" else ("lambda", "solver")
        g = method_guarantee(self.method, self.constants, {k: np.array([self.best[k]]) for k in keys},
                             self.best.get("server", "gd"))
        if T_max is None:
            T_max = int(min(max(self.predicted["rounds"] if math.isfinite(self.predicted["rounds"]) else 100, 10), 10**5))
        T = np.arange(T_max + 1)
        return T, np.asarray(g.error_after(T[:, None]))[:, 0]

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        if self.feasible:
            T, err = self.curve()
            ax.semilogy(T, err, label=f"{self.method} (best, guaranteed)")
            if self.predicted["floor"] > 0:
                ax.axhline(self.predicted["floor"], ls="--", color="0.5", label="guaranteed floor")
        if self.lower_bound:
            ax.axhline(self.lower_bound["value"], ls=":", color="r", label="lower bound (probe)")
        ax.set_xlabel("communication rounds")
        ax.set_ylabel("‖x_T − x*‖")
        ax.legend(loc="best")


def _class_text(function_class: str) -> str:
    from fedtheory.analysis.guarantees import FUNCTION_CLASSES

    return FUNCTION_CLASSES.get(function_class, function_class)


def _rows(g, idx: np.ndarray, budget: str, amount: float, method: str, consts: dict, momentum: str) -> list[dict]:
    """The result rows of settings ``idx`` of guarantee ``g``: complete settings (server included)."""
    out = []
    local = METHODS[method][0] == "local-update"
    idx = np.asarray(idx, dtype=np.int64)
    need = g.rounds_to(amount) if budget == "eps" else None        # once for all settings, not per row
    for i in (int(j) for j in idx):
        if local:
            setting = {"theta": str(g.params["theta"][i]), "K": int(g.params["K"][i]), "gamma": float(g.params["gamma"][i]),
                       "alpha": float(g.params["alpha"][i])}
            setting.update(_server(method, consts, setting, momentum))
        else:
            setting = {"lambda": float(g.params["lambda"][i]), "solver": str(g.params["solver"][i])}
        R = float(need[i]) if budget == "eps" else (
            float(np.floor(amount / max(float(g.local_steps[i]), 1.0))) if budget == "work" else float(amount))
        bound = float(need[i]) if budget == "eps" else float(g.error_after(R)[i])
        out.append({"setting": setting, "bound": bound, "rounds": R, "local_steps": float(g.local_steps[i]),
                    "floor": float(g.floor[i]), "rho": None if g.rho is None else float(g.rho[i])})
    return out


def _distinct_rows(rows: list[dict], count: int = 5) -> list[dict]:
    """Keep rows whose printed settings differ (two settings equal to the printed precision are one); runner-ups
    only where a valid guarantee gives a finite value."""
    seen, out = set(), []
    for r in rows:
        if out and not math.isfinite(r["bound"]):
            continue
        key = setting_text(r["setting"])
        if key not in seen:
            seen.add(key)
            out.append(r)
        if len(out) == count:
            break
    return out


def tune(method: str, *, mu: float, L: float, D: float, C: float = 0.0, delta_A: float | None = None,
         rounds: int | None = None, work: float | None = None, eps: float | None = None, momentum: str = "gd",
         K_max: int = 10**4, points: int = 60, function_class: str = "general", clients: int | None = None,
         lower_bound: bool = True) -> Advice:
    """Best hyperparameters of ``method`` (one of :data:`METHODS`) under exactly one budget.

    Constants: μ, L (Assumption 1), C (‖c_i‖ ≤ C, heterogeneity of the local-update methods), D = ‖x_0 −
    x*‖, δ_A (the DANE family), ``clients`` = n (needed where a bound depends on it: the commuting class).
    ``momentum``: the server of local-update methods (``"gd"``, ``"nesterov"``, ``"heavy_ball"``); its η, β
    are printed with the setting. ``function_class``: ``"d1"``, ``"commuting"`` or ``"general"`` (see the
    module docstring). Local-update methods search K ∈ [1, K_max] and γ(L + α) ∈ [1e-4, 1) (α for
    FedProx); the DANE family searches λ ∈ [2δ_A, 2·10⁴δ_A] and the local solver. ``lower_bound``: when
    the class has no valid guarantee at the d = 1 advice, probe a lower bound there (about a second).

    >>> tune("fedavg", mu=1.0, L=10.0, D=1.0, rounds=10, eps=0.1)
    Traceback (most recent call last):
    ...
    ValueError: give exactly one budget (rounds, work or eps), got rounds, eps
    """
    from fedtheory.analysis.guarantees import FUNCTION_CLASSES

    _check_method(method)
    given = [(k, v) for k, v in (("rounds", rounds), ("work", work), ("eps", eps)) if v is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one budget (rounds, work or eps), got {', '.join(k for k, _ in given) or 'none'}")
    budget, amount = given[0][0], float(given[0][1])
    if not (math.isfinite(amount) and amount > 0):
        raise ValueError(f"budget {budget} must be a positive number, got {amount:g}")
    if budget == "rounds" and amount != int(amount):
        raise ValueError(f"budget rounds must be an integer, got {amount:g}")
    if function_class not in FUNCTION_CLASSES:
        raise ValueError(f"function_class must be one of {', '.join(FUNCTION_CLASSES)}, got {function_class!r}")
    if clients is not None and (isinstance(clients, bool) or int(clients) != clients or clients < 1):
        raise ValueError(f"clients must be a positive integer, got {clients!r}")
    if budget == "eps" and math.isfinite(float(D)) and amount < float(D) * np.finfo(np.float64).eps:
        # ‖x − x*‖ for iterates of size ~D is known to about D·2.2e-16 at best: a smaller target has no
        # float64 meaning, and its "guarantee" (ρ underflowing to 0) could never be checked
        raise ValueError(f"target eps={amount:g} is below float64 resolution at the scale D={float(D):g} "
                         f"(D·2.2e-16 = {float(D) * np.finfo(np.float64).eps:.3g}): ask for eps >= that")
    mu, L = float(mu), float(L)
    if not (0 < mu <= L < np.inf):
        raise ValueError(f"hypothesis 0 < mu <= L < inf violated (Assumption 1): mu={mu:g}, L={L:g}")
    consts = {"mu": mu, "L": L, "D": float(D), "C": float(C), "delta_A": None if delta_A is None else float(delta_A),
              "function_class": function_class, "clients": None if clients is None else int(clients)}
    kind = METHODS[method][0]
    evaluated = 0
    if kind == "local-update":
        settings = _grid_local_update(method, L, mu, int(K_max), int(points))
        settings = _with_certified_points(settings, method, consts, momentum)
        g = method_guarantee(method, consts, settings, momentum)
        value, tie = _objective(g, budget, amount, consts["D"])
        evaluated += len(g)
        order = _best(value, tie, 60)
        if method != "gd" and np.isfinite(value[order[0]]) and g.params["K"][order[0]] > 1:
            center = {k: float(settings[k][order[0]]) for k in ("K", "gamma", "alpha")}
            fine = _grid_local_update(method, L, mu, int(K_max), int(points), center=center)
            settings = {k: np.concatenate([settings[k], fine[k]]) for k in settings}
            g = method_guarantee(method, consts, settings, momentum)
            value, tie = _objective(g, budget, amount, consts["D"])
            evaluated += len(fine["K"])
            order = _best(value, tie, 60)
        rows = _distinct_rows(_rows(g, order, budget, amount, method, consts, momentum))
        # the claims and caveats of the advised setting itself (not of the whole grid)
        g = method_guarantee(method, consts, {k: np.array([rows[0]["setting"][k]]) for k in ("K", "gamma", "alpha")},
                             momentum)
    else:
        if consts["delta_A"] is None:
            raise ValueError(f"{method} needs delta_A, the δ_A-SOD constant of the clients (Definition 1 of the sdane paper)")
        from fedtheory.analysis.guarantees import LOCAL_SOLVERS

        base = 2 * max(consts["delta_A"], 1e-12 * mu)
        lams = base * np.geomspace(1.0, 1e4, 4 * int(points))
        if method == "acc-s-dane":
            lams = np.unique(np.maximum(lams, mu / 4))
        parts = [method_guarantee(method, consts, {"lambda": lams, "solver": s}) for s in LOCAL_SOLVERS]
        values = [_objective(p, budget, amount, consts["D"]) for p in parts]
        value = np.concatenate([v for v, _ in values])
        tie = np.concatenate([t for _, t in values])
        evaluated = int(value.size)
        order = _best(value, tie, 60)
        which, index = np.divmod(order, lams.size)
        rows = _distinct_rows([_rows(parts[w], [i], budget, amount, method, consts, momentum)[0]
                               for w, i in zip(which, index)])
        g = parts[0]
    best_value = value[order[0]] if budget == "eps" or not np.isfinite(value[order[0]]) else rows[0]["bound"]
    adv = _advice(method, consts, budget, amount, rows, g, best_value, evaluated, function_class)
    if kind == "local-update" and function_class == "general":
        from fedtheory.explore.certified import load_table

        table = load_table()
        if table is not None and consts["clients"] != table.get("clients"):
            adv.message = ((adv.message + "; ") if adv.message else "") + (
                f"certified d ≥ 2 guarantees at K(Θ) > 1 exist for n = {table['clients']} clients with equal weights "
                f"(--clients {table['clients']}) at the certified table's points")
    if kind == "local-update" and lower_bound and function_class == "general" and method != "gd":
        _attach_lower_bound(adv, method, consts, budget, amount, momentum, K_max, points)
    return adv


def _with_certified_points(settings: dict, method: str, consts: dict, momentum: str) -> dict:
    """For d ≥ 2, add the certified table's grid points (the only settings with K(Θ) > 1 it answers for)."""
    if consts.get("function_class", "general") != "general" or METHODS[method][0] != "local-update":
        return settings
    from fedtheory.explore.certified import certified_floor_lookup

    lookup = certified_floor_lookup(consts["mu"], consts["L"], _THETA[method], momentum, consts.get("clients"))
    grid = getattr(lookup, "grid", None)
    if not grid:
        return settings
    L = consts["L"]
    K = np.asarray(grid["K"], dtype=np.float64)
    alpha = np.asarray(grid["alphaL"], dtype=np.float64) * L
    keep = (K <= 1e9) & (method != "fedavg" or alpha == 0) & (method != "fedprox" or alpha > 0)
    extra = {"K": K[keep], "gamma": np.asarray(grid["gammaL"], dtype=np.float64)[keep] / L, "alpha": alpha[keep]}
    return {k: np.concatenate([settings[k], extra[k]]) for k in settings}


def _attach_lower_bound(adv: Advice, method: str, consts: dict, budget: str, amount: float, momentum: str,
                        K_max: int, points: int) -> None:
    """Where d ≥ 2 has no valid guarantee at the setting the d = 1 theory picks, say so and probe a lower bound."""
    d1 = tune(method, mu=consts["mu"], L=consts["L"], D=consts["D"], C=consts["C"], momentum=momentum, K_max=K_max,
              points=points, function_class="d1", lower_bound=False, **{budget: amount if budget != "rounds" else int(amount)})
    if not d1.feasible or d1.best["K"] == 1 or d1.best == adv.best:
        return
    g = method_guarantee(method, consts, {k: np.array([d1.best[k]]) for k in ("K", "gamma", "alpha")}, momentum)
    if bool(g.valid[0]):
        return
    from fedtheory.explore.simulation import probe_lower_bound

    T = int(amount) if budget == "rounds" else int(min(max(d1.predicted["rounds"], 1), 2000))
    lb = probe_lower_bound(consts, d1.best, T, budget="small")
    adv.lower_bound = {"setting": d1.best, "rounds": T, **lb}
    adv.message = ((adv.message + "; ") if adv.message else "") + (
        f"no valid guarantee known for d ≥ 2 at the setting the d = 1 theory picks ({setting_text(d1.best)}): "
        f"Corollary 1's 8CΔ floor is refuted there; best lower bound known: ‖x_T − x*‖ ≥ {lb['value']:.4g} after "
        f"T = {T} rounds ({lb['source']})" +
        ("; the advice above is the best setting that has a valid guarantee" if adv.feasible else ""))


def _server(method: str, consts: dict, setting: dict, momentum: str) -> dict:
    """The ServerOpt the guarantee assumes: Table 2's (η, β) at the class-wide μ̃, L̃ of the setting."""
    from fedtheory.analysis.pareto import worst_case_tradeoff
    from fedtheory.analysis.rates import tuned_server

    out = worst_case_tradeoff(consts["mu"], consts["L"], theta=_THETA[method], alpha=setting["alpha"],
                              gamma=setting["gamma"], K=setting["K"], momentum=momentum)
    mu_t, L_t = math.exp(out["log_mu_tilde"][0]), math.exp(out["log_L_tilde"][0])
    if not (0 < mu_t <= L_t < math.inf):
        return {"server": momentum, "eta": None, "beta": None}
    s = tuned_server(momentum, mu_t, L_t)
    return {"server": s.kind, "eta": float(s.lr), "beta": float(s.momentum)}


def _advice(method, consts, budget, amount, rows, g, best_value, evaluated, function_class) -> Advice:
    feasible = bool(np.isfinite(best_value))
    message = ""
    if not feasible:
        floors = [r["floor"] for r in rows if math.isfinite(r["floor"])]
        message = (f"no setting has a valid guarantee reaching eps={amount:g}: the smallest guaranteed floor found is "
                   f"{min(floors):.4g}" if floors else f"no setting has a valid guarantee for {_class_text(function_class)}")
    best = rows[0]
    return Advice(method=method, constants=consts, budget={"kind": budget, "amount": amount}, feasible=feasible,
                  best=best["setting"], value=float(best_value),
                  predicted={k: best[k] for k in ("bound", "rounds", "local_steps", "floor", "rho")},
                  claims=g.claims, hypotheses=g.hypotheses, caveats=g.caveats, runner_ups=rows[1:],
                  evaluated=evaluated, message=message, function_class=function_class)
