"""Figures of Jadbabaie, Makur & Shah, *Federated Optimization of Smooth Loss Functions*.

* Figures 1 and 2 (Appendix C, full tier): histograms of approximate ranks (77) of the gradient slices
  of trained networks, by the paper's procedure, on offline substitutes (scikit-learn's 8×8 digits for
  both MNIST and CIFAR-10; a perceptron for Figure 1, a small convolutional network for Figure 2).
* Added figures (fast tier): the oracle-complexity comparison of FedLRGD (Theorem 2) and FedAve
  (Theorem 3's program (79)) against m (Proposition 1's regime), ϵ, η and d; the timing models behind
  Definition 1; executed FedLRGD and FedAve runs priced by Definition 1.
"""

from __future__ import annotations

import math

import numpy as np

from fedtheory.plotting.spec import figure, panel, series
from fedtheory.problems.datasets import substitute_sentence
from fedtheory.symbolic import oracle_complexity as oc

# common constants of the comparison figures (the paper fixes none of them)
COMPARISON = {
    "alpha": 1.0,
    "L1": 2.0,
    "mu": 1.0,
    "L2": 1.0,
    "B": 1.0,
    "p": 10,
    "s": 10,
    "phi": 100.0,
    "tau": 1.0,
    "gap_per_p": 1.0,
    "C": 1.0,
}


def _fedave_log10(m: float, eps_over_p: float, phi: float, tau: float, C: float) -> tuple[float, float, float]:
    """(log10 of the exact optimum of (79), log10 of Theorem 3's lower and upper sandwich)."""
    prog = oc.FedAveProgram(m=m, phi=phi, tau=tau, C=C, varepsilon=eps_over_p)
    exact, _, _ = prog.exact_min()
    core = phi * tau * m * (C / eps_over_p) ** 0.75
    return math.log10(exact), math.log10(0.75 * core), math.log10(8 * core)


def _fedave_comparison_log10(m: float, epsilon: float) -> float:
    """log10 of FedAve's Γ (the exact optimum of (79)) at the comparison's constants, ε = ϵ/p."""
    c = COMPARISON
    return _fedave_log10(m, epsilon / c["p"], c["phi"], c["tau"], c["C"])[0]


#: the comparison's constants that Theorem 2's setting takes as they are (d, η, ϵ and m are the figures' axes)
_SETTING_CONSTANTS = ("p", "alpha", "L1", "mu", "L2", "B", "s", "phi")


def _fedlrgd_log10(d: int, eta: float, epsilon: float, m: float) -> float:
    """log10 of FedLRGD's Γ (Theorem 2) at the comparison's constants, with F(θ⁽⁰⁾) − F* = gap_per_p · p."""
    c = COMPARISON
    constants = {name: c[name] for name in _SETTING_CONSTANTS}
    setting = oc.FedLRGDSetting(
        d=d, eta=eta, epsilon=epsilon, initial_gap=c["gap_per_p"] * c["p"], m=int(m), **constants
    )
    return setting.log10_complexity()


@figure(
    id="fedlrgd/figure-complexity-m",
    caption="Federated oracle complexity along Proposition 1's regime (λ = β = ξ = ½, c1 = 4, c2 = 5, c3 = 1, α = 1, κ = 2, "
    "p = s = 10, φ = 100, ϵ = n^{−β}, d = ⌊log(n)^λ⌋, η = (c1 + 2α + 2)d, n = ms + r): Γ(FedLRGD) of Theorem 2 "
    "against FedAve's Γ₊ (Theorem 3's constants ¾ and 8, C = 1), and their ratio; FedLRGD wins beyond the crossover.",
)
def figure_complexity_m(ctx):
    reg = oc.Proposition1Regime()
    grid = np.linspace(0.0, 300.0, 121)
    rows = [reg.instance(g) for g in grid]
    cross_u, cross_l = reg.crossover("upper", 300.0, points=200), reg.crossover("lower", 300.0, points=200)
    lg = [r["log10_gamma_fedlrgd"] for r in rows]
    up = [r["log10_gamma_fedave_upper"] for r in rows]
    lo = [r["log10_gamma_fedave_lower"] for r in rows]
    ratio_u = [a - b for a, b in zip(lg, up)]
    ratio_l = [a - b for a, b in zip(lg, lo)]
    return {
        "params": {
            **COMPARISON,
            "lambda": reg.lam,
            "beta": reg.beta,
            "xi": reg.xi,
            "c1": reg.c1,
            "c2": reg.c2,
            "c3": reg.c3,
            "crossover_log10_m_upper": cross_u,
            "crossover_log10_m_lower": cross_l,
            "unspecified_by_paper": "all constants of the regime; d, η, ϵ tied to n as listed",
        },
        "panels": [
            panel(
                "Γ against m (log10)",
                "log10 m",
                "log10 Γ",
                [
                    series("FedLRGD (Theorem 2)", grid, lg),
                    series("FedAve Γ₊, upper constant 8", grid, up),
                    series("FedAve, lower constant 3/4", grid, lo),
                ],
            ),
            panel(
                "Γ(FedLRGD)/Γ₊(FedAve)",
                "log10 m",
                "log10 ratio",
                [
                    series("ratio (upper constant)", grid, ratio_u),
                    series("ratio (lower constant)", grid, ratio_l),
                    series("crossover (upper)", [cross_u, cross_u], [min(ratio_u), max(ratio_u)]),
                    series("ratio = 1", [grid[0], grid[-1]], [0.0, 0.0]),
                ],
            ),
        ],
    }


