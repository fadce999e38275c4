"""pytest plugin: every claim of a project's content files is a test, in projects that ask for it.

The plugin is opt-in (no ``pytest11`` entry point, so it never loads in someone else's pytest session): a
project enables it in its pytest configuration, e.g. in ``pyproject.toml``::

    [tool.pytest.ini_options]
    addopts = ["-p", "fedtheory.claims.pytest_plugin"]
    fedtheory_paths = ["claims"]          # optional: where your claim files are (files or folders)

or with ``pytest_plugins = ["fedtheory.claims.pytest_plugin"]`` in its top-level ``conftest.py``, or once with
``pytest -p fedtheory.claims.pytest_plugin``. The claim files are those ``fedtheory check PATH ...`` loads from
the ``fedtheory_paths`` (a file named there, whatever its name, or a folder's ``*.py`` files not starting with
``_`` or ``test_``); without ``fedtheory_paths``, the content files of folders named ``paper_checks`` or
``verify``, directly or inside a paper package there (fedtheory's own layout).

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
from pathlib import Path

import pytest

from fedtheory.content import CLAIM_DIRS, UsageError, discover, is_content_file


class ClaimFailed(Exception):
    """A claim whose status differs from its ``expect`` (the message is the readable report)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fedtheory", "fedtheory claims")
    group.addoption("--fedtheory-tier", choices=("fast", "full"), default="fast",
                    help="claim tier: fast (default) or full (fast and full claims)")
    group.addoption("--fedtheory-seed", type=int, default=0, help="global seed of the claims (default 0)")
    parser.addini("fedtheory_paths", type="paths", default=[],
                  help="claim files or folders (as given to `fedtheory check`); default: the content files of "
                       "folders named " + " and ".join(f"{d}/" for d in CLAIM_DIRS))


_CLAIM_FILES = pytest.StashKey[frozenset]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fedtheory_claim: a fedtheory claim collected from a content file")
    roots = config.getini("fedtheory_paths")
    if roots:
        try:
            config.stash[_CLAIM_FILES] = frozenset(discover([str(r) for r in roots], ()))
        except UsageError as exc:
            raise pytest.UsageError(f"fedtheory_paths: {exc}") from None


def is_claim_file(config: pytest.Config, path: Path) -> bool:
    """Whether ``path`` is a claim file here: one of the files ``fedtheory check`` loads from the
    ``fedtheory_paths`` when they are set, else a content file of ``paper_checks/`` or ``verify/``."""
    if _CLAIM_FILES in config.stash:
        return Path(path).resolve() in config.stash[_CLAIM_FILES]
    return is_content_file(path)


def pytest_report_header(config: pytest.Config) -> str:
    roots = config.getini("fedtheory_paths")
    where = ", ".join(str(r) for r in roots) if roots else ", ".join(f"{d}/" for d in CLAIM_DIRS)
    return (f"fedtheory: tier={config.getoption('fedtheory_tier')} seed={config.getoption('fedtheory_seed')} "
            f"(claims from {where})")


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
    lines = [f"{record['id']} ({record.get('ref', '')}): expected {record['expect']}, got {record['status']}",
             f"  measured: {json.dumps(evidence.get('measured', {}), default=str)}"]
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
    keep, drop = [], []
    for item in items:
        (drop if isinstance(item, ClaimItem) and item.claim.tier == "full" else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
