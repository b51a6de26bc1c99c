"""module: the text of an exported module, from one specialization's generated code.

The module reads top to bottom as: a docstring saying what it was generated from and how to call it; the
imports (numpy, numba, and what the runtime's helpers import); the helpers, copied from ``numbax.runtime``
(``runtime_copy``); the constants the code closes over; the generated function as ``numbax show`` prints
it, compiled by ``numba.njit`` as numbax compiles it; and the function to call, which checks that each
argument has the dtype and rank of the example it was exported for (other kinds would compile code that
numbax never checked) and rebuilds the output's containers.
"""
from __future__ import annotations

import ast
import base64
import dataclasses
import io
import tokenize
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np

from numbax import tree_util
from numbax.standalone.runtime_copy import ExportError, copy_runtime

_RUNTIME_IMPORT = "from numbax import runtime as rt"
_ARGUMENT = '''

def _argument(value, name, kind, dtype, ndim):
    """``value`` if it is the kind of argument this module was exported for; TypeError otherwise."""
    if kind == "array":
        if isinstance(value, np.ndarray) and value.dtype == dtype and value.ndim == ndim:
            return value
        wanted = f"a {np.dtype(dtype).name} array of rank {ndim}"
    elif isinstance(value, dtype) and not (dtype is int and isinstance(value, bool)):
        return value
    else:
        wanted = f"a Python {dtype.__name__}" if kind == "python" else f"a NumPy {np.dtype(dtype).name} scalar"
    got = f"a {value.dtype} array of rank {value.ndim}" if isinstance(value, np.ndarray) else type(value).__name__
    raise TypeError(f"argument {name} must be {wanted}, as the example this module was exported for; got {got}")
'''
_STATIC = '''

def _static(value, name, example):
    """Refuses a static argument other than the example's value, which the code was generated for."""
    if type(value) is not type(example) or value != example:
        raise TypeError(f"argument {name} is static: this module was exported for {name}={example!r}, got {value!r}")
'''
_STRUCTURE = '''

def _structure(value, name, example):
    """Refuses an argument whose containers differ from the example's (``0`` in ``example``: a leaf)."""
    if isinstance(example, (tuple, list, dict)):
        same = type(value) is type(example) and len(value) == len(example) and (
            not isinstance(example, dict) or sorted(value, key=repr) == sorted(example, key=repr))
        if same:
            for key in (example if isinstance(example, dict) else range(len(example))):
                _structure(value[key], f"{name}[{key!r}]", example[key])
            return
    elif example is None:
        if value is None:
            return
    elif not isinstance(value, (tuple, list, dict)) and value is not None:
        return
    raise TypeError(f"argument {name} must have the structure {example!r} (0: an array or number), as the example "
                    f"this module was exported for; got a {type(value).__name__}")
'''


class _Code(str):
    """An expression, written as it stands (a leaf of a container being written out)."""


@dataclasses.dataclass
class Parameter:
    """One parameter of the exported function: its example value, whether it is static, and whether the
    example call left it to its default (then the exported function has that default too)."""

    name: str
    value: Any
    static: bool
    defaulted: bool = False


def write(generated, parameters: Sequence[Parameter], arrange: Callable, title: str) -> str:
    """The exported module's text, for the ``pipeline.Generated`` specialization ``generated`` of a function
    with these ``parameters`` (their example values); ``arrange``: the transformation's ``export_output``;
    ``title``: what exported it, for the docstring."""
    tree = ast.parse(generated.source)
    docstring, imports, functions = _split(tree)
    entry = generated.name
    dynamic = [p for p in parameters if not p.static]
    leaves = tree_util.tree_flatten_with_path([p.value for p in dynamic])[0]
    defaults = {p.name: _default(p) for p in parameters if p.defaulted}
    constants = {f"_{name}": value for name, value in generated.constants.items()}
    constants.update({f"_default_{p.name}": p.value for p in parameters
                      if defaults.get(p.name) == f"_default_{p.name}"})
    reserved = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {f.name for f in functions} | {
        "_argument", "_static", "_structure", entry, "_" + entry} | set(constants)
    own = imports + ["import numba", "import numpy as np"] + (
        ["import base64"] if any(not _is_number(v) for v in constants.values()) else [])
    runtime = copy_runtime(_runtime_calls(tree), reserved, {_bound(line): line for line in own})
    lines = [_docstring(docstring, title, entry, parameters, leaves)]
    lines += _imports(runtime.imports)
    lines.append(f"\n__all__ = [{entry!r}]")
    for module, statements in runtime.body:
        lines.append(f"\n\n# ---- copied from {module}\n")
        lines.append("\n\n\n".join(ast.unparse(s) for s in statements))
    lines.append("\n\n# ---- the exported function")
    if leaves:
        lines.append(_ARGUMENT.rstrip("\n"))
    if any(p.static for p in parameters):
        lines.append(_STATIC.rstrip("\n"))
    if any(not tree_util.treedef_is_leaf(tree_util.tree_structure(p.value)) for p in dynamic):
        lines.append(_STRUCTURE.rstrip("\n"))
    if constants:
        lines.append("\n")
    lines += [f"{name} = {_literal(value)}" for name, value in constants.items()]
    lines.append("\n\n" + _generated_code(generated.source, tree, functions, entry, runtime.names))
    lines.append("\n\n" + _entry(entry, parameters, defaults, leaves, generated, arrange))
    return "\n".join(lines) + "\n"


