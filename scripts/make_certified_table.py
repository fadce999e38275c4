"""Generate ``fedtheory/explore/data/certified_floor.json``: certified worst-case floors of LocalUpdate for d ≥ 2.

Each point is one federated-PEP certificate (:func:`fedtheory.explore.certified.certify`, the adapter to
``fedtheory.certify.federated_pep``): the certified upper bound on sup ‖x*(α,γ,Θ) − x*‖ per unit C over two
clients with equal weights, μI ⪯ A_i ⪯ LI, any dimension, at L = 1 (the floor is invariant under
(μ, L, γ, α) → (sμ, sL, γ/s, sα)). Only ``status == "certified"`` values are stored; the others are NaN, and
the explorer then reports no guarantee there. The explorer reads the table conservatively
(:func:`fedtheory.explore.certified.certified_floor_lookup`): exact (γL, K, α/L) points only, L/μ rounded up.

    python scripts/make_certified_table.py [--quick]

A point takes minutes (an SDP with a few thousand constraints); ``--quick`` writes a small grid. The table
records the claim id of the certificates so the explorer cites it; that claim must be declared verified
(tests/test_explore_guarantees.py checks every cited claim).
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fedtheory" / "explore" / "data" / "certified_floor.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small grid (a few points per Θ)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--pieces", type=int, default=16, help="spectral relaxation pieces (any count gives an upper bound)")
    args = ap.parse_args(argv)
    from fedtheory.explore.certified import certify
    from fedtheory.sweep import write_json_atomic

    kappa0 = [10.0, 100.0, 1000.0]
    Ks = {"uniform": [2, 5, 10] if args.quick else [2, 5, 10, 20], "last": [2, 5, 10]}
    gLs = {"uniform": [0.02, 0.1, 0.5] if args.quick else [0.005, 0.02, 0.1, 0.3, 0.5], "last": [0.02, 0.05, 0.1]}
    thetas = (("uniform", "1:K"),) if args.quick else (("uniform", "1:K"), ("last", "K"))
    # the certificates' own claim (the federated PEP) and the claim that re-certifies this table at sampled points
    table = {"claims": ["localupdate/lemma-5/certified", "verify/explorer/certified-table"], "clients": 2,
             "weights": "uniform", "normalization": "L = 1; floor per unit C; the class ‖c_i − o‖ ≤ C, any o",
             "pieces": args.pieces, "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "theta": {}}
    for theta, arg in thetas:
        pts = [(g, K, 0.0) for K in Ks[theta] for g in gLs[theta] if theta == "uniform" or g * K < 1]
        part = {"kappa0": kappa0, "gammaL": [p[0] for p in pts], "K": [p[1] for p in pts],
                "alphaL": [p[2] for p in pts], "floor": [[None] * len(pts) for _ in kappa0]}
        table["theta"][theta] = part
        for j, k0 in enumerate(kappa0):
            for i, (g, K, a) in enumerate(pts):
                cert = certify(1.0 / k0, 1.0, K, g, theta=arg, alpha=a, clients=2, measure="floor", C=1.0,
                               pieces=args.pieces, probe_starts=2)
                ok = cert.status == "certified" and cert.value is not None and math.isfinite(cert.value)
                part["floor"][j][i] = float(cert.value) if ok else None          # None: no certificate there
                print(f"{theta} L/mu={k0:g} gammaL={g:g} K={K}: {cert.status} {cert.value} (lower {cert.lower}) "
                      f"{cert.seconds:.1f}s", flush=True)
                write_json_atomic(args.out, table, indent=1)     # after every point: an interrupted run is usable
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
