"""The report's pages: an index and one page per paper, as HTML strings (no template engine, no JavaScript).

Every page is one self-contained file (inline CSS, MathML for the math); the only other files the
site holds are the figures (PNG beside their data JSON) and the JSON the site was built from.

>>> data = {"claims": [{"id": "a/lemma-1", "paper": "a", "ref": "Lemma 1", "title": "t", "statement": "$x^2 \\\\ge 0$",
...                     "expect": "verified", "status": "verified", "evidence": {"measured": {"worst_ratio": 0.5}}}],
...         "summary": {"seconds": 1.0}, "environment": {"seed": 0}}
>>> pages = render_pages(data)
>>> sorted(pages), "<math" in pages["paper-a.html"]
(['index.html', 'paper-a.html'], True)
"""

from __future__ import annotations

import html
import json
from typing import Any

from fedtheory import __version__
from fedtheory.claims.core import EXPECTS
from fedtheory.report.data import MAX_VALUE_CHARS, controlled_share, fmt, paper_of, papers, statuses
from fedtheory.report.diff import has_changes, key_value
from fedtheory.report.latex import typeset
from fedtheory.report.style import CSS

# Long JSON (a counterexample's matrices) is cut in the page; check.json beside it holds all of it.
MAX_JSON_CHARS = 20_000


def esc(value: Any) -> str:
    """HTML-escaped text of ``value``.

    >>> esc('<a href="x">')
    '&lt;a href=&quot;x&quot;&gt;'
    """
    return html.escape(str(value), quote=True)


def paper_file(paper: str) -> str:
    """The page of ``paper`` inside the site.

    >>> paper_file("sdane")
    'paper-sdane.html'
    """
    return f"paper-{paper}.html"


def claim_anchor(claim_id: str) -> str:
    """The element id of a claim on its paper's page.

    >>> claim_anchor("a/lemma-1/part")
    'c-a/lemma-1/part'
    """
    return f"c-{claim_id}"


def claim_link(claim_id: str, same_page: bool = False) -> str:
    """A link to the claim's section (on its paper's page).

    >>> claim_link("a/lemma-1")
    '<a href="paper-a.html#c-a/lemma-1"><code>a/lemma-1</code></a>'
    """
    target = ("" if same_page else paper_file(claim_id.split("/", 1)[0])) + "#" + claim_anchor(claim_id)
    return f'<a href="{esc(target)}"><code>{esc(claim_id)}</code></a>'


def passed(record: dict) -> bool:
    """Whether the record passed: its ``passed`` field, else status equal to expect.

    >>> passed({"status": "refuted", "expect": "refuted"}), passed({"status": "error", "expect": "verified"})
    (True, False)
    """
    if isinstance(record.get("passed"), bool):
        return record["passed"]
    return record.get("status") == record.get("expect")


#: the badge colour of each verdict (style.py): a refutation is never drawn in the colour of a verification
VERDICT_CLASSES = {
    "verified": "v-verified",
    "refuted": "v-refuted",
    "vacuous": "v-vacuous",
    "not-reproduced": "v-unsettled",
    "reading-dependent": "v-unsettled",
    "inconclusive": "v-unsettled",
    "skipped": "v-skipped",
    "error": "v-error",
}


def status_badge(record: dict) -> str:
    """The verdict as a badge coloured by the verdict itself, then separately whether it is what the claim
    expects (a refutation the suite guards is red *and* "as expected").

    >>> status_badge({"status": "refuted", "expect": "refuted"})
    '<span class="status v-refuted">refuted</span> <span class="expect pass">as expected</span>'
    >>> status_badge({"status": "verified", "expect": "refuted"})
    '<span class="status v-verified">verified</span> <span class="expect fail">not as expected: expected refuted</span>'
    """
    status = record.get("status", "")
    badge = f'<span class="status {VERDICT_CLASSES.get(status, "v-error")}">{esc(status)}</span>'
    expect = record.get("expect")
    if status == expect:
        mark = ("pass", "as expected")
    elif passed(record):  # skipped for a missing optional capability: counted as passed, and said so
        mark = ("skip-status", "passes: skipped, a requirement is missing here")
    elif expect:
        mark = ("fail", f"not as expected: expected {expect}")
    else:
        return badge
    return f'{badge} <span class="expect {mark[0]}">{esc(mark[1])}</span>'


def measured_value(value: Any) -> str:
    """A measured value as HTML: short ones inline, long ones (a list of rounds) folded but whole.

    >>> measured_value(0.5)
    '0.5'
    >>> html = measured_value(list(range(200)))
    >>> html.startswith("<details>") and "199]" in html and "cut" not in html
    True
    """
    text = fmt(value, limit=10**9)
    if len(text) <= MAX_VALUE_CHARS:
        return esc(text)
    count = f"{len(value)} values" if isinstance(value, (list, dict)) else f"{len(text)} characters"
    return f"<details><summary>{esc(count)}: {esc(text[:60])}…</summary><pre><code>{esc(text)}</code></pre></details>"


