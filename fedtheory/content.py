"""Finding and loading content files (``paper_checks/``, ``verify/``, ``figures/``) by path.

Content files import the library; the library never imports them as package modules. They are
loaded with :mod:`importlib` from their path, under a module name derived from the resolved path
(so two ``localupdate.py`` in different directories never collide), once per process.

**Paper packages.** A directory with an ``__init__.py`` directly inside a content directory
(``paper_checks/localupdate/``) is a paper package: its modules not starting with ``_`` are content
files (one per section of the paper), its ``_``-prefixed modules are helpers shared by them, and its
``__init__.py`` holds the paper's ``PAPER_LABELS`` and ``INVENTORY`` (it defines no claims). A module of a
package is still loaded by path, but as a submodule of a package registered under a name derived from
the package's path, so relative imports (``from ._common import EPS``) work and a helper is executed
once however many sections import it; nothing is put on ``sys.path``. Counterexamples of a package's
claims are stored beside the package, in ``paper_checks/counterexamples/`` (:func:`content_folder`).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "demo.py").write_text('''
... from fedtheory.claims.core import claim
... @claim(id="demo/lemma-1", ref="Lemma 1", title="t", statement="s", kind="numeric")
... def lemma_1(ctx):
...     return ctx.verified()
... ''')
>>> [c.id for c in load_claims([str(d)])]
['demo/lemma-1']
>>> try:
...     select([], paper="nosuch")
... except UsageError as e:
...     print(e)
unknown paper 'nosuch' (known: none)
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import importlib.util
import os
import re
import signal
import sys
import threading
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable

from fedtheory.errors import UsageError  # noqa: F401 - re-exported: content raises it, callers catch it here

CLAIM_DIRS = ("paper_checks", "verify")
FIGURE_DIRS = ("figures",)
TIERS = ("fast", "full")
# Module names of loaded content files start with this, so a claim imported from another content
# file can be told apart from one its own file defines.
MODULE_PREFIX = "_fedtheory_content_"

_MODULES: dict[Path, ModuleType] = {}


class ContentError(UsageError):
    """A content file could not be loaded (syntax error, failing import, duplicate claim id)."""


def discover(paths: list[str] | None, default_dirs: tuple[str, ...]) -> list[Path]:
    """Content files to load: the given paths, or the ``default_dirs`` of :func:`default_content_root`.

    A file is taken as is (it must end in ``.py``); a directory gives its ``*.py`` files except those
    starting with ``_`` or ``test_`` and ``conftest.py``, sorted, then the content modules of each paper
    package directly inside it (a subdirectory with ``__init__.py``: see the module docstring); other
    subdirectories (``counterexamples/``) are ignored. A paper package given itself gives its content
    modules. A path that does not exist is a :class:`UsageError`.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("b.py", "a.py", "_helpers.py", "test_a.py", "conftest.py", "notes.txt"):
    ...     _ = (d / name).write_text("")
    >>> [p.name for p in discover([str(d)], ())]
    ['a.py', 'b.py']
    >>> (d / "paper").mkdir()
    >>> for name in ("__init__.py", "_common.py", "lemmas.py", "figures.py"):
    ...     _ = (d / "paper" / name).write_text("")
    >>> [p.relative_to(d).as_posix() for p in discover([str(d)], ())]
    ['a.py', 'b.py', 'paper/figures.py', 'paper/lemmas.py']
    >>> try:
    ...     discover(["no/such/dir"], ())
    ... except UsageError as e:
    ...     print(e)
    path does not exist: no/such/dir
    """
    if paths:
        candidates = [Path(p) for p in paths]
        for p in candidates:
            if not p.exists():
                raise UsageError(f"path does not exist: {p}")
    else:
        root = default_content_root()
        candidates = [root / d for d in default_dirs if (root / d).is_dir()]
    found: list[Path] = []
    seen: set[Path] = set()
    for p in candidates:
        if p.is_dir():
            files = _content_files(p)
            if not is_paper_package(p):
                for package in sorted(q for q in p.iterdir() if is_paper_package(q)):
                    files += _content_files(package)
        elif p.suffix == ".py":
            files = [p]
        else:
            raise UsageError(f"not a Python content file: {p}")
        for f in files:
            resolved = f.resolve()
            if resolved not in seen:
                seen.add(resolved)
                found.append(resolved)
    return found


def _content_files(directory: Path) -> list[Path]:
    return sorted(f for f in directory.glob("*.py") if f.is_file() and _is_content_name(f.name))


def is_paper_package(path: Path | str) -> bool:
    """True for a directory holding an ``__init__.py``: a paper split by sections (module docstring).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> before = is_paper_package(d)
    >>> _ = (d / "__init__.py").write_text("")
    >>> before, is_paper_package(d)
    (False, True)
    """
    path = Path(path)
    return path.is_dir() and (path / "__init__.py").is_file()


def content_folder(path: Path | str) -> Path:
    """The content folder a content file belongs to (``paper_checks/``, ``verify/``, a given folder): the file's own
    directory, or for a module of a paper package the directory holding the package (where ``counterexamples/``
    and the other papers are). Not :func:`default_content_root`, the project directory those folders are in.

    >>> content_folder("/repo/paper_checks/localupdate.py").as_posix()
    '/repo/paper_checks'
    """
    parent = Path(path).parent
    return parent.parent if is_paper_package(parent) else parent


def paper_home(directory: Path | str, paper: str) -> Path | None:
    """The file holding ``paper``'s ``INVENTORY`` in a content directory: ``<paper>/__init__.py`` of a paper
    package, else ``<paper>.py``; None when neither exists.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "demo").mkdir(); _ = (d / "demo" / "__init__.py").write_text("")
    >>> paper_home(d, "demo").relative_to(d).as_posix(), paper_home(d, "other")
    ('demo/__init__.py', None)
    """
    directory = Path(directory)
    for home in (directory / paper / "__init__.py", directory / f"{paper}.py"):
        if home.is_file():
            return home
    return None


def _is_content_name(name: str) -> bool:
    # conftest.py belongs to pytest, which imports it itself.
    return name.endswith(".py") and not name.startswith(("_", "test_")) and name != "conftest.py"


def is_content_file(path: Path | str) -> bool:
    """True for a ``*.py`` file (not ``_*``, ``test_*``, ``conftest.py``) directly inside ``paper_checks/`` or
    ``verify/``, or inside a paper package there (``paper_checks/<key>/<section>.py``).

    >>> is_content_file("repo/paper_checks/localupdate.py"), is_content_file("repo/verify/_util.py")
    (True, False)
    """
    path = Path(path)
    if not _is_content_name(path.name):
        return False
    return path.parent.name in CLAIM_DIRS or (path.parent.parent.name in CLAIM_DIRS and is_paper_package(path.parent))


def module_name(path: Path | str) -> str:
    """The module name a content file is loaded under: stable for one resolved path, unique across paths.

    >>> module_name("/x/paper_checks/localupdate.py").startswith("_fedtheory_content_localupdate_")
    True

    A module of a paper package is a submodule of the package's name (``__init__.py`` is the package):

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "demo"; d.mkdir(); _ = (d / "__init__.py").write_text("")
    >>> module_name(d / "lemmas.py") == module_name(d / "__init__.py") + ".lemmas"
    True
    """
    resolved = Path(path).resolve()
    if is_paper_package(resolved.parent):
        package = _package_name(resolved.parent)
        return package if resolved.name == "__init__.py" else package + "." + re.sub(r"\W", "_", resolved.stem)
    stem = re.sub(r"\W", "_", resolved.stem)
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    return f"{MODULE_PREFIX}{stem}_{digest}"


def _package_name(directory: Path) -> str:
    stem = re.sub(r"\W", "_", directory.name)
    digest = hashlib.sha256(str(directory).encode()).hexdigest()[:12]
    return f"{MODULE_PREFIX}{stem}_{digest}"


def _register_package(directory: Path) -> None:
    """Put the paper package at ``directory`` into ``sys.modules`` (its ``__init__`` not run yet) so its
    modules' relative imports resolve; ``load_module(directory / "__init__.py")`` runs the ``__init__``."""
    name = _package_name(directory)
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        name, directory / "__init__.py", submodule_search_locations=[str(directory)]
    )
    assert spec is not None  # a .py file always has a loader
    sys.modules[name] = importlib.util.module_from_spec(spec)


