"""The numpy backend (the default): float64 arrays on the CPU.

>>> from fedtheory.backends.numpy_backend import NumpyBackend
>>> be = NumpyBackend()
>>> be.solve(be.asarray([[2.0, 0.0], [0.0, 4.0]]), be.asarray([1.0, 1.0])).tolist()
[0.5, 0.25]
>>> be.norm(be.asarray([[3.0, 4.0], [5.0, 12.0]])).tolist()
[5.0, 13.0]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from fedtheory.backends.base import ELEMENTWISE, Backend

__all__ = ["NumpyBackend"]


def _f64(x: Any) -> np.ndarray:
    a = np.asarray(x)
    return a if a.dtype == np.float64 else a.astype(np.float64)


class NumpyBackend(Backend):
    """numpy, float64, CPU (``device`` is ``None``).

    >>> be = NumpyBackend()
    >>> w, V = be.eigh(be.asarray([[[1.0, 0.0], [0.0, -1.0]], [[0.0, 1.0], [1.0, 0.0]]]))
    >>> w.tolist()                                   # batched, ascending
    [[-1.0, 1.0], [-1.0, 1.0]]
    >>> be.where(be.asarray([1.0, -1.0]) > 0, 1, 0).tolist()
    [1.0, 0.0]
    """

    name = "numpy"
    device = None
    dtype = np.dtype(np.float64)

    # conversion -------------------------------------------------------------------------------
    def asarray(self, x: Any) -> np.ndarray:
        """``x`` as a float64 numpy array (no copy when it already is one).

        A torch tensor is detached and copied to the host: this is the boundary where data
        enters the numpy backend, not an operation inside a run.

        >>> NumpyBackend().asarray([1, 2]).dtype
        dtype('float64')
        """
        if type(x).__module__.split(".", 1)[0] == "torch":
            x = x.detach().cpu().numpy()
        return np.asarray(x, dtype=np.float64)

    def to_numpy(self, x: Any) -> np.ndarray:
        """``x`` as a numpy array (itself when it already is one).

        >>> NumpyBackend().to_numpy(2.0).tolist()
        2.0
        """
        return np.asarray(x)

    def is_array(self, x: Any) -> bool:
        """Whether ``x`` is a numpy ndarray.

        >>> NumpyBackend().is_array(np.zeros(2)), NumpyBackend().is_array([0.0])
        (True, False)
        """
        return isinstance(x, np.ndarray)

    # construction -----------------------------------------------------------------------------
    def zeros(self, shape: int | Sequence[int]) -> np.ndarray:
        return np.zeros(shape, dtype=np.float64)

    def ones(self, shape: int | Sequence[int]) -> np.ndarray:
        return np.ones(shape, dtype=np.float64)

    def eye(self, d: int) -> np.ndarray:
        return np.eye(d, dtype=np.float64)

    # linear algebra ---------------------------------------------------------------------------
    def einsum(self, spec: str, *ops: Any) -> np.ndarray:
        # With three or more operands a contraction order matters (O(d³) vs O(d⁴)); with one or
        # two there is no order to choose and planning would only cost time in a hot loop.
        return np.einsum(spec, *ops, optimize=len(ops) > 2)

    def eigh(self, A: Any) -> tuple[np.ndarray, np.ndarray]:
        w, V = np.linalg.eigh(A)
        return w, V

    def solve(self, A: Any, b: Any) -> np.ndarray:
        A = np.asarray(A)
        b = np.asarray(b)
        if b.ndim == 1 or b.ndim == A.ndim - 1:
            # numpy ≥ 2 reads a (n, d) right-hand side as one matrix, not n vectors: make the
            # vector case explicit so numpy and torch agree.
            return np.linalg.solve(A, b[..., None])[..., 0]
        return np.linalg.solve(A, b)

    def matmul(self, a: Any, b: Any) -> np.ndarray:
        return np.matmul(a, b)

    def host_views(self, *xs: Any) -> list:
        """The arrays themselves (numpy arrays are host arrays).

        >>> NumpyBackend().host_views(np.ones(2))[0].tolist()
        [1.0, 1.0]
        """
        return [np.asarray(x) for x in xs]

    def norm(self, x: Any, axis: int | None = -1) -> Any:
        x = np.asarray(x)
        if axis is None:
            return np.linalg.norm(x.reshape(-1))
        return np.linalg.norm(x, axis=axis)

    def stack(self, arrays: Sequence[Any], axis: int = 0) -> np.ndarray:
        """Stacked along a new ``axis``, float64; along the first axis as one ``np.array`` call (np.stack reshapes
        every array in Python first: 3x slower for a run's 51 iterates of (200,)).

        >>> NumpyBackend().stack([np.zeros(2), np.ones(2)]).tolist(), NumpyBackend().stack([[1, 2]], axis=1).shape
        ([[0.0, 0.0], [1.0, 1.0]], (2, 1))
        """
        if axis == 0 and arrays and all(type(a) is np.ndarray for a in arrays):
            shape = arrays[0].shape
            if all(a.shape == shape for a in arrays):
                return _f64(np.array(arrays))
        return _f64(np.stack([np.asarray(a) for a in arrays], axis=axis))

    def concat(self, arrays: Sequence[Any], axis: int = 0) -> np.ndarray:
        return np.concatenate([np.asarray(a) for a in arrays], axis=axis)

    # elementwise ------------------------------------------------------------------------------
    def where(self, cond: Any, a: Any, b: Any) -> np.ndarray:
        return _f64(np.where(cond, a, b))

    def maximum(self, a: Any, b: Any) -> np.ndarray:
        return _f64(np.maximum(a, b))


# be.sqrt(x) is np.sqrt(x), and so on for every name in the table
for _name in ELEMENTWISE:
    setattr(NumpyBackend, _name, staticmethod(getattr(np, _name)))
