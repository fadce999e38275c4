"""Figures 2, 3, 4 and 8 of Yao et al., *FedHM: Efficient Federated Learning for Heterogeneous Models via
Low-rank Factorization*, rebuilt at CPU scale on a substitute.

The paper trains ResNet-18/34 on CIFAR-10/100 and Tiny-ImageNet with 20 clients, half of them per
round. Here: scikit-learn's 8×8 digits (a seeded, stratified 75/25 train/test split), 20 clients
(IID, or Dirichlet(0.5) non-IID as in Section 4.1), 10 sampled per round without replacement, mini-batches
of 16, E = 10 local SGD steps per round, a 64-64-64-64-10 ReLU network. Its [ρ, L, γ] hybrid keeps the
first and the last layer dense (as the paper's ResNets keep the stem and the classifier) and
factorizes the two 64×64 layers at rank γ·64 (a square fully connected layer at γ = 1/2 has as many
parameters as the dense one, r(m + n) = mn, unlike the paper's 3×3 convolutions, rk(m + n) = (2γ/3)·mnk²).
HeteroFL's widths are chosen so the slimmed networks are just larger than FedHM's levels (as Tables 2–3
pair 1.37M with 1.24M). Split-Mix (an ensemble of independently trained base models) is not reproduced.

Every curve is the mean of two seeded runs; runs are deterministic given the seed and shared between the figures
of one process. The substitute's levels are the paper's γ ∈ {1, 1/2, 1/4, 1/8}: for a square fully connected layer γ = 1/2
keeps as many parameters as the dense layer, so that level compresses nothing here.
"""

from __future__ import annotations

import functools

import numpy as np

from fedtheory.analysis.evaluation import accuracy
from fedtheory.plotting.spec import figure, panel, series
from fedtheory.problems.datasets import substitute_sentence

CLIENTS, PER_ROUND, BATCH, LOCAL_STEPS, LR = 20, 10, 16, 10, 0.1
ROUNDS = 40
HIDDEN = (64, 64, 64)
GAMMAS = (1.0, 0.5, 0.25, 0.125)
DIRICHLET_ALPHA = 0.5
SETTINGS = ("IID", "Non-IID")
TARGET_ACCURACY = {"IID": 0.90, "Non-IID": 0.90}
SEEDS = 2  # every curve is the mean of this many seeded runs (data split, partition, initialization, sampling)

SUBSTITUTE = substitute_sentence(
    "CIFAR-10, CIFAR-100 and Tiny-ImageNet with ResNet-18/34",
    "digits",
    "20 clients, IID or Dirichlet(0.5), 10 per round; a 64-64-64-64-10 ReLU network whose two 64×64 layers "
    "FedHM factorizes",
)
#: what every figure here declares: full tier, torch, the digits substitute
ON_SUBSTITUTE = {"tier": "full", "requires": ("torch",), "substitute": SUBSTITUTE}


@functools.lru_cache(maxsize=None)
def _data(seed: int, setting: str):
    from fedtheory.analysis.evaluation import holdout_split
    from fedtheory.problems.datasets import load_dataset, partition_dirichlet, partition_iid

    X, y = load_dataset("digits")
    train, test = holdout_split(y, 0.25, seed=seed)
    if setting == "IID":
        parts = partition_iid(len(train), CLIENTS, seed=seed)
    else:
        parts = partition_dirichlet(y[train], CLIENTS, DIRICHLET_ALPHA, seed=seed, min_size=BATCH)
    return X[train], y[train], X[test], y[test], [np.asarray(p) for p in parts]


def _network(hidden=HIDDEN, seed: int = 0):
    from fedtheory.models.networks import mlp

    return mlp(64, list(hidden), 10, seed=seed)


def _federation(net, seed: int, setting: str):
    from fedtheory.models.federation import TorchModelFederation

    Xtr, ytr, _, _, parts = _data(seed, setting)
    return TorchModelFederation(
        net, [Xtr[p] for p in parts], [ytr[p] for p in parts], p=np.full(CLIENTS, 1.0 / CLIENTS)
    )


