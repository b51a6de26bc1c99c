"""Shape manipulation, rearrangements, selections and sequences of arrays.

Reverse mode undoes each: a reshape by ``rt.reshape_like``, a transpose by the inverse permutation, a join
by splitting the cotangent (a tuple, one entry per array), a split by joining (the template's ``g`` is then
a list, one cotangent per result).
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import gast
import numpy as np

from numbax import runtime as rt
from numbax.primitives import batching, kinds, symbolic
from numbax.primitives.registry import def_methods, define, defjvp, defvjp

_KEEP = dict(aval=kinds.elementwise())  # the operand's kind and ndim


def _reshape(app, args):
    """``np.reshape(a, shape)``: ``a``'s kind, as many axes as the shape has (a number: one)."""
    shape = kinds.argument(app, 1, "newshape")
    if not args or args[0] is None or shape is None:
        return None
    if isinstance(shape, gast.Tuple):
        return (args[0][0], len(shape.elts))
    if isinstance(shape, (gast.Constant, gast.UnaryOp)):
        return (args[0][0], 1)
    return None


def _flat(app, args):
    """One axis, of the operand's kind; unknown where the operand's is (a float32 array's, whose kind is not
    ``"f"``, float64's)."""
    return (args[0][0], 1) if args and args[0] else None


@defvjp(np.reshape, np.ravel, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d, np.atleast_3d)
def reshape(g, ans, a, newshape=None):
    d[a] = rt.reshape_like(g, a)


define(np.reshape, rt.reshape, aval=_reshape)


def _reshape_rows(node, operands, keywords, rows):
    """``x.reshape(shape)`` of rows of ``x``: each row to ``shape`` (a tuple written out), the rows kept."""
    if len(operands) != 2 or keywords or not operands[0].batched or operands[1].batched \
            or not isinstance(operands[1].expr, gast.Tuple):
        return None
    shape = batching.with_rows(operands[1].expr, rows)
    return batching.applied(node, [operands[0].expr, shape])


define(np.reshape, rt.reshape, batch=_reshape_rows)
define(np.ravel, aval=_flat)


@defvjp(np.squeeze, np.expand_dims)
def squeeze(g, ans, a, axis=None):
    d[a] = rt.reshape_like(g, a)


def _expand_dims(app, args):
    return (args[0][0], args[0][1] + 1) if args and args[0] else None


define(np.expand_dims, aval=_expand_dims)


def _squeezed(app, args):
    """The operand's kind; its ndim less the axes named (all its axes of length 1 without: unknown)."""
    axis = kinds.constant_value(kinds.argument(app, 1, "axis"))
    if not (args and args[0]) or axis is None or axis is kinds.UNKNOWN:
        return None
    return (args[0][0], args[0][1] - (len(axis) if isinstance(axis, tuple) else 1))


def _at_least(ndim: int):
    """``np.atleast_1d`` (``ndim`` 1), ``_2d``, ``_3d`` of one operand: its kind, at least ``ndim`` axes."""
    def rule(app, args):
        return (args[0][0], max(args[0][1], ndim)) if len(app.args) == 1 and args[0] else None

    return rule


define(np.squeeze, aval=_squeezed)
define(np.atleast_1d, aval=_at_least(1))
define(np.atleast_2d, aval=_at_least(2))
define(np.atleast_3d, aval=_at_least(3))


@defvjp(np.transpose, aval=kinds.elementwise(), shape=symbolic.reversed_axes)
def transpose(g, ans, a, axes=None):
    d[a] = np.transpose(g) if axes is None else np.transpose(g, rt.inverse_axes(axes))


define(np.permute_dims, aval=kinds.elementwise(), shape=symbolic.reversed_axes)


@defvjp(np.swapaxes, **_KEEP)
def swapaxes(g, ans, a, axis1, axis2):
    d[a] = np.swapaxes(g, axis1, axis2)


@defvjp(np.moveaxis, **_KEEP)
def moveaxis(g, ans, a, source, destination):
    d[a] = np.moveaxis(g, destination, source)


def _broadcast_to(app, args):
    """The array's kind, with as many axes as ``shape`` has (a tuple display, or one int written as a constant)."""
    shape = kinds.argument(app, 1, "shape")
    if not (args and args[0]):
        return None
    if isinstance(shape, (gast.Tuple, gast.List)) and not any(isinstance(e, gast.Starred) for e in shape.elts):
        return (args[0][0], len(shape.elts))
    return (args[0][0], 1) if isinstance(kinds.constant_value(shape), int) else None


