"""The quadratic family: exact constants, exact δ_A targets, validation, JSON replay, backends.

Every measured constant here is recomputed independently of the library's own bookkeeping
(numpy.linalg.eigvalsh on the stored A, a hand-written δ_A), so a stale ``eigvals`` or a wrong
``delta_A`` formula cannot pass.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from fedtheory.problems import QuadraticFederation, make_quadratic
from fedtheory.problems.quadratic import FederationArrays


def _delta_A_independent(A, p):
    """δ_A² = λ_max(Σ p_i (A_i − Ā)²), written out client by client."""
    Abar = sum(pi * Ai for pi, Ai in zip(p, A))
    M = sum(pi * (Ai - Abar) @ (Ai - Abar) for pi, Ai in zip(p, A))
    return float(np.sqrt(max(np.linalg.eigvalsh((M + M.T) / 2)[-1], 0.0)))


def _max_commutator(A):
    """max over pairs of ‖A_iA_j − A_jA_i‖_F / (‖A_i‖_F‖A_j‖_F)."""
    worst = 0.0
    for i in range(len(A)):
        for j in range(i + 1, len(A)):
            K = A[i] @ A[j] - A[j] @ A[i]
            worst = max(worst, np.linalg.norm(K) / (np.linalg.norm(A[i]) * np.linalg.norm(A[j])))
    return worst


# (n, d, commuting, weights, delta_A as a fraction of (L − μ)/2 or None, mu, L, C, seed)
CASES = [
    (2, 2, False, "uniform", None, 1.0, 10.0, 1.0, 0),
    (3, 4, False, "random", None, 0.01, 100.0, 2.5, 1),
    (5, 3, True, "uniform", None, 0.5, 2.0, 1.0, 2),
    (4, 6, True, "random", None, 1.0, 1e4, 0.3, 3),
    (2, 2, False, "uniform", 0.9, 1.0, 10.0, 1.0, 4),  # near the sharp bound (L − μ)/2
    (3, 5, False, "random", 0.25, 0.1, 50.0, 3.0, 5),
    (6, 4, False, "uniform", 0.6, 1.0, 3.0, 1.0, 6),
    (7, 8, False, "random", 0.05, 1e-3, 1.0, 10.0, 7),
    (4, 3, True, "uniform", 0.3, 1.0, 5.0, 1.0, 8),
    (8, 6, True, "random", 0.7, 0.2, 20.0, 2.0, 9),  # s > 1: clipped interior eigenvalues
    (3, 4, False, "random", 0.0, 1.0, 4.0, 1.0, 10),  # δ_A = 0: identical Hessians
    (1, 3, False, "uniform", None, 1.0, 2.0, 1.0, 11),
]


@pytest.mark.parametrize("n,d,commuting,weights,frac,mu,L,C,seed", CASES)
def test_generated_constants_are_exact(n, d, commuting, weights, frac, mu, L, C, seed):
    target = None if frac is None else frac * (L - mu) / 2
    q = make_quadratic(n, d, mu=mu, L=L, C=C, weights=weights, commuting=commuting, delta_A=target, seed=seed)
    assert q.A.shape == (n, d, d) and q.c.shape == (n, d) and q.p.shape == (n,)
    assert q.A.dtype == np.float64 and np.array_equal(q.A, np.swapaxes(q.A, 1, 2))

    # spectra, measured independently of the stored eigvals: every client attains μ and L
    ev = np.linalg.eigvalsh(q.A)
    tol = 1e-12 * L
    assert np.all(np.abs(ev[:, 0] - mu) <= tol), ev[:, 0]
    assert np.all(np.abs(ev[:, -1] - L) <= tol), ev[:, -1]
    assert np.all(ev >= mu - tol) and np.all(ev <= L + tol)
    assert q.mu == mu and q.L == L  # the stored extremes are the requested numbers
    assert np.all(q.eigvals[:, 0] == mu) and np.all(q.eigvals[:, -1] == L)
    assert np.all(np.diff(q.eigvals, axis=1) >= 0)
    # the stored decomposition is the decomposition of A
    V, w = q.eigvecs, q.eigvals
    assert np.abs(q.A @ V - V * w[:, None, :]).max() <= 1e-13 * L
    assert np.abs(np.swapaxes(V, 1, 2) @ V - np.eye(d)).max() <= 1e-13

    # δ_A hits the target exactly
    measured = _delta_A_independent(q.A, q.p)
    if target is not None:
        if target == 0:
            assert measured <= 1e-14 * L
        else:
            assert abs(measured - target) <= 1e-12 * target, (measured, target)
    assert abs(q.delta_A() - measured) <= 1e-13 * L
    assert measured <= q.delta_B() * (1 + 1e-12) <= (L - mu) * (1 + 1e-12)
    assert measured <= (L - mu) / 2 * (1 + 1e-12)

    # centres: in the ball of radius C, with C attained
    norms = np.linalg.norm(q.c, axis=1)
    assert np.all(norms <= C * (1 + 1e-14))
    assert abs(norms.max() - C) <= 1e-14 * C and abs(q.C - C) <= 1e-14 * C

    # weights
    assert np.all(q.p > 0) and abs(q.p.sum() - 1) <= 1e-14
    if weights == "uniform":
        assert np.all(q.p == 1 / n)
    else:
        assert np.all(q.p >= 1 / (2 * n) * (1 - 1e-12)) and np.ptp(q.p) > 0

    # commuting or really not
    comm = _max_commutator(q.A)
    if commuting or n == 1 or target == 0:
        assert comm <= 1e-13 and q.commuting()
    else:
        assert comm >= 1e-6 and not q.commuting()

    # the exact minimizer
    x = q.x_star()
    assert np.linalg.norm(q.grad(x)) <= 1e-12 * L * (np.linalg.norm(x) + C)

    # JSON round trip is bit-exact (through text)
    r = QuadraticFederation.from_json(json.dumps(q.to_json()))
    assert r == q
    for name in ("A", "c", "p", "eigvals", "eigvecs"):
        assert np.array_equal(getattr(r, name), getattr(q, name)), name
    r2 = QuadraticFederation.from_json(json.loads(json.dumps(q.to_json(spectral=False))))
    assert r2 == q and np.allclose(r2.eigvals, q.eigvals, atol=1e-12 * L)

    # same seed, same instance; another seed, another one
    again = make_quadratic(n, d, mu=mu, L=L, C=C, weights=weights, commuting=commuting, delta_A=target, seed=seed)
    assert again == q and np.array_equal(again.eigvecs, q.eigvecs)
    other = make_quadratic(n, d, mu=mu, L=L, C=C, weights=weights, commuting=commuting, delta_A=target, seed=seed + 100)
    assert not np.array_equal(other.c, q.c)


def test_generator_seed_is_reproducible_and_advanced():
    a = make_quadratic(3, 3, mu=1.0, L=2.0, seed=np.random.default_rng(42))
    b = make_quadratic(3, 3, mu=1.0, L=2.0, seed=np.random.default_rng(42))
    assert a == b
    rng = np.random.default_rng(42)
    first, second = (make_quadratic(3, 3, mu=1.0, L=2.0, seed=rng) for _ in range(2))
    assert first == a and first != second


def test_delta_target_keeps_the_seeds_weights_and_centres():
    """A δ_A target changes only the Hessians: weights and centres are the same draws as without it."""
    base = make_quadratic(4, 5, mu=0.5, L=8.0, C=2.0, weights="random", seed=3)
    for target in (0.0, 0.5 * base.delta_A(), base.delta_A(), 3.0):
        hit = make_quadratic(4, 5, mu=0.5, L=8.0, C=2.0, weights="random", delta_A=target, seed=3)
        assert np.array_equal(hit.c, base.c) and np.array_equal(hit.p, base.p)
        assert abs(_delta_A_independent(hit.A, hit.p) - target) <= 1e-12 * max(target, 8.0 * 1e-2)


def test_sharp_bound_and_known_values():
    # δ_A = (L − μ)/2 is attained: diag(μ, L) and diag(L, μ) with equal weights
    mu, L = 1.0, 7.0
    q = QuadraticFederation.from_matrices([np.diag([mu, L]), np.diag([L, mu])], [[0.0, 0.0], [1.0, 1.0]])
    assert q.delta_A() == pytest.approx((L - mu) / 2, rel=1e-15)
    assert q.delta_B() == pytest.approx((L - mu) / 2, rel=1e-15)
    # scalar clients: δ_A = sqrt(p1 p2)|a1 − a2|, δ_B = max(p2, p1)|a1 − a2|
    q = QuadraticFederation.from_matrices([[[1.0]], [[5.0]]], [[0.0], [0.0]], p=[0.2, 0.8])
    assert q.delta_A() == pytest.approx(np.sqrt(0.16) * 4, rel=1e-15)
    assert q.delta_B() == pytest.approx(0.8 * 4, rel=1e-15)
    # the generator reaches (L − μ)/2 exactly in this configuration
    q = make_quadratic(2, 2, mu=mu, L=L, delta_A=(L - mu) / 2, seed=0)
    assert abs(_delta_A_independent(q.A, q.p) - (L - mu) / 2) <= 1e-12 * (L - mu)


def test_delta_A_is_sdane_gradient_dissimilarity():
    """S-DANE's δ_A: Σ p_i ‖∇h_i(x) − ∇h_i(y)‖² ≤ δ_A²‖x − y‖² for h_i = F − f_i, tight in some direction."""
    q = make_quadratic(5, 4, mu=0.3, L=6.0, weights="random", seed=12)
    rng = np.random.default_rng(0)
    Abar = q.mean_hessian()
    delta2 = q.delta_A() ** 2
    for _ in range(50):
        x, y = rng.normal(size=(2, 4))
        gx = q.grad(x) - q.client_grads(x)  # ∇h_i(x), one row per client
        gy = q.grad(y) - q.client_grads(y)
        lhs = float(q.p @ np.sum((gx - gy) ** 2, axis=1))
        assert lhs <= delta2 * np.sum((x - y) ** 2) * (1 + 1e-12)
    M = sum(pi * (Ai - Abar) @ (Ai - Abar) for pi, Ai in zip(q.p, q.A))
    v = np.linalg.eigh(M)[1][:, -1]
    gx = q.grad(v) - q.client_grads(v)
    g0 = q.grad(np.zeros(4)) - q.client_grads(np.zeros(4))
    assert float(q.p @ np.sum((gx - g0) ** 2, axis=1)) == pytest.approx(delta2, rel=1e-12)


