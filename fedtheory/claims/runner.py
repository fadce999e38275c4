"""The claim runner: run claims (locally, in processes or on Dask), replay counterexamples, report.

One claim runs through :func:`run_claim` (the CLI and the pytest plugin share it):

1. a missing ``requires`` gives ``skipped`` with the reason;
2. a stored counterexample (``<dir of the content file>/counterexamples/<claim id>.json``) is replayed
   first when the claim has a ``replay``; if it still refutes, that is the result;
3. otherwise the full check runs; a refutation with a counterexample is stored atomically, and a
   stored counterexample of a claim expected and found ``verified`` is removed as stale;
4. a claim checked on a ``substitute`` (stand-in data, reduced scale) that fails there is
   ``not-reproduced``, never ``refuted``;
5. a claim with faithful ``readings`` runs steps 2–4 once per reading (``ctx.reading``); its status is
   their common one, or ``reading-dependent`` when they disagree (:func:`combine_readings`);
6. a verified claim runs its negative ``controls`` (``ctx.control``): each must come out ``refuted``,
   else the claim is ``inconclusive`` — its check could not have seen the statement fail;
7. any exception gives ``error`` with the end of the traceback in the notes (never ``verified``);
8. warnings the check raises go into its notes (:func:`warning_notes`), not onto the progress lines.

A record names files relative to the directory holding its content folder (the repository root in a
checkout) or to the one holding the fedtheory package (:func:`portable_paths`): a check JSON carries no
path of the machine that ran it.

A claim *passes* when its status equals its ``expect``, or it is ``skipped`` for a missing
requirement. The claim's seed is ``derive_seed(seed, claim.id)``: it does not depend on the
number of workers or the order claims run in.

>>> from fedtheory.claims.core import claim
>>> @claim(id="demo/lemma-1", ref="Lemma 1", title="2 > 1", statement="$2 > 1$", kind="numeric")
... def lemma_1(ctx):
...     return ctx.decide(2 > 1, measured={"lhs": 2, "rhs": 1})
>>> report = run_claims([lemma_1], progress=False)
>>> report.records[0]["status"], report.exit_code
('verified', 0)
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable

from fedtheory.claims.core import STATUSES, CheckContext, Claim, Evidence, Reading, derive_seed
from fedtheory.content import UsageError, check_tier, in_tier, load_module, module_claims, select  # noqa: F401
from fedtheory.content import content_folder
from fedtheory.environment import blas_threads, environment, missing_requirements
from fedtheory.sweep import (
    Interrupted,
    check_scheduler,
    check_workers,
    handle_signals,
    map_grid,
    signal_received,
    write_json_atomic,
)

TRACEBACK_LINES = 12
#: what a check may raise and still be only its own claim's ``error``: ``sys.exit()`` or a stray
#: KeyboardInterrupt inside a claim must not end (or falsely pass) the whole run
CLAIM_FAILURES = (Exception, SystemExit, KeyboardInterrupt)
#: per-claim time limit (seconds) by tier when the caller asks for the default
DEFAULT_TIMEOUTS = {"fast": 600.0, "full": 3600.0}

# Claims handed to run_claims, by (source, id): inline runs use these objects rather than reloading.
_LOCAL: dict[tuple[str | None, str], Claim] = {}


def counterexample_path(claim: Claim, reading: Reading | None = None) -> Path | None:
    """Where ``claim``'s counterexample is stored: ``<content dir of claim.source>/counterexamples/<id>.json``
    (``<id>~<reading>.json`` for one of its faithful readings); the content dir of a paper package's module
    is the one holding the package (:func:`fedtheory.content.content_folder`), so ids keep their place.

    >>> from fedtheory.claims.core import Claim
    >>> c = Claim(id="demo/lemma-1/part", ref="r", title="t", statement="s", kind="numeric",
    ...           check=lambda ctx: None, source="/repo/paper_checks/demo.py")
    >>> counterexample_path(c).as_posix()
    '/repo/paper_checks/counterexamples/demo/lemma-1/part.json'
    >>> counterexample_path(c, Reading("sum", "summed")).name
    'part~sum.json'
    """
    if not claim.source:
        return None
    suffix = f"~{reading.name}" if reading is not None else ""
    return content_folder(claim.source) / "counterexamples" / f"{claim.id}{suffix}.json"


def _error(seed: int, exc: BaseException, what: str) -> Evidence:
    if isinstance(exc, KeyboardInterrupt) and signal_received() is not None:
        raise exc  # the user's Ctrl-C or a SIGTERM stops the run; it is no claim's error
    lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip().splitlines()
    return Evidence(status="error", seed=seed, notes=f"{what} raised:\n" + "\n".join(lines[-TRACEBACK_LINES:]))


def _plain(obj: Any) -> Any:
    """JSON-plain copy of evidence data (str() for what JSON cannot hold, e.g. sympy objects)."""
    return json.loads(json.dumps(obj, default=str))


#: expectations under which a refuting instance is always stored (the finding is guarded by replaying it)
_STORED_EXPECTS = ("refuted", "not-reproduced", "reading-dependent")


def _one_reading(
    claim: Claim, context: Callable[..., CheckContext], seed: int, reading: Reading | None, store_counterexamples: bool
) -> Evidence:
    """Replay the stored counterexample (of ``reading``), else run the check; store or retire instances."""
    path = counterexample_path(claim, reading)
    prelude = ""
    evidence = None
    if path is not None and path.exists():
        if claim.replay is None:
            prelude = f"stored counterexample {path} not replayed (the claim has no replay); ran the full check. "
        else:
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
                start = time.perf_counter()
                replayed = claim.replay(stored["counterexample"], context())
                if not isinstance(replayed, Evidence):
                    raise TypeError(f"replay of {claim.id} returned {type(replayed).__name__}, not Evidence")
                replayed.seconds = time.perf_counter() - start
            except CLAIM_FAILURES as exc:
                return _error(seed, exc, f"replay of stored counterexample {path}")
            if replayed.status == "refuted":
                replayed.counterexample = stored["counterexample"]
                replayed.seed = seed if replayed.seed is None else replayed.seed
                replayed.notes = f"replayed stored counterexample {path}. " + replayed.notes
                evidence = replayed
            else:
                prelude = (
                    f"stored counterexample {path} no longer refutes (replay: {replayed.status}); ran the full check. "
                )
    if evidence is None:
        try:
            evidence = claim.run(context())
        except CLAIM_FAILURES as exc:
            return _error(seed, exc, "check")
        if evidence.status == "verified" and path is not None and path.exists() and claim.expect == "verified":
            # a stored counterexample that no longer refutes a claim that now verifies is stale: keeping it
            # would replay a dead instance on every run and suggest a finding that is gone
            try:
                path.unlink()
                prelude += f"removed the stale counterexample {path} (the claim now verifies). "
            except OSError as exc:
                prelude += f"could not remove the stale counterexample {path} ({exc}). "
        if (
            evidence.status == "refuted"
            and evidence.counterexample is not None
            and path is not None
            and (claim.expect in _STORED_EXPECTS or store_counterexamples)
        ):
            try:
                write_json_atomic(
                    path,
                    _plain(
                        {
                            "id": claim.id,
                            "reading": reading.name if reading else None,
                            "seed": evidence.seed,
                            "counterexample": evidence.counterexample,
                            "measured": evidence.measured,
                            "notes": evidence.notes,
                        }
                    ),
                    indent=1,
                )
                prelude += f"stored counterexample {path}. "
            except OSError as exc:
                prelude += f"could not store counterexample at {path} ({exc}). "
        evidence.notes = prelude + evidence.notes
    nans = _nan_keys(evidence.measured) if evidence.status not in ("error", "skipped", "inconclusive") else []
    if nans:
        # every comparison with NaN is False: a check written as `not worst > bound` passes on a NaN silently
        evidence.notes = (
            f"a NaN among the measured values ({', '.join(nans)}) cannot "
            f"support the verdict {evidence.status!r}. " + evidence.notes
        )
        evidence.status = "error"
    if claim.substitute and evidence.status == "refuted":
        evidence.status = "not-reproduced"
        evidence.notes = (
            f"not reproduced here, which is no evidence against the paper: {claim.substitute}. " + evidence.notes
        )
    return evidence


def _nan_keys(measured: Any, prefix: str = "") -> list[str]:
    """The keys (dotted paths) of NaN values in a measured dict, lists and arrays included.

    >>> _nan_keys({"a": 1.0, "b": {"c": float("nan")}, "d": [0.0, float("nan")]})
    ['b.c', 'd[1]']
    """
    import math

    import numpy as np

    if isinstance(measured, dict):
        return [k for key, v in measured.items() for k in _nan_keys(v, f"{prefix}.{key}" if prefix else str(key))]
    if isinstance(measured, (list, tuple)) and len(measured) > 64:
        try:  # a long numeric list: one vectorized test, not one call per element
            arr = np.asarray(measured)
        except (ValueError, TypeError):  # ragged
            arr = None
        if arr is not None and arr.dtype.kind in "fiu":  # None or strings make an object array: not here
            return [prefix + "".join(f"[{j}]" for j in idx) for idx in np.argwhere(np.isnan(arr)).tolist()]
    if isinstance(measured, (list, tuple)) or (isinstance(measured, np.ndarray) and measured.dtype == object):
        return [k for i, v in enumerate(measured) for k in _nan_keys(v, f"{prefix}[{i}]")]
    if isinstance(measured, np.ndarray) and np.issubdtype(measured.dtype, np.floating):
        return [prefix + "".join(f"[{j}]" for j in idx) for idx in np.argwhere(np.isnan(measured)).tolist()]
    if isinstance(measured, (float, np.floating)) and math.isnan(measured):
        return [prefix]
    return []


def combine_readings(outcomes: list[tuple[Reading, Evidence]], seed: int) -> Evidence:
    """One verdict over the faithful readings: their common status, or ``reading-dependent`` when the
    statement fails under some and holds under others (``error``/``inconclusive`` in any reading win).

    >>> from fedtheory.claims.core import Evidence, Reading
    >>> a, b = Reading("a", "one reading"), Reading("b", "another")
    >>> combine_readings([(a, Evidence("refuted")), (b, Evidence("refuted"))], 0).status
    'refuted'
    >>> e = combine_readings([(a, Evidence("refuted", measured={"r": 2.0})), (b, Evidence("verified"))], 0)
    >>> e.status, e.measured, [r["status"] for r in e.readings]
    ('reading-dependent', {'a:r': 2.0, 'readings_failing': 1, 'readings': 2}, ['refuted', 'verified'])
    """
    statuses = [e.status for _, e in outcomes]
    distinct = set(statuses)
    if len(distinct) == 1:
        status = statuses[0]
    elif "error" in distinct:
        status = "error"
    elif "inconclusive" in distinct:
        status = "inconclusive"
    else:
        status = "reading-dependent"
    failing = [(r, e) for r, e in outcomes if e.status in ("refuted", "not-reproduced")]
    measured = {f"{r.name}:{k}": v for r, e in outcomes for k, v in e.measured.items()}
    measured.update(readings_failing=len(failing), readings=len(outcomes))
    counterexample = None
    if failing and failing[0][1].counterexample is not None:
        counterexample = {"reading": failing[0][0].name, **failing[0][1].counterexample}
    return Evidence(
        status=status,
        seed=seed,
        measured=measured,
        counterexample=counterexample,
        tolerance={r.name: e.tolerance for r, e in outcomes},
        notes=" ".join(f"[{r.name}: {e.status}] {e.notes}" for r, e in outcomes),
        readings=[
            {
                "name": r.name,
                "description": r.description,
                "params": r.params,
                "status": e.status,
                "measured": e.measured,
                "counterexample": e.counterexample,
                "notes": e.notes,
            }
            for r, e in outcomes
        ],
    )


def _run_controls(claim: Claim, evidence: Evidence, context: Callable[..., CheckContext], seed: int) -> None:
    """Run the negative controls of a verified claim; a control that does not fire makes it ``inconclusive``."""
    outcomes: list[dict[str, Any]] = []
    for control in claim.controls:
        check = control.check or claim.check
        try:
            result = check(context(control=dict(control.params)))
            if not isinstance(result, Evidence):
                raise TypeError(f"control {control.name} of {claim.id} returned {type(result).__name__}, not Evidence")
        except CLAIM_FAILURES as exc:
            result = _error(seed, exc, f"control {control.name}")
        outcomes.append(
            {
                "name": control.name,
                "description": control.description,
                "status": result.status,
                "fired": result.status == "refuted",
                "measured": result.measured,
                "notes": result.notes,
            }
        )
    evidence.controls = outcomes
    silent = [o["name"] for o in outcomes if not o["fired"]]
    if silent:
        evidence.status = "inconclusive"
        evidence.notes = (
            f"negative control(s) {', '.join(silent)} did not come out refuted: the check could not "
            f"have seen this statement fail. " + evidence.notes
        )


def _run_evidence(
    claim: Claim, seed: int, tier: str, backend: str, device: str | None, store_counterexamples: bool
) -> tuple[Evidence, list[str]]:
    """The claim's evidence and its missing requirements (the steps of the module docstring)."""
    missing = missing_requirements(claim.requires)
    if missing:
        return Evidence(status="skipped", seed=seed, notes="missing requirement: " + "; ".join(missing)), missing
    first_reading = claim.readings[0].params if claim.readings else None

    def context(control: dict | None = None, reading: dict | None = first_reading) -> CheckContext:
        return CheckContext(seed=seed, tier=tier, backend=backend, device=device, control=control, reading=reading)

    if claim.readings:
        outcomes = []
        for reading in claim.readings:

            def in_reading(control: dict | None = None, _params: dict = dict(reading.params)) -> CheckContext:
                return context(control=control, reading=_params)

            outcomes.append((reading, _one_reading(claim, in_reading, seed, reading, store_counterexamples)))
        evidence = combine_readings(outcomes, seed)
        evidence.seconds = sum(e.seconds for _, e in outcomes)
    else:
        evidence = _one_reading(claim, context, seed, None, store_counterexamples)
    if evidence.status == "verified" and claim.controls:
        _run_controls(claim, evidence, context, seed)
    return evidence, []


