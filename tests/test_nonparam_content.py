"""The nonparam content files: figure data is well formed, every fast claim is fast-tier, the inventory is exact."""

from pathlib import Path

import numpy as np
import pytest

from fedtheory.content import load_module, module_claims
from fedtheory.plotting.spec import Figure, FigureContext

ROOT = Path(__file__).resolve().parents[1]
FIGS = load_module(ROOT / "figures" / "nonparam.py")


@pytest.mark.parametrize(
    "name,scale",
    [
        ("figure_1_data", "small"),
        ("figure_2_data", "small"),
        ("figure_4_data", "small"),
        ("figure_6_data", "paper"),
        ("rate_figure_data", "small"),
    ],
)
def test_figure_data_is_well_formed(name, scale):
    data = getattr(FIGS, name)(0, scale)
    assert set(data) == {"params", "panels"} and data["panels"]
    for panel in data["panels"]:
        assert panel["series"]
        for s in panel["series"]:
            x, y = np.asarray(s["x"], dtype=float), np.asarray(s["y"], dtype=float)
            assert x.shape == y.shape and np.all(np.isfinite(y))


def test_figures_are_registered_with_paper_ids():
    figs = [v for v in vars(FIGS).values() if isinstance(v, Figure)]
    ids = sorted(f.id for f in figs)
    assert ids == sorted([f"nonparam/figure-{i}" for i in range(1, 7)] + ["nonparam/figure-sobolev-rate"])
    assert {f.id for f in figs if f.tier == "full"} == {"nonparam/figure-2", "nonparam/figure-3", "nonparam/figure-5"}


def test_figure_spec_runs_through_its_context():
    fig = FIGS.figure_6
    assert fig.data(FigureContext(seed=0))["params"]["M"] == 20


def test_every_numbered_label_has_a_fast_tier_claim():
    base = load_module(ROOT / "paper_checks" / "nonparam")
    claims = {}
    for path in sorted((ROOT / "paper_checks" / "nonparam").glob("[!_]*.py")):
        claims.update({c.id: c for c in module_claims(load_module(path)) if c.paper == "nonparam"})
    for label in base.PAPER_LABELS:
        entry = base.INVENTORY[label]
        assert isinstance(entry, list), f"{label} has no claim"
        assert any(claims[cid].tier == "fast" for cid in entry), f"{label} has no fast-tier claim"
