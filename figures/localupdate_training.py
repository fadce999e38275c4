"""Figures 6, 11, 12 and 13 of Charles & Konečný, *Convergence and Accuracy Trade-Offs in Federated
Learning and Meta-Learning* (arXiv:2103.05032): LocalUpdate training a network, on an offline substitute.

The paper trains a CNN on FEMNIST, a ResNet-18 on CIFAR-100 and an LSTM on Shakespeare (TensorFlow
Federated). None of these can be used offline on two CPU cores, so every figure here trains a small
multilayer perceptron on scikit-learn's bundled 8×8 digits (pixels scaled to [0, 1]), held out 20 %
(stratified) as the test set, and split the rest across 30 clients by a seeded Dirichlet partition;
the ``substitute`` field of each figure says so. What is kept from the paper (Appendix E.2): the one
LocalUpdate driver with Θ = Θ_{1:K}, M = 10 clients per round sampled without replacement within a
round (independently across rounds), a seed that fixes which clients and mini-batches every
hyperparameter setting sees, batch sizes B = 20 (FEMNIST, CIFAR-100) and B = 4 (Shakespeare), server
gradient descent with no, Nesterov or heavy-ball momentum (β = 0.9), the learning-rate grids, and
the tuning rule (best average over the final rounds). What is scaled: the number of rounds, K = 10
instead of 50 for Figures 6/11 (see :data:`FIGURE_6`), and the tuning, a line search over the
paper's grid (:func:`fedtheory.analysis.evaluation.scan_grid`) instead of the full grid.

All training runs of one process are cached by their full configuration (task, seed, K, α, γ,
ServerOpt), so a claim reading several figures at one seed trains each setting once.
"""

from __future__ import annotations

import functools
import math
import time
import zlib
from dataclasses import asdict, dataclass

import numpy as np

from fedtheory.analysis.evaluation import accuracy, holdout_split, scan_grid, tail_mean
from fedtheory.plotting.spec import figure, panel, series
from fedtheory.problems.datasets import substitute_sentence

