"""Mutation score of the claims: which single-point mutants of the library does ``fedtheory check`` catch?

Each mutant is one textual change (``find`` → ``replace``, ``find`` occurring exactly once, modulo formatting:
spacing, line breaks, quotes and trailing commas, so ``ruff format`` leaves the mutants applicable) in one library
file: a driver, a problem family, the counting of models, a certificate, FedLRGD's formulas, the probe
helper. The runner copies the repository (the files git tracks or does not ignore) into a temporary
directory, applies the mutant there, and runs the claims that exercise that code — ``fedtheory check``,
the command users run, not the unit tests. A mutant is *caught* when that run fails (exit code 1: some claim's
status differs from its expectation). The unmutated copy is run first with the same selection and must pass,
so a catch is the mutant's doing.

    python benchmarks/mutation.py                   # every mutant, a table and a score
    python benchmarks/mutation.py --list            # the mutants
    python benchmarks/mutation.py --mutant probe-stops-after-first-evaluation --json out/mutation.json
    python benchmarks/mutation.py --pytest          # also run the unit tests on each mutant, for comparison

``tests/test_mutation.py`` keeps every mutant applicable to the current tree (each ``find`` occurs exactly
once) and runs the cheapest mutants through this runner (the probe mutant and the claim engine's, report's and
explorer's, whose claims take seconds), so the mechanism is tested in CI; the whole run is on demand (about a
minute per mutant on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    """One single-point change: in ``file``, ``find`` (occurring exactly once) becomes ``replace``;
    ``claims`` are the ``fedtheory check`` arguments that select the claims exercising that code."""

    name: str
    area: str
    file: str
    find: str
    replace: str
    claims: tuple[str, ...]
    why: str


MUTANTS: tuple[Mutant, ...] = (
    # --- drivers -------------------------------------------------------------------------------------
    Mutant(
        "local-update-prox-sign",
        "driver",
        "fedtheory/algorithms/local_update.py",
        "g = _matvec(F.A, xk - F.c, be) + alpha * (xk - x)",
        "g = _matvec(F.A, xk - F.c, be) - alpha * (xk - x)",
        ("--paper", "localupdate"),
        "the proximal term of Algorithm 2 with the wrong sign (step-by-step path)",
    ),
    Mutant(
        "local-update-spectral-alpha",
        "driver",
        "fedtheory/algorithms/local_update.py",
        "s = algo.gamma * (F.eigvals + algo.alpha)",
        "s = algo.gamma * F.eigvals",
        ("--paper", "localupdate"),
        "the spectral path forgets the proximal weight α",
    ),
    Mutant(
        "local-update-skip-last-step",
        "driver",
        "fedtheory/algorithms/local_update.py",
        "    for theta_k in algo.theta.weights:\n        g = _matvec(F.A, xk - F.c, be) + alpha * (xk - x)",
        "    for theta_k in algo.theta.weights[:-1]:\n        g = _matvec(F.A, xk - F.c, be) + alpha * (xk - x)",
        ("--paper", "localupdate"),
        "an off-by-one: the step-by-step driver drops the last local step",
    ),
    Mutant(
        "sdane-stabilized-center-mu-dropped",
        "driver",
        "fedtheory/algorithms/dane.py",
        "v_new = (lam * np.asarray(v, dtype=np.float64) + mu * x_new - rd.g_mean) / (lam + mu)",
        "v_new = (lam * np.asarray(v, dtype=np.float64) + mu * x_new - rd.g_mean) / lam",
        ("--paper", "sdane"),
        "S-DANE's stabilized prox-centre update forgets the μ in its denominator",
    ),
    Mutant(
        "acc-sdane-coefficient",
        "driver",
        "fedtheory/methods/library.py",
        "return B / (2 * lam) + math.sqrt(B * B / (4 * lam * lam) + A * B / lam)",
        "return B / (2 * lam) + math.sqrt(B * B / (4 * lam * lam) + 2 * A * B / lam)",
        ("--paper", "sdane"),
        "Acc-S-DANE's a_{r+1} solves λa² = 2(A + a)B instead of (A + a)B",
    ),
    Mutant(
        "theta-geometric-sum-exponent",
        "driver",
        "fedtheory/algorithms/theta.py",
        "closed = -be.expm1(K * be.log1p(-s_closed)) / s_closed",
        "closed = -be.expm1((K - 1) * be.log1p(-s_closed)) / s_closed",
        ("--paper", "localupdate"),
        "Θ_{1:K}'s distortion polynomial sums K − 1 terms instead of K (closed form only)",
    ),
    # --- problem families ----------------------------------------------------------------------------
    Mutant(
        "quadratic-mean-hessian-weights",
        "problem",
        "fedtheory/problems/quadratic.py",
        'return _symmetrize(np.einsum("i,ijk->jk", p, A))',
        'return _symmetrize(np.einsum("i,ijk->jk", np.full_like(p, 1.0 / p.size), A))',
        ("--paper", "localupdate"),
        "the mean Hessian ignores the client weights p_i",
    ),
    # --- counting of models --------------------------------------------------------------------------
    Mutant(
        "resnet-fc-without-bias",
        "counting",
        "fedtheory/models/resnet.py",
        "    return ResNet(stem, layers, nn.Linear(in_planes, num_classes))\n\n\ndef ",
        "    return ResNet(stem, layers, nn.Linear(in_planes, num_classes, bias=False))\n\n\ndef ",
        ("--paper", "fedhm"),
        "ResNet-18's classifier loses its bias (every counted size shifts by the class count)",
    ),
    Mutant(
        "fedhm-levels-built-dense",
        "counting",
        "fedtheory/models/resnet.py",
        "    return LowRankConv2d(m, n, 3, rank, stride=stride, padding=1, bias=False)",
        "    return nn.Conv2d(m, n, 3, stride=stride, padding=1, bias=False)",
        ("--paper", "fedhm"),
        "FedHM's factorized 3×3 convolutions are built (and so counted) dense",
    ),
    Mutant(
        "counting-conv-macs-one-channel",
        "counting",
        "fedtheory/models/counting.py",
        "macs = int(output[0].numel()) * per_out",
        "macs = int(output[0][0].numel()) * per_out",
        ("--paper", "fedhm"),
        "a convolution's MACs counted for one output channel instead of all",
    ),
    # --- certificates ---------------------------------------------------------------------------------
    Mutant(
        "pep-second-client-not-strongly-convex",
        "certificate",
        "fedtheory/certify/pep.py",
        "mu if mu2 is None else mu2)",
        "0.0)",
        ("--paper", "sdane", "--claim", "sdane/theorem-*"),
        "the two-client S-DANE PEP loses client 2's strong convexity (its value only grows: a 'value <= bound' "
        "check cannot see it)",
    ),
    Mutant(
        "spectral-heavy-ball-momentum-sign",
        "certificate",
        "fedtheory/certify/federated_pep.py",
        'x_new = y - eta * q + (beta * (x - x_prev) if server == "heavy_ball" else 0.0)',
        'x_new = y - eta * q - (beta * (x - x_prev) if server == "heavy_ball" else 0.0)',
        ("verify/spectral_closed_forms.py",),
        "a sign slip in the spectral engine's heavy-ball error measure (the momentum term subtracted)",
    ),
    Mutant(
        "spectral-error-horizon-off-by-one",
        "certificate",
        "fedtheory/certify/federated_pep.py",
        "    for t in range(T):\n        y = x + beta * (x - x_prev) if server == \"nesterov\" else x",
        "    for t in range(T - 1):\n        y = x + beta * (x - x_prev) if server == \"nesterov\" else x",
        ("verify/spectral_closed_forms.py",),
        "the spectral error certificate stops one round short of its horizon T",
    ),
    # --- explorer -------------------------------------------------------------------------------------
    Mutant(
        "method-guarantee-default-class",
        "explorer",
        "fedtheory/explore/tuning.py",
        'klass = consts.get("function_class", "general")',
        'klass = consts.get("function_class", "d1")',
        ("verify/engine.py",),
        "method_guarantee without a class bounds d = 1 federations instead of the general class",
    ),
    # --- claim engine ---------------------------------------------------------------------------------
    Mutant(
        "engine-crashed-control-fires",
        "engine",
        "fedtheory/claims/runner.py",
        '"fired": result.status == "refuted"',
        '"fired": result.status != "verified"',
        ("verify/engine.py",),
        "a flipped comparison: a negative control that crashed (or was inconclusive) counts as fired",
    ),
    Mutant(
        "engine-mixed-readings-refuted",
        "engine",
        "fedtheory/claims/runner.py",
        '        status = "reading-dependent"',
        '        status = "refuted"',
        ("verify/engine.py",),
        "readings that disagree give 'refuted' (a refutation needs every reading to fail)",
    ),
    Mutant(
        "engine-nan-guard-only-on-refuted",
        "engine",
        "fedtheory/claims/runner.py",
        "    if nans:\n",
        '    if nans and evidence.status == "refuted":\n',
        ("verify/engine.py",),
        "the NaN guard only looks at refuted evidence: a 'verified' resting on a NaN stands",
    ),
    # --- report ---------------------------------------------------------------------------------------
    Mutant(
        "report-diff-drops-regressions",
        "report",
        "fedtheory/report/diff.py",
        'if o.get("status") != n.get("status"):',
        'if o.get("status") != n.get("status") and n.get("status") == n.get("expect"):',
        ("verify/engine.py",),
        "the baseline diff lists a changed status only when the new one is the expected one (drops regressions)",
    ),
    # --- FedLRGD --------------------------------------------------------------------------------------
    Mutant(
        "fedlrgd-viete-sign",
        "fedlrgd",
        "fedtheory/symbolic/oracle_complexity.py",
        "return -(2 * self.C3 / 3) * math.sin(v / 3) * math.cos(5 * math.pi / 6 - v / 3)",
        "return (2 * self.C3 / 3) * math.sin(v / 3) * math.cos(5 * math.pi / 6 - v / 3)",
        ("--paper", "fedlrgd"),
        "a sign slip in the Viète root of the cubic (86)",
    ),
    # --- probes ---------------------------------------------------------------------------------------
    Mutant(
        "probe-stops-after-first-evaluation",
        "probe",
        "fedtheory/certify/probe.py",
        '    opts: dict[str, Any] = {"maxiter": maxiter}',
        '    opts: dict[str, Any] = {"maxiter": 1}',
        ("verify/probes.py",),
        "the probe's local search stops after its first iteration: only random sampling is left",
    ),
)


def _copy_tree(dest: Path) -> None:
    """The files git tracks or does not ignore, copied to ``dest`` (the working tree as it is now)."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


