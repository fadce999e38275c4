"""Check the advice: run the real driver on instances of the bound's class, random and adversarial.

:func:`simulate` takes an :class:`~fedtheory.explore.tuning.Advice` and runs its complete setting (Θ, K,
γ, α, server kind, η, β) on the driver (:func:`fedtheory.algorithms.local_update.run_local_update`, or
:mod:`fedtheory.algorithms.dane` for the DANE family) on:

- a random instance of the advice's class (d = 1, commuting with the advice's n clients, or general
  d ≥ 2 with non-commuting clients), at its constants (μ, L attained, ‖c_i‖ ≤ C, ‖x_0 − x*‖ = D);
- the **hardest instance a probe finds** in that class: Nelder–Mead from random starts maximizing
  max_t (exact ‖x_t − x*‖)/(guaranteed at t), through the spectral closed form of
  :mod:`fedtheory.explore.exact` over a family of :mod:`fedtheory.explore.families`; then the driver runs it;
- the federated-PEP certificate's extracted worst case, when the certificate module is present.

For the DANE family (S-DANE, Acc-S-DANE) the class is the theorems' (equal weights, μI ⪯ A_i ⪯ LI, δ_A-SOD,
:func:`~fedtheory.explore.families.dane_family`) and the adversarial instances are the known near-attaining
two-client instance (:func:`~fedtheory.explore.families.near_attaining_dane`) and a probe started from it, each
evaluation running the real driver with the advised λ, local solver and its prescribed local steps over the first rounds.

Every round of every instance is compared with the guarantee (measured/guaranteed per round). A guarantee
that any of them exceeds beyond float64 slack is a **failed claim**, reported as such (``holds`` False and
exit code 1 on the command line), not a caveat. :func:`~fedtheory.explore.families.probe_lower_bound` is
the same probe, maximizing the error itself: the best lower bound known where no guarantee exists.

>>> from fedtheory.explore.tuning import tune
>>> sim = simulate(tune("fedavg", mu=1.0, L=20.0, C=0.5, D=5.0, rounds=30, function_class="d1"), seed=0)
>>> sim.holds, sim.max_ratio <= 1.0, sorted(sim.instances)
(True, True, ['probe', 'random'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

# the advice's guarantee through its module (tuning.method_guarantee): the controls swap in a broken one
from fedtheory.explore import tuning
from fedtheory.explore.certified import certify, pep_available
from fedtheory.explore.exact import complete_setting, exact_errors, measured_curve
from fedtheory.explore.families import (
    class_family,
    dane_family,
    encode_general,
    near_attaining_dane,
    probe_family,
    two_client_weights,
)
from fedtheory.explore.results import Result
from fedtheory.problems.quadratic import QuadraticFederation, make_quadratic

__all__ = ["Simulation", "simulate", "advice_instance"]

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
            return np.where(
                self.predicted > 0,
                np.maximum(measured - self.slack, 0.0) / self.predicted,
                np.where(measured - self.slack > 0, np.inf, 0.0),
            )

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
        return np.any(
            np.stack(
                [(self.predicted < self.slack) & (v["measured"] > self.predicted) for v in self.instances.values()]
            ),
            axis=0,
        )

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
        return [
            [int(self.rounds[i]), float(self.predicted[i])] + [float(r[i]) for r in ratios.values()]
            for i in shown
            if 0 <= i < T
        ]

    def notes(self) -> list[str]:
        if self.holds:
            verdict = "holds at every round on every instance"
        elif self.max_ratio <= 1.0:
            verdict = (
                f"is NOT CONFIRMED: at {int(self.unresolved.sum())} round(s) the bound is below float64 "
                "resolution and a measured error exceeds it"
            )
        else:
            worst = max(self.instances, key=lambda k: float(np.max(self._ratio(self.instances[k]["measured"]))))
            verdict = (
                f"is EXCEEDED (instance '{worst}'): FAILED CLAIM — the statements it rests on "
                f"({', '.join(self.extra.get('claims', []))}) are broken by this instance"
            )
        lines = [
            f"{self.method}: the guarantee {verdict} (max measured/guaranteed = {self.max_ratio:.4g}) over "
            f"{len(self.rounds) - 1} rounds"
        ]
        for k, v in self.instances.items():
            lines.append(
                f"instance {k}: "
                + ", ".join(f"{a}={b}" for a, b in v["instance"].items() if not isinstance(b, (list, dict)))
            )
        lines += [f"{k}: {v}" for k, v in self.extra.items() if k != "claims"]
        return lines

    def to_json(self) -> dict:
        return {
            "kind": "simulate",
            "method": self.method,
            "setting": self.setting,
            "instance": self.instance,
            "rounds": self.rounds,
            "measured": self.measured,
            "predicted": self.predicted,
            "slack": self.slack,
            "max_ratio": self.max_ratio,
            "holds": self.holds,
            "unresolved_rounds": int(self.unresolved.sum()),
            "extra": self.extra,
            "instances": {
                k: {"measured": v["measured"], "instance": v["instance"], "json": v.get("json")}
                for k, v in self.instances.items()
            },
        }

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        for k, v in self.instances.items():
            ax.semilogy(self.rounds, np.maximum(v["measured"], 1e-300), label=f"measured: {k}")
        ax.semilogy(self.rounds, np.maximum(self.predicted, 1e-300), "k--", label="guaranteed")
        ax.set_xlabel("communication rounds")
        ax.set_ylabel("‖x_t − x*‖")
        ax.set_title(
            f"{self.method}: "
            + (
                "holds"
                if self.holds
                else "EXCEEDED"
                if self.max_ratio > 1.0
                else "not confirmed (below float64 resolution)"
            )
        )
        ax.legend(loc="best", fontsize=8)


def advice_instance(advice, *, n: int = 3, seed: Any = 0):
    """A random federation of the advice's class at its constants, and x_0 (see the module docstring).

    >>> from fedtheory.explore.tuning import tune
    >>> q, x0 = advice_instance(tune("gd", mu=1.0, L=5.0, D=2.0, rounds=3), seed=1)
    >>> q.d, round(float(np.linalg.norm(x0 - q.x_star())), 12)
    (2, 2.0)
    """
    rng = np.random.default_rng(seed)
    c = advice.constants
    if advice.method in ("s-dane", "acc-s-dane"):
        # equal weights: the theorems' class is f = (1/n)Σf_i with each f_i in [μ, L] and δ_A-SOD; the drivers'
        # uniform view rescales client i by n·p_i, so unequal weights would leave that class
        q = make_quadratic(
            5, 6, mu=c["mu"], L=c["L"], C=max(c.get("C", 0.0), 1.0), delta_A=c["delta_A"], weights="uniform", seed=rng
        )
        u = rng.normal(size=q.d)
        return q, q.x_star() + c["D"] * u / np.linalg.norm(u)
    size, decode = class_family(advice.function_class, c)
    return decode(rng.normal(size=size) * 2)


def simulate(advice, *, seed: Any = 0, rounds: int | None = None, adversarial: bool = True) -> Simulation:
    """Run the advised setting on random and adversarial instances of its class; compare every round with the
    guarantee (see the module docstring)."""
    if not advice.feasible:
        raise ValueError(f"the advice has no valid guarantee ({advice.message}); nothing to check")
    T_asked = int(rounds if rounds is not None else max(advice.predicted["rounds"], 1))
    local = advice.method not in ("s-dane", "acc-s-dane")
    keys = ("K", "gamma", "alpha") if local else ("lambda", "solver")
    g = tuning.method_guarantee(
        advice.method, advice.constants, {k: np.array([advice.best[k]]) for k in keys}, advice.best.get("server", "gd")
    )
    q, x0 = advice_instance(advice, seed=seed)
    # the horizon: the rounds asked for, up to the round where the guarantee falls below float64 resolution on
    # the random instance (beyond it float64 can neither confirm nor refute it) and at most SIM_MAX_ROUNDS
    t = np.arange(T_asked + 1, dtype=np.float64)
    predicted = np.asarray(g.error_after(t[:, None]))[:, 0]
    scale0 = float(np.linalg.norm(x0) + np.linalg.norm(q.x_star()))
    below = np.flatnonzero(predicted[1:] < _SLACK_PER_ROUND * (t[1:] + 1) * 2 * scale0)
    T = min(T_asked, SIM_MAX_ROUNDS, max(int(below[0]), 1) if below.size else T_asked)
    t, predicted = t[: T + 1], predicted[: T + 1]
    if not local:
        return _within_resolution(
            _simulate_dane(advice, q, x0, T, predicted, seed=seed, adversarial=adversarial), T_asked
        )
    s = advice.best
    if s.get("eta") is None:
        raise ValueError("the advice has no finite tuned server (the class-wide μ̃, L̃ under/overflow float64)")
    equal = "floor/certified" in g.sources  # the certificates' class: fixed weights (two_client_weights)
    if equal:
        size, decode = class_family(advice.function_class, advice.constants, equal_weights=True)
        q, x0 = decode(np.random.default_rng(seed).normal(size=size) * 2)
    found: dict[str, tuple[Any, Any, dict[str, Any]]] = {
        "random": (q, x0, {"family": f"random, class {advice.function_class}"})
    }
    if adversarial:
        size, decode = class_family(advice.function_class, advice.constants, equal_weights=equal)
        cert = _certificate_instance(advice, T)
        starts: tuple = ()
        if cert is not None:
            found["certificate"] = cert
            z = encode_general(cert[0], cert[1], advice.constants)
            starts = () if z is None else (z,)  # a fresh probe started from the certificate's instance

        def ratios(qq, xx):
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(predicted > 0, exact_errors(qq, xx, s, T) / predicted, 0.0)[1:]

        # two objectives: the worst round (early rounds are easy to push) and the last round (where a floor that
        # is too small shows: the refutations live there); the worse instance of the two is kept
        runs = [
            probe_family(lambda qq, xx: float(np.max(ratios(qq, xx))), size, decode, seed, starts=starts),
            probe_family(lambda qq, xx: float(ratios(qq, xx)[-1]), size, decode, seed, starts=starts),
        ]
        best = max(runs, key=lambda r: float(np.max(ratios(*r.worst_instance))))
        qp, xp = best.worst_instance
        found["probe"] = (
            qp,
            xp,
            {
                "family": f"probe maximizing measured/guaranteed, class {advice.function_class}"
                + (", started from the certificate" if starts else ""),
                "evaluations": sum(r.n_evaluations for r in runs),
            },
        )
    instances = {}
    for name, (qq, xx, info) in found.items():
        measured = measured_curve(qq, complete_setting(s), xx, T)
        scale = np.linalg.norm(xx) + np.linalg.norm(qq.x_star())
        info = {
            **info,
            "n": qq.n,
            "d": qq.d,
            "mu": round(qq.mu, 12),
            "L": round(qq.L, 12),
            "C": float(qq.C),
            "D": float(np.linalg.norm(xx - qq.x_star())),
        }
        instances[name] = {
            "measured": measured,
            "instance": info,
            "scale": scale,
            "json": {"federation": qq.to_json(spectral=False), "x0": xx.tolist()},
        }
    scale = max(v["scale"] for v in instances.values())
    slack = _SLACK_PER_ROUND * (t + 1) * 2 * scale
    first = instances["random"]
    extra = {
        "server": f"{s['server']}, eta={s['eta']:.6g}, beta={s['beta']:.6g}",
        "guaranteed floor": float(g.floor[0]),
        "claims": list(g.claims),
    }
    return _within_resolution(
        Simulation(
            method=advice.method,
            setting=dict(advice.best),
            instance=first["instance"],
            rounds=t.astype(np.int64),
            measured=first["measured"],
            predicted=predicted,
            slack=slack,
            extra=extra,
            instances=instances,
        ),
        T_asked,
    )


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
    sim.extra["horizon"] = f"simulated rounds 0..{T} of the {asked} asked for" + (
        ""
        if T >= asked
        else f" (at most {SIM_MAX_ROUNDS})"
        if T == SIM_MAX_ROUNDS
        else f": from round {T + 1} the guarantee is below float64 resolution (nothing beyond can be checked)"
    )
    return sim


def _certificate_instance(advice, T: int):
    """The federated PEP's extracted worst case at the advised setting, when the module is present."""
    if not pep_available() or advice.function_class != "general" or advice.best["K"] == 1:
        return None
    s, c = advice.best, advice.constants
    cert = certify(
        c["mu"],
        c["L"],
        int(s["K"]),
        s["gamma"],
        theta="1:K" if s["theta"] == "uniform" else "K",
        alpha=s["alpha"],
        C=c.get("C", 0.0) or 1.0,
        measure="floor",
        clients=2,
        p=two_client_weights(c).tolist(),
        pieces=16,
        probe_starts=2,
    )
    # two clients with two_client_weights: a member of the advice's class (merging clients), and cheap at any n
    inst = dict(cert.instance or {})
    if "problem" not in inst:
        return None
    q = QuadraticFederation.from_json(inst["problem"])
    q = QuadraticFederation(A=q.A, c=q.c * ((c.get("C", 0.0) or 1.0) / max(float(q.C), 1e-300)), p=q.p)
    x0 = q.x_star() + c["D"] * np.eye(q.d)[0]  # the certificate maximizes the floor: start D away
    return q, x0, {"family": f"federated PEP extracted worst case ({cert.claim_id})"}


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
        points = np.vstack([x0[None, :], h.weighted_average(mu)])  # x̄^R, R ≥ 1 (Theorem 1's point)
    else:
        points = h.x  # x^R (Theorem 6's point)
    return h, np.linalg.norm(points - q.x_star(), axis=1)


