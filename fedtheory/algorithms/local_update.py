"""LocalUpdate (Algorithms 1–2 of Charles & Konečný, arXiv:2103.05032) as data, and its one driver.

An algorithm here *is* its data (as in AutoLyap): ``LocalUpdate(theta, alpha, gamma, server)``.
FedAvg, FedProx, Reptile, FOMAML, Lookahead, FedSGD and mini-batch SGD are choices of Θ, α, γ
(Table 1); FedAvgM is a choice of ``server``. Analysis code reads these fields; it never
special-cases an algorithm by name.

One round (Algorithm 1, full participation, P known to the server as in Section 4.2):

* every client i runs Algorithm 2 from the broadcast point x: for k = 1..K(Θ),
  g_k = A_i(x_k − c_i) + α(x_k − x), x_{k+1} = x_k − γ g_k, and sends q^i = Σ_k θ_k g_k;
* the server forms q = Σ_i p_i q^i and takes one ServerOpt step with the pseudo-gradient q.

Two message paths compute the same q^i for all clients at once (no Python loop over clients):

* ``"stepwise"``: the K local steps literally (the reference; O(K d²) per client per round);
* ``"spectral"``: g_k = M_i^{k−1} A_i (x − c_i) with M_i = I − γ(A_i + αI), so
  q^i = V_i diag(q(m_ij) λ_ij) V_iᵀ (x − c_i) = Q_iA_i(x − c_i) (Theorem 1). The matrices
  B_i = Q_iA_i are built once per run from the stored eigendecompositions, so a round is one batched
  mat-vec, O(d²) per client whatever K is; K = 10⁶ is exact (log-space closed forms).

Beyond the full-batch quadratic case, :func:`run_local_update` runs on any
:class:`~fedtheory.problems.finite_sum.FiniteSumFederation` (least squares, logistic regression, ...)
with mini-batches of size B drawn without replacement from each client's samples (Algorithm 2's
S_k), samples M clients per round (Algorithm 1's I_t: i.i.d. from P, or uniformly without
replacement with weights n·p_i/M, both unbiased for Σ p_i q^i), and ServerOpt may be Adam
(FedAdam). All randomness comes from one ``seed`` and is drawn on the host, so numpy and torch runs
of the same seed see the same batches and clients.

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> from fedtheory.algorithms import Theta, ServerOpt, LocalUpdate, run_local_update
>>> prob = make_quadratic(4, 3, mu=1.0, L=10.0, seed=0)
>>> algo = LocalUpdate(Theta.uniform(5), alpha=0.0, gamma=0.05, server=ServerOpt("gd", lr=0.1))
>>> h = run_local_update(prob, algo, np.zeros(3), rounds=200).to_numpy()
>>> h.x.shape, int(h.oracle_calls[-1])          # 200 rounds × 4 clients × 5 local steps
((201, 3), 4000)
>>> bool(h.dist_surrogate[-1] < 1e-10 < h.dist_empirical[-1])   # converges to x*(α,γ,Θ), not to x*
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedtheory.algorithms.clients import CLIENT_SAMPLING, ClientSampler, QuadraticArrays, prepare_quadratic  # noqa: F401
from fedtheory.algorithms.theta import Theta, _is_torch, resolve_backend
from fedtheory.validation import check_rounds, finite_real

__all__ = [
    "SERVER_KINDS",
    "MESSAGE_PATHS",
    "ServerOpt",
    "LocalUpdate",
    "History",
    "client_pseudo_gradients",
    "run_local_update",
]

SERVER_KINDS = ("gd", "heavy_ball", "nesterov", "adam")
MESSAGE_PATHS = ("spectral", "stepwise")


def _finite_float(value: Any, name: str) -> float:
    return finite_real(value, name)


# --------------------------------------------------------------------------------------------
# the algorithm as data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerOpt:
    """The server's first-order method on the pseudo-gradient q (Algorithm 1's ServerOpt).

    * ``"gd"``: x_{t+1} = x_t − η q(x_t).
    * ``"heavy_ball"``: x_{t+1} = x_t − η q(x_t) + β(x_t − x_{t−1}).
    * ``"nesterov"``: y_t = x_t + β(x_t − x_{t−1}), x_{t+1} = y_t − η q(y_t); the server broadcasts
      y_t, so the clients compute the pseudo-gradient at y_t.

    * ``"adam"`` (Kingma & Ba 2014; FedAdam of Reddi et al. 2020): m_t = β₁m_{t−1} + (1−β₁)q,
      v_t = β₂v_{t−1} + (1−β₂)q², x_{t+1} = x_t − η m̂_t/(√v̂_t + ε) with bias-corrected m̂, v̂;
      β₁ = ``momentum`` (default 0.9 for Adam), β₂ = ``beta2``, ε = ``eps``.

    η = ``lr`` > 0 and β = ``momentum`` ∈ [0, 1] (0 for ``"gd"``; 1 is allowed because tuned values
    1 − O(κ^{−1/2}) round to it for huge κ); the momentum buffer starts empty,
    i.e. x_{−1} = x_0, so the first round of every kind is a plain gradient step.

    >>> ServerOpt("heavy_ball", lr=0.5, momentum=0.25)
    ServerOpt(kind='heavy_ball', lr=0.5, momentum=0.25)
    >>> ServerOpt("adam", lr=0.1)
    ServerOpt(kind='adam', lr=0.1, momentum=0.9, beta2=0.999, eps=1e-08)
    >>> ServerOpt("gd", lr=0.5, momentum=0.1)
    Traceback (most recent call last):
    ...
    ValueError: ServerOpt 'gd' has no momentum (got momentum=0.1); use kind='heavy_ball' or 'nesterov'
    """

    kind: str
    lr: float
    momentum: float = None  # type: ignore[assignment]  # None: the kind's default, which __post_init__ fills in
    beta2: float = 0.999
    eps: float = 1e-8

    def __post_init__(self) -> None:
        if self.kind not in SERVER_KINDS:
            raise ValueError(f"ServerOpt kind must be one of {SERVER_KINDS}, got {self.kind!r}")
        lr = _finite_float(self.lr, "ServerOpt lr")
        if not lr > 0:
            raise ValueError(f"ServerOpt lr must be > 0, got {lr}")
        if self.momentum is None:
            object.__setattr__(self, "momentum", 0.9 if self.kind == "adam" else 0.0)
        beta = _finite_float(self.momentum, "ServerOpt momentum")
        if self.kind == "adam":
            beta2 = _finite_float(self.beta2, "ServerOpt beta2")
            eps = _finite_float(self.eps, "ServerOpt eps")
            if not (0 <= beta < 1 and 0 <= beta2 < 1):
                raise ValueError(
                    f"ServerOpt 'adam' needs 0 <= momentum (beta1) < 1 and 0 <= beta2 < 1, got {beta}, {beta2}"
                )
            if not eps > 0:
                raise ValueError(f"ServerOpt 'adam' needs eps > 0, got {eps}")
            object.__setattr__(self, "beta2", beta2)
            object.__setattr__(self, "eps", eps)
        if not 0 <= beta <= 1:
            raise ValueError(f"ServerOpt momentum must lie in [0, 1], got {beta}")
        if self.kind == "gd" and beta != 0:
            raise ValueError(
                f"ServerOpt 'gd' has no momentum (got momentum={beta:g}); use kind='heavy_ball' or 'nesterov'"
            )
        object.__setattr__(self, "lr", lr)
        object.__setattr__(self, "momentum", beta)

    def __repr__(self) -> str:
        extra = f", beta2={self.beta2!r}, eps={self.eps!r}" if self.kind == "adam" else ""
        return f"ServerOpt(kind={self.kind!r}, lr={self.lr!r}, momentum={self.momentum!r}{extra})"


@dataclass(frozen=True)
class LocalUpdate:
    """LocalUpdate(Θ, α, γ, ServerOpt) of Algorithms 1–2: the algorithm is this data.

    ``theta``: client weights Θ (a :class:`Theta`, or a sequence converted to one); ``alpha`` ≥ 0:
    proximal weight of the client's ½α‖x_k − x‖² term; ``gamma`` ≥ 0: client learning rate;
    ``server``: :class:`ServerOpt`. No step-size hypothesis is imposed here (Theorem 1 holds for all
    γ); the analytic objects that need Lemma 1's γ < 1/(L + α) check it themselves.

    >>> LocalUpdate.fedavg(K=10, gamma=0.01)           # Appendix A: Θ_{1:K}, server GD with η = γ
    LocalUpdate(theta=Theta.uniform(10), alpha=0.0, gamma=0.01, server=ServerOpt(kind='gd', lr=0.01, momentum=0.0))
    >>> LocalUpdate(Theta.uniform(2), alpha=-1.0, gamma=0.1, server=ServerOpt("gd", 1.0))
    Traceback (most recent call last):
    ...
    ValueError: LocalUpdate alpha must be >= 0 (proximal weight), got -1.0
    """

    theta: Theta
    alpha: float
    gamma: float
    server: ServerOpt

    def __post_init__(self) -> None:
        if not isinstance(self.theta, Theta):
            object.__setattr__(self, "theta", Theta(self.theta))
        alpha = _finite_float(self.alpha, "LocalUpdate alpha")
        gamma = _finite_float(self.gamma, "LocalUpdate gamma")
        if alpha < 0:
            raise ValueError(f"LocalUpdate alpha must be >= 0 (proximal weight), got {alpha}")
        if gamma < 0:
            raise ValueError(f"LocalUpdate gamma must be >= 0 (client learning rate), got {gamma}")
        if not isinstance(self.server, ServerOpt):
            raise ValueError(f"LocalUpdate server must be a ServerOpt, got {self.server!r}")
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "gamma", gamma)

    @property
    def K(self) -> int:
        """K(Θ): local gradient evaluations per client per round.

        >>> LocalUpdate.fedavg(7, 0.01).K
        7
        """
        return self.theta.K

    # Table 1 / Appendix A presets (server gradient descent) ----------------------------------
    @classmethod
    def fedavg(cls, K: int, gamma: float, *, server: ServerOpt | None = None) -> "LocalUpdate":
        """FedAvg / local SGD: Θ_{1:K}, α = 0; by Appendix A the server step is GD with η = γ.

        >>> LocalUpdate.fedavg(3, 0.1, server=ServerOpt("gd", lr=1.0)).server.lr
        1.0
        """
        return cls(Theta.uniform(K), 0.0, gamma, server or ServerOpt("gd", lr=gamma))

    @classmethod
    def fedprox(cls, K: int, gamma: float, alpha: float, *, server: ServerOpt | None = None) -> "LocalUpdate":
        """FedProx: Θ_{1:K}, proximal α > 0; server GD with η = γ unless given.

        >>> LocalUpdate.fedprox(3, 0.1, 0.5).alpha
        0.5
        """
        return cls(Theta.uniform(K), alpha, gamma, server or ServerOpt("gd", lr=gamma))

    @classmethod
    def fomaml(cls, K: int, gamma: float, *, server: ServerOpt) -> "LocalUpdate":
        """FOMAML: Θ_K (only the K-th local gradient is sent), α = 0.

        >>> LocalUpdate.fomaml(3, 0.1, server=ServerOpt("gd", 1.0)).theta
        Theta.last(3)
        """
        return cls(Theta.last(K), 0.0, gamma, server)


# --------------------------------------------------------------------------------------------
# the federation on a backend
# --------------------------------------------------------------------------------------------


def _matvec(M: Any, v: Any, be) -> Any:
    """Batched M_i v_i: (n, d, d) × (n, d) → (n, d)."""
    return be.matmul(M, v[..., None])[..., 0]


def _message_operators(F: QuadraticArrays, algo: LocalUpdate, be) -> Any:
    """B_i = Q_iA_i = V_i diag(q(m_ij) λ_ij) V_iᵀ, shape (n, d, d), from the stored spectra.

    q is evaluated at s = γ(λ + α) (not at m = 1 − s) so small steps lose no digits.
    """
    s = algo.gamma * (F.eigvals + algo.alpha)
    w = algo.theta.polynomial_s(s, be) * F.eigvals
    return be.einsum("nij,nkj->nik", F.eigvecs * w[:, None, :], F.eigvecs)


def _stepwise_messages(F: QuadraticArrays, x: Any, algo: LocalUpdate, be) -> Any:
    """Algorithm 2 literally, all clients at once: K local proximal gradient steps, Σ θ_k g_k."""
    xk = x + 0 * F.c  # (n, d): every client starts at the broadcast point
    msg = 0 * F.c
    alpha, gamma = algo.alpha, algo.gamma
    for theta_k in algo.theta.weights:
        g = _matvec(F.A, xk - F.c, be) + alpha * (xk - x)
        if theta_k != 0:
            msg = msg + float(theta_k) * g
        xk = xk - gamma * g
    return msg


def _spectral_messages(B: Any, F: QuadraticArrays, x: Any, be) -> Any:
    """q^i = B_i (x − c_i) for all clients: one batched mat-vec."""
    return _matvec(B, x - F.c, be)


def client_pseudo_gradients(
    problem: Any, x: Any, algo: LocalUpdate, *, path: str = "spectral", backend: Any = None
) -> Any:
    """Every client's ClientUpdate message (Algorithm 2, full batch) at the broadcast point ``x``: (n, d).

    ``path="stepwise"`` runs the K(Θ) local steps g_k = A_i(x_k − c_i) + α(x_k − x),
    x_{k+1} = x_k − γ g_k and returns Σ_k θ_k g_k (the reference); ``path="spectral"`` returns
    Q_iA_i(x − c_i) through A_i's eigendecomposition (Theorem 1), O(d²) per client for any K.
    ``problem``: a QuadraticFederation, or the arrays its ``on(backend)`` returns. ``backend`` (name or
    Backend; default: the arrays' backend, else follow ``x``) decides where the computation runs.

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> from fedtheory.algorithms import Theta, ServerOpt, LocalUpdate
    >>> prob = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
    >>> algo = LocalUpdate(Theta([0.5, 0.0, 2.0]), alpha=0.3, gamma=0.07, server=ServerOpt("gd", lr=1.0))
    >>> x = np.linspace(-1, 1, 4)
    >>> a = client_pseudo_gradients(prob, x, algo, path="stepwise")
    >>> b = client_pseudo_gradients(prob, x, algo, path="spectral")
    >>> a.shape, bool(np.allclose(a, b, rtol=0, atol=1e-13))
    ((3, 4), True)
    """
    if path not in MESSAGE_PATHS:
        raise ValueError(f"path must be one of {MESSAGE_PATHS}, got {path!r}")
    if backend is None and isinstance(problem, dict) and "backend" in problem:
        backend = problem["backend"]
    be = resolve_backend(backend, like=x)
    F = prepare_quadratic(problem, be)
    x = be.asarray(x)
    if path == "stepwise":
        return _stepwise_messages(F, x, algo, be)
    return _spectral_messages(_message_operators(F, algo, be), F, x, be)


# --------------------------------------------------------------------------------------------
# history and driver
# --------------------------------------------------------------------------------------------

_ARRAY_FIELDS = (
    "x",
    "dist_surrogate",
    "dist_empirical",
    "loss",
    "grad_norm",
    "comm_rounds",
    "oracle_calls",
    "x_surrogate_star",
    "x_star",
)
#: History's fields computed on request: each group by one function of the run (see run_local_update)
_DERIVED = {
    "x_surrogate_star": "optima",
    "x_star": "optima",
    "dist_surrogate": "optima",
    "dist_empirical": "optima",
    "loss": "loss",
    "grad_norm": "loss",
}


def _to_numpy(a: Any) -> np.ndarray:
    if _is_torch(a):
        return a.detach().cpu().numpy()
    return np.asarray(a)


def _derived(name: str) -> property:
    def get(self: "History") -> Any:
        if name not in self._values:
            self._values.update(self._derive[_DERIVED[name]]())
        return self._values[name]

    get.__name__ = name
    return property(get)


class History:
    """Per-round record of a LocalUpdate run; every per-round array has length rounds + 1 (index 0 = x_0).

    ``x`` (rounds+1, d): server iterates x_t (not Nesterov's look-ahead points y_t);
    ``dist_surrogate``: ‖x_t − x*(α,γ,Θ)‖, distance to the stationary point of f̃ (its minimizer under
    Lemma 1's hypothesis; NaN where ∇²f̃ is singular); ``dist_empirical``: ‖x_t − x*‖, x* = argmin f;
    ``loss``: f(x_t); ``grad_norm``: ‖∇f(x_t)‖; ``comm_rounds``: t; ``oracle_calls``: cumulative local
    gradient evaluations t·n·K(Θ). ``x_surrogate_star`` and ``x_star`` are the two optima (d,).
    The optima, distances, loss and gradient norm are computed when first read (the surrogate optimum needs
    every client's message operator, O(n d³)): a run that only needs its iterates never pays for them.
    Arrays are backend arrays (torch tensors on the run's device) until :meth:`to_numpy`.
    """

    x_surrogate_star = _derived("x_surrogate_star")
    x_star = _derived("x_star")
    dist_surrogate = _derived("dist_surrogate")
    dist_empirical = _derived("dist_empirical")
    loss = _derived("loss")
    grad_norm = _derived("grad_norm")

    def __init__(
        self,
        x: Any,
        comm_rounds: Any,
        oracle_calls: Any,
        algo: Any,
        path: str,
        backend: str = "numpy",
        device: str | None = None,
        *,
        derive: dict | None = None,
        values: dict | None = None,
    ) -> None:
        self.x, self.comm_rounds, self.oracle_calls = x, comm_rounds, oracle_calls
        self.algo, self.path, self.backend, self.device = algo, path, backend, device
        self._derive = derive or {}
        self._values = dict(values or {})

    def __repr__(self) -> str:
        return f"History(rounds={self.rounds}, algo={self.algo!r}, path={self.path!r}, backend={self.backend!r})"

    @property
    def rounds(self) -> int:
        """Number of rounds run (``len(x) − 1``)."""
        return int(self.x.shape[0]) - 1

    def to_numpy(self) -> "History":
        """A copy with every array as a numpy array (detached and moved to the host).

        >>> import numpy as np
        >>> from fedtheory.problems.quadratic import make_quadratic
        >>> from fedtheory.algorithms import Theta, ServerOpt, LocalUpdate, run_local_update
        >>> prob = make_quadratic(2, 2, mu=1.0, L=2.0, seed=0)
        >>> h = run_local_update(prob, LocalUpdate.fedavg(2, 0.1), np.zeros(2), 3).to_numpy()
        >>> type(h.loss).__name__, h.loss.shape, h.comm_rounds.tolist()
        ('ndarray', (4,), [0, 1, 2, 3])
        """
        # still lazy: what is computed already is converted now, the rest when first read
        values = {f: _to_numpy(v) for f, v in self._values.items()}
        derive = {
            group: (lambda fn=fn: {k: _to_numpy(v) for k, v in fn().items()}) for group, fn in self._derive.items()
        }
        return History(
            _to_numpy(self.x),
            _to_numpy(self.comm_rounds),
            _to_numpy(self.oracle_calls),
            self.algo,
            self.path,
            self.backend,
            self.device,
            derive=derive,
            values=values,
        )


def _solve_or_nan(be, H: Any, b: Any) -> Any:
    try:
        return be.solve(H, b)
    except (np.linalg.LinAlgError, RuntimeError):
        return b * float("nan")


def _row_norms(D: Any, be) -> Any:
    return be.sqrt(be.einsum("ti,ti->t", D, D))


def _loss_and_grad_norm(F: QuadraticArrays, X: Any, be, chunk_elems: int = 1 << 22) -> tuple[Any, Any]:
    """f(x_t) = Σ_i p_i ½(x_t − c_i)ᵀA_i(x_t − c_i) and ‖Σ_i p_i A_i(x_t − c_i)‖, from the definition
    (no expanded quadratic form, which would cancel catastrophically near the optimum)."""
    T = int(X.shape[0])
    step = max(1, chunk_elems // max(1, F.n * F.d))
    losses, norms = [], []
    for start in range(0, T, step):
        diff = X[start : start + step, None, :] - F.c[None, :, :]  # (t, n, d)
        Ad = be.einsum("nij,tnj->tni", F.A, diff)
        losses.append(0.5 * be.einsum("n,tni,tni->t", F.p, diff, Ad))
        norms.append(_row_norms(be.einsum("n,tni->ti", F.p, Ad), be))
    if len(losses) == 1:
        return losses[0], norms[0]
    return be.concat(losses), be.concat(norms)


def _is_finite_sum(problem: Any) -> bool:
    """A federation whose clients hold samples (the protocol of :mod:`fedtheory.problems.finite_sum`)."""
    if isinstance(problem, dict):
        problem = problem.get("problem")
    return hasattr(problem, "batched_grads") and hasattr(problem, "counts")


def _finite_sum_messages(arrays: dict, x: Any, algo: LocalUpdate, clients: np.ndarray, batches: Any, be) -> Any:
    """Algorithm 2 on a finite-sum federation, the sampled clients at once: (M, d).

    ``batches``: None (full local loss) or an int array (K, M, B) of each step's mini-batch S_k.
    """
    problem = arrays["problem"]
    X = x + 0 * be.zeros((len(clients), int(x.shape[0])))
    msg = 0 * X
    for k, theta_k in enumerate(algo.theta.weights):
        g = problem.batched_grads(arrays, X, None if batches is None else batches[k], clients=clients)
        g = g + algo.alpha * (X - x)
        if theta_k != 0:
            msg = msg + float(theta_k) * g
        X = X - algo.gamma * g
    return msg


def run_local_update(
    problem: Any,
    algo: Any,
    x0: Any,
    rounds: int,
    *,
    path: str = "auto",
    backend: Any = "numpy",
    device: Any = None,
    batch_size: int | None = None,
    clients_per_round: int | None = None,
    client_sampling: str = "with_replacement",
    seed: Any = None,
) -> History:
    """Run ``rounds`` rounds of LocalUpdate (Algorithms 1–2) from ``x0``.

    ``algo``: a :class:`LocalUpdate`, or a client program with ``client_program = True`` that supplies
    its own client messages under the same server, sampling and mini-batches — MAML
    (:class:`fedtheory.algorithms.maml.MAML`, exact gradients through its K inner steps).

    ``problem``: a :class:`~fedtheory.problems.quadratic.QuadraticFederation` (full-batch clients;
    ``path="spectral"``, O(d²) per client per round for any K, or ``"stepwise"``, the K local steps
    literally) or a :class:`~fedtheory.problems.finite_sum.FiniteSumFederation` (local steps run
    literally, or least squares through its quadratic on the spectral path; ``batch_size`` B draws each
    step's mini-batch S_k without replacement, ``None`` = full local loss). ``path="auto"`` (default) takes
    the cheaper exact path by :func:`fedtheory.methods.choose_path`'s cost model; ``History.path`` says which. ``clients_per_round`` M with ``client_sampling`` (see :class:`ClientSampler`) samples
    I_t each round; ``None`` = every client, weights p. ``seed`` (int or Generator) drives every draw.
    ``backend``/``device``: where every array lives for the whole run (``"torch"`` with
    ``device="cuda"`` keeps tensors on the GPU from start to end; nothing is copied to the host until
    :meth:`History.to_numpy`).

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> from fedtheory.algorithms import Theta, ServerOpt, LocalUpdate, run_local_update
    >>> prob = make_quadratic(5, 4, mu=1.0, L=10.0, seed=2)
    >>> algo = LocalUpdate(Theta.uniform(10**6), alpha=0.0, gamma=0.05, server=ServerOpt("gd", lr=0.1))
    >>> h = run_local_update(prob, algo, np.zeros(4), rounds=5).to_numpy()   # K = 10⁶, exact and instant
    >>> bool(np.all(np.isfinite(h.x))), int(h.oracle_calls[1])
    (True, 5000000)
    >>> from fedtheory.problems.finite_sum import LogisticFederation
    >>> fed = LogisticFederation.random(n=6, m=40, d=3, seed=0)
    >>> h = run_local_update(fed, LocalUpdate.fedavg(5, 0.1), np.zeros(3), 50, batch_size=8,
    ...                      clients_per_round=3, seed=1).to_numpy()
    >>> bool(h.loss[-1] < h.loss[0]), int(h.oracle_calls[-1])          # 50 rounds × 3 clients × 5 steps
    (True, 750)
    """
    if path not in MESSAGE_PATHS + ("auto",):
        raise ValueError(f"path must be one of {MESSAGE_PATHS + ('auto',)}, got {path!r}")
    rounds = check_rounds(rounds)
    program = not isinstance(algo, LocalUpdate)
    if program and not getattr(algo, "client_program", False):
        raise ValueError(f"algo must be a LocalUpdate (or a client program such as MAML), got {type(algo).__name__}")
    sampler = ClientSampler(clients_per_round, client_sampling)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    from fedtheory.backends import get_backend

    be = get_backend(backend, device=device)
    finite_sum = _is_finite_sum(problem)
    # the federation goes onto the backend once, inside simulate; the arrays the derived History fields need
    # (x*, the surrogate optimum, losses) are built on the first request for one
    prepared: dict = {}
    if finite_sum:
        fs = problem["problem"] if isinstance(problem, dict) else problem
        if isinstance(problem, dict):
            prepared["arrays"] = problem
        n, d = fs.n, fs.d
        if batch_size is not None:
            from fedtheory.problems.finite_sum import check_batch_size

            check_batch_size(int(batch_size), fs.counts)  # no draw: the run's generator is untouched
    else:
        if batch_size is not None:
            raise ValueError(
                "batch_size needs clients that hold samples: a QuadraticFederation is full-batch; "
                "use a FiniteSumFederation (e.g. LeastSquaresFederation) for mini-batches"
            )
        if isinstance(problem, (dict, QuadraticArrays)):
            prepared["F"] = prepare_quadratic(problem, be)
            n, d = prepared["F"].n, prepared["F"].d
        else:
            n, d = (int(v) for v in np.shape(problem.A)[:2])
    if sampler.M is not None and sampler.scheme == "without_replacement" and sampler.M > n:
        raise ValueError(f"clients_per_round M={sampler.M} exceeds the n={n} clients (sampling without replacement)")
    x0 = be.asarray(x0)
    if tuple(x0.shape) != (d,):
        raise ValueError(f"x0 must have shape ({d},), got {tuple(x0.shape)}")

    # One driver: the round loop is fedtheory.methods' (LocalUpdate, or the client program with its ServerOpt, as a
    # Method); what is LocalUpdate's own here is the surrogate optimum and the History it reports.
    from fedtheory.methods.library import as_method
    from fedtheory.methods.simulate import simulate

    K = algo.local_steps if program else algo.theta.K
    if finite_sum:
        federation = fs
    elif isinstance(problem, (dict, QuadraticArrays)):
        from fedtheory.problems.quadratic import QuadraticFederation

        F = prepared["F"]
        federation = QuadraticFederation(
            A=be.to_numpy(F.A),
            c=be.to_numpy(F.c),
            p=np.asarray(be.to_numpy(F.p), dtype=np.float64),
            eigvals=be.to_numpy(F.eigvals),
            eigvecs=be.to_numpy(F.eigvecs),
        )
    else:
        federation = problem
    if path == "auto":
        want = "auto"
    else:
        # an explicit "spectral" on clients that hold samples keeps the literal steps (the driver's old contract)
        want = "step" if finite_sum or path == "stepwise" else "spectral"
    run = simulate(
        as_method(algo),
        federation,
        x0,
        rounds,
        path=want,
        backend=be,
        seed=rng,
        batch_size=batch_size,
        clients_per_round=clients_per_round,
        client_sampling=client_sampling,
    )
    X = run.x
    path = "stepwise" if run.path == "step" else "spectral"

    t = np.arange(rounds + 1, dtype=np.int64)
    per_round = (n if sampler.M is None else sampler.M) * K

    def on_backend() -> Any:
        if finite_sum:
            if "arrays" not in prepared:
                prepared["arrays"] = fs.on(be)
            return prepared["arrays"]
        if "F" not in prepared:
            prepared["F"] = prepare_quadratic(problem, be)
        return prepared["F"]

    def optima() -> dict:
        if finite_sum:
            x_tilde, x_star = _finite_sum_optima(fs, algo, be)
        else:
            F = on_backend()
            B = algo.quadratic_operators(F, be) if program else _message_operators(F, algo, be)
            x_tilde = _solve_or_nan(be, be.einsum("n,nij->ij", F.p, B), be.einsum("n,nij,nj->i", F.p, B, F.c))
            x_star = _solve_or_nan(be, be.einsum("n,nij->ij", F.p, F.A), be.einsum("n,nij,nj->i", F.p, F.A, F.c))
        return {
            "x_surrogate_star": x_tilde,
            "x_star": x_star,
            "dist_surrogate": _row_norms(X - x_tilde, be),
            "dist_empirical": _row_norms(X - x_star, be),
        }

    def losses() -> dict:
        loss, grad_norm = (
            fs.loss_and_grad_norm(on_backend(), X) if finite_sum else _loss_and_grad_norm(on_backend(), X, be)
        )
        return {"loss": loss, "grad_norm": grad_norm}

    return History(
        X,
        _int_array(t, be),
        _int_array(t * per_round, be),
        algo,
        path,
        be.name,
        None if getattr(be, "device", None) is None else str(be.device),
        derive={"optima": optima, "loss": losses},
    )


def _finite_sum_optima(fs: Any, algo: Any, be) -> tuple[Any, Any]:
    """(x*(α,γ,Θ), x*) of a finite-sum federation: the surrogate minimizer exists in closed form for
    least squares with strongly convex clients (through its quadratic); NaN otherwise."""
    nan = be.asarray(np.full(fs.d, np.nan))
    try:
        x_star = be.asarray(fs.x_star())
    except ValueError:
        x_star = nan
    x_tilde = nan
    if hasattr(fs, "to_quadratic"):
        try:
            q = fs.to_quadratic()
        except ValueError:
            return x_tilde, x_star
        F = prepare_quadratic(q, be)
        B = (
            algo.quadratic_operators(F, be)
            if getattr(algo, "client_program", False)
            else _message_operators(F, algo, be)
        )
        x_tilde = _solve_or_nan(be, be.einsum("n,nij->ij", F.p, B), be.einsum("n,nij,nj->i", F.p, B, F.c))
    return x_tilde, x_star


def _int_array(a: np.ndarray, be) -> Any:
    """Integer counters on the run's backend/device (exact: int64, not the float dtype)."""
    if be.name == "numpy":
        return a
    import torch

    return torch.as_tensor(a, device=be.device)
