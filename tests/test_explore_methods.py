"""The explorer over every registered method and over n clients.

- n clients: which certified federations cover which (splitting clients), the look-up's choice of certificates
  (the smallest covering one, the default class without ``clients``), and that a look-up between tabulated
  points is never below a fresh certificate there;
- ``tune`` / ``compare`` of registered methods (fedsplit, scaffold, ...) by certified worst case, through
  ``fedtheory.methods.pep.certify``: with a monkeypatched stand-in while that module is absent (never committed),
  plus the one-line message without it;
- instance mode on the user's federation through ``fedtheory.methods.run`` (exact spectral path on quadratics).
"""

import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import fedtheory.explore.certified as certified
from fedtheory.analysis.guarantees import GUARANTEE_SOURCES
from fedtheory.certify.federated_pep import Certificate
from fedtheory.explore import tune
from fedtheory.explore.comparison import compare, compare_certified
from fedtheory.explore.instance import simulate_instance, tune_instance
from fedtheory.explore.tuning import CERTIFIED_ROUNDS_MAX, hyper_grid, tune_certified
from fedtheory.problems.quadratic import make_quadratic

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------------
# n clients: coverage by splitting, look-ups
# ---------------------------------------------------------------------------------------------


def test_splitting_clients_covers_exactly_the_multiples_of_one_over_M():
    eight = {"clients": 8, "weights": "uniform"}
    assert certified.covers(eight, 2) and certified.covers(eight, 4) and certified.covers(eight, 8)
    assert certified.covers(eight, 1)
    assert certified.covers(eight, 3, [0.25, 0.375, 0.375])
    # negative controls: not multiples of 1/8, or more clients than 8
    assert not certified.covers(eight, 3)
    assert not certified.covers(eight, 2, [0.1, 0.9])
    assert not certified.covers(eight, 9)
    given = {"clients": 2, "weights": [0.25, 0.75]}
    assert certified.covers(given, 2, [0.75, 0.25]) and not certified.covers(given, 2)
    with pytest.raises(ValueError, match="weights must be 2 positive numbers summing to 1"):
        certified.covers(eight, 2, [0.5, 0.6])


def test_splitting_a_client_leaves_the_fixed_point_and_the_minimizer_unchanged():
    """The proof behind :func:`covers`, checked on the driver: a client of weight p split into two copies of
    weight p/2 gives the same x* and the same LocalUpdate fixed point."""
    from fedtheory.algorithms.surrogate import minimizer_distance
    from fedtheory.algorithms.theta import Theta
    from fedtheory.problems.quadratic import QuadraticFederation

    q = make_quadratic(2, 3, mu=1.0, L=30.0, C=1.0, seed=3)
    split = QuadraticFederation(
        A=np.concatenate([q.A, q.A[1:]]), c=np.concatenate([q.c, q.c[1:]]), p=np.array([q.p[0], q.p[1] / 2, q.p[1] / 2])
    )
    theta = Theta.uniform(6)
    a = minimizer_distance(q, 0.0, 0.01, theta)
    b = minimizer_distance(split, 0.0, 0.01, theta)
    assert a > 1e-3 and b == pytest.approx(a, rel=1e-10)
    np.testing.assert_allclose(split.x_star(), q.x_star(), rtol=1e-12, atol=1e-12)


def _fake_table():
    def part(vals):
        return {
            "uniform": {
                "kappa0": [10.0, 100.0],
                "gammaL": [0.01, 0.05],
                "K": [4, 4],
                "alphaL": [0.0, 0.0],
                "floor": vals,
            }
        }

    return {
        "claims": ["fake/certified-floor"],
        "clients": 2,
        "weights": "uniform",
        "theta": part([[0.2, None], [0.5, 0.9]]),
        "federations": [
            {"clients": 4, "weights": "uniform", "theta": part([[0.3, 0.4], [0.6, 0.8]])},
            {"clients": 8, "weights": "uniform", "theta": part([[0.3, 0.5], [0.7, 1.0]])},
            {"clients": 2, "weights": [0.1, 0.9], "theta": part([[0.1, 0.1], [0.4, 0.4]])},
        ],
        "default_class": {"clients": 8, "weights": "uniform"},
    }


