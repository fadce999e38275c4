"""What changed between two check runs: claims added, removed, whose status changed, whose key value moved.

The *key value* of a claim is the measured value the terminal table shows
(:func:`fedtheory.claims.runner.key_measured_name`). It *moved* when it changed by more than the
claim's tolerance, read from the new run's ``evidence.tolerance``:

- a number ``t``: moved when ``|new - old| > t * max(1, |old|)`` (the tolerance does not say whether
  it is absolute or relative; this reads it as both, the looser of the two);
- a dict: the entry named like the key, else ``absolute``/``abs``/``atol`` (absolute), else
  ``relative``/``rel``/``rtol`` (relative to ``max(|old|, |new|)``), else its only number (as above);
- no numeric tolerance: the value is not judged; the diff lists it under ``uncompared`` (named, with
  both values), so a reader sees what changed and can judge it.

>>> old = {"claims": [{"id": "a/l-1", "status": "verified", "evidence": {"measured": {"worst_ratio": 0.5}, "tolerance": 1e-3}},
...                   {"id": "a/l-2", "status": "verified"}]}
>>> new = {"claims": [{"id": "a/l-1", "status": "verified", "evidence": {"measured": {"worst_ratio": 0.9}, "tolerance": 1e-3}},
...                   {"id": "a/l-3", "status": "refuted"}]}
>>> d = diff_runs(old, new)
>>> d["added"], d["removed"], [m["id"] for m in d["moved"]]
(['a/l-3'], ['a/l-2'], ['a/l-1'])
"""

from __future__ import annotations

import math
from typing import Any

from fedtheory.claims.runner import key_measured_name
from fedtheory.report.data import fmt


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(float(value)) else None


def key_value(record: dict) -> tuple[str | None, Any]:
    """``(key, value)`` of the record's key measured value, ``(None, None)`` when it measured nothing.

    >>> key_value({"evidence": {"measured": {"n": 3, "fitted_slope": -1.0}}})
    ('fitted_slope', -1.0)
    """
    measured = (record.get("evidence") or {}).get("measured") or {}
    key = key_measured_name(measured) if isinstance(measured, dict) else None
    return (key, measured[key]) if key is not None else (None, None)


def threshold(tolerance: Any, key: str | None, old: float, new: float) -> float | None:
    """How far the key value may move under ``tolerance`` (module docstring), or None when it gives no number.

    >>> threshold(1e-3, "r", 10.0, 10.0), threshold({"relative": 0.1}, "r", 2.0, 4.0), threshold({"why": "x"}, "r", 1, 1)
    (0.01, 0.4, None)
    """
    scale = max(1.0, abs(old))
    if _number(tolerance) is not None:
        return _number(tolerance) * scale
    if not isinstance(tolerance, dict):
        return None
    if key is not None and _number(tolerance.get(key)) is not None:
        return _number(tolerance[key]) * scale
    for name in ("absolute", "abs", "atol"):
        if _number(tolerance.get(name)) is not None:
            return _number(tolerance[name])
    for name in ("relative", "rel", "rtol"):
        if _number(tolerance.get(name)) is not None:
            return _number(tolerance[name]) * max(abs(old), abs(new))
    numbers = [_number(v) for v in tolerance.values() if _number(v) is not None]
    return numbers[0] * scale if len(numbers) == 1 else None