def page(title: str, body: str, nav: str = "") -> str:
    """A whole HTML document: language, charset, title, skip link, navigation, ``<main>``.

    >>> page("T", "<p>x</p>").startswith("<!DOCTYPE html>")
    True
    """
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"generator\" content=\"fedtheory report {esc(__version__)}\">\n"
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        "<a class=\"skip\" href=\"#main\">Skip to content</a>\n"
        f"<header class=\"site\"><nav aria-label=\"site\"><a href=\"index.html\">Report index</a>{nav}</nav></header>\n"
        f"<main id=\"main\">\n{body}\n</main>\n</body>\n</html>\n"
    )


def table(
    headers: list[str],
    rows: list[list[str]],
    caption: str | None = None,
    numeric: set[int] = frozenset(),
    row_headers: bool = True,
) -> str:
    """An HTML table of already-escaped cells; the first cell of each row is a row header.

    >>> table(["a", "b"], [["1", "2"]])
    '<table>\\n<thead><tr><th scope="col">a</th><th scope="col">b</th></tr></thead>\\n<tbody>\\n<tr><th scope="row">1</th><td>2</td></tr>\\n</tbody>\\n</table>'
    """
    num = ' class="num"'
    head = "".join(f'<th scope="col"{num if i in numeric else ""}>{h}</th>' for i, h in enumerate(headers))
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = ' class="num"' if i in numeric else ""
            cells.append(f'<th scope="row"{cls}>{cell}</th>' if i == 0 and row_headers else f"<td{cls}>{cell}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{caption}</caption>\n" if caption else ""
    return f"<table>\n{cap}<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>"


def field_table(rows: list[tuple[str, str]], caption: str | None = None) -> str:
    """A two-column table of (name, already-escaped value), names as row headers.

    >>> field_table([("seed", "0")]).count("<th scope=\\"row\\">seed</th>")
    1
    """
    cap = f"<caption>{caption}</caption>\n" if caption else ""
    body = "\n".join(f'<tr><th scope="row">{esc(k)}</th><td>{v}</td></tr>' for k, v in rows)
    return f"<table>\n{cap}<tbody>\n{body}\n</tbody>\n</table>"


def pretty_json(value: Any, indent: int = 0, width: int = 100) -> str:
    """JSON indented only where a value does not fit on one line; a list of numbers is one line (a matrix: a row a line).

    >>> print(pretty_json({"A": [[4.0, 0.0], [0.0, 1.0]], "L": 4.0}, width=20))
    {
     "A": [
      [4.0, 0.0],
      [0.0, 1.0]
     ],
     "L": 4.0
    }
    """
    flat = json.dumps(value, ensure_ascii=False, default=str)
    scalars = isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)
    if len(flat) + indent <= width or scalars or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {pretty_json(v, indent + 1, width).lstrip()}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + pretty_json(v, indent + 1, width).lstrip() for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def json_block(value: Any) -> str:
    """Pretty JSON in a ``<pre>``, cut past :data:`MAX_JSON_CHARS`.

    >>> json_block({"a": 1})
    '<pre><code>{&quot;a&quot;: 1}</code></pre>'
    """
    text = pretty_json(value)
    if len(text) > MAX_JSON_CHARS:
        text = text[:MAX_JSON_CHARS] + f"\n… ({len(text) - MAX_JSON_CHARS} more characters in check.json)"
    return f"<pre><code>{esc(text)}</code></pre>"


# ---------------------------------------------------------------- statistics


def paper_stats(data: dict, paper: str, typeset_failures: dict[str, int]) -> dict:
    """Counts of one paper's records: by status, by expect, failed, seconds, statements not typeset.

    >>> s = paper_stats({"claims": [{"id": "a/l-1", "status": "verified", "expect": "verified", "seconds": 2}]}, "a", {})
    >>> s["claims"], s["status"]["verified"], s["expect"]["verified"], s["failed"], s["seconds"]
    (1, 1, 1, 0, 2.0)
    """
    records = [r for r in data.get("claims", []) if paper_of(r) == paper]
    by_status = {s: 0 for s in statuses(data)}
    by_expect = {e: 0 for e in EXPECTS[:3]}
    for r in records:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
        if r.get("expect") is not None:
            by_expect[r["expect"]] = by_expect.get(r["expect"], 0) + 1
    return {
        "claims": len(records),
        "status": by_status,
        "expect": by_expect,
        "failed": sum(1 for r in records if not passed(r)),
        "seconds": float(sum(float(r.get("seconds") or 0.0) for r in records)),
        "untypeset": sum(1 for r in records if typeset_failures.get(r["id"], 0)),
    }


