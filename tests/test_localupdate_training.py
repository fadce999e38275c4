"""Figures 6/11/12/13 of localupdate on the digits substitute: tiny versions of the data functions, the
evaluation helpers, and the claim measurements on hand-made figure data."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")

ROOT = Path(__file__).resolve().parent.parent
TINY_6 = {
    "K": 2,
    "rounds": 4,
    "tail": 2,
    "servers": ("gd", "nesterov", "heavy_ball"),
    "alphas": (0.0, 0.1),
    "grid": (0.1, 1.0),
}
TINY_12 = {"K": 2, "rounds": 4, "tail": 2, "gammas": (0.0, 0.1, 1e300)}
TINY_13 = {"K": 2, "rounds": 4, "tail": 2, "gammas": (0.0, 0.1), "eta_grid": (0.1, 1.0)}


def _figures():
    from fedtheory.content import load_module

    return load_module(ROOT / "figures" / "localupdate_training.py")


def _claims():
    from fedtheory.content import load_module

    return load_module(ROOT / "paper_checks" / "localupdate" / "training_figures.py")


def _document(fig, fn, seed=3):
    """The full figure JSON document (validated against figure.schema.json by the engine)."""
    from fedtheory.environment import blas_threads
    from fedtheory.plotting.engine import figure_document
    from fedtheory.plotting.spec import Figure, FigureContext

    tiny = Figure(id=fig.id, caption=fig.caption, fn=fn, tier=fig.tier, substitute=fig.substitute)
    with blas_threads():  # as `fedtheory figures` runs it: one thread for tiny networks
        return figure_document(tiny, FigureContext(seed=seed, tier="full"))


def _fresh(m):
    m.train.cache_clear()
    m.prepared.cache_clear()


def test_figure_6_tiny_is_valid_and_reproducible():
    m = _figures()
    _fresh(m)
    doc = _document(m.figure_6, lambda ctx: m.figure_6_data(ctx, config=TINY_6))
    assert doc["substitute"].startswith("Substitute data: the paper used FEMNIST")
    left, right = doc["panels"]
    assert [s["label"] for s in left["series"]] == ["gradient", "nesterov", "momentum"]
    assert [s["label"] for s in right["series"]] == ["α = 0", "α = 0.1"]
    for s in left["series"] + right["series"]:
        assert len(s["x"]) == TINY_6["rounds"] + 1
        assert s["params"]["gamma"] in TINY_6["grid"] and s["params"]["eta"] in TINY_6["grid"]
        assert all(v is None or 0.0 <= v <= 1.0 for v in s["y"])
    params = doc["params"]
    assert params["task"]["stands_for"] == "FEMNIST" and params["task"]["n_clients"] == 30
    assert sum(params["task"]["client_sizes"]) == params["task"]["n_train"]
    assert min(params["task"]["client_sizes"]) >= params["task"]["batch_size"]
    _fresh(m)  # same seed, nothing cached: the same numbers
    again = _document(m.figure_6, lambda ctx: m.figure_6_data(ctx, config=TINY_6))
    assert again["panels"] == doc["panels"]


def test_seeds_change_the_split_and_the_sampling():
    m = _figures()
    a, b = m.prepared(m.FEMNIST, 1), m.prepared(m.FEMNIST, 2)
    assert a["seeds"] != b["seeds"] and a["client_sizes"] != b["client_sizes"]
    assert a["n_train"] + a["n_test"] == 1797
    # one seed fixes which clients and batches every setting sees: two settings differ only by their γ
    r1 = m.train(m.FEMNIST, 1, 2, 0.0, 0.0, "gd", 0.1, 3)
    r2 = m.train(m.FEMNIST, 1, 2, 0.0, 1e-12, "gd", 0.1, 3)
    assert np.allclose(r1["loss"], r2["loss"], rtol=1e-9)


def test_figure_12_omits_diverged_runs_and_13_tunes_eta():
    m = _figures()
    doc = _document(m.figure_12, lambda ctx: m.figure_12_data(ctx, config=TINY_12, tasks=(m.FEMNIST, m.CIFAR_100)))
    assert len(doc["panels"]) == 2 and doc["params"]["eta"] == 0.01
    for panel, info in zip(doc["panels"], doc["params"]["panels"]):
        plotted = [s["params"]["gamma"] for s in panel["series"]]
        diverged = [r["gamma"] for r in info["runs"] if r["diverged"]]
        assert 1e300 in diverged and 1e300 not in plotted and {0.0, 0.1} <= set(plotted)
    assert doc["params"]["panels"][1]["task"]["hidden"] == [64, 32]
    doc13 = _document(m.figure_13, lambda ctx: m.figure_13_data(ctx, config=TINY_13, tasks=(m.SHAKESPEARE,)))
    assert doc13["params"]["panels"][0]["task"]["batch_size"] == 4
    runs = doc13["params"]["panels"][0]["runs"]
    assert all(r["eta"] in TINY_13["eta_grid"] and r["visited_eta_score"] for r in runs)


def test_accuracy_matches_a_forward_pass_and_nan_for_diverged_rows():
    import torch

    from fedtheory.analysis.evaluation import accuracy, cross_entropy, holdout_split

    m = _figures()
    data = m.prepared(m.FEMNIST, 0)
    fed, x0 = data["federation"], data["x0"]
    Xt, yt = data["test_features"], data["test_labels"]
    torch.nn.utils.vector_to_parameters(torch.as_tensor(x0), fed.module.parameters())
    with torch.no_grad():
        logits = fed.module(torch.as_tensor(Xt))
    expected = float((logits.argmax(1).numpy() == yt).mean())
    expected_ce = float(torch.nn.functional.cross_entropy(logits, torch.as_tensor(yt)))
    assert accuracy(fed, x0, Xt, yt) == pytest.approx(expected, abs=0)
    assert cross_entropy(fed, x0, Xt, yt) == pytest.approx(expected_ce, rel=1e-12)
    rows = accuracy(fed, np.stack([x0, np.full_like(x0, np.inf)]), Xt, yt)
    assert rows[0] == pytest.approx(expected) and math.isnan(rows[1])
    tr, te = holdout_split(np.repeat(np.arange(10), 10), 0.2, seed=0)
    assert len(te) == 20 and len(np.intersect1d(tr, te)) == 0


def test_scan_grid_and_tail_mean_bad_input():
    from fedtheory.analysis.evaluation import scan_grid, tail_mean

    with pytest.raises(ValueError, match="window"):
        tail_mean([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="at least one value"):
        scan_grid(lambda v: v, [])
    seen = []
    r = scan_grid(lambda v: seen.append(v) or (-math.inf if v > 1 else -abs(v - 0.1)), [0.01, 0.1, 1.0, 10.0])
    assert r["best"] == 0.1 and seen == [10.0, 1.0, 0.1, 0.01]


def _panel(title, curves):
    from fedtheory.plotting.spec import panel, series

    return panel(
        title,
        "round",
        "loss",
        [series(f"γ = {g:g}", np.arange(len(c)), c, params={"gamma": g}) for g, c in curves.items()],
    )


def test_claim_measurements_on_hand_made_curves():
    c = _claims()
    t = np.arange(61, dtype=float)
    slow_low = 2.0 * np.exp(-t / 20) + 0.1  # small γ: slower, ends lower
    fast_high = 2.0 * np.exp(-t / 5) + 0.3  # large γ: faster, ends higher
    crossing = {"params": {"tail_rounds": 10}, "panels": [_panel("p", {0.0: slow_low, 0.1: fast_high})]}
    ok, measured = c.crossing_measurements(crossing, 10)
    assert ok and measured["p"]["gamma_high"] == 0.1
    ok, _ = c.monotone_tail_measurements({"panels": [_panel("a", {0.0: slow_low, 0.1: fast_high})] * 2}, 10)
    assert ok
    # a mere change of speed along one curve never crosses
    speed_only = {"panels": [_panel("p", {0.0: 2.0 * np.exp(-t / 20) + 0.1, 0.1: 2.0 * np.exp(-t / 5) + 0.1})]}
    assert not c.crossing_measurements(speed_only, 10)[0]
    ok, _ = c.monotone_tail_measurements({"panels": [_panel("a", {0.0: fast_high, 0.1: slow_low})] * 2}, 10)
    assert not ok
