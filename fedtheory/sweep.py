"""Map a function over a grid of points: inline, in local processes, or on a Dask cluster; resumable.

``fn`` must be a module-level function (so it can be sent to another process by reference) taking
one JSON-able point. With ``store`` (a directory), each finished point's result is written
atomically to ``<store>/<sha256 of the point's canonical JSON>.json`` the moment it finishes; a
rerun loads those and computes only the rest, so a sweep killed part-way resumes where it stopped.
Results come back in the order of ``points`` whatever the order they finished in.

The module also holds what every long run needs to be reliable: atomic writes that honour the umask
(:func:`atomic_writer`, :func:`write_json_atomic`), checks of output destinations made before any work
(:func:`check_output_file`, :func:`check_output_dir`), SIGINT/SIGTERM turned into :class:`Interrupted`
(:func:`handle_signals`), and worker processes that are capped at the cores, time-limited, replaced when
they die and never outlive the run.

>>> import math, tempfile
>>> store = tempfile.mkdtemp()
>>> map_grid(math.sqrt, [4.0, 9.0], store=store)
[2.0, 3.0]
>>> map_grid(math.sqrt, [4.0, 9.0, 16.0], store=store)   # 4 and 9 are loaded, not recomputed
[2.0, 3.0, 4.0]
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

from fedtheory.content import UsageError
from fedtheory.signals import Interrupted, die_with_parent, handle_signals, signal_received  # noqa: F401 - re-exported

_SCHEDULER_RE = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$")
CONNECT_TIMEOUT_S = 10.0
WORKER_WAIT_S = 60.0
_GRACE_S = 2.0  # seconds a stopped worker gets between SIGTERM and SIGKILL


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


def _umask() -> int:
    # os.umask can only be read by setting it; /proc avoids the (brief, process-wide) change on Linux
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_writer(path: Path | str | os.PathLike, mode: str = "w"):
    """A file object whose content replaces ``path`` atomically when the block ends without error.

    The temp file lives beside ``path`` (same file system, so the rename is atomic; never in ``/`` or the
    cwd) and gets the permissions a plain ``open`` would give (``0o666 & ~umask``; ``mkstemp`` alone
    makes 0600). On an error the temp file is removed and ``path`` is left as it was.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> with atomic_writer(p) as fh:
    ...     _ = fh.write("hi")
    >>> p.read_text(), oct(p.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    ('hi', True)
    """
    path = Path(path)
    if not path.name:
        raise ValueError(f"cannot write to {str(path)!r}: no file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write ``text`` (plus a final newline) to ``path`` atomically (see :func:`atomic_writer`).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> write_text_atomic(p, "ok"); p.read_text()
    'ok\\n'
    """
    with atomic_writer(path) as fh:
        fh.write(text + "\n")


#: above this many characters (compact) a JSON document asked for with ``indent`` is written compact
INDENT_MAX_CHARS = 2_000_000


def write_json_atomic(path: Path | str, data: Any, **dump_kw: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temp file in the same directory, then rename).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "sub" / "x.json"
    >>> write_json_atomic(p, {"a": 1}); json.loads(p.read_text())
    {'a': 1}
    """
    text = None
    if dump_kw.get("indent") is not None:
        # json indents only through its pure-Python encoder (minutes for 10⁶ numbers): a large document is
        # written compact by the C encoder instead, a small one indented for reading
        compact = json.dumps(data, **{k: v for k, v in dump_kw.items() if k != "indent"})
        if len(compact) > INDENT_MAX_CHARS:
            text = compact
    with atomic_writer(path) as fh:
        if text is None:
            json.dump(data, fh, **dump_kw)
        else:
            fh.write(text)
        fh.write("\n")


def _probe_directory(directory: Path, what: str) -> None:
    """UsageError unless a file can be created in ``directory`` (or in the nearest existing ancestor)."""
    d = directory
    while not d.exists():
        if d.is_symlink():
            raise UsageError(f"{what}: {d} is a dangling symbolic link")
        d = d.parent
    if not d.is_dir():
        raise UsageError(f"{what}: {d} is not a directory")
    # os.access is wrong for root and for read-only mounts (/proc): try for real
    try:
        fd, probe = tempfile.mkstemp(dir=d, prefix=".fedtheory-probe.")
    except OSError as exc:
        raise UsageError(f"{what}: cannot write in {d} ({exc.strerror or type(exc).__name__})") from None
    os.close(fd)
    os.unlink(probe)


def check_output_file(path: Any, flag: str) -> Path:
    """``path`` as a :class:`Path` if a file can be written there, else a :class:`UsageError` naming ``flag``.

    Run before any work, so a bad destination fails in a second, not after the run. Rejected: an empty
    name, a directory, a path under a regular file, a directory where nothing can be created.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_file(d / "new" / "r.json", "--json").name
    'r.json'
    >>> for bad in ("", str(d)):
    ...     try:
    ...         check_output_file(bad, "--json")
    ...     except UsageError as e:
    ...         print(str(e).replace(str(d), "DIR"))
    --json: empty file name
    --json DIR is a directory, not a file
    """
    text = os.fspath(path) if path is not None else ""
    if not text.strip():
        raise UsageError(f"{flag}: empty file name")
    p = Path(text)
    if text.endswith(os.sep) or p.is_dir():
        raise UsageError(f"{flag} {text} is a directory, not a file")
    if p.exists() and not p.is_file():
        raise UsageError(f"{flag} {text} exists and is not a regular file")
    _probe_directory(p.parent, f"{flag} {text}")
    return p


def check_output_dir(path: Any, flag: str) -> Path:
    """``path`` as a :class:`Path` if it is (or can be made) a writable directory, else a :class:`UsageError`.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "file"; _ = f.write_text("")
    >>> try:
    ...     check_output_dir(f / "sub", "--out")
    ... except UsageError as e:
    ...     print(str(e).replace(str(f.parent), "DIR"))
    --out DIR/file/sub: DIR/file is not a directory
    """
    text = os.fspath(path) if path is not None else ""
    if not text.strip():
        raise UsageError(f"{flag}: empty directory name")
    p = Path(text)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{flag} {text} exists and is not a directory")
    _probe_directory(p, f"{flag} {text}")
    return p


def core_count() -> int:
    """CPU cores this process may use (its affinity mask where the platform has one).

    >>> core_count() >= 1
    True
    """
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


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


class PointFailed(RuntimeError):
    """A point's worker died or ran past its time limit, and no ``on_failure`` was given."""


def map_grid(
    fn: Callable[[Any], Any],
    points: Sequence[Any],
    *,
    workers: int = 1,
    scheduler: Any = None,
    store: Path | str | None = None,
    progress: Any = None,
    connect_timeout: float | None = None,
    timeout: float | None = None,
    on_failure: Callable[[int, str, float], Any] | None = None,
    retries: int = 1,
) -> list:
    """``[fn(p) for p in points]``, in parallel and resumable.

    - ``workers=1``, no scheduler, no ``timeout``: inline, in this process.
    - ``workers > 1`` or a ``timeout``: worker processes started with ``spawn`` (nothing inherited by
      fork; ``fn`` is imported by the workers), at most :func:`core_count` of them. Each runs one point
      at a time; a worker that dies (killed, ``os._exit``, a crash in C) is replaced, and its point is
      retried ``retries`` times on a fresh worker before it counts as failed; a point running longer than
      ``timeout`` seconds has its worker killed (with its process group) and counts as failed. Workers
      ignore the terminal's Ctrl-C, die with this process, and are stopped when this call ends, whatever
      the reason.
    - ``scheduler="tcp://HOST:PORT"``: ``distributed.Client(scheduler).map`` (or pass a ``Client``); the
      workers must share this file system and Python environment. The scheduler must answer the Dask
      handshake within ``connect_timeout`` seconds (default ``FEDTHEORY_DASK_CONNECT_TIMEOUT``, else
      ``CONNECT_TIMEOUT_S``) and have a worker within ``FEDTHEORY_DASK_WORKER_WAIT`` seconds (default
      ``WORKER_WAIT_S``), else a :class:`UsageError`; tasks left with no worker for that long fail.
    - ``store``: a directory holding one result per finished point (see the module docstring); results
      are then JSON round-tripped, so a fresh and a loaded result are identical. Use one store per ``fn``.
    - ``progress``: None/False, True (a rich progress bar on a terminal), or ``callable(index, result)``
      called as each point finishes (loaded points included).
    - ``on_failure(index, reason, seconds)``: the result to record for a point whose ``fn`` raised, whose
      worker died twice or that ran out of time (``seconds``: how long its last attempt ran); without it, the exception propagates (a dead or timed-out
      worker raises :class:`PointFailed`) and the remaining work is cancelled. Points already finished
      stay in ``store``.

    >>> map_grid(abs, [-3, 2, -1], workers=1)
    [3, 2, 1]
    >>> seen = []
    >>> map_grid(abs, [-1, -2], progress=lambda i, r: seen.append((i, r))); seen
    [1, 2]
    [(0, 1), (1, 2)]
    >>> map_grid(abs, ["x"], on_failure=lambda i, why, seconds: why.splitlines()[-1])
    ["TypeError: bad operand type for abs(): 'str'"]
    """
    check_workers(workers)
    if isinstance(scheduler, str):
        check_scheduler(scheduler)
    if timeout is not None and not (timeout > 0):
        raise UsageError(f"timeout must be a positive number of seconds, got {timeout!r}")
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

        def fail(i: int, reason: str, exc: BaseException | None = None, seconds: float = 0.0) -> None:
            if on_failure is None:
                if isinstance(exc, Exception):
                    raise exc
                raise PointFailed(f"point {i} ({points[i]!r}): {reason.strip().splitlines()[-1]}")
            finish(i, on_failure(i, reason, seconds))

        if scheduler is not None:
            _run_dask(fn, points, todo, finish, fail, scheduler, connect_timeout, timeout)
        elif (workers > 1 and len(todo) > 1) or (timeout is not None and todo):
            _run_processes(fn, points, todo, finish, fail, min(workers, core_count()), timeout, retries)
        else:
            for i in todo:
                started = time.perf_counter()
                try:
                    result = fn(points[i])
                except Exception as exc:
                    if on_failure is None:
                        raise
                    fail(i, _describe(exc), exc, time.perf_counter() - started)
                    continue
                finish(i, result)
    finally:
        close()
    return results


def _describe(exc: BaseException) -> str:
    lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip().splitlines()
    return "\n".join(lines[-12:])


# --------------------------------------------------------------------------------------------
# Local worker processes
# --------------------------------------------------------------------------------------------


def _worker_main(conn, parent_pid: int) -> None:
    """A worker: run ``fn(point)`` for each ``(index, fn, point)`` received; None or EOF ends it."""
    die_with_parent(parent_pid)
    try:
        os.setsid()  # its own process group: Ctrl-C reaches the parent only, and a kill takes its children
    except OSError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        i, fn, point = msg
        reply: tuple
        try:
            reply = ("ok", i, fn(point))
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the point's failure, not the worker's
            reply = ("exc", i, _describe(exc), exc)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an unpicklable result or exception
            try:
                conn.send(("exc", i, f"{type(exc).__name__}: cannot send the result back: {exc}", None))
            except Exception:
                return


class _Worker:
    def __init__(self, ctx) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_worker_main, args=(child, os.getpid()), daemon=True)
        self.proc.start()
        child.close()
        self.task: tuple[int, float] | None = None  # (index, start time)

    def _kill_group(self) -> None:
        """SIGKILL the worker's process group: the worker (its leader, by setsid) and whatever a point started
        there — a child a claim forgot (``sleep 300``) would otherwise outlive the run and hold its stdout."""
        pid = self.proc.pid
        if pid is None or pid == os.getpgid(0):  # never our own group
            return
        try:
            os.killpg(pid, signal.SIGKILL)  # the group outlives its leader while a member runs
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def kill(self) -> None:
        self._kill_group()
        try:
            self.proc.kill()
        except (OSError, AttributeError):
            pass
        self.proc.join(5)
        self.conn.close()

    def stop(self) -> None:
        """Ask an idle worker to exit (kill it if it does not within a second), then its leftover children."""
        try:
            self.conn.send(None)
        except (OSError, EOFError):
            pass
        self.proc.join(1)
        if self.proc.exitcode is None:
            self.kill()
        else:
            self._kill_group()
            self.conn.close()


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"its worker process was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"its worker process was killed by signal {-exitcode}"
    return f"its worker process exited with code {exitcode}"


