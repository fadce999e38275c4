"""No import circle inside fedtheory/certify: every import of one of its modules by another, at module level or
inside a function (a lazy import hides a circle from Python but not from a reader), follows one direction."""
from __future__ import annotations

import ast
from pathlib import Path

import fedtheory.certify

PACKAGE = "fedtheory.certify"
ROOT = Path(fedtheory.certify.__file__).parent


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The fedtheory.certify modules that the file at ``path`` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in modules:
                found.add(node.module)
            elif node.module == PACKAGE:                         # from fedtheory.certify import probe
                found |= {f"{PACKAGE}.{a.name}" for a in node.names if f"{PACKAGE}.{a.name}" in modules}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the package's modules it imports (the package's __init__ left out: it only re-exports)."""
    files = {f"{PACKAGE}.{p.stem}": p for p in sorted(root.glob("*.py")) if p.stem != "__init__"}
    return {name: _imports(path, set(files)) - {name} for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first repeated at the end), or None.

    >>> find_cycle({"a": {"b"}, "b": {"a"}})
    ['a', 'b', 'a']
    >>> find_cycle({"a": {"b"}, "b": set()}) is None
    True
    """
    state: dict[str, int] = {}                                  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def test_find_cycle_fires_on_a_circle():
    # the negative control: the old circle, commuting <-> federated_pep, is found
    graph = {"commuting": {"federated_pep"}, "federated_pep": {"commuting", "pep"}, "pep": set()}
    assert find_cycle(graph) == ["commuting", "federated_pep", "commuting"]


def test_graph_sees_lazy_imports(tmp_path):
    (tmp_path / "low.py").write_text("X = 1\n")
    (tmp_path / "high.py").write_text("def f():\n    from fedtheory.certify.low import X\n    return X\n")
    assert import_graph(tmp_path) == {f"{PACKAGE}.high": {f"{PACKAGE}.low"}, f"{PACKAGE}.low": set()}


def test_no_import_circle_in_certify():
    graph = import_graph()
    assert f"{PACKAGE}.federated_pep" in graph and f"{PACKAGE}.commuting" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import circle in fedtheory/certify: " + " -> ".join(cycle)


def test_commuting_and_federated_pep_share_a_lower_module():
    graph = import_graph()
    assert f"{PACKAGE}.federated_pep" not in graph[f"{PACKAGE}.commuting"]
    assert f"{PACKAGE}.certificate" in graph[f"{PACKAGE}.commuting"]
    assert f"{PACKAGE}.certificate" in graph[f"{PACKAGE}.federated_pep"]
