"""Check the advice: run the real driver on instances of the bound's class, random and adversarial.

:func:`simulate` takes an :class:`~fedtheory.explore.tuning.Advice` and runs its complete setting (Θ, K,
γ, α, server kind, η, β) on the driver (:func:`fedtheory.algorithms.local_update.run_local_update`, or
:mod:`fedtheory.algorithms.dane` for the DANE family) on:

- a random instance of the advice's class (d = 1, commuting with the advice's n clients, or general
  d ≥ 2 with non-commuting clients), at its constants (μ, L attained, ‖c_i‖ ≤ C, ‖x_0 − x*‖ = D);
- the **hardest instance a probe finds** in that class: Nelder–Mead from random starts maximizing
  max_t (exact ‖x_t − x*‖)/(guaranteed at t), through the spectral closed form of
  :mod:`fedtheory.explore.instance`; then the driver runs it;
- the federated-PEP certificate's extracted worst case, when the certificate module is present.

For the DANE family (S-DANE, Acc-S-DANE) the class is the theorems' (equal weights, μI ⪯ A_i ⪯ LI, δ_A-SOD,
:func:`dane_family`) and the adversarial instances are the known near-attaining two-client instance
(:func:`near_attaining_dane`) and a probe started from it, each evaluation running the real driver with the
advised λ, local solver and its prescribed local steps over the first rounds.

Every round of every instance is compared with the guarantee (measured/guaranteed per round). A guarantee
that any of them exceeds beyond float64 slack is a **failed claim**, reported as such (``holds`` False and
exit code 1 on the command line), not a caveat. :func:`probe_lower_bound` is the same probe, maximizing
the error itself: the best lower bound known where no guarantee exists.

>>> from fedtheory.explore.tuning import tune
>>> sim = simulate(tune("fedavg", mu=1.0, L=20.0, C=0.5, D=5.0, rounds=30, function_class="d1"), seed=0)
>>> sim.holds, sim.max_ratio <= 1.0, sorted(sim.instances)
(True, True, ['probe', 'random'])
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedtheory.explore.results import Result

__all__ = ["Simulation", "simulate", "advice_instance", "probe_lower_bound", "class_family", "encode_general",
           "dane_family", "near_attaining_dane"]

# Measured and predicted are compared with a float64 slack: each round adds O(d·eps) relative rounding
# to an iterate of size ≲ ‖x_0‖ + ‖x*‖, and the reference optimum is itself a linear solve.
_SLACK_PER_ROUND = 64 * np.finfo(np.float64).eps
#: the most rounds a simulation runs (each probe evaluation replays every round)
SIM_MAX_ROUNDS = 2_000


@dataclass
class Simulation(Result):
    """Measured against guaranteed, round by round, for one advised setting on several instances.

    ``instances``: name -> {"measured": per-round ‖x_t − x*‖ (driver), "instance": summary, "json": the
    replayable federation}; ``predicted``: the guarantee per round; ``slack``: float64 slack per round.
    """

    method: str
    setting: dict
    instance: dict
    rounds: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    slack: np.ndarray
    extra: dict
    instances: dict = field(default_factory=dict)

    title = "fedtheory explore simulate"

    def _ratio(self, measured: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            # an error within float64 slack of zero reads 0 (never a negative "ratio")
            return np.where(self.predicted > 0, np.maximum(measured - self.slack, 0.0) / self.predicted,
                            np.where(measured - self.slack > 0, np.inf, 0.0))

    @property
    def ratios(self) -> np.ndarray:
        """max over instances of (measured − slack)/guaranteed, per round."""
        return np.max(np.stack([self._ratio(v["measured"]) for v in self.instances.values()]), axis=0)

    @property
    def max_ratio(self) -> float:
        """max over rounds and instances of (measured − float slack)/guaranteed: ≤ 1 when the guarantee held."""
        return float(np.max(self.ratios))

    @property
    def unresolved(self) -> np.ndarray:
        """Rounds where the bound is below float64 resolution (under the slack) and some instance's measured
        error exceeds it: there the slack, not the bound, decides, so such a round cannot confirm the guarantee."""
        return np.any(np.stack([(self.predicted < self.slack) & (v["measured"] > self.predicted)
                                for v in self.instances.values()]), axis=0)

    @property
    def holds(self) -> bool:
        """Confirmed at every round on every instance: never above the bound beyond rounding, nowhere decided by
        rounding alone (:func:`simulate` keeps only the rounds float64 can check, so its results have none of
        the latter)."""
        return self.max_ratio <= 1.0 and not bool(self.unresolved.any())

    def columns(self) -> list[str]:
        return ["round", "guaranteed"] + [f"{k}: measured/guaranteed" for k in self.instances]

    def rows(self) -> list[list[Any]]:
        T = len(self.rounds)
        shown = sorted(set(np.unique(np.round(np.geomspace(1, max(T, 1), 25)).astype(int) - 1).tolist()) | {0, T - 1})
        ratios = {k: self._ratio(v["measured"]) for k, v in self.instances.items()}
        return [[int(self.rounds[i]), float(self.predicted[i])] + [float(r[i]) for r in ratios.values()]
                for i in shown if 0 <= i < T]

    def notes(self) -> list[str]:
        if self.holds:
            verdict = "holds at every round on every instance"
        elif self.max_ratio <= 1.0:
            verdict = (f"is NOT CONFIRMED: at {int(self.unresolved.sum())} round(s) the bound is below float64 "
                       "resolution and a measured error exceeds it")
        else:
            worst = max(self.instances, key=lambda k: float(np.max(self._ratio(self.instances[k]["measured"]))))
            verdict = (f"is EXCEEDED (instance '{worst}'): FAILED CLAIM — the statements it rests on "
                       f"({', '.join(self.extra.get('claims', []))}) are broken by this instance")
        lines = [f"{self.method}: the guarantee {verdict} (max measured/guaranteed = {self.max_ratio:.4g}) over "
                 f"{len(self.rounds) - 1} rounds"]
        for k, v in self.instances.items():
            lines.append(f"instance {k}: " + ", ".join(f"{a}={b}" for a, b in v["instance"].items()
                                                       if not isinstance(b, (list, dict))))
        lines += [f"{k}: {v}" for k, v in self.extra.items() if k != "claims"]
        return lines

    def to_json(self) -> dict:
        return {"kind": "simulate", "method": self.method, "setting": self.setting, "instance": self.instance,
                "rounds": self.rounds, "measured": self.measured, "predicted": self.predicted, "slack": self.slack,
                "max_ratio": self.max_ratio, "holds": self.holds, "unresolved_rounds": int(self.unresolved.sum()),
                "extra": self.extra,
                "instances": {k: {"measured": v["measured"], "instance": v["instance"], "json": v.get("json")}
                              for k, v in self.instances.items()}}

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        for k, v in self.instances.items():
            ax.semilogy(self.rounds, np.maximum(v["measured"], 1e-300), label=f"measured: {k}")
        ax.semilogy(self.rounds, np.maximum(self.predicted, 1e-300), "k--", label="guaranteed")
        ax.set_xlabel("communication rounds")
        ax.set_ylabel("‖x_t − x*‖")
        ax.set_title(f"{self.method}: " + ("holds" if self.holds else "EXCEEDED" if self.max_ratio > 1.0
                                                 else "not confirmed (below float64 resolution)"))
        ax.legend(loc="best", fontsize=8)


# ---------------------------------------------------------------------------------------------
# instance families of each class (every z decodes to a member: hypotheses hold by construction)
# ---------------------------------------------------------------------------------------------

def _unit(z: np.ndarray) -> np.ndarray:
    return (1 + np.sin(z)) / 2


def _federation(lam: np.ndarray, U: np.ndarray, c: np.ndarray, p: np.ndarray):
    from fedtheory.problems.quadratic import QuadraticFederation

    order = np.argsort(lam, axis=1)
    lam = np.take_along_axis(lam, order, axis=1)
    U = np.stack([U[i][:, order[i]] for i in range(lam.shape[0])])
    A = np.einsum("nij,nj,nkj->nik", U, lam, U)
    return QuadraticFederation(A=0.5 * (A + np.swapaxes(A, 1, 2)), c=c, p=p / p.sum(), eigvals=lam, eigvecs=U)


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
    first = float(p[:n // 2].sum())
    return np.array([first, 1.0 - first])


def class_family(function_class: str, consts: dict, *, equal_weights: bool = False) -> tuple[int, Any]:
    """(size, decode): z ∈ R^size ↦ (federation, x_0) in the class at the constants (μ, L attained by one client,
    ‖c_i‖ ≤ C, ‖x_0 − x*‖ = D). d = 1: 3 clients; commuting: the advice's n clients (at most 6) in d = 2 with
    one shared basis; general: 2 clients, d = 2, each with its own rotation (the family of the refutations).
    ``equal_weights``: the general family's weights fixed to :func:`two_client_weights` (a member of the
    certified federation class: ½, ½ for equal weights and even n).

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
            phis = z[k:k + rot]
            k += rot
            U = np.stack([_rotation(float(phis[0 if rot == 1 else i])) for i in range(n)])
        lam = mu + (L - mu) * _unit(z[k:k + n * d]).reshape(n, d)
        k += n * d
        lam[0, 0], lam[-1, -1] = mu, L                         # μ and L attained
        raw = z[k:k + n * (d + 1)].reshape(n, d + 1)
        k += n * (d + 1)
        direction = raw[:, :d] / np.maximum(np.linalg.norm(raw[:, :d], axis=1, keepdims=True), 1e-300)
        c = C * _unit(raw[:, d:]) * direction
        if equal_weights:
            w = two_client_weights(consts) if n == 2 else np.ones(n)
        else:
            w = np.exp(np.clip(z[k:k + n], -20, 20))
        k += n
        q = _federation(lam, U, c, w)
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
            V[i][:, 1] *= -1                                 # same A_i, a rotation
        phis.append(math.atan2(V[i][1, 0], V[i][0, 0]))
    zl = np.arcsin(np.clip(2 * (lam - mu) / (L - mu) - 1, -1, 1))
    c = np.asarray(q.c)
    r = np.linalg.norm(c, axis=1)
    raw = np.concatenate([np.where(r[:, None] > 0, c / np.maximum(r, 1e-300)[:, None], 1.0),
                          np.arcsin(np.clip(2 * r / max(C, 1e-300) - 1, -1, 1))[:, None]], axis=1)
    e = (x0 - q.x_star()) / max(D, 1e-300)
    return np.concatenate([phis, zl.ravel(), raw.ravel(), np.log(np.asarray(q.p)), [math.atan2(e[1], e[0])]])


