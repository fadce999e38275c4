"""Fixtures shared by several test files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: a figures file: demo/figure-1 in the fast tier, demo/figure-2 in the full tier, both with empty panels
_DEMO_FIGURES = textwrap.dedent('''
    from fedtheory.plotting.spec import figure
    @figure(id="demo/figure-1", caption="c")
    def figure_1(ctx):
        return {"params": {}, "panels": []}
    @figure(id="demo/figure-2", caption="c", tier="full")
    def figure_2(ctx):
        return {"params": {}, "panels": []}
''')


@pytest.fixture
def write_demo_figures():
    """A function writing the demo figures file to ``folder/demo.py`` (made if missing) and returning its path;
    with ``full_tier=False`` the file holds demo/figure-1 alone."""

    def write(folder: Path, *, full_tier: bool = True) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "demo.py"
        text = _DEMO_FIGURES if full_tier else _DEMO_FIGURES[: _DEMO_FIGURES.index("@figure(id=\"demo/figure-2\"")]
        path.write_text(text)
        return path

    return write


@pytest.fixture
def run_cli():
    """A function running the command line, ``python -m fedtheory *args``, in a fresh interpreter from ``cwd``
    (with ``env`` when given) and returning the finished process, stdout and stderr captured as text; ``check=True``
    raises when it exits non-zero, ``timeout`` (seconds) stops a hung run."""

    def run(*args: str, cwd=None, env=None, timeout: float = 120, check: bool = False) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "fedtheory", *args]
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=check)

    return run