def is_controlled(record: dict) -> bool:
    """A verified record whose check showed it could fail: a negative control fired, or a symbolic proof.

    >>> is_controlled({"status": "verified", "evidence": {"proof": "sympy", "controls": []}})
    True
    >>> is_controlled({"status": "verified", "evidence": {"controls": [{"fired": False}]}})
    False
    """
    evidence = record.get("evidence") or {}
    controls = evidence.get("controls") or []
    return record.get("status") == "verified" and (
        bool(evidence.get("proof")) or (bool(controls) and all(c.get("fired") for c in controls))
    )


def run_claim(
    claim: Claim,
    *,
    seed: int = 0,
    tier: str = "fast",
    backend: str = "numpy",
    device: str | None = None,
    store_counterexamples: bool = True,
) -> dict:
    """Run one claim; return its record (metadata, status, evidence, seconds, passed).

    ``seed`` is the run's seed; the claim's own is ``derive_seed(seed, claim.id)``. Counterexamples of
    claims expected ``refuted`` are always stored; others only with ``store_counterexamples``.

    >>> from fedtheory.claims.core import claim
    >>> crash = claim(id="demo/lemma-2", ref="Lemma 2", title="t", statement="s", kind="numeric")(lambda ctx: 1 / 0)
    >>> r = run_claim(crash)
    >>> r["status"], r["passed"], r["evidence"]["notes"].splitlines()[-1]
    ('error', False, 'ZeroDivisionError: division by zero')
    """
    check_tier(tier)
    claim_seed = derive_seed(seed, claim.id)
    start = time.perf_counter()
    # a real Ctrl-C stops the run; a claim's own KeyboardInterrupt is its error. Warnings are the claim's
    # evidence, kept with it (printed, they would land among the progress lines of other claims).
    with blas_threads(), handle_signals(), warnings.catch_warnings(record=True) as caught:
        evidence, missing = _run_evidence(claim, claim_seed, tier, backend, device, store_counterexamples)
    if caught:
        evidence.notes = (evidence.notes.rstrip() + "\n" if evidence.notes.strip() else "") + warning_notes(caught)
    return _record(claim, evidence, time.perf_counter() - start, missing)


