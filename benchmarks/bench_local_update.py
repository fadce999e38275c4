"""Spectral vs stepwise LocalUpdate: time and agreement on the same job.

The spectral path computes each client's message Q_iA_i(x − c_i) through A_i's eigendecomposition
(O(d²) per client per round, any K); the stepwise path runs Algorithm 2's K local steps (O(K d²)).
This script times both on one job, reports the speed-up and the largest relative difference of
the iterates, and times K = 10⁶ on the spectral path alone (the stepwise loop would take hours).

    python benchmarks/bench_local_update.py                 # n=20, d=50, rounds=20, K ∈ {10, 100, 1000}
    python benchmarks/bench_local_update.py --K 10 100 --backend torch --device cpu
    python benchmarks/bench_local_update.py --maml 1 10 100     # MAML clients: Theorem 2's operator vs the
                                                                # inner steps (closed-form recursion, torch autograd)
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from fedtheory.algorithms.local_update import LocalUpdate, run_local_update
from fedtheory.algorithms.surrogate import kappa
from fedtheory.algorithms.theta import Theta
from fedtheory.analysis.rates import tuned_server
from fedtheory.problems.quadratic import make_quadratic


def _timed(fn, repeats: int) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls (the minimum is the least noisy estimate) and the last result."""
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--K", type=int, nargs="+", default=[10, 100, 1000], help="local steps to compare")
    parser.add_argument(
        "--K-spectral-only", type=int, nargs="*", default=[10**6], help="local steps timed on the spectral path alone"
    )
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--device", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--maml",
        type=int,
        nargs="*",
        default=[],
        help="also time MAML clients with these K inner steps (spectral / closed form / autograd)",
    )
    args = parser.parse_args(argv)

    problem = make_quadratic(args.n, args.d, mu=1.0, L=100.0, C=1.0, weights="random", seed=args.seed)
    x0 = np.random.default_rng(args.seed).normal(size=args.d)
    alpha = 0.1
    gamma = 0.5 / (problem.L + alpha)

    def job(K: int) -> LocalUpdate:
        theta = Theta.uniform(K)
        _, L_t, mu_t = kappa(problem, alpha, gamma, theta)
        return LocalUpdate(theta, alpha, gamma, tuned_server("heavy_ball", mu_t, L_t))

    def run(algo: LocalUpdate, path: str):
        h = run_local_update(problem, algo, x0, args.rounds, path=path, backend=args.backend, device=args.device)
        return h.to_numpy()  # includes the device→host copy, and synchronizes a GPU run

    rows = []
    for K in args.K:
        algo = job(K)
        t_spec, h_spec = _timed(lambda: run(algo, "spectral"), args.repeats)
        t_step, h_step = _timed(lambda: run(algo, "stepwise"), 1 if K >= 1000 else args.repeats)
        diff = float(np.max(np.linalg.norm(h_spec.x - h_step.x, axis=1)) / np.max(np.linalg.norm(h_step.x, axis=1)))
        rows.append(
            {
                "K": K,
                "spectral_s": t_spec,
                "stepwise_s": t_step,
                "speedup": t_step / t_spec,
                "max_rel_diff": diff,
                "final_dist": float(h_spec.dist_surrogate[-1]),
            }
        )
    for K in args.K_spectral_only:
        algo = job(K)
        t_spec, h_spec = _timed(lambda: run(algo, "spectral"), args.repeats)
        rows.append(
            {
                "K": K,
                "spectral_s": t_spec,
                "stepwise_s": None,
                "speedup": None,
                "max_rel_diff": None,
                "final_dist": float(h_spec.dist_surrogate[-1]),
                "finite": bool(np.all(np.isfinite(h_spec.x))),
            }
        )

    _print(rows, args)
    if args.maml:
        rows += _maml_rows(problem, x0, args)
    return rows


def _maml_rows(problem, x0, args) -> list[dict]:
    """MAML (α = 0.1): the spectral path uses Theorem 2's Θ' operator; the stepwise path differentiates through the
    K inner steps (numpy: reverse recursion; torch: autograd). All three must give the same iterates."""
    from fedtheory.algorithms.local_update import ServerOpt
    from fedtheory.algorithms.maml import MAML

    rows = []
    for K in args.maml:
        algo = MAML(K, 0.5 / (problem.L + 0.1) / max(K, 1), ServerOpt("gd", lr=0.01), alpha=0.1)
        out = {}
        for name, path, backend in (
            ("spectral", "spectral", "numpy"),
            ("closed form", "stepwise", "numpy"),
            ("autograd", "stepwise", "torch"),
        ):
            if backend == "torch":
                try:
                    import torch  # noqa: F401
                except ImportError:
                    continue
            t, h = _timed(
                lambda: run_local_update(problem, algo, x0, args.rounds, path=path, backend=backend).to_numpy(),
                args.repeats,
            )
            out[name] = (t, h.x)
        ref = out["spectral"][1]
        gap = max(float(np.abs(v[1] - ref).max() / np.abs(ref).max()) for v in out.values())
        rows.append({"maml_K": K, **{f"{k}_s": v[0] for k, v in out.items()}, "max_rel_diff": gap})
        print(f"MAML K={K}: " + ", ".join(f"{k} {v[0]:.4f}s" for k, v in out.items()) + f"; max rel. diff {gap:.1e}")
    return rows


def _print(rows: list[dict], args) -> None:
    title = (
        f"LocalUpdate spectral vs stepwise — n={args.n}, d={args.d}, rounds={args.rounds}, Θ_{{1:K}}, "
        f"heavy-ball server, backend={args.backend}{'' if args.device is None else ':' + args.device}"
    )
    header = ["K", "spectral (s)", "stepwise (s)", "speed-up", "max rel. diff of iterates", "‖x_T − x*(α,γ,Θ)‖"]
    cells = [
        [
            f"{r['K']:,}",
            f"{r['spectral_s']:.4f}",
            "—" if r["stepwise_s"] is None else f"{r['stepwise_s']:.3f}",
            "—" if r["speedup"] is None else f"{r['speedup']:,.0f}×",
            "—" if r["max_rel_diff"] is None else f"{r['max_rel_diff']:.1e}",
            f"{r['final_dist']:.2e}",
        ]
        for r in rows
    ]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # rich is a dependency; keep the script usable without it anyway
        print(title)
        print(" | ".join(header))
        for c in cells:
            print(" | ".join(c))
        return
    table = Table(title=title, caption=f"{platform.processor() or platform.machine()}, numpy {np.__version__}")
    for h in header:
        table.add_column(h, justify="right")
    for c in cells:
        table.add_row(*c)
    Console().print(table)


if __name__ == "__main__":
    main()