def test_lookup_takes_the_smallest_covering_certificate_and_the_default_class(monkeypatch):
    fake = _fake_table()
    monkeypatch.setattr(certified, "load_table", lambda: fake)
    monkeypatch.setitem(GUARANTEE_SOURCES, "floor/certified", {"claims": ("fake/certified-floor",), "holds_for": "x"})
    g = [0.01 / 50, 0.05 / 50, 0.02 / 50]
    # 2 equal clients: covered by the 2-, 4- and 8-client tables; the smallest value where several are certified
    np.testing.assert_array_equal(
        certified.certified_floor_lookup(1.0, 50.0, "uniform", "gd", 2)(g, 4, 0.0), [0.5, 0.8, np.nan]
    )
    # 4 equal clients: the 4- and 8-client tables (not the 2-client one)
    np.testing.assert_array_equal(
        certified.certified_floor_lookup(1.0, 50.0, "uniform", "gd", 4)(g, 4, 0.0), [0.6, 0.8, np.nan]
    )
    # (0.1, 0.9): only its own certificate (not a multiple of 1/8); (0.25, 0.75): the 4- and 8-client ones
    np.testing.assert_array_equal(
        certified.certified_floor_lookup(1.0, 50.0, "uniform", "gd", 2, [0.9, 0.1])(g, 4, 0.0), [0.4, 0.4, np.nan]
    )
    np.testing.assert_array_equal(
        certified.certified_floor_lookup(1.0, 50.0, "uniform", "gd", 2, [0.25, 0.75])(g, 4, 0.0), [0.6, 0.8, np.nan]
    )
    assert certified.certified_floor_lookup(1.0, 50.0, "uniform", "gd", 3) is None  # no certificate covers it
    # no clients: the default class, the 8-client table alone, and the hypothesis names the class
    look = certified.certified_floor_lookup(1.0, 50.0, "uniform", "gd")
    np.testing.assert_array_equal(look(g, 4, 0.0), [0.7, 1.0, np.nan])
    assert "n ≤ 8 clients whose weights are multiples of 1/8" in look.hypothesis
    adv = tune("fedavg", mu=1.0, L=50.0, C=1e-4, D=1.0, rounds=200, lower_bound=False)
    assert adv.best["K"] == 4 and "fake/certified-floor" in adv.claims
    assert "for any other federation" in adv.message and "plain gradient descent" in adv.message
    assert any("multiples of 1/8" in h for h in adv.hypotheses)
    # negative control: without a default class in the table, no clients means no certified K > 1
    monkeypatch.setattr(certified, "load_table", lambda: {k: v for k, v in fake.items() if k != "default_class"})
    assert certified.certified_floor_lookup(1.0, 50.0, "uniform", "gd") is None
    assert tune("fedavg", mu=1.0, L=50.0, C=1e-4, D=1.0, rounds=200, lower_bound=False).best["K"] == 1


def test_shipped_table_reads_back_and_its_growth_finding_is_from_its_numbers():
    table = certified.load_table()
    if table is None or "federations" not in table:
        pytest.skip("no n-client certificates shipped (scripts/make_certified_table.py clients)")
    feds = certified.federation_tables(table)
    assert feds[0]["clients"] == 2 and {f["clients"] for f in feds} >= {2, 3, 4, 8}
    growth = table["growth"]
    worst = max(p["upper_over_lower2_minus_1"] for p in growth["points"])
    assert worst == pytest.approx(growth["max_rel_excess"], rel=1e-12)
    for p in growth["points"]:
        assert p["upper"] >= p["lower"] * (1 - 1e-6)  # each certificate is above its own instance
    if "default_class" in table:
        look = certified.certified_floor_lookup(1.0, 100.0, "uniform", "gd")
        assert look is not None and "multiples of 1/8" in look.hypothesis