def warning_notes(caught: list) -> str:
    """The warnings a check raised, as a note: each distinct one once, with where and how often.

    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     for _ in range(3):
    ...         warnings.warn("overflow in exp", RuntimeWarning)
    >>> print(warning_notes(caught).replace(__file__, "F").split(" (")[0])
    warnings during the check: RuntimeWarning: overflow in exp
    >>> warning_notes(caught).endswith("x3")
    True
    """
    counts: dict[tuple, int] = {}
    for w in caught:
        key = (w.category.__name__, str(w.message).strip(), w.filename, w.lineno)
        counts[key] = counts.get(key, 0) + 1
    items = [
        f"{kind}: {message} ({filename}:{lineno})" + (f" x{n}" if n > 1 else "")
        for (kind, message, filename, lineno), n in counts.items()
    ]
    return "warnings during the check: " + "; ".join(items)


def path_roots(source: str | None) -> list[str]:
    """The directories a record's paths are written relative to, longest first: the one holding the
    claim's content folder (``paper_checks/`` of a checkout, or the folder holding a paper package), the
    one holding the ``fedtheory`` package, and Python's own library folders (a traceback's frames there).

    >>> "/repo" in path_roots("/repo/paper_checks/demo.py")
    True
    """
    import sysconfig

    import fedtheory

    roots = [Path(fedtheory.__file__).resolve().parent.parent]
    roots += [Path(sysconfig.get_paths()[k]) for k in ("stdlib", "purelib", "platlib")]
    if source:
        roots += [content_folder(Path(source).absolute()).parent, Path(source).resolve().parent.parent]
    names = {str(r) for r in roots if len(r.parts) > 1}
    return sorted(names, key=len, reverse=True)


