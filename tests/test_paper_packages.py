"""A paper's checks as a package split by sections: discovery, loading by path with relative imports, the
inventory in ``__init__``, counterexamples stored beside the package, the pytest plugin's collection."""

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from fedtheory.claims.inventory import inventory_problems
from fedtheory.claims.runner import counterexample_path
from fedtheory.content import discover, is_content_file, load_claims, load_module, module_claims
from fedtheory.report.data import run_inventory

INIT = '''
from pathlib import Path
with open(Path(__file__).with_name("init_runs.log"), "a") as log:   # who ran the __init__, under which name
    log.write(__name__ + "\\n")
from fedtheory.content import discover, load_module, module_claims
PAPER = {"key": "demo", "title": "A demo paper"}
PAPER_LABELS = ("Lemma 1", "Theorem 1")
_CLAIMS = [c for s in discover([str(Path(__file__).parent)], ()) for c in module_claims(load_module(s))]
INVENTORY = {label: sorted(c.id for c in _CLAIMS if c.ref == label) for label in PAPER_LABELS}
'''
COMMON = '''
LOADS = []
LOADS.append(1)
def bound(x):
    return 2 * x
'''
LEMMAS = '''
from fedtheory.claims.core import claim
from ._common import bound
@claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
def lemma_1(ctx):
    return ctx.decide(bound(1) == 2, measured={"bound": bound(1)})
'''
THEOREMS = '''
from fedtheory.claims.core import claim
from ._common import LOADS, bound
from .lemmas import lemma_1   # a section may use another's names; the claim stays the lemmas' own
@claim(id="demo/theorem-1", ref="Theorem 1", title="t", statement="s", kind="numeric", expect="refuted")
def theorem_1(ctx):
    return ctx.refuted(counterexample={"x": 1}, measured={"loads_of_common": len(LOADS)})
'''


def make_package(root: Path) -> Path:
    package = root / "paper_checks" / "demo"
    package.mkdir(parents=True)
    for name, text in (("__init__.py", INIT), ("_common.py", COMMON), ("lemmas.py", LEMMAS), ("theorems.py", THEOREMS)):
        (package / name).write_text(textwrap.dedent(text))
    return package


def test_sections_are_content_and_helpers_are_not(tmp_path):
    package = make_package(tmp_path)
    assert [p.name for p in discover([str(tmp_path / "paper_checks")], ())] == ["lemmas.py", "theorems.py"]
    assert is_content_file(package / "lemmas.py")
    assert not is_content_file(package / "_common.py") and not is_content_file(package / "__init__.py")


def test_relative_imports_work_and_a_helper_runs_once(tmp_path):
    package = make_package(tmp_path)
    claims = {c.id: c for c in load_claims([str(tmp_path / "paper_checks")])}
    assert sorted(claims) == ["demo/lemma-1", "demo/theorem-1"]  # lemma_1 imported by theorems is not counted twice
    assert Path(claims["demo/theorem-1"].source) == (package / "theorems.py").resolve()
    assert load_module(package / "_common.py").LOADS == [1]
    assert module_claims(load_module(package / "theorems.py"))[0].id == "demo/theorem-1"


def test_inventory_and_counterexamples_live_at_the_package(tmp_path):
    package = make_package(tmp_path)
    claims = load_claims([str(tmp_path / "paper_checks")])
    assert inventory_problems(package) == []
    assert run_inventory(claims) == {"demo": {"Lemma 1": ["demo/lemma-1"], "Theorem 1": ["demo/theorem-1"]}}
    theorem = next(c for c in claims if c.id == "demo/theorem-1")
    assert (
        counterexample_path(theorem)
        == (tmp_path / "paper_checks" / "counterexamples" / "demo" / "theorem-1.json").resolve()
    )


def test_check_and_pytest_run_the_sections(tmp_path, run_cli):
    make_package(tmp_path)
    run = run_cli("check", "--json", "out.json", cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    statuses = {c["id"]: c["status"] for c in json.loads((tmp_path / "out.json").read_text())["claims"]}
    assert statuses == {"demo/lemma-1": "verified", "demo/theorem-1": "refuted"}
    assert (tmp_path / "paper_checks" / "counterexamples" / "demo" / "theorem-1.json").is_file()
    # the plugin asked for as tests/test_pytest_plugin.py does (`no:fedtheory` masks an old entry point), the
    # folder named as its claim paths
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:fedtheory",
            "-p",
            "fedtheory.claims.pytest_plugin",
            "--fedtheory-paths",
            "paper_checks",
            "-rA",
            "-v",
            "paper_checks",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.findall(r"::(\S+) PASSED", run.stdout) == ["demo/lemma-1", "demo/theorem-1"], run.stdout
    # pytest collects the package as a plain directory: it never imports the __init__ as a top-level module "demo"
    log = tmp_path / "paper_checks" / "demo" / "init_runs.log"
    assert "demo" not in (log.read_text().split() if log.exists() else [])
