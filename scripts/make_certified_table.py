"""Generate ``fedtheory/explore/data/certified_floor.json``: certified worst-case floors of LocalUpdate for d ≥ 2.

Each point is one federated-PEP certificate (:func:`fedtheory.explore.certified.certify`, the adapter to
``fedtheory.certify.federated_pep``, spectral engine): the certified upper bound on sup ‖x*(α,γ,Θ) − x*‖ per unit
C over the clients' class μI ⪯ A_i ⪯ LI, ‖c_i − o‖ ≤ C, any dimension, at L = 1 (the floor is invariant under
(μ, L, γ, α) → (sμ, sL, γ/s, sα)). Only ``status == "certified"`` values are stored; the others are None (NaN),
and the explorer then reports no guarantee there. The explorer reads the table conservatively
(:func:`fedtheory.explore.certified.certified_floor_lookup`): exact (γL, K, α/L) points only, L/μ rounded up.

Two parts, two commands:

    python scripts/make_certified_table.py two [--quick]           # the top-level part: 2 equal-weight clients
    python scripts/make_certified_table.py clients [--quick] [--workers 2] [--store DIR]

``two`` writes the 2-client grid (the original table; a point takes ~10-20 s). ``clients`` adds the
``"federations"`` list — n ∈ {3, 4, 8} equal-weight clients and unequal weights for n ∈ {2, 3} — and the
``"default_class"`` (M = 8 equal-weight clients: every federation of n ≤ 8 clients whose weights are multiples
of 1/8, by splitting clients; see :func:`fedtheory.explore.certified.covers`) and the ``"growth"`` finding,
computed from the numbers. It runs through :func:`fedtheory.sweep.map_grid` with ``--workers`` processes and one
JSON file per finished certificate in ``--store`` (written atomically), so an interrupted run resumes where it
stopped; the table itself is rewritten atomically after the sweep. Measured on this machine's 2 cores (pieces = 16,
κ₀ = 100, K = 20, γL = 0.1, two certificates at a time): n = 2: 21 s, n = 3: 100 s, n = 4: 166 s, n = 8: see the
table's ``"seconds"``. The grid is sized for well under an hour on 2 workers.

The table records the claim ids of the certificates so the explorer cites them; those claims must be declared
verified (tests/test_explore_guarantees.py checks every cited claim).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fedtheory" / "explore" / "data" / "certified_floor.json"
STORE = ROOT / "out" / "certified_store"

#: the n-client federations certified (clients, weights) and their grid (Θ_{1:K}, α = 0, κ₀ = L/μ): the
#: tuner's choices for the README's example (κ₀ = 100, K = 10/20, γL = 0.3/0.5) and small-K, small-γ points
FEDERATIONS = ((8, "uniform"), (2, [0.25, 0.75]), (2, [0.1, 0.9]), (4, "uniform"), (3, "uniform"), (3, [0.2, 0.3, 0.5]))
#: two points only: on this machine's 2 shared cores an n = 8 certificate took over 10 minutes of wall time
GRID = {"kappa0": [100.0], "points": [(0.3, 20), (0.5, 20)]}
QUICK = {"kappa0": [100.0], "points": [(0.1, 2)]}
#: the largest equal-weight federation: its certificates bound every federation of n ≤ M clients with weights
#: in (1/M)·Z (split each client into copies), the class the explorer certifies without --clients
DEFAULT_M = 8


def two(args) -> int:
    """The top-level 2-client, equal-weight part (the original table); keeps any n-client part already there."""
    from fedtheory.explore.certified import certify
    from fedtheory.sweep import write_json_atomic

    old = json.loads(Path(args.out).read_text()) if Path(args.out).exists() else {}
    kappa0 = [10.0, 100.0, 1000.0]
    Ks = {"uniform": [2, 5, 10] if args.quick else [2, 5, 10, 20], "last": [2, 5, 10]}
    gLs = {"uniform": [0.02, 0.1, 0.5] if args.quick else [0.005, 0.02, 0.1, 0.3, 0.5], "last": [0.02, 0.05, 0.1]}
    thetas = (("uniform", "1:K"),) if args.quick else (("uniform", "1:K"), ("last", "K"))
    # the certificates' own claim (the federated PEP) and the claim that re-certifies this table at sampled points
    table = {
        "claims": ["localupdate/lemma-5/certified", "verify/explorer/certified-table"],
        "clients": 2,
        "weights": "uniform",
        "normalization": "L = 1; floor per unit C; the class ‖c_i − o‖ ≤ C, any o",
        "pieces": args.pieces,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "theta": {},
    }
    for key in ("federations", "default_class", "growth"):
        if key in old:
            table[key] = old[key]
    for theta, arg in thetas:
        pts = [(g, K, 0.0) for K in Ks[theta] for g in gLs[theta] if theta == "uniform" or g * K < 1]
        part = {
            "kappa0": kappa0,
            "gammaL": [p[0] for p in pts],
            "K": [p[1] for p in pts],
            "alphaL": [p[2] for p in pts],
            "floor": [[None] * len(pts) for _ in kappa0],
        }
        table["theta"][theta] = part
        for j, k0 in enumerate(kappa0):
            for i, (g, K, a) in enumerate(pts):
                cert = certify(
                    1.0 / k0,
                    1.0,
                    K,
                    g,
                    theta=arg,
                    alpha=a,
                    clients=2,
                    measure="floor",
                    C=1.0,
                    pieces=args.pieces,
                    probe_starts=2,
                )
                ok = cert.status == "certified" and cert.value is not None and math.isfinite(cert.value)
                part["floor"][j][i] = float(cert.value) if ok else None  # None: no certificate there
                print(
                    f"{theta} L/mu={k0:g} gammaL={g:g} K={K}: {cert.status} {cert.value} (lower {cert.lower}) "
                    f"{cert.seconds:.1f}s",
                    flush=True,
                )
                write_json_atomic(args.out, table, indent=1)  # after every point: an interrupted run is usable
    print(f"wrote {args.out}")
    return 0


def points(grid: dict, pieces: int) -> list[dict]:
    """The sweep's points: one certificate each (the unit of resumption)."""
    return [
        {
            "clients": n,
            "weights": w,
            "theta": "uniform",
            "kappa0": k0,
            "gammaL": g,
            "K": K,
            "alphaL": 0.0,
            "pieces": pieces,
            "probe_starts": 2,
            "seed": 0,
        }
        for n, w in FEDERATIONS
        for k0 in grid["kappa0"]
        for g, K in grid["points"]
    ]