def _default(parameter: Parameter) -> str:
    """The default the exported function gives a parameter the example call left to its default."""
    value = parameter.value
    if parameter.static:
        return _static_literal(parameter)
    if value is None or _is_number(value):
        return repr(value)
    if isinstance(value, np.ndarray):
        return f"_default_{parameter.name}"
    raise ExportError(f"parameter {parameter.name} defaults to a {type(value).__name__}, which export cannot write",
                      hint="pass the argument in the example call.")


def _static_literal(parameter: Parameter) -> str:
    text = repr(parameter.value)
    try:
        same = ast.literal_eval(text) == parameter.value and type(ast.literal_eval(text)) is type(parameter.value)
    except (ValueError, SyntaxError, TypeError):
        same = False
    if not same:
        raise ExportError(f"static argument {parameter.name} is a {type(parameter.value).__name__}; the exported "
                          "function checks each static argument against the example's value, which needs a literal",
                          hint="export with static arguments that are numbers, strings, booleans, None or tuples "
                               "of them, or close over the value instead.")
    return text


def _generated_code(source: str, tree: ast.Module, functions, entry: str, names: Dict[str, str]) -> str:
    """The generated functions' text, comments kept, ``rt.<name>`` calling the copies, the entry compiled
    under its own name with an underscore."""
    lines = source.splitlines()
    for row, col, name in sorted(_runtime_tokens(source), reverse=True):
        text = lines[row - 1]
        lines[row - 1] = text[:col] + names[name] + text[col + len("rt.") + len(name):]
    kept = []
    for function in functions:
        first = min([function.lineno] + [d.lineno for d in function.decorator_list])
        body = lines[first - 1:function.end_lineno]
        if function.name == entry:
            at = function.lineno - first
            body[at] = body[at].replace(f"def {entry}(", f"def _{entry}(", 1)
            body.insert(at, '@numba.njit(error_model="numpy")')
        kept.append("\n".join(body))
    return "\n\n\n".join(kept)


def _runtime_tokens(source: str):
    """``(row, column, name)`` of each ``rt.<name>`` in code (not in comments or strings)."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
    for first, dot, name in zip(tokens, tokens[1:], tokens[2:]):
        if first.type == tokenize.NAME and first.string == "rt" and dot.string == "." and name.type == tokenize.NAME:
            if dot.start == first.end and name.start == dot.end:
                yield first.start[0], first.start[1], name.string


def _split(tree: ast.Module):
    docstring = ast.get_docstring(tree) or ""
    imports, functions = [], []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            text = ast.unparse(stmt)
            if text == _RUNTIME_IMPORT:
                continue
            if (getattr(stmt, "module", None) or "").startswith("numbax") or any(
                    a.name.startswith("numbax") for a in stmt.names):
                raise ExportError(f"the generated code imports numbax ({text}), which an exported module cannot",
                                  hint="this is a bug in numbax.")
            imports.append(text)
        elif isinstance(stmt, ast.FunctionDef):
            functions.append(stmt)
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            raise ExportError(f"the generated code holds a statement export cannot carry: {ast.unparse(stmt)}",
                              hint="this is a bug in numbax.")
    return docstring, imports, functions


def _runtime_calls(tree: ast.Module) -> List[str]:
    return sorted({n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                   and isinstance(n.value, ast.Name) and n.value.id == "rt"})


def _bound(line: str) -> str:
    """The name an import statement of one name binds."""
    alias = ast.parse(line).body[0].names[0]
    return alias.asname or alias.name.split(".")[0]


def _imports(lines: List[str]) -> List[str]:
    future = [line for line in lines if line.startswith("from __future__")]
    return future + sorted(set(lines) - set(future))


def _docstring(original: str, title: str, entry: str, parameters, leaves) -> str:
    kinds = ", ".join(_describe(path, leaf, parameters) for path, leaf in leaves)
    statics = ", ".join(f"{p.name}={p.value!r}" for p in parameters if p.static)
    text = (f"{original.rstrip('.')}, exported by {title}.\n\n"
            f"Needs numpy and numba only (and SciPy where Numba's linear algebra needs it). Call\n"
            f"{entry}({', '.join(p.name for p in parameters)}) with arguments of the example's kinds: "
            f"{kinds or 'none'}{'; static: ' + statics if statics else ''}.\n"
            f"Other dtypes, ranks, containers or static values raise TypeError.")
    return '"""' + text.replace('"""', '\\"\\"\\"') + '\n"""'


def _describe(path, leaf, parameters) -> str:
    kind, dtype, ndim = _kind(leaf)
    shape = f"[{', '.join(map(str, np.shape(leaf)))}]" if kind == "array" else ""
    name = _leaf_expression(path, [p for p in parameters if not p.static])
    return f"{name}: {np.dtype(dtype).name}{shape}" if kind != "python" else f"{name}: {dtype.__name__}"