@defvjp(np.broadcast_to, aval=_broadcast_to)
def broadcast_to(g, ans, array, shape):
    d[array] = rt.unbroadcast(g, array)


@defvjp(np.triu, **_KEEP)
def triu(g, ans, m, k=0):
    d[m] = np.triu(g, k)


@defvjp(np.tril, **_KEEP)
def tril(g, ans, m, k=0):
    d[m] = np.tril(g, k)


@defvjp(np.sort, **_KEEP)
def sort(g, ans, a, axis=-1):
    d[a] = rt.sort_grad(g, a, axis)


def _diag(app, args):
    """A vector's diagonal matrix, a matrix's diagonal."""
    return (args[0][0], 2 if args[0][1] == 1 else 1) if args and args[0] else None


@defvjp(np.diag, aval=_diag)
def diag(g, ans, v, k=0):
    d[v] = rt.diag_grad(g, v, k)


def _diagonal(app, args):
    """One axis fewer (a matrix's diagonal is a vector); unknown where the operand is."""
    return (args[0][0], max(args[0][1] - 1, 1)) if args and args[0] else None


@defvjp(np.diagonal, aval=_diagonal)
def diagonal(g, ans, a, offset=0, axis1=0, axis2=1):
    d[a] = rt.diagonal_grad(g, a, offset, axis1, axis2)


define(rt.diagonal, aval=_diagonal)


@defvjp(np.flip, **_KEEP)
def flip(g, ans, m, axis=None):
    d[m] = np.flip(g) if axis is None else np.flip(g, axis)


define(np.fliplr, np.flipud, rt.flip, rt.sort, **_KEEP)


@defvjp(np.roll, **_KEEP)
def roll(g, ans, a, shift, axis=None):
    d[a] = np.roll(g, -shift) if axis is None else np.roll(g, -shift, axis)


define(rt.roll, **_KEEP)


def _tiled(app, args):
    """The operand's kind, at least as many axes as ``reps`` has (written as a constant)."""
    reps = kinds.constant_value(kinds.argument(app, 1, "reps"))
    if not (args and args[0]) or reps is None or reps is kinds.UNKNOWN:
        return None
    return (args[0][0], max(args[0][1], len(reps) if isinstance(reps, tuple) else 1))


@defvjp(np.tile, aval=_tiled)
def tile(g, ans, A, reps):
    d[A] = rt.tile_grad(g, A, reps)


def _repeated(app, args):
    """The operand's kind; one axis without ``axis``, else its own."""
    if not (args and args[0]):
        return None
    return (args[0][0], args[0][1] if kinds.given_axis(app, 2) else 1)


@defvjp(np.repeat, aval=_repeated)
def repeat(g, ans, a, repeats, axis=None):
    d[a] = rt.repeat_grad(g, a, repeats, axis)


@defvjp(np.pad, aval=kinds.same_as(0))  # the array's dtype and ndim, whatever the widths
def pad(g, ans, array, pad_width, mode="constant", constant_values=0):
    d[array] = rt.pad_grad(g, array, pad_width, mode)


# Sequences of arrays: the rule's cotangent is a tuple, one entry per element.

@defvjp(np.concatenate)
def concatenate(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] = rt.concatenate_grad(g, arrays, axis)


@defvjp(np.stack)
def stack(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] = rt.stack_grad(g, arrays, axis)


@defvjp(np.hstack)
def hstack(g, ans, tup, dtype=None, casting="same_kind"):
    d[tup] = rt.hstack_grad(g, tup)


@defvjp(np.vstack)
def vstack(g, ans, tup, dtype=None, casting="same_kind"):
    d[tup] = rt.vstack_grad(g, tup)


# Functions returning a list, indexed: the cotangent ``g`` is a list, one entry per result.

@defvjp(np.split, sequence=True)
def split(g, ans, ary, indices_or_sections, axis=0):
    d[ary] = rt.split_grad(g, ary, indices_or_sections, axis)