#: seconds a content file may take to load (define its claims and figures), FEDTHEORY_LOAD_TIMEOUT to change
LOAD_TIMEOUT_S = 300.0


@contextlib.contextmanager
def _load_time_limit(path: Path):
    """TimeoutError inside the load once it runs past FEDTHEORY_LOAD_TIMEOUT seconds (SIGALRM; main thread only):
    a file that hangs while loading is that file's one-line error, not a run that never starts."""
    try:
        limit = float(os.environ.get("FEDTHEORY_LOAD_TIMEOUT", LOAD_TIMEOUT_S))
    except ValueError:
        raise UsageError(
            f"FEDTHEORY_LOAD_TIMEOUT must be a number of seconds, got {os.environ['FEDTHEORY_LOAD_TIMEOUT']!r}"
        ) from None
    if limit <= 0 or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(
            f"loading took longer than {limit:g} s (a content file defines claims and figures; "
            "work belongs in their checks; FEDTHEORY_LOAD_TIMEOUT changes the limit)"
        )

    previous = signal.signal(signal.SIGALRM, expired)
    old_timer = signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_timer[0] > 0:  # someone else's alarm: put it back
            signal.setitimer(signal.ITIMER_REAL, *old_timer)


def load_module(path: Path | str) -> ModuleType:
    """Load a content file by path (cached per process); a failure is a one-line :class:`ContentError`.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = f.write_text("X = 41 + 1")
    >>> load_module(f).X, load_module(f) is load_module(str(f))
    (42, True)
    """
    resolved = Path(path).resolve()
    cached = _MODULES.get(resolved)
    if cached is not None:
        return cached
    if resolved.is_dir() and is_paper_package(resolved):
        return load_module(resolved / "__init__.py")
    if not resolved.is_file():
        raise UsageError(f"path does not exist: {path}")
    name = module_name(resolved)
    package_init = resolved.name == "__init__.py" and is_paper_package(resolved.parent)
    if is_paper_package(resolved.parent):
        _register_package(resolved.parent)
        if not package_init and name in sys.modules:  # a sibling's relative import loaded it already
            _MODULES[resolved] = sys.modules[name]
            return sys.modules[name]
    if package_init:
        module = sys.modules[name]  # registered, still empty, by _register_package: its __init__ runs now
    else:
        spec = importlib.util.spec_from_file_location(name, resolved)
        if spec is None or spec.loader is None:
            raise ContentError(f"cannot load {resolved}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        # Registered before exec: dataclasses and pickling look modules up in sys.modules.
        sys.modules[name] = module
    try:
        with _load_time_limit(resolved):
            spec = module.__spec__
            assert spec is not None and spec.loader is not None  # made from a .py file above
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # sys.exit() at import is a broken file, not the run's exit code
        if not package_init:  # the package stays registered: its sections' relative imports need it
            sys.modules.pop(name, None)
        raise ContentError(f"cannot load {resolved}: {_where(exc, resolved)}{type(exc).__name__}: {exc}") from exc
    _MODULES[resolved] = module
    return module


def _where(exc: BaseException, path: Path) -> str:
    """``line N: `` of the deepest frame inside the content file, so the one-line error points at it."""
    line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename) == path:
            line = frame.lineno
    return f"line {line}: " if line else ""