def portable_paths(value: Any, roots: list[str]) -> Any:
    """``value`` (JSON-plain) with every path under one of ``roots`` made relative to it.

    >>> portable_paths({"notes": ["stored /repo/paper_checks/counterexamples/a.json", 2]}, ["/repo"])
    {'notes': ['stored paper_checks/counterexamples/a.json', 2]}
    >>> portable_paths("/repo", ["/repo"])
    '.'
    """
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root + os.sep, "")
            if value == root:
                value = "."
        return value
    if isinstance(value, list):
        return [portable_paths(v, roots) for v in value]
    if isinstance(value, dict):
        return {k: portable_paths(v, roots) for k, v in value.items()}
    return value


def _record(claim: Claim, evidence: Evidence, seconds: float, missing: list[str]) -> dict:
    """A claim's record: its metadata, status, evidence, seconds, whether it passed and whether it is controlled."""
    status = evidence.status
    record = claim.metadata()
    roots = path_roots(claim.source)
    record.update(
        status=status,
        evidence=portable_paths(_plain(evidence.to_json()), roots),
        seconds=seconds,
        passed=status == claim.expect or (status == "skipped" and bool(missing)),
        missing_requirements=missing,
        source=portable_paths(claim.source, roots),
    )
    record["controlled"] = is_controlled(record)
    return record


