"""Explicit F_{μ,L} interpolants (fedtheory.certify.interpolation) and the smooth-class floor certificate that
replays them in the driver."""

from __future__ import annotations


import numpy as np
import pytest

from fedtheory.certify.interpolation import (
    CLASS_RTOL,
    InterpolatedFederation,
    SmoothStronglyConvexInterpolant,
    enclosing_radius,
    replay_floor,
)
from fedtheory.certify.pep import interpolation_violation


def _smooth_function(rng, d, mu, L):
    """f(x) = ½xᵀAx + ε·Σ_j softplus(a_jᵀx + c_j) with μ ⪯ ∇²f ⪯ L (A's spectrum in [μ, L − ε·Σ‖a_j‖²/4])."""
    B = rng.normal(size=(3, d))
    c = rng.normal(size=3)
    eps = 0.5 * (L - mu) / max(float(np.sum(B**2)) / 4, 1e-12)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    lam = rng.uniform(mu, mu + 0.5 * (L - mu), size=d)
    lam[0], lam[-1] = mu, mu + 0.5 * (L - mu)
    A = Q @ np.diag(lam) @ Q.T

    def f(x):
        u = B @ x + c
        return 0.5 * x @ A @ x + eps * float(np.sum(np.logaddexp(0.0, u)))

    def g(x):
        u = B @ x + c
        return A @ x + eps * B.T @ (1 / (1 + np.exp(-u)))

    return f, g


def _table(rng, m, d, mu, L):
    f, g = _smooth_function(rng, d, mu, L)
    X = rng.normal(size=(m, d)) * 2
    return X, np.array([g(x) for x in X]), np.array([f(x) for x in X])


@pytest.mark.parametrize("seed,m,d", [(0, 3, 2), (1, 5, 3), (2, 6, 9), (3, 8, 2)])
def test_interpolates_data_of_a_member(seed, m, d):
    rng = np.random.default_rng(seed)
    X, G, F = _table(rng, m, d, 1.0, 10.0)
    assert interpolation_violation(X, G, F, mu=1.0, L=10.0) <= 1e-12
    fi = SmoothStronglyConvexInterpolant(X, G, F, 1.0, 10.0)
    v, g = fi.values_and_grads(X)
    assert np.abs(v - F).max() <= 1e-9 * max(1.0, np.abs(F).max())
    assert np.abs(g - G).max() <= 1e-9 * max(1.0, np.abs(G).max())
    assert fi.class_violation(samples=100, seed=seed) <= CLASS_RTOL


@pytest.mark.parametrize("seed", range(4))
def test_in_the_class_whatever_the_data(seed):
    """Garbage data (no F_{μ,L} function through them): the interpolant is still μ-strongly convex and L-smooth
    on random pairs of points — it just does not pass through the data."""
    rng = np.random.default_rng(100 + seed)
    m, d = 5, 3
    X, G, F = rng.normal(size=(m, d)), 5 * rng.normal(size=(m, d)), rng.normal(size=m)
    assert interpolation_violation(X, G, F, mu=0.5, L=4.0) > 0.1
    fi = SmoothStronglyConvexInterpolant(X, G, F, 0.5, 4.0)
    assert fi.class_violation(samples=150, seed=seed) <= CLASS_RTOL
    assert fi.interpolation_error() > 1e-3  # a bad table is not reproduced, visibly


def test_planted_violations_are_caught():
    rng = np.random.default_rng(7)
    X, G, F = _table(rng, 5, 3, 1.0, 10.0)
    fi = SmoothStronglyConvexInterpolant(X, G, F, 1.0, 10.0)
    # a class check with an L below the interpolant's true smoothness (its curvature reaches L between the
    # points) or a μ above its strong convexity must fail
    assert fi.class_violation(L=5.0) > 100 * CLASS_RTOL
    assert fi.class_violation(mu=3.0) > 100 * CLASS_RTOL
    # data moved off the class: one gradient flipped
    G_bad = G.copy()
    G_bad[2] = -G_bad[2]
    bad = SmoothStronglyConvexInterpolant(X, G_bad, F, 1.0, 10.0)
    assert bad.data_violation() > 1e-3 and bad.interpolation_error() > 1e-3


