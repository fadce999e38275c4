"""Clients that train a torch network: the finite-sum protocol on a flat parameter vector.

:class:`TorchModelFederation` lets the one LocalUpdate driver
(:func:`fedtheory.algorithms.local_update.run_local_update`) run FedAvg, FedProx, local SGD and their
kin on a network: the model's parameters are one flat vector x ∈ R^d, client i's loss is the mean
cross-entropy (or squared error) of its samples, and the gradients of all sampled clients at their own
points are computed at once with ``torch.func`` (``vmap`` over clients of ``grad`` of a
``functional_call``) — no Python loop over clients.

Networks must be free of state that training mutates (no batch norm running statistics).

>>> import numpy as np, torch
>>> from fedtheory.models.networks import mlp
>>> from fedtheory.problems.datasets import load_dataset, partition_iid
>>> X, y = load_dataset("iris")
>>> fed = TorchModelFederation(mlp(4, [8], 3, seed=0), [X[p] for p in partition_iid(150, 3, seed=0)],
...                            [y[p] for p in partition_iid(150, 3, seed=0)])
>>> fed.n, fed.d
(3, 67)
>>> from fedtheory.algorithms.local_update import LocalUpdate, run_local_update
>>> h = run_local_update(fed, LocalUpdate.fedavg(5, 0.1), fed.initial_point(), 20, backend="torch", device="cpu",
...                      batch_size=10, seed=0).to_numpy()
>>> bool(h.loss[-1] < 0.6 * h.loss[0])
True
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

__all__ = ["TorchModelFederation"]

LOSSES = ("cross_entropy", "mse")


class TorchModelFederation:
    """n clients, client i with samples (a_ij, y_ij); f_i(x) = mean_j loss(net_x(a_ij), y_ij) + (λ/2)‖x‖².

    ``module``: a torch network (float64 after construction); its current parameters are the
    :meth:`initial_point`. ``features``: list of (m_i, ...) arrays; ``targets``: list of (m_i,) class
    indices (``cross_entropy``) or (m_i, out) / (m_i,) real targets (``mse``); ``p``: weights (default
    m_i/Σm); ``l2``: λ ≥ 0; ``device``: where the data lives (default cpu; the driver's backend device
    is used when the run is on torch).
    """

    def __init__(
        self,
        module: nn.Module,
        features: Sequence[Any],
        targets: Sequence[Any],
        p: Any = None,
        *,
        loss: str = "cross_entropy",
        l2: float = 0.0,
    ) -> None:
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
        if len(features) == 0 or len(features) != len(targets):
            raise ValueError(
                f"features and targets must list the same number n >= 1 of clients, got {len(features)} and {len(targets)}"
            )
        self.module = module.double()
        self.loss_name = loss
        self.l2 = float(l2)
        if not (np.isfinite(self.l2) and self.l2 >= 0):
            raise ValueError(f"l2 regularization must be >= 0, got {l2}")
        feats = [np.asarray(f, dtype=np.float64) for f in features]
        targs = [np.asarray(t) for t in targets]
        for i, (f, t) in enumerate(zip(feats, targs)):
            if f.shape[0] < 1 or t.shape[0] != f.shape[0]:
                raise ValueError(
                    f"client {i}: needs m_i >= 1 samples and one target per sample, got {f.shape[0]} and {t.shape[0]}"
                )
            if f.shape[1:] != feats[0].shape[1:]:
                raise ValueError(f"client {i}: sample shape {f.shape[1:]} differs from client 0's {feats[0].shape[1:]}")
        self.counts = np.array([f.shape[0] for f in feats], dtype=np.int64)
        n, m_max = len(feats), int(self.counts.max())
        self._a = np.zeros((n, m_max, *feats[0].shape[1:]))
        t_dtype = np.int64 if loss == "cross_entropy" else np.float64
        self._y = np.zeros((n, m_max, *targs[0].shape[1:]), dtype=t_dtype)
        self._mask = np.zeros((n, m_max))
        for i, (f, t) in enumerate(zip(feats, targs)):
            self._a[i, : f.shape[0]] = f
            self._y[i, : f.shape[0]] = t
            self._mask[i, : f.shape[0]] = 1.0
        if p is None:
            p = self.counts / self.counts.sum()
        from fedtheory.problems.quadratic import _check_weights

        self.p = np.asarray(p, dtype=np.float64).ravel()
        _check_weights(self.p, n, type(self).__name__)
        self._names = [name for name, _ in self.module.named_parameters()]
        self._shapes = [tuple(prm.shape) for _, prm in self.module.named_parameters()]
        self._sizes = [int(np.prod(s)) for s in self._shapes]

    # protocol -----------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self._a.shape[0])

    @property
    def d(self) -> int:
        return int(sum(self._sizes))

    def __repr__(self) -> str:
        return f"TorchModelFederation(n={self.n}, d={self.d}, loss={self.loss_name!r}, l2={self.l2})"

    def initial_point(self) -> np.ndarray:
        """The module's current parameters as one flat float64 vector (d,)."""
        return torch.nn.utils.parameters_to_vector(self.module.parameters()).detach().cpu().numpy().astype(np.float64)

    def on(self, backend: Any = "numpy", device: Any = None) -> dict:
        """The data as tensors on the backend's device (the cpu for numpy) and the backend itself."""
        from fedtheory.backends import get_backend

        be = get_backend(backend, device=device)
        dev = torch.device("cpu") if be.name == "numpy" else torch.device(be.device)
        return {
            "a": torch.as_tensor(self._a, device=dev),
            "y": torch.as_tensor(self._y, device=dev),
            "mask": torch.as_tensor(self._mask, device=dev),
            "counts": torch.as_tensor(self.counts.astype(np.float64), device=dev),
            "p": torch.as_tensor(self.p, device=dev),
            "backend": be,
            "problem": self,
            "device": dev,
        }

    def _params(self, flat: torch.Tensor) -> dict:
        out, start = {}, 0
        for name, shape, size in zip(self._names, self._shapes, self._sizes):
            out[name] = flat[start : start + size].reshape(shape)
            start += size
        return out

    def _client_loss(self, flat: torch.Tensor, a: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """Σ_j w_j loss_j (w: per-sample weights, summing to 1 over a client's samples)."""
        out = functional_call(self.module, self._params(flat), (a,))
        if self.loss_name == "cross_entropy":
            per = torch.nn.functional.cross_entropy(out, y, reduction="none")
        else:
            per = 0.5 * ((out.reshape(y.shape) - y) ** 2).reshape(y.shape[0], -1).sum(dim=1)
        return (per * w).sum() + 0.5 * self.l2 * (flat * flat).sum()

    def _to_torch(self, X: Any, dev: torch.device) -> torch.Tensor:
        return X if isinstance(X, torch.Tensor) else torch.as_tensor(np.asarray(X, dtype=np.float64), device=dev)

    def _back(self, be, T: torch.Tensor) -> Any:
        return T.detach().cpu().numpy() if be.name == "numpy" else T

    def batched_grads(self, arrays: dict, X: Any, idx: Any = None, clients: Any = None) -> Any:
        """Each row's client gradient at its own point: (k, d); ``idx`` (k, B) picks mini-batches."""
        be, dev = arrays["backend"], arrays["device"]
        Xt = self._to_torch(X, dev)
        a, y, mask, counts = arrays["a"], arrays["y"], arrays["mask"], arrays["counts"]
        if clients is not None:
            ci = torch.as_tensor(np.asarray(clients), device=dev)
            a, y, mask, counts = a[ci], y[ci], mask[ci], counts[ci]
        if idx is None:
            w = mask / counts[:, None]
        else:
            rows = torch.arange(Xt.shape[0], device=dev)[:, None]
            ii = torch.as_tensor(np.asarray(idx), device=dev)
            a, y = a[rows, ii], y[rows, ii]
            w = torch.full(ii.shape, 1.0 / ii.shape[1], dtype=torch.float64, device=dev)
        g = vmap(grad(self._client_loss))(Xt, a, y, w)
        return self._back(be, g)

    def loss_and_grad_norm(self, arrays: dict, X: Any) -> tuple[Any, Any]:
        """F(x_t) = Σ_i p_i f_i(x_t) and ‖∇F(x_t)‖ for every row of ``X`` (T, d)."""
        be, dev = arrays["backend"], arrays["device"]
        Xt = self._to_torch(X, dev)
        a, y, w, p = arrays["a"], arrays["y"], arrays["mask"] / arrays["counts"][:, None], arrays["p"]

        def global_loss(flat: torch.Tensor) -> torch.Tensor:
            per_client = vmap(self._client_loss, in_dims=(None, 0, 0, 0))(flat, a, y, w)
            return (p * per_client).sum()

        losses, norms = [], []
        for x in Xt.detach():
            x = x.clone().requires_grad_(True)
            value = global_loss(x)
            (g,) = torch.autograd.grad(value, x)
            losses.append(value.detach())
            norms.append(torch.linalg.vector_norm(g))
        return self._back(be, torch.stack(losses)), self._back(be, torch.stack(norms))

    def x_star(self) -> np.ndarray:
        """A network's loss has no unique minimizer to report."""
        raise ValueError("a network's training loss is non-convex: it has no unique minimizer x*")