def _setting_dict(setting: dict) -> dict:
    return {"method": setting.get("method", ""), "theta": setting["theta"], "K": int(setting["K"]),
            "gamma": float(setting["gamma"]), "alpha": float(setting["alpha"]), "server": setting["server"],
            "eta": float(setting["eta"]), "beta": float(setting["beta"] or 0.0)}


def _exact_errors(q, x0: np.ndarray, setting: dict, T: int) -> np.ndarray:
    from fedtheory.explore.instance import ExactModel, _exact_curve

    return _exact_curve(ExactModel(q), _setting_dict(setting), x0, T)


def _probe(score, size: int, decode, seed: Any, budget: str = "normal", starts=()):
    from fedtheory.certify.params import Custom
    from fedtheory.certify.probe import probe

    # "tiny": the DANE family's probe, whose every evaluation runs the driver with its local solver
    n_random, n_starts, fev = {"normal": (96, 4, 150), "small": (24, 2, 60), "tiny": (16, 2, 30)}[budget]
    res = probe(lambda inst: score(*inst), Custom(size, decode), seed=seed, n_random=n_random, n_starts=n_starts,
                maxiter=fev, options={"maxfev": fev}, starts=starts)
    return res


def probe_lower_bound(consts: dict, setting: dict, T: int, *, seed: Any = 0, function_class: str = "general",
                      budget: str = "normal") -> dict:
    """The largest ‖x_T − x*‖ a probe finds in the class at ``setting`` (complete, server included): a lower
    bound on the worst case (any guarantee must be at least this). Returns value, the instance (JSON,
    replayable) and a source line. ``budget``: ``"normal"`` (96 draws, 4 Nelder–Mead starts of 150
    evaluations) or ``"small"`` (24 draws, 2 starts of 60: what :func:`~fedtheory.explore.tuning.tune`
    spends to show a lower bound in about a second).

    >>> lb = probe_lower_bound({"mu": 1.0, "L": 10.0, "C": 1.0, "D": 1.0},
    ...                        {"theta": "uniform", "K": 1, "gamma": 0.0, "alpha": 0.0, "server": "gd",
    ...                         "eta": 2 / 11, "beta": 0.0}, 5)
    >>> lb["value"] <= (9 / 11) ** 5 + 1e-12       # K = 1: GD, contraction (κ − 1)/(κ + 1) per round
    True
    """
    size, decode = class_family(function_class, consts)
    res = _probe(lambda q, x0: float(_exact_errors(q, x0, setting, T)[-1]), size, decode, seed, budget)
    q, x0 = res.worst_instance
    return {"value": float(res.worst_value), "instance": {"federation": q.to_json(spectral=False), "x0": x0.tolist()},
            "source": f"probe over {res.n_evaluations} instances, {q.n} clients, d = {q.d}, exact closed form",
            "evaluations": res.n_evaluations}


