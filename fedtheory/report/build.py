"""Writing the report site: ``build_report`` (from loaded JSON) and ``build_report_files`` (from paths).

``build_report`` turns a check JSON (``fedtheory check --json``), optionally a figures directory
(``fedtheory figures --out DIR``) and a baseline check JSON, into ``OUT/``::

    index.html            the diff against the baseline (first), per paper: counts by status and
                          expectation, controlled share, time; findings; environment and seed
    paper-<key>.html      every claim of the paper: id, reference, title, statement typeset as
                          MathML, status against expectation, evidence, counterexample with its
                          replay command, negative controls, readings; the inventory; the figures
    figures/<paper>/...   each figure's PNG beside its data JSON
    check.json            the JSON the site was built from (baseline.json: the baseline)

Pages open from disk with no network (inline CSS, MathML, no JavaScript). The site is built in a
temporary directory beside ``OUT`` and renamed into place, so a reader never sees half of it; an
existing ``OUT`` is replaced only when it is empty or an earlier report.

>>> import tempfile, pathlib, json
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> data = {"claims": [{"id": "a/lemma-1", "paper": "a", "ref": "Lemma 1", "title": "t", "statement": "$x$",
...         "expect": "verified", "status": "verified", "evidence": {"measured": {}}}], "summary": {}, "environment": {}}
>>> out = build_report(data, d / "site")
>>> sorted(p.name for p in out.iterdir())
['.fedtheory-report', 'check.json', 'index.html', 'paper-a.html']
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from fedtheory.errors import UsageError
from fedtheory.report.data import load_check, load_figures
from fedtheory.report.diff import diff_runs
from fedtheory.report.site import render_pages

MARKER = ".fedtheory-report"

__all__ = ["build_report", "build_report_files", "check_destination", "load_check", "MARKER"]


def check_destination(out: Path | str, option: str = "--out") -> None:
    """A :class:`UsageError` unless ``out`` may take the site: absent, an empty directory or an earlier report.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "notes.txt").write_text("mine")
    >>> try:
    ...     check_destination(d, "--report")
    ... except UsageError as e:
    ...     print(str(e).replace(str(d), "D"))
    --report D is a non-empty directory that is not a fedtheory report (not replacing it)
    """
    from fedtheory.sweep import _probe_directory

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise UsageError(f"{option} {out} is a non-empty directory that is not a fedtheory report (not replacing it)")
    # the site is built beside ``out`` and renamed into place: its parent (or nearest ancestor) must take files
    _probe_directory(out.absolute().parent, f"cannot write the report to {out} ({option})")


def build_report(
    data: dict,
    out: Path | str,
    *,
    figures: Path | str | None = None,
    baseline: dict | None = None,
    baseline_name: str = "baseline",
    source: Path | str | None = None,
    baseline_source: Path | str | None = None,
) -> Path:
    """Write the site for check JSON ``data`` to ``out`` atomically; return ``out``.

    ``figures`` is a ``fedtheory figures --out`` directory; ``baseline`` an earlier check JSON whose
    diff heads the index. ``source``/``baseline_source`` are the files the JSON came from, copied
    byte for byte (else ``data`` is written). Bad input is a one-line :class:`UsageError`.

    >>> import tempfile, pathlib
    >>> blocker = pathlib.Path(tempfile.mkdtemp()) / "file"
    >>> _ = blocker.write_text("x")
    >>> try:
    ...     build_report({"claims": []}, blocker)
    ... except UsageError as e:
    ...     print(str(e).replace(str(blocker), "F"))
    --out F exists and is not a directory
    """
    out = Path(out)
    check_destination(out)
    figure_list = load_figures(figures) if figures is not None else None
    for fig in figure_list or []:
        fig["href_json"] = f"figures/{fig['paper']}/{Path(fig['json']).name}"
        fig["href_png"] = f"figures/{fig['paper']}/{Path(fig['png']).name}"
    diff = diff_runs(baseline, data) if baseline is not None else None
    pages = render_pages(data, figure_list, diff, baseline_name)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    except OSError as exc:
        raise UsageError(f"cannot write the report to {out}: {exc.strerror or exc}") from exc
    try:
        for name, text in pages.items():
            (tmp / name).write_text(text, encoding="utf-8")
        _copy_or_dump(source, data, tmp / "check.json")
        if baseline is not None:
            _copy_or_dump(baseline_source, baseline, tmp / "baseline.json")
        for fig in figure_list or []:
            for key in ("png", "json"):
                target = tmp / fig[f"href_{key}"]
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(fig[key], target)
        (tmp / MARKER).write_text(
            "a site written by fedtheory report; replaced whole on the next build\n", encoding="utf-8"
        )
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a report is for reading
        _swap_into_place(tmp, out)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UsageError(f"cannot write the report to {out}: {exc.strerror or exc}") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _copy_or_dump(source: Path | str | None, data: dict, target: Path) -> None:
    if source is not None:
        shutil.copyfile(source, target)
    else:
        target.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _swap_into_place(tmp: Path, out: Path) -> None:
    """Rename the finished site to ``out``; an earlier report there is moved aside first, then removed."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        if old.exists():
            shutil.rmtree(old)
        os.replace(out, old)
    try:
        os.replace(tmp, out)
    except OSError:
        if old is not None:
            os.replace(old, out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build_report_files(
    check: Path | str, out: Path | str, *, figures: Path | str | None = None, baseline: Path | str | None = None
) -> Path:
    """``fedtheory report CHECK.json [--figures DIR] [--baseline OLD.json] --out DIR``: read the files, build the site.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> try:
    ...     build_report_files(d / "missing.json", d / "site")
    ... except UsageError as e:
    ...     print(str(e).replace(str(d), "D"))
    check JSON D/missing.json does not exist
    """
    data = load_check(check)
    old = load_check(baseline, "baseline JSON") if baseline is not None else None
    return build_report(
        data,
        out,
        figures=figures,
        baseline=old,
        baseline_name=Path(baseline).name if baseline else "",
        source=check,
        baseline_source=baseline,
    )
