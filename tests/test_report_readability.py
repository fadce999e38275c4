"""Issue 26's report, figure and progress defects, each reproduced: badge colour by verdict, the paper's
metadata, named key values with their tolerance, no absolute paths, a replay command that says where it
works, named unjudged diff values, labelled times, whole list-valued measurements, captions and colours in
the PNG, no lock file among the figures, and warnings kept out of the progress lines."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from fedtheory.claims.runner import run_claims
from fedtheory.content import load_claims
from fedtheory.report.build import build_report
from fedtheory.report.data import load_check, run_papers
from fedtheory.report.diff import diff_runs, render_diff

FIXTURES = Path(__file__).parent / "report_fixtures"
ROOT = Path(__file__).parents[1]

CONTENT = '''
import warnings

from fedtheory.claims.core import claim

PAPER = {"key": "demo", "title": "A Demonstration of Bounds", "authors": "Ada Lovelace, Alan Turing",
         "arxiv": "2401.01234", "venue": "Nowhere 2024"}


@claim(id="demo/lemma-1", ref="Lemma 1", title="x <= 1 on [0, 1]", statement="$x \\\\le 1$", kind="numeric",
       expect="refuted")
def lemma_1(ctx):
    warnings.warn("overflow encountered in a stand-in computation", RuntimeWarning)
    return ctx.refuted(measured={"worst": 2.0, "trace": list(range(300))}, counterexample={"x": 2.0})


@claim(id="demo/lemma-2", ref="Lemma 2", title="1 <= 2", statement="$1 \\\\le 2$", kind="numeric")
def lemma_2(ctx):
    return ctx.verified(measured={"worst_ratio": 0.5}, tolerance={"relative": 1e-9})
'''


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "paper_checks").mkdir()
    (tmp_path / "paper_checks" / "demo.py").write_text(CONTENT)
    return tmp_path


@pytest.fixture()
def run(project: Path) -> dict:
    """A check JSON of the demo project, written as ``fedtheory check`` writes it."""
    claims = load_claims([str(project / "paper_checks")])
    data = run_claims(claims, progress=False).to_json()
    data["papers"] = run_papers(claims)
    return data


def test_a_run_records_no_path_of_the_machine_that_ran_it(project, run):
    text = json.dumps(run)
    assert str(project) not in text and str(ROOT) not in text
    lemma_1 = run["claims"][0]
    assert lemma_1["source"] == "paper_checks/demo.py"
    assert (project / "paper_checks/counterexamples/demo/lemma-1.json").is_file()
    assert "stored counterexample paper_checks/counterexamples/demo/lemma-1.json" in lemma_1["evidence"]["notes"]


def test_warnings_of_a_check_go_into_its_notes_not_onto_the_progress_lines(project, run_cli):
    proc = run_cli("check", "--json", "r.json", cwd=project, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr and "overflow" not in proc.stderr, proc.stderr
    notes = json.loads((project / "r.json").read_text())["claims"][0]["evidence"]["notes"]
    assert "warnings during the check: RuntimeWarning: overflow encountered in a stand-in computation" in notes
    assert str(project) not in notes


def test_a_paper_page_carries_title_authors_and_arxiv_link(run, tmp_path):
    assert run["papers"]["demo"]["title"] == "A Demonstration of Bounds"
    page = (build_report(run, tmp_path / "site") / "paper-demo.html").read_text()
    assert "<h1>A Demonstration of Bounds</h1>" in page and "Paper: demo" not in page
    assert "Ada Lovelace, Alan Turing" in page and 'href="https://arxiv.org/abs/2401.01234"' in page


def test_the_claims_table_names_key_values_beside_their_tolerance(run, tmp_path):
    page = (build_report(run, tmp_path / "site") / "paper-demo.html").read_text()
    claims_table = page.split('id="claims"')[1].split("</table>")[0]
    assert "<th scope=\"col\">Tolerance</th>" in claims_table
    row = claims_table.split("demo/lemma-2</code></a>")[1].split("</tr>")[0]
    assert "<code>worst_ratio</code> = 0.5" in row and "relative 1e-09" in row


def test_a_refutation_never_says_tolerance_none_stated(run, tmp_path):
    page = (build_report(run, tmp_path / "site") / "paper-demo.html").read_text()
    article = page.split('id="c-demo/lemma-1"')[1].split("</article>")[0]
    assert "none stated" not in article
    assert "this check records none, so its refutation rests on the measured values" in article


def test_a_list_valued_measurement_is_shown_whole(run, tmp_path):
    page = (build_report(run, tmp_path / "site") / "paper-demo.html").read_text()
    article = page.split('id="c-demo/lemma-1"')[1].split("</article>")[0]
    assert "298, 299]" in article and "cut" not in article and "300 values" in article


def test_the_replay_command_says_where_it_works(run, tmp_path):
    page = (build_report(run, tmp_path / "site") / "paper-demo.html").read_text()
    assert "Replay it, from any directory" in page and "fedtheory check --claim &#x27;demo/lemma-1&#x27;" in page
    mine = dict(run["claims"][0], source="work/mine.py")
    page = (build_report(dict(run, claims=[mine]), tmp_path / "site2") / "paper-demo.html").read_text()
    assert "Replay it, from the directory holding work/" in page
    assert "fedtheory check work/mine.py --claim &#x27;demo/lemma-1&#x27;" in page


def test_times_are_labelled(run, tmp_path):
    site = build_report(run, tmp_path / "site")
    index = (site / "index.html").read_text()
    assert ", wall time " in index and "Claim seconds (sum)" in index and "exceed the wall time" in index
    assert "claim seconds" in (site / "paper-demo.html").read_text()
    assert "Seconds (this claim)" in (site / "paper-demo.html").read_text()


def test_a_baseline_diff_names_the_values_it_cannot_judge(capsys):
    import io

    from rich.console import Console

    old = load_check(FIXTURES / "check.json")
    new = json.loads(json.dumps(old))
    lemma = next(r for r in new["claims"] if r["id"] == "demo/definition-1")  # tolerance: none
    lemma["evidence"]["measured"]["residual"] = 0.125
    diff = diff_runs(old, new)
    assert [(u["id"], u["key"], u["new"]) for u in diff["uncompared"]] == [("demo/definition-1", "residual", 0.125)]
    console = Console(file=io.StringIO(), record=True, width=200)
    render_diff(diff, console, "old.json")
    text = console.export_text()
    assert "1 key values changed without a numeric tolerance to judge them:" in text
    assert "changed demo/definition-1: residual" in text and "-> 0.125" in text


def test_badges_colour_by_verdict_and_mark_the_expectation_apart(run, tmp_path):
    page = (build_report(run, tmp_path / "site") / "paper-demo.html").read_text()
    assert '<span class="status v-refuted">refuted</span> <span class="expect pass">as expected</span>' in page
    assert '<span class="status v-verified">verified</span> <span class="expect pass">as expected</span>' in page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt install chromium)")
def test_badge_colours_in_headless_chromium(run, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    site = build_report(run, tmp_path / "site")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(offline=True).new_page()
        page.goto((site / "paper-demo.html").as_uri())
        colour = "e => getComputedStyle(e).backgroundColor"
        refuted = page.eval_on_selector("#c-demo\\/lemma-1 .status", colour)
        verified = page.eval_on_selector("#c-demo\\/lemma-2 .status", colour)
        mark = page.eval_on_selector("#c-demo\\/lemma-1 .expect", "e => getComputedStyle(e).color")
        tick = page.eval_on_selector("#c-demo\\/lemma-1 .expect", "e => getComputedStyle(e, '::before').content")
        browser.close()
    assert tick == '"✓ "'  # the mark is drawn as a tick, not an escape gone wrong
    assert refuted == "rgb(207, 34, 46)" and verified == "rgb(26, 127, 55)"  # red and green
    assert mark == "rgb(26, 127, 55)"  # the refutation is as expected: that mark is green


def test_figure_caption_is_drawn_and_colours_follow_labels_across_panels():
    from fedtheory.plotting.render import draw

    def series(label):
        return {"label": label, "type": "line", "params": {}, "x": [1, 2], "y": [1, 2]}

    doc = {
        "id": "demo/figure-1",
        "caption": "Rounds to accuracy against K.",
        "substitute": None,
        "panels": [
            {"title": "a", "series": [series("fedavg"), series("fedprox")]},
            {"title": "b", "series": [series("fedprox"), series("scaffold")]},
        ],
    }
    fig = draw(doc)
    assert "Rounds to accuracy against K." in [t.get_text() for t in fig.texts]
    styles = {line.get_label(): (line.get_color(), line.get_linestyle()) for ax in fig.axes for line in ax.lines}
    left, right = ([(line.get_label(), line.get_color()) for line in ax.lines] for ax in fig.axes[:2])
    assert left[1] == right[0]  # fedprox: one colour in both panels
    assert len(set(styles.values())) == 3  # three labels, three styles


def test_no_lock_file_is_left_among_the_figures(tmp_path):
    from fedtheory.plotting.engine import run_figures
    from fedtheory.plotting.spec import figure

    @figure(id="demo/figure-1", caption="c")
    def fig(ctx):
        return {
            "panels": [
                {
                    "title": "t",
                    "xlabel": "x",
                    "ylabel": "y",
                    "xscale": "linear",
                    "yscale": "linear",
                    "series": [{"label": "a", "type": "line", "params": {}, "x": [1, 2], "y": [3, 4]}],
                }
            ]
        }

    run_figures([fig], out_dir=tmp_path, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo", "manifest.json"]


def test_a_traceback_in_the_notes_names_no_absolute_path(tmp_path):
    (tmp_path / "paper_checks").mkdir()
    (tmp_path / "paper_checks" / "demo.py").write_text(
        textwrap.dedent('''
        import json
        from fedtheory.claims.core import claim

        @claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
        def lemma_1(ctx):
            return json.loads("not json")   # fails inside the standard library
    ''')
    )
    record = run_claims(load_claims([str(tmp_path / "paper_checks")]), progress=False).records[0]
    notes = record["evidence"]["notes"]
    assert record["status"] == "error" and "JSONDecodeError" in notes
    assert 'File "paper_checks/demo.py"' in notes and 'File "json/' in notes
    assert not [line for line in notes.splitlines() if line.strip().startswith('File "/')], notes
