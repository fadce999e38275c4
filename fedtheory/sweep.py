"""Map a function over a grid of points: inline, in local processes, or on a Dask cluster; resumable.

``fn`` must be a module-level function (so it can be sent to another process by reference) taking
one JSON-able point. With ``store`` (a directory), each finished point's result is written
atomically to ``<store>/<sha256 of the point's canonical JSON>.json`` the moment it finishes; a
rerun loads those and computes only the rest, so a sweep killed part-way resumes where it stopped.
Results come back in the order of ``points`` whatever the order they finished in.

>>> import math, tempfile
>>> store = tempfile.mkdtemp()
>>> map_grid(math.sqrt, [4.0, 9.0], store=store)
[2.0, 3.0]
>>> map_grid(math.sqrt, [4.0, 9.0, 16.0], store=store)   # 4 and 9 are loaded, not recomputed
[2.0, 3.0, 4.0]
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from fedtheory.content import UsageError

_SCHEDULER_RE = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$")
CONNECT_TIMEOUT_S = 10.0


def check_scheduler(address: str) -> str:
    """``address`` if it looks like ``tcp://HOST:PORT`` (or ``tls://``), else a :class:`UsageError`.

    >>> check_scheduler("tcp://127.0.0.1:8786")
    'tcp://127.0.0.1:8786'
    >>> try:
    ...     check_scheduler("127.0.0.1")
    ... except UsageError as e:
    ...     print(e)
    malformed scheduler address '127.0.0.1' (expected tcp://HOST:PORT)
    """
    m = _SCHEDULER_RE.match(address or "")
    if m is None or not 0 < int(m.group(3)) < 65536:
        raise UsageError(f"malformed scheduler address {address!r} (expected tcp://HOST:PORT)")
    return address


def check_workers(workers: int) -> int:
    """``workers`` if it is an integer >= 1, else a :class:`UsageError`.

    >>> try:
    ...     check_workers(0)
    ... except UsageError as e:
    ...     print(e)
    --workers must be at least 1, got 0
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers!r}")
    return workers


def point_key(point: Any) -> str:
    """sha256 of the point's canonical JSON (sorted keys, no spaces; tuples are lists).

    >>> point_key({"b": 1, "a": [1, 2]}) == point_key({"a": (1, 2), "b": 1})
    True
    """
    try:
        text = json.dumps(point, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sweep point is not JSON-able: {point!r} ({exc})") from exc
    return hashlib.sha256(text.encode()).hexdigest()


def write_json_atomic(path: Path | str, data: Any, **dump_kw: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temp file in the same directory, then rename).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "sub" / "x.json"
    >>> write_json_atomic(p, {"a": 1}); json.loads(p.read_text())
    {'a': 1}
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, **dump_kw)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _progress_callback(progress: Any, total: int) -> tuple[Callable[[int, Any], None], Callable[[], None]]:
    """(advance(index, result), close()) for progress=None/False (nothing), True (a rich bar) or a callable."""
    if callable(progress):
        return progress, lambda: None
    if not progress or total == 0:
        return (lambda i, r: None), lambda: None
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    if not console.is_terminal:
        return (lambda i, r: None), lambda: None
    bar = Progress(console=console, transient=True)
    bar.start()
    task = bar.add_task("sweep", total=total)
    return (lambda i, r: bar.advance(task)), bar.stop


