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


#: sequences longer than this are tried as one numeric array first (a measured curve of 10⁶ floats is converted
#: in one vectorized pass, not one Python call per element)
_FAST_LEN = 64


def _numeric_list(obj: Any) -> list | None:
    """A long all-finite numeric sequence (any nesting of equal lengths) as plain lists, or None to fall back."""
    if isinstance(obj, np.ndarray):
        arr = obj
    else:
        first = obj[0]
        if not isinstance(first, (float, int, np.floating, np.integer, list, tuple, np.ndarray)) or isinstance(
            first, bool
        ):
            return None
        try:
            arr = np.asarray(obj)
        except (ValueError, TypeError):  # ragged or mixed
            return None
    if arr.dtype.kind not in "fiu":
        return None
    if arr.dtype.kind == "f" and not bool(np.all(np.isfinite(arr))):
        return None  # non-finite floats become strings: the element-wise path
    return arr.tolist()


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
    if isinstance(obj, (list, tuple, np.ndarray)) and len(obj) > _FAST_LEN:
        fast = _numeric_list(obj)
        if fast is not None:
            return fast
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
