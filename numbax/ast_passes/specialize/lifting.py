"""A function defined inside compiled code, given to a transformation there: lifted to one numbax can read.

``numbax.grad(lambda p: loss(p, batch))(params)`` inside a jit-compiled step: the
transformation generates its code in a pipeline of its own (``transforms.nesting``),
which cannot see the run-time values the local function closes over (``batch``).
``lift`` writes a Python function with the local function's parameters and, after
them and keyword-only, one parameter per run-time value it reads; numbax parses it
as the user's tree (``parse.adopt``: errors at the user's lines). The transformation
is made of that function and called with those values as keyword arguments, read
at the call (Python's late binding). They are not among the arguments it
differentiates (closed-over values are constants to the transformation, as in JAX);
an enclosing transformation still differentiates through them, because the inner
code is inlined into the outer before the outer is transformed.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import inspect
from typing import Any, Callable, List, Mapping, Set

import gast

from numbax import tree_util
from numbax.ast_passes import anno, parse, wrapper
from numbax.ast_passes.specialize.values import LocalFunction, Partial, contains_dyn, defining_scope
from numbax.ast_passes.tree_copy import copy_tree

_SCOPES = (gast.FunctionDef, gast.Lambda)


@dataclasses.dataclass
class Lifted:
    """A local function lifted: ``function`` takes its parameters and then, by keyword, ``captured``, the
    names of the run-time values it reads from ``env`` (the enclosing function's environment; for a
    ``functools.partial``, the values it bound when it was made)."""

    function: Callable
    captured: List[str]
    env: Mapping[str, Any]
    owner_of: Callable[[str], Any]  # the specializer whose variable each captured name's value is

    def captured_values(self, spec) -> Dict[str, Any]:
        """The captured names' values now (at the call: Python's late binding), as ``spec``'s code reads them."""
        return {name: spec.import_value(self.env[name], self.owner_of(name)) for name in self.captured}


def _free_names(fdef: gast.FunctionDef) -> Set[str]:
    """Names ``fdef`` reads (nested functions included) that its own scope neither takes nor assigns."""
    args = fdef.args
    bound = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    loads: Set[str] = set()

    def visit(node, top: bool) -> None:
        for child in gast.iter_child_nodes(node):
            if isinstance(child, gast.Name):
                if isinstance(child.ctx, gast.Load):
                    loads.add(child.id)
                elif top and isinstance(child.ctx, (gast.Store, gast.Del)):
                    bound.add(child.id)
            visit(child, top and not isinstance(child, _SCOPES))

    for stmt in fdef.body:
        visit(gast.Module(body=[stmt], type_ignores=[]), True)
    return loads - bound


def _refuse_functions(spec, node, name: str, value: Any, label: str) -> None:
    if any(isinstance(leaf, (LocalFunction, Partial)) for leaf in tree_util.tree_leaves(value)) or \
            isinstance(value, (LocalFunction, Partial)):
        spec.fail(node, f"numbax.{label} of a function defined inside a compiled function that reads `{name}`, "
                  "another function defined there",
                  hint=f"define `{name}` at module level, or pass what it computes to the function instead.")


