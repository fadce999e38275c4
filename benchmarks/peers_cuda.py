"""FedAvg on federated least squares on a CUDA GPU: fedtheory's torch backend against what a GPU user writes.

The grid and the federation of ``benchmarks/peers.py`` (``LeastSquaresFederation.random(n, m=50, d=200)``,
γ = 0.5/L, x0 = 0, T rounds, full participation), on one GPU:

* ``fedtheory_cuda``        — ``fedtheory.methods.run("fedavg", fed, x0, T, K=K, gamma=γ, backend="torch",
                              device="cuda")``: the plain call, path chosen by the library, from a cold federation.
* ``hand_torch_cuda``       — a hand-vectorized torch loop on the GPU (all clients batched with ``bmm``, the data
                              already on the device): what a GPU user writes in 15 lines.
* ``torch_per_client_cuda`` — the FedLab/Flower simulation pattern (``peers.torch_per_client``) on the GPU.
* ``fedtheory_numpy_cpu``   — the same plain call on numpy, on this machine's CPU with one BLAS thread (CPU time):
                              the CPU table's fedtheory row, measured beside the GPU on the same host.

The federation's copy of its data on the GPU (``LeastSquaresFederation.on``) is made in the warm-up call and kept,
as the hand loops' tensors are; its one-time cost is recorded per cell (``device_copy_seconds``). GPU contenders are
timed in wall time between ``torch.cuda.synchronize()`` calls (the result copied back to the
host), CPU contenders in CPU time; interleaved, order shuffled (``peers.shuffled_orders``), minimum over repeats. A contender whose cell would
exceed ``--budget`` seconds is timed on fewer rounds R and scaled to T (× T/R); one whose single round is
predicted (from the earlier cells, per client · local step) to exceed the budget is skipped and its prediction
recorded. fedtheory's calls are always timed on all T rounds: the library picks its path from T (literal steps or
the spectral closed form), so a call of fewer rounds can time another algorithm; only their repeats shrink to fit
the budget. Every final iterate is compared with ``peers.hand_matmul``'s (numpy, CPU) after the same
number of rounds (relative difference; ``flag_mismatch`` above 1e-12).

    python benchmarks/peers_cuda.py --json peers-cuda.json              # needs a CUDA device
    python benchmarks/peers_cuda.py --device cpu --n 10 --K 1 10 --rounds 5   # the script itself, without a GPU
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402 - the CPU benchmark's contenders and machine record, beside this file

GPU_CONTENDERS = ("fedtheory_cuda", "hand_torch_cuda", "torch_per_client_cuda")


def hand_torch(a, y, p, K: int, gamma: float) -> Callable[[int], np.ndarray]:
    """``peers.hand_matmul`` written in torch on the tensors' device: ``a`` (n, m, d), ``y`` (n, m), ``p`` (n,)."""
    import torch

    n, m, d = a.shape

    def run(R: int):
        x = torch.zeros(d, dtype=torch.float64, device=a.device)
        for _ in range(R):
            X = x.expand(n, d).clone()
            for _ in range(K):
                r = torch.bmm(a, X[:, :, None])[:, :, 0] - y
                X -= (gamma / m) * torch.bmm(r[:, None, :], a)[:, 0, :]
            x = p @ X
        return x.cpu().numpy()

    return run


def _timer(device: str) -> Callable[[Callable[[], Any], bool], tuple[float, Any]]:
    import torch

    def synchronized(fn: Callable[[], Any]) -> Any:
        out = fn()  # every GPU contender returns a host array: the copy synchronizes
        if device != "cpu":
            torch.cuda.synchronize()
        return out

    def timed(fn: Callable[[], Any], on_gpu: bool) -> tuple[float, Any]:
        if not on_gpu:
            return peers._cpu(fn)
        if device != "cpu":
            torch.cuda.synchronize()  # nothing queued before the timing
        return peers._cpu(lambda: synchronized(fn), clock=time.perf_counter)

    return timed