def _against_flat_fedave(fedlrgd_curves: list, span: list, m: float, eps: float, title: str, xlabel: str) -> dict:
    """A complexity figure's data: FedLRGD's curves of log10 Γ against ``xlabel`` and FedAve's Γ at m clients and
    accuracy ``eps``, which depends on neither η nor d (a flat line over ``span``)."""
    fedave = _fedave_comparison_log10(m, eps)
    curves = [*fedlrgd_curves, series("FedAve (program (79))", span, [fedave, fedave])]
    return {"params": {**COMPARISON, "m": m, "epsilon": eps}, "panels": [panel(title, xlabel, "log10 Γ", curves)]}


@figure(
    id="fedlrgd/figure-complexity-epsilon",
    caption="Federated oracle complexity against the accuracy ϵ at m = 10⁶ clients (d = 2, p = s = 10, φ = 100): FedLRGD "
    "(Theorem 2) for η ∈ {8d, 12d, 20d} and FedAve (exact optimum of the program (79), C = 1, ε = ϵ/p).",
)
def figure_complexity_epsilon(ctx):
    m, d = 1e6, 2
    c = COMPARISON
    eps = np.logspace(-12, 0, 49)
    cap = 9 * (c["B"] + 3) ** 4 * c["p"] / (8 * c["mu"])
    eps = eps[eps <= min(cap, c["p"])]
    out = []
    for mult in (8, 12, 20):
        out.append(
            series(
                f"FedLRGD, η = {mult}d",
                np.log10(eps),
                [_fedlrgd_log10(d, mult * d, e, m) for e in eps],
                params={"eta": mult * d},
            )
        )
    out.append(series("FedAve (program (79))", np.log10(eps), [_fedave_comparison_log10(m, e) for e in eps]))
    return {"params": {**COMPARISON, "m": m, "d": d}, "panels": [panel("Γ against ϵ", "log10 ϵ", "log10 Γ", out)]}


@figure(
    id="fedlrgd/figure-complexity-eta",
    caption="Federated oracle complexity against the Hölder smoothness η (ϵ = 10⁻³, m = 10⁶, p = s = 10, φ = 100): FedLRGD "
    "(Theorem 2, defined for η > (2α+2)d = 4d) for d ∈ {1, 2, 3}; FedAve does not depend on η.",
)
def figure_complexity_eta(ctx):
    m, eps = 1e6, 1e-3
    out = []
    for d in (1, 2, 3):
        etas = np.linspace(4 * d * 1.02, 40.0, 60)
        out.append(series(f"FedLRGD, d = {d}", etas, [_fedlrgd_log10(d, e, eps, m) for e in etas], params={"d": d}))
    return _against_flat_fedave(out, [4.0, 40.0], m, eps, "Γ against η", "η")