def lift(spec, node, fun: LocalFunction, label: str) -> Lifted:
    """``fun``, defined inside compiled code and given to ``numbax.{label}`` at ``node``, lifted."""
    fdef = fun.node
    args = fdef.args
    if args.vararg is not None or args.kwarg is not None or any(d is not None for d in args.kw_defaults):
        spec.fail(node, f"numbax.{label} of a function defined inside a compiled function with *args, **kwargs "
                  "or keyword-only defaults", hint="give it plain parameters.")
    if any(contains_dyn(d) for d in fun.defaults):
        spec.fail(node, f"numbax.{label} of a function defined inside a compiled function whose defaults are "
                  "run-time values", hint="pass those values as arguments instead.")
    namespace = fun.namespace
    statics = dict(namespace.globals) if namespace is not None else {}
    statics.update(namespace.closure if namespace is not None else {})
    captured = []
    for name in sorted(_free_names(fdef)):
        if name not in fun.env:
            continue
        value = fun.env[name]
        _refuse_functions(spec, node, name, value, label)
        if contains_dyn(value):
            captured.append(name)
        else:
            statics[name] = value
    positional = [a.id for a in args.posonlyargs + args.args]
    optional = len(fun.defaults)
    header = [p + ("=None" if i >= len(positional) - optional else "") for i, p in enumerate(positional)]
    keyword = [a.id for a in args.kwonlyargs] + captured
    header += ["*"] + keyword if keyword else []
    name = fdef.name if fdef.name.isidentifier() else "lambda_"
    origin = anno.getanno(fdef, anno.Key.ORIGIN) or spec.origin(fdef.body[0]) or spec.origin(node)
    filename = f"<numbax: {name} lifted from {origin.filename if origin else '?'}:{fdef.lineno}, {id(fdef):x}>"
    function = wrapper.define(f"def {name}({', '.join(header)}):\n    pass\n", filename, statics)[name]
    function.__defaults__ = tuple(fun.defaults) or None
    tree = copy_tree(fdef)
    tree.name = name
    tree.args.kwonlyargs = tree.args.kwonlyargs + [gast.Name(id=c, ctx=gast.Param(), annotation=None,
                                                             type_comment=None) for c in captured]
    tree.args.kw_defaults = tree.args.kw_defaults + [None] * len(captured)
    parse.adopt(function, tree, origin.filename if origin else filename)
    return Lifted(function, captured, fun.env, functools.partial(defining_scope, fun.owner))


def lift_partial(spec, node, fun: Partial, label: str) -> Lifted:
    """``functools.partial(f, *args, **keywords)`` made inside compiled code with run-time values among what
    it binds, given to ``numbax.{label}``: ``def partial_f(<f's other parameters>, *, <those values>)``
    calling ``f`` (itself lifted where it is a local function), the values it bound captured."""
    inner = lift(spec, node, fun.func, label) if isinstance(fun.func, LocalFunction) else None
    target = inner.function if inner is not None else fun.func
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        spec.fail(node, f"numbax.{label} of a functools.partial of {target!r}, whose parameters numbax cannot "
                  "read", hint="give the transformation a Python function.")
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        spec.fail(node, f"numbax.{label} of a functools.partial of a function with *args or **kwargs",
                  hint="give the function plain parameters.")
    positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
    if len(fun.args) > len(positional):
        spec.fail(node, f"functools.partial binds {len(fun.args)} arguments of a function of "
                  f"{len(positional)} positional parameters")
    taken = positional[:len(fun.args)]
    values = dict(zip(taken, fun.args), **fun.keywords)
    for name, value in values.items():
        _refuse_functions(spec, node, name, value, label)
    captured = [n for n in values if contains_dyn(values[n])]
    statics = {f"{n}_": v for n, v in values.items() if n not in captured}
    rest = [p for p in params if p.name not in values]
    if inner is not None:
        rest = [p for p in rest if p.name not in inner.captured]
        captured += [c for c in inner.captured if c not in captured]
    free = [p.name for p in rest if p.kind is not p.KEYWORD_ONLY]
    keyword = [p.name for p in rest if p.kind is p.KEYWORD_ONLY] + captured
    header = free + (["*"] + keyword if keyword else [])
    passed = [f"{n}={n}" if n in captured else f"{n}={n}_" for n in values] + \
             [f"{n}={n}" for n in free + keyword if n not in values]
    name = f"partial_{getattr(target, '__name__', 'f').replace('<lambda>', 'lambda')}"
    source = f"def {name}({', '.join(header)}):\n    return target_({', '.join(passed)})\n"
    function = wrapper.define(source, f"<numbax: {name} {id(fun):x}>", {"target_": target, **statics})[name]
    function.__defaults__ = tuple(p.default for p in rest if p.kind is not p.KEYWORD_ONLY
                                  and p.default is not p.empty) or None
    env = collections.ChainMap(values, inner.env) if inner is not None else values

    def owner_of(name: str) -> Any:
        return fun.owner if name in values or inner is None else inner.owner_of(name)

    return Lifted(function, captured, env, owner_of)
