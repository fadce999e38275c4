"""Checking a figure's data against a statement: what claims about a figure share.

A claim about a figure calls the figure's data function (it never reads files from ``--out``): it loads the
figures content file by path, computes the figure's data and reads its panels and series. The helpers here do
that once, so a claim reads as the paper's statement plus what is specific to its check.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "demo_figures.py"
>>> _ = f.write_text('''
... from fedtheory.plotting.spec import figure, panel, series
... @figure(id="demo/figure-1", caption="y = x^2")
... def figure_1(ctx):
...     xs = [0.0, 1.0, 2.0]
...     return {"params": {}, "panels": [panel("p", "x", "y", [series("x^2", xs, [x * x for x in xs])])]}
... ''')
>>> data = figure_data(f, "figure_1")
>>> x, y = xy(series_by_label(data["panels"][0])["x^2"])
>>> y.tolist(), figure_data(f, "demo/figure-1")["panels"] == data["panels"]
([0.0, 1.0, 4.0], True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np


def load_figure(path: Path | str, name: str):
    """The :class:`~fedtheory.plotting.spec.Figure` called ``name`` in the figures content file at ``path``:
    ``name`` is the module attribute (``"figure_1"``) or the figure's id (``"localupdate/figure-1"``).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "figs.py"
    >>> _ = f.write_text("from fedtheory.plotting.spec import figure\\n"
    ...                  "figure_2 = figure(id='demo/figure-2', caption='c')(lambda ctx: {'params': {}, 'panels': []})")
    >>> load_figure(f, "figure_2").id, load_figure(f, "demo/figure-2").id
    ('demo/figure-2', 'demo/figure-2')
    >>> try:
    ...     load_figure(f, "figure_3")
    ... except KeyError as e:
    ...     print(e.args[0])
    no figure 'figure_3' in figs.py (known: demo/figure-2, figure_2)
    """
    from fedtheory.content import load_module, module_figures

    module = load_module(path)
    found = getattr(module, name, None)
    if found is not None and hasattr(found, "data"):
        return found
    by_id = {f.id: f for f in module_figures(module)}
    if name in by_id:
        return by_id[name]
    known = sorted(set(by_id) | {k for k, v in vars(module).items() if v in by_id.values()})
    raise KeyError(f"no figure {name!r} in {Path(path).name} (known: {', '.join(known)})")


def figure_data(path: Path | str, name: str, seed: int = 0, tier: str = "fast") -> dict:
    """The data a figure plots (``{"params", "panels"}``), computed by its data function at ``seed`` and ``tier``.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "figs.py"
    >>> _ = f.write_text("from fedtheory.plotting.spec import figure\\n"
    ...                  "f1 = figure(id='demo/figure-1', caption='c')(lambda ctx: {'params': {'seed': ctx.seed, "
    ...                  "'tier': ctx.tier}, 'panels': []})")
    >>> figure_data(f, "f1", seed=3, tier="full")["params"]
    {'seed': 3, 'tier': 'full'}
    """
    from fedtheory.plotting.spec import FigureContext

    return load_figure(path, name).data(FigureContext(seed=seed, tier=tier))


def series_by_label(panel: dict) -> dict:
    """A panel's series by their labels.

    >>> sorted(series_by_label({"series": [{"label": "b"}, {"label": "a"}]}))
    ['a', 'b']
    """
    return {s["label"]: s for s in panel["series"]}


def xy(series: dict) -> tuple[np.ndarray, np.ndarray]:
    """A series' x and y as float arrays.

    >>> xy({"x": [0, 1], "y": [2, 3]})[1].dtype
    dtype('float64')
    """
    return np.asarray(series["x"], dtype=float), np.asarray(series["y"], dtype=float)


def series_xy(panel: dict, key: Callable[[dict], Any] | None = None) -> dict:
    """A panel's series as float ``(x, y)`` arrays, by ``key(series)`` (default: the label) — the form a statement
    about a figure's curves reads them in.

    >>> p = {"series": [{"label": "GD", "x": [0, 1], "y": [1.0, 0.5], "params": {"s": 1}}]}
    >>> sorted(series_xy(p)), series_xy(p, key=lambda s: s["params"]["s"])[1][1].tolist()
    (['GD'], [1.0, 0.5])
    """
    return {(s["label"] if key is None else key(s)): xy(s) for s in panel["series"]}


def distance_to_curve(px: np.ndarray, py: np.ndarray, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    """Euclidean distance from each point (px, py) to the polyline (cx, cy) (segments between consecutive points):
    how far a plotted curve is from another, the usual reading of "nearly identical" or "lies on".

    >>> distance_to_curve(np.array([0.5, 2.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([0.0, 0.0]))
    array([1., 1.])
    """
    P = np.stack([px, py], axis=1)[:, None, :]
    A = np.stack([cx[:-1], cy[:-1]], axis=1)[None]
    B = np.stack([cx[1:], cy[1:]], axis=1)[None]
    AB = B - A
    t = np.clip(np.sum((P - A) * AB, axis=2) / np.maximum(np.sum(AB * AB, axis=2), 1e-300), 0.0, 1.0)
    proj = A + t[..., None] * AB
    return np.sqrt(np.min(np.sum((P - proj) ** 2, axis=2), axis=1))


def decide_per_row(ctx, ok: bool, rows: dict, *, key: str = "per_setting", **kw):
    """The verdict of a statement checked row by row (a figure's panels or settings, a table's rows): ``rows`` is
    the measured record, and when ``ok`` is false it is the counterexample too, under ``key``; ``kw`` (tolerance,
    notes) go to ``ctx.decide``.

    >>> from fedtheory.claims.core import CheckContext
    >>> rows = {"IID": {"gap": 0.1}, "Non-IID": {"gap": -0.2}}
    >>> evidence = decide_per_row(CheckContext(seed=0), False, rows, tolerance="gap ≥ 0")
    >>> evidence.status, evidence.counterexample == {"per_setting": rows}
    ('refuted', True)
    """
    return ctx.decide(ok, measured=rows, counterexample=None if ok else {key: rows}, **kw)


def judge_each(items: Iterable[tuple[str, Any]], judge: Callable[[Any], tuple[bool, Any]]) -> tuple[bool, dict]:
    """A statement evaluated on each named item (a figure's panels, its settings): ``judge(item)`` returns whether
    the statement holds there and the row it measured; the result is whether it holds on every item and the rows by
    name (every item is judged, so the record shows all of them, not only the first failure).

    >>> judge_each([("IID", 0.1), ("Non-IID", -0.2)], lambda gap: (gap >= 0, {"gap": gap}))
    (False, {'IID': {'gap': 0.1}, 'Non-IID': {'gap': -0.2}})
    """
    ok, rows = True, {}
    for name, item in items:
        holds, rows[name] = judge(item)
        ok = ok and bool(holds)
    return ok, rows


def decide_each(ctx, items: Iterable[tuple[str, Any]], judge: Callable[[Any], tuple[bool, Any]], **kw):
    """The verdict of a statement that must hold on each named item (a figure's settings, its models, pairs of
    curves): :func:`judge_each`, decided by :func:`decide_per_row` (``kw``: its key, tolerance and notes).

    >>> from fedtheory.claims.core import CheckContext
    >>> finals = {"IID": {"fedhm": 0.9, "fedavg": 0.8}, "Non-IID": {"fedhm": 0.7, "fedavg": 0.75}}
    >>> evidence = decide_each(CheckContext(seed=0), finals.items(),
    ...                        lambda f: (f["fedhm"] >= f["fedavg"], {"margin": round(f["fedhm"] - f["fedavg"], 2)}),
    ...                        key="per_split", tolerance="margin ≥ 0")
    >>> evidence.status, evidence.counterexample
    ('refuted', {'per_split': {'IID': {'margin': 0.1}, 'Non-IID': {'margin': -0.05}}})
    """
    ok, rows = judge_each(items, judge)
    return decide_per_row(ctx, ok, rows, **kw)


def decide_each_panel(ctx, data: dict, judge: Callable[[dict], tuple[bool, Any]], **kw):
    """The verdict of a statement that must hold on every panel of a figure's ``data``: :func:`decide_each` over
    the panels by title (``kw``: the key, tolerance and notes of :func:`decide_per_row`).

    >>> from fedtheory.claims.core import CheckContext
    >>> data = {"panels": [{"title": "IID", "series": [{"label": "a", "x": [0], "y": [2.0]}]}]}
    >>> evidence = decide_each_panel(CheckContext(seed=0), data, lambda p: (p["series"][0]["y"][-1] > 1, {"y": 2.0}))
    >>> evidence.status, evidence.measured
    ('verified', {'IID': {'y': 2.0}})
    """
    return decide_each(ctx, ((p["title"], p) for p in data["panels"]), judge, **kw)
