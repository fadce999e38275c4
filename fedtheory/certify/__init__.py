"""Worst-case certificates and adversarial probes.

Probes (:mod:`fedtheory.certify.probe`) search a theorem's hypothesis class, parameterized so that
every real vector is a valid instance (:mod:`fedtheory.certify.params`), for the instance closest to
breaking the statement: seeded random sampling, then multi-start local search (Nelder–Mead by default, scipy's
algorithm without importing scipy.optimize; any other ``scipy.optimize.minimize`` method on request).

>>> from fedtheory.certify import Box, probe
>>> probe(lambda t: t * (1 - t), Box(0.0, 1.0), seed=0, n_random=16, n_starts=2).worst_value
0.25
"""

from fedtheory.certify.params import (
    Ball,
    Box,
    Choice,
    Custom,
    Fixed,
    IntRange,
    Mapped,
    NonnegWeights,
    Param,
    Product,
    QuadraticInstance,
    Rotation,
    Simplex,
    Spectrum,
    SPDMatrix,
    SymmetricMatrix,
    jsonable,
    quadratic_instance_param,
)
from fedtheory.certify.probe import ProbeResult, probe, replay_z, sample_worst

__all__ = [
    "Ball",
    "Box",
    "Choice",
    "Custom",
    "Fixed",
    "IntRange",
    "Mapped",
    "NonnegWeights",
    "Param",
    "Product",
    "QuadraticInstance",
    "Rotation",
    "Simplex",
    "Spectrum",
    "SPDMatrix",
    "SymmetricMatrix",
    "jsonable",
    "quadratic_instance_param",
    "ProbeResult",
    "probe",
    "replay_z",
    "sample_worst",
]
