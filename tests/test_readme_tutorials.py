"""The README's tutorials run as written, outside the repository.

Each section of the README named below is read as its Python blocks: a block whose first line is a comment
naming a file (``# my_methods.py``) is written to that file in an empty directory outside the repository, every
other block is run there, in order, in a fresh interpreter (so a registered method does not leak into this test
session). A tutorial that stops working fails here.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ["## Methods as data: describe once, simulate, certify, tune"]


def _blocks(heading: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    body = text[start:end if end >= 0 else len(text)]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


@pytest.mark.parametrize("heading", SECTIONS)
def test_readme_tutorial_runs_outside_the_repository(heading, tmp_path):
    blocks = _blocks(heading)
    assert blocks, f"no python blocks under {heading!r}"
    script = []
    for block in blocks:
        first = block.splitlines()[0].strip()
        named = re.fullmatch(r"#\s*([\w./-]+\.py)", first)
        if named:
            (tmp_path / named.group(1)).write_text(block, encoding="utf-8")
        else:
            script.append(block)
    assert str(ROOT) not in str(tmp_path.resolve())
    main = tmp_path / "tutorial.py"
    main.write_text("\n".join(script), encoding="utf-8")
    run = subprocess.run([sys.executable, str(main)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"tutorial under {heading!r} failed:\n{run.stdout}\n{run.stderr}"
