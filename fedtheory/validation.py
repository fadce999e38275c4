"""Checks of user input shared by the library's layers (a module that imports nothing of fedtheory, so any layer may
use it without an import circle).

>>> finite_real("2.5", "gamma")
2.5
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def finite_real(value: Any, name: str) -> float:
    """``value`` as a float, or a ValueError naming ``name`` when it is not a real number or not finite.

    >>> finite_real(3, "K")
    3.0
    >>> for bad in ("x", float("inf")):
    ...     try:
    ...         finite_real(bad, "the step gamma")
    ...     except ValueError as e:
    ...         print(e)
    the step gamma must be a real number, got 'x'
    the step gamma must be finite, got inf
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def positive_hypothesis(name: str, value: Any) -> float:
    """``value`` as a float when it is finite and > 0, else a ValueError naming the hypothesis and the value.

    >>> positive_hypothesis("eta", 0.5)
    0.5
    >>> try:
    ...     positive_hypothesis("eta", -1)
    ... except ValueError as e:
    ...     print(e)
    hypothesis eta > 0 violated: eta=-1
    """
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"hypothesis {name} > 0 violated: {name}={v:g}")
    return v


def check_rounds(rounds: Any) -> int:
    """A run's number of rounds as an int: a non-negative integer (an integral float too; not a bool), else ValueError.

    >>> check_rounds(3.0), check_rounds(0)
    (3, 0)
    >>> check_rounds(-1)
    Traceback (most recent call last):
    ...
    ValueError: rounds must be a non-negative integer, got -1
    """
    if isinstance(rounds, (bool, np.bool_)) or int(rounds) != rounds or rounds < 0:
        raise ValueError(f"rounds must be a non-negative integer, got {rounds!r}")
    return int(rounds)
