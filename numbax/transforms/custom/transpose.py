"""Reverse mode of a ``custom_jvp`` function: its rule's tangent output transposed by numbax's own reverse mode.

The rule's tangent output is linear in the tangents (JAX requires it, and JAX transposes that linear part).
So the cotangents of the arguments for the output's cotangent ``g`` are the gradient of ``<g, tangent_out>``
with respect to the tangents, at any tangents: ``transposed`` below, a function numbax compiles from its
source, takes it at zero tangents. Its gradient is generated at the call (``numbax.transforms.grad.nested``)
from the user's rule; the primal arguments are constants there.

While a function's rule is specialized for a call (its primal, forward and transposed code), a call of that
same function inside the rule (JAX's rules call it for the primal output) gets the rules being written for the
enclosing call (``SameAs``), which a transformation of the result reads; on operands of other abstract values
it has none (``lowering._inside_own_rule``).
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Iterator, List, Optional

import numpy as np

from numbax import tree_util
from numbax.ast_passes import pipeline
from numbax.ast_passes.specialize.compile_time import built_at_compile_time
from numbax.primitives.registry import CUSTOM
from numbax.primitives.templates import Rule
from numbax.transforms.custom import linearity
from numbax.transforms.grad.api import Differentiated


@dataclasses.dataclass
class Frame:
    """A custom_jvp function whose rule is being specialized for its call numbered ``number``, whose operands
    have the abstract values ``operands``; ``inner``: the numbers of its calls inside its own rule that share
    its rules."""

    custom: Any
    number: int
    operands: tuple
    inner: List[int] = dataclasses.field(default_factory=list)


_LOWERING: List[Frame] = []  # the innermost last


@contextlib.contextmanager
def lowering(frame: Frame) -> Iterator[None]:
    """While ``frame.custom``'s rule is specialized for its call (its primal, forward and transposed code)."""
    _LOWERING.append(frame)
    try:
        yield
    finally:
        _LOWERING.pop()


def enclosing(custom) -> Optional[Frame]:
    """The frame of ``custom``'s rule being specialized (a call of it now is inside its own rule), or None."""
    return next((f for f in reversed(_LOWERING) if f.custom is custom), None)


class SameAs(Rule):
    """The rule of ``mode`` (``"vjp"``, ``"jvp"``) of the call numbered ``number``, read when first used: that
    of a custom_jvp function's call inside its own rule, on operands like the enclosing call's, is the one
    being written for the enclosing call (a transformation of the result reads it)."""

    def __init__(self, number: int, mode: str):
        super().__init__()
        self.number = number
        self.mode = mode

    @property
    def template(self):
        return getattr(CUSTOM[self.number][1], self.mode).template


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
        rule = f"the custom_jvp rule of `{_LOWERING[-1].custom.name}`"
        linearity.check(anf, [a.id for a in anf.args.args[:count]], rule)
        return super()._run_pipeline(bound, after_pass, higher_order, general)


@built_at_compile_time
def linear_grad(fun):
    """The gradient of ``fun`` in its first argument, in which it must be linear (``_LinearGrad``)."""
    return _LinearGrad(fun)
