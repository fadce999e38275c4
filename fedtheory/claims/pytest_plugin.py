"""pytest plugin: every claim of a project's content files is a test, in projects that ask for it.

The plugin is opt-in (no ``pytest11`` entry point, so it never loads in someone else's pytest session), and
it collects only the claim files a project names. A project enables it in its pytest configuration and names its
claim files in a ``[tool.fedtheory]`` table of the same ``pyproject.toml``::

    [tool.pytest.ini_options]
    addopts = ["-p", "fedtheory.claims.pytest_plugin"]

    [tool.fedtheory]
    paths = ["claims", "more/one_paper.py"]   # files or folders, relative to this pyproject.toml

or with ``pytest_plugins = ["fedtheory.claims.pytest_plugin"]`` in its top-level ``conftest.py``, or once with
``pytest -p fedtheory.claims.pytest_plugin --fedtheory-paths claims``. The claim paths come from, first to last:
the ``--fedtheory-paths`` flag (repeatable, or comma-separated; relative to the current directory), the
``fedtheory_paths`` ini option (relative to the ini file), the ``paths`` of the ``[tool.fedtheory]`` table of the
rootdir's ``pyproject.toml`` (relative to it). The claim files are those ``fedtheory check PATH ...`` loads from
them: a file named there, whatever its name, or a folder's ``*.py`` files not starting with ``_`` or ``test_``
and the content files of the paper packages inside it. Named nowhere, the plugin collects nothing (the header
says so): a ``verify/`` folder of a project that did not name it is never imported.

``pytest paper_checks verify`` then collects each claim as one item named by the claim id. An item passes
exactly when the claim's status equals its ``expect``, is skipped when the claim is ``skipped`` (missing
optional capability), and fails otherwise with the status, measured values and notes. It runs the claim through
:func:`fedtheory.claims.runner.run_claim`, the same function as ``fedtheory check`` (same seeds, same
counterexample store).

Options: ``--fedtheory-tier fast|full`` (default fast; full-tier claims are deselected under fast)
and ``--fedtheory-seed N`` (default 0).

>>> ClaimFailed("demo/lemma-1: expected verified, got refuted").args[0]
'demo/lemma-1: expected verified, got refuted'
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fedtheory.content import UsageError, discover, is_paper_package

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself depends on tomli before Python 3.11
    import tomli as tomllib


class ClaimFailed(Exception):
    """A claim whose status differs from its ``expect`` (the message is the readable report)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fedtheory", "fedtheory claims")
    group.addoption(
        "--fedtheory-tier",
        choices=("fast", "full"),
        default="fast",
        help="claim tier: fast (default) or full (fast and full claims)",
    )
    group.addoption("--fedtheory-seed", type=int, default=0, help="global seed of the claims (default 0)")
    group.addoption(
        "--fedtheory-paths",
        action="append",
        default=[],
        metavar="PATH[,PATH...]",
        help="claim files or folders (as given to `fedtheory check`); repeatable; overrides the "
        "fedtheory_paths ini option and the [tool.fedtheory] paths of pyproject.toml",
    )
    parser.addini(
        "fedtheory_paths",
        type="paths",
        default=[],
        help="claim files or folders (as given to `fedtheory check`), relative to this file; overrides "
        "the [tool.fedtheory] paths of pyproject.toml",
    )


_CLAIM_PATHS = pytest.StashKey[tuple[str, list[Path]]]()
_CLAIM_FILES = pytest.StashKey[frozenset[Path]]()


def table_paths(pyproject: Path) -> list[Path]:
    """The ``paths`` of the ``[tool.fedtheory]`` table of ``pyproject`` (resolved against its folder; none
    without the file or the table). A ``paths`` that is not a list of strings is a ``ValueError``.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> table_paths(d / "pyproject.toml")
    []
    >>> _ = (d / "pyproject.toml").write_text('[tool.fedtheory]\\npaths = ["claims", "b/mine.py"]\\n')
    >>> [p.relative_to(d).as_posix() for p in table_paths(d / "pyproject.toml")]
    ['claims', 'b/mine.py']
    """
    if not pyproject.is_file():
        return []
    with open(pyproject, "rb") as fh:
        table = tomllib.load(fh).get("tool", {}).get("fedtheory", {})
    paths = table.get("paths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValueError(f"[tool.fedtheory] paths in {pyproject} must be a list of strings, got {paths!r}")
    return [pyproject.parent / p for p in paths]


def claim_paths(config: pytest.Config) -> tuple[str, list[Path]]:
    """Where this session's claim files are, and which setting said so: the ``--fedtheory-paths`` flag, else the
    ``fedtheory_paths`` ini option, else the ``[tool.fedtheory]`` table of the rootdir's ``pyproject.toml``; an
    empty list when none names any (then nothing is collected)."""
    flag = [part for value in config.getoption("fedtheory_paths") for part in value.split(",") if part]
    if flag:
        return "--fedtheory-paths", [config.invocation_params.dir / p for p in flag]
    ini = config.getini("fedtheory_paths")
    if ini:
        return "fedtheory_paths", [Path(p) for p in ini]
    return "[tool.fedtheory] paths", table_paths(config.rootpath / "pyproject.toml")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fedtheory_claim: a fedtheory claim collected from a content file")
    try:
        setting, roots = claim_paths(config)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_CLAIM_PATHS] = (setting, roots)
    try:
        config.stash[_CLAIM_FILES] = frozenset(discover([str(r) for r in roots], ())) if roots else frozenset()
    except UsageError as exc:
        raise pytest.UsageError(f"{setting}: {exc}") from None