def advice_instance(advice, *, n: int = 3, seed: Any = 0):
    """A random federation of the advice's class at its constants, and x_0 (see the module docstring).

    >>> from fedtheory.explore.tuning import tune
    >>> q, x0 = advice_instance(tune("gd", mu=1.0, L=5.0, D=2.0, rounds=3), seed=1)
    >>> q.d, round(float(np.linalg.norm(x0 - q.x_star())), 12)
    (2, 2.0)
    """
    from fedtheory.problems.quadratic import make_quadratic

    rng = np.random.default_rng(seed)
    c = advice.constants
    if advice.method in ("s-dane", "acc-s-dane"):
        # equal weights: the theorems' class is f = (1/n)Σf_i with each f_i in [μ, L] and δ_A-SOD; the drivers'
        # uniform view rescales client i by n·p_i, so unequal weights would leave that class
        q = make_quadratic(5, 6, mu=c["mu"], L=c["L"], C=max(c.get("C", 0.0), 1.0), delta_A=c["delta_A"],
                           weights="uniform", seed=rng)
        u = rng.normal(size=q.d)
        return q, q.x_star() + c["D"] * u / np.linalg.norm(u)
    size, decode = class_family(advice.function_class, c)
    return decode(rng.normal(size=size) * 2)


def simulate(advice, *, seed: Any = 0, rounds: int | None = None, adversarial: bool = True) -> Simulation:
    """Run the advised setting on random and adversarial instances of its class; compare every round with the
    guarantee (see the module docstring)."""
    from fedtheory.explore.tuning import method_guarantee

    if not advice.feasible:
        raise ValueError(f"the advice has no valid guarantee ({advice.message}); nothing to check")
    T_asked = int(rounds if rounds is not None else max(advice.predicted["rounds"], 1))
    local = advice.method not in ("s-dane", "acc-s-dane")
    keys = ("K", "gamma", "alpha") if local else ("lambda", "solver")
    g = method_guarantee(advice.method, advice.constants, {k: np.array([advice.best[k]]) for k in keys},
                         advice.best.get("server", "gd"))
    q, x0 = advice_instance(advice, seed=seed)
    # the horizon: the rounds asked for, up to the round where the guarantee falls below float64 resolution on
    # the random instance (beyond it float64 can neither confirm nor refute it) and at most SIM_MAX_ROUNDS
    t = np.arange(T_asked + 1, dtype=np.float64)
    predicted = np.asarray(g.error_after(t[:, None]))[:, 0]
    scale0 = float(np.linalg.norm(x0) + np.linalg.norm(q.x_star()))
    below = np.flatnonzero(predicted[1:] < _SLACK_PER_ROUND * (t[1:] + 1) * 2 * scale0)
    T = min(T_asked, SIM_MAX_ROUNDS, max(int(below[0]), 1) if below.size else T_asked)
    t, predicted = t[:T + 1], predicted[:T + 1]
    if not local:
        return _within_resolution(_simulate_dane(advice, q, x0, T, predicted, seed=seed, adversarial=adversarial),
                                  T_asked)
    s = advice.best
    if s.get("eta") is None:
        raise ValueError("the advice has no finite tuned server (the class-wide μ̃, L̃ under/overflow float64)")
    equal = "floor/certified" in g.sources        # the certificates' class: fixed weights (two_client_weights)
    if equal:
        size, decode = class_family(advice.function_class, advice.constants, equal_weights=True)
        q, x0 = decode(np.random.default_rng(seed).normal(size=size) * 2)
    found = {"random": (q, x0, {"family": f"random, class {advice.function_class}"})}
    if adversarial:
        size, decode = class_family(advice.function_class, advice.constants, equal_weights=equal)
        cert = _certificate_instance(advice, T)
        starts = ()
        if cert is not None:
            found["certificate"] = cert
            z = encode_general(cert[0], cert[1], advice.constants)
            starts = () if z is None else (z,)          # a fresh probe started from the certificate's instance
        def ratios(qq, xx):
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(predicted > 0, _exact_errors(qq, xx, s, T) / predicted, 0.0)[1:]

        # two objectives: the worst round (early rounds are easy to push) and the last round (where a floor that
        # is too small shows: the refutations live there); the worse instance of the two is kept
        runs = [_probe(lambda qq, xx: float(np.max(ratios(qq, xx))), size, decode, seed, starts=starts),
                _probe(lambda qq, xx: float(ratios(qq, xx)[-1]), size, decode, seed, starts=starts)]
        best = max(runs, key=lambda r: float(np.max(ratios(*r.worst_instance))))
        qp, xp = best.worst_instance
        found["probe"] = (qp, xp, {"family": f"probe maximizing measured/guaranteed, class {advice.function_class}"
                                   + (", started from the certificate" if starts else ""),
                                   "evaluations": sum(r.n_evaluations for r in runs)})
    instances = {}
    for name, (qq, xx, info) in found.items():
        measured = _run(qq, xx, s, T)
        scale = np.linalg.norm(xx) + np.linalg.norm(qq.x_star())
        info = {**info, "n": qq.n, "d": qq.d, "mu": round(qq.mu, 12), "L": round(qq.L, 12), "C": float(qq.C),
                "D": float(np.linalg.norm(xx - qq.x_star()))}
        instances[name] = {"measured": measured, "instance": info, "scale": scale,
                           "json": {"federation": qq.to_json(spectral=False), "x0": xx.tolist()}}
    scale = max(v["scale"] for v in instances.values())
    slack = _SLACK_PER_ROUND * (t + 1) * 2 * scale
    first = instances["random"]
    extra = {"server": f"{s['server']}, eta={s['eta']:.6g}, beta={s['beta']:.6g}",
             "guaranteed floor": float(g.floor[0]), "claims": list(g.claims)}
    return _within_resolution(Simulation(method=advice.method, setting=dict(advice.best), instance=first["instance"],
                                         rounds=t.astype(np.int64), measured=first["measured"], predicted=predicted,
                                         slack=slack, extra=extra, instances=instances), T_asked)


