"""Timing models of Definition 1 (fedtheory.analysis.timing_models)."""

import math

import numpy as np
import pytest
import scipy.stats
import sympy as sp

from fedtheory.analysis import timing_models as tm


@pytest.mark.parametrize("k", [1, 2, 5, 100, 10**4])
def test_expected_max_of_exponentials_is_harmonic_number(k):
    H = sum(1.0 / j for j in range(1, k + 1))
    assert tm.expected_max_erlang(1, k) == pytest.approx(H, rel=1e-10)


def test_expected_max_matches_simulation_for_erlang():
    rng = np.random.default_rng(0)
    sim = tm.simulate_max_erlang(7, 30, 20000, rng)
    assert abs(sim.mean() - tm.expected_max_erlang(7, 30)) < 5 * sim.std() / math.sqrt(sim.size)


def test_auxiliary_function_closed_form_equals_definition():
    x = sp.Symbol("x", positive=True)
    for b in range(1, 6):
        exact = sp.simplify(sp.expand_func(sp.uppergamma(b, x)) / (x ** (b - 1) * sp.exp(-x)))
        assert sp.simplify(exact - tm.erlang_auxiliary_closed_form(b, x)) == 0
    assert tm.erlang_auxiliary(3, 10.0) == pytest.approx(1 + 2 / 10 + 2 / 100)


def test_gumbel_distance_shrinks_with_k():
    d = [tm.normalized_max_gumbel_distance(5, k) for k in (10, 10**3, 10**6)]
    assert d[0] > d[1] > d[2]


def test_mm1_departure_time_is_erlang():
    rng = np.random.default_rng(1)
    S = tm.simulate_mm1_departures(8, 1.5, 20000, rng)
    assert abs(S.mean() - 8) < 5 * math.sqrt(8 / S.size)
    assert scipy.stats.kstest(S, scipy.stats.gamma(8).cdf).pvalue > 1e-4


def test_mm1_rejects_unstable_queue():
    with pytest.raises(ValueError, match="nu > 1"):
        tm.simulate_mm1_departures(3, 1.0, 10, np.random.default_rng(0))


@pytest.mark.parametrize("b, q", [(1, 56), (55, 2), (3, 10**6), (100, 10**12)])
def test_proposition_2_bounds(b, q):
    lo, hi = tm.erlang_quantile_bounds(b, q)
    assert lo <= tm.erlang_upper_quantile(b, 1 / q) <= hi


def test_bad_inputs_get_one_clear_error():
    with pytest.raises(ValueError, match="positive integer"):
        tm.expected_max_erlang(0, 3)
    with pytest.raises(ValueError, match="tail probability"):
        tm.erlang_upper_quantile(2, 1.5)
