"""``grad`` (or ``vjp``) called inside another compiled function: the gradient is generated there, at the call.

A jit-compiled training step that calls ``grad(loss)(params, x, y)`` is the
common case. While the step is specialized, the call specializes the gradient
for the abstract values the step passes (dtype and ndim of each leaf), runs
the reverse-mode pipeline up to optimization, and adds the resulting
function to the step's module as a helper; ``inline`` then places it in the
step, so one Numba function computes both. ``numbax.vjp(f, *primals)`` there
inlines ``f`` for the output and returns the pullback as a compile-time value;
calling it generates the vjp in the same way, with the cotangent's leaves as
extra arguments.

When the calling function is itself differentiated (a higher-order
derivative), the gradient is generated up to optimization only, unfused and
without writes through views (``GradSpec.higher_order``), so that the outer
reverse mode can read it; ``higher_order.check`` refuses what it still cannot.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from numbax import tree_util
from numbax.ast_passes.specialize.compile_time import lifted_function
from numbax.ast_passes.specialize.values import Dyn
from numbax.transforms import arity, nesting, replays
from numbax.transforms.grad import higher_order as higher_order_checks


def cotangent_checked(cotangent, output):
    """The cotangent, after checking at run time that it has its output's shape (as ``jax.vjp``'s pullback)."""
    if cotangent.shape != output.shape:
        raise ValueError("unexpected JAX type (e.g. shape/dtype) for argument to VJP function: the cotangent's "
                         "shape differs from the output's")
    return cotangent


def checked_cotangents(spec, node, cotangents: List[Any], outputs: List[Any]) -> List[Any]:
    """A pullback's cotangent leaves inside compiled code, each checked against its output leaf: the rank
    now, the shape at run time (JAX's ``ValueError``)."""
    checked = []
    for cotangent, output in zip(cotangents, outputs):
        want = nesting.abstract(spec, node, output, "an output", "vjp")
        got = nesting.abstract(spec, node, cotangent, "a cotangent", "vjp")
        if got.ndim != want.ndim:
            spec.fail(node, f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: a cotangent of "
                      f"rank {got.ndim} for an output of rank {want.ndim}",
                      hint="pass the pullback a cotangent of the output's shape.")
        if not nesting.cotangent_dtype_fits(got.dtype, want.dtype):
            spec.fail(node, f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: a cotangent "
                      f"of dtype {got.dtype} for an output of dtype {want.dtype}",
                      hint=f"pass the pullback a cotangent of the output's dtype ({want.dtype}).")
        checked.append(nesting.checked_at_run_time(spec, node, cotangent_checked, cotangent, want.ndim, output))
    return checked


def _check_scalar(transformed, spec, node, out: Any) -> None:
    """The scalar-output check ``Differentiated._package`` makes at run time, made on the abstract value."""
    value = out[0] if transformed.has_aux else out
    ndim = value.aval.ndim if isinstance(value, Dyn) and value.aval is not None else np.ndim(value)
    if ndim != 0:
        spec.fail(node, f"Gradient only defined for scalar-output functions; {transformed!r} returns an "
                  f"array of rank {ndim}", hint="use numbax.vjp for array outputs.")


def lower(transformed, spec, node, args: List[Any], kwargs: Dict[str, Any], cotangents: List[Any] = ()) -> Any:
    """Specialize a call of ``transformed`` (a ``Differentiated``) inside the function ``spec`` compiles.

    For ``vjp`` (``transformed.cotangents``), ``args`` are the primals and ``cotangents`` the leaves of the
    cotangent the pullback is called with; the result is the pullback's, one cotangent per primal.
    """
    try:
        values = transformed._signature.bind(tuple(args), dict(kwargs))
    except TypeError as exc:
        spec.fail(node, f"calling {transformed!r}: {exc}")
    inexact = () if transformed.allow_int else transformed.argnums
    bound, arguments = nesting.bind(transformed, spec, node, values, "grad", inexact)
    higher_order = spec.builder.differentiated
    generated = nesting.generate(transformed, spec, bound, after_pass=nesting.stop_after(spec),
                                 higher_order=higher_order, general=True)  # no entry check to fall back from
    returns = transformed._returns(generated.returns, bound)
    if higher_order:
        higher_order_checks.check(generated.module.body[-1], transformed.label,
                                  spec.origin(node) or transformed.origin())
    result = nesting.emit(spec, generated, arguments + list(cotangents), returns)
    if transformed.direct:  # the generated gradient returns what the user receives, and checks the output
        return result
    out, grads = result
    if transformed.cotangents:
        return tuple(grads)
    _check_scalar(transformed, spec, node, out)
    return transformed._arrange(out, grads)


def lower_vjp(spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``numbax.vjp(f, *primals)`` inside compiled code: ``f``'s output now, and the pullback as a
    compile-time value whose call specializes the vjp there (``_VJPFunction._numbax_specialize``)."""
    from numbax.transforms.grad import api

    if not args:
        spec.fail(node, "numbax.vjp takes the function to differentiate and its primals")
    unknown = set(kwargs) - {"has_aux", "backend"}
    if unknown:
        spec.fail(node, f"numbax.vjp got an unexpected keyword argument {sorted(unknown)[0]!r}")
    has_aux = kwargs.get("has_aux", False)
    if not isinstance(has_aux, bool):
        spec.fail(node, "numbax.vjp's has_aux must be True or False, known at compile time")
    fun, primals = args[0], list(args[1:])
    out = replays.restoring(spec, node, primals, lambda: spec.call_value(node, fun, primals, {}))
    primal_out, aux = (out[0], out[1]) if has_aux else (out, None)
    fun, lifted = lifted_function(spec, node, fun, "vjp")
    fun = arity.at_arity(fun, len(primals)) if lifted is None else fun
    transformed = api.vjp_transformation(fun, len(primals), has_aux)
    held = tuple(spec.snapshot(p) for p in primals)  # the pullback reads them later: pinned now
    # a lifted local function's captured values, read now (the primal output's), pinned too
    keywords = {} if lifted is None else {k: spec.snapshot(v) for k, v in lifted.captured_values(spec).items()}
    outputs = tree_util.tree_leaves(spec.snapshot(primal_out))  # their shapes check the cotangent's
    pullback = api._VJPFunction(transformed, held, tree_util.tree_structure(primal_out), outputs, keywords)
    return (primal_out, pullback, aux) if has_aux else (primal_out, pullback)