def share_text(share: dict | None) -> str:
    """The controlled share as text: ``k of n verified (p%)``, or that the run recorded no controls.

    >>> share_text({"verified": 4, "controlled": 3, "share": 0.75}), share_text(None)
    ('3 of 4 verified (75%)', 'not recorded')
    """
    if share is None:
        return "not recorded"
    pct = "" if share.get("share") is None else f" ({100 * float(share['share']):.0f}%)"
    return f"{share.get('controlled')} of {share.get('verified')} verified{pct}"


# ---------------------------------------------------------------- the index


def _diff_section(diff: dict, baseline_name: str, known: set[str]) -> str:
    def link(cid: str) -> str:
        return claim_link(cid) if cid in known else f"<code>{esc(cid)}</code>"

    parts = [
        '<section aria-labelledby="changes">\n<h2 id="changes">Changes since the baseline</h2>',
        f"<p>Baseline: <a href=\"baseline.json\">{esc(baseline_name)}</a>; {diff['compared']} claims are in both runs. "
        + (
            "Nothing changed."
            if not has_changes(diff)
            else f"{len(diff['status'])} changed status, {len(diff['moved'])} moved beyond tolerance, "
            f"{len(diff['added'])} added, {len(diff['removed'])} removed."
        )
        + (
            f" {len(diff['uncompared'])} key values changed with no numeric tolerance to judge them (listed below)."
            if diff["uncompared"]
            else ""
        )
        + "</p>",
    ]
    if diff["status"]:
        rows = [[link(s["id"]), esc(s["old"]), esc(s["new"]), esc(s.get("expect") or "")] for s in diff["status"]]
        parts.append(table(["Claim", "Before", "Now", "Expected"], rows, caption="Status changed"))
    if diff["moved"]:
        rows = [
            [
                link(m["id"]),
                f"<code>{esc(m['key'])}</code>",
                esc(fmt(m["old"])),
                esc(fmt(m["new"])),
                esc(f"{m['threshold']:.3g}"),
            ]
            for m in diff["moved"]
        ]
        parts.append(
            table(
                ["Claim", "Key value", "Before", "Now", "Allowed move"],
                rows,
                caption="Key measured value moved by more than its tolerance",
                numeric={2, 3, 4},
            )
        )
    for key, title in (("added", "Added"), ("removed", "Removed")):
        if diff[key]:
            items = "".join(f"<li>{link(c) if key == 'added' else f'<code>{esc(c)}</code>'}</li>" for c in diff[key])
            # a long list (one paper's run against all papers' baseline) stays folded
            fold = "" if len(diff[key]) <= 20 else " (folded: show it)"
            parts.append(
                f"<details{'' if fold else ' open'}><summary>{title}: {len(diff[key])} claims{fold}</summary>"
                f"\n<ul>{items}</ul></details>"
            )
    if diff["uncompared"]:
        rows = [
            [link(u["id"]), f"<code>{esc(u['key'])}</code>", measured_value(u["old"]), measured_value(u["new"])]
            for u in diff["uncompared"]
        ]
        parts.append(
            table(
                ["Claim", "Key value", "Before", "Now"],
                rows,
                numeric={2, 3},
                caption="Key value changed, with no numeric tolerance to judge the change (not counted as moved)",
            )
        )
    parts.append("</section>")
    return "\n".join(parts)


def content_line(content: dict) -> str:
    """The claim code a run ran, in one line: git revision (and whether its tree was clean), digest, files.

    >>> content_line({"revision": "0123456789abcdef", "clean": False, "digest": "feedbeef" * 8, "files": 3})
    'revision 0123456789ab (uncommitted changes) · digest feedbeeffeed · 3 files'
    >>> content_line({"revision": None, "clean": None, "digest": "ab" * 32, "files": 1})
    'not a git checkout · digest abababababab · 1 files'
    """
    rev = content.get("revision")
    where = (
        f"revision {rev[:12]} ({'clean' if content.get('clean') else 'uncommitted changes'})"
        if rev
        else "not a git checkout"
    )
    return f"{where} · digest {str(content.get('digest', ''))[:12]} · {content.get('files', 0)} files"


