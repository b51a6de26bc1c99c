"""The dtype and ndim of each value of the host driver, found by NumPy itself on tiny stand-in values.

Kernels and allocations need exact dtypes (a shared-memory cache, an output array), which the call
signature fixes: each parameter gets a stand-in of its dtype and ndim (an array of ones of shape (1, ...), a
NumPy scalar, or a Python number where the argument was one: NumPy 2 promotes those weakly), and each
statement's expression is evaluated on them, so the result follows NumPy's promotion rules exactly. The
expressions evaluated are ones the lowering already accepted (elementwise math, reductions, products).
"""
from __future__ import annotations

import ast
import math
import warnings
from typing import Any, Dict, Tuple

import gast
import numpy as np

from numbax.ast_passes.specialize.values import AVal
from numbax.runtime.batching import batch_size
from numbax.runtime.special import erf, expit
from numbax.runtime.grad import (abs_slope, dsinc, ones_like, power_exponent, scalar_output, unbroadcast, unreduce,
                                 zeros_like)


class _HOST_RUNTIME:  # noqa: N801 - read as the module ``rt`` by the expressions evaluated
    """The helpers of ``numbax.runtime`` the driver's code calls: vmap's batch size, reverse mode's seeds and
    the exponent of a power's derivative on numbers, on the host; of arrays, and the broadcast of a
    reduction's cotangent and the sum of a broadcast's, launched (``launches``); the elementwise helpers that
    kernels compute (``primitives.cuda``)."""

    abs_slope = staticmethod(abs_slope)
    batch_size = staticmethod(batch_size)
    dsinc = staticmethod(dsinc)
    erf = staticmethod(erf)
    expit = staticmethod(expit)
    ones_like = staticmethod(ones_like)
    power_exponent = staticmethod(power_exponent)
    scalar_output = staticmethod(scalar_output)
    unbroadcast = staticmethod(unbroadcast)
    unreduce = staticmethod(unreduce)
    zeros_like = staticmethod(zeros_like)


def of_aval(aval: AVal) -> Any:
    """The stand-in of a parameter with this abstract value."""
    dtype = np.dtype(aval.dtype)
    if aval.ndim:
        return np.ones((1,) * aval.ndim, dtype)
    return dtype.type(1).item() if aval.weak else dtype.type(1)


def of_value(value: Any) -> Any:
    """The stand-in of a constant the code was specialized to."""
    array = np.asarray(value)
    return np.ones((1,) * array.ndim, array.dtype) if array.ndim else value


def evaluate(node: gast.expr, env: Dict[str, Any]) -> Any:
    """``node`` evaluated by NumPy on the stand-ins ``env``; raises what NumPy raises."""
    tree = ast.Expression(body=gast.gast_to_ast(node))
    for sub in ast.walk(tree):  # passes that moved nodes leave line ranges that compile refuses: one line here
        if "lineno" in sub._attributes:
            sub.lineno, sub.end_lineno, sub.col_offset, sub.end_col_offset = 1, 1, 0, 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        names = {"np": np, "math": math, "rt": _HOST_RUNTIME}
        return eval(compile(tree, "<numbax probe>", "eval"), names, dict(env))  # noqa: S307


def is_array(value: Any) -> bool:
    """Whether a stand-in stands for an array of one dimension or more (0-d values are numbers here)."""
    return isinstance(value, np.ndarray) and value.ndim > 0


def signature(value: Any) -> Tuple[Any, int]:
    """What must not change where control flow joins: dtype and ndim. A Python number and a NumPy scalar of
    one dtype agree (``err = 1.0`` before ``err = np.max(...)`` in a loop): the host holds either, and the
    kernels compiled for the first compute the second's values in the same dtype, as the CPU backend does."""
    return np.asarray(value).dtype, np.ndim(value)
