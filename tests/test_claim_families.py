"""Claims declared as a family (fedtheory.claims.families.claim_family): the content loader finds them one level
inside the module's tuple, counts them in the file that writes their check (not in a file that imports the
family), and each claim runs its check with its own row's arguments."""

from __future__ import annotations

import textwrap

import pytest

from fedtheory.claims.core import CheckContext
from fedtheory.claims.families import claim_family
from fedtheory.content import load_module, module_claims

FAMILY = textwrap.dedent(
    '''
    from fedtheory.claims.families import claim_family

    def _power_at_most_one(ctx, power):
        worst = max(x**power for x in (0.0, 0.5, 1.0 + ctx.param("overshoot", 0.0)))
        return ctx.decide(worst <= 1.0, measured={"worst": worst, "power": power})

    POWERS = claim_family(
        _power_at_most_one,
        {"id": "demo/lemma-1", "ref": "Lemma 1", "title": "x² ≤ 1", "statement": "s1", "args": {"power": 2}},
        {"id": "demo/lemma-2", "ref": "Lemma 2", "title": "x³ ≤ 1", "statement": "s2", "args": {"power": 3}},
        kind="numeric",
        control_exempt="a test family",
    )
    '''
)


def test_a_family_is_found_and_each_claim_runs_with_its_row(tmp_path):
    path = tmp_path / "family.py"
    path.write_text(FAMILY)
    claims = {c.id: c for c in module_claims(load_module(path))}
    assert sorted(claims) == ["demo/lemma-1", "demo/lemma-2"]
    assert claims["demo/lemma-2"].ref == "Lemma 2" and claims["demo/lemma-2"].kind == "numeric"
    assert claims["demo/lemma-1"].run(CheckContext()).measured == {"worst": 1.0, "power": 2}
    assert claims["demo/lemma-2"].run(CheckContext()).measured == {"worst": 1.0, "power": 3}
    # the check is really evaluated: a parameter pushing x past 1 refutes each member
    assert claims["demo/lemma-2"].run(CheckContext(control={"overshoot": 0.1})).status == "refuted"


def test_a_family_imported_by_another_content_file_is_not_counted_twice(tmp_path):
    (tmp_path / "family.py").write_text(FAMILY)
    importer = tmp_path / "importer.py"
    importer.write_text(
        "from pathlib import Path\nfrom fedtheory.content import load_module\n"
        "F = load_module(Path(__file__).with_name('family.py'))\nPOWERS = F.POWERS\n"
    )
    assert module_claims(load_module(importer)) == []


def test_a_row_without_arguments_is_refused():
    with pytest.raises(ValueError, match="demo/lemma-9 has no 'args'"):
        claim_family(lambda ctx: None, {"id": "demo/lemma-9", "ref": "r", "title": "t", "statement": "s"})
