"""The analytic explorer: frontier, tune, compare, simulate, the CLI and the offline page."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from fedtheory.analysis.guarantees import local_update_guarantee, sdane_guarantee
from fedtheory.analysis.pareto import pareto_mask, worst_case_tradeoff
from fedtheory.explore import METHODS, compare, frontier, simulate, tune


def test_frontier_is_the_library_sweep_with_valid_floors_and_pareto_marks():
    fr = frontier(
        mu=1.0,
        L=20.0,
        theta="last",
        sweep="gamma",
        lo=1e-4,
        hi=0.04,
        points=300,
        K=5,
        server="heavy_ball",
        function_class="d1",
    )
    ref = worst_case_tradeoff(1.0, 20.0, theta="last", gamma=fr.gamma, K=5, momentum="heavy_ball")
    g = local_update_guarantee(
        mu=1.0, L=20.0, C=1.0, D=0.0, theta="last", gamma=fr.gamma, K=5, momentum="heavy_ball", function_class="d1"
    )
    assert np.array_equal(fr.rho, ref["rho"]) and np.array_equal(fr.floor, g.floor) and fr.valid.all()
    assert np.array_equal(fr.pareto, pareto_mask(ref["rho"], g.floor))
    doc = fr.to_json()
    assert len(doc["entries"]) == len(fr) and {"setting", "rho", "floor", "pareto", "valid"} <= set(doc["entries"][0])
    # general d ≥ 2: no valid floor at K > 1 without a certified table, so no point is valid there
    gen = frontier(mu=1.0, L=20.0, theta="last", sweep="gamma", lo=1e-4, hi=0.04, points=30, K=5)
    if gen.claims and "floor/certified" not in " ".join(gen.claims):
        assert not gen.valid.any() and not gen.pareto.any() and np.isinf(gen.delta).all()


def test_frontier_sweeps_alpha_and_K_up_to_a_million():
    fr = frontier(mu=1.0, L=10.0, sweep="K", lo=1, hi=1e6, points=500, gamma=0.05)
    assert fr.K[-1] == 10**6 and np.all(np.isfinite(fr.rho))
    fa = frontier(mu=1.0, L=10.0, sweep="alpha", lo=0.0, hi=5.0, points=50, gamma=0.05, K=1000)
    assert fa.alpha[0] == 0.0 and np.all(np.diff(fa.alpha) > 0)


@pytest.mark.parametrize(
    "kw, needle",
    [
        (dict(mu=2.0, L=1.0), "mu <= L"),
        (dict(mu=1.0, L=10.0, gamma=0.2), "gamma < 1/(L + alpha)"),
        (dict(mu=1.0, L=10.0, sweep="K", lo=0, hi=10), "K >= 1"),
        (dict(mu=1.0, L=10.0, alpha=-1.0, gamma=0.01), "alpha >= 0"),
        (dict(mu=1.0, L=10.0, sweep="beta"), "sweep must be one of"),
    ],
)
def test_out_of_hypothesis_requests_name_the_condition(kw, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        frontier(**kw)


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("budget", [{"rounds": 25}, {"work": 400.0}, {"eps": 0.05}])
def test_tune_returns_the_best_setting_it_evaluated(method, budget):
    adv = tune(method, mu=1.0, L=50.0, C=0.2, D=5.0, delta_A=3.0, function_class="d1", **budget)
    assert adv.feasible
    kind = next(iter(budget))
    for r in adv.runner_ups:
        assert adv.value <= (r["rounds"] if kind == "eps" else r["bound"]) + 1e-15
    # the reported value is the method's bound at the reported setting, recomputed independently
    s = adv.best
    if METHODS[method][0] == "local-update":
        g = local_update_guarantee(
            mu=1.0,
            L=50.0,
            C=0.2,
            D=5.0,
            theta=s["theta"],
            alpha=s["alpha"],
            gamma=s["gamma"],
            K=s["K"],
            function_class="d1",
        )
        assert s["server"] == "gd" and s["eta"] > 0 and s["beta"] == 0  # the server the guarantee assumes
    else:
        g = sdane_guarantee(
            mu=1.0, L=50.0, delta_A=3.0, D=5.0, lam=s["lambda"], solver=s["solver"], accelerated=method == "acc-s-dane"
        )
    if kind == "eps":
        assert float(g.rounds_to(0.05)[0]) == adv.value
        assert float(g.error_after(adv.value)[0]) <= 0.05 < float(g.error_after(adv.value - 1)[0])
    elif kind == "rounds":
        assert float(g.error_after(25)[0]) == pytest.approx(adv.value, rel=1e-12)
    else:
        assert float(g.error_after(math.floor(400 / max(g.local_steps[0], 1)))[0]) == pytest.approx(
            adv.value, rel=1e-12
        )


def test_runner_ups_are_distinct_in_print_and_valid():
    from fedtheory.explore.results import setting_text

    for klass in ("d1", "general"):
        adv = tune("fedprox", mu=1.0, L=100.0, C=0.1, D=10.0, rounds=50, function_class=klass)
        texts = [setting_text(adv.best)] + [setting_text(r["setting"]) for r in adv.runner_ups]
        assert len(set(texts)) == len(texts)
        assert all(math.isfinite(r["bound"]) for r in adv.runner_ups)
        assert {"theta", "K", "gamma", "alpha", "server", "eta", "beta"} <= set(adv.best)


def test_tune_is_infeasible_below_every_floor_and_rejects_bad_budgets():
    adv = tune("fedavg", mu=1.0, L=10.0, C=100.0, D=1.0, eps=1e-6, function_class="d1")
    assert adv.feasible and adv.best["K"] == 1  # only K = 1 (no drift) reaches eps
    assert not tune("maml", mu=1.0, L=10.0, C=1.0, D=1.0, rounds=10, lower_bound=False).feasible  # d ≥ 2: none valid
    with pytest.raises(ValueError, match="depends on the number of clients"):
        tune("fedavg", mu=1.0, L=10.0, C=1.0, D=1.0, rounds=10, function_class="commuting")
    with pytest.raises(ValueError, match="exactly one budget"):
        tune("fedavg", mu=1.0, L=10.0, D=1.0)
    with pytest.raises(ValueError, match="needs delta_A"):
        tune("s-dane", mu=1.0, L=10.0, D=1.0, eps=0.1)
    with pytest.raises(ValueError, match="unknown method"):
        tune("scaffolding", mu=1.0, L=10.0, D=1.0, eps=0.1)
    # a registered method (fedtheory.methods) is tuned by its certificate after T rounds: eps is refused
    with pytest.raises(ValueError, match="scaffold is tuned by its certified worst case after T rounds"):
        tune("scaffold", mu=1.0, L=10.0, D=1.0, eps=0.1)


def test_compare_traces_every_entry_to_claims():
    cmp = compare(mu=1.0, L=100.0, C=0.01, D=10.0, delta_A=1.0, eps=1e-2, function_class="d1")
    assert [e["method"] for e in cmp.entries()] == list(METHODS)
    for e in cmp.entries():
        assert e["claims"] and all("/" in c for c in e["claims"]) and e["function_class"] == "d1"
    assert compare(["gd", "s-dane"], mu=1.0, L=10.0, D=1.0, eps=0.1).entries()[1]["missing"].startswith("needs delta_A")


def test_tune_compare_frontier_share_one_json_form():
    from fedtheory.explore.results import ENTRY_FIELDS, ENVELOPE_FIELDS

    docs = [
        tune("fedavg", mu=1.0, L=10.0, C=0.1, D=1.0, rounds=10, function_class="d1").to_json(),
        compare(["gd", "fedavg"], mu=1.0, L=10.0, C=0.1, D=1.0, eps=0.1, function_class="d1").to_json(),
        frontier(mu=1.0, L=10.0, points=20, gamma=0.01, function_class="d1").to_json(),
    ]
    for doc in docs:
        assert tuple(doc) == ENVELOPE_FIELDS
        assert all(set(ENTRY_FIELDS) <= set(e) for e in doc["entries"])
    assert [d["kind"] for d in docs] == ["tune", "compare", "frontier"]


@pytest.mark.parametrize(
    "method, budget, klass",
    [
        ("gd", {"rounds": 40}, "general"),
        ("fedavg", {"rounds": 30}, "d1"),
        ("fedavg", {"rounds": 30}, "general"),
        ("fedprox", {"eps": 0.9}, "commuting"),
        ("fomaml", {"work": 300.0}, "d1"),
        ("maml", {"rounds": 30}, "d1"),
        ("s-dane", {"eps": 1e-3}, "general"),
        ("acc-s-dane", {"rounds": 20}, "general"),
    ],
)
def test_predictions_hold_on_random_and_adversarial_instances(method, budget, klass):
    adv = tune(
        method, mu=1.0, L=40.0, C=0.5, D=4.0, delta_A=2.0, function_class=klass, clients=3, lower_bound=False, **budget
    )
    sim = simulate(adv, seed=3)
    assert sim.holds, sim.notes()
    assert len(sim.rounds) >= 2 and sim.measured[0] == pytest.approx(4.0)
    if not method.endswith("s-dane"):
        assert "probe" in sim.instances  # the adversarial instance ran on the driver too
    if method.endswith("s-dane"):
        assert sim.extra["test (6) failures (must be 0)"] == 0


@pytest.mark.parametrize("momentum", ["heavy_ball", "nesterov"])
def test_momentum_advice_uses_the_corrected_constant_and_holds(momentum):
    adv = tune("fedavg", mu=1.0, L=50.0, C=0.0, D=5.0, rounds=30, momentum=momentum, function_class="d1")
    slug = momentum.replace("_", "-")
    assert f"localupdate/theorem-3/{slug}-corrected" in adv.claims
    assert f"localupdate/theorem-3/{slug}" not in adv.claims  # constant 1: refuted, never cited
    assert adv.best["server"] == momentum and adv.best["beta"] > 0
    sim = simulate(adv, seed=1)
    assert sim.holds, sim.notes()


def test_momentum_guarantee_is_the_corrected_bound_and_rounds_match_it():
    g = local_update_guarantee(
        mu=1.0, L=100.0, C=0.1, D=10.0, gamma=0.001, K=[1, 5, 50], momentum="heavy_ball", function_class="d1"
    )
    T = np.arange(0, 400)
    rho, start = g.rho[:, None], 10.0 + g.floor[:, None]
    expected = (1 + (1 + rho) * T) * rho**T * start + g.floor[:, None]
    np.testing.assert_allclose(np.stack([g.error_after(t) for t in T], axis=1), expected, rtol=1e-14)
    for eps in (0.5, 1e-2):
        need = g.rounds_to(eps)
        for i, n in enumerate(need):
            above = np.nonzero(expected[i] > eps)[0]
            assert n == (np.inf if above.size and above[-1] == T[-1] else (above[-1] + 1 if above.size else 0))


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "fedtheory", "explore", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_commands_and_json(tmp_path):
    out = _run(
        *"frontier --mu 1 --L 10 --sweep gamma --K 50 --points 200 --json".split(),
        str(tmp_path / "f.json"),
        "--plot",
        str(tmp_path / "f.png"),
    )
    assert out.returncode == 0, out.stderr
    assert len(json.loads((tmp_path / "f.json").read_text())["entries"]) == 200 and (tmp_path / "f.png").stat().st_size
    out = _run(
        *"tune fomaml --mu 1 --L 30 --C 0.3 --D 3 --rounds 20 --simulate --class d1 --json".split(),
        str(tmp_path / "t.json"),
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["simulation"]["holds"] is True and "localupdate/lemma-12" in doc["claims"]
    assert "localupdate/corollary-1" not in doc["claims"] and doc["function_class"] == "d1"
    out = _run(
        *"compare --mu 1 --L 30 --D 3 --eps 0.01 --delta-A 1 --methods gd,s-dane --json".split(),
        str(tmp_path / "c.json"),
    )
    assert out.returncode == 0, out.stderr
    assert [e["method"] for e in json.loads((tmp_path / "c.json").read_text())["entries"]] == ["gd", "s-dane"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["frontier", "--mu", "1", "--L", "10", "--gamma", "0.5"], "gamma < 1/(L + alpha)"),
        (["frontier", "--mu", "5", "--L", "1"], "mu <= L"),
        (["frontier", "--mu", "1", "--L", "10", "--sweep", "K", "--lo", "0", "--hi", "5"], "K >= 1"),
        (["tune", "fedavg", "--mu", "1", "--L", "10", "--D", "1"], "exactly one budget"),
        (["tune", "s-dane", "--mu", "1", "--L", "10", "--D", "1", "--eps", "0.1", "--delta-A", "-1"], "delta_A >= 0"),
        (["compare", "--mu", "1", "--L", "10", "--D", "1", "--eps", "0.1", "--methods", "gd,nope"], "unknown method"),
        (["frontier", "--mu", "1"], "required"),
    ],
)
def test_cli_bad_input_is_one_line(args, needle):
    out = _run(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], out.stderr


def test_oracle_comparison_tunes_fedave_and_names_the_findings(tmp_path):
    from fedtheory.explore import oracle
    from fedtheory.symbolic.oracle_complexity import FedAveProgram

    res = oracle(
        d=1, p=1, eta=6.0, alpha=1.0, L1=2.0, mu=1.0, L2=1.0, B=1.0, epsilon=0.5, initial_gap=0.0, m=10, s=5, phi=100.0
    )
    b, T = res.results["fedave"]["setting"]["b"], res.results["fedave"]["setting"]["T"]
    prog = FedAveProgram(m=10, phi=100.0, tau=1.0, C=1.0, varepsilon=0.5)
    # the tuned (b, T) is feasible for (79) and no grid point beats it
    assert 100 / (T * b) ** 2 + b / (10 * T) <= 0.5 * (1 + 1e-9)
    grid = np.geomspace(b / 50, b * 50, 2001)
    assert T * (b + prog.C3) <= prog.objective(grid).min() * (1 + 1e-9)
    assert any("vacuous" in c for c in res.results["fedlrgd"]["caveats"])
    out = _run(
        *"oracle --d 1 --p 1 --eta 6 --alpha 1 --L1 2 --mu 1 --L2 1 --B 1 --epsilon 0.5 --gap 0 --m 10 --phi 100 --s 5 --json".split(),
        str(tmp_path / "o.json"),
    )
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "o.json").read_text())["winner"] == res.winner
    bad = _run(
        *"oracle --d 1 --p 1 --eta 3 --alpha 1 --L1 2 --mu 1 --L2 1 --B 1 --epsilon 0.5 --gap 0 --m 10 --phi 100".split(),
    )
    assert bad.returncode == 2 and "eta > (2*alpha + 2)*d" in bad.stderr


def test_frontier_with_custom_weights(tmp_path):
    fr = frontier(mu=1.0, L=10.0, theta="custom", weights=[0.5, 0.0, 2.0, 1.0], sweep="gamma", points=100)
    assert fr.K[0] == 4 and not fr.valid.any() and fr.params["weights"] == [0.5, 0.0, 2.0, 1.0]
    with pytest.raises(ValueError, match="sweep gamma or alpha"):
        frontier(mu=1.0, L=10.0, theta="custom", weights=[1.0, 1.0], sweep="K")
    out = _run(
        *"frontier --mu 1 --L 10 --theta custom --weights 1,0.5,2 --sweep alpha --gamma 0.02 --points 50 --json".split(),
        str(tmp_path / "c.json"),
    )
    assert out.returncode == 0, out.stderr
    bad = _run("frontier", "--mu", "1", "--L", "10", "--theta", "custom", "--weights", "1,x")
    assert bad.returncode == 2 and "--weights must be comma-separated numbers" in bad.stderr


@pytest.mark.parametrize(
    "argv, needle",
    [
        (
            ["certify", "fedavg", "--mu", "1", "--L", "1e308", "--K", "2", "--gamma", "1e-309"],
            "argument --L: 1e308 is out",
        ),
        (
            ["certify", "fedavg", "--mu", "1", "--L", "10", "--K", "2", "--gamma", "0.05", "--pieces", "0"],
            "argument --pieces: 0 is not in [1, 4096]",
        ),
        (
            ["certify", "fedavg", "--mu", "1", "--L", "10", "--K", "2", "--gamma", "0.05", "--pieces", "10000000"],
            "argument --pieces: 10000000 is not in [1, 4096]",
        ),
        (
            ["tune", "fedavg", "--mu", "1", "--L", "1e308", "--D", "1e308", "--rounds", "5"],
            "argument --L: 1e308 is out",
        ),
        (
            ["tune", "fedavg", "--mu", "1", "--L", "10", "--D", "1", "--rounds", "5", "--rows", "-1"],
            "argument --rows: -1 is not in [1, 10000]",
        ),
        (
            [
                *"oracle --d 1 --p 1 --eta 1e308 --alpha 1 --L1 2 --mu 1 --L2 1 --B 1 --epsilon 0.5 --gap 0 --m 10 --phi 100".split(),
            ],
            "argument --eta: 1e308 is out",
        ),
    ],
)
def test_explore_constants_out_of_float64_range_and_bad_counts_are_one_line(argv, needle, capsys):
    """Issue 24, defects 10-11: overflowing constants were 'internal error' (IndexError, OverflowError), and
    --pieces 0, --pieces 10⁷ (unbounded work) and --rows -1 were accepted."""
    from fedtheory.cli import main

    assert main(["explore", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and "internal error" not in err and len(err.strip().splitlines()) == 1


def test_a_long_budget_is_simulated_to_float64_resolution_and_not_failed_by_rounding(tmp_path):
    """Issue 24, defect 12: `tune … --rounds 100000 --simulate --class d1` ended 'FAILED CLAIM' (exit 1) from rounds
    where the bound is below float64 resolution, having simulated an unexplained 2,000 of 100,000 rounds. It now
    simulates up to the round where the bound drops below resolution, says so, and rounding decides nothing."""
    from fedtheory.cli import main

    out = tmp_path / "t.json"
    assert (
        main(
            [
                *"explore tune fedavg --mu 1 --L 100 --C 0.1 --D 10 --rounds 100000 --simulate --class d1 --json".split(),
                str(out),
            ]
        )
        == 0
    )
    sim = json.loads(out.read_text())["simulation"]
    assert sim["holds"] is True and sim["max_ratio"] <= 1.0
    T = len(sim["rounds"]) - 1
    assert f"simulated rounds 0..{T} of the 100000 asked for" in sim["extra"]["horizon"]
    assert "below float64 resolution" in sim["extra"]["horizon"] and T < 100000


def test_tuner_grid_rows_are_np_unique_without_numpy_ma():
    """The tuner's distinct grid rows (a sort, not np.unique, which imports numpy.ma on a command-line call) are
    np.unique's: the same rows in the same order, for every method's coarse and refined grid and 1-d columns too;
    the grid the tuner builds (the (γ, α) pairs sorted once, repeated under each K) is those rows, to the bit."""
    from fedtheory.explore.tuning import _grid_local_update, _raw_grid, _unique

    cases = 0
    for method in ("gd", "fedavg", "fedprox", "fomaml", "maml"):
        for L, mu, K_max, points in ((100.0, 1.0, 10**4, 60), (20.0, 0.5, 100, 9), (5.0, 5.0, 10**4, 60)):
            for center in (None, {"K": 20.0, "gamma": 0.003, "alpha": 0.0}, {"K": 3.0, "gamma": 0.01, "alpha": 2.0}):
                g = _raw_grid(method, L, mu, K_max, points, center)
                columns = (g["K"], np.where(g["K"] == 1, 0.0, g["gamma"]), np.where(g["K"] == 1, 0.0, g["alpha"]))
                want = np.unique(np.stack(columns, axis=1), axis=0)
                assert np.stack(_unique(*columns), axis=1).tobytes() == want.tobytes()
                built = _grid_local_update(method, L, mu, K_max, points, center)
                assert np.stack([built[k] for k in ("K", "gamma", "alpha")], axis=1).tobytes() == want.tobytes()
                for column in columns:
                    assert _unique(column)[0].tobytes() == np.unique(column).tobytes()
                cases += 1
    assert cases == 45 and [c.tolist() for c in _unique(np.array([]))] == [[]]
