"""FedAvg on federated least squares: fedtheory against what peers write (numpy by hand, torch per client, Flower).

Every contender computes the same FedAvg iterate on ``LeastSquaresFederation.random(n, m=50, d=200)``
(γ = 0.5/L, L = ``fed.smoothness()``, x0 = 0, T rounds, full participation):

* ``fedtheory``        — ``fedtheory.methods.run("fedavg", fed, x0, T, K=K, gamma=γ)`` (path chosen by the library;
                         the path taken is recorded). Every timed call starts from a cold federation (its cached
                         quadratic / x* cleared), as a user's single call would.
* ``fedtheory_torch``  — the same plain call with ``backend="torch", device="cpu"`` (float64 tensors; when torch is
                         installed and not ``--no-torch``): the torch backend against numpy, same path choice.
* ``fedtheory_legacy`` — ``fedtheory.algorithms.run_local_update(fed, LocalUpdate.fedavg(K, γ), x0, T)``.
* ``hand_einsum``, ``hand_matmul`` — a hand-vectorized numpy loop (all clients batched); the faster of the two is
                         the ``hand`` reference every final iterate is checked against.
* ``torch_per_client`` — the FedLab/Flower simulation pattern: per round, per client a float64
                         ``nn.Linear(d, 1, bias=False)`` set to x, ``SGD(lr=γ)``, K steps of ``0.5·mse``, then the
                         p-weighted average of the client weights.
* ``flwr``             — Flower's own ``NumPyClient`` (through ``Client.fit``, i.e. with Flower's parameter
                         (de)serialization) plus Flower's FedAvg ``aggregate``; only when ``flwr`` is importable
                         (``--flwr-site DIR`` appends a separate venv's site-packages to ``sys.path``).

Timing: CPU time (``time.process_time``) with ONE BLAS/torch thread, contenders interleaved within each cell (order
shuffled, seeded, across repetitions: with a rotation each contender always followed the same one, and the one after
Flower's loop ran on cold caches, 20-27 % slower at n = 10), minimum over repetitions. A contender whose cell would
exceed ``--budget`` seconds is timed on fewer rounds R and scaled to T as t(R)·T/R (the hand/torch/flwr loops have
no set-up), recorded as ``extrapolated_from_rounds``; a contender whose one round is predicted (from the previous
cells) to exceed the budget is skipped (``skipped``, with the prediction; ``hand_matmul``, the reference, is
never). The library's calls (``fedtheory``, ``fedtheory_torch``, ``fedtheory_legacy``) always run all T rounds,
fewer repetitions if need be: they choose their path and its set-up for the rounds asked. Final iterates are
compared with the hand loop's after the same number of rounds (relative difference; ``flag_mismatch`` above 1e-12).

The Flower column needs flwr, kept out of the project venv: ``python3 -m venv /work/flwr-venv &&
/work/flwr-venv/bin/pip install flwr numpy scipy threadpoolctl`` (Python 3.11 like the project venv), then pass
``--flwr-site``. The contenders must share one process to be interleaved, and that venv has no torch.

Also: a roofline (single-thread float64 GEMM peak, triad bandwidth; achieved GFLOP/s and GB/s of the step
path's batched mat-vecs), a small T sweep for slopes in T, and certificate timings (``certify_local_update`` vs
a raw PEPit solve of the same SDP; ``fedtheory.methods.pep.certify`` likewise; the spectral engine).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/peers.py --json peers.json                 # full grid (~25 min, 2 cores)
    PYTHONPATH=$PWD .venv/bin/python benchmarks/peers.py --n 10 100 --K 1 10 --rounds 50 --repeats 3 --json o.json
    ... --flwr-site /work/flwr-venv/lib/python3.11/site-packages      # add the Flower column
    ... --no-certify --no-roofline --t-sweep                          # skip parts
"""

from __future__ import annotations

import argparse
import datetime
import gc
import math
import os
import platform
import sys
import time
from typing import Any, Callable, Iterator

import numpy as np

M_SAMPLES, DIM = 50, 200
MISMATCH_TOL = 1e-12


# ----------------------------------------------------------------------------------------------------------------
# contenders: each is run(R) -> final iterate (d,) after R rounds
# ----------------------------------------------------------------------------------------------------------------


def _cold(fed) -> None:
    # a user's call sees a fresh federation: drop what an earlier timed call cached (the quadratic's
    # eigendecomposition, x*), else min-over-repeats would time only the first call's luck
    fed._quadratic = None
    fed._x_star = None