#: the learning-rate grid of Appendix E.3 and F: {10^-3, 10^-2.5, ..., 10^0.5, 10}
PAPER_LR_GRID = tuple(float(10.0**e) for e in np.arange(-3.0, 1.01, 0.5))
#: Appendix F: client learning rates of Figures 12 and 13
FIGURE_12_GAMMAS = (0.0, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
MOMENTUM_BETA = 0.9
#: rounds of the probe run: a setting whose training loss turns non-finite within them diverged
PROBE_ROUNDS = 10
#: A tuning run "makes progress" when its tail score beats the best constant predictor (test accuracy of
#: the majority class; training loss = entropy of the labels) by this much: runs whose local training
#: collapses sit within ~1 point / ~0.005 nats of it, so a margin of 5 points / 0.05 nats separates them.
PROGRESS_MARGIN = {"accuracy": 0.05, "loss": 0.05}
#: line-search patience (see scan_grid): consecutive no-progress values that end a scan over η (inner)
#: and over γ (outer, each value already η-tuned); on digits γ >= 10^0.5 collapses local training.
PATIENCE = {"eta": 2, "gamma": 3}


@dataclass(frozen=True)
class Task:
    """One stand-in task: digits split across clients, a small network, the paper's batch size.

    ``stands_for``: the paper's data set this task replaces; ``dirichlet``: concentration of the
    label split (smaller is more heterogeneous); ``hidden``/``activation``: the MLP.
    """

    stands_for: str
    batch_size: int
    dirichlet: float
    hidden: tuple = (32,)
    activation: str = "relu"
    n_clients: int = 30
    clients_per_round: int = 10
    test_fraction: float = 0.2
    model_note: str = ""


# Chosen where the paper is silent (its data sets cannot be used here). The Dirichlet concentrations
# order the tasks by heterogeneity: CIFAR-100's federated split (Reddi et al. 2020) is a hierarchical
# LDA built to be heterogeneous, FEMNIST is split by writer, Shakespeare by role; 0.3 is the most
# heterogeneous split of 1437 digits that still gives all 30 clients B = 20 samples.
FEMNIST = Task("FEMNIST", 20, 0.5, (32,), "relu", model_note="MLP 64-32-10 (ReLU) in place of the paper's 2-layer CNN")
CIFAR_100 = Task(
    "CIFAR-100",
    20,
    0.3,
    (64, 32),
    "relu",
    model_note="MLP 64-64-32-10 (ReLU) in place of the paper's ResNet-18 with group norm",
)
SHAKESPEARE = Task(
    "Shakespeare",
    4,
    1.0,
    (32,),
    "tanh",
    model_note="MLP 64-32-10 (tanh) on digit classification in place of the paper's 2-layer LSTM next-character model",
)
TASKS = {t.stands_for: t for t in (FEMNIST, CIFAR_100, SHAKESPEARE)}

#: Figures 6 and 11 (Appendix E.3), scaled. K = 10 rather than 50: a digits client holds ~48 samples,
#: so K = 10 steps of B = 20 are ~4 local epochs, the paper's K = 50 on FEMNIST's ~198 samples per
#: client ~5; K = 50 here would be 20 epochs and 5x the CPU time.
#: 60 rounds: tuned runs reach their plateau within ~40 rounds on digits; the tuning window is the last 12.
FIGURE_6 = {
    "K": 10,
    "rounds": 60,
    "tail": 12,
    "alphas": (0.0, 0.01, 0.1, 1.0),
    "servers": ("gd", "nesterov", "heavy_ball"),
    "grid": PAPER_LR_GRID,
}
#: Figures 12 and 13 (Appendix F): K = 10 as in the paper, η = 0.01 for Figure 12.
FIGURE_12 = {"K": 10, "rounds": 300, "tail": 60, "eta": 0.01, "gammas": FIGURE_12_GAMMAS}
#: Figure 13 tunes η per γ (2 to 3 full runs per γ), so it runs a third of Figure 12's horizon; tuned
#: runs are past their fast phase by then.
FIGURE_13 = {"K": 10, "rounds": 100, "tail": 20, "gammas": FIGURE_12_GAMMAS, "eta_grid": PAPER_LR_GRID}

SERVER_LABELS = {"gd": "gradient", "nesterov": "nesterov", "heavy_ball": "momentum"}  # the paper's legend


def _device(ctx) -> str:
    """Where the training runs: the context's torch device if it names one, else cuda when present."""
    import torch

    if getattr(ctx, "backend", "numpy") == "torch" and getattr(ctx, "device", None):
        return str(ctx.device)
    return "cuda" if torch.cuda.is_available() else "cpu"


def _task_seeds(task: Task, seed: int) -> dict:
    """Independent seeds for the split, the partition, the initial weights and the sampling."""
    rng = np.random.default_rng([int(seed), zlib.crc32(task.stands_for.encode())])
    split, part, init, sampling = (int(v) for v in rng.integers(0, 2**31 - 1, size=4))
    return {"split": split, "partition": part, "init": init, "sampling": sampling}


@functools.lru_cache(maxsize=16)
def prepared(task: Task, seed: int) -> dict:
    """The task's federation, initial point and held-out test set at ``seed`` (cached)."""
    from fedtheory.models.federation import TorchModelFederation
    from fedtheory.models.networks import mlp
    from fedtheory.problems.datasets import load_dataset, partition_dirichlet

    seeds = _task_seeds(task, seed)
    X, y = load_dataset("digits", standardize=False)
    train, test = holdout_split(y, task.test_fraction, seed=seeds["split"])
    parts = partition_dirichlet(
        y[train], task.n_clients, task.dirichlet, seed=seeds["partition"], min_size=max(task.batch_size, 2)
    )
    net = mlp(X.shape[1], list(task.hidden), 10, activation=task.activation, seed=seeds["init"])
    fed = TorchModelFederation(net, [X[train][p] for p in parts], [y[train][p] for p in parts])
    train_freq = np.bincount(y[train], minlength=10) / train.size
    constant_accuracy = float(np.bincount(y[test]).max() / test.size)
    constant_loss = float(-(train_freq[train_freq > 0] * np.log(train_freq[train_freq > 0])).sum())
    return {
        "federation": fed,
        "x0": fed.initial_point(),
        "test_features": X[test],
        "test_labels": y[test],
        "constant_accuracy": constant_accuracy,
        "constant_loss": constant_loss,
        # no-progress levels for tuning: PROGRESS_MARGIN better than the best constant predictor
        "accuracy_floor": constant_accuracy + PROGRESS_MARGIN["accuracy"],
        "loss_floor": constant_loss - PROGRESS_MARGIN["loss"],
        "seeds": seeds,
        "client_sizes": sorted(len(p) for p in parts),
        "n_train": int(train.size),
        "n_test": int(test.size),
    }


def _server(kind: str, eta: float):
    from fedtheory.algorithms.local_update import ServerOpt

    return ServerOpt(kind, eta, 0.0 if kind == "gd" else MOMENTUM_BETA)


@functools.lru_cache(maxsize=4096)
def train(
    task: Task,
    seed: int,
    K: int,
    alpha: float,
    gamma: float,
    kind: str,
    eta: float,
    rounds: int,
    device: str = "cpu",
    stop_on_increase: bool = False,
) -> dict:
    """One LocalUpdate run (cached): training loss F(x_t) and test accuracy per round.

    A probe of :data:`PROBE_ROUNDS` rounds (the same seed, so the same clients and batches as the
    first rounds of the full run) comes first; a setting whose loss is non-finite there has diverged
    and is not run further; with ``stop_on_increase`` (used only while tuning), neither is one whose
    loss after the probe is above its initial loss. ``diverged`` is True for a stopped run and for a
    run with any non-finite loss; ``stopped`` says why a run was stopped (None when it ran in full).
    """
    from fedtheory.algorithms.local_update import LocalUpdate, run_local_update
    from fedtheory.algorithms.theta import Theta

    data = prepared(task, seed)
    fed = data["federation"]
    algo = LocalUpdate(Theta.uniform(K), alpha, gamma, _server(kind, eta))
    start = time.perf_counter()
    kw = {
        "backend": "torch",
        "device": device,
        "batch_size": task.batch_size,
        "clients_per_round": task.clients_per_round,
        "client_sampling": "without_replacement",
        "seed": data["seeds"]["sampling"],
    }
    stopped = None
    # Threads: `fedtheory check`/`figures` run this under fedtheory.environment.blas_threads (one torch
    # thread); tiny per-client networks on shared cores are many times slower with more.
    h = run_local_update(fed, algo, data["x0"], min(PROBE_ROUNDS, rounds), **kw).to_numpy()
    if not np.all(np.isfinite(h.loss)):
        stopped = "non-finite loss within the probe"
    elif stop_on_increase and h.loss[-1] > h.loss[0]:
        stopped = "loss above its initial value after the probe"
    if stopped is None and rounds > PROBE_ROUNDS:
        h = run_local_update(fed, algo, data["x0"], rounds, **kw).to_numpy()
    acc = accuracy(fed, h.x, data["test_features"], data["test_labels"])
    loss = np.asarray(h.loss, dtype=np.float64)
    return {
        "loss": loss,
        "test_accuracy": np.asarray(acc, dtype=np.float64),
        "stopped": stopped,
        "diverged": bool(stopped is not None or not np.all(np.isfinite(loss))),
        "seconds": time.perf_counter() - start,
    }


def _curve(run: dict, key: str, rounds: int) -> np.ndarray:
    """A run's curve on rounds 0..rounds, NaN-padded after a probe stopped it."""
    out = np.full(rounds + 1, np.nan)
    v = run[key]
    out[: v.size] = v
    return out


def _score(run: dict, key: str, tail: int) -> float:
    """Mean of the last ``tail`` rounds of a curve; a diverged run scores -inf (accuracy) or +inf (loss)."""
    worst = -math.inf if key == "test_accuracy" else math.inf
    return worst if run["diverged"] else tail_mean(run[key], tail, diverged=worst)


# --------------------------------------------------------------------------------------------
# tuning (Appendix E.3 and F), as line searches over the paper's grid
# --------------------------------------------------------------------------------------------


def tune_accuracy(
    task: Task, seed: int, K: int, alpha: float, kind: str, rounds: int, tail: int, gamma_grid, eta_grid, device: str
) -> dict:
    """(γ, η) with the best mean test accuracy over the last ``tail`` rounds (Appendix E.3).

    Nested line searches over the grid: for each γ (from the largest down) the best η (from the
    largest down), each stopping at the first value not better than the best so far.
    """
    inner: dict = {}
    floor = prepared(task, seed)["accuracy_floor"]

    def by_eta(gamma: float, eta: float) -> float:
        run = train(task, seed, K, alpha, gamma, kind, eta, rounds, device, stop_on_increase=True)
        return _score(run, "test_accuracy", tail)

    def by_gamma(gamma: float) -> float:
        inner[gamma] = scan_grid(
            lambda eta: by_eta(gamma, eta), eta_grid, maximize=True, floor=floor, patience=PATIENCE["eta"]
        )
        return inner[gamma]["best_score"]

    outer = scan_grid(by_gamma, gamma_grid, maximize=True, floor=floor, patience=PATIENCE["gamma"])
    gamma = outer["best"]
    eta = inner[gamma]["best"]
    visited = [[g, e, s] for g, _ in outer["visited"] for e, s in inner[g]["visited"]]
    return {
        "gamma": gamma,
        "eta": eta,
        "score": outer["best_score"],
        "visited": visited,
        "gamma_at_window_edge": gamma in (min(gamma_grid), max(gamma_grid)),
        "eta_at_grid_edge": eta in (min(eta_grid), max(eta_grid)),
    }


def tune_eta_for_loss(task: Task, seed: int, K: int, gamma: float, rounds: int, tail: int, grid, device: str) -> dict:
    """η with the smallest mean training loss over the last ``tail`` rounds (Appendix F, Figure 13)."""
    floor = prepared(task, seed)["loss_floor"]
    res = scan_grid(
        lambda eta: _score(
            train(task, seed, K, 0.0, gamma, "gd", eta, rounds, device, stop_on_increase=True), "loss", tail
        ),
        grid,
        maximize=False,
        floor=floor,
        patience=PATIENCE["eta"],
    )
    return {
        "eta": res["best"],
        "score": res["best_score"],
        "visited": res["visited"],
        "stopped": res["stopped"],
        "eta_at_grid_edge": res["best"] in (min(grid), max(grid)),
    }


# --------------------------------------------------------------------------------------------
# data functions (claims call these)
# --------------------------------------------------------------------------------------------


def _sentence(task: Task) -> str:
    return f"{task.n_clients} clients by Dirichlet({task.dirichlet:g}) over the labels, {task.model_note}"


def _task_params(task: Task, seed: int) -> dict:
    data = prepared(task, seed)
    return {
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(task).items()},
        "dataset": "digits (scikit-learn, 8x8, pixels scaled to [0, 1])",
        "seeds": data["seeds"],
        "client_sizes": data["client_sizes"],
        "n_train": data["n_train"],
        "n_test": data["n_test"],
        "client_sampling": "M clients uniformly without replacement within a round, independently across "
        "rounds; aggregation weights n p_i / M (unbiased for sum_i p_i q^i)",
    }


