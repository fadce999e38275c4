"""Compiling certificates' SDPs once: the re-solves and the spectral engine's program give the values a rebuilt
problem gives, bit for bit (issues 22 and 23: certificates cost little more than their SDP)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("PEPit")
pytest.importorskip("cvxpy")


def _retrying_pep():
    """The compiled ζ-model floor of FedAvg (K = 2, weights 0.3/0.7): Clarabel's defaults stop at
    "optimal_inaccurate", the third setting of CLARABEL_ATTEMPTS reaches "optimal" (tests/test_methods_pep.py)."""
    from fedtheory.methods import get
    from fedtheory.methods.pep import _build

    p = np.array([0.3, 0.7])
    m = get("fedavg", K=2, gamma=0.05)
    return _build(m, "floor", 2, p, m.aggregation_weights(p), np.ones(2), 1.0, 10.0, "zeta", "quadratic", None, None).pb


def test_retries_resolve_the_compiled_problem_and_match_a_rebuilt_solve():
    from fedtheory.certify.pep_clients import _WRAPPER
    from fedtheory.certify.pep import CLARABEL_ATTEMPTS, SOLVER, _solve_detail

    pb = _retrying_pep()
    calls = []
    original = type(pb).solve

    def counting(self, *a, **kw):  # PEPit's build-and-solve: once, the retries re-solve its cvxpy problem
        calls.append(kw.get("solver"))
        return original(self, *a, **kw)

    type(pb).solve = counting
    try:
        value, _, solver = _solve_detail(pb, wrapper=_WRAPPER)
    finally:
        type(pb).solve = original
    assert solver == SOLVER and pb.wrapper.prob.status == "optimal"
    assert calls == [SOLVER], calls
    # the winning setting on a freshly built problem: the same value and the same worst case, bit for bit (a
    # re-solve that let cvxpy hand Clarabel its previous solver object differs in the 6th digit of this value)
    fresh = _retrying_pep()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fresh.solve(wrapper=_WRAPPER, solver=SOLVER, verbose=0, safe_mode=False, **CLARABEL_ATTEMPTS[2])
    assert fresh.wrapper.prob.status == "optimal"
    assert value == want
    assert np.array_equal(pb.G_value, fresh.G_value)
