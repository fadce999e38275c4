"""The ``fedtheory`` command line: ``check`` claims and regenerate ``figures``.

::

    fedtheory check   [PATH ...] [--paper KEY] [--claim GLOB ...] [--tier fast|full] [--json FILE|-] [--seed N]
                      [--workers N] [--scheduler ADDRESS] [--timeout SECONDS] [--baseline OLD.json] [--report DIR]
    fedtheory check   [PATH ...] [--paper KEY] [--claim GLOB] [--tier fast|full] [--json FILE] --list
    fedtheory figures [PATH ...] [--paper KEY] [--figure ID]  [--tier fast|full] [--out DIR]  [--seed N]
                      [--workers N] [--scheduler ADDRESS]
    fedtheory explore frontier|tune|compare|instance|certify|oracle|page ...   (``fedtheory explore <what> --help``)
    fedtheory report  CHECK.json [--figures DIR] [--baseline OLD.json] --out DIR
    fedtheory completion bash      (a bash completion script: ``eval "$(fedtheory completion bash)"``)

``--claim`` may be repeated: the run takes the union. ``--class`` names the federations a guarantee
holds for (d1, commuting, general) in ``tune``, ``frontier`` and ``compare``; ``explore certify`` takes
the clients' functions as ``--function-class`` (its old ``--class`` still works, with a warning).

Bad input gets one line ``error: ...`` on stderr and exit code 2, never a traceback; the exit codes
are :data:`EXIT_CODES`, printed under every ``--help``. An internal error is one line and exit code 3
(``FEDTHEORY_DEBUG=1`` shows its traceback); a closed stdout (``| head``) ends quietly with 141, as
a Unix tool killed by SIGPIPE does. ``--json -`` writes the JSON to stdout (the tables then go to
stderr). Heavy libraries are imported only by the commands that need them.

Reliability: every output destination is checked before any work (exit 2); a claim that exits, crashes,
kills its worker or runs past ``--timeout`` is that claim's ``error`` and every other result is kept;
SIGINT/SIGTERM stop the workers, write what finished (the ``--json`` report, the figures' manifest) and
exit 130/143; the console script runs the command in a supervised child (:func:`entry`), so a process
that ends without reporting never exits 0. Off a terminal, progress is one line per finished claim or
figure on stderr and the table prints every claim id in full.

>>> main(["--version"])
fedtheory 0.1.0
0
>>> main(["check", "--tier", "warp"])
2
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from fedtheory import __version__
from fedtheory.errors import UsageError


PLOT_SUFFIXES = (".png", ".svg", ".pdf")

#: every exit status of the command line, shown under each ``--help`` (one place for all of them)
EXIT_CODES = """exit status:
  0    success (check: every selected claim gave its expected status, or was skipped for a missing
       optional capability)
  1    check: a claim did not give its expected status; explore --simulate: an instance broke the guarantee
  2    bad input (one line on stderr naming what is wrong)
  3    internal error (one line; FEDTHEORY_DEBUG=1 shows the traceback)
  130  stopped by SIGINT (Ctrl-C); 143: stopped by SIGTERM -- what finished is written
  141  stdout was closed early (e.g. piped into head): the output stops quietly (check, whose results
       are complete by then, still exits with its verdict: 0 or 1)"""

#: the exit status of a program killed by SIGPIPE (128 + 13), what a shell reports for ``yes | head -1``
BROKEN_PIPE_EXIT = 141


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`UsageError` instead of printing usage and exiting, and ends every
    ``--help`` with :data:`EXIT_CODES`."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("epilog", EXIT_CODES)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse API
        raise UsageError(message)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="content files or directories (default: paper_checks/ and verify/ for check, figures/ for figures)",
    )
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
    check.add_argument(
        "--claim",
        metavar="GLOB",
        action="append",
        help="only claims whose id matches (e.g. 'localupdate/theorem-*'); repeat it for the union",
    )
    check.add_argument("--json", metavar="FILE", help="write the report as JSON (check.schema.json); - for stdout")
    check.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="time limit per claim; a claim that runs longer is stopped and recorded as error "
        "(default 600 for the fast tier, 3600 for full; 0: no limit, claims run in this "
        "process when --workers is 1)",
    )
    from fedtheory.report.command import add_check_options, add_report_parser

    add_check_options(check)
    check.add_argument(
        "--list",
        action="store_true",
        help="list the selected claims (id, paper, tier, expect, kind, title) without running them; "
        "with --json FILE, as JSON",
    )
    figures = sub.add_parser("figures", help="compute figure data (JSON) and draw the images")
    _common(figures)
    figures.add_argument("--figure", metavar="ID", help="one figure by full id (e.g. localupdate/figure-1)")
    figures.add_argument("--out", default="out/figures", metavar="DIR", help="output directory (default out/figures)")
    _explore_parser(sub)
    add_report_parser(sub)
    completion = sub.add_parser("completion", help="print a shell completion script (bash; zsh through bashcompinit)")
    completion.add_argument("shell", choices=["bash"], help="the shell: bash")
    return parser


#: the magnitudes a constant of the explorer may take: beyond them products such as L·D² or L/μ·K leave float64
REAL_RANGE = (1e-150, 1e150)
#: spectral relaxation pieces: each adds a few moment variables to the SDP (4096 is minutes already)
MAX_PIECES = 4096


def _real(text: str) -> float:
    """An explorer constant: a finite number, 0 or of magnitude within :data:`REAL_RANGE` (argparse type).

    >>> _real("2.5"), _real("0")
    (2.5, 0.0)
    >>> _real("1e308")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 1e308 is out of range: give 0 or a magnitude in [1e-150, 1e+150] (float64 products of the constants overflow beyond)
    """
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text} is not finite")
    if v != 0 and not (REAL_RANGE[0] <= abs(v) <= REAL_RANGE[1]):
        raise argparse.ArgumentTypeError(
            f"{text} is out of range: give 0 or a magnitude in [{REAL_RANGE[0]:g}, "
            f"{REAL_RANGE[1]:g}] (float64 products of the constants overflow beyond)"
        )
    return v


def _count(lo: int, hi: int):
    """An argparse type: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{v} is not in [{lo}, {hi}]")
        return v

    parse.__name__ = "integer"
    return parse