def _executor(parent_pid: int) -> dict:
    """Where this unit of work runs: a Dask worker's address, or this process's id."""
    isolated_on = os.environ.get("FEDTHEORY_DASK_WORKER")  # a point's own process on a Dask worker (sweep)
    if isolated_on:
        return {"kind": "dask", "worker": isolated_on}
    if "distributed" in sys.modules:
        try:
            from distributed import get_worker

            return {"kind": "dask", "worker": get_worker().address}
        except (ImportError, ValueError):
            pass
    pid = os.getpid()
    return {"kind": "local" if pid == parent_pid else "process", "worker": f"pid:{pid}"}


def run_unit(unit: dict) -> dict:
    """Run one unit of work ``{source, id, seed, tier, backend, device, store_counterexamples, parent_pid}``.

    The claim is found by id in its content file, loaded by path (so a worker process reloads the
    file; claims are never pickled). Module-level so that process pools and Dask can ship it.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "demo.py"
    >>> _ = f.write_text('''
    ... from fedtheory.claims.core import claim
    ... @claim(id="demo/lemma-3", ref="Lemma 3", title="t", statement="s", kind="numeric")
    ... def lemma_3(ctx):
    ...     return ctx.verified(measured={"draw": float(ctx.rng.uniform())})
    ... ''')
    >>> unit = dict(source=str(f), id="demo/lemma-3", seed=0, tier="fast", backend="numpy", device=None,
    ...             store_counterexamples=False, parent_pid=os.getpid())
    >>> r = run_unit(unit)
    >>> r["status"], r["executor"]["kind"], r["evidence"]["seed"] == derive_seed(0, "demo/lemma-3")
    ('verified', 'local', True)
    """
    claim = _LOCAL.get((unit["source"], unit["id"]))
    if claim is None:
        if not unit["source"]:
            raise RuntimeError(f"claim {unit['id']} has no source file, so it cannot run in another process")
        matches = [c for c in module_claims(load_module(unit["source"])) if c.id == unit["id"]]
        if not matches:
            raise RuntimeError(f"claim {unit['id']} not found in {unit['source']}")
        claim = matches[0]
        claim.source = unit["source"]
    record = run_claim(
        claim,
        seed=unit["seed"],
        tier=unit["tier"],
        backend=unit["backend"],
        device=unit["device"],
        store_counterexamples=unit["store_counterexamples"],
    )
    record["executor"] = _executor(unit["parent_pid"])
    return record


