"""Certificates against their SDP: each certificate's time as a ratio to a raw PEPit solve of the same program.

Issue 23 asks for a certificate's wall time at most 2× the raw PEPit solve of its SDP (probe, extraction and replay
together at most the solve's own time), and the spectral engine at K = 100 within 5 s; issue 22 for n = 4 clients
and K ≤ 5 within 30 s. For FedAvg (μ = 1, L = 10, γ = 0.5/L, server step η = 1 for the rate) this prints, per
(n, K, measure):

* ``local_update``  — ``certify_local_update(..., engine="pepit")`` against ``raw``: ``_pepit_problem`` built and
                      solved by PEPit through ``_solve_detail`` (Clarabel, its retries, the SCS cross-check);
* ``methods_pep``   — ``fedtheory.methods.pep.certify("fedavg", ...)`` against a raw solve of the PEP its compiler
                      (``fedtheory.methods.pep._build``) writes;
* ``spectral``      — ``certify_local_update`` with its default engine for the quadratic floor and rate (the spectral
                      relaxation), and the spectral program alone (``_spectral_floor`` / ``_spectral_rate``).

Times are CPU seconds of this process (``time.process_time``; the SDP solvers run one thread here) and wall seconds,
minimum over ``--repeats`` interleaved runs: on a shared machine wall time measures the load, CPU time the code.

    PYTHONPATH=$PWD python benchmarks/bench_certify.py                         # the grid above (minutes)
    PYTHONPATH=$PWD python benchmarks/bench_certify.py --n 4 --K 5 --measures rate --parts spectral
    PYTHONPATH=$PWD python benchmarks/bench_certify.py --json certify.json
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

MU, L = 1.0, 10.0
GAMMA = 0.5 / L
ETA = 1.0


def _timed(fn):
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - t0, out


def _raw_solve(pb) -> float:
    """PEPit's solve of a built PEP through the project's solver policy (:func:`fedtheory.certify.pep._solve_detail`:
    Clarabel, its retries and the SCS cross-check, which some of these SDPs need): the cost of the SDP itself."""
    from fedtheory.certify.pep_clients import _WRAPPER
    from fedtheory.certify.pep import _solve_detail

    try:
        return _solve_detail(pb, wrapper=_WRAPPER)[0]
    except RuntimeError:  # no reliable value (Clarabel and SCS both inaccurate): its cost is still timed
        return math.nan


def _pair(name: str, certify, raw, repeats: int) -> dict:
    """Interleaved (order rotated) minimum CPU and wall times of a certificate and its raw solve."""
    cpu = {"cert": [], "raw": []}
    wall = {"cert": [], "raw": []}
    value = None
    for rep in range(repeats):
        for which in ("raw", "cert") if rep % 2 == 0 else ("cert", "raw"):
            c, w, out = _timed(certify if which == "cert" else raw)
            cpu[which].append(c)
            wall[which].append(w)
            if which == "cert":
                value = out
    row = {
        "part": name,
        "certify_cpu_s": min(cpu["cert"]),
        "raw_cpu_s": min(cpu["raw"]),
        "certify_wall_s": min(wall["cert"]),
        "raw_wall_s": min(wall["raw"]),
    }
    row["ratio_cpu"] = row["certify_cpu_s"] / row["raw_cpu_s"]
    row["ratio_wall"] = row["certify_wall_s"] / row["raw_wall_s"]
    row["value"], row["lower"], row["status"] = value.value, value.lower, value.status
    return row


def run(ns: list[int], Ks: list[int], measures: list[str], parts: list[str], repeats: int) -> list[dict]:
    from fedtheory.certify import federated_pep as fp
    from fedtheory.methods import pep as mpep

    rows = []
    for n in ns:
        pp = np.full(n, 1.0 / n)
        for K in Ks:
            th = fp._theta("1:K", K)
            for measure in measures:
                eta = ETA if measure == "rate" else None
                label = {"n": n, "K": K, "measure": measure}
                if "local_update" in parts:
                    row = _pair(
                        "local_update",
                        lambda: fp.certify_local_update(
                            MU, L, K, GAMMA, clients=n, engine="pepit", measure=measure, eta=eta
                        ),
                        lambda: _raw_solve(
                            fp._pepit_problem(
                                MU, L, K, GAMMA, th, 0.0, pp, "C", measure, "quadratic", eta, None, "gd", None, None
                            )
                        ),
                        repeats,
                    )
                    rows.append({**label, **row})
                    print(_line(rows[-1]), flush=True)
                if "methods_pep" in parts:
                    hyper = {"K": K, "gamma": GAMMA} | ({"eta": eta} if eta else {})
                    m = mpep._resolve("fedavg", hyper, MU, L)
                    row = _pair(
                        "methods_pep",
                        lambda: mpep.certify("fedavg", mu=MU, L=L, clients=n, measure=measure, hyper=hyper),
                        lambda: _raw_solve(
                            mpep._build(
                                m,
                                measure,
                                n,
                                pp,
                                m.aggregation_weights(pp),
                                np.ones(n),
                                MU,
                                L,
                                "C",
                                "quadratic",
                                None,
                                None,
                            ).pb
                        ),
                        repeats,
                    )
                    rows.append({**label, **row})
                    print(_line(rows[-1]), flush=True)
                if "spectral" in parts:
                    if measure == "floor":
                        program = lambda: fp._spectral_floor(MU, L, GAMMA, th, 0.0, pp, "C", 48)  # noqa: E731
                    else:
                        program = lambda: fp._spectral_rate(MU, L, GAMMA, th, 0.0, pp, ETA, 48)  # noqa: E731
                    row = _pair(
                        "spectral",
                        lambda: fp.certify_local_update(MU, L, K, GAMMA, clients=n, measure=measure, eta=eta),
                        program,
                        repeats,
                    )
                    row["raw_is"] = "the spectral program alone (build, compile, solve)"
                    rows.append({**label, **row})
                    print(_line(rows[-1]), flush=True)
    return rows


def _line(r: dict) -> str:
    def fmt(v):
        return "none" if v is None else f"{v:.6g}"

    return (
        f"{r['part']:<13} n={r['n']} K={r['K']:<3} {r['measure']:<5} certify {r['certify_cpu_s']:7.2f} s CPU "
        f"({r['certify_wall_s']:7.2f} wall)  raw {r['raw_cpu_s']:6.2f} s CPU ({r['raw_wall_s']:6.2f} wall)  "
        f"ratio {r['ratio_cpu']:5.2f} CPU, {r['ratio_wall']:5.2f} wall  value {fmt(r['value'])} "
        f"lower {fmt(r['lower'])} {r['status']}"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--K", type=int, nargs="+", default=[1, 5, 10])
    ap.add_argument("--measures", nargs="+", default=["floor", "rate"], choices=["floor", "rate"])
    ap.add_argument(
        "--parts",
        nargs="+",
        default=["local_update", "methods_pep", "spectral"],
        choices=["local_update", "methods_pep", "spectral"],
    )
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args(argv)
    import cvxpy  # noqa: F401  (imported before timing: a one-time cost of the process, not of a certificate)
    import PEPit  # noqa: F401

    rows = run(a.n, a.K, a.measures, a.parts, a.repeats)
    worst = max((r["ratio_cpu"] for r in rows if math.isfinite(r["ratio_cpu"])), default=None)
    print(f"largest certificate / raw-solve CPU ratio: {worst}")
    if a.json:
        from fedtheory.sweep import atomic_writer

        with atomic_writer(a.json) as fh:
            json.dump({"rows": rows, "times": "CPU seconds of one process; wall seconds beside them"}, fh, indent=1)


if __name__ == "__main__":
    main()
