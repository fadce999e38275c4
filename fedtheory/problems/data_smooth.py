r"""Losses smooth in the data: f(x; θ) with gradients batched over data samples *and* parameters.

FedLRGD (Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*, Algorithm 1)
needs the per-sample gradients :math:`\nabla_\theta f(x^{(j)};\vartheta^{(k)})` on a grid of data
samples × parameter values (the matrices :math:`G^{(i)}` of eq. (7)). A :class:`DataSmoothLoss`
provides exactly that, on numpy or torch (one batched array operation, no Python loops), with the
constants of Section II-B where they are known in closed form:

* :class:`RidgeLoss`: :math:`f((a,y);\theta)=\tfrac12(a^\top\theta-y)^2+\tfrac\lambda2\|\theta\|^2`
  (linear regression, ℓ² regularized). Each partial derivative is a polynomial of degree 2 in the
  data, so its gradient kernel has exact rank ≤ p + 1 (FedLRGD is then exact with r = p + 1).
* :class:`SoftLogisticLoss`: Appendix A's
  :math:`f_{\mathsf{ent}}((a,y);\theta)=y\log(1+e^{-\theta^\top a})+(1-y)\log(1+e^{\theta^\top a})+\tfrac\mu2\|\theta\|^2`
  with soft labels y ∈ [0, 1] (with hard labels it is :class:`~fedtheory.problems.finite_sum.LogisticFederation`'s
  loss with labels 2y − 1 and l2 = μ).

A data sample is one row x = (a, y) ∈ R^{p+1}. ``to_federation`` turns per-client samples into the
finite-sum federation on which the one LocalUpdate driver runs FedAve.

>>> import numpy as np
>>> loss = RidgeLoss(l2=0.1)
>>> X = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]])          # rows (a1, a2, y)
>>> loss.grads(X, np.zeros((1, 2))).shape                        # (samples, parameters, p)
(2, 1, 2)
>>> loss.grads(X, np.zeros((1, 2)))[:, 0].tolist()
[[-2.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedtheory.problems.finite_sum import LeastSquaresFederation, LogisticFederation

__all__ = ["DataSmoothLoss", "RidgeLoss", "SoftLogisticLoss"]


def _backend(be: Any):
    from fedtheory.backends import get_backend

    return be if hasattr(be, "einsum") else get_backend(be or "numpy")


class DataSmoothLoss:
    """Per-sample loss f(x; θ), x = (a, y) ∈ R^{p+1}, θ ∈ R^p.

    Subclasses define :meth:`_coef` (∇_θ f = c(aᵀθ, y)·a + reg·θ) and :meth:`_value`.
    """

    reg: float = 0.0

    def _coef(self, be, u: Any, y: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _value(self, be, u: Any, y: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _curvature(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _set_regularization(self, value: Any, name: str) -> None:
        """``reg`` from the subclass's own parameter ``name``, which must be finite and >= 0."""
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be >= 0, got {value!r}")
        self.reg = float(value)

    @staticmethod
    def split(X: Any) -> tuple[Any, Any]:
        """(features a (n, p), targets y (n,)) of data rows x = (a, y)."""
        return X[:, :-1], X[:, -1]

    def grads(self, X: Any, thetas: Any, backend: Any = None) -> Any:
        r"""(n, k, p): :math:`\nabla_\theta f(x^{(j)};\vartheta^{(k)})` for every data row j and parameter k.

        ``X`` (n, p+1), ``thetas`` (k, p), on the backend of ``backend`` (default numpy).
        """
        be = _backend(backend)
        X, thetas = be.asarray(X), be.asarray(thetas)
        a, y = self.split(X)
        u = be.einsum("np,kp->nk", a, thetas)
        c = self._coef(be, u, y[:, None])
        g = be.einsum("nk,np->nkp", c, a)
        return g + self.reg * thetas[None, :, :] if self.reg else g

    def losses(self, X: Any, theta: Any) -> np.ndarray:
        """f(x_j; θ) for every row (numpy)."""
        from fedtheory.backends import get_backend

        be = get_backend("numpy")
        X, theta = np.asarray(X, dtype=np.float64), np.asarray(theta, dtype=np.float64)
        a, y = self.split(X)
        return self._value(be, a @ theta, y) + 0.5 * self.reg * float(theta @ theta)

    def objective(self, X: Any, theta: Any) -> float:
        """F(θ) = (1/n) Σ_j f(x_j; θ)."""
        return float(np.mean(self.losses(X, theta)))

    def gradient(self, X: Any, theta: Any) -> np.ndarray:
        """∇F(θ) (numpy)."""
        return np.asarray(self.grads(np.asarray(X, dtype=np.float64), np.asarray(theta, dtype=np.float64)[None]))[
            :, 0
        ].mean(axis=0)

    def hessian(self, X: Any, theta: Any) -> np.ndarray:
        """∇²F(θ) (numpy)."""
        a, y = self.split(np.asarray(X, dtype=np.float64))
        w = self._curvature(a @ np.asarray(theta, dtype=np.float64), y) / a.shape[0]
        return np.einsum("n,np,nq->pq", w, a, a) + self.reg * np.eye(a.shape[1])

    def minimizer(self, X: Any, tol: float = 1e-13) -> np.ndarray:
        """argmin F by Newton's method with backtracking (F is strongly convex when reg > 0)."""
        X = np.asarray(X, dtype=np.float64)
        theta = np.zeros(X.shape[1] - 1)
        for _ in range(200):
            g = self.gradient(X, theta)
            if np.linalg.norm(g) <= tol * (1 + np.linalg.norm(theta)):
                break
            step = np.linalg.solve(self.hessian(X, theta), g)
            t, f0 = 1.0, self.objective(X, theta)
            while self.objective(X, theta - t * step) > f0 - 0.25 * t * float(g @ step) and t > 1e-12:
                t *= 0.5
            theta = theta - t * step
        return theta

    def smoothness(self, X: Any) -> float:
        """L1: a common Lipschitz constant of ∇_θ f(x; ·) over the rows of X (max per-sample curvature)."""
        a, _ = self.split(np.asarray(X, dtype=np.float64))
        return float(self._max_curvature * np.max(np.sum(a * a, axis=1)) + self.reg)

    _max_curvature = 1.0