_TOKEN = re.compile(r"\s+|\w+|.", re.S)


def _token_pattern(token: str, first: bool, last: bool, between_words: bool) -> str:
    """The regex of one token of a mutant's text, modulo what a code formatter changes: the amount of interior
    whitespace (also a line break), the quote character and a magic trailing comma before a closing bracket.
    Whitespace at the very start or end stays exact (it anchors the indentation and line ends of the change)."""
    if token.isspace():
        return re.escape(token) if first or last else (r"\s+" if between_words else r"\s*")
    if token in "\"'":
        return "[\"']"
    if token in ")]}":
        return r"(?:,\s*)?" + re.escape(token)
    return re.escape(token)


def _pattern(tokens: list[str], start: int, stop: int) -> str:
    out = []
    for k in range(start, stop):
        token = tokens[k]
        if k > start and not token.isspace() and not tokens[k - 1].isspace():
            out.append(r"\s*")  # a formatter may add spaces or a line break between tokens
        between_words = 0 < k < len(tokens) - 1 and tokens[k - 1][-1:].isalnum() and tokens[k + 1][:1].isalnum()
        out.append(_token_pattern(token, k == 0, k == len(tokens) - 1, between_words))
    return "".join(out)


def locate(find: str, replace: str, text: str) -> tuple[list[re.Match], str]:
    """Where ``find`` occurs in ``text`` modulo formatting (see :func:`_token_pattern`), and the function
    from one such match to its mutated text: only the tokens where ``find`` and ``replace`` differ are replaced
    (by ``replace``'s), so the formatting around the change is kept.

    >>> matches, mutate = locate("f(a + b)", "f(a - b)", "y = f(\\n    a+b,\\n)\\n")
    >>> len(matches), mutate(matches[0])
    (1, 'f(\\n    a-b,\\n)')
    """
    tokens = _TOKEN.findall(find)
    prefix = len(os.path.commonprefix([find, replace]))
    suffix = len(os.path.commonprefix([find[::-1], replace[::-1]]))
    suffix = min(suffix, len(find) - prefix, len(replace) - prefix)
    # the changed span of `find`, widened to whole tokens: tokens [head, tail) are replaced
    ends = [0]
    for token in tokens:
        ends.append(ends[-1] + len(token))
    head = max(k for k in range(len(tokens) + 1) if ends[k] <= prefix)
    tail = min(k for k in range(len(tokens) + 1) if ends[k] >= len(find) - suffix)
    tail = max(tail, head)
    middle = replace[ends[head] : len(replace) - (len(find) - ends[tail])]

    def gap(k: int) -> str:
        """The spacing between tokens k - 1 and k when the pieces split there: captured, and kept."""
        apart = 0 < k < len(tokens) and not tokens[k - 1].isspace() and not tokens[k].isspace()
        return r"(\s*)" if apart else "()"

    if head == tail:  # an insertion: the old text keeps its spacing, the new text goes before it
        pattern = re.compile(f"({_pattern(tokens, 0, head)}){gap(head)}()()({_pattern(tokens, tail, len(tokens))})")
    else:
        pattern = re.compile(
            f"({_pattern(tokens, 0, head)}){gap(head)}({_pattern(tokens, head, tail)}){gap(tail)}"
            f"({_pattern(tokens, tail, len(tokens))})"
        )

    def mutate(m: re.Match) -> str:
        if head == tail:
            return m.group(1) + middle + m.group(2) + m.group(5)
        return m.group(1) + m.group(2) + middle + m.group(4) + m.group(5)

    return list(pattern.finditer(text)), mutate