#: the explorer's subcommands, in the order help lists them
EXPLORE_COMMANDS = ("frontier", "tune", "compare", "instance", "certify", "oracle", "page")


def _explore_parser(sub) -> None:
    """``fedtheory explore frontier|tune|compare|instance|oracle|page``: the explorer (fedtheory.explore)."""
    explore = sub.add_parser("explore", help=f"explore trade-offs: {', '.join(EXPLORE_COMMANDS)}")
    what = explore.add_subparsers(dest="explore_command", parser_class=_Parser)

    def constants(p: argparse.ArgumentParser, *, C: bool = True, D: bool = True, delta: bool = False) -> None:
        p.add_argument("--mu", type=_real, required=True, help="strong convexity μ (Assumption 1)")
        p.add_argument("--L", type=_real, required=True, help="smoothness L (Assumption 1)")
        if C:
            p.add_argument("--C", type=_real, default=0.0, help="heterogeneity: ‖c_i‖ ≤ C (Assumption 2; default 0)")
        if D:
            p.add_argument("--D", type=_real, required=True, help="initial distance ‖x_0 − x*‖")
        if delta:
            p.add_argument("--delta-A", type=_real, default=None, help="δ_A-SOD constant (DANE family)")

    def klass(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--class",
            dest="function_class",
            default="general",
            metavar="d1|commuting|general",
            help="federations the guarantee must hold for: d1 (d = 1), commuting (shared eigenbasis; needs "
            "--clients), general (d >= 2, the default)",
        )
        p.add_argument(
            "--clients",
            type=int,
            default=None,
            metavar="N",
            help="number of clients n (the commuting-class floor grows with sqrt(n))",
        )

    def outputs(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", metavar="FILE", help="write the result as JSON (- for stdout)")
        p.add_argument("--plot", metavar="FILE", help="write the plot (png, svg or pdf)")
        p.add_argument(
            "--rows", type=_count(1, 10_000), default=30, metavar="N", help="rows shown in the table (default 30)"
        )

    fr = what.add_parser("frontier", help="the (rho, Delta) frontier along a swept hyperparameter")
    constants(fr, C=False, D=False)
    fr.add_argument("--theta", default="uniform", help="uniform (Theta_{1:K}), last (Theta_K), maml or custom")
    fr.add_argument("--weights", default=None, help="custom Theta: comma-separated theta_1,...,theta_K")
    fr.add_argument("--server", default="gd", help="gd, nesterov or heavy_ball")
    fr.add_argument("--sweep", default="K", help="K, gamma or alpha")
    fr.add_argument("--alpha", type=_real, default=0.0, help="proximal weight α (fixed unless swept)")
    fr.add_argument("--gamma", type=_real, default=None, help="client rate γ (fixed unless swept; default 1/(2(L+α)))")
    fr.add_argument("--K", type=int, default=None, help="local steps K (fixed unless swept; default 100)")
    fr.add_argument("--lo", type=_real, default=None, help="sweep start")
    fr.add_argument("--hi", type=_real, default=None, help="sweep end")
    fr.add_argument("--points", type=int, default=400, help="sweep points (log-spaced)")
    klass(fr)
    outputs(fr)

    tn = what.add_parser("tune", help="hyperparameters minimizing a method's derived bound under a budget")
    tn.add_argument(
        "method",
        help="gd, fedavg, fedprox, fomaml, maml, s-dane or acc-s-dane (derived bounds), or any "
        "registered method: fedsplit, scaffold, sdane, dane, ... (certified worst case "
        "after --rounds, fedtheory.methods.pep)",
    )
    constants(tn, delta=True)
    tn.add_argument("--rounds", type=int, default=None, help="budget: communication rounds")
    tn.add_argument("--work", type=_real, default=None, help="budget: local gradient evaluations per client")
    tn.add_argument("--eps", type=float, default=None, help="budget: target accuracy ‖x − x*‖ ≤ eps")
    tn.add_argument("--momentum", default="gd", help="server of local-update methods: gd, nesterov or heavy_ball")
    tn.add_argument(
        "--simulate",
        action="store_true",
        help="run the advice on the driver on random and adversarial instances of its class",
    )
    tn.add_argument("--seed", type=int, default=0, help="seed of the simulated instances and probes")
    tn.add_argument(
        "--weights",
        default=None,
        metavar="P1,...,PN",
        help="the clients' weights (with --clients; default equal), for certified guarantees",
    )
    tn.add_argument(
        "--hyper",
        default=None,
        metavar="K=V,...",
        help="a registered method's setting, certified as given instead of tuned (e.g. s=0.1)",
    )
    klass(tn)
    outputs(tn)

    cp = what.add_parser("compare", help="several methods on the same constants, tuned for one target")
    cp.add_argument(
        "method_list",
        nargs="*",
        metavar="METHOD",
        help="methods to compare (or --methods); registered ones (fedsplit, scaffold, ...) need --rounds",
    )
    constants(cp, delta=True)
    cp.add_argument("--eps", type=float, default=None, help="target accuracy ‖x − x*‖ ≤ eps (derived bounds)")
    cp.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="rank by the certified worst case ‖x_T − x*‖ after T rounds (fedtheory.methods.pep)",
    )
    cp.add_argument("--methods", default=None, help="comma-separated methods (default: all with --eps)")
    cp.add_argument(
        "--weights", default=None, metavar="P1,...,PN", help="clients' weights with --rounds (default equal)"
    )
    cp.add_argument(
        "--hyper",
        action="append",
        default=None,
        metavar="METHOD:K=V,...",
        help="fix a registered method's setting with --rounds (repeatable), e.g. fedsplit:s=0.1",
    )
    cp.add_argument("--momentum", default="gd", help="server of local-update methods")
    klass(cp)
    outputs(cp)

    ins = what.add_parser("instance", help="tune on your own federation: exact for quadratics / least squares")
    ins.add_argument(
        "federation",
        metavar="FILE",
        help=".npz with A (n,d,d), c (n,d)[, p] (quadratic), or X_0, y_0, X_1, y_1, ... (client data); "
        "or .csv with columns client, y and features",
    )
    ins.add_argument("--rounds", type=int, required=True, help="communication rounds T (objective: ‖x_T − x*‖)")
    ins.add_argument(
        "--model",
        default="least-squares",
        help="client data model: least-squares (exact) or logistic (measured on the driver)",
    )
    ins.add_argument("--l2", type=_real, default=0.0, help="ridge λ ≥ 0 added to every client, (λ/2)‖x‖² (default 0)")
    ins.add_argument("--x0", default=None, help="start point: comma-separated numbers or a .npy file (default 0)")
    ins.add_argument(
        "--methods",
        default="gd,fedavg,fedprox,fomaml",
        help="comma-separated: gd, fedavg, fedprox, fomaml (exact LocalUpdate model) and/or any registered "
        "method (fedsplit, scaffold, sdane, ...: fedtheory.methods.run on this federation)",
    )
    ins.add_argument(
        "--servers", default="gd,heavy_ball,nesterov", help="comma-separated server kinds (default all three)"
    )
    ins.add_argument("--simulate", action="store_true", help="run the tuned setting on the driver, on this federation")
    outputs(ins)

    orc = what.add_parser("oracle", help="FedLRGD vs FedAve in federated oracle complexity (FedAve's b, T tuned)")
    for name, kind, helptext in (
        ("d", int, "data dimension"),
        ("p", int, "parameter dimension"),
        ("eta", float, "Hölder smoothness order in data"),
        ("alpha", float, "conditioning exponent"),
        ("L1", float, "smoothness in the parameter"),
        ("mu", float, "strong convexity"),
        ("L2", float, "Hölder constant in data"),
        ("B", float, "bound of the loss"),
        ("epsilon", float, "target F − F* ≤ ε"),
        ("gap", float, "F(θ0) − F*"),
        ("m", int, "clients"),
        ("phi", float, "communication-to-computation cost φ"),
    ):
        orc.add_argument(f"--{name}", type=_real if kind is float else _count(1, 10**9), required=True, help=helptext)
    orc.add_argument("--s", type=int, default=1, help="FedLRGD's server samples s (default 1)")
    orc.add_argument("--tau", type=_real, default=1.0, help="participation fraction τ (default 1)")
    orc.add_argument("--C", type=_real, default=1.0, help="the constant C of Lemma 3 / Theorem 3 (default 1)")
    outputs(orc)

    pg = what.add_parser("page", help="write the standalone interactive HTML page")
    pg.add_argument("--out", default="out/explore.html", metavar="FILE", help="where (default out/explore.html)")
    _certify_parser(what)