class Report:
    """The records of one run, its summary and environment; JSON in the DESIGN.md format, a rich table.

    >>> r = Report([{"id": "a/lemma-1", "status": "verified", "expect": "verified", "passed": True, "seconds": 0.5}],
    ...            environment={}, seconds=0.5)
    >>> r.summary["verified"], r.summary["passed"], r.exit_code
    (1, True, 0)
    """

    #: the signal number that stopped the run early (:func:`run_claims`), else None
    interrupted: int | None = None

    def __init__(self, records: list[dict], environment: dict, seconds: float) -> None:
        self.records = records
        self.environment = environment
        counts = {status: 0 for status in STATUSES}
        for record in records:
            counts[record["status"]] += 1
        self.summary: dict[str, Any] = {
            **counts,
            "total": len(records),
            "seconds": seconds,
            "passed": all(r["passed"] for r in records),
            "failed": [r["id"] for r in records if not r["passed"]],
            "findings": findings(records),
            "controls": control_shares(records),
        }

    @property
    def passed(self) -> bool:
        return self.summary["passed"]

    @property
    def exit_code(self) -> int:
        """0 exactly when every claim passed.

        >>> Report([{"id": "a/b-1", "status": "error", "passed": False}], environment={}, seconds=0.0).exit_code
        1
        """
        return 0 if self.passed else 1

    def to_json(self) -> dict:
        """``{"claims": [...], "summary": {...}, "environment": {...}}`` (check.schema.json).

        >>> sorted(Report([], environment={}, seconds=0.0).to_json())
        ['claims', 'environment', 'summary']
        """
        return {"claims": self.records, "summary": self.summary, "environment": self.environment}

    def render_table(self, console: Any = None) -> None:
        """Print the table (claim, expect, status, key measured value, seconds), then skips and failures.

        >>> from rich.console import Console
        >>> record = {"id": "a/lemma-1", "expect": "verified", "status": "skipped", "passed": True, "seconds": 0.0,
        ...           "evidence": {"measured": {}, "notes": "missing requirement: cuda: no CUDA device"}}
        >>> import io
        >>> console = Console(record=True, width=100, file=io.StringIO())
        >>> Report([record], environment={}, seconds=0.0).render_table(console)
        >>> "a/lemma-1: missing requirement: cuda" in console.export_text()
        True
        """
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        console = console or Console()
        rows = [
            (
                r["id"],
                r["expect"],
                r["status"],
                key_measured(r.get("evidence", {}).get("measured", {})),
                f"{r['seconds']:.2f}",
            )
            for r in self.records
        ]
        if not console.is_terminal:
            # a log (CI, a pipe, a file) has no width: plain columns, never wrapped or cut, so every claim id
            # appears in full and can be searched for
            console.soft_wrap = True
            head = ("claim", "expect", "status", "measured", "s")
            widths = [max([len(h)] + [len(row[k]) for row in rows]) for k, h in enumerate(head)]
            console.print("fedtheory check", markup=False, highlight=False)
            for row in [head] + rows:
                console.print(
                    "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), markup=False, highlight=False
                )
        else:
            table = Table(title="fedtheory check", show_lines=False)
            # fold, never crop: a narrow terminal wraps an id instead of cutting it
            columns: tuple[tuple[str, dict[str, Any]], ...] = (
                ("claim", {"overflow": "fold"}),
                ("expect", {}),
                ("status", {}),
                ("measured", {"overflow": "fold"}),
                ("s", {"justify": "right"}),
            )
            for name, kw in columns:
                table.add_column(name, **kw)
            for r, row in zip(self.records, rows):
                style = "green" if r["passed"] else "red"
                if r["status"] == "skipped" and r["passed"]:
                    style = "yellow"
                table.add_row(Text(row[0]), row[1], Text(row[2], style=style), Text(row[3]), row[4])
            console.print(table)
        skips = [r for r in self.records if r["status"] == "skipped"]
        if skips:
            console.print("[yellow]skipped:[/]")
            for r in skips:
                console.print(f"  {r['id']}: {r['evidence']['notes']}", markup=False, highlight=False)
        failures = [r for r in self.records if not r["passed"]]
        if failures:
            console.print("[red]failed:[/]")
            for r in failures:
                notes = (r.get("evidence", {}).get("notes") or "").strip().splitlines()
                last = notes[-1] if notes else ""
                console.print(
                    f"  {r['id']}: expected {r['expect']}, got {r['status']}. {last}", markup=False, highlight=False
                )
        s = self.summary
        for paper, share in sorted(s["controls"].items()):
            console.print(
                f"{paper}: {share['controlled']} of {share['verified']} verified claims controlled "
                f"(a negative control fired or a symbolic proof)",
                highlight=False,
            )
        f = s["findings"]
        console.print(
            f"findings: {f['refuted']} refuted, {f['typos']} typos, {f['vacuous']} vacuous, "
            f"{f['not_reproduced']} not reproduced on substitutes, {f['reading_dependent']} reading-dependent; "
            f"{f['errors']} errors",
            highlight=False,
        )
        parts = ", ".join(f"{s[k]} {k}" for k in STATUSES if s[k])
        verdict = "[green]PASSED[/]" if self.passed else "[red]FAILED[/]"
        console.print(
            f"{verdict}: {s['total']} claims ({parts or 'none'}), wall time {s['seconds']:.1f}s", highlight=False
        )


