"""The pytest plugin: claims are tests named by claim id, in projects that opt in, and nowhere else."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fedtheory.claims.core import derive_seed

CLAIMS = '''
from pathlib import Path
from fedtheory.claims.core import claim

HERE = Path(__file__).parent
with open(HERE / "imports.log", "a") as fh:  # each import of this file leaves a line
    fh.write(__name__ + "\\n")

@claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
def lemma_1(ctx):
    (HERE / "seed.log").write_text(str(ctx.seed))
    return ctx.verified(measured={"ratio": 0.5})

@claim(id="demo/lemma-2", ref="Lemma 2", title="t", statement="s", kind="numeric")
def lemma_2(ctx):
    return ctx.refuted(measured={"worst_ratio": 3.25}, counterexample={"n": 2}, notes="step 4 of the proof fails")

@claim(id="demo/lemma-3", ref="Lemma 3", title="t", statement="s", kind="numeric", requires=("cuda",))
def lemma_3(ctx):
    return ctx.verified()

@claim(id="demo/lemma-4", ref="Lemma 4", title="t", statement="s", kind="numeric", tier="full")
def lemma_4(ctx):
    return ctx.verified()

@claim(id="demo/theorem-1", ref="Theorem 1", title="t", statement="s", kind="numeric", expect="refuted")
def theorem_1(ctx):
    return ctx.refuted(counterexample={"x": 1.0})

@claim(id="demo/theorem-2", ref="Theorem 2", title="t", statement="s", kind="numeric")
def theorem_2(ctx):
    raise ValueError("hypothesis mu <= L violated: mu=2, L=1")

def test_not_a_test():
    raise AssertionError("content files are not test modules")
'''

VERIFY = '''
from fedtheory.claims.core import claim

@claim(id="verify/zoo/rate", ref="-", title="t", statement="s", kind="simulation")
def rate(ctx):
    return ctx.verified()
'''


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / "paper_checks").mkdir()
    (tmp_path / "paper_checks" / "demo.py").write_text(CLAIMS)
    (tmp_path / "paper_checks" / "_helpers.py").write_text("raise RuntimeError('not content')\n")
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "zoo.py").write_text(VERIFY)
    (tmp_path / "verify" / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    (tmp_path / "other").mkdir()  # not named in [tool.fedtheory]: ignored by the plugin
    (tmp_path / "other" / "stray.py").write_text(VERIFY.replace("verify/zoo/rate", "other/lemma-1"))
    (tmp_path / "pyproject.toml").write_text('[tool.fedtheory]\npaths = ["paper_checks", "verify"]\n')
    return tmp_path


PLUGIN = ("-p", "fedtheory.claims.pytest_plugin")


def run_pytest(repo: Path, *args: str, opt_in: bool = True) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """pytest in ``repo`` (``opt_in``: with the plugin asked for on the command line), outcomes by test name."""
    env = {**os.environ, "FEDTHEORY_DISABLE": "cuda"}  # the demo's cuda claim is skipped on every machine
    # `no:fedtheory` masks the pytest11 entry point an environment installed from fedtheory 0.1.0 may still
    # list, so this runs as a fresh install does (the wheel test checks the distribution declares none).
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:fedtheory", "-rA", "-v"]
    proc = subprocess.run(
        [*command, *(PLUGIN if opt_in else ()), *args], cwd=repo, capture_output=True, text=True, timeout=120, env=env
    )
    outcomes = {
        m.group(1): m.group(2) for m in re.finditer(r"^\S+::(\S+) (PASSED|FAILED|SKIPPED|ERROR)", proc.stdout, re.M)
    }
    return proc, outcomes


def test_claims_are_tests_named_by_id(repo):
    proc, outcomes = run_pytest(repo, "paper_checks", "verify", "other")
    assert outcomes == {
        "demo/lemma-1": "PASSED",
        "demo/lemma-2": "FAILED",
        "demo/lemma-3": "SKIPPED",
        "demo/theorem-1": "PASSED",
        "demo/theorem-2": "FAILED",
        "verify/zoo/rate": "PASSED",
        "test_plain": "PASSED",
    }, proc.stdout
    assert proc.returncode == 1
    assert "1 deselected" in proc.stdout  # the full-tier claim under the fast tier
    # Readable failure: status, measured values, counterexample, notes; no plugin traceback.
    assert "demo/lemma-2 (Lemma 2): expected verified, got refuted" in proc.stdout
    assert '"worst_ratio": 3.25' in proc.stdout and "step 4 of the proof fails" in proc.stdout
    assert "ValueError: hypothesis mu <= L violated" in proc.stdout
    assert "cuda: disabled by FEDTHEORY_DISABLE" in proc.stdout
    assert (repo / "paper_checks" / "seed.log").read_text() == str(derive_seed(0, "demo/lemma-1"))
    # Same store as `fedtheory check`: the counterexample of the claim expected refuted is kept.
    stored = json.loads((repo / "paper_checks" / "counterexamples" / "demo" / "theorem-1.json").read_text())
    assert stored["counterexample"] == {"x": 1.0}
    assert len((repo / "paper_checks" / "imports.log").read_text().splitlines()) == 1


def test_full_tier_and_seed_options(repo):
    proc, outcomes = run_pytest(
        repo, "paper_checks", "--fedtheory-tier", "full", "--fedtheory-seed", "5", "-k", "lemma-1 or lemma-4"
    )
    assert outcomes == {"demo/lemma-1": "PASSED", "demo/lemma-4": "PASSED"}, proc.stdout
    assert proc.returncode == 0
    assert (repo / "paper_checks" / "seed.log").read_text() == str(derive_seed(5, "demo/lemma-1"))
    assert "fedtheory: tier=full seed=5" in proc.stdout


def test_content_file_named_explicitly_is_not_imported_as_a_test_module(repo):
    proc, outcomes = run_pytest(repo, "paper_checks/demo.py::demo/lemma-1", "paper_checks/demo.py")
    assert "test_not_a_test" not in outcomes and "content files are not test modules" not in proc.stdout
    assert outcomes["demo/lemma-1"] == "PASSED"
    assert len((repo / "paper_checks" / "imports.log").read_text().splitlines()) == 1


def test_broken_content_file_is_a_collection_error(repo):
    (repo / "verify" / "broken.py").write_text(
        textwrap.dedent('''
        from fedtheory.claims.core import claim
        import nosuchmodule_xyz
    ''')
    )
    proc, _ = run_pytest(repo, "verify")
    assert proc.returncode != 0
    assert "cannot load" in proc.stdout and "nosuchmodule_xyz" in proc.stdout


def test_without_opt_in_the_plugin_imports_nothing(repo):
    """An unrelated project with verify/ and paper_checks/ folders: its files are neither imported nor collected."""
    proc, outcomes = run_pytest(repo, opt_in=False)
    assert outcomes == {"test_plain": "PASSED"}, proc.stdout
    assert proc.returncode == 0
    assert not (repo / "paper_checks" / "imports.log").exists()
    assert "fedtheory:" not in proc.stdout


def test_own_claims_file_anywhere_with_fedtheory_paths(tmp_path):
    """A new user's claims, under any file name and folder, named in their pytest configuration."""
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "my_paper.py").write_text(VERIFY.replace("verify/zoo/rate", "mine/lemma-1"))
    (tmp_path / "checks" / "_helper.py").write_text("raise RuntimeError('a helper is not a claim file')\n")
    (tmp_path / "verify").mkdir()  # not named in fedtheory_paths: not collected
    (tmp_path / "verify" / "zoo.py").write_text(CLAIMS)
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent('''
        [tool.pytest.ini_options]
        addopts = ["-p", "fedtheory.claims.pytest_plugin"]
        fedtheory_paths = ["checks"]
    ''')
    )
    proc, outcomes = run_pytest(tmp_path, "checks", "verify", opt_in=False)
    assert outcomes == {"mine/lemma-1": "PASSED"}, proc.stdout
    assert proc.returncode == 0
    assert not (tmp_path / "verify" / "imports.log").exists()
    assert "claims from " + str(tmp_path / "checks") in proc.stdout