def _certify_parser(what) -> None:
    """``fedtheory explore certify``: its logic is fedtheory.explore.certify (imported only when it runs)."""
    ce = what.add_parser("certify", help="certified worst case (PEP upper bound + replayed lower bound)")
    ce.add_argument(
        "method",
        help="any registered method (fedsplit, scaffold, dane, sdane, acc-sdane, local-update, "
        "fedavg, fedprox, ...) or fomaml; fedavg/fedprox/fomaml use their dedicated "
        "certificate unless --compiled",
    )
    ce.add_argument("--mu", type=_real, required=True, help="strong convexity μ")
    ce.add_argument("--L", type=_real, required=True, help="smoothness L")
    ce.add_argument("--K", type=int, default=None, help="local steps K (fedavg, fedprox, fomaml, scaffold, ...)")
    ce.add_argument("--gamma", type=_real, default=None, help="client step γ (γ < 1/(L + α))")
    ce.add_argument("--alpha", type=_real, default=None, help="proximal weight α (fedprox)")
    ce.add_argument("--s", type=_real, default=None, help="FedSplit's prox step s (default 1/√(μL))")
    ce.add_argument("--lam", type=_real, default=None, help="λ of DANE / S-DANE / Acc-S-DANE")
    ce.add_argument("--option", default=None, help="SCAFFOLD's control-variate option, I or II")
    ce.add_argument(
        "--hyper",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="any other hyperparameter of the method (repeat)",
    )
    ce.add_argument(
        "--compiled", action="store_true", help="fedavg/fedprox: use the PEP compiled from the method's description"
    )
    ce.add_argument("--clients", type=int, default=None, help="number of clients n (default 2, or the weights' count)")
    ce.add_argument("--weights", default=None, help="client weights p1,p2,... (positive, summing to 1)")
    ce.add_argument("--C", type=_real, default=1.0, help="heterogeneity ‖c_i − o‖ ≤ C (default 1)")
    ce.add_argument("--zeta", type=_real, default=None, help="use Σp_i‖∇f_i(x*)‖² ≤ ζ² instead of C")
    ce.add_argument(
        "--delta", type=_real, default=None, help="δ of the δ-SOD class (--function-class sod, compiled PEP)"
    )
    ce.add_argument("--measure", default="floor", help="floor, rate, error or function-value (default floor)")
    ce.add_argument(
        "--function-class",
        dest="function_class",
        default=None,
        metavar="quadratic|smooth-strongly-convex|sod",
        help="the clients' functions (default quadratic); not --class, which in tune, frontier and "
        "compare names the federations (d1|commuting|general)",
    )
    # the old spelling, still accepted with a deprecation line (cmd_explore)
    ce.add_argument("--class", dest="deprecated_class", default=None, help=argparse.SUPPRESS)
    ce.add_argument("--eta", type=_real, default=None, help="server step η")
    ce.add_argument("--server", default=None, help="gd, heavy_ball or nesterov (local-update family)")
    ce.add_argument("--momentum", type=_real, default=None, help="server momentum β (local-update family)")
    ce.add_argument("--rounds", type=int, default=None, help="rounds T (error, function-value)")
    ce.add_argument("--D", type=_real, default=None, help="‖x_0 − x*‖ ≤ D (error, function-value)")
    ce.add_argument(
        "--commuting",
        action="store_true",
        help="d = 1 / commuting clients (two clients, floor): branch-and-bound certificate",
    )
    ce.add_argument("--free-weights", action="store_true", help="with --commuting: the sup over the weights p too")
    ce.add_argument(
        "--engine",
        default=None,
        help="spectral or pepit (default: the faster one, by measured cost — pepit for the quadratic floor at "
        "2 <= K <= 3, or K·clients <= 30 from 5 clients on, and for the quadratic error while K·rounds·clients <= 40, "
        "the function value and the smooth class; spectral otherwise, and for quadratic clients where a default "
        "pepit gets no reliable value; pepit also extracts its worst case as a lower bound)",
    )
    ce.add_argument("--pieces", type=_count(1, MAX_PIECES), default=16, help="spectral relaxation pieces (default 16)")
    ce.add_argument("--probe-starts", type=int, default=4, help="starts of the compiled PEP's lower-bound probe")
    ce.add_argument("--seed", type=int, default=0, help="seed of the lower-bound probe")
    ce.add_argument("--json", metavar="FILE", help="write the certificate as JSON (- for stdout)")


