"""Every paper's inventory lists every numbered label of the paper, each covered by claims or a reason."""

from pathlib import Path

import pytest

from fedtheory.claims.inventory import inventory_problems

from fedtheory.content import is_paper_package

# A paper package <key>/ (its __init__.py) or a file <key>.py holds a paper's inventory; <key>_<part>.py files
# beside it hold more of its claims.
PAPER_CHECKS = Path(__file__).resolve().parents[1] / "paper_checks"
PAPER_FILES = sorted(
    [p for p in PAPER_CHECKS.glob("[!_]*.py") if "_" not in p.stem]
    + [p for p in PAPER_CHECKS.iterdir() if is_paper_package(p)]
)


def test_there_are_paper_files():
    assert PAPER_FILES, "paper_checks/ holds no paper file"


@pytest.mark.parametrize("path", PAPER_FILES, ids=lambda p: p.stem)
def test_inventory_is_complete(path):
    assert inventory_problems(path) == []