def _environment_section(env: dict) -> str:
    rows = [
        (k, esc(fmt(env[k]))) for k in ("python", "platform", "backend", "device", "seed", "blas_threads") if k in env
    ]
    rows += [
        (k, esc(fmt(v)))
        for k, v in env.items()
        if k not in ("python", "platform", "backend", "device", "seed", "blas_threads", "packages", "content")
    ]
    if isinstance(env.get("content"), dict):
        rows.append(("claim code", esc(content_line(env["content"]))))
    packages = env.get("packages") or {}
    out = ['<section aria-labelledby="environment">\n<h2 id="environment">Environment</h2>', field_table(rows, "Run")]
    if packages:
        out.append(
            table(
                ["Package", "Version"],
                [[esc(k), esc(v if v is not None else "not installed")] for k, v in packages.items()],
                caption="Packages",
            )
        )
    return "\n".join(out) + "\n</section>"


FINDING_STATUSES = ("refuted", "vacuous", "not-reproduced", "reading-dependent")


def _findings(data: dict) -> str:
    """The run's findings: the summary's counts when the run wrote them, and every claim that is one."""
    findings = (data.get("summary") or {}).get("findings")
    out = []
    if isinstance(findings, dict) and findings:
        rows = [[esc(k.replace("_", " ")), esc(v if not isinstance(v, list) else len(v))] for k, v in findings.items()]
        out.append(table(["Finding", "Count"], rows, caption="Counted by the run", numeric={1}))
    claims = [r for r in data.get("claims", []) if r.get("status") in FINDING_STATUSES or r.get("typo")]
    if claims:
        rows = [
            [
                claim_link(r["id"]),
                status_badge(r) + (' <span class="flag">typo</span>' if r.get("typo") else ""),
                esc(r.get("title", "")),
            ]
            for r in claims
        ]
        out.append(
            table(
                ["Claim", "Status", "Title"],
                rows,
                caption="Claims refuted, vacuous, not reproduced, reading-dependent or marking a typo",
            )
        )
    if not out:
        return ""
    return '<section aria-labelledby="findings">\n<h2 id="findings">Findings</h2>\n' + "\n".join(out) + "\n</section>"


def render_index(data: dict, stats: dict[str, dict], diff: dict | None, baseline_name: str) -> str:
    """The index page: the diff first (with a baseline), then per-paper counts, findings, environment.

    >>> data = {"claims": [{"id": "a/l-1", "status": "error", "expect": "verified"}]}
    >>> html = render_index(data, {"a": paper_stats(data, "a", {})}, None, "")
    >>> "FAILED: 1 claims, 1 not as expected" in html
    True
    """
    summary = data.get("summary") or {}
    env = data.get("environment") or {}
    records = data.get("claims", [])
    failed = [r for r in records if not passed(r)]
    seconds = summary.get("seconds")
    verdict = "PASSED" if not failed else "FAILED"
    body = [
        "<h1>fedtheory check report</h1>",
        f'<p class="verdict {"pass" if not failed else "fail"}">{verdict}: {len(records)} claims, '
        f"{len(failed)} not as expected"
        + (f", wall time {float(seconds):.1f} s" if isinstance(seconds, (int, float)) else "")
        + f" (seed {esc(env.get('seed', '?'))}).</p>",
        '<p>Built from <a href="check.json">check.json</a>. Each paper\'s page lists every claim with its statement, '
        "verdict, evidence, counterexample and figures.</p>",
    ]
    if diff is not None:
        body.append(_diff_section(diff, baseline_name, {r["id"] for r in records}))
    used = [s for s in statuses(data) if any(st["status"].get(s) for st in stats.values())]
    expects = list(EXPECTS[:3]) + [
        e
        for e in dict.fromkeys(e for st in stats.values() for e in st["expect"])
        if e not in EXPECTS[:3] and any(st["expect"].get(e) for st in stats.values())
    ]
    headers = (
        ["Paper", "Claims"]
        + [esc(s) for s in used]
        + [f"Expect {esc(e)}" for e in expects]
        + ["Not as expected", "Controlled share", "Claim seconds (sum)", "Statements not typeset"]
    )
    rows = []
    for paper, st in stats.items():
        share = share_text(controlled_share(data, paper))
        rows.append(
            [f'<a href="{esc(paper_file(paper))}">{esc(paper)}</a>', str(st["claims"])]
            + [str(st["status"].get(s, 0)) for s in used]
            + [str(st["expect"].get(e, 0)) for e in expects]
            + [
                f'<span class="{"fail" if st["failed"] else "pass"}">{st["failed"]}</span>',
                esc(share),
                f"{st['seconds']:.1f}",
                str(st["untypeset"]),
            ]
        )
    numeric = set(range(1, len(headers))) - {len(headers) - 3}
    body.append(
        '<section aria-labelledby="papers">\n<h2 id="papers">Papers</h2>\n<div class="scroll">'
        + table(
            headers,
            rows,
            caption=f"Claims by status and expectation (seed {esc(env.get('seed', '?'))}); "
            "claim seconds add up each claim's own time, so with several workers they exceed the wall time",
            numeric=numeric,
        )
        + "</div>\n</section>"
    )
    if failed:
        items = "".join(f"<li>{claim_link(r['id'])}: {status_badge(r)}</li>" for r in failed)
        body.append(
            f'<section aria-labelledby="failed">\n<h2 id="failed">Not as expected</h2>\n<ul>{items}</ul>\n</section>'
        )
    body.append(_findings(data))
    body.append(_environment_section(env))
    return page("fedtheory check report", "\n".join(b for b in body if b))


