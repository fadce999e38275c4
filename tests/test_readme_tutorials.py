"""The tutorials run as written, outside the repository: the README's and the documentation's.

A tutorial is read as its code blocks, in order. A block whose first line is a comment naming a file
(``# my_methods.py``) is written to that file in an empty directory outside the repository; the other
``python`` blocks, and in the documentation's tutorials the ``bash`` blocks (each line a command that must exit
0), make one script run there in a fresh interpreter (so a registered method does not leak into this test
session). ``console`` and ``text`` blocks are shown, never run. A tutorial that stops working fails here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_SECTIONS = ["## Methods as data: describe once, simulate, certify, tune"]
# a page that includes a README section (methods-as-data) is run as that section
DOC_TUTORIALS = sorted(
    p
    for p in (ROOT / "docs" / "tutorials").glob("*.md")
    if "```{include} ../../README.md" not in p.read_text(encoding="utf-8")
)
# The README's shell lines are illustrations with inputs of your own (my_federation.npz); the docs' tutorials
# hold only commands that run as written.
TUTORIALS = [("README.md", heading, ("python",)) for heading in README_SECTIONS] + [
    (p.relative_to(ROOT).as_posix(), None, ("python", "bash")) for p in DOC_TUTORIALS
]


def _blocks(page: str, heading: str | None, languages: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(language, code)`` of the page's blocks in ``languages`` (under ``heading`` when given), in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    if heading is not None:
        start = text.index(heading)
        end = text.find("\n## ", start + len(heading))
        text = text[start : end if end >= 0 else len(text)]
    return [(lang, code) for lang, code in re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S) if lang in languages]


def _script(blocks: list[tuple[str, str]], folder: Path) -> str:
    """The tutorial as one Python script (files written to ``folder`` on the way); shell lines become calls."""
    script = [
        "import subprocess as _subprocess",
        "def _sh(line):",
        "    print('$', line, flush=True)",
        "    _subprocess.run(line, shell=True, check=True)",
    ]
    for lang, code in blocks:
        named = re.fullmatch(r"#\s*([\w./-]+\.py)", code.splitlines()[0].strip())
        if named:
            (folder / named.group(1)).write_text(code, encoding="utf-8")
        elif lang == "bash":
            script += [f"_sh({line!r})" for line in code.splitlines() if line.strip() and not line.startswith("#")]
        else:
            script.append(code)
    return "\n".join(script)


def test_doc_tutorials_exist():
    assert DOC_TUTORIALS, "docs/tutorials/ holds no tutorial"


@pytest.mark.parametrize("page, heading, languages", TUTORIALS, ids=lambda v: v if isinstance(v, str) else "")
def test_tutorial_runs_outside_the_repository(page, heading, languages, tmp_path):
    blocks = _blocks(page, heading, languages)
    assert blocks, f"no code blocks in {page} {heading or ''}"
    assert str(ROOT) not in str(tmp_path.resolve())
    main = tmp_path / "tutorial.py"
    main.write_text(_script(blocks, tmp_path), encoding="utf-8")
    # `fedtheory` and `python` are this interpreter's; `no:fedtheory` masks a pytest11 entry point that an
    # environment installed from fedtheory 0.1.0 may still list (the plugin is opt-in since)
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "PYTEST_ADDOPTS": "-p no:fedtheory -p no:cacheprovider",
    }
    run = subprocess.run(
        [sys.executable, str(main)], cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env
    )
    assert run.returncode == 0, f"tutorial {page} {heading or ''} failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
