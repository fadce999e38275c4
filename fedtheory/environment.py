"""What a run ran on (for reports) and which optional capabilities (``requires``) are available.

Versions come from package metadata, so recording them imports nothing heavy. Capabilities are
probed lazily, one at a time: asking whether ``dask`` is there does not import torch.
``FEDTHEORY_DISABLE=torch,cuda`` makes capabilities count as missing (to rehearse a machine
without them). Checks and figures run under :func:`blas_threads` (one BLAS thread unless
``FEDTHEORY_BLAS_THREADS`` says otherwise).

>>> env = environment(seed=0)
>>> env["seed"], env["backend"], sorted(env["packages"])[:3]
(0, 'numpy', ['PEPit', 'cvxpy', 'dask'])
>>> missing_requirements(["nosuchcapability"])
['nosuchcapability: unknown capability (known: cuda, dask, torch)']
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

# Report key -> distribution name.
PACKAGES = {
    "numpy": "numpy",
    "scipy": "scipy",
    "sympy": "sympy",
    "mpmath": "mpmath",
    "cvxpy": "cvxpy",
    "PEPit": "PEPit",
    "matplotlib": "matplotlib",
    "scikit-learn": "scikit-learn",
    "rich": "rich",
    "torch": "torch",
    "dask": "dask",
    "fedtheory": "fedtheory",
}
CAPABILITIES = ("torch", "cuda", "dask")


def _version(dist: str) -> str | None:
    if dist == "fedtheory":  # the code that ran, also from a checkout on PYTHONPATH beside another install
        from fedtheory import __version__

        return __version__
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def environment(seed: int, backend: str = "numpy", device: str | None = None, sources=None) -> dict:
    """The run's environment: python, platform, package versions (None when absent), backend, device, seed, and
    with ``sources`` (the content files run) the claim code's :func:`content_revision`.

    >>> env = environment(7, backend="torch", device="cpu")
    >>> (env["seed"], env["backend"], env["device"], env["packages"]["fedtheory"])
    (7, 'torch', 'cpu', '0.1.0')
    """
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {key: _version(dist) for key, dist in PACKAGES.items()},
        "backend": backend,
        "device": device,
        "seed": seed,
        "blas_threads": blas_thread_count(),
        **({"content": content_revision(sources)} if sources is not None else {}),
    }


def content_revision(sources) -> dict:
    """Which claim code ran: a digest of the content files, and the git revision of their checkout (if any).

    ``digest`` is the SHA-256 over the files' relative names and bytes (so two runs of different claim code
    never look identical, also from a wheel); ``revision`` is ``git rev-parse HEAD`` of the repository holding
    them and ``clean`` whether those files match it (``git status --porcelain``), both None outside git.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); f = d / "demo.py"; _ = f.write_text("x = 1")
    >>> a = content_revision([str(f)]); _ = f.write_text("x = 2"); b = content_revision([str(f)])
    >>> a["files"], a["digest"] != b["digest"], a["revision"]
    (1, True, None)
    """
    files = sorted({Path(s).resolve() for s in sources if s and Path(s).is_file()})
    digest = hashlib.sha256()
    root = Path(os.path.commonpath([str(f.parent) for f in files])) if files else Path()
    for f in files:
        digest.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    revision = clean = None
    if root is not None:
        try:
            head = subprocess.run(
                ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
            )
            if head.returncode == 0:
                revision = head.stdout.strip()
                status = subprocess.run(
                    ["git", "-C", str(root), "status", "--porcelain", "--", str(root)],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                clean = status.returncode == 0 and not status.stdout.strip()
        except (OSError, subprocess.SubprocessError):  # no git on this machine: the digest still tells runs apart
            pass
    return {"digest": digest.hexdigest(), "files": len(files), "revision": revision, "clean": clean}


def _disabled() -> set[str]:
    return {s.strip() for s in os.environ.get("FEDTHEORY_DISABLE", "").split(",") if s.strip()}


@functools.lru_cache(maxsize=None)
def _probe(name: str) -> tuple[bool, str]:
    """(available, reason when not) for one capability; cached because probing cuda imports torch."""
    if name == "torch":
        if importlib.util.find_spec("torch") is None:
            return False, "torch is not installed (pip install 'fedtheory[torch]')"
        return True, ""
    if name == "cuda":
        ok, why = _probe("torch")
        if not ok:
            return False, f"no CUDA: {why}"
        try:
            import torch
        except Exception as exc:  # a broken torch install is "no CUDA", not a crash
            return False, f"no CUDA: torch failed to import ({type(exc).__name__}: {exc})"
        if not torch.cuda.is_available():
            return False, "no CUDA device (torch.cuda.is_available() is False)"
        return True, ""
    if name == "dask":
        if importlib.util.find_spec("distributed") is None:
            return False, "dask.distributed is not installed (pip install 'fedtheory[dask]')"
        return True, ""
    return False, f"unknown capability (known: {', '.join(sorted(CAPABILITIES))})"


def has(name: str) -> bool:
    """Whether one capability is available here.

    >>> has("nosuchcapability")
    False
    """
    return name not in _disabled() and _probe(name)[0]


def capabilities() -> dict[str, bool]:
    """Every known capability and whether it is available (probes cuda, hence imports torch if present).

    >>> sorted(capabilities())
    ['cuda', 'dask', 'torch']
    """
    return {name: has(name) for name in CAPABILITIES}


def missing_requirements(requires) -> list[str]:
    """One ``"<name>: <reason>"`` line per requirement not available here (unknown names count as missing).

    >>> missing_requirements([])
    []
    >>> os.environ["FEDTHEORY_DISABLE"] = "dask"
    >>> missing_requirements(["dask"])
    ['dask: disabled by FEDTHEORY_DISABLE']
    >>> del os.environ["FEDTHEORY_DISABLE"]
    """
    out = []
    for name in requires:
        if name in _disabled():
            out.append(f"{name}: disabled by FEDTHEORY_DISABLE")
            continue
        ok, why = _probe(name)
        if not ok:
            out.append(f"{name}: {why}")
    return out


def blas_thread_count() -> int:
    """BLAS threads a check or figure may use: ``FEDTHEORY_BLAS_THREADS`` (default 1).

    Claims work on small matrices, where a threaded BLAS on shared cores costs up to three orders of
    magnitude (thread wake-ups dominate a 3×3 product); parallelism comes from ``--workers`` instead.

    >>> blas_thread_count() >= 1
    True
    """
    raw = os.environ.get("FEDTHEORY_BLAS_THREADS", "1")
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"FEDTHEORY_BLAS_THREADS must be a positive integer, got {raw!r}") from None
    if value < 1:
        raise ValueError(f"FEDTHEORY_BLAS_THREADS must be a positive integer, got {raw!r}")
    return value


@contextlib.contextmanager
def blas_threads():
    """Limit BLAS/OpenMP and torch's intra-op pool to :func:`blas_thread_count` threads for a block.

    Claims and figures work on small arrays, where threads on shared cores cost far more than they save
    (measured here: a 3×3 ``expm`` 24 ms threaded against 10 µs single-threaded; a small torch gradient
    0.5 s against 9 ms). A torch already imported is set and restored; one imported inside the block reads
    ``OMP_NUM_THREADS``, which is set for it when the environment does not set it already.

    >>> import numpy as np
    >>> with blas_threads():
    ...     float(np.linalg.norm(np.eye(3)))
    1.7320508075688772
    """
    from threadpoolctl import threadpool_limits

    n = blas_thread_count()
    os.environ.setdefault("OMP_NUM_THREADS", str(n))
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    with threadpool_limits(limits=n):
        if torch is not None:
            torch.set_num_threads(n)
        try:
            yield
        finally:
            if torch is not None and before is not None:
                torch.set_num_threads(before)
