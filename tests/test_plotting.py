"""The figure engine: spec -> data JSON -> PNG drawn from the JSON alone."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import pytest

from fedtheory.claims.core import derive_seed
from fedtheory.content import UsageError, load_figures
from fedtheory.plotting import FigureContext, figure, panel, render_json, run_figures, series
from fedtheory.plotting.engine import dumps_figure_json, figure_document, redraw, write_figure
from fedtheory.schemas import validate

SUBSTITUTE = "synthetic Gaussian samples stand in for the paper's CIFAR-10 activations."

CONTENT = textwrap.dedent('''
    import numpy as np
    from fedtheory.plotting.spec import figure, panel, series

    @figure(id="demo/figure-1", caption="All four series types, a log axis.",
            substitute="synthetic Gaussian samples stand in for the paper's CIFAR-10 activations.")
    def figure_1(ctx):
        k = np.arange(1, 21)
        noisy = 0.5 ** k * np.exp(0.1 * ctx.rng.normal(size=k.size))
        counts, edges = np.histogram(ctx.rng.normal(size=400), bins=15)
        return {"params": {"rounds": 20, "samples": 400},
                "panels": [
                    panel("rate", "round k", "error", [series("bound 2^-k", k, 0.5 ** k),
                                                       series("measured", k, noisy, type="scatter")],
                          yscale="log"),
                    panel("samples", "value", "count", [series("N(0,1)", edges, counts, type="hist")]),
                    panel("accuracy", "method", "accuracy", [
                        series("r = 1", ["FedAvg", "FedProx", "FedHM"], [0.61, 0.63, 0.66], type="bar"),
                        series("r = 4", ["FedAvg", "FedProx", "FedHM"], [0.58, 0.60, 0.65], type="bar")]),
                ]}

    @figure(id="demo/figure-2", caption="A heavy figure.", tier="full")
    def figure_2(ctx):
        return {"params": {}, "panels": [panel("", "x", "y", [series("", [0, 1], [1, 2])])]}
''')


@pytest.fixture
def content(tmp_path):
    path = tmp_path / "figures" / "demo.py"
    path.parent.mkdir()
    path.write_text(CONTENT)
    return path


@pytest.fixture
def figs(content):
    return {f.id: f for f in load_figures([str(content)])}


def _strip_seconds(manifest):
    return [{k: v for k, v in e.items() if k != "seconds"} for e in manifest]


def test_run_figures_writes_json_png_and_valid_manifest(figs, tmp_path):
    out = tmp_path / "out"
    manifest = run_figures(list(figs.values()), out_dir=out, seed=5, progress=False)
    # fast tier: the full-tier figure is skipped
    assert _strip_seconds(manifest) == [
        {"id": "demo/figure-1", "png": "demo/figure-1.png", "json": "demo/figure-1.json"}
    ]
    assert manifest[0]["seconds"] >= 0
    on_disk = json.loads((out / "manifest.json").read_text())
    assert isinstance(on_disk, list) and on_disk == manifest
    validate(on_disk, "manifest")
    assert (out / "demo" / "figure-1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (out / "demo" / "figure-2.json").exists()

    doc = json.loads((out / "demo" / "figure-1.json").read_text(encoding="utf-8"))
    validate(doc, "figure")
    assert list(doc) == ["id", "caption", "substitute", "params", "panels", "seed", "environment"]
    assert doc["seed"] == derive_seed(5, "demo/figure-1")
    assert doc["substitute"] == SUBSTITUTE
    assert doc["environment"]["seed"] == doc["seed"]
    assert doc["params"] == {"rounds": 20, "samples": 400}
    rate, hist, bars = doc["panels"]
    assert rate["yscale"] == "log" and [s["type"] for s in rate["series"]] == ["line", "scatter"]
    assert len(hist["series"][0]["x"]) == len(hist["series"][0]["y"]) + 1
    assert sum(hist["series"][0]["y"]) == 400
    assert bars["series"][1]["x"] == ["FedAvg", "FedProx", "FedHM"]
    # The saved data is the data function's output under the derived seed, exactly.
    again = figs["demo/figure-1"].data(FigureContext(seed=doc["seed"]))
    assert again["panels"][0]["series"][1]["y"] == rate["series"][1]["y"]

    full = run_figures(list(figs.values()), out_dir=out, tier="full", progress=False)
    assert [e["id"] for e in full] == ["demo/figure-1", "demo/figure-2"]
    validate(full, "manifest")


def test_redraw_from_saved_json_alone_is_byte_identical(figs, tmp_path):
    out = tmp_path / "out"
    run_figures([figs["demo/figure-1"]], out_dir=out, progress=False)
    png, js = out / "demo" / "figure-1.png", out / "demo" / "figure-1.json"
    original = png.read_bytes()
    png.unlink()

    render_json(json.loads(js.read_text(encoding="utf-8")), png)
    first = png.read_bytes()
    render_json(json.loads(js.read_text(encoding="utf-8")), png)
    assert png.read_bytes() == first == original
    assert redraw(js) == png and png.read_bytes() == original

    # In a fresh interpreter that never loads the content file: still the same bytes.
    copy = tmp_path / "elsewhere.png"
    code = (
        "import json, sys; from fedtheory.plotting.render import render_json; "
        "render_json(json.load(open(sys.argv[1], encoding='utf-8')), sys.argv[2]); "
        "assert not any(m.startswith('_fedtheory_content_') for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code, str(js), str(copy)], check=True)
    assert copy.read_bytes() == original

    # The image depends on the JSON: change one plotted value, the bytes change.
    doc = json.loads(js.read_text(encoding="utf-8"))
    doc["panels"][2]["series"][0]["y"][0] = 0.1
    render_json(doc, png)
    assert png.read_bytes() != original
    # No temp files are left behind by the atomic writes.
    assert sorted(p.name for p in (out / "demo").iterdir()) == ["figure-1.json", "figure-1.png"]


def test_seeds_do_not_depend_on_workers(figs, tmp_path):
    # Two figures, so that workers=2 really uses a (spawned) process pool whose workers reload the
    # content file by path.
    both = list(figs.values())
    one = run_figures(both, out_dir=tmp_path / "one", seed=3, tier="full", workers=1, progress=False)
    two = run_figures(both, out_dir=tmp_path / "two", seed=3, tier="full", workers=2, progress=False)
    assert _strip_seconds(one) == _strip_seconds(two)
    a, b = (json.loads((tmp_path / d / "demo" / "figure-1.json").read_text()) for d in ("one", "two"))
    assert a["panels"] == b["panels"] and a["seed"] == b["seed"]
    assert (tmp_path / "one/demo/figure-1.png").read_bytes() == (tmp_path / "two/demo/figure-1.png").read_bytes()
    c = figure_document(figs["demo/figure-1"], FigureContext(seed=derive_seed(4, "demo/figure-1")))
    assert c["panels"][0]["series"][1]["y"] != a["panels"][0]["series"][1]["y"]  # the seed matters


def test_run_figures_on_dask_local_cluster(figs, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        manifest = run_figures(
            [figs["demo/figure-1"]], out_dir=tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False
        )
    local = run_figures([figs["demo/figure-1"]], out_dir=tmp_path / "local", progress=False)
    assert _strip_seconds(manifest) == _strip_seconds(local)
    assert (tmp_path / "dask/demo/figure-1.png").read_bytes() == (tmp_path / "local/demo/figure-1.png").read_bytes()


def test_manifest_keeps_other_figures_still_on_disk(figs, tmp_path):
    out = tmp_path / "out"
    run_figures([figs["demo/figure-1"]], out_dir=out, progress=False)
    manifest = run_figures([figs["demo/figure-2"]], out_dir=out, tier="full", progress=False)
    assert [e["id"] for e in manifest] == ["demo/figure-1", "demo/figure-2"]
    (out / "demo" / "figure-1.png").unlink()
    manifest = run_figures([figs["demo/figure-2"]], out_dir=out, tier="full", progress=False)
    assert [e["id"] for e in manifest] == ["demo/figure-2"]


def test_in_memory_figure_and_nonfinite_values(tmp_path):
    @figure(id="demo/figure-gap", caption="A line with a gap.")
    def gap(ctx):
        return {
            "params": {"limit": math.inf},
            "panels": [panel("", "x", "y", [series("", [1, 2, 3], [1.0, math.nan, 3.0])], yscale="log")],
        }

    manifest = run_figures([gap], out_dir=tmp_path, progress=False)
    text = (tmp_path / manifest[0]["json"]).read_text()
    assert "NaN" not in text and "Infinity" not in text  # strict JSON
    doc = json.loads(text)
    assert doc["panels"][0]["series"][0]["y"] == [1.0, None, 3.0]
    assert doc["params"] == {"limit": "inf"}
    assert doc["substitute"] is None
    # The schema also admits non-finite values spelled as strings; the renderer draws them.
    doc["panels"][0]["series"][0]["y"][1] = "nan"
    validate(doc, "figure")
    render_json(doc, tmp_path / "strings.png")
    assert (tmp_path / "strings.png").stat().st_size > 0


def test_bad_series_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="lengths differ"):
        series("a", [1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="type must be one of"):
        series("a", [1], [1], type="pie")
    with pytest.raises(ValueError, match="len\\(edges\\) == len\\(counts\\) \\+ 1"):
        series("a", [0, 1], [1, 2], type="hist")

    # Raw dicts that bypass series() are caught before anything is written...
    def raw(s):
        return figure(id="demo/figure-bad", caption="")(lambda ctx: {"params": {}, "panels": [panel("", "", "", [s])]})

    good = series("a", [0, 1], [1, 2])
    for bad, msg in [
        (dict(good, y=[1.0]), "lengths differ"),
        (dict(good, type="pie"), "type must be one of"),
        (dict(good, type="hist"), "hist needs"),
        (dict(good, x=["a", "b"]), "x must hold numbers"),
    ]:
        with pytest.raises(ValueError, match=msg):
            figure_document(raw(bad), FigureContext())
        with pytest.raises(ValueError, match=msg):
            write_figure(raw(bad), out_dir=tmp_path, seed=0)
    assert not list(tmp_path.rglob("*.json")) and not list(tmp_path.rglob("*.png"))

    # ...and by the renderer, which trusts nothing it reads.
    doc = {
        "id": "demo/figure-bad",
        "substitute": None,
        "panels": [
            {
                "title": "",
                "xlabel": "",
                "ylabel": "",
                "xscale": "linear",
                "yscale": "linear",
                "series": [dict(good, y=[1.0])],
            }
        ],
    }
    with pytest.raises(ValueError, match="lengths differ"):
        render_json(doc, tmp_path / "bad.png")
    doc["panels"][0]["series"] = [dict(good, type="pie")]
    with pytest.raises(ValueError, match="type must be one of"):
        render_json(doc, tmp_path / "bad.png")
    doc["panels"][0]["series"], doc["panels"][0]["xscale"] = [good], "logit"
    with pytest.raises(ValueError, match="xscale must be one of"):
        render_json(doc, tmp_path / "bad.png")
    with pytest.raises(ValueError, match="at least one panel"):
        render_json({"id": "demo/figure-bad", "panels": []}, tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


def test_bad_run_arguments(figs, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(UsageError, match="unknown tier 'warp'"):
        run_figures(list(figs.values()), out_dir=out, tier="warp", progress=False)
    with pytest.raises(UsageError, match="given twice"):
        run_figures([figs["demo/figure-1"]] * 2, out_dir=out, progress=False)
    with pytest.raises(UsageError, match="workers"):
        run_figures(list(figs.values()), out_dir=out, workers=0, progress=False)
    with pytest.raises(UsageError, match="scheduler"):
        run_figures(list(figs.values()), out_dir=out, scheduler="localhost", progress=False)
    assert not out.exists()  # nothing written before the arguments are checked


def test_json_is_readable_and_round_trips():
    doc = {"a": [1.0, 0.1 + 0.2, 1e-300], "b": {"c": "ρ", "d": []}, "e": [{"f": None}]}
    text = dumps_figure_json(doc)
    assert json.loads(text) == doc
    assert '"a": [1.0, 0.30000000000000004, 1e-300]' in text and "ρ" in text
    with pytest.raises(ValueError):
        dumps_figure_json({"x": [math.nan]})