def _resolve_function_class(args: argparse.Namespace) -> None:
    """``explore certify --class`` (the old spelling of ``--function-class``): accepted, with a deprecation
    line on stderr; both given and different is bad input. The default is ``quadratic``.

    >>> import contextlib, io
    >>> ns = argparse.Namespace(function_class=None, deprecated_class="sod")
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     _resolve_function_class(ns)
    >>> ns.function_class, err.getvalue().split(":")[0]
    ('sod', 'warning')
    """
    old = getattr(args, "deprecated_class", None)
    if old is not None:
        if args.function_class is not None and args.function_class != old:
            raise UsageError(
                f"--class {old} (deprecated) and --function-class {args.function_class} disagree: "
                f"give --function-class only"
            )
        print(
            f"warning: explore certify --class is deprecated: use --function-class {old} (--class names the "
            f"federations in tune, frontier and compare)",
            file=sys.stderr,
        )
        args.function_class = old
    if args.function_class is None:
        args.function_class = "quadratic"


def cmd_explore(args: argparse.Namespace) -> int:
    """``fedtheory explore ...``: a hypothesis violated or a bad value is one line and exit code 2."""
    from rich.console import Console

    if args.explore_command is None:
        raise UsageError(f"explore needs one of: {', '.join(EXPLORE_COMMANDS)}")
    if args.explore_command != "instance" and "numpy" not in sys.modules:
        # the explorer's algebra is on matrices of a few dozen rows: one BLAS thread. Starting OpenBLAS's pool of
        # threads at numpy's import costs about 0.1 s of CPU, a fifth of a tune (a user's own setting is kept;
        # `instance` may simulate the user's large federation and keeps the default)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # with --json -, stdout carries the JSON alone; no :emoji: codes in the explorer's text, so rich's emoji table
    # (about 10 ms of CPU to load) is never read
    console = Console(stderr=_stdout_json_active(args), emoji=False)
    if args.explore_command == "certify":
        _resolve_function_class(args)
    # the files the command will write, checked before any work (certify has no --plot)
    plot = None if args.explore_command == "page" else getattr(args, "plot", None)
    outputs = [(args.out, "--out")] if args.explore_command == "page" else [(args.json, "--json"), (plot, "--plot")]
    outputs = [(path, flag) for path, flag in outputs if path is not None]
    if outputs:
        from fedtheory.sweep import check_output_file  # the sweep's machinery only when there is a file to write

        for path, flag in outputs:
            check_output_file(path, flag)
    if plot is not None and Path(plot).suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(f"--plot {plot}: the file name must end in one of {', '.join(PLOT_SUFFIXES)}")
    try:
        if args.explore_command == "certify":
            from fedtheory.explore.certify import run_certify

            return run_certify(args, console)
        if args.explore_command == "page":
            from fedtheory.explore.page import write_page

            print(f"wrote {write_page(args.out)}")
            return 0
        if args.explore_command == "frontier":
            from fedtheory.explore.frontiers import frontier

            weights = None
            if args.weights is not None:
                try:
                    weights = [float(v) for v in args.weights.split(",") if v.strip()]
                except ValueError:
                    raise UsageError(f"--weights must be comma-separated numbers, got {args.weights!r}") from None
            result = frontier(
                mu=args.mu,
                L=args.L,
                theta=args.theta,
                alpha=args.alpha,
                gamma=args.gamma,
                K=args.K,
                server=args.server,
                sweep=args.sweep,
                lo=args.lo,
                hi=args.hi,
                points=args.points,
                weights=weights,
                function_class=args.function_class,
                clients=args.clients,
            )
            extra = None
        elif args.explore_command == "tune":
            from fedtheory.explore.tuning import tune

            result = tune(
                args.method,
                mu=args.mu,
                L=args.L,
                C=args.C,
                D=args.D,
                delta_A=args.delta_A,
                rounds=args.rounds,
                work=args.work,
                eps=args.eps,
                momentum=args.momentum,
                function_class=args.function_class,
                clients=args.clients,
                weights=_number_list(args.weights, "--weights"),
                hyper=None if args.hyper is None else _hyper(args.hyper, "--hyper"),
            )
            extra = None
            if args.simulate and not hasattr(result, "predicted"):
                raise UsageError(
                    f"--simulate runs the derived-bound advice; {args.method}'s certificate already "
                    "carries its instance (see 'instance reaches')"
                )
            if args.simulate:
                from fedtheory.explore.simulation import simulate

                extra = simulate(result, seed=args.seed)
        elif args.explore_command == "instance":
            from fedtheory.explore.instance import simulate_instance, tune_instance

            x0 = None
            if args.x0 is not None:
                if args.x0.endswith(".npy"):
                    if not Path(args.x0).exists():
                        raise UsageError(f"--x0 file {args.x0} does not exist")
                    import numpy as np

                    x0 = np.load(args.x0)
                else:
                    try:
                        x0 = [float(v) for v in args.x0.split(",") if v.strip()]
                    except ValueError:
                        raise UsageError(
                            f"--x0 must be comma-separated numbers or a .npy file, got {args.x0!r}"
                        ) from None
            result = tune_instance(
                args.federation,
                rounds=args.rounds,
                x0=x0,
                model=args.model,
                l2=args.l2,
                methods=[m.strip() for m in args.methods.split(",") if m.strip()],
                servers=[m.strip() for m in args.servers.split(",") if m.strip()],
            )
            extra = simulate_instance(result) if args.simulate else None
        elif args.explore_command == "oracle":
            from fedtheory.explore.oracle import oracle

            result = oracle(
                d=args.d,
                p=args.p,
                eta=args.eta,
                alpha=args.alpha,
                L1=args.L1,
                mu=args.mu,
                L2=args.L2,
                B=args.B,
                epsilon=args.epsilon,
                initial_gap=args.gap,
                m=args.m,
                phi=args.phi,
                s=args.s,
                tau=args.tau,
                C=args.C,
            )
            extra = None
        else:
            from fedtheory.explore.comparison import DEFAULT_METHODS, compare, compare_certified

            if args.method_list and args.methods is not None:
                raise UsageError("give the methods either as arguments or with --methods, not both")
            methods = args.method_list or (
                None if args.methods is None else [m.strip() for m in args.methods.split(",") if m.strip()]
            )
            if (args.eps is None) == (args.rounds is None):
                raise UsageError(
                    "compare needs exactly one of --eps (rounds to a target, derived bounds) and --rounds "
                    "(certified worst case after T rounds)"
                )
            if args.rounds is not None:
                if methods is None:
                    raise UsageError(
                        "--rounds ranks registered methods by certificate: name them (e.g. "
                        "compare fedavg fedsplit scaffold --rounds 50 ...)"
                    )
                hyper = {}
                for text in args.hyper or ():
                    name, sep, rest = text.partition(":")
                    if not sep or not name.strip():
                        raise UsageError(f"--hyper must be METHOD:K=V,..., got {text!r}")
                    hyper[name.strip()] = _hyper(rest, "--hyper")
                result = compare_certified(
                    methods,
                    mu=args.mu,
                    L=args.L,
                    C=args.C,
                    D=args.D,
                    rounds=args.rounds,
                    clients=args.clients,
                    weights=_number_list(args.weights, "--weights"),
                    hyper=hyper,
                )
            else:
                if args.hyper or args.weights:
                    raise UsageError("--hyper and --weights go with --rounds (certified comparison)")
                result = compare(
                    DEFAULT_METHODS if methods is None else methods,
                    mu=args.mu,
                    L=args.L,
                    C=args.C,
                    D=args.D,
                    delta_A=args.delta_A,
                    eps=args.eps,
                    momentum=args.momentum,
                    function_class=args.function_class,
                    clients=args.clients,
                )
            extra = None
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except MemoryError:
        raise UsageError("not enough memory for this request: ask for fewer points") from None
    result.print(console, max_rows=args.rows)
    if extra is not None:
        extra.print(console)
    if args.plot:
        result.save_plot(args.plot) if extra is None else extra.save_plot(args.plot)
    if args.json:
        from fedtheory.explore.results import plain
        from fedtheory.sweep import write_json_atomic

        data = result.to_json()
        if extra is not None:
            data["simulation"] = extra.to_json()
        write_json_atomic(args.json, plain(data), indent=1)
    # a guarantee exceeded by one of its own adversarial instances is a failed claim: exit 1
    holds = getattr(extra, "holds", None)
    if holds is None and extra is not None:
        holds = extra.max_abs_gap <= 1e-8
    return 0 if extra is None or holds else 1