@figure(
    id="fedlrgd/figure-complexity-d",
    caption="Federated oracle complexity against the data dimension d with η = c·d, c ∈ {8, 12, 20} (ϵ = 10⁻³, m = 10⁶, "
    "p = s = 10, φ = 100): FedLRGD's Γ grows like exp(Θ(d log d)); FedAve's does not depend on d.",
)
def figure_complexity_d(ctx):
    m, eps = 1e6, 1e-3
    ds = np.arange(1, 31)
    out = [
        series(f"FedLRGD, η = {k}d", ds, [_fedlrgd_log10(int(d), k * d, eps, m) for d in ds], params={"c": k})
        for k in (8, 12, 20)
    ]
    return _against_flat_fedave(out, [1, 30], m, eps, "Γ against d", "d")


@figure(
    id="fedlrgd/figure-timing",
    caption="Definition 1's timing models: exact expected Type-A computation time b + E max{Y_1..Y_τm} (Y ~ Erlang(b, 1), by "
    "quadrature) against the paper's log(τm) + 2b (19), its Gumbel approximation and simulation (2000 draws); and the "
    "M/M/1 time to τm = 20 departures (ν = 2, steady state, 20000 runs) against Erlang(20, 1) (Burke).",
)
def figure_timing(ctx):
    from fedtheory.analysis import timing_models as tm

    ks = np.unique(np.round(np.logspace(0, 6, 25)).astype(int))
    panels = []
    for b in (1, 10, 100):
        exact = [b + tm.expected_max_erlang(b, int(k)) for k in ks]
        paper = [tm.paper_client_epoch_time(b, int(k)) for k in ks]
        gumb = [b + tm.gumbel_mean_approximation(b, int(k)) if k >= 2 else float("nan") for k in ks]
        ks_sim = [k for k in ks if k <= 1000]
        sim = [b + tm.simulate_max_erlang(b, int(k), 2000, ctx.rng).mean() for k in ks_sim]
        panels.append(
            panel(
                f"b = {b} gradients per client",
                "τm (active clients)",
                "expected epoch time",
                [
                    series("exact b + E max", ks, exact),
                    series("paper: log(τm) + 2b (19)", ks, paper),
                    series("Gumbel: b + γa(q) + q", ks, gumb),
                    series("simulation", ks_sim, sim, type="scatter"),
                ],
                xscale="log",
            )
        )
    S = tm.simulate_mm1_departures(20, 2.0, 20000, ctx.rng)
    counts, edges = np.histogram(S, bins=40, density=True)
    import scipy.stats

    xs = np.linspace(edges[0], edges[-1], 200)
    panels.append(
        panel(
            "M/M/1: time to 20 departures",
            "S",
            "density",
            [
                series("simulated S", edges, counts, type="hist"),
                series("Erlang(20, 1)", xs, scipy.stats.gamma(20).pdf(xs)),
            ],
        )
    )
    return {
        "params": {"b": [1, 10, 100], "simulation_draws": 2000, "mm1": {"tau_m": 20, "nu": 2.0, "runs": 20000}},
        "panels": panels,
    }


def _runs_ridge(rng):
    """Ridge regression on data in [0, 1]^{p+1} (uniform features, a noisy linear target rescaled to [0, 1]):
    FedLRGD with r = p + 1 server samples (exact: the gradient kernel has rank p + 1) and FedAve."""
    from fedtheory.algorithms.fedlrgd import run_fedave, run_fedlrgd
    from fedtheory.problems.data_smooth import RidgeLoss

    p, m, s = 10, 20, 25
    r = p + 1
    a = rng.uniform(size=(r + m * s, p))
    y = a @ rng.normal(size=p) + 0.3 * rng.normal(size=a.shape[0])
    rows = np.c_[a, (y - y.min()) / np.ptp(y)]
    server, clients = rows[:r], rows[r:].reshape(m, s, p + 1)
    loss = RidgeLoss(l2=1e-2)
    allrows = np.r_[server, clients.reshape(-1, p + 1)]
    L1 = loss.smoothness(allrows)
    Fstar = loss.objective(allrows, loss.minimizer(allrows))
    phi = COMPARISON["phi"]
    run = run_fedlrgd(loss, server, clients, S=300, L1=L1, phi=phi, seed=rng)
    pre = r * r + r * s + phi * m * r
    lrgd = series(f"FedLRGD (r = p + 1 = {r})", pre + r * np.arange(run.S + 1), np.maximum(run.loss - Fstar, 1e-16))
    fed = loss.to_federation([server] + list(clients))  # the server's samples as one more client: the same F
    out = [lrgd]
    for b in (1, 5, 20):
        ave = run_fedave(fed, b=b, T=120, step=1.0 / L1, phi=phi, seed=rng)
        cost = (b + phi * fed.n) * np.arange(ave.T + 1)
        out.append(series(f"FedAve, b = {b}, η = 1/L1", np.maximum(cost, 1.0), np.maximum(ave.loss - Fstar, 1e-16)))
    return out, {
        "r": r,
        "m": m,
        "s": s,
        "p": p,
        "l2": 1e-2,
        "L1": L1,
        "data": "a ~ U[0,1]^p, y = aᵀw + 0.3·N(0,1), w ~ N(0, I), y rescaled to [0, 1]",
    }