def test_loss_grad_batched_and_finite_differences():
    q = make_quadratic(3, 4, mu=0.5, L=5.0, C=2.0, weights="random", seed=4)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 4))
    losses, grads = q.loss(X), q.grad(X)
    assert losses.shape == (6,) and grads.shape == (6, 4) and q.client_grads(X).shape == (6, 3, 4)
    for k in range(6):
        assert isinstance(q.loss(X[k]), float)
        assert q.loss(X[k]) == pytest.approx(losses[k], rel=1e-14)
        assert np.allclose(q.grad(X[k]), grads[k], rtol=1e-14, atol=1e-14)
        explicit = sum(pi * 0.5 * (X[k] - ci) @ Ai @ (X[k] - ci) for pi, Ai, ci in zip(q.p, q.A, q.c))
        assert q.loss(X[k]) == pytest.approx(explicit, rel=1e-13)
        h = 1e-6
        fd = np.array([(q.loss(X[k] + h * e) - q.loss(X[k] - h * e)) / (2 * h) for e in np.eye(4)])
        assert np.allclose(fd, grads[k], rtol=1e-6, atol=1e-6)
    # x_star minimizes F: loss at x_star below every sample
    assert q.loss(q.x_star()) < losses.min()
    with pytest.raises(ValueError, match=r"x must have shape \(4,\)"):
        q.loss(np.zeros(3))