def _within_resolution(sim: Simulation, asked: int) -> Simulation:
    """The simulation cut to the rounds where float64 can check the guarantee (the bound above every instance's
    rounding slack), the horizon said in ``extra``: rounds where rounding alone would decide are not kept."""
    ok = np.asarray(sim.predicted) >= np.asarray(sim.slack)
    ok[0] = True
    last = len(ok) - 1 if ok.all() else max(int(np.argmin(ok)) - 1, min(1, len(ok) - 1))
    if last + 1 < len(ok):
        cut = slice(0, last + 1)
        sim.rounds, sim.predicted, sim.slack = sim.rounds[cut], sim.predicted[cut], sim.slack[cut]
        sim.measured = sim.measured[cut]
        for v in sim.instances.values():
            v["measured"] = v["measured"][cut]
    T = int(sim.rounds[-1])
    sim.extra["horizon"] = (f"simulated rounds 0..{T} of the {asked} asked for"
                            + ("" if T >= asked else f" (at most {SIM_MAX_ROUNDS})" if T == SIM_MAX_ROUNDS else
                               f": from round {T + 1} the guarantee is below float64 resolution (nothing beyond "
                               "can be checked)"))
    return sim


def _run(q, x0: np.ndarray, setting: dict, T: int) -> np.ndarray:
    from fedtheory.explore.instance import _measured_curve

    return _measured_curve(q, _setting_dict(setting), x0, T)