def _runs_logistic(rng):
    """Appendix A's soft-label logistic regression (p = 2, data in [0, 1]^3): FedLRGD for several r and FedAve."""
    from fedtheory.algorithms.fedlrgd import run_fedlrgd
    from fedtheory.problems.data_smooth import SoftLogisticLoss

    p, m, s = 2, 20, 25
    loss = SoftLogisticLoss(mu=0.1)
    a = rng.uniform(size=(400 + m * s, p))
    w_true = np.array([2.0, -3.0])
    yv = 1 / (1 + np.exp(-(a @ w_true)))  # soft labels from a logistic model
    rows = np.c_[a, yv]
    clients = rows[: m * s].reshape(m, s, p + 1)
    phi = COMPARISON["phi"]
    out = []
    for r in (3, 5, 8):
        server = rows[m * s : m * s + r]
        allrows = np.r_[server, clients.reshape(-1, p + 1)]
        L1 = loss.smoothness(allrows)
        Fstar = loss.objective(allrows, loss.minimizer(allrows))
        run = run_fedlrgd(loss, server, clients, S=300, L1=L1, phi=phi, seed=rng)
        pre = r * r + r * s + phi * m * r
        out.append(
            series(
                f"FedLRGD, r = {r}",
                pre + r * np.arange(run.S + 1),
                np.maximum(run.loss - Fstar, 1e-16),
                params={"max_G_condition": float(run.g_condition.max())},
            )
        )
    return out, {"m": m, "s": s, "p": p, "mu": 0.1, "soft_labels": "σ(aᵀ(2, −3))"}


@figure(
    id="fedlrgd/figure-runs",
    caption="Executed runs priced by Definition 1 (φ = 100, τ = 1): suboptimality F(θ) − F* against cumulative federated "
    "oracle complexity. Left: ridge regression (λ = 0.01, p = 10, synthetic data in [0, 1]^11) — FedLRGD with "
    "r = p + 1 server samples is exact (the gradient kernel has rank p + 1) and converges like GD after paying "
    "r² + rs + φmr; FedAve (LocalUpdate, Θ_{1:b}, server lr = client lr) pays b + φm per period (large b: client-drift "
    "floor). Right: Appendix A's soft-label logistic regression (p = 2): FedLRGD stalls at a floor set by its gradient "
    "approximation error, which depends on r and on the conditioning of G^(i) (not monotone at small r).",
)
def figure_runs(ctx):
    ridge, p_ridge = _runs_ridge(ctx.rng)
    logi, p_logi = _runs_logistic(ctx.rng)
    return {
        "params": {
            "phi": COMPARISON["phi"],
            "ridge": p_ridge,
            "logistic": p_logi,
            "fedave_objective": "server samples held by one extra client, so FedAve minimizes the same F",
        },
        "panels": [
            panel("ridge regression (p = 10)", "cumulative Γ", "F − F*", ridge, xscale="log", yscale="log"),
            panel("soft-label logistic (Appendix A)", "cumulative Γ", "F − F*", logi, xscale="log", yscale="log"),
        ],
    }


# --------------------------------------------------------------------------------------------
# Figures 1 and 2 (Appendix C) on substitutes
# --------------------------------------------------------------------------------------------

DIGITS_SPLIT = 1397  # training samples of the 1797 digits; the other 400 are the "test" samples

