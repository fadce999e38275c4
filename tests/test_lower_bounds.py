"""fedtheory.certify.lower_bounds: the extreme-spectrum floor, the probe started from an instance, the hooks."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from fedtheory.algorithms.surrogate import minimizer_distance
from fedtheory.algorithms.theta import Theta
from fedtheory.certify.lower_bounds import (
    extreme_spectrum_floor,
    local_update_lower_bounds,
    polish_error,
    unsolved_reason,
)
from fedtheory.methods.library import local_update
from fedtheory.methods.probe import replay
from fedtheory.problems.quadratic import QuadraticFederation


def test_theta_k_audit_setting_reaches_the_realisable_floor():
    v, inst, diag = extreme_spectrum_floor(1.0, 10.0, 50, 0.05, theta="K")
    assert v >= 161_815
    q = QuadraticFederation.from_json(inst["problem"])
    assert q.eigvals.min() >= 1.0 and q.eigvals.max() <= 10.0
    assert np.linalg.norm(q.c, axis=1).max() <= 1 + 1e-15
    # the library's own float64 fixed point on the stored instance agrees with the 50-digit value
    assert abs(minimizer_distance(q, 0.0, 0.05, Theta.last(50)) - v) <= 1e-6 * v
    # the needle: without angles below 1e-3 the family stays far below
    v_coarse, _, _ = extreme_spectrum_floor(1.0, 10.0, 50, 0.05, theta="K", smallest_angle=1e-3)
    assert v_coarse < 161_815 / 10


def test_extreme_floor_is_linear_in_the_heterogeneity_and_zero_for_gradient_descent():
    v1, _, _ = extreme_spectrum_floor(1.0, 10.0, 3, 0.05)
    v2, _, _ = extreme_spectrum_floor(1.0, 10.0, 3, 0.05, C=2.0)
    assert abs(v2 - 2 * v1) <= 1e-12 * v2
    z1, _, _ = extreme_spectrum_floor(1.0, 10.0, 3, 0.05, zeta=1.0)
    z3, _, _ = extreme_spectrum_floor(1.0, 10.0, 3, 0.05, zeta=3.0)
    assert abs(z3 - 3 * z1) <= 1e-12 * z3
    v0, _, _ = extreme_spectrum_floor(1.0, 10.0, 1, 0.05)  # K = 1: the fixed point is x*
    assert v0 < 1e-12


def test_extreme_floor_never_exceeds_the_certified_floor():
    # the fedavg K = 2 floor certified by the compiled PEP (methods.pep's doctest): 0.2623
    v, _, _ = extreme_spectrum_floor(1.0, 10.0, 2, 0.05)
    assert 0.26 < v <= 0.2623 * (1 + 1e-4)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"gamma": 0.2}, "gamma < 1/(L + alpha)"),
        ({"p": [0.5, 0.6]}, "p must be"),
        ({"smallest_angle": 0.0}, "smallest_angle"),
    ],
)
def test_extreme_floor_bad_input_names_the_hypothesis(kw, message):
    args = {"mu": 1.0, "L": 10.0, "K": 2, "gamma": 0.05}
    args.update(kw)
    with pytest.raises(ValueError, match=re.escape(message)):
        extreme_spectrum_floor(args.pop("mu"), args.pop("L"), args.pop("K"), args.pop("gamma"), **args)


def _start():
    return QuadraticFederation(
        A=[np.diag([1.0, 10.0]), np.diag([10.0, 1.0])], c=[[0.6, 0.0], [-0.6, 0.0]], p=[0.5, 0.5]
    )


@pytest.mark.parametrize("measure", ["error", "function-value"])
def test_polish_reaches_at_least_the_instance_it_starts_from_here(measure):
    m = local_update(2, 0.05, eta=0.1)
    q = _start()
    x0 = q.x_star() + np.array([0.0, 1.0])  # ‖x_0 − x*‖ = 1, centres ‖c_i‖ ≤ 1
    own = {
        "measure": measure,
        "method": {"name": m.name, "hyper": {}},
        "federation": q.to_json(),
        "x0": x0.tolist(),
        "rounds": 3,
    }
    v_own = replay(own, method=m)
    v, inst, diag = polish_error(m, q, measure=measure, mu=1.0, L=10.0, rounds=3, D=1.0)
    assert v >= v_own * (1 - 1e-12)
    assert replay(inst, method=m) == v
    fed = QuadraticFederation.from_json(inst["federation"])
    assert np.linalg.norm(fed.c, axis=1).max() <= 1 + 1e-12
    assert abs(np.linalg.norm(np.asarray(inst["x0"]) - fed.x_star()) - 1.0) <= 1e-12


def test_polish_rejects_a_federation_outside_the_class():
    with pytest.raises(ValueError, match="not inside"):
        polish_error("fedavg", _start(), measure="error", mu=2.0, L=10.0, rounds=2, D=1.0)
    with pytest.raises(ValueError, match="measures 'error' or 'function-value'"):
        polish_error("fedavg", _start(), measure="floor", mu=1.0, L=10.0, rounds=2, D=1.0)


def test_unsolved_reason_names_the_message_range_only_when_it_explains():
    extreme = unsolved_reason(1.0, 10.0, 0.05, Theta.last(50), "CLARABEL failed", 1.5)
    plain = unsolved_reason(1.0, 10.0, 0.05, Theta.uniform(2), "CLARABEL failed", None)
    assert "message eigenvalue" in extreme and "1.5" in extreme
    assert "message eigenvalue" not in plain and "best lower bound known: none" in plain


def test_hook_labels_and_values():
    rows = local_update_lower_bounds(
        "error",
        mu=1.0,
        L=10.0,
        K=2,
        gamma=0.05,
        theta="1:K",
        alpha=0.0,
        p=None,
        C=1.0,
        zeta=None,
        eta=0.1,
        rounds=2,
        D=1.0,
        start_from=[_start().to_json()],
    )
    assert [r[0] for r in rows] == ["polished_lower_0"] and rows[0][1] > 0
    assert (
        local_update_lower_bounds(
            "rate", mu=1.0, L=10.0, K=2, gamma=0.05, theta="1:K", alpha=0.0, p=None, C=1.0, zeta=None
        )
        == []
    )


def test_certify_local_update_reports_the_extreme_lower_bound():
    from fedtheory.certify.federated_pep import certify_local_update

    c = certify_local_update(1.0, 4.0, 2, 0.1, pieces=8, probe_starts=1)
    assert c.status == "certified" and math.isfinite(c.value)
    assert 0 < c.details["extreme_spectrum_lower"] <= c.value and c.lower >= c.details["extreme_spectrum_lower"]
    # K = 1: the floor is 0 in closed form; the family is skipped and says so, the probe still cross-checks
    c1 = certify_local_update(1.0, 4.0, 1, 0.1, pieces=8, probe_starts=1)
    assert c1.status == "certified" and c1.value == 0.0 and c1.lower < 1e-12
    assert c1.details["extreme_spectrum"].startswith("skipped") and "probe_lower" in c1.details


def test_pepit_start_for_the_spectral_engine_reaches_the_sdp_and_skips_large_peps():
    from fedtheory.methods.library import local_update
    from fedtheory.methods.pep import _local_update_hyper, _small_pepit_extraction

    p = np.array([0.5, 0.5])
    for K in (2, 5):
        m = local_update(K, 0.05, eta=0.1)  # theta defaults to 1:K
        v, inst, diag = _small_pepit_extraction(
            m, _local_update_hyper(m), 2, p, p, np.ones(2), 1.0, 10.0, "C", 1.0, 2, 1.0, 1.0
        )
        if K == 2:
            # the hand-written PEP's value at this point (verify/certificate-crosscheck/error-servers): 0.702947
            assert inst["source"] == "pepit-extracted" and abs(v - 0.702947) <= 1e-4
        else:
            assert v is None and inst is None and "K·T·n = 20 > 16" in diag["skipped"]


def test_compiled_pep_takes_the_extreme_floor_for_local_update_methods_only():
    from fedtheory.methods.pep import certify

    c = certify("fedavg", mu=1.0, L=10.0, measure="floor", hyper={"K": 2, "gamma": 0.05}, probe_starts=0)
    ext = c.details["extreme_spectrum_lower"]
    assert c.status == "certified" and ext <= c.lower <= c.value and c.gap < 1e-4
    s = certify("scaffold", mu=1.0, L=10.0, measure="floor", hyper={"K": 2, "gamma": 0.05}, probe_starts=0)
    assert "extreme_spectrum_lower" not in s.details
