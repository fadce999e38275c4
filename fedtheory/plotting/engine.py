"""The figure engine: spec -> data JSON -> image.

A :class:`~fedtheory.plotting.spec.Figure` only computes what is plotted. The engine turns that into
the figure JSON of DESIGN.md (adding id, caption, substitute, seed and environment), validates it
against the shipped JSON Schema, writes it atomically, reads it back and draws the PNG from the
file alone (:func:`~fedtheory.plotting.render.render_json`), so the image provably comes from data
anyone can inspect. :func:`run_figures` does this for many figures through
:func:`fedtheory.sweep.map_grid` (local processes, or Dask given a scheduler) and writes
``manifest.json``.

>>> import json, os, tempfile
>>> from fedtheory.plotting.spec import figure, panel, series
>>> @figure(id="demo/figure-1", caption="squares")
... def figure_1(ctx):
...     return {"params": {}, "panels": [panel("", "x", "y", [series("x^2", [1, 2], [1, 4])])]}
>>> out = tempfile.mkdtemp()
>>> entry = write_figure(figure_1, out_dir=out, seed=0, tier="fast")
>>> entry["png"], entry["json"]
('demo/figure-1.png', 'demo/figure-1.json')
>>> json.load(open(os.path.join(out, entry["json"])))["panels"][0]["series"][0]["y"]
[1.0, 4.0]
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterable, cast

import numpy as np

from fedtheory.claims.core import derive_seed
from fedtheory.content import UsageError, check_tier, in_tier
from fedtheory.plotting.render import check_document, render_json
from fedtheory.plotting.spec import Figure, FigureContext

__all__ = ["figure_document", "write_figure", "run_figures", "redraw", "dumps_figure_json"]


# --------------------------------------------------------------------------------------------
# JSON: plain types, strict (no NaN/Infinity tokens), readable
# --------------------------------------------------------------------------------------------


def _plain(obj: Any, *, nonfinite: str) -> Any:
    """numpy and containers -> plain JSON types. ``nonfinite``: "null" (plotted data: a gap) or
    "str" (parameters: keep 'inf' readable), since strict JSON has no inf/nan."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v, nonfinite=nonfinite) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist(), nonfinite=nonfinite)
    if isinstance(obj, (list, tuple)):
        return [_plain(v, nonfinite=nonfinite) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if nonfinite == "null" else str(obj)
    return obj


def _plain_panels(panels: Any, fid: str) -> list:
    if not isinstance(panels, (list, tuple)):
        raise ValueError(f"figure {fid}: 'panels' must be a list, got {type(panels).__name__}")
    out = []
    for p in panels:
        if not isinstance(p, Mapping):
            raise ValueError(f"figure {fid}: each panel must be a dict, got {type(p).__name__}")
        q = _plain({k: v for k, v in p.items() if k != "series"}, nonfinite="str")
        series_list = p.get("series")
        if isinstance(series_list, (list, tuple)):
            q["series"] = [
                {
                    k: (_plain(v, nonfinite="null") if k in ("x", "y") else _plain(v, nonfinite="str"))
                    for k, v in s.items()
                }
                if isinstance(s, Mapping)
                else s
                for s in series_list
            ]
        else:
            q["series"] = series_list
        out.append(q)
    return out


def dumps_figure_json(obj: Any, indent: int = 2) -> str:
    """Serialize like ``json.dumps(indent=...)`` but keep lists of scalars on one line.

    Figure JSON is meant to be read by people: one number per line would bury the structure.
    Non-finite floats are rejected (strict JSON), and text stays UTF-8 (Greek letters readable).

    >>> print(dumps_figure_json({"x": [1.0, 2.5], "label": "ρ"}))
    {
      "x": [1.0, 2.5],
      "label": "ρ"
    }
    """

    def enc(o: Any, level: int) -> str:
        pad, inner = " " * (indent * level), " " * (indent * (level + 1))
        if isinstance(o, dict):
            if not o:
                return "{}"
            items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {enc(v, level + 1)}" for k, v in o.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(o, (list, tuple)):
            if all(not isinstance(v, (dict, list, tuple)) for v in o):
                return json.dumps(list(o), ensure_ascii=False, allow_nan=False)
            return "[\n" + ",\n".join(inner + enc(v, level + 1) for v in o) + "\n" + pad + "]"
        return json.dumps(o, ensure_ascii=False, allow_nan=False)

    return enc(obj, 0)


def _write_text_atomic(path: Path, text: str) -> None:
    from fedtheory.sweep import write_text_atomic

    write_text_atomic(path, text)


@contextlib.contextmanager
def _signals_deferred():
    """SIGINT and SIGTERM wait until the block ends, so a figure's JSON and PNG are renamed into place
    together: an interrupted run leaves both or neither (only SIGKILL cannot be deferred, and the parent
    sends it only after a grace period)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    blocked = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # somebody else's live process
        return True
    return True


def _remove_stale_stages(path: Path) -> None:
    """Delete the staged copies of ``path`` left by a process that no longer runs (a run killed between staging
    and renaming); a live process's stage (a concurrent run) is left alone.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> dead = d / ".figure-1.json.999999999.abcd.staged"; _ = dead.write_text("{}")
    >>> mine = d / f".figure-1.json.{os.getpid()}.abcd.staged"; _ = mine.write_text("{}")
    >>> _remove_stale_stages(d / "figure-1.json"); dead.exists(), mine.exists()
    (False, True)
    """
    for stage in path.parent.glob(f".{path.name}.*.staged"):
        parts = stage.name[len(path.name) + 2 :].split(".")
        if len(parts) == 3 and parts[0].isdigit() and not _pid_alive(int(parts[0])):
            try:
                stage.unlink()
            except FileNotFoundError:
                pass


def _write_pair(json_path: Path, text: str, png_path: Path) -> None:
    """Write the figure JSON ``text`` and the PNG drawn from it (as read back from disk) as one step:
    both are prepared beside their destinations, then renamed in a block that signals cannot split."""
    from fedtheory.sweep import atomic_writer

    json_path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_stages(json_path)
    _remove_stale_stages(png_path)
    staged: list[Path] = []
    try:
        stage_json = json_path.with_name(f".{json_path.name}.{os.getpid()}.{os.urandom(4).hex()}.staged")
        staged.append(stage_json)  # before it exists: a signal between the write and here leaves nothing
        with atomic_writer(stage_json) as fh:
            fh.write(text + "\n")
        with open(stage_json, encoding="utf-8") as fh:
            from_disk = json.load(fh)
        stage_png = png_path.with_name(f".{png_path.name}.{os.getpid()}.{os.urandom(4).hex()}.staged")
        staged.append(stage_png)
        render_json(from_disk, stage_png)
        with _signals_deferred():
            os.replace(stage_png, png_path)
            os.replace(stage_json, json_path)
    finally:
        for p in staged:
            try:
                p.unlink()
            except FileNotFoundError:
                pass


def _validate(instance: Any, name: str) -> None:
    from fedtheory.schemas import validate

    validate(instance, name)


# --------------------------------------------------------------------------------------------
# One figure
# --------------------------------------------------------------------------------------------


def figure_document(fig: Figure, ctx: FigureContext) -> dict:
    """The full figure JSON document of ``fig`` computed under ``ctx``, validated.

    Calls ``fig.data(ctx)`` and adds ``id``, ``caption``, ``substitute``, ``seed`` and
    ``environment`` (:func:`fedtheory.environment.environment`). Plotted values become plain
    floats, a non-finite value becoming ``null`` (a gap). Raises ValueError on malformed data
    (unknown series type, x/y length mismatch) and the schema's error when the document does not
    match ``figure.schema.json``.

    >>> from fedtheory.plotting.spec import figure, panel, series
    >>> @figure(id="demo/figure-2", caption="one point", substitute="a made-up point.")
    ... def f(ctx):
    ...     return {"params": {"n": 1}, "panels": [panel("", "x", "y", [series("p", [0], [1], type="scatter")])]}
    >>> doc = figure_document(f, FigureContext(seed=3))
    >>> [k for k in doc], doc["seed"], doc["substitute"]
    (['id', 'caption', 'substitute', 'params', 'panels', 'seed', 'environment'], 3, 'a made-up point.')
    """
    from fedtheory.environment import blas_threads, environment

    with blas_threads():
        data = fig.data(ctx)
    doc = {
        "id": fig.id,
        "caption": fig.caption,
        "substitute": fig.substitute,
        "params": _plain(data.get("params", {}), nonfinite="str"),
        "panels": _plain_panels(data["panels"], fig.id),
        "seed": int(ctx.seed),
        "environment": _plain(environment(ctx.seed, backend=ctx.backend, device=ctx.device), nonfinite="str"),
    }
    check_document(doc)
    _validate(doc, "figure")
    return doc


def write_figure(
    fig: Figure,
    *,
    out_dir: str | os.PathLike,
    seed: int,
    tier: str = "fast",
    backend: str = "numpy",
    device: str | None = None,
) -> dict:
    """Compute ``fig`` and write ``out_dir/<paper>/<slug>.json`` then ``.png``; return its manifest entry.

    ``seed`` is the figure's own seed (:func:`run_figures` derives it from the run's seed and the
    figure id). The PNG is drawn from the JSON as read back from disk, never from memory, so the
    image comes from the JSON alone; the two files appear together or not at all. The entry is ``{"id", "png", "json", "seconds"}`` with paths
    relative to ``out_dir`` (POSIX separators).

    >>> import os, tempfile
    >>> from fedtheory.plotting.spec import figure, panel, series
    >>> @figure(id="demo/figure-bars", caption="bars")
    ... def f(ctx):
    ...     return {"params": {}, "panels": [panel("", "", "n", [series("a", ["u", "v"], [1, 2], type="bar")])]}
    >>> out = tempfile.mkdtemp()
    >>> e = write_figure(f, out_dir=out, seed=1)
    >>> sorted(e), os.path.exists(os.path.join(out, "demo", "figure-bars.png"))
    (['id', 'json', 'png', 'seconds'], True)
    """
    check_tier(tier)
    start = time.perf_counter()
    out = Path(out_dir)
    rel_json = Path(fig.paper) / f"{fig.slug}.json"
    rel_png = Path(fig.paper) / f"{fig.slug}.png"
    doc = figure_document(fig, FigureContext(seed=seed, tier=tier, backend=backend, device=device))
    _write_pair(out / rel_json, dumps_figure_json(doc), out / rel_png)
    return {
        "id": fig.id,
        "png": rel_png.as_posix(),
        "json": rel_json.as_posix(),
        "seconds": round(time.perf_counter() - start, 4),
    }


def redraw(json_path: str | os.PathLike, png_path: str | os.PathLike | None = None) -> Path:
    """Redraw a figure's PNG from its saved JSON alone (default: beside it, ``.png``); return the PNG path.

    >>> import os, tempfile
    >>> from fedtheory.plotting.spec import figure, panel, series
    >>> @figure(id="demo/figure-3", caption="")
    ... def f(ctx):
    ...     return {"params": {}, "panels": [panel("", "", "", [series("", [0, 1], [1, 0])])]}
    >>> out = tempfile.mkdtemp(); e = write_figure(f, out_dir=out, seed=0)
    >>> os.remove(os.path.join(out, e["png"]))
    >>> redraw(os.path.join(out, e["json"])).name
    'figure-3.png'
    """
    json_path = Path(json_path)
    png_path = json_path.with_suffix(".png") if png_path is None else Path(png_path)
    with open(json_path, encoding="utf-8") as fh:
        render_json(json.load(fh), png_path)
    return png_path


# --------------------------------------------------------------------------------------------
# Many figures
# --------------------------------------------------------------------------------------------


def _load_figure(source: str, fid: str) -> Figure:
    # fedtheory.content caches loaded modules per process, so a worker running several figures
    # of one content file executes it once.
    from fedtheory.content import load_figures

    for f in load_figures([source]):
        if f.id == fid:
            return f
    raise ValueError(f"figure {fid} not found in {source}")


def _run_point(point: dict) -> dict:
    """Worker: reload the figure from its content file by path and write it (Figures are not pickled)."""
    fig = _load_figure(point["source"], point["id"])
    return write_figure(
        fig,
        out_dir=point["out_dir"],
        seed=point["seed"],
        tier=point["tier"],
        backend=point.get("backend", "numpy"),
        device=point.get("device"),
    )


def _merge_manifest(path: Path, out: Path, new: list[dict]) -> list[dict]:
    # A run over a subset (--figure X) keeps the entries of other figures still on disk, so the
    # manifest always describes the directory; entries are sorted by id for stable diffs.
    old: list = []
    if path.exists():
        try:
            with open(path, encoding="utf-8") as fh:
                old = json.load(fh)
        except (OSError, ValueError):
            old = []
    if not isinstance(old, list):
        old = []
    fresh = {e["id"] for e in new}
    kept = [
        e
        for e in old
        if isinstance(e, dict)
        and e.get("id") not in fresh
        and all(isinstance(e.get(k), str) and (out / e[k]).is_file() for k in ("png", "json"))
        and isinstance(e.get("seconds"), (int, float))
    ]
    return sorted(kept + list(new), key=lambda e: e["id"])


def _selected(figures: Iterable[Figure], tier: str) -> list[Figure]:
    figs = [f for f in figures if in_tier(f.tier, tier)]
    seen: set[str] = set()
    for f in figs:
        if f.id in seen:
            raise UsageError(f"figure id {f.id} is given twice")
        seen.add(f.id)
    return figs


def run_figures(
    figures: Iterable[Figure],
    *,
    out_dir: str | os.PathLike = "out/figures",
    tier: str = "fast",
    seed: int = 0,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
    backend: str = "numpy",
    device: str | None = None,
) -> list[dict]:
    """Write every figure of ``figures`` (JSON + PNG) under ``out_dir`` and ``out_dir/manifest.json``.

    Tier ``fast`` runs the fast figures and skips ``full`` ones; ``full`` runs both. Each figure
    gets the seed ``derive_seed(seed, fig.id)``, so results do not depend on ``workers``. Figures
    that come from a content file (``fig.source``) run through :func:`fedtheory.sweep.map_grid`,
    whose workers reload the file by path; a figure without a source (built in memory) runs in
    this process. The manifest is a JSON list of ``{id, png, json, seconds}`` (paths relative to
    ``out_dir``), merged with the entries of figures from earlier runs whose files are still
    there (under a lock, so concurrent runs into one directory keep each other's entries), sorted by
    id, validated against ``manifest.schema.json`` and returned; a run stopped part-way (a signal, a
    failing figure) still writes the manifest of the figures that finished. An unknown
    tier, ``workers < 1``, a malformed scheduler address or an id given twice is a
    :class:`~fedtheory.content.UsageError`; an exception in a figure's data function propagates.

    >>> import tempfile
    >>> from fedtheory.plotting.spec import figure, panel, series
    >>> @figure(id="demo/figure-4", caption="")
    ... def f(ctx):
    ...     return {"params": {}, "panels": [panel("", "", "", [series("", [0, 1], [1, 0])])]}
    >>> [e["id"] for e in run_figures([f], out_dir=tempfile.mkdtemp(), progress=False)]
    ['demo/figure-4']
    """
    from fedtheory.sweep import check_scheduler, check_workers, map_grid

    check_tier(tier)
    check_workers(workers)
    if isinstance(scheduler, str):
        check_scheduler(scheduler)
    figs = _selected(figures, tier)
    out = Path(out_dir)
    out_abs = os.path.abspath(out)
    seeds = {f.id: derive_seed(seed, f.id) for f in figs}

    results: dict[str, dict] = {}
    from_files = [f for f in figs if f.source is not None]
    in_memory = [f for f in figs if f.source is None]
    bar = _progress_bar(len(figs)) if progress and figs else None

    def tick(index: int | None, entry: dict) -> None:
        results[entry["id"]] = entry
        if bar is not None:
            bar[0].advance(bar[1])
        elif progress:  # a log (CI, a pipe): one line per finished figure instead of silence
            print(f"[{len(results)}/{len(figs)}] {entry['id']} ({entry['seconds']:.1f}s)", file=sys.stderr, flush=True)

    try:
        if from_files:
            points = [
                {
                    "source": os.path.abspath(cast(str, f.source)),
                    "id": f.id,
                    "seed": seeds[f.id],
                    "tier": tier,
                    "out_dir": out_abs,
                    "backend": backend,
                    "device": device,
                }
                for f in from_files
            ]
            map_grid(_run_point, points, workers=workers, scheduler=scheduler, progress=tick)
        for f in in_memory:
            tick(None, write_figure(f, out_dir=out_abs, seed=seeds[f.id], tier=tier, backend=backend, device=device))
    except BaseException:
        # stopped (a signal, a failing figure): the manifest still lists every figure that finished
        if results:
            _write_manifest(out, [results[f.id] for f in figs if f.id in results])
        raise
    finally:
        if bar is not None:
            bar[0].stop()

    return _write_manifest(out, [results[f.id] for f in figs])


@contextlib.contextmanager
def _manifest_lock(out: Path):
    """An exclusive lock on the directory ``out`` itself (POSIX ``flock`` on its descriptor): runs writing
    into one directory merge their manifests one after another, so none loses another's entries, and no
    lock file is left among the figures.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with _manifest_lock(d):
    ...     pass
    >>> list(d.iterdir())
    []
    """
    out.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, merge-on-write only
        yield
        return
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _write_manifest(out: Path, new: list[dict]) -> list[dict]:
    """Merge ``new`` entries into ``out/manifest.json`` under the lock, validate, write atomically."""
    manifest_path = out / "manifest.json"
    with _manifest_lock(out):
        manifest = _merge_manifest(manifest_path, out, new)
        _validate(manifest, "manifest")
        _write_text_atomic(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False, allow_nan=False))
    return manifest


def _progress_bar(total: int):
    """(rich Progress, task) on a terminal, else None (logs, CI and pipes get one line per figure)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        return None
    prog = Progress(
        TextColumn("figures"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True
    )
    task = prog.add_task("figures", total=total)
    prog.start()
    return prog, task