def findings(records: list[dict]) -> dict:
    """What a run says against the papers, each kind apart: errors in statements (``refuted``, typos not
    counted), typos (literal readings of a misprint), vacuous hypotheses, statements not reproduced on a
    substitute (no evidence against the paper), reading-dependent ones, and the run's own errors.

    >>> findings([{"status": "refuted", "typo": True}, {"status": "refuted"}, {"status": "not-reproduced"}])
    {'refuted': 1, 'typos': 1, 'vacuous': 0, 'not_reproduced': 1, 'reading_dependent': 0, 'errors': 0}
    """

    def count(status: str, typo: bool | None = None) -> int:
        return sum(1 for r in records if r.get("status") == status and (typo is None or bool(r.get("typo")) == typo))

    return {
        "refuted": count("refuted", typo=False),
        "typos": count("refuted", typo=True),
        "vacuous": count("vacuous"),
        "not_reproduced": count("not-reproduced"),
        "reading_dependent": count("reading-dependent"),
        "errors": count("error"),
    }


def control_shares(records: list[dict]) -> dict:
    """Per paper: verified claims, how many are controlled (a negative control fired, or a symbolic proof),
    their share, and the exceptions with the reason each claim gives (``control_exempt``).

    >>> control_shares([{"id": "a/l-1", "paper": "a", "status": "verified", "controlled": True},
    ...                 {"id": "a/l-2", "paper": "a", "status": "verified", "controlled": False}])
    {'a': {'verified': 2, 'controlled': 1, 'share': 0.5, 'exceptions': [{'id': 'a/l-2', 'reason': 'no negative control declared'}]}}
    """
    shares: dict[str, dict] = {}
    for r in records:
        if r.get("status") != "verified":
            continue
        paper = r.get("paper") or r["id"].split("/", 1)[0]
        entry = shares.setdefault(paper, {"verified": 0, "controlled": 0, "share": 0.0, "exceptions": []})
        entry["verified"] += 1
        if r.get("controlled"):
            entry["controlled"] += 1
        else:
            entry["exceptions"].append(
                {"id": r["id"], "reason": r.get("control_exempt") or "no negative control declared"}
            )
    for entry in shares.values():
        entry["share"] = entry["controlled"] / entry["verified"]
    return shares


def key_measured(measured: dict, width: int = 40) -> str:
    """The one measured value shown in the table: a ratio/slope-like key if present, else the first.

    >>> key_measured({"n": 3, "worst_ratio": 0.123456789})
    'worst_ratio=0.1235'
    """
    key = key_measured_name(measured)
    if key is None:
        return ""
    value = measured[key]
    text = f"{value:.4g}" if isinstance(value, float) else str(value)
    text = f"{key}={text}"
    return text if len(text) <= width else text[: width - 1] + "…"


def key_measured_name(measured: dict) -> str | None:
    """The key of the one measured value a claim is summarized by (the table, a report's diff), or None.

    >>> key_measured_name({"n": 3, "worst_ratio": 0.5}), key_measured_name({})
    ('worst_ratio', None)
    """
    if not measured:
        return None
    preferred = [k for k in measured if any(w in k for w in ("ratio", "slope", "worst", "gap", "error", "residual"))]
    return (preferred or list(measured))[0]


def _failed_record(claim: Claim, seed: int, reason: str, seconds: float = 0.0) -> dict:
    """The record of a claim whose run never returned one: its worker died, it ran out of time, or the
    run was interrupted before it finished. Always ``error``, never passed."""
    evidence = Evidence(status="error", seed=derive_seed(seed, claim.id), notes=reason, seconds=seconds)
    return _record(claim, evidence, seconds, [])


