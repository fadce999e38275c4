"""Federated PEP certificates (fedtheory.certify.federated_pep): upper ≥ lower, tightness, consistency, bad input."""

import json
import re
import math
import time

import numpy as np
import pytest

from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
from fedtheory.algorithms.theta import Theta
from fedtheory.certify import federated_pep as fp
from fedtheory.cli import main
from fedtheory.problems.quadratic import QuadraticFederation


def test_floor_certificate_is_tight_and_its_instance_replays():
    c = fp.certify_local_update(1.0, 10.0, 4, 0.05, pieces=8, probe_starts=2, seed=0)
    assert c.status == "certified"
    assert c.lower <= c.value and c.gap < 1e-4
    # the stored instance reproduces the lower bound in the driver, independently of the certificate code
    inst = c.instance
    prob = QuadraticFederation.from_json(inst["problem"])
    H = np.einsum("n,nij->ij", prob.p, prob.A)
    algo = LocalUpdate(
        Theta.from_json(inst["theta"]),
        inst["alpha"],
        inst["gamma"],
        ServerOpt("gd", lr=1.0 / (4 * np.linalg.eigvalsh(H)[-1])),
    )
    h = run_local_update(prob, algo, prob.x_star(), 3000).to_numpy()
    assert math.isclose(float(h.dist_empirical[-1]) / prob.C, c.lower, rel_tol=1e-6)
    assert json.loads(json.dumps(c.to_json()))["claim_id"] == "localupdate/lemma-5/certified"


def test_floor_is_homogeneous_in_C_and_zero_at_K1():
    a = fp.certify_local_update(1.0, 10.0, 2, 0.05, C=1.0, pieces=8, probe_starts=1)
    b = fp.certify_local_update(1.0, 10.0, 2, 0.05, C=3.0, pieces=8, probe_starts=1)
    assert math.isclose(b.value, 3 * a.value, rel_tol=1e-9) and math.isclose(b.lower, 3 * a.lower, rel_tol=1e-6)
    assert fp.certify_local_update(1.0, 10.0, 1, 0.05, pieces=8, probe_starts=1).value == 0.0


def test_rate_matches_gradient_descent_at_K1():
    c = fp.certify_local_update(1.0, 10.0, 1, 0.05, measure="rate", eta=0.15, pieces=8)
    assert c.status == "certified" and abs(c.value - 0.85) < 1e-5 and abs(c.lower - 0.85) < 1e-12


def test_engines_agree_on_a_small_case():
    s = fp.certify_local_update(1.0, 10.0, 2, 0.05, pieces=8, probe_starts=1)
    p = fp.certify_local_update(1.0, 10.0, 2, 0.05, engine="pepit", probe_starts=1)
    assert s.status == p.status == "certified" and abs(s.value - p.value) < 1e-4 * s.value


def test_smooth_class_is_at_least_the_quadratic_floor():
    s = fp.certify_local_update(1.0, 10.0, 2, 0.05, function_class="smooth-strongly-convex", probe_starts=1)
    assert s.status == "certified" and s.value > 1.2 * s.details["quadratic_lower"]
    # the lower bound is the PEP's worst case as explicit smooth clients (tests/test_interpolation.py), attained
    assert s.instance["problem"]["kind"] == "interpolated" and s.lower >= (1 - 1e-3) * s.value


def test_d1_formula_matches_its_instance():
    v, inst = fp.floor_d1(1.0, 100.0, 10, 0.005)
    from fedtheory.algorithms.surrogate import minimizer_distance

    l1, l2 = inst["lambdas"]
    prob = QuadraticFederation(A=[[[l1]], [[l2]]], c=[[1.0], [-1.0]], p=[0.5, 0.5])
    assert math.isclose(minimizer_distance(prob, 0.0, 0.005, Theta.uniform(10)), v, rel_tol=1e-9)


@pytest.mark.parametrize(
    "kw, needle",
    [
        (dict(mu=2.0, L=1.0, K=2, gamma=0.1), "0 < mu <= L"),
        (dict(mu=1.0, L=10.0, K=2, gamma=0.2), "gamma < 1/(L + alpha)"),
        (dict(mu=1.0, L=10.0, K=0, gamma=0.05), "K must be an integer"),
        (dict(mu=1.0, L=10.0, K=2, gamma=0.05, measure="speed"), "measure must be one of"),
        (dict(mu=1.0, L=10.0, K=2, gamma=0.05, measure="rate"), "needs a server step eta"),
        (dict(mu=1.0, L=10.0, K=2, gamma=0.05, clients=1), "clients must be an integer >= 2"),
        (
            dict(mu=1.0, L=10.0, K=2, gamma=0.05, function_class="smooth-strongly-convex", engine="spectral"),
            "quadratic clients only",
        ),
    ],
)
def test_bad_hypotheses_raise(kw, needle):
    args = {k: kw.pop(k) for k in ("mu", "L", "K", "gamma")}
    with pytest.raises(ValueError, match=re.escape(needle)):
        fp.certify_local_update(args["mu"], args["L"], args["K"], args["gamma"], **kw)


