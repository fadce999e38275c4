r"""Running a :class:`~fedtheory.methods.ir.Method`: the batched simulator and the exact spectral path.

One interpreter runs the method's round, compiled once per run into a list of closures
(:func:`_compile_round`: no per-round dispatch on the primitive's type); a *space* says what each primitive does
on the federation at hand. Every client-scope value is one array over the participating clients (no Python loop
over clients).

- :class:`_StepSpace` (``path="step"``): the primitives literally — a gradient is a batched mat-vec (quadratics)
  or :meth:`~fedtheory.problems.finite_sum.FiniteSumFederation.batched_grads` (least squares, logistic, with
  mini-batches), K local steps are K of them (the step size folded into the residuals; from a broadcast server
  point the first is one mat-vec over every client's samples; least squares without a ridge term runs them in
  the clients' sample space, :meth:`~fedtheory.problems.finite_sum.LeastSquaresFederation.sample_space_steps`,
  the same iterates to rounding), an exact prox goes through the client's eigendecomposition (least squares: its
  quadratic), an inexact one runs the named solver's steps.
- :class:`_SpectralSpace` (``path="spectral"``, quadratic clients; a nonlinear server rule is fine): client
  values live in each client's eigenbasis, where every primitive is elementwise in the eigenvalues — K local
  steps from y₀ send q_Θ(r)·g₁ and end at y₀ − γ·Σ_{k<K}(1 − r)^k·g₁ with r = γ(λ + α) (log-space closed forms,
  exact for any K), the exact prox is (v̂ + sλĉ)/(1 + sλ). A round costs O(d²) per client whatever K is: the
  only non-elementwise steps are the rotations V_iᵀx into and V_i ŵ out of a client's basis.

``path="auto"`` picks the cheaper exact path by a flop cost model (:func:`choose_path`).

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> from fedtheory.methods import get, run
>>> q = make_quadratic(4, 3, mu=1.0, L=10.0, seed=0)
>>> a = run(get("scaffold", K=20, gamma=0.05), q, np.zeros(3), 30, path="step")
>>> b = run(get("scaffold", K=20, gamma=0.05), q, np.zeros(3), 30, path="spectral")
>>> bool(np.abs(a.x - b.x).max() < 1e-12), a.x.shape
(True, (31, 3))
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from fedtheory.algorithms.clients import ClientSampler, QuadraticArrays
from fedtheory.algorithms.theta import Theta, _is_torch, geometric_sum
from fedtheory.methods.ir import (
    Aggregate,
    ClientProgram,
    Combine,
    Gradient,
    LocalSteps,
    Method,
    Prox,
    Scalars,
    ServerMap,
    _writes,
    coef_value,
)
from fedtheory.validation import check_rounds

__all__ = ["History", "simulate", "PATHS", "choose_path"]

PATHS = ("auto", "step", "spectral")
#: local gradient evaluations per client per round from which "auto" prefers the spectral closed forms
SPECTRAL_FROM_WORK = 8
#: torch runs on the CPU without autograd compute on numpy and return tensors (:func:`_runs_on_host`); False runs
#: them on torch's own kernels (the tests that check those kernels on a machine without a GPU switch it off)
HOST_RUNS = True


def _to_numpy(a: Any) -> Any:
    if _is_torch(a):
        return a.detach().cpu().numpy()
    return np.asarray(a)


@dataclass
class History:
    """What a run of a method records; arrays have length rounds + 1 (index 0 is the start).

    ``x`` (rounds + 1, d): the server iterate (the method's ``output``; for FedSplit the weighted average x̄ of
    the z_j); ``comm_rounds``: t; ``oracle_calls``: cumulative local gradient evaluations (an exact prox
    counts one); ``state``: the final state (server and client variables); ``scalars``: the final host
    scalars (the two continue a run: ``run(..., state=h.state, scalars=h.scalars)``); ``trace`` (with
    ``simulate(..., trace=True)``): one dict per round, ``clients`` (the participants), ``server`` (the server
    state after the round, numpy), ``scalars`` (after the round) and ``prox`` (each test-stopped local solve by
    its output's name: ``subproblem`` and ``result``, see :mod:`fedtheory.algorithms.local_solvers`). Derived fields are computed on
    request from the federation: ``x_star`` (argmin f), ``dist`` (‖x_t − x*‖), ``loss`` (f(x_t)),
    ``grad_norm`` (‖∇f(x_t)‖).

    >>> import numpy as np
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> from fedtheory.methods import get, run
    >>> h = run(get("fedsplit", s=0.3), make_quadratic(3, 2, mu=1.0, L=4.0, seed=1), np.zeros(2), 60)
    >>> bool(h.dist[-1] < 1e-10), int(h.oracle_calls[-1])
    (True, 180)
    """

    x: Any
    comm_rounds: Any
    oracle_calls: Any
    state: dict
    scalars: dict
    method: Method
    path: str
    backend: str = "numpy"
    device: str | None = None
    federation: Any = field(default=None, repr=False)
    trace: list | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def rounds(self) -> int:
        return int(self.x.shape[0]) - 1

    def to_numpy(self) -> "History":
        """A copy with every array on the host as numpy."""
        return dataclasses.replace(
            self,
            x=_to_numpy(self.x),
            comm_rounds=_to_numpy(self.comm_rounds),
            oracle_calls=_to_numpy(self.oracle_calls),
            state={k: _to_numpy(v) for k, v in self.state.items()},
            _cache={},
        )

    @property
    def x_star(self) -> np.ndarray:
        """argmin of f = Σ p_i f_i (numpy)."""
        if "x_star" not in self._cache:
            self._cache["x_star"] = np.asarray(self.federation.x_star(), dtype=np.float64)
        return self._cache["x_star"]

    @property
    def dist(self) -> np.ndarray:
        """‖x_t − x*‖ per round (numpy)."""
        if "dist" not in self._cache:
            X = _to_numpy(self.x)
            self._cache["dist"] = np.linalg.norm(X - self.x_star[None, :], axis=1)
        return self._cache["dist"]

    dist_empirical = dist

    def _loss_grad(self) -> tuple[np.ndarray, np.ndarray]:
        if "loss" not in self._cache:
            X = _to_numpy(self.x)
            fed = self.federation
            if hasattr(fed, "loss_and_grad_norm"):
                f, g = fed.loss_and_grad_norm(fed.on("numpy"), X)
                self._cache["loss"], self._cache["grad_norm"] = np.asarray(f), np.asarray(g)
            else:
                self._cache["loss"] = np.array([float(fed.loss(x)) for x in X])
                self._cache["grad_norm"] = np.array([float(np.linalg.norm(fed.grad(x))) for x in X])
        return self._cache["loss"], self._cache["grad_norm"]

    @property
    def loss(self) -> np.ndarray:
        """f(x_t) per round (numpy)."""
        return self._loss_grad()[0]

    @property
    def grad_norm(self) -> np.ndarray:
        """‖∇f(x_t)‖ per round (numpy)."""
        return self._loss_grad()[1]


# --------------------------------------------------------------------------------------------
# spaces: what each primitive does on a federation
# --------------------------------------------------------------------------------------------


def _rotate_in(be, V: Any, Z: Any) -> Any:
    """V_iᵀz_i for every row: one batched product (einsum would plan its contraction on every call)."""
    return be.matmul(Z[:, None, :], V)[:, 0, :]


def _index(be, idx: np.ndarray) -> Any:
    if be.name == "numpy":
        return idx
    import torch

    return torch.as_tensor(idx, device=be.device)


class _Space:
    """The federation on one backend, with the per-client scale sc_i (1, or n p_i for the uniform view)."""

    all_rows: Any  # every client's row index, in the form the backend indexes with (set by each space)
    # the step path's sampling state, set only by the spaces that sample (simulate checks with hasattr)
    batch: Any
    rng: Any
    rounds: int

    def __init__(self, fed: Any, method: Method, be) -> None:
        self.fed, self.be = fed, be
        p = np.asarray(fed.p, dtype=np.float64)
        self.n, self.d = int(p.shape[0]), int(self._d())
        if method.weighting == "uniform-view":
            self.p_agg = np.full(self.n, 1.0 / self.n)
            self.scale_host = p * self.n
            self.unit_scale = bool(np.all(self.scale_host == 1.0))
        else:
            self.p_agg, self.scale_host = p, np.ones(self.n)
            self.unit_scale = True
        self.scale = be.asarray(self.scale_host)

    def _d(self) -> int:
        return int(self.fed.d)

    # every space: server value (d,) -> client representation of the rows; client repr -> weighted sum
    def broadcast(self, x: Any, rows: Any) -> Any:
        raise NotImplementedError

    def reduce(self, W: Any, w: Any, rows: Any) -> Any:
        raise NotImplementedError

    def client_init(self, x0: Any) -> Any:
        return self.broadcast(x0, self.all_rows)

    def take(self, arr: Any, rows: Any) -> Any:
        """The sampled clients' rows of a per-client array (no copy under full participation)."""
        return arr if rows is self.all_rows else arr[rows]

    def quadratic_rows(self, arr: Any, rows: Any) -> Any:
        """The sampled quadratic clients as :class:`~fedtheory.algorithms.clients.QuadraticArrays` (client programs
        read it)."""
        return QuadraticArrays(
            A=self.take(arr["A"], rows),
            c=self.take(arr["c"], rows),
            p=self.take(arr["p"], rows),
            eigvals=self.take(arr["eigvals"], rows),
            eigvecs=self.take(arr["eigvecs"], rows),
            n=int(rows.shape[0]),
            d=self.d,
        )

    def client_rows(self, Z: Any) -> Any:
        """Client values (n, d) in original coordinates -> this space's representation."""
        return Z


@functools.lru_cache(maxsize=None)
def _takes_factor(kind: Any) -> bool:
    """Whether ``kind.batched_grads`` takes ``factor`` (FiniteSumFederation's folds it into the residuals): read
    once per class, as inspect.signature costs ~0.1 ms, a sixth of a small run's set-up."""
    return "factor" in inspect.signature(kind.batched_grads).parameters


class _StepSpace(_Space):
    """The primitives literally, in the original coordinates."""

    def __init__(self, fed: Any, method: Method, be) -> None:
        super().__init__(fed, method, be)
        self.finite_sum = hasattr(fed, "batched_grads")
        # FiniteSumFederation folds a factor into its residuals and takes a shared (d,) point; others may not
        kind: Any = type(fed)  # batched_grads is a method of the class
        self._folds_factor = self.finite_sum and _takes_factor(kind)
        self.all_rows = _index(be, np.arange(self.n))
        if self.finite_sum:
            self.arrays = fed.on(be)
            self._quad = None
        else:
            arr = fed.on(be)
            self.arrays = arr
            self.A = arr["A"] * self.scale[:, None, None]
            self.c = arr["c"]
            self._quad = (arr["eigvals"] * self.scale[:, None], arr["eigvecs"], self.c)
        self.batch: Any = None  # the run's mini-batch size (finite sums)
        self.rng: Any = None
        self.rounds = 0  # the run's rounds (sizes one-off set-ups against their saving)
        self._gram: Any = None  # least squares in sample space: A_iA_iᵀ, sc_i/m_i, per-op decisions
        self._residual_weights: Any = None
        self._sample_space_ops: dict = {}
        self._mean_kernels: dict = {}  # id(op) -> (the weights it was built for, message_mean_kernel or None)
        self._c_hat: Any = None  # V_iᵀc_i (the exact prox)

    def broadcast(self, x: Any, rows: Any) -> Any:
        m = int(rows.shape[0])
        if self.be.name != "numpy":
            return x[None, :].expand(m, self.d)
        out = np.empty((m, self.d))  # a plain copy: cheaper than broadcast_to's Python wrapper
        out[...] = x
        return out

    def reduce(self, W: Any, w: Any, rows: Any) -> Any:
        return self.be.matmul(w, W)

    def grad(self, Y: Any, rows: Any, idx_host: np.ndarray, full: bool = False, factor: Any = 1.0) -> Any:
        """factor·sc_i∇f_i(Y_i) for the rows; ``Y`` (m, d), or (d,) when every row is at the same point; ``factor``
        a number (internally also a per-row column, or None for the plain gradient)."""
        be = self.be
        if not self.finite_sum:
            # A_i symmetric: (y − c_i)ᵀA_i as a row (torch's batched GEMM with a one-column result is 3-5x slower)
            g = be.matmul((Y - self.take(self.c, rows))[:, None, :], self.take(self.A, rows))[:, 0, :]
            return g if factor == 1.0 else factor * g
        batches = None
        if self.batch is not None and not full:
            from fedtheory.problems.finite_sum import sample_batches

            batches = sample_batches(self.rng, self.fed.counts, int(self.batch), idx_host)
        if not self.unit_scale:
            factor = factor * self.take(self.scale, rows)[:, None]
        elif factor == 1.0 and len(Y.shape) == 2:
            factor = None  # the plain gradient, as other callers compute it
        # clients=None under full participation: no copy of the clients' data
        clients = None if rows is self.all_rows else idx_host
        if self._folds_factor:
            return self.fed.batched_grads(self.arrays, Y, batches, clients=clients, factor=factor)
        # a federation whose batched_grads takes one point per row and no factor (network clients, interpolants)
        if len(Y.shape) == 1:
            Y = self.broadcast(Y, rows)
        g = self.fed.batched_grads(self.arrays, Y, batches, clients=clients)
        return g if factor is None else factor * g

    def local_steps(
        self,
        op: LocalSteps,
        Y0: Any,
        anchor: Any,
        shift: Any,
        gamma: float,
        alpha: float,
        rows: Any,
        idx_host: np.ndarray,
        weights: tuple | None = None,
        at: Any = None,
    ) -> tuple[Any, Any]:
        """K literal local steps. ``weights``: the message's θ_k (None: no message); ``at``: the server point
        when every row of ``Y0`` is that point (``Y0`` may then be None): the first gradient is one mat-vec.

        Each step's gradient comes scaled by one factor c, folded into the residuals (m values per client, not
        d): c = γ when the point moves (y ← y − c·g), else θ (the message itself); the message is Σ_k θ_k g_k
        accumulated as Σ (θ_k/c)·(c g_k). The point and the message are updated in place (buffers of this call
        only) on numpy, and on torch when no gradient flows through them (with one, torch keeps its autograd
        graph: no in-place writes)."""
        K = op.steps
        if at is not None and not alpha and shift is None and self._sample_space(op):
            return self.fed.sample_space_steps(
                self.arrays, at, K, gamma, weights, op.out is not None, self._residual_weights, self._gram
            )
        moves = op.out is not None or K > 1
        uniform = weights is not None and all(t == weights[0] for t in weights)
        if gamma != 0 and moves:
            c = gamma
        elif uniform and weights is not None and weights[0] != 0:
            c = weights[0]
        else:
            c = 1.0
        inplace = self.be.name == "numpy"
        Y = at if at is not None else Y0
        acc = None  # Σ (θ_k/c)·(c g_k), or Σ c g_k when θ is uniform
        for k in range(K):
            G = self.grad(Y, rows, idx_host, factor=c)
            if alpha:
                G = G + (c * alpha) * (Y - anchor)
            if shift is not None:
                G = G + (shift if c == 1.0 else c * shift)
            if k == 0 and not inplace:
                # torch without autograd (G carries every input's gradient): in place as numpy, since torch's
                # per-operation cost is 2-3x numpy's and a new (n, d) tensor per step adds to it
                inplace = not (G.requires_grad or Y.requires_grad)
            if weights is not None and weights[k] != 0:
                term = G if uniform or weights[k] == c else (weights[k] / c) * G
                if acc is None:
                    acc = term
                elif inplace:
                    acc += term
                else:
                    acc = acc + term
            if gamma != 0 and (op.out is not None or k + 1 < K):
                step = G if c == gamma else (gamma / c) * G
                if inplace and Y is not at and Y is not Y0:
                    Y -= step
                else:
                    Y = Y - step  # the first move: a new array (Y0 is the caller's)
        if len(Y.shape) == 1:  # never moved (γ = 0): the broadcast start itself
            Y = self.broadcast(at, rows) if Y0 is None else Y0
        msg = None
        if weights is not None:
            if acc is None:
                msg = 0 * Y
            elif uniform and weights[0] != c:
                msg = (weights[0] / c) * acc
            else:
                msg = acc
        return Y, msg

    def message_mean(
        self,
        op: LocalSteps,
        at: Any,
        gamma: float,
        alpha: float,
        weights: tuple,
        w: Any,
        rows: Any,
        idx_host: np.ndarray,
    ) -> Any:
        """Σ_i w_i·(client i's message) of ``op``'s local steps from the server point ``at`` (every client):
        in the sample space one flat pass over the data for the sum, else the messages and :meth:`reduce`."""
        if not alpha and self._sample_space(op):
            kernel = self._mean_kernels.get(id(op))
            if kernel is None or kernel[0] is not w:
                kernel = self._mean_kernels[id(op)] = (w, self._message_mean_kernel(op, weights, w))
            mean = None if kernel[1] is None else kernel[1](at, gamma)
            if mean is not None:
                return mean
            return self.fed.sample_space_steps(
                self.arrays, at, op.steps, gamma, weights, False, self._residual_weights, self._gram, reduce=w
            )[1]
        _, msg = self.local_steps(op, None, None, None, gamma, alpha, rows, idx_host, weights, at=at)
        return self.reduce(msg, w, rows)

    def _message_mean_kernel(self, op: LocalSteps, weights: tuple, w: Any) -> Callable | None:
        """The run's kernel for the weighted sum of ``op``'s messages in the sample space (built once: the flat
        data, the weighted residual weights, the scaled Gram matrices), or None when the steps' θ_k differ or the
        data carry a gradient (:meth:`sample_space_steps` runs them). On a GPU the kernel runs on the device's
        tensors; torch on the CPU runs numpy's kernel on zero-copy views (numpy's bits)."""
        if len(set(weights)) != 1:
            return None
        host = self.be.host_views(self.arrays["a"], self.arrays["y"], self.arrays["mask"], self.arrays["counts"], w)
        extra = [v for v in (self._residual_weights, self._gram) if v is not None]
        host_extra = self.be.host_views(*extra) if extra else []
        if host is None or host_extra is None:
            # a GPU: the kernel on the device's tensors (one piece, torch's kernels) unless the data carry a
            # gradient (its S is built in place); autograd through x alone is fine
            if any(bool(getattr(v, "requires_grad", False)) for v in (*self.arrays.values(), w, *extra)):
                return None
            return self.fed.message_mean_kernel(
                self.arrays, op.steps, weights[0], w, self._residual_weights, self._gram, rounds=self.rounds
            )
        views = dict(self.arrays, a=host[0], y=host[1], mask=host[2], counts=host[3])
        it = iter(host_extra)
        coef = None if self._residual_weights is None else next(it)
        gram = None if self._gram is None else next(it)
        kernel = self.fed.message_mean_kernel(views, op.steps, weights[0], host[4], coef, gram, rounds=self.rounds)
        if self.be.name == "numpy":
            return kernel
        be = self.be

        def on_host(x: Any, gamma: float) -> Any:
            # torch on the CPU: numpy's bits, as a tensor; None when a gradient flows through x (torch runs it)
            host = be.host_views(x)
            return None if host is None else be.asarray(kernel(host[0], gamma))

        return on_host

    def _sample_space(self, op: LocalSteps) -> bool:
        """Whether least-squares clients with fewer samples m than dimensions d run ``op``'s full-batch steps
        from a broadcast point in their sample space (:meth:`~fedtheory.problems.finite_sum.LeastSquaresFederation.
        sample_space_steps`): a step costs 2m² flops there, 4md literally; the Gram matrices (2m²d flops per
        client) are built once per run when the saving over the run's rounds pays for them."""
        decided = self._sample_space_ops.get(id(op))
        if decided is not None:
            return decided
        use = self.finite_sum and self.batch is None and hasattr(self.fed, "sample_space_steps") and not self.fed.l2
        if use and op.steps > 1:  # one step is two passes over the data either way
            m, d = (int(v) for v in self.arrays["a"].shape[1:])
            saving = self.rounds * (op.steps - 1) * (4.0 * m * d - 2.0 * m * m)
            use = saving > 2.0 * m * m * d
            if use and self._gram is None:
                self._gram = self.fed.gram(self.arrays)
        if use and self._residual_weights is None:
            self._residual_weights = self.fed.residual_weights(
                self.arrays, None if self.unit_scale else self.scale[:, None]
            )
        self._sample_space_ops[id(op)] = use
        return use

    def _quadratic(self) -> tuple[Any, Any, Any]:
        if self._quad is None:
            if not hasattr(self.fed, "to_quadratic"):
                raise ValueError(
                    f"an exact prox needs quadratic clients; {type(self.fed).__name__} has none: "
                    "give the method a local solver (solver='gd', steps=...)"
                )
            arr = self.fed.to_quadratic().on(self.be)
            self._quad = (arr["eigvals"] * self.scale[:, None], arr["eigvecs"], arr["c"])
        return self._quad

    def prox_exact(self, V_in: Any, s: float, rows: Any) -> Any:
        lam, V, c = self._quadratic()
        be = self.be
        Vr, lr = self.take(V, rows), self.take(lam, rows)
        vh = _rotate_in(be, Vr, V_in)
        if self._c_hat is None:  # the clients' centres in their bases: once per run
            self._c_hat = _rotate_in(be, V, c)
        yh = (vh + s * lr * self.take(self._c_hat, rows)) / (1 + s * lr)
        return be.matmul(Vr, yh[..., None])[..., 0]

    def program_message(self, op: ClientProgram, y: Any, rows: Any, idx_host: np.ndarray) -> Any:
        prog = op.program
        if not self.finite_sum:
            return prog.quadratic_messages(self.quadratic_rows(self.arrays, rows), y, self.be)
        batches = None
        if self.batch is not None:
            from fedtheory.problems.finite_sum import sample_batches

            batches = np.stack(
                [
                    sample_batches(self.rng, self.fed.counts, int(self.batch), idx_host)
                    for _ in range(prog.batches_per_round(True))
                ]
            )
        return prog.finite_sum_messages(self.arrays, y, idx_host, batches, self.be)

    def smoothness(self) -> float:
        if self.finite_sum:
            return float(self.fed.smoothness()) * float(self.scale_host.max())
        return float(self.be.to_numpy(self._quadratic()[0]).max())


class _OracleSpace(_StepSpace):
    """The literal path on :class:`~fedtheory.problems.clients.ClientOracles` (numpy): the DANE family's clients
    f̃_i = n p_i f_i with weights 1/n (the uniform view), the only view in which the oracles serve them; what a
    test-stopped local solver (``ProxSolver("local", ...)``) works on."""

    def __init__(self, oracles: Any, method: Method, be) -> None:
        if be.name != "numpy":
            raise ValueError("client oracles (and test-stopped local solvers) run on the numpy backend")
        if method.weighting != "uniform-view":
            raise ValueError(
                f"method {method.name!r} weighs clients by p; client oracles serve the uniform view "
                "n p_i f_i with weights 1/n (weighting='uniform-view'): run it on the federation"
            )
        self.fed, self.be = oracles, be
        self.n, self.d = int(oracles.n), int(oracles.d)
        self.p_agg = np.full(self.n, 1.0 / self.n)
        self.scale_host = np.ones(self.n)
        self.scale = self.scale_host
        self.unit_scale = True
        self.finite_sum = False
        self.all_rows = np.arange(self.n)
        self.batch: Any = None
        self.rng: Any = None
        self.rounds = 0
        self._gram = self._residual_weights = self._c_hat = None
        self._sample_space_ops: dict = {}
        self._mean_kernels: dict = {}

    def grad(self, Y: Any, rows: Any, idx_host: np.ndarray, full: bool = False, factor: float = 1.0) -> Any:
        if Y.ndim == 1:  # every client at the same point (local steps' first)
            Y = np.broadcast_to(Y, (int(idx_host.shape[0]), self.d))
        g = self.fed.grads(Y, idx_host)
        return g if factor == 1.0 else factor * g

    def prox_exact(self, V_in: Any, s: float, rows: Any) -> Any:
        X = self.fed.prox(V_in, np.zeros_like(V_in), 1.0 / s, self.all_rows[rows])
        if X is None:
            raise ValueError(
                f"an exact prox needs a closed form; {type(self.fed).__name__} has none: give the method a local solver"
            )
        return X

    def program_message(self, op: ClientProgram, y: Any, rows: Any, idx_host: np.ndarray) -> Any:
        raise ValueError("client programs run on a QuadraticFederation or a FiniteSumFederation, not on oracles")

    def smoothness(self) -> float:
        return float(np.max(self.fed.L_i))


class _SpectralSpace(_Space):
    """Client values in each client's eigenbasis: every primitive is elementwise in the eigenvalues."""

    def __init__(self, fed: Any, method: Method, be) -> None:
        super().__init__(fed, method, be)
        arr = fed.on(be)
        self.arrays = arr
        self._programs: dict = {}
        self._coefficients: dict = {}
        self.lam = arr["eigvals"] * self.scale[:, None]
        self.V = arr["eigvecs"]
        self.ch = _rotate_in(be, self.V, arr["c"])
        self.all_rows = _index(be, np.arange(self.n))

    def broadcast(self, x: Any, rows: Any) -> Any:
        # V_iᵀx for every client as one batched product (einsum would plan its path on every call)
        return self.be.matmul(x, self.take(self.V, rows))

    def reduce(self, W: Any, w: Any, rows: Any) -> Any:
        return self.be.matmul(w, self.be.matmul(self.take(self.V, rows), W[..., None])[..., 0])

    def client_rows(self, Z: Any) -> Any:
        return _rotate_in(self.be, self.V, Z)

    def grad(self, Y: Any, rows: Any, idx_host: np.ndarray, full: bool = False) -> Any:
        return self.take(self.lam, rows) * (Y - self.take(self.ch, rows))

    def closed_steps(self, Y0, lam, ch, anchor, shift, gamma, alpha, K, theta, want_point, want_msg, key=None):
        g1 = lam * (Y0 - ch)
        if alpha:
            g1 = g1 + alpha * (Y0 - anchor)
        if shift is not None:
            g1 = g1 + shift
        # the per-eigenvalue coefficients depend on the step's constants only: computed once per run (``key``)
        cached = self._coefficients.get(key) if key is not None else None
        if cached is None:
            r = gamma * (lam + alpha)
            cached = (
                gamma * geometric_sum(r, K, self.be) if want_point else None,
                theta.polynomial_s(r, self.be) if want_msg else None,
            )
            if key is not None:
                self._coefficients[key] = cached
        Y = Y0 - cached[0] * g1 if want_point else None
        msg = cached[1] * g1 if want_msg else None
        return Y, msg

    def local_steps(
        self,
        op: LocalSteps,
        Y0: Any,
        anchor: Any,
        shift: Any,
        gamma: float,
        alpha: float,
        rows: Any,
        idx_host: np.ndarray,
        weights: tuple | None = None,
    ) -> tuple[Any, Any]:
        key = (id(op), gamma, alpha) if rows is self.all_rows else None
        return self.closed_steps(
            Y0,
            self.take(self.lam, rows),
            self.take(self.ch, rows),
            anchor,
            shift,
            gamma,
            alpha,
            op.steps,
            op.weights(),
            op.out is not None,
            op.message is not None,
            key,
        )

    def program_message(self, op: ClientProgram, y: Any, rows: Any, idx_host: np.ndarray) -> Any:
        # B_i = the program's message operator (built once per run), message B_i(y − c_i) in client i's basis
        key = id(op)
        if key not in self._programs:
            self._programs[key] = op.program.quadratic_operators(
                self.quadratic_rows(self.arrays, self.all_rows), self.be
            )
        B = self.take(self._programs[key], rows)
        msg = self.be.matmul(B, (y[None, :] - self.take(self.arrays["c"], rows))[..., None])[..., 0]
        return _rotate_in(self.be, self.take(self.V, rows), msg)

    def prox_exact(self, Vh: Any, s: float, rows: Any) -> Any:
        lam = self.take(self.lam, rows)
        return (Vh + s * lam * self.take(self.ch, rows)) / (1 + s * lam)

    def smoothness(self) -> float:
        return float(self.be.to_numpy(self.lam).max())


# --------------------------------------------------------------------------------------------
# the interpreter
# --------------------------------------------------------------------------------------------


def _is_quadratic(fed: Any) -> bool:
    return hasattr(fed, "eigvecs") and hasattr(fed, "A") and not hasattr(fed, "batched_grads")


def _rotations_per_round(method: Method) -> int:
    """Client-basis rotations a spectral round pays: each server variable read in client scope, each Aggregate,
    and the output when it is a client variable's mean."""
    reads: set[str] = set()
    aggs = 0
    for op in method.round:
        if isinstance(op, Aggregate):
            aggs += 1
        elif not isinstance(op, (Scalars, ServerMap)) and not (
            isinstance(op, Combine) and method.scope(op.out) == "server"
        ):
            reads.update(v for v in op.reads if method.scope(v) == "server")
    return len(reads) + aggs + (1 if method.scope(method.output) == "client" else 0)


def _literal_flops(method: Method, grad_flops: float, d: int, later_step_flops: float | None = None) -> float:
    """Flops of one participant's round on the literal path: its gradients, and an exact prox's two rotations
    through the client's eigenbasis (the literal path computes the exact prox that way too). ``later_step_flops``:
    the cost of a local step after the first when the steps run in the clients' sample space (least squares)."""
    total = 0.0
    for op in method.round:
        if isinstance(op, Prox) and op.solver.kind == "exact":
            total += 4.0 * d * d
        elif isinstance(op, Prox):
            total += op.solver.step_count * grad_flops
        elif isinstance(op, Gradient):
            total += grad_flops
        elif isinstance(op, LocalSteps):
            in_sample_space = (
                later_step_flops is not None
                and op.anchor is None
                and op.shift is None
                and method.scope(op.start) == "server"
            )
            later = (
                min(grad_flops, later_step_flops) if in_sample_space and later_step_flops is not None else grad_flops
            )
            total += grad_flops + (op.steps - 1) * later
        elif isinstance(op, ClientProgram):
            total += int(op.program.local_steps) * grad_flops
    return max(total, grad_flops)


def _summed_round_flops(method: Method, rounds: int, m: int, d: int, grad_flops: float) -> float | None:
    """A least-squares client's flops over the run when FedAvg's round (one local-steps/aggregate pair, equal θ_k,
    no prox term) runs its K steps as one product with their summed operator (``message_mean_kernel``): the Gram
    matrix, the operator's doubling once, then a gradient's two passes and one m × m product a round; None for
    other rounds, or when the literal steps are cheaper."""
    from fedtheory.problems.finite_sum import summed_operator_flops, summed_steps_pay

    ops = list(method.round)
    pairs = [
        op
        for i, op in enumerate(ops)
        if _message_mean_pair(ops, i, method) and len(set(op.weights().weights)) == 1 and op.alpha == 0
    ]
    client_work = [op for op in ops if isinstance(op, (Prox, Gradient, LocalSteps, ClientProgram))]
    if len(pairs) != 1 or client_work != pairs or not summed_steps_pay(pairs[0].steps, rounds, m):
        return None
    return 2.0 * m * m * d + summed_operator_flops(pairs[0].steps, m) + rounds * (grad_flops + 2.0 * m * m)


def _spectral_capable(federation: Any) -> bool:
    return _is_quadratic(federation) or hasattr(federation, "to_quadratic")


def choose_path(
    method: Method,
    federation: Any,
    rounds: int,
    path: str = "auto",
    *,
    batch_size: int | None = None,
    clients_per_round: int | None = None,
) -> str:
    """The path a run takes, by a cost model in flops (both paths are exact).

    The literal path costs rounds × participants × local work × one local gradient (2d² on a quadratic
    client, 4md on a least-squares client with m samples); the spectral path costs its set-up (nothing on a
    :class:`~fedtheory.problems.quadratic.QuadraticFederation`, whose eigendecomposition is stored; the
    moments and eigendecomposition of least-squares clients, n(2md² + 10d³)) plus 2d² per rotation into or out
    of a client's eigenbasis per round. Least squares with no ridge term runs plain local steps from the server
    point in the clients' sample space: a step after the first costs 2m², the Gram matrices n·2m²d once
    (:meth:`~fedtheory.problems.finite_sum.LeastSquaresFederation.sample_space_steps`). The spectral path
    needs quadratic clients (or least squares, through their quadratic) and full local gradients (no
    ``batch_size``); server rules act on server vectors, so a nonlinear one (Adam) does not matter.

    >>> from fedtheory.methods import get
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> q = make_quadratic(2, 2, mu=1.0, L=2.0, seed=0)
    >>> choose_path(get("fedavg", K=100, gamma=0.1), q, 10), choose_path(get("fedavg", K=1, gamma=0.1), q, 10)
    ('spectral', 'step')
    """
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    if method.step_only:
        if path == "spectral":
            raise ValueError(
                f"method {method.name!r} has a test-stopped local solver or a scalar update that reads "
                "the state: it runs on the step path only"
            )
        return "step"
    if path == "spectral":
        if not _spectral_capable(federation):
            raise ValueError(
                f"the spectral path needs quadratic (or least-squares) clients, got {type(federation).__name__}"
            )
        if batch_size is not None:
            raise ValueError("the spectral path uses full local gradients: batch_size must be None")
        return "spectral"
    if path == "step" or batch_size is not None or not _spectral_capable(federation):
        return "step"
    n, d = int(np.asarray(federation.p).shape[0]), int(federation.d)
    part = n if clients_per_round is None else min(int(clients_per_round), n)
    if _is_quadratic(federation):
        grad_flops, setup = 2.0 * d * d, 0.0
        literal = rounds * part * _literal_flops(method, grad_flops, d)
    else:
        m = float(federation.counts.sum()) / n
        grad_flops, setup = 4.0 * m * d, n * (2.0 * m * d * d + 10.0 * d**3)
        literal = rounds * part * _literal_flops(method, grad_flops, d)
        if hasattr(federation, "sample_space_steps") and not federation.l2 and clients_per_round is None:
            # local steps in the sample space: 2m² flops a step after the first, the Gram matrices once
            literal = min(
                literal, n * 2.0 * m * m * d + rounds * n * _literal_flops(method, grad_flops, d, 2.0 * m * m)
            )
            summed = _summed_round_flops(method, rounds, int(round(m)), d, grad_flops)
            if summed is not None:
                literal = min(literal, n * summed)
    spectral = setup + rounds * part * _rotations_per_round(method) * 2.0 * d * d
    return "spectral" if spectral < literal else "step"


def simulate(
    method: Method,
    federation: Any,
    x0: Any,
    rounds: int,
    *,
    path: str = "auto",
    backend: Any = "numpy",
    device: Any = None,
    seed: Any = None,
    batch_size: int | None = None,
    clients_per_round: int | None = None,
    client_sampling: str = "without_replacement",
    state: dict | None = None,
    scalars: dict | None = None,
    trace: bool = False,
    until: Any = None,
) -> History:
    """Run ``rounds`` rounds of ``method`` on ``federation`` from ``x0`` (see :func:`fedtheory.methods.run`).

    ``federation`` may also be :class:`~fedtheory.problems.clients.ClientOracles` (the uniform view; step path,
    numpy); a method with a test-stopped local solver runs on the oracles of the federation it is given.
    ``trace``: record each round in ``History.trace``. ``until``: a function of the output (numpy (d,)) checked
    before each round; the run stops early when it returns True (``History`` then has fewer rounds).

    ``state``: start from this state instead of the method's ``init`` (a dict giving every state variable:
    server ones shape (d,), client ones (n, d), in the original coordinates); ``x0`` is then only the shape.
    ``scalars``: start the host scalars there (with ``state=h.state, scalars=h.scalars`` a run continues
    another exactly, Adam's step count and Acc-S-DANE's A_r, B_r included).
    """
    from fedtheory.backends import get_backend

    if not isinstance(method, Method):
        raise ValueError(
            f"method must be a fedtheory.methods.Method (see fedtheory.methods.get), got {type(method).__name__}"
        )
    rounds = check_rounds(rounds)
    from fedtheory.problems.clients import ClientOracles, client_oracles

    given_oracles = isinstance(federation, ClientOracles)
    if not given_oracles and not (
        hasattr(federation, "p") and (hasattr(federation, "batched_grads") or _is_quadratic(federation))
    ):
        raise ValueError(
            f"federation must be a QuadraticFederation, a FiniteSumFederation or ClientOracles, "
            f"got {type(federation).__name__}"
        )
    if given_oracles and path == "spectral":
        raise ValueError("client oracles run on the step path only")
    be = get_backend(backend, device=device)
    if not given_oracles and _runs_on_host(be, method, federation, x0, state):
        # torch on the CPU with no gradient to follow: the run computes on numpy (the arrays are zero-copy views of
        # one another) and returns tensors; torch's per-operation cost, 2-3x numpy's, no longer adds to every step
        h = simulate(
            method,
            federation,
            _to_numpy(x0),
            rounds,
            path=path,
            seed=seed,
            batch_size=batch_size,
            clients_per_round=clients_per_round,
            client_sampling=client_sampling,
            state=None if state is None else {k: _to_numpy(v) for k, v in state.items()},
            scalars=scalars,
            trace=trace,
            until=until,
        )
        return _as_tensors(h, be)
    chosen = (
        "step"
        if given_oracles
        else choose_path(method, federation, rounds, path, batch_size=batch_size, clients_per_round=clients_per_round)
    )
    space: _Space
    if given_oracles or any(isinstance(op, Prox) and op.solver.kind == "local" for op in method.round):
        space = _OracleSpace(federation if given_oracles else client_oracles(federation), method, be)
    elif chosen == "spectral":
        # least-squares clients run through their quadratic: the same gradients, so the same iterates
        space = _SpectralSpace(federation if _is_quadratic(federation) else federation.to_quadratic(), method, be)
    else:
        space = _StepSpace(federation, method, be)
    n, d = space.n, space.d
    if batch_size is not None:
        if not getattr(space, "finite_sum", False):
            raise ValueError(
                "batch_size needs clients that hold samples (a FiniteSumFederation); "
                "a QuadraticFederation is full-batch"
            )
        from fedtheory.problems.finite_sum import check_batch_size

        check_batch_size(int(batch_size), federation.counts)
        space.batch = int(batch_size)
    sampler = ClientSampler(clients_per_round, client_sampling)
    if sampler.M is not None:
        if not method.sampling:
            raise ValueError(
                f"method {method.name!r} is defined for full participation only "
                f"(clients_per_round must be None, got {clients_per_round})"
            )
        if method.client and sampler.scheme != "without_replacement":
            raise ValueError(
                f"method {method.name!r} keeps client state: sample clients without replacement "
                "(client_sampling='without_replacement')"
            )
        if sampler.scheme == "without_replacement" and sampler.M > n:
            raise ValueError(f"clients_per_round M={sampler.M} exceeds the n={n} clients")
    # the run's draws (mini-batches, sampled clients, a local solver's): a generator only when something draws,
    # as seeding one costs more than a small run's round
    draws = (
        batch_size is not None
        or sampler.M is not None
        or any(isinstance(op, Prox) and op.solver.kind == "local" for op in method.round)
    )
    if not draws and not isinstance(seed, (type(None), np.random.Generator, np.random.BitGenerator)):
        _validate_seed(seed)  # no generator is built, but a bad seed is still the caller's error
    rng = seed if isinstance(seed, np.random.Generator) or not draws else np.random.default_rng(seed)
    if hasattr(space, "rng"):
        space.rng = rng
        space.rounds = rounds
    x0 = be.asarray(x0)
    if tuple(x0.shape) != (d,):
        raise ValueError(f"x0 must have shape ({d},), got {tuple(x0.shape)}")

    # state: server values in original coordinates, client values (n, ·) in the space's representation
    given = state
    state = {}
    if given is not None:
        missing = [v for v in method.server + method.client if v not in given]
        if missing or set(given) - set(method.server + method.client):
            raise ValueError(
                f"state must give exactly the state variables {list(method.server + method.client)} "
                f"of {method.name!r}, got {sorted(given)}"
            )
    for v in method.server:
        if given is None:
            state[v] = method.initial_value(v, x0, be, n)
        else:
            state[v] = be.asarray(given[v])
            if tuple(state[v].shape) != (d,):
                raise ValueError(f"state[{v!r}] must have shape ({d},), got {tuple(state[v].shape)}")
    for v in method.client:
        if given is None:
            state[v] = space.client_init(x0) if method.init[v] == "x0" else be.zeros((n, d))
        else:
            z = be.asarray(given[v])
            if tuple(z.shape) != (n, d):
                raise ValueError(f"state[{v!r}] must have shape ({n}, {d}), got {tuple(z.shape)}")
            state[v] = space.client_rows(z)
    if scalars is not None and set(scalars) != set(method.scalars):
        raise ValueError(
            f"scalars must give exactly the method's scalars {sorted(method.scalars)}, got {sorted(scalars)}"
        )
    scalars = dict(method.scalars if scalars is None else scalars)
    p_all = be.asarray(space.p_agg)

    out_var, out_on_server = method.output, method.scope(method.output) == "server"

    def output(st: dict) -> Any:
        if out_on_server:
            return st[out_var]
        return space.reduce(st[out_var], p_all, space.all_rows)

    xs = [output(state)]
    work = method.local_work()
    calls = [0]
    frame = _Frame()
    ops = _compile_round(method, space, sampled=sampler.M is not None)
    # client state a round writes (the same every round: every client-scope operation runs unconditionally)
    written = [v for v in method.client if any(v in _writes(op) for op in method.round)]
    if sampler.M is None:  # full participation: the same clients and weights every round
        frame.idx_host, frame.rows = np.arange(n), space.all_rows
        frame.w = frame.w_sum = be.asarray(space.p_agg)
    frame.scalars, frame.rng = scalars, rng
    # one dict holds the state and this round's server values: a read before a write sees the previous round's
    # value, a temporary is always written before it is read (Method checks), so nothing needs copying per round
    frame.env = env = state
    rounds_trace: list | None = [] if trace else None
    for r in range(rounds):
        if until is not None and until(_to_numpy(xs[-1])):
            break
        frame.round = r
        if sampler.M is not None:
            idx_host, w_host = sampler.draw(rng, space.p_agg)
            frame.idx_host = idx_host = np.asarray(idx_host)
            frame.rows = _index(be, idx_host)
            frame.w = be.asarray(w_host)
            frame.w_sum = be.asarray(space.p_agg[idx_host])
        frame.local = {}  # client values of this round's sampled rows
        frame.solves = {}  # this round's test-stopped local solves (for the trace)
        for run_op in ops:
            run_op(frame)
        for v in written:
            if sampler.M is None:
                env[v] = frame.local[v]
            else:
                env[v] = _scatter(be, env[v], frame.rows, frame.local[v])
        xs.append(output(env))
        if sampler.M is not None:  # under full participation every round costs work·n (counted after the loop)
            calls.append(calls[-1] + work * int(frame.idx_host.shape[0]))
        if rounds_trace is not None:
            rounds_trace.append(
                {
                    "clients": np.asarray(frame.idx_host),
                    "prox": frame.solves,
                    "server": {v: _to_numpy(env[v]) for v in method.server},
                    "scalars": {k: float(v) for k, v in scalars.items()},
                }
            )
    state = {v: env[v] for v in method.server + method.client}
    X = be.stack(xs)
    t = np.arange(len(xs), dtype=np.int64)
    final = {v: state[v] for v in method.server}
    for v in method.client:
        final[v] = be.matmul(space.V, state[v][..., None])[..., 0] if isinstance(space, _SpectralSpace) else state[v]
    return History(
        x=X,
        comm_rounds=t,
        oracle_calls=(np.asarray(calls, dtype=np.int64) if sampler.M is not None else t * (work * n)),
        state=final,
        scalars={k: float(v) for k, v in scalars.items() if k in method.scalars},
        method=method,
        path=chosen,
        backend=be.name,
        device=None if be.device is None else str(be.device),
        federation=federation,
        trace=rounds_trace,
    )


def _runs_on_host(be: Any, method: Method, federation: Any, x0: Any, state: dict | None) -> bool:
    """Whether a torch run may compute on numpy and return tensors (:func:`simulate`): the CPU, no tensor that
    requires grad among the start and the state, a federation of :mod:`fedtheory.problems` (its numpy arrays and
    gradients are the torch ones', computed by numpy's kernels) and the method's server rules and client programs
    fedtheory's own (they compute through the backend they are handed; a user's may call torch itself).
    A test-stopped local solver runs on client oracles, numpy only, and keeps its error on torch.

    >>> from fedtheory.backends import get_backend
    >>> from fedtheory.methods import get
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> q, m = make_quadratic(2, 2, mu=1.0, L=2.0, seed=0), get("fedavg", K=2, gamma=0.1)
    >>> _runs_on_host(get_backend("numpy"), m, q, np.zeros(2), None)
    False
    """
    if not HOST_RUNS or be.name != "torch" or str(be.device) != "cpu":
        return False
    values = [x0] + ([] if state is None else list(state.values()))
    if any(bool(getattr(v, "requires_grad", False)) for v in values):
        return False
    kind = type(federation)
    for name in ("on", "batched_grads", "_residual", "_sample_loss", "loss_and_grad_norm"):
        fn = getattr(kind, name, None)
        if fn is not None and not getattr(fn, "__module__", "").startswith("fedtheory.problems."):
            return False
    for op in method.round:
        if isinstance(op, Prox) and op.solver.kind == "local":
            return False
        if isinstance(op, ServerMap) and not getattr(op.fn, "__module__", "").startswith("fedtheory."):
            return False
        if isinstance(op, ClientProgram) and not type(op.program).__module__.startswith("fedtheory."):
            return False
    return True


def _as_tensors(h: History, be: Any) -> History:
    """A numpy run's History as the torch backend's: the arrays as CPU tensors sharing their memory."""
    import torch

    def tensor(a: Any) -> Any:
        a = np.asarray(a)
        return torch.from_numpy(a if a.flags.writeable else a.copy())

    return dataclasses.replace(
        h,
        x=tensor(h.x),
        state={k: tensor(v) for k, v in h.state.items()},
        backend=be.name,
        device=str(be.device),
        _cache={},
    )


class _Frame:
    """What one round's compiled operations share: the state and server values (``env``), this round's client
    values of the sampled rows (``local``; a server value read in client scope is cached there as its broadcast),
    the sampled rows and their weights, the host scalars, the run's generator, the round's index and its
    test-stopped local solves (``solves``, for the trace)."""

    __slots__ = ("env", "local", "rows", "idx_host", "w", "w_sum", "scalars", "rng", "round", "solves")
    env: dict[str, Any]
    local: dict[Any, Any]
    rows: Any
    idx_host: np.ndarray
    w: Any
    w_sum: Any
    scalars: dict[str, Any]
    rng: Any
    round: int
    solves: Any


def _validate_seed(seed: Any) -> None:
    """A seed numpy's generators accept (a non-negative int, a sequence of them, a SeedSequence), checked at a
    tenth of the cost of seeding one; else ValueError naming the value.

    >>> _validate_seed(7)
    >>> _validate_seed(np.random.SeedSequence(7))
    >>> _validate_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be a non-negative integer, a sequence of them, a SeedSequence or a numpy Generator, got -1
    """
    if isinstance(seed, np.random.SeedSequence):
        return
    try:
        np.random.SeedSequence(seed)
    except (TypeError, ValueError):
        raise ValueError(
            f"seed must be a non-negative integer, a sequence of them, a SeedSequence or a numpy Generator, got {seed!r}"
        ) from None


def _coef_reader(c: Any) -> Callable[[dict], float]:
    """A coefficient as a function of the scalars; a number is converted once."""
    if isinstance(c, str) or callable(c):
        return lambda scalars: coef_value(c, scalars)
    value = coef_value(c, {})
    return lambda scalars: value


def _compile_round(method: Method, space: Any, sampled: bool) -> list:
    """The round as a flat list of closures ``op(frame)``, built once per run: no per-round dispatch on the
    primitive's type, scope look-ups or coefficient conversions. Which write of a server variable a client-scope
    read sees is known here (the round is a fixed sequence), so each broadcast is cached under that version.

    >>> from fedtheory.methods import get
    >>> from fedtheory.problems.quadratic import make_quadratic
    >>> from fedtheory.backends import get_backend
    >>> m = get("fedavg", K=2, gamma=0.1)
    >>> len(_compile_round(m, _StepSpace(make_quadratic(2, 2, mu=1.0, L=2.0, seed=0), m, get_backend("numpy")), False))
    3
    """
    version: dict = {}
    compiled: list = []

    def reader(var: str) -> Callable[[_Frame], Any]:
        """This position's client-scope value of ``var`` (a server value: its broadcast, cached per version)."""
        if method.scope(var) == "server":
            key = ("@", var, version.get(var, 0))

            def read_broadcast(fr: _Frame) -> Any:
                value = fr.local.get(key)
                if value is None:
                    value = fr.local[key] = space.broadcast(fr.env[var], fr.rows)
                return value

            return read_broadcast

        def read_client(fr: _Frame) -> Any:
            value = fr.local.get(var)
            if value is None:
                value = fr.local[var] = fr.env[var][fr.rows] if sampled else fr.env[var]
            return value

        return read_client

    def wrote(var: str) -> None:
        if method.scope(var) == "server":
            version[var] = version.get(var, 0) + 1

    ops = list(method.round)
    i = 0
    while i < len(ops):
        fused = _compile_message_mean(ops, i, method, space, sampled)
        taken = ops[i : i + 2] if fused is not None else ops[i : i + 1]
        compiled.append(fused if fused is not None else _compile_op(ops[i], method, space, sampled, reader))
        for op in taken:
            for var in _writes(op):
                wrote(var)
        i += len(taken)
    return compiled


def _message_mean_pair(ops: list, i: int, method: Method) -> bool:
    """Whether ``ops[i]`` is local steps from the server point sending only a message and ``ops[i + 1]`` the
    aggregate of that message, read by nothing else (FedAvg's round): the pair a space may run as one sum."""
    if i + 1 >= len(ops):
        return False
    op, agg = ops[i], ops[i + 1]
    if not (
        isinstance(op, LocalSteps)
        and isinstance(agg, Aggregate)
        and op.out is None
        and op.message is not None
        and agg.var == op.message
        and op.anchor is None
        and op.shift is None
        and method.scope(op.start) == "server"
        and op.message not in method.client
        and op.message != method.output
    ):
        return False
    return not any(op.message in other.reads for j, other in enumerate(ops) if j not in (i, i + 1))


def _compile_message_mean(ops: list, i: int, method: Method, space: Any, sampled: bool) -> Callable | None:
    """``ops[i]`` (local steps from the server point sending only a message) and ``ops[i + 1]`` (the aggregate
    of that message, read by nothing else) as one closure when the space can return the weighted sum of the
    messages directly (least squares in the sample space: one flat pass A_flatᵀ(w·r) over every client's samples
    instead of the n messages and their weighted sum), else None. FedAvg's round at K = 1 is then gradient
    descent on the average: one mat-vec pair over all data."""
    if sampled or not isinstance(space, _StepSpace) or isinstance(space, _OracleSpace):
        return None
    if not (_message_mean_pair(ops, i, method) and hasattr(space.fed, "sample_space_steps")):
        return None
    op, agg = ops[i], ops[i + 1]
    gamma, alpha = _coef_reader(op.gamma), _coef_reader(op.alpha)
    weights = tuple(float(t) for t in op.weights().weights)
    start, out, mean = op.start, agg.out, agg.mode == "mean"

    def local_steps_message_mean(fr: _Frame) -> None:
        w = fr.w if mean else fr.w_sum
        fr.env[out] = space.message_mean(
            op, fr.env[start], gamma(fr.scalars), alpha(fr.scalars), weights, w, fr.rows, fr.idx_host
        )

    return local_steps_message_mean


def _linear_combination(values: list, coefs: list) -> Any:
    # Σ c·v in the order given (a coefficient 1 multiplies nothing: the same bits)
    acc = None
    for v, c in zip(values, coefs):
        term = v if c == 1.0 else c * v
        acc = term if acc is None else acc + term
    return acc


def _compile_op(op: Any, method: Method, space: Any, sampled: bool, reader: Callable) -> Callable[[_Frame], None]:
    if isinstance(op, Combine):
        coefs = [_coef_reader(c) for _, c in op.terms]
        constant = all(not (isinstance(c, str) or callable(c)) for _, c in op.terms)
        fixed = [f({}) for f in coefs] if constant else None
        out = op.out
        if method.scope(out) == "client":
            reads = [reader(v) for v, _ in op.terms]

            def combine_client(fr: _Frame) -> None:
                cs = fixed if fixed is not None else [f(fr.scalars) for f in coefs]
                fr.local[out] = _linear_combination([r(fr) for r in reads], cs)

            return combine_client
        names = [v for v, _ in op.terms]

        def combine_server(fr: _Frame) -> None:
            cs = fixed if fixed is not None else [f(fr.scalars) for f in coefs]
            fr.env[out] = _linear_combination([fr.env[v] for v in names], cs)

        return combine_server
    if isinstance(op, Gradient):
        at, out, full = reader(op.at), op.out, op.full

        def gradient(fr: _Frame) -> None:
            fr.local[out] = space.grad(at(fr), fr.rows, fr.idx_host, full)

        return gradient
    if isinstance(op, LocalSteps):
        gamma, alpha = _coef_reader(op.gamma), _coef_reader(op.alpha)
        literal = isinstance(space, _StepSpace)

        def vector_or_rows(var: str | None) -> Callable[[_Frame], Any] | None:
            # on the literal path a server value enters the local steps as its (d,) vector, which broadcasts
            # against the rows: no (m, d) copy
            if var is None:
                return None
            if literal and method.scope(var) == "server":
                return lambda fr: fr.env[var]
            return reader(var)

        anchor, shift, start = vector_or_rows(op.anchor), vector_or_rows(op.shift), reader(op.start)
        # the literal path's θ_k as host floats (the spectral path reads Θ itself: K may be 10⁶ there)
        weights = tuple(float(t) for t in op.weights().weights) if op.message is not None and literal else None
        # every client starts at the same server point: the literal path takes its first gradient as one mat-vec
        shared = literal and not sampled and method.scope(op.start) == "server"
        start_name = op.start

        def local_steps(fr: _Frame) -> None:
            a = anchor(fr) if anchor is not None else None
            s = shift(fr) if shift is not None else None
            if shared:
                Y, msg = space.local_steps(
                    op,
                    None,
                    a,
                    s,
                    gamma(fr.scalars),
                    alpha(fr.scalars),
                    fr.rows,
                    fr.idx_host,
                    weights,
                    at=fr.env[start_name],
                )
            else:
                Y, msg = space.local_steps(
                    op, start(fr), a, s, gamma(fr.scalars), alpha(fr.scalars), fr.rows, fr.idx_host, weights
                )
            if op.out is not None:
                fr.local[op.out] = Y
            if op.message is not None:
                fr.local[op.message] = msg

        return local_steps
    if isinstance(op, Prox):
        step, centre = _coef_reader(op.step), reader(op.center)
        linear = reader(op.linear) if op.linear is not None else None
        start = reader(op.start) if op.start is not None else centre
        out = op.out
        if op.solver.kind == "local":

            def prox_local(fr: _Frame) -> None:
                fr.local[out], fr.solves[out] = _local_prox(
                    space,
                    op.solver,
                    centre(fr),
                    linear(fr) if linear is not None else None,
                    step(fr.scalars),
                    fr.idx_host,
                    fr.round,
                    fr.rng,
                )

            return prox_local

        def shifted(fr: _Frame, s: float) -> Any:
            # prox_{s f_i}(centre + s ℓ_i): the linear term moves the centre (a cold start stays at the centre)
            return centre(fr) if linear is None else centre(fr) + s * linear(fr)

        if op.solver.kind == "exact":

            def prox_exact(fr: _Frame) -> None:
                s = step(fr.scalars)
                fr.local[out] = space.prox_exact(shifted(fr, s), s, fr.rows)

            return prox_exact
        smoothness: list = []  # the clients' L, computed on first use

        def prox_inexact(fr: _Frame) -> None:
            s = step(fr.scalars)
            if op.solver.step_size is None:
                if not smoothness:
                    smoothness.append(space.smoothness())
                eta = 1.0 / (s * smoothness[0] + 1.0)
            else:
                eta = float(op.solver.step_size)
            # gradient descent on s f_i(y) + ½‖y − v‖²: local steps with f scaled by s, α = 1, anchor v
            fr.local[out] = _inexact_prox(
                space, start(fr), shifted(fr, s), s, eta, op.solver.step_count, fr.rows, fr.idx_host
            )

        return prox_inexact
    if isinstance(op, Aggregate):
        var, out, mean = reader(op.var), op.out, op.mode == "mean"

        def aggregate(fr: _Frame) -> None:
            fr.env[out] = space.reduce(var(fr), fr.w if mean else fr.w_sum, fr.rows)

        return aggregate
    if isinstance(op, ClientProgram):
        at, out = op.at, op.out

        def client_program(fr: _Frame) -> None:
            fr.local[out] = space.program_message(op, fr.env[at], fr.rows, fr.idx_host)

        return client_program
    if isinstance(op, Scalars):
        if op.adaptive:  # host arrays of what the update reads
            reads = [(v, method.scope(v) == "server", reader(v)) for v in op.reads]

            def update_scalars_adaptive(fr: _Frame) -> None:
                values = {v: _to_numpy(fr.env[v] if on_server else read(fr)) for v, on_server, read in reads}
                fr.scalars.update(op.fn(fr.scalars, values))

            return update_scalars_adaptive

        def update_scalars(fr: _Frame) -> None:
            fr.scalars.update(op.fn(fr.scalars))

        return update_scalars
    if isinstance(op, ServerMap):

        def server_map(fr: _Frame) -> None:
            outs = op.fn(space.be, fr.scalars, *[fr.env[v] for v in op.inputs])
            for name, val in zip(op.outs, outs):
                fr.env[name] = val

        return server_map
    raise ValueError(f"unknown operation {type(op).__name__}")  # Method's validation lets none through


def _inexact_prox(
    space: Any, start: Any, centre: Any, s: float, eta: float, steps: int, rows: Any, idx_host: np.ndarray
) -> Any:
    if isinstance(space, _SpectralSpace):
        Y, _ = space.closed_steps(
            start,
            s * space.take(space.lam, rows),
            space.take(space.ch, rows),
            centre,
            None,
            eta,
            1.0,
            steps,
            Theta.uniform(steps),
            True,
            False,
        )
        return Y
    Y = start
    for _ in range(steps):
        Y = Y - eta * (s * space.grad(Y, rows, idx_host) + (Y - centre))
    return Y


def _local_prox(
    space: Any, solver: Any, centre: Any, linear: Any, s: float, idx_host: np.ndarray, r: int, rng: Any
) -> tuple[Any, dict]:
    """A test-stopped local solve of F_i(y) = f̃_i(y) − ⟨ℓ_i, y⟩ + λ/2‖y − c_i‖², λ = 1/s (0 for s = ∞), by the
    solver of ``ProxSolver("local", ...)`` on the clients' oracles: its point and its record for the trace."""
    from fedtheory.algorithms.local_solvers import Subproblem

    lam = 0.0 if s == np.inf else 1.0 / s
    lin = np.zeros_like(centre) if linear is None else linear
    sub = Subproblem(space.fed, idx_host, centre, lin, lam, r=r, rng=rng)
    res = solver.local.solve(sub, solver.test)
    return res.X, {"subproblem": sub, "result": res}


def _scatter(be, full: Any, rows: Any, values: Any) -> Any:
    out = full.copy() if be.name == "numpy" else full.clone()
    out[rows] = values
    return out
