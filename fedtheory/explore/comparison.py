"""Several methods on the same constants, each tuned for the same target: one table, one plot.

Each method is tuned by :func:`fedtheory.explore.tuning.tune` for the target accuracy ``eps`` (distance to
x*); the table gives the guaranteed rounds to ``eps``, the accuracy floor (how close the method's
guarantee can ever get), the local gradient evaluations per client per round and in total, the tuned
hyperparameters and the claim ids of the bounds used. A method whose constants are missing (the DANE
family needs δ_A) is listed with the reason instead of numbers.

>>> cmp = compare(["gd", "fedavg", "s-dane"], mu=1.0, L=100.0, C=0.01, D=10.0, delta_A=1.0, eps=1e-2,
...               function_class="d1")
>>> [r[0] for r in cmp.rows()]
['gd', 'fedavg', 's-dane']
>>> cmp.entries()[2]["rounds"] < cmp.entries()[0]["rounds"]      # S-DANE needs fewer rounds than GD here
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedtheory.explore.results import Result, entry, envelope, fmt, setting_text
from fedtheory.explore.tuning import (
    METHODS,
    Advice,
    check_any_method,
    class_text,
    registered_methods,
    tune,
    tune_certified,
)

__all__ = ["Comparison", "compare", "DEFAULT_METHODS", "CertifiedComparison", "compare_certified"]

DEFAULT_METHODS = ("gd", "fedavg", "fedprox", "fomaml", "maml", "s-dane", "acc-s-dane")


@dataclass
class Comparison(Result):
    """One row per method: rounds to eps, floor, local work, setting, claims (or why it is missing)."""

    constants: dict
    eps: float
    rows_: list
    advice: dict
    function_class: str = "general"

    title = "fedtheory explore compare"

    def entries(self) -> list[dict]:
        """The shared JSON entries (one per method; ``guaranteed`` = rounds to eps, None where missing)."""
        out = []
        for e in self.rows_:
            if e.get("missing"):
                out.append(
                    entry(
                        e["method"],
                        {},
                        guaranteed=None,
                        rounds=None,
                        floor=None,
                        local_steps=None,
                        rho=None,
                        valid=False,
                        claims=(),
                        function_class=self.function_class,
                    )
                    | {"missing": e["missing"]}
                )
                continue
            a = self.advice[e["method"]]
            out.append(
                entry(
                    e["method"],
                    e["setting"],
                    guaranteed=e["rounds"],
                    rounds=e["rounds"],
                    floor=e["floor"],
                    local_steps=e["local_steps"],
                    rho=a.predicted.get("rho"),
                    valid=a.feasible,
                    claims=e["claims"],
                    function_class=self.function_class,
                    lower_bound=a.lower_bound,
                )
                | {"total_local_steps": e["total_local_steps"]}
            )
        return out

    def columns(self) -> list[str]:
        return ["method", "rounds to eps", "floor", "local steps/round", "total local steps", "setting", "claims"]

    def rows(self) -> list[list[Any]]:
        out = []
        for e in self.rows_:
            if e.get("missing"):
                out.append([e["method"], None, None, None, None, e["missing"], ""])
                continue
            setting = ", ".join(f"{k}={fmt(v)}" for k, v in e["setting"].items() if k != "theta")
            out.append(
                [
                    e["method"],
                    e["rounds"],
                    e["floor"],
                    e["local_steps"],
                    e["total_local_steps"],
                    setting,
                    ", ".join(e["claims"][:2]),
                ]
            )
        return out

    def notes(self) -> list[str]:
        c = self.constants
        lines = [
            f"target ‖x − x*‖ ≤ eps = {self.eps:g}; guaranteed rounds valid for "
            f"{class_text(self.function_class)}; "
            "constants " + ", ".join(f"{k}={fmt(v)}" for k, v in c.items() if v is not None)
        ]
        for m, a in self.advice.items():
            if a.message:
                lines.append(f"{m}: {a.message}")
        seen = set()
        for e in self.rows_:
            for cav in e.get("caveats", ()):
                if cav not in seen:
                    seen.add(cav)
                    lines.append(f"caveat ({e['method']}): {cav}")
        return lines

    def to_json(self) -> dict:
        claims, hyps, cavs = [], [], []
        for a in self.advice.values():
            claims += [c for c in a.claims if c not in claims]
            hyps += [h for h in a.hypotheses if h not in hyps]
            cavs += [c for c in a.caveats if c not in cavs]
        return envelope(
            "compare",
            function_class=self.function_class,
            constants=self.constants,
            entries=self.entries(),
            claims=claims,
            hypotheses=hyps,
            caveats=cavs,
            message=" ".join(f"{m}: {a.message}" for m, a in self.advice.items() if a.message),
            extra={"eps": self.eps},
        )

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        finite = [e["rounds"] for e in self.rows_ if not e.get("missing") and math.isfinite(e["rounds"])]
        T_max = int(min(max(finite + [10]) * 1.2, 10**5))
        for e in self.rows_:
            if e.get("missing") or not self.advice[e["method"]].feasible:
                continue
            T, err = self.advice[e["method"]].curve(T_max)
            ax.semilogy(T, np.maximum(err, 1e-300), label=e["method"])
        ax.axhline(self.eps, ls=":", color="k", label="eps")
        ax.set_xlabel("communication rounds")
        ax.set_ylabel("guaranteed ‖x_T − x*‖")
        ax.legend(loc="best", fontsize=8)


def compare(
    methods: Any = DEFAULT_METHODS,
    *,
    mu: float,
    L: float,
    D: float,
    eps: float,
    C: float = 0.0,
    delta_A: float | None = None,
    momentum: str = "gd",
    function_class: str = "general",
    clients: int | None = None,
) -> Comparison:
    """Tune each of ``methods`` for ``eps`` on the same constants; see the module docstring.

    >>> compare(["fedavg", "sgd"], mu=1.0, L=10.0, D=1.0, eps=0.1)       # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown method 'sgd' (derived bounds: gd, fedavg, fedprox, fomaml, maml, s-dane, acc-s-dane; certified: ...)
    """
    methods = list(methods)
    for m in methods:
        if m not in METHODS:
            check_any_method(m)  # a registered method: certified, after a number of rounds
            raise ValueError(
                f"{m} has no derived bound to reach eps with; compare registered methods by their "
                f"certified worst case after T rounds (rounds=T; command line: --rounds T)"
            )
    consts = {
        "mu": float(mu),
        "L": float(L),
        "C": float(C),
        "D": float(D),
        "delta_A": None if delta_A is None else float(delta_A),
    }
    entries, advice = [], {}
    for m in methods:
        if METHODS[m][0] == "dane" and delta_A is None:
            entries.append({"method": m, "missing": "needs delta_A (δ_A-SOD constant)"})
            continue
        a = tune(
            m,
            mu=mu,
            L=L,
            C=C,
            D=D,
            delta_A=delta_A,
            eps=eps,
            momentum=momentum,
            function_class=function_class,
            clients=clients,
        )
        assert isinstance(a, Advice)  # a method of METHODS: tuned by its guarantee
        advice[m] = a
        rounds = a.predicted["rounds"]
        entries.append(
            {
                "method": m,
                "rounds": rounds,
                "floor": a.predicted["floor"],
                "local_steps": a.predicted["local_steps"],
                "total_local_steps": rounds * a.predicted["local_steps"],
                "setting": a.best,
                "server": a.server,
                "claims": list(a.claims),
                "hypotheses": list(a.hypotheses),
                "caveats": list(a.caveats),
                "feasible": a.feasible,
            }
        )
    return Comparison(constants=consts, eps=float(eps), rows_=entries, advice=advice, function_class=function_class)


@dataclass
class CertifiedComparison(Result):
    """Registered methods (:func:`fedtheory.methods.names`) ranked by their certified worst case sup ‖x_T − x*‖
    after T rounds on the same constants, each at its best certified setting of a small grid (or the given one)."""

    constants: dict
    rounds: int
    advice: dict
    order: list

    title = "fedtheory explore compare (certified worst case)"

    def columns(self) -> list[str]:
        return ["rank", "method", "certified ‖x_T − x*‖", "instance reaches", "status", "setting", "claim"]

    def rows(self) -> list[list[Any]]:
        out = []
        for rank, m in enumerate(self.order, start=1):
            a = self.advice[m]
            out.append(
                [
                    rank if a.value is not None else "—",
                    m,
                    a.value,
                    a.lower,
                    a.status,
                    setting_text(a.best),
                    ", ".join(a.claims),
                ]
            )
        return out

    def notes(self) -> list[str]:
        first = next(iter(self.advice.values()))
        lines = [
            f"T = {self.rounds} rounds; certified over {first.class_text} (fedtheory.methods.pep.certify, "
            "measure 'error'); methods without a certified value are listed last, unranked; constants "
            + ", ".join(f"{k}={fmt(v)}" for k, v in self.constants.items() if v is not None)
        ]
        lines += [f"{m}: {a.message}" for m, a in self.advice.items() if a.message]
        return lines

    def entries(self) -> list[dict]:
        out = []
        for m in self.order:
            a = self.advice[m]
            out.append(
                entry(
                    m,
                    a.best,
                    guaranteed=a.value,
                    rounds=self.rounds,
                    floor=None,
                    local_steps=a.tried[0].get("local_steps"),
                    rho=None,
                    valid=a.value is not None,
                    claims=a.claims,
                    function_class="quadratic",
                    lower_bound=None if a.lower is None else {"value": a.lower, "source": "certificate instance"},
                )
            )
        return out

    def to_json(self) -> dict:
        claims = sorted({c for a in self.advice.values() for c in a.claims})
        first = next(iter(self.advice.values()))
        return envelope(
            "compare",
            function_class="quadratic",
            constants=self.constants,
            entries=self.entries(),
            claims=claims,
            hypotheses=(first.class_text,),
            caveats=(),
            message=" ".join(f"{m}: {a.message}" for m, a in self.advice.items() if a.message),
            extra={
                "rounds": self.rounds,
                "ranking": [m for m in self.order if self.advice[m].value is not None],
                "measure": "error",
                "certified": True,
            },
        )

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        ok = [m for m in self.order if self.advice[m].value is not None]
        ax.bar(ok, [self.advice[m].value for m in ok])
        ax.set_yscale("log")
        ax.set_ylabel(f"certified sup ‖x_T − x*‖, T = {self.rounds}")


def compare_certified(
    methods: Any,
    *,
    mu: float,
    L: float,
    D: float,
    rounds: int,
    C: float,
    clients: int | None = None,
    weights: Any = None,
    hyper: dict | None = None,
    probe_starts: int = 2,
    seed: int = 0,
) -> CertifiedComparison:
    """Rank registered methods by their certified worst case after ``rounds`` (:func:`tune_certified` for each, on
    its small grid, or at ``hyper[method]``); uncertified ones last. Every name must be registered
    (:func:`fedtheory.methods.names`); the explorer's own ``gd``, ``s-dane``, ... have derived bounds instead.

    >>> compare_certified(["fedsplit", "s-dane"], mu=1.0, L=10.0, D=1.0, rounds=5, C=0.1)    # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: s-dane has derived bounds but no certificate: ...
    """
    methods = list(dict.fromkeys(methods))
    if not methods:
        raise ValueError("give at least one method to compare")
    known = registered_methods()
    for m in methods:
        check_any_method(m)
        if m not in known:
            raise ValueError(
                f"{m} has derived bounds but no certificate: compare it with eps (--eps), or use a "
                f"registered method ({', '.join(known)})"
            )
    hyper = dict(hyper or {})
    for m in hyper:
        if m not in methods:
            raise ValueError(f"hyperparameters given for {m}, which is not compared")
    advice = {
        m: tune_certified(
            m,
            mu=mu,
            L=L,
            D=D,
            C=C,
            rounds=rounds,
            clients=clients,
            weights=weights,
            hyper=hyper.get(m),
            probe_starts=probe_starts,
            seed=seed,
        )
        for m in methods
    }
    order = sorted(methods, key=lambda m: (advice[m].value is None, advice[m].value or 0.0, methods.index(m)))
    consts = {
        "mu": float(mu),
        "L": float(L),
        "C": float(C),
        "D": float(D),
        "clients": next(iter(advice.values())).clients,
    }
    # the horizon actually certified (tune_certified caps it; every advice says so in its message)
    return CertifiedComparison(constants=consts, rounds=next(iter(advice.values())).rounds, advice=advice, order=order)