def test_gradient_is_the_derivative():
    rng = np.random.default_rng(3)
    X, G, F = _table(rng, 6, 3, 1.0, 10.0)
    fi = SmoothStronglyConvexInterpolant(X, G, F, 1.0, 10.0)
    h = 1e-6
    for x in rng.normal(size=(20, 3)) * 2:
        fd = np.array([(fi.value(x + h * e) - fi.value(x - h * e)) / (2 * h) for e in np.eye(3)])
        # central differences of a function with L-Lipschitz gradient: error ≤ L·h/2 plus rounding ~1e-16/h
        assert np.abs(fd - fi.grad(x)).max() <= 10.0 * h + 1e-8


def test_value_is_the_minimum_over_the_simplex():
    """The exact support enumeration against a general QP solver on h's dual form."""
    import cvxpy as cp

    rng = np.random.default_rng(11)
    mu, L = 0.5, 3.0
    X, G, F = _table(rng, 6, 4, mu, L)
    fi = SmoothStronglyConvexInterpolant(X, G, F, mu, L)
    ell = L - mu
    S = G - mu * X
    Z = X - S / ell
    b = F - 0.5 * mu * np.sum(X**2, axis=1) - np.sum(S**2, axis=1) / (2 * ell)
    for x in rng.normal(size=(5, 4)) * 3:
        a = cp.Variable(6, nonneg=True)
        prob = cp.Problem(cp.Minimize(ell / 2 * cp.sum_squares(x - Z.T @ a) + b @ a), [cp.sum(a) == 1])
        prob.solve(solver="CLARABEL")
        ref = prob.value + 0.5 * mu * float(x @ x)
        assert abs(fi.value(x) - ref) <= 1e-7 * max(1.0, abs(ref))


def _brute_force(fi, x):
    """h's QP by enumerating every support: the minimizer on each face's affine hull (least squares on the KKT
    system), the smallest objective among those with α ≥ 0 — the true minimum (some optimal α is one of them)."""
    import itertools

    ell, W, b = fi.ell, fi.W, fi.b
    w = (x - fi.z0) @ fi.U
    best = (np.inf, None)
    for s in range(1, fi.m + 1):
        for S in itertools.combinations(range(fi.m), s):
            S = list(S)
            M = np.zeros((s + 1, s + 1))
            M[:s, :s], M[:s, s], M[s, :s] = ell * W[S] @ W[S].T, -1.0, 1.0
            a = np.linalg.lstsq(M, np.r_[ell * W[S] @ w - b[S], 1.0], rcond=None)[0][:s]
            if a.min() < -1e-12 or abs(a.sum() - 1) > 1e-9:
                continue
            val = 0.5 * ell * np.sum((w - a @ W[S]) ** 2) + a @ b[S]
            if val < best[0]:
                best = (val, a @ W[S])
    perp = (x - fi.z0) - w @ fi.U.T
    return best[0] + 0.5 * ell * perp @ perp + 0.5 * fi.mu * x @ x


@pytest.mark.parametrize("seed,m,d,garbage", [(0, 6, 3, False), (1, 7, 2, True), (2, 5, 6, False)])
def test_active_set_finds_the_enumerated_minimum(seed, m, d, garbage):
    rng = np.random.default_rng(seed)
    X, G, F = _table(rng, m, d, 1.0, 10.0)
    if garbage:
        G, F = G + 3 * rng.normal(size=G.shape), F + rng.normal(size=F.shape)
    fi = SmoothStronglyConvexInterpolant(X, G, F, 1.0, 10.0)
    for x in np.vstack([X, rng.normal(size=(8, d)) * 3]):
        ref = _brute_force(fi, x)
        assert abs(fi.value(x) - ref) <= 1e-11 * max(1.0, abs(ref))


