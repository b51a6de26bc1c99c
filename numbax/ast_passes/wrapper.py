"""wrapper: a function that numbax writes around a call, parsed as if the user had written it.

A transformation of a transformation (``vmap(f)`` with its axes, ``grad(grad(f))``)
compiles a one-line function with the user function's parameters whose body
calls an object that specializes its own calls inside compiled code::

    def grad_f(x, *, scale):
        return differentiated(x, scale=scale)

The header of generated code names the user's function and line.
"""
from __future__ import annotations

import textwrap
from typing import Any, Callable, List, Tuple

import gast

from numbax.ast_passes.naming import Namer
from numbax.ast_passes.parse import ParsedFunction, function_of


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
