"""The ``fedtheory`` command line: ``check`` claims and regenerate ``figures``.

::

    fedtheory check   [PATH ...] [--paper KEY] [--claim GLOB] [--tier fast|full] [--json FILE] [--seed N]
                      [--workers N] [--scheduler ADDRESS]
    fedtheory figures [PATH ...] [--paper KEY] [--figure ID]  [--tier fast|full] [--out DIR]  [--seed N]
                      [--workers N] [--scheduler ADDRESS]

Bad input gets one line ``error: ...`` on stderr and exit code 2, never a traceback. ``check``
exits 0 exactly when every selected claim passed (status equals expect, or skipped for a missing
optional capability), 1 otherwise; an internal error is one line and exit code 3
(``FEDTHEORY_DEBUG=1`` shows its traceback). Heavy libraries are imported only by the commands that need them.

>>> main(["--version"])
fedtheory 0.1.0
0
>>> main(["check", "--tier", "warp"])
2
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fedtheory import __version__
from fedtheory.content import UsageError, check_tier


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`UsageError` instead of printing usage and exiting."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise UsageError(message)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="content files or directories (default: paper_checks/ and verify/ for check, figures/ for figures)")
    p.add_argument("--paper", metavar="KEY", help="only this paper's items (e.g. localupdate)")
    p.add_argument("--tier", default="fast", metavar="fast|full", help="fast (default) or full (fast and full)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="global seed (default 0)")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="local worker processes (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, tcp://HOST:PORT")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (validation of values is done by hand in the commands).

    >>> build_parser().parse_args(["check", "--paper", "localupdate"]).paper
    'localupdate'
    """
    parser = _Parser(prog="fedtheory", description="Federated-optimization theory as executable, checkable objects.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    check = sub.add_parser("check", help="run claims and report (exit 0 when every claim gives its expected status)")
    _common(check)
    check.add_argument("--claim", metavar="GLOB", help="only claims whose id matches (e.g. 'localupdate/theorem-*')")
    check.add_argument("--json", metavar="FILE", help="write the report as JSON (check.schema.json)")
    figures = sub.add_parser("figures", help="compute figure data (JSON) and draw the images")
    _common(figures)
    figures.add_argument("--figure", metavar="ID", help="one figure by full id (e.g. localupdate/figure-1)")
    figures.add_argument("--out", default="out/figures", metavar="DIR", help="output directory (default out/figures)")
    return parser


def _validate_common(args: argparse.Namespace) -> None:
    from fedtheory.sweep import check_scheduler, check_workers

    check_tier(args.tier)
    check_workers(args.workers)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)


def cmd_check(args: argparse.Namespace) -> int:
    """``fedtheory check``: load, select, run, print the table, write ``--json``; exit code of the report."""
    from rich.console import Console

    from fedtheory.claims.runner import run_claims
    from fedtheory.content import load_claims, select

    _validate_common(args)
    if args.json is not None and Path(args.json).is_dir():
        raise UsageError(f"--json {args.json} is a directory")
    claims = select(load_claims(args.paths or None), paper=args.paper, claim_glob=args.claim, tier=args.tier)
    report = run_claims(claims, tier=args.tier, seed=args.seed, workers=args.workers, scheduler=args.scheduler,
                        progress=True)
    report.render_table(Console())
    if args.json is not None:
        import jsonschema

        from fedtheory.schemas import validate
        from fedtheory.sweep import write_json_atomic

        data = report.to_json()
        try:
            validate(data, "check")
        except jsonschema.ValidationError as exc:  # a bug in the runner, reported without a traceback
            path = "/".join(str(p) for p in exc.absolute_path)
            raise UsageError(f"report does not match check.schema.json at {path or '<root>'}: {exc.message}") from exc
        write_json_atomic(args.json, data, indent=1)
    return report.exit_code


def cmd_figures(args: argparse.Namespace) -> int:
    """``fedtheory figures``: load, select and hand the figures to the figure engine."""
    from fedtheory.content import load_figures, select_figures

    _validate_common(args)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    figures = select_figures(load_figures(args.paths or None), args.paper, args.figure, args.tier)
    from fedtheory.plotting.engine import run_figures

    manifest = run_figures(figures, out_dir=out, tier=args.tier, seed=args.seed, workers=args.workers,
                           scheduler=args.scheduler, progress=True)
    entries = (manifest.get("figures", []) if isinstance(manifest, dict) else manifest) or []
    wanted = {f.id for f in figures}
    for entry in entries:
        if entry.get("id") in wanted:  # the manifest also lists figures kept from earlier runs
            print(f"{entry['id']}: {out / entry['png']}")
    print(f"{len(figures)} figures written; manifest: {out / 'manifest.json'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fedtheory`` console script; returns the exit code.

    >>> main(["check", "no/such/path"])
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.version:
            print(f"fedtheory {__version__}")
            return 0
        if args.command is None:
            parser.print_help()
            return 2
        return {"check": cmd_check, "figures": cmd_figures}[args.command](args)
    except UsageError as exc:
        message = " ".join(str(exc).split("\n")[0].split()) if str(exc).strip() else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:
        # A bug, not bad input: still one line, with the traceback on request.
        if os.environ.get("FEDTHEORY_DEBUG"):
            raise
        print(f"error: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} "
              f"(set FEDTHEORY_DEBUG=1 for the traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