def _layout(net, hybrid: bool = True):
    from fedtheory.algorithms.fedhm import HybridLayout

    return (
        HybridLayout.from_module(net, rho=1, keep_last_dense=True)
        if hybrid
        else HybridLayout.from_module(net, rho=0, keep_last_dense=False)
    )


def level_sizes(hybrid: bool = True) -> list[int]:
    """Parameters of each FedHM level (Table 1's counts on the substitute network)."""
    from fedtheory.algorithms.fedhm import FedHM

    net = _network()
    algo = FedHM(GAMMAS, LOCAL_STEPS, LR)
    return [algo.level_params(_layout(net, hybrid), i) for i in range(len(GAMMAS))]


def slim_params(h: int) -> int:
    """Parameters of the 64-h-h-h-10 network (three hidden layers of h units)."""
    return 64 * h + h + 2 * (h * h + h) + 10 * h + 10


def heterofl_widths() -> list[float]:
    """Width ratios whose slimmed networks are the smallest ones at least as large as FedHM's levels."""
    widths = []
    for size in level_sizes():
        h = next(h for h in range(1, HIDDEN[0] + 1) if slim_params(h) >= size)
        widths.append(h / HIDDEN[0])
    return widths


# --------------------------------------------------------------------------------------------
# the runs
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def heterogeneous_run(method: str, setting: str, seed: int, rounds: int = ROUNDS) -> dict:
    """Figure 2's fixed heterogeneous setting: client p at level p mod 4; the smallest model's accuracy per round."""
    from fedtheory.algorithms.fedhm import FedHM, run_fedhm, truncated_model
    from fedtheory.algorithms.local_update import LocalUpdate, run_local_update
    from fedtheory.algorithms.width_slimming import run_heterofl, slimming_masks

    _, _, Xte, yte, _ = _data(seed, setting)
    levels = np.arange(CLIENTS) % len(GAMMAS)
    kw = dict(batch_size=BATCH, clients_per_round=PER_ROUND, client_sampling="without_replacement", seed=seed)
    if method == "FedHM":
        net = _network(seed=seed)
        fed, layout = _federation(net, seed, setting), _layout(net)
        algo = FedHM(GAMMAS, LOCAL_STEPS, LR)
        h = run_fedhm(fed, layout, algo, fed.initial_point(), rounds, levels=levels, evaluate=False, **kw)
        small = algo.ranks(layout, len(GAMMAS) - 1)
        acc = accuracy(fed, np.stack([truncated_model(x, layout, small) for x in h.x]), Xte, yte)
        size = algo.level_params(layout, len(GAMMAS) - 1)
    elif method == "HeteroFL":
        net = _network(seed=seed)
        fed = _federation(net, seed, setting)
        masks = slimming_masks(net, heterofl_widths())
        h = run_heterofl(fed, masks, fed.initial_point(), rounds, local_steps=LOCAL_STEPS, lr=LR, levels=levels, **kw)
        acc = accuracy(fed, h.x * masks[-1], Xte, yte)
        size = int(masks[-1].sum())
    elif method == "FedAvg":  # the smallest width-slimmed network on every client (Section 4.1)
        hmin = int(round(heterofl_widths()[-1] * HIDDEN[0]))
        net = _network((hmin,) * len(HIDDEN), seed=seed)
        fed = _federation(net, seed, setting)
        h = run_local_update(fed, LocalUpdate.fedavg(LOCAL_STEPS, LR), fed.initial_point(), rounds, **kw).to_numpy()
        acc = accuracy(fed, h.x, Xte, yte)
        size = slim_params(hmin)
    else:
        raise ValueError(f"unknown method {method!r}")
    return {"accuracy": acc.tolist(), "params": int(size)}


