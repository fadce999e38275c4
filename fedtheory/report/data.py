"""Reading what a report is built from: a check JSON, a figures directory, a run's inventories.

The report reads the JSON, never the claims: a JSON written by an older or newer fedtheory still
builds. Fields other branches of the contract add (negative controls, readings, the statuses
``not-reproduced`` and ``reading-dependent``) are used when present and never required.

>>> data = {"claims": [{"id": "a/lemma-1", "paper": "a", "status": "verified", "expect": "verified"}],
...         "summary": {}, "environment": {"seed": 0}}
>>> papers(data), statuses(data)[:3]
(['a'], ['verified', 'refuted', 'vacuous'])
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from fedtheory.claims.core import STATUSES
from fedtheory.errors import UsageError

# A measured value longer than this is folded on the site (shown whole, never cut).
MAX_VALUE_CHARS = 400


def fmt(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A measured value as short text: floats to 6 significant digits, other values as compact JSON.

    >>> fmt(0.123456789), fmt(3), fmt([1, 2]), fmt(None), fmt(True)
    ('0.123457', '3', '[1, 2]', 'null', 'true')
    """
    if isinstance(value, float):
        return f"{value:.6g}" if math.isfinite(value) else str(value)
    if isinstance(value, (bool, type(None))) or not isinstance(value, (int, str)):
        text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "… (cut; full value in check.json)"


# Statuses the growing contract adds (DESIGN.md, "Growing the contract"); shown after the engine's own.
LATER_STATUSES = ("not-reproduced", "reading-dependent")


def statuses(data: dict) -> list[str]:
    """Every status to count, in a stable order: the engine's, the contract's later ones, then any other seen.

    >>> statuses({"claims": [{"status": "odd"}]})[3:]
    ['not-reproduced', 'reading-dependent', 'inconclusive', 'skipped', 'error', 'odd']
    """
    order = [s for s in STATUSES if s not in ("inconclusive", "skipped", "error")]
    order += [s for s in LATER_STATUSES if s not in order] + [s for s in ("inconclusive", "skipped", "error")]
    order += [s for s in STATUSES if s not in order]
    for record in data.get("claims", []):
        if record.get("status") not in order:
            order.append(record.get("status"))
    return order


def load_check(path: Path | str, what: str = "check JSON") -> dict:
    """The check JSON at ``path``; a missing file or one that is not a check JSON is a one-line :class:`UsageError`.

    Only the structure the report relies on is required (``claims``: records with a string ``id``, a known
    ``status`` and an ``evidence`` object); other fields are read when present.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = f.write_text('{"figures": []}')
    >>> try:
    ...     load_check(f)
    ... except UsageError as e:
    ...     print(str(e).replace(str(f), "F"))
    F is not a check JSON (fedtheory check --json): no "claims" list
    """
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{what} {path} does not exist")
    if path.is_dir():
        raise UsageError(f"{what} {path} is a directory")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not JSON (not UTF-8 text)") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from exc
    problem = _structure_problem(data)
    if problem:
        raise UsageError(f"{path} is not a check JSON (fedtheory check --json): {problem}")
    return data


def _structure_problem(data) -> str | None:
    if not isinstance(data, dict):
        return f"the top level is a {type(data).__name__}, not an object"
    if not isinstance(data.get("claims"), list):
        return 'no "claims" list'
    for i, record in enumerate(data["claims"]):
        if not isinstance(record, dict):
            return f"claims[{i}] is not an object"
        for key in ("id", "status"):
            if not isinstance(record.get(key), str):
                return f'claims[{i}] has no string "{key}"'
        if record["status"] not in STATUSES:
            return f'claims[{i}] ({record["id"]}) has status {record["status"]!r}, not one of {", ".join(STATUSES)}'
        if not isinstance(record.get("evidence"), dict):
            return f'claims[{i}] ({record["id"]}) has no "evidence" object'
    for key in ("summary", "environment", "inventory"):
        if key in data and not isinstance(data[key], dict):
            return f'"{key}" is not an object'
    return None


def paper_of(record: dict) -> str:
    """A record's paper: its ``paper`` field, else the first part of its id.

    >>> paper_of({"id": "verify/numpy-torch/x"})
    'verify'
    """
    return record.get("paper") or record["id"].split("/", 1)[0]


