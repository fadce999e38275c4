r"""GD, FedAvg and FedProx baselines through the one LocalUpdate driver, recorded like DANE-type runs.

The baselines of Jiang, Rodomanov & Stich, *Stabilized Proximal-Point Methods for Federated
Optimization* (arXiv:2407.07084, Figures 3–5) are special cases of
:class:`~fedtheory.algorithms.local_update.LocalUpdate` (Charles & Konečný's Θ, α, γ, ServerOpt):

- GD: Θ = (1), α = 0, server step η — x^{r+1} = x^r − η∇f(x^r);
- FedAvg: Θ_{1:K}, α = 0, server step γ (the average of the clients' K-th local iterates);
- FedProx-GD: Θ_{1:K}, proximal α = λ, server step γ.

:func:`run_baseline` runs one through :func:`~fedtheory.algorithms.local_update.run_local_update` (not a
copy) and returns a :class:`~fedtheory.algorithms.dane.ProxHistory`, with the local oracle calls counted
as the per-round maximum over clients (K, or 1 for GD), as the paper plots.

>>> import numpy as np
>>> from fedtheory.problems.finite_sum import LogisticFederation
>>> fed = LogisticFederation.random(4, 30, 3, seed=0)
>>> h = run_baseline(fed, "fedavg", np.zeros(3), 20, K=5, step=0.1)
>>> h.method, int(h.oracle_max[-1]), bool(h.gap[-1] < h.gap[0])
('fedavg', 100, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.algorithms.dane import ProxHistory
from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
from fedtheory.algorithms.theta import Theta
from fedtheory.problems.clients import client_oracles

__all__ = ["BASELINES", "baseline_update", "run_baseline"]

BASELINES = ("gd", "fedavg", "fedprox")


def baseline_update(kind: str, *, step: float, K: int = 1, lam: float = 0.0) -> LocalUpdate:
    """The LocalUpdate of a baseline: ``"gd"`` (K ignored), ``"fedavg"`` or ``"fedprox"`` (α = ``lam``).

    >>> baseline_update("gd", step=0.5).theta, baseline_update("fedprox", step=0.1, K=3, lam=2.0).alpha
    (Theta.uniform(1), 2.0)
    """
    if kind == "gd":
        return LocalUpdate(Theta.uniform(1), 0.0, step, ServerOpt("gd", lr=step))
    if kind == "fedavg":
        return LocalUpdate.fedavg(int(K), step)
    if kind == "fedprox":
        return LocalUpdate.fedprox(int(K), step, float(lam))
    raise ValueError(f"baseline must be one of {BASELINES}, got {kind!r}")


def run_baseline(
    problem: Any,
    kind: str,
    x0: Any,
    rounds: int,
    *,
    step: float,
    K: int = 1,
    lam: float = 0.0,
    clients_per_round: int | None = None,
    batch_size: int | None = None,
    seed: Any = None,
) -> ProxHistory:
    """Run a baseline through LocalUpdate and record it as a ProxHistory (``v`` is None, λ = FedProx's α).

    Client sampling is uniform without replacement (the paper's), aggregated with the unbiased weights
    n p_i/s of :class:`~fedtheory.algorithms.local_update.ClientSampler`.
    """
    algo = baseline_update(kind, step=step, K=K, lam=lam)
    h = run_local_update(
        problem,
        algo,
        np.asarray(x0, dtype=np.float64),
        rounds,
        batch_size=batch_size,
        clients_per_round=clients_per_round,
        client_sampling="without_replacement",
        seed=seed,
    ).to_numpy()
    orc = client_oracles(problem)
    try:
        gap = np.asarray(h.loss, dtype=np.float64) - orc.f_star()
    except ValueError:
        gap = np.full(h.x.shape[0], np.nan)
    R = h.rounds
    s = orc.n if clients_per_round is None else int(clients_per_round)
    evals = np.full((R, s), algo.K, dtype=np.int64)
    nan = np.full(R, np.nan)
    return ProxHistory(
        method=kind,
        x=h.x,
        v=None,
        center=h.x[:-1],
        gap=gap,
        gap_v=np.full(R + 1, np.nan),
        grad_norm=np.asarray(h.grad_norm, dtype=np.float64),
        lam=np.full(R, float(lam)),
        clients=np.full((R, s), -1, dtype=np.int64),
        local_evals=evals,
        test_lhs=nan,
        test_rhs=nan,
        test_passed=np.ones(R, bool),
        params={
            "kind": kind,
            "step": step,
            "K": algo.K,
            "lam": lam,
            "driver": "LocalUpdate",
            "clients_per_round": clients_per_round,
            "batch_size": batch_size,
        },
    )