def figure_6_data(ctx, *, config: dict | None = None, task: Task = FEMNIST) -> dict:
    """Test accuracy per round, tuned (γ, η): three ServerOpt at α = 0 (left), GD at several α (right).

    ``config`` overrides :data:`FIGURE_6` entries (the tests use a tiny one).
    """
    cfg = {**FIGURE_6, **(config or {})}
    device = _device(ctx)
    K, rounds, tail, grid = int(cfg["K"]), int(cfg["rounds"]), int(cfg["tail"]), tuple(cfg["grid"])
    rounds_axis = np.arange(rounds + 1)

    def curve(kind: str, alpha: float) -> dict:
        tuned = tune_accuracy(task, ctx.seed, K, alpha, kind, rounds, tail, grid, grid, device)
        run = train(task, ctx.seed, K, alpha, tuned["gamma"], kind, tuned["eta"], rounds, device)
        return {"tuned": tuned, "acc": _curve(run, "test_accuracy", rounds), "loss": _curve(run, "loss", rounds)}

    left, right = [], []
    for kind in cfg["servers"]:
        c = curve(kind, 0.0)
        p = {
            "server": kind,
            "beta": 0.0 if kind == "gd" else MOMENTUM_BETA,
            "alpha": 0.0,
            "gamma": c["tuned"]["gamma"],
            "eta": c["tuned"]["eta"],
            "tail_mean_test_accuracy": c["tuned"]["score"],
            "visited_gamma_eta_score": c["tuned"]["visited"],
        }
        left.append(series(SERVER_LABELS[kind], rounds_axis, c["acc"], params=p))
    for alpha in cfg["alphas"]:
        c = curve("gd", float(alpha))
        p = {
            "server": "gd",
            "alpha": float(alpha),
            "gamma": c["tuned"]["gamma"],
            "eta": c["tuned"]["eta"],
            "tail_mean_test_accuracy": c["tuned"]["score"],
            "visited_gamma_eta_score": c["tuned"]["visited"],
        }
        right.append(series(f"α = {alpha:g}", rounds_axis, c["acc"], params=p))
    params = {
        "stands_for": "FEMNIST (Figures 6 and 11 of the paper)",
        "task": _task_params(task, ctx.seed),
        "theta": f"Theta_{{1:{K}}}",
        "K": K,
        "paper_K": 50,
        "rounds": rounds,
        "tail_rounds": tail,
        "tuning": "gamma, eta over the paper's grid {10^-3, 10^-2.5, ..., 10}; selected by the best mean test "
        "accuracy over the last tail_rounds rounds (the paper: last 100 rounds); nested line searches "
        "from the largest value down, each stopping at the first value not better than the best so far",
        "grid": list(grid),
        "momentum_beta": MOMENTUM_BETA,
        "alphas": [float(a) for a in cfg["alphas"]],
        "alphas_chosen": "the paper does not list its alpha values in the text; chosen to span 1/(gamma K) scales",
        "probe_rounds": PROBE_ROUNDS,
        "device": device,
        "backend": "torch",
    }
    return {
        "params": params,
        "panels": [
            panel("Server momentum, α = 0", "communication round", "test accuracy", left),
            panel("No momentum, varying α", "communication round", "test accuracy", right),
        ],
    }


