"""Tests of the adversarial probe engine (fedtheory.certify.probe) and its parameterizations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from fedtheory.certify import (
    Ball,
    Box,
    Choice,
    Custom,
    Fixed,
    IntRange,
    NonnegWeights,
    Product,
    ProbeResult,
    Rotation,
    Simplex,
    SPDMatrix,
    SymmetricMatrix,
    probe,
    quadratic_instance_param,
    replay_z,
    sample_worst,
)

BIG = 100.0  # z ~ N(0, BIG²): far outside where any map is "nice"


def _wild_z(rng, size, n=200):
    """Large random z plus the extremes an optimizer can wander to."""
    out = [BIG * rng.normal(size=size) for _ in range(n)]
    out += [
        np.zeros(size),
        np.full(size, 1e300),
        np.full(size, -1e300),
        np.full(size, 40.0),
        np.full(size, -40.0),
        np.full(size, np.pi / 2),
        np.full(size, -np.pi / 2),
    ]
    return out


# --------------------------------------------------------------------------------------------
# the engine: a planted violation that random sampling misses and the optimizer finds
# --------------------------------------------------------------------------------------------

U_STAR = Rotation(3).decode([0.4, -1.1, 0.7])
A_STAR = U_STAR @ np.diag([1.0, 4.0, 10.0]) @ U_STAR.T  # inside the class: spectrum {1, 4, 10}
T_STAR = 0.7
PLANTED = Product(A=SPDMatrix(3, mu=1.0, L=10.0), t=Box(0.0, 1.0))


def _planted_distance2(inst):
    # normalized so that a random instance has median distance² ≈ 2.7 and minimum ≈ 0.2 in 2000 draws
    return float(np.sum((inst["A"] - A_STAR) ** 2) / 50.0 + (inst["t"] - T_STAR) ** 2 / 0.1)


def planted_violation(inst):
    """A wide slope (max 0.9) leading to a narrow bump (width² 0.01) that alone lifts it past 1.

    Values above 1 need distance² < 0.05·0.01/(0.15 + 0.9·0.01) ≈ 0.0031 in a 5-dimensional space
    (4 for A, 1 for t): a random draw lands there with probability ~1e-6 or less.
    """
    d2 = _planted_distance2(inst)
    return 0.9 * math.exp(-d2) + 0.15 * math.exp(-d2 / 0.01)


def test_probe_finds_planted_violation_that_random_sampling_misses():
    result = probe(planted_violation, PLANTED, seed=0)  # the default budget
    assert result.random_worst_value < 1.0
    assert result.worst_value > 1.0
    assert result.optimized_worst_value == result.worst_value
    assert result.worst_value == pytest.approx(1.05, abs=1e-6)  # it climbed to the top of the bump
    assert result.n_failed == 0 and result.first_failure is None

    # Random sampling with the probe's whole evaluation budget still misses it.
    baseline = sample_worst(planted_violation, PLANTED, n=result.n_evaluations, seed=1)
    assert baseline.worst_value < 1.0
    # ... and so does the probe with its optimizer phase switched off: the optimizer found it.
    assert probe(planted_violation, PLANTED, seed=0, n_starts=0).worst_value < 1.0

    # The instance satisfies the hypotheses: symmetric, spectrum in [1, 10], both ends attained.
    A = result.worst_instance["A"]
    assert np.array_equal(A, A.T)
    ev = np.linalg.eigvalsh(A)
    assert ev[0] == pytest.approx(1.0, abs=1e-12) and ev[-1] == pytest.approx(10.0, abs=1e-12)
    assert np.all(ev >= 1.0 - 1e-12) and np.all(ev <= 10.0 + 1e-12)
    assert 0.0 <= result.worst_instance["t"] <= 1.0

    # Replayable: the same z gives the same instance and value, also after a JSON round trip.
    assert result.replay(planted_violation, PLANTED) == result.worst_value
    stored = json.loads(json.dumps(result.to_json()))
    again = ProbeResult.from_json(stored)
    assert again.replay(planted_violation, PLANTED) == result.worst_value
    assert np.array_equal(PLANTED.decode(again.worst_z)["A"], A)


def test_probe_reports_per_start_log_and_counts():
    r = probe(planted_violation, PLANTED, seed=3, n_random=20, n_starts=3, maxiter=30)
    assert len(r.starts) == 3
    assert [s["origin"] for s in r.starts] == ["random-best", "fresh", "fresh"]
    assert r.n_evaluations == 20 + sum(s["evaluations"] for s in r.starts)
    assert all(s["best_value"] >= s["initial_value"] for s in r.starts)
    assert r.starts[0]["initial_value"] == r.random_worst_value  # started from the best draw


# --------------------------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------------------------


def test_probe_is_deterministic_given_the_seed():
    kw = dict(n_random=30, n_starts=2, maxiter=40)
    a = probe(planted_violation, PLANTED, seed=11, **kw).to_json()
    b = probe(planted_violation, PLANTED, seed=11, **kw).to_json()
    c = probe(planted_violation, PLANTED, seed=12, **kw).to_json()
    assert a == b
    assert a["worst_z"] != c["worst_z"]
    # a Generator seeded alike gives the same search (the result records seed=None)
    g = probe(planted_violation, PLANTED, rng=np.random.default_rng(11), **kw).to_json()
    assert g["worst_z"] == a["worst_z"] and g["seed"] is None and a["seed"] == 11
    s1 = sample_worst(planted_violation, PLANTED, n=25, seed=5).to_json()
    s2 = sample_worst(planted_violation, PLANTED, n=25, seed=5).to_json()
    assert s1 == s2


def test_probe_needs_a_seed():
    with pytest.raises(ValueError, match="seed"):
        probe(lambda t: t, Box(0, 1), seed=None)


# --------------------------------------------------------------------------------------------
# failures, targets, methods
# --------------------------------------------------------------------------------------------


def test_failures_count_as_minus_infinity_and_are_visible():
    def violation(t):
        if t > 0.8:
            raise RuntimeError("broken check")
        return t

    r = probe(violation, Box(0.0, 1.0), seed=0, n_random=50, n_starts=2, maxiter=40)
    assert r.n_failed > 0
    assert "RuntimeError: broken check" in r.first_failure["message"]
    assert replay_z(lambda t: t, Box(0.0, 1.0), r.first_failure["z"]) > 0.8  # the failing z replays
    assert r.worst_value <= 0.8 and r.worst_instance <= 0.8

    nan = sample_worst(lambda t: float("nan"), Box(0.0, 1.0), n=5, seed=0)
    assert nan.n_failed == 5 and nan.worst_value == -math.inf and nan.worst_instance is None
    assert "non-finite" in nan.first_failure["message"]
    assert json.dumps(nan.to_json())  # -inf is stored as a string, not invalid JSON


def test_target_stops_early_unless_fast_fail_is_off():
    fast = probe(planted_violation, PLANTED, seed=0, target=1.0)
    assert fast.found and fast.stopped_early and 1.0 < fast.worst_value < 1.05
    full = probe(planted_violation, PLANTED, seed=0, target=1.0, fast_fail=False)
    assert full.found and not full.stopped_early
    assert full.worst_value > fast.worst_value and full.n_evaluations > fast.n_evaluations
    low = sample_worst(lambda t: t, Box(0.0, 1.0), n=100, seed=0, target=0.5)
    assert low.stopped_early and low.n_evaluations < 100 and low.worst_value > 0.5


@pytest.mark.parametrize("method", ["Nelder-Mead", "Powell", "L-BFGS-B"])
def test_methods_reach_an_interior_maximum(method):
    P = Product(x=Box(-2.0, 2.0, open_lo=True, open_hi=True), y=Box(-2.0, 2.0, open_lo=True, open_hi=True))

    def violation(s):
        return -((s["x"] - 0.5) ** 2) - 3 * (s["y"] + 1.0) ** 2

    r = probe(violation, P, seed=1, n_random=16, n_starts=2, maxiter=200, method=method)
    assert r.worst_value > -1e-8, r.worst_value
    assert r.worst_value > r.random_worst_value
    assert r.method == method


def test_given_starts_run_first():
    P = Product(A=SPDMatrix(3, 1.0, 10.0), t=Box(0.0, 1.0))
    z_star = P.encode({"A": A_STAR, "t": T_STAR})
    r = probe(planted_violation, P, seed=0, n_random=0, n_starts=0, starts=[z_star], maxiter=1)
    assert r.starts[0]["origin"] == "given"
    assert r.starts[0]["initial_value"] == pytest.approx(1.05, abs=1e-9)


def test_size_zero_param_is_evaluated_once():
    r = probe(lambda v: v, Fixed(0.25), seed=0, n_random=3, n_starts=4)
    assert r.worst_value == 0.25 and r.n_evaluations == 4


# --------------------------------------------------------------------------------------------
# parameterizations: every z satisfies the hypotheses
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 4, 6])
def test_rotation_is_special_orthogonal_for_any_z(d):
    R = Rotation(d)
    assert R.size == d * (d - 1) // 2
    rng = np.random.default_rng(d)
    for z in _wild_z(rng, R.size, n=100):
        U = R.decode(z)
        assert U.shape == (d, d)
        assert np.abs(U.T @ U - np.eye(d)).max() < 1e-12
        assert np.linalg.det(U) == pytest.approx(1.0, abs=1e-12)
    for _ in range(20):  # encode inverts decode on Haar samples
        U = R.decode(R.sample(rng))
        assert np.abs(R.decode(R.encode(U)) - U).max() < 1e-11


def test_rotation_samples_look_haar():
    # E[U] = 0 for Haar on SO(3); E[trace U] = 0 too. 2000 draws: standard error ≈ 0.02 per entry.
    R, rng = Rotation(3), np.random.default_rng(0)
    Us = np.array([R.decode(R.sample(rng)) for _ in range(2000)])
    assert np.abs(Us.mean(axis=0)).max() < 0.1
    assert abs(np.trace(Us, axis1=1, axis2=2).mean()) < 0.1


@pytest.mark.parametrize("n,m", [(1, 0.0), (2, 0.0), (5, 0.0), (5, 0.05), (4, 0.25)])
def test_simplex_is_positive_and_sums_to_one(n, m):
    S = Simplex(n, min_weight=m)
    rng = np.random.default_rng(n)
    for z in _wild_z(rng, S.size):
        p = S.decode(z)
        assert p.shape == (n,)
        assert np.all(p > 0) and np.all(p >= m - 1e-15)
        assert abs(p.sum() - 1.0) < 1e-14
    if n > 1 and m < 1 / n:
        p = S.decode(S.sample(rng))
        assert np.ptp(p) > 0  # typical samples are unequal
        q = np.array(sorted(rng.dirichlet(np.ones(n)) * (1 - n * m) + m))
        assert np.abs(S.decode(S.encode(q)) - q).max() < 1e-12


@pytest.mark.parametrize("normalize", ["max", "sum", None])
def test_nonneg_weights_have_nonzero_support(normalize):
    W = NonnegWeights(6, normalize=normalize)
    rng = np.random.default_rng(0)
    zs = _wild_z(rng, W.size) + [W.sample(rng) for _ in range(200)] + [np.full(6, -np.pi / 2)]
    for z in zs:
        th = W.decode(z)
        assert th.shape == (6,) and np.all(th >= 0) and th.max() > 0
        if normalize == "max":
            assert th.max() == 1.0
        if normalize == "sum":
            assert abs(th.sum() - 1.0) < 1e-14
    zeros = [np.sum(W.decode(W.sample(rng)) == 0) for _ in range(200)]
    assert 0 < np.mean(zeros) < 6  # samples include sparse supports, never an empty one


BOXES = [
    Box(0.0, 1.0),
    Box(0.0, 1.0, open_lo=True),
    Box(0.0, 1.0, open_hi=True),
    Box(0.0, 1.0, open_lo=True, open_hi=True),
    Box(1e-6, 1e6, log=True),
    Box(1e-6, 1e6, log=True, open_lo=True, open_hi=True),
    Box(-3.0, 5.0, shape=4),
    Box(0.0, 0.01, open_hi=True),
]


@pytest.mark.parametrize("box", BOXES, ids=repr)
def test_box_values_respect_open_and_closed_ends(box):
    lo, hi = box._bounds(None)
    rng = np.random.default_rng(0)
    for z in _wild_z(rng, box.size) + [rng.normal(size=box.size) * 1e6]:
        x = np.asarray(box.decode(z))
        assert np.all(x >= lo) and np.all(x <= hi)
        if box.open_lo:
            assert np.all(x > lo)
        if box.open_hi:
            assert np.all(x < hi)
    # closed ends are attained exactly
    if not box.open_lo:
        assert np.all(np.asarray(box.decode(box.encode(np.full(box.size, lo)))) == lo)
    if not box.open_hi:
        assert np.all(np.asarray(box.decode(box.encode(np.full(box.size, hi)))) == hi)
    # samples are uniform (log-uniform) on the interval: the middle quantile is near the middle
    xs = np.array([box.decode(box.sample(rng)) for _ in range(2000)]).ravel()
    mid = math.sqrt(lo * hi) if box.log else 0.5 * (lo + hi)
    assert 0.45 < np.mean(xs < mid) < 0.55


def test_box_open_interval_never_hits_the_bound_with_one_ulp_of_room():
    lo = 1.0
    hi = np.nextafter(np.nextafter(1.0, 2.0), 2.0)  # exactly one float strictly inside
    b = Box(lo, hi, open_lo=True, open_hi=True)
    assert {b.decode([z]) for z in (-1e9, 0.0, 1e9)} == {float(np.nextafter(1.0, 2.0))}
    with pytest.raises(ValueError, match="strictly between"):
        Box(1.0, float(np.nextafter(1.0, 2.0)), open_lo=True, open_hi=True)


def test_box_atoms_and_intrange_and_choice():
    b = Box(0.0, 10.0, atoms={"lo": 0.5})
    rng = np.random.default_rng(0)
    xs = np.array([b.decode(b.sample(rng)) for _ in range(400)])
    assert 0.4 < np.mean(xs == 0.0) < 0.6
    r = IntRange(1, 10**6, log=True)
    ks = [r.decode(z) for z in _wild_z(rng, 1)]
    assert all(isinstance(k, int) and 1 <= k <= 10**6 for k in ks)
    assert {r.decode(r.encode(k)) for k in (1, 2, 999, 10**6)} == {1, 2, 999, 10**6}
    c = Choice(["a", "b", "c"])
    assert {c.decode(c.sample(rng)) for _ in range(100)} == {"a", "b", "c"}


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_spd_matrix_spectrum_in_range_with_extremes_attained(d):
    mu, L = (2.0, 2.0) if d == 1 else (1.0, 10.0)
    P = SPDMatrix(d, mu, L)
    assert P.size == d * (d - 1) // 2 + max(d - 2, 0)
    rng = np.random.default_rng(d)
    for z in _wild_z(rng, P.size, n=100):
        A = P.decode(z)
        assert np.array_equal(A, A.T)
        ev = np.linalg.eigvalsh(A)
        assert ev[0] == pytest.approx(mu, abs=1e-12) and ev[-1] == pytest.approx(L, abs=1e-12)
        lam, U = P.decode_eig(z)
        assert lam[0] == mu and lam[-1] == L and np.all(np.diff(lam) >= 0)
        assert np.abs(A @ U - U * lam).max() < 1e-12
    A = P.decode(P.sample(rng))
    assert np.abs(P.decode(P.encode(A)) - A).max() < 1e-10


def test_matrix_hypotheses_raise():
    with pytest.raises(ValueError, match="d=1"):
        SPDMatrix(1, 1.0, 2.0)
    with pytest.raises(ValueError, match="0 <= mu <= L"):
        SPDMatrix(2, -1.0, 1.0)
    with pytest.raises(ValueError, match="lo <= hi"):
        SymmetricMatrix(2, 3.0, 1.0)
    with pytest.raises(ValueError, match="min_weight"):
        Simplex(3, min_weight=0.5)
    with pytest.raises(ValueError, match="Product"):
        Box(0.0, lambda s: s["L"]).decode([0.0])  # a dependent bound outside a Product
    with pytest.raises(ValueError, match="finite"):
        Box(0.0, 1.0).decode([float("nan")])
    loose = SymmetricMatrix(3, -1.0, 1.0, attain_extremes=False)
    assert loose.size == 3 + 3
    ev = np.linalg.eigvalsh(loose.decode(np.random.default_rng(0).normal(size=6)))
    assert np.all(np.abs(ev) <= 1 + 1e-12)


def test_ball_and_sphere():
    rng = np.random.default_rng(0)
    B, S = Ball(4, 3.0), Ball(4, 3.0, sphere=True)
    for z in _wild_z(rng, 4) + [np.array([1e200, -1e200, 3.0, 0.0])]:
        assert np.linalg.norm(B.decode(z)) <= 3.0
        assert np.linalg.norm(S.decode(z)) == pytest.approx(3.0, rel=1e-14)
    x = np.array([0.0, 3.0, 0.0, 0.0])
    assert np.abs(B.decode(B.encode(x)) - x).max() < 1e-12  # the boundary is attained
    radii = [np.linalg.norm(B.decode(B.sample(rng))) / 3.0 for _ in range(2000)]
    assert 0.45 < np.mean(np.array(radii) ** 4 < 0.5) < 0.55  # uniform in the ball: r^d ~ U(0, 1)


def test_dependent_bounds_in_a_product():
    P = Product(
        L=Box(1.0, 1e3, log=True),
        alpha=Box(0.0, lambda s: 2 * s["L"]),
        gamma=Box(0.0, lambda s: 1 / (s["L"] + s["alpha"]), open_lo=True, open_hi=True),
        A=SPDMatrix(3, 1.0, lambda s: s["L"]),
        c=Ball(3, lambda s: s["alpha"]),
    )
    rng = np.random.default_rng(0)
    for z in _wild_z(rng, P.size):
        s = P.decode(z)
        assert 1.0 <= s["L"] <= 1e3 and 0.0 <= s["alpha"] <= 2 * s["L"]
        assert 0.0 < s["gamma"] < 1 / (s["L"] + s["alpha"])
        assert np.linalg.eigvalsh(s["A"])[-1] == pytest.approx(s["L"], rel=1e-12)
        assert np.linalg.norm(s["c"]) <= s["alpha"] * (1 + 1e-15)
    json.dumps(P.to_json(P.decode(P.sample(rng))))


def test_custom_with_and_without_context():
    P = Product(
        L=Fixed(4.0),
        x=Custom(1, lambda z, ctx: ctx["L"] * float(np.tanh(z[0]) ** 2)),
        y=Custom(2, lambda z: float(z.sum())),
    )
    out = P.decode([100.0, 1.0, 2.0])
    assert out == {"L": 4.0, "x": 4.0, "y": 3.0}
    assert Custom(3, lambda z: z).sample(np.random.default_rng(0)).shape == (3,)


def test_quadratic_instance_param_satisfies_assumptions():
    P = quadratic_instance_param(n=3, d=3)
    rng = np.random.default_rng(0)
    for z in _wild_z(rng, P.size, n=40) + [P.sample(rng) for _ in range(40)]:
        problem, theta, alpha, gamma = P.decode(z)
        assert problem.mu == 1.0 and np.all(problem.eigvals[:, 0] == 1.0)
        assert np.all(problem.eigvals[:, -1] == problem.L) and 10**0.2 <= problem.L <= 1e3
        assert np.all(problem.p > 0) and abs(problem.p.sum() - 1) < 1e-12
        assert 0.0 <= alpha <= 2 * problem.L and 0.0 < gamma < 1 / (problem.L + alpha)
        assert theta.w > 0 and np.all(theta.weights >= 0)
        norms = np.linalg.norm(problem.c, axis=1)
        assert norms.max() <= 5.0 * (1 + 1e-12)
    inst = P.decode(P.sample(rng))
    assert json.loads(json.dumps(P.to_json(inst)))["alpha"] == inst.alpha
    assert np.mean([P.decode(P.sample(rng)).alpha == 0.0 for _ in range(100)]) > 0.3  # FedAvg is typical
    Q = quadratic_instance_param(n=2, d=3, commuting=True)
    assert Q.size == P.size - 2 * 3 - 1 - 3 - 1  # one shared rotation; one client fewer
    assert Q.decode(Q.sample(rng)).problem.commuting()


# --- Nelder–Mead without scipy.optimize: the same search, bit for bit --------------------------------------------


def _trace(minimizer, fun, x0, **options):
    """Every point ``minimizer`` evaluates, in order, with the value returned, and what it raised (None)."""
    seen = []

    def recorded(z):
        value = fun(z)
        seen.append((np.array(z, dtype=np.float64).tobytes(), value))
        return value

    try:
        minimizer(recorded, x0, **options)
        raised = None
    except RuntimeError as exc:  # the probe's early stop, raised from inside the objective
        raised = str(exc)
    return seen, raised


def _rosenbrock(z):
    return float(np.sum(100.0 * (z[1:] - z[:-1] ** 2) ** 2 + (1 - z[:-1]) ** 2))


def _bumpy(z):  # many local minima, plateaus (ties) and an inf region
    if z[0] > 3.0:
        return math.inf
    return float(np.sum(np.round(np.sin(3 * z), 2) + 0.1 * z**2))


def _stops(z):  # stops the search from inside, as the probe's target does
    if float(np.sum(z**2)) < 0.5:
        raise RuntimeError("stop")
    return float(np.sum(z**2))


@pytest.mark.parametrize(
    "fun, x0, options",
    [
        (_rosenbrock, [-1.2, 1.0], {"maxiter": 300, "xatol": 1e-10, "fatol": 1e-14}),
        (
            _rosenbrock,
            [0.5, -0.3, 0.8, 1.7, -2.0, 0.1],
            {"maxiter": 200, "maxfev": 150, "xatol": 1e-10, "fatol": 1e-14, "adaptive": True},
        ),
        (
            _bumpy,
            [0.3, -1.1, 2.5],
            {
                "maxiter": 120,
                "initial_simplex": np.vstack([[0.3, -1.1, 2.5], np.array([0.3, -1.1, 2.5]) + 0.5 * np.eye(3)]),
            },
        ),
        (_bumpy, [0.0, 0.0, 1.0, 2.0, 0.0], {"maxfev": 90, "adaptive": True}),
        (_rosenbrock, [1, 2], {}),  # integer start, scipy's default budget and tolerances
        (_stops, [2.0, -1.0, 0.5], {"maxiter": 50}),
        (_bumpy, [0.4, -0.7, 1.3], {"maxiter": np.inf, "xatol": 1e-12, "fatol": 1e-14}),  # evaluations: N·200
    ],
    ids=[
        "rosenbrock-2d",
        "rosenbrock-6d-adaptive",
        "bumpy-simplex",
        "bumpy-5d-fev",
        "defaults",
        "stopped",
        "no-iteration-limit",
    ],
)
def test_nelder_mead_evaluates_the_same_points_as_scipy(fun, x0, options):
    """The probe's Nelder–Mead (no scipy.optimize import on a command-line call) is scipy's, operation for operation:
    the same points, the same values, in the same order, the same stop. Compared on the installed scipy, so a scipy
    that changes its algorithm fails here, not silently in a probe's result."""
    import scipy.optimize

    from fedtheory.certify.probe import nelder_mead

    ours = _trace(nelder_mead, fun, x0, **options)
    theirs = _trace(
        lambda f, x, **o: scipy.optimize.minimize(f, x, method="Nelder-Mead", options=o), fun, x0, **options
    )
    assert len(ours[0]) > 20 and ours == theirs