def _kind(leaf) -> Tuple[str, Any, int]:
    if isinstance(leaf, np.ndarray):
        return "array", leaf.dtype.type, leaf.ndim
    if isinstance(leaf, np.generic):
        return "numpy", type(leaf), 0
    if isinstance(leaf, (bool, int, float, complex)):
        return "python", next(t for t in (bool, int, float, complex) if isinstance(leaf, t)), 0
    raise ExportError(f"an argument is a {type(leaf).__name__}, which export cannot check",
                      hint="export with arrays or numbers as arguments.")


def _leaf_expression(path, dynamic) -> str:
    first, rest = path[0], path[1:]
    text = dynamic[first.idx].name
    for key in rest:
        if isinstance(key, tree_util.SequenceKey):
            text += f"[{key.idx}]"
        elif isinstance(key, tree_util.DictKey):
            text += f"[{key.key!r}]"
        else:
            raise ExportError(f"argument {dynamic[first.idx].name} holds a container export cannot check "
                              f"(its leaf {text}{key})", hint="export with tuples, lists, dicts and None of arrays "
                                                              "and numbers as arguments.")
    return text


def _entry(entry: str, parameters, defaults: Dict[str, str], leaves, generated, arrange) -> str:
    dynamic = [p for p in parameters if not p.static]
    checks = [f"    _static({p.name}, {p.name!r}, {_static_literal(p)})" for p in parameters if p.static]
    checks += [f"    _structure({p.name}, {p.name!r}, {_skeleton(p.value)!r})" for p in dynamic
               if not tree_util.treedef_is_leaf(tree_util.tree_structure(p.value))]
    arguments = []
    for number, (path, leaf) in enumerate(leaves):
        kind, dtype, ndim = _kind(leaf)
        name = _leaf_expression(path, dynamic)
        spelled = dtype.__name__ if kind == "python" else f"np.{np.dtype(dtype).name}" if kind == "array" \
            else f"np.{dtype.__name__}"
        checks.append(f"    leaf{number} = _argument({name}, {name!r}, {kind!r}, {spelled}, {ndim})")
        arguments.append(f"leaf{number}")
    arguments += [f"_{name}" for name in generated.constants]
    call = f"_{entry}({', '.join(arguments)})"
    result = _rebuild(generated.returns, arrange)
    body = checks + ([f"    return {call}"] if result is None else [f"    out = {call}", f"    return {result}"])
    signature = ", ".join(p.name + (f"={defaults[p.name]}" if p.name in defaults else "") for p in parameters)
    doc = f'    """{entry}({", ".join(p.name for p in parameters)}): the exported function, compiled on its first call."""'
    return "\n".join([f"def {entry}({signature}):", doc] + body)


def _skeleton(value):
    """``value``'s containers with ``0`` for each leaf (what ``_structure`` checks an argument against)."""
    if value is None or type(value) in (tuple, list):
        return None if value is None else type(value)(_skeleton(v) for v in value)
    if type(value) is dict:
        return {k: _skeleton(v) for k, v in value.items()}
    if tree_util.treedef_is_leaf(tree_util.tree_structure(value)):
        return 0
    raise ExportError(f"an argument holds a {type(value).__name__}, a container export cannot check",
                      hint="export with tuples, lists, dicts and None of arrays and numbers as arguments.")


def _rebuild(returns, arrange) -> Any:
    """The expression that rebuilds the output from the compiled function's ``out``; None: ``out`` itself."""
    treedef = returns.treedef if returns else tree_util.tree_structure(None)
    n = treedef.num_leaves
    codes = [_Code("out")] if n == 1 else [_Code(f"out[{i}]") for i in range(n)]
    written = _written(arrange(tree_util.tree_unflatten(treedef, codes), returns))
    return None if written == "out" else written


def _written(value) -> str:
    if isinstance(value, _Code):
        return str(value)
    if value is None:
        return "None"
    if type(value) is tuple:
        return f"({_written(value[0])},)" if len(value) == 1 else "(" + ", ".join(_written(v) for v in value) + ")"
    if type(value) is list:
        return "[" + ", ".join(_written(v) for v in value) + "]"
    if type(value) is dict:
        return "{" + ", ".join(f"{k!r}: {_written(v)}" for k, v in value.items()) + "}"
    raise ExportError(f"the output holds a {type(value).__name__}, which export cannot rebuild",
                      hint="return tuples, lists, dicts or None of arrays.")


def _is_number(value) -> bool:
    """A Python number (written as its ``repr``), not a NumPy scalar or array (written from its bytes)."""
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def _literal(value) -> str:
    """A constant as Python source that rebuilds it exactly."""
    if _is_number(value):
        return repr(value)
    array = np.asarray(value)
    if array.dtype.kind not in "biufc":
        raise ExportError(f"the code closes over a {type(value).__name__}, which export cannot write",
                          hint="close over arrays or numbers only.")
    data = base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()
    built = f"np.frombuffer(base64.b64decode({data!r}), dtype={array.dtype.str!r}).reshape({array.shape!r}).copy()"
    return built if isinstance(value, np.ndarray) else f"np.{array.dtype.name}({built}[()])"
