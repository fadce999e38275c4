"""The figure engine: spec -> data JSON -> image.

A content file declares figures with :func:`figure` (a data function returning panels of
series); :func:`run_figures` writes each figure's JSON and the PNG drawn from that JSON alone;
:func:`render_json` redraws a PNG from a saved figure JSON.

>>> from fedtheory.plotting import figure, series, panel, FigureContext
>>> @figure(id="demo/figure-1", caption="a line")
... def figure_1(ctx):
...     return {"params": {}, "panels": [panel("", "x", "y", [series("", [0, 1], [0, 1])])]}
>>> figure_1.data(FigureContext(seed=0))["panels"][0]["series"][0]["type"]
'line'
"""

from fedtheory.plotting.engine import figure_document, redraw, run_figures, write_figure
from fedtheory.plotting.render import render_json
from fedtheory.plotting.spec import Figure, FigureContext, figure, panel, series

__all__ = [
    "Figure",
    "FigureContext",
    "figure",
    "series",
    "panel",
    "render_json",
    "run_figures",
    "write_figure",
    "figure_document",
    "redraw",
]
