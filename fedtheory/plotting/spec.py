"""Figure specs: a figure is a function computing its plotted data; the engine does the rest.

Content files (``figures/<key>.py``) declare figures with :func:`figure`. The data function
returns ``{"params": {...}, "panels": [...]}`` in the DESIGN.md figure format; the engine adds
``id``, ``caption``, ``substitute``, ``seed`` and ``environment``, writes the JSON atomically and
draws the PNG from that JSON alone.

>>> from fedtheory.plotting.spec import figure, FigureContext, series, panel
>>> @figure(id="demo/figure-1", caption="y = x^2")
... def figure_1(ctx):
...     xs = [0.0, 1.0, 2.0]
...     return {"params": {}, "panels": [panel("y = x^2", "x", "y",
...             [series("x^2", xs, [x * x for x in xs])])]}
>>> figure_1.data(FigureContext(seed=0))["panels"][0]["series"][0]["y"]
[0.0, 1.0, 4.0]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

SERIES_TYPES = ("line", "scatter", "hist", "bar")
_FIG_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.\-]*/figure-[a-z0-9][a-z0-9_.\-]*$")


@dataclass
class FigureContext:
    """What a figure's data function receives: its seed, a generator and the tier."""

    seed: int = 0
    tier: str = "fast"
    backend: str = "numpy"
    device: str | None = None

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)


def _floats(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=float).ravel()]


def series(label: str, x: Sequence[Any], y: Sequence[Any], type: str = "line", params: dict | None = None) -> dict:
    """One plotted series. For ``hist``, ``x`` holds bin edges and ``y`` counts; for ``bar``, ``x`` holds labels."""
    if type not in SERIES_TYPES:
        raise ValueError(f"series type must be one of {SERIES_TYPES}, got {type!r}")
    x = [str(v) for v in x] if type == "bar" else _floats(x)
    y = _floats(y)
    if type == "hist":
        if len(x) != len(y) + 1:
            raise ValueError(f"hist series {label!r}: need len(edges) == len(counts) + 1, got {len(x)} and {len(y)}")
    elif len(x) != len(y):
        raise ValueError(f"series {label!r}: x and y lengths differ ({len(x)} != {len(y)})")
    return {"label": label, "type": type, "params": dict(params or {}), "x": x, "y": y}


def panel(
    title: str, xlabel: str, ylabel: str, series_list: list[dict], xscale: str = "linear", yscale: str = "linear"
) -> dict:
    """One panel (axes) of a figure."""
    for scale in (xscale, yscale):
        if scale not in ("linear", "log", "symlog"):
            raise ValueError(f"axis scale must be linear, log or symlog, got {scale!r}")
    return {
        "title": title,
        "xlabel": xlabel,
        "ylabel": ylabel,
        "xscale": xscale,
        "yscale": yscale,
        "series": list(series_list),
    }


@dataclass
class Figure:
    """A figure: id (``<paper>/figure-<n>``), caption, tier, substitute sentence and data function."""

    id: str
    caption: str
    fn: Callable[[FigureContext], dict]
    tier: str = "fast"
    substitute: str | None = None
    source: str | None = None
    requires: tuple = ()

    def __post_init__(self) -> None:
        if not _FIG_ID_RE.match(self.id):
            raise ValueError(f"figure id {self.id!r} must look like '<paper>/figure-<n>'")
        if self.tier not in ("fast", "full"):
            raise ValueError(f"figure {self.id}: tier must be fast or full, got {self.tier!r}")
        self.requires = tuple(self.requires)

    @property
    def paper(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def slug(self) -> str:
        return self.id.split("/", 1)[1]

    def data(self, ctx: FigureContext) -> dict:
        """The figure's plotted data (``params`` and ``panels``); claims about a figure call this."""
        out = self.fn(ctx)
        if set(out) - {"params", "panels"} or "panels" not in out:
            raise ValueError(f"figure {self.id}: data function must return {{'params', 'panels'}}, got {sorted(out)}")
        out.setdefault("params", {})
        return out


def figure(
    *, id: str, caption: str, tier: str = "fast", substitute: str | None = None, requires: tuple | list = ()
) -> Callable[[Callable[[FigureContext], dict]], Figure]:
    """Decorator turning a data function into a :class:`Figure`.

    ``requires``: optional capabilities (``"torch"``, ``"cuda"``, ``"dask"``) the data function needs; where
    one is missing, ``fedtheory figures`` skips the figure and says why (as ``check`` does for claims).
    """

    def wrap(fn: Callable[[FigureContext], dict]) -> Figure:
        return Figure(id=id, caption=caption, fn=fn, tier=tier, substitute=substitute, requires=tuple(requires))

    return wrap