def _fig12_panel(ctx, task: Task, cfg: dict, device: str, tuned_eta: bool) -> tuple[dict, dict]:
    K, rounds, tail = int(cfg["K"]), int(cfg["rounds"]), int(cfg["tail"])
    rounds_axis = np.arange(rounds + 1)
    lines, runs = [], []
    for gamma in cfg["gammas"]:
        gamma = float(gamma)
        if tuned_eta:
            tuned = tune_eta_for_loss(task, ctx.seed, K, gamma, rounds, tail, tuple(cfg["eta_grid"]), device)
            eta = tuned["eta"]
        else:
            tuned, eta = None, float(cfg["eta"])
        run = train(task, ctx.seed, K, 0.0, gamma, "gd", eta, rounds, device)
        loss = _curve(run, "loss", rounds)
        info = {
            "gamma": gamma,
            "eta": eta,
            "diverged": run["diverged"],
            "tail_mean_train_loss": _score(run, "loss", tail),
        }
        if tuned is not None:
            info["visited_eta_score"] = tuned["visited"]
        if run["diverged"]:
            info["train_loss"] = loss.tolist()  # kept in params; omitted from the plot as in the paper
        else:
            lines.append(series(f"γ = {gamma:g}", rounds_axis, loss, params=info))
        runs.append(info)
    return (
        panel(
            f"({'abc'[list(TASKS).index(task.stands_for)]}) stand-in for {task.stands_for}",
            "communication round",
            "training loss",
            lines,
            yscale="log",
        ),
        {"task": _task_params(task, ctx.seed), "runs": runs},
    )


