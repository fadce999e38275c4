"""The claim engine checks itself: planted claims whose verdicts are known, run through the engine users run.

Every verdict in this repository passes through :func:`fedtheory.claims.runner.run_claim` (controls, readings,
the NaN guard) and, against an earlier run, through :func:`fedtheory.report.diff.diff_runs`; the explorer's
public entry points choose a function class when the caller names none. A single-point bug there (a flipped
comparison in the status logic, a diff that drops a changed status, a default class that is not the general one)
would change verdicts everywhere while each paper's claims kept passing. These claims plant inputs whose correct
outcome is known by construction and compare the engine's answer with it; each negative control plants the
opposite input, where the same comparison must fail.

    fedtheory check verify/engine.py
"""

from __future__ import annotations

import io
import math

from fedtheory.claims.core import Control, Reading, claim

_DEMO = dict(ref="planted", title="planted", statement="planted", kind="numeric")


def _planted_status(planted) -> dict:
    """The record of ``planted`` (a :class:`~fedtheory.claims.core.Claim`) run through the public runner."""
    from fedtheory.claims.runner import run_claim

    return run_claim(planted, seed=0, store_counterexamples=False)


def _engine_verdict(ctx, record: dict, expected: str, **measured):
    """Verified when the engine gave ``expected``; the planted record's status and notes are the evidence."""
    return ctx.decide(
        record["status"] == expected,
        measured={"engine_status": record["status"], "expected_status": expected, **measured},
        tolerance="exact: the status string",
        notes=f"planted claim's notes: {record['evidence'].get('notes', '')[:300]}",
    )


@claim(
    id="verify/engine/crashing-control-is-inconclusive",
    ref="DESIGN: negative controls",
    title="A verified claim whose negative control crashes is inconclusive, not verified",
    statement=r"A claim whose own check verifies and whose only negative control raises is reported "
    r"\texttt{inconclusive} by the runner (a control that did not come out refuted has not fired).",
    kind="numeric",
    controls=[
        Control(
            "control-fires",
            "the planted control comes out refuted (it fires), so the runner reports "
            "the planted claim verified: the statement 'inconclusive' is false for it",
            {"control_outcome": "refuted"},
        )
    ],
)
def crashing_control_is_inconclusive(ctx):
    outcome = ctx.param("control_outcome", "crash")

    def control_check(c):
        if outcome == "crash":
            raise RuntimeError("planted crash in a negative control")
        return c.refuted(measured={"planted": 1.0})

    planted = claim(id="planted/lemma-1", **_DEMO, controls=[Control("planted", "planted", check=control_check)])(
        lambda c: c.verified(measured={"worst_ratio": 0.5})
    )
    record = _planted_status(planted)
    fired = [o["fired"] for o in record["evidence"].get("controls", [])]
    return _engine_verdict(ctx, record, "inconclusive", control_fired=fired)


@claim(
    id="verify/engine/nan-is-error",
    ref="DESIGN: verdicts",
    title="A check that verifies on a NaN measured value is an error",
    statement=r"A claim whose check returns \texttt{verified} with a NaN among its measured values (nested in a dict "
    r"or a list included) is reported \texttt{error}: every comparison with NaN is false, so a check "
    r"written as \texttt{not worst > bound} would pass on it silently.",
    kind="numeric",
    controls=[
        Control(
            "finite-value",
            "the planted measured value is finite (0.5): the runner reports verified, "
            "so the statement 'error' is false for it",
            {"planted_value": 0.5},
        )
    ],
)
def nan_is_error(ctx):
    value = ctx.param("planted_value", math.nan)
    planted = claim(id="planted/lemma-2", **_DEMO, control_exempt="planted")(
        lambda c: c.verified(measured={"worst_ratio": 0.5, "rows": [{"ratio": 0.1}, {"ratio": value}]})
    )
    return _engine_verdict(ctx, _planted_status(planted), "error")


def _reading_claim(statuses: dict):
    """A planted claim with one reading per entry of ``statuses`` (name → status its check returns)."""
    readings = [Reading(name, f"planted reading {name}", {"outcome": status}) for name, status in statuses.items()]

    def check(c):
        return c.evidence(c.param("outcome", "verified"), measured={"worst_ratio": 1.5})

    return claim(id="planted/lemma-3", **_DEMO, readings=readings, control_exempt="planted")(check)


@claim(
    id="verify/engine/mixed-readings-are-reading-dependent",
    ref="DESIGN: readings",
    title="Readings that disagree give reading-dependent; refuted only when every reading fails",
    statement=r"A claim with two faithful readings, one refuted and one verified, is reported "
    r"\texttt{reading-dependent}; with both refuted it is \texttt{refuted}; an \texttt{error} in any "
    r"reading makes it \texttt{error}.",
    kind="numeric",
    controls=[
        Control(
            "readings-agree",
            "both planted readings verify: the runner reports verified, so the statement "
            "'reading-dependent' is false for the first case",
            {"second": "verified"},
        )
    ],
)
def mixed_readings(ctx):
    second = ctx.param("second", "refuted")
    cases = {
        "mixed": ({"a": "verified", "b": second}, "reading-dependent"),
        "all-fail": ({"a": "refuted", "b": "refuted"}, "refuted"),
        "one-error": ({"a": "verified", "b": "error"}, "error"),
    }
    got = {name: _planted_status(_reading_claim(statuses))["status"] for name, (statuses, _) in cases.items()}
    wanted = {name: expected for name, (_, expected) in cases.items()}
    return ctx.decide(
        got == wanted, measured={"engine_status": got, "expected_status": wanted}, tolerance="exact: the status strings"
    )


