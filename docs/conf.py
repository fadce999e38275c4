"""Sphinx configuration of the fedtheory documentation (``python -m sphinx -W -b html docs OUT``).

Prose is MyST Markdown; the API reference is autodoc over the library's docstrings; the command-line reference
is generated from the parser (``_ext/cli_reference.py``). The build fetches nothing from the network.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # the fedtheory of this checkout, also when it is not installed

import fedtheory  # noqa: E402

project = "fedtheory"
author = "fedtheory developers"
copyright = "2026, fedtheory developers"
release = version = fedtheory.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "cli_reference", "findings"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_inherit_docstrings = False  # pytest's own docstrings (the plugin's items) are not ours to render
napoleon_google_docstring = False  # numpy-style "Parameters" sections (fedtheory.certify.probe.probe)
autodoc_typehints = "none"  # the signatures are in the docstrings' examples; annotations clutter them
autodoc_mock_imports = ["torch"]  # optional backend: the API reference builds without it

try:  # the docs extra's theme; the built-in one where it is absent
    import furo  # noqa: F401

    html_theme = "furo"
except ImportError:
    html_theme = "alabaster"
html_title = f"fedtheory {release}"
html_static_path = []
