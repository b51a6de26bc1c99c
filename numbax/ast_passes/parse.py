"""parse: a Python function -> its gast syntax tree, every node tagged with its Origin.

Expects a plain Python function (or lambda) whose source ``inspect`` can find;
guarantees a ``gast.FunctionDef`` without decorators, whose nodes carry
``anno.Key.ORIGIN`` with absolute file lines and columns.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import linecache
import textwrap
import types
import weakref
from typing import Any, Callable, Dict, Tuple

import gast

from numbax.ast_passes import anno
from numbax.origin import Origin
from numbax.ast_passes.tree_copy import copy_tree
from numbax.errors import NumbaxSourceError, NumbaxSpecializationError


@dataclasses.dataclass
class ParsedFunction:
    """A user function's syntax tree and the namespace its free names live in."""

    fn: Callable
    node: gast.FunctionDef
    filename: str
    globals: Dict[str, Any]
    closure: Dict[str, Any]

    @property
    def name(self) -> str:
        """The function's own name."""
        return self.node.name


# id(code object) -> (weak reference to it, tagged tree, file name): each compilation gets a copy, so
# reading the source and parsing it happen once per function definition and process. Keyed by identity:
# code objects compare equal across files when their bytecode and line numbers do.
_CACHE: Dict[int, Tuple[weakref.ref, gast.FunctionDef, str]] = {}


def _describe(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def function_of(fn: Callable) -> Callable:
    """The function under any layers of ``functools.partial`` (``jit(partial(f, w))`` compiles ``f``).

    Raises:
        NumbaxSpecializationError: the partial binds arguments that the function does not take.
    """
    if isinstance(fn, functools.partial):
        try:
            inspect.signature(fn)
        except (TypeError, ValueError):
            raise NumbaxSpecializationError(
                f"{fn!r} binds arguments that {_describe(fn.func)!r} does not take",
                hint="bind only parameters the function has, at most as many positional ones as it takes.",
            ) from None
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def source_of(fn: Callable) -> tuple:
    """``(source text, first line)`` of ``fn``; raises ``NumbaxSourceError`` when there is none."""
    if not isinstance(fn, types.FunctionType):
        raise NumbaxSourceError(
            f"cannot compile {_describe(fn)!r}: it is a {type(fn).__name__}, not a Python function "
            "with source code",
            hint="numbax compiles functions written in Python; call builtins and NumPy functions "
            "from inside such a function instead.",
        )
    try:  # of the code object: inspect follows a function's ``__wrapped__`` (functools.wraps) to another's source
        lines, first = inspect.getsourcelines(fn.__code__)
    except (OSError, TypeError) as exc:
        raise NumbaxSourceError(
            f"cannot compile {_describe(fn)!r}: its source code is not available ({exc})",
            hint="numbax reads the function's source; define it in a file, a notebook cell or the "
            "interactive prompt rather than with exec() or compile().",
        ) from None
    return "".join(lines), max(first, 1)


def _find_lambda(tree: gast.AST, fn: Callable) -> gast.Lambda:
    lambdas = [n for n in gast.walk(tree) if isinstance(n, gast.Lambda)]
    code = fn.__code__
    wanted = list(code.co_varnames[: code.co_argcount])
    matching = [n for n in lambdas if [a.id for a in n.args.args] == wanted]
    if len(matching) != 1:
        raise NumbaxSourceError(
            f"cannot tell which lambda on line {code.co_firstlineno} is {_describe(fn)!r}",
            hint="give the function a name with def, or put each lambda on its own line.",
        )
    return matching[0]


def _lambda_to_def(lam: gast.Lambda) -> gast.FunctionDef:
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    fdef = gast.FunctionDef(
        name="lambda_", args=lam.args, body=[ret], decorator_list=[], returns=None,
        type_comment=None, type_params=[],
    )
    return gast.copy_location(fdef, lam)


def _tag_origins(tree: gast.AST, filename: str, first: int, indent: int, qualname: str) -> None:
    for node in gast.walk(tree):
        if not hasattr(node, "lineno"):
            continue
        node.lineno += first - 1
        if getattr(node, "end_lineno", None) is not None:
            node.end_lineno += first - 1
        line = linecache.getline(filename, node.lineno)
        anno.setanno(node, anno.Key.ORIGIN,
                     Origin(filename, node.lineno, node.col_offset + indent, line, qualname))


def adopt(fn: types.FunctionType, node: gast.FunctionDef, filename: str) -> None:
    """Parse ``fn``, a function numbax wrote in place of a user's ``def`` or ``lambda`` (one lifted out of a
    compiled function), as ``node``: the user's tree, its origins the user's lines in ``filename``."""
    code = fn.__code__
    key = id(code)
    _CACHE[key] = (weakref.ref(code, lambda _, key=key: _CACHE.pop(key, None)), node, filename)


def adopt_at(fn: types.FunctionType, node: gast.FunctionDef, filename: str, first: int, qualname: str) -> None:
    """Parse ``fn``, a function numbax wrote around a user's, as ``node``, whose line 1 is line ``first`` of
    ``filename`` (the user's ``def``): errors at its lines point there."""
    _tag_origins(node, filename, first, 0, qualname)
    adopt(fn, node, filename)


def parse_function(fn: Callable) -> ParsedFunction:
    """Parse ``fn`` into a ``ParsedFunction`` (a fresh tree each time: passes may change it).

    Raises:
        NumbaxSourceError: ``fn`` is not a Python function or its source is unavailable.
    """
    if not isinstance(fn, types.FunctionType):
        source_of(fn)  # raises the error for a builtin or a callable object
    code = fn.__code__
    cached = _CACHE.get(id(code))
    if cached is None or cached[0]() is not code:
        key = id(code)
        cached = _CACHE[key] = (weakref.ref(code, lambda _, key=key: _CACHE.pop(key, None)),) + _parse(fn)
    _, node, filename = cached
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                continue
    return ParsedFunction(fn=fn, node=copy_tree(node), filename=filename, globals=fn.__globals__, closure=closure)


def _parse(fn: Callable) -> Tuple[gast.FunctionDef, str]:
    source, first = source_of(fn)
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    dedented = textwrap.dedent(source)
    first_text = source.splitlines()[0] if source else ""
    indent = len(first_text) - len(first_text.lstrip())
    try:
        tree = gast.parse(dedented)
    except SyntaxError as exc:
        raise NumbaxSourceError(
            f"cannot parse the source of {_describe(fn)!r} on its own ({exc.msg})",
            hint="define the function with def at the start of its own line.",
        ) from None
    code = fn.__code__  # its names, not those functools.wraps copied onto the function
    _tag_origins(tree, filename, first, indent, code.co_qualname)
    if code.co_name == "<lambda>":
        node = _lambda_to_def(_find_lambda(tree, fn))
    else:
        defs = [n for n in gast.walk(tree) if isinstance(n, gast.FunctionDef) and n.name == code.co_name]
        if not defs:
            raise NumbaxSourceError(f"cannot find the definition of {_describe(fn)!r} in its source")
        node = defs[0]
    node.decorator_list = []
    return node, filename
