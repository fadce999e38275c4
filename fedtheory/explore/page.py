"""The interactive page: one standalone HTML file, JavaScript inlined, no network needed.

Sliders set μ, L/μ, α, γ, K, C, D, n and T; selects choose the Θ family, the server, the class of
federations (d = 1, commuting, general d ≥ 2) and the swept hyperparameter. The page recomputes, in
JavaScript, the class-wide κ, ρ (Table 2), Lemma 12's Δ and the guarantee of the chosen class — the same
closed forms, in the same log-space arrangement, as :func:`fedtheory.analysis.pareto.worst_case_tradeoff`
and :func:`fedtheory.analysis.guarantees.local_update_guarantee`; like them it shows no number where no
verified statement gives one (d ≥ 2 at K(Θ) > 1) — and redraws the (ρ, valid floor) frontier as SVG.
``window.fedtheoryCompute(params)`` is exposed so the tests can compare it with the Python API.

>>> html = page_html()
>>> "fedtheoryCompute" in html and "<script src" not in html and "http://" not in html
True
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["page_html", "write_page"]


def page_html() -> str:
    """The page's HTML text."""
    return resources.files("fedtheory.explore").joinpath("page.html").read_text(encoding="utf-8")


def write_page(path: str | Path) -> Path:
    """Write the page to ``path`` atomically (parent directories created); return the path.

    >>> import tempfile, pathlib
    >>> p = write_page(pathlib.Path(tempfile.mkdtemp()) / "explore.html")
    >>> p.stat().st_size > 5000
    True
    """
    from fedtheory.sweep import atomic_writer

    path = Path(path)
    if path.exists() and path.is_dir():
        raise ValueError(f"{path} is a directory; give a file name such as {path / 'explore.html'}")
    with atomic_writer(path) as f:
        f.write(page_html())
    return path
