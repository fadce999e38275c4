"""Adversarial --simulate for the DANE family: the known near-attaining instance and a probe started from it run
on the real driver beside the random instance; a guarantee any of them exceeds is a failed claim (exit 1)."""

import dataclasses
import json

import numpy as np
import pytest

from fedtheory.cli import main
from fedtheory.explore import simulate, tune
from fedtheory.explore import tuning
from fedtheory.problems.clients import client_oracles
from fedtheory.problems.dissimilarity import delta_A
from fedtheory.problems.quadratic import QuadraticFederation

# (method, constants): the second S-DANE/Acc-S-DANE cases have μ ≪ λ, where the near-attaining instance peaks late
CASES = [
    ("s-dane", dict(mu=1.0, L=40.0, D=4.0, delta_A=2.0, eps=1e-3)),
    ("acc-s-dane", dict(mu=0.01, L=40.0, D=4.0, delta_A=2.0, rounds=100)),
]


def _advice(method, consts):
    return tune(method, C=0.5, function_class="general", lower_bound=False, **consts)


def _halved(monkeypatch):
    """method_guarantee with the bound halved at every round R ≥ 1 (round 0 stays D, so the failure cannot come
    from x^0 itself)."""
    real = tuning.method_guarantee

    def halved(*args, **kw):
        g = real(*args, **kw)
        return dataclasses.replace(g, _error_after=lambda T: np.where(T > 0, 0.5, 1.0) * g._error_after(T))

    monkeypatch.setattr(tuning, "method_guarantee", halved)


@pytest.mark.parametrize("method, consts", CASES)
def test_dane_simulate_runs_adversarial_instances_of_the_class_and_none_exceeds_the_guarantee(method, consts):
    adv = _advice(method, consts)
    sim = simulate(adv, seed=3)
    assert sorted(sim.instances) == ["near-attaining", "probe", "random"]
    assert sim.holds and sim.max_ratio <= 1.0, sim.notes()
    assert sim.extra["test (6) failures (must be 0)"] == 0
    assert [c.split(":")[0] for c in sim.columns()[2:]] == list(sim.instances)
    ratios = {k: float(np.max(sim._ratio(v["measured"])[1:])) for k, v in sim.instances.items()}
    # the adversarial instances are at least as hard as the random one, and come within a factor 2 of the bound
    assert max(ratios["probe"], ratios["near-attaining"]) >= ratios["random"], ratios
    assert max(ratios["probe"], ratios["near-attaining"]) > 0.5, ratios
    for name, v in sim.instances.items():
        # every instance is in the theorems' class (drivers' uniform view): μ ⪯ n·p_i·A_i ⪯ L, δ_A ≤ δ_A
        q = QuadraticFederation.from_json(v["json"]["federation"])
        orc = client_oracles(q)
        assert orc.mu >= consts["mu"] * (1 - 1e-12) and orc.L <= consts["L"] * (1 + 1e-12), name
        assert delta_A(q) <= consts["delta_A"] * (1 + 1e-12), name
        assert np.linalg.norm(np.asarray(v["json"]["x0"]) - q.x_star()) == pytest.approx(consts["D"], rel=1e-12)
    doc = sim.to_json()
    assert set(doc["instances"]) == set(sim.instances) and doc["holds"] is True
    again = simulate(adv, seed=3)  # same seed, same numbers
    for k in sim.instances:
        np.testing.assert_array_equal(again.instances[k]["measured"], sim.instances[k]["measured"])


@pytest.mark.parametrize("method, consts", CASES)
def test_negative_control_a_halved_guarantee_is_a_failed_claim_found_by_an_adversarial_instance(
    method, consts, monkeypatch
):
    adv = _advice(method, consts)
    _halved(monkeypatch)
    sim = simulate(adv, seed=3)
    assert not sim.holds and sim.max_ratio > 1.0
    # the random instance alone stays under the halved bound: only the adversarial instances expose it
    assert float(np.max(sim._ratio(sim.instances["random"]["measured"]))) <= 1.0
    assert "FAILED CLAIM" in sim.notes()[0] and ("'probe'" in sim.notes()[0] or "'near-attaining'" in sim.notes()[0])


def test_cli_dane_simulate_exit_codes(tmp_path, monkeypatch):
    argv = [
        *"explore tune s-dane --mu 1 --L 40 --D 4 --delta-A 2 --eps 1e-3 --simulate --json".split(),
        str(tmp_path / "s.json"),
    ]
    assert main(argv) == 0
    doc = json.loads((tmp_path / "s.json").read_text())["simulation"]
    assert sorted(doc["instances"]) == ["near-attaining", "probe", "random"] and doc["holds"] is True
    _halved(monkeypatch)
    assert main(argv) == 1
    assert json.loads((tmp_path / "s.json").read_text())["simulation"]["holds"] is False
