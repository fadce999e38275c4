"""The array backend interface: one set of array operations, implemented for numpy and torch.

A numerical driver is written once against :class:`Backend`; :func:`fedtheory.backends.get_backend`
picks the implementation. Every floating array a backend makes is float64 (theory checks compare
against bounds to ~1e-12, which float32 cannot resolve), and on torch every array stays a tensor
on the backend's device: no operation converts through numpy, so autograd and the GPU see a whole run.

>>> from fedtheory.backends import get_backend
>>> be = get_backend("numpy")
>>> be.name, be.device, be.dtype
('numpy', None, dtype('float64'))
>>> w, V = be.eigh(be.asarray([[2.0, 1.0], [1.0, 2.0]]))
>>> be.to_numpy(w).tolist()
[1.0, 3.0]
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Sequence

__all__ = ["Backend", "ELEMENTWISE"]

#: the unary elementwise operations every backend provides: ``be.sqrt(x)`` is numpy.sqrt / torch.sqrt of ``x``, ...
ELEMENTWISE = ("sqrt", "exp", "log", "log1p", "expm1", "abs")


class Backend:
    """Array operations on one library (numpy or torch) and one device.

    Subclasses implement every method below; this base class only fixes the contract and the
    conventions shared by both:

    - ``asarray`` converts to float64 on the backend's device; the other methods expect backend
      arrays (Python scalars are accepted where an elementwise operation meets one);
    - ``eigh`` is batched over leading dimensions and returns eigenvalues in ascending order with
      eigenvectors as columns (``A = V diag(w) Vᵀ``);
    - ``solve(A, b)`` treats ``b`` as a vector, or a batch of vectors, when ``b.ndim == 1`` or
      ``b.ndim == A.ndim - 1`` (shape ``(..., d)``, result ``(..., d)``), and as a matrix
      right-hand side ``(..., d, k)`` otherwise; batch dimensions broadcast.
    - ``norm(x, axis=-1)`` is the Euclidean norm along ``axis`` (``axis=None``: of all entries).

    Two backends are equal when their name and device are.

    >>> from fedtheory.backends import get_backend
    >>> get_backend("numpy") == get_backend("numpy")
    True
    >>> get_backend("numpy")
    Backend(name='numpy', device=None)
    """

    #: ``"numpy"`` or ``"torch"``
    name: str = ""
    #: ``None`` for numpy; ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` for torch
    device: str | None = None
    #: float64 of the library
    dtype: Any = None

    @property
    def xp(self) -> Any:
        """The array-API namespace (``array_api_compat.numpy`` or ``array_api_compat.torch``), imported on first use:
        loading it wraps the whole library (numpy.testing, f2py, ...), about 0.4 s of CPU that no driver needs.

        >>> from fedtheory.backends import get_backend
        >>> get_backend().xp.__name__
        'array_api_compat.numpy'
        """
        return importlib.import_module(f"array_api_compat.{self.name}")

    # identity ---------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Backend):
            return NotImplemented
        return (self.name, self.device) == (other.name, other.device)

    def __hash__(self) -> int:
        return hash((self.name, self.device))

    def __repr__(self) -> str:
        return f"Backend(name={self.name!r}, device={self.device!r})"

    # the contract (each implemented by numpy_backend.NumpyBackend and torch_backend.TorchBackend)
    def asarray(self, x: Any) -> Any:  # pragma: no cover - interface
        """``x`` (list, scalar, numpy array or tensor) as a float64 array on this backend's device."""
        raise NotImplementedError

    def to_numpy(self, x: Any) -> Any:  # pragma: no cover - interface
        """A numpy copy (or view, for numpy) of the backend array ``x``."""
        raise NotImplementedError

    def is_array(self, x: Any) -> bool:  # pragma: no cover - interface
        """Whether ``x`` is this library's array type (numpy ndarray / torch Tensor)."""
        raise NotImplementedError

    def zeros(self, shape: int | Sequence[int]) -> Any:  # pragma: no cover - interface
        """A float64 array of zeros."""
        raise NotImplementedError

    def ones(self, shape: int | Sequence[int]) -> Any:  # pragma: no cover - interface
        """A float64 array of ones."""
        raise NotImplementedError

    def eye(self, d: int) -> Any:  # pragma: no cover - interface
        """The d × d float64 identity."""
        raise NotImplementedError

    def einsum(self, spec: str, *ops: Any) -> Any:  # pragma: no cover - interface
        """Einstein summation, as numpy.einsum / torch.einsum."""
        raise NotImplementedError

    def eigh(self, A: Any) -> tuple[Any, Any]:  # pragma: no cover - interface
        """(eigenvalues ascending, eigenvectors as columns) of symmetric ``A`` (..., d, d)."""
        raise NotImplementedError

    def solve(self, A: Any, b: Any) -> Any:  # pragma: no cover - interface
        """x with A x = b, batched (see the class docstring for vector vs matrix ``b``)."""
        raise NotImplementedError

    def matmul(self, a: Any, b: Any) -> Any:  # pragma: no cover - interface
        """a @ b (batched, broadcasting)."""
        raise NotImplementedError

    def host_views(self, *xs: Any) -> list | None:  # pragma: no cover - interface
        """Zero-copy numpy views of ``xs`` when arithmetic on them may run on numpy without losing anything
        (numpy: the arrays themselves; torch: float64 CPU tensors none of which requires grad), else None.
        A kernel whose many small operations cost more in torch's per-call overhead than in their arithmetic
        runs on the views and hands its result back through :meth:`asarray` (zero-copy on the CPU)."""
        raise NotImplementedError

    def norm(self, x: Any, axis: int | None = -1) -> Any:  # pragma: no cover - interface
        """Euclidean norm along ``axis`` (all entries when ``axis`` is None)."""
        raise NotImplementedError

    def stack(self, arrays: Sequence[Any], axis: int = 0) -> Any:  # pragma: no cover - interface
        """Stack arrays along a new axis."""
        raise NotImplementedError

    def concat(self, arrays: Sequence[Any], axis: int = 0) -> Any:  # pragma: no cover - interface
        """Join arrays along an existing axis."""
        raise NotImplementedError

    def where(self, cond: Any, a: Any, b: Any) -> Any:  # pragma: no cover - interface
        """Elementwise ``a if cond else b`` (scalars allowed for ``a``, ``b``; result float64)."""
        raise NotImplementedError

    def maximum(self, a: Any, b: Any) -> Any:  # pragma: no cover - interface
        """Elementwise maximum (one side may be a scalar)."""
        raise NotImplementedError

    # the unary elementwise operations (ELEMENTWISE), each its library's function of the same name, attached to
    # each backend from that one table (numpy_backend, torch_backend)
    sqrt: Callable[[Any], Any]
    exp: Callable[[Any], Any]
    log: Callable[[Any], Any]
    log1p: Callable[[Any], Any]
    expm1: Callable[[Any], Any]
    abs: Callable[[Any], Any]
