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
inlines ``f_bwd``'s helper into the adjoint code and drops the marker (a second derivative through a
``custom_vjp`` rule is refused: its residuals were computed on ``rt.custom_input``). A ``custom_jvp``
function's entry holds both templates: forward mode's, one part per operand (the user's rule with that
operand's tangent, the others zero: the sum is the rule's tangent where it is linear in the tangents, as JAX
requires), and reverse mode's, the rule transposed by numbax's own reverse mode (``transpose``); its output is
the rule's primal output on ``rt.custom_primal`` of its operands. The rule's code in all three is specialized
as code a transformation of the result reads (a second derivative differentiates the rule, as JAX's does),
each helper an entry's own copy (``_private``). Forward mode of a ``custom_vjp`` function has no rule in its
entry and is refused at the user's line.
"""
from __future__ import annotations

import contextlib
import itertools
import linecache
from typing import Any, Dict, List, Optional

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes import resolve
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import Dyn
from numbax.ast_passes.tree_copy import copy_tree
from numbax.errors import NumbaxError, NumbaxInternalError
from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import CUSTOM, CUSTOM_HELPERS, PERSISTENT, Primitive
from numbax.primitives.templates import Rule
from numbax.runtime.identity import custom_input, custom_primal, custom_rule, stop_gradient
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


def _stopped(spec, node, value: Any, marker=custom_input) -> Any:
    """``value`` with ``marker`` (``rt.custom_input``, ``rt.stop_gradient``) on each run-time leaf: the
    transformation reading the rule does not differentiate the rule's own code
    (``numbax.ast_passes.custom_rules``)."""
    return tree_util.tree_map(
        lambda leaf: Dyn(spec.call_value(node, marker, [leaf], {}).node, leaf.aval)
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


def _specialize(spec, node, func, args: List[Any], differentiated: bool = False):
    """``func`` specialized for ``args`` as a helper of the module, without a call (a rule calls it); unless
    ``differentiated``, as code no transformation reads (``_undifferentiated``)."""
    fdef, namespace = spec.builder.parsed.get(func) or spec._parse(func)
    bound = spec.bind_arguments(node, fdef, list(func.__defaults__ or ()), args, {}, dict(func.__kwdefaults__ or {}))
    with contextlib.nullcontext() if differentiated else _undifferentiated(spec):
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


def _private(spec, helper, number: int, pick: Optional[int] = None) -> str:
    """The name of the entry's own copy of ``helper`` and of the helpers it calls, named apart
    (``CUSTOM_HELPERS``: a transformation of code generated in another module instantiates the rule); with
    ``pick``, a copy that returns only that element of the tuple ``helper`` returns (the code a transformation
    of the result reads holds no tuple of arrays)."""
    module = {h.name: h for h in spec.builder.helpers}
    suffix = f"_c{number}" if pick is None else f"_c{number}_{pick}"
    found, todo = {}, [helper.node.name]
    while todo:
        name = todo.pop()
        if name in found or name not in module:
            continue
        found[name] = name + suffix
        todo.extend(n.func.id for n in gast.walk(module[name]) if isinstance(n, gast.Call)
                    and isinstance(n.func, gast.Name))
    for name, private in found.items():
        copy = copy_tree(module[name])
        copy.name = private
        for n in gast.walk(copy):
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in found:
                n.func.id = found[n.func.id]
            if pick is not None and name == helper.node.name and isinstance(n, gast.Return):
                if not isinstance(n.value, gast.Tuple) or len(n.value.elts) <= pick:
                    raise NumbaxInternalError(f"the custom rule's helper {name} returns no tuple to pick from")
                n.value = n.value.elts[pick]
        CUSTOM_HELPERS[private] = copy
    return found[helper.node.name]


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
    outer = transpose.enclosing(custom)
    if outer is not None:
        return _inside_own_rule(custom, spec, node, values, outer)
    nondiff = custom.nondiff_argnums
    kept = [spec.snapshot(values[i]) for i in nondiff]
    primals = [spec.snapshot(values[i]) for i in range(len(values)) if i not in nondiff]
    xs = [leaf for leaf in tree_util.tree_leaves(primals) if isinstance(leaf, Dyn)]
    operands = [leaf for leaf in tree_util.tree_leaves(kept) if isinstance(leaf, Dyn)] + xs
    number = next(_NUMBERS)
    names, params = _operand_names(kept, xs)
    frame = transpose.Frame(custom, number, tuple(o.aval for o in operands))
    name = f"custom_jvp function `{custom.name}`"
    with transpose.lowering(frame):  # the rule's code is specialized as code a transformation can read
        out = _primal(custom, spec, node, kept, primals)
        y0 = _single_output(custom, spec, node, out, "its output")
        rules = {"jvp": _pushed(custom, spec, node, number, kept, primals, xs, names)}
        try:
            rules["vjp"] = _pulled(custom, spec, node, number, kept, primals, xs, y0, names)
        except NumbaxError as exc:  # forward mode still has its rule; reverse mode refuses, saying why
            where = f" at {exc.origin.location()}" if exc.origin is not None else ""
            name += f" (its rule cannot be transposed{where}: {exc.message}; {exc.hint})"
            for inner in frame.inner:  # the rule they would share is not there
                CUSTOM[inner][1].vjp = None
    _register(number, params, {mode: [f"d[{p}] = None" for p in params if not p.startswith("x")] + lines
                               for mode, lines in rules.items()}, name)
    y = _marker(spec, node, number, y0, operands)
    return tree_util.tree_unflatten(tree_util.tree_structure(out), [y])


def _operand_names(kept: List[Any], xs: List[Dyn]):
    """The templates' names of the run-time leaves of the kept arguments (``n0``...) and of the operands
    (``x0``...), by id; and the templates' parameters."""
    names: Dict[int, str] = {}
    params = ["key", "out"]
    for k, leaf in enumerate(leaf for leaf in tree_util.tree_leaves(kept) if isinstance(leaf, Dyn)):
        names[id(leaf)] = f"n{k}"
        params.append(f"n{k}")
    for k, x in enumerate(xs):
        names[id(x)] = f"x{k}"
        params.append(f"x{k}")
    return names, params


def _primal(custom, spec, node, kept: List[Any], primals: List[Any]) -> Any:
    """The output, as the rule's primal output at zero tangents on ``rt.custom_primal`` of the operands: code
    the transformation reading the rule does not differentiate and a transformation of its result does
    (``numbax.ast_passes.custom_rules``), as JAX differentiates the rule."""
    stopped = [_stopped(spec, node, p, custom_primal) for p in primals]
    zeros = [tree_util.tree_map(lambda leaf: spec.call_value(node, np.zeros_like, [leaf], {})
                                if isinstance(leaf, Dyn) else 0.0, p) for p in stopped]
    pair = spec.call_python_function(node, custom.jvp, kept + [tuple(stopped), tuple(zeros)], {})
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        spec.fail(node, f"the custom_jvp rule of `{custom.name}` must return a pair (primal_out, tangent_out)")
    return pair[0]


def _inside_own_rule(custom, spec, node, values: List[Any], outer) -> Any:
    """A call of a ``custom_jvp`` function inside its own rule, while the rule is specialized (``transpose``):
    its output is the function's on ``rt.stop_gradient`` of its operands, and its rules, on operands of the
    enclosing call's abstract values, are that call's (read when first used: they are being written); a
    persistent marker, which a transformation of the result reads (JAX's second derivative through a rule
    that calls the function). On other operands it has no rule: a derivative through it is refused."""
    nondiff = custom.nondiff_argnums
    out = _call_undifferentiated(spec, node, custom.fun, [v if i in nondiff else _stopped(spec, node, v, stop_gradient)
                                                          for i, v in enumerate(values)])
    y0 = _single_output(custom, spec, node, out, "its output")
    kept = [spec.snapshot(values[i]) for i in nondiff]
    primals = [spec.snapshot(values[i]) for i in range(len(values)) if i not in nondiff]
    xs = [leaf for leaf in tree_util.tree_leaves(primals) if isinstance(leaf, Dyn)]
    operands = [leaf for leaf in tree_util.tree_leaves(kept) if isinstance(leaf, Dyn)] + xs
    number = next(_NUMBERS)
    if tuple(o.aval for o in operands) == outer.operands:
        rules = {"jvp": transpose.SameAs(outer.number, "jvp"), "vjp": transpose.SameAs(outer.number, "vjp")}
        outer.inner.append(number)
        name = f"custom_jvp function `{custom.name}` inside its own rule"
    else:
        rules = {}
        name = (f"custom_jvp function `{custom.name}` inside its own rule, on operands of other types than the "
                "enclosing call's (numbax has no derivative of a derivative through it)")
    CUSTOM[number] = (name, Primitive(aval=kinds.same_as(1), shape=symbolic.same_as(1), **rules))
    PERSISTENT.add(number)
    y = _marker(spec, node, number, y0, operands)
    return tree_util.tree_unflatten(tree_util.tree_structure(out), [y])
def _pushed(custom, spec, node, number: int, kept: List[Any], primals: List[Any], xs: List[Dyn],
            names: Dict[int, str]) -> List[str]:
    """The forward-mode template's lines: one part per operand, the user's rule with that operand's tangent
    ``g`` and the others zero (the sum is the rule's tangent where it is linear in the tangents)."""
    tangents = [Dyn(name_node(f"t{k}"), x.aval) for k, x in enumerate(xs)]
    by_x = {id(x): t for x, t in zip(xs, tangents)}
    tangent_tree = tree_util.tree_map(lambda leaf: by_x.get(id(leaf), 0.0), primals)
    helper = _specialize(spec, node, custom.jvp, kept + [tuple(primals), tuple(tangent_tree)], differentiated=True)
    if helper.returns is None or helper.returns.num_dynamic != 2 or len(helper.returns.statics) != 2:
        spec.fail(node, f"the custom_jvp rule of `{custom.name}` must return (primal_out, tangent_out) of one "
                  "array or number each, computed at run time")
    lines, name = [], _private(spec, helper, number, pick=1)  # the tangent output
    for k in range(len(xs)):
        part = dict(names)
        for j, t in enumerate(tangents):
            part[id(t)] = "g" if j == k else f"rt.zeros_like(x{j})"
        lines.append(f"pushed_{k} = {name}({', '.join(_names(helper, part))})")  # inlined by the rules pass
        lines.append(f"d[x{k}] = pushed_{k}")
    return lines


def _pulled(custom, spec, node, number: int, kept: List[Any], primals: List[Any], xs: List[Dyn], y0: Dyn,
            names: Dict[int, str]) -> List[str]:
    """The reverse-mode template's lines: the cotangents of the operands from the rule transposed by numbax's
    reverse mode (``transpose``), generated here for the rule and the output's cotangent ``g``."""
    g = Dyn(name_node("g"), y0.aval)
    helper = _specialize(spec, node, transpose.transposed, [custom.jvp, tuple(kept), tuple(primals), g],
                         differentiated=True)  # code a transformation can read (a second derivative)
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
    arguments = ", ".join(_names(helper, {**names, id(g): "g"}))
    lines = []
    for k, x in enumerate(xs):  # a helper per operand, each returning its cotangent (``_private``)
        if id(x) not in positions:
            raise NumbaxInternalError(f"the transposed rule of {custom.name} has no run-time cotangent of "
                                      f"operand {k}")
        name = _private(spec, helper, number, pick=None if count == 1 else positions[id(x)])
        lines += [f"cotangent_{k} = {name}({arguments})", f"d[x{k}] = cotangent_{k}"]  # inlined by the rules pass
    return lines
