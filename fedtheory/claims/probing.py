"""Probe-then-decide: the standard verdict and measured record of a claim checked by an adversarial probe
(:func:`fedtheory.certify.probe.probe`) of a violation ratio.

>>> from fedtheory.certify.params import Box
>>> from fedtheory.certify.probe import probe
>>> from fedtheory.claims.core import CheckContext
>>> result = probe(lambda t: t / 2.0, Box(0.0, 2.0), seed=0, n_random=8, n_starts=1, maxiter=20, target=1.0)
>>> evidence = decide_by_probe(CheckContext(seed=0), result, tolerance="ratio ≤ 1")
>>> evidence.status, sorted(evidence.measured)
('verified', ['probe_evaluations', 'random_worst', 'worst_ratio'])
"""

from __future__ import annotations

from typing import Any

# probe_by_tier calls the name ``probe`` of this module, so a test can stop every such probe in one place
from fedtheory.certify.probe import probe


def probe_record(result) -> dict:
    """The standard measured record of a probe: its worst ratio, the best of its random phase alone (so a reader
    sees what the optimizer added) and how many evaluations it made.

    >>> from fedtheory.certify.params import Box
    >>> from fedtheory.certify.probe import sample_worst
    >>> sorted(probe_record(sample_worst(lambda t: t, Box(0.0, 1.0), n=4, seed=0)))
    ['probe_evaluations', 'random_worst', 'worst_ratio']
    """
    return {
        "worst_ratio": result.worst_value,
        "random_worst": result.random_worst_value,
        "probe_evaluations": result.n_evaluations,
    }


def probe_phases(result) -> dict:
    """The best violation of a probe's random phase and of its optimizer, reported apart (a control that only the
    optimizer can find shows the search did more than sample).

    >>> from fedtheory.certify.params import Box
    >>> from fedtheory.certify.probe import probe
    >>> probe_phases(probe(lambda t: -(t - 0.3) ** 2, Box(0.0, 1.0), seed=0, n_random=4, n_starts=1,
    ...                    maxiter=30))["probe_optimizer_worst"] > -1e-6
    True
    """
    return {
        "probe_random_phase_worst": result.random_worst_value,
        "probe_optimizer_worst": result.optimized_worst_value,
    }


def decide_by_probe(
    ctx, result, bound: float = 1.0, *, measured: dict | None = None, tolerance=None, notes: str | None = None
):
    """``verified`` when the probe's worst violation ratio is at most ``bound`` and no evaluation failed (a failed
    evaluation means the check is partly broken: never a pass), else ``refuted`` with the probe (replayable) as the
    counterexample. ``measured`` adds to :func:`probe_record`.

    >>> from fedtheory.certify.params import Box
    >>> from fedtheory.certify.probe import probe
    >>> from fedtheory.claims.core import CheckContext
    >>> result = probe(lambda t: t, Box(0.0, 2.0), seed=0, n_random=8, n_starts=1, maxiter=20, target=1.0)
    >>> evidence = decide_by_probe(CheckContext(seed=0), result)
    >>> evidence.status, evidence.counterexample["probe"]["worst_value"] > 1
    ('refuted', True)
    """
    ok = result.worst_value <= bound and result.n_failed == 0
    said = {k: v for k, v in (("tolerance", tolerance), ("notes", notes)) if v is not None}
    return ctx.decide(
        ok,
        measured={**probe_record(result), **(measured or {})},
        counterexample=None if ok else {"probe": result.to_json()},
        **said,
    )


def by_tier(ctx, **budgets: Any) -> dict:
    """A probe's budgets for the tier that runs: each value is one number for both tiers or a ``(fast, full)`` pair
    (the full tier searches deeper with the same code).

    >>> from fedtheory.claims.core import CheckContext
    >>> by_tier(CheckContext(tier="full"), n_random=(40, 400), n_starts=2)
    {'n_random': 400, 'n_starts': 2}
    >>> by_tier(CheckContext(), n_random=(40, 400), n_starts=2)
    {'n_random': 40, 'n_starts': 2}
    """
    return {name: value[ctx.full] if isinstance(value, tuple) else value for name, value in budgets.items()}


def probe_by_tier(ctx, violation, space, *, seed, n_random, n_starts, maxiter, **options: Any):
    """:func:`fedtheory.certify.probe.probe` of ``violation`` over ``space`` with its three budgets chosen by
    :func:`by_tier`; ``options`` (``target``, ``starts``, ``options``, …) pass through unchanged.

    >>> from fedtheory.certify.params import Box
    >>> from fedtheory.claims.core import CheckContext
    >>> ctx = CheckContext(seed=0)
    >>> result = probe_by_tier(ctx, lambda t: t, Box(0.0, 1.0), seed=ctx.rng, n_random=(8, 80), n_starts=1,
    ...                        maxiter=(10, 100))
    >>> 0.9 < result.worst_value <= 1.0
    True
    """
    budgets = by_tier(ctx, n_random=n_random, n_starts=n_starts, maxiter=maxiter)
    return probe(violation, space, seed=seed, **budgets, **options)


def decide_with_probe(
    ctx,
    ok: bool,
    result,
    measured: dict,
    *,
    probe_name: str = "probe_worst",
    tolerance=None,
    notes: str | None = None,
    counterexample: dict | None = None,
):
    """Probe-then-decide where the probe is one part of the verdict: ``ok`` is the check's own test (samples, runs
    and the probe together); the record is ``measured`` plus the probe's worst value under ``probe_name`` and its
    number of evaluations, and a refutation carries the probe (replayable) as its counterexample — or
    ``counterexample`` when the check names a more telling one.

    >>> from fedtheory.certify.params import Box
    >>> from fedtheory.certify.probe import probe
    >>> from fedtheory.claims.core import CheckContext
    >>> result = probe(lambda t: t - 1.0, Box(0.0, 2.0), seed=0, n_random=8, n_starts=1, maxiter=20, target=1e-9)
    >>> evidence = decide_with_probe(CheckContext(seed=0), result.worst_value <= 1e-9, result, {"runs": 3})
    >>> evidence.status, sorted(evidence.measured), "probe" in evidence.counterexample
    ('refuted', ['probe_evaluations', 'probe_worst', 'runs'], True)
    """
    record = {**measured, probe_name: result.worst_value, "probe_evaluations": result.n_evaluations}
    said = {k: v for k, v in (("tolerance", tolerance), ("notes", notes)) if v is not None}
    counterexample = None if ok else counterexample or {"probe": result.to_json()}
    return ctx.decide(ok, measured=record, counterexample=counterexample, **said)
