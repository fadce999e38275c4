"""Report speed: the site for a whole fast-tier run (all five papers), through the API and the command line.

The acceptance asks for under 10 s. Give it a check JSON of the full fast tier (and, optionally, the
figures directory):

    fedtheory check --json out/check.json && fedtheory figures --out out/figures
    python benchmarks/bench_report.py out/check.json [out/figures]

Without arguments it uses ``out/check.json`` and ``out/figures`` when they exist.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    check = Path(argv[0] if argv else "out/check.json")
    figures = (
        Path(argv[1])
        if len(argv) > 1
        else (Path("out/figures") if Path("out/figures/manifest.json").is_file() else None)
    )
    if not check.is_file():
        print(f"error: {check} does not exist (write it with fedtheory check --json {check})", file=sys.stderr)
        return 2
    data = json.loads(check.read_text(encoding="utf-8"))
    papers = sorted({r.get("paper") or r["id"].split("/")[0] for r in data["claims"]})
    print(
        f"{check}: {len(data['claims'])} claims over {len(papers)} papers ({', '.join(papers)})"
        + (f", figures from {figures}" if figures else ", no figures")
    )
    start = time.perf_counter()
    from fedtheory.report.build import build_report_files

    imported = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        times = []
        for _ in range(3):
            t = time.perf_counter()
            out = build_report_files(check, Path(tmp) / "site", figures=figures, baseline=check)
            times.append(time.perf_counter() - t)
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        print(f"import fedtheory.report.build: {imported - start:.3f} s")
        print(
            f"API build (baseline = itself): best {min(times):.3f} s, first {times[0]:.3f} s; "
            f"site {size / 1e6:.1f} MB, {len(list(out.glob('*.html')))} pages"
        )
        t = time.perf_counter()
        cmd = [sys.executable, "-m", "fedtheory", "report", str(check), "--out", str(Path(tmp) / "cli")]
        if figures:
            cmd += ["--figures", str(figures)]
        subprocess.run(cmd, check=True, capture_output=True)
        print(f"CLI fedtheory report (process start to exit): {time.perf_counter() - t:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