def _figure_12_13(ctx, cfg: dict, tasks, tuned_eta: bool) -> dict:
    device = _device(ctx)
    panels, per_task = [], []
    for task in tasks:
        p, info = _fig12_panel(ctx, task, cfg, device, tuned_eta)
        panels.append(p)
        per_task.append(info)
    params = {
        "theta": f"Theta_{{1:{cfg['K']}}}",
        "K": int(cfg["K"]),
        "alpha": 0.0,
        "server": "gd (no momentum)",
        "rounds": int(cfg["rounds"]),
        "tail_rounds": int(cfg["tail"]),
        "gammas": [float(g) for g in cfg["gammas"]],
        "probe_rounds": PROBE_ROUNDS,
        "device": device,
        "backend": "torch",
        "panels": per_task,
        "diverged": "a run whose training loss is non-finite is omitted from the plot (as in the paper) and "
        "kept in params with diverged = true",
    }
    if tuned_eta:
        params["eta_tuning"] = (
            "eta over the paper's grid {10^-3, 10^-2.5, ..., 10}, selected by the smallest mean "
            "training loss over the last tail_rounds rounds (the paper: last 100); line search "
            "from the largest value down, stopping at the first value not better than the best"
        )
        params["eta_grid"] = [float(e) for e in cfg["eta_grid"]]
    else:
        params["eta"] = float(cfg["eta"])
    return {"params": params, "panels": panels}


