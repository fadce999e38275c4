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

Times are CPU seconds of this process (``time.process_time``; the SDP solvers run one thread here, and BLAS one
thread unless ``--blas-threads`` says otherwise, as the claims run) and wall seconds, minimum over ``--repeats``
interleaved runs (``--matrix-repeats`` for the matrix): on a shared machine wall time measures the load, CPU time
the code.

    PYTHONPATH=$PWD python benchmarks/bench_certify.py                         # the grid above (minutes)
    PYTHONPATH=$PWD python benchmarks/bench_certify.py --n 4 --K 5 --measures rate --parts spectral
    PYTHONPATH=$PWD python benchmarks/bench_certify.py --json certify.json

``--matrix`` times the certificates as a user calls them instead (``fedtheory explore certify``'s layer and
``fedtheory.methods.pep.certify``): methods fedavg, fedprox (α = 1), fedsplit, scaffold and localupdate
(``certify_local_update`` with its own defaults) × floor, rate, error and function value (T = 2, D = 1) × n × K ×
engine (spectral, pepit, compiled; the engine a user gets without ``--engine`` is recorded as ``engine_used`` of
the localupdate rows), each certificate and each raw PEPit solve of the same program in a forked child limited in
CPU seconds (``--timeout``), the rows rewritten atomically to ``--json`` after every cell. The children fork from a
parent that has imported cvxpy, PEPit and the certificates' modules (:data:`CERTIFICATE_MODULES`, their import
time recorded once as ``imports_cpu_s``): a cell times the certificate and the raw solve, not the process's
one-time imports:

    PYTHONPATH=$PWD python benchmarks/bench_certify.py --matrix --n 4 2 --K 5 2 1 --json matrix.json
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


# --------------------------------------------------------------------------------------------
# the timing matrix: every method × measure × n × K × engine, as a user calls it
# --------------------------------------------------------------------------------------------

#: the matrix's class: FedAvg / FedProx (α = 1) / SCAFFOLD steps γ = 0.05, server step η = γ (the local-update
#: family's model averaging; SCAFFOLD's global step 1), error and function value after T = 2 rounds from D = 1
MATRIX = {"mu": 1.0, "L": 10.0, "gamma": 0.05, "alpha": 1.0, "rounds": 2, "D": 1.0}
MATRIX_METHODS = ("fedavg", "fedprox", "fedsplit", "scaffold", "localupdate")
MATRIX_MEASURES = ("floor", "rate", "error", "function-value")


def _matrix_cells(methods, ns, Ks, measures, engines) -> list[dict]:
    """The cells: (method, measure, n, K or None, engine). ``fedavg``/``fedprox`` run the certificate the command
    line gives them (``fedtheory.explore.certify.certify``: certify_local_update with the CLI's defaults) with
    ``engine`` "spectral" and "pepit", and the compiled PEP (``--compiled``: methods.pep.certify) as engine
    "compiled"; ``localupdate`` is ``certify_local_update`` called directly with its own defaults and its default
    engine; ``fedsplit`` and ``scaffold`` have the compiled PEP only (FedSplit has no K)."""
    cells = []
    for method in methods:
        for measure in measures:
            for n in ns:
                for K in [None] if method == "fedsplit" else Ks:
                    if method in ("fedavg", "fedprox"):
                        engs = ["spectral", "pepit", "compiled"]
                        if measure == "function-value":
                            engs.remove("spectral")
                    elif method == "localupdate":
                        engs = ["default"]
                    else:
                        engs = ["compiled"]
                    for eng in engs:
                        if engines and eng not in engines:
                            continue
                        cells.append({"method": method, "measure": measure, "n": n, "K": K, "engine": eng})
    return cells


def _default_engine(cell: dict) -> str:
    """The engine a user gets without --engine (recorded from the certificate's hypotheses when it reports one)."""
    if cell["method"] in ("fedsplit", "scaffold"):
        return "compiled"
    return "?"


def _compiled_hyper(method: str, K: int | None) -> dict:
    """The compiled PEP's hyperparameters of a matrix method (FedSplit: its default step 1/√(μL))."""
    c = MATRIX
    if method == "fedsplit":
        return {}
    if method == "scaffold":
        return {"K": K, "gamma": c["gamma"]}
    return {"K": K, "gamma": c["gamma"], "eta": c["gamma"]} | ({"alpha": c["alpha"]} if method == "fedprox" else {})