def _certificate_instance(advice, T: int):
    """The federated PEP's extracted worst case at the advised setting, when the module is present."""
    from fedtheory.explore.certified import certify, pep_available

    if not pep_available() or advice.function_class != "general" or advice.best["K"] == 1:
        return None
    from fedtheory.problems.quadratic import QuadraticFederation

    s, c = advice.best, advice.constants
    cert = certify(c["mu"], c["L"], int(s["K"]), s["gamma"], theta="1:K" if s["theta"] == "uniform" else "K",
                   alpha=s["alpha"], C=c.get("C", 0.0) or 1.0, measure="floor", clients=2,
                   p=two_client_weights(c).tolist(), pieces=16, probe_starts=2)
    # two clients with two_client_weights: a member of the advice's class (merging clients), and cheap at any n
    inst = dict(cert.instance or {})
    if "problem" not in inst:
        return None
    q = QuadraticFederation.from_json(inst["problem"])
    q = QuadraticFederation(A=q.A, c=q.c * ((c.get("C", 0.0) or 1.0) / max(float(q.C), 1e-300)), p=q.p)
    x0 = q.x_star() + c["D"] * np.eye(q.d)[0]           # the certificate maximizes the floor: start D away
    return q, x0, {"family": f"federated PEP extracted worst case ({cert.claim_id})"}


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
    from fedtheory.problems.quadratic import QuadraticFederation

    mu, L, dA, D = consts["mu"], consts["L"], consts["delta_A"], consts["D"]
    n, d = int(n), int(d)
    if n < 2 or d != 2:
        raise ValueError(f"dane_family needs n >= 2 clients and d = 2, got n={n}, d={d}")
    size = n + n * d + 1

    def decode(z: np.ndarray):
        z = np.asarray(z, dtype=np.float64)
        U = np.stack([_rotation(float(phi)) for phi in z[:n]])
        lam = mu + (L - mu) * _unit(z[n:n + n * d]).reshape(n, d)
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
    from fedtheory.problems.quadratic import QuadraticFederation

    mu, L, D = consts["mu"], consts["L"], consts["D"]
    delta = min(consts["delta_A"], (L - mu) / 2)
    q = QuadraticFederation(A=[np.diag([mu, mu + 2 * delta]), np.diag([mu, mu])], c=np.zeros((2, 2)), p=[0.5, 0.5])
    units = np.array([0.0, 2 * delta, 0.0, 0.0]) / (L - mu) if L > mu else np.zeros(4)
    z = np.concatenate([[0.0, 0.0], np.arcsin(np.clip(2 * units - 1, -1, 1)), [0.0]])
    return z, q, D * np.eye(2)[0]


