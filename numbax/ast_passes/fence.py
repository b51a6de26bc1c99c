"""fence: reject what numbax does not compile, before any pass runs.

Expects the parsed user function; guarantees nothing about the tree (it is left
untouched) but raises ``NumbaxSyntaxError`` at the first unsupported construct,
naming it, with the user's file:line, a caret, and what to write instead.

    >>> src = "def f(x):\\n    try:\\n        return x\\n    except ValueError:\\n        return 0.0"
    >>> check(gast.parse(src).body[0])
    Traceback (most recent call last):
    numbax.errors.NumbaxSyntaxError: `try` statements are not supported in compiled functions
    Instead: check conditions with `if` instead of catching exceptions.
"""
from __future__ import annotations

import gast

from numbax.ast_passes import anno
from numbax.errors import NumbaxSyntaxError

# construct -> (what it is called, what to do instead)
UNSUPPORTED = {
    gast.Try: ("`try` statements", "check conditions with `if` instead of catching exceptions."),
    gast.With: ("`with` statements", "move the context manager outside the compiled function."),
    gast.AsyncWith: ("`async with` statements", "compiled functions are synchronous."),
    gast.AsyncFunctionDef: ("`async def`", "compiled functions are synchronous."),
    gast.AsyncFor: ("`async for` loops", "compiled functions are synchronous."),
    gast.Await: ("`await` expressions", "compiled functions are synchronous."),
    gast.Yield: ("`yield` (generators)", "return an array or a tuple instead of yielding values."),
    gast.YieldFrom: ("`yield from` (generators)", "return an array or a tuple instead."),
    gast.Global: ("`global` declarations", "pass the value in as an argument and return the new value."),
    gast.Nonlocal: ("`nonlocal` declarations", "pass the value in as an argument and return the new value."),
    gast.ClassDef: ("class definitions", "define the class outside the compiled function."),
    gast.Delete: ("`del` statements", "drop the statement; names go out of scope at return."),
    gast.Import: ("`import` statements", "import modules at the top of the file."),
    gast.ImportFrom: ("`from ... import` statements", "import names at the top of the file."),
    gast.Match: ("`match` statements", "use `if`/`elif` chains."),
    gast.NamedExpr: ("assignment expressions (`:=`)", "assign on a line of its own."),
    gast.Set: ("set literals", "use a tuple or an array."),
    gast.SetComp: ("set comprehensions", "use a list comprehension or an array."),
    gast.DictComp: ("dict comprehensions", "build the dict with a literal or a loop over a list."),
    gast.Starred: ("starred expressions (`*args`) outside a call's arguments and a name of an assignment target",
                   "unpack with `*` only in a call (`f(*xs)`); index the tuple otherwise."),
}


def _fail(node: gast.AST, what: str, hint: str) -> None:
    raise NumbaxSyntaxError(f"{what} are not supported in compiled functions",
                            anno.getanno(node, anno.Key.ORIGIN), hint=f"Instead: {hint}")


def check(fn: gast.FunctionDef) -> gast.FunctionDef:
    """Raise ``NumbaxSyntaxError`` at the first construct outside the compiled subset; return ``fn``."""
    unpacked = {id(a) for node in gast.walk(fn) if isinstance(node, gast.Call) for a in node.args
                if isinstance(a, gast.Starred)}
    # ``head, *rest = xs``: one starred name in an assignment's tuple target (specialize splits a known container)
    unpacked |= {id(e) for node in gast.walk(fn) if isinstance(node, gast.Assign) for t in node.targets
                 if isinstance(t, (gast.Tuple, gast.List)) for e in t.elts
                 if isinstance(e, gast.Starred) and isinstance(e.value, gast.Name)}
    for node in gast.walk(fn):
        entry = UNSUPPORTED.get(type(node))
        if entry is not None and id(node) not in unpacked:  # ``f(*xs)``: specialize unpacks a known container
            _fail(node, *entry)
        if isinstance(node, gast.FunctionDef) and node is not fn:
            if node.decorator_list:
                _fail(node, "decorated inner functions", "define the decorated function outside.")
    return fn
