"""The quadratic class's PEP-extracted lower bound: the interpolant's construction and the replayed instance."""

import numpy as np
import pytest

from fedtheory.certify.federated_pep import certify_local_update
from fedtheory.certify.interpolation import quadratic_interpolant


def _class_data(rng, d, m, mu, L, degenerate=False):
    lam = np.array([rng.choice([mu, L, rng.uniform(mu, L)]) for _ in range(d)])
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    A = Q @ np.diag(lam) @ Q.T
    U = rng.normal(size=(m, d))
    if degenerate and d > 1:
        U[:, -1] = U[:, 0]  # rank-deficient data (collinear directions)
    return A, U


@pytest.mark.parametrize("seed", range(40))
def test_interpolates_class_data_within_spectrum(seed):
    rng = np.random.default_rng(seed)
    mu, L = 1.0, 10.0
    d, m = int(rng.integers(1, 9)), int(rng.integers(1, 12))
    A, U = _class_data(rng, d, m, mu, L, degenerate=seed % 3 == 0)
    lam, V = quadratic_interpolant(U, U @ A, mu, L)
    fit = U @ (V * lam) @ V.T
    assert np.abs(fit - U @ A).max() <= 1e-8 * max(1.0, np.abs(U @ A).max())
    assert lam.min() >= mu and lam.max() <= L
    assert np.abs(V.T @ V - np.eye(d)).max() < 1e-12


def test_extreme_curvatures_on_every_point():
    # every data direction an eigenvector at μ or L: 1 − a² = 0 on the whole data block (the completion's K = 0)
    mu, L = 0.5, 4.0
    U = np.eye(4)[:2]
    G = U @ np.diag([mu, L, 2.0, 3.0])
    lam, V = quadratic_interpolant(U, G, mu, L)
    assert np.abs(U @ (V * lam) @ V.T - G).max() < 1e-12 and lam.min() >= mu and lam.max() <= L


def test_planted_bad_data_is_caught():
    rng = np.random.default_rng(0)
    mu, L = 1.0, 10.0
    Q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    U = rng.normal(size=(3, 3))
    # curvature 2L (outside the class): the interpolant stays in the class, so it cannot fit the data
    G = U @ (Q @ np.diag([1.0, 5.0, 20.0]) @ Q.T)
    lam, V = quadratic_interpolant(U, G, mu, L)
    assert lam.min() >= mu and lam.max() <= L
    assert np.abs(U @ (V * lam) @ V.T - G).max() > 0.1 * np.abs(G).max()
    # a non-symmetric "Hessian" (UᵀG not symmetric): no symmetric A fits it
    N = np.array([[2.0, 3.0, 0.0], [-3.0, 2.0, 0.0], [0.0, 0.0, 2.0]])
    lam, V = quadratic_interpolant(np.eye(3), N.T, mu, L)
    assert np.abs((V * lam) @ V.T - N.T).max() > 1.0


def test_degenerate_class_and_bad_input():
    lam, V = quadratic_interpolant([[1.0, 2.0]], [[3.0, 6.0]], 3.0, 3.0)
    assert lam.tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="same shape"):
        quadratic_interpolant([[1.0, 2.0]], [[1.0]], 1.0, 2.0)
    with pytest.raises(ValueError, match="mu <= L"):
        quadratic_interpolant([[1.0]], [[1.0]], 3.0, 2.0)


@pytest.mark.parametrize("measure,extra", [("floor", {}), ("error", {"eta": 0.1, "rounds": 2, "D": 1.0})])
def test_certificate_replays_the_extracted_instance(measure, extra):
    from fedtheory.algorithms.local_update import LocalUpdate, ServerOpt, run_local_update
    from fedtheory.algorithms.theta import Theta
    from fedtheory.problems.quadratic import QuadraticFederation

    c = certify_local_update(1.0, 10.0, 2, 0.05, measure=measure, engine="pepit", probe_starts=1, seed=0, **extra)
    sdp, ext = c.details["sdp_value"], c.details["extracted_lower"]
    assert c.status == "certified" and abs(ext - sdp) <= 1e-3 * sdp and ext <= c.value
    # the lower bound is the largest of the candidates the certificate reports (fedtheory.certify.lower_bounds
    # adds the extreme-spectrum floor and the probe started from the extracted instance)
    extra_lowers = [
        v
        for k, v in c.details.items()
        if v is not None
        and not k.endswith("_diagnostics")
        and k.startswith(("polished_lower_", "extreme_spectrum_lower"))
    ]
    assert c.lower == max([ext, c.details["probe_lower"]] + extra_lowers)
    inst = c.details["extracted_instance"]
    prob = QuadraticFederation.from_json(inst["problem"])
    ev = np.linalg.eigvalsh(prob.A)
    assert ev.min() >= 1.0 - 1e-12 and ev.max() <= 10.0 * (1 + 1e-12)
    if measure == "error":
        # the stored instance, replayed from scratch, gives the reported value and respects ‖x_0 − x*‖ ≤ D, C ≤ 1
        srv = inst["server"]
        algo = LocalUpdate(
            Theta.from_json(inst["theta"]), inst["alpha"], inst["gamma"], ServerOpt(srv["kind"], lr=srv["lr"])
        )
        x0 = np.array(inst["x0"])
        xT = run_local_update(prob, algo, x0, inst["rounds"]).to_numpy().x[-1]
        assert float(np.linalg.norm(xT - prob.x_star())) == pytest.approx(ext, rel=1e-12)
        assert np.linalg.norm(x0 - prob.x_star()) <= 1.0 + 1e-12
        assert np.linalg.norm(prob.c, axis=1).max() <= 1.0 + 1e-12


@pytest.mark.parametrize(
    "kw",
    [
        {"measure": "rate", "eta": 0.1},
        {"zeta": 1.0},
        {"measure": "function-value", "eta": 0.1, "rounds": 2, "D": 1.0},
        {"measure": "error", "server": "heavy_ball", "momentum": 0.3, "eta": 0.1, "rounds": 2, "D": 1.0},
    ],
)
def test_every_measure_reaches_the_sdp(kw):
    c = certify_local_update(1.0, 10.0, 2, 0.05, engine="pepit", probe_starts=1, seed=0, **kw)
    sdp, ext = c.details["sdp_value"], c.details["extracted_lower"]
    assert c.status == "certified" and abs(ext - sdp) <= 1e-3 * sdp and c.lower >= ext
    lam = np.asarray(c.details["extracted_instance"]["problem"]["eigvals"])
    assert lam.min() >= 1.0 and lam.max() <= 10.0