def test_mu_equals_L_is_a_quadratic():
    s, c = np.array([1.0, -2.0]), 0.3
    X = np.array([[0.0, 0.0], [1.0, 2.0], [-1.0, 0.5]])
    F = 0.5 * 2.0 * np.sum(X**2, axis=1) + X @ s + c
    G = 2.0 * X + s
    fi = SmoothStronglyConvexInterpolant(X, G, F, 2.0, 2.0)
    assert fi.interpolation_error() <= 1e-14
    x = np.array([3.0, -1.0])
    assert abs(fi.value(x) - (x @ x + x @ s + c)) <= 1e-12
    assert fi.class_violation() <= CLASS_RTOL


def test_bad_input():
    with pytest.raises(ValueError, match="mu <= L"):
        SmoothStronglyConvexInterpolant([[0.0]], [[0.0]], [0.0], 2.0, 1.0)
    with pytest.raises(ValueError, match="shape|data must"):
        SmoothStronglyConvexInterpolant([[0.0], [1.0]], [[0.0]], [0.0, 1.0], 1.0, 2.0)
    with pytest.raises(ValueError, match="finite"):
        SmoothStronglyConvexInterpolant([[np.nan]], [[0.0]], [0.0], 1.0, 2.0)
    fi = SmoothStronglyConvexInterpolant([[0.0]], [[0.0]], [0.0], 1.0, 2.0)
    with pytest.raises(ValueError, match="weights"):
        InterpolatedFederation([fi, fi], [0.7, 0.7])
    fed = InterpolatedFederation([fi, fi], [0.5, 0.5])
    flat = SmoothStronglyConvexInterpolant([[0.0]], [[0.0]], [0.0], 0.0, 2.0)
    with pytest.raises(ValueError, match="hypothesis mu > 0"):
        InterpolatedFederation([flat, flat], [0.5, 0.5]).x_star()
    with pytest.raises(ValueError, match="points must have shape"):
        fi.values_and_grads(np.zeros((2, 3)))
    torch = pytest.importorskip("torch")
    del torch
    with pytest.raises(ValueError, match="numpy backend only"):
        fed.on("torch")


def _federation(seed=5, n=3, d=3, mu=1.0, L=10.0):
    rng = np.random.default_rng(seed)
    clients = [SmoothStronglyConvexInterpolant(*_table(rng, 4, d, mu, L), mu, L) for _ in range(n)]
    return InterpolatedFederation(clients, np.full(n, 1.0 / n))


def test_federation_in_the_driver_and_oracles():
    from fedtheory.algorithms.local_update import LocalUpdate, run_local_update
    from fedtheory.problems.clients import client_oracles

    fed = _federation()
    xs = fed.x_star()
    assert np.linalg.norm(fed.grad(xs)) <= 1e-12 * (1 + np.linalg.norm(xs))
    # K = 1: LocalUpdate is gradient descent on F, so it converges to x* itself
    h = run_local_update(fed, LocalUpdate.fedavg(1, 0.05), np.zeros(3), 400).to_numpy()
    assert h.dist_empirical[-1] <= 1e-9 and h.loss[-1] <= h.loss[0]
    orc = client_oracles(fed)
    X = np.random.default_rng(0).normal(size=(3, 3))
    assert np.allclose(orc.grads(X), np.stack([3 * fed.p[i] * fed.clients[i].grad(x) for i, x in enumerate(X)]))
    assert orc.L_i.tolist() == [10.0] * 3 and np.allclose(orc.mu_i, 1.0)


def test_json_round_trip_is_the_same_function():
    fed = _federation(seed=9)
    back = InterpolatedFederation.from_json(fed.to_json())
    X = np.random.default_rng(1).normal(size=(7, 3)) * 3
    for a, b in zip(fed.clients, back.clients):
        va, ga = a.values_and_grads(X)
        vb, gb = b.values_and_grads(X)
        assert np.array_equal(va, vb) and np.array_equal(ga, gb)
    with pytest.raises(ValueError, match="not an interpolated federation"):
        InterpolatedFederation.from_json({"kind": "quadratic"})


