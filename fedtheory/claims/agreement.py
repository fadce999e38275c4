"""Two implementations agree: the worst gap between them over random instances, decided against a tolerance.

Many claims compare a library path with a reference written independently (a loop from the paper's definition,
an older driver, another backend, a closed form) on instances drawn from the claim's seed. They share the
draw-compare-keep-the-worst loop, the usual relative gap and the verdict, named here once; each claim keeps what
is its own: the instance, the two sides and why its tolerance is what it is.

>>> import numpy as np
>>> from fedtheory.claims.core import CheckContext
>>> ctx = CheckContext(seed=0)
>>> def gap(trial):
...     x = ctx.rng.normal(size=3)
...     return relative_gap(x + 1e-14, x)
>>> worst = worst_over_trials(ctx, (4, 40), gap)
>>> evidence = decide_within(ctx, worst, 1e-12, notes="x against x + 1e-14")
>>> evidence.status, list(evidence.measured), evidence.tolerance
('verified', ['max_relative_difference'], {'relative': 1e-12})
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fedtheory.claims.core import claim
from fedtheory.claims.probing import by_tier


def relative_gap(value, reference) -> float:
    """max|value − reference| relative to max|reference| + 1: the gap of two float64 computations of one array,
    on the scale of the reference (the + 1 keeps a reference near zero from turning rounding into a large ratio).

    >>> relative_gap([1.0, 3.0], [1.0, 2.0])
    0.3333333333333333
    >>> relative_gap([0.0], [0.0])
    0.0
    >>> relative_gap([1.0, 2.0], [1.0])
    Traceback (most recent call last):
    ...
    ValueError: relative_gap compares arrays of one shape, got (2,) and (1,)
    """
    value, reference = np.asarray(value), np.asarray(reference)
    if value.shape != reference.shape:
        # broadcasting would compare every row with one reference row and report a gap of the wrong thing
        raise ValueError(f"relative_gap compares arrays of one shape, got {value.shape} and {reference.shape}")
    return float(np.abs(value - reference).max()) / (float(np.abs(reference).max()) + 1)


def worst_over_trials(ctx, trials: int | tuple[int, int], gap: Callable[[int], float]) -> float:
    """The largest ``gap(trial)`` over the tier's trials (``trials``: one count, or a ``(fast, full)`` pair as for
    :func:`~fedtheory.claims.probing.by_tier`), in the order ``trial = 0, 1, …``; ``gap`` draws its instance from
    ``ctx.rng``, so the trials are the claim's seed's. A NaN gap makes the result NaN (a comparison that produced
    no number must not pass as a small gap), and fewer than one trial is refused (nothing compared is no agreement).

    >>> from fedtheory.claims.core import CheckContext
    >>> worst_over_trials(CheckContext(seed=0), (3, 30), lambda trial: float(trial))
    2.0
    >>> worst_over_trials(CheckContext(seed=0, tier="full"), (3, 30), lambda trial: float(trial))
    29.0
    >>> worst_over_trials(CheckContext(seed=0), 3, lambda trial: float("nan") if trial == 1 else 0.0)
    nan
    >>> worst_over_trials(CheckContext(seed=0), (0, 10), lambda trial: 0.0)
    Traceback (most recent call last):
    ...
    ValueError: worst_over_trials needs at least one trial in the tier that runs, got trials=(0, 10)
    """
    count = by_tier(ctx, trials=trials)["trials"]
    if count < 1:
        raise ValueError(f"worst_over_trials needs at least one trial in the tier that runs, got trials={trials!r}")
    worst, undefined = 0.0, False
    for trial in range(count):
        value = gap(trial)
        undefined = undefined or math.isnan(value)
        worst = max(worst, value)
    return math.nan if undefined else worst


def decide_within(
    ctx,
    worst: float,
    tol: float,
    *,
    name: str = "max_relative_difference",
    tolerance: Any = None,
    notes: str | None = None,
    **measured: Any,
) -> Any:
    """``verified`` when the worst gap ``worst`` is at most ``tol``, else ``refuted``; measured: ``worst`` under
    ``name``, then ``measured``. The recorded tolerance is ``{"relative": tol}`` unless the claim states its own
    (``tolerance``, e.g. with the reason for its size).

    >>> from fedtheory.claims.core import CheckContext
    >>> ev = decide_within(CheckContext(seed=0), 2e-9, 1e-10, name="max_rel_gap", instances=5)
    >>> ev.status, ev.measured
    ('refuted', {'max_rel_gap': 2e-09, 'instances': 5})
    """
    said = {"notes": notes} if notes is not None else {}
    return ctx.decide(
        worst <= tol,
        measured={name: worst, **measured},
        tolerance={"relative": tol} if tolerance is None else tolerance,
        **said,
    )


def agreement_claim(id: str, ref: str, title: str, statement: str, controls, *, kind: str = "simulation", **more: Any):
    """Decorator declaring an agreement claim: two implementations of one thing — a library path and a reference
    written independently (a loop from the paper's definition, an older driver, a closed form), or one algorithm on
    two backends — give the same results on the instances the check draws. Its kind is ``simulation`` unless given;
    ``more`` (``tier``, ``requires``, …) passes to :func:`~fedtheory.claims.core.claim` unchanged.

    >>> from fedtheory.claims.core import CheckContext, Control
    >>> @agreement_claim("verify/demo/sum", "Algorithm 1", "sum equals a loop", "the sum of x_i, two ways",
    ...                  [Control("loop-short", "the loop without its last term", {"short": 1})], kind="numeric")
    ... def sum_equals_loop(ctx):
    ...     xs = [1.0, 2.0, 3.0]
    ...     loop = 0.0
    ...     for x in xs[: len(xs) - ctx.param("short", 0)]:
    ...         loop += x
    ...     return decide_within(ctx, abs(sum(xs) - loop), 0.0)
    >>> sum_equals_loop.ref, sum_equals_loop.kind, sum_equals_loop.check(CheckContext()).status
    ('Algorithm 1', 'numeric', 'verified')
    >>> sum_equals_loop.check(CheckContext(control={"short": 1})).status
    'refuted'
    """
    return claim(id=id, ref=ref, title=title, statement=statement, kind=kind, controls=controls, **more)


def consistency_claim(id: str, title: str, statement: str, controls, *, kind: str = "certificate", **more: Any):
    """Decorator declaring a consistency check: two computations of one thing (a certificate by two engines, a
    compiled PEP and a literal one, a table and a fresh run) agree. Such a claim has no paper statement of its own,
    so its ``ref`` is ``"consistency"``; its kind is ``certificate`` unless given; ``more`` (``tier``, ``requires``,
    …) passes to :func:`~fedtheory.claims.core.claim` unchanged.

    >>> from fedtheory.claims.core import Control
    >>> @consistency_claim("verify/demo/twice", "1 + 1 computed twice", "$1+1=2$ both ways",
    ...                    [Control("three", "1 + 1 = 3: false", {"target": 3})], tier="full")
    ... def twice(ctx):
    ...     return ctx.decide(1 + 1 == ctx.param("target", 2))
    >>> twice.ref, twice.kind, twice.tier, [c.name for c in twice.controls]
    ('consistency', 'certificate', 'full', ['three'])
    """
    return agreement_claim(id, "consistency", title, statement, controls, kind=kind, **more)
