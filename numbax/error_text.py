"""The text of an error that compiled code raises: a constant template filled, in Python, with the numbers
the code raised it with.

Numba raises an exception with run-time arguments (ints, floats, strings, tuples of them) from nopython
mode, building it in Python when the exception reaches the interpreter. So compiled checks raise the
numbers a message needs and never write text themselves: ``str(int)`` and string concatenation in
nopython mode cost seconds of compilation on a function's first call.

Besides ``str.format``'s own, a replacement field takes three specs for shapes, written as NumPy writes
them in its messages:

>>> fill("shapes {:shape} and {:shape}; into {:newshape}; to {:broadcast}", (4,), (2, 3), (3, -1), ((2, 1), (3,)))
'shapes (4,) and (2,3); into (3,newaxis); to (2,3)'
"""
from __future__ import annotations

import string
from typing import Any, Sequence, Tuple

__all__ = ["fill"]


def _shape(shape: Sequence[int]) -> str:
    """``(4,)``, ``(2,3)``, ``()``."""
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _new_shape(shape: Sequence[int]) -> str:
    """The shape asked of ``reshape``: ``-1`` is ``newaxis``, and dropped when first."""
    parts = ["newaxis" if n == -1 else str(n) for k, n in enumerate(shape) if not (k == 0 and n == -1)]
    return "(" + ",".join(parts) + ("," if len(parts) == 1 and -1 not in shape else "") + ")"


def _broadcast(shapes: Tuple[Sequence[int], ...]) -> str:
    """The shape that ``shapes`` broadcast to: per dim from the right, the largest size."""
    ndim = max(len(shape) for shape in shapes)
    padded = [(1,) * (ndim - len(shape)) + tuple(shape) for shape in shapes]
    return _shape([max(sizes) for sizes in zip(*padded)])


class _Formatter(string.Formatter):
    """``str.format`` with the specs ``shape``, ``newshape`` and ``broadcast``."""

    SPECS = {"shape": _shape, "newshape": _new_shape, "broadcast": _broadcast}

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec in self.SPECS:
            return self.SPECS[format_spec](value)
        return super().format_field(value, format_spec)


_FORMATTER = _Formatter()


def fill(template: str, *values: Any) -> str:
    """``template`` with ``values`` in its replacement fields; with no values, ``template`` as it is (a
    message written out already, which may hold braces)."""
    return _FORMATTER.format(template, *values) if values else template
