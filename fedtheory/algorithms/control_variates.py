r"""Control-variate baselines of Section 5: Scaffold and Scaffnew / ProxSkip.

Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated Optimization*
(arXiv:2407.07084) compare S-DANE with these drift-corrected local methods (Figures 3–5).

- **Scaffold** (Karimireddy et al. 2020): K local steps
  :math:`y \leftarrow y - \eta(\nabla f_i(y) - c_i + c)` from x^r, then
  :math:`x^{r+1} = x^r + \eta_g\,\mathrm{mean}_{i\in S}(y_i - x^r)`. Option ``"I"``: c_i = ∇f_i(x^r)
  (fresh full local gradients, c their mean over the sampled clients — the variant of the paper's
  experiments, and DANE with λ = 0 and K GD steps, checked in ``verify/sdane.py``); option ``"II"``:
  stateful c_i ← c_i − c + (x^r − y_i)/(Kη).
- **Scaffnew / ProxSkip** (Mishchenko et al. 2022): every client keeps h_i (Σh_i = 0) and iterates
  :math:`x_i \leftarrow x_i - \gamma(\nabla f_i(x_i) - h_i)`; communication happens with probability p
  after each step: x = mean x_i, :math:`h_i \leftarrow h_i + \frac p\gamma(x - x_i)`. A "round" is one
  communication, so the local steps per round are Geometric(p).

Histories are :class:`~fedtheory.algorithms.dane.ProxHistory` records (``v`` is None).

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> q = make_quadratic(4, 5, mu=1.0, L=20.0, delta_A=1.0, seed=0)
>>> h = run_scaffold(q, np.zeros(5), 60, K=10, step=0.02)
>>> bool(h.gap[-1] < 1e-10)
True
>>> h = run_scaffnew(q, np.zeros(5), 200, p=0.2, step=0.04, seed=0)
>>> bool(h.gap[-1] < 1e-6)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedtheory.algorithms.dane import RoundResult, _history, _prepare, _stop, sample_clients

__all__ = ["run_scaffold", "run_scaffnew"]


def _round(clients, X, G, GC, evals) -> RoundResult:
    z = np.zeros(len(clients))
    return RoundResult(
        clients=np.asarray(clients),
        X=X,
        G=G,
        G_center=GC,
        evals=evals,
        gradF_sq=z,
        dist_sq=z,
        passed=np.ones(len(clients), bool),
    )


def run_scaffold(
    problem: Any,
    x0: Any,
    rounds: int,
    *,
    K: int,
    step: float,
    global_step: float = 1.0,
    option: str = "I",
    clients_per_round: int | None = None,
    seed: Any = None,
    stop_gap: float | None = None,
) -> Any:
    """Scaffold with K local steps of size ``step`` and server step ``global_step`` (see the module docstring).

    Oracle calls per client and round: K local gradients (with option I the first one, ∇f_i(x^r), is
    also the control variate).
    """
    if option not in ("I", "II"):
        raise ValueError(f"Scaffold option must be 'I' or 'II', got {option!r}")
    if int(K) != K or K < 1 or not (step > 0) or not (global_step > 0):
        raise ValueError(
            f"Scaffold needs K >= 1, step > 0 and global_step > 0, got K={K}, step={step}, global_step={global_step}"
        )
    orc, x, rounds, rng = _prepare(problem, x0, rounds, seed)
    c_i = np.zeros((orc.n, orc.d))
    xs, centers, lams, data = [x], [], [], []
    for r in range(rounds):
        if _stop(orc, x, stop_gap):
            break
        S = sample_clients(rng, orc.n, clients_per_round)
        Y = np.broadcast_to(x, (S.size, orc.d)).copy()
        G0 = orc.grads(Y, S)
        if option == "I":
            ci = G0
            c = G0.mean(axis=0)
        else:
            ci = c_i[S]
            c = c_i.mean(axis=0)
        G = G0
        for k in range(int(K)):
            if k > 0:
                G = orc.grads(Y, S)
            Y = Y - step * (G - ci + c)
        if option == "II":
            c_i[S] = ci - c + (x - Y) / (K * step)
        centers.append(x)
        data.append(_round(S, Y, G, G0, np.full(S.size, int(K))))
        x = x + global_step * (Y - x).mean(axis=0)
        xs.append(x)
        lams.append(0.0)
    return _history(
        "scaffold",
        xs,
        None,
        centers,
        lams,
        data,
        orc,
        False,
        params={
            "K": K,
            "step": step,
            "global_step": global_step,
            "option": option,
            "clients_per_round": clients_per_round,
        },
    )


def run_scaffnew(
    problem: Any,
    x0: Any,
    rounds: int,
    *,
    p: float,
    step: float,
    seed: Any = None,
    max_local: int = 100_000,
    stop_gap: float | None = None,
) -> Any:
    """Scaffnew / ProxSkip with full participation: ``rounds`` communications, Geometric(p) local steps each.

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> h = run_scaffnew(make_quadratic(2, 2, mu=1.0, L=2.0, seed=0), np.zeros(2), 3, p=0.5, step=0.1, seed=1)
    >>> h.local_evals.shape, bool(np.all(h.local_evals >= 1))
    ((3, 2), True)
    """
    if not (0 < p <= 1) or not (step > 0):
        raise ValueError(f"Scaffnew needs 0 < p <= 1 and step > 0, got p={p}, step={step}")
    orc, x, rounds, rng = _prepare(problem, x0, rounds, seed)
    n, d = orc.n, orc.d
    H = np.zeros((n, d))
    idx = np.arange(n)
    xs, centers, lams, data = [x], [], [], []
    for _ in range(rounds):
        if _stop(orc, x, stop_gap):
            break
        steps = min(int(rng.geometric(p)), max_local)
        X = np.broadcast_to(x, (n, d)).copy()
        G0 = orc.grads(X, idx)
        G = G0
        for k in range(steps):
            if k > 0:
                G = orc.grads(X, idx)
            X = X - step * (G - H)
        x_new = X.mean(axis=0)
        H = H + (p / step) * (x_new - X)
        centers.append(x)
        data.append(_round(idx, X, G, G0, np.full(n, steps)))
        x = x_new
        xs.append(x)
        lams.append(math.nan)
    return _history("scaffnew", xs, None, centers, lams, data, orc, False, params={"p": p, "step": step})
