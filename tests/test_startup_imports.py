"""The command line imports only what a command uses (issue 23: start-up within half a second of CPU).

Each command runs in a fresh interpreter (``fedtheory.cli.main``, as the console script calls it) and reports the
modules it imported. Not a timing test: the heavy libraries — torch (seconds), cvxpy and PEPit (the certificates),
matplotlib (plots), Dask (clusters) — must not be loaded by a command that does not use them, and ``--help`` loads
not even numpy. The control runs a command that does use one (``--plot`` draws with matplotlib), so the reading
of the interpreter's modules is shown to see a heavy import when there is one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: never loaded unless the command uses them
HEAVY = ("torch", "cvxpy", "PEPit", "matplotlib", "dask", "distributed")
#: the issue's example (the d >= 2 advice, with the probe's lower bound: its Nelder–Mead is fedtheory's own, so not
#: even scipy is loaded — scipy.optimize alone costs about 0.7 s of CPU, more than the whole command may take)
TUNE = ["explore", "tune", "fedavg", "--mu", "1", "--L", "100", "--C", "0.1", "--D", "10", "--rounds", "50"]


def imported_after(argv: list[str], tmp_path: Path) -> set[str]:
    """Top-level names of the packages a fresh interpreter has imported after ``fedtheory.cli.main(argv)``."""
    program = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from fedtheory.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main({argv!r})
        print(json.dumps({{"code": code, "modules": sorted({{m.split(".")[0] for m in sys.modules}})}}))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["code"] == 0, out.stderr
    return set(doc["modules"])


def test_help_loads_no_numerical_library(tmp_path):
    loaded = imported_after(["--help"], tmp_path)
    assert "fedtheory" in loaded
    absent = {*HEAVY, "numpy", "scipy", "sympy", "rich"}
    assert not loaded & absent, sorted(loaded & absent)


@pytest.mark.parametrize(
    "argv, also_absent",
    [
        (TUNE, ("scipy", "sympy", "array_api_compat")),
        (TUNE + ["--clients", "2", "--json", "out.json"], ("scipy", "sympy", "array_api_compat")),
        (
            ["explore", "tune", "fomaml", "--mu", "1", "--L", "100", "--C", "0.1", "--D", "10", "--eps", "0.5"],
            ("scipy", "sympy", "array_api_compat"),
        ),
        (TUNE + ["--class", "d1"], ("scipy", "sympy", "array_api_compat")),  # no probe
        (["explore", "frontier", "--mu", "1", "--L", "100"], ("scipy", "sympy", "array_api_compat")),
    ],
    ids=["tune", "tune-clients-json", "tune-fomaml-eps", "tune-d1", "frontier"],
)
def test_explore_commands_load_only_what_they_use(argv, also_absent, tmp_path):
    loaded = imported_after(argv, tmp_path)
    assert "numpy" in loaded
    assert not loaded & {*HEAVY, *also_absent}, sorted(loaded & {*HEAVY, *also_absent})


def test_control_a_command_that_plots_is_seen_loading_matplotlib(tmp_path):
    loaded = imported_after(TUNE + ["--class", "d1", "--plot", str(tmp_path / "tune.png")], tmp_path)
    assert "matplotlib" in loaded and (tmp_path / "tune.png").exists()