def _dane_run(advice, q, x0, T: int):
    """The advised DANE-family setting on the driver: (history, per-round ‖point − x*‖ of the theorem's point)."""
    from fedtheory.algorithms.dane import run_acc_sdane, run_sdane
    from fedtheory.algorithms.local_solvers import FGM, GD, FastGradNorm

    s, mu = advice.best, advice.constants["mu"]
    # the fixed number of local steps the bound prescribes (Corollary 3 / Remark 19): the accuracy test
    # must then hold in every round without any adaptive retry
    K = int(advice.predicted["local_steps"])
    solver = {"gd": GD, "fgm": FGM, "fgm+ogm-g": FastGradNorm}[s["solver"]](K=K)
    run = run_acc_sdane if advice.method == "acc-s-dane" else run_sdane
    h = run(q, x0, T, lam=float(s["lambda"]), mu=mu, solver=solver)
    if advice.method == "s-dane":
        points = np.vstack([x0[None, :], h.weighted_average(mu)])    # x̄^R, R ≥ 1 (Theorem 1's point)
    else:
        points = h.x                                                  # x^R (Theorem 6's point)
    return h, np.linalg.norm(points - q.x_star(), axis=1)


#: rounds of the driver each probe evaluation runs (at least, at most): past the round where the known
#: near-attaining instance comes closest, every round costs the probe without bringing it nearer; the cap keeps
#: the whole probe within a few seconds (each evaluation runs the real driver, local solver included)
_DANE_PROBE_ROUNDS = (12, 48)