def _run_processes(fn, points, todo, finish, fail, workers, timeout, retries) -> None:
    import multiprocessing
    import multiprocessing.connection
    from collections import deque

    ctx = multiprocessing.get_context("spawn")
    queue = deque(todo)
    deaths: dict[int, int] = {}
    pool: list[_Worker] = []
    n = max(1, min(workers, len(todo)))
    try:
        while queue or any(w.task for w in pool):
            while queue:
                idle = next((w for w in pool if w.task is None), None)
                if idle is None:
                    if len(pool) >= n:
                        break
                    idle = _Worker(ctx)
                    pool.append(idle)
                i = queue.popleft()
                try:
                    idle.conn.send((i, fn, points[i]))
                except OSError:  # the worker died before taking it (killed while idle, or at start-up)
                    why = _death(idle.proc.exitcode)
                    idle.kill()
                    pool.remove(idle)
                    deaths[i] = deaths.get(i, 0) + 1
                    if deaths[i] <= retries:
                        queue.appendleft(i)
                    else:
                        fail(i, f"{why}, also on a fresh worker ({deaths[i]} attempts)")
                    continue
                idle.task = (i, time.monotonic())
            busy = [w for w in pool if w.task is not None]
            if not busy:  # every point handed out so far failed before it started
                continue
            wait_for = None
            if timeout is not None:
                started_at = [task[1] for w in busy if (task := w.task) is not None]
                wait_for = max(0.0, min(started_at) + timeout - time.monotonic()) + 0.01
            ready = set(
                multiprocessing.connection.wait(
                    [w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=wait_for
                )
            )
            for w in busy:
                assert w.task is not None  # busy: it has a point
                i, started = w.task
                reply = None
                if w.conn in ready:
                    try:
                        reply = w.conn.recv()
                    except (EOFError, OSError):
                        reply = None
                    except Exception as exc:  # an exception that does not unpickle here
                        reply = ("exc", i, f"cannot read the worker's reply: {type(exc).__name__}: {exc}", None)
                if reply is not None:
                    w.task = None
                    if reply[0] == "ok":
                        finish(i, reply[2])
                    else:
                        fail(
                            i,
                            reply[2],
                            reply[3] if isinstance(reply[3], BaseException) else None,
                            time.monotonic() - started,
                        )
                elif w.conn in ready or w.proc.sentinel in ready:
                    w.proc.join(5)
                    why = _death(w.proc.exitcode)
                    w.kill()
                    pool.remove(w)
                    deaths[i] = deaths.get(i, 0) + 1
                    if deaths[i] <= retries:
                        queue.appendleft(i)  # retried on a fresh worker
                    else:
                        fail(
                            i, f"{why}, also on a fresh worker ({deaths[i]} attempts)", None, time.monotonic() - started
                        )
                elif timeout is not None and time.monotonic() - started > timeout:
                    w.kill()
                    pool.remove(w)
                    fail(
                        i,
                        f"timed out: still running after the {timeout:g}s limit (worker killed)",
                        None,
                        time.monotonic() - started,
                    )
    finally:
        # busy workers get SIGTERM and a short grace (a figure mid-commit finishes its pair), then SIGKILL
        busy = [w for w in pool if w.task is not None]
        for w in busy:
            try:
                w.proc.terminate()
            except OSError:
                pass
        deadline = time.monotonic() + _GRACE_S
        for w in busy:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            w.kill()
        for w in pool:
            if w.task is None:
                w.stop()


# --------------------------------------------------------------------------------------------
# Dask
# --------------------------------------------------------------------------------------------


def _recv_exactly(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def probe_dask(address: str, timeout: float) -> None:
    """UsageError unless ``address`` (``tcp://``) sends a Dask handshake within ``timeout`` seconds.

    A Dask scheduler speaks first: an 8-byte little-endian length, then msgpack frames holding its
    settings (``compression``, ``python``, ``pickle-protocol``). Reading that with a deadline, before
    ``distributed`` sees the socket, turns a listener that is not Dask (silent, or answering HTTP) into
    one clear line instead of a hang or a multi-exabyte allocation.

    >>> import socket, threading
    >>> srv = socket.create_server(("127.0.0.1", 0)); port = srv.getsockname()[1]
    >>> t = threading.Thread(target=lambda: srv.accept()[0].sendall(b"HTTP/1.1 400 Bad Request\\r\\n\\r\\n")); t.start()
    >>> try:
    ...     probe_dask(f"tcp://127.0.0.1:{port}", 2)
    ... except UsageError as e:
    ...     print(str(e).split(" (")[0].replace(str(port), "PORT"))
    tcp://127.0.0.1:PORT is not a Dask scheduler
    >>> t.join(); srv.close()
    """
    import socket

    m = _SCHEDULER_RE.match(address)
    if m is None or m.group(1) != "tcp":
        return
    host, port = m.group(2).strip("[]"), int(m.group(3))
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        raise UsageError(
            f"cannot reach Dask scheduler at {address} within {timeout:g}s ({type(exc).__name__})"
        ) from None
    try:
        sock.settimeout(timeout)
        try:
            head = _recv_exactly(sock, 8)
            size = struct.unpack("<Q", head)[0] if len(head) == 8 else None
            body = _recv_exactly(sock, size) if size is not None and 8 <= size <= 1 << 20 else b""
        except socket.timeout:
            raise UsageError(f"no Dask handshake from {address} within {timeout:g}s: is it a Dask scheduler?") from None
        except OSError as exc:
            raise UsageError(f"cannot reach Dask scheduler at {address} ({type(exc).__name__})") from None
        if b"compression" not in body and b"pickle-protocol" not in body:
            raise UsageError(f"{address} is not a Dask scheduler (it answered {(head + body)[:24]!r})")
    finally:
        sock.close()


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise UsageError(f"{name} must be a positive number of seconds, got {raw!r}")
    return value


class _IsolatedPoint:
    """``fn(point)`` in a fresh interpreter on the Dask worker, in its own session, as local workers run points.

    A point that kills its process (SIGKILL, ``os._exit``, a crash in C) kills only that process: it is
    retried once in a fresh one, then fails with the reason, and the Dask worker lives on (Dask alone would
    retry it on every worker and lose them all). A point past ``timeout`` has its process group killed, so
    nothing of it keeps running on the worker (a Dask task's thread cannot be stopped). Children a point
    started go with its process group. The point's stdout goes to the worker's stderr; the result comes
    back on the child's own stdout, pickled (cloudpickle: Dask's own dependency).
    """

    def __init__(self, fn: Callable[[Any], Any], timeout: float | None, retries: int) -> None:
        self.fn, self.timeout, self.retries = fn, timeout, retries

    def __call__(self, point: Any) -> Any:
        import pickle

        import cloudpickle

        payload = cloudpickle.dumps((self.fn, point))
        env = dict(os.environ)
        try:  # the child reports where it ran (claims' executor records)
            from distributed import get_worker

            env["FEDTHEORY_DASK_WORKER"] = get_worker().address
        except (ImportError, ValueError):
            pass
        why = ""
        for attempt in range(1, self.retries + 2):
            proc = subprocess.Popen(
                [sys.executable, "-c", "from fedtheory.sweep import _isolated_child; _isolated_child()"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,
                env=env,
            )
            try:
                out, _ = proc.communicate(payload, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _kill_session(proc.pid)
                proc.wait()
                raise TimeoutError(
                    f"timed out: still running after the {self.timeout:g}s limit "
                    "(its process group killed on the Dask worker)"
                ) from None
            finally:
                _kill_session(proc.pid)  # whatever the point left running
            if proc.returncode == 0 and out:
                kind, value = pickle.loads(out)
                if kind == "ok":
                    return value
                raise RuntimeError(value)
            why = _death(proc.returncode).replace("its worker process", "its process") + (
                "" if proc.returncode else " before returning a result"
            )
        raise RuntimeError(f"{why}, also in a fresh process ({self.retries + 1} attempts)")


def _kill_session(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _isolated_child() -> None:
    """The child of :class:`_IsolatedPoint`: read (fn, point), run it, write the pickled outcome."""
    import pickle

    import cloudpickle

    fn, point = pickle.loads(sys.stdin.buffer.read())
    result_fd = os.dup(1)
    os.dup2(2, 1)  # the point's prints must not corrupt the result
    try:
        outcome = ("ok", fn(point))
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the point's failure
        outcome = ("exc", _describe(exc))
    data = cloudpickle.dumps(outcome)
    with os.fdopen(result_fd, "wb") as fh:
        fh.write(data)


def _run_dask(fn, points, todo, finish, fail, scheduler, connect_timeout, timeout) -> None:
    try:
        import distributed
    except ImportError as exc:
        raise UsageError("--scheduler needs dask.distributed: pip install 'fedtheory[dask]'") from exc
    if connect_timeout is None:
        connect_timeout = _env_seconds("FEDTHEORY_DASK_CONNECT_TIMEOUT", CONNECT_TIMEOUT_S)
    worker_wait = _env_seconds("FEDTHEORY_DASK_WORKER_WAIT", WORKER_WAIT_S)
    own = isinstance(scheduler, str)
    if own:
        probe_dask(scheduler, connect_timeout)
        try:
            client = distributed.Client(scheduler, timeout=connect_timeout, set_as_default=False)
        except Exception as exc:
            raise UsageError(
                f"cannot reach Dask scheduler at {scheduler} within {connect_timeout:g}s ({type(exc).__name__})"
            ) from None
    else:
        client = scheduler
    address = getattr(client, "scheduler", None) and client.scheduler.address
    futures: list = []
    try:
        if not todo:
            return
        try:
            client.wait_for_workers(1, timeout=worker_wait)
        except Exception:  # distributed raises TimeoutError (or its own) when none came
            raise UsageError(
                f"the Dask cluster at {address or scheduler} has no workers (waited {worker_wait:g}s)"
            ) from None
        futures = client.map(_IsolatedPoint(fn, timeout, 1), [points[i] for i in todo], pure=False)
        index = {fut.key: i for fut, i in zip(futures, todo)}
        pending = set(futures)
        running_since: dict = {}
        no_workers_since: float | None = None
        last_check = time.monotonic()
        while pending:
            done = {fut for fut in pending if fut.done()}
            if not done:
                time.sleep(0.05)
            for fut in done:
                pending.discard(fut)
                i = index[fut.key]
                if fut.status == "finished":
                    finish(i, fut.result())
                elif fut.status == "error":
                    error = fut.exception()
                    # the isolated point's own traceback or death, as local workers report it
                    fail(
                        i,
                        str(error)
                        if isinstance(error, (RuntimeError, TimeoutError))
                        else f"{type(error).__name__}: {error}",
                        error,
                    )
                else:
                    fail(i, f"Dask task {fut.status}")
            now = time.monotonic()
            if not pending or now - last_check < 1.0:
                continue
            last_check = now
            try:
                workers_now = bool(client.scheduler_info().get("workers"))
                processing = (
                    {k for keys in client.processing().values() for k in keys} if timeout is not None else set()
                )
            except Exception:  # the scheduler went away: counts as no workers
                workers_now, processing = False, set()
            if not workers_now:
                no_workers_since = no_workers_since or now
                if now - no_workers_since > worker_wait:
                    for fut in list(pending):
                        pending.discard(fut)
                        fail(index[fut.key], f"the Dask cluster had no workers (or no scheduler) for {worker_wait:g}s")
                    break
            else:
                no_workers_since = None
            if timeout is not None:
                for fut in list(pending):
                    if fut.key in processing:
                        start = running_since.setdefault(fut.key, now)
                        if now - start > timeout:
                            pending.discard(fut)
                            client.cancel([fut])
                            fail(
                                index[fut.key],
                                f"timed out: still running on Dask after the {timeout:g}s limit",
                                None,
                                now - start,
                            )
    except BaseException:
        if futures:
            client.cancel(futures)
        raise
    finally:
        if own:
            client.close(timeout=connect_timeout)