def growth(table: dict) -> dict:
    """What the certificates say about growth in n, from the numbers: at every point certified for every
    federation, each federation's upper bound against the 2 equal-weight clients' replayed *lower* bound
    (a concrete instance, which by splitting clients is also an instance for every even n and for weights in
    (1/n)·Z). upper_n / lower_2 − 1 ≤ r at all points means the worst case over those federations lies within
    r of the 2-client one: it does not grow with n there."""
    base = table["theta"]["uniform"]
    feds = table.get("federations", [])
    rows, worst = [], {}
    for fed in feds:
        part = fed["theta"]["uniform"]
        for j, k0 in enumerate(part["kappa0"]):
            for i, (g, K) in enumerate(zip(part["gammaL"], part["K"])):
                v = part["floor"][j][i]
                lo2 = _base_lower(table, k0, g, K)
                up2 = _base_value(base, k0, g, K)
                if v is None or lo2 is None:
                    continue
                name = f"{fed['clients']}:" + (
                    "equal" if fed["weights"] == "uniform" else ",".join(f"{w:g}" for w in fed["weights"])
                )
                rel = v / lo2 - 1.0
                rows.append(
                    {
                        "federation": name,
                        "kappa0": k0,
                        "gammaL": g,
                        "K": K,
                        "upper": v,
                        "lower": part["lower"][j][i],
                        "upper_2_equal": up2,
                        "lower_2_equal": lo2,
                        "upper_over_lower2_minus_1": rel,
                    }
                )
                worst[name] = max(worst.get(name, -math.inf), rel)
    if not rows:
        return {"finding": "no n-client certificates yet", "points": []}
    top = max(worst.values())
    tol = 1e-4  # two SDP solves of related programs agree to ~1e-5 relative
    even = {k: v for k, v in worst.items() if k.endswith(":equal") and int(k.split(":")[0]) % 2 == 0}
    odd = {k: v for k, v in worst.items() if k.endswith(":equal") and int(k.split(":")[0]) % 2 == 1}
    unequal = {k: v for k, v in worst.items() if not k.endswith(":equal")}
    kappas = sorted({p["kappa0"] for p in rows})
    where = (
        f"at the {len({(p['kappa0'], p['gammaL'], p['K']) for p in rows})} tabulated points "
        f"(L/μ = {', '.join(f'{k:g}' for k in kappas)}; γL, K: "
        + ", ".join(sorted({f"({p['gammaL']:g}, {p['K']})" for p in rows}))
        + ")"
    )
    parts = []
    if even:
        flat = all(v <= tol for v in even.values())
        parts.append(
            f"even n, equal weights ({', '.join(even)}): a 2-client instance is one of theirs (split each "
            f"client), so lower_2 ≤ worst_n ≤ upper_n, and upper_n/lower_2 − 1 ≤ {max(even.values()):.2g}: "
            + (
                "the worst floor does not grow from 2 to "
                + str(max(int(k.split(':')[0]) for k in even))
                + " clients — it saturates at n = 2"
                if flat
                else "it grows with n"
            )
        )
    if odd:
        parts.append(
            f"odd n, equal weights ({', '.join(odd)}): upper_n/lower_2 − 1 ≤ {max(odd.values()):.2g}"
            + (" (no larger than the 2-client worst case)" if max(odd.values()) <= tol else " (larger)")
        )
    if unequal:
        parts.append(
            "unequal weights: upper/lower_2 − 1 = "
            + ", ".join(f"{k} {v:.2g}" for k, v in unequal.items())
            + (
                " — none above the equal-weight worst case (beyond the 1e-4 tolerance), so among the weights certified the worst is equal "
                "weights"
                if all(v <= tol for v in unequal.values())
                else " — some exceed the equal-weight worst case"
            )
        )
    own = {}
    for p in rows:
        if p["lower"] is not None:
            r = p["lower"] / p["lower_2_equal"] - 1.0
            lo_, hi_ = own.get(p["federation"], (math.inf, -math.inf))
            own[p["federation"]] = (min(lo_, r), max(hi_, r))
    parts.append(
        "each federation's own replayed instance reaches lower_n/lower_2 − 1 in "
        + ", ".join(f"{k} [{a:.2g}, {b:.2g}]" for k, (a, b) in sorted(own.items()))
    )
    finding = (
        f"What the certificates show {where}, each federation's upper bound against the 2 equal-weight "
        f"clients' replayed lower bound lower_2: " + "; ".join(parts) + ". Proved for every n (splitting "
        "clients): the worst case over n clients with arbitrary weights is non-decreasing in n, and M "
        "equal-weight clients bound every federation of n ≤ M clients with weights in (1/M)·Z. Not proved: "
        "that it stays at the 2-client value for every n, every weight vector and every grid point — only "
        "the federations and points tabulated are certified."
    )
    return {
        "finding": finding,
        "max_rel_excess": top,
        "per_federation": worst,
        "own_lower_over_lower2": own,
        "tolerance": tol,
        "points": rows,
    }