def test_nelder_mead_control_a_different_search_is_seen():
    """Control: the comparison above tells two searches apart — adaptive coefficients (in d = 3; in d = 2 they equal
    the standard ones) change the points."""
    import scipy.optimize

    from fedtheory.certify.probe import nelder_mead

    ours = _trace(nelder_mead, _rosenbrock, [-1.2, 1.0, 0.5], maxiter=100, adaptive=True)
    theirs = _trace(
        lambda f, x, **o: scipy.optimize.minimize(f, x, method="Nelder-Mead", options=o),
        _rosenbrock,
        [-1.2, 1.0, 0.5],
        maxiter=100,
        adaptive=False,
    )
    assert ours != theirs


def test_probe_runs_nelder_mead_without_scipy_optimize():
    """A probe with the default method does not import scipy.optimize (fresh interpreter), and one with another
    option scipy's Nelder–Mead takes falls back to scipy."""
    import subprocess
    import sys
    import textwrap

    program = textwrap.dedent("""
        import sys
        from fedtheory.certify import Box, probe
        r = probe(lambda t: -(t - 0.3) ** 2, Box(0.0, 1.0), seed=0, n_random=8, n_starts=2)
        print(round(r.worst_instance, 6), "scipy.optimize" in sys.modules)
        probe(lambda t: -(t - 0.3) ** 2, Box(0.0, 1.0), seed=0, n_random=8, n_starts=2, options={"disp": False})
        print("scipy.optimize" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0.3", "False", "True"]
