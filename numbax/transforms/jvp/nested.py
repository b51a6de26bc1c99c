"""Forward mode called inside another compiled function: the tangent code is generated there, at the call.

``numbax.jvp(f, (x,), (t,))`` inside a jit-compiled function, or the pushforward a Jacobian's sweep calls
for each basis vector, specializes ``f``'s forward mode for the abstract values the caller passes and adds
it to the caller's module as a helper (``numbax.transforms.nesting``), so that one compiled function
computes both.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes.specialize.compile_time import lifted_function
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.transforms import arity, nesting
from numbax.transforms.grad import higher_order as higher_order_checks


def shape_checked(tangent, primal):
    """The tangent, after checking at run time that it has its primal's shape (as ``jax.jvp`` does)."""
    if tangent.shape != primal.shape:
        raise ValueError("jvp called with different primal and tangent shapes")
    return tangent


def _aval(value: Any):
    return value.aval if isinstance(value, Dyn) else None


def lower(pushforward, spec, node, primals: List[Any], tangents: List[Any], label: str = "numbax.jvp inside compiled code",
          keywords: Optional[Dict[str, Any]] = None, shaped: bool = False) -> Any:
    """Specialize ``pushforward`` (a ``Pushforward``) at ``primals`` with ``tangents``, one per leaf that gets
    a tangent (``Pushforward.wrt_leaves``); ``(output, output tangent)``, each output tangent in the
    output's dtype (``label``, the caller, names it in errors). ``keywords`` are arguments passed by name
    that get no tangent (a lifted local function's captured values). Each tangent's shape is checked against
    its primal's at run time, as ``jax.jvp`` does, unless ``shaped`` (a Jacobian's basis vectors, made in
    their primals' shapes)."""
    try:
        values = pushforward._signature.bind(tuple(primals), dict(keywords or {}))
    except TypeError as exc:
        spec.fail(node, f"calling {pushforward!r}: {exc}")
    bound, arguments = nesting.bind(pushforward, spec, node, values, "jvp")
    wanted = pushforward.wrt_leaves(bound)
    if sum(wanted) != len(tangents):
        spec.fail(node, f"{pushforward!r} takes {sum(wanted)} tangent leaves, got {len(tangents)}")
    checked = []
    for tangent, primal in zip(tangents, [leaf for leaf, w in zip(arguments, wanted) if w]):
        aval = nesting.abstract(spec, node, primal, "a primal", "jvp")
        got = nesting.abstract(spec, node, tangent, "a tangent", "jvp")
        if got.dtype != aval.dtype or got.ndim != aval.ndim:
            spec.fail(node, f"primal and tangent arguments to jax.jvp do not match: a primal of dtype "
                      f"{aval.dtype.name} and rank {aval.ndim} has a tangent of dtype {got.dtype.name} and rank "
                      f"{got.ndim}", hint="pass tangents of the primals' dtypes and shapes.")
        checked.append(tangent if shaped else
                       nesting.checked_at_run_time(spec, node, shape_checked, tangent, aval.ndim, primal))
    tangents = checked
    generated = nesting.generate(pushforward, spec, bound, after_pass=nesting.stop_after(spec))
    if generated.returns is None:
        spec.fail(node, f"{pushforward!r} returns nothing to differentiate")
    if spec.builder.differentiated:
        higher_order_checks.check(generated.module.body[-1], "jvp", spec.origin(node) or pushforward.origin())
    out, out_tangents = nesting.emit(spec, generated, arguments + list(tangents),
                                     pushforward.returns(generated.returns))
    outs, treedef = tree_util.tree_flatten(out)
    cast = []
    for primal, tangent in zip(outs, tree_util.tree_leaves(out_tangents)):
        aval = _aval(primal)
        if aval is None:
            spec.fail(node, f"{label} cannot tell the dtype and rank of an output, which its tangent must match",
                      hint="compute it with NumPy functions numbax knows the result of "
                      "(numbax.coverage() lists them), or call numbax.jvp outside compiled code.")
        if not np.issubdtype(aval.dtype, np.inexact):
            spec.fail(node, f"{label} of an output of dtype {aval.dtype.name}, whose tangent is float0",
                      hint="return floating-point arrays or numbers (use numbax.jvp outside compiled code for "
                      "integer outputs, whose tangents are float0).")
        same = _aval(tangent) is not None and _aval(tangent).dtype == aval.dtype
        if same:
            cast.append(tangent)
        elif aval.ndim:  # at the user's call, where a refusal to differentiate the cast points
            astype = gast.Attribute(value=spec.materialize(tangent), attr="astype", ctx=gast.Load())
            cast.append(spec.snapshot(Dyn(gast.Call(func=astype, args=[spec.materialize(aval.dtype.type)],
                                                    keywords=[]), AVal(aval.dtype, aval.ndim))))
        else:  # a scalar has no astype in Numba: its dtype's constructor casts it
            cast.append(spec.call_value(node, aval.dtype.type, [tangent], {}))
    return out, tree_util.tree_unflatten(treedef, cast)


def lower_jvp(spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``numbax.jvp(f, primals, tangents)`` inside compiled code: ``(output, output tangent)`` (with the aux
    after them for ``has_aux``), the forward mode generated at the call."""
    from numbax.transforms.jvp import api

    unknown = set(kwargs) - {"has_aux", "backend"}
    if unknown:
        spec.fail(node, f"numbax.jvp got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if len(args) != 3:
        spec.fail(node, "numbax.jvp takes the function, a tuple of primals and a tuple of tangents")
    has_aux = kwargs.get("has_aux", False)
    if not isinstance(has_aux, bool):
        spec.fail(node, "numbax.jvp's has_aux must be True or False, known at compile time")
    fun, primals, tangents = args
    fun, lifted = lifted_function(spec, node, fun, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        spec.fail(node, "primal and tangent arguments to jax.jvp must be tuples or lists")
    primal_leaves, primal_tree = tree_util.tree_flatten(tuple(primals))
    tangent_leaves, tangent_tree = tree_util.tree_flatten(tuple(tangents))
    if primal_tree != tangent_tree:
        spec.fail(node, f"primal and tangent arguments to jax.jvp must have the same tree structure; primals "
                  f"have tree structure {primal_tree} whereas tangents have tree structure {tangent_tree}.")
    for leaf in primal_leaves:
        aval = nesting.abstract(spec, node, leaf, "a primal", "jvp")
        if not np.issubdtype(aval.dtype, np.inexact):
            spec.fail(node, f"numbax.jvp inside compiled code with a primal of dtype {aval.dtype.name}",
                      hint="pass the integer or boolean value through a closure or a static argument, or call "
                      "numbax.jvp outside compiled code (its tangent is then float0).")
    if lifted is None:
        pushforward, keywords = api.pushforward(arity.at_arity(fun, len(primals)), has_aux, "cpu"), None
    else:  # its captured values, passed by name, get no tangent
        pushforward = api.Pushforward(fun, has_aux, "cpu", tuple(range(len(primals))))
        keywords = lifted.captured_values(spec)
    out, out_tangent = lower(pushforward, spec, node, list(primals), tangent_leaves, keywords=keywords)
    if has_aux:
        return out[0], out_tangent[0], out[1]
    return out, out_tangent
