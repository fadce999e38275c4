"""``fedtheory report``: the site built from a check JSON (a small fixture), its diff, its HTML, the CLI.

The fixture ``tests/report_fixtures/check.json`` holds seven claims over two papers, with the fields
the growing contract adds (controls, readings, ``not-reproduced``, ``reading-dependent``, typo,
substitute, ``summary.controls``/``findings``) and one statement that cannot be typeset;
``baseline.json`` differs from it by one status (``demo/lemma-3``), one moved value
(``demo/theorem-1``), one added and one removed claim. The browser tests need Debian's
``chromium`` and ``playwright`` (as the explorer page's test does) and are skipped without them.
"""

import json
import shutil
import struct
import time
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fedtheory.cli import main
from fedtheory.content import UsageError
from fedtheory.report.build import MARKER, build_report, build_report_files
from fedtheory.report.data import controlled_share, load_check
from fedtheory.report.diff import diff_runs, threshold
from fedtheory.report.latex import typeset
from fedtheory.schemas import validate

FIXTURES = Path(__file__).parent / "report_fixtures"
CHECK = FIXTURES / "check.json"
BASELINE = FIXTURES / "baseline.json"
IDS = [r["id"] for r in json.loads(CHECK.read_text(encoding="utf-8"))["claims"]]


def png(width: int, height: int) -> bytes:
    """A valid grey RGB PNG (no imaging library needed)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\x80\x80\x80" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@pytest.fixture()
def figures(tmp_path):
    """A ``fedtheory figures --out`` directory with one figure of paper ``demo``."""
    d = tmp_path / "figs"
    (d / "demo").mkdir(parents=True)
    (d / "demo" / "figure-1.png").write_bytes(png(64, 40))
    (d / "demo" / "figure-1.json").write_text(
        json.dumps(
            {
                "id": "demo/figure-1",
                "caption": "Rounds to 1e-6 of DANE and S-DANE",
                "substitute": "synthetic quadratics",
                "params": {},
                "panels": [],
                "seed": 0,
                "environment": {},
            }
        ),
        encoding="utf-8",
    )
    (d / "manifest.json").write_text(
        json.dumps([{"id": "demo/figure-1", "png": "demo/figure-1.png", "json": "demo/figure-1.json", "seconds": 0.1}]),
        encoding="utf-8",
    )
    return d


@pytest.fixture()
def site(tmp_path, figures):
    return build_report_files(CHECK, tmp_path / "site", figures=figures, baseline=BASELINE)


# ------------------------------------------------------------------ pieces


def test_typeset_escapes_prose_converts_math_and_counts_failures():
    html, failed = typeset(r"For $a < b$ & <b>bold</b>: $$\frac{1}{2}$$ then $x^{$ and \(y\)")
    assert failed == 1
    assert html.count("<math") == 3 and 'display="block"' in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "&amp;" in html
    assert '<code class="tex" title="not typeset">$x^{$</code>' in html


def test_every_statement_in_the_repository_typesets():
    """A statement the report cannot typeset is shown as source: keep the repository's statements convertible."""
    from fedtheory.content import load_claims
    from fedtheory.report.latex import math_to_mathml, split_math

    root = Path(__file__).resolve().parents[1]
    claims = load_claims([str(root / d) for d in ("paper_checks", "verify") if (root / d).is_dir()])
    failing = {
        c.id: [
            content
            for kind, content, display in split_math(c.statement)
            if (kind == "math" and math_to_mathml(content, display) is None) or (kind == "text" and typeset(content)[1])
        ]
        for c in claims
        if typeset(c.statement)[1]
    }
    assert len(claims) > 0 and not failing, (
        f"statements that cannot be typeset (fix the LaTeX or extend latex._REWRITES): {failing}"
    )


def test_diff_of_the_fixtures():
    d = diff_runs(load_check(BASELINE), load_check(CHECK))
    assert d["status"] == [{"id": "demo/lemma-3", "old": "verified", "new": "reading-dependent", "expect": "verified"}]
    assert d["added"] == ["toy/corollary-2"] and d["removed"] == ["demo/lemma-9"]
    assert [(m["id"], m["old"], m["new"]) for m in d["moved"]] == [("demo/theorem-1", 0.5, 0.93)]
    assert d["compared"] == 6


