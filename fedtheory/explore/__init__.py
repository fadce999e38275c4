"""Explore hyperparameter trade-offs from the theory — valid guarantees only — and on your own federation.

Every number called *guaranteed* rests on verified statements only
(:data:`fedtheory.analysis.guarantees.GUARANTEE_SOURCES`), for a named class of federations
(``function_class``: d = 1, commuting clients with n = ``clients``, or general d ≥ 2).

- :func:`frontier` — the (ρ, valid floor) frontier along a swept K, γ or α for Θ_{1:K}, Θ_K or MAML and a
  server optimizer, with every point's hyperparameters and the non-dominated valid points marked;
- :func:`tune` — the complete setting (Θ, K, γ, α, server η and β) minimizing a method's valid bound under a
  budget (rounds, local work, or a target accuracy), with the bound's value, class, hypotheses, claim ids,
  distinct runner-ups, and the best lower bound known where no guarantee exists;
- :func:`compare` — several methods on the same constants, one table and one plot;
- :func:`simulate` — run the real driver on random and adversarial instances of the bound's class (a
  probe, and the certificate's worst case when available) and report measured/guaranteed every round;
- :func:`tune_instance` / :func:`simulate_instance` — instance-exact mode on the user's federation;
- :func:`oracle` — FedLRGD against FedAve in federated oracle complexity, FedAve's (b, T) tuned;
- :func:`write_page` — the standalone interactive page.

Results print as tables (``print(result)``), render in notebooks (``_repr_html_``), plot
(``result.save_plot(path)``) and serialize (``result.to_json()``). The command line is
``fedtheory explore frontier|tune|compare|instance|oracle|page``. The explorer holds no paper's formulas: it reads them
from :mod:`fedtheory.analysis.pareto`, :mod:`fedtheory.analysis.guarantees` and
:mod:`fedtheory.analysis.oracle_guarantees`.

The layers, each importing only from those above it in this list (a test keeps the package free of import
circles): the guarantee sources — :mod:`~fedtheory.explore.results` (how results show), closed forms
(:mod:`~fedtheory.explore.exact`), the classes' instance families and their probe
(:mod:`~fedtheory.explore.families`), the certified table (:mod:`~fedtheory.explore.certified`); the advice —
:mod:`~fedtheory.explore.tuning`, then :mod:`~fedtheory.explore.comparison`, :mod:`~fedtheory.explore.frontiers`,
:mod:`~fedtheory.explore.oracle`; instance and simulation — :mod:`~fedtheory.explore.instance`,
:mod:`~fedtheory.explore.simulation`; and the command line (:mod:`fedtheory.cli`, with
:mod:`~fedtheory.explore.certify` and :mod:`~fedtheory.explore.page`). Importing this package loads the oracle
only; every other module on first use of one of its names, so a command loads just the layers it runs.

>>> from fedtheory.explore import frontier
>>> fr = frontier(mu=1.0, L=10.0, sweep="K", lo=1, hi=100, points=20, gamma=0.05, function_class="d1")
>>> fr.rows()[0][:2], bool(fr.pareto[0])
([1, 0.05], True)
"""

from importlib import import_module

# oracle is both a module and its function: bound here once, so that importing the module fedtheory.explore.oracle
# elsewhere first (which sets this package's attribute to the module) cannot change what the name means
from fedtheory.explore.oracle import OracleComparison, oracle

#: each public name -> the module that defines it (imported on first use: PEP 562)
_HOMES = {
    "Comparison": "comparison",
    "compare": "comparison",
    "Frontier": "frontiers",
    "frontier": "frontiers",
    "InstanceAdvice": "instance",
    "InstanceSimulation": "instance",
    "simulate_instance": "instance",
    "tune_instance": "instance",
    "page_html": "page",
    "write_page": "page",
    "Simulation": "simulation",
    "simulate": "simulation",
    "METHODS": "tuning",
    "Advice": "tuning",
    "tune": "tuning",
}

__all__ = [
    "frontier",
    "tune",
    "compare",
    "simulate",
    "oracle",
    "write_page",
    "page_html",
    "METHODS",
    "Frontier",
    "Advice",
    "Comparison",
    "Simulation",
    "OracleComparison",
    "tune_instance",
    "simulate_instance",
    "InstanceAdvice",
    "InstanceSimulation",
]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value  # once: later look-ups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
