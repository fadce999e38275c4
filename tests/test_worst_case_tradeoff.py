"""worst_case_tradeoff: the class-wide (κ, ρ, Δ) the explorer sweeps, against spectra and the paper's bounds."""

import numpy as np
import pytest

from fedtheory.analysis.pareto import frontier_last, frontier_spectrum, frontier_uniform, worst_case_tradeoff


def test_sup_over_the_class_matches_dense_spectra():
    rng = np.random.default_rng(0)
    lam = np.unique(
        np.concatenate([np.linspace(1.0, 1.0, 1), np.geomspace(1.0, 1e3, 40001), np.linspace(1.0, 1e3, 40001)])
    )
    for _ in range(200):
        L = float(10 ** rng.uniform(0.1, 3))
        grid = lam[lam <= L]
        grid = np.append(grid, L)
        a = float(rng.choice([0.0, rng.uniform(0, 5)]))
        K = int(10 ** rng.uniform(0, 4))
        theta = str(rng.choice(["uniform", "last"]))
        g = float(rng.uniform(0, 1)) / (L + a)
        sup = worst_case_tradeoff(1.0, L, theta=theta, alpha=a, gamma=g, K=K)["log_kappa"][0]
        dense = frontier_spectrum(grid, alpha=a, gamma=g, Ks=[K], theta=theta)["log_kappa"][0]
        # a dense spectrum never beats the supremum, and comes close to it
        assert dense <= sup + 1e-9
        assert dense >= sup - 1e-3 * max(1.0, sup)


def test_agrees_with_the_lemmas_inside_their_regimes():
    a = worst_case_tradeoff(1.0, 10.0, alpha=[0.0, 1.0], gamma=0.05, K=[3, 1000], momentum="heavy_ball")
    b = frontier_uniform(1.0, 10.0, [0.0, 1.0], gammas=0.05, Ks=[3, 1000], momentum="heavy_ball")
    assert np.allclose(a["rho"], b["rho"], rtol=0, atol=1e-15) and np.allclose(a["delta"], b["delta"], atol=1e-15)
    a = worst_case_tradeoff(1.0, 10.0, theta="last", gamma=0.001, K=[3, 50])
    b = frontier_last(1.0, 10.0, 0.0, gammas=0.001, Ks=[3, 50])
    assert np.allclose(a["rho"], b["rho"], rtol=0, atol=1e-15) and np.allclose(a["delta"], b["delta"], atol=1e-15)


def test_maml_is_theta_2k_plus_1():
    a = worst_case_tradeoff(1.0, 10.0, theta="maml", gamma=0.001, K=[1, 7])
    b = worst_case_tradeoff(1.0, 10.0, theta="last", gamma=0.001, K=[3, 15])
    assert np.array_equal(a["rho"], b["rho"]) and a["K"].tolist() == [1, 7]


@pytest.mark.parametrize(
    "kw, needle",
    [
        (dict(gamma=0.1, K=3), "gamma < 1/(L + alpha)"),
        (dict(gamma=0.01, K=0), "K >= 1 integer"),
        (dict(gamma=0.01, K=2, alpha=-1.0), "alpha >= 0"),
        (dict(gamma=0.01, K=2, theta="custom"), "theta must be one of"),
    ],
)
def test_out_of_hypothesis_requests_name_the_condition(kw, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        worst_case_tradeoff(1.0, 10.0, **kw)
    with pytest.raises(ValueError, match="mu <= L"):
        worst_case_tradeoff(5.0, 1.0, gamma=0.01, K=2)


def test_custom_weights_have_exact_extremes():
    rng = np.random.default_rng(1)
    for _ in range(60):
        K = int(rng.integers(1, 25))
        w = rng.exponential(size=K) * (rng.uniform(size=K) < 0.6)
        w[-1] = 1.0
        L = float(10 ** rng.uniform(0.2, 2.5))
        a = float(rng.choice([0.0, rng.uniform(0, 3)]))
        g = float(rng.uniform(0, 1)) / (L + a)
        out = worst_case_tradeoff(1.0, L, theta=w, alpha=a, gamma=g)
        lam = np.linspace(1.0, L, 100001)
        vals = np.polyval(w[::-1], 1 - g * (lam + a)) * lam
        dense = np.log(vals.max() / vals.min())
        assert dense <= out["log_kappa"][0] + 1e-9 and dense >= out["log_kappa"][0] - 1e-6
        assert out["delta_source"] == ["lemma-5"]


def test_custom_weights_reduce_to_the_named_families():
    from fedtheory.algorithms.theta import Theta

    for th, fam in ((Theta.uniform(7), "uniform"), (Theta.last(9), "last")):
        a = worst_case_tradeoff(1.0, 20.0, theta=th, gamma=[0.001, 0.02, 0.045], alpha=0.5)
        b = worst_case_tradeoff(1.0, 20.0, theta=fam, gamma=[0.001, 0.02, 0.045], alpha=0.5, K=th.K)
        assert np.allclose(a["log_kappa"], b["log_kappa"], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="K\\(Theta\\) <= 64"):
        worst_case_tradeoff(1.0, 20.0, theta=np.ones(65), gamma=0.01)
