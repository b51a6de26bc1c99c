"""arguments: check and normalise what users pass to ``numbax.random``, failing on the user's line."""
from __future__ import annotations

import linecache
import os
import sys
from typing import Optional, Sequence, Tuple, Union

import numpy as np

from numbax.origin import Origin
from numbax.errors import NumbaxError
from numbax.runtime.random.indices import FLOAT_DTYPES, inexact_type

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

Shape = Tuple[int, ...]


class NumbaxRandomArgumentError(NumbaxError, TypeError, ValueError):
    """A key, shape, dtype or distribution parameter that ``numbax.random`` cannot use."""


def _caller_origin() -> Optional[Origin]:
    """The first frame outside this package: the user's call of a ``numbax.random`` function."""
    frame = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back
    if frame is None:
        return None
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    line = linecache.getline(filename, lineno)
    return Origin(filename, lineno, len(line) - len(line.lstrip()), line, frame.f_code.co_name)


def fail(message: str, hint: str = "") -> NumbaxRandomArgumentError:
    """The error to raise for a bad argument, located at the user's call."""
    return NumbaxRandomArgumentError(message, _caller_origin(), hint)


def as_key(key, name: str) -> np.ndarray:
    """``key`` as the raw key it must be: a ``uint32`` array of shape ``(2,)``."""
    array = np.asarray(key)
    if array.shape != (2,) or array.dtype != np.uint32:
        raise fail(f"numbax.random.{name} expects a key, a uint32 array of shape (2,); got "
                   f"{array.dtype} of shape {array.shape}",
                   "make keys with numbax.random.PRNGKey(seed) and numbax.random.split(key); to draw with "
                   "several keys, loop over them")
    return array


def as_shape(shape: Union[int, Sequence[int]], name: str) -> Shape:
    """``shape`` as a tuple of non-negative Python ints (an int ``n`` means ``(n,)``, as in NumPy)."""
    dims = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise fail(f"numbax.random.{name}: shape must be a tuple of non-negative integers, got {shape!r}")
    return tuple(int(d) for d in dims)


def float_dtype(dtype, name: str) -> np.dtype:
    """The float dtype to sample: NumPy's default float64 for ``None``, else float32 or float64."""
    resolved = np.dtype(np.float64 if dtype is None else dtype)
    if resolved not in FLOAT_DTYPES:
        raise fail(f"numbax.random.{name} samples float32 or float64, not {resolved}",
                   "draw in float32 and convert with .astype() for other float types")
    return resolved


def inexact_dtype(dtype, name: str) -> np.dtype:
    """The float dtype to draw with a parameter of ``dtype``: its own, float64 for integers and booleans."""
    return float_dtype(inexact_type(dtype), name)


def check_broadcast(name: str, shape: Shape, *parameter_shapes: Shape) -> None:
    """Parameters of ``parameter_shapes`` must broadcast to exactly ``shape``, as JAX requires."""
    try:
        result = np.broadcast_shapes(shape, *parameter_shapes)
    except ValueError:
        result = None
    if result != shape:
        shapes = ", ".join(str(s) for s in parameter_shapes)
        raise fail(f"numbax.random.{name}: parameter shapes {shapes} do not broadcast to shape {shape}",
                   "pass a shape that the parameters broadcast to, or shape=None to take theirs")


def sample_shape(name: str, shape, *parameter_shapes: Optional[Shape]) -> Optional[Shape]:
    """The shape of a sample with parameters: ``shape``, which they must broadcast to, or theirs for ``None``.

    A parameter shape of ``None`` is known only when the kernel runs, which then checks it (and, for
    ``shape=None``, broadcasts it: the result is ``None`` too).
    """
    known = [s for s in parameter_shapes if s is not None]
    if shape is None:
        if len(known) < len(parameter_shapes):
            return None
        try:
            shape = np.broadcast_shapes(*known)
        except ValueError:
            raise fail(f"numbax.random.{name}: parameter shapes {', '.join(map(str, known))} do not broadcast "
                       "together") from None
    shape = as_shape(shape, name)
    check_broadcast(name, shape, *known)
    return shape


def parameter(value, dtype: np.dtype, shape: Shape) -> np.ndarray:
    """A distribution parameter in ``dtype``: a 0-d array, or a C-contiguous array of exactly ``shape``."""
    array = np.asarray(value, dtype)
    if array.ndim == 0:
        return array
    return np.broadcast_to(array, shape).copy()