@contextmanager
def _json_to_stdout(args: argparse.Namespace):
    """``--json -``: the command writes its JSON, as to any file, into a private temporary file, which is
    copied to stdout when the command ends (also when it stops early: what finished is written). Human
    output then goes to stderr (:func:`_stdout_json_active`), so stdout is the JSON alone.

    >>> import pathlib
    >>> ns = argparse.Namespace(json="-")
    >>> with _json_to_stdout(ns):
    ...     _ = pathlib.Path(ns.json).write_text('{"a": 1}')
    {"a": 1}
    >>> _stdout_json_active(ns), pathlib.Path(ns.json).exists()
    (True, False)
    """
    if getattr(args, "json", None) != "-":
        yield
        return
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="fedtheory-json-")
    args.json = os.path.join(folder, "stdout.json")
    args.stdout_json = True
    try:
        yield
    finally:
        try:
            if os.path.isfile(args.json):
                with open(args.json, encoding="utf-8") as fh:
                    text = fh.read()
                sys.stdout.write(text if text.endswith("\n") else text + "\n")
                sys.stdout.flush()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _stdout_json_active(args: argparse.Namespace) -> bool:
    """Whether the command's ``--json`` goes to stdout (``--json -``), so tables must go to stderr."""
    return bool(getattr(args, "stdout_json", False))


