"""Build hook: the wheel carries the papers' content.

The repository keeps its content at the top level (``paper_checks/``, ``verify/``, ``figures/``, loaded by path,
never imported as packages). A wheel copies those folders, every file in them (claims, figure specs, stored
counterexamples), to ``fedtheory/_content/`` so that ``fedtheory check`` and ``fedtheory figures`` work in any
directory after ``pip install`` (see ``fedtheory.content.content_root``). An editable install needs no copy: it
finds the checkout itself. Everything else is declared in ``pyproject.toml``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# Kept in step with fedtheory.content.CLAIM_DIRS + FIGURE_DIRS (tests/test_wheel.py checks both ways).
CONTENT_DIRS = ("paper_checks", "verify", "figures")
INSTALLED_CONTENT = Path("fedtheory") / "_content"
SKIPPED = {"__pycache__", ".fedtheory-cache", ".pytest_cache"}


def content_files() -> list[Path]:
    """Every file of the content folders, relative to the project root (caches and bytecode left out)."""
    found = []
    for folder in CONTENT_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT)
            if path.is_file() and not SKIPPED.intersection(rel.parts) and path.suffix != ".pyc":
                found.append(rel)
    return found


class BuildWithContent(build_py):
    """``build_py`` that also copies the content folders under ``fedtheory/_content/`` in the build tree."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for rel in content_files():
            target = Path(self.build_lib) / INSTALLED_CONTENT / rel
            self.mkpath(str(target.parent))
            self.copy_file(str(ROOT / rel), str(target), preserve_mode=False)


setup(cmdclass={"build_py": BuildWithContent})
