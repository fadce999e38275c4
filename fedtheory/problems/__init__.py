"""Federated problem families.

>>> from fedtheory.problems import make_quadratic
>>> make_quadratic(2, 3, mu=1.0, L=2.0, seed=0).n
2
"""
from fedtheory.problems.quadratic import FederationArrays, QuadraticFederation, make_quadratic

__all__ = ["FederationArrays", "QuadraticFederation", "make_quadratic"]
