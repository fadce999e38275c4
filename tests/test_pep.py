"""PEP certificates of fedtheory.certify.pep against known worst cases."""

import math


from fedtheory.certify import pep


def test_gd_gradient_norm_is_tight():
    for N in (1, 3):
        r = pep.gd_gradient_norm(N)
        assert abs(r.ratio - 1) < 1e-5


def test_stabilized_ppm_tight_and_classical_not_convergent_at_c1():
    assert abs(pep.stabilized_ppm(3, 1.0, 0.0).ratio - 1) < 1e-5
    # relative error 1 with the classical centre: the worst case does not decrease with K (ratio ≈ K)
    assert pep.classical_ppm(4, 1.0, c=1.0).ratio > 3.5


def test_two_client_sdane_and_acc_below_bounds():
    assert pep.two_client_sdane(1, 2.0, 0.0, 1.0).ratio <= 1 + pep.SDP_RTOL
    assert pep.two_client_sdane(2, 2.0, 0.5, 1.0, accelerated=True).ratio <= 1 + pep.SDP_RTOL


def test_bounds_helpers():
    assert pep.sdane_bound(2, 1.0, 0.0) == 0.25
    assert math.isclose(pep.sdane_bound(1, 1.0, 1.0), 0.5)
    assert math.isclose(pep.acc_sdane_bound(2, 1.0, 0.0), 1 / (3 + math.sqrt(5)))


def test_cocoercivity_and_catalyst():
    assert pep.cocoercivity_gap().value <= 1e-6
    assert pep.stabilized_catalyst(2, 1.0, 0.0).ratio <= 1 + pep.SDP_RTOL
    assert pep.fast_gradient_norm(2).ratio <= 1 + pep.SDP_RTOL


def test_certificates_are_attained_and_a_dropped_class_constraint_is_seen():
    # upper (PEP) meets lower (the extracted worst case replayed on the real S-DANE driver)
    r = pep.two_client_sdane(2, 2.0, 0.5, 1.0)
    assert r.gap < pep.TIGHT_RTOL and r.class_violation <= pep.CLASS_ATOL
    # without client 2's strong convexity the PEP grows and its worst case leaves the class: no lower bound
    loose = pep.two_client_sdane(2, 2.0, 0.5, 1.0, drop="client-2-strong-convexity")
    assert loose.value > r.value * (1 + 1e-3)
    assert loose.class_violation > 1e-3 and math.isnan(loose.lower) and pep.worst_gap([loose]) == math.inf


def test_known_attaining_instances_match_the_peps():
    for K in (1, 3):
        assert abs(pep.stabilized_ppm(K, 1.0, 0.0).value - pep.abs_stabilized_ppm(K, 1.0)) <= 1e-6
    for N in (1, 4):
        assert abs(pep.gd_gradient_norm(N).value - pep.huber_gd_gradient_norm(N)) <= 1e-6


def test_two_client_sdane_rejects_unknown_drop():
    import pytest

    with pytest.raises(ValueError, match="drop"):
        pep.two_client_sdane(1, 2.0, 0.0, 1.0, drop="everything")