def _cell_certificate(cell: dict):
    from fedtheory.certify.federated_pep import certify_local_update
    from fedtheory.explore.certify import certify as certify_cli
    from fedtheory.explore.certify import certify_method

    c = MATRIX
    m, n, K, measure, eng = cell["method"], cell["n"], cell["K"], cell["measure"], cell["engine"]
    timed = measure in ("error", "function-value")
    kw: dict = {"clients": n, "measure": measure}
    if timed:
        kw.update(rounds=c["rounds"], D=c["D"])
    if eng == "compiled":
        return certify_method(m, mu=c["mu"], L=c["L"], hyper=_compiled_hyper(m, K), probe_starts=4, **kw)
    kw["eta"] = c["gamma"] if measure != "floor" else None
    if m == "localupdate":
        return certify_local_update(c["mu"], c["L"], K, c["gamma"], **kw)
    alpha = c["alpha"] if m == "fedprox" else 0.0
    # the command line's defaults for the dedicated certificate: --pieces 16, the certificate's own probe starts
    return certify_cli(m, mu=c["mu"], L=c["L"], K=K, gamma=c["gamma"], alpha=alpha, pieces=16, engine=eng, **kw)


def _cell_raw(cell: dict) -> float:
    """A raw PEPit solve of the cell's PEP: LocalUpdate's PEPit program for the dedicated certificate (spectral
    and pepit engines alike: the SDP a PEPit user would solve), the compiled PEP for the compiled one."""
    from fedtheory.certify import federated_pep as fp
    from fedtheory.methods import pep as mpep

    c = MATRIX
    m, n, K, measure, eng = cell["method"], cell["n"], cell["K"], cell["measure"], cell["engine"]
    pp = np.full(n, 1.0 / n)
    timed = measure in ("error", "function-value")
    if eng == "compiled":
        meth = mpep._resolve(m, _compiled_hyper(m, K), c["mu"], c["L"])
        w, sc = mpep._weights_and_scales(meth, pp)
        pb = mpep._build(
            meth, measure, n, pp, w, sc, c["mu"], c["L"], "C", "quadratic",
            c["rounds"] if timed else None, c["D"] if timed else None,
        ).pb  # fmt: skip
    else:
        alpha = c["alpha"] if m == "fedprox" else 0.0
        pb = fp._pepit_problem(
            c["mu"], c["L"], K, c["gamma"], fp._theta("1:K", K), alpha, pp, "C", measure, "quadratic",
            c["gamma"] if measure != "floor" else None, None, "gd",
            c["rounds"] if timed else None, c["D"] if timed else None,
        )  # fmt: skip
    return _raw_solve(pb)


#: the modules a certificate or a raw solve imports on first use (beyond cvxpy and PEPit, imported by main()):
#: the matrix's parent imports them before it forks, so that a cell times the certificate, not the process's
#: one-time imports, which the JSON records once as ``imports_cpu_s`` (0.35 s of CPU where Python does not cache
#: bytecode, PYTHONDONTWRITEBYTECODE=1; what a certificate imports beyond its raw solve, mpmath 0.035 s included,
#: was 0.08 s of it: half a raw solve at K = 1, which the cells before this change charged to the certificate)
CERTIFICATE_MODULES = (
    "PEPit.functions",
    "fedtheory.certify.federated_pep",
    "fedtheory.certify.pep",
    "fedtheory.certify.interpolation",
    "fedtheory.certify.lower_bounds",
    "fedtheory.algorithms.surrogate",
    "fedtheory.explore.certify",
    "fedtheory.methods.pep",
    "fedtheory.methods.probe",
    "mpmath",
)


def _import_certificate_modules() -> float:
    """Import :data:`CERTIFICATE_MODULES`; their CPU seconds."""
    import importlib

    c0 = time.process_time()
    for name in CERTIFICATE_MODULES:
        importlib.import_module(name)
    return time.process_time() - c0