def is_claim_file(config: pytest.Config, path: Path) -> bool:
    """Whether ``path`` is a claim file here: one of the files ``fedtheory check`` loads from the claim paths the
    project names (:func:`claim_paths`)."""
    return Path(path).resolve() in config.stash[_CLAIM_FILES]


def pytest_report_header(config: pytest.Config) -> str:
    setting, roots = config.stash[_CLAIM_PATHS]
    where = (
        f"claims from {', '.join(str(r) for r in roots)}"
        if roots
        else "no claim paths: name them in [tool.fedtheory] paths of pyproject.toml or with --fedtheory-paths"
    )
    return f"fedtheory: tier={config.getoption('fedtheory_tier')} seed={config.getoption('fedtheory_seed')} ({where})"


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # the hook and pytest.Dir are pytest >= 8
def pytest_collect_directory(path: Path, parent: pytest.Collector):
    # A paper package (paper_checks/<key>/ with an __init__.py) is content loaded by path, not a Python package:
    # collected as a plain directory, so pytest does not import its __init__ under a top-level name of its own.
    if not (is_paper_package(path) and hasattr(pytest, "Dir")):
        return None
    if any(f.parent == path.resolve() for f in parent.config.stash[_CLAIM_FILES]):
        return pytest.Dir.from_parent(parent, path=path)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if is_claim_file(parent.config, file_path):
        return ClaimFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector):
    # A claim file named on the command line (or matching python_files) would otherwise also be
    # imported as a test module; ClaimFile already covers it.
    if is_claim_file(parent.config, module_path):
        return _NotATestModule.from_parent(parent, path=module_path)
    return None


class _NotATestModule(pytest.File):
    def collect(self):
        return []


class ClaimFile(pytest.File):
    """A content file: loaded by path (as ``fedtheory check`` does), one item per claim it defines."""

    def collect(self):
        from fedtheory.content import load_module, module_claims

        try:
            claims = module_claims(load_module(self.path))
        except UsageError as exc:
            raise self.CollectError(str(exc)) from exc
        for c in claims:
            c.source = str(Path(self.path).resolve())
            item = ClaimItem.from_parent(self, name=c.id, claim=c)
            item.add_marker(pytest.mark.fedtheory_claim)
            yield item


class ClaimItem(pytest.Item):
    """One claim as a test."""

    def __init__(self, *, claim, **kw) -> None:
        super().__init__(**kw)
        self.claim = claim
        self.record: dict | None = None

    def runtest(self) -> None:
        from fedtheory.claims.runner import run_claim

        config = self.config
        record = run_claim(self.claim, seed=config.getoption("fedtheory_seed"), tier=config.getoption("fedtheory_tier"))
        self.record = record
        self.user_properties.append(("fedtheory_status", record["status"]))
        if record["status"] == "skipped" and record["passed"]:
            reason = f"{self.claim.id}: {record['evidence']['notes']}"
            try:  # report the skip at the content file, not at this plugin
                raise pytest.skip.Exception(reason, _use_item_location=True)
            except TypeError:  # older pytest without the keyword
                pytest.skip(reason)
        if not record["passed"]:
            raise ClaimFailed(failure_message(record))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        code = getattr(self.claim.check, "__code__", None)
        line = code.co_firstlineno - 1 if code is not None and Path(code.co_filename) == Path(self.path) else 0
        return self.path, line, f"{self.claim.id} [{self.claim.ref}] expect {self.claim.expect}"


def failure_message(record: dict) -> str:
    """The readable failure of a claim record: expected vs got, measured values, counterexample, notes.

    >>> print(failure_message({"id": "a/lemma-1", "ref": "Lemma 1", "expect": "verified", "status": "refuted",
    ...                        "evidence": {"measured": {"worst_ratio": 1.5}, "counterexample": None, "notes": "n"}}))
    a/lemma-1 (Lemma 1): expected verified, got refuted
      measured: {"worst_ratio": 1.5}
      notes: n
    """
    evidence = record.get("evidence", {})
    lines = [
        f"{record['id']} ({record.get('ref', '')}): expected {record['expect']}, got {record['status']}",
        f"  measured: {json.dumps(evidence.get('measured', {}), default=str)}",
    ]
    if evidence.get("counterexample") is not None:
        text = json.dumps(evidence["counterexample"], default=str)
        lines.append(f"  counterexample: {text if len(text) < 500 else text[:497] + '...'}")
    notes = (evidence.get("notes") or "").rstrip()
    if notes:
        lines.append("  notes: " + notes.replace("\n", "\n    "))
    return "\n".join(lines)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if config.getoption("fedtheory_tier") == "full":
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (drop if isinstance(item, ClaimItem) and item.claim.tier == "full" else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