def test_lookup_between_tabulated_ratios_is_not_below_a_fresh_certificate():
    """L/μ = 50 lies between the tabulated 10 and 100: the look-up answers the 100 row (the class grows with
    L/μ), which must be at least a fresh certificate at 50; off the (γL, K) grid it answers nothing."""
    table = certified.load_table()
    if table is None or not certified.pep_available():
        pytest.skip("needs the shipped table and the federated PEP")
    part = table["theta"]["uniform"]
    assert any(K == 2 and g == 0.02 for g, K in zip(part["gammaL"], part["K"])), "the table lacks γL = 0.02, K = 2"
    look = certified.certified_floor_lookup(1.0, 50.0, "uniform", "gd", 2)
    value = float(look(0.02 / 50, 2, 0.0)[0])
    fresh = certified.certify(1.0 / 50, 1.0, 2, 0.02, clients=2, measure="floor", pieces=16, probe_starts=1)
    assert fresh.status == "certified" and fresh.lower <= fresh.value <= value
    assert value > fresh.value * 1.2  # not vacuous: the 100 row is genuinely larger than the 50 one
    assert np.isnan(look(0.03 / 50, 2, 0.0)[0])  # between γL points: no value at all


# ---------------------------------------------------------------------------------------------
# registered methods: certified tuning and comparison (stand-in for fedtheory.methods.pep)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fake_pep(monkeypatch):
    """A stand-in ``fedtheory.methods.pep`` (the real one is written in parallel): records every call; its
    "certificate" is a deterministic number per setting, "unreliable" for SCAFFOLD with K = 5."""
    calls = []

    def certify(
        method,
        *,
        mu,
        L,
        clients=2,
        p=None,
        measure="rate",
        function_class="quadratic",
        C=1.0,
        zeta=None,
        rounds=None,
        D=None,
        probe_starts=4,
        probe_dim=None,
        seed=0,
    ):
        calls.append(
            {
                "method": method.name,
                "hyper": dict(method.hyper),
                "mu": mu,
                "L": L,
                "clients": clients,
                "p": p,
                "measure": measure,
                "function_class": function_class,
                "C": C,
                "rounds": rounds,
                "D": D,
            }
        )
        h = method.hyper
        value = {
            "fedsplit": 0.5 + h.get("s", 0.0),
            "scaffold": 2.0 + h.get("gamma", 0.0),
            "fedavg": 3.0 + h.get("gamma", 0.0),
        }.get(method.name, 5.0)
        if method.name == "scaffold" and h.get("K") == 5:
            return Certificate(1e-3, 1e-4, None, None, {}, "fake/pep", "x", "unreliable", 0.0)
        return Certificate(value, 0.9 * value, 0.1, None, {}, f"fake/pep-{measure}", "x", "certified", 0.0)

    mod = types.ModuleType("fedtheory.methods.pep")
    mod.certify = certify
    monkeypatch.setitem(sys.modules, "fedtheory.methods.pep", mod)
    return calls


def test_certified_tuning_passes_the_budget_and_class_and_never_picks_an_unreliable_setting(fake_pep):
    adv = tune("scaffold", mu=1.0, L=100.0, C=0.1, D=10.0, rounds=50)
    assert len(fake_pep) == len(hyper_grid("scaffold", 1.0, 100.0))
    # the certified horizon is capped (the PEP grows with rounds × K × n), and the advice says so
    assert all(
        c["measure"] == "error"
        and c["rounds"] == CERTIFIED_ROUNDS_MAX
        and c["D"] == 10.0
        and c["C"] == 0.1
        and c["clients"] == 2
        and c["p"] is None
        and c["function_class"] == "quadratic"
        for c in fake_pep
    )
    assert adv.rounds == CERTIFIED_ROUNDS_MAX and f"first {CERTIFIED_ROUNDS_MAX} of the 50 rounds" in adv.message
    # the stand-in's "unreliable" K = 5 settings report 1e-3, below every certified value: never chosen
    assert adv.best["K"] == 2 and adv.value == pytest.approx(2.0 + 0.1 / 100) and adv.status == "certified"
    assert [t["value"] is None for t in adv.tried] == [False, False, True, True]
    assert "n = 2 equal-weight clients only" in adv.message
    doc = adv.to_json()
    assert doc["entries"][0]["guaranteed"] == adv.value and doc["entries"][-1]["guaranteed"] is None
    assert doc["claims"] == ["fake/pep-error"]


