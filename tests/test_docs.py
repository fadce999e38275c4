"""The documentation site builds with warnings as errors, and its command-line reference covers every command.

Needs the docs tool chain (``pip install -e ".[docs]"``, also in ``[dev]``); the tutorials' code is run by
tests/test_readme_tutorials.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("sphinx", reason="the docs extra is not installed")
    pytest.importorskip("myst_parser", reason="the docs extra is not installed")
    out = tmp_path_factory.mktemp("docs")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-E",
            "-q",
            "-b",
            "html",
            str(ROOT / "docs"),
            str(out / "html"),
            "-d",
            str(out / "doctrees"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, f"sphinx -W failed:\n{build.stdout[-3000:]}\n{build.stderr[-5000:]}"
    return out / "html"


def test_docs_build_without_warnings(site):
    for page in (
        "index",
        "quickstart",
        "concepts",
        "cli",
        "api",
        "tutorials/check-a-paper",
        "tutorials/methods-as-data",
        "tutorials/your-federation",
        "guide/new-paper",
        "guide/pytest",
        "changelog",
        "contributing",
    ):
        assert (site / f"{page}.html").is_file(), page


def test_cli_reference_is_generated_from_the_parser(site):
    from fedtheory.cli import build_parser

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from cli_reference import commands
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    page = (site / "cli.html").read_text(encoding="utf-8")
    lines = [line for line, _ in commands(build_parser())]
    assert {"fedtheory check", "fedtheory figures", "fedtheory explore certify", "fedtheory report"} <= set(lines)
    missing = [line for line in lines if f"usage: {line}" not in page]
    assert not missing, f"commands missing from the command-line reference: {missing}"
    assert "--list" in page


def test_methods_tutorial_includes_the_readme_section(site):
    page = (site / "tutorials" / "methods-as-data.html").read_text(encoding="utf-8")
    assert "relaxed_fedsplit" in page and "Speed against what a user would write instead" not in page
