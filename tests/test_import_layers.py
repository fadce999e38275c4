"""The package's modules import one another one way: no import circle, top-level or inside a function.

The graph is read from the source with ``ast`` (nothing is imported): an edge A -> B for every ``import B``,
``from B import x`` (or ``from B import submodule``: the edge goes to the submodule), relative import, and
``importlib.import_module("B")`` with a literal name, wherever it stands in A — at the top, in a function, in a
``try``. A function-level import therefore cannot hide a circle; it may only delay loading a heavy dependency.
An import of ``a.b.c`` is an edge to ``a.b.c`` alone (not to the packages ``a`` and ``a.b`` whose ``__init__``
runs first), as import-linter and pydeps count it.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "fedtheory"

#: circles that other work removes; each entry is deleted when its circle is gone (the test below says when):
#: - certify/commuting <-> certify/federated_pep (each takes the other's private helpers): removed by the
#:   "onedriver" change of issue 25 — the lead deletes this entry when merging it;
#: - algorithms/local_update <-> methods/simulate (the old LocalUpdate driver delegates its rounds to the
#:   methods-as-data simulator, which reads the driver's ClientSampler and _Federation back): issue 22's
#:   driver unification; not yet assigned.
KNOWN_CIRCLES = []


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name -> source file, for every module of ``package`` (a package is its ``__init__``)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imported_modules(module: str, path: Path, modules: set[str]) -> list[tuple[str, int]]:
    """(dotted name, line) of every module the source of ``module`` imports, at any depth; ``from pkg import x``
    names the submodule pkg.x when ``modules`` has one, else pkg."""
    is_package = path.name == "__init__.py"
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join(here + ([base] if base else []))
            names += [
                (f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base, node.lineno)
                for alias in node.names
            ]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.append((node.args[0].value, node.lineno))
    return names


def import_graph(package: Path) -> dict[str, dict[str, int]]:
    """module -> {imported module of the same package: line of the first such import}."""
    files = module_files(package)
    graph: dict[str, dict[str, int]] = {m: {} for m in files}
    for module, path in files.items():
        for name, line in sorted(imported_modules(module, path, set(files)), key=lambda e: e[1]):
            if name in files and name != module:
                graph[module].setdefault(name, line)
    return graph


@functools.lru_cache(maxsize=1)
def package_graph() -> dict[str, dict[str, int]]:
    """fedtheory's graph, read once for the tests below (parsing every module takes seconds)."""
    return import_graph(PACKAGE)


def circles(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan): every import circle lies in one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _describe(component: set[str], graph: dict[str, dict[str, int]]) -> str:
    return "; ".join(
        f"{a} -> {b} (line {graph[a][b]})" for a in sorted(component) for b in sorted(graph[a]) if b in component
    )


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    """The reader itself: a circle closed only by an import inside a function (and one through a relative import
    and importlib) is found — the graph cannot miss what the package test relies on it to find."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import thing\n")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def thing():\n    from ..a import x\n")
    (pkg / "c.py").write_text("import importlib\nimportlib.import_module('pkg.d')\n")
    (pkg / "d.py").write_text("def f():\n    import pkg.c\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b": 1} and graph["pkg.sub.b"] == {"pkg.a": 2}
    assert graph["pkg.sub"] == {"pkg.sub.b": 1}
    assert sorted(map(sorted, circles(graph))) == [["pkg.a", "pkg.sub.b"], ["pkg.c", "pkg.d"]]
    (pkg / "sub" / "b.py").write_text("def thing():\n    pass\n")
    (pkg / "d.py").write_text("")
    assert circles(import_graph(pkg)) == []


def test_explore_is_layered_one_way():
    """fedtheory.explore: guarantee sources -> advice -> instance and simulation -> command line, no circle."""
    graph = package_graph()
    explore = {
        m: {b: line for b, line in edges.items() if b.startswith("fedtheory.explore.")}
        for m, edges in graph.items()
        if m.startswith("fedtheory.explore.")
    }
    found = circles(explore)
    assert not found, "import circles in fedtheory.explore: " + " | ".join(_describe(c, explore) for c in found)
    # the layers, lowest first: a module imports only from its own layer's earlier entries or lower layers
    layers = [
        ["results", "exact", "families", "certified"],
        ["tuning", "comparison", "frontiers", "oracle"],
        ["instance", "simulation"],
        ["certify", "page"],
    ]
    rank = {f"fedtheory.explore.{name}": (i, j) for i, layer in enumerate(layers) for j, name in enumerate(layer)}
    assert set(rank) == set(explore), f"modules missing from the layer list: {sorted(set(explore) ^ set(rank))}"
    upward = [
        f"{a} -> {b} (line {line})" for a, edges in explore.items() for b, line in edges.items() if rank[b] >= rank[a]
    ]
    assert not upward, "imports against the layers: " + "; ".join(upward)


def test_package_has_no_import_circle_beyond_the_known_ones():
    graph = package_graph()
    found = circles(graph)
    new = [c for c in found if not any(c <= known for known in KNOWN_CIRCLES)]
    assert not new, "import circles: " + " | ".join(_describe(c, graph) for c in new)
    gone = [sorted(known) for known in KNOWN_CIRCLES if not any(known <= c for c in found)]
    assert not gone, f"these circles are gone: delete them from KNOWN_CIRCLES: {gone}"