def diff_runs(old: dict, new: dict) -> dict:
    """``{added, removed, status, moved, uncompared, compared}`` between two check JSONs (old = baseline).

    ``status``: ``[{id, old, new, expect}]``; ``moved``: ``[{id, key, old, new, threshold}]`` for claims
    whose status did not change; ``uncompared``: ``[{id, key, old, new}]``, key values that changed
    with no numeric tolerance to judge them; ``compared``: how many claims both runs hold.

    >>> old = {"claims": [{"id": "a/l-1", "status": "verified", "expect": "verified"}]}
    >>> new = {"claims": [{"id": "a/l-1", "status": "refuted", "expect": "verified"}]}
    >>> diff_runs(old, new)["status"]
    [{'id': 'a/l-1', 'old': 'verified', 'new': 'refuted', 'expect': 'verified'}]
    """
    old_by = {r["id"]: r for r in old.get("claims", [])}
    new_by = {r["id"]: r for r in new.get("claims", [])}
    out: dict = {
        "added": [i for i in new_by if i not in old_by],
        "removed": [i for i in old_by if i not in new_by],
        "status": [],
        "moved": [],
        "uncompared": [],
        "compared": 0,
    }
    for cid, n in new_by.items():
        o = old_by.get(cid)
        if o is None:
            continue
        out["compared"] += 1
        if o.get("status") != n.get("status"):
            out["status"].append({"id": cid, "old": o.get("status"), "new": n.get("status"), "expect": n.get("expect")})
            continue
        key, new_value = key_value(n)
        old_value = ((o.get("evidence") or {}).get("measured") or {}).get(key) if key is not None else None
        a, b = _number(old_value), _number(new_value)
        unjudged = {"id": cid, "key": key, "old": old_value, "new": new_value}
        if a is None or b is None:
            if key is not None and old_value != new_value:
                out["uncompared"].append(unjudged)
            continue
        limit = threshold((n.get("evidence") or {}).get("tolerance"), key, a, b)
        if limit is None:
            if a != b:
                out["uncompared"].append(unjudged)
        elif abs(b - a) > limit:
            out["moved"].append({"id": cid, "key": key, "old": a, "new": b, "threshold": limit})
    return out


def has_changes(diff: dict) -> bool:
    """Whether the diff lists anything.

    >>> has_changes({"added": [], "removed": [], "status": [], "moved": []})
    False
    """
    return any(diff[k] for k in ("added", "removed", "status", "moved"))


def render_diff(diff: dict, console: Any, baseline: str = "baseline", limit: int = 20) -> None:
    """Print the diff under the check table (rich ``console``); at most ``limit`` added and removed ids each.

    >>> import io
    >>> from rich.console import Console
    >>> c = Console(record=True, width=100, file=io.StringIO())
    >>> render_diff({"added": ["a/l-3"], "removed": [], "status": [{"id": "a/l-1", "old": "verified", "new": "refuted",
    ...              "expect": "verified"}], "moved": [], "compared": 2,
    ...              "uncompared": [{"id": "a/l-2", "key": "gap", "old": 0.5, "new": 0.25}]}, c, "old.json")
    >>> print(c.export_text().strip())
    changes since old.json (2 claims in both runs):
      status a/l-1: verified -> refuted (expect verified)
      added a/l-3
    1 key values changed without a numeric tolerance to judge them:
      changed a/l-2: gap 0.5 -> 0.25 (no numeric tolerance)
    """
    head = f"changes since {baseline} ({diff['compared']} claims in both runs)"
    if not has_changes(diff):
        console.print(f"{head}: none", highlight=False, markup=False, soft_wrap=True)
        _print_uncompared(diff, console, limit)
        return
    console.print(f"{head}:", highlight=False, markup=False, soft_wrap=True)
    lines = [f"  status {s['id']}: {s['old']} -> {s['new']} (expect {s['expect']})" for s in diff["status"]]
    lines += [
        f"  moved {m['id']}: {m['key']} {m['old']:.6g} -> {m['new']:.6g} (tolerance {m['threshold']:.3g})"
        for m in diff["moved"]
    ]
    for kind in ("added", "removed"):
        # a run of one paper against a run of all of them removes hundreds: name a few, count the rest
        ids = diff[kind]
        lines += [f"  {kind} {i}" for i in ids[:limit]]
        if len(ids) > limit:
            lines.append(f"  ... {len(ids) - limit} more {kind} (fedtheory report --baseline lists them all)")
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    _print_uncompared(diff, console, limit)


def _print_uncompared(diff: dict, console: Any, limit: int) -> None:
    """The key values that changed with no numeric tolerance to judge them, each named with both values."""

    unjudged = diff["uncompared"]
    if not unjudged:
        return
    console.print(
        f"{len(unjudged)} key values changed without a numeric tolerance to judge them:",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    for u in unjudged[:limit]:
        console.print(
            f"  changed {u['id']}: {u['key']} {fmt(u['old'])} -> {fmt(u['new'])} (no numeric tolerance)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if len(unjudged) > limit:
        console.print(
            f"  ... {len(unjudged) - limit} more (fedtheory report --baseline lists them all)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
