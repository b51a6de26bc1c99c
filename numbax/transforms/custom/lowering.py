"""A call of a ``custom_vjp`` or ``custom_jvp`` function while specializing: the user's rule, as a registry entry.

Under ``jit`` (nothing to differentiate) the call is the function's own code. In a function that a
transformation rewrites, the call of ``f`` with a ``custom_vjp`` becomes::

    out, res = <f_fwd specialized, on rt.custom_input(x)>   # computed, not differentiated here
    y = rt.custom_rule(7, out, res, x)                      # y is out; its rule is entry ("custom", 7)

and the entry's reverse-mode template, written here for this call, calls ``f_bwd`` specialized for the
residuals and the output's cotangent::

    def custom_rule_7(g, ans, key, out, r0, x0):
        d[x0] = f_bwd(r0, g)

so reverse mode differentiates the call like any primitive's, and the ``rules`` pass of the pipeline
inlines ``f_bwd``'s helper into the adjoint code and drops the marker. A ``custom_jvp`` function's entry holds
both templates: forward mode's, one part per operand (the user's rule with that operand's tangent, the
others zero: the sum is the rule's tangent where it is linear in the tangents, as JAX requires), and reverse
mode's, the rule transposed by numbax's own reverse mode (``transpose``); its primal is ``f`` on
``rt.custom_input`` of its arguments. A second derivative through a rule (the rule's own code read by another
transformation) is refused for now: the transposed rule's cotangents pass through ``rt.custom_input_seen``,
which no transformation differentiates. Forward mode of a ``custom_vjp`` function has no rule in its entry and
is refused at the user's line.
"""
from __future__ import annotations

import contextlib
import itertools
import linecache
from typing import Any, Dict, List

import numpy as np

from numbax import tree_util
from numbax.ast_passes import resolve
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import Dyn
from numbax.errors import NumbaxError, NumbaxInternalError
from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import CUSTOM, Primitive
from numbax.primitives.templates import Rule
from numbax.runtime.identity import custom_input, custom_rule
from numbax.transforms.custom import transpose

_NUMBERS = itertools.count()


