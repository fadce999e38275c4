"""Fitting convergence rates from error histories, stopping before float64's floor.

A rate claim ("the error decays like 1/t", "exponentially with rate c") is checked by running the
algorithm and fitting: :func:`fit_power_law` regresses log(error) on log(t) (slope −1 for 1/t),
:func:`fit_exponential` regresses log(error) on t (slope −c for e^{−ct}). Both use only the points
whose error is above ``floor`` (where rounding, not the algorithm, would set the value), and report
how many points were used.

>>> import numpy as np
>>> t = np.arange(1, 200)
>>> fit = fit_power_law(t, 3.0 / t, t_min=10)
>>> round(fit["slope"], 12), fit["points"]
(-1.0, 190)
>>> round(fit_exponential(t, 2.0 * np.exp(-0.1 * t), floor=1e-6)["rate"], 10)
0.1
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["fit_power_law", "fit_exponential"]


def _usable(t: Any, err: Any, floor: float, t_min: float, t_max: float) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t, dtype=np.float64).ravel()
    e = np.asarray(err, dtype=np.float64).ravel()
    if t.shape != e.shape:
        raise ValueError(f"t and err must have the same length, got {t.shape[0]} and {e.shape[0]}")
    keep = (t >= t_min) & (t <= t_max) & (e > floor) & np.isfinite(e)
    if keep.sum() < 3:
        raise ValueError(
            f"a rate fit needs at least 3 points above the floor {floor:g} in [{t_min:g}, {t_max:g}], "
            f"got {int(keep.sum())}"
        )
    return t[keep], e[keep]


def fit_power_law(t: Any, err: Any, *, floor: float = 0.0, t_min: float = 1.0, t_max: float = np.inf) -> dict:
    """Least-squares fit log err = slope·log t + intercept on the points above ``floor`` in [t_min, t_max].

    Returns ``{"slope", "intercept", "points", "max_residual"}`` (residuals in log units).

    >>> round(fit_power_law([1, 2, 4, 8], [1.0, 0.25, 0.0625, 1e-300], floor=1e-200)["slope"], 12)
    -2.0
    """
    tt, ee = _usable(t, err, floor, max(t_min, np.finfo(float).tiny), t_max)
    X = np.stack([np.log(tt), np.ones_like(tt)], axis=1)
    coef, *_ = np.linalg.lstsq(X, np.log(ee), rcond=None)
    res = np.log(ee) - X @ coef
    return {
        "slope": float(coef[0]),
        "intercept": float(coef[1]),
        "points": int(tt.size),
        "max_residual": float(np.abs(res).max()),
    }


def fit_exponential(t: Any, err: Any, *, floor: float = 0.0, t_min: float = 0.0, t_max: float = np.inf) -> dict:
    """Least-squares fit log err = −rate·t + intercept on the points above ``floor`` in [t_min, t_max].

    Returns ``{"rate", "intercept", "points", "max_residual"}``.

    >>> round(fit_exponential([0, 1, 2, 3], [1.0, 0.5, 0.25, 0.125])["rate"], 12) == round(float(np.log(2)), 12)
    True
    """
    tt, ee = _usable(t, err, floor, t_min, t_max)
    X = np.stack([tt, np.ones_like(tt)], axis=1)
    coef, *_ = np.linalg.lstsq(X, np.log(ee), rcond=None)
    res = np.log(ee) - X @ coef
    return {
        "rate": float(-coef[0]),
        "intercept": float(coef[1]),
        "points": int(tt.size),
        "max_residual": float(np.abs(res).max()),
    }
