"""Claim and figure ids never change: the content's ids are exactly the lists in tests/data (written from `main`
before the papers' checks were split into packages by section). A new claim adds its id to the list."""

from pathlib import Path

from fedtheory.content import load_claims, load_figures

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def _listed(name: str) -> set[str]:
    return set((DATA / name).read_text().split())


def test_claim_ids_are_exactly_the_listed_ones():
    ids = [c.id for c in load_claims([str(ROOT / "paper_checks"), str(ROOT / "verify")])]
    assert len(ids) == len(set(ids))
    listed = _listed("claim_ids.txt")
    assert set(ids) == listed, {"new": sorted(set(ids) - listed), "gone": sorted(listed - set(ids))}


def test_figure_ids_are_exactly_the_listed_ones():
    ids = {f.id for f in load_figures([str(ROOT / "figures")])}
    listed = _listed("figure_ids.txt")
    assert ids == listed, {"new": sorted(ids - listed), "gone": sorted(listed - ids)}