# ---------------------------------------------------------------- a paper's page


def _inventory_section(inventory: dict, by_id: dict[str, dict]) -> str:
    rows = []
    covered = gaps = absent = 0
    for label, entry in inventory.items():
        if isinstance(entry, str):
            gaps += 1
            rows.append([esc(label), f'<span class="gap">no claim: {esc(entry)}</span>'])
            continue
        present = [c for c in entry if c in by_id]
        covered += bool(present)
        absent += not present
        items = "".join(
            f"<li>{claim_link(c, same_page=True)} {status_badge(by_id[c])}</li>"
            if c in by_id
            else f'<li><code>{esc(c)}</code> <span class="muted">not in this run</span></li>'
            for c in entry
        )
        rows.append([esc(label), f'<ul class="plain">{items}</ul>'])
    head = (
        f"<p>{len(inventory)} numbered labels: {covered} covered by claims in this run, "
        f"{absent} covered only by claims not in this run, "
        f"<span class=\"gap\">{gaps} without a claim</span> (the reason is given).</p>"
    )
    return (
        '<section aria-labelledby="inventory">\n<h2 id="inventory">Inventory</h2>\n'
        + head
        + "\n"
        + table(
            ["Label", "Claims covering it, with their status in this run"],
            rows,
            caption="Every numbered label of the paper",
        )
        + "\n</section>"
    )


def _figures_section(figures: list[dict] | None, records: list[dict]) -> str:
    out = ['<section aria-labelledby="figures">\n<h2 id="figures">Figures</h2>']
    if figures is None:
        out.append(
            "<p class=\"muted\">No figures were given (build with <code>--figures DIR</code> from "
            "<code>fedtheory figures --out DIR</code>).</p>"
        )
    elif not figures:
        out.append('<p class="muted">The figures directory holds no figure of this paper.</p>')
    figures = figures or []
    for fig in figures:
        about = [r["id"] for r in records if r["id"].startswith(fig["id"] + "/") or r["id"] == fig["id"]]
        caption = esc(fig["caption"])
        sub = f'<br><strong>Substitute:</strong> {esc(fig["substitute"])}' if fig.get("substitute") else ""
        claims = ("<br>Claims about it: " + ", ".join(claim_link(c, same_page=True) for c in about)) if about else ""
        out.append(
            f'<figure id="f-{esc(fig["id"])}">\n<img src="{esc(fig["href_png"])}" '
            f'alt="{esc(fig["id"])}: {caption}" loading="lazy">\n'
            f"<figcaption><strong>{esc(fig['id'])}.</strong> {caption}{sub}<br>"
            f'Data: <a href="{esc(fig["href_json"])}">{esc(fig["href_json"])}</a>{claims}</figcaption>\n</figure>'
        )
    return "\n".join(out) + "\n</section>"


def _checks_table(items: list, with_fired: bool) -> str:
    headers = ["Name", "Description", "Status"] + (["Fired"] if with_fired else []) + ["Measured", "Notes"]
    if not with_fired:
        headers.append("Counterexample")
    rows = []
    for item in items:
        if not isinstance(item, dict):
            rows.append([esc(fmt(item))] + [""] * (len(headers) - 1))
            continue
        measured = item.get("measured")
        measured_text = (
            "<br>".join(f"<code>{esc(k)}</code> = {measured_value(v)}" for k, v in measured.items())
            if isinstance(measured, dict)
            else measured_value(measured)
            if measured is not None
            else ""
        )
        params = item.get("params")
        description = esc(item.get("description", "")) + (f"<br><code>{esc(fmt(params))}</code>" if params else "")
        row = [esc(item.get("name", "")), description, esc(item.get("status", ""))]
        if with_fired:
            row.append("yes" if item.get("fired") else '<span class="fail">no</span>')
        row += [measured_text, f'<span class="notes">{esc(item.get("notes") or "")}</span>']
        if not with_fired:
            cx = item.get("counterexample")
            row.append(f"<details><summary>JSON</summary>{json_block(cx)}</details>" if cx is not None else "")
        rows.append(row)
    return table(headers, rows)