def run_claims(
    claims: list[Claim],
    *,
    tier: str = "fast",
    seed: int = 0,
    workers: int = 1,
    scheduler: Any = None,
    progress: bool = True,
    backend: str = "numpy",
    device: str | None = None,
    store_counterexamples: bool = True,
    timeout: float | str | None = None,
) -> Report:
    """Run the claims of ``tier`` (``fast``: fast claims; ``full``: fast and full) and report.

    Work goes through :func:`fedtheory.sweep.map_grid`: one unit per claim, ``(source, id, seed, tier)``;
    with ``workers > 1``, a ``scheduler`` or a ``timeout`` each worker reloads the claim's content file by path.

    ``timeout``: seconds one claim may run (``"default"``: :data:`DEFAULT_TIMEOUTS` of the tier; None: no
    limit). With a limit, claims run in worker processes even for ``workers=1``, since a claim stuck in C
    code (BLAS, a solver) cannot be stopped inside this process; claims without a content file then run
    inline, without the limit. A claim that runs out of time, or whose worker dies (``os._exit``, a crash,
    ``kill -9``; retried once on a fresh worker), is recorded as ``error`` with the reason, and every other
    result is kept. A SIGINT/SIGTERM under :func:`fedtheory.sweep.handle_signals` ends the run early: the
    finished claims keep their records, the others are ``error`` ("not run"), and ``report.interrupted``
    holds the signal number (None otherwise).

    >>> from fedtheory.claims.core import claim
    >>> slow = claim(id="demo/lemma-9", ref="Lemma 9", title="t", statement="s", kind="numeric",
    ...              tier="full")(lambda ctx: ctx.verified())
    >>> len(run_claims([slow], progress=False).records), len(run_claims([slow], tier="full", progress=False).records)
    (0, 1)
    >>> import sys
    >>> quits = claim(id="demo/lemma-10", ref="Lemma 10", title="t", statement="s", kind="numeric")(lambda ctx: sys.exit(0))
    >>> r = run_claims([quits], progress=False); r.records[0]["status"], r.exit_code
    ('error', 1)
    """
    check_tier(tier)
    check_workers(workers)
    if isinstance(scheduler, str):
        check_scheduler(scheduler)
    if timeout == "default":
        timeout = DEFAULT_TIMEOUTS[tier]
    elif isinstance(timeout, str):
        raise ValueError(f"timeout must be seconds, None or 'default', got {timeout!r}")
    chosen = [c for c in claims if in_tier(c.tier, tier)]
    remote = workers > 1 or scheduler is not None
    sourceless = [c.id for c in chosen if not c.source]
    if remote and sourceless:
        raise UsageError(f"claims without a content file cannot run in workers: {', '.join(sourceless)}")
    if sourceless:
        timeout = None
    units = [
        dict(
            source=c.source,
            id=c.id,
            seed=seed,
            tier=tier,
            backend=backend,
            device=device,
            store_counterexamples=store_counterexamples,
            parent_pid=os.getpid(),
        )
        for c in chosen
    ]
    start = time.perf_counter()
    bar, stop = _progress_bar(progress, len(units))
    keys = [(c.source, c.id) for c in chosen]
    in_process = not remote and timeout is None
    if in_process:
        _LOCAL.update(dict(zip(keys, chosen)))
    done: dict[int, dict] = {}

    def finished(index: int, record: dict) -> None:
        done[index] = record
        if bar is not None:
            bar(index, record)

    interrupted = None
    try:
        records = map_grid(
            run_unit,
            units,
            workers=workers,
            scheduler=scheduler,
            progress=finished,
            timeout=timeout,
            on_failure=lambda i, reason, seconds: _failed_record(chosen[i], seed, reason, seconds),
        )
    except Interrupted as exc:
        interrupted = exc.signum
        records = [
            done[i]
            if i in done
            else _failed_record(c, seed, f"not run: the run was stopped by {exc} before this claim finished")
            for i, c in enumerate(chosen)
        ]
    finally:
        stop()
        if in_process:
            for k in keys:
                _LOCAL.pop(k, None)
    report = Report(
        records, environment(seed, backend, device, sources=[c.source for c in chosen]), time.perf_counter() - start
    )
    report.interrupted = interrupted
    return report


def _progress_bar(progress: bool, total: int):
    """(callback(index, record), stop): a rich bar on a terminal; elsewhere (CI logs, pipes) one line per
    finished claim on stderr, ``[n/total] <full id>: <status> (<seconds>s)``, so a log names every claim."""
    if not progress or total == 0:
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        count = [0]

        def line(index: int, record: dict) -> None:
            count[0] += 1
            why = ""
            if not record.get("passed"):
                notes = (record.get("evidence", {}).get("notes") or "").strip().splitlines()
                why = f" expected {record.get('expect')}" + (f": {notes[-1]}" if notes else "")
            print(
                f"[{count[0]}/{total}] {record['id']}: {record['status']} ({record['seconds']:.1f}s){why}",
                file=sys.stderr,
                flush=True,
            )

        return line, lambda: None
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task("claims", total=total)
    bar.start()

    def advance(index: int, record: dict) -> None:
        bar.update(task, advance=1, description=f"{record['id']}: {record['status']}")

    return advance, bar.stop
