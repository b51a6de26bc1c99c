"""wrapper: a function that numbax writes around a call, parsed as if the user had written it.

A transformation of a transformation (``vmap(f)`` with its axes, ``grad(grad(f))``)
compiles a one-line function with the user function's parameters whose body
calls an object that specializes its own calls inside compiled code::

    def grad_f(x, *, scale):
        return differentiated(x, scale=scale)

The header of generated code names the user's function and line. A NumPy function
given to a transformation itself (``grad(np.var)``, as JAX users write
``grad(jnp.var)``) gets a Python function of its required parameters that
calls it (``around_primitive``), whose source numbax reads like the user's. A
transformation of a function with ``*args`` transforms, for each count of arguments
at the call, a function of that many named parameters that calls it (``fixed_arity``).
"""
from __future__ import annotations

import collections
import functools
import inspect
import keyword
import linecache
import textwrap
import types
from typing import Any, Callable, Dict, List, Tuple

import gast
import numpy as np

from numbax.ast_passes.naming import Namer
from numbax.ast_passes.parse import ParsedFunction, adopt_at, function_of
from numbax.errors import NumbaxSyntaxError
from numbax.origin import Origin
from numbax.transform_cache import BOUND


def by_kind(params, kinds) -> Tuple[List[str], List[str]]:
    """The parameters passed by position, and the keyword-only ones (``kinds``: ``inspect.Parameter`` kinds)."""
    positional = [p for p, kind in zip(params, kinds) if kind is not kind.KEYWORD_ONLY]
    return positional, [p for p, kind in zip(params, kinds) if kind is kind.KEYWORD_ONLY]


def calling(fun: Callable, prefix: str, params, kinds, callee: str, target: Any) -> ParsedFunction:
    """``def <prefix>_<name>(params): return <callee>(params)``, ``callee`` bound to ``target``.

    ``params`` are the parameter names in order and ``kinds`` their ``inspect.Parameter`` kinds: keyword-only
    parameters are passed by name, every other one by position. ``callee`` is made distinct from them.
    """
    user = function_of(fun)
    positional, keyword = by_kind(params, kinds)
    callee = Namer(params).new(callee)
    header = ", ".join(positional + (["*"] + keyword if keyword else []))
    arguments = ", ".join(positional + [f"{k}={k}" for k in keyword])
    node = gast.parse(textwrap.dedent(f"""\
        def {prefix}_{user.__name__.replace("<lambda>", "lambda_")}({header}):
            return {callee}({arguments})""")).body[0]
    node.lineno = user.__code__.co_firstlineno  # the header names the user's function and line
    return ParsedFunction(fn=user, node=node, filename=user.__code__.co_filename, globals={callee: target},
                          closure={})


_AROUND: Dict[int, Tuple[Callable, Callable]] = {}  # id(NumPy function) -> (it, its Python function)


def _required(fn: Callable) -> List[str]:
    """The parameters of a NumPy function (or ufunc) that a call must pass, by position."""
    if isinstance(fn, np.ufunc):
        return [f"x{i + 1}" for i in range(fn.nin)] if fn.nin > 1 else ["x"]
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.default is p.empty and
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def around_primitive(fn: Callable) -> Callable:
    """``fn``, or for a NumPy function or ufunc ``def var(a): return var_(a)`` (``var_`` bound to ``np.var``),
    with its source in ``linecache`` so that numbax reads it as the user's (the same function each time); a
    compile-time callable of numbax's (a ``vjp`` pullback) gets such a function too, and a bound method of the
    user's (``jit(model.apply)``) is its function with the object bound, a compile-time value (JAX traces
    ``self`` as part of the callable: its attributes are read when compiling)."""
    if _compile_time_callable(fn):
        return _around_compile_time(fn)
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        return functools.partial(fn.__func__, fn.__self__)  # its object is part of the callable, as in JAX
    if isinstance(fn, types.FunctionType) or not (isinstance(fn, np.ufunc) or
                                                   getattr(fn, "__module__", "").startswith("numpy")):
        return fn
    params = _required(fn)
    name = getattr(fn, "__name__", "")
    if not params or not name.isidentifier():
        return fn
    cached = _AROUND.get(id(fn))
    if cached is not None and cached[0] is fn:
        return cached[1]
    _AROUND[id(fn)] = (fn, caller(name, params, fn, f"<numbax: around numpy.{name}>"))
    return _AROUND[id(fn)][1]


def caller(name: str, params: List[str], target: Any, filename: str) -> Callable:
    """``def name(params): return name_(params)``, ``name_`` bound to ``target``, its source in ``linecache``
    under ``filename`` so that numbax reads it as the user's."""
    header = ", ".join(params)
    return define(f"def {name}({header}):\n    return {name}_({header})\n", filename, {f"{name}_": target})[name]