@functools.lru_cache(maxsize=None)
def homogeneous_run(kind: str, value: float, setting: str, seed: int, rounds: int = ROUNDS) -> dict:
    """Every client trains the same model: ``kind`` = "original" (FedAvg on the full network), "low-rank" (FedHM at
    rank ratio ``value``, hybrid), "vanilla" (FedHM at ``value`` with every layer factorized), "width" (FedAvg on the
    network slimmed to ``value``). Accuracy of the deployed model per round, its parameters and MACs per sample."""
    from fedtheory.algorithms.fedhm import FedHM, run_fedhm, truncated_model
    from fedtheory.algorithms.local_update import LocalUpdate, run_local_update

    _, _, Xte, yte, _ = _data(seed, setting)
    kw = dict(batch_size=BATCH, clients_per_round=PER_ROUND, client_sampling="without_replacement", seed=seed)
    if kind in ("original", "width"):
        h_units = HIDDEN[0] if kind == "original" else int(round(value * HIDDEN[0]))
        net = _network((h_units,) * len(HIDDEN), seed=seed)
        fed = _federation(net, seed, setting)
        h = run_local_update(fed, LocalUpdate.fedavg(LOCAL_STEPS, LR), fed.initial_point(), rounds, **kw).to_numpy()
        acc = accuracy(fed, h.x, Xte, yte)
        params = slim_params(h_units)
        macs = params - (3 * h_units + 10)  # weights only (biases are additions)
    elif kind in ("low-rank", "vanilla"):
        net = _network(seed=seed)
        fed, layout = _federation(net, seed, setting), _layout(net, hybrid=kind == "low-rank")
        algo = FedHM((float(value),), LOCAL_STEPS, LR)
        h = run_fedhm(fed, layout, algo, fed.initial_point(), rounds, evaluate=False, **kw)
        ranks = algo.ranks(layout, 0)
        acc = accuracy(fed, np.stack([truncated_model(x, layout, ranks) for x in h.x]), Xte, yte)
        params = algo.level_params(layout, 0)
        macs = params - (sum(HIDDEN) + 10)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return {"accuracy": acc.tolist(), "params": int(params), "macs": int(macs)}


def communication(run: dict) -> np.ndarray:
    """Section 4.3: 2 × participants × parameters × rounds, per round (cumulative)."""
    return 2 * PER_ROUND * run["params"] * np.arange(len(run["accuracy"]))


def computation(run: dict) -> np.ndarray:
    """Section 4.3: MACs × epochs × samples × rounds; a round's local work is E steps of B samples per participant."""
    return run["macs"] * LOCAL_STEPS * BATCH * PER_ROUND * np.arange(len(run["accuracy"]))


def first_reaching(curve, level: float):
    """Index of the first round whose accuracy is ≥ level (None if never)."""
    from fedtheory.analysis.evaluation import rounds_to_reach

    t = rounds_to_reach(curve, level)
    return None if np.isinf(t) else int(t)


def _seeds(ctx) -> list[int]:
    return [int(ctx.seed) + i for i in range(SEEDS)]


def mean_run(runs: list[dict]) -> dict:
    """The mean accuracy curve of seeded runs of one model (parameters and MACs are the same for every seed)."""
    out = dict(runs[0])
    out["accuracy"] = np.mean([r["accuracy"] for r in runs], axis=0).tolist()
    out["per_seed_final"] = [r["accuracy"][-1] for r in runs]
    return out


def heterogeneous_mean(method: str, setting: str, seeds) -> dict:
    return mean_run([heterogeneous_run(method, setting, s) for s in seeds])


def homogeneous_mean(kind: str, value: float, setting: str, seeds) -> dict:
    return mean_run([homogeneous_run(kind, value, setting, s) for s in seeds])


def low_rank_label(g: float) -> str:
    return "original (γ = 1)" if g == 1.0 else f"low rank γ = 1/{int(round(1 / g))}"