def fedtheory_methods(fed, K: int, gamma: float, path: str | None = None) -> Callable[[int], tuple[np.ndarray, str]]:
    from fedtheory import methods

    def run(R: int):
        _cold(fed)
        kw = {} if path is None else {"path": path}
        h = methods.run("fedavg", fed, np.zeros(fed.d), R, K=K, gamma=gamma, **kw)
        return np.asarray(h.x[-1], dtype=np.float64), h.path

    return run


def fedtheory_torch(fed, K: int, gamma: float, device: str = "cpu") -> Callable[[int], np.ndarray]:
    from fedtheory import methods

    def run(R: int):
        _cold(fed)
        h = methods.run("fedavg", fed, np.zeros(fed.d), R, K=K, gamma=gamma, backend="torch", device=device)
        return h.to_numpy().x[-1]

    return run


def fedtheory_legacy(fed, K: int, gamma: float) -> Callable[[int], np.ndarray]:
    from fedtheory.algorithms import LocalUpdate, run_local_update

    def run(R: int):
        _cold(fed)
        h = run_local_update(fed, LocalUpdate.fedavg(K, gamma), np.zeros(fed.d), R)
        return np.asarray(h.to_numpy().x[-1], dtype=np.float64)

    return run


def hand_einsum(a: np.ndarray, y: np.ndarray, p: np.ndarray, K: int, gamma: float) -> Callable[[int], np.ndarray]:
    n, m, d = a.shape

    def run(R: int):
        x = np.zeros(d)
        for _ in range(R):
            X = np.broadcast_to(x, (n, d)).copy()
            for _ in range(K):
                r = np.einsum("nmd,nd->nm", a, X) - y
                X -= gamma * np.einsum("nm,nmd->nd", r, a) / m
            x = p @ X
        return x

    return run


def hand_matmul(a: np.ndarray, y: np.ndarray, p: np.ndarray, K: int, gamma: float) -> Callable[[int], np.ndarray]:
    n, m, d = a.shape

    def run(R: int):
        x = np.zeros(d)
        for _ in range(R):
            X = np.broadcast_to(x, (n, d)).copy()
            for _ in range(K):
                r = np.matmul(a, X[:, :, None])[:, :, 0] - y
                X -= (gamma / m) * np.matmul(r[:, None, :], a)[:, 0, :]
            x = p @ X
        return x

    return run


def torch_per_client(
    ta: list, ty: list, p: np.ndarray, K: int, gamma: float, device: str = "cpu"
) -> Callable[[int], np.ndarray]:
    """``ta``, ``ty``: the clients' tensors, already on ``device``."""
    import torch

    d = ta[0].shape[1]
    pt = torch.as_tensor(p, dtype=torch.float64, device=device)

    def run(R: int):
        torch.manual_seed(0)  # nn.Linear's (overwritten) random init: reproducible
        x = torch.zeros(d, dtype=torch.float64, device=device)
        for _ in range(R):
            new = torch.zeros(d, dtype=torch.float64, device=device)
            for i in range(len(ta)):
                model = torch.nn.Linear(d, 1, bias=False, device=device).double()
                with torch.no_grad():
                    model.weight.copy_(x[None, :])
                opt = torch.optim.SGD(model.parameters(), lr=gamma)
                for _ in range(K):
                    opt.zero_grad()
                    # ty[i] is (m, 1): with a (m,) target the difference would broadcast to (m, m) silently
                    loss = 0.5 * ((model(ta[i]) - ty[i]) ** 2).mean()  # = f_i = (1/2m)‖A_i x − y_i‖²
                    loss.backward()
                    opt.step()
                new += pt[i] * model.weight.detach()[0]
            x = new
        return x.cpu().numpy().copy()

    return run


def flwr_fedavg(a: np.ndarray, y: np.ndarray, K: int, gamma: float) -> Callable[[int], np.ndarray]:
    """Flower's NumPyClient (numpy local steps, as a Flower numpy user writes them) through ``Client.fit`` with
    Flower's ndarray <-> Parameters serialization, and Flower's FedAvg ``aggregate`` (weights = num_examples)."""
    import flwr as fl
    from flwr.common import FitIns, ndarrays_to_parameters, parameters_to_ndarrays
    from flwr.server.strategy.aggregate import aggregate

    n, m, d = a.shape

    class LSClient(fl.client.NumPyClient):
        def __init__(self, i: int) -> None:
            self.a, self.y = a[i], y[i]

        def fit(self, parameters, config):
            x = parameters[0].copy()
            for _ in range(K):
                x -= (gamma / m) * (self.a.T @ (self.a @ x - self.y))
            return [x], m, {}

    clients = [LSClient(i).to_client() for i in range(n)]

    def run(R: int):
        x = np.zeros(d)
        for _ in range(R):
            ins = FitIns(ndarrays_to_parameters([x]), {})
            results = []
            for c in clients:
                res = c.fit(ins)
                results.append((parameters_to_ndarrays(res.parameters), res.num_examples))
            x = aggregate(results)[0]
        return np.asarray(x, dtype=np.float64)

    return run