def_methods({"reshape": np.reshape, "ravel": np.ravel, "flatten": np.ravel, "squeeze": np.squeeze,
             "transpose": np.transpose, "T": np.transpose, "swapaxes": np.swapaxes, "diagonal": np.diagonal,
             "repeat": np.repeat})

define(np.concatenate, aval=kinds.joined(new_axis=False), shape=symbolic.concatenated)
define(np.stack, aval=kinds.joined(new_axis=True), shape=symbolic.stacked)

# Checked against JAX for complex operands (tests/test_grad_complex.py)
define(np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.broadcast_to, np.triu, np.tril, np.diag,
       np.diagonal, np.flip, np.roll, np.tile, np.pad, np.concatenate, np.stack, np.hstack, np.vstack,
       np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.repeat, complex_verified=True)


# Forward mode: ``g`` is the operand's tangent, the line its part of the result's tangent


@defjvp(np.reshape, np.ravel, np.atleast_1d, np.atleast_2d, np.atleast_3d)
def reshape_jvp(g, ans, a, newshape=None):
    d[a] = rt.reshape_like(g, ans)


@defjvp(np.squeeze, np.expand_dims)
def squeeze_jvp(g, ans, a, axis=None):
    d[a] = rt.reshape_like(g, ans)


@defjvp(np.transpose)
def transpose_jvp(g, ans, a, axes=None):
    d[a] = np.transpose(g) if axes is None else np.transpose(g, axes)


@defjvp(np.swapaxes)
def swapaxes_jvp(g, ans, a, axis1, axis2):
    d[a] = np.swapaxes(g, axis1, axis2)


@defjvp(np.flip)
def flip_jvp(g, ans, m, axis=None):
    d[m] = np.flip(g) if axis is None else np.flip(g, axis)


@defjvp(np.roll)
def roll_jvp(g, ans, a, shift, axis=None):
    d[a] = np.roll(g, shift) if axis is None else np.roll(g, shift, axis)


@defjvp(np.triu)
def triu_jvp(g, ans, m, k=0):
    d[m] = np.triu(g, k)


@defjvp(np.tril)
def tril_jvp(g, ans, m, k=0):
    d[m] = np.tril(g, k)


@defjvp(np.diag)
def diag_jvp(g, ans, v, k=0):
    d[v] = np.diag(g, k)


@defjvp(np.diagonal)
def diagonal_jvp(g, ans, a, offset=0, axis1=0, axis2=1):
    d[a] = np.diagonal(g, offset, axis1, axis2)


@defjvp(np.moveaxis)
def moveaxis_jvp(g, ans, a, source, destination):
    d[a] = np.moveaxis(g, source, destination)


@defjvp(np.broadcast_to)
def broadcast_to_jvp(g, ans, array, shape):
    d[array] = np.broadcast_to(g, shape)


@defjvp(np.tile)
def tile_jvp(g, ans, A, reps):
    d[A] = np.tile(g, reps)


@defjvp(np.repeat)
def repeat_jvp(g, ans, a, repeats, axis=None):
    d[a] = np.repeat(g, repeats) if axis is None else np.repeat(g, repeats, axis)


@defjvp(np.sort)
def sort_jvp(g, ans, a, axis=-1):
    """The tangent in the order that sorts ``a`` (a tie keeps the stable order, as JAX's)."""
    d[a] = rt.sort_gather(g, a, axis)


@defjvp(np.pad)
def pad_jvp(g, ans, array, pad_width, mode="constant", constant_values=0):
    """Linear in ``array`` for every mode; the constant padded is the tangent of a constant, 0."""
    d[array] = np.pad(g, pad_width) if mode == "constant" else np.pad(g, pad_width, mode)


# Sequences of arrays: ``g`` is the tuple of the elements' tangents.

@defjvp(np.concatenate)
def concatenate_jvp(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] = np.concatenate(g, axis)


@defjvp(np.stack)
def stack_jvp(g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] = np.stack(g, axis)


@defjvp(np.hstack)
def hstack_jvp(g, ans, tup, dtype=None, casting="same_kind"):
    d[tup] = np.hstack(g)


@defjvp(np.vstack)
def vstack_jvp(g, ans, tup, dtype=None, casting="same_kind"):
    d[tup] = np.vstack(g)


@defjvp(np.split)
def split_jvp(g, ans, ary, indices_or_sections, axis=0):
    d[ary] = np.split(g, indices_or_sections, axis)