def test_certified_tuning_with_clients_weights_and_a_given_setting(fake_pep):
    adv = tune_certified(
        "fedsplit", mu=1.0, L=100.0, C=0.1, D=10.0, rounds=20, clients=3, weights=[0.2, 0.3, 0.5], hyper={"s": 0.05}
    )
    assert len(fake_pep) == 1 and fake_pep[0]["clients"] == 3 and fake_pep[0]["p"] == [0.2, 0.3, 0.5]
    assert adv.best == {"s": 0.05} and "weights (0.2, 0.3, 0.5)" in adv.class_text
    assert adv.message.startswith(f"certified after the first {CERTIFIED_ROUNDS_MAX} of the 20 rounds")
    with pytest.raises(ValueError, match="after T rounds: give rounds, not eps"):
        tune("fedsplit", mu=1.0, L=100.0, C=0.1, D=10.0, eps=0.1)
    with pytest.raises(ValueError, match="weights must be 3 positive"):
        tune_certified("fedsplit", mu=1.0, L=100.0, C=0.1, D=10.0, rounds=5, clients=3, weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="method 'fedsplit'"):  # a bad hyperparameter
        tune_certified("fedsplit", mu=1.0, L=100.0, C=0.1, D=10.0, rounds=5, hyper={"t": 1.0})
    assert len(fake_pep) == 1  # nothing certified for them


def test_certified_comparison_ranks_by_the_certified_value(fake_pep):
    cmp = compare_certified(
        ["fedavg", "scaffold", "fedsplit"], mu=1.0, L=100.0, C=0.1, D=10.0, rounds=50, hyper={"fedsplit": {"s": 0.1}}
    )
    assert cmp.order == ["fedsplit", "scaffold", "fedavg"]
    assert [r[1] for r in cmp.rows()] == ["fedsplit", "scaffold", "fedavg"]
    doc = cmp.to_json()
    assert doc["extra"]["ranking"] == ["fedsplit", "scaffold", "fedavg"] and doc["kind"] == "compare"
    assert [e["guaranteed"] for e in doc["entries"]] == sorted(e["guaranteed"] for e in doc["entries"])
    with pytest.raises(ValueError, match="s-dane has derived bounds but no certificate"):
        compare_certified(["fedsplit", "s-dane"], mu=1.0, L=10.0, D=1.0, rounds=5, C=0.1)
    with pytest.raises(ValueError, match="no derived bound to reach eps"):
        compare(["fedavg", "fedsplit"], mu=1.0, L=10.0, D=1.0, eps=0.1)


def _cli(*args):
    import os

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "fedtheory.cli", "explore", *args], capture_output=True, text=True, cwd=ROOT, env=env
    )


def test_cli_bad_input_is_one_line_and_exit_2():
    for args, msg in (
        (("compare", "fedavg", "--mu", "1", "--L", "10", "--D", "1"), "exactly one of --eps"),
        (
            ("compare", "fedavg", "--methods", "gd", "--mu", "1", "--L", "10", "--D", "1", "--eps", "1"),
            "either as arguments or with --methods",
        ),
        (("tune", "fedsplat", "--mu", "1", "--L", "10", "--D", "1", "--rounds", "5"), "unknown method"),
        (
            ("tune", "fedsplit", "--mu", "1", "--L", "10", "--D", "1", "--C", "1", "--rounds", "5", "--hyper", "s"),
            "KEY=VALUE",
        ),
    ):
        out = _cli(*args)
        assert out.returncode == 2 and msg in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)