def tolerance_text(evidence: dict) -> str:
    """The tolerance the verdict was judged with, as one line of text ("" when the check gives none).

    The evidence's ``tolerance``; else an exact proof; else measured values named as tolerances
    (``tol``, ``atol``, ``margin``, ...), which some checks record beside what they measured.

    >>> tolerance_text({"tolerance": {"relative": 1e-9, "why": "float64"}}), tolerance_text({"tolerance": 0.05})
    ('relative 1e-09; why float64', '0.05')
    >>> tolerance_text({"proof": "sympy"}), tolerance_text({"measured": {"gap": 2.0, "rtol": 1e-6}})
    ('none needed: exact proof', 'rtol 1e-06 (measured)')
    """
    tol = evidence.get("tolerance")
    if isinstance(tol, dict) and tol:
        return "; ".join(f"{k} {fmt(v)}" for k, v in tol.items())
    if tol is not None and not isinstance(tol, dict):
        return fmt(tol)
    if evidence.get("proof"):
        return "none needed: exact proof"
    measured = evidence.get("measured") or {}
    named = [
        (k, v)
        for k, v in measured.items()
        if isinstance(k, str) and any(w in k.lower() for w in ("tol", "margin", "slack", "threshold"))
    ]
    return "; ".join(f"{k} {fmt(v)}" for k, v in named) + " (measured)" if named else ""


def _tolerance(evidence: dict, status: str | None) -> str:
    text = tolerance_text(evidence)
    if text:
        return f"<p>Tolerance: {esc(text)}</p>"
    if status in ("refuted", "not-reproduced", "reading-dependent"):
        # a refutation should say by how much the statement had to fail; this check does not
        return (
            '<p class="gap">Tolerance: this check records none, so its refutation rests on the measured values '
            "above as they stand (the notes say when a replay in exact or high-precision arithmetic confirms "
            "it).</p>"
        )
    return '<p class="muted">Tolerance: the check records none.</p>'


def replay_command(record: dict) -> tuple[str, str]:
    """``(command, where)``: how to rerun the claim, which replays its stored counterexample first.

    A claim in a default content folder (``paper_checks/``, ``verify/``) is found by ``fedtheory check``
    alone: the content installed with fedtheory from any directory, a project's own from its root. A claim
    of another content file needs that file, named relative to the directory the run wrote paths against.

    >>> replay_command({"id": "a/l-1", "source": "paper_checks/a.py"})
    ("fedtheory check --claim 'a/l-1'", 'from any directory (from its project root for your own content)')
    >>> replay_command({"id": "mine/l-1", "source": "work/mine.py"})[0]
    "fedtheory check work/mine.py --claim 'mine/l-1'"
    """
    command = f"fedtheory check --claim {shell_quote(record['id'])}"
    source = str(record.get("source") or "")
    if not source or {"paper_checks", "verify"} & set(source.split("/")[:-1]):
        return command, "from any directory (from its project root for your own content)"
    top = source.split("/", 1)[0] if "/" in source else "."
    return (
        f"fedtheory check {shell_quote(source) if not _shell_safe(source) else source} "
        f"--claim {shell_quote(record['id'])}",
        f"from the directory holding {top}/" if top != "." else "from the directory holding that file",
    )


def _shell_safe(text: str) -> bool:
    return all(c.isalnum() or c in "/._-+" for c in text)