# --------------------------------------------------------------------------------------------
# the figures
# --------------------------------------------------------------------------------------------

_COMMON = {
    "clients": CLIENTS,
    "per_round": PER_ROUND,
    "batch": BATCH,
    "local_steps": LOCAL_STEPS,
    "lr": LR,
    "rounds": ROUNDS,
    "seeds_averaged": SEEDS,
    "gammas": list(GAMMAS),
    "hidden": list(HIDDEN),
    "dirichlet_alpha": DIRICHLET_ALPHA,
    "optimizer": "plain SGD for every method (the paper: momentum 0.9, weight decay 1e-4)",
}


@figure(
    id="fedhm/figure-2",
    caption="Convergence of the smallest model under the fixed heterogeneous setting: test accuracy per round of FedHM's "
    "smallest hybrid model (γ = 1/8), HeteroFL's smallest slimmed network and FedAvg training that network on every "
    "client (means of two seeds).",
    **ON_SUBSTITUTE,
)
def figure_2(ctx):
    seeds = _seeds(ctx)
    panels, sizes = [], {}
    for setting in SETTINGS:
        runs = {m: heterogeneous_mean(m, setting, seeds) for m in ("FedHM", "HeteroFL", "FedAvg")}
        sizes[setting] = {m: r["params"] for m, r in runs.items()}
        panels.append(
            panel(
                f"digits, {setting}",
                "communication round",
                "top-1 test accuracy of the smallest model",
                [
                    series(
                        f"{m} ({r['params']} params)",
                        np.arange(ROUNDS + 1),
                        r["accuracy"],
                        params={"params": r["params"], "per_seed_final": r["per_seed_final"]},
                    )
                    for m, r in runs.items()
                ],
            )
        )
    return {
        "params": {
            **_COMMON,
            "heterofl_widths": heterofl_widths(),
            "levels": "client p at level p mod 4 (fixed setting)",
            "smallest_model_params": sizes,
            "tau": "inf (fixed setting)",
            "split_mix": "not reproduced",
            "seeds": seeds,
        },
        "panels": panels,
    }


def homogeneous_low_rank(setting: str, seeds) -> dict:
    """The original network (γ = 1, FedAvg) and FedHM's homogeneous low-rank networks, seed means."""
    return {
        low_rank_label(g): (
            homogeneous_mean("original", 1.0, setting, seeds)
            if g == 1.0
            else homogeneous_mean("low-rank", g, setting, seeds)
        )
        for g in GAMMAS
    }


@figure(
    id="fedhm/figure-3",
    caption="Top-1 test accuracy against communication cost (2 × participants × parameters × rounds) under the homogeneous "
    "setting: the original network and FedHM's low-rank networks (means of two seeds).",
    **ON_SUBSTITUTE,
)
def figure_3(ctx):
    seeds = _seeds(ctx)
    panels = []
    for setting in SETTINGS:
        runs = homogeneous_low_rank(setting, seeds)
        panels.append(
            panel(
                f"digits, {setting}",
                "communication cost (parameters sent)",
                "top-1 test accuracy",
                [
                    series(
                        name,
                        communication(r)[1:],
                        r["accuracy"][1:],
                        params={"params": r["params"], "per_seed_final": r["per_seed_final"]},
                    )
                    for name, r in runs.items()
                ],
                xscale="log",
            )
        )
    return {
        "params": {**_COMMON, "communication": "2 x participants x parameters x rounds (Section 4.3)", "seeds": seeds},
        "panels": panels,
    }


