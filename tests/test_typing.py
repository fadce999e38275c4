"""mypy is clean on the public packages, under the configuration in pyproject.toml (issue 26).

Skipped only where mypy is not installed (it is in the ``dev`` extra). The run checks exactly the ``files`` of
``[tool.mypy]`` (claims, certify, explore, methods, algorithms, and what they import).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[dev]')")
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=cwd, capture_output=True, text=True, timeout=1200)


def test_mypy_is_clean_on_the_public_packages():
    proc = _mypy("--config-file", str(ROOT / "pyproject.toml"))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout


def test_mypy_sees_a_planted_error(tmp_path):
    # the control: the same configuration on a file with a type error fails, so a clean run means something
    (tmp_path / "planted.py").write_text("def f(x: int) -> str:\n    return x\n", encoding="utf-8")
    proc = _mypy(
        "--config-file", str(ROOT / "pyproject.toml"), "--no-incremental", str(tmp_path / "planted.py"), cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Incompatible return value type" in proc.stdout
