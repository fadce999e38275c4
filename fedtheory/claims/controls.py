"""The usual shapes of a negative control, named once: each builds a :class:`~fedtheory.claims.core.Control`
whose description says why its statement is false a priori, so a claim declares only what is specific to it.

* :func:`tightened_bound` — the bound multiplied by a factor below 1 at an instance that attains it;
* :func:`one_step_too_many` — the same comparison run with one step more on one side (an off-by-one);
* :func:`one_step_too_few` — the same with one step fewer (the off-by-one the other way);
* :func:`one_local_step_fewer` — that, for the K local steps of one side of an equal-iterates comparison;
* :func:`scaled_below_reached` — the bound scaled by a factor below what a known instance, evaluated by the check
  on every run, reaches of it.

The check reads the control's ``params`` with ``ctx.param(name, default)`` and applies them; which
parameters mean what stays with the claim. (A violation planted where only the probe's optimizer finds it is
calibrated per claim — see tests/test_localupdate_controls.py — so it has no one shape to name here.)

>>> c = one_step_too_many("the driver's FedAvg", "E local steps", {"extra_steps": 1})
>>> c.name, c.params
('one-step-too-many', {'extra_steps': 1})
>>> print(c.description)
the driver's FedAvg run with one step more than E local steps (an off-by-one): a different algorithm, false a priori
"""

from __future__ import annotations

from fedtheory.claims.core import Control


def tightened_bound(
    factor: float, bound: str, attained_by: str, params: dict | None = None, name: str | None = None
) -> Control:
    """The statement with ``bound`` multiplied by ``factor`` < 1: false a priori, since ``attained_by`` attains the
    bound itself. ``params`` default to ``{"bound_factor": factor}``.

    >>> c = tightened_bound(0.99, "the worst floor", "the certified worst case", {"upper_factor": 0.99})
    >>> c.name, c.params
    ('bound-tightened-1%', {'upper_factor': 0.99})
    >>> print(c.description)
    the worst floor multiplied by 0.99: false a priori, the certified worst case attains it
    >>> try:
    ...     tightened_bound(1.0, "b", "x")
    ... except ValueError as e:
    ...     print(e)
    a tightened bound needs a factor below 1, got 1.0
    """
    if not 0 < factor < 1:
        raise ValueError(f"a tightened bound needs a factor below 1, got {factor}")
    percent = f"{100 * (1 - factor):.3g}%"
    return Control(
        name or f"bound-tightened-{percent}",
        f"{bound} multiplied by {factor:g}: false a priori, {attained_by} attains it",
        dict(params) if params is not None else {"bound_factor": factor},
    )


def one_step_too_many(
    run: str, steps: str, params: dict, name: str = "one-step-too-many", consequence: str = "a different algorithm"
) -> Control:
    """``run`` with one step more than ``steps`` on one side of the comparison: an off-by-one, ``consequence``,
    false a priori (a check that cannot tell K from K + 1 steps could not have seen a wrong K either).

    >>> one_step_too_many("the spectral path", "K inner steps", {"k_offset": 1}, name="one-more-inner-step").name
    'one-more-inner-step'
    """
    return Control(
        name, f"{run} run with one step more than {steps} (an off-by-one): {consequence}, false a priori", dict(params)
    )


def one_step_too_few(
    run: str, steps: str, params: dict, name: str = "one-step-too-few", consequence: str = "a different algorithm"
) -> Control:
    """``run`` with one step fewer than ``steps`` on one side of the comparison: the off-by-one of
    :func:`one_step_too_many` the other way, ``consequence``, false a priori.

    >>> c = one_step_too_few("the reference", "E local steps per round", {"step_offset": -1}, name="reference-one-step-short")
    >>> c.params, c.description
    ({'step_offset': -1}, 'the reference run with one step fewer than E local steps per round (an off-by-one): a different algorithm, false a priori')
    """
    return Control(
        name, f"{run} run with one step fewer than {steps} (an off-by-one): {consequence}, false a priori", dict(params)
    )


def one_local_step_fewer(run: str, offset_param: str, name: str, consequence: str) -> Control:
    """:func:`one_step_too_few` for a claim that two methods give the same iterates: ``run`` (one side, named
    against the other) takes one local step fewer than its K, through ``offset_param`` (``-1``, added to K by
    the check), so the two are ``consequence`` — false a priori.

    >>> c = one_local_step_fewer("FedProx, against Algorithm 3,", "fedprox_steps_offset", "fedprox-one-local-step-fewer",
    ...                          "a different method, so the iterates differ")
    >>> c.params
    {'fedprox_steps_offset': -1}
    >>> print(c.description)
    FedProx, against Algorithm 3, run with one step fewer than its K local steps (an off-by-one): a different method, so the iterates differ, false a priori
    """
    return one_step_too_few(run, "its K local steps", {offset_param: -1}, name=name, consequence=consequence)


def tightened_past_attaining(
    name: str, claimed: str, false_since: str, instance: str, reaches: str, params: dict, note: str | None = None
) -> Control:
    """The statement tightened (``claimed``) — false since ``false_since``: an instance attains the bound — where
    the check evaluates that attaining ``instance`` on every run (it ``reaches`` past the tightened bound there), so
    the control fires by construction at any seed. The plain random sampling is turned off (``plain_sampling:
    False`` joins ``params``) so that the attaining instance decides, not luck; ``note`` may say what the probe's
    optimizer reaches without it.

    >>> c = tightened_past_attaining("bound-tightened-2pc", "D(X) ≤ 0.98·B claimed", "X on {a, b} attains B",
    ...                              "one such X", "the ratio is 1 > 0.98", {"margin": 0.02},
    ...                              "without it only the probe's optimizer crosses, ≈ 0.9996")
    >>> c.params
    {'margin': 0.02, 'plain_sampling': False}
    >>> print(c.description)
    D(X) ≤ 0.98·B claimed: false, since X on {a, b} attains B; the check evaluates one such X on every run, where the ratio is 1 > 0.98, so the control fires by construction at any seed (plain random sampling off; without it only the probe's optimizer crosses, ≈ 0.9996).
    """
    return Control(
        name,
        f"{claimed}: false, since {false_since}; the check evaluates {instance} on every run, where {reaches}, so the "
        f"control fires by construction at any seed (plain random sampling off{'; ' + note if note else ''}).",
        {**params, "plain_sampling": False},
    )


def scaled_below_reached(name: str, bound: str, factor: float, reached_by: str) -> Control:
    """``bound`` scaled by ``factor`` < 1 — false, since ``reached_by`` says which known instance (the check
    evaluates it on every run) reaches more than ``factor`` of the bound. The check divides its worst ratio by
    the ``bound_scale`` parameter, so the control fires by construction at any seed.

    >>> c = scaled_below_reached("bound-0.45", "the bound", 0.45,
    ...                          "the two-client instance reaches 1/2 of it after one round")
    >>> c.params
    {'bound_scale': 0.45}
    >>> print(c.description)
    the bound scaled by 0.45: false, the two-client instance reaches 1/2 of it after one round
    >>> try:
    ...     scaled_below_reached("b", "the bound", 1.2, "x")
    ... except ValueError as e:
    ...     print(e)
    a bound scaled below what an instance reaches needs a factor below 1, got 1.2
    """
    if not 0 < factor < 1:
        raise ValueError(f"a bound scaled below what an instance reaches needs a factor below 1, got {factor}")
    return Control(name, f"{bound} scaled by {factor:g}: false, {reached_by}", {"bound_scale": factor})