FIGURE_1_PANELS = (  # (label, hidden sizes, k, activation, optimizer, all weights)
    ("(a) K = 64, k = 30", (64,), 30, "sigmoid", "adam", False),
    ("(b) K = 64, k = 60", (64,), 60, "sigmoid", "adam", False),
    ("(c) K = 64, k = 90", (64,), 90, "sigmoid", "adam", False),
    ("(d) K = 64, k = 60, all weights", (64,), 60, "sigmoid", "adam", True),
    ("(e) K = 41, k = 60", (41,), 60, "sigmoid", "adam", False),
    ("(f) K = 82, k = 60", (82,), 60, "sigmoid", "adam", False),
    ("(g) K = 64, k = 60, RMSprop", (64,), 60, "sigmoid", "rmsprop", False),
    ("(h) K = 64, k = 60, two hidden layers", (64, 64), 60, "sigmoid", "adam", False),
    ("(i) K = 64, k = 60, ReLU", (64,), 60, "relu", "adam", False),
)
FIGURE_1_TRAINING = {"lr": 1e-3, "batch_size": 20, "epochs": 25}

FIGURE_2_PANELS = (  # (label, k, activation, optimizer)
    ("(a) k = 30", 30, "sigmoid", "adam"),
    ("(b) k = 60", 60, "sigmoid", "adam"),
    ("(c) k = 60, RMSprop", 60, "sigmoid", "rmsprop"),
    ("(d) k = 60, ReLU", 60, "relu", "adam"),
)
FIGURE_2_NETWORK = {"filters": 16, "hidden": 64}
FIGURE_2_TRAINING = {"lr": 3e-3, "batch_size": 50, "epochs": 15}


def digits_split(seed: int = 0):
    """(X_train, y_train, X_test, y_test): scikit-learn's digits, pixels in [0, 1], a seeded split."""
    from fedtheory.problems.datasets import load_dataset

    X, y = load_dataset("digits", standardize=False)
    perm = np.random.default_rng(seed).permutation(len(y))
    tr, te = perm[:DIGITS_SPLIT], perm[DIGITS_SPLIT:]
    return X[tr], y[tr], X[te], y[te]


def appendix_c_panel(
    net,
    optimizer: str,
    training: dict,
    k: int,
    all_weights: bool,
    rng,
    n_coords: int = 500,
    data=None,
    min_test_accuracy: float = 0.0,
    more_epochs: int = 3,
    max_more: int = 6,
) -> dict:
    """Train ``net`` on the digits split, then Appendix C's procedure at the trained weights.

    The statement is about *trained* networks: while the test accuracy is below ``min_test_accuracy``, training
    goes on ``more_epochs`` at a time (at most ``max_more`` times), so a network that starts slowly (a logistic
    CNN at a large rate can sit at chance for a few epochs, depending on the seed) is measured trained, not
    reported as untrained by the luck of its initialisation. ``extra_epochs`` in the result says how many were added.
    """
    import torch

    from fedtheory.models.activation_networks import appendix_c_ranks, train_classifier

    Xtr, ytr, Xte, yte = data if data is not None else digits_split()

    def test_accuracy() -> float:
        with torch.no_grad():
            return float((net(torch.as_tensor(Xte)).argmax(dim=1).numpy() == yte).mean())

    out = train_classifier(net, Xtr, ytr, optimizer=optimizer, seed=int(rng.integers(2**31)), **training)
    acc, extra = test_accuracy(), 0
    for _ in range(max_more if acc < min_test_accuracy else 0):
        out = train_classifier(
            net, Xtr, ytr, optimizer=optimizer, seed=int(rng.integers(2**31)), **{**training, "epochs": more_epochs}
        )
        acc, extra = test_accuracy(), extra + more_epochs
        if acc >= min_test_accuracy:
            break
    ranks = appendix_c_ranks(net, Xte, yte, k=k, n_coords=n_coords, all_weights=all_weights, rng=rng)
    return {
        "ranks": ranks["ranks"],
        "zero_slices": ranks["zero_slices"],
        "train_accuracy": out["train_accuracy"],
        "test_accuracy": acc,
        "p": ranks["p"],
        "eligible": ranks["eligible"],
        "extra_epochs": extra,
    }


def _hist_panel(label: str, info: dict, k: int) -> dict:
    ranks = np.asarray(info["ranks"])
    edges = np.arange(0.5, k + 1.5, 1.0)
    counts, _ = np.histogram(ranks, bins=edges)
    hi = int(max(ranks.max() if ranks.size else 1, 10)) + 1
    return panel(
        label,
        "approximate rank of M_q",
        "frequency",
        [
            series(
                "approximate ranks",
                edges[: hi + 1],
                counts[:hi],
                type="hist",
                params={
                    "k": k,
                    "train_accuracy": info["train_accuracy"],
                    "test_accuracy": info["test_accuracy"],
                    "p": info["p"],
                    "nontrivial_weights": info["eligible"],
                    "zero_slices": info["zero_slices"],
                    "ranks": [int(v) for v in ranks],
                },
            )
        ],
    )


