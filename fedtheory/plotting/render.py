"""Draw a figure's PNG from its data JSON alone.

The figure JSON (DESIGN.md, "The command line") is the single source of what is plotted: this
module reads nothing else -- no figure spec, no content file, no library computation -- so anyone
holding ``<slug>.json`` can redraw ``<slug>.png``. Rendering uses matplotlib's object-oriented API
on the Agg canvas (never pyplot, so no global state and no display is touched), a fixed dpi and
no timestamp metadata, so the same JSON gives byte-identical PNGs on the same matplotlib.

>>> import os, tempfile
>>> doc = {"id": "demo/figure-1", "caption": "", "substitute": None, "params": {},
...        "panels": [{"title": "t", "xlabel": "x", "ylabel": "y", "xscale": "linear",
...                    "yscale": "log", "series": [{"label": "a", "type": "line", "params": {},
...                                                 "x": [1.0, 2.0], "y": [1.0, 10.0]}]}]}
>>> png = os.path.join(tempfile.mkdtemp(), "figure-1.png")
>>> render_json(doc, png)
>>> open(png, "rb").read(8) == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import math
import os
import textwrap
from numbers import Real
from typing import Any

import numpy as np

SERIES_TYPES = ("line", "scatter", "hist", "bar")
SCALES = ("linear", "log", "symlog")
DPI = 100
PANEL_SIZE = (5.0, 4.0)  # inches per panel: readable at DPI without a huge file
MAX_COLUMNS = 3


# Strict JSON has no inf/nan: the engine writes null (a gap), and the schema also admits these strings.
NONFINITE = ("nan", "inf", "-inf", "NaN", "Infinity", "-Infinity")


def _is_number(v: Any) -> bool:
    # bools are ints in Python but never plotted values.
    return v is None or v in NONFINITE or (isinstance(v, Real) and not isinstance(v, bool))


def check_series(s: Any, where: str = "series") -> None:
    """Raise ValueError unless ``s`` is a well-formed series of the figure JSON.

    >>> check_series({"label": "a", "type": "hist", "params": {}, "x": [0, 1, 2], "y": [3, 4]})
    >>> check_series({"label": "a", "type": "pie", "params": {}, "x": [], "y": []})
    Traceback (most recent call last):
    ...
    ValueError: series: type must be one of ('line', 'scatter', 'hist', 'bar'), got 'pie'
    """
    if not isinstance(s, dict):
        raise ValueError(f"{where}: must be an object, got {type(s).__name__}")
    missing = [k for k in ("label", "type", "x", "y") if k not in s]
    if missing:
        raise ValueError(f"{where}: missing keys {missing}")
    kind = s["type"]
    if kind not in SERIES_TYPES:
        raise ValueError(f"{where}: type must be one of {SERIES_TYPES}, got {kind!r}")
    x, y = s["x"], s["y"]
    if not isinstance(x, (list, tuple)) or not isinstance(y, (list, tuple)):
        raise ValueError(f"{where} {s['label']!r}: x and y must be lists")
    if kind == "bar":
        if not all(isinstance(v, str) for v in x):
            raise ValueError(f"{where} {s['label']!r}: bar x must hold string labels")
    elif not all(_is_number(v) for v in x):
        raise ValueError(f"{where} {s['label']!r}: x must hold numbers")
    if not all(_is_number(v) for v in y):
        raise ValueError(f"{where} {s['label']!r}: y must hold numbers")
    if kind == "hist":
        if len(x) != len(y) + 1:
            raise ValueError(
                f"{where} {s['label']!r}: hist needs len(x) (bin edges) == len(y) (counts) + 1, "
                f"got {len(x)} and {len(y)}"
            )
    elif len(x) != len(y):
        raise ValueError(f"{where} {s['label']!r}: x and y lengths differ ({len(x)} != {len(y)})")


def check_document(data: Any) -> None:
    """Raise ValueError unless ``data`` has the shape :func:`render_json` draws.

    This is the structural check both the engine (before writing) and the renderer (before
    drawing) apply; the JSON Schema in ``fedtheory.schemas`` is the published contract.

    >>> check_document({"id": "demo/figure-1", "panels": []})
    Traceback (most recent call last):
    ...
    ValueError: figure demo/figure-1: needs at least one panel
    """
    if not isinstance(data, dict):
        raise ValueError(f"figure JSON must be an object, got {type(data).__name__}")
    fid = data.get("id", "?")
    panels = data.get("panels")
    if not isinstance(panels, list) or not panels:
        raise ValueError(f"figure {fid}: needs at least one panel")
    for i, p in enumerate(panels):
        if not isinstance(p, dict):
            raise ValueError(f"figure {fid} panel {i}: must be an object")
        for axis in ("xscale", "yscale"):
            if p.get(axis, "linear") not in SCALES:
                raise ValueError(f"figure {fid} panel {i}: {axis} must be one of {SCALES}, got {p.get(axis)!r}")
        if not isinstance(p.get("series"), list):
            raise ValueError(f"figure {fid} panel {i}: 'series' must be a list")
        for j, s in enumerate(p["series"]):
            check_series(s, where=f"figure {fid} panel {i} series {j}")
    sub = data.get("substitute")
    if sub is not None and not isinstance(sub, str):
        raise ValueError(f"figure {fid}: substitute must be null or a sentence, got {sub!r}")


def _floats(values: list) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)  # float("-inf") works


def _draw_bars(ax: Any, bars: list[tuple[dict, str]]) -> None:
    # Several bar series in one panel share categories and stand side by side.
    categories: list[str] = []
    for s, _ in bars:
        categories.extend(c for c in s["x"] if c not in categories)
    pos = {c: i for i, c in enumerate(categories)}
    width = 0.8 / len(bars)
    for k, (s, color) in enumerate(bars):
        offset = (k - (len(bars) - 1) / 2) * width
        xs = np.array([pos[c] for c in s["x"]], dtype=float) + offset
        ax.bar(xs, _floats(s["y"]), width=width, label=s["label"] or None, color=color)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(categories)


LINESTYLES = ("-", "--", ":", "-.")


def series_styles(panels: list[dict]) -> list[list[tuple[str, str]]]:
    """``(colour, linestyle)`` of every series, panel by panel: one label keeps one style in every panel
    (the same method reads the same across panels), and different labels never share one: past the
    colour cycle the line style changes too. An unlabelled series gets a style of its own.

    >>> panels = [{"series": [{"label": "a"}, {"label": "b"}]}, {"series": [{"label": "b"}, {"label": "c"}]}]
    >>> styles = series_styles(panels)
    >>> styles[0][1] == styles[1][0], len({s for panel in styles for s in panel})
    (True, 3)
    """
    colors = [c["color"] for c in _color_cycle()]
    assigned: dict[str, tuple[str, str]] = {}
    out = []
    for i, p in enumerate(panels):
        row = []
        for k, s in enumerate(p["series"]):
            key = s["label"] or f"\0unlabelled {i} {k}"
            if key not in assigned:
                n = len(assigned)
                assigned[key] = (colors[n % len(colors)], LINESTYLES[(n // len(colors)) % len(LINESTYLES)])
            row.append(assigned[key])
        out.append(row)
    return out


def _draw_panel(ax: Any, p: dict, styles: list[tuple[str, str]]) -> None:
    # Scales first: setting a scale resets tick locators, which would drop the bar labels.
    ax.set_xscale(p.get("xscale", "linear"))
    ax.set_yscale(p.get("yscale", "linear"))
    bars = []
    for s, (color, linestyle) in zip(p["series"], styles):
        label = s["label"] or None
        if s["type"] == "line":
            ax.plot(_floats(s["x"]), _floats(s["y"]), label=label, color=color, linestyle=linestyle)
        elif s["type"] == "scatter":
            ax.scatter(_floats(s["x"]), _floats(s["y"]), label=label, color=color, s=12)
        elif s["type"] == "hist":
            counts = _floats(s["y"])
            # A zero baseline is invisible on a log axis; draw bare steps there instead.
            baseline = None if p.get("yscale") == "log" else 0.0
            ax.stairs(
                counts,
                _floats(s["x"]),
                label=label,
                color=color,
                baseline=baseline,
                fill=baseline is not None,
                alpha=0.6 if baseline is not None else 1.0,
            )
        else:
            bars.append((s, color))
    if bars:
        _draw_bars(ax, bars)
    ax.set_title(p.get("title", ""))
    ax.set_xlabel(p.get("xlabel", ""))
    ax.set_ylabel(p.get("ylabel", ""))
    if any(s["label"] for s in p["series"]):
        ax.legend(fontsize="small")


def _color_cycle() -> list:
    import matplotlib

    return list(matplotlib.rcParamsDefault["axes.prop_cycle"])


def render_json(data: dict, png_path: str | os.PathLike) -> None:
    """Draw the PNG of a figure from its figure JSON ``data`` alone (:func:`draw`); write it atomically.

    >>> import os, tempfile
    >>> doc = {"id": "demo/figure-2", "substitute": "synthetic Gaussian data stands in for CIFAR-10.",
    ...        "panels": [{"title": "", "xlabel": "", "ylabel": "", "xscale": "linear",
    ...                    "yscale": "linear", "series": [{"label": "", "type": "bar", "params": {},
    ...                                                    "x": ["a", "b"], "y": [1, 2]}]}]}
    >>> png = os.path.join(tempfile.mkdtemp(), "f.png")
    >>> render_json(doc, png); os.path.getsize(png) > 0
    True
    """
    fig = draw(data)
    from fedtheory.sweep import atomic_writer

    with atomic_writer(png_path, "wb") as fh:
        # No "Software" entry and no timestamp: the bytes depend on the JSON only.
        fig.savefig(fh, format="png", dpi=DPI, metadata={"Software": None})


def _footer(data: dict, wrap: int) -> list[tuple[str, dict]]:
    """The text under the plots: the caption, then (when there is one) the substitute-data note."""
    lines = []
    if str(data.get("caption") or "").strip():
        lines.append((textwrap.fill(str(data["caption"]).strip(), wrap), {"color": "#1b1f24"}))
    if data.get("substitute"):
        sentence = data["substitute"]
        # the sentence may already open with the label (fedtheory.problems.datasets.substitute_sentence does)
        if not sentence.lower().startswith("substitute"):
            sentence = "Substitute data: " + sentence
        lines.append((textwrap.fill(sentence, wrap), {"style": "italic", "color": "#8b0000"}))
    return lines


def draw(data: dict) -> Any:
    """The matplotlib ``Figure`` of a figure JSON (on the Agg canvas, never pyplot).

    One subplot per panel (a row, or a grid of up to three columns), the figure id as title, a
    legend where series are labelled, one style per series label across panels
    (:func:`series_styles`), and under the plots the caption and -- when ``data["substitute"]`` is a
    sentence -- a visible note ``Substitute data: ...``. ``hist`` series draw ``y`` counts
    over ``x`` bin edges; ``bar`` series draw ``y`` heights over ``x`` labels, side by side.
    Raises ValueError when ``data`` is malformed (unknown series type, mismatched lengths).

    >>> doc = {"id": "demo/figure-3", "caption": "Rounds against K.", "substitute": None,
    ...        "panels": [{"series": [{"label": "a", "type": "line", "x": [1, 2], "y": [1, 2]}]}]}
    >>> [t.get_text() for t in draw(doc).texts]
    ['demo/figure-3', 'Rounds against K.']
    """
    check_document(data)
    # Imported here so that importing fedtheory.plotting stays cheap and never picks a backend.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    panels = data["panels"]
    ncols = min(len(panels), MAX_COLUMNS)
    nrows = math.ceil(len(panels) / ncols)
    width, height = PANEL_SIZE[0] * ncols, PANEL_SIZE[1] * nrows
    footer = _footer(data, wrap=max(40, int(width * 14)))  # ~14 characters per inch at the footer's font size
    line_in = 0.18  # inches per line of 9-point text
    heights = [0.1 + line_in * (text.count("\n") + 1) for text, _ in footer]
    note_in = (0.1 + sum(heights)) if footer else 0.0
    height += note_in

    fig = MplFigure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    bottom = note_in / height
    engine = fig.get_layout_engine()
    assert isinstance(engine, ConstrainedLayoutEngine)  # layout="constrained" above
    engine.set(rect=(0.0, bottom, 1.0, 1.0 - bottom))
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, p, styles in zip(axes, panels, series_styles(panels)):
        _draw_panel(ax, p, styles)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(str(data.get("id", "")))
    top = note_in - 0.1  # inches above the bottom edge where the footer starts
    for (text, style), h in zip(footer, heights):
        fig.text(0.01, top / height, text, ha="left", va="top", fontsize=9, **style)
        top -= h
    return fig
