"""Reverse mode of a ``custom_jvp`` function: its rule's tangent output transposed by numbax's own reverse mode.

The rule's tangent output is linear in the tangents (JAX requires it, and JAX transposes that linear part).
So the cotangents of the arguments for the output's cotangent ``g`` are the gradient of ``<g, tangent_out>``
with respect to the tangents, at any tangents: ``transposed`` below, a function numbax compiles from its
source, takes it at zero tangents. Its gradient is generated at the call (``numbax.transforms.grad.nested``)
from the user's rule; the primal arguments are constants there.

While a function's rule is transposed, a call of that same function inside the rule (JAX's rules call it
for the primal output) gets its forward rule only: it is not differentiated there unless the rule's tangent
flows into it, which is not linear, and is then refused (``lowering``).
"""
from __future__ import annotations

import contextlib
from typing import Iterator, List

import numpy as np

from numbax import tree_util
from numbax.ast_passes import pipeline
from numbax.ast_passes.specialize.compile_time import built_at_compile_time
from numbax.transforms.custom import linearity
from numbax.transforms.grad.api import Differentiated

_TRANSPOSING: List = []  # the custom_jvp functions whose rules are being transposed, the innermost last


@contextlib.contextmanager
def transposing(custom) -> Iterator[None]:
    """While ``custom``'s rule is transposed."""
    _TRANSPOSING.append(custom)
    try:
        yield
    finally:
        _TRANSPOSING.pop()


def is_transposing(custom) -> bool:
    """Whether ``custom``'s rule is being transposed (a call of it now is inside its own rule)."""
    return any(c is custom for c in _TRANSPOSING)


def transposed(rule, kept, primals, g):
    """The cotangents of ``primals`` (a tuple, as the rule takes them) for the cotangent ``g`` of the output
    of the rule ``rule(*kept, primals, tangents)``: the gradient of ``<g, tangent_out>`` in the tangents."""
    def paired(tangents):
        return np.sum(g * rule(*kept, primals, tangents)[1])

    return linear_grad(paired)(tree_util.tree_map(np.zeros_like, primals))


class _LinearGrad(Differentiated):
    """``grad`` of the rule paired with the cotangent, after checking that the rule is linear in the tangents
    (``linearity``)."""

    def _run_pipeline(self, bound, after_pass=None, higher_order=False, general=False):
        anf = pipeline.run(self._source(), bound, label="custom_jvp rule", after_pass="anf").module.body[-1]
        count = len(tree_util.tree_leaves(bound[self._signature.params[0]]))
        linearity.check(anf, [a.id for a in anf.args.args[:count]], f"the custom_jvp rule of `{_TRANSPOSING[-1].name}`")
        return super()._run_pipeline(bound, after_pass, higher_order, general)


@built_at_compile_time
def linear_grad(fun):
    """The gradient of ``fun`` in its first argument, in which it must be linear (``_LinearGrad``)."""
    return _LinearGrad(fun)
