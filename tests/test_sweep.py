"""fedtheory.sweep.map_grid: inline, processes, Dask; resumable store; clear errors."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fedtheory.content import UsageError
from fedtheory.sweep import check_scheduler, map_grid, point_key, write_json_atomic


def square(point):
    """Module level, so spawned workers import it by reference."""
    return {"x": point["x"], "y": point["x"] ** 2 / 7, "pid": 0}


def square_or_fail(point):
    """Records each call in ``point['calls']``; fails while a file ``fail-<x>`` sits beside that directory."""
    calls = Path(point["calls"])
    (calls / f"{point['x']}-{os.getpid()}-{os.urandom(4).hex()}").write_text("")
    if (calls.parent / f"fail-{point['x']}").exists():
        raise RuntimeError(f"failing at {point['x']}")
    return (point["x"], point["x"] ** 0.5)


POINTS = [{"x": i} for i in range(7)]


def test_inline_and_processes_agree_in_order():
    inline = map_grid(square, POINTS)
    assert [r["x"] for r in inline] == list(range(7))
    assert map_grid(square, POINTS, workers=2) == inline


def test_progress_callback_sees_every_point(tmp_path):
    seen = []
    map_grid(square, POINTS[:3], store=tmp_path, progress=lambda i, r: seen.append(i))
    assert sorted(seen) == [0, 1, 2]
    seen.clear()
    map_grid(square, POINTS[:4], store=tmp_path, progress=lambda i, r: seen.append(i))
    assert sorted(seen) == [0, 1, 2, 3], "loaded points count as progress too"


def test_store_files_are_keyed_by_point_and_round_tripped(tmp_path):
    calls = tmp_path / "calls"
    calls.mkdir()
    points = [{"x": i, "calls": str(calls)} for i in range(3)]
    fresh = map_grid(square_or_fail, points, store=tmp_path / "store")
    assert fresh == [[i, i**0.5] for i in range(3)], "tuples come back as lists, as a rerun would load them"
    files = sorted(p.name for p in (tmp_path / "store").iterdir())
    assert files == sorted(f"{point_key(p)}.json" for p in points)
    stored = json.loads((tmp_path / "store" / f"{point_key(points[1])}.json").read_text())
    assert stored == {"point": points[1], "result": [1, 1.0]}
    assert map_grid(square_or_fail, points, store=tmp_path / "store") == fresh
    assert len(list(calls.iterdir())) == 3, "a complete store recomputes nothing"


KILLED_SCRIPT = '''
import json, os, signal, sys
from pathlib import Path
from fedtheory.sweep import map_grid

CALLS, STORE, KILL_AT = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])

def fn(point):
    (CALLS / f"{point['x']}-{os.urandom(4).hex()}").write_text("")
    if point["x"] == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)  # as if the machine went away mid-sweep
    return {"x": point["x"], "y": point["x"] ** 3 / 11}

if __name__ == "__main__":
    print(json.dumps(map_grid(fn, [{"x": i} for i in range(10)], store=STORE)))
'''


def _run_killable(script: Path, calls: Path, store: Path, kill_at: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), str(calls), str(store), str(kill_at)], capture_output=True, text=True, timeout=60
    )


def _calls(calls: Path) -> list[int]:
    return sorted(int(p.name.split("-")[0]) for p in calls.iterdir())


def test_killed_sweep_resumes_with_only_unfinished_points(tmp_path):
    script = tmp_path / "sweep_script.py"
    script.write_text(KILLED_SCRIPT)
    calls, store = tmp_path / "calls", tmp_path / "store"
    calls.mkdir()
    proc = _run_killable(script, calls, store, kill_at=4)
    assert proc.returncode == -signal.SIGKILL
    assert _calls(calls) == [0, 1, 2, 3, 4]
    assert len(list(store.glob("*.json"))) == 4 and not list(store.glob(".*.tmp")), "atomic writes leave no debris"
    for p in calls.iterdir():
        p.unlink()
    resumed = _run_killable(script, calls, store, kill_at=-1)
    assert resumed.returncode == 0, resumed.stderr
    assert _calls(calls) == [4, 5, 6, 7, 8, 9], "only the unfinished points are computed"
    clean_calls, clean_store = tmp_path / "clean_calls", tmp_path / "clean_store"
    clean_calls.mkdir()
    clean = _run_killable(script, clean_calls, clean_store, kill_at=-1)
    assert json.loads(resumed.stdout) == json.loads(clean.stdout)
    assert json.loads(clean.stdout)[9] == {"x": 9, "y": 9**3 / 11}


@pytest.mark.parametrize("workers", [1, 2])
def test_failing_sweep_keeps_finished_points(tmp_path, workers):
    calls, store = tmp_path / "calls", tmp_path / "store"
    calls.mkdir()
    points = [{"x": i, "calls": str(calls)} for i in range(6)]
    (tmp_path / "fail-3").write_text("")
    with pytest.raises(RuntimeError, match="failing at 3"):
        map_grid(square_or_fail, points, workers=workers, store=store)
    finished = {json.loads(p.read_text())["point"]["x"] for p in store.glob("*.json")}
    assert 3 not in finished
    if workers == 1:
        assert finished == {0, 1, 2}
    first_calls = len(list(calls.iterdir()))
    (tmp_path / "fail-3").unlink()
    results = map_grid(square_or_fail, points, workers=workers, store=store)
    assert len(list(calls.iterdir())) - first_calls == 6 - len(finished), "only unfinished points are recomputed"
    assert results == [[i, i**0.5] for i in range(6)]


def test_errors_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="--workers must be at least 1"):
        map_grid(square, POINTS, workers=0)
    for bad in ("localhost:8786", "tcp://host", "http://h:1", "tcp://h:99999"):
        with pytest.raises(UsageError, match="malformed scheduler address"):
            check_scheduler(bad)
    assert check_scheduler("tls://sched.example.org:8786") == "tls://sched.example.org:8786"
    with pytest.raises(ValueError, match="not JSON-able"):
        map_grid(square, [{"x": object()}], store=tmp_path)
    assert point_key({"a": 1, "b": [1, 2]}) == point_key({"b": (1, 2), "a": 1})


def test_unreachable_scheduler_is_a_usage_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UsageError, match=f"cannot reach Dask scheduler at tcp://127.0.0.1:{port} within 1s"):
        map_grid(square, POINTS, scheduler=f"tcp://127.0.0.1:{port}", connect_timeout=1)


def test_dask_cluster_map_and_resume(tmp_path):
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        points = list(range(-5, 5))
        assert map_grid(abs, points, scheduler=cluster.scheduler_address) == [abs(p) for p in points]
        first = map_grid(abs, points[:4], scheduler=cluster.scheduler_address, store=tmp_path)
        seen = []
        full = map_grid(
            abs, points, scheduler=cluster.scheduler_address, store=tmp_path, progress=lambda i, r: seen.append(i)
        )
    assert first == full[:4] and full == [abs(p) for p in points] and sorted(seen) == list(range(10))


def test_write_json_atomic_leaves_old_file_on_failure(tmp_path):
    path = tmp_path / "x.json"
    write_json_atomic(path, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"a": object()})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_module_docstring_example_runs():
    import doctest

    import fedtheory.sweep

    assert doctest.testmod(fedtheory.sweep).failed == 0
