r"""FedLRGD (Algorithm 1) and FedAve, with the federated oracle complexity of Definition 1.

Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*.

**FedLRGD** (Algorithm 1, τ = 1): the server holds r samples x^{(0,j)}, client c holds s samples.

1. Epoch 1 (server, r² gradients): pick r parameter values ϑ^{(k)}; for each coordinate i form
   :math:`G^{(i)}_{jk}=g_i(x^{(0,j)};\vartheta^{(k)})` (eq. (34)) and invert it.
2. Epoch 2 (clients, rs gradients each, then communicate): client c computes
   :math:`(v^{(i,c)})^\top=\big(\sum_{j}[g_i(x^{(c,j)};\vartheta^{(1)})\cdots g_i(x^{(c,j)};\vartheta^{(r)})]\big)(G^{(i)})^{-1}`
   (eq. (35)) and sends :math:`\{v^{(i,c)}_1\}_i`; epochs 3..r+1 send the other r − 1 coordinates.
3. Epoch r + 2 (server, rS gradients): inexact GD :math:`\theta\leftarrow\theta-\frac1{L_1}\widehat{\nabla F}(\theta)`,
   :math:`\widehat{\nabla F}_i(\theta)=\frac1n\sum_kg_i(x^{(0,k)};\theta)(1+\sum_cv^{(i,c)}_k)` (41)–(42).

Everything is batched: the p matrices G^{(i)} are one (p, r, r) array solved at once for all clients.

**FedAve** (the paper's benchmark, "the precise formulation of [30, Algorithm 1]" = FedPAQ without
quantization): in period k the server sends θ_k to τm clients drawn uniformly without replacement;
each runs b local SGD steps :math:`\theta\leftarrow\theta-\eta_k\widetilde\nabla f_c(\theta)` from θ_k; the
server sets :math:`\theta_{k+1}=\theta_k+\frac1{\tau m}\sum_c(\theta_{k,b}^{(c)}-\theta_k)` (model
averaging). This **is** LocalUpdate (Charles & Konečný, Appendix A): with Θ = Θ_{1:b}, α = 0, client
rate γ = η_k the message is :math:`\sum_{j=1}^b g_j=(\theta_k-\theta^{(c)}_{k,b})/\eta_k`, and server GD
with rate η_k on the average message gives exactly the model average. So :func:`run_fedave` calls
:func:`fedtheory.algorithms.local_update.run_local_update` with ``LocalUpdate.fedavg(K=b, gamma=η_k)``
(server lr = η_k), ``clients_per_round = τm``, ``client_sampling = "without_replacement"`` (weights
n·p_c/(τm) = 1/(τm) for equal sample counts) and ``batch_size`` = the mini-batch of each stochastic
gradient; a step-size schedule η_k (FedPAQ's η_k = 4/(μ(kb + 1))) runs one period per call, the
random state carried over. Its cost is :math:`\Gamma=T(b+\phi\tau m)`.

>>> import numpy as np
>>> from fedtheory.problems.data_smooth import RidgeLoss
>>> rng = np.random.default_rng(0)
>>> loss = RidgeLoss(l2=0.5)
>>> server = np.c_[rng.normal(size=(4, 3)), rng.normal(size=4)]          # r = p + 1 = 4 rows (a, y)
>>> clients = np.c_[rng.normal(size=(6 * 5, 3)), rng.normal(size=30)].reshape(6, 5, 4)
>>> res = run_fedlrgd(loss, server, clients, S=50, L1=20.0, phi=10.0, seed=1)
>>> bool(res.grad_error.max() < 1e-9 * res.grad_norm.max())   # ridge: gradient kernel of rank p + 1
True
>>> res.complexity == res.r**2 + res.r * res.s + res.r * res.S + 10.0 * res.m * res.r
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from fedtheory.symbolic.oracle_complexity import (
    fedave_complexity,
    fedlrgd_epochs,
    federated_oracle_complexity,
)

__all__ = ["FedLRGDResult", "run_fedlrgd", "fedlrgd_weights", "FedAveResult", "run_fedave", "fedpaq_step"]


@dataclass
class FedLRGDResult:
    """What a FedLRGD run produced (numpy arrays).

    ``theta`` (S+1, p) iterates; ``varthetas`` (r, p); ``weights`` (p, r) = 1 + Σ_c v^{(i,c)};
    ``client_weights`` (m, p, r); ``g_condition`` (p,) condition numbers of G^{(i)};
    ``loss`` (S+1,) F(θ_γ); ``grad_error`` (S,) ‖∇̂F(θ_{γ−1}) − ∇F(θ_{γ−1})‖ and ``grad_norm`` (S,)
    ‖∇F(θ_{γ−1})‖ (evaluation only, not counted); ``gradient_counts`` per epoch as executed,
    ``epochs`` (Definition 1's list) and ``complexity`` Γ.
    """

    theta: np.ndarray
    varthetas: np.ndarray
    weights: np.ndarray
    client_weights: np.ndarray
    g_condition: np.ndarray
    loss: np.ndarray
    grad_error: np.ndarray
    grad_norm: np.ndarray
    gradient_counts: dict
    epochs: list
    complexity: float
    r: int
    s: int
    m: int
    S: int
    n: int


def _be(backend: Any, device: Any = None):
    from fedtheory.backends import get_backend

    return get_backend(backend, device=device)


def fedlrgd_weights(
    loss: Any, server_rows: Any, client_rows: Any, varthetas: Any, backend: Any = "numpy", device: Any = None
) -> tuple[Any, Any, Any, dict]:
    """Epochs 1–2 of Algorithm 1: (G (p, r, r), client weights v (m, p, r), aggregated weights
    W = 1 + Σ_c v (p, r), gradient counts {"server": r², "per_client": r·s}). Backend arrays.

    >>> import numpy as np
    >>> from fedtheory.problems.data_smooth import RidgeLoss
    >>> rng = np.random.default_rng(0)
    >>> G, v, W, counts = fedlrgd_weights(RidgeLoss(0.1), rng.normal(size=(3, 3)), rng.normal(size=(2, 4, 3)),
    ...                                   rng.normal(size=(3, 2)))
    >>> G.shape, v.shape, W.shape, counts
    ((2, 3, 3), (2, 2, 3), (2, 3), {'server': 9, 'per_client': 12})
    """
    be = _be(backend, device)
    server, clients, thetas = be.asarray(server_rows), be.asarray(client_rows), be.asarray(varthetas)
    r = int(server.shape[0])
    m, s = int(clients.shape[0]), int(clients.shape[1])
    if int(thetas.shape[0]) != r:
        raise ValueError(
            f"Algorithm 1 uses r parameter values for the r server samples: got {int(thetas.shape[0])} and {r}"
        )
    g_server = loss.grads(server, thetas, be)  # (r data, r params, p)
    G = be.einsum("jki->ijk", g_server)  # G[i]_{jk} = g_i(x0_j; ϑ_k)
    g_clients = loss.grads(clients.reshape(m * s, -1), thetas, be)  # (m s, r, p)
    rows = be.einsum("cjki->cik", g_clients.reshape(m, s, r, -1))  # Σ_j g_i(x_cj; ϑ_k): (m, p, r)
    GT = be.einsum("ijk->ikj", G)
    v = be.solve(GT[None], rows)  # v Gᵢ = row  ⇔  Gᵢᵀ v = row
    W = 1 + be.einsum("cik->ik", v)
    return G, v, W, {"server": r * r, "per_client": r * s}


def run_fedlrgd(
    loss: Any,
    server_rows: Any,
    client_rows: Any,
    S: int,
    *,
    L1: float,
    phi: float = 1.0,
    varthetas: Any = None,
    vartheta_scale: float = 1.0,
    theta0: Any = None,
    seed: Any = None,
    backend: Any = "numpy",
    device: Any = None,
    track: bool = True,
) -> FedLRGDResult:
    """Run Algorithm 1: ``server_rows`` (r, p+1), ``client_rows`` (m, s, p+1), S inexact-GD iterations
    with step 1/L1.

    ``varthetas`` (r, p): the server's "arbitrary" parameter values; default i.i.d. N(0, scale²) draws
    from ``seed`` (the paper leaves them free; their distinctness makes G^{(i)} invertible for generic
    data). ``theta0`` defaults to 0. ``track`` also records F, ∇F and the gradient error per
    iteration (evaluation only, not part of the complexity). Γ is Definition 1 on the epochs actually
    executed (r², rs per client with communication, r − 1 communication epochs, rS).
    """
    be = _be(backend, device)
    server = np.asarray(server_rows, dtype=np.float64)
    clients = np.asarray(client_rows, dtype=np.float64)
    if server.ndim != 2 or clients.ndim != 3 or clients.shape[2] != server.shape[1]:
        raise ValueError(
            f"server_rows must be (r, p+1) and client_rows (m, s, p+1), got {server.shape} and {clients.shape}"
        )
    if isinstance(S, bool) or int(S) != S or S < 1:
        raise ValueError(f"the number of inexact GD iterations S must be a positive integer, got S={S!r}")
    if not (np.isfinite(L1) and L1 > 0):
        raise ValueError(f"the step 1/L1 needs L1 > 0, got L1={L1!r}")
    r, p = server.shape[0], server.shape[1] - 1
    m, s = clients.shape[0], clients.shape[1]
    n = m * s + r
    rng = np.random.default_rng(seed) if not isinstance(seed, np.random.Generator) else seed
    if varthetas is None:
        varthetas = vartheta_scale * rng.normal(size=(r, p))
    varthetas = np.asarray(varthetas, dtype=np.float64)
    G, v, W, counts = fedlrgd_weights(loss, server, clients, varthetas, be)
    Gn = be.to_numpy(G)
    theta = be.asarray(np.zeros(p) if theta0 is None else theta0)
    server_b = be.asarray(server)
    all_rows = np.concatenate([server, clients.reshape(m * s, -1)])
    thetas, errs, norms = [be.to_numpy(theta).copy()], [], []
    for _ in range(int(S)):
        g = loss.grads(server_b, theta[None], be)[:, 0, :]  # r gradients at θ: (r, p)
        approx = be.einsum("kp,pk->p", g, W) / n
        if track:
            true = loss.gradient(all_rows, be.to_numpy(theta))
            errs.append(float(np.linalg.norm(be.to_numpy(approx) - true)))
            norms.append(float(np.linalg.norm(true)))
        theta = theta - approx / L1
        thetas.append(be.to_numpy(theta).copy())
    thetas_np = np.stack(thetas)
    losses = np.array([loss.objective(all_rows, t) for t in thetas_np]) if track else np.array([])
    epochs = fedlrgd_epochs(r, s, int(S))
    return FedLRGDResult(
        theta=thetas_np,
        varthetas=varthetas,
        weights=be.to_numpy(W),
        client_weights=be.to_numpy(v),
        g_condition=np.linalg.cond(Gn),
        loss=losses,
        grad_error=np.array(errs),
        grad_norm=np.array(norms),
        gradient_counts={
            "epoch_1_server": counts["server"],
            "epoch_2_per_client": counts["per_client"],
            "epoch_last_server": r * int(S),
        },
        epochs=epochs,
        complexity=float(federated_oracle_complexity(epochs, phi, 1, m)),
        r=r,
        s=s,
        m=m,
        S=int(S),
        n=n,
    )


# --------------------------------------------------------------------------------------------
# FedAve through LocalUpdate
# --------------------------------------------------------------------------------------------


@dataclass
class FedAveResult:
    """FedAve iterates ``x`` (T+1, p), F(x_t) ``loss``, ‖∇F(x_t)‖ ``grad_norm``, the step sizes used,
    the cost Γ = T(b + φτm) and the per-period LocalUpdate histories' oracle calls."""

    x: np.ndarray
    loss: np.ndarray
    grad_norm: np.ndarray
    steps: np.ndarray
    complexity: float
    oracle_calls: int
    b: int
    T: int
    clients_per_round: int


def fedpaq_step(mu: float, b: int) -> Callable[[int], float]:
    """FedPAQ's schedule (its Theorem 1, used by Lemma 3): η_k = 4/(μ(kb + 1)) in period k = 0, 1, ...

    >>> fedpaq_step(1.0, 2)(3)
    0.5714285714285714
    """
    if not mu > 0:
        raise ValueError(f"FedPAQ's step size needs mu > 0, got mu={mu!r}")
    return lambda k: 4.0 / (mu * (k * b + 1))


def run_fedave(
    federation: Any,
    b: int,
    T: int,
    step: float | Callable[[int], float],
    *,
    x0: Any = None,
    tau: float = 1.0,
    batch_size: int | None = None,
    phi: float = 1.0,
    seed: Any = None,
    backend: Any = "numpy",
    device: Any = None,
) -> FedAveResult:
    """FedAve (FedPAQ without quantization) on a finite-sum federation, through LocalUpdate.

    ``b`` local steps, ``T`` periods, ``step`` η (a constant, or a schedule k ↦ η_k), τm clients per
    period drawn without replacement (``tau``·n must be an integer), mini-batches of ``batch_size``.
    See the module docstring for the mapping onto LocalUpdate.

    >>> import numpy as np
    >>> from fedtheory.problems.finite_sum import LeastSquaresFederation
    >>> fed = LeastSquaresFederation.random(n=4, m=20, d=3, l2=0.1, seed=0)
    >>> res = run_fedave(fed, b=3, T=30, step=0.05, tau=0.5, batch_size=5, phi=10.0, seed=0)
    >>> bool(res.loss[-1] < res.loss[0]), res.complexity              # T(b + φτm) = 30·(3 + 20)
    (True, 690.0)
    """
    from fedtheory.algorithms.local_update import LocalUpdate, run_local_update

    n = int(federation.n)
    M = tau * n
    if not (0 < tau <= 1) or abs(M - round(M)) > 1e-9:
        raise ValueError(f"tau*m must be a positive integer number of clients with tau in (0, 1]: tau={tau}, m={n}")
    M = int(round(M))
    if isinstance(T, bool) or int(T) != T or T < 1:
        raise ValueError(f"the number of periods T must be a positive integer, got T={T!r}")
    if isinstance(b, bool) or int(b) != b or b < 1:
        raise ValueError(f"the number of local steps b must be a positive integer, got b={b!r}")
    x = np.zeros(federation.d) if x0 is None else np.asarray(x0, dtype=np.float64)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    per_round = None if M == n else M
    steps = np.array([step(k) if callable(step) else float(step) for k in range(int(T))])
    xs, calls = [x], 0

    def fedavg_rounds(x_start: np.ndarray, rounds: int, lr: float):
        # server GD with lr = γ: model averaging; the one rng runs on through every call
        return run_local_update(
            federation,
            LocalUpdate.fedavg(int(b), lr),
            x_start,
            rounds,
            batch_size=batch_size,
            clients_per_round=per_round,
            client_sampling="without_replacement",
            seed=rng,
            backend=backend,
            device=device,
        ).to_numpy()

    if not callable(step):
        h = fedavg_rounds(x, int(T), float(step))
        X = h.x
        calls = int(h.oracle_calls[-1])
    else:
        for k in range(int(T)):
            h = fedavg_rounds(xs[-1], 1, float(steps[k]))
            xs.append(h.x[-1])
            calls += int(h.oracle_calls[-1])
        X = np.stack(xs)
    arrays = federation.on(backend, device)
    from fedtheory.backends import get_backend

    be = get_backend(backend, device=device)
    loss, gnorm = federation.loss_and_grad_norm(arrays, be.asarray(X))
    return FedAveResult(
        x=X,
        loss=np.asarray(be.to_numpy(loss)),
        grad_norm=np.asarray(be.to_numpy(gnorm)),
        steps=steps,
        complexity=float(fedave_complexity(int(b), int(T), phi, tau, n)),
        oracle_calls=calls,
        b=int(b),
        T=int(T),
        clients_per_round=M,
    )
