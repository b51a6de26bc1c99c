"""A transformation called inside another compiled function: generated there, at the call, as a helper.

``grad(loss)(params)`` inside a jit-compiled step, ``numbax.jvp(f, (x,), (t,))``
inside a ``vmap``, the sweep of a Jacobian: while the caller is specialized,
the call binds the transformation's parameters to placeholders of the
abstract values the caller passes (``bind``), runs the transformation's
pipeline for them, and adds the generated function to the caller's module
(``emit``); ``inline`` then places it in the caller, so one compiled function
computes both. When the caller is itself transformed (``builder.differentiated``),
the inner code is generated up to optimization only, the core subset the outer
transformation reads. A call made twice with the same abstract values (a ``vmap``'s first
example and its loop, a Jacobian's first column and its sweep) runs the pipeline once
(``generate``).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from numbax import tree_util
from numbax.ast_passes.specialize.builder import Helper
from numbax.ast_passes.specialize.values import AVal, Dyn, contains_dyn
from numbax.ast_passes.tree_copy import copy_tree


def cotangent_dtype_fits(cotangent: np.dtype, output: np.dtype) -> bool:
    """Whether a cotangent of dtype ``cotangent`` is one for an output of dtype ``output``, as ``jax.vjp``'s
    pullback has it: the output's own dtype where that is inexact (a float32 cotangent for a float64 output is
    refused, not cast); any number for an integer or boolean output, which has no derivative."""
    return cotangent == output or output.kind not in "fc"


def abstract(spec, node, leaf: Any, what: str, label: str) -> AVal:
    """The abstract value of one leaf the caller passes: a run-time leaf's own, or a number's."""
    if isinstance(leaf, Dyn):
        if leaf.aval is None:
            spec.fail(node, f"cannot tell the dtype and rank of {what} passed to numbax.{label}",
                      hint="pass arrays or numbers whose type numbax can see (an argument, or an expression "
                      "of arguments).")
        return leaf.aval
    if isinstance(leaf, (bool, int, float, complex, np.generic, np.ndarray)):
        return AVal.of(leaf)
    spec.fail(node, f"{what} holds a {type(leaf).__name__}, which numbax.{label} cannot take",
              hint="pass arrays, numbers or containers of them.")


def bind(transformed, spec, node, values: List[Any], label: str,
         inexact: Sequence[int] = ()) -> Tuple[Dict[str, Any], List[Any]]:
    """Parameter -> static value or a pytree of placeholders; and the leaves the call passes, in order.

    ``values`` are the call's arguments in parameter order; those at ``inexact`` must be floats (JAX's
    refusal of integer inputs to a derivative, made at the call)."""
    signature = transformed._signature
    bound: Dict[str, Any] = {}
    arguments: List[Any] = []
    for i, param in enumerate(signature.params):
        value = values[i]
        if i in signature.static:
            if contains_dyn(value):
                spec.fail(node, f"static argument `{param}` of {transformed!r} must be known at compile time")
            bound[param] = value
            continue
        leaves, treedef = tree_util.tree_flatten(value)
        avals = [abstract(spec, node, leaf, f"argument `{param}`", label) for leaf in leaves]
        if i in inexact:
            for aval in avals:
                if not np.issubdtype(aval.dtype, np.inexact):
                    spec.fail(node, f"{label} requires real-valued inputs, but argument `{param}` has dtype "
                              f"{aval.dtype.name}", hint="pass floats, or set allow_int=True.")
        bound[param] = tree_util.tree_unflatten(treedef, [Dyn(None, aval) for aval in avals])
        arguments.extend(leaves)
    return bound, arguments


def generate(transformed, spec, bound: Dict[str, Any], **options) -> Any:
    """``transformed._run_pipeline(bound, **options)``, run once per compilation for the same transformation,
    abstract values, static values and options (the generated code is read, never changed, by ``emit``)."""
    key = _generated_key(transformed, bound, options)
    if key is None:
        return transformed._run_pipeline(bound, **options)
    memo = spec.builder.generated
    if key not in memo:  # the transformation is held with its code: while the entry lives, its id is its own
        memo[key] = (transformed, transformed._run_pipeline(bound, **options))
    return memo[key][1]


def _generated_key(transformed, bound: Dict[str, Any], options: Dict[str, Any]) -> Optional[tuple]:
    """What a nested transformation's generated code depends on, or None where a static value is unhashable."""
    leaves, treedef = tree_util.tree_flatten(bound)
    key = (id(transformed), treedef, tuple(sorted(options.items())),
           tuple(leaf.aval if isinstance(leaf, Dyn) else _static_key(leaf) for leaf in leaves))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _static_key(value: Any) -> tuple:
    """A static value as generated code depends on it: its type, and for a number its spelling too (``0.0`` and
    ``-0.0`` are equal, and generated code may divide by either)."""
    if isinstance(value, (float, complex, np.inexact)):
        return type(value), repr(value)
    return type(value), value


def emit(spec, generated, arguments: List[Any], returns) -> Any:
    """Add the generated function to the caller's module and emit its call with ``arguments`` (then the
    constants it reads); its value, structured as ``returns`` says."""
    fdef = copy_tree(generated.module.body[-1])
    fdef.name = spec.builder.function_names.new(fdef.name)
    spec.builder.helpers.append(fdef)
    spec.builder.imports.update(generated.imports)
    constants = list(generated.constants.values())
    return spec.call_helper(Helper(node=fdef, arguments=list(arguments) + constants, returns=returns))


def checked_at_run_time(spec, node, check, value: Any, ndim: int, reference: Any) -> Any:
    """``value`` passed through ``check(value, reference)``, a Python function that raises JAX's error where
    their shapes differ, inlined at the call; an array's only (a number's shape is its rank's)."""
    return spec.call_python_function(node, check, [value, reference], {}) if ndim else value


def stop_after(spec) -> str:
    """The last pass an inner transformation runs: up to optimization inside a transformed caller (the
    outer transformation reads the core subset) or one the GPU backend lowers (which fuses into kernels
    itself, and reads no loop the CPU's fusion writes), else up to fusion."""
    return "optimize" if spec.builder.differentiated or spec.builder.examples_per_thread else "fuse"