def _simulate_dane(advice, q, x0, T: int, predicted: np.ndarray, *, seed: Any = 0,
                   adversarial: bool = True) -> Simulation:
    consts = advice.constants
    found = {"random": (q, x0, {"family": "quadratic with exact delta_A"})}
    if adversarial:
        z0, qn, xn = near_attaining_dane(consts)
        found["near-attaining"] = (qn, xn, {"family": "two clients sharing the eigenpair (mu, e_1), differing on e_2 "
                                                      "by +-delta_A, x0 = D e_1 (known near-attaining)"})
        size, decode = dane_family(consts)
        with np.errstate(divide="ignore", invalid="ignore"):
            near = _dane_run(advice, qn, xn, T)[1] / predicted[: T + 1]
        peak = 1 + int(np.argmax(np.where(np.isfinite(near), near, 0.0)[1:])) if T else 0   # round 0 reads 1
        Tp = min(T, max(_DANE_PROBE_ROUNDS[0], min(2 * peak, _DANE_PROBE_ROUNDS[1])))

        def score(qq, xx):
            with np.errstate(divide="ignore", invalid="ignore"):
                r = _dane_run(advice, qq, xx, Tp)[1][1:] / predicted[1:Tp + 1]
            return float(np.max(np.where(np.isfinite(r), r, 0.0)))

        res = _probe(score, size, decode, seed, budget="tiny", starts=(z0,))
        qp, xp = res.worst_instance
        found["probe"] = (qp, xp, {"family": f"probe maximizing measured/guaranteed over the first {Tp} rounds, "
                                             "2 clients, d = 2, delta_A-similar, started from the near-attaining "
                                             "instance", "evaluations": res.n_evaluations})
    instances, failures, steps = {}, 0, 0
    for name, (qq, xx, info) in found.items():
        h, measured = _dane_run(advice, qq, xx, T)
        failures += h.test_failures
        if h.local_evals.size:
            steps = max(steps, int(h.local_evals.max()))
        xs = qq.x_star()
        info = {**info, "n": qq.n, "d": qq.d, "mu": float(qq.mu), "L": float(qq.L), "delta_A": float(qq.delta_A()),
                "D": float(np.linalg.norm(xx - xs))}
        instances[name] = {"measured": measured, "instance": info, "scale": np.linalg.norm(xx) + np.linalg.norm(xs),
                           "d": qq.d, "json": {"federation": qq.to_json(spectral=False), "x0": xx.tolist()}}
    R = len(instances["random"]["measured"]) - 1
    if any(len(v["measured"]) != R + 1 for v in instances.values()):
        raise RuntimeError("the DANE driver stopped early on an instance; rounds are not comparable")
    bound = max(v["scale"] * v["d"] for v in instances.values())
    slack = _SLACK_PER_ROUND * (np.arange(R + 1) + 1) * bound
    extra = {"test (6) failures (must be 0)": failures,
             "local gradient calls per round incl. ∇f_i at the centre (max over clients and instances)": steps,
             "predicted local steps per round": float(advice.predicted["local_steps"]),
             "claims": list(advice.claims)}
    first = instances["random"]
    return Simulation(method=advice.method, setting=dict(advice.best), instance=first["instance"],
                      rounds=np.arange(R + 1), measured=first["measured"], predicted=predicted[: R + 1], slack=slack,
                      extra=extra, instances=instances)
