"""The distribution: the wheel carries the papers' content, the sdist carries its tests, the metadata is complete.

The sdist and the wheel are built once per session from a copy of the project (no build isolation: the build
requirements are those of this environment), so the checkout is never written to. With ``--fedtheory-tier full``
the wheel is also installed into a fresh virtual environment, and ``fedtheory check`` and ``fedtheory figures``
run in an empty directory with nothing else of the project present.
"""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import fedtheory
from fedtheory.content import CLAIM_DIRS, FIGURE_DIRS

ROOT = Path(__file__).resolve().parents[1]
NOT_SHIPPED = {
    ".git",
    ".venv",
    "out",
    "build",
    "dist",
    "__pycache__",
    ".pytest_cache",
    ".fedtheory-cache",
    ".hypothesis",
    "_build",
}


def _content_files() -> list[str]:
    """Every file of the checkout's content folders (what the installed package must carry), as posix paths."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for d in CLAIM_DIRS + FIGURE_DIRS
        for p in (ROOT / d).rglob("*")
        if p.is_file() and not NOT_SHIPPED.intersection(p.relative_to(ROOT).parts) and p.suffix != ".pyc"
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """``python -m build`` (sdist, then the wheel from the sdist) on a copy of the project."""
    pytest.importorskip("build", reason="the `build` package is in the dev extra")
    tmp = tmp_path_factory.mktemp("dist")
    copy = tmp / "project"
    shutil.copytree(
        ROOT, copy, ignore=lambda d, names: [n for n in names if n in NOT_SHIPPED or n.endswith(".egg-info")]
    )
    run = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "out"), str(copy)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return tmp / "out"


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_wheel_carries_the_content(dist):
    names = set(zipfile.ZipFile(_one(dist, "*.whl")).namelist())
    expected = _content_files()
    assert any(f.startswith("paper_checks/counterexamples/") for f in expected)  # the store is content too
    missing = [f for f in expected if f"fedtheory/_content/{f}" not in names]
    assert not missing, f"content missing from the wheel: {missing[:10]}"
    extra = sorted(
        n
        for n in names
        if n.startswith("fedtheory/_content/") and n.removeprefix("fedtheory/_content/") not in expected
    )
    assert not extra, f"files in the wheel's content that the checkout does not have: {extra[:10]}"
    assert "fedtheory/schemas/check.schema.json" in names and "fedtheory/explore/page.html" in names


def test_wheel_metadata(dist):
    wheel = zipfile.ZipFile(_one(dist, "*.whl"))
    info = f"fedtheory-{fedtheory.__version__}.dist-info"
    meta = email.message_from_string(wheel.read(f"{info}/METADATA").decode())
    assert meta["Version"] == fedtheory.__version__
    assert meta["License-Expression"] == "MIT" and meta["License-File"] == "LICENSE"
    assert f"{info}/licenses/LICENSE" in wheel.namelist()
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls["Source"] == "https://github.com/fedtheory/fedtheory"
    assert meta["Author"] == "fedtheory developers"
    assert "Programming Language :: Python :: 3.10" in meta.get_all("Classifier")
    entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    # the pytest plugin is opt-in: an entry point would load it in every pytest session of the environment
    assert "pytest11" not in entry_points and "fedtheory = fedtheory.cli:entry" in entry_points


def test_sdist_carries_what_its_tests_need(dist):
    sdist = _one(dist, "*.tar.gz")
    top = sdist.name.removesuffix(".tar.gz")
    names = {n.removeprefix(top + "/") for n in tarfile.open(sdist).getnames()}
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout (an unpacked sdist): nothing to compare with")
    needed = [
        f
        for f in tracked.stdout.splitlines()
        if f.split("/")[0] in ("tests", "paper_checks", "verify", "figures", "benchmarks", "scripts", "docs")
        or f in ("LICENSE", "CHANGELOG.md", "CONTRIBUTING.md", "README.md", "pyproject.toml", "setup.py")
    ]
    missing = [f for f in needed if f not in names]
    assert not missing, f"tracked files missing from the sdist: {missing[:10]}"


def test_installed_wheel_works_in_an_empty_directory(dist, tmp_path, request):
    if request.config.getoption("fedtheory_tier", "fast") != "full":
        pytest.skip("installs the wheel into a fresh environment: run with --fedtheory-tier full")
    # nothing of the checkout may leak in: no PYTHONPATH (pip would also take the checkout for an installed copy)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"OMP_NUM_THREADS": "1"}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120, env=env)
    python = venv / "bin" / "python"
    # the dependencies come from this environment (a .pth line, read after the venv's own site-packages,
    # so the installed wheel wins over this checkout), which keeps the test off the network

    def venv_python(code: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run([str(python), "-c", code], env=env, capture_output=True, text=True, **kw)

    site = venv_python("import sysconfig; print(sysconfig.get_paths()['purelib'])", check=True).stdout.strip()
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(_one(dist, "*.whl"))],
        check=True,
        timeout=300,
        capture_output=True,
        env=env,
    )
    empty = tmp_path / "empty"
    empty.mkdir()

    def fedtheory_cli(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(venv / "bin" / "fedtheory"), *argv], cwd=empty, env=env, capture_output=True, text=True, timeout=900
        )

    where = venv_python("import fedtheory; print(fedtheory.__file__)", cwd=empty)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    check = fedtheory_cli("check", "--claim", "localupdate/lemma-2", "--json", "check.json")
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    assert '"localupdate/lemma-2"' in (empty / "check.json").read_text()
    figures = fedtheory_cli("figures", "--figure", "localupdate/figure-1")
    assert figures.returncode == 0, figures.stdout[-2000:] + figures.stderr[-2000:]
    assert (empty / "out" / "figures" / "localupdate" / "figure-1.json").is_file()
    assert sorted(p.name for p in empty.iterdir()) == ["check.json", "out"]
