"""Property-based tests (hypothesis) of the public entry points: explore, guarantees, problem constructors.

For every input drawn inside the hypotheses the result is finite (``inf`` only where it means "never", as
rounds to an unreachable target); for every input outside them the call raises ValueError naming the
violated hypothesis; no call hangs (an alarm fails the test) and no NaN is presented as a result.
"""

from __future__ import annotations

import math
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fedtheory.analysis.guarantees import LOCAL_SOLVERS, local_update_guarantee, sdane_guarantee
from fedtheory.explore.comparison import compare
from fedtheory.explore.frontiers import frontier
from fedtheory.explore.tuning import tune
from fedtheory.problems.polyhedron import make_polyhedron
from fedtheory.problems.quadratic import make_quadratic

SETTINGS = settings(
    max_examples=25, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
ALARM_S = 60  # a whole property (all its examples) past this is a hang


@pytest.fixture(autouse=True)
def no_hang():
    def fail(signum, frame):
        raise TimeoutError(f"property still running after {ALARM_S}s: a hang")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(ALARM_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
fraction = st.floats(min_value=1e-4, max_value=0.999, allow_nan=False)
bad_number = st.sampled_from([0.0, -1.0, float("nan"), float("inf"), -float("inf")])


def assert_finite(name, values, allow_inf=False):
    arr = np.asarray(values, dtype=np.float64)
    assert not np.isnan(arr).any(), f"{name} has NaN: {arr}"
    if not allow_inf:
        assert np.isfinite(arr).all(), f"{name} is not finite: {arr}"


def names_hypothesis(exc: ValueError, *words: str) -> None:
    text = str(exc)
    assert text and any(w in text for w in words), text


# ---------------------------------------------------------------------------------------------------
# guarantees
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(
    mu=positive,
    ratio=st.floats(1.0, 1e4),
    C=st.floats(0, 10),
    D=st.floats(0, 100),
    f=fraction,
    K=st.integers(1, 10**4),
    alpha=st.floats(0, 100),
    theta=st.sampled_from(["uniform", "last", "maml"]),
    momentum=st.sampled_from(["gd", "nesterov", "heavy_ball"]),
)
def test_local_update_guarantee_is_finite_inside_its_hypotheses(mu, ratio, C, D, f, K, alpha, theta, momentum):
    L = mu * ratio
    if theta == "maml":
        alpha = 0.0  # MAML is Θ_{2K+1} only without a proximal term (Theorem 2): α > 0 is rejected
    g = local_update_guarantee(
        mu=mu, L=L, C=C, D=D, theta=theta, alpha=alpha, gamma=f / (L + alpha), K=K, momentum=momentum
    )
    assert_finite("rho", g.rho)
    # ρ = 1 is float64's honest value when 1 − ρ is below resolution (μ̃ underflows: many local steps)
    assert ((0 <= g.rho) & (g.rho <= 1)).all(), g.rho
    # no valid guarantee (d ≥ 2 off the certified table) is inf with valid False: never NaN, never a number
    assert_finite("floor", g.floor[g.valid])
    assert np.isinf(g.floor[~g.valid]).all()
    for T in (0, 1, 10, 1000):
        err = g.error_after(T)
        assert_finite("error_after", err[g.valid])
        assert not np.isnan(err).any() and (err >= 0).all()
    assert_finite("rounds_to", g.rounds_to(max(D, 1.0) * 1e-3), allow_inf=True)


@SETTINGS
@given(
    mu=positive,
    ratio=st.floats(1.0, 1e3),
    f=fraction,
    K=st.integers(1, 100),
    which=st.sampled_from(["mu>L", "mu<=0", "gamma", "K", "C", "D", "nan"]),
    bad=bad_number,
)
def test_local_update_guarantee_names_the_violated_hypothesis(mu, ratio, f, K, which, bad):
    L = mu * ratio
    kw = dict(mu=mu, L=L, C=1.0, D=1.0, gamma=f / L, K=K)
    if which == "mu>L":
        assume(ratio > 1.0 + 1e-9)
        kw.update(mu=L, L=mu)
    elif which == "mu<=0":
        kw["mu"] = min(bad, 0.0) if not math.isnan(bad) else bad
    elif which == "gamma":
        kw["gamma"] = (1.0 + f) / L
    elif which == "K":
        kw["K"] = 0
    elif which in ("C", "D"):
        assume(not (bad == 0.0))
        kw[which] = bad if bad < 0 or math.isnan(bad) or math.isinf(bad) else -bad
    else:
        kw["L"] = float("nan")
    with pytest.raises(ValueError) as info:
        local_update_guarantee(**kw)
    names_hypothesis(info.value, "hypothesis", "mu", "L", "gamma", "K", "C", "D")


@SETTINGS
@given(
    mu=positive,
    ratio=st.floats(1.0, 1e4),
    delta_frac=st.floats(1e-3, 0.5),
    lam_mult=st.floats(1.0, 1e3),
    D=st.floats(1e-3, 100),
    solver=st.sampled_from(LOCAL_SOLVERS),
    accelerated=st.booleans(),
)
def test_sdane_guarantee_is_finite_inside_its_hypotheses(mu, ratio, delta_frac, lam_mult, D, solver, accelerated):
    L = mu * ratio
    delta_A = max(delta_frac * (L - mu), 1e-3 * mu)
    lam = max(2 * delta_A * lam_mult, mu / 4 if accelerated else 0.0)
    g = sdane_guarantee(mu=mu, L=L, delta_A=delta_A, D=D, lam=lam, solver=solver, accelerated=accelerated)
    assert_finite("local_steps", g.local_steps)
    for T in (0, 1, 50):
        assert_finite("error_after", g.error_after(T))
    assert_finite("rounds_to", g.rounds_to(D * 1e-3), allow_inf=True)


@SETTINGS
@given(mu=positive, ratio=st.floats(1.0, 1e3), delta=st.floats(1e-2, 10), shrink=st.floats(0.01, 0.99))
def test_sdane_guarantee_rejects_lambda_below_two_delta(mu, ratio, delta, shrink):
    with pytest.raises(ValueError) as info:
        sdane_guarantee(mu=mu, L=mu * ratio, delta_A=delta, D=1.0, lam=2 * delta * shrink)
    names_hypothesis(info.value, "lambda >= 2*delta_A")


# ---------------------------------------------------------------------------------------------------
# explore
# ---------------------------------------------------------------------------------------------------


@settings(SETTINGS, max_examples=10)
@given(
    method=st.sampled_from(["gd", "fedavg", "fomaml", "s-dane"]),
    mu=positive,
    ratio=st.floats(1.0, 1e3),
    C=st.floats(0, 1),
    D=st.floats(0.1, 100),
    budget=st.sampled_from(["rounds", "eps", "work"]),
    scale=st.floats(1e-6, 0.5),
)
def test_tune_gives_a_finite_answer_or_says_infeasible(method, mu, ratio, C, D, budget, scale):
    L = mu * ratio
    amount = {"rounds": max(int(scale * 200), 1), "eps": D * scale, "work": max(scale * 1e4, 1.0)}[budget]
    delta_A = max(0.1 * (L - mu), 1e-3 * mu)
    adv = tune(method, mu=mu, L=L, C=C, D=D, delta_A=delta_A, K_max=1000, points=20, **{budget: amount})
    assert not math.isnan(adv.value)
    if adv.feasible:
        assert math.isfinite(adv.value)
        for key in ("bound", "rounds", "local_steps", "floor"):
            assert_finite(key, adv.predicted[key])
    else:
        assert adv.message, "an infeasible answer says why"


@SETTINGS
@given(mu=positive, ratio=st.floats(1.0, 1e3), which=st.sampled_from(["mu>L", "eps", "rounds", "D"]), bad=bad_number)
def test_tune_rejects_input_outside_its_hypotheses(mu, ratio, which, bad):
    L = mu * ratio
    kw = dict(mu=mu, L=L, D=1.0, eps=0.1)
    if which == "mu>L":
        assume(ratio > 1.0 + 1e-9)
        kw.update(mu=L, L=mu)
    elif which == "eps":
        kw["eps"] = bad if not bad > 0 else 1e-300
    elif which == "rounds":
        kw.pop("eps")
        kw["rounds"] = bad if not bad > 0 else 2.5
    else:
        kw["D"], kw["eps"] = 1.0, 1e-17  # below float64 resolution at D = 1
    with pytest.raises(ValueError) as info:
        tune("fedavg", **kw)
    names_hypothesis(info.value, "hypothesis", "budget", "eps", "float64 resolution", "rounds")


@settings(SETTINGS, max_examples=15)
@given(
    mu=positive,
    ratio=st.floats(1.0, 1e3),
    sweep=st.sampled_from(["K", "gamma", "alpha"]),
    points=st.integers(1, 100),
    server=st.sampled_from(["gd", "nesterov", "heavy_ball"]),
    theta=st.sampled_from(["uniform", "last", "maml"]),
)
def test_frontier_is_finite_inside_its_hypotheses(mu, ratio, sweep, points, server, theta):
    assume(not (theta == "maml" and sweep == "alpha"))  # MAML is Θ_{2K+1} only at α = 0 (Theorem 2)
    fr = frontier(mu=mu, L=mu * ratio, sweep=sweep, points=points, server=server, theta=theta)
    assert len(fr) >= 1
    for name in ("rho", "gamma", "alpha", "K"):
        assert_finite(name, getattr(fr, name))
    assert_finite("delta", fr.delta[fr.valid])
    assert np.isinf(fr.delta[~fr.valid]).all()  # no valid floor: inf, never NaN
    # κ̃ = L̃/μ̃ overflows to inf where μ̃ underflows (Θ_K with K = 10⁶ steps): a value, never NaN, and ρ = 1 there
    assert_finite("kappa", fr.kappa, allow_inf=True)
    assert (fr.rho[np.isinf(fr.kappa)] == 1.0).all()


@SETTINGS
@given(mu=positive, ratio=st.floats(1.0, 1e3), points=st.one_of(st.integers(-5, 0), st.integers(10**6 + 1, 10**12)))
def test_frontier_rejects_point_counts_out_of_bounds(mu, ratio, points):
    with pytest.raises(ValueError) as info:
        frontier(mu=mu, L=mu * ratio, points=points)
    names_hypothesis(info.value, "points")


# ---------------------------------------------------------------------------------------------------
# problem constructors
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(
    n=st.integers(1, 5),
    d=st.integers(2, 6),
    mu=positive,
    ratio=st.floats(1.0, 1e3),
    C=st.floats(0, 10),
    commuting=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_make_quadratic_has_exactly_its_constants(n, d, mu, ratio, C, commuting, seed):
    L = mu * ratio
    q = make_quadratic(n, d, mu=mu, L=L, C=C, commuting=commuting, seed=seed)
    assert (q.n, q.d) == (n, d)
    assert q.mu == mu and q.L == L
    assert_finite("A", q.A)
    assert_finite("x*", q.x_star())
    assert math.isclose(float(q.C), C, rel_tol=1e-12, abs_tol=1e-12)


@SETTINGS
@given(
    n=st.integers(1, 4),
    d=st.integers(2, 4),
    mu=positive,
    ratio=st.floats(1.0, 1e3),
    which=st.sampled_from(["n", "d", "mu>L", "mu", "C", "delta_A"]),
    bad=bad_number,
)
def test_make_quadratic_names_the_violated_hypothesis(n, d, mu, ratio, which, bad):
    L = mu * ratio
    kw = dict(mu=mu, L=L, C=1.0)
    args = [n, d]
    if which == "n":
        args[0] = 0
    elif which == "d":
        args[1] = 0
    elif which == "mu>L":
        assume(ratio > 1.0 + 1e-9)
        kw.update(mu=L, L=mu)
    elif which == "mu":
        kw["mu"] = bad if not bad > 0 else -bad
    elif which == "C":
        assume(bad != 0.0)
        kw["C"] = bad if not bad > 0 else -bad
    else:
        kw["delta_A"] = (L - mu) / 2 * 1.5 + 1.0  # above the largest δ_A any federation in [μ, L] has
    with pytest.raises(ValueError) as info:
        make_quadratic(*args, seed=0, **kw)
    names_hypothesis(info.value, "hypothesis", "n", "d", "mu", "C", "delta_A")


@SETTINGS
@given(
    N=st.integers(1, 40),
    d=st.integers(1, 6),
    n=st.integers(1, 5),
    R=st.floats(1e-3, 1e6),
    slack=st.floats(0, 10),
    seed=st.integers(0, 2**32 - 1),
)
def test_make_polyhedron_is_feasible_and_finite(N, d, n, R, slack, seed):
    assume(n <= N)
    fed = make_polyhedron(N=N, d=d, n=n, R=R, slack=slack, seed=seed)
    x = fed.x_star()
    assert_finite("x*", x)
    for a, y in zip(fed.a, fed.y):
        assert_finite("A", a)
        assert_finite("b", y)
        assert (a @ x - y <= 1e-9 * max(R, 1.0) * d).all(), "the planted point is feasible"


@SETTINGS
@given(which=st.sampled_from(["n>N", "n", "R", "slack"]), bad=bad_number)
def test_make_polyhedron_names_the_violated_hypothesis(which, bad):
    kw = dict(N=10, d=3, n=2, R=5.0, slack=1.0)
    if which == "n>N":
        kw["n"] = 11
    elif which == "n":
        kw["n"] = 0
    elif which == "R":
        kw["R"] = bad
    else:
        assume(bad != 0.0)
        kw["slack"] = bad if not bad > 0 else -bad
    with pytest.raises(ValueError) as info:
        make_polyhedron(**kw)
    names_hypothesis(info.value, "n <= N", "R > 0", "slack >= 0")


@settings(SETTINGS, max_examples=8)
@given(mu=positive, ratio=st.floats(1.0, 1e3), D=st.floats(0.1, 100), scale=st.floats(1e-6, 0.5), C=st.floats(0, 1))
def test_compare_gives_finite_rounds_or_says_infeasible(mu, ratio, D, scale, C):
    L = mu * ratio
    result = compare(
        ["gd", "fedavg", "s-dane"], mu=mu, L=L, D=D, C=C, eps=D * scale, delta_A=max(0.1 * (L - mu), 1e-3 * mu)
    )
    for e in result.entries():
        for key in ("rounds", "floor", "local_steps", "guaranteed"):
            assert e[key] is None or not math.isnan(e[key]), (e["method"], key, e[key])
        if e["valid"]:  # a valid guarantee is a finite floor and a finite cost per round
            assert_finite(e["method"], [e["floor"], e["local_steps"]])
            assert e["rounds"] is None or e["rounds"] >= 0
