"""Every docstring example in the library runs and gives the output it shows.

A module whose examples need torch says so with ``__doctest_requires__ = ("torch",)``, or imports torch
itself; without torch those are skipped (CI installs torch, so there they run).
"""

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import fedtheory

MODULES = sorted(m.name for m in pkgutil.walk_packages(fedtheory.__path__, "fedtheory."))
HAS_TORCH = importlib.util.find_spec("torch") is not None


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == "torch" and not HAS_TORCH:
            pytest.skip(f"{name} imports torch, which is not installed")
        raise
    if not HAS_TORCH and "torch" in getattr(module, "__doctest_requires__", ()):
        pytest.skip(f"{name}'s examples need torch, which is not installed")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