def papers(data: dict) -> list[str]:
    """The papers of the run, in the order their first claims appear (then inventory-only papers).

    >>> papers({"claims": [{"id": "b/x-1"}, {"id": "a/x-1"}, {"id": "b/x-2"}], "inventory": {"c": {}}})
    ['b', 'a', 'c']
    """
    out: list[str] = []
    for record in data.get("claims", []):
        p = paper_of(record)
        if p not in out:
            out.append(p)
    return out + [p for p in (data.get("inventory") or {}) if p not in out]


def controlled_share(data: dict, paper: str) -> dict | None:
    """``{verified, controlled, share, exceptions, source}`` for ``paper``, or None when the run recorded no controls.

    From ``summary.controls[paper]`` when the run wrote it, else computed from the records as the runner
    computes it (:func:`fedtheory.claims.runner.control_shares`; a record without a ``controlled`` flag
    is judged by :func:`~fedtheory.claims.runner.is_controlled`). A run from before negative controls
    existed (no record has a flag, controls or a proof) recorded none.

    >>> data = {"claims": [{"id": "a/l-1", "status": "verified", "controlled": True},
    ...                    {"id": "a/l-2", "status": "verified", "controlled": False, "control_exempt": "symbolic"}]}
    >>> controlled_share(data, "a")
    {'verified': 2, 'controlled': 1, 'share': 0.5, 'exceptions': [{'id': 'a/l-2', 'reason': 'symbolic'}], 'source': 'records'}
    >>> controlled_share({"claims": [{"id": "a/l-1", "status": "verified", "evidence": {}}]}, "a") is None
    True
    """
    from fedtheory.claims.runner import control_shares, is_controlled

    summary = ((data.get("summary") or {}).get("controls") or {}).get(paper)
    if isinstance(summary, dict):
        return {
            "verified": summary.get("verified"),
            "controlled": summary.get("controlled"),
            "share": summary.get("share"),
            "exceptions": list(summary.get("exceptions") or []),
            "source": "summary",
        }
    records = [r for r in data.get("claims", []) if paper_of(r) == paper]
    if not any(
        "controlled" in r or (r.get("evidence") or {}).get("controls") or (r.get("evidence") or {}).get("proof")
        for r in records
    ):
        return None
    flagged = [
        dict(r, controlled=r["controlled"] if isinstance(r.get("controlled"), bool) else is_controlled(r))
        for r in records
    ]
    share = control_shares(flagged).get(paper)
    return None if share is None else {**share, "source": "records"}


def run_inventory(claims: list) -> dict:
    """``{paper: {label: [claim ids] | reason}}`` from the ``INVENTORY`` of the content files the claims came from.

    A paper's inventory lives in ``paper_checks/<paper>/__init__.py`` (a paper package) or
    ``paper_checks/<paper>.py``; a claim from a section of the package or a sibling part
    ``<paper>_<part>.py`` leads there too. Papers without an inventory file are left out.

    >>> import tempfile, pathlib
    >>> from fedtheory.content import load_claims
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "demo.py").write_text('''
    ... from fedtheory.claims.core import claim
    ... INVENTORY = {"Lemma 1": ["demo/lemma-1"], "Lemma 2": "a definition, nothing to check"}
    ... @claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
    ... def lemma_1(ctx):
    ...     return ctx.verified()
    ... ''')
    >>> run_inventory(load_claims([str(d)]))
    {'demo': {'Lemma 1': ['demo/lemma-1'], 'Lemma 2': 'a definition, nothing to check'}}
    """
    from fedtheory.content import content_folder, load_inventory, paper_home

    out: dict[str, dict] = {}
    for claim in claims:
        if claim.paper in out or not claim.source:
            continue
        home = paper_home(content_folder(claim.source), claim.paper)
        if home is None:
            continue
        inventory = load_inventory(home)
        if inventory is not None:
            out[claim.paper] = {
                str(label): entry if isinstance(entry, str) else [str(i) for i in entry]
                for label, entry in inventory.items()
            }
    return out