def apply(mutant: Mutant, tree: Path) -> None:
    """Apply ``mutant`` to the copy at ``tree``; ValueError unless ``find`` occurs exactly once. ``find`` is
    matched modulo formatting (spacing, line breaks, quotes, trailing commas: :func:`locate`), so the mutants
    survive ``ruff format``.

    >>> import tempfile
    >>> t = Path(tempfile.mkdtemp()); (t / "a.py").write_text("x = 1\\n")
    6
    >>> apply(Mutant("m", "demo", "a.py", "x = 1", "x = 2", (), "why"), t); (t / "a.py").read_text()
    'x = 2\\n'
    >>> _ = (t / "b.py").write_text("y = g(\\n    'a',\\n    b * 2,\\n)\\n")
    >>> apply(Mutant("m", "demo", "b.py", 'g("a", b*2)', 'g("a", b*3)', (), "why"), t); (t / "b.py").read_text()
    "y = g(\\n    'a',\\n    b * 3,\\n)\\n"
    """
    path = tree / mutant.file
    text = path.read_text(encoding="utf-8")
    matches, mutate = locate(mutant.find, mutant.replace, text)
    if len(matches) != 1:
        raise ValueError(f"mutant {mutant.name}: its text occurs {len(matches)} times in {mutant.file} (must be once)")
    (match,) = matches
    path.write_text(text[: match.start()] + mutate(match) + text[match.end() :], encoding="utf-8")