@figure(
    id="fedhm/figure-4",
    caption="Communication cost (a) and computation cost (b) to reach a target test accuracy T for each rank ratio γ "
    "(homogeneous setting; γ = 1 is the original network; means of two seeds).",
    **ON_SUBSTITUTE,
)
def figure_4(ctx):
    seeds = _seeds(ctx)
    comm_series, comp_series, reached = [], [], {}
    for setting in SETTINGS:
        runs = homogeneous_low_rank(setting, seeds)
        target = TARGET_ACCURACY[setting]
        labels, comm, comp = [], [], []
        for name, r in runs.items():
            k = first_reaching(r["accuracy"], target)
            labels.append("γ = 1 (original)" if name.startswith("original") else name.replace("low rank ", ""))
            comm.append(np.nan if k is None else float(communication(r)[k]))
            comp.append(np.nan if k is None else float(computation(r)[k]))
            reached[f"{setting} {name}"] = k
        comm_series.append(series(f"{setting} (T = {target:.0%})", labels, comm, type="bar", params={"target": target}))
        comp_series.append(series(f"{setting} (T = {target:.0%})", labels, comp, type="bar", params={"target": target}))
    return {
        "params": {
            **_COMMON,
            "targets": TARGET_ACCURACY,
            "rounds_to_target": reached,
            "seeds": seeds,
            "computation": "MACs x local steps x batch x participants x rounds (Section 4.3's MACs x epochs x "
            "samples x rounds; MACs = the weights of the network's layers, r(m + n) when factorized)",
            "unspecified_by_paper": "the target accuracies T (here 90%)",
        },
        "panels": [
            panel("(a) Communication cost to reach T", "rank ratio γ", "parameters sent", comm_series, yscale="log"),
            panel("(b) Computation cost on the clients to reach T", "rank ratio γ", "MACs", comp_series, yscale="log"),
        ],
    }


def final_accuracy(run: dict) -> float:
    """The mean over the last five rounds (damps round-to-round noise)."""
    from fedtheory.analysis.evaluation import tail_mean

    return tail_mean(run["accuracy"], 5)


@figure(
    id="fedhm/figure-8",
    caption="Compression methods under the homogeneous setting: final top-1 test accuracy against the parameter ratio of "
    "low-rank hybrid networks, width-slimmed networks and a vanilla low-rank network with every layer factorized "
    "(means of two seeds).",
    **ON_SUBSTITUTE,
)
def figure_8(ctx):
    seeds = _seeds(ctx)
    full = slim_params(HIDDEN[0])
    panels, finals = [], {}
    for setting in SETTINGS:
        low = list(homogeneous_low_rank(setting, seeds).values())
        # a width of 1 is the original network (already run); HeteroFL's widths pair with FedHM's levels
        width = [low[0]] + [
            low[0] if s == 1.0 else homogeneous_mean("width", s, setting, seeds) for s in heterofl_widths()[1:]
        ]
        vanilla = homogeneous_mean("vanilla", GAMMAS[-1], setting, seeds)
        finals[setting] = {
            "low_rank": [[r["params"], final_accuracy(r)] for r in low],
            "width": [[r["params"], final_accuracy(r)] for r in width],
            "vanilla": [vanilla["params"], final_accuracy(vanilla)],
        }
        panels.append(
            panel(
                f"digits, {setting}",
                "parameter ratio",
                "final top-1 test accuracy",
                [
                    series(
                        "low rank (hybrid)",
                        [r["params"] / full for r in low],
                        [final_accuracy(r) for r in low],
                        type="scatter",
                    ),
                    series(
                        "width slimming",
                        [r["params"] / full for r in width],
                        [final_accuracy(r) for r in width],
                        type="scatter",
                    ),
                    series(
                        "vanilla low rank (every layer)",
                        [vanilla["params"] / full],
                        [final_accuracy(vanilla)],
                        type="scatter",
                    ),
                ],
                xscale="log",
            )
        )
    return {
        "params": {
            **_COMMON,
            "widths": heterofl_widths(),
            "final": "mean of the last 5 rounds",
            "seeds": seeds,
            "vanilla": f"every layer factorized at γ = {GAMMAS[-1]} (the paper: every convolution at rank k)",
            "finals": finals,
        },
        "panels": panels,
    }
