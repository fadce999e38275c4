"""Agreement within a relative tolerance: the verdict of a claim that computes one quantity two ways (a closed
form and a literal run, a spectrum and its formula) and states that they agree. The record names the worst
relative disagreement and the tolerance says why it is the right one, so a reader sees both next to the verdict.

>>> from fedtheory.claims.core import CheckContext
>>> evidence = decide_relative_agreement(CheckContext(), "worst_relative_error", 3e-15, 1e-12,
...                                      why="a few float64 roundings")
>>> evidence.status, evidence.measured, evidence.tolerance
('verified', {'worst_relative_error': 3e-15}, {'relative': 1e-12, 'why': 'a few float64 roundings'})
"""

from __future__ import annotations

from fedtheory.claims.core import Evidence


def decide_relative_agreement(
    ctx, name: str, worst: float, tol: float, *, why: str | None = None, notes: str | None = None
) -> Evidence:
    """``verified`` when the worst relative disagreement ``worst`` is at most ``tol``, else ``refuted``; measured
    ``{name: worst}``, tolerance ``{"relative": tol, "why": why}`` (``why`` left out when not given), ``notes``
    as given.

    >>> from fedtheory.claims.core import CheckContext
    >>> evidence = decide_relative_agreement(CheckContext(), "max_relative_gap", 2e-9, 1e-12, notes="one client")
    >>> evidence.status, evidence.tolerance, evidence.notes
    ('refuted', {'relative': 1e-12}, 'one client')
    >>> try:
    ...     decide_relative_agreement(CheckContext(), "gap", 0.0, -1.0)
    ... except ValueError as e:
    ...     print(e)
    a relative tolerance must be positive, got -1.0 for gap
    """
    if not tol > 0:
        raise ValueError(f"a relative tolerance must be positive, got {tol} for {name}")
    tolerance = {"relative": tol} if why is None else {"relative": tol, "why": why}
    said = {} if notes is None else {"notes": notes}
    return ctx.decide(worst <= tol, measured={name: worst}, tolerance=tolerance, **said)
