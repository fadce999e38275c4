"""The adversarial probe itself: its optimizer finds what random sampling cannot.

Every ``probe``-kind claim rests on :func:`fedtheory.certify.probe.probe` searching a hypothesis class; a probe
whose local search silently stopped would leave those claims standing on random sampling alone (a verification
they are not). This claim plants a violation that only a search can find, so such a defect fails a claim and not
only a unit test.
"""

from __future__ import annotations

import numpy as np

from fedtheory.certify.params import Box
from fedtheory.certify.probe import probe
from fedtheory.claims.core import Control, claim

DIM = 6
RADIUS = 0.05  # the violation's region: a ball of this radius, about 1e-9 of the box's volume


def _planted(x0: np.ndarray):
    def violation(x: np.ndarray) -> float:
        return 1.0 + RADIUS - float(np.linalg.norm(np.asarray(x) - x0))

    return violation


@claim(
    id="verify/probes/search-finds-planted-violation",
    ref="DESIGN: certificates and probes",
    title="The probe's optimizer finds a violation confined to 1e-9 of the class, which random sampling misses",
    statement=r"For $v(x) = 1.05 - \|x - x_0\|$ on $[-1, 1]^6$ ($v > 1$ only on a ball of radius 0.05, a fraction "
    r"$\approx 1.3\cdot 10^{-9}$ of the box), \texttt{probe} with its default budget reaches $v > 1$, while "
    r"its random phase (256 draws) stays below 1.",
    kind="probe",
    controls=[
        Control(
            "optimizer-off",
            "the same probe with its optimizer phase disabled (n_starts = 0) cannot "
            "reach a region of probability 1.3e-9 in 256 uniform draws",
            {"n_starts": 0},
        )
    ],
)
def search_finds_planted_violation(ctx):
    x0 = ctx.rng.uniform(-0.8, 0.8, size=DIM)
    result = probe(
        _planted(x0), Box(-1.0, 1.0, shape=(DIM,)), rng=ctx.rng, n_random=256, n_starts=ctx.param("n_starts", 8)
    )
    found = result.worst_value > 1.0 and result.random_worst_value < 1.0
    return ctx.decide(
        found,
        measured={
            "worst_value": result.worst_value,
            "random_worst_value": result.random_worst_value,
            "evaluations": result.n_evaluations,
        },
        tolerance="exact: v > 1 decides (the peak is 1.05)",
        notes="x0 drawn from the claim's seed; the search and the control see the same x0 and draws.",
    )