def _base_value(base: dict, k0: float, g: float, K: int):
    j = base["kappa0"].index(k0) if k0 in base["kappa0"] else None
    for i, (gg, kk) in enumerate(zip(base["gammaL"], base["K"])):
        if j is not None and abs(gg - g) < 1e-12 and kk == K:
            return base["floor"][j][i]
    return None


def _base_lower(table: dict, k0: float, g: float, K: int):
    """The 2 equal-weight clients' lower bound at a point, from the n-client sweep's own 2-client certificate."""
    ref = table.get("reference_2_equal", {})
    return ref.get(f"{k0:g}/{g:g}/{K}")


def clients(args) -> int:
    from fedtheory.explore.certified import floor_point
    from fedtheory.sweep import map_grid, write_json_atomic

    grid = QUICK if args.quick else GRID
    pts = points(grid, args.pieces)
    # the 2 equal-weight clients' lower bounds on the same points (the reference of the growth finding)
    refs = [{**p, "clients": 2, "weights": "uniform"} for p in pts[: len(grid["kappa0"]) * len(grid["points"])]]
    allp = refs + pts
    t0 = time.time()

    def show(i, r):
        p = allp[i]
        print(
            f"[{time.time() - t0:7.1f}s] n={p['clients']} w={p['weights']} kappa0={p['kappa0']:g} "
            f"gammaL={p['gammaL']:g} K={p['K']}: {r['status']} {r['value']} (lower {r['lower']}) "
            f"{r['seconds']:.1f}s",
            flush=True,
        )

    if args.assemble_only:  # whatever the store holds now; the rest stays None (no certificate)
        from fedtheory.sweep import point_key

        missing = {"value": None, "lower": None, "status": "not computed", "seconds": None}
        results = []
        for p in allp:
            f = Path(args.store) / f"{point_key(p)}.json"
            results.append(json.loads(f.read_text())["result"] if f.exists() else missing)
    else:
        results = map_grid(
            floor_point,
            allp,
            workers=args.workers,
            store=args.store,
            progress=show,
            on_failure=lambda i, why, s: {
                "value": None,
                "lower": None,
                "status": "failed: " + why.strip().splitlines()[-1],
                "seconds": s,
            },
        )
    table = json.loads(Path(args.out).read_text())
    table["reference_2_equal"] = {
        f"{p['kappa0']:g}/{p['gammaL']:g}/{p['K']}": r["lower"] for p, r in zip(refs, results[: len(refs)])
    }
    feds = []
    res = results[len(refs) :]
    for n, w in FEDERATIONS:
        mine = [(p, r) for p, r in zip(pts, res) if p["clients"] == n and p["weights"] == w]
        part = {
            "kappa0": list(grid["kappa0"]),
            "gammaL": [g for g, _ in grid["points"]],
            "K": [K for _, K in grid["points"]],
            "alphaL": [0.0] * len(grid["points"]),
            "floor": [[None] * len(grid["points"]) for _ in grid["kappa0"]],
            "lower": [[None] * len(grid["points"]) for _ in grid["kappa0"]],
            "seconds": [[None] * len(grid["points"]) for _ in grid["kappa0"]],
        }
        for p, r in mine:
            j, i = grid["kappa0"].index(p["kappa0"]), grid["points"].index((p["gammaL"], p["K"]))
            part["floor"][j][i], part["lower"][j][i], part["seconds"][j][i] = r["value"], r["lower"], r["seconds"]
        feds.append({"clients": n, "weights": w, "pieces": args.pieces, "theta": {"uniform": part}})
    table["federations"] = feds
    # the claim that re-certifies the n-client part and checks it against splitting clients
    if "verify/explorer/certified-table-clients" not in table["claims"]:
        table["claims"].append("verify/explorer/certified-table-clients")
    if any(n == DEFAULT_M and w == "uniform" for n, w in FEDERATIONS):
        table["default_class"] = {"clients": DEFAULT_M, "weights": "uniform"}
    table["growth"] = growth(table)
    table["generated_federations"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write_json_atomic(args.out, table, indent=1)
    print(table["growth"]["finding"])
    print(f"wrote {args.out} ({time.time() - t0:.0f}s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "part",
        nargs="?",
        default="two",
        choices=("two", "clients"),
        help="two: the 2-client table; clients: the n-client federations (resumable)",
    )
    ap.add_argument("--quick", action="store_true", help="a small grid")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument(
        "--pieces", type=int, default=16, help="spectral relaxation pieces (any count gives an upper bound)"
    )
    ap.add_argument("--workers", type=int, default=2, help="processes for the n-client sweep (default 2)")
    ap.add_argument("--store", default=str(STORE), help="one JSON per finished certificate: resume from here")
    ap.add_argument(
        "--assemble-only",
        action="store_true",
        help="write the table from the certificates already in --store (the rest: no certificate)",
    )
    args = ap.parse_args(argv)
    return two(args) if args.part == "two" else clients(args)


if __name__ == "__main__":
    sys.exit(main())
