"""MAML clients (Charles & Konečný, arXiv:2103.05032, Section 3 and Theorem 2), exact through the inner steps.

A MAML client runs K inner (proximal) gradient steps from the broadcast point x on fixed mini-batches
S_1, ..., S_K,

    X_1 = x,   X_{k+1} = X_k − γ(∇f_{S_k}(X_k) + α(X_k − x)),

and sends the gradient of the *adapted* loss m(x) = f_{S_out}(X_{K+1}(x)) with respect to x (an outer
mini-batch S_out, or the full client loss). By the chain rule, with J_k = ∂X_k/∂x,

    J_1 = I,   J_{k+1} = (I − γ(H_k + αI)) J_k + γαI,   ∇m(x) = J_{K+1}ᵀ ∇f_{S_out}(X_{K+1}),

where H_k = ∇²f_{S_k}(X_k); the proximal anchor is x itself, so it contributes the γαI terms. Two exact
implementations of that message:

* ``method="closed_form"`` (numpy): the reverse-mode recursion u ← u − γ(H_k u + αu), acc ← acc + γαu,
  with Hessian-vector products (quadratics: A_i u; least squares: (1/B)Σ a aᵀu + λu; logistic: the
  curvature-weighted analogue), O(K·d·B) per client, all clients at once;
* ``method="autograd"`` (torch): the K inner steps on tensors with ``create_graph=True`` and one
  backward pass — no formula for the Jacobians at all.

Theorem 2: on quadratics with full-batch inner steps and α = 0 the message is ∇f̃(x, 0, γ, Θ_{2K+1}).
For α > 0 ("an analogous result holds") J_{K+1} = p(M) with p(m) = m^K + γα Σ_{j<K} m^j and
M = I − γ(A + αI), so the message is ∇f̃(x, α, γ, Θ') with Θ' the coefficients of p(m)²
(:func:`maml_theta`). With mini-batches the expected message is *not* a LocalUpdate message in general
(E[Π_k M_{S_k}ᵀ Π_k M_{S_k}] ≠ (E M_S)^{2K}); the localupdate claims check both facts.

The driver (:func:`fedtheory.algorithms.local_update.run_local_update`) runs a :class:`MAML` like a
LocalUpdate: same server optimizers, client sampling and mini-batches (K inner batches and, when
``outer="fresh"``, one more outer batch per client per round).

>>> import numpy as np
>>> from fedtheory.problems.quadratic import make_quadratic
>>> from fedtheory.algorithms.local_update import ServerOpt, LocalUpdate, client_pseudo_gradients
>>> prob = make_quadratic(3, 4, mu=1.0, L=10.0, seed=0)
>>> algo = MAML(K=3, gamma=0.05, server=ServerOpt("gd", lr=0.5))
>>> x = np.linspace(-1.0, 1.0, 4)
>>> msg = maml_messages(prob, x, algo)
>>> lu = LocalUpdate(maml_theta(3, 0.05, 0.0), 0.0, 0.05, ServerOpt("gd", lr=0.5))   # Θ_7 (Theorem 2)
>>> bool(np.allclose(msg, client_pseudo_gradients(prob, x, lu), rtol=0, atol=1e-13))
True
"""

from __future__ import annotations

# the docstring examples build torch modules (tests/test_docstrings.py skips them without torch)
__doctest_requires__ = ("torch",)

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedtheory.algorithms.clients import QuadraticArrays, prepare_quadratic
from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, _matvec, _message_operators
from fedtheory.algorithms.theta import Theta, _is_torch

__all__ = ["MAML", "maml_theta", "maml_messages", "OUTER_MODES", "MAML_METHODS"]

OUTER_MODES = ("fresh", "full")
MAML_METHODS = ("closed_form", "autograd")


def maml_theta(K: int, gamma: float, alpha: float = 0.0) -> Theta:
    """Θ' with ∇m_K(x) = ∇f̃(x, α, γ, Θ') for full-batch MAML on a quadratic (Theorem 2 and its α > 0 analogue).

    The coefficients of p(m)², p(m) = m^K + γα Σ_{j=0}^{K−1} m^j: Θ_{2K+1} when α = 0 (or γ = 0:
    then p = 1 + ... collapses to m^K at γα = 0). Non-negative, so it is a valid Θ.

    >>> maml_theta(2, 0.1, 0.0)
    Theta.last(5)
    >>> maml_theta(1, 0.1, 1.0).weights.round(12).tolist()      # (m + 0.1)² = 0.01 + 0.2 m + m²
    [0.01, 0.2, 1.0]
    """
    K = int(K)
    if K < 0:
        raise ValueError(f"MAML needs K >= 0 inner steps, got K={K}")
    ga = float(gamma) * float(alpha)
    if ga == 0.0:
        return Theta.last(2 * K + 1) if K > 0 else Theta.uniform(1)
    p = np.full(K + 1, ga)
    p[K] = 1.0
    return Theta(np.convolve(p, p))