def test_cli_certify_json_and_bad_input(tmp_path, capsys):
    out = tmp_path / "c.json"
    setting = "--mu 1 --L 10 --K 2".split()  # every call's μ, L and K
    fedavg = ["explore", "certify", "fedavg", *setting]
    rc = main(fedavg + ["--gamma", "0.05", "--pieces", "8", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and "upper" in text and "lower" in text and "gap" in text and "solver" in text
    data = json.loads(out.read_text())
    assert data["status"] == "certified" and data["value"] >= data["lower"]
    rc = main(fedavg + ["--gamma", "0.5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: hypothesis 0 < gamma")
    rc = main(["explore", "certify", "fedprox", *setting, "--gamma", "0.05"])
    assert rc == 2 and "alpha > 0" in capsys.readouterr().err
    rc = main(fedavg + ["--gamma", "0.05", "--engine", "pepit", "--json", str(out)])
    data = json.loads(out.read_text())
    assert rc == 0 and data["hypotheses"]["engine"] == "pepit" and data["details"]["extracted_lower"] is not None
    rc = main(fedavg + ["--gamma", "0.05", "--engine", "exact"])
    assert rc == 2 and "engine must be one of" in capsys.readouterr().err


def test_function_value_at_K1_is_drori_teboulle():
    c = fp.certify_local_update(
        0.0, 1.0, 1, 0.5, measure="function-value", eta=1.0, rounds=2, D=1.0, function_class="smooth-strongly-convex"
    )
    assert c.status == "certified" and abs(c.details["sdp_value"] - 0.1) <= 1e-6 * 0.1
    assert c.lower <= c.value and c.value >= 0.1  # lower: a quadratic instance, below the Huber worst case


def test_function_value_mu0_is_refused_where_unbounded():
    with pytest.raises(ValueError, match=re.escape("hypothesis mu > 0 violated")):
        fp.certify_local_update(0.0, 1.0, 2, 0.5, measure="function-value", eta=1.0, rounds=2, D=1.0)
    with pytest.raises(ValueError, match=re.escape("hypothesis 0 < mu <= L")):
        fp.certify_local_update(0.0, 1.0, 2, 0.5, measure="error", eta=1.0, rounds=2, D=1.0)


def test_sdane_exact_is_tight_and_below_the_inexact_class():
    from fedtheory.certify.pep import two_client_sdane

    ex = fp.certify_sdane(1, 2.0, 0.0, 1.0)
    assert ex.gap < 1e-6 and ex.class_violation <= 1e-6  # attained by a replayed instance of the class
    assert ex.value <= two_client_sdane(1, 2.0, 0.0, 1.0, c=1e-4).value * (1 + 1e-6)
    with pytest.raises(ValueError, match="hypothesis lam > 0"):
        fp.certify_sdane(1, 0.0, 0.0, 1.0)


def test_sdane_inexact_agrees_with_two_client_sdane():
    # c > 0: the same SDP as two_client_sdane in another basis of the Gram matrix (errors e_i free, not the points'
    # gradients), so the values agree to Clarabel's accuracy; more freedom (larger c) only raises the worst case
    from fedtheory.certify.pep import two_client_sdane

    a = fp.certify_sdane(1, 2.0, 0.1, 1.0, c=0.05)
    b = two_client_sdane(1, 2.0, 0.1, 1.0, c=0.05)
    assert a.solver == b.solver == "CLARABEL"
    assert abs(a.value - b.value) <= 1e-6 * b.value
    assert a.gap < 1e-6 and a.replay["test_violation"] <= 1e-5  # replayed on the driver, (6) holds
    assert a.params["c"] == 0.05 and not a.params["exact"]
    assert fp.certify_sdane(1, 2.0, 0.1, 1.0).value < a.value < fp.certify_sdane(1, 2.0, 0.1, 1.0, c=0.25).value


def test_acc_sdane_inexact_agrees_with_two_client_sdane():
    from fedtheory.certify.pep import two_client_sdane

    a = fp.certify_sdane(2, 2.0, 0.5, 1.0, c=0.25, accelerated=True)
    b = two_client_sdane(2, 2.0, 0.5, 1.0, c=0.25, accelerated=True)
    assert a.params["accelerated"] and a.bound == b.bound
    assert abs(a.value - b.value) <= 2e-5 * b.value and a.value <= a.bound


@pytest.mark.parametrize("c", [-0.1, float("nan")])
def test_sdane_negative_c_names_the_hypothesis(c):
    with pytest.raises(ValueError, match=re.escape("hypothesis c >= 0 violated")):
        fp.certify_sdane(1, 2.0, 0.0, 1.0, c=c)


def test_function_value_mu0_under_zeta_is_bounded():
    c = fp.certify_local_update(
        0.0,
        1.0,
        2,
        0.3,
        zeta=0.5,
        measure="function-value",
        eta=0.5,
        rounds=2,
        D=1.0,
        function_class="smooth-strongly-convex",
    )
    assert c.status == "certified" and c.lower <= c.value < math.inf


def test_commuting_certificate_rejects_outside_class_and_bounds_the_grid():
    """The d = 1 branch and bound: hypotheses named; its upper bound is ≥ every grid value of the closed form."""
    from fedtheory.algorithms.theta import Theta
    from fedtheory.certify.commuting import certify_floor_d1, d1_floor_value

    with pytest.raises(ValueError, match="theta_k >= 0"):
        certify_floor_d1(1.0, 10.0, 2, 0.05, theta=[1.0, -0.5])
    with pytest.raises(ValueError, match="0 < gamma < 1/\\(L \\+ alpha\\)"):
        certify_floor_d1(1.0, 10.0, 2, 0.2)
    with pytest.raises(ValueError, match="'free'"):
        certify_floor_d1(1.0, 10.0, 2, 0.05, p="all")
    c = certify_floor_d1(1.0, 30.0, 5, 0.01, p=[0.3, 0.7])
    g = np.geomspace(1.0, 30.0, 301)
    V = d1_floor_value(g[:, None], g[None, :], 0.01, Theta.uniform(5), 0.0, np.array([0.3, 0.7]), 1.0)
    assert V.max() <= c.value and c.lower <= c.value and c.gap <= 1e-6


@pytest.mark.parametrize("weights", ["p", "pi"])
def test_commuting_box_bound_dominates_the_box(weights):
    """The rigorous box bound is ≥ the floor everywhere in random boxes (Θ_K: q not linear, α > 0)."""
    from fedtheory.certify.commuting import _box_bound, _r

    rng = np.random.default_rng(3)
    th, g, al = Theta.last(4), 0.04, 2.0
    for _ in range(40):
        l1, l2 = np.sort(rng.uniform(1, 20, 2)), np.sort(rng.uniform(1, 20, 2))
        w = np.sort(rng.uniform(0, 1, 2))
        U = float(
            _box_bound(*(np.array([v]) for v in (l1[0], l1[1], l2[0], l2[1], w[0], w[1])), g, th, al, 1.0, weights)[0]
        )
        a, b, c = np.meshgrid(np.linspace(*l1, 15), np.linspace(*l2, 15), np.linspace(*w, 15), indexing="ij")
        r1, r2 = _r(a, g, th, al), _r(b, g, th, al)
        if weights == "pi":
            V = 2 * c * (1 - c) * np.abs(r1 - r2) / (c * r1 + (1 - c) * r2)
        else:
            V = 2 * c * (1 - c) * np.abs(r1 - r2) * a * b / ((c * a + (1 - c) * b) * (c * a * r1 + (1 - c) * b * r2))
        assert V.max() <= U


def test_cli_certify_commuting(tmp_path, capsys):
    out = tmp_path / "d1.json"
    fedavg = "explore certify fedavg --mu 1 --L 100 --K 10 --gamma 0.005".split()  # the setting every call shares
    rc = main(fedavg + ["--commuting", "--free-weights", "--json", str(out)])
    assert rc == 0 and "branch-and-bound" in capsys.readouterr().out
    data = json.loads(out.read_text())
    from fedtheory.certify.commuting import lemma12_form

    assert abs(data["value"] - lemma12_form(1.0, 100.0, 0.005, Theta.uniform(10))) <= 1e-9
    rc = main(fedavg + ["--commuting", "--clients", "3"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "two quadratic clients" in err[0]
    rc = main(fedavg + ["--free-weights"])
    assert rc == 2 and "--commuting" in capsys.readouterr().err


def test_four_client_floor_within_30_seconds_and_its_probe_only_samples_once_the_gap_is_closed():
    # issue 22: certificates for n = 4, K <= 5 within 30 s (the probe's local search alone took ~100 s here, 97 %
    # of the run, after the extreme-spectrum family had already attained the SDP's value)
    # CPU seconds: on CI's two loaded cores the wall clock measures the other jobs (106 s of wall here once)
    start = time.process_time()
    c = fp.certify_local_update(1.0, 10.0, 5, 0.05, clients=4, measure="floor")
    cpu = time.process_time() - start
    assert c.status == "certified" and c.lower <= c.value and c.gap <= 1e-4 * c.value
    assert c.details["probe_starts"] == 1  # of the default 6: a cross-check once the family closes the gap
    assert cpu < 30, cpu


def test_floor_without_probe_starts_keeps_the_family_lower_bound():
    c = fp.certify_local_update(1.0, 10.0, 3, 0.05, measure="floor", engine="spectral", probe_starts=0)
    assert c.status == "certified" and c.lower == c.details["extreme_spectrum_lower"] > 0
    assert "probe_starts" not in c.details and "probe_lower" not in c.details


def test_floor_probe_still_searches_when_the_family_does_not_close_the_gap(monkeypatch):
    # the control of the test above: without the family's value the local search runs as before
    from fedtheory.certify import lower_bounds

    real = lower_bounds.local_update_lower_bounds

    def no_family(measure, **kw):
        return [(lab, None, None, {"error": "removed"}) for lab, *_ in real(measure, **kw)]

    monkeypatch.setattr(lower_bounds, "local_update_lower_bounds", no_family)
    c = fp.certify_local_update(1.0, 10.0, 3, 0.05, measure="floor", engine="spectral", probe_starts=2)
    assert c.details["probe_starts"] == 2 and c.lower == c.details["probe_lower"] > 0


def test_four_client_error_within_30_seconds_once_the_extraction_closes_the_gap():
    # the error measure's probe (L-BFGS-B with finite differences in ~100 dimensions) took > 300 s at n = 4, K = 5
    # after the PEP's extracted worst case had already attained the SDP's value
    start = time.process_time()
    c = fp.certify_local_update(
        1.0, 10.0, 5, 0.05, clients=4, measure="error", eta=1.0, rounds=2, D=1.0, engine="pepit"
    )
    cpu = time.process_time() - start
    assert c.status == "certified" and c.lower <= c.value and c.gap <= 1e-4 * c.value
    # the PEPit engine is methods.pep.certify's: the probe runs one start once the extraction closes the gap
    assert c.details["probe_starts"] == 1 and c.details["polish"].startswith("skipped")
    assert cpu < 30, cpu


def test_four_client_error_with_the_default_engine_within_30_cpu_seconds():
    # issue 22's acceptance with the engine a user gets: the quadratic error of n = 4 clients went to the spectral
    # relaxation by default (> 60 s of CPU); default_engine sends K·T·n <= 40 to PEPit. CPU seconds, not wall: on
    # CI's two loaded cores the wall clock measures the other jobs (this run: ~12 s of CPU on its own)
    start = time.process_time()
    c = fp.certify_local_update(1.0, 10.0, 5, 0.05, clients=4, measure="error", eta=0.05, rounds=2, D=1.0)
    cpu = time.process_time() - start
    assert c.hypotheses["engine"] == "pepit"
    assert c.status == "certified" and c.lower <= c.value and c.gap <= 1e-4 * c.value
    assert cpu < 30, cpu


def test_default_engine_rule_and_the_engines_agree_where_both_run():
    assert fp.default_engine("quadratic", "error", 2, 5, 2) == "pepit"
    big = fp.PEPIT_ERROR_WORK // (2 * 2) + 1  # K·T·n above the PEPit engine's size: the spectral one
    assert fp.default_engine("quadratic", "error", 2, big, 2) == "spectral"
    assert fp.default_engine("quadratic", "floor", 4, 5, None) == "spectral"
    assert fp.default_engine("smooth-strongly-convex", "floor", 2, 5, None) == "pepit"
    # the floor: closed form at K = 1, PEPit's SDP while it is the cheaper program, the spectral one beyond
    steps = fp.PEPIT_FLOOR_STEPS
    assert [fp.default_engine("quadratic", "floor", 2, K, None) for K in (1, 2, steps, steps + 1)] == [
        "spectral", "pepit", "pepit", "spectral",
    ]  # fmt: skip
    wide = fp.PEPIT_FLOOR_WORK // 5  # five clients: K·n at the PEPit engine's size, then one step beyond it
    assert wide > steps and fp.default_engine("quadratic", "floor", 5, wide, None) == "pepit"
    assert fp.default_engine("quadratic", "floor", 5, wide + 1, None) == "spectral"
    assert fp.default_engine("quadratic", "floor", 4, wide, None) == "spectral"  # K·n ≤ 30 counts from n = 5
    # the switch keeps the values the spectral engine gave (two clients, K = 2: 0.8425657 both, to 1e-6)
    kw = {"measure": "error", "eta": 0.05, "rounds": 2, "D": 1.0, "probe_starts": 1}
    default = fp.certify_local_update(1.0, 10.0, 2, 0.05, **kw)
    spectral = fp.certify_local_update(1.0, 10.0, 2, 0.05, engine="spectral", pieces=16, **kw)
    assert default.hypotheses["engine"] == "pepit" and spectral.hypotheses["engine"] == "spectral"
    assert abs(default.value - spectral.value) <= 1e-6 * spectral.value


def test_default_floor_engine_pepit_at_small_K_and_spectral_when_its_sdp_fails(monkeypatch):
    # K = 2, four clients: the default is PEPit's exact SDP (0.43 s against the spectral program's 1.1-1.6 s),
    # and it certifies the floor the spectral engine does (both within their 1e-5 margins of 0.2622991608)
    c = fp.certify_local_update(1.0, 10.0, 2, 0.05, clients=4, measure="floor", probe_starts=1)
    s = fp.certify_local_update(1.0, 10.0, 2, 0.05, clients=4, measure="floor", engine="spectral", probe_starts=1)
    assert c.hypotheses["engine"] == "pepit" and c.status == s.status == "certified"
    assert abs(c.value - s.value) <= 1e-6 * s.value and c.lower <= c.value
    assert "pepit_attempt" not in c.details

    # where the default PEPit SDP gets no reliable value, the spectral engine certifies the case instead ...
    from dataclasses import replace

    real = fp._certify_compiled

    def pepit_fails(*args):
        c = real(*args)
        engine = args[-2]
        return replace(c, status="unreliable", value=None, solver="CLARABEL failed") if engine == "pepit" else c

    monkeypatch.setattr(fp, "_certify_compiled", pepit_fails)
    fell = fp.certify_local_update(1.0, 10.0, 2, 0.05, clients=4, measure="floor", probe_starts=1)
    assert fell.hypotheses["engine"] == "spectral" and fell.status == "certified" and fell.value == s.value
    assert fell.details["pepit_attempt"]["solver"] == "CLARABEL failed" and "no reliable value" in fell.notes
    # ... but not where the caller asked for PEPit (the control: the same failure is reported, not replaced), nor
    # for the function value, which the spectral engine does not certify
    asked = fp.certify_local_update(1.0, 10.0, 2, 0.05, clients=4, measure="floor", engine="pepit", probe_starts=1)
    assert asked.status == "unreliable" and asked.value is None
    fv = fp.certify_local_update(
        1.0, 10.0, 1, 0.05, measure="function-value", eta=0.05, rounds=1, D=1.0, probe_starts=1
    )
    assert fv.hypotheses["engine"] == "pepit" and fv.status == "unreliable" and "pepit_attempt" not in fv.details


def test_pepit_engine_is_a_thin_wrapper_over_the_compiled_certificate():
    # one PEP builder and one lower-bound path: the quadratic PEPit engine is fedtheory.methods.pep.certify on
    # LocalUpdate's description, relabelled with this module's claim and hypotheses
    from fedtheory.methods.pep import certify

    c = fp.certify_local_update(1.0, 10.0, 2, 0.05, p=[0.3, 0.7], measure="floor", engine="pepit", probe_starts=1)
    ref = certify(
        "fedavg", mu=1.0, L=10.0, p=[0.3, 0.7], measure="floor", hyper={"K": 2, "gamma": 0.05}, probe_starts=1
    )
    assert c.claim_id == fp.CLAIM_IDS["floor"] and c.hypotheses["engine"] == "pepit"
    assert "leaf_points" in c.details and abs(c.value - ref.value) <= 1e-9 * ref.value
    assert c.lower == ref.lower and c.status == "certified"