#: the fields of a paper's metadata the check JSON keeps (check.schema.json, ``papers``)
PAPER_FIELDS = ("title", "authors", "venue", "arxiv", "citation")


def paper_metadata(paper: Any) -> dict | None:
    """A content's ``PAPER`` as ``{title, authors, venue, arxiv}`` (the fields it gives), or None.

    ``PAPER`` is a dict with those keys, or a citation line ending in ``(arXiv:ID)``.

    >>> paper_metadata({"key": "x", "title": "On X", "arxiv": "2103.05032", "authors": "A, B"})
    {'title': 'On X', 'authors': 'A, B', 'arxiv': '2103.05032'}
    >>> paper_metadata("A & B, On X (arXiv:2407.07084)")
    {'citation': 'A & B, On X', 'arxiv': '2407.07084'}
    >>> paper_metadata(None) is None
    True
    """
    if isinstance(paper, dict):
        meta = {k: str(paper[k]) for k in PAPER_FIELDS if paper.get(k)}
        return meta or None
    if isinstance(paper, str) and paper.strip():
        found = re.search(r"\s*\(?arXiv:\s*([\w./-]+?)\)?\s*$", paper.strip())
        if found is None:
            return {"citation": paper.strip()}
        return {"citation": paper.strip()[: found.start()].rstrip(" ,;"), "arxiv": found.group(1)}
    return None


def run_papers(claims: list) -> dict:
    """``{paper: metadata}`` from the ``PAPER`` of the content the claims came from (:func:`paper_metadata`):
    the file that holds its inventory (:func:`fedtheory.content.paper_home`).

    >>> import tempfile, pathlib
    >>> from fedtheory.content import load_claims
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "demo.py").write_text('''
    ... from fedtheory.claims.core import claim
    ... PAPER = {"title": "A demo", "authors": "Ada", "arxiv": "2401.00001"}
    ... @claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
    ... def lemma_1(ctx):
    ...     return ctx.verified()
    ... ''')
    >>> run_papers(load_claims([str(d)]))
    {'demo': {'title': 'A demo', 'authors': 'Ada', 'arxiv': '2401.00001'}}
    """
    from fedtheory.content import content_folder, load_module, paper_home

    out: dict[str, dict] = {}
    for claim in claims:
        if claim.paper in out or not claim.source:
            continue
        home = paper_home(content_folder(claim.source), claim.paper)  # the same file as the inventory's
        meta = paper_metadata(getattr(load_module(home), "PAPER", None)) if home is not None else None
        if meta is not None:
            out[claim.paper] = meta
    return out


def load_figures(directory: Path | str) -> list[dict]:
    """The figures of a ``fedtheory figures --out DIR``: ``[{id, paper, png, json, caption, substitute}]``.

    ``png`` and ``json`` are absolute paths; a figure whose files are gone is left out. A directory
    without a readable ``manifest.json`` is a :class:`UsageError`.

    >>> try:
    ...     load_figures("no/such/dir")
    ... except UsageError as e:
    ...     print(e)
    --figures no/such/dir has no manifest.json (write one with fedtheory figures --out DIR)
    """
    directory = Path(directory)
    manifest_path = directory / "manifest.json"
    if not manifest_path.is_file():
        raise UsageError(f"--figures {directory} has no manifest.json (write one with fedtheory figures --out DIR)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {manifest_path}: {exc}") from exc
    entries = manifest.get("figures") if isinstance(manifest, dict) else manifest
    if not isinstance(entries, list):
        raise UsageError(f"{manifest_path} is not a figures manifest (no list of figures)")
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("id", "png", "json")):
            raise UsageError(f"{manifest_path} has an entry without id, png and json: {str(entry)[:80]}")
        png, data_json = directory / entry["png"], directory / entry["json"]
        if not png.is_file() or not data_json.is_file():
            continue
        try:
            figure = json.loads(data_json.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read figure data {data_json}: {exc}") from exc
        out.append(
            {
                "id": entry["id"],
                "paper": entry["id"].split("/", 1)[0],
                "png": png,
                "json": data_json,
                "caption": str(figure.get("caption") or ""),
                "substitute": figure.get("substitute"),
                "seconds": entry.get("seconds"),
            }
        )
    return out