@dataclass(frozen=True)
class MAML:
    """MAML with K inner steps of rate γ (proximal weight α toward the broadcast point) and a ServerOpt.

    ``outer``: the outer gradient ∇f_{S_out}(X_{K+1}) uses a ``"fresh"`` mini-batch (when the run has
    mini-batches; the unbiased estimate of ∇m the paper's clients send) or the ``"full"`` client loss.
    ``method``: ``"closed_form"`` (numpy) or ``"autograd"`` (torch); the driver picks autograd on the
    torch backend. Read by :func:`~fedtheory.algorithms.local_update.run_local_update` through the
    client-program protocol (``client_program = True``).

    >>> MAML(K=2, gamma=0.1, server=ServerOpt("gd", lr=1.0)).surrogate_theta()
    Theta.last(5)
    >>> MAML(K=-1, gamma=0.1, server=ServerOpt("gd", lr=1.0))
    Traceback (most recent call last):
    ...
    ValueError: MAML needs K >= 0 inner steps, got K=-1
    """

    K: int
    gamma: float
    server: ServerOpt
    alpha: float = 0.0
    outer: str = "fresh"

    client_program = True

    def __post_init__(self) -> None:
        if isinstance(self.K, bool) or int(self.K) != self.K or self.K < 0:
            raise ValueError(f"MAML needs K >= 0 inner steps, got K={self.K}")
        object.__setattr__(self, "K", int(self.K))
        for name in ("gamma", "alpha"):
            v = float(getattr(self, name))
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"MAML {name} must be a finite number >= 0, got {v}")
            object.__setattr__(self, name, v)
        if self.outer not in OUTER_MODES:
            raise ValueError(f"MAML outer must be one of {OUTER_MODES}, got {self.outer!r}")
        if not isinstance(self.server, ServerOpt):
            raise ValueError(f"MAML server must be a ServerOpt, got {self.server!r}")

    # the client-program protocol of the driver -------------------------------------------------
    @property
    def local_steps(self) -> int:
        """Gradient evaluations per client per round: K inner steps and one outer gradient."""
        return self.K + 1

    def batches_per_round(self, has_batches: bool) -> int:
        """Mini-batches drawn per client per round: K inner, plus one outer when ``outer="fresh"``."""
        return self.K + (1 if (has_batches and self.outer == "fresh") else 0)

    def surrogate_theta(self) -> Theta:
        """Θ' of :func:`maml_theta`: full-batch MAML on quadratics is LocalUpdate(Θ', α, γ) (Theorem 2)."""
        return maml_theta(self.K, self.gamma, self.alpha)

    def quadratic_operators(self, F: QuadraticArrays, be) -> Any:
        """B_i with message B_i(x − c_i) for full-batch clients (the spectral path; Theorem 2's closed form)."""
        return _message_operators(F, LocalUpdate(self.surrogate_theta(), self.alpha, self.gamma, self.server), be)

    def quadratic_messages(self, F: QuadraticArrays, x: Any, be) -> Any:
        """The message through the K inner steps literally (the stepwise path), all clients at once."""
        if be.name == "torch":
            return _autograd_quadratic(F, x, self, be)
        return _closed_form(
            lambda X: _matvec(F.A, X - F.c, be),
            lambda X, V: _matvec(F.A, V, be),
            lambda X: _matvec(F.A, X - F.c, be),
            x + 0 * F.c,
            self,
            be,
        )

    def finite_sum_messages(self, arrays: dict, x: Any, clients: np.ndarray, batches: Any, be) -> Any:
        """The message of the sampled clients of a finite-sum federation: (M, d)."""
        problem = arrays["problem"]
        X0 = x + 0 * be.zeros((len(clients), int(x.shape[0])))
        inner = [None] * self.K if batches is None else [batches[k] for k in range(self.K)]
        outer = None if (batches is None or self.outer == "full") else batches[self.K]
        if be.name == "torch":
            return _autograd_finite_sum(problem, arrays, X0, clients, inner, outer, self, be)

        def grad_at(k):
            return lambda X: problem.batched_grads(arrays, X, inner[k], clients=clients)

        hvps = [
            (lambda k: lambda X, V: _finite_sum_hvp(problem, arrays, X, V, inner[k], clients))(k) for k in range(self.K)
        ]
        grads = [grad_at(k) for k in range(self.K)]
        outer_grad = lambda X: problem.batched_grads(arrays, X, outer, clients=clients)  # noqa: E731
        return _closed_form_steps(grads, hvps, outer_grad, X0, self, be)