def define(source: str, filename: str, namespace: Dict[str, Any]) -> Dict[str, Any]:
    """Run ``source`` (functions numbax writes) in ``namespace``, its text in ``linecache`` under ``filename``
    so that numbax reads the functions like the user's; the namespace."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def _compile_time_callable(fn: Any) -> bool:
    """A callable object of numbax's that specializes its own calls (a ``vjp`` pullback, a ``custom_vjp``
    function), or a ``functools.partial`` of one (``partial(numbax.jvp, f)``), not a function."""
    if isinstance(fn, functools.partial):
        return hasattr(fn.func, "_numbax_specialize") and not hasattr(fn.func, "_numbax_fun")
    return hasattr(fn, "_numbax_specialize") and not isinstance(fn, (types.FunctionType, type)) and \
        not hasattr(fn, "_numbax_fun")


def _around_compile_time(fn: Any) -> Callable:
    """``def vjp_fun(cotangent): return vjp_fun_(cotangent)`` around a compile-time callable (``vmap`` of a
    pullback, as in JAX's ``vmap(vjp_fun)``; ``jvp_of_f(primals, tangents)`` around ``partial(jvp, f)``): its
    parameters are those of its call that have no default."""
    params = [p.name for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    if isinstance(fn, functools.partial):
        bound = fn.args[0] if fn.args else None
        name = f"{getattr(fn.func, '__name__', 'call')}_of_{getattr(bound, '__name__', 'f')}"
    else:
        name = getattr(fn, "__name__", None)
    name = name.replace("<lambda>", "lambda") if isinstance(name, str) else None
    if not isinstance(name, str) or not name.isidentifier():
        name = type(fn).__name__.strip("_").lower() or "call"
    return caller(name, params, fn, f"<numbax: around {type(fn).__name__} {id(fn):x}>")


# (id(target), count, keywords) -> (target, its function), the most recent ``transform_cache.BOUND`` of them: a
# transformation keyed by the function (``jvp``'s) finds its own again, and lambdas made in a loop do not pile up
_FIXED: "collections.OrderedDict[tuple, Tuple[Any, Callable]]" = collections.OrderedDict()


def fixed_arity(target: Any, user: Callable, count: int, keywords: Tuple[str, ...]) -> Callable:
    """``def f(a, rest_0, rest_1, *, scale): return f_(a, rest_0, rest_1, scale=scale)``: a function of named
    parameters for a call of ``target`` (``user``, a function with ``*args`` or ``**kwargs``, or a
    transformation of it) with ``count`` positional arguments and these ``keywords``. A transformation of it
    indexes the positional arguments as passed, as JAX's do. It is parsed as written at ``user``'s ``def`` line
    (where its errors point), and made once per ``target``, count and keywords."""
    key = (id(target), count, keywords)
    cached = _FIXED.get(key)
    if cached is not None and cached[0] is target:
        _FIXED.move_to_end(key)
        return cached[1]
    code = user.__code__
    unnamed = [k for k in keywords if not k.isidentifier() or keyword.iskeyword(k)]
    if unnamed:
        raise NumbaxSyntaxError(f"the keyword argument {unnamed[0]!r}, which is not a Python name, passed to a "
                                f"transformation of {code.co_qualname}",
                                Origin.of_code(code),
                                hint="pass it inside a dict, or by position.")
    parameters = inspect.signature(user).parameters.values()
    named = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), "args")
    namer = Namer(keywords)
    positional = [namer.new(named[i] if i < len(named) else f"{star}_{i - len(named)}") for i in range(count)]
    name = code.co_name.replace("<lambda>", "lambda_")
    callee = f"{name}_"
    while callee in namer.used:
        callee += "_"
    header = ", ".join(positional + (["*"] + list(keywords) if keywords else []))
    arguments = ", ".join(positional + [f"{k}={k}" for k in keywords])
    # a closure over ``target``: two such functions of one ``user`` (hessian's, around jacfwd and around jacrev)
    # have equal code, and only their cells tell them apart (``resolve.function_key``)
    source = f"def around({callee}):\n    def {name}({header}):\n        return {callee}({arguments})\n" \
             f"    return {name}\n"
    namespace: Dict[str, Any] = {}
    exec(compile(source, code.co_filename, "exec"), namespace)
    fn = namespace["around"](target)
    fn.__code__ = fn.__code__.replace(co_firstlineno=code.co_firstlineno, co_qualname=code.co_qualname)
    fn.__qualname__, fn.__module__ = user.__qualname__, user.__module__
    node = gast.parse(source).body[0].body[0]
    for part in gast.walk(node):
        if hasattr(part, "lineno"):
            part.lineno = part.end_lineno = 1
    adopt_at(fn, node, code.co_filename, code.co_firstlineno, code.co_qualname)
    _FIXED[key] = (target, fn)
    if len(_FIXED) > BOUND:
        _FIXED.popitem(last=False)
    return fn