def map_grid(fn: Callable[[Any], Any], points: Sequence[Any], *, workers: int = 1, scheduler: Any = None,
             store: Path | str | None = None, progress: Any = None,
             connect_timeout: float | None = None) -> list:
    """``[fn(p) for p in points]``, in parallel and resumable.

    - ``workers=1`` and no scheduler: inline, in this process.
    - ``workers > 1``: a :class:`concurrent.futures.ProcessPoolExecutor` started with ``spawn``
      (nothing inherited by fork; ``fn`` is imported by the workers).
    - ``scheduler="tcp://HOST:PORT"``: ``distributed.Client(scheduler).map`` (or pass a ``Client``); the
      workers must share this file system and Python environment. Without dask installed, or with a
      scheduler not reached within ``connect_timeout`` seconds (default ``CONNECT_TIMEOUT_S``), a
      :class:`UsageError`.
    - ``store``: a directory holding one result per finished point (see the module docstring); results
      are then JSON round-tripped, so a fresh and a loaded result are identical. Use one store per ``fn``.
    - ``progress``: None/False, True (a rich progress bar on a terminal), or ``callable(index, result)``
      called as each point finishes (loaded points included).

    An exception raised by ``fn`` propagates (remaining work is cancelled); points already finished
    stay in ``store``.

    >>> map_grid(abs, [-3, 2, -1], workers=1)
    [3, 2, 1]
    >>> seen = []
    >>> map_grid(abs, [-1, -2], progress=lambda i, r: seen.append((i, r))); seen
    [1, 2]
    [(0, 1), (1, 2)]
    """
    check_workers(workers)
    if isinstance(scheduler, str):
        check_scheduler(scheduler)
    points = list(points)
    results: list[Any] = [None] * len(points)
    advance, close = _progress_callback(progress, len(points))
    store_dir = Path(store) if store is not None else None
    keys = [point_key(p) for p in points] if store_dir is not None else []
    todo: list[int] = []
    try:
        if store_dir is not None:
            store_dir.mkdir(parents=True, exist_ok=True)
        for i in range(len(points)):
            path = store_dir / f"{keys[i]}.json" if store_dir is not None else None
            if path is not None and path.exists():
                results[i] = json.loads(path.read_text(encoding="utf-8"))["result"]
                advance(i, results[i])
            else:
                todo.append(i)

        def finish(i: int, result: Any) -> None:
            if store_dir is not None:
                # Round trip so that fresh results equal the ones a rerun loads.
                result = json.loads(json.dumps(result))
                write_json_atomic(store_dir / f"{keys[i]}.json", {"point": points[i], "result": result})
            results[i] = result
            advance(i, result)

        if scheduler is not None:
            _run_dask(fn, points, todo, finish, scheduler, connect_timeout)
        elif workers > 1 and len(todo) > 1:
            _run_processes(fn, points, todo, finish, workers)
        else:
            for i in todo:
                finish(i, fn(points[i]))
    finally:
        close()
    return results


def _run_processes(fn, points, todo, finish, workers) -> None:
    import concurrent.futures as cf
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx) as pool:
        futures = {pool.submit(fn, points[i]): i for i in todo}
        handled: set = set()
        try:
            for fut in cf.as_completed(futures):
                handled.add(fut)
                finish(futures[fut], fut.result())
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            # Keep what other workers finished meanwhile, so a rerun does not redo it.
            for fut, i in futures.items():
                if fut not in handled and fut.done() and not fut.cancelled() and fut.exception() is None:
                    finish(i, fut.result())
            raise


def _run_dask(fn, points, todo, finish, scheduler, connect_timeout) -> None:
    try:
        import distributed
    except ImportError as exc:
        raise UsageError("--scheduler needs dask.distributed: pip install 'fedtheory[dask]'") from exc
    if connect_timeout is None:
        connect_timeout = CONNECT_TIMEOUT_S
    own = isinstance(scheduler, str)
    if own:
        try:
            client = distributed.Client(scheduler, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach Dask scheduler at {scheduler} within {connect_timeout:g}s "
                             f"({type(exc).__name__})") from exc
    else:
        client = scheduler
    try:
        if not todo:
            return
        futures = client.map(fn, [points[i] for i in todo], pure=False)
        index = {fut.key: i for fut, i in zip(futures, todo)}
        try:
            for fut in distributed.as_completed(futures, loop=client.loop):
                finish(index[fut.key], fut.result())
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        if own:
            client.close()
