"""No negative control is a self-comparison: a strict inequality between a number and itself (one curve against
itself, every panel replaced by the first) comes out false whatever the check computes, so it says nothing about
the check's power (issue 25). A control must instead put data known to violate the statement through the check."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: how a self-comparison control describes itself (the eight that were replaced all did)
SELF_COMPARISON = re.compile(
    r"self[- ]comparison|against itself|between equal numbers|compared with itself|below itself|above itself", re.I
)


def test_no_control_compares_a_value_with_itself():
    from fedtheory.content import load_claims

    offenders = [
        f"{c.id}: {control.name}"
        for c in load_claims([str(ROOT / "paper_checks"), str(ROOT / "verify")])
        for control in c.controls
        if SELF_COMPARISON.search(f"{control.name} {control.description}")
        or any(key in ("self", "self_comparison") for key in control.params)
    ]
    assert offenders == []


def test_the_pattern_recognises_the_old_controls():
    old = (
        "self-comparison",
        "the statement's strict comparison applied to one curve against itself (L = 5 against "
        "L = 5): false a priori (a strict inequality between equal numbers)",
    )
    assert SELF_COMPARISON.search(" ".join(old))
    assert not SELF_COMPARISON.search("the L = 5 curve replaced by L = 50's with its offsets from its chord doubled")
