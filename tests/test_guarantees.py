"""The guarantees the explorer reads agree with the sympy forms of the same theorems and with the frontiers."""

import numpy as np
import pytest
import sympy as sp

from fedtheory.analysis.guarantees import local_update_guarantee, sdane_guarantee
from fedtheory.analysis.pareto import frontier_uniform
from fedtheory.symbolic import complexity as cx

RNG = np.random.default_rng(0)
CASES = [
    dict(
        mu=float(10 ** RNG.uniform(-2, 0)),
        L=float(10 ** RNG.uniform(1, 3)),
        delta_A=float(10 ** RNG.uniform(-1, 1)),
        D=float(RNG.uniform(0.5, 20)),
        R=int(RNG.integers(1, 200)),
    )
    for _ in range(20)
]


@pytest.mark.parametrize("c", CASES)
def test_sdane_distance_bound_is_theorem_1_through_strong_convexity(c):
    lam = 2 * c["delta_A"] * float(RNG.uniform(1, 5))
    g = sdane_guarantee(mu=c["mu"], L=c["L"], delta_A=c["delta_A"], D=c["D"], lam=lam)
    f_bound = float(cx.theorem_1_bound(sp.Float(lam)).subs({cx.mu: c["mu"], cx.D: c["D"], cx.R: c["R"]}))
    assert c["mu"] / 2 * float(g.error_after(c["R"])[0]) ** 2 == pytest.approx(f_bound, rel=1e-10)
    # rounds to eps in distance = Corollary 18's form at the function-value target μ eps²/2, up to its log bound
    eps = c["D"] * 1e-3
    R = float(g.rounds_to(eps)[0])
    cor18 = float(cx.corollary_18(sp.Float(lam)).subs({cx.mu: c["mu"], cx.D: c["D"], cx.eps: c["mu"] * eps**2 / 2}))
    assert R <= np.ceil(cor18) and float(g.error_after(R)[0]) <= eps < float(g.error_after(R - 1)[0])


@pytest.mark.parametrize("c", CASES[:10])
def test_acc_sdane_distance_bound_is_theorem_6(c):
    lam = max(2 * c["delta_A"], c["mu"])
    g = sdane_guarantee(mu=c["mu"], L=c["L"], delta_A=c["delta_A"], D=c["D"], lam=lam, accelerated=True)
    f_bound = float(cx.theorem_6_bounds(sp.Float(lam))[0].subs({cx.mu: c["mu"], cx.D: c["D"], cx.R: c["R"]}))
    assert c["mu"] / 2 * float(g.error_after(c["R"])[0]) ** 2 == pytest.approx(f_bound, rel=1e-9)


@pytest.mark.parametrize(
    "solver, expr",
    [
        ("fgm+ogm-g", cx.corollary_3_steps),
        ("gd", lambda lam: cx.remark_19_steps(lam)[0]),
        ("fgm", lambda lam: cx.remark_19_steps(lam)[1]),
    ],
)
def test_local_steps_are_corollary_3_and_remark_19(solver, expr):
    for c in CASES[:8]:
        lam = 2 * c["delta_A"]
        g = sdane_guarantee(mu=c["mu"], L=c["L"], delta_A=c["delta_A"], D=1.0, lam=lam, solver=solver)
        value = float(expr(sp.Float(lam)).subs({cx.L: c["L"]}))
        assert float(g.local_steps[0]) == np.ceil(value - 1e-12)


def test_local_update_guarantee_is_lemma_12_on_the_frontier():
    """d = 1: floor 2CΔ (Lemma 12); for Θ_{1:K}, b/a = q(μ)/q(L) = κ₀/κ, so Δ is the frontier's."""
    fr = frontier_uniform(1.0, 30.0, 0.5, gammas=0.01, Ks=[1, 7, 300])
    g = local_update_guarantee(mu=1.0, L=30.0, C=2.0, D=3.0, alpha=0.5, gamma=0.01, K=[1, 7, 300], function_class="d1")
    assert np.allclose(g.rho, fr["rho"], rtol=0, atol=1e-15)
    assert np.allclose(g.floor, 4 * fr["delta"], rtol=1e-14)
    T = 9
    assert np.allclose(g.error_after(T), fr["rho"] ** T * (3.0 + 4 * fr["delta"]) + 4 * fr["delta"], rtol=1e-14)
    # commuting, n clients: √n times the d = 1 floor
    c = local_update_guarantee(
        mu=1.0, L=30.0, C=2.0, D=3.0, alpha=0.5, gamma=0.01, K=[1, 7, 300], function_class="commuting", clients=9
    )
    assert np.allclose(c.floor, 3 * g.floor, rtol=1e-15) and "verify/explorer/commuting-floor" in c.claims


def test_general_class_has_no_floor_beyond_one_local_step():
    g = local_update_guarantee(mu=1.0, L=30.0, C=2.0, D=3.0, gamma=0.01, K=[1, 7, 300])
    assert g.valid.tolist()[0] and g.floor[0] == 0.0
    if "floor/certified" not in g.sources:
        assert not g.valid[1:].any() and np.isinf(g.error_after(5)[1:]).all() and np.isinf(g.rounds_to(1.0)[1:]).all()
    assert not any(c in g.claims for c in ("localupdate/corollary-1", "localupdate/theorem-4", "localupdate/lemma-5"))


def test_hypotheses_are_named():
    with pytest.raises(ValueError, match=r"lambda >= 2\*delta_A"):
        sdane_guarantee(mu=1.0, L=10.0, delta_A=2.0, D=1.0, lam=3.0)
    with pytest.raises(ValueError, match=r"mu <= 4\*lambda"):
        sdane_guarantee(mu=10.0, L=10.0, delta_A=0.5, D=1.0, lam=1.0, accelerated=True)
    with pytest.raises(ValueError, match="C >= 0"):
        local_update_guarantee(mu=1.0, L=10.0, C=-1.0, D=1.0, gamma=0.01, K=2)
