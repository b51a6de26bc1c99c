"""``analyses.aliasing.sources``: which names a value may be, or be a view of. Precise about indices, shapes
and fresh arrays; and complete about the runtime: every helper of ``numbax.runtime`` that may hand back one of
its arguments is in ``RUNTIME_PASSTHROUGH`` (found by reading the runtime's source, so that a new one cannot be
missed)."""
import ast
import inspect
import pkgutil
import importlib

import gast
import pytest

import numbax.runtime
from numbax.ast_passes.analyses.aliasing import RUNTIME_PASSTHROUGH, _VIEW_METHODS as VIEW_METHODS, sources


def _sources(text: str):
    return sources(gast.parse(text).body[0].value)


@pytest.mark.parametrize("text, names", [
    ("x", {"x"}),
    ("x[i, j + 1]", {"x"}),
    ("x.shape[0]", set()),
    ("x.T", {"x"}),
    ("x.copy()", set()),
    ("x.reshape(n, m)", {"x"}),
    ("np.reshape(x, s)", {"x"}),
    ("np.flip(x, k)", {"x"}),
    ("np.ascontiguousarray(x)", {"x"}),
    ("np.split(x, n)", {"x"}),
    ("np.empty(x.shape[0] - 1)", set()),
    ("np.tanh(x)", set()),
    ("a if c else b[i]", {"a", "b"}),
    ("(a, b.T)", {"a", "b"}),
    ("rt.unbroadcast(g, x)", {"g"}),
    ("rt.custom_rule(key, out, x)", {"out"}),
    ("rt.reshape(e, s).astype(t)", set()),
    ("rt.tanh(x)", set()),
])
def test_sources(text, names):
    assert _sources(text) == names


def _returned_parameters(fn: ast.FunctionDef):
    params = [a.arg for a in fn.args.args]
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            while isinstance(value, (ast.Subscript, ast.Attribute)) or isinstance(value, ast.Call) and \
                    isinstance(value.func, ast.Attribute) and value.func.attr in VIEW_METHODS:
                value = value.func.value if isinstance(value, ast.Call) else value.value
            if isinstance(value, ast.Name) and value.id in params:
                yield params.index(value.id)


def _runtime_functions():
    for info in pkgutil.walk_packages(numbax.runtime.__path__, "numbax.runtime."):
        module = importlib.import_module(info.name)
        tree = ast.parse(inspect.getsource(module))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                yield info.name, node


def test_every_runtime_helper_that_returns_an_argument_is_known():
    found = {}
    for module, fn in _runtime_functions():
        for position in _returned_parameters(fn):
            found.setdefault(fn.name, set()).add(position)
    exported = set(dir(numbax.runtime))
    missing = {name: positions for name, positions in found.items()
               if name in exported and RUNTIME_PASSTHROUGH.get(name) not in positions}
    assert not missing, f"runtime helpers returning an argument, unknown to aliasing: {missing}"
    assert found, "the scan found no helper at all"
