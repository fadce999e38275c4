"""``fedtheory check --list``: the claims a check would run, without running them.

The selection is the check's own (``PATH ...``, ``--paper``, ``--claim``, ``--tier``), so the list is exactly what
``fedtheory check`` with the same options runs. Each row: id, paper, tier, expect, kind, title (``--json FILE``
adds ref, requires and the content file). Nothing is imported beyond what loading the content files needs.

>>> from fedtheory.claims.core import claim
>>> lemma = claim(id="demo/lemma-1", ref="Lemma 1", title="A bound", statement="s", kind="numeric")(lambda c: None)
>>> print(format_rows([claim_row(lemma)]))
id            paper  tier  expect    kind     title
demo/lemma-1  demo   fast  verified  numeric  A bound
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fedtheory.content import default_content_root

#: the columns of the printed list, in order
COLUMNS = ("id", "paper", "tier", "expect", "kind", "title")


def claim_row(claim) -> dict:
    """One claim as a row of the list (the JSON form: the columns plus ref, requires and its content file,
    relative to the cwd or to the installed content when inside them, else its file name: no machine's paths).

    >>> from fedtheory.claims.core import claim
    >>> c = claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="probe", tier="full",
    ...           requires=("torch",))(lambda ctx: None)
    >>> row = claim_row(c); row["paper"], row["tier"], row["requires"], row["source"]
    ('demo', 'full', ['torch'], None)
    """
    return {
        "id": claim.id,
        "paper": claim.paper,
        "tier": claim.tier,
        "expect": claim.expect,
        "kind": claim.kind,
        "title": claim.title,
        "ref": claim.ref,
        "requires": list(claim.requires),
        "source": _shown_path(claim.source),
    }


def _shown_path(source: str | None) -> str | None:
    # relative to where the content was found, so a list carries no path of the machine that made it
    if source is None:
        return None
    path = Path(source)
    for base in (Path.cwd(), default_content_root()):
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return path.name


def format_rows(rows: list[dict]) -> str:
    """The rows as a plain-text table, one claim a line (left-aligned columns, nothing cut), for reading or grep."""
    table = [list(COLUMNS)] + [[str(row[c]) for c in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS) - 1)]
    return "\n".join("  ".join([cell.ljust(w) for cell, w in zip(line, widths)] + [line[-1]]) for line in table)


def _selected(args: argparse.Namespace) -> list:
    from fedtheory.content import load_claims, select

    # several --claim: the union, in the content files' order (each glob must match, as in check)
    return select(load_claims(args.paths or None), paper=args.paper, claim_glob=args.claim, tier=args.tier)


def list_claims(args: argparse.Namespace) -> int:
    """``fedtheory check --list``: print the selected claims (or write them to ``--json``); exit 0.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "demo.py").write_text('''
    ... from fedtheory.claims.core import claim
    ... for i, tier in ((1, "fast"), (2, "full")):
    ...     globals()[f"lemma_{i}"] = claim(id=f"demo/lemma-{i}", ref=f"Lemma {i}", title=f"Bound {i}",
    ...                                     statement="s", kind="numeric", tier=tier)(lambda ctx: None)
    ... ''')
    >>> args = argparse.Namespace(paths=[str(d)], paper=None, claim=None, tier="full", json=None)
    >>> list_claims(args)
    id            paper  tier  expect    kind     title
    demo/lemma-1  demo   fast  verified  numeric  Bound 1
    demo/lemma-2  demo   full  verified  numeric  Bound 2
    0
    """
    from fedtheory.content import check_tier

    check_tier(args.tier)
    rows = [claim_row(c) for c in _selected(args)]
    if args.json is None:
        print(format_rows(rows))
        return 0
    from fedtheory.sweep import check_output_file, write_json_atomic

    check_output_file(args.json, "--json")
    write_json_atomic(args.json, {"claims": rows, "count": len(rows)}, indent=1)
    return 0
