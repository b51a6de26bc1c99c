"""Lowerings of ``permutation``, ``choice`` and ``categorical``: the Python functions' checks, then their kernels
and gathers (``selection.py``), on arrays known only at run time as well as on constants.

Whether ``x`` (or ``a``) is an int or an array, and the dtypes drawn in, come from the abstract values of
run-time arguments; the axis and ``replace`` must be known at compile time, and so must ``categorical``'s shape;
``choice``'s shape may have run-time dims (``(x.shape[0],)``, ``n``) as ``normal``'s may, where ``a`` is an int
or has one axis.
"""
from __future__ import annotations

import numpy as np

from numbax.ast_passes.specialize.values import Dyn, contains_dyn
from numbax.random import selection
from numbax.random.arguments import inexact_dtype
from numbax.random.lowering import array_info, emit, key_of, sample_shape_of, static, typed


def _lower_permutation(spec, node, b):
    """``permutation(key, n)`` -> ``rt.random_permutation(key, n)``; of an array, ``selection.permute`` compiled."""
    key, x = key_of(spec, node, b["key"], "permutation"), b["x"]
    ndim, dtype = array_info(spec, node, x, "x", "permutation")
    if selection.permutation_of_range(ndim, dtype):
        return emit(spec, node, "random_permutation", [key, spec.scalar_of(x)], np.int64, 1)
    axis = static(spec, node, b["axis"], "axis", "permutation") % ndim
    independent = bool(static(spec, node, b["independent"], "independent", "permutation"))
    return typed(spec.call_value(node, selection.permute, [key, x, axis, independent], {}), dtype, ndim)


def _lower_choice(spec, node, b):
    """``choice(key, a, shape, replace, p, axis)`` -> ``selection.draw_choice`` compiled; ``a`` and ``p`` may be
    run-time values, and ``shape``'s dims too (its length known), the counts then checked by the kernels."""
    key, a, p = key_of(spec, node, b["key"], "choice"), b["a"], b["p"]
    shape, shape_ndim = sample_shape_of(spec, node, b["shape"], "choice")
    replace = bool(static(spec, node, b["replace"], "replace", "choice"))
    ndim, dtype = array_info(spec, node, a, "a", "choice")
    from_range = ndim == 0
    axis = 0 if from_range else static(spec, node, b["axis"], "axis", "choice") % ndim
    if ndim > 1 and contains_dyn(shape):
        spec.fail(node, "numbax.random.choice's shape must be known at compile time inside compiled code where a has "
                  "more than one axis", hint="pass the shape as a static argument, or draw outside the compiled "
                  "function.")
    if not isinstance(a, Dyn) and not contains_dyn(shape):
        selection.check_choice_counts(int(a) if from_range else np.shape(a)[axis], shape, replace,
                                      None if p is None or isinstance(p, Dyn) else np.shape(p))
    result = spec.call_value(node, selection.draw_choice, [key, spec.scalar_of(a) if from_range else a, shape,
                                                           replace, p, axis, from_range], {})
    if from_range:
        return typed(result, np.int64, shape_ndim)
    return typed(result, dtype, ndim - 1 + shape_ndim)


def _lower_categorical(spec, node, b):
    """``categorical(key, logits, axis, shape)`` -> ``selection.draw_categorical`` compiled."""
    key, logits = key_of(spec, node, b["key"], "categorical"), b["logits"]
    ndim, dtype = array_info(spec, node, logits, "logits", "categorical")
    axis, shape = selection.categorical_arguments(
        None if isinstance(logits, Dyn) else np.shape(logits), ndim,
        static(spec, node, b["axis"], "axis", "categorical"), static(spec, node, b["shape"], "shape", "categorical"))
    result = spec.call_value(node, selection.draw_categorical,
                             [key, logits, axis, shape, inexact_dtype(dtype, "categorical").type], {})
    return typed(result, np.int64, ndim - 1 if shape is None else len(shape))


LOWERINGS = {"permutation": _lower_permutation, "choice": _lower_choice, "categorical": _lower_categorical}