def figure_12_data(ctx, *, config: dict | None = None, tasks: tuple | None = None) -> dict:
    """Training loss per round for each client learning rate γ, η = 0.01 fixed (Appendix F); ``tasks``
    default to the three stand-ins (FEMNIST, CIFAR-100, Shakespeare)."""
    return _figure_12_13(ctx, {**FIGURE_12, **(config or {})}, tasks or tuple(TASKS.values()), tuned_eta=False)


def figure_13_data(ctx, *, config: dict | None = None, tasks: tuple | None = None) -> dict:
    """Training loss per round for each client learning rate γ, η tuned per γ (Appendix F); ``tasks``
    as in :func:`figure_12_data`."""
    return _figure_12_13(ctx, {**FIGURE_13, **(config or {})}, tasks or tuple(TASKS.values()), tuned_eta=True)


#: what every figure here declares: networks trained with torch, the full tier
_TRAINED_ON_DIGITS = {"tier": "full", "requires": ("torch",)}
_FIG6_SUB = substitute_sentence("FEMNIST", "digits", _sentence(FEMNIST) + "; 20 % of digits held out as the test set")
_FIG12_SUB = substitute_sentence(
    "FEMNIST, CIFAR-100 and Shakespeare",
    "digits",
    "one panel per paper data set: "
    + "; ".join(f"{t.stands_for}: {_sentence(t)}, B = {t.batch_size}" for t in TASKS.values()),
)


@figure(
    id="localupdate/figure-6",
    **_TRAINED_ON_DIGITS,
    substitute=_FIG6_SUB,
    caption="Test accuracy of LocalUpdate with Θ = Θ_{1:K} (K = 10 here, 50 in the paper) with tuned learning "
    "rates γ, η. (Left) Varying types of server momentum, α = 0. (Right) No momentum and varying α. "
    "Substitute for FEMNIST: digits across 30 clients, M = 10 per round, B = 20.",
)
def figure_6(ctx):
    """Figure 6 of the paper (Section 6)."""
    return figure_6_data(ctx)


@figure(
    id="localupdate/figure-11",
    **_TRAINED_ON_DIGITS,
    substitute=_FIG6_SUB,
    caption="Figure 6 re-plotted (Appendix E.3): test accuracy of LocalUpdate with tuned learning rates. "
    "(Left) Varying types of server momentum, α = 0. (Right) No momentum and varying α. Computed at "
    "this figure's own seed, so it is an independent replicate of Figure 6 (another client split, "
    "initialization and client sampling) rather than the same curves.",
)
def figure_11(ctx):
    """Figure 11 of the paper: Figure 6's experiment, here at its own seed."""
    return figure_6_data(ctx)


@figure(
    id="localupdate/figure-12",
    **_TRAINED_ON_DIGITS,
    substitute=_FIG12_SUB,
    caption="Training loss of LocalUpdate with α = 0, Θ = Θ_{1:10}, varying client learning rate γ, and "
    "ServerOpt gradient descent with learning rate η = 0.01 and no momentum; diverged runs omitted. "
    "Panels (a), (b), (c) stand in for FEMNIST, CIFAR-100 and Shakespeare.",
)
def figure_12(ctx):
    """Figure 12 of the paper (Appendix F)."""
    return figure_12_data(ctx)


@figure(
    id="localupdate/figure-13",
    **_TRAINED_ON_DIGITS,
    substitute=_FIG12_SUB,
    caption="Training loss of LocalUpdate with α = 0, Θ = Θ_{1:10}, varying client learning rate γ, and "
    "ServerOpt gradient descent with tuned server learning rate η. Panels (a), (b), (c) stand in "
    "for FEMNIST, CIFAR-100 and Shakespeare.",
)
def figure_13(ctx):
    """Figure 13 of the paper (Appendix F)."""
    return figure_13_data(ctx)
