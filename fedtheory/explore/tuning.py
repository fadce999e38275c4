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
reports the best lower bound known (a probe) for the setting the d = 1 theory would pick. Which federations a
certificate covers (n clients, their weights) is :mod:`fedtheory.explore.certified`'s; without ``clients`` the
advice holds for the certified table's default class and says so, with plain gradient descent's guarantee for
every other federation.

Every method :mod:`fedtheory.methods` registers (fedsplit, scaffold, sdane, dane, ...) is accepted too: it has no
derived bound here, so :func:`tune_certified` tunes it on a small grid (:func:`hyper_grid`) by its *certified*
worst case sup ‖x_T − x*‖ after the budget's T rounds from ‖x_0 − x*‖ ≤ D (:func:`fedtheory.methods.pep.certify`,
measure ``"error"``, quadratic clients, n clients, default 2 — the class it certifies, said in the advice).

>>> adv = tune("fedavg", mu=1.0, L=10.0, C=0.1, D=10.0, eps=0.5, function_class="d1")
>>> adv.feasible, adv.best["theta"], adv.best["K"] > 1, adv.best["eta"] > 0
(True, 'uniform', True, True)
>>> adv.value <= tune("gd", mu=1.0, L=10.0, C=0.1, D=10.0, eps=0.5).value     # local steps help here
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from fedtheory.analysis.guarantees import FUNCTION_CLASSES, LOCAL_SOLVERS, local_update_guarantee, sdane_guarantee
from fedtheory.analysis.pareto import worst_case_tradeoff
from fedtheory.analysis.rates import tuned_server

# the certified table through its module (certified.load_table, ...): one place to swap it, in tests too
from fedtheory.explore import certified
from fedtheory.explore.families import probe_lower_bound
from fedtheory.explore.results import Result, entry, envelope, fmt, setting_text

__all__ = [
    "METHODS",
    "Advice",
    "tune",
    "method_guarantee",
    "CertifiedAdvice",
    "tune_certified",
    "hyper_grid",
    "registered_methods",
    "check_any_method",
    "class_text",
    "CERTIFIED_MEASURE",
]

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


def _grid_local_update(
    method: str, L: float, mu: float, K_max: int, points: int, center: dict | None = None
) -> dict[str, np.ndarray]:
    """The distinct settings (K, γ, α) of :func:`_raw_grid` in lexicographic order (``np.unique``'s rows), K(Θ) = 1
    once, printed as γ = α = 0 (Q_i = I ignores them). γ = f/(L + α) does not depend on K, so the distinct (γ, α)
    pairs are sorted once and repeated under every K > 1: FedProx's coarse grid (48 600 settings) in about a
    millisecond instead of a 25 ms sort of the whole grid."""
    if method == "gd":
        return _raw_grid(method, L, mu, K_max, points, center)
    Ks, fr, alphas = _grid_axes(method, L, mu, K_max, points, center)
    f, a = (g.ravel() for g in np.meshgrid(fr, alphas, indexing="ij"))
    gamma, alpha = _unique(f / (L + a), a)
    many = Ks[Ks != 1]  # Ks: distinct and sorted, all >= 1
    one = np.ones(int(many.size < Ks.size))
    return {
        "K": np.concatenate([one, np.repeat(many, gamma.size)]),
        "gamma": np.concatenate([0.0 * one, np.tile(gamma, many.size)]),
        "alpha": np.concatenate([0.0 * one, np.tile(alpha, many.size)]),
    }