#: how Figures 1 and 2 sample the slices: non-trivial weights |θ*_q| ≥ threshold, that many per panel, and the
#: energy share that defines the approximate rank (77)
_SLICE_SAMPLING = {"threshold": 0.005, "coordinates_per_panel": 500, "energy": 0.9}


def _rank_histogram_figure(panel_fn, labels_and_k, seed: int, share_levels, setup: dict, method: dict) -> dict:
    """The data of a rank-histogram figure: panel i by ``panel_fn(i, seed, data)`` on the digits split, labelled and
    with k as ``labels_and_k[i]``; its params are the figure's ``setup`` (network, training), the slice sampling,
    the figure's ``method`` notes, the panel seeds and a summary: each panel's test accuracy and the share of its
    slices of approximate rank ≤ each of ``share_levels``."""
    data = digits_split()
    panels, summary = [], {}
    for i, (label, k) in enumerate(labels_and_k):
        info = panel_fn(i, seed, data)
        panels.append(_hist_panel(label, info, k))
        ranks = np.asarray(info["ranks"])
        summary[label] = {"test_accuracy": info["test_accuracy"]}
        summary[label].update({f"share_le_{level}": float(np.mean(ranks <= level)) for level in share_levels})
    params = {**setup, **_SLICE_SAMPLING, **method, "panel_seeds": "(seed, panel index)", "summary": summary}
    return {"params": params, "panels": panels}


def figure_1_panel(index: int, seed: int, data=None) -> dict:
    """Panel ``index`` of Figure 1 (trained and measured with its own generator seeded by (seed, index))."""
    from fedtheory.models.activation_networks import activation_mlp

    label, hidden, k, act, opt, all_w = FIGURE_1_PANELS[index]
    net = activation_mlp(64, list(hidden), 10, activation=act, seed=seed + index)
    return appendix_c_panel(net, opt, FIGURE_1_TRAINING, k, all_w, np.random.default_rng([seed, index]), data=data)


def figure_2_panel(index: int, seed: int, data=None) -> dict:
    """Panel ``index`` of Figure 2 (its own generator seeded by (seed, index))."""
    from fedtheory.models.activation_networks import conv_net

    label, k, act, opt = FIGURE_2_PANELS[index]
    net = conv_net(side=8, activation=act, seed=seed + index, **FIGURE_2_NETWORK)
    return appendix_c_panel(net, opt, FIGURE_2_TRAINING, k, False, np.random.default_rng([seed, index]), data=data)


#: Figures 1 and 2 are trained networks on the digits substitute (minutes of training: the full tier)
_TRAINED_ON_DIGITS = {"tier": "full", "requires": ("torch",)}
FIGURE_1_SUBSTITUTE = substitute_sentence(
    "MNIST",
    "digits",
    "8×8 images, 1397 training and 400 test samples; hidden sizes scaled "
    "from 784/500/1000 to 64/41/82; batch 20 instead of 200 so the 1397 samples give ~1750 steps",
)
FIGURE_2_SUBSTITUTE = substitute_sentence(
    "CIFAR-10",
    "digits",
    "8×8 grey images instead of 32×32 colour, 16 filters and 64 dense units instead of 40 and 150, batch 50 and "
    "learning rate 3e-3 so training converges on 1397 samples",
)


@figure(
    id="fedlrgd/figure-1",
    caption="Histograms of approximate ranks (77) of the gradient slices M_q (76) of trained one-hidden-layer perceptrons "
    "(logistic activations, softmax cross-entropy, Adam) over 500 random non-trivial weights (|θ*_q| ≥ 0.005), "
    "panels (a)–(i) as in the paper: K hidden units, k test samples and k perturbations (75); (d) all weights, "
    "(g) RMSprop, (h) two hidden layers, (i) ReLU. K is scaled with the input (64 for 784; 41, 82 for 500, 1000).",
    substitute=FIGURE_1_SUBSTITUTE,
    **_TRAINED_ON_DIGITS,
)
def figure_1(ctx):
    labels_and_k = [(label, k) for label, _, k, *_ in FIGURE_1_PANELS]
    perturbation = {"perturbation": "θ* + (‖θ*‖₁/p) g, g ~ N(0, I) (75)"}
    return _rank_histogram_figure(
        figure_1_panel, labels_and_k, ctx.seed, (10, 5), {"training": FIGURE_1_TRAINING}, perturbation
    )