# ----------------------------------------------------------------------------------------------------------------
# machine, roofline
# ----------------------------------------------------------------------------------------------------------------


def machine_info() -> dict:
    import numpy

    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "cpus": os.cpu_count(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    try:
        with open("/proc/cpuinfo") as fh:
            info["cpu_model"] = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), None)
    except OSError:
        info["cpu_model"] = None
    try:
        import torch

        info["torch"] = torch.__version__
    except ImportError:
        info["torch"] = None
    try:
        import flwr

        info["flwr"] = flwr.__version__
    except ImportError:
        info["flwr"] = None
    try:
        import fedtheory

        info["fedtheory"] = getattr(fedtheory, "__version__", None)
        import subprocess

        info["git_commit"] = (
            subprocess.run(
                ["git", "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                cwd=os.path.dirname(os.path.abspath(__file__)),
            ).stdout.strip()
            or None
        )
    except Exception:  # noqa: BLE001 - informational only
        pass
    return info


def roofline(repeats: int) -> dict:
    """Single-thread float64 GEMM peak (GFLOP/s) and STREAM-style triad bandwidth (GB/s), min CPU time."""
    rng = np.random.default_rng(0)
    N = 2000
    A, B = rng.normal(size=(N, N)), rng.normal(size=(N, N))
    t_gemm = min(_cpu(lambda: A @ B)[0] for _ in range(repeats))
    L = 1 << 24  # 3 × 128 MiB: far beyond any cache
    b, c = rng.normal(size=L), rng.normal(size=L)
    out = np.empty(L)

    def triad():
        np.multiply(c, 3.0, out=out)
        np.add(out, b, out=out)  # out = b + 3c in two passes: 5 arrays moved

    t_triad = min(_cpu(triad)[0] for _ in range(repeats))
    t_copy = min(_cpu(lambda: np.copyto(out, b))[0] for _ in range(repeats))
    return {
        "gemm_n": N,
        "gemm_gflops": 2 * N**3 / t_gemm / 1e9,
        "triad_bytes_moved": 5 * 8 * L,
        "triad_gbs": 5 * 8 * L / t_triad / 1e9,
        "copy_gbs": 2 * 8 * L / t_copy / 1e9,
        "note": "triad written as two numpy passes (out = 3c; out += b): 5 arrays of 8L bytes moved",
    }


def shuffled_orders(names: list[str], seed: Any) -> Iterator[list[str]]:
    """Orders of ``names`` for interleaved repetitions, shuffled (seeded): no contender always follows the same one,
    as with a rotation, where the one after Flower's loop always ran on cold caches (20-27 % slower at n = 10).

    >>> orders = shuffled_orders(["a", "b", "c"], 0)
    >>> sorted(next(orders)) == ["a", "b", "c"]
    True
    """
    rng = np.random.default_rng(seed)
    while True:
        yield [names[i] for i in rng.permutation(len(names))]


def _cpu(fn: Callable[[], Any], clock: Callable[[], float] = time.process_time) -> tuple[float, Any]:
    """(seconds of ``clock`` that ``fn()`` took, its result)."""
    # as timeit does: no cyclic-GC pause inside a timing (refcounting still frees); one collection per cell
    # instead, as gc.collect() costs ~1 s once torch is imported
    was = gc.isenabled()
    gc.disable()
    try:
        t0 = clock()
        out = fn()
        return clock() - t0, out
    finally:
        if was:
            gc.enable()


# ----------------------------------------------------------------------------------------------------------------
# one cell
# ----------------------------------------------------------------------------------------------------------------


def _rel(x: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(x - ref) / max(np.linalg.norm(ref), 1e-300))


def run_cell(n: int, K: int, T: int, args, history: dict, have_torch: bool, have_flwr: bool) -> dict:
    """Time every contender on one (n, K, T) cell; ``history`` holds each contender's best per-unit costs."""
    from fedtheory.methods import choose_path, get
    from fedtheory.problems.finite_sum import LeastSquaresFederation

    fed = LeastSquaresFederation.random(n, m=M_SAMPLES, d=DIM, seed=args.seed)
    L = fed.smoothness()
    gamma = 0.5 / L
    a, y, p = fed.a, fed.y, fed.p
    path = choose_path(get("fedavg", K=K, gamma=gamma), fed, T)
    builders: dict[str, Callable[[int], Any]] = {
        "fedtheory": fedtheory_methods(fed, K, gamma, path=None),
        "fedtheory_legacy": fedtheory_legacy(fed, K, gamma),
        "hand_einsum": hand_einsum(a, y, p, K, gamma),
        "hand_matmul": hand_matmul(a, y, p, K, gamma),
    }
    if have_torch:
        import torch

        builders["fedtheory_torch"] = fedtheory_torch(fed, K, gamma)
        ta = [torch.as_tensor(a[i]) for i in range(n)]  # the clients' data already in memory as tensors
        ty = [torch.as_tensor(y[i][:, None]) for i in range(n)]
        builders["torch_per_client"] = torch_per_client(ta, ty, p, K, gamma)
    if have_flwr:
        builders["flwr"] = flwr_fedavg(a, y, K, gamma)
    # the library's calls run all T rounds always, as a user's call does: the path and its set-up (spectral form,
    # summed operator S, moments) are chosen for the run's rounds, so a run of fewer rounds scaled to T would time
    # another algorithm (at n = 1000, K = 100 it once showed the torch backend 4.7x slower than numpy's same run);
    # the other contenders have no set-up, so a round scales
    fixed_rounds = {"fedtheory", "fedtheory_legacy", "fedtheory_torch"}
    cell: dict = {"n": n, "K": K, "T": T, "gamma": gamma, "L": L, "fedtheory_path_auto": path, "contenders": {}}

    # ---- plan: rounds and repetitions per contender within its budget. Predictions come from the earlier cells
    # (cells run in order of growing n·K): per (client · local step) for a round.
    plan = {}
    for name in builders:
        unit = history.get(name)
        predicted_round = None if unit is None else unit * n * max(K, 1)
        if name in fixed_rounds:
            # all T rounds, on the path auto picks for T; the warm-up call (1 round, fedtheory's on the same path)
            # sizes the repetitions: a spectral call is mostly set-up, a step call costs ~T rounds
            warm = fedtheory_methods(fed, K, gamma, path=path) if name == "fedtheory" else builders[name]
            t1, _ = _cpu(lambda: warm(1))
            est = t1 if path == "spectral" else t1 * T
            plan[name] = {"R": T, "repeats": int(max(1, min(args.repeats, args.budget // max(est, 1e-9))))}
            continue
        # hand_matmul is never skipped: it is the reference every iterate is checked against
        if (predicted_round or 0.0) > args.budget and name != "hand_matmul":
            plan[name] = {
                "skip": True,
                "predicted_s": (predicted_round or 0.0) * T,
                "predicted_rounds_unknown": predicted_round is None,
            }
            continue
        # probe: one round (also the warm-up)
        per_round = max(_cpu(lambda: builders[name](1))[0], 1e-9)
        R = int(min(T, max(1, args.budget // max(per_round * args.repeats, 1e-9))))
        reps = int(max(1, min(args.repeats, args.budget // max(per_round * R, 1e-9))))
        plan[name] = {"R": R, "repeats": reps}

    # ---- interleaved timing, order shuffled
    gc.collect()
    names = [nm for nm in builders if not plan[nm].get("skip")]
    orders = shuffled_orders(names, [args.seed, n, K])
    times: dict[str, list] = {nm: [] for nm in names}
    finals: dict[str, Any] = {}
    max_reps = max(plan[nm]["repeats"] for nm in names)
    for rep in range(max_reps):
        for nm in next(orders):
            if rep >= plan[nm]["repeats"]:
                continue
            t, out = _cpu(lambda: builders[nm](plan[nm]["R"]))
            times[nm].append(t)
            finals[nm] = out

    # ---- results and extrapolation
    for nm in builders:
        if plan[nm].get("skip"):
            cell["contenders"][nm] = {"skipped": True, "predicted_s": plan[nm]["predicted_s"], "flag_over_budget": True}
            continue
        R = plan[nm]["R"]
        t_meas = min(times[nm])
        t_T = t_meas if R == T else t_meas * T / R  # only loops without set-up run fewer rounds
        rec = {
            "seconds": t_T,
            "measured_seconds": t_meas,
            "rounds_timed": R,
            "repeats": plan[nm]["repeats"],
            "all_seconds": times[nm],
            "flag_over_budget": t_meas * plan[nm]["repeats"] > args.budget,
        }
        if R < T:
            rec["extrapolated_from_rounds"] = R
        if nm == "fedtheory":
            finals[nm], rec["path"] = finals[nm]
        cell["contenders"][nm] = rec
        if nm not in fixed_rounds:  # the latest cell predicts a round
            history[nm] = t_meas / (R * n * max(K, 1))

    # ---- the hand reference and the iterate check, after the same number of rounds
    timed = [nm for nm in names]
    hand = min(
        (nm for nm in ("hand_einsum", "hand_matmul") if nm in timed), key=lambda nm: cell["contenders"][nm]["seconds"]
    )
    cell["hand_reference"] = hand
    R_check = min(plan[nm]["R"] for nm in timed)
    cell["checked_at_rounds"] = R_check
    ref = finals[hand] if plan[hand]["R"] == R_check else builders[hand](R_check)
    for nm in timed:
        if plan[nm]["R"] == R_check:
            out = finals[nm]
        elif nm == "fedtheory":
            # the same path as the timed call (auto would re-decide for fewer rounds)
            out = fedtheory_methods(fed, K, gamma, path=path)(R_check)[0]
        else:
            out = builders[nm](R_check)
        diff = _rel(np.asarray(out), ref)
        cell["contenders"][nm]["rel_diff_vs_hand"] = diff
        cell["contenders"][nm]["flag_mismatch"] = bool(not diff <= MISMATCH_TOL)

    # ---- ratios and roofline of the literal-step paths
    base = cell["contenders"]["fedtheory"]["seconds"]
    for nm, rec in cell["contenders"].items():
        t = rec.get("seconds", rec.get("predicted_s"))
        rec["ratio_vs_fedtheory"] = t / base
    # the literal steps' work: two batched mat-vecs per step, 2·nmd flops each. fedtheory's rows count these
    # literal-equivalent flops, so above-peak values mean its path (sample space, spectral) did fewer
    flops_round = K * 4.0 * n * M_SAMPLES * DIM
    bytes_round = K * 2.0 * n * M_SAMPLES * DIM * 8  # each reads the (n, m, d) float64 array once
    cell["flops_per_round"], cell["bytes_per_round"] = flops_round, bytes_round
    for nm in ("fedtheory", "fedtheory_legacy", "hand_einsum", "hand_matmul"):
        rec = cell["contenders"].get(nm)
        if rec is None or rec.get("skipped") or (nm == "fedtheory" and rec.get("path") != "step"):
            continue
        per_round = rec["seconds"] / T  # a whole call: the library's set-up included
        rec["gflops"] = flops_round / per_round / 1e9
        rec["gbs"] = bytes_round / per_round / 1e9
    return cell


# ----------------------------------------------------------------------------------------------------------------
# certificates
# ----------------------------------------------------------------------------------------------------------------


def certificates(pepit_K: list[int], spectral_K: list[int], repeats: int) -> dict:
    """Wall times (solvers may thread): certify_local_update and fedtheory.methods.pep.certify, each against a raw
    PEPit solve of the same SDP; the spectral engine."""
    from fedtheory.certify import federated_pep as fp
    from fedtheory.certify.pep import _solve_detail

    mu, L, n = 1.0, 10.0, 2
    gamma = 0.5 / L
    out: dict = {
        "setting": {"mu": mu, "L": L, "gamma": gamma, "clients": n, "measure": "floor", "function_class": "quadratic"},
        "pepit": [],
        "spectral": [],
    }

    cpu: dict = {}

    def wall(fn):
        # wall time is what a user waits; CPU time (all threads) is recorded too, as the machine may be shared
        t0, c0 = time.perf_counter(), time.process_time()
        r = fn()
        cpu["last"] = time.process_time() - c0
        return time.perf_counter() - t0, r

    for K in pepit_K:
        th = fp._theta("1:K", K)
        pp = np.full(n, 1.0 / n)

        def raw():
            pb = fp._pepit_problem(
                mu, L, K, gamma, th, 0.0, pp, "C", "floor", "quadratic", None, None, "gd", None, None
            )
            return (
                fp._solve_detail(pb, wrapper=fp._WRAPPER)
                if hasattr(fp, "_solve_detail")
                else _solve_detail(pb, wrapper=fp._WRAPPER)
            )

        def full():
            return fp.certify_local_update(mu, L, K, gamma, clients=n, engine="pepit", measure="floor")

        t_raw, t_full, v_raw, v_full, c_raw, c_full = [], [], None, None, [], []
        for rep in range(repeats):  # interleaved, order rotated
            for which in ("raw", "full") if rep % 2 == 0 else ("full", "raw"):
                t, r = wall(raw if which == "raw" else full)
                if which == "raw":
                    t_raw.append(t)
                    c_raw.append(cpu["last"])
                    v_raw = math.sqrt(max(r[0], 0.0))
                else:
                    t_full.append(t)
                    c_full.append(cpu["last"])
                    v_full = r.value
        out["pepit"].append(
            {
                "K": K,
                "certify_s": min(t_full),
                "raw_pepit_s": min(t_raw),
                "ratio": min(t_full) / min(t_raw),
                "certify_cpu_s": min(c_full),
                "raw_pepit_cpu_s": min(c_raw),
                "certify_value": v_full,
                "raw_value_C1": v_raw,
            }
        )
    # the methods-as-data certificate (fedtheory.methods.pep.certify: SDP, replayed worst case, probe) against a
    # raw solve of the same SDP, built by the same compiler
    from fedtheory.certify.pep_clients import _WRAPPER
    from fedtheory.methods import pep as mpep

    out["methods_pep"] = []
    for K in pepit_K:
        hyper = {"K": K, "gamma": gamma}
        m = mpep._resolve("fedavg", hyper, mu, L)
        pp = np.full(n, 1.0 / n)

        def raw_m():
            built = mpep._build(
                m, "floor", n, pp, m.aggregation_weights(pp), np.ones(n), mu, L, "C", "quadratic", None, None
            )
            return _solve_detail(built.pb, wrapper=_WRAPPER)

        def full_m():
            return mpep.certify("fedavg", mu=mu, L=L, clients=n, measure="floor", hyper=hyper)

        t_raw, t_full, c_raw, c_full, cert = [], [], [], [], None
        for rep in range(repeats):
            for which in ("raw", "full") if rep % 2 == 0 else ("full", "raw"):
                t, r = wall(raw_m if which == "raw" else full_m)
                (t_raw if which == "raw" else t_full).append(t)
                (c_raw if which == "raw" else c_full).append(cpu["last"])
                if which == "full":
                    cert = r
        out["methods_pep"].append(
            {
                "K": K,
                "certify_s": min(t_full),
                "raw_pepit_s": min(t_raw),
                "ratio": min(t_full) / min(t_raw),
                "certify_cpu_s": min(c_full),
                "raw_pepit_cpu_s": min(c_raw),
                "certify_value": cert.value,
                "lower": cert.lower,
                "probe_starts": cert.details.get("probe_starts"),
            }
        )
    for K in spectral_K:
        ts, cs, val = [], [], None
        for _ in range(repeats):
            t, r = wall(lambda: fp.certify_local_update(mu, L, K, gamma, clients=n, engine="spectral", measure="floor"))
            ts.append(t)
            cs.append(cpu["last"])
            val = r.value
        out["spectral"].append({"K": K, "certify_s": min(ts), "certify_cpu_s": min(cs), "value": val})
    return out


# ----------------------------------------------------------------------------------------------------------------
# slopes, table, main
# ----------------------------------------------------------------------------------------------------------------


def _slope(xs: list, ts: list) -> float | None:
    pts = [(math.log(x), math.log(t)) for x, t in zip(xs, ts) if t and t > 0]
    if len(pts) < 2:
        return None
    X, Y = np.array(pts).T
    return float(np.polyfit(X, Y, 1)[0])


def slopes(cells: list[dict], t_sweep: list[dict]) -> dict:
    """Least-squares log-log slopes of each contender's time: in n (per K), in K (per n), in T (the T sweep).
    Skipped cells are left out; extrapolated ones are in (their T-scaling is linear by construction)."""
    out: dict = {}
    names = sorted({nm for c in cells for nm in c["contenders"]})
    for nm in names:

        def t(c):
            r = c["contenders"].get(nm, {})
            return None if r.get("skipped") else r.get("seconds")

        s = {"n": {}, "K": {}}
        for K in sorted({c["K"] for c in cells}):
            cs = [c for c in cells if c["K"] == K and t(c)]
            s["n"][str(K)] = _slope([c["n"] for c in cs], [t(c) for c in cs])
        for n in sorted({c["n"] for c in cells}):
            cs = [c for c in cells if c["n"] == n and t(c)]
            s["K"][str(n)] = _slope([c["K"] for c in cs], [t(c) for c in cs])
        ts = [c for c in t_sweep if t(c) and not c["contenders"][nm].get("extrapolated_from_rounds")]
        s["T"] = _slope([c["T"] for c in ts], [t(c) for c in ts])
        out[nm] = s
    return out


def ratio_table(cells: list[dict], base: str, others: list[str], ratio: str, diff: str, path: Any, legend: str) -> str:
    """A markdown table of the cells: ``base``'s seconds (its path: ``path(cell)``) and every other contender's
    ``ratio`` to it, then the largest ``diff`` of an iterate, and the ``legend``."""
    head = f"| n | K | {base} s (path) | " + " | ".join(f"{nm} ×" for nm in others) + " | max rel diff |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for c in cells:
        row = [str(c["n"]), str(c["K"]), f"{c['contenders'][base]['seconds']:.3g} ({path(c)})"]
        for nm in others:
            r = c["contenders"].get(nm)
            if r is None:
                row.append("–")
            elif r.get("skipped"):
                row.append(f"~{r[ratio]:.3g} (skipped, predicted)")
            else:
                mark = "*" if r.get("extrapolated_from_rounds") else ""
                row.append(f"{r[ratio]:.3g}{mark}")
        diffs = [r[diff] for r in c["contenders"].values() if diff in r]
        flag = " ⚠" if any(r.get("flag_mismatch") for r in c["contenders"].values()) else ""
        row.append(f"{max(diffs):.1e} @R={c['checked_at_rounds']}{flag}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines + ["", legend])


def table(cells: list[dict]) -> str:
    names = [
        nm
        for nm in (
            "fedtheory_legacy",
            "fedtheory_torch",
            "hand_einsum",
            "hand_matmul",
            "torch_per_client",
            "flwr",
        )
        if any(nm in c["contenders"] for c in cells)
    ]
    return ratio_table(
        cells,
        "fedtheory",
        names,
        "ratio_vs_fedtheory",
        "rel_diff_vs_hand",
        lambda c: c["contenders"]["fedtheory"].get("path"),
        "× = contender CPU time / fedtheory CPU time (1 thread, min over repeats); * = timed on fewer rounds "
        "and scaled to T; ⚠ = an iterate differs from the hand loop's by > 1e-12 (relative).",
    )


def run_grid(args, result: dict, run: Callable[[int, int], dict]) -> list[dict]:
    """``run(n, K)`` on every cell of the grid in order of growing n, K, each cell printed as it ends and the
    partial results written (atomically) after it, so that an interrupted run keeps what it measured."""
    from fedtheory.sweep import write_json_atomic

    cells: list[dict] = []
    for n in sorted(args.n):
        for K in sorted(args.K):
            c = run(n, K)
            cells.append(c)
            if args.json:
                write_json_atomic(args.json, result | {"cells": cells, "complete": False}, indent=1, default=float)
            times = (
                f"{nm}={r.get('seconds', r.get('predicted_s')):.3g}s{'(skip)' if r.get('skipped') else ''}"
                for nm, r in c["contenders"].items()
            )
            print(f"n={n} K={K}: " + ", ".join(times), flush=True)
    return cells


def grid_parser(doc: str) -> argparse.ArgumentParser:
    """The command line both benchmarks share: the grid (--n, --K, --rounds), --repeats, --seed, --json."""
    parser = argparse.ArgumentParser(
        description=doc.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=doc
    )
    parser.add_argument("--n", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--K", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the results here (atomically)")
    return parser


def main(argv: list[str] | None = None) -> dict:
    parser = grid_parser(__doc__)
    parser.add_argument(
        "--budget",
        type=float,
        default=10.0,
        help="CPU seconds per contender per cell (all repeats); beyond it: fewer rounds, or skip",
    )
    parser.add_argument(
        "--t-sweep",
        type=int,
        nargs="*",
        default=[10, 50],
        help="rounds for the slope in T (at --t-sweep-cell); empty: none",
    )
    parser.add_argument("--t-sweep-cell", type=int, nargs=2, default=[100, 10], metavar=("N", "K"))
    parser.add_argument("--no-roofline", action="store_true")
    parser.add_argument("--no-certify", action="store_true")
    parser.add_argument("--certify-pepit-K", type=int, nargs="*", default=[1, 2, 5])
    parser.add_argument("--certify-spectral-K", type=int, nargs="*", default=[1, 10, 100])
    parser.add_argument("--certify-repeats", type=int, default=2)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument(
        "--flwr-site",
        default=None,
        help="a separate venv's site-packages holding flwr, appended to sys.path (the project "
        "venv's packages keep precedence)",
    )
    args = parser.parse_args(argv)

    if args.flwr_site:
        sys.path.append(args.flwr_site)
    from threadpoolctl import threadpool_limits

    have_torch = False
    if not args.no_torch:
        try:
            import torch

            torch.set_num_threads(1)
            have_torch = True
        except ImportError:
            pass
    try:
        import flwr  # noqa: F401

        have_flwr = True
    except Exception:  # noqa: BLE001 - any import failure: no column
        have_flwr = False

    started = time.perf_counter()
    result: dict = {
        "machine": machine_info(),
        "config": vars(args)
        | {"m": M_SAMPLES, "d": DIM, "threads": 1, "have_flwr": have_flwr, "have_torch": have_torch},
    }
    with threadpool_limits(1):
        if not args.no_roofline:
            result["roofline"] = roofline(args.repeats)
            print(
                f"roofline: {result['roofline']['gemm_gflops']:.1f} GFLOP/s gemm, "
                f"{result['roofline']['triad_gbs']:.1f} GB/s triad",
                flush=True,
            )
        # every contender's first call (imports, torch/Flower initialisation) on a tiny cell, not in any timing
        run_cell(2, 1, 2, args, {}, have_torch, have_flwr)
        history: dict = {}
        cells = []
        cells = run_grid(args, result, lambda n, K: run_cell(n, K, args.rounds, args, history, have_torch, have_flwr))
        result["cells"] = cells
        t_sweep = []
        if args.t_sweep:
            sn, sK = args.t_sweep_cell
            for T in sorted(args.t_sweep):
                t_sweep.append(run_cell(sn, sK, T, args, history, have_torch, have_flwr))
        result["t_sweep"] = t_sweep
        result["slopes"] = slopes(cells, t_sweep)
        if "roofline" in result:
            for c in cells:
                for rec in c["contenders"].values():
                    if "gflops" in rec:
                        rec["gflops_frac_peak"] = rec["gflops"] / result["roofline"]["gemm_gflops"]
                        rec["gbs_frac_peak"] = rec["gbs"] / result["roofline"]["triad_gbs"]
    if not args.no_certify:
        # the SDP solvers are left their default threads: this part is wall time, as a user sees it
        result["certificates"] = certificates(args.certify_pepit_K, args.certify_spectral_K, args.certify_repeats)
    result["table"] = table(cells)
    result["elapsed_wall_s"] = time.perf_counter() - started
    result["complete"] = True
    print(result["table"])
    if "roofline" in result:
        print("\nroofline (fraction of single-thread peak, literal-step paths):")
        for c in cells:
            parts = [
                f"{nm} {r['gflops']:.2f} GFLOP/s ({r['gflops_frac_peak']:.0%}), {r['gbs']:.2f} GB/s "
                f"({r['gbs_frac_peak']:.0%})"
                for nm, r in c["contenders"].items()
                if "gflops_frac_peak" in r
            ]
            if parts:
                print(f"  n={c['n']} K={c['K']}: " + "; ".join(parts))
    if "certificates" in result:
        print("\ncertificates (wall s):")
        for r in result["certificates"]["pepit"]:
            print(
                f"  pepit K={r['K']}: certify_local_update {r['certify_s']:.3g} (CPU {r['certify_cpu_s']:.3g}), "
                f"raw PEPit {r['raw_pepit_s']:.3g} (CPU {r['raw_pepit_cpu_s']:.3g}), ×{r['ratio']:.2f}"
            )
        for r in result["certificates"].get("methods_pep", []):
            print(
                f"  methods.pep.certify fedavg K={r['K']}: {r['certify_s']:.3g} (CPU {r['certify_cpu_s']:.3g}), "
                f"raw PEPit {r['raw_pepit_s']:.3g} (CPU {r['raw_pepit_cpu_s']:.3g}), ×{r['ratio']:.2f}"
            )
        for r in result["certificates"]["spectral"]:
            print(f"  spectral K={r['K']}: {r['certify_s']:.3g} (CPU {r['certify_cpu_s']:.3g})")
    if args.json:
        from fedtheory.sweep import write_json_atomic

        write_json_atomic(args.json, result, indent=1, default=float)
    return result


if __name__ == "__main__":
    main()
