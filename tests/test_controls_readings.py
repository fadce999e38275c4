"""The claim engine's negative controls, faithful readings, substitutes and typos (issues 15 and 16)."""

from __future__ import annotations

import json

import jsonschema

from fedtheory.claims.core import Control, Reading, claim
from fedtheory.claims.runner import run_claim, run_claims
from fedtheory.schemas import load_schema


def _bound_claim(controls=(), **kw):
    """x² ≤ c on a grid of [0, 1]: true for c ≥ 1, attained at x = 1."""

    @claim(
        id="demo/lemma-1",
        ref="Lemma 1",
        title="x² ≤ c",
        statement="$x^2 \\le c$",
        kind="numeric",
        controls=controls,
        **kw,
    )
    def lemma_1(ctx):
        worst = max(x * x for x in (0.0, 0.25, 0.5, 1.0))
        c = ctx.param("c", 1.0)
        return ctx.decide(
            worst <= c, measured={"worst_ratio": worst / c}, counterexample=None if worst <= c else {"x": 1.0, "c": c}
        )

    return lemma_1


def test_a_control_that_fires_keeps_verified_and_counts_as_controlled():
    record = run_claim(_bound_claim([Control("c-0.9", "c = 0.9 < 1 = max x²", {"c": 0.9})]))
    assert record["status"] == "verified" and record["passed"] and record["controlled"]
    (outcome,) = record["evidence"]["controls"]
    assert outcome["name"] == "c-0.9" and outcome["fired"] and outcome["status"] == "refuted"


def test_a_control_that_does_not_fire_makes_the_claim_inconclusive():
    # c = 1.5 is still true: the "control" cannot fire, so the check showed no power
    record = run_claim(_bound_claim([Control("c-1.5", "not actually false", {"c": 1.5})]))
    assert record["status"] == "inconclusive" and not record["passed"] and not record["controlled"]
    assert "c-1.5" in record["evidence"]["notes"]


def test_a_crashing_control_does_not_count_as_fired():
    def boom(ctx):
        raise RuntimeError("control broke")

    record = run_claim(_bound_claim([Control("broken", "crashes", check=boom)]))
    assert record["status"] == "inconclusive"
    assert record["evidence"]["controls"][0]["status"] == "error"


def test_uncontrolled_verified_claims_are_listed_with_their_reason():
    plain = _bound_claim(control_exempt="the bound is not tight; no false variant is known")
    report = run_claims([plain], progress=False)
    share = report.summary["controls"]["demo"]
    assert share == {
        "verified": 1,
        "controlled": 0,
        "share": 0.0,
        "exceptions": [{"id": "demo/lemma-1", "reason": "the bound is not tight; no false variant is known"}],
    }


def test_a_symbolic_proof_counts_as_controlled():
    proved = claim(id="demo/lemma-2", ref="Lemma 2", title="t", statement="s", kind="symbolic")(
        lambda ctx: ctx.proved("sympy: simplify(x - x) == 0")
    )
    assert run_claim(proved)["controlled"]


def _reading_claim(fail_under: tuple[str, ...], **kw):
    readings = [
        Reading("mean", "batch gradients averaged", {"scaling": "mean"}),
        Reading("sum", "batch gradients summed", {"scaling": "sum"}),
    ]

    @claim(
        id="demo/figure-1/plateau", ref="Figure 1", title="t", statement="s", kind="simulation", readings=readings, **kw
    )
    def plateau(ctx):
        scaling = ctx.param("scaling", None)
        bad = scaling in fail_under
        return ctx.decide(
            not bad, measured={"ratio": 2.0 if bad else 1.0}, counterexample={"scaling": scaling} if bad else None
        )

    return plateau


def test_refuted_only_when_every_reading_fails(tmp_path):
    both = _reading_claim(("mean", "sum"), expect="refuted")
    both.source = str(tmp_path / "demo.py")
    record = run_claim(both)
    assert record["status"] == "refuted" and record["passed"]
    assert [r["status"] for r in record["evidence"]["readings"]] == ["refuted", "refuted"]
    # each reading's instance is stored and replayed apart
    assert (tmp_path / "counterexamples" / "demo" / "figure-1" / "plateau~mean.json").exists()
    assert (tmp_path / "counterexamples" / "demo" / "figure-1" / "plateau~sum.json").exists()


def test_mixed_readings_are_reading_dependent():
    record = run_claim(_reading_claim(("mean",), expect="reading-dependent"))
    assert record["status"] == "reading-dependent" and record["passed"]
    assert record["evidence"]["measured"]["readings_failing"] == 1
    assert record["evidence"]["counterexample"]["reading"] == "mean"


def _figure_claim(id: str, ref: str, **kw):
    """The decorator of a simulation claim whose title and statement do not matter to the test."""
    return claim(id=id, ref=ref, title="t", statement="s", kind="simulation", **kw)


def test_a_failure_on_a_substitute_is_not_reproduced_never_refuted():
    sub = _bound_claim(expect="not-reproduced", substitute="digits instead of MNIST, 60 rounds instead of 500")
    sub_false = _figure_claim(
        "demo/figure-2/gain", "Figure 2", expect="not-reproduced", substitute="digits instead of MNIST"
    )(lambda ctx: ctx.refuted(measured={"gain": 0.5}))
    record = run_claim(sub_false)
    assert record["status"] == "not-reproduced" and record["passed"]
    assert "digits instead of MNIST" in record["evidence"]["notes"]
    assert run_claim(sub)["status"] == "verified"
    report = run_claims([sub_false], progress=False)
    assert report.summary["findings"]["not_reproduced"] == 1 and report.summary["findings"]["refuted"] == 0


def test_a_substitute_claim_cannot_expect_refuted():
    import pytest

    with pytest.raises(ValueError, match="substitute"):
        _figure_claim("demo/figure-3/x", "Figure 3", expect="refuted", substitute="digits")(lambda ctx: ctx.refuted())


def test_typos_are_counted_apart_from_errors_in_the_summary():
    typo = claim(
        id="demo/lemma-3/literal", ref="Lemma 3", title="t", statement="s", kind="numeric", expect="refuted", typo=True
    )(lambda ctx: ctx.refuted())
    wrong = claim(id="demo/lemma-4", ref="Lemma 4", title="t", statement="s", kind="numeric", expect="refuted")(
        lambda ctx: ctx.refuted()
    )
    f = run_claims([typo, wrong], progress=False).summary["findings"]
    assert (f["refuted"], f["typos"]) == (1, 1)


def test_records_with_controls_and_readings_match_the_schema():
    records = [
        run_claim(_bound_claim([Control("c-0.9", "false", {"c": 0.9})])),
        run_claim(_reading_claim(("mean",), expect="reading-dependent")),
    ]
    report = run_claims([], progress=False)
    report.records = records
    doc = json.loads(json.dumps(report.to_json()))
    jsonschema.validate(doc, load_schema("check"))


def test_a_nan_among_the_measured_values_is_an_error_never_a_verdict():
    sneaky = claim(id="demo/lemma-5", ref="Lemma 5", title="t", statement="s", kind="numeric")(
        lambda ctx: ctx.decide(not float("nan") > 1.0, measured={"worst_ratio": float("nan")})
    )
    record = run_claim(sneaky)
    assert record["status"] == "error" and not record["passed"]
    assert "worst_ratio" in record["evidence"]["notes"]