def _closed_form(grad, hvp, outer_grad, X0, maml: MAML, be) -> Any:
    """Same inner gradient and Hessian every step (full-batch clients)."""
    return _closed_form_steps([grad] * maml.K, [hvp] * maml.K, outer_grad, X0, maml, be)


def _closed_form_steps(grads, hvps, outer_grad, X0, maml: MAML, be) -> Any:
    """Inner steps forward (storing X_k), then J_{K+1}ᵀ v by the reverse recursion of the module docstring."""
    g_, a_ = maml.gamma, maml.alpha
    xs = [X0]
    X = X0
    for grad in grads:
        X = X - g_ * (grad(X) + a_ * (X - X0))
        xs.append(X)
    u = outer_grad(X)
    acc = 0 * u
    for k in range(len(grads) - 1, -1, -1):
        acc = acc + (g_ * a_) * u
        u = u - g_ * (hvps[k](xs[k], u) + a_ * u)
    return u + acc


def _finite_sum_hvp(problem, arrays: dict, X: np.ndarray, V: np.ndarray, idx: Any, clients: np.ndarray) -> np.ndarray:
    """(∇²f_S(X_i)) V_i for each sampled client i (numpy): curvature-weighted Σ a aᵀ v over the batch, + λv."""
    a, y, mask, counts = (np.asarray(arrays[k])[clients] for k in ("a", "y", "mask", "counts"))
    if idx is None:
        u = np.einsum("kmd,kd->km", a, X)
        w = problem._curvature(u, y) * mask
        hv = np.einsum("km,kmd->kd", w * np.einsum("kmd,kd->km", a, V), a) / counts[:, None]
    else:
        rows = np.arange(X.shape[0])[:, None]
        ab, yb = a[rows, idx], y[rows, idx]
        u = np.einsum("kbd,kd->kb", ab, X)
        w = problem._curvature(u, yb)
        hv = np.einsum("kb,kbd->kd", w * np.einsum("kbd,kd->kb", ab, V), ab) / idx.shape[1]
    return hv + problem.l2 * V if problem.l2 else hv


# --------------------------------------------------------------------------------------------
# torch autograd through the inner steps
# --------------------------------------------------------------------------------------------


def _autograd_messages(loss_inner, loss_outer, X0_value, maml: MAML):
    """d/dx of loss_outer(X_{K+1}(x)) with the K inner steps taped (create_graph=True); one row per client.

    Rows are independent clients, so the gradient of the summed loss with respect to row i of the
    starting points is client i's message.
    """
    import torch

    X0 = X0_value.detach().clone().requires_grad_(True)
    X = X0
    for k in range(maml.K):
        inner = loss_inner(k, X) + 0.5 * maml.alpha * ((X - X0) ** 2).sum()
        (g,) = torch.autograd.grad(inner, X, create_graph=True)
        X = X - maml.gamma * g
    (msg,) = torch.autograd.grad(loss_outer(X), X0)
    return msg


def _autograd_quadratic(F: QuadraticArrays, x: Any, maml: MAML, be) -> Any:
    def loss(X):
        D = X - F.c
        return 0.5 * (D * _matvec(F.A, D, be)).sum()

    return _autograd_messages(lambda k, X: loss(X), loss, x + 0 * F.c, maml)


