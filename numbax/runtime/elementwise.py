"""One array operation (``a * b``, ``-a``, ``np.sqrt(a)``), compiled once per machine and called.

Numba lowers an operator or ufunc on arrays as a loop over the broadcast shape, with an index per operand
that stays at 0 along its broadcast axes, in every function that applies it, and at its default optimization
level LLVM vectorizes and unrolls that loop each time: 50 such statements were most of the 10.3 s that LLVM
spent on a two-layer MLP's Adam step. The backend (``numbax.backends.numba_cpu.array_expressions``) calls the
helper here instead for an operation outside loops that no other feeds or is fed by, so the loop is compiled
once per machine and argument types and loaded from the runtime's cache (``numbax.runtime.cached``) after.

Each helper's implementation is the operation itself, as generated code writes it (``a % b``, not
``operator.mod(a, b)``), compiled by Numba's own pipeline, array-expression rewrite included: it computes
the bits Numba computes for the statement (the backend lowers some single operations as their own loop,
where ``tests/test_array_expressions.py`` checks that both give the same bits).
"""
from __future__ import annotations

import operator
from typing import Callable, Dict, Optional

import numpy as np
from numba.np import ufunc_db

from numbax.runtime.cached import overload
from numbax.runtime.loops import compile_source

# each operator as generated code writes it, applied to the parameters a (and b)
_OPERATORS = {
    operator.add: "a + b", operator.sub: "a - b", operator.mul: "a * b", operator.truediv: "a / b",
    operator.floordiv: "a // b", operator.mod: "a % b", operator.pow: "a ** b", operator.lshift: "a << b",
    operator.rshift: "a >> b", operator.and_: "a & b", operator.or_: "a | b", operator.xor: "a ^ b",
    operator.eq: "a == b", operator.ne: "a != b", operator.lt: "a < b", operator.le: "a <= b",
    operator.gt: "a > b", operator.ge: "a >= b", operator.neg: "-a", operator.pos: "+a", operator.invert: "~a",
}


def _helper(name: str, arity: int, expression: str) -> Callable:
    """A runtime function ``name`` of ``a`` (and ``b``, for ``arity`` 2) computing ``expression``, compiled once
    per machine for arrays."""
    body = f"({'a' if arity == 1 else 'a, b'}):\n    return {expression}\n"
    namespace = {"np": np}
    exec(f"def {name}{body}", namespace)
    helper = namespace[name]
    helper.__module__ = __name__
    helper.__doc__ = f"``{expression}``, compiled once per machine for arrays."
    kernel = f"def impl{body}"

    def binary(a, b):
        return compile_source(kernel)

    def unary(a):
        return compile_source(kernel)

    overload(helper, called=True)(unary if arity == 1 else binary)
    return helper


_UNARY = (operator.neg, operator.pos, operator.invert)

# an operator function or NumPy ufunc -> its helper
HELPERS: Dict[object, Callable] = {fn: _helper(f"operator_{fn.__name__}", 1 if fn in _UNARY else 2, expression)
                                   for fn, expression in _OPERATORS.items()}
HELPERS.update({ufunc: _helper(f"ufunc_{ufunc.__name__}", ufunc.nin,
                               f"np.{ufunc.__name__}({'a' if ufunc.nin == 1 else 'a, b'})")
                for ufunc in ufunc_db.get_ufuncs()
                if isinstance(ufunc, np.ufunc) and ufunc.nout == 1 and ufunc.nin in (1, 2)
                and getattr(np, ufunc.__name__, None) is ufunc})


def helper_for(operation: object) -> Optional[Callable]:
    """The helper that computes ``operation`` (an operator function or a NumPy ufunc), or None."""
    return HELPERS.get(operation)