def test_enclosing_radius_is_valid_and_minimal():
    rng = np.random.default_rng(2)
    P = rng.normal(size=(5, 3))
    r, o = enclosing_radius(P)
    assert np.linalg.norm(P - o, axis=1).max() <= r + 1e-15
    # no centre does better (a few random perturbations of the optimum)
    for _ in range(50):
        o2 = o + 1e-3 * rng.normal(size=3)
        assert np.linalg.norm(P - o2, axis=1).max() >= r - 1e-7


@pytest.fixture(scope="module")
def smooth_cert():
    from fedtheory.certify.federated_pep import certify_local_update

    return certify_local_update(1.0, 10.0, 2, 0.05, function_class="smooth-strongly-convex", probe_starts=1, seed=0)


def test_smooth_floor_certificate_replays_an_explicit_instance(smooth_cert):
    from fedtheory.algorithms.theta import Theta

    c = smooth_cert
    assert c.status == "certified" and c.instance["problem"]["kind"] == "interpolated"
    # the explicit smooth instance beats the quadratic probe by far and attains the SDP value
    assert c.lower >= 1.5 * c.details["quadratic_lower"]
    assert c.gap <= 1e-3 and c.lower <= c.value
    # replay the stored instance from its JSON: same class, same floor
    inst = c.instance
    fed = InterpolatedFederation.from_json(inst["problem"])
    assert fed.class_violation(seed=1) <= CLASS_RTOL
    assert fed.mu == 1.0 and fed.L == 10.0
    out = replay_floor(
        fed,
        Theta.from_json(inst["theta"]),
        inst["alpha"],
        inst["gamma"],
        inst["x0"],
        inst["server"]["lr"],
        rounds=inst["rounds"],
    )
    assert abs(out["heterogeneity"] - 1.0) <= 1e-9  # stored at heterogeneity C = 1
    assert abs(out["distance"] / out["heterogeneity"] - c.lower) <= 1e-9 * c.lower
    assert out["residual"] <= 1e-9


def test_replay_class_check_catches_bad_interpolants(smooth_cert):
    data = smooth_cert.instance["problem"]
    fed = InterpolatedFederation.from_json(data)
    # the stored clients are 10-smooth, not 5-smooth: the class check with the smaller L fails
    assert max(c.class_violation(L=5.0) for c in fed.clients) > 100 * CLASS_RTOL
    # rebuilt as 5-smooth, the table is no longer reproduced (the worst case needs curvature 10)
    for cl in data["clients"]:
        cl["L"] = 5.0
    assert max(c.interpolation_error() for c in InterpolatedFederation.from_json(data).clients) > 1e-3

    class Tampered(SmoothStronglyConvexInterpolant):
        def values_and_grads(self, X):
            v, g = super().values_and_grads(X)
            return v, 1.5 * g  # a wrong gradient oracle

    c0 = fed.clients[0]
    bad = Tampered(c0.X, c0.G, c0.F, c0.mu, c0.L)
    assert bad.class_violation() > 100 * CLASS_RTOL


def _run_stored_instance(fed, inst):
    """Local-update's own driver on a certificate's stored instance (method, start, rounds) over ``fed``."""
    from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
    from fedtheory.algorithms.theta import Theta

    srv = ServerOpt(inst["server"]["kind"], lr=inst["server"]["lr"], momentum=inst["server"]["momentum"])
    algo = LocalUpdate(Theta.from_json(inst["theta"]), inst["alpha"], inst["gamma"], srv)
    return run_local_update(fed, algo, np.asarray(inst["x0"]), inst["rounds"]).to_numpy()


def test_smooth_error_certificate_replays_an_explicit_instance():
    from fedtheory.certify.federated_pep import certify_local_update
    from fedtheory.certify.interpolation import heterogeneity

    c = certify_local_update(
        1.0,
        10.0,
        2,
        0.05,
        measure="error",
        eta=0.1,
        rounds=2,
        D=1.0,
        function_class="smooth-strongly-convex",
        probe_starts=1,
        seed=0,
    )
    assert c.status == "certified" and c.instance["problem"]["kind"] == "interpolated"
    assert c.gap <= 1e-3 and c.lower >= c.details["quadratic_lower"]
    inst = c.instance
    fed = InterpolatedFederation.from_json(inst["problem"])
    assert fed.class_violation(seed=3) <= CLASS_RTOL
    h = _run_stored_instance(fed, inst)
    xs = fed.x_star()
    # in the hypotheses: heterogeneity ≤ C = 1 and ‖x_0 − x*‖ ≤ D = 1 (up to x*'s certified error)
    assert heterogeneity(fed)[0] <= 1.0 + 1e-9
    assert np.linalg.norm(np.asarray(inst["x0"]) - xs) + fed.x_star_error() <= 1.0 + 1e-9
    assert abs(np.linalg.norm(h.x[-1] - xs) - c.lower) <= 1e-9