def _child(kind: str, cell: dict, conn, cpu_limit: float) -> None:
    import resource

    # the limit is on CPU seconds, not wall: on a shared machine the wall clock measures the other jobs' load
    # (SIGXCPU ends the child at the soft limit)
    resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(cpu_limit), math.ceil(cpu_limit) + 5))
    try:
        c, w, out = _timed(lambda: _cell_certificate(cell) if kind == "cert" else _cell_raw(cell))
        if kind == "cert":
            eng = (out.hypotheses or {}).get("engine") if out.hypotheses else None
            res = {"cpu_s": c, "wall_s": w, "upper": out.value, "lower": out.lower, "status": out.status}
            res["engine_used"] = eng or ("compiled" if cell["engine"] == "compiled" else cell["engine"])
            # the certificate's own parts (wall seconds: its SDP or spectral program's solve, probe, family, ...):
            # a spectral certificate's SDP is the spectral program, not the PEPit program the raw solve times
            res["parts_wall_s"] = parts = dict((getattr(out, "details", None) or {}).get("seconds") or {})
            if parts.get("solve"):
                res["ratio_own_solve_wall"] = w / parts["solve"]
        else:
            res = {"cpu_s": c, "wall_s": w, "raw_value": out}
    except Exception as err:  # a cell that fails is a row of the matrix, not the end of the run
        res = {"error": f"{type(err).__name__}: {err}"}
    conn.send(res)
    conn.close()