def test_opt_in_through_conftest(tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["fedtheory.claims.pytest_plugin"]\n')
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "zoo.py").write_text(VERIFY)
    (tmp_path / "pyproject.toml").write_text('[tool.fedtheory]\npaths = ["verify"]\n')
    proc, outcomes = run_pytest(tmp_path, opt_in=False)
    assert outcomes == {"verify/zoo/rate": "PASSED"}, proc.stdout


def test_plugin_loaded_without_named_paths_imports_nothing(repo):
    """The plugin asked for but no claim paths named anywhere: a verify/ or paper_checks/ folder is not imported."""
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    proc, outcomes = run_pytest(repo, "paper_checks", "verify", "other")
    assert outcomes == {"test_plain": "PASSED"}, proc.stdout
    assert proc.returncode == 0
    assert not (repo / "paper_checks" / "imports.log").exists()
    assert "no claim paths: name them in [tool.fedtheory] paths" in proc.stdout


def test_tool_fedtheory_table_names_a_claim_file(tmp_path):
    """A project's `[tool.fedtheory]` table naming claims/mine.py: that file, and nothing else, is collected."""
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "mine.py").write_text(VERIFY.replace("verify/zoo/rate", "mine/lemma-1"))
    (tmp_path / "claims" / "other.py").write_text(CLAIMS)  # same folder, not named: not imported
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "zoo.py").write_text(CLAIMS)
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent('''
        [tool.pytest.ini_options]
        addopts = ["-p", "fedtheory.claims.pytest_plugin"]

        [tool.fedtheory]
        paths = ["claims/mine.py"]
    ''')
    )
    (tmp_path / "sub").mkdir()  # run from a subfolder: the table's paths are relative to its pyproject.toml
    proc, outcomes = run_pytest(tmp_path / "sub", "..", opt_in=False)
    assert outcomes == {"mine/lemma-1": "PASSED"}, proc.stdout
    assert proc.returncode == 0
    assert not (tmp_path / "claims" / "imports.log").exists() and not (tmp_path / "verify" / "imports.log").exists()
    assert "claims from " + str(tmp_path / "claims" / "mine.py") in proc.stdout


