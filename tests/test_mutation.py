"""The mutation runner (benchmarks/mutation.py): its mutants stay applicable, and a mutant is caught by the claims."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _runner():
    spec = importlib.util.spec_from_file_location("fedtheory_mutation_runner", ROOT / "benchmarks" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", [m.name for m in _runner().MUTANTS])
def test_every_mutant_applies_to_the_current_tree_exactly_once(name, tmp_path):
    runner = _runner()
    mutant = next(m for m in runner.MUTANTS if m.name == name)
    target = tmp_path / mutant.file
    target.parent.mkdir(parents=True)
    target.write_text((ROOT / mutant.file).read_text(encoding="utf-8"), encoding="utf-8")
    runner.apply(mutant, tmp_path)
    assert target.read_text(encoding="utf-8") != (ROOT / mutant.file).read_text(encoding="utf-8")


def _ruff_format(text: str, name: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", name, "-"],
        cwd=ROOT,
        input=text,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_every_mutant_survives_ruff_format(tmp_path):
    """Formatted with the project's `ruff format` settings, each file still takes its mutant once, and the mutated
    program is the mutated original's, formatted: the mutants do not pin the source's layout."""
    pytest.importorskip("ruff", reason="ruff is not installed (pip install -e '.[dev]')")
    runner = _runner()
    for mutant in runner.MUTANTS:
        original = (ROOT / mutant.file).read_text(encoding="utf-8")
        target = tmp_path / mutant.name / mutant.file
        target.parent.mkdir(parents=True)
        target.write_text(_ruff_format(original, mutant.file), encoding="utf-8")
        runner.apply(mutant, tmp_path / mutant.name)
        expected = _ruff_format(original.replace(mutant.find, mutant.replace), mutant.file)
        assert _ruff_format(target.read_text(encoding="utf-8"), mutant.file) == expected, mutant.name


def test_a_mutant_whose_text_is_gone_does_not_apply(tmp_path):
    # the control: formatting-insensitive matching still refuses a text that is not there (a changed operator)
    runner = _runner()
    (tmp_path / "a.py").write_text("y = f(\n    a + b,\n)\n", encoding="utf-8")
    with pytest.raises(ValueError, match="occurs 0 times"):
        runner.apply(runner.Mutant("m", "demo", "a.py", "f(a - b)", "f(a * b)", (), "why"), tmp_path)
    (tmp_path / "a.py").write_text("y = f(a + b) + f(a+b)\n", encoding="utf-8")
    with pytest.raises(ValueError, match="occurs 2 times"):
        runner.apply(runner.Mutant("m", "demo", "a.py", "f(a + b)", "f(a * b)", (), "why"), tmp_path)


def test_a_probe_that_stops_searching_is_caught_by_a_claim():
    runner = _runner()
    mutant = next(m for m in runner.MUTANTS if m.name == "probe-stops-after-first-evaluation")
    (record,) = runner.run_mutants((mutant,), timeout=300)
    assert record["baseline_exit"] == 0
    assert record["caught"], record["failures"]
    assert "verify/probes/search-finds-planted-violation" in record["failures"]


#: the claim engine's, the report diff's and the explorer's mutants: their killing claims (verify/engine.py) take
#: seconds, so CI runs them all; the certificate mutants (verify/spectral_closed_forms.py, a minute each) run on
#: demand: python benchmarks/mutation.py --mutant spectral-heavy-ball-momentum-sign
FAST_MUTANTS = (
    "method-guarantee-default-class",
    "engine-crashed-control-fires",
    "engine-mixed-readings-refuted",
    "engine-nan-guard-only-on-refuted",
    "report-diff-drops-regressions",
)


def test_engine_report_and_explorer_mutants_are_caught_by_the_engine_claims():
    runner = _runner()
    mutants = tuple(m for m in runner.MUTANTS if m.name in FAST_MUTANTS)
    assert len(mutants) == len(FAST_MUTANTS)
    records = runner.run_mutants(mutants, timeout=300)
    assert all(r["baseline_exit"] == 0 for r in records)
    missed = [r["name"] for r in records if not r["caught"]]
    assert not missed, missed
    assert all(r["failures"].startswith("verify/engine/") for r in records), [r["failures"] for r in records]
