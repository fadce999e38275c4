"""The command-line side of the report: ``fedtheory report`` and ``check --baseline/--report``.

``fedtheory.cli`` only wires these in, so the command's logic lives with the report.

>>> p = argparse.ArgumentParser()
>>> add_check_options(p)
>>> p.parse_args(["--baseline", "old.json", "--report", "site"]).report
'site'
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fedtheory.errors import UsageError  # noqa: F401  (the example below catches it from here)


def add_check_options(check: argparse.ArgumentParser) -> None:
    """``--baseline OLD.json`` and ``--report DIR`` of ``fedtheory check``.

    >>> p = argparse.ArgumentParser()
    >>> add_check_options(p)
    >>> p.parse_args([]).baseline is None
    True
    """
    check.add_argument(
        "--baseline",
        metavar="OLD.json",
        help="an earlier check JSON: print what changed at the end (the exit code is unchanged)",
    )
    check.add_argument("--report", metavar="DIR", help="write the report site (fedtheory report) to DIR after the run")


def add_report_parser(sub: Any) -> None:
    """The ``fedtheory report CHECK.json [--figures DIR] [--baseline OLD.json] --out DIR`` subcommand.

    >>> sub = argparse.ArgumentParser().add_subparsers(dest="command")
    >>> add_report_parser(sub)
    >>> sub.choices["report"].parse_args(["run.json", "--out", "site"]).out
    'site'
    """
    rp = sub.add_parser("report", help="write a static, offline site from a check JSON (and figures, and a baseline)")
    rp.add_argument("check", metavar="CHECK.json", help="written by fedtheory check --json")
    rp.add_argument("--figures", metavar="DIR", help="written by fedtheory figures --out DIR")
    rp.add_argument("--baseline", metavar="OLD.json", help="an earlier check JSON: the index starts with what changed")
    rp.add_argument("--out", required=True, metavar="DIR", help="where the site goes (replaced whole)")


def cmd_report(args: argparse.Namespace) -> int:
    """``fedtheory report``: build the site, print where it is; bad input is a UsageError (exit 2).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> try:
    ...     cmd_report(argparse.Namespace(check=str(d / "no.json"), figures=None, baseline=None, out=str(d / "site")))
    ... except UsageError as e:
    ...     print(str(e).replace(str(d), "D"))
    check JSON D/no.json does not exist
    """
    from fedtheory.report.build import build_report_files

    out = build_report_files(args.check, args.out, figures=args.figures, baseline=args.baseline)
    print(f"wrote {out / 'index.html'}")
    return 0


def before_check(args: argparse.Namespace) -> dict | None:
    """Validate ``--baseline`` and ``--report`` before the run (a long run must not end in a usage error).

    Returns the baseline JSON, or None.

    >>> before_check(argparse.Namespace(report=None, baseline=None)) is None
    True
    """
    from fedtheory.report.build import check_destination
    from fedtheory.report.data import load_check

    if args.report is not None:
        check_destination(args.report, "--report")
    return load_check(args.baseline, "baseline JSON") if args.baseline is not None else None


def after_check(args: argparse.Namespace, data: dict, baseline: dict | None, console: Any) -> None:
    """Print the diff against the baseline under the table; write the site with ``--report``.

    >>> import io
    >>> from rich.console import Console
    >>> c = Console(file=io.StringIO(), record=True)
    >>> run = {"claims": [{"id": "a/l-1", "status": "verified"}]}
    >>> after_check(argparse.Namespace(report=None, baseline="old.json", json=None), run, {"claims": []}, c)
    >>> print(c.export_text().strip())
    changes since old.json (0 claims in both runs):
      added a/l-1
    """
    if baseline is not None:
        from fedtheory.report.diff import diff_runs, render_diff

        render_diff(diff_runs(baseline, data), console, args.baseline)
    if args.report is not None:
        from fedtheory.report.build import build_report

        out = build_report(
            data,
            args.report,
            baseline=baseline,
            baseline_name=Path(args.baseline).name if args.baseline else "",
            source=args.json,
            baseline_source=args.baseline,
        )
        console.print(f"report: {out / 'index.html'}", highlight=False, markup=False, soft_wrap=True)