def _in_child(kind: str, cell: dict, timeout: float) -> dict:
    """Run one timed piece in a forked child (PEPit keeps class-level state) with ``timeout`` CPU seconds; one
    that runs past them (or past 30× them of wall time) is stopped and recorded as such."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(kind, cell, child, timeout))
    proc.start()
    child.close()
    try:
        ready = parent.poll(30 * timeout)
        out = parent.recv() if ready else {"timeout_s": timeout}
    except EOFError:  # the child died without sending: SIGXCPU at the CPU limit
        out = {"timeout_s": timeout}
    if "timeout_s" not in out:
        proc.join(10)
    if proc.is_alive():
        proc.kill()
        proc.join()
    return out


def _fastest(runs: list) -> dict:
    """The run of least CPU time among repeats (one that failed or ran out of time stands for the cell if any did)."""
    bad = [r for r in runs if "cpu_s" not in r]
    if bad:
        return bad[0]
    best = dict(min(runs, key=lambda r: r["cpu_s"]))
    best["wall_s"] = min(r["wall_s"] for r in runs)
    best["repeats"] = len(runs)
    return best


def run_matrix(
    methods, ns, Ks, measures, engines, timeout, raw_timeout, out=None, label="", repeats=1, imports_cpu_s=None
) -> list[dict]:
    """Every cell of :func:`_matrix_cells`: the certificate (upper, lower, CPU and wall seconds, the engine it
    used) and the raw PEPit solve of the same program, each in its own child with a time limit, ``repeats``
    times interleaved (order rotated; the least CPU time kept); the rows are rewritten to ``out`` (atomically)
    after each cell, so a run stopped early keeps what it measured. ``imports_cpu_s``: the parent's imports
    (:func:`_import_certificate_modules`), recorded in the JSON."""
    rows: list = []
    raw_cache: dict = {}
    for cell in _matrix_cells(methods, ns, Ks, measures, engines):
        key = (cell["method"], cell["measure"], cell["n"], cell["K"], cell["engine"] == "compiled")
        certs, raws = [], []
        for rep in range(max(1, int(repeats))):
            for kind in ("cert", "raw") if rep % 2 == 0 else ("raw", "cert"):
                if kind == "cert":
                    certs.append(_in_child("cert", cell, timeout))
                elif key not in raw_cache:
                    raws.append(_in_child("raw", cell, raw_timeout))
        cert = _fastest(certs)
        if key not in raw_cache:
            raw_cache[key] = _fastest(raws)
        raw = raw_cache[key]
        row = {**cell, **cert, "raw": raw}
        if "cpu_s" in cert and "cpu_s" in raw:
            row["ratio_cpu"] = cert["cpu_s"] / raw["cpu_s"]
            row["ratio_wall"] = cert["wall_s"] / raw["wall_s"]
        rows.append(row)
        print(_matrix_line(row), flush=True)
        if out:
            from fedtheory.sweep import write_json_atomic

            head = {"label": label, "class": MATRIX, "imports_cpu_s": imports_cpu_s}
            write_json_atomic(out, {**head, "preimported": list(CERTIFICATE_MODULES), "rows": rows}, indent=1)
    return rows


def _matrix_line(r: dict) -> str:
    def fmt(v, f=".6g"):
        return "—" if v is None else format(v, f)

    head = f"{r['method']:<11} {r['measure']:<14} n={r['n']} K={r['K'] if r['K'] is not None else '-'} {r['engine']:<8}"
    if "timeout_s" in r:
        body = f"> {r['timeout_s']:.0f} s CPU (stopped)"
    elif "error" in r:
        body = f"error {r['error'][:120]}"
    else:
        body = (
            f"[{r.get('engine_used')}] {r['cpu_s']:7.2f} s CPU {r['wall_s']:7.2f} s wall  upper {fmt(r['upper'])} "
            f"lower {fmt(r['lower'])} {r['status']}"
        )
    raw = r["raw"]
    rawtxt = (
        f"raw {raw['wall_s']:.2f} s"
        if "wall_s" in raw
        else ("raw > " + str(raw.get("timeout_s")) + " s CPU" if "timeout_s" in raw else "raw err")
    )
    ratio = f" ratio {r['ratio_cpu']:.1f} CPU" if "ratio_cpu" in r else ""
    own = f", {r['ratio_own_solve_wall']:.2f} its own solve" if "ratio_own_solve_wall" in r else ""
    return f"{head} {body}  {rawtxt}{ratio}{own}"


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
    ap.add_argument(
        "--matrix",
        action="store_true",
        help="the timing matrix instead: --methods × --matrix-measures × --n × --K × engines, each cell in a child "
        "with --timeout (rows rewritten to --json after every cell)",
    )
    ap.add_argument("--methods", nargs="+", default=list(MATRIX_METHODS), choices=MATRIX_METHODS)
    ap.add_argument("--matrix-measures", nargs="+", default=list(MATRIX_MEASURES), choices=MATRIX_MEASURES)
    ap.add_argument("--engines", nargs="+", default=None, choices=["spectral", "pepit", "compiled", "default"])
    ap.add_argument("--timeout", type=float, default=60.0, help="CPU seconds per certificate (matrix)")
    ap.add_argument("--raw-timeout", type=float, default=120.0, help="CPU seconds per raw PEPit solve (matrix)")
    ap.add_argument("--label", default="", help="a label stored in the matrix's JSON (e.g. before/after)")
    ap.add_argument("--matrix-repeats", type=int, default=1, help="interleaved repeats per matrix cell (least CPU)")
    ap.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="BLAS threads (default 1, as the claims run: threaded LAPACK on these small matrices spins on shared "
        "cores, measured 100x the CPU time of one thread for a 119x102 least squares on a loaded 2-core machine)",
    )
    a = ap.parse_args(argv)
    import cvxpy  # noqa: F401  (imported before timing: a one-time cost of the process, not of a certificate)
    import PEPit  # noqa: F401
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=a.blas_threads):  # the forked children inherit the limit
        _main(a)


def _main(a) -> None:
    if a.matrix:
        imports_cpu_s = _import_certificate_modules()
        print(f"the certificates' modules imported before the children fork: {imports_cpu_s:.3f} s CPU", flush=True)
        run_matrix(
            a.methods, a.n, a.K, a.matrix_measures, a.engines, a.timeout, a.raw_timeout, a.json, a.label,
            a.matrix_repeats, imports_cpu_s,
        )  # fmt: skip
        return

    rows = run(a.n, a.K, a.measures, a.parts, a.repeats)
    worst = max((r["ratio_cpu"] for r in rows if math.isfinite(r["ratio_cpu"])), default=None)
    print(f"largest certificate / raw-solve CPU ratio: {worst}")
    if a.json:
        from fedtheory.sweep import atomic_writer

        with atomic_writer(a.json) as fh:
            json.dump({"rows": rows, "times": "CPU seconds of one process; wall seconds beside them"}, fh, indent=1)


if __name__ == "__main__":
    main()
