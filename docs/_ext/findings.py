"""Sphinx directive ``fedtheory-findings``: the five papers' findings, read from the claims themselves.

Every claim whose expected verdict is not ``verified`` (refuted, vacuous, not reproduced on substitute data,
reading-dependent), or that marks a typo, becomes a row under its paper: id, the paper's label, the verdict and
the claim's title. The page is generated from the content at build time, so it can never fall behind it; the
evidence (measured values, counterexamples, notes) comes from running the claim (``fedtheory check --claim ID``).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

FINDINGS = ("refuted", "vacuous", "not-reproduced", "reading-dependent")


def findings_by_paper():
    """``{paper: (title line, [claims])}`` of the content shipped with fedtheory, papers in order of their key."""
    from fedtheory.content import default_content_root, load_claims
    from fedtheory.report.data import run_papers

    root = default_content_root()
    found = [c for c in load_claims([str(root / "paper_checks")]) if c.expect in FINDINGS or c.typo]
    papers = run_papers(found)  # the report's lookup of each paper's PAPER
    out: dict = {}
    for claim in found:
        if claim.paper not in out:
            meta = papers.get(claim.paper, {})
            title = meta.get("title") or meta.get("citation") or claim.paper
            if meta.get("arxiv"):
                title += f" (arXiv:{meta['arxiv']})"
            out[claim.paper] = (title, [])
        out[claim.paper][1].append(claim)
    return dict(sorted(out.items()))


def _row(*cells):
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=str(cell))
        row += entry
    return row


class Findings(SphinxDirective):
    has_content = False

    def run(self):
        sections = []
        for paper, (title, claims) in findings_by_paper().items():
            section = nodes.section(ids=[nodes.make_id(f"findings-{paper}")])
            section += nodes.title(text=title)
            table, group = nodes.table(), nodes.tgroup(cols=4)
            table += group
            for width in (34, 18, 12, 36):
                group += nodes.colspec(colwidth=width)
            head, body = nodes.thead(), nodes.tbody()
            head += _row("Claim", "Paper's label", "Verdict", "Title")
            for c in claims:
                verdict = c.expect + (" (typo)" if c.typo else "")
                body += _row(nodes.paragraph("", "", nodes.literal(text=c.id)), c.ref, verdict, c.title)
            group += head
            group += body
            section += table
            sections.append(section)
        return sections


def setup(app):
    app.add_directive("fedtheory-findings", Findings)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