@figure(
    id="fedlrgd/figure-2",
    caption="Histograms of approximate ranks (77) of gradient slices of trained convolutional networks (two 3×3 convolutions, "
    "2×2 max-pooling, a dense hidden layer, a 10-way output; logistic activations, Adam) over 500 random non-trivial "
    "weights; panels (a)–(d) as in the paper: k = 30, 60, RMSprop, ReLU.",
    substitute=FIGURE_2_SUBSTITUTE,
    **_TRAINED_ON_DIGITS,
)
def figure_2(ctx):
    labels_and_k = [(label, k) for label, k, *_ in FIGURE_2_PANELS]
    setup = {"network": FIGURE_2_NETWORK, "training": FIGURE_2_TRAINING}
    return _rank_histogram_figure(figure_2_panel, labels_and_k, ctx.seed, (6, 10), setup, {})


@figure(
    requires=("torch",),
    id="fedlrgd/figure-network-runs",
    caption="A small network (2 → 6 → 2 perceptron, logistic activations, cross-entropy; two Gaussian classes clipped to "
    "[0, 1]², 10 clients × 20 samples): training loss against cumulative federated oracle complexity (φ = 100) for "
    "FedLRGD (Algorithm 1 needs no convexity to run; r server samples, ϑ^(k) = θ0 + 0.5·N(0, I), step ½) and FedAve "
    "through LocalUpdate on TorchModelFederation (b = 5, η = ½, the server's samples as one more client).",
    tier="full",
)
def figure_network_runs(ctx):
    from fedtheory.algorithms.fedlrgd import run_fedave, run_fedlrgd
    from fedtheory.models.activation_networks import NetworkLoss, activation_mlp, flat_parameters
    from fedtheory.models.federation import TorchModelFederation

    rng = ctx.rng
    m, s, phi = 10, 20, COMPARISON["phi"]
    n_total = m * s + 16
    labels = rng.integers(0, 2, size=n_total)
    centers = np.array([[0.3, 0.3], [0.7, 0.6]])
    rows = np.c_[np.clip(centers[labels] + 0.15 * rng.normal(size=(n_total, 2)), 0, 1), labels]
    clients = rows[: m * s].reshape(m, s, 3)
    net = activation_mlp(2, [6], 2, activation="sigmoid", seed=ctx.seed)
    loss = NetworkLoss(net)
    th0 = flat_parameters(net).numpy()
    out, conds = [], {}
    for r in (4, 8, 16):
        server = rows[m * s : m * s + r]
        res = run_fedlrgd(
            loss,
            server,
            clients,
            S=100,
            L1=2.0,
            phi=phi,
            theta0=th0,
            varthetas=th0[None] + 0.5 * rng.normal(size=(r, th0.size)),
        )
        pre = r * r + r * s + phi * m * r
        out.append(series(f"FedLRGD, r = {r}", pre + r * np.arange(res.S + 1), res.loss))
        conds[r] = float(res.g_condition.max())
    server = rows[m * s :]
    fed = TorchModelFederation(
        activation_mlp(2, [6], 2, activation="sigmoid", seed=ctx.seed),
        [c[:, :2] for c in clients] + [server[:, :2]],
        [c[:, 2].astype(int) for c in clients] + [server[:, 2].astype(int)],
    )
    ave = run_fedave(fed, b=5, T=100, step=0.5, phi=phi, x0=th0, backend="torch", device="cpu", seed=rng)
    out.append(series("FedAve, b = 5, η = ½", (5 + phi * fed.n) * np.arange(ave.T + 1) + 1, ave.loss))
    return {
        "params": {
            "m": m,
            "s": s,
            "phi": phi,
            "network": "2-6-2 sigmoid",
            "fedlrgd_step": 0.5,
            "max_G_condition_by_r": conds,
            "note": "FedLRGD's loss is over its own n = ms + r samples; FedAve's over the clients plus 16 server samples",
        },
        "panels": [panel("training loss against Γ", "cumulative Γ", "cross-entropy", out, xscale="log")],
    }
