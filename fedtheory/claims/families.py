"""Claim families: several statements of a paper checked by one check with other arguments (Theorem 21 and its
accelerated twin Theorem 26, a corollary and the corollary that says "the proof is the same"). The family's
check is written once; each statement is a row of data — its :func:`~fedtheory.claims.core.claim` fields and
the arguments its check takes — so a reader sees what differs between the statements and nothing else.

>>> from fedtheory.claims.core import CheckContext
>>> def _square_at_most(ctx, power, bound):
...     worst = max(x**power for x in (0.0, 0.5, 1.0))
...     return ctx.decide(worst <= bound, measured={"worst": worst})
>>> squares = claim_family(
...     _square_at_most,
...     {"id": "demo/lemma-1", "ref": "Lemma 1", "title": "x² ≤ 1", "statement": "x^2 <= 1",
...      "args": {"power": 2, "bound": 1.0}},
...     {"id": "demo/lemma-2", "ref": "Lemma 2", "title": "x³ ≤ 1", "statement": "x^3 <= 1",
...      "args": {"power": 3, "bound": 1.0}},
...     kind="numeric", control_exempt="a demo",
... )
>>> [(c.id, c.kind, c.run(CheckContext()).status) for c in squares]
[('demo/lemma-1', 'numeric', 'verified'), ('demo/lemma-2', 'numeric', 'verified')]
"""

from __future__ import annotations

from typing import Any, Callable

from fedtheory.claims.core import Claim, Evidence, claim


def claim_family(check: Callable[..., Evidence], *rows: dict, **shared: Any) -> tuple[Claim, ...]:
    """One :class:`~fedtheory.claims.core.Claim` per row: a row holds the claim's fields (``id``, ``ref``,
    ``title``, ``statement``, ``controls``, …) and ``args``, the keyword arguments its check is called with
    (``check(ctx, **args)``); ``shared`` are fields every row has alike (a row's own value wins). The check of
    each claim keeps ``check``'s module, so the content loader counts the claim where its check is written.

    Assign the returned tuple to a module-level name: the loader finds claims one level inside tuples.

    >>> from fedtheory.claims.core import CheckContext
    >>> (half,) = claim_family(lambda ctx, c: ctx.decide(0.5 <= c, measured={"c": c}),
    ...                        {"id": "demo/lemma-3", "ref": "Lemma 3", "title": "t", "statement": "s",
    ...                         "args": {"c": 1.0}}, kind="numeric", control_exempt="a demo")
    >>> half.run(CheckContext()).measured
    {'c': 1.0}
    >>> try:
    ...     claim_family(lambda ctx: None, {"id": "demo/lemma-4"})
    ... except ValueError as e:
    ...     print(e)
    claim family row demo/lemma-4 has no 'args' (the keyword arguments of its check; {} for none)
    """
    made = []
    for row in rows:
        fields = {**shared, **row}
        if "args" not in fields:
            raise ValueError(
                f"claim family row {fields.get('id')} has no 'args' (the keyword arguments of its check; {{}} for none)"
            )
        args = fields.pop("args")
        made.append(claim(**fields)(_bound_check(check, args, fields["id"])))
    return tuple(made)


def _bound_check(check: Callable[..., Evidence], args: dict, claim_id: str) -> Callable[..., Evidence]:
    def bound(ctx):
        return check(ctx, **args)

    # the loader tells a content file's own claims from imported ones by the check's module
    bound.__module__ = check.__module__
    bound.__name__ = bound.__qualname__ = f"{getattr(check, '__name__', 'check')}[{claim_id}]"
    bound.__doc__ = check.__doc__
    return bound
