"""The repository is ruff-clean under the rules configured in pyproject.toml (issue 26); skipped without ruff."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    if shutil.which("ruff"):
        return ["ruff"]
    try:
        import ruff  # noqa: F401
    except ImportError:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    return [sys.executable, "-m", "ruff"]


def test_ruff_check_is_clean():
    proc = subprocess.run(_ruff() + ["check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_check_sees_a_planted_finding(tmp_path):
    # the control: the same command on a file with an unused import fails, so a clean run means something
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "planted.py").write_text("import os\n")
    proc = subprocess.run(
        _ruff() + ["check", "--no-cache", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1 and "F401" in proc.stdout


def test_ruff_format_is_applied():
    proc = subprocess.run(
        _ruff() + ["format", "--check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_format_sees_a_planted_misformatting(tmp_path):
    # the control: an unformatted file fails the same command
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "planted.py").write_text("x = {  'a':1 }\n")
    proc = subprocess.run(
        _ruff() + ["format", "--check", "--no-cache", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1 and "planted.py" in proc.stdout