def test_on_backends():
    q = make_quadratic(2, 3, mu=1.0, L=3.0, seed=0)
    arrs = q.on()
    assert isinstance(arrs, FederationArrays) and arrs.backend.name == "numpy"
    for key in ("A", "c", "p", "eigvals", "eigvecs"):
        assert np.array_equal(arrs[key], getattr(q, key)) and getattr(arrs, key) is arrs[key]
    torch = pytest.importorskip("torch")
    t = q.on("torch", device="cpu")
    for key in ("A", "c", "p", "eigvals", "eigvecs"):
        assert isinstance(t[key], torch.Tensor) and t[key].dtype == torch.float64 and t[key].device.type == "cpu"
        assert np.array_equal(t[key].numpy(), getattr(q, key))


# ------------------------------------------------------------------------------------------------
# hypotheses violated: ValueError naming the hypothesis and the values
# ------------------------------------------------------------------------------------------------

BAD = [
    (dict(n=0, d=2, mu=1.0, L=2.0), r"n >= 1.*n=0"),
    (dict(n=2, d=0, mu=1.0, L=2.0), r"d >= 1.*d=0"),
    (dict(n=2.5, d=2, mu=1.0, L=2.0), r"integer n >= 1"),
    (dict(n=2, d=2, mu=0.0, L=2.0), r"0 < mu <= L.*mu=0\.0, L=2\.0"),
    (dict(n=2, d=2, mu=3.0, L=2.0), r"0 < mu <= L.*mu=3\.0, L=2\.0"),
    (dict(n=2, d=2, mu=1.0, L=float("inf")), r"finite real L"),
    (dict(n=2, d=2, mu=1.0, L=2.0, C=-1.0), r"C >= 0.*C=-1\.0"),
    (dict(n=2, d=1, mu=1.0, L=2.0), r"d=1.*mu=1\.0.*L=2\.0"),
    (dict(n=2, d=2, mu=1.0, L=2.0, delta_A=-0.1), r"delta_A >= 0.*delta_A=-0\.1"),
    (dict(n=2, d=2, mu=1.0, L=3.0, delta_A=1.5), r"delta_A <= \(L - mu\)/2 = 1\.0.*delta_A=1\.5.*mu=1\.0, L=3\.0"),
    (dict(n=2, d=2, mu=1.0, L=2.0, weights="skewed"), r"weights must be"),
    (dict(n=2, d=2, mu=1.0, L=2.0, weights=[0.5, 0.4]), r"sum p_i = 1"),
    (dict(n=2, d=2, mu=1.0, L=2.0, weights=[1.5, -0.5]), r"p_i > 0"),
    (dict(n=2, d=2, mu=1.0, L=2.0, weights=[1.0]), r"shape \(2,\)"),
    (dict(n=1, d=3, mu=1.0, L=2.0, delta_A=0.1), r"delta_A=0\.1 with n=1"),
    (dict(n=3, d=2, mu=1.0, L=2.0, commuting=True, delta_A=0.1), r"commuting=True and d=2"),
    (dict(n=2, d=3, mu=1.0, L=3.0, commuting=True, delta_A=0.999), r"cannot reach delta_A=0\.999.*at most about"),
]


