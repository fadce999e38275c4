"""Command-line conventions (issue 26): a closed pipe, ``--json -``, exit codes in ``--help``, repeated
``--claim``, every explore subcommand in the help, one meaning per option name, shell completion."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fedtheory.cli import EXPLORE_COMMANDS, build_parser, main

CONTENT = '''
from fedtheory.claims.core import claim

def _make(i):
    @claim(id=f"demo/lemma-{i}", ref=f"Lemma {i}", title="t", statement="s", kind="numeric")
    def check(ctx):
        return ctx.verified(measured={"i": i})
    return check

LEMMAS = [_make(i) for i in range(1, 6)]
'''

TUNE = ["explore", "tune", "fedavg", "--mu", "1", "--L", "100", "--C", "0.1", "--D", "10", "--rounds", "50"]


def fedtheory(*args: str, cwd: Path, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fedtheory", *args],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / "paper_checks").mkdir()
    (tmp_path / "paper_checks" / "demo.py").write_text(CONTENT)
    return tmp_path


def test_a_closed_pipe_ends_quietly_with_141(tmp_path):
    # the reader closes its end at once: every write of the table then meets a broken pipe
    reader = subprocess.Popen(
        [sys.executable, "-m", "fedtheory", *TUNE, "--rows", "10000"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )
    reader.stdout.close()
    _, err = reader.communicate(timeout=120)
    assert reader.returncode == 141, err
    assert b"internal error" not in err and b"Traceback" not in err and b"BrokenPipe" not in err


def test_json_dash_writes_the_json_to_stdout_and_the_table_to_stderr(repo):
    proc = fedtheory("check", "--json", "-", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)  # stdout is the JSON alone
    assert [c["id"] for c in data["claims"]] == [f"demo/lemma-{i}" for i in range(1, 6)]
    assert "demo/lemma-1" in proc.stderr  # the table went to stderr
    assert not (repo / "-").exists()
    proc = fedtheory(*TUNE, "--json", "-", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "tune" and not (repo / "-").exists()


def test_json_dash_of_a_certificate_stays_json_when_pepit_prints_its_warning(capsys):
    # κ = 10⁴, K = 2: PEPit's own duality-gap check prints "(PEPit) Warning: ..." on stdout whatever verbose says;
    # the certificate's solves capture it and re-raise it as a warning on stderr
    argv = ["explore", "certify", "fedavg", "--mu", "1", "--L", "10000", "--K", "2", "--gamma", "5e-5"]
    # the control: the print did happen, as a warning (stderr outside pytest, which records it here)
    with pytest.warns(RuntimeWarning, match=r"\(PEPit\) Warning: the duality gap"):
        assert main([*argv, "--json", "-", "--probe-starts", "1"]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out)["status"] == "certified" and "(PEPit)" not in out


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["check", "--help"], ["explore", "tune", "--help"], ["report", "--help"], ["figures", "--help"]],
)
def test_exit_codes_are_in_every_help(argv, capsys):
    assert main(argv) == 0
    out = capsys.readouterr().out
    for code in ("0 ", "1 ", "2 ", "3 ", "130", "143", "141"):
        assert f"  {code}" in out or f"; {code}" in out, (code, out)


def test_repeated_claim_takes_the_union_and_an_unmatched_glob_is_named(repo):
    out = repo / "r.json"
    proc = fedtheory("check", "--claim", "demo/lemma-4", "--claim", "demo/lemma-[12]", "--json", str(out), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert [c["id"] for c in json.loads(out.read_text())["claims"]] == ["demo/lemma-1", "demo/lemma-2", "demo/lemma-4"]
    proc = fedtheory("check", "--claim", "demo/lemma-1", "--claim", "demo/nothing-*", cwd=repo)
    assert proc.returncode == 2 and proc.stderr.strip() == "error: no claim matches 'demo/nothing-*'"


def test_the_explore_help_lists_every_subcommand(capsys):
    assert main(["--help"]) == 0
    top = " ".join(capsys.readouterr().out.split())
    assert main(["explore", "--help"]) == 0
    explore = capsys.readouterr().out
    for name in EXPLORE_COMMANDS:
        assert name in top and name in explore, name
    explore_parser = next(a for a in build_parser()._actions if a.dest == "command").choices["explore"]
    subcommands = next(a for a in explore_parser._actions if a.dest == "explore_command").choices
    assert set(subcommands) == set(EXPLORE_COMMANDS)


def _option_meanings() -> dict[str, set[str]]:
    """``{option: {dest}}`` over every (sub)command (hidden deprecated spellings left out)."""
    import argparse

    meanings: dict[str, set[str]] = {}

    def walk(p):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for child in a.choices.values():
                    walk(child)
            elif a.help != argparse.SUPPRESS:
                for o in a.option_strings:
                    meanings.setdefault(o, set()).add(f"{a.dest}:{a.metavar}" if o == "--class" else a.dest)

    walk(build_parser())
    return meanings


def test_class_has_one_meaning_and_certify_accepts_the_old_spelling(capsys):
    assert _option_meanings()["--class"] == {"function_class:d1|commuting|general"}
    from fedtheory.cli import _resolve_function_class

    args = build_parser().parse_args(
        ["explore", "certify", "fedavg", "--mu", "1", "--L", "4", "--class", "smooth-strongly-convex"]
    )
    _resolve_function_class(args)
    assert args.function_class == "smooth-strongly-convex"
    assert "deprecated: use --function-class smooth-strongly-convex" in capsys.readouterr().err
    args = build_parser().parse_args(["explore", "certify", "fedavg", "--mu", "1", "--L", "4"])
    _resolve_function_class(args)
    assert args.function_class == "quadratic"
    assert (
        main(
            ["explore", "certify", "fedavg", "--mu", "1", "--L", "4", "--class", "sod", "--function-class", "quadratic"]
        )
        == 2
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_completes_subcommands_and_options(tmp_path):
    proc = fedtheory("completion", "bash", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    script = tmp_path / "fedtheory.bash"
    script.write_text(proc.stdout)

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in words)
        out = subprocess.run(
            [
                "bash",
                "-c",
                f"source {script}; COMP_WORDS=(fedtheory {line}); "
                f"COMP_CWORD={len(words)}; _fedtheory; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=True,
        ).stdout
        return out.split()

    assert complete("ch") == ["check"]
    assert complete("explore", "cer") == ["certify"]
    assert complete("explore", "certify", "--function-c") == ["--function-class"]
    assert "--claim" in complete("check", "--cl")
