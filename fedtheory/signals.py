"""SIGINT and SIGTERM as an exception in the main thread, so that every ``finally`` runs (workers are stopped,
finished results written) and the exit code says which signal it was. A module of its own (the standard library's
signal and threading alone), so that the command line installs it without loading :mod:`fedtheory.sweep`'s
process machinery, which re-exports it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM received while :func:`handle_signals` was active; ``signum`` says which.

    >>> Interrupted(15).exit_code
    143
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def __reduce__(self):
        return (Interrupted, (self.signum,))


_RECEIVED: list[int] = []
_ACTIVE: list[bool] = []


def signal_received() -> int | None:
    """The first signal :func:`handle_signals` caught in this process, or None.

    A claim that raises KeyboardInterrupt itself is that claim's error; one the user sent stops the run:
    this tells the two apart.

    >>> signal_received() is None
    True
    """
    return _RECEIVED[0] if _RECEIVED else None


@contextlib.contextmanager
def handle_signals():
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` (once; later ones are noted only,
    so the clean-up they interrupt can finish). Outside the main thread, or nested in another such block,
    it does nothing.

    >>> with handle_signals():
    ...     signal_received() is None
    True
    """
    if threading.current_thread() is not threading.main_thread() or _ACTIVE:
        yield
        return

    def handler(signum, frame):
        first = not _RECEIVED
        _RECEIVED.append(signum)
        if first:
            raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    _ACTIVE.append(True)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        _ACTIVE.clear()
        _RECEIVED.clear()


def die_with_parent(parent_pid: int) -> None:
    """Linux: the kernel kills this process (a worker, the command line's supervised child) when its parent dies,
    even by SIGKILL, so none is orphaned; a parent already gone ends it at once."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)