def test_flag_overrides_ini_option_which_overrides_table(repo):
    (repo / "pytest.ini").write_text("[pytest]\nfedtheory_paths = paper_checks/demo.py\n")
    proc, outcomes = run_pytest(repo, "paper_checks", "verify", "other", "-k", "lemma-1 or rate")
    assert outcomes == {"demo/lemma-1": "PASSED"}, proc.stdout  # the ini option, not the table's verify/
    (repo / "paper_checks" / "imports.log").unlink()
    proc, outcomes = run_pytest(
        repo,
        "paper_checks",
        "verify",
        "other",
        "-k",
        "lemma-1 or rate",
        "--fedtheory-paths",
        "other",
        "--fedtheory-paths=verify/zoo.py",
    )
    assert outcomes == {"other/lemma-1": "PASSED", "verify/zoo/rate": "PASSED"}, proc.stdout
    assert not (repo / "paper_checks" / "imports.log").exists()
    proc, outcomes = run_pytest(repo, "other", "--fedtheory-paths", "other,verify/zoo.py", "-k", "lemma-1 or rate")
    assert outcomes == {"other/lemma-1": "PASSED"}, proc.stdout


def test_table_paths_not_a_list_of_strings_is_one_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.fedtheory]\npaths = "claims"\n')
    proc, _ = run_pytest(tmp_path)
    assert proc.returncode != 0
    assert "[tool.fedtheory] paths in " in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_fedtheory_paths_naming_nothing_is_one_line(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nfedtheory_paths = no/such/claims.py\n")
    proc, _ = run_pytest(tmp_path)
    assert proc.returncode != 0
    assert "fedtheory_paths: path does not exist: " in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
