r"""Geometric programs through cvxpy's disciplined geometric programming (DGP).

FedAve's federated oracle complexity in Jadbabaie, Makur & Shah, *Federated Optimization of Smooth
Loss Functions*, Appendix D, eq. (79), is the geometric program

.. math:: \min_{b,T>0}\;Tb+\phi\tau m\,T\quad\text{s.t.}\quad
          \frac{C}{\varepsilon}\Big(\frac{m^2}{T^2b^2}+\frac{b}{mT}\Big)\le1,

a posynomial objective under a posynomial constraint, so it is convex in (log b, log T) and cvxpy
solves it exactly (``problem.solve(gp=True)``, with Clarabel). Its optimum certifies the closed
form of the proof (:class:`fedtheory.symbolic.oracle_complexity.FedAveProgram`).

>>> res = fedave_geometric_program(m=100, phi=100.0, tau=1.0, C=1.0, varepsilon=0.01)
>>> from fedtheory.symbolic.oracle_complexity import FedAveProgram
>>> exact, b, T = FedAveProgram(100, 100.0, 1.0, 1.0, 0.01).exact_min()
>>> abs(res["value"] / exact - 1) < 1e-6, res["status"]
(True, 'optimal')
"""

from __future__ import annotations

import math

__all__ = ["fedave_geometric_program"]


def fedave_geometric_program(
    m: float, phi: float, tau: float, C: float, varepsilon: float, *, solver: str = "CLARABEL", scale: bool = True
) -> dict:
    """Solve (79) as a DGP. Returns ``{"value", "b", "T", "status", "solver"}``.

    Parameters must be positive (τ ≤ 1); raises ValueError otherwise. With ``scale`` the variables
    are normalized by their closed-form magnitudes (b ~ m(ε/C)^{1/4}, T ~ (m/b)(C/ε)^{1/2}) so that
    the interior-point solver works on numbers of order one whatever m, φ and ε are.

    >>> fedave_geometric_program(m=10, phi=-1.0, tau=1.0, C=1.0, varepsilon=0.1)
    Traceback (most recent call last):
    ...
    ValueError: the geometric program (79) needs phi > 0, got phi=-1.0
    """
    import cvxpy as cp

    for name, v in (("m", m), ("phi", phi), ("tau", tau), ("C", C), ("varepsilon", varepsilon)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"the geometric program (79) needs {name} > 0, got {name}={v!r}")
    if tau > 1:
        raise ValueError(f"the geometric program (79) needs tau in (0, 1], got tau={tau!r}")
    b0 = m * (varepsilon / C) ** 0.25 if scale else 1.0
    T0 = (m / b0) * math.sqrt(C / varepsilon) if scale else 1.0
    bs, Ts = cp.Variable(pos=True), cp.Variable(pos=True)  # b = b0·bs, T = T0·Ts
    c3 = phi * tau * m
    objective = (T0 * b0) * Ts * bs + (c3 * T0) * Ts
    k1 = (C / varepsilon) * m**2 / (T0**2 * b0**2)
    k2 = (C / varepsilon) * b0 / (m * T0)
    constraint = k1 * Ts**-2 * bs**-2 + k2 * bs * Ts**-1 <= 1
    problem = cp.Problem(cp.Minimize(objective), [constraint])
    problem.solve(gp=True, solver=solver)
    if problem.value is None or bs.value is None or Ts.value is None:
        raise ValueError(f"the geometric program has no solution: {solver} ended with status {problem.status}")
    return {
        "value": float(problem.value),
        "b": float(bs.value) * b0,
        "T": float(Ts.value) * T0,
        "status": str(problem.status),
        "solver": solver,
    }
