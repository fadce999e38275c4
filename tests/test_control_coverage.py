"""Every verified claim shows it could have failed: a negative control, a symbolic proof, or a stated exemption.

The runner enforces the outcome (a control that does not fire makes its claim ``inconclusive``); this test
enforces the declaration, so a new claim cannot be added without saying how its check could fail (issue 15).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fedtheory.content import load_claims

ROOT = Path(__file__).resolve().parents[1]


def _claims():
    return load_claims([str(ROOT / "paper_checks"), str(ROOT / "verify")])


@pytest.mark.parametrize("c", [c for c in _claims() if c.expect == "verified"], ids=lambda c: c.id)
def test_a_verified_claim_declares_how_it_could_fail(c):
    declared = bool(c.controls) or bool(c.control_exempt) or c.kind == "symbolic"
    assert declared, f"{c.id}: declare controls=[Control(...)] or control_exempt='<specific reason>'"
    if c.control_exempt:
        assert len(c.control_exempt.split()) >= 5, f"{c.id}: control_exempt must give a specific reason"