def _check(tree: Path, selection: tuple[str, ...], timeout: float) -> tuple[int, float, str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    try:
        run = subprocess.run(
            [sys.executable, "-m", "fedtheory", "check", *selection],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        code, out = run.returncode, run.stdout + run.stderr
    except subprocess.TimeoutExpired:
        code, out = -1, f"timed out after {timeout:.0f}s"
    seconds = time.perf_counter() - start
    summary = "; ".join(line.strip() for line in out.splitlines() if ": expected " in line)
    if not summary and out.strip():
        summary = out.strip().splitlines()[-1]
    return code, seconds, summary


def _pytest(tree: Path, timeout: float) -> int:
    env = dict(os.environ, PYTHONPATH=str(tree))
    try:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests"],
            cwd=tree,
            env=env,
            capture_output=True,
            timeout=timeout,
        ).returncode
    except subprocess.TimeoutExpired:
        return -1


def run_mutants(mutants: tuple[Mutant, ...], *, timeout: float = 900.0, with_pytest: bool = False) -> list[dict]:
    """Run each mutant on a fresh copy; a record per mutant (caught by the claims, by pytest, seconds)."""
    records = []
    baselines: dict[tuple[str, ...], int] = {}
    for mutant in mutants:
        with tempfile.TemporaryDirectory(prefix="fedtheory-mutant-") as tmp:
            tree = Path(tmp)
            _copy_tree(tree)
            if mutant.claims not in baselines:
                baselines[mutant.claims] = _check(tree, mutant.claims, timeout)[0]
            record = {**asdict(mutant), "baseline_exit": baselines[mutant.claims]}
            apply(mutant, tree)
            code, seconds, failures = _check(tree, mutant.claims, timeout)
            record.update(
                exit=code, caught=code != 0 and baselines[mutant.claims] == 0, seconds=seconds, failures=failures
            )
            if with_pytest:
                record["caught_by_pytest"] = _pytest(tree, timeout) != 0
        records.append(record)
        print(
            f"{mutant.name:45s} {'CAUGHT' if record['caught'] else 'missed'}  ({record['seconds']:.0f}s) "
            f"{record['failures'][:160]}",
            flush=True,
        )
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutant", action="append", help="run only this mutant (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--pytest", action="store_true", help="also run the unit tests on each mutant")
    parser.add_argument("--json", help="write the records to this file")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per fedtheory check run")
    args = parser.parse_args(argv)
    by_name = {m.name: m for m in MUTANTS}
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:45s} {m.area:12s} {m.file}: {m.why}")
        return 0
    unknown = [n for n in args.mutant or () if n not in by_name]
    if unknown:
        print(f"error: unknown mutant(s) {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    chosen = tuple(by_name[n] for n in args.mutant) if args.mutant else MUTANTS
    records = run_mutants(chosen, timeout=args.timeout, with_pytest=args.pytest)
    caught = sum(r["caught"] for r in records)
    print(f"mutation score (claims alone): {caught}/{len(records)} caught")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"mutants": records, "caught": caught, "total": len(records)}, indent=1))
    return 0 if caught == len(records) else 1


if __name__ == "__main__":
    sys.exit(main())