def render_claim(record: dict, statement_html: str, failed_spans: int) -> str:
    """One claim's ``<article>``: fields, statement, evidence, counterexample with its replay, controls, readings.

    >>> html = render_claim({"id": "a/l-1", "status": "refuted", "expect": "refuted",
    ...                      "evidence": {"counterexample": {"x": 1}}}, "s", 0)
    >>> "fedtheory check --claim &#x27;a/l-1&#x27;" in html
    True
    """
    ev = record.get("evidence") or {}
    cid = record["id"]
    status = record.get("status")
    cls = "skipped" if status == "skipped" and passed(record) else ("" if passed(record) else "fail")
    fields = [
        ("Reference", esc(record.get("ref", ""))),
        ("Status", status_badge(record)),
        ("Kind", esc(record.get("kind", ""))),
        ("Tier", esc(record.get("tier", ""))),
        ("Seed", esc(fmt(ev.get("seed")))),
        ("Seconds (this claim)", esc(f"{float(record.get('seconds') or 0.0):.3g}")),
    ]
    if record.get("requires"):
        fields.append(("Requires", esc(", ".join(record["requires"]))))
    flags = []
    if record.get("typo"):
        flags.append('<span class="flag">typo in the paper</span>')
    if record.get("substitute"):
        flags.append(f'<span class="flag">checked on substitute data: {esc(record["substitute"])}</span>')
    controlled = record.get("controlled")
    if isinstance(controlled, bool) and status == "verified":  # controls run only on a verified check
        fields.append(
            (
                "Controlled",
                "yes"
                if controlled
                else "no" + (f" ({esc(record['control_exempt'])})" if record.get("control_exempt") else ""),
            )
        )
    elif record.get("control_exempt") and status == "verified":
        fields.append(("Control exempt", esc(record["control_exempt"])))
    out = [
        f'<article class="claim {cls}" id="{esc(claim_anchor(cid))}" aria-labelledby="h-{esc(cid)}">',
        f'<h3 id="h-{esc(cid)}">{esc(cid)}</h3>',
    ]
    out.append(f'<p class="title">{esc(record.get("title", ""))}</p>')
    if flags:
        out.append("<p>" + "".join(flags) + "</p>")
    out.append(table([esc(k) for k, _ in fields], [[v for _, v in fields]], row_headers=False))
    out.append("<h4>Statement</h4>")
    out.append(f'<div class="statement">{statement_html}</div>')
    if failed_spans:
        out.append(
            f'<p class="gap">{failed_spans} math span{"s" if failed_spans > 1 else ""} could not be typeset; '
            "shown as LaTeX source.</p>"
        )
    out.append(
        f"<details><summary>LaTeX source</summary><pre><code>{esc(record.get('statement', ''))}</code></pre></details>"
    )
    out.append("<h4>Evidence</h4>")
    measured = ev.get("measured") or {}
    key, _ = key_value(record)
    if measured:
        rows = [
            [f"<code>{esc(k)}</code>" + (" <span class=\"muted\">(key)</span>" if k == key else ""), measured_value(v)]
            for k, v in measured.items()
        ]
        out.append(table(["Measured", "Value"], rows, numeric={1}))
    else:
        out.append('<p class="muted">Nothing measured.</p>')
    out.append(_tolerance(ev, status))
    if ev.get("proof"):
        out.append(f"<p>Proof: <code>{esc(ev['proof'])}</code></p>")
    if ev.get("notes"):
        out.append(f'<p class="notes">{esc(ev["notes"])}</p>')
    if ev.get("counterexample") is not None:
        out.append("<h4>Counterexample</h4>")
        command, where = replay_command(record)
        out.append(f"<p>Replay it, {esc(where)} (the runner replays the stored counterexample first):</p>")
        out.append(f"<pre><code>{esc(command)}</code></pre>")
        out.append(json_block(ev["counterexample"]))
    if ev.get("controls"):
        out.append("<h4>Negative controls</h4>")
        out.append(_checks_table(ev["controls"], with_fired=True))
    if ev.get("readings"):
        out.append("<h4>Readings</h4>")
        out.append(_checks_table(ev["readings"], with_fired=False))
    out.append("</article>")
    return "\n".join(out)


def shell_quote(text: str) -> str:
    """``text`` in single quotes for a POSIX shell (claim ids hold no quote, but stay safe).

    >>> shell_quote("a/lemma-1"), shell_quote("it's")
    ("'a/lemma-1'", "'it'\\\\''s'")
    """
    return "'" + text.replace("'", "'\\''") + "'"


def _key_value_cell(record: dict) -> str:
    """The claim's key measured value with its name (``worst_ratio = 0.93``), or empty."""
    key, value = key_value(record)
    return f"<code>{esc(key)}</code> = {measured_value(value)}" if key is not None else ""


def paper_heading(paper: str, meta: Any) -> list[str]:
    """The head of a paper's page: its title, authors, venue and arXiv link when the content's ``PAPER``
    gives them (:func:`fedtheory.report.data.paper_metadata`), else the key alone.

    >>> print("\\n".join(paper_heading("a", {"title": "On A", "authors": "X, Y", "arxiv": "2401.00001"})))
    <h1>On A</h1>
    <p class="byline">X, Y · <a href="https://arxiv.org/abs/2401.00001">arXiv:2401.00001</a> · key <code>a</code></p>
    >>> paper_heading("a", None)
    ['<h1>Paper: a</h1>']
    """
    if not isinstance(meta, dict) or not (meta.get("title") or meta.get("citation")):
        return [f"<h1>Paper: {esc(paper)}</h1>"]
    parts = [esc(meta[k]) for k in ("authors", "venue") if meta.get(k)]
    if meta.get("arxiv"):
        arxiv = str(meta["arxiv"])
        parts.append(f'<a href="https://arxiv.org/abs/{esc(arxiv)}">arXiv:{esc(arxiv)}</a>')
    parts.append(f"key <code>{esc(paper)}</code>")
    return [f"<h1>{esc(meta.get('title') or meta.get('citation'))}</h1>", f'<p class="byline">{" · ".join(parts)}</p>']


