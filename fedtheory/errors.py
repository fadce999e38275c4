"""The error every layer raises for bad user input, in a module that imports nothing, so that the command line
can name it without loading the content machinery (:mod:`fedtheory.content`, which re-exports it)."""

from __future__ import annotations


class UsageError(Exception):
    """Bad user input (unknown key, missing path, malformed option): the CLI prints one line and exits 2.

    >>> str(UsageError("unknown tier 'warp' (choose fast or full)"))
    "unknown tier 'warp' (choose fast or full)"
    """