def _values(module: ModuleType, kind: type) -> list[Any]:
    """Instances of ``kind`` among the module's globals, also one level inside lists, tuples and dicts."""
    out: list[Any] = []
    seen: set[int] = set()
    for name, value in list(vars(module).items()):
        if name.startswith("__"):
            continue
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, kind) and id(item) not in seen:
                seen.add(id(item))
                out.append(item)
    return out


def _defined_elsewhere(obj: Any, fn: Any, module: ModuleType) -> bool:
    """True when ``obj`` was imported from another content file (its function lives there)."""
    owner = getattr(fn, "__module__", "") or ""
    return owner.startswith(MODULE_PREFIX) and owner != module.__name__


def module_claims(module: ModuleType) -> list:
    """Claims a loaded content module defines (claims it imported from another content file excluded).

    >>> import types
    >>> module_claims(types.ModuleType("empty"))
    []
    """
    from fedtheory.claims.core import Claim

    return [c for c in _values(module, Claim) if not _defined_elsewhere(c, c.check, module)]


def module_figures(module: ModuleType) -> list:
    """Figures a loaded content module defines (see :func:`module_claims`).

    >>> import types
    >>> module_figures(types.ModuleType("empty"))
    []
    """
    from fedtheory.plotting.spec import Figure

    return [f for f in _values(module, Figure) if not _defined_elsewhere(f, f.fn, module)]


#: where a wheel puts the repository's content folders (setup.py copies them there)
INSTALLED_CONTENT = Path(__file__).resolve().parent / "_content"