#: rounds of the driver each probe evaluation runs (at least, at most): past the round where the known
#: near-attaining instance comes closest, every round costs the probe without bringing it nearer; the cap keeps
#: the whole probe within a few seconds (each evaluation runs the real driver, local solver included)
_DANE_PROBE_ROUNDS = (12, 48)


def _simulate_dane(
    advice, q, x0, T: int, predicted: np.ndarray, *, seed: Any = 0, adversarial: bool = True
) -> Simulation:
    consts = advice.constants
    found: dict[str, tuple[Any, Any, dict[str, Any]]] = {"random": (q, x0, {"family": "quadratic with exact delta_A"})}
    if adversarial:
        z0, qn, xn = near_attaining_dane(consts)
        found["near-attaining"] = (
            qn,
            xn,
            {
                "family": "two clients sharing the eigenpair (mu, e_1), differing on e_2 "
                "by +-delta_A, x0 = D e_1 (known near-attaining)"
            },
        )
        size, decode = dane_family(consts)
        with np.errstate(divide="ignore", invalid="ignore"):
            near = _dane_run(advice, qn, xn, T)[1] / predicted[: T + 1]
        peak = 1 + int(np.argmax(np.where(np.isfinite(near), near, 0.0)[1:])) if T else 0  # round 0 reads 1
        Tp = min(T, max(_DANE_PROBE_ROUNDS[0], min(2 * peak, _DANE_PROBE_ROUNDS[1])))

        def score(qq, xx):
            with np.errstate(divide="ignore", invalid="ignore"):
                r = _dane_run(advice, qq, xx, Tp)[1][1:] / predicted[1 : Tp + 1]
            return float(np.max(np.where(np.isfinite(r), r, 0.0)))

        res = probe_family(score, size, decode, seed, budget="tiny", starts=(z0,))
        qp, xp = res.worst_instance
        found["probe"] = (
            qp,
            xp,
            {
                "family": f"probe maximizing measured/guaranteed over the first {Tp} rounds, "
                "2 clients, d = 2, delta_A-similar, started from the near-attaining "
                "instance",
                "evaluations": res.n_evaluations,
            },
        )
    instances, failures, steps = {}, 0, 0
    for name, (qq, xx, info) in found.items():
        h, measured = _dane_run(advice, qq, xx, T)
        failures += h.test_failures
        if h.local_evals.size:
            steps = max(steps, int(h.local_evals.max()))
        xs = qq.x_star()
        info = {
            **info,
            "n": qq.n,
            "d": qq.d,
            "mu": float(qq.mu),
            "L": float(qq.L),
            "delta_A": float(qq.delta_A()),
            "D": float(np.linalg.norm(xx - xs)),
        }
        instances[name] = {
            "measured": measured,
            "instance": info,
            "scale": np.linalg.norm(xx) + np.linalg.norm(xs),
            "d": qq.d,
            "json": {"federation": qq.to_json(spectral=False), "x0": xx.tolist()},
        }
    R = len(instances["random"]["measured"]) - 1
    if any(len(v["measured"]) != R + 1 for v in instances.values()):
        raise RuntimeError("the DANE driver stopped early on an instance; rounds are not comparable")
    bound = max(v["scale"] * v["d"] for v in instances.values())
    slack = _SLACK_PER_ROUND * (np.arange(R + 1) + 1) * bound
    extra = {
        "test (6) failures (must be 0)": failures,
        "local gradient calls per round incl. ∇f_i at the centre (max over clients and instances)": steps,
        "predicted local steps per round": float(advice.predicted["local_steps"]),
        "claims": list(advice.claims),
    }
    first = instances["random"]
    return Simulation(
        method=advice.method,
        setting=dict(advice.best),
        instance=first["instance"],
        rounds=np.arange(R + 1),
        measured=first["measured"],
        predicted=predicted[: R + 1],
        slack=slack,
        extra=extra,
        instances=instances,
    )
