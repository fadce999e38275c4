"""The ``fedtheory`` command line, run as a user runs it (a subprocess), and on a Dask LocalCluster."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fedtheory.claims.core import derive_seed
from fedtheory.cli import main
from fedtheory.schemas import validate

CONTENT = '''
from fedtheory.claims.core import claim

def _make(i):
    @claim(id=f"demo/lemma-{i}", ref=f"Lemma {i}", title="t", statement="s", kind="numeric")
    def check(ctx):
        draws = ctx.rng.normal(size=4)
        return ctx.verified(measured={"draws": draws.tolist(), "seed": ctx.seed})
    return check

LEMMAS = [_make(i) for i in range(1, 5)]

@claim(id="demo/lemma-9", ref="Lemma 9", title="t", statement="s", kind="numeric", requires=("cuda",))
def lemma_9(ctx):
    return ctx.verified()
'''


def fedtheory(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    # cuda disabled: the demo's claim that requires it is skipped on every machine, GPU or not
    env = {**os.environ, "FEDTHEORY_DISABLE": "cuda"}
    return subprocess.run(
        [sys.executable, "-m", "fedtheory", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / "paper_checks").mkdir()
    (tmp_path / "paper_checks" / "demo.py").write_text(CONTENT)
    return tmp_path


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize(
    "args,needles",
    [
        (["check", "--paper", "nosuchpaper"], ["unknown paper 'nosuchpaper'", "known: demo"]),
        (["check", "--tier", "warp"], ["unknown tier 'warp'"]),
        (["check", "no/such/path.py"], ["path does not exist: no/such/path.py"]),
        (["check", "--claim", "demo/theorem-*"], ["no claim matches"]),
        (["check", "--workers", "0"], ["--workers must be at least 1"]),
        (["check", "--scheduler", "localhost:8786"], ["malformed scheduler address"]),
        (["check", "--seed", "abc"], ["invalid int value"]),
        (["check", "--bogus"], ["unrecognized arguments"]),
        (["figures", "--tier", "warp"], ["unknown tier"]),
        (["figures", "--figure", "demo/figure-7"], ["unknown figure 'demo/figure-7'"]),
        (["figures", "--paper", "nosuchpaper"], ["unknown paper 'nosuchpaper'"]),
        (["figures", "no/such/dir"], ["path does not exist"]),
    ],
)
def test_bad_input_is_one_line_and_exit_2(repo, args, needles, write_demo_figures):
    write_demo_figures(repo / "figures", full_tier=False)
    assert_one_line_error(fedtheory(*args, cwd=repo), *needles)


def test_no_content_and_broken_content(tmp_path):
    (tmp_path / "empty").mkdir()
    assert_one_line_error(fedtheory("check", "empty", cwd=tmp_path), "no content files in empty")
    (tmp_path / "figures").mkdir()  # a project of its own (no claims yet): the installed papers are not mixed in
    assert_one_line_error(fedtheory("check", cwd=tmp_path), "no content files found", str(tmp_path))
    (tmp_path / "bad.py").write_text("import nosuchmodule_xyz\n")
    assert_one_line_error(fedtheory("check", "bad.py", cwd=tmp_path), "cannot load", "line 1", "nosuchmodule_xyz")


def test_installed_content_is_used_where_the_cwd_has_none(tmp_path):
    """In a directory without content folders, the papers that come with fedtheory are checked and listed."""
    proc = fedtheory("check", "--list", "--claim", "localupdate/lemma-2", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()] == ["id", "localupdate/lemma-2"]


def test_version_and_help(tmp_path, capsys):
    proc = fedtheory("--version", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "fedtheory 0.1.0"
    assert main(["check", "--help"]) == 0
    assert "--scheduler" in capsys.readouterr().out


def test_check_json_validates_and_exit_codes(repo):
    out = repo / "report" / "check.json"
    proc = fedtheory("check", "--json", str(out), "--seed", "7", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    validate(data, "check")
    assert [c["id"] for c in data["claims"]] == [f"demo/lemma-{i}" for i in (1, 2, 3, 4, 9)]
    assert data["summary"]["verified"] == 4 and data["summary"]["skipped"] == 1 and data["summary"]["passed"]
    assert data["environment"]["seed"] == 7
    assert data["claims"][0]["evidence"]["seed"] == derive_seed(7, "demo/lemma-1")
    assert "cuda: disabled by FEDTHEORY_DISABLE" in proc.stdout  # the table lists skips with the reason
    # A failing claim makes the exit code 1 and the report still validates.
    (repo / "paper_checks" / "more.py").write_text(
        textwrap.dedent('''
        from fedtheory.claims.core import claim
        @claim(id="more/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
        def lemma_1(ctx):
            return ctx.inconclusive(notes="budget ran out")
    ''')
    )
    proc = fedtheory("check", "--json", str(out), cwd=repo)
    assert proc.returncode == 1
    data = json.loads(out.read_text())
    validate(data, "check")
    assert data["summary"]["inconclusive"] == 1 and data["summary"]["failed"] == ["more/lemma-1"]
    proc = fedtheory("check", "--paper", "demo", "--claim", "demo/lemma-[12]", "--json", str(out), cwd=repo)
    assert proc.returncode == 0
    assert [c["id"] for c in json.loads(out.read_text())["claims"]] == ["demo/lemma-1", "demo/lemma-2"]


def test_schema_rejects_bad_reports(repo):
    import jsonschema

    out = repo / "check.json"
    assert fedtheory("check", "--json", str(out), cwd=repo).returncode == 0
    good = json.loads(out.read_text())
    for mutate in (
        lambda d: d["claims"][0].update(status="maybe"),
        lambda d: d["claims"][0]["evidence"].pop("notes"),
        lambda d: d["summary"].pop("error"),
        lambda d: d.pop("environment"),
        lambda d: d["claims"][0].update(id="Not An Id"),
    ):
        bad = json.loads(json.dumps(good))
        mutate(bad)
        with pytest.raises(jsonschema.ValidationError):
            validate(bad, "check")


def _numbers(report: dict) -> list:
    return [(c["id"], c["status"], c["evidence"]["seed"], c["evidence"]["measured"]) for c in report["claims"]]


def test_workers_do_not_change_results(repo):
    one, two = repo / "one.json", repo / "two.json"
    inline = repo / "inline.json"
    assert fedtheory("check", "--workers", "1", "--json", str(one), cwd=repo).returncode == 0
    assert fedtheory("check", "--workers", "2", "--json", str(two), cwd=repo).returncode == 0
    assert fedtheory("check", "--timeout", "0", "--json", str(inline), cwd=repo).returncode == 0
    a, b, d = (json.loads(p.read_text()) for p in (one, two, inline))
    assert _numbers(a) == _numbers(b) == _numbers(d)
    # a time limit (the default) runs claims in a worker process even for --workers 1; --timeout 0 inline
    assert {c["executor"]["kind"] for c in a["claims"]} == {"process"}
    assert {c["executor"]["kind"] for c in b["claims"]} == {"process"}
    assert {c["executor"]["kind"] for c in d["claims"]} == {"local"}
    again = repo / "again.json"
    assert fedtheory("check", "--json", str(again), cwd=repo).returncode == 0
    assert _numbers(json.loads(again.read_text())) == _numbers(a), "same seed, same numbers"
    other = repo / "other.json"
    assert fedtheory("check", "--seed", "1", "--json", str(other), cwd=repo).returncode == 0
    assert _numbers(json.loads(other.read_text())) != _numbers(a)


def test_check_on_dask_cluster(repo):
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        workers = set(cluster.scheduler_info["workers"])
        assert len(workers) == 2
        out = repo / "dask.json"
        proc = fedtheory("check", "--scheduler", cluster.scheduler_address, "--json", str(out), cwd=repo)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    validate(data, "check")
    assert len(data["claims"]) == 5
    for c in data["claims"]:
        assert c["executor"]["kind"] == "dask"
        assert c["executor"]["worker"] in workers
    local = repo / "local.json"
    assert fedtheory("check", "--json", str(local), cwd=repo).returncode == 0
    assert _numbers(data) == _numbers(json.loads(local.read_text())), "seeds do not depend on where claims run"


def test_unreachable_scheduler_is_one_line(repo, monkeypatch, capsys):
    import socket

    import fedtheory.sweep

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(fedtheory.sweep, "CONNECT_TIMEOUT_S", 1.0)
    monkeypatch.chdir(repo)
    assert main(["check", "--scheduler", f"tcp://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: cannot reach Dask scheduler at tcp://127.0.0.1:{port}")


def test_startup_does_not_import_heavy_libraries(repo):
    code = (
        "import sys; from fedtheory.cli import main; main(['check', '--tier', 'warp']); main(['--version']); "
        "print(sorted(m for m in ('torch', 'sympy', 'matplotlib', 'distributed', 'dask', 'scipy', 'cvxpy') "
        "if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr


def test_figures_command_calls_the_engine(repo, monkeypatch, capsys, write_demo_figures):
    import fedtheory.plotting.engine as engine

    write_demo_figures(repo / "figures")
    calls = []

    def run_figures(figures, *, out_dir, tier, seed, workers, scheduler, progress):
        calls.append(
            dict(
                ids=[f.id for f in figures],
                out_dir=out_dir,
                tier=tier,
                seed=seed,
                workers=workers,
                scheduler=scheduler,
                progress=progress,
            )
        )
        return [
            {"id": f.id, "png": f"{f.paper}/{f.slug}.png", "json": f"{f.paper}/{f.slug}.json", "seconds": 0.0}
            for f in figures
        ]

    monkeypatch.setattr(engine, "run_figures", run_figures)
    monkeypatch.chdir(repo)
    assert main(["figures", "--out", "o", "--seed", "3", "--workers", "2"]) == 0
    assert calls[-1] == dict(
        ids=["demo/figure-1"], out_dir=Path("o"), tier="fast", seed=3, workers=2, scheduler=None, progress=True
    )
    assert main(["figures", "--tier", "full", "--figure", "demo/figure-2"]) == 0
    assert calls[-1]["ids"] == ["demo/figure-2"] and calls[-1]["out_dir"] == Path("out/figures")
    assert "demo/figure-2: out/figures/demo/figure-2.png" in capsys.readouterr().out


def test_figures_command_end_to_end(repo):
    (repo / "figures").mkdir()
    (repo / "figures" / "demo.py").write_text(
        textwrap.dedent('''
        from fedtheory.plotting.spec import figure, panel, series
        @figure(id="demo/figure-1", caption="a line")
        def figure_1(ctx):
            return {"params": {}, "panels": [panel("p", "x", "y", [series("s", [0, 1], [1, float(ctx.rng.uniform())])])]}
    ''')
    )
    proc = fedtheory("figures", "--out", "o", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest = json.loads((repo / "o" / "manifest.json").read_text())
    validate(manifest, "manifest")
    data = json.loads((repo / "o" / manifest[0]["json"]).read_text())
    validate(data, "figure")
    assert (repo / "o" / manifest[0]["png"]).stat().st_size > 0


def test_figure_with_a_missing_requirement_is_skipped_and_said(tmp_path, run_cli):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "demo.py").write_text(
        "from fedtheory.plotting.spec import figure, panel, series\n"
        "@figure(id='demo/figure-1', caption='plain')\n"
        "def f1(ctx):\n"
        "    return {'params': {}, 'panels': [panel('', 'x', 'y', [series('s', [0, 1], [1, 0])])]}\n"
        "@figure(id='demo/figure-2', caption='needs torch', requires=('torch',))\n"
        "def f2(ctx):\n"
        "    raise AssertionError('must not run without torch')\n"
    )
    env = dict(os.environ, FEDTHEORY_DISABLE="torch")
    proc = run_cli("figures", "--out", str(tmp_path / "out"), cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "demo/figure-2: skipped, missing requirement: torch: disabled by FEDTHEORY_DISABLE" in proc.stdout
    assert "1 figures written, 1 skipped" in proc.stdout
    assert (tmp_path / "out" / "demo" / "figure-1.png").exists() and not (
        tmp_path / "out" / "demo" / "figure-2.json"
    ).exists()


def test_an_explore_command_ends_without_teardown_and_loses_nothing(tmp_path):
    """The supervised child of ``explore`` ends with ``os._exit`` once flushed (``cli._end_explore_child``, a fifth
    of the command's CPU saved): its output, its JSON and its exit codes are those of an ordinary exit."""
    args = ["explore", "tune", "fedavg", "--mu", "1", "--L", "100", "--C", "0.1", "--D", "10", "--rounds", "50"]
    proc = fedtheory(*args, "--class", "d1", "--json", "child.json", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1].startswith("hypothesis: class: d = 1")  # the table's last note
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*args, "--class", "d1", "--json", str(tmp_path / "in-process.json")]) == 0
    assert (tmp_path / "child.json").read_bytes() == (tmp_path / "in-process.json").read_bytes()
    assert_one_line_error(fedtheory(*args, "--class", "nope", cwd=tmp_path), "function_class", "nope")
    # a reader that goes away (| head -1): the first line, no "Exception ignored", and 141 (as a Unix tool killed by
    # SIGPIPE) when a write came after head left; 0 when the whole table was in the pipe's buffer before (a race)
    command = f"set -o pipefail; {shlex.quote(sys.executable)} -m fedtheory {' '.join(args)} --class d1 | head -1"
    closed = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert closed.returncode in (0, 141) and closed.stderr == "", closed
    assert closed.stdout.strip() == "fedtheory explore tune: fedavg (class: d = 1)", closed