@dataclass
class RidgeLoss(DataSmoothLoss):
    r""":math:`f((a,y);\theta)=\tfrac12(a^\top\theta-y)^2+\tfrac{\lambda}2\|\theta\|^2` (λ = ``l2``).

    Per sample: μ = λ-strongly convex (λ > 0), L1 = ‖a‖² + λ smooth.

    >>> RidgeLoss(l2=0.5).smoothness(np.array([[1.0, 1.0, 0.0]]))
    2.5
    """

    l2: float = 0.0

    def __post_init__(self) -> None:
        self._set_regularization(self.l2, "ridge l2")

    # the per-sample loss ½(u − y)² of u = aᵀθ is least squares' (so to_federation's F agrees): one definition
    _coef = LeastSquaresFederation._residual
    _value = LeastSquaresFederation._sample_loss
    _curvature = LeastSquaresFederation._curvature

    def to_federation(self, client_rows: list) -> Any:
        """The :class:`~fedtheory.problems.finite_sum.LeastSquaresFederation` of these clients' rows
        (same per-sample loss, so F and every gradient agree)."""
        feats = [np.asarray(r, dtype=np.float64)[:, :-1] for r in client_rows]
        targs = [np.asarray(r, dtype=np.float64)[:, -1] for r in client_rows]
        return LeastSquaresFederation(feats, targs, l2=self.reg)


@dataclass
class SoftLogisticLoss(DataSmoothLoss):
    r"""Appendix A's ℓ²-regularized cross-entropy with soft labels y ∈ [0, 1] (μ = ``mu``).

    :math:`\nabla_\theta f=(\sigma(\theta^\top a)-y)a+\mu\theta`; per sample μ-strongly convex and
    :math:`(\|a\|^2/4+\mu)`-smooth (Appendix A states the looser :math:`L_1=(d-1)/2+\mu` for
    a ∈ [0, 1]^{d−1}).

    >>> loss = SoftLogisticLoss(mu=0.1)
    >>> g = loss.grads(np.array([[1.0, 0.5]]), np.array([[0.0]]))
    >>> float(g[0, 0, 0])          # (σ(0) − 0.5)·1 + 0.1·0
    0.0
    """

    mu: float = 0.0

    def __post_init__(self) -> None:
        self._set_regularization(self.mu, "logistic mu")

    _max_curvature = 0.25

    def _coef(self, be, u, y):
        e = be.exp(-be.abs(u))
        sig = be.where(u >= 0, 1 / (1 + e), e / (1 + e))
        return sig - y

    def _value(self, be, u, y):
        # y log(1 + e^{−u}) + (1 − y) log(1 + e^{u}), each softplus written without overflow
        sp_pos = np.maximum(u, 0) + np.log1p(np.exp(-np.abs(u)))  # log(1 + e^{u})
        return y * (sp_pos - u) + (1 - y) * sp_pos

    # σ(u)(1 − σ(u)), whatever the label: the hard-label logistic loss's curvature in u = aᵀθ
    _curvature = LogisticFederation._curvature

    def to_federation(self, client_rows: list) -> Any:
        """The :class:`~fedtheory.problems.finite_sum.LogisticFederation` of these clients' rows (hard
        labels y ∈ {0, 1} only: it uses labels 2y − 1 and l2 = μ, the same loss)."""
        rows = [np.asarray(r, dtype=np.float64) for r in client_rows]
        if not all(np.all(np.isin(r[:, -1], (0.0, 1.0))) for r in rows):
            raise ValueError(
                "LogisticFederation needs hard labels y in {0, 1}; soft labels have no finite-sum federation here"
            )
        return LogisticFederation([r[:, :-1] for r in rows], [2 * r[:, -1] - 1 for r in rows], l2=self.reg)
