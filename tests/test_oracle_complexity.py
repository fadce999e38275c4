"""Definition 1 and the complexity bounds of Theorems 2 and 3 (fedtheory.symbolic.oracle_complexity)."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from fedtheory.symbolic import oracle_complexity as oc

BASE = dict(
    d=1, p=2, eta=6.0, alpha=1.0, L1=2.0, mu=1.0, L2=1.0, B=1.0, epsilon=0.1, initial_gap=1.0, m=10, s=5, phi=3.0
)


def test_definition_1_sums_epochs_and_reduces_to_oracle_complexity():
    epochs = [oc.Epoch(3, True, "clients"), oc.Epoch(4, False, "server"), oc.Epoch(0, True)]
    assert oc.federated_oracle_complexity(epochs, phi=2.0, tau=0.5, m=10) == 3 + 4 + 2 * 2 * 0.5 * 10
    assert oc.federated_oracle_complexity(epochs, phi=0.0, tau=0.5, m=10) == 7
    assert [e.kind for e in epochs] == ["A", "B", "C"]


def test_fedlrgd_epochs_give_theorem_2_formula_numerically_and_symbolically():
    for r, s, S in [(1, 1, 1), (3, 4, 5), (7, 2, 9)]:
        epochs = oc.fedlrgd_epochs(r, s, S)
        assert len(epochs) == r + 2
        assert oc.federated_oracle_complexity(epochs, 10, 1, 6) == r * r + r * s + r * S + 10 * 6 * r
    r, s, S, phi, m = sp.symbols("r s S phi m", positive=True)
    assert sp.expand(oc.fedlrgd_complexity(r, s, S, phi, m) - (r**2 + r * s + r * S + phi * m * r)) == 0


def test_epoch_times_of_eq_25():
    assert oc.expected_epoch_time("A", 2, 10, 1.0) == pytest.approx(4 + math.log(10) + 10)
    assert oc.expected_epoch_time("B", 2, 10, 1.0) == 4
    with pytest.raises(ValueError, match="epoch kind"):
        oc.expected_epoch_time("D", 1, 1, 1)


@pytest.mark.parametrize(
    "change, hypothesis",
    [
        ({"eta": 3.9}, "eta > (2*alpha + 2)*d"),
        ({"alpha": 0.5}, "alpha >= 1"),
        ({"L1": 0.5}, "kappa = L1/mu >= 1"),
        ({"L1": 1.0}, "kappa = L1/mu > 1"),
        ({"epsilon": 1e9}, "epsilon <= 9(B+3)^4 p/(8 mu)"),
        ({"tau": 0.5}, "tau = 1"),
        ({"d": 0}, "positive integer"),
        ({"L2": 0.0}, "L2 > 0"),
    ],
)
def test_theorem_2_hypotheses_are_named(change, hypothesis):
    with pytest.raises(ValueError, match=re_escape(hypothesis)):
        oc.FedLRGDSetting(**{**BASE, **change}).log_rank()


def re_escape(text):
    import re

    return re.escape(text)


def test_log_space_rank_matches_high_precision_direct_formula():
    st = oc.FedLRGDSetting(**BASE)
    d, p, eta, alpha, L1, mu, L2, B, eps, gap = (mpmath.mpf(v) for v in (1, 2, 6, 1, 2, 1, 1, 1, "0.1", 1))
    with mpmath.workdps(50):
        kappa = L1 / mu
        X = gap + 9 * (B + 3) ** 4 * p / (2 * mu)
        second = (
            (
                L2**d
                * eta**d
                * mpmath.e ** (eta * (d + 1))
                * d ** (eta / 2)
                * (2 * eta + 2 * d) ** (eta * d)
                / (eta - 1) ** (eta * d)
            )
            * (kappa * X / ((kappa - 1) * eps)) ** (d / 2)
        ) ** (1 / (eta - (2 * alpha + 2) * d))
        first = mpmath.e * mpmath.sqrt(d) * 2**d * (eta + d) ** d
        r = int(mpmath.ceil(max(first, second)))
        S = int(mpmath.ceil(mpmath.log(X / eps) / mpmath.log(kappa / (kappa - 1))))
    assert st.rank() == r
    assert st.iterations() == S
    assert st.complexity() == r * r + r * 5 + r * S + 30 * r


def test_huge_rank_stays_finite_in_log_space_and_refuses_exact_integer():
    st = oc.FedLRGDSetting(**{**BASE, "d": 6, "eta": 24.1, "epsilon": 1e-9})
    assert st.log10_rank() > 300
    assert math.isfinite(st.log10_complexity())
    with pytest.raises(ValueError, match="exceeds"):
        st.rank()


def test_log_epsilon_allows_epsilon_below_float64():
    a = oc.FedLRGDSetting(**{**BASE, "epsilon": 1e-3})
    b = oc.FedLRGDSetting(**{**BASE, "epsilon": 0.0, "log_epsilon": math.log(1e-3)})
    assert a.log_rank() == pytest.approx(b.log_rank(), rel=1e-14)
    tiny = oc.FedLRGDSetting(**{**BASE, "epsilon": 0.0, "log_epsilon": -1e5})
    assert math.isfinite(tiny.log_rank())


def test_fedave_program_closed_form_exact_min_and_sandwich():
    prog = oc.FedAveProgram(m=1000.0, phi=500.0, tau=0.5, C=2.0, varepsilon=1e-4)
    b = prog.b_star()
    assert abs(2 * prog.C1 * b**3 + prog.C1 * prog.C3 * b**2 - prog.C2 * prog.C3) <= 1e-9 * prog.C2 * prog.C3
    assert float(prog.b_star_viete_mp()) == pytest.approx(b, rel=1e-12)
    gamma, bb, T = prog.exact_min()
    assert T == pytest.approx(float(prog.T_of_b(bb)))
    assert prog.min_g() <= gamma <= 2 * prog.min_g()
    lo, hi = prog.theorem3_sandwich()
    assert lo <= gamma <= hi
    lo_b, hi_b = prog.b_star_bounds()
    assert lo_b <= b <= hi_b


def test_fedave_program_hypothesis_88_is_named():
    with pytest.raises(ValueError, match=r"\(88\)"):
        oc.FedAveProgram(m=10.0, phi=1.0, tau=1.0, C=1.0, varepsilon=0.5).theorem3_sandwich()
    with pytest.raises(ValueError, match="varepsilon"):
        oc.FedAveProgram(m=10.0, phi=100.0, tau=1.0, C=1.0, varepsilon=2.0).theorem3_sandwich()


def test_geometric_program_matches_exact_min():
    from fedtheory.certify.geometric_program import fedave_geometric_program

    for args in [(50.0, 80.0, 1.0, 1.0, 0.1), (1e6, 1e3, 0.2, 30.0, 1e-8)]:
        res = fedave_geometric_program(*args)
        exact, _, _ = oc.FedAveProgram(*args).exact_min()
        assert res["status"] == "optimal"
        assert res["value"] == pytest.approx(exact, rel=1e-6)


def test_lemma3_terms_and_T0():
    assert oc.lemma3_T0(2.0, 1.0, 2, 1.0, 2) == 16.0
    assert oc.lemma3_T0(1.0, 0.5, 3, 1.0, 100) == 4 * (4 + 32 * 0.5 / (0.5 * 2))
    terms = oc.lemma3_terms(L1=2.0, mu=1.0, sigma2=1.0, tau=1.0, m=4, b=1, T=10, T0=8, dist0=0.0)
    assert terms[0] == 0 and terms[2] == 0 and terms[3] == 0 and terms[1] > 0
    with pytest.raises(ValueError):
        oc.lemma3_T0(2.0, 0.5, 1, 1.0, 1)


def test_lemma4_bounds_hold_on_grid():
    for t in np.linspace(0, 1, 101):
        lo, hi = oc.lemma4_bounds(float(t))
        assert lo - 1e-15 <= oc.lemma4_h(float(t)) <= hi + 1e-15


def test_proposition_1_regime_crossover_and_inconsistency():
    reg = oc.Proposition1Regime()
    x = reg.crossover("upper", 300.0, points=100)
    assert x is not None and 50 < x < 150
    assert reg.log10_ratio(300.0) < 0 < reg.log10_ratio(10.0)
    assert not oc.Proposition1Regime(lam=0.99).instance(50.0)["consistent"]
    with pytest.raises(ValueError, match="xi"):
        oc.Proposition1Regime(xi=0.8).check()
