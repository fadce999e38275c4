"""Smoke test of benchmarks/peers.py: it runs on a minimal grid and writes valid JSON (no timing is asserted;
torch is left out: importing it takes longer than the whole grid)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "peers.py"


@pytest.fixture(scope="module")
def peers():
    spec = importlib.util.spec_from_file_location("bench_peers", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_peers_minimal_grid_writes_json(peers, tmp_path):
    out = tmp_path / "peers.json"
    peers.main(
        [
            "--n",
            "2",
            "--K",
            "1",
            "2",
            "--rounds",
            "3",
            "--repeats",
            "1",
            "--budget",
            "2",
            "--t-sweep",
            "2",
            "3",
            "--t-sweep-cell",
            "2",
            "2",
            "--no-roofline",
            "--no-certify",
            "--no-torch",
            "--json",
            str(out),
        ]
    )
    data = json.loads(out.read_text())
    assert [(c["n"], c["K"]) for c in data["cells"]] == [(2, 1), (2, 2)]
    for c in data["cells"]:
        for name in ("fedtheory", "fedtheory_legacy", "hand_einsum", "hand_matmul"):
            rec = c["contenders"][name]
            assert rec["seconds"] > 0 and rec["rel_diff_vs_hand"] < 1e-12 and not rec["flag_mismatch"]
        assert c["contenders"]["fedtheory"]["path"] in ("step", "spectral")
    assert "fedtheory" in data["slopes"] and data["machine"]["numpy"]
    assert data["table"].startswith("| n | K |")


def test_peers_cuda_script_runs_on_the_cpu(tmp_path):
    """benchmarks/peers_cuda.py (the GPU grid) with ``--device cpu``: its contenders compute the hand loop's iterate
    and it writes valid JSON, so the script a GPU machine runs is tested without one."""
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("bench_peers_cuda", SCRIPT.with_name("peers_cuda.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "peers-cuda.json"
    mod.main(["--device", "cpu", "--n", "2", "--K", "1", "3", "--rounds", "3", "--repeats", "1", "--json", str(out)])
    data = json.loads(out.read_text())
    assert data["complete"] and [(c["n"], c["K"]) for c in data["cells"]] == [(2, 1), (2, 3)]
    for c in data["cells"]:
        for name in ("fedtheory_cuda", "hand_torch_cuda", "torch_per_client_cuda", "fedtheory_numpy_cpu"):
            rec = c["contenders"][name]
            assert rec["seconds"] > 0 and rec["rel_diff_vs_hand_matmul"] < 1e-12 and not rec["flag_mismatch"]
    assert data["table"].startswith("| n | K | fedtheory_cuda")
    with pytest.raises(ValueError, match="unknown device"):
        mod.main(["--device", "tpu"])
