r"""Accelerated extragradient (gradient sliding) under second-order similarity: the Acc-Extragradient baseline.

Kovalev, Beznosikov, Borodich, Gasnikov & Scutari (NeurIPS 2022), as compared against in Jiang,
Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization* (arXiv:2407.07084,
Table 1 and Figure 3), in the form of the authors' experiments: with A_0 = 0, B_0 = 1, x^0 = v^0,

1. a > 0 solves 2λa² = (A + a)B, y = (Ax + av)/(A + a);
2. all clients send ∇f_i(y); **one** client (index ``client``, 0 by default) approximately solves
   :math:`\min_x f_0(x) - \langle\nabla f_0(y) - \nabla f(y), x\rangle + \frac\lambda2\|x - y\|^2` until
   :math:`\|\nabla F(x)\|^2 \le c\lambda^2\|x - y\|^2` (c = 4 in the authors' code);
3. all clients send ∇f_i(x⁺); :math:`v \leftarrow (\mu a x^+ + Bv - a\nabla f(x^+))/(\mu a + B)`, A += a, B += μa.

Its rate depends on the *maximum* dissimilarity δ_B (the local client must be close to f everywhere),
where Acc-S-DANE's depends on δ_A ≤ δ_B. One iteration is counted as one communication round (as
S-DANE's round, which also exchanges twice).

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> q = make_quadratic(4, 5, mu=0.1, L=20.0, delta_A=1.0, seed=0)
>>> h = run_acc_extragradient(q, np.zeros(5), 60, lam=2.0, mu=0.1)
>>> bool(h.gap[-1] < 1e-8 * h.gap[0])
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedtheory.algorithms.dane import RoundResult, _history, _prepare, _stop
from fedtheory.algorithms.local_solvers import GD, StabilizedTest, Subproblem

__all__ = ["run_acc_extragradient"]


def run_acc_extragradient(
    problem: Any,
    x0: Any,
    rounds: int,
    *,
    lam: float,
    mu: float = 0.0,
    solver: Any = None,
    test: Any = StabilizedTest(c=4.0),
    client: int = 0,
    seed: Any = None,
    stop_gap: float | None = None,
) -> Any:
    """Accelerated extragradient sliding (see the module docstring); ``solver`` defaults to GD.

    Oracle calls per round: the local client's solver steps plus its gradients at y and x⁺; every
    other client computes ∇f_i(y) and ∇f_i(x⁺) (2 calls).
    """
    lam = float(lam)
    if not (math.isfinite(lam) and lam > 0) or mu < 0:
        raise ValueError(f"Acc-Extragradient needs lambda > 0 and mu >= 0, got lam={lam}, mu={mu}")
    orc, x, rounds, rng = _prepare(problem, x0, rounds, seed)
    if not (0 <= client < orc.n):
        raise ValueError(f"client must lie in [0, {orc.n}), got {client}")
    solver = solver or GD()
    v = x.copy()
    A, B = 0.0, 1.0
    xs, vs, centers, lams, data, As, Bs = [x], [v], [], [], [], [A], [B]
    idx = np.arange(orc.n)
    for r in range(rounds):
        if _stop(orc, x, stop_gap):
            break
        a = (B + math.sqrt(B * B + 8 * lam * A * B)) / (4 * lam)
        y = (A * x + a * v) / (A + a)
        Gy = orc.grads(np.broadcast_to(y, (orc.n, orc.d)).copy(), idx)
        # the local client's subproblem, linear term ∇f_0(y) − ∇f(y) (all clients' gradients at y)
        lin = (Gy[client] - Gy.mean(axis=0))[None]
        sub = Subproblem(orc, np.array([client]), y[None], lin, lam, G_center=Gy[[client]], r=r, rng=rng)
        res = solver.solve(sub, test)
        x_new = res.X[0]
        g_new = orc.grad(x_new)
        v = (mu * a * x_new + B * v - a * g_new) / (mu * a + B)
        A, B = A + a, B + mu * a
        evals = np.full(orc.n, 2, dtype=np.int64)
        evals[client] = 2 + int(res.evals[0])
        centers.append(y)
        x = x_new
        xs.append(x)
        vs.append(v)
        lams.append(lam)
        rd = RoundResult(
            clients=idx,
            X=res.X,
            G=res.G,
            G_center=Gy[[client]],
            evals=evals,
            gradF_sq=res.gradF_sq,
            dist_sq=res.dist_sq,
            passed=res.passed,
        )
        data.append(rd)
        As.append(A)
        Bs.append(B)
    return _history(
        "acc-extragradient",
        xs,
        vs,
        centers,
        lams,
        data,
        orc,
        False,
        A=As,
        B=Bs,
        params={"lam": lam, "mu": mu, "client": client, "test": repr(test)},
    )
