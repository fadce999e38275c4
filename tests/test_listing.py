"""``fedtheory check --list``: the claims a check would run, listed without running any of them."""

from __future__ import annotations

import json
import textwrap

import pytest

from fedtheory.cli import main

CONTENT = textwrap.dedent('''
    from pathlib import Path
    from fedtheory.claims.core import claim

    def _ran(ctx):   # a listed claim must never run: running leaves this file
        (Path(__file__).parent / "ran.log").write_text("ran")
        return ctx.verified()

    lemma_1 = claim(id="demo/lemma-1", ref="Lemma 1", title="First bound", statement="s", kind="numeric")(_ran)
    lemma_2 = claim(id="demo/lemma-2", ref="Lemma 2", title="Deep bound", statement="s", kind="probe",
                    tier="full", requires=("torch",))(_ran)
    theorem_1 = claim(id="demo/theorem-1", ref="Theorem 1", title="Main", statement="s", kind="simulation",
                      expect="refuted")(_ran)
    other = claim(id="other/lemma-1", ref="Lemma 1", title="Elsewhere", statement="s", kind="numeric")(_ran)
''')


@pytest.fixture()
def content(tmp_path):
    (tmp_path / "claims.py").write_text(CONTENT)
    return tmp_path


def listed(capsys, *argv) -> tuple[int, list[list[str]]]:
    code = main(["check", "--list", *argv])
    lines = capsys.readouterr().out.splitlines()
    return code, [line.split()[:5] for line in lines]


def test_lists_the_fast_tier_without_running(content, capsys):
    code, rows = listed(capsys, str(content))
    assert code == 0
    assert rows == [
        ["id", "paper", "tier", "expect", "kind"],
        ["demo/lemma-1", "demo", "fast", "verified", "numeric"],
        ["demo/theorem-1", "demo", "fast", "refuted", "simulation"],
        ["other/lemma-1", "other", "fast", "verified", "numeric"],
    ]
    assert not (content / "ran.log").exists()


def test_selection_is_the_checks_own(content, capsys):
    assert listed(capsys, str(content), "--tier", "full", "--paper", "demo")[1][1:] == [
        ["demo/lemma-1", "demo", "fast", "verified", "numeric"],
        ["demo/lemma-2", "demo", "full", "verified", "probe"],
        ["demo/theorem-1", "demo", "fast", "refuted", "simulation"],
    ]
    assert [r[0] for r in listed(capsys, str(content), "--claim", "*/lemma-*")[1][1:]] == [
        "demo/lemma-1",
        "other/lemma-1",
    ]


def test_json(content, capsys, tmp_path):
    out = tmp_path / "out" / "list.json"
    assert main(["check", "--list", str(content), "--tier", "full", "--claim", "demo/lemma-2", "--json", str(out)]) == 0
    assert capsys.readouterr().out == ""
    data = json.loads(out.read_text())
    assert data == {
        "count": 1,
        "claims": [
            {
                "id": "demo/lemma-2",
                "paper": "demo",
                "tier": "full",
                "expect": "verified",
                "kind": "probe",
                "title": "Deep bound",
                "ref": "Lemma 2",
                "requires": ["torch"],
                "source": "claims.py",
            }
        ],
    }
    assert not (content / "ran.log").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--paper", "nosuch"], "error: unknown paper 'nosuch' (known: demo, other)"),
        (["--claim", "demo/lemma-9"], "error: no claim matches 'demo/lemma-9'"),
        (["--claim", "demo/lemma-2"], "error: 'demo/lemma-2' matches only full-tier claims; add --tier full"),
        (["--tier", "warp"], "error: unknown tier 'warp' (choose fast or full)"),
    ],
)
def test_bad_selection_is_one_line(content, capsys, argv, message):
    assert main(["check", "--list", str(content), *argv]) == 2
    err = capsys.readouterr().err
    assert err.strip() == message
