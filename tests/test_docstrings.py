"""Every docstring example in the library runs and gives the output it shows."""
import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import fedtheory

MODULES = sorted(m.name for m in pkgutil.walk_packages(fedtheory.__path__, "fedtheory."))
NEEDS_TORCH = {"fedtheory.backends.torch_backend"}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    if name in NEEDS_TORCH and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