def test_smooth_certificate_falls_back_and_stays_honest(monkeypatch):
    import fedtheory.certify.federated_pep as fp
    import fedtheory.certify.interpolation as interp

    args = (1.0, 10.0, 2, 0.05)
    kw = dict(function_class="smooth-strongly-convex", probe_starts=1, seed=0)
    # an instance that cannot be evaluated: the quadratic probe's lower bound, said so

    def stuck(self, w):
        raise ValueError("the active-set method did not converge (degenerate data)")

    monkeypatch.setattr(interp.SmoothStronglyConvexInterpolant, "_active_set", stuck)
    c = fp.certify_local_update(*args, **kw)
    # the lower bound is the best quadratic one: the probe's, or the floor's extreme-spectrum family (lower_bounds)
    quadratic = [c.details["quadratic_lower"]] + [
        c.details[k] for k in ("extreme_spectrum_lower",) if c.details.get(k) is not None
    ]
    assert c.status == "certified" and c.lower == max(quadratic) and "smooth_lower" not in c.details
    assert "did not converge" in c.notes and "lower bound from a quadratic instance" in c.notes
    monkeypatch.undo()
    # a replayed lower bound above the SDP's value: the certificate is unreliable, never a bound
    import fedtheory.methods.pep as mpep

    real = mpep._interpolated_lower

    def inflated(*a):
        lower, inst, diag = real(*a)
        return 1.01 * lower, inst, diag

    monkeypatch.setattr(mpep, "_interpolated_lower", inflated)
    c = fp.certify_local_update(*args, **kw)
    assert c.status == "unreliable" and c.value is None and "exceeds the upper bound" in c.notes


def test_a_point_does_not_depend_on_its_batch():
    rng = np.random.default_rng(4)
    fi = SmoothStronglyConvexInterpolant(*_table(rng, 6, 3, 1.0, 10.0), 1.0, 10.0)
    X = rng.normal(size=(9, 3)) * 4
    v, g = fi.values_and_grads(X)
    for k in (0, 4, 8):
        vk, gk = fi.values_and_grads(X[k : k + 1])
        # equal up to the summation order of a batched product (a different support would move ∇f by ≫ 1e-12)
        assert abs(vk[0] - v[k]) <= 1e-13 * abs(v[k]) and np.abs(gk[0] - g[k]).max() <= 1e-12 * np.abs(g[k]).max()


def test_degenerate_data_duplicates_and_collinear_points():
    """Affinely dependent z_k (repeated points, points on a line in R³): the active-set method follows the
    zero-curvature directions; values still match the enumeration and the class check passes."""
    rng = np.random.default_rng(21)
    f, g = _smooth_function(rng, 3, 1.0, 10.0)
    line = np.outer(np.linspace(-2, 2, 5), [1.0, -0.5, 0.25])
    X = np.vstack([line, line[1:3]])  # 7 points, two repeated, all on one line
    G, F = np.array([g(x) for x in X]), np.array([f(x) for x in X])
    fi = SmoothStronglyConvexInterpolant(X, G, F, 1.0, 10.0)
    assert fi.interpolation_error() <= 1e-12 and fi.class_violation(seed=2) <= CLASS_RTOL
    G2 = G + rng.normal(size=G.shape)  # and inconsistent data on the same points
    fb = SmoothStronglyConvexInterpolant(X, G2, F, 1.0, 10.0)
    assert fb.class_violation(seed=2) <= CLASS_RTOL
    for x in np.vstack([X, rng.normal(size=(6, 3)) * 3]):
        for fun in (fi, fb):
            ref = _brute_force(fun, x)
            assert abs(fun.value(x) - ref) <= 1e-11 * max(1.0, abs(ref))