def _autograd_finite_sum(problem, arrays: dict, X0, clients, inner, outer, maml: MAML, be) -> Any:
    from fedtheory.problems.finite_sum import _index

    a, y, mask, counts = arrays["a"], arrays["y"], arrays["mask"], arrays["counts"]
    ci = _index(be, clients)
    a, y, mask, counts = a[ci], y[ci], mask[ci], counts[ci]
    rows = _index(be, np.arange(len(clients))[:, None])

    def sample_loss(u, yy):
        # Logistic: softplus(−y u) is smooth, while the value-stable form with max(z, 0) and |z| has a
        # zero second derivative at u = 0 under autograd (the kink of |z|), which would corrupt H_k.
        if getattr(problem, "name", None) == "logistic":
            import torch

            return torch.nn.functional.softplus(-yy * u)
        return problem._sample_loss(be, u, yy)

    def batch_loss(idx, X):
        if idx is None:
            u = be.einsum("kmd,kd->km", a, X)
            per = (sample_loss(u, y) * mask).sum(dim=1) / counts
        else:
            ii = _index(be, idx)
            ab, yb = a[rows, ii], y[rows, ii]
            per = sample_loss(be.einsum("kbd,kd->kb", ab, X), yb).mean(dim=1)
        reg = 0.5 * problem.l2 * (X * X).sum(dim=1) if problem.l2 else 0.0
        return (per + reg).sum()

    return _autograd_messages(lambda k, X: batch_loss(inner[k], X), lambda X: batch_loss(outer, X), X0, maml)


# --------------------------------------------------------------------------------------------
# the public message function
# --------------------------------------------------------------------------------------------


def maml_messages(
    problem: Any,
    x: Any,
    maml: MAML,
    *,
    clients: Any = None,
    inner_batches: Any = None,
    outer_batch: Any = None,
    method: str = "closed_form",
) -> np.ndarray:
    """Every (or each of ``clients``) client's MAML message at the broadcast point ``x``: (k, d), numpy.

    ``problem``: a :class:`~fedtheory.problems.quadratic.QuadraticFederation` (full-batch clients) or a
    :class:`~fedtheory.problems.finite_sum.FiniteSumFederation`; ``inner_batches`` (K, k, B) sample indices of
    S_1..S_K (``None``: full local loss), ``outer_batch`` (k, B) of S_out (``None``: full loss).
    ``method``: ``"closed_form"`` (reverse recursion with Hessian-vector products, numpy) or
    ``"autograd"`` (torch, exact gradients through the taped inner steps; needs torch).

    >>> from fedtheory.problems.finite_sum import LeastSquaresFederation
    >>> fed = LeastSquaresFederation.random(3, 6, 2, seed=0)
    >>> algo = MAML(K=2, gamma=0.1, alpha=0.5, server=ServerOpt("gd", lr=1.0))
    >>> batches = np.zeros((2, 3, 2), dtype=np.int64); batches[1] += 1
    >>> a = maml_messages(fed, np.ones(2), algo, inner_batches=batches)
    >>> b = maml_messages(fed, np.ones(2), algo, inner_batches=batches, method="autograd")
    >>> bool(np.allclose(a, b, rtol=0, atol=1e-13))
    True
    """
    if method not in MAML_METHODS:
        raise ValueError(f"method must be one of {MAML_METHODS}, got {method!r}")
    from fedtheory.backends import get_backend
    from fedtheory.problems.quadratic import QuadraticFederation

    be = get_backend("torch" if method == "autograd" else "numpy")
    if isinstance(problem, QuadraticFederation):
        if inner_batches is not None or outer_batch is not None:
            raise ValueError("a QuadraticFederation has full-batch clients; mini-batches need a FiniteSumFederation")

        F = prepare_quadratic(problem, be)
        if clients is not None:
            idx = np.asarray(clients)
            from fedtheory.problems.finite_sum import _index

            ii = _index(be, idx)
            F = QuadraticArrays(
                A=F.A[ii], c=F.c[ii], p=F.p[ii], eigvals=F.eigvals[ii], eigvecs=F.eigvecs[ii], n=len(idx), d=F.d
            )
        out = maml.quadratic_messages(F, be.asarray(x), be)
    else:
        arrays = problem.on(be)
        clients = np.arange(problem.n) if clients is None else np.asarray(clients)
        K = maml.K
        batches = None
        if inner_batches is not None or outer_batch is not None:
            if inner_batches is None:
                raise ValueError("an outer_batch without inner_batches: give both, or inner_batches alone")
            inner = np.asarray(inner_batches, dtype=np.int64)
            if inner.shape[0] != K:
                raise ValueError(f"inner_batches must hold K={K} batches, got {inner.shape[0]}")
            batches = list(inner) + ([np.asarray(outer_batch, dtype=np.int64)] if outer_batch is not None else [])
            if outer_batch is None:
                maml = MAML(maml.K, maml.gamma, maml.server, maml.alpha, outer="full")
        out = maml.finite_sum_messages(arrays, be.asarray(x), clients, batches, be)
    return out.detach().cpu().numpy() if _is_torch(out) else np.asarray(out)
