"""Explore hyperparameter trade-offs analytically, from the derived theory, before running anything.

- :func:`frontier` — the (ρ, Δ) frontier along a swept K, γ or α for Θ_{1:K}, Θ_K or MAML and a server
  optimizer, with every point's hyperparameters and the non-dominated points marked;
- :func:`tune` — the hyperparameters minimizing a method's derived bound under a budget (rounds, local
  work, or a target accuracy), with the bound's value, its hypotheses, its claim ids and runner-ups;
- :func:`compare` — several methods on the same constants, one table and one plot;
- :func:`simulate` — run the real driver on an instance of the bound's class and report measured against
  predicted for every round;
- :func:`oracle` — FedLRGD against FedAve in federated oracle complexity, FedAve's (b, T) tuned;
- :func:`write_page` — the standalone interactive page.

Results print as tables (``print(result)``), render in notebooks (``_repr_html_``), plot
(``result.save_plot(path)``) and serialize (``result.to_json()``). The command line is
``fedtheory explore frontier|tune|compare|oracle|page``. The explorer holds no paper's formulas: it reads them
from :mod:`fedtheory.analysis.pareto`, :mod:`fedtheory.analysis.guarantees` and
:mod:`fedtheory.analysis.oracle_guarantees`.

>>> from fedtheory.explore import frontier
>>> fr = frontier(mu=1.0, L=10.0, sweep="K", lo=1, hi=100, points=20, gamma=0.05)
>>> fr.rows()[0][:2], bool(fr.pareto[0])
([1, 0.05], True)
"""
from fedtheory.explore.comparison import Comparison, compare
from fedtheory.explore.frontiers import Frontier, frontier
from fedtheory.explore.oracle import OracleComparison, oracle
from fedtheory.explore.page import page_html, write_page
from fedtheory.explore.simulation import Simulation, simulate
from fedtheory.explore.tuning import METHODS, Advice, tune

__all__ = ["frontier", "tune", "compare", "simulate", "oracle", "write_page", "page_html", "METHODS", "Frontier",
           "Advice", "Comparison", "Simulation", "OracleComparison"]