def run_cell(n: int, K: int, T: int, args, history: dict) -> dict:
    import torch

    from fedtheory.methods import choose_path, get
    from fedtheory.problems.finite_sum import LeastSquaresFederation

    timed = _timer(args.device)
    fed = LeastSquaresFederation.random(n, m=peers.M_SAMPLES, d=peers.DIM, seed=args.seed)
    gamma = 0.5 / fed.smoothness()
    a, y, p = fed.a, fed.y, fed.p
    t_copy = timed(lambda: fed.on("torch", device=args.device), True)[0]
    ga = torch.as_tensor(a, device=args.device)
    gy = torch.as_tensor(y, device=args.device)
    gp = torch.as_tensor(p, device=args.device)
    ta = [ga[i] for i in range(n)]
    ty = [gy[i][:, None] for i in range(n)]
    builders: dict[str, Callable[[int], Any]] = {
        "fedtheory_cuda": peers.fedtheory_torch(fed, K, gamma, device=args.device),
        "hand_torch_cuda": hand_torch(ga, gy, gp, K, gamma),
        "torch_per_client_cuda": peers.torch_per_client(ta, ty, p, K, gamma, device=args.device),
        "fedtheory_numpy_cpu": lambda R: peers.fedtheory_methods(fed, K, gamma)(R)[0],
    }
    # the library's calls run all T rounds (their path depends on T); the hand loops have no set-up, a round scales
    fixed_rounds = {"fedtheory_cuda", "fedtheory_numpy_cpu"}
    cell: dict = {
        "n": n,
        "K": K,
        "T": T,
        "gamma": gamma,
        "path": choose_path(get("fedavg", K=K, gamma=gamma), fed, T),
        "device_copy_seconds": t_copy,
        "contenders": {},
    }
    plan = {}
    for nm, fn in builders.items():
        on_gpu = nm in GPU_CONTENDERS
        predicted = history.get(nm, 0.0) * n * K
        if predicted > args.budget:
            plan[nm] = {"skip": True, "predicted_s": predicted * T}
            continue
        if nm in fixed_rounds:
            tT, _ = timed(lambda: fn(T), on_gpu)  # warm-up on the path T picks, and the repeats' size
            plan[nm] = {"R": T, "repeats": int(max(1, min(args.repeats, args.budget // max(tT, 1e-9))))}
            continue
        t1, _ = timed(lambda: fn(1), on_gpu)  # warm-up and probe
        R = int(min(T, max(1, args.budget // max(t1 * args.repeats, 1e-9))))
        plan[nm] = {"R": R, "repeats": int(max(1, min(args.repeats, args.budget // max(t1 * R, 1e-9))))}
    names = [nm for nm in builders if not plan[nm].get("skip")]
    times: dict[str, list] = {nm: [] for nm in names}
    finals: dict[str, Any] = {}
    orders = peers.shuffled_orders(names, [args.seed, n, K])
    for rep in range(max(plan[nm]["repeats"] for nm in names)):
        for nm in next(orders):
            if rep < plan[nm]["repeats"]:
                t, finals[nm] = timed(lambda: builders[nm](plan[nm]["R"]), nm in GPU_CONTENDERS)
                times[nm].append(t)
    R_check = min(plan[nm]["R"] for nm in names)
    ref = peers.hand_matmul(a, y, p, K, gamma)(R_check)
    cell["checked_at_rounds"] = R_check
    for nm in builders:
        if plan[nm].get("skip"):
            cell["contenders"][nm] = {"skipped": True, "predicted_s": plan[nm]["predicted_s"]}
            continue
        R, t_meas = plan[nm]["R"], min(times[nm])
        t_T = t_meas * T / R
        out = finals[nm] if R == R_check else builders[nm](R_check)
        diff = peers._rel(np.asarray(out), ref)
        cell["contenders"][nm] = {
            "seconds": t_T,
            "clock": "wall (GPU synchronized)" if nm in GPU_CONTENDERS else "CPU, one thread",
            "measured_seconds": t_meas,
            "rounds_timed": R,
            "repeats": plan[nm]["repeats"],
            "rel_diff_vs_hand_matmul": diff,
            "flag_mismatch": bool(not diff <= peers.MISMATCH_TOL),
        }
        if R < T:
            cell["contenders"][nm]["extrapolated_from_rounds"] = R
        if nm not in fixed_rounds:
            history[nm] = t_meas / (R * n * K)
    base = cell["contenders"]["fedtheory_cuda"]["seconds"]
    for rec in cell["contenders"].values():
        rec["ratio_vs_fedtheory_cuda"] = rec.get("seconds", rec.get("predicted_s")) / base
    return cell


def table(cells: list[dict]) -> str:
    return peers.ratio_table(
        cells,
        "fedtheory_cuda",
        ["hand_torch_cuda", "torch_per_client_cuda", "fedtheory_numpy_cpu"],
        "ratio_vs_fedtheory_cuda",
        "rel_diff_vs_hand_matmul",
        lambda c: c["path"],
        "× = contender time / fedtheory_cuda time (GPU: wall, synchronized; fedtheory_numpy_cpu: CPU time, one "
        "thread, the same host); * = timed on fewer rounds and scaled to T; ⚠ = an iterate differs from the numpy "
        "hand loop's by > 1e-12 (relative).",
    )


def main(argv: list[str] | None = None) -> dict:
    parser = peers.grid_parser(__doc__)
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu to try the script")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per contender per cell (all repeats)")
    args = parser.parse_args(argv)

    import torch
    from threadpoolctl import threadpool_limits

    from fedtheory.backends import get_backend
    from fedtheory.sweep import write_json_atomic

    get_backend("torch", device=args.device)  # a device that is not there: one clear line (ValueError)
    torch.set_num_threads(1)
    result: dict = {"machine": peers.machine_info(), "config": vars(args) | {"m": peers.M_SAMPLES, "d": peers.DIM}}
    if args.device != "cpu":
        result["machine"]["gpu"] = torch.cuda.get_device_name(args.device)
        result["machine"]["torch_cuda"] = torch.version.cuda
    started = time.perf_counter()
    with threadpool_limits(1):
        run_cell(2, 1, 2, args, {})  # first calls (CUDA context, kernels' compilation) outside any timing
        history: dict = {}
        cells = peers.run_grid(args, result, lambda n, K: run_cell(n, K, args.rounds, args, history))
    result.update(cells=cells, table=table(cells), elapsed_wall_s=time.perf_counter() - started, complete=True)
    print(result["table"])
    if args.json:
        write_json_atomic(args.json, result, indent=1, default=float)
    return result


if __name__ == "__main__":
    main()
