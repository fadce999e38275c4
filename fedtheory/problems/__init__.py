"""Federated problem families.

>>> from fedtheory.problems import make_quadratic, LeastSquaresFederation
>>> make_quadratic(2, 3, mu=1.0, L=2.0, seed=0).n
2
>>> LeastSquaresFederation.random(2, 10, 3, seed=0).d
3
"""

from fedtheory.problems.finite_sum import FiniteSumFederation, LeastSquaresFederation, LogisticFederation
from fedtheory.problems.quadratic import FederationArrays, QuadraticFederation, make_quadratic

__all__ = [
    "FederationArrays",
    "QuadraticFederation",
    "make_quadratic",
    "FiniteSumFederation",
    "LeastSquaresFederation",
    "LogisticFederation",
]
