"""Small node builders and name queries shared by the reverse-mode passes."""
from __future__ import annotations

from typing import Set, Union

import gast


def name(identifier: str, store: bool = False) -> gast.Name:
    """A ``gast.Name`` in load (or store) context."""
    return gast.Name(id=identifier, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def assign(target: Union[str, gast.expr], value: gast.expr) -> gast.Assign:
    """``target = value``; a string target becomes a stored name."""
    node = name(target, True) if isinstance(target, str) else target
    return gast.Assign(targets=[node], value=value, type_comment=None)


def module_call(module: str, function: str, *args: gast.expr) -> gast.Call:
    """``module.function(*args)``: ``np.real(g)``, ``rt.unbroadcast(g, x)``."""
    return gast.Call(func=gast.Attribute(value=name(module), attr=function, ctx=gast.Load()), args=list(args),
                     keywords=[])


def rt_call(helper: str, *args: gast.expr) -> gast.Call:
    """``rt.helper(*args)``: a call of a ``numbax.runtime`` helper."""
    return module_call("rt", helper, *args)


def loads(node: gast.AST) -> Set[str]:
    """Every name ``node`` reads."""
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def base(node: gast.expr) -> str:
    """The variable under subscripts and attributes: ``x`` in ``x[i].T``."""
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id