@pytest.mark.parametrize("kwargs,pattern", BAD)
def test_bad_inputs_name_the_hypothesis(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        make_quadratic(**kwargs)


def test_explicit_weights_and_scalar_federations():
    q = make_quadratic(3, 2, mu=1.0, L=2.0, weights=[0.2, 0.3, 0.5], seed=0)
    assert np.allclose(q.p, [0.2, 0.3, 0.5], rtol=0, atol=1e-16)
    q = make_quadratic(4, 1, mu=2.0, L=2.0, seed=0)  # d = 1 works when μ = L
    assert np.all(q.A == 2.0) and q.delta_A() == 0.0


def test_from_matrices_validation():
    good_A = [np.diag([1.0, 2.0]), np.diag([2.0, 3.0])]
    c = [[0.0, 0.0], [1.0, 0.0]]
    q = QuadraticFederation.from_matrices(good_A, c, p=[0.25, 0.75])
    assert q.p.tolist() == [0.25, 0.75] and q.mu == 1.0 and q.L == 3.0
    with pytest.raises(ValueError, match=r"A\[1\] is not symmetric"):
        QuadraticFederation.from_matrices([good_A[0], np.array([[1.0, 0.5], [0.0, 1.0]])], c)
    with pytest.raises(ValueError, match=r"A\[0\] is not positive definite \(smallest eigenvalue 0\.0\)"):
        QuadraticFederation.from_matrices([np.diag([0.0, 1.0]), good_A[1]], c)
    with pytest.raises(ValueError, match=r"shape \(n, d, d\)"):
        QuadraticFederation.from_matrices(np.eye(2), c)
    with pytest.raises(ValueError, match=r"c must have shape \(n, d\) = \(2, 2\)"):
        QuadraticFederation.from_matrices(good_A, [[0.0, 0.0]])
    with pytest.raises(ValueError, match=r"p_i > 0"):
        QuadraticFederation.from_matrices(good_A, c, p=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"sum p_i = 1"):
        QuadraticFederation.from_matrices(good_A, c, p=[0.3, 0.3])
    with pytest.raises(ValueError, match=r"non-finite"):
        QuadraticFederation.from_matrices([np.diag([1.0, np.nan]), good_A[1]], c)


def test_from_json_rejects_inconsistent_or_incomplete_data():
    q = make_quadratic(2, 3, mu=1.0, L=4.0, seed=0)
    data = q.to_json()
    data["A"][0][0][0] += 1.0  # edit A, leave the stored decomposition stale
    data["A"][0] = np.asarray(data["A"][0]).tolist()
    with pytest.raises(ValueError, match=r"do not decompose A"):
        QuadraticFederation.from_json(data)
    with pytest.raises(ValueError, match=r"missing key\(s\) c"):
        QuadraticFederation.from_json({"A": [[[1.0]]], "p": [1.0]})
    with pytest.raises(ValueError, match=r"family 'logistic'"):
        QuadraticFederation.from_json({"family": "logistic", "A": [[[1.0]]], "c": [[0.0]], "p": [1.0]})
    with pytest.raises(ValueError, match=r"give both eigvals and eigvecs"):
        QuadraticFederation(A=[[[1.0]]], c=[[0.0]], p=[1.0], eigvals=[[1.0]])


def test_large_condition_and_many_clients_fast():
    """A stiff, many-client instance keeps the exact constants (and is built quickly)."""
    mu, L = 1e-6, 1e6
    q = make_quadratic(40, 12, mu=mu, L=L, weights="random", delta_A=0.3 * (L - mu) / 2, seed=21)
    ev = np.linalg.eigvalsh(q.A)
    assert np.all(np.abs(ev[:, -1] - L) <= 1e-12 * L) and np.all(np.abs(ev[:, 0] - mu) <= 1e-12 * L)
    assert abs(_delta_A_independent(q.A, q.p) / (0.3 * (L - mu) / 2) - 1) <= 1e-12