def test_collinear_hull_follows_zero_curvature_directions():
    """All z_k on one line (r = 1, six points): faces of three or more points are affinely dependent, so the
    method moves along their zero-curvature directions; the result is still the enumerated minimum."""
    rng = np.random.default_rng(5)
    X = np.outer(np.linspace(-2, 2, 6), [1.0, 0.0, 0.0])
    for G, F in (
        (3 * X, 1.5 * np.sum(X**2, axis=1)),
        (3 * X + np.outer(rng.normal(size=6), [1.0, 0.0, 0.0]), rng.normal(size=6)),
    ):
        fi = SmoothStronglyConvexInterpolant(X, G, F, 1.0, 10.0)
        assert fi.r == 1 and fi.class_violation(seed=0) <= CLASS_RTOL
        for x in np.vstack([X, rng.normal(size=(8, 3)) * 3]):
            ref = _brute_force(fi, x)
            assert abs(fi.value(x) - ref) <= 1e-11 * max(1.0, abs(ref))


def test_smooth_function_value_and_rate_replay_the_pep_worst_case():
    from fedtheory.certify.federated_pep import certify_local_update

    kw = dict(function_class="smooth-strongly-convex", probe_starts=1, seed=0)
    c = certify_local_update(1.0, 10.0, 2, 0.05, measure="function-value", eta=0.1, rounds=2, D=1.0, **kw)
    assert c.status == "certified" and c.instance["problem"]["kind"] == "interpolated"
    assert c.gap <= 1e-3 and c.lower > 1.5 * c.details["quadratic_lower"]  # far above the quadratic instance
    inst = c.instance
    fed = InterpolatedFederation.from_json(inst["problem"])
    h = _run_stored_instance(fed, inst)
    assert abs(fed.loss(h.x[-1]) - fed.loss(fed.x_star()) - c.lower) <= 1e-9
    r = certify_local_update(1.0, 10.0, 2, 0.05, measure="rate", eta=0.1, **kw)
    # the rate's worst case is a quadratic direction: the explicit smooth instance ties the quadratic one
    assert r.status == "certified" and r.gap <= 1e-4
    assert r.details["smooth_instance"]["class_violation"] <= CLASS_RTOL
    assert abs(r.details["smooth_lower"] - r.details["quadratic_lower"]) <= 1e-9


def test_enclosing_radius_exact_for_few_points_matches_the_cone_program():
    # the subset enumeration (up to EXACT_BALL_POINTS points) against the second-order cone program it replaced
    import cvxpy as cp

    from fedtheory.certify.interpolation import EXACT_BALL_POINTS

    rng = np.random.default_rng(5)
    for m, d in ((3, 2), (4, 13), (5, 3), (EXACT_BALL_POINTS, 4), (4, 2)):
        P = rng.normal(size=(m, d))
        r, o = enclosing_radius(P)
        assert np.linalg.norm(P - o, axis=1).max() == r  # evaluated at the centre: a valid bound
        o_var, t = cp.Variable(d), cp.Variable()
        cp.Problem(cp.Minimize(t), [cp.norm(P[i] - o_var) <= t for i in range(m)]).solve(solver="CLARABEL")
        assert r <= float(np.linalg.norm(P - o_var.value, axis=1).max()) + 1e-12  # never worse than the solver
        assert r >= float(t.value) - 1e-7  # and not below the optimum (the solver's accuracy)
    # a point inside the others' ball does not move it; collinear points: the two ends
    r, o = enclosing_radius([[0.0, 0.0], [2.0, 0.0], [1.0, 0.5]])
    assert abs(r - 1.0) < 1e-15 and np.allclose(o, [1.0, 0.0], atol=1e-15)
    r, o = enclosing_radius([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    assert abs(r - 1.5) < 1e-15 and np.allclose(o, [1.5, 0.0], atol=1e-15)
