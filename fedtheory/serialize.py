"""Plain JSON from the library's objects: one conversion shared by evidence, probes and the explorer.

>>> import numpy as np
>>> jsonable({"A": np.eye(2), "t": np.float64(0.5), "k": (np.int64(3), float("inf"))})
{'A': [[1.0, 0.0], [0.0, 1.0]], 't': 0.5, 'k': [3, 'inf']}
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

__all__ = ["jsonable"]


def jsonable(obj: Any) -> Any:
    """``obj`` with numpy arrays and scalars turned into plain JSON types, recursively.

    Objects with a ``to_json()`` method (a federation, a Θ) are asked for their own form; a
    ``NamedTuple`` becomes a dict; non-finite floats become the strings ``"inf"``, ``"-inf"``,
    ``"nan"`` (JSON has no such numbers), as :class:`fedtheory.claims.core.Evidence` does.

    >>> jsonable({"A": np.eye(2), "t": np.float64(0.5), "k": (np.int64(3), float("inf"))})
    {'A': [[1.0, 0.0], [0.0, 1.0]], 't': 0.5, 'k': [3, 'inf']}
    """
    if hasattr(obj, "to_json") and callable(obj.to_json) and not isinstance(obj, type):
        return jsonable(obj.to_json())
    if isinstance(obj, tuple) and hasattr(obj, "_asdict"):
        return jsonable(obj._asdict())
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj
