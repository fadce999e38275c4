"""The torch backend: float64 tensors on one device (cpu, or cuda when a GPU is present).

Every operation takes and returns tensors on the backend's device; nothing is copied through numpy
except by :meth:`TorchBackend.asarray` (data entering) and :meth:`TorchBackend.to_numpy` (data leaving),
so a whole run stays on the GPU and autograd can differentiate through it. One exception in where the
arithmetic runs, not in what comes back: on the CPU, a matrix product or einsum of float64 tensors that no
gradient flows through runs on numpy's BLAS through zero-copy views (:func:`_host_blas`), because torch's
float64 mat-vecs are 1.1-2x slower than numpy's at the simulator's shapes (measured, see the function). For the
same reason :func:`fedtheory.methods.simulate.simulate` runs a whole CPU run that no gradient flows through on
numpy and hands back tensors (``fedtheory.methods.simulate.HOST_RUNS``). This module imports torch; :func:`fedtheory.backends.get_backend` imports it only when the torch backend is asked for.

>>> from fedtheory.backends import get_backend
>>> be = get_backend("torch", device="cpu")
>>> x = be.asarray([[3.0, 4.0]])
>>> type(x).__name__, x.dtype, be.norm(x).tolist()
('Tensor', torch.float64, [5.0])
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch

from fedtheory.backends.base import ELEMENTWISE, Backend

__all__ = ["TorchBackend", "resolve_device"]


def _host_blas(*ops: torch.Tensor) -> bool:
    """Whether a CPU product of ``ops`` runs on numpy's BLAS (zero-copy ``Tensor.numpy()`` views in,
    ``torch.from_numpy`` out): every operand a float64 CPU tensor that does not require grad.

    Why: the torch wheel's float64 GEMV/GEMM (MKL here, on an AMD EPYC) is slower than numpy's OpenBLAS at
    the simulator's shapes, single-threaded (2026-11-28, 2-core EPYC, torch 2.13 vs numpy 2.4 / OpenBLAS
    0.3.31): a (5000, 200) mat-vec 509 vs 241 µs, (50 000, 200) 9.6 vs 7.3 ms; 100 batched (1, 50)·(50, 200)
    products 545 vs 464 µs; a (50, 50) Gram column product 321 vs 52 µs. The result is the same float64
    product (numpy's rounding, which the numpy backend reproduces bit for bit), a tensor on the CPU; autograd
    (any operand requiring grad) and every other device keep torch's kernels. Threads: numpy's BLAS follows
    its own limit (``threadpoolctl``, ``OPENBLAS_NUM_THREADS``), not ``torch.set_num_threads``.

    >>> _host_blas(torch.ones(2, dtype=torch.float64)), _host_blas(torch.ones(2, dtype=torch.float64,
    ...                                                                     requires_grad=True))
    (True, False)
    """
    return all(t.dtype == torch.float64 and t.device.type == "cpu" and not t.requires_grad for t in ops)


def resolve_device(device: Any = None) -> str:
    """The device string for ``device`` (None, a string or a ``torch.device``), checked available.

    ``None`` means ``"cuda"`` when a GPU is visible and ``"cpu"`` otherwise. A cuda device asked
    for where none is available raises ValueError (never a silent fall-back to the CPU: timings and
    capability checks would lie).

    >>> resolve_device("cpu"), resolve_device(torch.device("cpu"))
    ('cpu', 'cpu')
    >>> resolve_device("tpu")
    Traceback (most recent call last):
    ...
    ValueError: unknown device 'tpu' for backend 'torch' (choose cpu, cuda or cuda:N)
    """
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise ValueError(f"device must be None, a string or a torch.device, got {device!r}")
    try:
        dev = torch.device(device.strip().lower())
    except (RuntimeError, ValueError):
        dev = None
    if dev is None or dev.type not in ("cpu", "cuda"):
        raise ValueError(f"unknown device {device!r} for backend 'torch' (choose cpu, cuda or cuda:N)")
    if dev.type == "cpu":
        return "cpu"
    if not torch.cuda.is_available():
        raise ValueError(
            f"device {device!r} requested but CUDA is not available "
            f"(torch {torch.__version__}, CUDA build {torch.version.cuda}, no GPU visible)"
        )
    if dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r} requested but only {torch.cuda.device_count()} CUDA device(s) are visible")
    return str(dev)


class TorchBackend(Backend):
    """torch, float64, on ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:N"``).

    >>> be = TorchBackend("cpu")
    >>> A = be.asarray([[[2.0, 0.0], [0.0, 4.0]], [[1.0, 0.0], [0.0, 8.0]]])
    >>> be.solve(A, be.asarray([[2.0, 4.0], [1.0, 8.0]])).tolist()     # one vector per matrix
    [[1.0, 1.0], [1.0, 1.0]]
    >>> be.where(A[0] > 1, 1, 0).dtype                                  # scalars become float64
    torch.float64
    """

    name = "torch"
    dtype = torch.float64

    def __init__(self, device: Any = None) -> None:
        self.device = resolve_device(device)
        self._device = torch.device(self.device)

    def _on_device(self, x: torch.Tensor) -> bool:
        dev = x.device
        if dev.type != self._device.type:
            return False
        if dev.type == "cpu":
            return True
        # "cuda" without an index means the current device
        want = self._device.index if self._device.index is not None else torch.cuda.current_device()
        return dev.index == want

    def _t(self, x: Any) -> torch.Tensor:
        """A tensor as is; anything else converted by :meth:`asarray`."""
        return x if isinstance(x, torch.Tensor) else self.asarray(x)

    # conversion -------------------------------------------------------------------------------
    def asarray(self, x: Any) -> torch.Tensor:
        """``x`` as a float64 tensor on this device (itself when it already is one, graph kept).

        >>> TorchBackend("cpu").asarray(np.arange(2)).tolist()
        [0.0, 1.0]
        """
        if isinstance(x, torch.Tensor):
            if x.dtype == torch.float64 and self._on_device(x):
                return x
            return x.to(device=self._device, dtype=torch.float64)
        if isinstance(x, (float, int, bool)):
            return torch.tensor(float(x), dtype=torch.float64, device=self._device)
        return torch.as_tensor(np.asarray(x, dtype=np.float64), device=self._device)

    def to_numpy(self, x: Any) -> np.ndarray:
        """A numpy copy of ``x`` (detached, on the host).

        >>> TorchBackend("cpu").to_numpy(torch.ones(2, dtype=torch.float64)).tolist()
        [1.0, 1.0]
        """
        if isinstance(x, torch.Tensor):
            return x.detach().cpu().numpy()
        return np.asarray(x)

    def is_array(self, x: Any) -> bool:
        """Whether ``x`` is a torch tensor.

        >>> TorchBackend("cpu").is_array(torch.zeros(1)), TorchBackend("cpu").is_array(np.zeros(1))
        (True, False)
        """
        return isinstance(x, torch.Tensor)

    # construction -----------------------------------------------------------------------------
    def zeros(self, shape: int | Sequence[int]) -> torch.Tensor:
        return torch.zeros(shape, dtype=torch.float64, device=self._device)

    def ones(self, shape: int | Sequence[int]) -> torch.Tensor:
        return torch.ones(shape, dtype=torch.float64, device=self._device)

    def eye(self, d: int) -> torch.Tensor:
        return torch.eye(d, dtype=torch.float64, device=self._device)

    # linear algebra ---------------------------------------------------------------------------
    def einsum(self, spec: str, *ops: Any) -> torch.Tensor:
        ts = [self._t(o) for o in ops]
        if _host_blas(*ts):
            # as the numpy backend plans it: a contraction order only with three or more operands
            return torch.from_numpy(np.asarray(np.einsum(spec, *[t.numpy() for t in ts], optimize=len(ts) > 2)))
        return torch.einsum(spec, *ts)

    def eigh(self, A: Any) -> tuple[torch.Tensor, torch.Tensor]:
        w, V = torch.linalg.eigh(self._t(A))
        return w, V

    def solve(self, A: Any, b: Any) -> torch.Tensor:
        A, b = self._t(A), self._t(b)
        if b.ndim == 1 or b.ndim == A.ndim - 1:
            return torch.linalg.solve(A, b.unsqueeze(-1)).squeeze(-1)
        return torch.linalg.solve(A, b)

    def matmul(self, a: Any, b: Any) -> torch.Tensor:
        a, b = self._t(a), self._t(b)
        if _host_blas(a, b):
            return torch.from_numpy(np.asarray(np.matmul(a.numpy(), b.numpy())))
        return torch.matmul(a, b)

    def host_views(self, *xs: Any) -> list | None:
        """numpy views (no copy) of ``xs`` when every tensor among them is a float64 CPU tensor that does not
        require grad (non-tensors are converted), else None: on a GPU, or with autograd, kernels stay in torch.

        >>> be = TorchBackend("cpu")
        >>> be.host_views(torch.ones(2, dtype=torch.float64))[0].tolist()
        [1.0, 1.0]
        >>> be.host_views(torch.ones(2, dtype=torch.float64, requires_grad=True)) is None
        True
        """
        ts = [x for x in xs if isinstance(x, torch.Tensor)]
        if not _host_blas(*ts):
            return None
        return [x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=np.float64) for x in xs]

    def norm(self, x: Any, axis: int | None = -1) -> torch.Tensor:
        return torch.linalg.vector_norm(self._t(x), dim=axis)

    def stack(self, arrays: Sequence[Any], axis: int = 0) -> torch.Tensor:
        return torch.stack([self.asarray(a) for a in arrays], dim=axis)

    def concat(self, arrays: Sequence[Any], axis: int = 0) -> torch.Tensor:
        return torch.cat([self._t(a) for a in arrays], dim=axis)

    # elementwise ------------------------------------------------------------------------------
    def where(self, cond: Any, a: Any, b: Any) -> torch.Tensor:
        # torch promotes (tensor, Python scalar) to the tensor's dtype without a host→device copy,
        # but (scalar, scalar) to the default float32: wrap only that case.
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
            a = self.asarray(a)
        if not isinstance(cond, torch.Tensor):
            cond = torch.as_tensor(np.asarray(cond, dtype=bool), device=self._device)
        out = torch.where(cond, a, b)
        return out if out.dtype == torch.float64 else out.to(torch.float64)

    def maximum(self, a: Any, b: Any) -> torch.Tensor:
        out = torch.maximum(self._t(a), self._t(b))
        return out if out.dtype == torch.float64 else out.to(torch.float64)


def _on_tensor(op: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[TorchBackend, Any], torch.Tensor]:
    """The backend method ``op(be._t(x))``: the operation on ``x`` as a float64 tensor on the backend's device."""

    def method(self: TorchBackend, x: Any) -> torch.Tensor:
        return op(self._t(x))

    method.__name__ = op.__name__
    return method


# be.sqrt(x) is torch.sqrt of x as a tensor, and so on for every name in the table
for _name in ELEMENTWISE:
    setattr(TorchBackend, _name, _on_tensor(getattr(torch, _name)))
