"""No import cycles between numbax's packages, and a runtime that imports no compiler.

The graph is read from the source, not from ``sys.modules``: every module of
numbax is parsed, and each ``import`` and ``from ... import`` in it counts,
at module level or inside a function (a function-level import defers a
dependency, it does not remove one), as do the modules that
``numbax/__init__.py`` imports lazily by name. A node is a subpackage of
numbax (``numbax.ast_passes``, ``numbax.transforms``, ``numbax.runtime``,
``numbax.backends``, ``numbax.random``, ``numbax.lax``, ...), a top-level
module (``numbax.api``, ``numbax.errors``, ...), or ``numbax`` itself (its
``__init__``). A cycle is reported with a path around it and the importing
lines of each of its edges.
"""
import ast
import collections
import os
import textwrap
from typing import Dict, List, Set, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

Edges = Dict[Tuple[str, str], List[str]]

# What the runtime may import of numbax besides itself: its error types, which import nothing else of numbax.
RUNTIME_MAY_IMPORT = {"numbax.errors", "numbax.error_text", "numbax.origin"}


def modules(root: str, package: str = "numbax") -> Dict[str, str]:
    """``{module name: file}`` for every ``.py`` file of ``package`` under ``root``."""
    found = {}
    for folder, subfolders, names in os.walk(os.path.join(root, package)):
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        for name in names:
            if name.endswith(".py"):
                parts = os.path.relpath(os.path.join(folder, name), root)[:-3].split(os.sep)
                found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = os.path.join(folder, name)
    return found


def unit(module: str, known: Dict[str, str]) -> str:
    """The node ``module`` belongs to: its subpackage of numbax, else the top-level module, else the root."""
    parts = module.split(".")
    top = ".".join(parts[:2])
    if len(parts) > 2 or known.get(top, "").endswith("__init__.py"):
        return top
    return module


def imported(module: str, path: str, known: Dict[str, str]):
    """``(imported module, line)`` for each import in ``module``'s file, wherever it stands in the file."""
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(head + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        elif path.endswith("__init__.py") and isinstance(node, ast.Constant) and node.value in known:
            names = [node.value]  # a module named for ``importlib.import_module`` (numbax's lazy names)
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                yield name, node.lineno


def package_edges(root: str, package: str = "numbax") -> Edges:
    """``{(importer, imported): ["file:line", ...]}`` between the nodes of ``package``."""
    known = modules(root, package)
    edges: Edges = collections.defaultdict(list)
    for module, path in sorted(known.items()):
        for target, line in imported(module, path, known):
            a, b = unit(module, known), unit(target, known)
            where = f"{os.path.relpath(path, root)}:{line}"
            if a != b and where not in edges[(a, b)]:
                edges[(a, b)].append(where)
    return dict(edges)


def cycles(edges: Edges) -> List[Set[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    graph: Dict[str, Set[str]] = collections.defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    found: List[Set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set(stack[stack.index(v):])
            del stack[stack.index(v):]
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def reachable(start: str, edges: Edges) -> Set[str]:
    """The nodes ``start`` imports, directly or through others."""
    reached, todo = set(), [start]
    while todo:
        v = todo.pop()
        for a, b in edges:
            if a == v and b not in reached:
                reached.add(b)
                todo.append(b)
    return reached


def describe(component: Set[str], edges: Edges) -> str:
    """A shortest path around ``component`` from its first node, and the importing lines of each edge in it."""
    start = min(component)
    paths = {start: [start]}
    todo = collections.deque([start])
    while todo:
        v = todo.popleft()
        for (a, b) in sorted(edges):
            if a == v and b in component:
                if b == start:
                    path = paths[v] + [start]
                    lines = [f"    {x} -> {y}: {', '.join(edges[(x, y)])}" for x, y in zip(path, path[1:])]
                    return " -> ".join(path) + "\n" + "\n".join(lines)
                if b not in paths:
                    paths[b] = paths[v] + [b]
                    todo.append(b)
    raise AssertionError(f"{sorted(component)} is no cycle")


def _report(components: List[Set[str]], edges: Edges) -> str:
    return "\n".join(describe(c, edges) for c in components)


EDGES = package_edges(ROOT)


def test_no_import_cycle_between_packages():
    found = cycles(EDGES)
    assert not found, "import cycles between numbax's packages:\n" + _report(found, EDGES)


def test_the_runtime_imports_no_compiler():
    reached = reachable("numbax.runtime", EDGES) - {"numbax.runtime"}
    assert reached <= RUNTIME_MAY_IMPORT, "numbax.runtime imports " + ", ".join(
        f"{b} ({', '.join(where)})" for (a, b), where in sorted(EDGES.items())
        if a in reached | {"numbax.runtime"} and b not in RUNTIME_MAY_IMPORT)


def test_the_analyses_and_passes_import_no_transform():
    assert ("numbax.ast_passes", "numbax.transforms") not in EDGES, EDGES[("numbax.ast_passes", "numbax.transforms")]


def test_a_cycle_through_a_function_level_import_is_found_and_named(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/top.py": "from pkg.low import helper\n",
        "pkg/low/__init__.py": "",
        "pkg/low/helper.py": "import os\n\n\ndef f():\n    from pkg import top\n    return top\n",
        "pkg/other/__init__.py": "from . import inner\n",
        "pkg/other/inner.py": "from ..low.helper import f\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    edges = package_edges(str(tmp_path), "pkg")
    assert edges == {("pkg.top", "pkg.low"): [os.path.join("pkg", "top.py") + ":1"],
                     ("pkg.low", "pkg.top"): [os.path.join("pkg", "low", "helper.py") + ":5"],
                     ("pkg.other", "pkg.low"): [os.path.join("pkg", "other", "inner.py") + ":1"]}
    found = cycles(edges)
    assert found == [{"pkg.low", "pkg.top"}]
    assert describe(found[0], edges).splitlines() == [
        "pkg.low -> pkg.top -> pkg.low",
        f"    pkg.low -> pkg.top: {os.path.join('pkg', 'low', 'helper.py')}:5",
        f"    pkg.top -> pkg.low: {os.path.join('pkg', 'top.py')}:1"]
