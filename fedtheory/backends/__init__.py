"""Array backends: numpy (the default) and torch (cpu or cuda, when installed).

Numerical drivers are written once against :class:`Backend` and run on either library. On torch,
arrays stay float64 tensors on the backend's device from start to end of a run.

>>> from fedtheory.backends import get_backend, available_backends
>>> be = get_backend()                        # numpy
>>> be.name, be.device
('numpy', None)
>>> "numpy" in available_backends()
True
>>> A = be.asarray([[[2.0, 0.0], [0.0, 4.0]], [[1.0, 0.0], [0.0, 5.0]]])
>>> be.solve(A, be.asarray([[2.0, 4.0], [1.0, 5.0]])).tolist()
[[1.0, 1.0], [1.0, 1.0]]
>>> get_backend("jax")
Traceback (most recent call last):
...
ValueError: unknown backend 'jax' (choose numpy or torch)
"""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

from fedtheory.backends.base import Backend

__all__ = ["Backend", "BackendUnavailableError", "available_backends", "backend_of", "get_backend"]

_NAMES = ("numpy", "torch")


class BackendUnavailableError(ImportError, ValueError):
    """A known backend whose library is not installed here.

    Both an ImportError (what it is) and a ValueError (what a command line reports as one line).
    """


def _torch_installed() -> bool:
    # find_spec does not import torch (which takes seconds): the lazy-import promise holds.
    return importlib.util.find_spec("torch") is not None


def available_backends() -> list[str]:
    """Names of the backends usable here: always ``"numpy"``, plus ``"torch"`` when it is installed.

    >>> available_backends()[0]
    'numpy'
    """
    return ["numpy"] + (["torch"] if _torch_installed() else [])


@functools.lru_cache(maxsize=None)
def _make(name: str, device: Any) -> Backend:
    if name == "numpy":
        from fedtheory.backends.numpy_backend import NumpyBackend

        return NumpyBackend()
    from fedtheory.backends.torch_backend import TorchBackend

    return TorchBackend(device)


def get_backend(name: Any = "numpy", device: Any = None) -> Backend:
    """The backend called ``name`` (``"numpy"`` or ``"torch"``) on ``device``.

    - numpy: ``device`` must be ``None`` or ``"cpu"``; the backend's ``device`` is ``None``.
    - torch: ``device`` is ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a ``torch.device``; ``None`` means
      ``"cuda"`` when a GPU is visible, else ``"cpu"``. A cuda device that is not available raises
      ValueError. torch is imported here, on first request, never at ``import fedtheory``.

    ``name`` may also be a :class:`Backend`, returned as is (so functions can accept either). Backends
    are cached: the same (name, device) gives the same object.

    >>> get_backend("numpy") is get_backend("numpy", device="cpu")
    True
    >>> get_backend("numpy", device="cuda")
    Traceback (most recent call last):
    ...
    ValueError: backend 'numpy' runs on the CPU only (device='cuda'); use backend 'torch' for a GPU
    """
    if isinstance(name, Backend):
        if device is not None and _device_key(name.name, device) != name.device:
            raise ValueError(f"backend {name!r} is on device {name.device!r}, not {device!r}")
        return name
    if not isinstance(name, str) or name.strip().lower() not in _NAMES:
        raise ValueError(f"unknown backend '{name}' (choose numpy or torch)")
    name = name.strip().lower()
    if name == "torch" and not _torch_installed():
        raise BackendUnavailableError(
            "backend 'torch' needs PyTorch, which is not installed here (pip install 'fedtheory[torch]')"
        )
    return _make(name, _device_key(name, device))


def _device_key(name: str, device: Any) -> Any:
    """The normalized device for the cache key (and the check that it is available)."""
    if name == "numpy":
        if (
            device is None
            or (isinstance(device, str) and device.strip().lower() == "cpu")
            or (type(device).__module__.split(".", 1)[0] == "torch" and str(device) == "cpu")
        ):
            return None
        raise ValueError(
            f"backend 'numpy' runs on the CPU only (device={str(device)!r}); use backend 'torch' for a GPU"
        )
    from fedtheory.backends.torch_backend import resolve_device

    return resolve_device(device)


def backend_of(x: Any) -> Backend:
    """The backend an array lives on: torch (on the tensor's device) for a tensor, else numpy.

    >>> import numpy as np
    >>> backend_of(np.zeros(3)).name
    'numpy'
    """
    if type(x).__module__.split(".", 1)[0] == "torch":
        return get_backend("torch", device=x.device)
    return get_backend("numpy")
