"""The claim engine: verdicts, counterexample store and replay, errors, skips, expect, seeds, inventory."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from fedtheory.claims.core import Claim, derive_seed
from fedtheory.claims.inventory import check_inventory, inventory_problems
from fedtheory.claims.runner import Report, counterexample_path, key_measured, run_claim, run_claims
from fedtheory.content import UsageError, discover, load_claims, load_figures, load_inventory, select, select_figures
from fedtheory.environment import capabilities, environment, missing_requirements

HEADER = "from pathlib import Path\nfrom fedtheory.claims.core import claim\nHERE = Path(__file__).parent\n"


def write_content(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(HEADER + textwrap.dedent(body))
    return path


def bump(path: Path) -> None:
    """Count calls in a file (tests assert on it)."""
    path.write_text(str(int(path.read_text()) + 1 if path.exists() else 1))


FALSE_CLAIM = '''
@claim(id="demo/lemma-1", ref="Lemma 1", title="x^2 <= x on [0, 2]", statement="$x^2 \\\\le x$ for $x \\\\in [0, 2]$",
       kind="numeric", expect="{expect}")
def lemma_1(ctx):
    calls = HERE / "check_calls"
    calls.write_text(str(int(calls.read_text()) + 1 if calls.exists() else 1))
    xs = ctx.rng.uniform(0, 2, size=1000)
    worst = float(xs[(xs ** 2 - xs).argmax()])
    return ctx.decide(worst ** 2 <= worst, measured={{"worst_x": worst}}, counterexample={{"x": worst}})

@lemma_1.replayer
def _replay(cex, ctx):
    from fractions import Fraction
    (HERE / "replay_called").write_text("yes")
    x = Fraction(cex["x"])  # exact arithmetic: no float artefact
    return ctx.decide(x * x <= x, measured={{"exact_excess": float(x * x - x)}})
'''


def test_false_claim_is_refuted_stored_and_replayed_first(tmp_path):
    path = write_content(tmp_path / "paper_checks", "demo.py", FALSE_CLAIM.format(expect="verified"))
    [c] = load_claims([str(path)])
    first = run_claims([c], progress=False)
    rec = first.records[0]
    assert rec["status"] == "refuted" and not rec["passed"] and first.exit_code == 1
    stored_path = tmp_path / "paper_checks" / "counterexamples" / "demo" / "lemma-1.json"
    assert counterexample_path(c) == stored_path
    stored = json.loads(stored_path.read_text())
    assert stored["id"] == "demo/lemma-1"
    assert stored["seed"] == derive_seed(0, "demo/lemma-1")
    assert stored["counterexample"]["x"] > 1
    assert not (tmp_path / "paper_checks" / "replay_called").exists()
    assert (tmp_path / "paper_checks" / "check_calls").read_text() == "1"

    second = run_claims([c], progress=False)
    rec2 = second.records[0]
    assert (tmp_path / "paper_checks" / "replay_called").read_text() == "yes"
    assert (tmp_path / "paper_checks" / "check_calls").read_text() == "1", "the full check must not rerun"
    assert rec2["status"] == "refuted"
    assert rec2["evidence"]["notes"].startswith("replayed stored counterexample")
    assert rec2["evidence"]["counterexample"] == stored["counterexample"]
    assert rec2["evidence"]["measured"]["exact_excess"] > 0


def test_replay_that_no_longer_refutes_runs_full_check(tmp_path):
    path = write_content(tmp_path / "paper_checks", "demo.py", FALSE_CLAIM.format(expect="refuted"))
    [c] = load_claims([str(path)])
    store = counterexample_path(c)
    store.parent.mkdir(parents=True)
    store.write_text(json.dumps({"id": c.id, "seed": 0, "counterexample": {"x": 0.5}}))
    rec = run_claims([c], progress=False).records[0]
    assert (tmp_path / "paper_checks" / "replay_called").exists()
    assert (tmp_path / "paper_checks" / "check_calls").read_text() == "1"
    assert rec["status"] == "refuted" and rec["passed"]
    assert "no longer refutes" in rec["evidence"]["notes"]
    assert json.loads(store.read_text())["counterexample"]["x"] > 1, "the fresh counterexample replaces the stale one"


def test_counterexample_storing_policy(tmp_path):
    path = write_content(tmp_path / "paper_checks", "demo.py", FALSE_CLAIM.format(expect="verified"))
    [c] = load_claims([str(path)])
    run_claim(c, store_counterexamples=False)
    assert not counterexample_path(c).exists(), "unexpected refutations are stored only when allowed"
    c.expect = "refuted"
    assert run_claim(c, store_counterexamples=False)["passed"]
    assert counterexample_path(c).exists(), "claims expected refuted always keep their counterexample"


def test_crashing_check_is_error_and_fails_the_run(tmp_path):
    path = write_content(
        tmp_path / "verify",
        "crash.py",
        '''
        @claim(id="verify/crash/divide", ref="-", title="t", statement="s", kind="numeric")
        def divide(ctx):
            return 1 / 0

        @claim(id="verify/crash/not-evidence", ref="-", title="t", statement="s", kind="numeric")
        def not_evidence(ctx):
            return True
    ''',
    )
    report = run_claims(load_claims([str(path)]), progress=False)
    by_id = {r["id"]: r for r in report.records}
    assert by_id["verify/crash/divide"]["status"] == "error"
    assert "ZeroDivisionError: division by zero" in by_id["verify/crash/divide"]["evidence"]["notes"]
    assert "not Evidence" in by_id["verify/crash/not-evidence"]["evidence"]["notes"]
    assert by_id["verify/crash/not-evidence"]["status"] == "error"
    assert report.exit_code == 1 and report.summary["error"] == 2 and not report.summary["passed"]


def test_crashing_replay_is_error(tmp_path):
    path = write_content(
        tmp_path / "paper_checks",
        "demo.py",
        '''
        @claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric", expect="refuted")
        def lemma_1(ctx):
            return ctx.refuted(counterexample={"x": 1})

        @lemma_1.replayer
        def _(cex, ctx):
            raise RuntimeError("replay broke")
    ''',
    )
    [c] = load_claims([str(path)])
    assert run_claim(c)["status"] == "refuted"
    rec = run_claim(c)
    assert rec["status"] == "error" and not rec["passed"]
    assert "RuntimeError: replay broke" in rec["evidence"]["notes"]


def test_missing_requirement_is_skipped_and_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDTHEORY_DISABLE", "cuda")
    path = write_content(
        tmp_path / "paper_checks",
        "demo.py",
        '''
        @claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric",
               requires=("cuda",))
        def lemma_1(ctx):
            raise AssertionError("must not run")

        @claim(id="demo/lemma-2", ref="Lemma 2", title="t", statement="s", kind="numeric")
        def lemma_2(ctx):
            return ctx.verified()
    ''',
    )
    report = run_claims(load_claims([str(path)]), progress=False)
    rec = report.records[0]
    assert rec["status"] == "skipped" and rec["passed"]
    assert "cuda: disabled by FEDTHEORY_DISABLE" in rec["evidence"]["notes"]
    assert report.exit_code == 0 and report.summary["skipped"] == 1 and report.summary["verified"] == 1


def test_skipped_by_the_check_itself_is_not_a_pass(tmp_path):
    path = write_content(
        tmp_path / "paper_checks",
        "demo.py",
        '''
        @claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
        def lemma_1(ctx):
            return ctx.evidence("skipped", notes="gave up")
    ''',
    )
    report = run_claims(load_claims([str(path)]), progress=False)
    assert report.records[0]["status"] == "skipped" and report.exit_code == 1


@pytest.mark.parametrize("status", ["inconclusive", "vacuous"])
def test_inconclusive_fails_and_vacuous_needs_expect(tmp_path, status):
    path = write_content(
        tmp_path / "paper_checks",
        "demo.py",
        f'''
        @claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
        def lemma_1(ctx):
            return ctx.{status}()
    ''',
    )
    assert run_claims(load_claims([str(path)]), progress=False).exit_code == 1


EXPECT_REFUTED = '''
@claim(id="demo/theorem-2", ref="Theorem 2", title="t", statement="s", kind="numeric", expect="refuted")
def theorem_2(ctx):
    if (HERE / "still_broken").exists():
        return ctx.refuted(measured={"ratio": 2.0}, counterexample={"n": 1})
    return ctx.verified(measured={"ratio": 0.5})
'''


def test_expect_refuted_passes_only_while_refutation_holds(tmp_path):
    path = write_content(tmp_path / "paper_checks", "demo.py", EXPECT_REFUTED)
    (tmp_path / "paper_checks" / "still_broken").write_text("")
    claims = load_claims([str(path)])
    report = run_claims(claims, progress=False)
    assert report.records[0]["status"] == "refuted" and report.exit_code == 0
    (tmp_path / "paper_checks" / "still_broken").unlink()  # the paper got fixed: CI must notice
    report = run_claims(claims, progress=False)
    assert report.records[0]["status"] == "verified" and report.exit_code == 1


SEEDED = '''
@claim(id="demo/lemma-{i}", ref="Lemma {i}", title="t", statement="s", kind="numeric")
def lemma_{i}(ctx):
    return ctx.verified(measured={{"draws": ctx.rng.normal(size=3).tolist(), "seed": ctx.seed}})
'''


def test_seeds_are_derived_per_claim_and_reproducible(tmp_path):
    path = write_content(tmp_path / "paper_checks", "demo.py", SEEDED.format(i=1) + SEEDED.format(i=2))
    claims = load_claims([str(path)])
    a = [r["evidence"]["measured"] for r in run_claims(claims, seed=3, progress=False).records]
    b = [r["evidence"]["measured"] for r in run_claims(claims[::-1], seed=3, progress=False).records][::-1]
    c = [r["evidence"]["measured"] for r in run_claims(claims, seed=4, progress=False).records]
    assert a == b, "order of the run does not change a claim's numbers"
    assert a[0]["seed"] == derive_seed(3, "demo/lemma-1")
    assert a[0]["draws"] != a[1]["draws"] and a[0]["draws"] != c[0]["draws"]


def test_report_json_summary_and_table(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDTHEORY_DISABLE", "cuda")
    from rich.console import Console

    from fedtheory.schemas import validate

    path = write_content(
        tmp_path / "paper_checks",
        "demo.py",
        EXPECT_REFUTED
        + '''
@claim(id="demo/lemma-9", ref="Lemma 9", title="t", statement="s", kind="numeric", requires=("cuda",))
def lemma_9(ctx):
    return ctx.verified()
''',
    )
    report = run_claims(load_claims([str(path)]), progress=False)
    data = report.to_json()
    validate(json.loads(json.dumps(data)), "check")
    assert (
        data["summary"]["verified"] == 1
        and data["summary"]["skipped"] == 1
        and data["summary"]["failed"] == ["demo/theorem-2"]
    )
    assert data["environment"]["packages"]["numpy"] and data["environment"]["seed"] == 0
    assert data["claims"][0]["executor"]["kind"] == "local"
    console = Console(record=True, width=160)
    report.render_table(console)
    text = console.export_text()
    assert "demo/theorem-2" in text and "FAILED" in text and "skipped:" in text and "FEDTHEORY_DISABLE" in text
    assert "ratio=0.5" in text


def test_key_measured_and_empty_report():
    assert key_measured({}) == ""
    assert key_measured({"n": 3}) == "n=3"
    assert Report([], environment={}, seconds=0.0).exit_code == 0


def test_claim_without_source_runs_inline_but_not_in_workers():
    c = Claim(
        id="demo/lemma-5", ref="Lemma 5", title="t", statement="s", kind="numeric", check=lambda ctx: ctx.verified()
    )
    assert run_claims([c], progress=False).records[0]["status"] == "verified"
    with pytest.raises(UsageError, match="without a content file"):
        run_claims([c], workers=2, progress=False)


def test_selection_errors_and_filters(tmp_path):
    path = write_content(
        tmp_path / "paper_checks",
        "demo.py",
        SEEDED.format(i=1)
        + '''
@claim(id="other/theorem-1", ref="Theorem 1", title="t", statement="s", kind="numeric", tier="full")
def theorem_1(ctx):
    return ctx.verified()
''',
    )
    claims = load_claims([str(path)])
    assert [c.id for c in select(claims)] == ["demo/lemma-1"]
    assert [c.id for c in select(claims, tier="full")] == ["demo/lemma-1", "other/theorem-1"]
    for bad, message in [
        ({"paper": "x"}, r"unknown paper 'x' \(known: demo, other\)"),
        ({"tier": "warp"}, "unknown tier 'warp' \\(choose fast or full\\)"),
        ({"claim_glob": "demo/theorem-*"}, "no claim matches"),
        ({"claim_glob": "other/*"}, "only full-tier"),
    ]:
        with pytest.raises(UsageError, match=message):
            select(claims, **bad)
    with pytest.raises(UsageError, match="unknown tier"):
        run_claims(claims, tier="warp")


def test_discover_and_loading(tmp_path):
    d = tmp_path / "verify"
    write_content(d, "b.py", SEEDED.format(i=2))
    write_content(d, "a.py", SEEDED.format(i=1))
    write_content(d, "_helpers.py", "raise RuntimeError('helpers are not content')\n")
    write_content(d, "test_x.py", "raise RuntimeError('tests are not content')\n")
    write_content(d, "conftest.py", "raise RuntimeError('pytest imports conftest itself')\n")
    write_content(d / "counterexamples", "c.py", "raise RuntimeError('not content')\n")
    assert [p.name for p in discover([str(d)], ())] == ["a.py", "b.py"]
    assert [c.id for c in load_claims([str(d)])] == ["demo/lemma-1", "demo/lemma-2"]
    assert all(Path(c.source).is_absolute() for c in load_claims([str(d)]))
    with pytest.raises(UsageError, match="path does not exist"):
        discover([str(tmp_path / "nope")], ())
    write_content(tmp_path / "dup", "one.py", SEEDED.format(i=1))
    with pytest.raises(UsageError, match="duplicate claim id 'demo/lemma-1'"):
        load_claims([str(d), str(tmp_path / "dup")])
    broken = write_content(tmp_path / "broken", "bad.py", "x = (\n")
    with pytest.raises(UsageError, match="cannot load .*bad.py"):
        load_claims([str(broken)])


def test_same_basename_in_two_dirs_does_not_collide(tmp_path):
    one = write_content(tmp_path / "a", "demo.py", SEEDED.format(i=1))
    two = write_content(tmp_path / "b", "demo.py", SEEDED.format(i=2))
    assert [c.id for c in load_claims([str(one), str(two)])] == ["demo/lemma-1", "demo/lemma-2"]


def test_default_dirs_are_under_cwd(tmp_path, monkeypatch):
    write_content(tmp_path / "paper_checks", "demo.py", SEEDED.format(i=1))
    write_content(tmp_path / "verify", "topic.py", SEEDED.format(i=2).replace("demo/", "verify/"))
    monkeypatch.chdir(tmp_path)
    assert sorted(c.id for c in load_claims()) == ["demo/lemma-1", "verify/lemma-2"]
    with pytest.raises(UsageError, match="no content files found"):
        load_figures()


def test_figures_loading_and_selection(tmp_path, write_demo_figures):
    path = write_demo_figures(tmp_path / "figures")
    figs = load_figures([str(path)])
    assert [f.source for f in figs] == [str(path.resolve())] * 2
    assert [f.id for f in select_figures(figs)] == ["demo/figure-1"]
    assert [f.id for f in select_figures(figs, tier="full", figure_id="demo/figure-2")] == ["demo/figure-2"]
    for bad, message in [
        ({"figure_id": "demo/figure-2"}, "full tier"),
        ({"figure_id": "demo/figure-3"}, "unknown figure 'demo/figure-3'"),
        ({"paper": "x"}, "unknown paper"),
    ]:
        with pytest.raises(UsageError, match=message):
            select_figures(figs, **bad)


def test_inventory(tmp_path):
    path = write_content(
        tmp_path / "paper_checks",
        "demo.py",
        SEEDED.format(i=1)
        + '''
PAPER_LABELS = ("Lemma 1", "Lemma 2")
INVENTORY = {"Lemma 1": ["demo/lemma-1"], "Lemma 2": "pending: needs a certificate"}
''',
    )
    assert load_inventory(path) == {"Lemma 1": ["demo/lemma-1"], "Lemma 2": "pending: needs a certificate"}
    assert inventory_problems(path) == []
    claims = load_claims([str(path)])
    problems = check_inventory(
        {"Lemma 1": ["demo/lemma-7"], "Lemma 2": ""}, claims, "demo", labels=("Lemma 1", "Lemma 3")
    )
    assert "'Lemma 1': unknown claim demo/lemma-7" in problems
    assert "'Lemma 2': an empty reason" in problems
    assert "claim demo/lemma-1 is not in the inventory" in problems
    assert "label Lemma 3 of the paper is missing from the inventory" in problems
    assert "inventory label Lemma 2 is not in PAPER_LABELS" in problems
    assert check_inventory({"Lemma 1": ["demo/lemma-1"]}, claims, "other") == [
        "'Lemma 1': claim demo/lemma-1 belongs to paper 'demo', not 'other'"
    ]
    no_inventory = write_content(tmp_path / "x", "none.py", "")
    assert load_inventory(no_inventory) is None
    assert inventory_problems(no_inventory) == [f"{no_inventory}: no INVENTORY", f"{no_inventory}: no PAPER_LABELS"]


def test_environment_and_capabilities(monkeypatch):
    env = environment(5, backend="torch", device="cpu")
    assert set(env) == {"python", "platform", "packages", "backend", "device", "seed", "blas_threads"}
    assert env["blas_threads"] == 1
    assert set(env["packages"]) == {
        "numpy",
        "scipy",
        "sympy",
        "mpmath",
        "cvxpy",
        "PEPit",
        "matplotlib",
        "scikit-learn",
        "rich",
        "torch",
        "dask",
        "fedtheory",
    }
    assert env["packages"]["fedtheory"] == "0.1.0" and env["seed"] == 5
    caps = capabilities()
    assert caps["dask"] is True, "dask is a dev dependency"
    assert missing_requirements(["dask"]) == []
    assert missing_requirements(["nosuchcapability"])[0].startswith("nosuchcapability: unknown capability")
    monkeypatch.setenv("FEDTHEORY_DISABLE", "torch")
    assert missing_requirements(["torch"]) == ["torch: disabled by FEDTHEORY_DISABLE"]
    monkeypatch.setenv("FEDTHEORY_BLAS_THREADS", "2")
    assert environment(0)["blas_threads"] == 2
    monkeypatch.setenv("FEDTHEORY_BLAS_THREADS", "zero")
    with pytest.raises(ValueError, match="FEDTHEORY_BLAS_THREADS must be a positive integer"):
        environment(0)


def test_table_shows_measured_values_literally():
    from rich.console import Console

    record = {
        "id": "a/lemma-1",
        "expect": "verified",
        "status": "verified",
        "passed": True,
        "seconds": 0.1,
        "evidence": {"measured": {"draws": [1, 2]}, "notes": ""},
    }
    console = Console(record=True, width=120)
    Report([record], environment={}, seconds=0.1).render_table(console)
    assert "draws=[1, 2]" in console.export_text(), "measured values are not rich markup"


def test_inventory_covers_claims_in_sibling_parts(tmp_path):
    main = tmp_path / "demo.py"
    main.write_text(
        "from fedtheory.claims.core import claim\n"
        "PAPER_LABELS = ('Lemma 1', 'Figure 1')\n"
        "INVENTORY = {'Lemma 1': ['demo/lemma-1'], 'Figure 1': ['demo/figure-1/shape']}\n"
        "lemma_1 = claim(id='demo/lemma-1', ref='Lemma 1', title='t', statement='s', kind='numeric')(lambda ctx: ctx.verified())\n"
    )
    part = tmp_path / "demo_figures.py"
    part.write_text(
        "from fedtheory.claims.core import claim\n"
        "shape = claim(id='demo/figure-1/shape', ref='Figure 1', title='t', statement='s', kind='numeric')(lambda ctx: ctx.verified())\n"
        "orphan = claim(id='demo/figure-1/orphan', ref='Figure 1', title='t', statement='s', kind='numeric')(lambda ctx: ctx.verified())\n"
    )
    assert inventory_problems(main) == ["claim demo/figure-1/orphan is not in the inventory"]


def test_stale_counterexample_of_a_verified_claim_is_removed(tmp_path):
    path = write_content(
        tmp_path / "paper_checks",
        "demo.py",
        "from fedtheory.claims.core import claim\n"
        "@claim(id='demo/lemma-7', ref='Lemma 7', title='t', statement='s', kind='numeric')\n"
        "def lemma_7(ctx):\n"
        "    return ctx.verified(measured={'ok': 1})\n",
    )
    [c] = load_claims([str(path)])
    store = counterexample_path(c)
    store.parent.mkdir(parents=True)
    store.write_text(json.dumps({"id": c.id, "seed": 0, "counterexample": {"x": 1}}))
    rec = run_claims([c], progress=False).records[0]
    assert rec["status"] == "verified" and not store.exists()
    assert "removed the stale counterexample" in rec["evidence"]["notes"]


def test_a_misspelled_capability_fails_when_the_file_loads(tmp_path, run_cli):
    """A claim requiring an unknown capability would be skipped forever (a check that cannot fail): the loader
    rejects it with one line naming the capability and the known ones, and `fedtheory check` exits 2."""

    path = tmp_path / "misspelled.py"
    path.write_text(
        textwrap.dedent('''
        from fedtheory.claims.core import claim

        @claim(id="verify/capability/misspelled", ref="-", title="-", statement="-", kind="numeric",
               requires=("pepit",), control_exempt="a loader fixture that never runs its check")
        def c(ctx):
            return ctx.decide(True, measured={}, tolerance=0)
    ''')
    )
    with pytest.raises(UsageError, match=r"unknown capability 'pepit' in requires \(known: torch, cuda, dask\)"):
        load_claims([str(path)])
    run = run_cli("check", str(path), cwd=tmp_path, timeout=300)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1].endswith("(known: torch, cuda, dask)")
    assert "Traceback" not in run.stderr


def test_a_huge_measured_value_costs_the_runner_seconds_not_minutes(tmp_path):
    """3·10⁶ measured floats: the check takes milliseconds; the runner's NaN scan, JSON conversion and the
    report's JSON used to take a minute (issue 24, defect 4). NaNs are still found by their index."""
    import time

    import numpy as np

    from fedtheory.claims.runner import _nan_keys
    from fedtheory.serialize import jsonable

    big = [0.5] * 3_000_000
    start = time.process_time()
    c = Claim(
        id="verify/engine/huge-measured",
        ref="-",
        title="-",
        statement="-",
        kind="numeric",
        control_exempt="an engine fixture measuring the runner's own cost",
        check=lambda ctx: ctx.decide(True, measured={"big": big}, tolerance=0),
    )
    record = run_claim(c, seed=0)
    from fedtheory.sweep import write_json_atomic

    write_json_atomic(tmp_path / "r.json", record, indent=1)
    assert time.process_time() - start < 15.0
    assert record["status"] == "verified" and len(record["evidence"]["measured"]["big"]) == 3_000_000
    assert json.loads((tmp_path / "r.json").read_text())["evidence"]["measured"]["big"][-1] == 0.5
    # the fast paths keep the element-wise semantics
    assert _nan_keys({"a": [0.0] * 100 + [float("nan")], "b": np.array([[0.0, np.nan]]), "c": [None] * 100}) == [
        "a[100]",
        "b[0][1]",
    ]
    assert jsonable([1.0] * 99 + [float("inf")])[-1] == "inf" and jsonable(np.arange(100))[-1] == 99
    assert jsonable([True] * 100)[0] is True and jsonable([[1.0, 2.0]] * 70)[0] == [1.0, 2.0]
