"""The localupdate probe claims' negative controls need the adversarial search (issue 15).

Charles & Konečný, arXiv:2103.05032. Each control below runs its claim's check with the plain random
sampling off against a statement known to be false, calibrated so that the probe's random phase stays on
the true side: with the probe's optimizer disabled (a probe helper that stops after sampling), the
control must go silent. The claim runs themselves show the controls fire with the real probe.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fedtheory.certify.probe import probe as real_probe
from fedtheory.claims.core import CheckContext, derive_seed
from fedtheory.content import discover, load_module, module_claims

ROOT = Path(__file__).resolve().parent.parent
#: the probe claims whose control only the optimizer reaches (the others' descriptions say why not)
OPTIMIZER_ONLY = ("localupdate/lemma-1", "localupdate/lemma-3", "localupdate/lemma-4",
                  "localupdate/lemma-8", "localupdate/lemma-12",
                  "localupdate/theorem-5", "localupdate/corollary-2", "localupdate/theorem-3/heavy-ball-corrected",
                  "localupdate/lemma-5/commuting-8c")
#: controls that fire by construction, at an attaining instance the check evaluates on every run (issue 24: a
#: verdict must not depend on the seed), so they fire with the optimizer stopped too
BY_CONSTRUCTION = ("localupdate/lemma-2", "localupdate/lemma-10", "localupdate/lemma-13",
                   "localupdate/table-2/no-momentum", "localupdate/table-2/nesterov")


@pytest.fixture(scope="module")
def sections():
    """The localupdate package's section modules and its ``_common`` helpers: every module that may call probe."""
    package = ROOT / "paper_checks" / "localupdate"
    return [load_module(p) for p in discover([str(package)], ())] + [load_module(package / "_common.py")]


def _claim(sections, claim_id):
    return {c.id: c for m in sections for c in module_claims(m)}[claim_id]


def _stop_the_optimizer(sections, monkeypatch, stopped_probe):
    for m in sections:
        if hasattr(m, "probe"):
            monkeypatch.setattr(m, "probe", stopped_probe)


@pytest.mark.parametrize("claim_id", OPTIMIZER_ONLY)
def test_control_goes_silent_without_the_optimizer(sections, monkeypatch, claim_id):
    claim = _claim(sections, claim_id)
    (control,) = claim.controls
    assert control.params.get("plain_sampling") is False
    random_only = functools.partial(real_probe, n_starts=0)

    def stopped_probe(violation, param, **kw):
        kw.pop("n_starts", None)
        return random_only(violation, param, **kw)

    _stop_the_optimizer(sections, monkeypatch, stopped_probe)
    ctx = CheckContext(seed=derive_seed(0, claim.id), control=dict(control.params),
                       reading=claim.readings[0].params if claim.readings else None)
    assert claim.check(ctx).status == "verified", f"{claim_id}: the control fired without the optimizer"


@pytest.mark.parametrize("claim_id", BY_CONSTRUCTION)
@pytest.mark.parametrize("seed", [0, 7])
def test_control_fires_by_construction_without_the_optimizer(sections, monkeypatch, claim_id, seed):
    claim = _claim(sections, claim_id)
    (control,) = claim.controls
    random_only = functools.partial(real_probe, n_starts=0)

    def stopped_probe(violation, param, **kw):
        kw.pop("n_starts", None)
        return random_only(violation, param, **kw)

    _stop_the_optimizer(sections, monkeypatch, stopped_probe)
    ctx = CheckContext(seed=derive_seed(seed, claim.id), control=dict(control.params),
                       reading=claim.readings[0].params if claim.readings else None)
    assert claim.check(ctx).status == "refuted", f"{claim_id}: the control did not fire at its attaining instance"