def render_paper(
    data: dict, paper: str, stats: dict, statements: dict[str, tuple[str, int]], figures: list[dict] | None
) -> str:
    """The page of one paper: summary, inventory, every claim of the paper in the run, then its figures.

    >>> data = {"claims": [{"id": "a/l-1", "status": "verified", "expect": "verified", "statement": "$x$"}],
    ...         "inventory": {"a": {"Lemma 1": ["a/l-1"], "Lemma 2": "no numbers in it"}}}
    >>> html = render_paper(data, "a", paper_stats(data, "a", {}), {"a/l-1": typeset("$x$")}, [])
    >>> 'id="c-a/l-1"' in html, "no claim: no numbers in it" in html
    (True, True)
    """
    records = [r for r in data.get("claims", []) if paper_of(r) == paper]
    by_id = {r["id"]: r for r in records}
    env = data.get("environment") or {}
    inventory = (data.get("inventory") or {}).get(paper)
    counts = ", ".join(f"{n} {esc(s)}" for s, n in stats["status"].items() if n)
    share = controlled_share(data, paper)
    body = paper_heading(paper, (data.get("papers") or {}).get(paper))
    body += [
        f"<p>{stats['claims']} claims ({counts or 'none'}); "
        f'<span class="{"fail" if stats["failed"] else "pass"}">{stats["failed"]} not as expected</span>; '
        f"claim seconds {stats['seconds']:.1f} (sum over its claims); seed {esc(env.get('seed', '?'))}; controlled share {esc(share_text(share))}"
        + (f"; {stats['untypeset']} statements not fully typeset" if stats["untypeset"] else "")
        + ".</p>"
    ]
    toc = ['<li><a href="#claims">Claims</a></li>', '<li><a href="#figures">Figures</a></li>']
    if inventory is not None:
        toc.insert(0, '<li><a href="#inventory">Inventory</a></li>')
    body.append(f'<nav aria-label="contents"><ul>{"".join(toc)}</ul></nav>')
    if share and share.get("exceptions"):
        items = "".join(
            f"<li>{claim_link(e.get('id', ''), True)}: {esc(e.get('reason', ''))}</li>" for e in share["exceptions"]
        )
        body.append(
            f"<details><summary>Verified claims without a fired negative control "
            f"({len(share['exceptions'])})</summary><ul>{items}</ul></details>"
        )
    if inventory is not None:
        body.append(_inventory_section(inventory, by_id))
    rows = [
        [
            claim_link(r["id"], True),
            esc(r.get("ref", "")),
            status_badge(r),
            _key_value_cell(r),
            esc(tolerance_text(r.get("evidence") or {})),
            esc(fmt(float(r.get("seconds") or 0.0))),
        ]
        for r in records
    ]
    body.append(
        '<section aria-labelledby="claims">\n<h2 id="claims">Claims</h2>\n'
        + table(
            ["Claim", "Reference", "Status", "Key value", "Tolerance", "Seconds"],
            rows,
            caption=f"All {len(records)} claims of {esc(paper)} in this run",
            numeric={5},
        )
    )
    for r in records:
        html_, failed = statements[r["id"]]
        body.append(render_claim(r, html_, failed))
    body.append("</section>")
    body.append(_figures_section(figures, records))
    current = ' aria-current="page"'
    nav = "".join(f' <a href="{esc(paper_file(p))}"{current if p == paper else ""}>{esc(p)}</a>' for p in papers(data))
    return page(f"{paper}: fedtheory check report", "\n".join(body), nav=nav)


def render_pages(
    data: dict, figures: list[dict] | None = None, diff: dict | None = None, baseline_name: str = "baseline"
) -> dict[str, str]:
    """``{file name: HTML}`` for the whole site; figures (None: none given) are dicts with ``href_png``/``href_json``.

    Each statement is typeset once.

    >>> sorted(render_pages({"claims": [{"id": "b/x-1", "status": "verified"}]}))
    ['index.html', 'paper-b.html']
    """
    statements = {r["id"]: typeset(str(r.get("statement") or "")) for r in data.get("claims", [])}
    failures = {cid: failed for cid, (_, failed) in statements.items()}
    stats = {p: paper_stats(data, p, failures) for p in papers(data)}
    pages = {"index.html": render_index(data, stats, diff, baseline_name)}
    for p in papers(data):
        pages[paper_file(p)] = render_paper(
            data, p, stats[p], statements, None if figures is None else [f for f in figures if f["paper"] == p]
        )
    return pages