def _number_list(text: str | None, flag: str) -> list[float] | None:
    """``"0.25,0.75"`` → [0.25, 0.75]; None stays None; anything else is one line (exit 2)."""
    if text is None:
        return None
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"{flag} must be comma-separated numbers, got {text!r}") from None


def _hyper(text: str, flag: str) -> dict:
    """``"K=5,gamma=0.01,option=II"`` → {"K": 5, "gamma": 0.01, "option": "II"} (int, then float, else text)."""
    out: dict = {}
    for part in (t.strip() for t in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"{flag} must be KEY=VALUE pairs separated by commas, got {text!r}")
        value = value.strip()
        for kind in (int, float):
            try:
                out[key.strip()] = kind(value)
                break
            except ValueError:
                continue
        else:
            out[key.strip()] = value
    if not out:
        raise UsageError(f"{flag} is empty")
    return out


def _validate_common(args: argparse.Namespace) -> None:
    """Everything about the run that can be wrong, checked before any work (bad input: exit 2)."""
    from fedtheory.content import check_tier
    from fedtheory.environment import blas_thread_count
    from fedtheory.sweep import check_scheduler, check_workers, core_count

    check_tier(args.tier)
    check_workers(args.workers)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)
    elif args.workers > core_count():
        print(
            f"warning: --workers {args.workers} is more than the {core_count()} CPU cores here; using {core_count()}",
            file=sys.stderr,
        )
    try:
        blas_thread_count()
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def cmd_check(args: argparse.Namespace) -> int:
    """``fedtheory check``: validate every output first, load, select, run, write ``--json``, print the table;
    exit code of the report (128 + the signal when SIGINT/SIGTERM stopped it, with what finished written)."""
    from rich.console import Console

    from fedtheory.claims.runner import run_claims
    from fedtheory.content import load_claims, select
    from fedtheory.report.command import after_check, before_check
    from fedtheory.report.data import run_inventory, run_papers
    from fedtheory.sweep import check_output_file

    if args.list:  # what this check would run, without running it
        from fedtheory.claims.listing import list_claims

        return list_claims(args)
    _validate_common(args)
    if args.json is not None:  # absolute: content code that changes directory cannot move the report
        args.json = str(check_output_file(args.json, "--json").absolute())
    timeout = "default"
    if args.timeout is not None:
        if not (args.timeout >= 0 and args.timeout != float("inf")):
            raise UsageError(f"--timeout must be a number of seconds >= 0 (0: no limit), got {args.timeout:g}")
        timeout = args.timeout or None
    stdout_json = _stdout_json_active(args)
    baseline = before_check(args)
    claims = select(load_claims(args.paths or None), paper=args.paper, claim_glob=args.claim, tier=args.tier)
    report = run_claims(
        claims,
        tier=args.tier,
        seed=args.seed,
        workers=args.workers,
        scheduler=args.scheduler,
        progress=True,
        timeout=timeout,
    )
    data = report.to_json()
    data["inventory"] = run_inventory(claims)
    data["papers"] = run_papers(claims)
    if args.json is not None:  # first: a closed stdout (`| head`) or a schema bug must not lose the results
        import jsonschema

        from fedtheory.schemas import validate
        from fedtheory.sweep import write_json_atomic

        write_json_atomic(args.json, data, indent=1)
        try:
            validate(data, "check")
        except jsonschema.ValidationError as exc:  # a bug in the runner, reported without a traceback
            path = "/".join(str(p) for p in exc.absolute_path)
            raise UsageError(
                f"report written to {args.json} does not match check.schema.json at {path or '<root>'}: {exc.message}"
            ) from exc
    console = Console(stderr=stdout_json)  # with --json -, stdout carries the JSON alone
    try:
        report.render_table(console)
    except SystemExit:  # rich's answer to a closed stdout (BrokenPipeError); the exit code still tells
        pass
    if report.interrupted is not None:
        import signal

        done = sum(1 for r in report.records if not r["evidence"]["notes"].startswith("not run:"))
        print(
            f"error: stopped by {signal.Signals(report.interrupted).name}: {done} of {len(report.records)} "
            f"claims finished" + (f"; report written to {'stdout' if stdout_json else args.json}" if args.json else ""),
            file=sys.stderr,
        )
        return 128 + report.interrupted
    after_check(args, data, baseline, console)
    return report.exit_code