def _unique(*columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """The distinct rows of the NaN-free float ``columns`` in lexicographic order, as columns: ``np.unique``'s
    answer (``axis=0`` for several columns), without ``np.unique``, which imports ``numpy.ma`` (about 15 ms of a
    command-line call's CPU).

    >>> [c.tolist() for c in _unique(np.array([2.0, 1.0, 2.0, 1.0]), np.array([0.5, 0.0, 0.5, 0.25]))]
    [[1.0, 1.0, 2.0], [0.0, 0.25, 0.5]]
    """
    order = np.lexsort(columns[::-1])  # lexsort's last key is the primary one
    sorted_columns = [np.asarray(c)[order] for c in columns]
    new = np.zeros(order.size, dtype=bool)
    new[:1] = True
    for c in sorted_columns:  # a row is new where any column differs from the last
        new[1:] |= c[1:] != c[:-1]
    return tuple(c[new] for c in sorted_columns)


def _raw_grid(
    method: str, L: float, mu: float, K_max: int, points: int, center: dict | None = None
) -> dict[str, np.ndarray]:
    """(K, γ, α) settings for a local-update method: a log grid, or a finer one around ``center``."""
    if method == "gd":
        return {"K": np.array([1.0]), "gamma": np.array([0.0]), "alpha": np.array([0.0])}
    Ks, fr, alphas = _grid_axes(method, L, mu, K_max, points, center)
    K, f, a = (g.ravel() for g in np.meshgrid(Ks, fr, alphas, indexing="ij"))
    return {"K": K, "gamma": f / (L + a), "alpha": a}


def _grid_axes(
    method: str, L: float, mu: float, K_max: int, points: int, center: dict | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The axes of :func:`_raw_grid`: K (distinct, sorted, ≥ 1), f = γ(L + α) and α."""
    if center is None:
        (Ks,) = _unique(np.round(np.geomspace(1, K_max, points)))
        fr = np.geomspace(1e-4, 1 - 1e-6, points)
        alphas = np.geomspace(1e-3 * mu, 1e3 * L, max(points // 4, 5)) if method == "fedprox" else np.zeros(1)
    else:
        K0, f0, a0 = center["K"], center["gamma"] * (L + center["alpha"]), center["alpha"]
        (Ks,) = _unique(np.clip(np.round(K0 * np.geomspace(0.5, 2.0, 21)), 1, K_max))
        (fr,) = _unique(np.clip(f0 * np.geomspace(0.7, 1.4, 21), 1e-6, 1 - 1e-9))
        alphas = a0 * np.geomspace(0.5, 2.0, 9) if method == "fedprox" else np.zeros(1)
    return Ks, fr, alphas


def method_guarantee(method: str, consts: dict, settings: dict, momentum: str = "gd"):
    """The :class:`~fedtheory.analysis.guarantees.Guarantee` of ``method`` at ``settings`` (arrays); the class
    and the number of clients come from ``consts`` (``function_class``, ``clients``)."""
    kind = METHODS[_check_method(method)][0]
    if kind == "local-update":
        klass = consts.get("function_class", "general")
        lookup = (
            certified.certified_floor_lookup(
                consts["mu"], consts["L"], _THETA[method], momentum, consts.get("clients"), consts.get("weights")
            )
            if klass == "general"
            else None
        )
        return local_update_guarantee(
            mu=consts["mu"],
            L=consts["L"],
            C=consts.get("C", 0.0),
            D=consts["D"],
            theta=_THETA[method],
            alpha=settings["alpha"],
            gamma=settings["gamma"],
            K=settings["K"],
            momentum=momentum,
            function_class=klass,
            clients=consts.get("clients"),
            certified_floor=lookup,
        )
    if consts.get("delta_A") is None:
        raise ValueError(
            f"{method} needs delta_A, the δ_A-SOD constant of the clients (Definition 1 of the sdane paper)"
        )
    solver = str(np.atleast_1d(settings["solver"])[0])
    return sdane_guarantee(
        mu=consts["mu"],
        L=consts["L"],
        delta_A=consts["delta_A"],
        D=consts["D"],
        lam=settings["lambda"],
        solver=solver,
        accelerated=(method == "acc-s-dane"),
    )


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
        return f"fedtheory explore tune: {self.method} (class: {class_text(self.function_class)})"

    def columns(self) -> list[str]:
        return ["rank", "setting", "guaranteed", "rounds", "local steps/round", "floor"]

    def rows(self) -> list[list[Any]]:
        out = []
        for rank, r in enumerate([{"setting": self.best, **self.predicted}] + self.runner_ups, start=1):
            out.append([rank, setting_text(r["setting"]), r["bound"], r["rounds"], r["local_steps"], r["floor"]])
        return out

    def notes(self) -> list[str]:
        what = {
            "rounds": "guaranteed ‖x_T − x*‖ after T rounds",
            "work": "guaranteed ‖x_T − x*‖ within the local work",
            "eps": "guaranteed rounds to ‖x − x*‖ ≤ eps",
        }[self.budget["kind"]]
        lines = [
            f"budget: {self.budget['kind']} = {fmt(self.budget['amount'])}; 'guaranteed' is the {what}, valid for "
            f"{class_text(self.function_class)}; {self.evaluated} settings evaluated"
        ]
        if self.message:
            lines.append(self.message)
        lines.append("claims: " + ", ".join(self.claims))
        lines += ["hypothesis: " + h for h in self.hypotheses]
        lines += ["caveat: " + c for c in self.caveats]
        return lines

    def entries(self) -> list[dict]:
        rows = [{"setting": self.best, **self.predicted}] + self.runner_ups
        return [
            entry(
                self.method,
                r["setting"],
                guaranteed=r["bound"] if self.feasible else None,
                rounds=r["rounds"],
                floor=r["floor"],
                local_steps=r["local_steps"],
                rho=r.get("rho"),
                valid=self.feasible,
                claims=self.claims,
                function_class=self.function_class,
                lower_bound=self.lower_bound if i == 0 else None,
            )
            for i, r in enumerate(rows)
        ]

    def to_json(self) -> dict:
        return envelope(
            "tune",
            function_class=self.function_class,
            constants=self.constants,
            entries=self.entries(),
            claims=self.claims,
            hypotheses=self.hypotheses,
            caveats=self.caveats,
            message=self.message,
            extra={
                "method": self.method,
                "budget": self.budget,
                "feasible": self.feasible,
                "value": self.value,
                "evaluated": self.evaluated,
            },
        )

    def curve(self, T_max: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(rounds, guaranteed error) of the best setting, T = 0..T_max."""
        keys = ("K", "gamma", "alpha") if METHODS[self.method][0] == "local-update" else ("lambda", "solver")
        g = method_guarantee(
            self.method, self.constants, {k: np.array([self.best[k]]) for k in keys}, self.best.get("server", "gd")
        )
        if T_max is None:
            T_max = int(
                min(max(self.predicted["rounds"] if math.isfinite(self.predicted["rounds"]) else 100, 10), 10**5)
            )
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


def class_text(function_class: str) -> str:
    """The class of federations a guarantee holds for, in words.

    >>> class_text("d1")
    'd = 1'
    """
    return FUNCTION_CLASSES.get(function_class, function_class)


def _rows(
    g, idx: np.ndarray | list[int], budget: str, amount: float, method: str, consts: dict, momentum: str
) -> Iterator[dict]:
    """The result rows of settings ``idx`` of guarantee ``g``, in order; a local-update setting comes without its
    server, which :func:`_server` adds to the rows the caller keeps (:func:`_distinct_rows`' ``complete``).

    A generator: :func:`_distinct_rows` needs only the first few distinct rows of the 60 candidates, so rows are built
    only as far as they are read, and a server (a Table 2 tuning, a fraction of a millisecond) only for the rows kept:
    in the general class most candidates have no finite bound and are dropped."""
    local = METHODS[method][0] == "local-update"
    idx = np.asarray(idx, dtype=np.int64)
    need: Any = g.rounds_to(amount) if budget == "eps" else None  # once for all settings, not per row
    errors: dict[float, np.ndarray] = {}  # R -> error_after(R) of every setting, once per R
    for i in (int(j) for j in idx):
        if local:
            setting = {
                "theta": str(g.params["theta"][i]),
                "K": int(g.params["K"][i]),
                "gamma": float(g.params["gamma"][i]),
                "alpha": float(g.params["alpha"][i]),
            }
        else:
            setting = {"lambda": float(g.params["lambda"][i]), "solver": str(g.params["solver"][i])}
        R = (
            float(need[i])
            if budget == "eps"
            else (float(np.floor(amount / max(float(g.local_steps[i]), 1.0))) if budget == "work" else float(amount))
        )
        if budget == "eps":
            bound = float(need[i])
        else:
            if R not in errors:
                errors[R] = g.error_after(R)
            bound = float(errors[R][i])
        yield {
            "setting": setting,
            "bound": bound,
            "rounds": R,
            "local_steps": float(g.local_steps[i]),
            "floor": float(g.floor[i]),
            "rho": None if g.rho is None else float(g.rho[i]),
        }


def _distinct_rows(rows: Iterable[dict], count: int = 5, complete: Callable[[dict], Any] | None = None) -> list[dict]:
    """Keep rows (an iterable, read only as far as needed) whose printed settings differ (two settings equal to the
    printed precision are one); runner-ups only where a valid guarantee gives a finite value. ``complete(row)``
    completes a row's setting in place before it is compared (only rows that may be kept: :func:`_rows`)."""
    seen: set = set()
    out: list[dict] = []
    for r in rows:
        if out and not math.isfinite(r["bound"]):
            continue
        if complete is not None:
            complete(r)
        key = setting_text(r["setting"])
        if key not in seen:
            seen.add(key)
            out.append(r)
        if len(out) == count:
            break
    return out


def tune(
    method: str,
    *,
    mu: float,
    L: float,
    D: float,
    C: float = 0.0,
    delta_A: float | None = None,
    rounds: int | None = None,
    work: float | None = None,
    eps: float | None = None,
    momentum: str = "gd",
    K_max: int = 10**4,
    points: int = 60,
    function_class: str = "general",
    clients: int | None = None,
    lower_bound: bool = True,
    weights: Any = None,
    hyper: dict | None = None,
) -> Advice | CertifiedAdvice:
    """Best hyperparameters of ``method`` (one of :data:`METHODS`) under exactly one budget.

    A method only :mod:`fedtheory.methods` knows (fedsplit, scaffold, sdane, ...) is tuned by its certified
    worst case instead (:func:`tune_certified`: a rounds budget, ``clients``/``weights``, ``hyper`` to fix a
    setting). ``weights``: the clients' weights (default equal), for the certified d ≥ 2 table's look-up.

    d ≥ 2 (``function_class="general"``) at K(Θ) > 1 is guaranteed only where a certificate covers the
    federation (:func:`fedtheory.explore.certified.certified_floor_lookup`). Without ``clients`` that is the
    certified table's default class — every federation of n ≤ M clients whose weights are multiples of 1/M (M = 8
    in the shipped table) — and the advice says so and gives plain gradient descent's (K = 1) guarantee for any
    other federation.

    Constants: μ, L (Assumption 1), C (‖c_i‖ ≤ C, heterogeneity of the local-update methods), D = ‖x_0 −
    x*‖, δ_A (the DANE family), ``clients`` = n (needed where a bound depends on it: the commuting class).
    ``momentum``: the server of local-update methods (``"gd"``, ``"nesterov"``, ``"heavy_ball"``); its η, β
    are printed with the setting. ``function_class``: ``"d1"``, ``"commuting"`` or ``"general"`` (see the
    module docstring). Local-update methods search K ∈ [1, K_max] and γ(L + α) ∈ [1e-4, 1) (α for
    FedProx); the DANE family searches λ ∈ [2δ_A, 2·10⁴δ_A] and the local solver. ``lower_bound``: when
    the class has no valid guarantee at the d = 1 advice, probe a lower bound there (about a tenth of a second).

    >>> tune("fedavg", mu=1.0, L=10.0, D=1.0, rounds=10, eps=0.1)
    Traceback (most recent call last):
    ...
    ValueError: give exactly one budget (rounds, work or eps), got rounds, eps
    """
    if method not in METHODS:
        check_any_method(method)
        if work is not None or eps is not None:
            raise ValueError(
                f"{method} is tuned by its certified worst case after T rounds: give rounds, not "
                f"{'work' if work is not None else 'eps'}"
            )
        if function_class not in ("general", "quadratic"):
            raise ValueError(
                f"{method}'s certificates are for quadratic clients in any dimension (the general "
                f"class), not function_class={function_class!r}"
            )
        return tune_certified(
            method, mu=mu, L=L, D=D, C=C, rounds=rounds, clients=clients, weights=weights, hyper=hyper
        )
    if hyper is not None:
        raise ValueError(f"hyper fixes a registered method's setting; {method} is tuned on its derived bound")
    given = [(k, v) for k, v in (("rounds", rounds), ("work", work), ("eps", eps)) if v is not None]
    if len(given) != 1:
        raise ValueError(
            f"give exactly one budget (rounds, work or eps), got {', '.join(k for k, _ in given) or 'none'}"
        )
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
        raise ValueError(
            f"target eps={amount:g} is below float64 resolution at the scale D={float(D):g} "
            f"(D·2.2e-16 = {float(D) * np.finfo(np.float64).eps:.3g}): ask for eps >= that"
        )
    mu, L = float(mu), float(L)
    if not (0 < mu <= L < np.inf):
        raise ValueError(f"hypothesis 0 < mu <= L < inf violated (Assumption 1): mu={mu:g}, L={L:g}")
    consts: dict[str, Any] = {
        "mu": mu,
        "L": L,
        "D": float(D),
        "C": float(C),
        "delta_A": None if delta_A is None else float(delta_A),
        "function_class": function_class,
        "clients": None if clients is None else int(clients),
    }
    if weights is not None:
        if clients is None:
            raise ValueError("weights need clients (their number)")
        consts["weights"] = [float(w) for w in certified.client_weights(int(clients), weights)]
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
        rows = _distinct_rows(
            _rows(g, order, budget, amount, method, consts, momentum),
            complete=lambda r: r["setting"].update(_server(method, consts, r["setting"], momentum)),
        )
        # the claims and caveats of the advised setting itself (not of the whole grid)
        g = method_guarantee(
            method, consts, {k: np.array([rows[0]["setting"][k]]) for k in ("K", "gamma", "alpha")}, momentum
        )
    else:
        if consts["delta_A"] is None:
            raise ValueError(
                f"{method} needs delta_A, the δ_A-SOD constant of the clients (Definition 1 of the sdane paper)"
            )
        base = 2 * max(consts["delta_A"], 1e-12 * mu)
        lams = base * np.geomspace(1.0, 1e4, 4 * int(points))
        if method == "acc-s-dane":
            (lams,) = _unique(np.maximum(lams, mu / 4))
        parts = [method_guarantee(method, consts, {"lambda": lams, "solver": s}) for s in LOCAL_SOLVERS]
        values = [_objective(p, budget, amount, consts["D"]) for p in parts]
        value = np.concatenate([v for v, _ in values])
        tie = np.concatenate([t for _, t in values])
        evaluated = int(value.size)
        order = _best(value, tie, 60)
        which, index = np.divmod(order, lams.size)
        rows = _distinct_rows(
            next(_rows(parts[w], [i], budget, amount, method, consts, momentum)) for w, i in zip(which, index)
        )
        g = parts[0]
    best_value = value[order[0]] if budget == "eps" or not np.isfinite(value[order[0]]) else rows[0]["bound"]
    adv = _advice(method, consts, budget, amount, rows, g, best_value, evaluated, function_class)
    if kind == "local-update" and function_class == "general":
        table = certified.load_table()
        if table is not None:
            note = _class_message(method, consts, budget, amount, momentum, table, adv)
            if note:
                adv.message = ((adv.message + "; ") if adv.message else "") + note
    if kind == "local-update" and lower_bound and function_class == "general" and method != "gd":
        _attach_lower_bound(adv, method, consts, budget, amount, momentum, K_max, points)
    return adv


def _with_certified_points(settings: dict, method: str, consts: dict, momentum: str) -> dict:
    """For d ≥ 2, add the certified table's grid points (the only settings with K(Θ) > 1 it answers for)."""
    if consts.get("function_class", "general") != "general" or METHODS[method][0] != "local-update":
        return settings
    if method == "gd":  # gradient descent is K = 1 by definition: no local-step point belongs to it
        return settings
    lookup = certified.certified_floor_lookup(
        consts["mu"], consts["L"], _THETA[method], momentum, consts.get("clients"), consts.get("weights")
    )
    grid = getattr(lookup, "grid", None)
    if not grid:
        return settings
    L = consts["L"]
    K = np.asarray(grid["K"], dtype=np.float64)
    alpha = np.asarray(grid["alphaL"], dtype=np.float64) * L
    keep = (K <= 1e9) & (method != "fedavg" or alpha == 0) & (method != "fedprox" or alpha > 0)
    extra = {"K": K[keep], "gamma": np.asarray(grid["gammaL"], dtype=np.float64)[keep] / L, "alpha": alpha[keep]}
    return {k: np.concatenate([settings[k], extra[k]]) for k in settings}


def _class_message(
    method: str, consts: dict, budget: str, amount: float, momentum: str, table: dict, adv: Advice
) -> str:
    """What the certified table covers for this federation, said in the advice: the default class and plain GD's
    fallback without ``clients``; the certified federations when the given one is not covered."""
    lookup = certified.certified_floor_lookup(
        consts["mu"], consts["L"], _THETA[method], momentum, consts.get("clients"), consts.get("weights")
    )
    feds = "; ".join(certified.weights_text(f) for f in certified.federation_tables(table))
    if consts.get("clients") is None:
        dc = certified.default_class(table)
        if dc is None or lookup is None:
            return (
                f"certified d ≥ 2 guarantees at K(Θ) > 1 exist for {feds} (give --clients, and --weights for "
                "unequal ones) at the certified table's points"
            )
        # plain GD (K = 1) holds for every federation, whatever n and the weights: the fallback
        g = method_guarantee(
            method, consts, {"K": np.array([1.0]), "gamma": np.array([0.0]), "alpha": np.array([0.0])}, momentum
        )
        value, _ = _objective(g, budget, amount, consts["D"])
        what = {"rounds": "after the rounds", "work": "within the work", "eps": "rounds to eps"}[budget]
        return (
            f"without --clients the guarantee above is certified for {dc['text']}; for any other federation "
            f"(more than {dc['clients']} clients, or other weights) only K(Θ) = 1 (plain gradient descent) is "
            f"guaranteed: {float(value[0]):.4g} ({what}); certificates also exist for {feds} (--clients, --weights)"
        )
    if lookup is None:
        return (
            f"no certified d ≥ 2 guarantee at K(Θ) > 1 covers n = {consts['clients']} clients"
            + ("" if consts.get("weights") is None else " with these weights")
            + f": certificates exist for {feds} (and, by splitting clients, every federation they cover)"
        )
    return ""


def _attach_lower_bound(
    adv: Advice, method: str, consts: dict, budget: str, amount: float, momentum: str, K_max: int, points: int
) -> None:
    """Where d ≥ 2 has no valid guarantee at the setting the d = 1 theory picks, say so and probe a lower bound."""
    target: dict[str, Any] = {budget: amount if budget != "rounds" else int(amount)}
    d1 = tune(
        method,
        mu=consts["mu"],
        L=consts["L"],
        D=consts["D"],
        C=consts["C"],
        momentum=momentum,
        K_max=K_max,
        points=points,
        function_class="d1",
        lower_bound=False,
        **target,
    )
    assert isinstance(d1, Advice)  # a method of METHODS: tuned by its guarantee
    if not d1.feasible or d1.best["K"] == 1 or d1.best == adv.best:
        return
    g = method_guarantee(method, consts, {k: np.array([d1.best[k]]) for k in ("K", "gamma", "alpha")}, momentum)
    if bool(g.valid[0]):
        return
    T = int(amount) if budget == "rounds" else int(min(max(d1.predicted["rounds"], 1), 2000))
    lb = probe_lower_bound(consts, d1.best, T, budget="small")
    adv.lower_bound = {"setting": d1.best, "rounds": T, **lb}
    adv.message = ((adv.message + "; ") if adv.message else "") + (
        f"no valid guarantee known for d ≥ 2 at the setting the d = 1 theory picks ({setting_text(d1.best)}): "
        f"Corollary 1's 8CΔ floor is refuted there; best lower bound known: ‖x_T − x*‖ ≥ {lb['value']:.4g} after "
        f"T = {T} rounds ({lb['source']})"
        + ("; the advice above is the best setting that has a valid guarantee" if adv.feasible else "")
    )


def _server(method: str, consts: dict, setting: dict, momentum: str) -> dict:
    """The ServerOpt the guarantee assumes: Table 2's (η, β) at the class-wide μ̃, L̃ of the setting."""
    out = worst_case_tradeoff(
        consts["mu"],
        consts["L"],
        theta=_THETA[method],
        alpha=setting["alpha"],
        gamma=setting["gamma"],
        K=setting["K"],
        momentum=momentum,
    )
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
        message = (
            f"no setting has a valid guarantee reaching eps={amount:g}: the smallest guaranteed floor found is "
            f"{min(floors):.4g}"
            if floors
            else f"no setting has a valid guarantee for {class_text(function_class)}"
        )
    best = rows[0]
    return Advice(
        method=method,
        constants=consts,
        budget={"kind": budget, "amount": amount},
        feasible=feasible,
        best=best["setting"],
        value=float(best_value),
        predicted={k: best[k] for k in ("bound", "rounds", "local_steps", "floor", "rho")},
        claims=g.claims,
        hypotheses=g.hypotheses,
        caveats=g.caveats,
        runner_ups=rows[1:],
        evaluated=evaluated,
        message=message,
        function_class=function_class,
    )


# ---------------------------------------------------------------------------------------------
# every registered method (fedtheory.methods): certified worst cases through fedtheory.methods.pep
# ---------------------------------------------------------------------------------------------

#: the measure every registered method is ranked by: sup ‖x_T − x*‖ after T rounds, ‖x_0 − x*‖ ≤ D
CERTIFIED_MEASURE = "error"
#: the horizon certified: the PEP holds every local gradient of every client in every round (T·K·n points per
#: trajectory; K = 10, T = 2 already takes ~20 s), so a longer budget is ranked by its first CERTIFIED_ROUNDS_MAX
#: rounds, and the advice says so
CERTIFIED_ROUNDS_MAX = 2


def registered_methods() -> list[str]:
    """The names :mod:`fedtheory.methods` knows (every one is accepted by tune, compare and instance).

    >>> {"fedsplit", "scaffold", "sdane"} <= set(registered_methods())
    True
    """
    from fedtheory.methods import names

    return names()


def check_any_method(method: str) -> str:
    """``method`` if the explorer's theory (:data:`METHODS`) or :mod:`fedtheory.methods` knows it, else one line.

    >>> check_any_method("fedsplit")
    'fedsplit'
    >>> check_any_method("fedsplat")
    Traceback (most recent call last):
    ...
    ValueError: unknown method 'fedsplat' (derived bounds: gd, fedavg, fedprox, fomaml, maml, s-dane, acc-s-dane; certified: acc-sdane, dane, fedavg, fedprox, fedsgd, fedsplit, local-update, minibatch-sgd, scaffold, sdane)
    """
    if method in METHODS or method in registered_methods():
        return method
    raise ValueError(
        f"unknown method {method!r} (derived bounds: {', '.join(METHODS)}; certified: "
        f"{', '.join(registered_methods())})"
    )


def hyper_grid(method: str, mu: float, L: float) -> list[dict]:
    """The small grid of hyperparameters a registered method is tuned on (each point costs one certificate):
    steps at the classical choices (1/L, 2/(μ + L), 1/√(μL)), K ∈ {2, 5} local steps at γL ∈ {0.1, 0.5}.

    >>> [sorted(h) for h in hyper_grid("fedsplit", 1.0, 100.0)]
    [['s'], ['s']]
    >>> len(hyper_grid("scaffold", 1.0, 100.0))
    4
    """
    mu, L = float(mu), float(L)
    local = [{"K": K, "gamma": g / L} for K in (2, 5) for g in (0.1, 0.5)]
    steps = [1.0 / L, 2.0 / (mu + L)]
    lams = [math.sqrt(mu * L), L]
    grids = {
        "local-update": local,
        "fedavg": local,
        "fedprox": [{"K": K, "gamma": 0.5 / (L + a), "alpha": a} for K in (2, 5) for a in (mu, L)],
        "fedsgd": [{"eta": e} for e in steps],
        "minibatch-sgd": [{"K": 2, "eta": e} for e in steps],
        "dane": [{"lam": lam} for lam in lams],
        "sdane": [{"lam": lam, "mu": mu} for lam in lams],
        "acc-sdane": [{"lam": lam, "mu": mu} for lam in lams],
        "fedsplit": [{"s": 1.0 / math.sqrt(mu * L)}, {"s": 1.0 / L}],
        "scaffold": [{**h, "eta": 1.0} for h in local],
    }
    if method not in grids:
        raise ValueError(f"no default hyperparameter grid for {method!r}: give its hyperparameters")
    return grids[method]


def _pep_certify():
    """``fedtheory.methods.pep.certify``, imported lazily (another module of the tree; absent here it is one line)."""
    import importlib

    try:
        return importlib.import_module("fedtheory.methods.pep").certify
    except ModuleNotFoundError as err:
        if err.name not in ("fedtheory.methods.pep",):
            raise
        return None


def _need_pep(method: str) -> ValueError:
    return ValueError(
        f"certificates for {method} need fedtheory.methods.pep (the federated PEP of "
        f"fedtheory.methods), which is not installed in this tree"
    )


@dataclass
class CertifiedAdvice(Result):
    """A registered method tuned on a small hyperparameter grid by its *certified* worst case: sup ‖x_T − x*‖ after
    T rounds over quadratic clients μI ⪯ A_i ⪯ LI, ‖c_i − o‖ ≤ C, n clients with the given weights, from
    ‖x_0 − x*‖ ≤ D (:func:`fedtheory.methods.pep.certify`, measure ``"error"``). ``value`` is the best certified
    upper bound (None where no grid point is certified), ``lower`` what a concrete instance reaches there."""

    method: str
    constants: dict
    rounds: int
    clients: int
    weights: list | None
    best: dict
    value: float | None
    lower: float | None
    status: str
    claims: tuple
    tried: list
    message: str = ""

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"fedtheory explore tune: {self.method} (certified worst case)"

    @property
    def feasible(self) -> bool:
        return self.value is not None

    @property
    def class_text(self) -> str:
        w = "equal weights" if self.weights is None else "weights (" + ", ".join(f"{v:g}" for v in self.weights) + ")"
        return (
            f"quadratic clients μI ⪯ A_i ⪯ LI, ‖c_i − o‖ ≤ C, any dimension, n = {self.clients} clients with {w}, "
            f"‖x_0 − x*‖ ≤ D"
        )

    def columns(self) -> list[str]:
        return ["rank", "setting", "certified ‖x_T − x*‖", "instance reaches", "status"]

    def rows(self) -> list[list[Any]]:
        return [
            [i + 1, setting_text(t["setting"]), t["value"], t["lower"], t["status"]] for i, t in enumerate(self.tried)
        ]

    def notes(self) -> list[str]:
        lines = [
            f"budget: rounds = {self.rounds}; 'certified' is sup ‖x_T − x*‖ over {self.class_text} "
            f"(federated PEP, fedtheory.methods.pep, measure '{CERTIFIED_MEASURE}'); {len(self.tried)} settings "
            "certified; uncertified settings are never ranked above certified ones"
        ]
        if self.message:
            lines.append(self.message)
        lines.append("claims: " + (", ".join(self.claims) or "—"))
        return lines

    def entries(self) -> list[dict]:
        return [
            entry(
                self.method,
                t["setting"],
                guaranteed=t["value"],
                rounds=self.rounds,
                floor=None,
                local_steps=t.get("local_steps"),
                rho=None,
                valid=t["value"] is not None,
                claims=(t["claim"],) if t.get("claim") else (),
                function_class="quadratic",
                lower_bound=None if t["lower"] is None else {"value": t["lower"], "source": "certificate instance"},
            )
            for t in self.tried
        ]

    def to_json(self) -> dict:
        return envelope(
            "tune",
            function_class="quadratic",
            constants=self.constants,
            entries=self.entries(),
            claims=self.claims,
            hypotheses=(self.class_text,),
            caveats=(),
            message=self.message,
            extra={
                "method": self.method,
                "budget": {"kind": "rounds", "amount": self.rounds},
                "feasible": self.feasible,
                "value": self.value,
                "clients": self.clients,
                "weights": self.weights,
                "measure": CERTIFIED_MEASURE,
                "certified": True,
            },
        )

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        ok = [t for t in self.tried if t["value"] is not None]
        ax.bar([setting_text(t["setting"]) for t in ok], [t["value"] for t in ok], label="certified")
        ax.set_ylabel(f"sup ‖x_T − x*‖, T = {self.rounds}")
        ax.tick_params(axis="x", labelrotation=60, labelsize=6)


def tune_certified(
    method: str,
    *,
    mu: float,
    L: float,
    D: float,
    C: float = 0.0,
    rounds: int | None = None,
    clients: int | None = None,
    weights: Any = None,
    hyper: dict | None = None,
    grid: list | None = None,
    probe_starts: int = 2,
    seed: int = 0,
) -> CertifiedAdvice:
    """Tune a registered method (:func:`fedtheory.methods.names`) by its certified worst case after ``rounds``.

    Each setting of ``grid`` (default :func:`hyper_grid`; ``hyper`` fixes one setting, no search) is certified by
    :func:`fedtheory.methods.pep.certify` with measure ``"error"``, quadratic clients, heterogeneity C, from
    ‖x_0 − x*‖ ≤ D, for n = ``clients`` (default 2: the certificates' class, and the advice says so) with
    ``weights`` (default equal). The best *certified* value wins; "unreliable" certificates are listed, never chosen.

    >>> tune_certified("fedsplit", mu=1.0, L=10.0, D=1.0, C=0.1, eps=0.1)
    Traceback (most recent call last):
    ...
    TypeError: tune_certified() got an unexpected keyword argument 'eps'
    >>> tune_certified("fedsplit", mu=1.0, L=10.0, D=1.0, C=0.1)
    Traceback (most recent call last):
    ...
    ValueError: certified tuning of fedsplit takes a rounds budget (the worst case after T rounds): give rounds
    """
    import fedtheory.methods as fm

    if rounds is None:
        raise ValueError(
            f"certified tuning of {method} takes a rounds budget (the worst case after T rounds): give rounds"
        )
    if isinstance(rounds, bool) or int(rounds) != rounds or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    mu, L, C, D = float(mu), float(L), float(C), float(D)
    if not (0 < mu <= L < np.inf):
        raise ValueError(f"hypothesis 0 < mu <= L < inf violated: mu={mu:g}, L={L:g}")
    if not (C > 0 and math.isfinite(C)):
        raise ValueError(f"C must be > 0 for a certificate (heterogeneity ‖c_i − o‖ ≤ C), got {C:g}")
    if not (D >= 0 and math.isfinite(D)):
        raise ValueError(f"D must be >= 0, got {D:g}")
    n = 2 if clients is None else int(clients)
    if n < 2:
        raise ValueError(f"certificates need clients >= 2, got {clients!r}")
    p = None if weights is None else [float(v) for v in certified.client_weights(n, weights)]
    if method not in fm.names():
        raise ValueError(f"unknown method {method!r}; known: {', '.join(fm.names())}")
    settings = [dict(hyper)] if hyper is not None else list(grid if grid is not None else hyper_grid(method, mu, L))
    built = [fm.get(method, **h) for h in settings]  # a bad hyperparameter is one line, before any work
    certify = _pep_certify()
    if certify is None:
        raise _need_pep(method)
    horizon = min(int(rounds), CERTIFIED_ROUNDS_MAX)
    tried = []
    for h, m in zip(settings, built):
        cert = certify(
            m,
            mu=mu,
            L=L,
            clients=n,
            p=p,
            measure=CERTIFIED_MEASURE,
            function_class="quadratic",
            C=C,
            rounds=horizon,
            D=D,
            probe_starts=probe_starts,
            seed=seed,
        )
        ok = cert.status == "certified" and cert.value is not None and math.isfinite(cert.value)
        tried.append(
            {
                "setting": h,
                "value": float(cert.value) if ok else None,
                "lower": None if cert.lower is None else float(cert.lower),
                "status": cert.status,
                "claim": getattr(cert, "claim_id", None),
                "local_steps": m.local_work(),
            }
        )
    tried.sort(key=lambda t: (t["value"] is None, t["value"] if t["value"] is not None else 0.0))
    best = tried[0]
    message = "" if best["value"] is not None else f"no setting of {method} tried has a certified worst case"
    if clients is None:
        message = ((message + "; ") if message else "") + (
            "certified for n = 2 equal-weight clients only (give clients = n for another federation)"
            if p is None
            else ""
        )
    if horizon < int(rounds):
        message = ((message + "; ") if message else "") + (
            f"certified after the first {horizon} of the {int(rounds)} rounds (the PEP grows with rounds × K × n); "
            "settings are ranked by that worst case"
        )
    consts = {"mu": mu, "L": L, "C": C, "D": D, "clients": n}
    return CertifiedAdvice(
        method=method,
        constants=consts,
        rounds=horizon,
        clients=n,
        weights=p,
        best=best["setting"],
        value=best["value"],
        lower=best["lower"],
        status=best["status"],
        claims=tuple(sorted({t["claim"] for t in tried if t["claim"] and t["value"] is not None})),
        tried=tried,
        message=message,
    )
