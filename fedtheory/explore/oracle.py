"""FedLRGD against FedAve in federated oracle complexity: FedAve tuned (b, T), both bounds, the winner.

Reads :func:`fedtheory.analysis.oracle_guarantees.oracle_guarantees` (Theorems 2 and 3 of Jadbabaie,
Makur & Shah). The unit is Definition 1's Γ (local gradient evaluations weighted by the straggler
model), not rounds, so these two methods are compared with each other here rather than in
:func:`fedtheory.explore.compare`.

>>> res = oracle(d=1, p=1, eta=6.0, alpha=1.0, L1=2.0, mu=1.0, L2=1.0, B=1.0, epsilon=0.5, initial_gap=0.0,
...              m=10, s=5, phi=100.0)
>>> res.winner, [r[0] for r in res.rows()]
('fedave', ['fedlrgd', 'fedave'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fedtheory.explore.results import Result, fmt

__all__ = ["OracleComparison", "oracle"]


@dataclass
class OracleComparison(Result):
    """log10 Γ of each method, its setting (FedAve's tuned b, T), claims and caveats."""

    constants: dict
    results: dict

    title = "fedtheory explore oracle: FedLRGD vs FedAve (Definition 1)"

    @property
    def winner(self) -> str:
        return min(self.results, key=lambda k: self.results[k]["log10_complexity"])

    def columns(self) -> list[str]:
        return ["method", "log10 Γ", "setting", "claims"]

    def rows(self) -> list[list[Any]]:
        return [
            [
                k,
                v["log10_complexity"],
                ", ".join(f"{a}={fmt(b)}" for a, b in v["setting"].items()),
                ", ".join(v["claims"][:2]),
            ]
            for k, v in self.results.items()
        ]

    def notes(self) -> list[str]:
        a, b = self.results["fedlrgd"]["log10_complexity"], self.results["fedave"]["log10_complexity"]
        lines = [f"winner: {self.winner} (log10 Γ_FedLRGD − log10 Γ_FedAve = {a - b:.4g})"]
        sandwich = self.results["fedave"].get("theorem3_sandwich_log10")
        if sandwich:
            lines.append(f"FedAve: Theorem 3's sandwich gives log10 Γ in [{sandwich[0]:.4g}, {sandwich[1]:.4g}]")
        elif "sandwich_note" in self.results["fedave"]:
            lines.append("FedAve: Theorem 3's sandwich does not apply: " + self.results["fedave"]["sandwich_note"])
        for k, v in self.results.items():
            lines += [f"hypothesis ({k}): {h}" for h in v["hypotheses"]]
            lines += [f"caveat ({k}): {c}" for c in v["caveats"]]
        return lines

    def to_json(self) -> dict:
        return {"kind": "oracle", "constants": self.constants, "results": self.results, "winner": self.winner}

    def draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        names = list(self.results)
        ax.bar(names, [self.results[k]["log10_complexity"] for k in names], color=["#1f77b4", "#ff7f0e"])
        ax.set_ylabel("log10 Γ (federated oracle complexity)")
        ax.set_title(f"winner: {self.winner}")


def oracle(**constants: Any) -> OracleComparison:
    """Both bounds at ``constants`` (d, p, eta, alpha, L1, mu, L2, B, epsilon, initial_gap, m, phi; optional
    s, tau, C). Hypotheses raise ValueError naming them."""
    from fedtheory.analysis.oracle_guarantees import oracle_guarantees

    return OracleComparison(constants=dict(constants), results=oracle_guarantees(**constants))
