"""Issue 26: a check JSON records which claim code ran (digest, git revision, clean tree) and the report shows it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CLAIM = '''
from fedtheory.claims.core import claim

@claim(id="demo/lemma-1", ref="Lemma 1", title="fine", statement="s", kind="numeric")
def lemma_1(ctx):
    return ctx.verified(measured={"x": VALUE})
'''


def _check(run_cli, repo: Path) -> dict:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    run_cli("check", "verify", "--json", "r.json", cwd=repo, env=env, check=True)
    return json.loads((repo / "r.json").read_text())["environment"]["content"]


def test_two_runs_of_different_claim_code_are_told_apart(tmp_path, run_cli):
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "demo.py").write_text(CLAIM.replace("VALUE", "1.0"))
    (tmp_path / ".gitignore").write_text("__pycache__/\nr.json\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(git + ["add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-qm", "one"], cwd=tmp_path, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    first = _check(run_cli, tmp_path)
    assert first["revision"] == head and first["clean"] is True and first["files"] == 1
    (tmp_path / "verify" / "demo.py").write_text(CLAIM.replace("VALUE", "2.0"))
    second = _check(run_cli, tmp_path)
    assert second["revision"] == head and second["clean"] is False  # same commit, edited claim code
    assert second["digest"] != first["digest"]


def test_the_report_shows_the_claim_code(tmp_path):
    from fedtheory.report.site import content_line

    line = content_line({"revision": "a" * 40, "clean": True, "digest": "b" * 64, "files": 2})
    assert line.startswith("revision aaaaaaaaaaaa (clean)") and "bbbbbbbbbbbb" in line