def test_a_move_within_tolerance_is_not_reported():
    old, new = load_check(CHECK), load_check(CHECK)
    theorem = next(r for r in new["claims"] if r["id"] == "demo/theorem-1")
    theorem["evidence"]["measured"]["worst_ratio"] *= 1 + 1e-12  # tolerance: 1e-9 relative
    assert diff_runs(old, new)["moved"] == []
    theorem["evidence"]["measured"]["worst_ratio"] *= 1 + 1e-8
    assert [m["id"] for m in diff_runs(old, new)["moved"]] == ["demo/theorem-1"]
    assert threshold({"why": "no number here"}, "worst_ratio", 1.0, 2.0) is None


def test_controlled_share_from_summary_or_records():
    data = load_check(CHECK)
    assert controlled_share(data, "demo")["share"] == 0.5
    assert controlled_share(data, "toy") is None  # no controls recorded for toy
    data["summary"].pop("controls")
    share = controlled_share(data, "demo")
    assert (share["source"], share["verified"], share["controlled"]) == ("records", 2, 1)


def test_load_check_rejects_what_is_not_a_check_json(tmp_path):
    bad = tmp_path / "bad.json"
    for text, words in (
        ("{", "is not JSON"),
        ('[{"id": "a/figure-1"}]', "top level is a list"),
        ('{"claims": [{"id": 3, "status": "verified"}]}', 'no string "id"'),
    ):
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(UsageError, match=words):
            load_check(bad)


# ------------------------------------------------------------------ the site


def test_site_holds_every_claim_its_json_and_its_figures(site):
    assert (site / "check.json").read_bytes() == CHECK.read_bytes()
    assert (site / "baseline.json").read_bytes() == BASELINE.read_bytes()
    assert (site / "figures" / "demo" / "figure-1.png").is_file() and (
        site / "figures" / "demo" / "figure-1.json"
    ).is_file()
    pages = {p: (site / f"paper-{p}.html").read_text(encoding="utf-8") for p in ("demo", "toy")}
    for cid in IDS:
        assert f'id="c-{cid}"' in pages[cid.split("/")[0]], cid
    demo = pages["demo"]
    assert "fedtheory check --claim &#x27;demo/lemma-2&#x27;" in demo and "&quot;A&quot;" in demo  # replay + JSON
    assert "bound-halved" in demo and "gamma&lt;=2/L" in demo  # a negative control, a reading
    assert "{&quot;gamma_max&quot;: &quot;2/L&quot;}" in demo
    assert "Proof: <code>sympy: mu &gt; L contradicts" in pages["toy"]
    assert "typo in the paper" in demo and "checked on substitute data" in demo
    assert "no claim: a restatement of Lemma 3" in demo and "not in this run" in demo  # the inventory's gaps
    assert "1 statements not fully typeset" in demo and '<img src="figures/demo/figure-1.png"' in demo
    assert "Substitute:</strong> synthetic quadratics" in demo
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.index("Changes since the baseline") < index.index('id="papers"')
    assert "1 of 2 verified (50%)" in index and "reading-dependent" in index and "not-reproduced" in index
    findings = index.split('id="findings"')[1].split("</section>")[0]
    for cid in ("demo/lemma-2", "demo/lemma-3", "demo/figure-1/shape", "toy/corollary-2"):
        assert f"#c-{cid}" in findings, cid
    assert "demo/theorem-1" not in findings and "typo" in findings
    demo_row = index.split('href="paper-demo.html">demo</a>')[1].split("</tr>")[0]
    assert demo_row.rstrip().endswith("<td class=\"num\">1</td>")  # one statement not typeset