# ---------------------------------------------------------------------------------------------
# instance mode: registered methods on the user's federation
# ---------------------------------------------------------------------------------------------


def test_instance_mode_runs_registered_methods_exactly_and_ranks_them_with_localupdate():
    q = make_quadratic(4, 3, mu=1.0, L=20.0, C=1.0, seed=0)
    adv = tune_instance(q, rounds=30, methods=("fedavg", "fedsplit", "scaffold"), servers=("gd",))
    names = {adv.best["method"]} | {r["setting"]["method"] for r in adv.runner_ups}
    assert "fedsplit" in names
    # FedSplit's fixed point is x* (exact prox): it beats FedAvg's floor here, and its curve is the run's
    assert adv.best["method"] == "fedsplit" and adv.best["path"] == "spectral"
    import fedtheory.methods as fm

    h = fm.run("fedsplit", q, np.zeros(3), 30, s=adv.best["s"])
    np.testing.assert_allclose(adv.curve, h.dist, rtol=1e-12, atol=1e-15)
    assert adv.value == pytest.approx(float(h.dist[-1]), rel=1e-12)
    # the primitives literally (path "step") agree with the exact path round by round
    assert simulate_instance(adv).max_abs_gap < 1e-10
    # negative control: the same comparison on a wrong curve (another setting's) is caught
    wrong = fm.run("fedsplit", q, np.zeros(3), 30, s=adv.best["s"] * 3).dist
    assert np.max(np.abs(np.asarray(wrong) - adv.curve)) > 1e-6


def test_instance_cli_with_registered_methods(tmp_path):
    q = make_quadratic(3, 2, mu=1.0, L=10.0, C=1.0, seed=1)
    np.savez(tmp_path / "fed.npz", A=q.A, c=q.c)
    out = _cli(
        "instance",
        str(tmp_path / "fed.npz"),
        *"--rounds 20 --methods fedsplit,scaffold,sdane --servers gd --simulate --json".split(),
        str(tmp_path / "out.json"),
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["best"]["method"] in ("fedsplit", "scaffold", "sdane") and doc["simulation"]["max_abs_gap"] < 1e-10
    out = _cli("instance", str(tmp_path / "fed.npz"), "--rounds", "20", "--methods", "fedsplat")
    assert out.returncode == 2 and "unknown instance-mode method 'fedsplat'" in out.stderr


def test_gd_stays_plain_gradient_descent_whatever_the_certified_table_offers():
    """The certified table's points are local-step settings (K > 1): they are searched for FedAvg, never for gd."""
    for clients in (None, 2, 8):
        adv = tune("gd", mu=1.0, L=100.0, C=0.1, D=10.0, rounds=50, clients=clients, lower_bound=False)
        assert adv.best["K"] == 1 and adv.evaluated == 1
    # negative control: fedavg at the same constants does pick a tabulated K > 1 point where one is certified
    if certified.load_table() is not None:
        assert tune("fedavg", mu=1.0, L=100.0, C=0.1, D=10.0, rounds=50, clients=2, lower_bound=False).best["K"] > 1


def test_certified_comparison_with_the_real_pep():
    """compare on real certificates (fedtheory.methods.pep): each value is an upper bound its own instance nearly
    reaches, and the ranking follows the certified values."""
    cmp = compare_certified(
        ["fedavg", "fedsplit", "scaffold"],
        mu=1.0,
        L=10.0,
        C=0.1,
        D=1.0,
        rounds=1,
        hyper={"fedavg": {"K": 2, "gamma": 0.05}, "fedsplit": {"s": 10**-0.5}, "scaffold": {"K": 2, "gamma": 0.05}},
    )
    values = [cmp.advice[m].value for m in cmp.order]
    assert all(v is not None for v in values) and values == sorted(values)
    for a in cmp.advice.values():
        assert a.status == "certified" and a.lower <= a.value and a.lower >= a.value * (1 - 1e-3)
