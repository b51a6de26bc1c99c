"""Specializing ``numbax.lax`` calls: each call becomes native control flow at the user's line.

A lowering receives the specializer, the call node and the evaluated arguments
(compile-time values, or ``Dyn`` placeholders of run-time leaves). It writes a
small Python function for the call -- a ``for``, ``while`` or ``if`` over the
user's functions, with one parameter per operand -- tags every node with the
call's origin (so generated comments and errors point at the user's line), and
specializes it like a user helper: the user's functions are inlined into it,
pytrees of carried values are flattened, and the transformations that follow
see ordinary loops and branches.

    >>> print(_template_source("cond", operands=2))
    def cond(pred, true_fun, false_fun, operand_0, operand_1):
        if pred:
            result = true_fun(operand_0, operand_1)
        else:
            result = false_fun(operand_0, operand_1)
        return result
"""
from __future__ import annotations

import functools
import textwrap
from typing import Any, Callable, Dict, List, Optional

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes import anno, resolve
from numbax.ast_passes.specialize.compile_time import bind_call
from numbax.ast_passes.specialize.dtypes import aval_of
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.ast_passes.tree_copy import copy_tree
from numbax.runtime.checks import check_row
from numbax.runtime.identity import stop_gradient as runtime_stop_gradient
from numbax.runtime.scan import stack_buffer


def lowered_by(lower: Callable) -> Callable[[Callable], Callable]:
    """Decorator: attach ``lower`` as the function's ``_numbax_specialize`` hook."""

    def attach(fn: Callable) -> Callable:
        fn._numbax_specialize = lower
        return fn

    return attach


def _operands(count: int) -> str:
    return ", ".join(f"operand_{k}" for k in range(count))


def _template_source(kind: str, operands: int = 0, branches: int = 0, reverse: bool = False,
                     length_from_xs: bool = False) -> str:
    """The Python source of one lowering, for its arity."""
    ops = _operands(operands)
    params = f", {ops}" if ops else ""
    if kind == "fori_loop":
        return textwrap.dedent("""\
            def fori_loop(lower, upper, body_fun, init_val):
                val = init_val
                for i in range(lower, upper):
                    val = body_fun(i, val)
                return val""")
    if kind == "while_loop":
        return textwrap.dedent("""\
            def while_loop(cond_fun, body_fun, init_val):
                val = init_val
                while cond_fun(val):
                    val = body_fun(val)
                return val""")
    if kind == "cond":
        return textwrap.dedent(f"""\
            def cond(pred, true_fun, false_fun{params}):
                if pred:
                    result = true_fun({ops})
                else:
                    result = false_fun({ops})
                return result""")
    if kind == "switch":
        lines = [f"def switch(index, branches{params}):"]
        if branches == 1:
            lines.append(f"    result = branches[0]({ops})")
        else:
            lines.append(f"    index = min(max(index, 0), {branches - 1})")
            for k in range(branches - 1):
                lines.append(f"    {'if' if k == 0 else 'elif'} index == {k}:")
                lines.append(f"        result = branches[{k}]({ops})")
            lines.append("    else:")
            lines.append(f"        result = branches[{branches - 1}]({ops})")
        lines.append("    return result")
        return "\n".join(lines)
    if kind == "scan":
        first = "length - 1" if reverse else "0"
        index = "length - 1 - step" if reverse else "step"
        length = "    length = tree_leaves(xs)[0].shape[0]\n" if length_from_xs else ""
        return (f"def scan(f, init, xs, length):\n{length}" + textwrap.indent(textwrap.dedent(f"""\
            carry, y = f(init, tree_map(lambda leaf: leaf[{first}], xs))
            ys = tree_map(lambda leaf: stack_buffer(leaf, length), y)
            tree_map(lambda buffer, leaf: store(buffer, {first}, leaf), ys, y)
            for step in range(1, length):
                i = {index}
                carry, y = f(carry, tree_map(lambda leaf: leaf[i], xs))
                tree_map(lambda buffer, leaf: store(buffer, i, leaf), ys, y)
            return (carry, ys)"""), "    "))
    raise ValueError(kind)


@functools.lru_cache(maxsize=None)
def _template(kind: str, **shape: Any) -> gast.FunctionDef:
    return gast.parse(_template_source(kind, **shape)).body[0]


def _lower_store(spec, node, args, kwargs):
    buffer, index, value = args
    aval = value.aval if isinstance(value, Dyn) else AVal.of(value)
    if aval is None or aval.ndim > 0:  # a step's ys of another shape would broadcast into its row
        origin = spec.origin(node)
        spec.emit(gast.Expr(value=spec.call_value(node, check_row, [buffer, value, origin.position() if origin
                                                                    else ""], {}).node))
    spec.emit(gast.Assign(
        targets=[gast.Subscript(value=buffer.expr(), slice=spec.materialize_index(index), ctx=gast.Store())],
        value=spec.materialize(value), type_comment=None))


@lowered_by(_lower_store)
def store(buffer: np.ndarray, index: Any, value: Any) -> None:
    """``buffer[index] = value``, callable from a template's lambda (``scan`` fills one output leaf per step)."""
    buffer[index] = value