class _Checker(HTMLParser):
    """Balance, unique ids, alt text, table headers, heading order, lang: what the pages promise."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.ids, self.levels = [], [], set(), []
        self.tables = self.table_headers = 0
        self.lang = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            if a["id"] in self.ids:
                self.problems.append(f"duplicate id {a['id']}")
            self.ids.add(a["id"])
        if tag == "html":
            self.lang = a.get("lang")
        if tag == "img" and not (a.get("alt") or "").strip():
            self.problems.append(f"img without alt: {a.get('src')}")
        if tag == "table":
            self.tables += 1
        if tag == "th":
            self.table_headers += 1
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            level = int(tag[1])
            if self.levels and level > self.levels[-1] + 1:
                self.problems.append(f"heading skips from h{self.levels[-1]} to {tag}")
            self.levels.append(level)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):  # <mspace/> in MathML: opened and closed at once
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


def test_pages_are_balanced_and_accessible(site):
    for page in sorted(site.glob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>"), page.name
        checker = _Checker()
        checker.feed(text)
        checker.close()
        assert checker.problems == [], (page.name, checker.problems[:5])
        assert checker.stack == [], (page.name, checker.stack)
        assert checker.lang == "en" and checker.levels.count(1) == 1, page.name
        assert checker.table_headers >= checker.tables > 0, page.name
        assert "http://" not in text.replace('xmlns="http://www.w3.org/1998/Math/MathML"', "")
        assert "https://" not in text and "<script" not in text


def test_rebuilding_replaces_the_site_and_leaves_nothing_beside_it(tmp_path, figures):
    out = tmp_path / "site"
    build_report_files(CHECK, out, figures=figures)
    (out / "stale.html").write_text("old", encoding="utf-8")
    build_report_files(CHECK, out)
    assert not (out / "stale.html").exists() and not (out / "figures").exists() and (out / MARKER).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figs", "site"]


def test_building_all_papers_fast_tier_sized_run_is_fast(tmp_path):
    data = load_check(CHECK)
    data.pop("inventory")  # its papers (demo, toy) would get pages of their own
    # ~400 claims over five papers, each statement with several math spans, as a full fast tier has
    data["claims"] = [
        dict(r, id=f"p{k}/{r['id'].split('/', 1)[1]}-{i}", paper=f"p{k}")
        for k in range(5)
        for i in range(12)
        for r in data["claims"]
    ]
    start = time.perf_counter()
    build_report(data, tmp_path / "site")
    assert time.perf_counter() - start < 10.0
    assert len(list((tmp_path / "site").glob("paper-*.html"))) == 5


# ------------------------------------------------------------------ the command line


def test_report_command_and_its_bad_input(tmp_path, figures, capsys):
    assert (
        main(
            [
                "report",
                str(CHECK),
                "--figures",
                str(figures),
                "--baseline",
                str(BASELINE),
                "--out",
                str(tmp_path / "site"),
            ]
        )
        == 0
    )
    assert "wrote" in capsys.readouterr().out
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    cases = [
        ([str(tmp_path / "missing.json")], "does not exist"),
        ([str(figures / "manifest.json")], "is not a check JSON"),
        ([str(CHECK), "--baseline", str(figures / "demo" / "figure-1.png")], "is not JSON"),
        ([str(CHECK), "--figures", str(tmp_path)], "has no manifest.json"),
    ]
    for args, words in cases:
        assert main(["report", *args, "--out", str(tmp_path / "site2")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and words in err and err.count("\n") == 1, err
    for out, words in (
        (foreign, "not a fedtheory report"),
        (a_file, "not a directory"),
        (Path("/proc/no/such/site"), "cannot write the report"),
    ):
        assert main(["report", str(CHECK), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and words in err, err
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert not (tmp_path / "site2").exists()


CONTENT = '''
from fedtheory.claims.core import claim

PAPER_LABELS = ("Lemma 1", "Lemma 2", "Lemma 3")
INVENTORY = {"Lemma 1": ["demo/lemma-1"], "Lemma 2": ["demo/lemma-2"], "Lemma 3": "a definition; nothing to check"}


@claim(id="demo/lemma-1", ref="Lemma 1", title="two exceeds one", statement=r"$2 > 1$", kind="numeric")
def lemma_1(ctx):
    return ctx.decide(2 > 1, measured={"worst_ratio": 0.5}, tolerance=1e-12)


@claim(id="demo/lemma-2", ref="Lemma 2", title="one exceeds two (false)", statement=r"$1 > 2$", kind="numeric")
def lemma_2(ctx):
    return ctx.decide(1 > 2, measured={"worst_ratio": 2.0}, counterexample={"a": 1, "b": 2})
'''


def test_check_with_baseline_and_report(tmp_path, capsys):
    content = tmp_path / "paper_checks"
    content.mkdir()
    (content / "demo.py").write_text(CONTENT, encoding="utf-8")
    first, second, site = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "site"
    assert main(["check", str(content), "--json", str(first)]) == 1  # demo/lemma-2 expects verified, is refuted
    old = json.loads(first.read_text(encoding="utf-8"))
    validate(old, "check")
    assert old["inventory"] == {
        "demo": {"Lemma 1": ["demo/lemma-1"], "Lemma 2": ["demo/lemma-2"], "Lemma 3": "a definition; nothing to check"}
    }
    for r in old["claims"]:  # pretend the baseline run found lemma-2 verified
        if r["id"] == "demo/lemma-2":
            r["status"] = r["evidence"]["status"] = "verified"
    first.write_text(json.dumps(old), encoding="utf-8")
    capsys.readouterr()
    assert main(["check", str(content), "--json", str(second), "--baseline", str(first), "--report", str(site)]) == 1
    out = capsys.readouterr().out
    assert f"changes since {first}" in out and "status demo/lemma-2: verified -> refuted (expect verified)" in out
    assert out.index("changes since") > out.index("FAILED")  # under the table
    assert (site / "check.json").read_bytes() == second.read_bytes()
    assert "demo/lemma-2" in (site / "index.html").read_text(encoding="utf-8").split('id="papers"')[0]
    # without --json the site still holds the run's JSON, inventory included
    assert main(["check", str(content), "--report", str(tmp_path / "site-only")]) == 1
    assert (
        json.loads((tmp_path / "site-only" / "check.json").read_text(encoding="utf-8"))["inventory"] == old["inventory"]
    )
    capsys.readouterr()
    # bad --baseline and --report are found before the run, not after it
    assert main(["check", str(content), "--baseline", str(tmp_path / "none.json")]) == 2
    assert main(["check", str(content), "--report", str(first)]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2 and "does not exist" in errors[0] and "not a directory" in errors[1]


# ------------------------------------------------------------------ in a browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture()
def browser():
    playwright = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
    )
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt install chromium)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-component-update"],
        )
        yield b
        b.close()


def test_site_in_headless_chromium_offline(site, browser):
    context = browser.new_context(offline=True)
    page = context.new_page()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))

    page.goto((site / "index.html").as_uri())
    changed = page.locator("table:has(caption:text('Status changed')) tbody tr")
    assert changed.count() == 1 and "demo/lemma-3" in changed.inner_text()
    assert page.locator("h1").inner_text() == "fedtheory check report"

    shown = []
    for paper in ("demo", "toy"):
        page.goto((site / f"paper-{paper}.html").as_uri())
        shown += page.eval_on_selector_all("article.claim", "els => els.map(e => e.id.slice(2))")
        if paper == "demo":
            box = page.locator("#c-demo\\/theorem-1 .statement math").first.bounding_box()
            assert box is not None and box["width"] > 0 and box["height"] > 0
            # MathML is laid out as math (a fraction is taller than a line of text), not as raw text
            frac = page.locator("#c-demo\\/theorem-1 .statement mfrac").first.bounding_box()
            assert frac is not None and frac["height"] > 0
            img = page.locator("figure img").first
            img.scroll_into_view_if_needed()
            page.wait_for_function("document.querySelector('figure img').complete")
            assert page.eval_on_selector("figure img", "i => i.naturalWidth") == 64
    assert sorted(shown) == sorted(IDS)
    assert errors == []
    assert requests and all(u.startswith("file://") for u in requests), requests
    context.close()


def test_report_refuses_a_bogus_status_or_a_record_without_evidence(tmp_path, run_cli):
    """Issue 24, defect 13: a check JSON with an unknown status or no evidence is no report input (exit 2)."""
    for record, needle in (
        (
            {"id": "a/lemma-1", "status": "bogus-status", "evidence": {}},
            "has status 'bogus-status', not one of verified",
        ),
        ({"id": "a/lemma-1", "status": "verified"}, 'has no "evidence" object'),
    ):
        src = tmp_path / "check.json"
        src.write_text(json.dumps({"claims": [record]}))
        run = run_cli("report", str(src), "--out", str(tmp_path / "site"), timeout=300)
        assert run.returncode == 2 and needle in run.stderr and "Traceback" not in run.stderr
        assert not (tmp_path / "site").exists()


def test_check_refuses_an_unwritable_report_destination_before_any_work(tmp_path, run_cli):
    """Issue 24, defect 7: `--report /proc/site` ran every claim and only then failed."""
    import time

    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "slow.py").write_text(
        "import time\nfrom fedtheory.claims.core import claim\n\n"
        "@claim(id='verify/slow/one', ref='-', title='-', statement='-', kind='numeric',\n"
        "       control_exempt='a fixture that must never run in this test')\n"
        "def one(ctx):\n    time.sleep(60)\n    return ctx.verified()\n"
    )
    start = time.monotonic()
    run = run_cli("check", "verify", "--report", "/proc/site", cwd=tmp_path)
    assert (
        run.returncode == 2 and "cannot write the report to /proc/site (--report): cannot write in /proc" in run.stderr
    )
    assert time.monotonic() - start < 30 and "Traceback" not in run.stderr
