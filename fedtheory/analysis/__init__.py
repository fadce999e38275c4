"""Analysis: rates of the server iteration (Table 2 of arXiv:2103.05032) and Pareto frontiers.

>>> from fedtheory.analysis import table2_rate, suboptimality_delta
>>> table2_rate(3.0, "gd"), suboptimality_delta(9.0, 1.0)
(0.5, 0.5)
"""

from fedtheory.analysis.pareto import frontier_uniform, pareto_mask
from fedtheory.analysis.rates import (
    MOMENTA,
    iteration_polynomials,
    iteration_spectral_radius,
    suboptimality_delta,
    table2_rate,
    tuned_server,
)

__all__ = [
    "MOMENTA",
    "table2_rate",
    "tuned_server",
    "iteration_polynomials",
    "iteration_spectral_radius",
    "suboptimality_delta",
    "pareto_mask",
    "frontier_uniform",
]