def cmd_figures(args: argparse.Namespace) -> int:
    """``fedtheory figures``: load, select and hand the figures to the figure engine."""
    from fedtheory.content import load_figures, select_figures

    from fedtheory.sweep import check_output_dir

    _validate_common(args)
    out = check_output_dir(args.out, "--out")
    figures = select_figures(load_figures(args.paths or None), args.paper, args.figure, args.tier)
    from fedtheory.environment import missing_requirements
    from fedtheory.plotting.engine import run_figures

    skipped = {f.id: missing_requirements(f.requires) for f in figures}
    skipped = {k: v for k, v in skipped.items() if v}
    figures = [f for f in figures if f.id not in skipped]

    from fedtheory.signals import Interrupted

    try:
        manifest = run_figures(
            figures,
            out_dir=out,
            tier=args.tier,
            seed=args.seed,
            workers=args.workers,
            scheduler=args.scheduler,
            progress=True,
        )
    except Interrupted as exc:
        print(f"error: stopped by {exc}; {out / 'manifest.json'} lists the figures that finished", file=sys.stderr)
        return exc.exit_code
    entries = (manifest.get("figures", []) if isinstance(manifest, dict) else manifest) or []
    wanted = {f.id for f in figures}
    for entry in entries:
        if entry.get("id") in wanted:  # the manifest also lists figures kept from earlier runs
            print(f"{entry['id']}: {out / entry['png']}")
    for fid, missing in skipped.items():
        print(f"{fid}: skipped, missing requirement: {'; '.join(missing)}")
    print(
        f"{len(figures)} figures written"
        + (f", {len(skipped)} skipped" if skipped else "")
        + f"; manifest: {out / 'manifest.json'}"
    )
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from fedtheory.report.command import cmd_report  # the report machinery only for this command

    return cmd_report(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fedtheory`` console script; returns the exit code.

    >>> main(["check", "no/such/path"])
    2
    """
    from fedtheory.signals import Interrupted, handle_signals

    parser = build_parser()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help
            return exc.code if isinstance(exc.code, int) else 0
        if args.version:
            print(f"fedtheory {__version__}")
            return 0
        if args.command is None:
            parser.print_help()
            return 2
        if args.command == "completion":
            return cmd_completion(args, parser)
        with handle_signals(), _json_to_stdout(args):
            code = {"check": cmd_check, "figures": cmd_figures, "explore": cmd_explore, "report": _cmd_report}[
                args.command
            ](args)
        sys.stdout.flush()  # here, so that a reader gone away (`| head`) is caught below
        return code
    except BrokenPipeError:
        return _closed_stdout()
    except UsageError as exc:
        message = " ".join(str(exc).split("\n")[0].split()) if str(exc).strip() else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(f"error: stopped by {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:
        if isinstance(exc.__context__, BrokenPipeError):  # rich's answer to a closed stdout
            return _closed_stdout()
        # only --help may end the program through SystemExit; one raised by content code during a run must
        # never turn into that run's exit code (sys.exit(0) would pass a run that did not finish)
        print(
            f"error: internal error: SystemExit({exc.code!r}) raised during the run (content code called sys.exit?)",
            file=sys.stderr,
        )
        return 3
    except Exception as exc:
        # A bug, not bad input: still one line, with the traceback on request.
        if os.environ.get("FEDTHEORY_DEBUG"):
            raise
        print(
            f"error: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} "
            f"(set FEDTHEORY_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 3


def completion_script(parser: argparse.ArgumentParser) -> str:
    """A bash completion script for ``fedtheory``: subcommands, then each (sub)command's options, read from
    ``parser`` so it never falls behind. Install: ``fedtheory completion bash > ~/.local/share/bash-completion/
    completions/fedtheory`` (or ``eval "$(fedtheory completion bash)"`` in ``~/.bashrc``).

    >>> script = completion_script(build_parser())
    >>> "complete -F _fedtheory fedtheory" in script, '"explore certify") opts="' in script
    (True, True)
    """

    def options(p: argparse.ArgumentParser) -> list[str]:
        return [o for a in p._actions if a.help != argparse.SUPPRESS for o in a.option_strings]

    def commands(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return {
            name: child
            for a in p._actions
            if isinstance(a, argparse._SubParsersAction)
            for name, child in a.choices.items()
        }

    cases = [f'        "") opts="{" ".join(list(commands(parser)) + options(parser))}" ;;']
    for name, child in commands(parser).items():
        inner = commands(child)
        cases.append(f'        "{name}") opts="{" ".join(list(inner) + options(child))}" ;;')
        cases += [f'        "{name} {sub}") opts="{" ".join(options(grand))}" ;;' for sub, grand in inner.items()]
    known = " ".join(f'"{name}"' for name in commands(parser))
    nested = " ".join(f'"{name}"' for name, child in commands(parser).items() if commands(child))
    return "\n".join(
        [
            "# bash completion for fedtheory (written by: fedtheory completion bash)",
            "_fedtheory() {",
            '    local cur="${COMP_WORDS[COMP_CWORD]}" path="" word i',
            "    for ((i = 1; i < COMP_CWORD; i++)); do",
            '        word="${COMP_WORDS[i]}"',
            '        if [[ -z "$path" ]]; then',
            f'            for c in {known}; do [[ "$word" == "$c" ]] && path="$c"; done',
            '        elif [[ "$path" != *" "* ]]; then',
            f'            for c in {nested}; do',
            '                [[ "$path" == "$c" && "$word" != -* ]] && path="$path $word" && break',
            "            done",
            "        fi",
            "    done",
            '    local opts=""',
            '    case "$path" in',
            *cases,
            "    esac",
            '    if [[ "$cur" == -* || -n "$opts" && "$path" != *" "* ]]; then',
            '        COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
            "    fi",
            '    [[ ${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))',
            "}",
            "complete -F _fedtheory fedtheory",
            "",
        ]
    )


def cmd_completion(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``fedtheory completion bash``: print :func:`completion_script` (no heavy import, no work).

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     code = cmd_completion(argparse.Namespace(shell="bash"), build_parser())
    >>> code, out.getvalue().splitlines()[0]
    (0, '# bash completion for fedtheory (written by: fedtheory completion bash)')
    """
    sys.stdout.write(completion_script(parser))
    return 0


def _closed_stdout() -> int:
    """The reader of stdout went away (``fedtheory ... | head -1``): stop quietly, as a Unix tool killed by
    SIGPIPE does. Python would still flush stdout at exit and print "Exception ignored ... BrokenPipeError",
    so stdout is pointed at /dev/null first."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a file descriptor (a test's capture): nothing to flush
        pass
    return BROKEN_PIPE_EXIT


#: seconds a supervised run has to stop after SIGINT/SIGTERM before it is killed (a solver's native loop runs
#: no Python signal handler)
STOP_GRACE_SECONDS = 10


def _end_explore_child(code: int) -> None:
    """End the supervised child of an ``explore`` command with ``os._exit`` (how a forked child is meant to end),
    once its output is flushed and its atexit handlers have run: the interpreter's teardown — freeing every module
    and object of numpy, rich and the explorer, nothing the command's output depends on — is 60-100 ms of CPU, more
    than a fifth of ``explore tune``. The explorer's files are closed when written (atomic JSON, plots); a thread
    still running (none on the explorer's paths) keeps the ordinary exit, which joins it.
    """
    import atexit
    import threading

    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone away or a closed stream: nothing left to deliver
            pass
    os._exit(code)


def entry(argv: list[str] | None = None) -> int:
    """The console script: :func:`main` in a forked child, supervised (POSIX), so that a run can never end
    with a false exit code. A content file that calls ``os._exit(0)`` while being loaded, or a crash in C,
    ends the child without its final report; the supervisor then says so and exits non-zero instead of
    passing on the child's 0. SIGINT and SIGTERM are passed on to the child (which stops its workers and
    writes what finished); the child dies with the supervisor. Elsewhere (no
    ``fork``) it is :func:`main`.

    >>> entry(["--version"])
    fedtheory 0.1.0
    0
    """
    if not hasattr(os, "fork") or argv is not None:  # in-process callers (tests, doctests) get main() itself
        return main(argv)
    import signal

    from fedtheory.signals import die_with_parent

    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        die_with_parent(parent)
        explore = sys.argv[1:2] == ["explore"]
        if explore:
            import gc

            # numpy's, rich's and the explorer's imports are long-lived objects that the default young generation
            # (700) scans some 60 times on their way to the old one: about 35 ms of an explore command's CPU. A
            # larger one defers collections only: cyclic garbage is still collected every 50,000 allocations
            gc.set_threshold(50_000, 20, 20)
        code = main(argv)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            code = _closed_stdout()
        sys.stderr.flush()
        os.write(write_end, f"{code}\n".encode())
        os.close(write_end)
        if explore:
            _end_explore_child(code)
        return code
    os.close(write_end)

    forwarded: list[int] = []  # the signals passed on to the child, in order
    escalated = []

    def forward(signum, frame):  # a terminal's Ctrl-C reaches the child twice: its handler acts on the first
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
        forwarded.append(signum)
        # a child inside native code (a solver's C loop) runs no Python signal handler until it returns: if it has
        # not stopped after the grace period, it is killed, so that a signal always leaves nothing running
        signal.alarm(STOP_GRACE_SECONDS)

    def kill_child(signum, frame):
        escalated.append(True)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGALRM, kill_child)
    report = b""
    while True:
        try:
            chunk = os.read(read_end, 64)
        except InterruptedError:
            continue
        if not chunk:
            break
        report += chunk
    os.close(read_end)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    signal.alarm(0)
    if report.strip():
        return int(report)
    if escalated:
        print(
            f"error: the run did not stop within {STOP_GRACE_SECONDS} s of the signal (inside native code) and was "
            f"killed; nothing it ran counts as passed",
            file=sys.stderr,
        )
        return 128 + forwarded[-1]  # 130 after SIGINT, 143 after SIGTERM: the signal the run was stopped by
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        how = f"was killed by {signal.Signals(signum).name}"
        code = 128 + signum
    else:
        how = f"exited with code {os.WEXITSTATUS(status)}"
        code = os.WEXITSTATUS(status) or 3
    print(
        f"error: the run ended abruptly: it {how} before it could report (content code called os._exit, or a "
        f"crash in native code); nothing it ran counts as passed",
        file=sys.stderr,
    )
    return code


if __name__ == "__main__":
    sys.exit(entry())