def _bind(custom, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> List[Any]:
    """The call's arguments in the order of the function's parameters (defaults applied)."""
    import inspect

    try:
        bound = inspect.signature(custom.fun).bind(*args, **kwargs)
    except TypeError as exc:
        spec.fail(node, f"calling {custom.kind} function `{custom.name}`: {exc}")
    bound.apply_defaults()
    values = list(bound.args) + list(bound.kwargs.values())
    outside = [i for i in custom.nondiff_argnums if not -len(values) <= i < len(values)]
    if outside:
        spec.fail(node, f"{custom.kind} function `{custom.name}`: nondiff_argnums {outside} name no argument of "
                  f"its {len(values)}", hint="give nondiff_argnums positions of its parameters.")
    return values


def _stopped(spec, node, value: Any) -> Any:
    """``value`` with ``rt.custom_input`` on each run-time leaf: the transformation reading the rule does not
    differentiate the rule's own code (``numbax.ast_passes.custom_rules``)."""
    return tree_util.tree_map(
        lambda leaf: Dyn(spec.call_value(node, custom_input, [leaf], {}).node, leaf.aval)
        if isinstance(leaf, Dyn) else leaf, value)


@contextlib.contextmanager
def _undifferentiated(spec):
    """While the rule's own code is specialized: nothing there is differentiated (a call of the custom
    function inside its rule, as JAX's, is the function itself)."""
    before = spec.builder.differentiated
    spec.builder.differentiated = False
    try:
        yield
    finally:
        spec.builder.differentiated = before


def _specialize(spec, node, func, args: List[Any]):
    """``func`` specialized for ``args`` as a helper of the module, without a call (a rule calls it)."""
    fdef, namespace = spec.builder.parsed.get(func) or spec._parse(func)
    bound = spec.bind_arguments(node, fdef, list(func.__defaults__ or ()), args, {})
    with _undifferentiated(spec):
        return spec.child(fdef, namespace, {}, resolve.function_key(func)).specialize_helper(bound)


def _call_undifferentiated(spec, node, func, args: List[Any]) -> Any:
    """``func(*args)`` in the code, as the function itself (its own code is not differentiated: its inputs
    are ``stop_gradient``'s)."""
    with _undifferentiated(spec):
        return spec.call_python_function(node, func, args, {})


def _single_output(custom, spec, node, out: Any, what: str) -> Dyn:
    """The one float leaf of ``out`` (numbax's custom rules take one output)."""
    leaves = tree_util.tree_leaves(out)
    if len(leaves) != 1 or not isinstance(leaves[0], Dyn):
        spec.fail(node, f"{custom.kind} function `{custom.name}`: {what} has {len(leaves)} leaves known at run "
                  f"time; numbax's custom rules take functions of one output array or number",
                  hint="return one array (concatenate the outputs), or write a custom rule per output.")
    aval = leaves[0].aval
    if aval is None or aval.dtype.kind != "f":
        spec.fail(node, f"{custom.kind} function `{custom.name}`: its output must be a float array or number "
                  f"of a dtype numbax can tell", hint="return a float computed with NumPy functions.")
    return leaves[0]


def _register(number: int, params: List[str], rules: Dict[str, List[str]], name: str) -> None:
    """The registry entry ``("custom", number)``: a template written for this call per mode (``"vjp"``,
    ``"jvp"``: the lines of its body), and the marker's output's abstract value and shape (those of ``out``,
    its second argument)."""
    fields = {}
    for mode, lines in rules.items():
        source = f"def custom_{mode}_{number}(g, ans, {', '.join(params)}):\n" + "".join(f"    {line}\n"
                                                                                       for line in lines)
        filename = f"<numbax: custom {mode} rule {number}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace: Dict[str, Any] = {}
        exec(compile(source, filename, "exec"), namespace)
        fields[mode] = Rule(namespace[f"custom_{mode}_{number}"])
    CUSTOM[number] = (name, Primitive(aval=kinds.same_as(1), shape=symbolic.same_as(1), **fields))


def _marker(spec, node, number: int, out: Dyn, operands: List[Dyn]) -> Dyn:
    """``y = rt.custom_rule(number, out, *operands)``, ``y`` of ``out``'s abstract value."""
    call = spec.call_value(node, custom_rule, [number, out] + list(operands), {})
    return spec.snapshot(Dyn(call.node, out.aval))


def _names(helper, names: Dict[int, str]) -> List[str]:
    """The template's names for what the helper's call passes (each a value this module passed it)."""
    out = []
    for argument in helper.arguments:
        if id(argument) not in names:
            raise NumbaxInternalError(f"the custom rule's helper {helper.node.name} takes a value numbax did not "
                                      "pass it")
        out.append(names[id(argument)])
    return out


def lower_vjp(custom, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """A call of a ``custom_vjp`` function (see the module's docstring)."""
    values = _bind(custom, spec, node, args, kwargs)
    if not spec.builder.differentiated:
        return spec.call_python_function(node, custom.fun, values, {})
    nondiff = custom.nondiff_argnums
    pair = _call_undifferentiated(spec, node, custom.fwd, [v if i in nondiff else _stopped(spec, node, v)
                                                           for i, v in enumerate(values)])
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        spec.fail(node, f"Custom VJP fwd rule {custom.fwd.__name__} for function {custom.name} must produce a pair "
                  "(list or tuple of length two) representing primal outputs and residuals (values stored from the "
                  "forward pass for use on the backward pass)")
    out, res = pair
    y0 = _single_output(custom, spec, node, out, "the output of its fwd rule")
    res = spec.snapshot(res)
    kept = [spec.snapshot(values[i]) for i in nondiff]
    g = Dyn(name_node("g"), y0.aval)
    helper = _specialize(spec, node, custom.bwd, kept + [res, tree_util.tree_unflatten(
        tree_util.tree_structure(out), [g])])
    number = next(_NUMBERS)
    names: Dict[int, str] = {id(g): "g"}
    params, operands = ["key", "out"], []
    for prefix, leaves in (("n", tree_util.tree_leaves(kept)), ("r", tree_util.tree_leaves(res))):
        for k, leaf in enumerate(leaf for leaf in leaves if isinstance(leaf, Dyn)):
            names[id(leaf)] = f"{prefix}{k}"
            params.append(f"{prefix}{k}")
            operands.append(leaf)
    call = f"{helper.node.name}({', '.join(_names(helper, names))})"
    lines = [f"d[{p}] = None" for p in params]
    returned = _bwd_leaves(custom, spec, node, helper.returns, [values[i] for i in range(len(values))
                                                                if i not in nondiff])
    dynamic = sum(1 for r in returned if r is not None)
    lines.insert(0, f"cotangents = {call}")  # a statement of its own: the rules pass inlines it
    for k, (x, position) in enumerate(zip([leaf for i, v in enumerate(values) if i not in nondiff
                                           for leaf in tree_util.tree_leaves(v)], returned)):
        if not isinstance(x, Dyn):
            continue
        params.append(f"x{k}")
        operands.append(x)
        lines.append(f"d[x{k}] = None" if position is None else
                     f"d[x{k}] = cotangents" if dynamic == 1 else f"d[x{k}] = cotangents[{position}]")
    _register(number, params, {"vjp": lines}, f"custom_vjp function `{custom.name}` (forward mode of a custom_vjp "
              "function is not defined, as in JAX)")
    y = _marker(spec, node, number, y0, operands)
    return tree_util.tree_unflatten(tree_util.tree_structure(out), [y])


def _bwd_leaves(custom, spec, node, returns, diff_values: List[Any]) -> List[Any]:
    """For each leaf of the differentiated arguments: the position of its cotangent among the run-time leaves
    the bwd rule returns, or None for a zero one (JAX's ``None`` for a whole argument, or a literal 0)."""
    from numbax.ast_passes.specialize.builder import DYNAMIC

    if returns is None:
        spec.fail(node, f"Custom VJP bwd rule {custom.bwd.__name__} must return a tuple")
    counter = itertools.count()
    leaves = [_Position(next(counter)) if s is DYNAMIC else s for s in returns.statics]
    output = tree_util.tree_unflatten(returns.treedef, leaves)
    if not isinstance(output, tuple) or len(output) != len(diff_values):
        spec.fail(node, f"Custom VJP bwd rule must produce a tuple of length equal to the number of primal "
                  f"inputs ({len(diff_values)}) to the custom_vjp-decorated function {custom.name}")
    out: List[Any] = []
    for value, ct in zip(diff_values, output):
        n = len(tree_util.tree_leaves(value))
        if ct is None:
            out.extend([None] * n)
            continue
        got = tree_util.tree_leaves(ct)
        if tree_util.tree_structure(ct) != tree_util.tree_structure(value) or len(got) != n:
            spec.fail(node, f"Custom VJP bwd rule {custom.bwd.__name__} returned a cotangent of another "
                      f"structure than its primal ({tree_util.tree_structure(ct)} for "
                      f"{tree_util.tree_structure(value)})")
        for c in got:
            if isinstance(c, _Position):
                out.append(c.index)
            elif isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, bool) and c == 0:
                out.append(None)
            else:
                spec.fail(node, f"Custom VJP bwd rule {custom.bwd.__name__} returned the constant {c!r} as a "
                          "cotangent", hint="return an array (np.full_like(x, c)), or None for zero.")
    return out


class _Position:
    """The index of a run-time leaf among those a helper returns."""

    def __init__(self, index: int):
        self.index = index


def lower_jvp(custom, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """A call of a ``custom_jvp`` function (see the module's docstring)."""
    values = _bind(custom, spec, node, args, kwargs)
    if not spec.builder.differentiated:
        return spec.call_python_function(node, custom.fun, values, {})
    nondiff = custom.nondiff_argnums
    out = _call_undifferentiated(spec, node, custom.fun, [v if i in nondiff else _stopped(spec, node, v)
                                                          for i, v in enumerate(values)])
    y0 = _single_output(custom, spec, node, out, "its output")
    kept = [spec.snapshot(values[i]) for i in nondiff]
    primals = [spec.snapshot(values[i]) for i in range(len(values)) if i not in nondiff]
    xs = [leaf for leaf in tree_util.tree_leaves(primals) if isinstance(leaf, Dyn)]
    number = next(_NUMBERS)
    names: Dict[int, str] = {}
    params = ["key", "out"]
    for k, leaf in enumerate(leaf for leaf in tree_util.tree_leaves(kept) if isinstance(leaf, Dyn)):
        names[id(leaf)] = f"n{k}"
        params.append(f"n{k}")
    for k, x in enumerate(xs):
        names[id(x)] = f"x{k}"
        params.append(f"x{k}")
    rules = {"jvp": _pushed(custom, spec, node, kept, primals, xs, names)}
    name = f"custom_jvp function `{custom.name}`"
    if transpose.is_transposing(custom):  # a call inside its own rule: see ``transpose``
        name += " inside its own custom_jvp rule, whose tangent output must be linear in the tangents"
    else:
        try:
            rules["vjp"] = _pulled(custom, spec, node, kept, primals, xs, y0, names)
        except NumbaxError as exc:  # forward mode still has its rule; reverse mode refuses, saying why
            where = f" at {exc.origin.location()}" if exc.origin is not None else ""
            name += f" (its rule cannot be transposed{where}: {exc.message}; {exc.hint})"
    _register(number, params, {mode: [f"d[{p}] = None" for p in params if not p.startswith("x")] + lines
                               for mode, lines in rules.items()}, name)
    y = _marker(spec, node, number, y0, [leaf for leaf in tree_util.tree_leaves(kept) if isinstance(leaf, Dyn)] + xs)
    return tree_util.tree_unflatten(tree_util.tree_structure(out), [y])


def _pushed(custom, spec, node, kept: List[Any], primals: List[Any], xs: List[Dyn], names: Dict[int, str]) -> List[str]:
    """The forward-mode template's lines: one part per operand, the user's rule with that operand's tangent
    ``g`` and the others zero (the sum is the rule's tangent where it is linear in the tangents)."""
    tangents = [Dyn(name_node(f"t{k}"), x.aval) for k, x in enumerate(xs)]
    by_x = {id(x): t for x, t in zip(xs, tangents)}
    tangent_tree = tree_util.tree_map(lambda leaf: by_x.get(id(leaf), 0.0), primals)
    helper = _specialize(spec, node, custom.jvp, kept + [tuple(primals), tuple(tangent_tree)])
    if helper.returns is None or helper.returns.num_dynamic != 2 or len(helper.returns.statics) != 2:
        spec.fail(node, f"the custom_jvp rule of `{custom.name}` must return (primal_out, tangent_out) of one "
                  "array or number each, computed at run time")
    lines = []
    for k in range(len(xs)):
        part = dict(names)
        for j, t in enumerate(tangents):
            part[id(t)] = "g" if j == k else f"rt.zeros_like(x{j})"
        lines.append(f"pushed_{k} = {helper.node.name}({', '.join(_names(helper, part))})")  # inlined by the rules pass
        lines.append(f"d[x{k}] = pushed_{k}[1]")
    return lines


def _pulled(custom, spec, node, kept: List[Any], primals: List[Any], xs: List[Dyn], y0: Dyn,
            names: Dict[int, str]) -> List[str]:
    """The reverse-mode template's lines: the cotangents of the operands from the rule transposed by numbax's
    reverse mode (``transpose``), generated here for the rule and the output's cotangent ``g``."""
    g = Dyn(name_node("g"), y0.aval)
    with transpose.transposing(custom):
        helper = _specialize(spec, node, transpose.transposed, [custom.jvp, tuple(kept), tuple(primals), g])
    returned = helper.returns
    leaves = tree_util.tree_leaves(tuple(primals))
    if returned is None or len(returned.statics) != len(leaves):
        raise NumbaxInternalError(f"the transposed rule of {custom.name} returned {returned!r} for "
                                  f"{len(leaves)} primal leaves")
    from numbax.ast_passes.specialize.builder import DYNAMIC

    positions, count = {}, 0
    for leaf, static in zip(leaves, returned.statics):
        if static is DYNAMIC:
            positions[id(leaf)] = count
            count += 1
    lines = [f"cotangents = {helper.node.name}({', '.join(_names(helper, {**names, id(g): 'g'}))})"]
    for k, x in enumerate(xs):
        if id(x) not in positions:
            raise NumbaxInternalError(f"the transposed rule of {custom.name} has no run-time cotangent of "
                                      f"operand {k}")
        cotangent = "cotangents" if count == 1 else f"cotangents[{positions[id(x)]}]"
        lines.append(f"d[x{k}] = rt.custom_input_seen({cotangent})")  # not differentiated again: refused
    return lines