def default_content_root() -> Path:
    """The directory whose ``paper_checks/``, ``verify/`` and ``figures/`` are loaded when no path is given.

    The cwd when it has any of them (a project's own content wins, also over the figures it does not have); else
    the root of the project the cwd is in (the nearest parent with ``pyproject.toml`` or ``.git``) when that root
    has any of them; else the content that came with the package: the wheel's copy (``fedtheory/_content/``), or, for a checkout or an
    editable install, the checkout that ``fedtheory`` is imported from. So ``fedtheory check`` works in any
    directory after ``pip install``.

    >>> import os, tempfile, pathlib
    >>> here = os.getcwd()
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "verify").mkdir()
    >>> try:
    ...     os.chdir(d); own = default_content_root()
    ...     os.chdir(d / "verify"); shipped = default_content_root()
    ... finally:
    ...     os.chdir(here)
    >>> own == d.resolve(), (shipped / "paper_checks").is_dir()
    (True, True)
    >>> _ = (d / "pyproject.toml").write_text(""); (d / "verify" / "sub").mkdir()
    >>> try:
    ...     os.chdir(d / "verify" / "sub"); found = default_content_root()
    ... finally:
    ...     os.chdir(here)
    >>> found == d.resolve()
    True
    """
    cwd = Path.cwd()
    if any((cwd / d).is_dir() for d in CLAIM_DIRS + FIGURE_DIRS):
        return cwd
    # From inside a project (a subfolder of a checkout), its root: the nearest parent marked by pyproject.toml or
    # .git, as pytest and git find theirs, when it has content folders. The search stops at that root.
    for parent in cwd.parents:
        if (parent / "pyproject.toml").is_file() or (parent / ".git").exists():
            if any((parent / d).is_dir() for d in CLAIM_DIRS + FIGURE_DIRS):
                return parent
            break
    checkout = INSTALLED_CONTENT.parent.parent
    return INSTALLED_CONTENT if INSTALLED_CONTENT.is_dir() else checkout


def _load(paths: list[str] | None, default_dirs: tuple[str, ...], collect, what: str) -> list:
    files = discover(paths, default_dirs)
    if not files and paths:
        raise UsageError(f"no content files in {', '.join(paths)} (*.py files not starting with _ or test_)")
    if not files:
        where = ", ".join(f"{d}/" for d in default_dirs)
        raise UsageError(f"no content files found (looked for {where} under {default_content_root()}; or give paths)")
    out: list = []
    by_id: dict[str, Any] = {}
    for path in files:
        for obj in collect(load_module(path)):
            if obj.id in by_id:
                if by_id[obj.id] is obj:
                    continue
                raise ContentError(f"duplicate {what} id {obj.id!r}: in {by_id[obj.id].source} and {path}")
            obj.source = str(path)
            by_id[obj.id] = obj
            out.append(obj)
    return out


def load_claims(paths: list[str] | None = None) -> list:
    """Every :class:`~fedtheory.claims.core.Claim` in the content files, with ``.source`` set to its file.

    Default paths: ``paper_checks/`` and ``verify/`` under the cwd. Duplicate ids are a :class:`UsageError`.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "two.py").write_text('''
    ... from fedtheory.claims.core import claim
    ... CLAIMS = [claim(id=f"demo/lemma-{i}", ref=f"Lemma {i}", title="t", statement="s", kind="numeric")(
    ...     lambda ctx: ctx.verified()) for i in (1, 2)]
    ... ''')
    >>> [(c.id, pathlib.Path(c.source).name) for c in load_claims([str(d / "two.py")])]
    [('demo/lemma-1', 'two.py'), ('demo/lemma-2', 'two.py')]
    """
    return _load(paths, CLAIM_DIRS, module_claims, "claim")


def load_figures(paths: list[str] | None = None) -> list:
    """Every :class:`~fedtheory.plotting.spec.Figure` in the content files (default ``figures/``), ``.source`` set.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "figs.py").write_text('''
    ... from fedtheory.plotting.spec import figure
    ... @figure(id="demo/figure-1", caption="c")
    ... def figure_1(ctx):
    ...     return {"params": {}, "panels": []}
    ... ''')
    >>> [f.id for f in load_figures([str(d)])]
    ['demo/figure-1']
    """
    return _load(paths, FIGURE_DIRS, module_figures, "figure")


def load_inventory(path: Path | str) -> dict | None:
    """The content file's ``INVENTORY`` (paper label -> claim ids or a reason), or None when it has none.

    ``path`` may be a paper package (its ``__init__.py`` holds the inventory).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "inv.py"
    >>> _ = f.write_text('INVENTORY = {"Lemma 1": "pending"}')
    >>> load_inventory(f)
    {'Lemma 1': 'pending'}
    """
    inventory = getattr(load_module(path), "INVENTORY", None)
    return dict(inventory) if inventory is not None else None


