"""Explorer speed: a 10⁴-point frontier through the API and through the command line.

The acceptance asks for under 2 s (API) and under 3 s (command line, imports included), and under 5 s for the
instance-exact mode on n = 100 clients in d = 200 (file to tuned setting). Run:

    python benchmarks/bench_explore.py
"""

from __future__ import annotations

import subprocess
import sys
import time


def main() -> None:
    start = time.perf_counter()
    from fedtheory.explore import compare, frontier, tune

    imported = time.perf_counter()
    for sweep, kw in (
        ("K", {"gamma": 0.005, "lo": 1, "hi": 1e6}),
        ("gamma", {"K": 100}),
        ("alpha", {"K": 100, "gamma": 1e-3}),
    ):
        t = time.perf_counter()
        fr = frontier(mu=1.0, L=100.0, sweep=sweep, values=None, points=10_000, **kw)
        print(f"API frontier sweep {sweep}: {len(fr)} points in {time.perf_counter() - t:.3f} s")
    t = time.perf_counter()
    tune("fedprox", mu=1.0, L=100.0, C=0.1, D=10.0, eps=0.05)
    print(f"API tune fedprox: {time.perf_counter() - t:.3f} s")
    t = time.perf_counter()
    compare(mu=1.0, L=100.0, C=0.1, D=10.0, delta_A=2.0, eps=0.05)
    print(f"API compare (7 methods): {time.perf_counter() - t:.3f} s")
    print(f"import fedtheory.explore: {imported - start:.3f} s")
    t = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fedtheory",
            "explore",
            "frontier",
            "--mu",
            "1",
            "--L",
            "100",
            "--sweep",
            "gamma",
            "--points",
            "10000",
            "--rows",
            "3",
        ],
        check=True,
        capture_output=True,
    )
    print(f"CLI frontier, 10^4 points (process start to exit): {time.perf_counter() - t:.3f} s")
    import tempfile

    import numpy as np

    from fedtheory.explore.instance import tune_instance

    rng = np.random.default_rng(0)
    A = rng.normal(size=(100, 200, 200)) / np.sqrt(200)
    path = tempfile.mkdtemp() + "/fed.npz"
    np.savez(path, A=A @ np.swapaxes(A, 1, 2) + np.eye(200), c=rng.normal(size=(100, 200)))
    t, c = time.perf_counter(), time.process_time()
    adv = tune_instance(path, rounds=50)
    print(
        f"API instance mode, n=100, d=200, {adv.evaluated} settings: {time.perf_counter() - t:.3f} s wall, "
        f"{time.process_time() - c:.3f} s CPU"
    )


if __name__ == "__main__":
    main()
