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

from fedtheory.explore.results import Result, entry, envelope, fmt
from fedtheory.explore.tuning import METHODS, tune

__all__ = ["Comparison", "compare", "DEFAULT_METHODS"]

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
                out.append(entry(e["method"], {}, guaranteed=None, rounds=None, floor=None, local_steps=None, rho=None,
                                 valid=False, claims=(), function_class=self.function_class) | {"missing": e["missing"]})
                continue
            a = self.advice[e["method"]]
            out.append(entry(e["method"], e["setting"], guaranteed=e["rounds"], rounds=e["rounds"], floor=e["floor"],
                             local_steps=e["local_steps"], rho=a.predicted.get("rho"), valid=a.feasible,
                             claims=e["claims"], function_class=self.function_class, lower_bound=a.lower_bound)
                       | {"total_local_steps": e["total_local_steps"]})
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
            out.append([e["method"], e["rounds"], e["floor"], e["local_steps"], e["total_local_steps"], setting,
                        ", ".join(e["claims"][:2])])
        return out

    def notes(self) -> list[str]:
        c = self.constants
        from fedtheory.explore.tuning import _class_text

        lines = [f"target ‖x − x*‖ ≤ eps = {self.eps:g}; guaranteed rounds valid for {_class_text(self.function_class)}; "
                 "constants " + ", ".join(f"{k}={fmt(v)}" for k, v in c.items() if v is not None)]
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
        return envelope("compare", function_class=self.function_class, constants=self.constants, entries=self.entries(),
                        claims=claims, hypotheses=hyps, caveats=cavs,
                        message=" ".join(f"{m}: {a.message}" for m, a in self.advice.items() if a.message),
                        extra={"eps": self.eps})

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


def compare(methods: Any = DEFAULT_METHODS, *, mu: float, L: float, D: float, eps: float, C: float = 0.0,
            delta_A: float | None = None, momentum: str = "gd", function_class: str = "general",
            clients: int | None = None) -> Comparison:
    """Tune each of ``methods`` for ``eps`` on the same constants; see the module docstring.

    >>> compare(["fedavg", "sgd"], mu=1.0, L=10.0, D=1.0, eps=0.1)
    Traceback (most recent call last):
    ...
    ValueError: unknown method 'sgd' (choose one of gd, fedavg, fedprox, fomaml, maml, s-dane, acc-s-dane)
    """
    methods = list(methods)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r} (choose one of {', '.join(METHODS)})")
    consts = {"mu": float(mu), "L": float(L), "C": float(C), "D": float(D),
              "delta_A": None if delta_A is None else float(delta_A)}
    entries, advice = [], {}
    for m in methods:
        if METHODS[m][0] == "dane" and delta_A is None:
            entries.append({"method": m, "missing": "needs delta_A (δ_A-SOD constant)"})
            continue
        a = tune(m, mu=mu, L=L, C=C, D=D, delta_A=delta_A, eps=eps, momentum=momentum, function_class=function_class,
                 clients=clients)
        advice[m] = a
        rounds = a.predicted["rounds"]
        entries.append({"method": m, "rounds": rounds, "floor": a.predicted["floor"],
                        "local_steps": a.predicted["local_steps"],
                        "total_local_steps": rounds * a.predicted["local_steps"], "setting": a.best,
                        "server": a.server, "claims": list(a.claims), "hypotheses": list(a.hypotheses),
                        "caveats": list(a.caveats), "feasible": a.feasible})
    return Comparison(constants=consts, eps=float(eps), rows_=entries, advice=advice, function_class=function_class)
