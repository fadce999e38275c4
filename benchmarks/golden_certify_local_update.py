"""Golden comparison of :func:`fedtheory.certify.federated_pep.certify_local_update` across an implementation change.

Runs one grid of certificates (engines spectral and pepit, classes quadratic and smooth strongly convex, measures
floor / rate / error / function value, n ∈ {2, 3}, K ∈ {1, 2, 5}, two step sizes, equal and unequal weights, μ = 0
where the class allows it) and writes, per cell, the upper bound, the SDP's value, the lower bound, the status and
the CPU seconds (``time.process_time``) as JSON. ``--compare OLD.json`` then checks a new run against an old one:
upper bounds equal to 1e-6 relative, lower bounds not lower by more than 1e-6 relative to at least 1e-9 (the
certificates' absolute slack; higher is fine while still ≤ the upper bound), statuses equal; it prints the worst
differences and the CPU times, and exits 1 on a violation.

    PYTHONPATH=$PWD python benchmarks/golden_certify_local_update.py --out before.json
    PYTHONPATH=$PWD python benchmarks/golden_certify_local_update.py --out after.json --compare before.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

#: relative tolerance of the comparison (upper bounds equal, lower bounds not lower)
RTOL = 1e-6

SMOOTH = "smooth-strongly-convex"


def grid() -> list[dict]:
    """The cells: certify_local_update keyword arguments (μ = 1 unless given, L = 10), each with a name."""
    eq = None
    uneq = {2: [0.3, 0.7], 3: [0.2, 0.3, 0.5]}
    cells: list[dict] = []

    def add(name, **kw):
        kw.setdefault("mu", 1.0)
        cells.append({"name": name, **kw})

    # (n, K, γ, unequal weights?)
    full = [(n, K, g, u) for n in (2, 3) for K in (1, 2, 5) for g, u in ((0.05, False), (0.08, True))]
    for n, K, g, u in full:
        p = uneq[n] if u else eq
        add(f"spectral-rate-n{n}-K{K}-g{g}-{'uneq' if u else 'eq'}", measure="rate", engine="spectral",
            clients=n, K=K, gamma=g, eta=g, p=p, pieces=16, probe_starts=2)  # fmt: skip
    for n, K, g, u in [(2, 1, 0.05, False), (2, 2, 0.05, False), (2, 5, 0.08, True), (3, 2, 0.08, True)]:
        p = uneq[n] if u else eq
        add(f"spectral-floor-n{n}-K{K}-g{g}-{'uneq' if u else 'eq'}", measure="floor", engine="spectral",
            clients=n, K=K, gamma=g, p=p, pieces=16, probe_starts=2)  # fmt: skip
    add("spectral-floor-n2-K2-zeta", measure="floor", engine="spectral", clients=2, K=2, gamma=0.05, zeta=1.0,
        pieces=16, probe_starts=2)  # fmt: skip
    for n, K, g, u in [(2, 1, 0.05, False), (2, 2, 0.08, True), (3, 2, 0.05, False)]:
        p = uneq[n] if u else eq
        add(f"spectral-error-n{n}-K{K}-g{g}-{'uneq' if u else 'eq'}", measure="error", engine="spectral",
            clients=n, K=K, gamma=g, eta=g, p=p, rounds=2, D=1.0, pieces=8, probe_starts=1)  # fmt: skip
    for n, K, g, u in [(2, 1, 0.05, False), (2, 2, 0.08, True), (3, 2, 0.05, False), (2, 5, 0.05, False)]:
        p = uneq[n] if u else eq
        tag = f"n{n}-K{K}-g{g}-{'uneq' if u else 'eq'}"
        add(f"smooth-floor-{tag}", measure="floor", engine="pepit", function_class=SMOOTH, clients=n, K=K, gamma=g,
            p=p, probe_starts=2)  # fmt: skip
        add(f"smooth-rate-{tag}", measure="rate", engine="pepit", function_class=SMOOTH, clients=n, K=K, gamma=g,
            eta=g, p=p, probe_starts=2)  # fmt: skip
    for n, K, g, u in [(2, 1, 0.05, False), (2, 2, 0.08, True), (3, 2, 0.05, False)]:
        p = uneq[n] if u else eq
        tag = f"n{n}-K{K}-g{g}-{'uneq' if u else 'eq'}"
        add(f"smooth-error-{tag}", measure="error", engine="pepit", function_class=SMOOTH, clients=n, K=K, gamma=g,
            eta=g, p=p, rounds=2, D=1.0, probe_starts=2)  # fmt: skip
        add(f"smooth-fv-{tag}", measure="function-value", engine="pepit", function_class=SMOOTH, clients=n, K=K,
            gamma=g, eta=g, p=p, rounds=2, D=1.0, probe_starts=2)  # fmt: skip
    # μ = 0: the function value at K = 1 (C model) or under ζ
    for cls in ("quadratic", SMOOTH):
        short = "quad" if cls == "quadratic" else "smooth"
        add(f"{short}-fv-mu0-n2-K1", mu=0.0, measure="function-value", engine="pepit", function_class=cls, clients=2,
            K=1, gamma=0.05, eta=0.05, rounds=2, D=1.0, probe_starts=2)  # fmt: skip
        add(f"{short}-fv-mu0-n3-K1-uneq", mu=0.0, measure="function-value", engine="pepit", function_class=cls,
            clients=3, K=1, gamma=0.08, eta=0.08, p=uneq[3], rounds=2, D=1.0, probe_starts=2)  # fmt: skip
        add(f"{short}-fv-mu0-n2-K2-zeta", mu=0.0, measure="function-value", engine="pepit", function_class=cls,
            clients=2, K=2, gamma=0.05, eta=0.05, zeta=1.0, rounds=2, D=1.0, probe_starts=2)  # fmt: skip
    # the quadratic PEPit engine at μ > 0 (already fedtheory.methods.pep.certify): a regression check
    for measure in ("floor", "rate", "error", "function-value"):
        extra = {} if measure == "floor" else {"eta": 0.05}
        if measure in ("error", "function-value"):
            extra.update(rounds=2, D=1.0)
        add(f"quad-pepit-{measure}-n2-K2-uneq", measure=measure, engine="pepit", clients=2, K=2, gamma=0.05,
            p=uneq[2], probe_starts=2, **extra)  # fmt: skip
    return cells


def run(cells: list[dict], only: str | None = None) -> dict:
    from fedtheory.certify.federated_pep import certify_local_update

    out = {}
    for cell in cells:
        kw = dict(cell)
        name = kw.pop("name")
        if only and only not in name:
            continue
        mu = kw.pop("mu")
        t = time.process_time()
        c = certify_local_update(mu, 10.0, **kw)
        cpu = time.process_time() - t
        out[name] = {
            "value": c.value,
            "sdp_value": c.details.get("sdp_value"),
            "lower": c.lower,
            "status": c.status,
            "cpu_seconds": cpu,
        }
        print(f"{name:45s} {c.status:11s} upper={c.value!r} lower={c.lower!r} cpu={cpu:.2f}", flush=True)
    return out


def compare(new: dict, old: dict) -> bool:
    """Print the worst differences; True when every cell passes."""
    ok = True
    worst_up, worst_low = (0.0, None), (0.0, None)
    t_old = t_new = 0.0
    for name, o in old.items():
        if name not in new:
            continue
        n = new[name]
        t_old += o["cpu_seconds"]
        t_new += n["cpu_seconds"]
        if n["status"] != o["status"]:
            ok = False
            print(f"STATUS {name}: {o['status']} -> {n['status']}")
        if (o["value"] is None) != (n["value"] is None):
            ok = False
            print(f"UPPER {name}: {o['value']!r} -> {n['value']!r}")
        elif o["value"] is not None:
            rel = abs(n["value"] - o["value"]) / max(abs(o["value"]), 1e-12)
            if rel > worst_up[0]:
                worst_up = (rel, name)
            if rel > RTOL:
                ok = False
                print(f"UPPER {name}: {o['value']!r} -> {n['value']!r} (rel {rel:.2e})")
        if o["lower"] is not None:
            if n["lower"] is None:
                ok = False
                print(f"LOWER {name}: {o['lower']!r} -> None")
                continue
            # relative, but to at least the certificates' absolute slack 1e-9 (below): a floor of 0 replays as
            # ~1e-15 whose rounding-level changes are not a weaker lower bound
            drop = (o["lower"] - n["lower"]) / max(abs(o["lower"]), 1e-9)
            if drop > worst_low[0]:
                worst_low = (drop, name)
            if drop > RTOL:
                ok = False
                print(f"LOWER {name}: {o['lower']!r} -> {n['lower']!r} (lower by {drop:.2e} relative)")
            # the certificates' own slack: 1e-9 absolute (a floor of 0 replays as ~1e-15)
            if n["value"] is not None and n["lower"] > n["value"] * (1 + RTOL) + 1e-9:
                ok = False
                print(f"LOWER {name}: {n['lower']!r} above the upper bound {n['value']!r}")
        slower = n["cpu_seconds"] / max(o["cpu_seconds"], 1e-3)
        print(f"  {name:45s} cpu {o['cpu_seconds']:7.2f} -> {n['cpu_seconds']:7.2f} s ({slower:.2f}x)")
    print(f"worst upper-bound difference: {worst_up[0]:.2e} relative ({worst_up[1]})")
    print(f"worst lower-bound drop: {worst_low[0]:.2e} relative ({worst_low[1]})")
    print(f"CPU seconds, the grid: {t_old:.1f} -> {t_new:.1f}")
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="where to write this run's JSON")
    ap.add_argument("--compare", help="an earlier run's JSON to compare against")
    ap.add_argument("--only", help="only the cells whose name contains this")
    args = ap.parse_args(argv)
    res = run(grid(), args.only)
    # atomic write: a crashed run never leaves a half-written golden file
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.out)) or ".", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, args.out)
    if args.compare:
        with open(args.compare) as f:
            return 0 if compare(res, json.load(f)) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