def check_tier(tier: str) -> str:
    """``tier`` if it is ``fast`` or ``full``, else a :class:`UsageError`.

    >>> try:
    ...     check_tier("warp")
    ... except UsageError as e:
    ...     print(e)
    unknown tier 'warp' (choose fast or full)
    """
    if tier not in TIERS:
        raise UsageError(f"unknown tier {tier!r} (choose fast or full)")
    return tier


def in_tier(item_tier: str, tier: str) -> bool:
    """Whether an item of ``item_tier`` runs under ``tier`` (``full`` runs fast and full).

    >>> in_tier("full", "fast"), in_tier("fast", "full")
    (False, True)
    """
    return tier == "full" or item_tier == "fast"


def _known(keys: Iterable[str], limit: int = 12) -> str:
    keys = sorted(set(keys))
    if not keys:
        return "none"
    shown = ", ".join(keys[:limit])
    return shown + (f", ... ({len(keys)} in all)" if len(keys) > limit else "")


def _by_paper(items: list, paper: str | None) -> list:
    if paper is None:
        return list(items)
    papers = {i.paper for i in items}
    if paper not in papers:
        raise UsageError(f"unknown paper {paper!r} (known: {_known(papers)})")
    return [i for i in items if i.paper == paper]


def select(
    claims: list, *, paper: str | None = None, claim_glob: str | list[str] | None = None, tier: str = "fast"
) -> list:
    """The claims a run selects: of ``paper``, with ids matching ``claim_glob``, in ``tier``.

    ``claim_glob`` may be several globs (a repeated ``--claim``): the union, in the claims' order.
    Unknown paper or tier, and a glob matching nothing, are :class:`UsageError`.

    >>> from fedtheory.claims.core import claim
    >>> make = lambda i, t: claim(id=i, ref="r", title="t", statement="s", kind="numeric", tier=t)(lambda c: None)
    >>> cs = [make("a/lemma-1", "fast"), make("a/lemma-2", "full"), make("b/theorem-1", "fast")]
    >>> [c.id for c in select(cs, paper="a", tier="full")]
    ['a/lemma-1', 'a/lemma-2']
    >>> [c.id for c in select(cs, claim_glob="*/lemma-*")]
    ['a/lemma-1']
    >>> [c.id for c in select(cs, claim_glob=["b/*", "a/lemma-1", "*/lemma-1"])]
    ['a/lemma-1', 'b/theorem-1']
    >>> try:
    ...     select(cs, paper="c")
    ... except UsageError as e:
    ...     print(e)
    unknown paper 'c' (known: a, b)
    """
    check_tier(tier)
    chosen = _by_paper(claims, paper)
    globs = [claim_glob] if isinstance(claim_glob, str) else list(claim_glob or ())
    if not globs:
        return [c for c in chosen if in_tier(c.tier, tier)]
    picked: set[int] = set()
    for glob in globs:
        matched = [c for c in chosen if fnmatch.fnmatchcase(c.id, glob)]
        if not matched:
            raise UsageError(f"no claim matches {glob!r}" + (f" in paper {paper!r}" if paper else ""))
        in_run = [c for c in matched if in_tier(c.tier, tier)]
        if not in_run:
            raise UsageError(f"{glob!r} matches only full-tier claims; add --tier full")
        picked.update(id(c) for c in in_run)
    return [c for c in chosen if id(c) in picked]


def select_figures(figures: list, paper: str | None = None, figure_id: str | None = None, tier: str = "fast") -> list:
    """The figures a run selects: of ``paper``, the one with ``figure_id`` (a full id), in ``tier``.

    >>> from fedtheory.plotting.spec import figure
    >>> figs = [figure(id="a/figure-1", caption="c")(lambda ctx: None),
    ...         figure(id="a/figure-2", caption="c", tier="full")(lambda ctx: None)]
    >>> [f.id for f in select_figures(figs)]
    ['a/figure-1']
    >>> try:
    ...     select_figures(figs, figure_id="a/figure-9")
    ... except UsageError as e:
    ...     print(e)
    unknown figure 'a/figure-9' (known: a/figure-1, a/figure-2)
    """
    check_tier(tier)
    chosen = _by_paper(figures, paper)
    if figure_id is not None:
        match = [f for f in chosen if f.id == figure_id]
        if not match:
            raise UsageError(f"unknown figure {figure_id!r} (known: {_known(f.id for f in chosen)})")
        if not in_tier(match[0].tier, tier):
            raise UsageError(f"figure {figure_id!r} is full tier; add --tier full")
        return match
    return [f for f in chosen if in_tier(f.tier, tier)]