@claim(
    id="verify/engine/baseline-diff-shows-changed-status",
    ref="DESIGN: the command line (--baseline)",
    title="A claim whose status changed between two runs is listed, and printed, by the baseline diff",
    statement=r"Given an earlier check JSON in which a claim was \texttt{verified} and a new one in which it is "
    r"\texttt{refuted}, \texttt{diff\_runs} lists exactly that status change (old, new, expect) and "
    r"\texttt{render\_diff} prints it; a claim whose status did not change is not listed.",
    kind="numeric",
    controls=[
        Control(
            "unchanged",
            "the planted old run holds the same status as the new one: the diff (rightly) "
            "lists nothing, so the statement that it lists the change is false",
            {"old_status": "refuted"},
        )
    ],
)
def baseline_diff_shows_changed_status(ctx):
    from rich.console import Console

    from fedtheory.report.diff import diff_runs, render_diff

    planted = claim(id="planted/lemma-4", **_DEMO, control_exempt="planted")(
        lambda c: c.refuted(measured={"worst_ratio": 2.0}, tolerance=1e-9)
    )
    new_record = _planted_status(planted)
    steady = {
        "id": "planted/lemma-5",
        "status": "verified",
        "expect": "verified",
        "evidence": {"measured": {"worst_ratio": 0.5}, "tolerance": 1e-9},
    }
    old_record = {
        **new_record,
        "status": ctx.param("old_status", "verified"),
        "evidence": {**new_record["evidence"], "status": ctx.param("old_status", "verified")},
    }
    diff = diff_runs({"claims": [old_record, steady]}, {"claims": [new_record, steady]})
    console = Console(record=True, width=200, file=io.StringIO())
    render_diff(diff, console, "old.json")
    printed = console.export_text()
    expected = [{"id": "planted/lemma-4", "old": "verified", "new": "refuted", "expect": "verified"}]
    line = "status planted/lemma-4: verified -> refuted"
    ok = diff["status"] == expected and line in printed and "planted/lemma-5" not in printed
    return ctx.decide(
        ok,
        measured={"diff_status": diff["status"], "printed": printed.strip()},
        tolerance="exact: the listed changes and the printed line",
    )


#: a setting where the general class has no certified floor (d ≥ 2, K(Θ) > 1, γ off every tabulated point) while
#: d = 1 and commuting federations have closed-form floors: the classes give different answers there
_SETTING = {"mu": 1.0, "L": 10.0, "C": 1.0, "D": 1.0, "clients": 3}
_POINT = {"alpha": 0.0, "gamma": 0.0123, "K": 7}


@claim(
    id="verify/engine/explorer-defaults-are-conservative",
    ref="DESIGN: nothing downstream may use a refuted statement",
    title="The explorer's public API, given no function class, bounds the general (non-commuting, d ≥ 2) class",
    statement=r"\texttt{method\_guarantee} without a \texttt{function\_class} returns the general class's guarantee "
    r"(the most conservative: its floor is at least the commuting and d = 1 floors at every setting), and "
    r"the public entry points \texttt{tune}, \texttt{frontier}, \texttt{compare} and "
    r"\texttt{local\_update\_guarantee} default to \texttt{\"general\"}.",
    kind="numeric",
    controls=[
        Control(
            "d1-default",
            "the statement with the d = 1 class in place of the general one: at K = 7, "
            "γ = 0.0123 the d = 1 floor (Lemma 12) is finite while the general class has no certified "
            "floor there, so the default is not the d = 1 class",
            {"reference_class": "d1"},
        )
    ],
)
def explorer_defaults_are_conservative(ctx):
    import inspect

    import numpy as np

    from fedtheory.analysis.guarantees import local_update_guarantee
    from fedtheory.explore import compare, frontier, tune
    from fedtheory.explore.tuning import method_guarantee

    reference = ctx.param("reference_class", "general")
    settings = {k: np.array([v], dtype=float) for k, v in _POINT.items()}
    settings["K"] = settings["K"].astype(int)
    default = method_guarantee("fedavg", dict(_SETTING), settings)
    floors = {
        klass: float(method_guarantee("fedavg", {**_SETTING, "function_class": klass}, settings).floor[0])
        for klass in ("d1", "commuting", "general")
    }
    same = default.function_class == reference and float(default.floor[0]) == floors[reference]  # inf == inf
    ordered = floors["d1"] <= floors["commuting"] <= floors["general"]
    signatures = {
        fn.__name__: inspect.signature(fn).parameters["function_class"].default
        for fn in (tune, frontier, compare, local_update_guarantee)
    }
    ok = same and ordered and all(v == reference for v in signatures.values())
    return ctx.decide(
        ok,
        measured={
            "default_class": default.function_class,
            "default_floor": float(default.floor[0]),
            "floors_by_class": floors,
            "signature_defaults": signatures,
        },
        tolerance="exact: the class names and the floor values",
        notes="The general class at a setting no certificate covers has no floor (inf): its guarantee "
        "is 'none', the conservative answer; d = 1 and commuting floors are Lemma 12's.",
    )
