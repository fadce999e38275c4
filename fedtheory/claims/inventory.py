"""Inventory of a paper's numbered statements: every label is covered by claims or says why not.

A paper's home, ``paper_checks/<key>/__init__.py`` of a paper package or ``paper_checks/<key>.py``, defines
``PAPER_LABELS`` (every numbered label of the paper) and
``INVENTORY`` mapping each label to the ids of the claims covering it, or to a non-empty reason.

>>> from fedtheory.claims.core import claim
>>> c = claim(id="demo/theorem-1", ref="Theorem 1", title="t", statement="s", kind="numeric")(lambda ctx: None)
>>> check_inventory({"Theorem 1": ["demo/theorem-1"], "Lemma 1": "pending: needs a PEP"}, [c], "demo",
...                 labels=("Theorem 1", "Lemma 1"))
[]
>>> check_inventory({"Theorem 1": []}, [c], "demo")
["'Theorem 1': an empty list (give claim ids or a reason)", 'claim demo/theorem-1 is not in the inventory']
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable


def check_inventory(inventory: dict, claims: list, paper: str, labels: Iterable[str] | None = None) -> list[str]:
    """Problems with ``paper``'s inventory (empty when complete).

    Each entry must be a non-empty list of ids of loaded claims of ``paper``, or a non-empty string
    reason; every loaded claim of ``paper`` must be referenced; with ``labels`` (the paper's
    ``PAPER_LABELS``) the inventory's keys must be exactly those labels.

    >>> check_inventory({"Lemma 2": ["demo/lemma-2"], "Lemma 3": " "}, [], "demo", labels=["Lemma 2", "Lemma 4"])
    ["'Lemma 2': unknown claim demo/lemma-2", "'Lemma 3': an empty reason", 'label Lemma 4 of the paper is missing from the inventory', 'inventory label Lemma 3 is not in PAPER_LABELS']
    """
    problems: list[str] = []
    ids = {c.id: c for c in claims}
    referenced: set[str] = set()
    for label, entry in inventory.items():
        if isinstance(entry, str):
            if not entry.strip():
                problems.append(f"{label!r}: an empty reason")
        elif isinstance(entry, (list, tuple)):
            if not entry:
                problems.append(f"{label!r}: an empty list (give claim ids or a reason)")
            for cid in entry:
                if cid not in ids:
                    problems.append(f"{label!r}: unknown claim {cid}")
                elif ids[cid].paper != paper:
                    problems.append(f"{label!r}: claim {cid} belongs to paper {ids[cid].paper!r}, not {paper!r}")
                referenced.add(cid)
        else:
            problems.append(f"{label!r}: must be a list of claim ids or a reason, got {type(entry).__name__}")
    for cid in sorted(ids):
        if ids[cid].paper == paper and cid not in referenced:
            problems.append(f"claim {cid} is not in the inventory")
    if labels is not None:
        labels = list(labels)
        for label in labels:
            if label not in inventory:
                problems.append(f"label {label} of the paper is missing from the inventory")
        for label in inventory:
            if label not in labels:
                problems.append(f"inventory label {label} is not in PAPER_LABELS")
        dupes = sorted({x for x in labels if labels.count(x) > 1})
        if dupes:
            problems.append(f"PAPER_LABELS repeats {', '.join(dupes)}")
    return problems


def inventory_problems(path: Path | str, paper: str | None = None) -> list[str]:
    """Problems with the inventory of the paper at ``path``: a content file ``<key>.py`` or a paper package
    ``<key>/`` (paper key defaults to the file's stem or the package's name).

    Checks ``INVENTORY`` against the paper's claims — those of the file, or of every section module of the
    package, and of the sibling parts ``<key>_<part>.py`` beside it — and its ``PAPER_LABELS``; a paper
    without ``INVENTORY`` or ``PAPER_LABELS`` is itself a problem.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "demo.py"
    >>> _ = f.write_text('''
    ... from fedtheory.claims.core import claim
    ... PAPER_LABELS = ("Theorem 1",)
    ... INVENTORY = {"Theorem 1": ["demo/theorem-1"]}
    ... @claim(id="demo/theorem-1", ref="Theorem 1", title="t", statement="s", kind="numeric")
    ... def theorem_1(ctx):
    ...     return ctx.verified()
    ... ''')
    >>> inventory_problems(f)
    []
    """
    from fedtheory.content import discover, is_paper_package, load_module, module_claims

    path = Path(path).resolve()
    if path.name == "__init__.py":
        path = path.parent
    module = load_module(path)
    paper = paper or path.stem
    # A paper's claims may be split over sections (a package's modules) and sibling parts <key>_<part>.py
    # (figure claims, say); the one inventory covers them all.
    sections = discover([str(path)], ()) if is_paper_package(path) else [path]
    claims = [c for section in sections for c in module_claims(load_module(section))]
    for sibling in discover([str(path.parent)], ()):
        if sibling.parent == path.parent and sibling.stem.startswith(f"{paper}_"):
            claims += [c for c in module_claims(load_module(sibling)) if c.paper == paper]
    inventory = getattr(module, "INVENTORY", None)
    labels = getattr(module, "PAPER_LABELS", None)
    problems = []
    if inventory is None:
        problems.append(f"{path}: no INVENTORY")
    if labels is None:
        problems.append(f"{path}: no PAPER_LABELS")
    if inventory is None:
        return problems
    return problems + check_inventory(dict(inventory), claims, paper, labels=labels)