_NAMESPACE = resolve.Namespace({}, {"np": np, "tree_map": tree_util.tree_map, "tree_leaves": tree_util.tree_leaves,
                                    "stack_buffer": stack_buffer, "store": store})


def _specialize(spec, node, kind: str, args: List[Any], **shape: Any) -> Any:
    """Specialize the template for ``kind`` at ``node`` with ``args`` bound to its parameters."""
    fdef = copy_tree(_template(kind, **shape))
    origin = anno.getanno(spec.current, anno.Key.ORIGIN) if spec.current is not None else spec.origin(node)
    for sub in gast.walk(fdef):
        if hasattr(sub, "lineno"):
            gast.copy_location(sub, node)
            anno.setanno(sub, anno.Key.ORIGIN, origin)
    return spec.call_user(node, fdef, f"lax.{kind}", _NAMESPACE, {}, [], args, {}, key=(kind, id(node)))


def _bind(spec, node, name: str, args: List[Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """Match a call's arguments to ``numbax.lax.<name>``'s parameters, failing at the user's line."""
    import numbax.lax

    return bind_call(spec, node, getattr(numbax.lax, name), f"lax.{name}", args, kwargs)


def lower_fori_loop(spec, node, args, kwargs):
    """``lax.fori_loop(lower, upper, body_fun, init_val)`` -> a ``for`` loop over ``range``."""
    b = _bind(spec, node, "fori_loop", args, kwargs)
    return _specialize(spec, node, "fori_loop", [b["lower"], b["upper"], b["body_fun"], b["init_val"]])


def lower_while_loop(spec, node, args, kwargs):
    """``lax.while_loop(cond_fun, body_fun, init_val)`` -> a ``while`` loop."""
    return _specialize(spec, node, "while_loop", list(_bind(spec, node, "while_loop", args, kwargs).values()))


def lower_cond(spec, node, args, kwargs):
    """``lax.cond(pred, true_fun, false_fun, *operands)`` -> an ``if``/``else``."""
    if kwargs:
        spec.fail(node, "lax.cond takes its operands positionally", hint="lax.cond(pred, true_fun, false_fun, *operands)")
    if len(args) < 3:
        spec.fail(node, "lax.cond needs pred, true_fun and false_fun")
    return _specialize(spec, node, "cond", list(args), operands=len(args) - 3)


def lower_switch(spec, node, args, kwargs):
    """``lax.switch(index, branches, *operands)`` -> an ``if``/``elif`` chain over the clamped index."""
    if kwargs:
        spec.fail(node, "lax.switch takes its operands positionally", hint="lax.switch(index, branches, *operands)")
    if len(args) < 2 or not isinstance(args[1], (list, tuple)) or not args[1]:
        spec.fail(node, "lax.switch needs an index and a non-empty list of branch functions")
    return _specialize(spec, node, "switch", list(args), operands=len(args) - 2, branches=len(args[1]))


def scan_length(xs: Any, length: Optional[int]) -> int:
    """The trip count of ``lax.scan``: ``length``, or the leading axis the leaves of ``xs`` share."""
    leaves = tree_util.tree_leaves(xs)
    sizes = {np.shape(leaf)[0] for leaf in leaves}
    if length is not None:
        sizes.add(int(length))
    if len(sizes) != 1:
        raise ValueError("scan got no xs and no length" if not sizes else
                         f"scan got leading axis sizes that differ: {sorted(sizes)}")
    return sizes.pop()


def lower_scan(spec, node, args, kwargs):
    """``lax.scan(f, init, xs, length, reverse)`` -> the first step, then a loop filling stacked outputs."""
    b = _bind(spec, node, "scan", args, kwargs)
    f, init, xs, length, reverse = b["f"], b["init"], b["xs"], b["length"], b["reverse"]
    if not isinstance(reverse, bool):
        spec.fail(node, "lax.scan's `reverse` must be a Python bool known at compile time")
    has_xs = bool(tree_util.tree_leaves(xs))
    if not has_xs and length is None:
        spec.fail(node, "lax.scan needs `xs` or `length`")
    return _specialize(spec, node, "scan", [f, init, xs, length], reverse=reverse,
                       length_from_xs=has_xs and length is None)


def lower_select(spec, node, args, kwargs):
    """``lax.select(pred, on_true, on_false)`` -> ``np.where``."""
    return spec.call_value(node, np.where, list(args), dict(kwargs))


def lower_stop_gradient(spec, node, args, kwargs):
    """``lax.stop_gradient(x)`` -> ``rt.stop_gradient`` on each leaf of ``x`` (a constant to reverse mode)."""
    x = _bind(spec, node, "stop_gradient", args, kwargs)["x"]

    def constant(leaf):
        out = spec.call_value(node, runtime_stop_gradient, [leaf], {})
        if isinstance(out, Dyn) and out.aval is None:
            out.aval = aval_of(leaf)  # the value itself
        return out

    return tree_util.tree_map(constant, x)

