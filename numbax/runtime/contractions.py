"""contractions: ``np.einsum``, ``np.inner``, ``np.tensordot`` and ``np.matmul`` (any ndim), and their adjoints.

Numba compiles none of ``np.einsum``, ``np.inner``, ``np.tensordot`` or
``np.matmul``, and ``@`` only on 1-D and 2-D operands. Each of them is one
einsum: a ``Spec`` gives every axis of every operand a letter (an ellipsis
spelled out for the operands' ndims, batch axes of ``matmul`` broadcast as an
ellipsis is), and the result keeps the output's letters. In Python each helper
is NumPy itself; inside ``numba.njit`` code an ``overload`` parses the spec at
typing time (the subscripts must be a literal string, the tensordot axes
constants) and compiles a **generated explicit loop nest** for it: the loops
over the output's letters outside, the summed letters inside, accumulating in
a local. ``a @ b`` on two operands of at most two dimensions stays Numba's
(BLAS); past that, ``@`` itself gets the loop nest, so generated code keeps
the operator. Sizes of 1 broadcast against any other size, as in NumPy.

The adjoint of operand ``k`` (``einsum_vjp``, ...) is the same nest with the
operand's letters outside: ``out[i, j] += g[i, k] * b[j, k]``; repeated
letters write a diagonal (``'ii->'``), letters the operand alone has are
broadcast back, and broadcast axes of size 1 are summed.

Float operands of two dtypes (a float32 primal meeting a float64 cotangent or tangent) go to ``@``,
``np.dot`` and ``np.linalg.solve`` promoted to the one dtype NumPy gives: Numba's own take one dtype.

    >>> import numba
    >>> a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    >>> numba.njit(lambda a, b: einsum('ij,j->i', a, b))(a, b)
    array([ 5., 14.])
    >>> numba.njit(lambda g, a, b: einsum_vjp(g, 1, 'ij,j->i', a, b))(np.ones(2), a, b)
    array([3., 5., 7.])
"""
from __future__ import annotations

import collections
import dataclasses
import operator
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

from numbax.runtime.cached import overload
from numbax.runtime.loops import INDENT, compile_source, numpy_type
from numbax.runtime.statics import static

__all__ = ["einsum", "inner", "vdot", "tensordot", "matmul", "dot", "einsum_vjp", "inner_vjp", "tensordot_vjp",
           "matmul_vjp", "explicit_subscripts", "ContractionShapeError", "check_contraction"]

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclasses.dataclass(frozen=True)
class Spec:
    """A contraction: the letters of each operand's axes, and the result's (each letter at most once)."""

    inputs: Tuple[str, ...]
    output: str

    def letters(self) -> str:
        """Every letter, the output's first, then the summed ones in order of appearance."""
        return "".join(dict.fromkeys(self.output + "".join(self.inputs)))


# ---- subscripts --------------------------------------------------------------------------------


def _split(subscripts: str) -> Tuple[List[str], Optional[str]]:
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    for part in inputs.split(",") + ([output] if arrow else []):
        body = part.replace("...", "", 1)
        if not all(c in _LETTERS for c in body):
            raise ValueError(f"einsum: invalid subscripts {subscripts!r}")
    return inputs.split(","), (output if arrow else None)


def explicit_subscripts(subscripts: str) -> str:
    """``subscripts`` without spaces and with the output spelled (NumPy's implicit mode made explicit).

    >>> explicit_subscripts('ij, jk')
    'ij,jk->ik'
    >>> explicit_subscripts('...ij,...jk')
    '...ij,...jk->...ik'
    """
    inputs, output = _split(subscripts)
    if output is None:
        letters = "".join(inputs).replace("...", "")
        ellipsis = "..." if any("..." in s for s in inputs) else ""
        output = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return ",".join(inputs) + "->" + output


def parse(subscripts: str, ndims: Sequence[int]) -> Spec:
    """The ``Spec`` of ``np.einsum(subscripts, *operands)`` for operands of ``ndims``; ValueError if invalid."""
    inputs, output = _split(explicit_subscripts(subscripts))
    if len(inputs) != len(ndims):
        raise ValueError(f"einsum: {subscripts!r} names {len(inputs)} operands, got {len(ndims)}")
    used = set("".join(inputs) + output)
    spare = [c for c in _LETTERS if c not in used]
    width = max([n - len(s.replace("...", "")) for s, n in zip(inputs, ndims) if "..." in s] or [0])
    ellipsis = "".join(spare[:width])
    spelled = []
    for s, n in zip(inputs, ndims):
        named = len(s.replace("...", ""))
        if ("..." in s and named > n) or ("..." not in s and named != n):
            raise ValueError(f"einsum: operand {len(spelled)} has {n} dimensions, {s!r} names {named}")
        spelled.append(s.replace("...", ellipsis[width - (n - named):] if n > named else ""))
    result = output.replace("...", ellipsis)
    if len(set(result)) != len(result) or not set(result) <= set("".join(spelled)):
        raise ValueError(f"einsum: output subscripts of {subscripts!r} must name input letters once each")
    return Spec(tuple(spelled), result)


def _axes_list(axes) -> List[int]:
    return [axes] if isinstance(axes, int) else list(axes)


def tensordot_spec(na: int, nb: int, axes) -> Spec:
    """``np.tensordot(a, b, axes)`` as a contraction (``axes``: an int or a pair of ints or sequences)."""
    if isinstance(axes, int):
        a_axes, b_axes = list(range(na - axes, na)), list(range(axes))
    else:
        a_axes, b_axes = (_axes_list(x) for x in axes)
    if len(a_axes) != len(b_axes):
        raise ValueError("tensordot: shape-mismatch for sum")
    a_axes, b_axes = [i % na for i in a_axes], [j % nb for j in b_axes]
    sa, sb = list(_LETTERS[:na]), list(_LETTERS[na:na + nb])
    for i, j in zip(a_axes, b_axes):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in a_axes] + [c for j, c in enumerate(sb) if j not in b_axes]
    return Spec(("".join(sa), "".join(sb)), "".join(out))


def inner_spec(na: int, nb: int) -> Spec:
    """``np.inner(a, b)``: the last axes summed (a product where either is a scalar)."""
    if na == 0 or nb == 0:
        return Spec((_LETTERS[:na], _LETTERS[:nb]), _LETTERS[:max(na, nb)])
    return tensordot_spec(na, nb, ([-1], [-1]))


def dot_spec(na: int, nb: int) -> Spec:
    """``np.dot(a, b)``: a product where either is a scalar, else the last axis of ``a`` summed with ``b``'s only
    axis or its second-to-last."""
    if na == 0 or nb == 0:
        return inner_spec(na, nb)
    return tensordot_spec(na, nb, ([-1], [-1 if nb == 1 else -2]))


def matmul_spec(na: int, nb: int) -> Spec:
    """``np.matmul(a, b)``: the batch axes broadcast, 1-D operands promoted and their axis dropped."""
    if na == 0 or nb == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a_core, b_core = ("ij" if na > 1 else "j"), ("jk" if nb > 1 else "j")
    out_core = ("i" if na > 1 else "") + ("k" if nb > 1 else "")
    return parse(f"...{a_core},...{b_core}->...{out_core}", (na, nb))


# ---- loop nests ----------------------------------------------------------------------------------


@register_jitable
def _merge(n, size):
    """The broadcast size of one letter, given the size seen so far and another operand's."""
    if size == n or size == 1:
        return n
    if n != 1:
        raise ValueError("einsum: operands could not be broadcast together")
    return size


def _sizes(spec: Spec, names: Sequence[str], exact: str = "") -> Tuple[List[str], Dict[Tuple[int, int], str]]:
    """Lines that set ``n_<letter>``, and the index factor of each broadcastable (operand, axis); a letter in
    ``exact`` has one size in every operand (``tensordot``'s summed axes: NumPy broadcasts no size of 1 there)."""
    seen: Dict[str, List[Tuple[int, int]]] = {}
    for o, letters in enumerate(spec.inputs):
        for d, c in enumerate(letters):
            seen.setdefault(c, []).append((o, d))
    lines, factors = [], {}
    for c, where in seen.items():
        (o, d), rest = where[0], where[1:]
        lines.append(f"n_{c} = {names[o]}.shape[{d}]")
        if c in exact:
            lines += [line for p, e in rest for line in (f"if n_{c} != {names[p]}.shape[{e}]:",
                                                        f"{INDENT}raise ValueError('shape-mismatch for sum')")]
            continue
        lines += [f"n_{c} = merge(n_{c}, {names[p]}.shape[{e}])" for p, e in rest]
        if rest:
            for p, e in where:
                factors[p, e] = f"m{p}_{e}"
                lines.append(f"m{p}_{e} = 1 if {names[p]}.shape[{e}] == n_{c} else 0")
    return lines, factors


def _element(name: str, letters: str, operand: Optional[int], factors, scalar: bool) -> str:
    if scalar:
        return name
    if not letters:
        return f"{name}[()]"
    index = [f"i_{c} * {factors[operand, d]}" if (operand, d) in factors else f"i_{c}" for d, c in enumerate(letters)]
    return f"{name}[{', '.join(index)}]"


def _nest(outer: str, inner: str, head: List[str], body: List[str], tail: List[str]) -> List[str]:
    """Loops over ``outer`` then ``inner`` letters: ``head`` before the inner loops, ``tail`` after."""
    lines = [INDENT * d + f"for i_{c} in range(n_{c}):" for d, c in enumerate(outer)]
    depth = len(outer)
    lines += [INDENT * depth + line for line in head]
    lines += [INDENT * (depth + d) + f"for i_{c} in range(n_{c}):" for d, c in enumerate(inner)]
    lines += [INDENT * (depth + len(inner)) + line for line in body]
    return lines + [INDENT * depth + line for line in tail]


def _function(signature: str, operands: Sequence[str], lines: List[str]) -> str:
    """``def impl(signature)`` that names the operands ``o0, o1, ...`` and runs ``lines``."""
    names = [f"o{i} = {source}" for i, source in enumerate(operands) if source != f"o{i}"]
    return "\n".join([f"def impl({signature}):"] + [INDENT + line for line in names + lines])


def contraction_source(spec: Spec, scalars: Sequence[bool], dtype: np.dtype, signature: str,
                       operands: Sequence[str], exact: str = "") -> str:
    """``impl(signature)``: the contraction of ``spec`` over ``operands`` (their sources), a scalar when
    the output has no letters; the letters in ``exact`` may not broadcast a size of 1 (``_sizes``)."""
    names = [f"o{i}" for i in range(len(spec.inputs))]
    lines, factors = _sizes(spec, names, exact)
    out = spec.output
    summed = "".join(c for c in spec.letters() if c not in out)
    logical = np.dtype(dtype) == np.bool_  # NumPy's contraction of booleans: any of the elementwise ands
    product = (" & " if logical else " * ").join(_element(n, s, o, factors, scalar)
                                                  for o, (n, s, scalar) in enumerate(zip(names, spec.inputs, scalars)))
    zero = f"{numpy_type(dtype)}(0)"
    accumulate = f"s {'|' if logical else '+'}= {product}"
    if not out:  # in the result's dtype: Numba adds int8 numbers as int64 (NumPy's int8 sum wraps around)
        lines += [f"s = {zero}"] + _nest("", summed, [], [accumulate], []) + [f"return {numpy_type(dtype)}(s)"]
    else:
        shape = "".join(f"n_{c}, " for c in out)
        lines.append(f"out = np.empty(({shape}), {numpy_type(dtype)})")
        store = f"out[{', '.join(f'i_{c}' for c in out)}] = s"
        lines += _nest(out, summed, [f"s = {zero}"], [accumulate], [store])
        lines.append("return out")
    return _function(signature, operands, lines)


def adjoint_source(spec: Spec, k: int, scalars: Sequence[bool], g_scalar: bool, dtype: np.dtype, signature: str,
                   operands: Sequence[str]) -> str:
    """``impl(signature)``: the cotangent ``g`` sent back to operand ``k`` (with its shape)."""
    names = [f"o{i}" for i in range(len(spec.inputs))]
    lines, factors = _sizes(spec, names)
    own = "".join(dict.fromkeys(spec.inputs[k]))
    rest = "".join(c for c in spec.letters() if c not in own)
    terms = [_element("g", spec.output, None, {}, g_scalar)]
    terms += [_element(n, s, o, factors, sc) for o, (n, s, sc) in enumerate(zip(names, spec.inputs, scalars)) if o != k]
    zero = f"{numpy_type(dtype)}(0)"
    target = _element("out", spec.inputs[k], k, factors, False)
    lines.append(f"out = np.zeros(o{k}.shape, {numpy_type(dtype)})")
    lines += _nest(own, rest, [f"s = {zero}"], [f"s += {' * '.join(terms)}"], [f"{target} += s"])
    lines.append("return out")
    return _function(signature, operands, lines)


# ---- checking operands' sizes --------------------------------------------------------------------


_MISFIT = " requires contracting dimensions to have the same size, got shapes "


class ContractionShapeError(TypeError):
    """The operands of a contraction do not fit: JAX's ``dot_general`` raises TypeError there (numbax reports it
    as ``NumbaxShapeError`` at the user's line).

    Raised with the operands' shapes (tuples of ints), its text names them as Python writes tuples; with none,
    ``message`` is the whole text. Compiled code raises the shapes: writing them out in nopython mode costs
    seconds of compilation on the first call.
    """

    def __init__(self, message: str, *shapes):
        super().__init__(message + _MISFIT + " and ".join(str(tuple(s)) for s in shapes) if shapes else message)


def _mismatch(spec: Spec, exact: str, shapes) -> bool:
    """Whether two axes with one letter differ in size (by 1 against another size only outside ``exact``)."""
    sizes: Dict[str, int] = {}
    for letters, shape in zip(spec.inputs, shapes):
        for c, n in zip(letters, shape):
            seen = sizes.setdefault(c, n)
            if seen != n and (c in exact or 1 not in (seen, n)):
                return True
            sizes[c] = seen if n == 1 else n
    return False


def check_contraction(message, subscripts, exact, *operands):
    """Raise ``ContractionShapeError(message + ...)`` unless ``operands`` fit the explicit ``subscripts``:
    every letter one size, where letters outside ``exact`` (the batch axes of ``matmul``, einsum's) may
    broadcast a size of 1."""
    spec = parse(subscripts, [np.ndim(op) for op in operands])
    shapes = [np.shape(op) for op in operands]
    if _mismatch(spec, exact, shapes):
        raise ContractionShapeError(message, *shapes)


def _check_source(spec: Spec, exact: str, scalars: Sequence[bool]) -> str:
    """Source of ``impl(message, subscripts, exact, *operands)``: one comparison per letter repeated, and the
    error raised with the operands' shapes (in nopython mode: an object-mode block loses its environment
    when Numba loads the function from its disk cache)."""
    seen: Dict[str, Tuple[int, int]] = {}
    tests = []
    for o, letters in enumerate(spec.inputs):
        for d, c in enumerate(letters):
            if c not in seen:
                seen[c] = (o, d)
                continue
            a, b = f"operands[{seen[c][0]}].shape[{seen[c][1]}]", f"operands[{o}].shape[{d}]"
            tests.append(f"{a} != {b}" if c in exact else f"{a} != {b} and {a} != 1 and {b} != 1")
    shapes = ", ".join("()" if scalar else f"operands[{i}].shape" for i, scalar in enumerate(scalars))
    body = [f"if {' or '.join(f'({t})' for t in tests)}:",
            f"{INDENT}raise ContractionShapeError(message, {shapes})"] if tests else []
    return "\n".join(["def impl(message, subscripts, exact, *operands):"] +
                      [INDENT + line for line in body + ["return None"]])


@overload(check_contraction, prefer_literal=True)
def _check_contraction(message, subscripts, exact, *operands):
    text, letters = static("check_contraction", "subscripts", subscripts), static("check_contraction", "exact", exact)
    spec, scalars, _ = _typed("check_contraction", lambda ndims: parse(text, ndims), operands)
    return compile_source(_check_source(spec, letters, scalars), ContractionShapeError=ContractionShapeError)


# ---- NumPy, and the adjoints in NumPy ------------------------------------------------------------


def einsum(subscripts, *operands):
    """``np.einsum(subscripts, *operands)``."""
    return np.einsum(subscripts, *operands)


def inner(a, b):
    """``np.inner(a, b)``."""
    return np.inner(a, b)


def vdot(a, b):
    """``np.vdot(a, b)``: the dot product of the flattened operands, the first conjugated."""
    return np.vdot(a, b)


def _pair(axes, b_axes):
    """tensordot's ``axes``: ``b_axes`` given, ``axes`` holds ``a``'s summed axes alone (``legalize`` writes a pair
    so, as Numba keeps the values of flat constant tuples only)."""
    return axes if b_axes is None else (axes, b_axes)


def tensordot(a, b, axes=2, b_axes=None):
    """``np.tensordot(a, b, axes)``, or ``np.tensordot(a, b, (axes, b_axes))``."""
    return np.tensordot(a, b, _pair(axes, b_axes))


def matmul(a, b):
    """``np.matmul(a, b)``."""
    return np.matmul(a, b)


def dot(a, b):
    """``np.dot(a, b)``."""
    return np.dot(a, b)


def _numpy_adjoint(spec: Spec, k: int, g, operands):
    """The cotangent of operand ``k`` of the contraction ``spec``, with NumPy's einsum."""
    target = spec.inputs[k]
    own = "".join(dict.fromkeys(target))
    others = [(s, op) for i, (s, op) in enumerate(zip(spec.inputs, operands)) if i != k]
    sizes = {}
    for s, op in zip(spec.inputs, operands):
        for c, n in zip(s, np.shape(op)):
            if sizes.get(c, 1) == 1:  # a dim of 1 broadcasts to the other (which may be 0)
                sizes[c] = n
    elsewhere = set(spec.output).union(*(set(s) for s, _ in others))
    kept = "".join(c for c in own if c in elsewhere)
    sums = ",".join([spec.output] + [s for s, _ in others]) + "->" + kept
    part = np.einsum(sums, g, *(op for _, op in others))
    missing = tuple(i for i, c in enumerate(own) if c not in kept)
    full = np.broadcast_to(np.expand_dims(part, missing), tuple(sizes[c] for c in own))
    shape = np.shape(operands[k])
    collapsed = tuple(i for i, c in enumerate(own) if c in target and shape[target.index(c)] == 1 and sizes[c] > 1)
    full = np.sum(full, axis=collapsed, keepdims=True) if collapsed else full
    out = np.zeros(shape, dtype=np.result_type(g, *operands))
    if own == target:
        out[...] = full
    else:  # repeated letters: einsum returns a writeable view of the diagonal
        np.einsum(f"{target}->{own}", out)[...] = full
    return out


def einsum_vjp(g, k, subscripts, *operands):
    """Cotangent of operand ``k`` of ``np.einsum(subscripts, *operands)``."""
    return _numpy_adjoint(parse(subscripts, [np.ndim(op) for op in operands]), k, g, operands)


def inner_vjp(g, k, a, b):
    """Cotangent of ``a`` (``k == 0``) or ``b`` (``k == 1``) in ``np.inner(a, b)``."""
    return _numpy_adjoint(inner_spec(np.ndim(a), np.ndim(b)), k, g, (a, b))


def tensordot_vjp(g, k, a, b, axes=2, b_axes=None):
    """Cotangent of ``a`` (``k == 0``) or ``b`` (``k == 1``) in ``tensordot(a, b, axes, b_axes)``."""
    return _numpy_adjoint(tensordot_spec(np.ndim(a), np.ndim(b), _pair(axes, b_axes)), k, g, (a, b))


def matmul_vjp(g, k, a, b):
    """Cotangent of ``a`` (``k == 0``) or ``b`` (``k == 1``) in ``a @ b``."""
    return _numpy_adjoint(matmul_spec(np.ndim(a), np.ndim(b)), k, g, (a, b))


# ---- Numba ---------------------------------------------------------------------------------------


def _operand(fn: str, t) -> Tuple[int, np.dtype, bool]:
    """(ndim, dtype, is a scalar) of a Numba operand type; TypingError for anything else."""
    if isinstance(t, types.Array):
        return t.ndim, as_dtype(t.dtype), False
    if isinstance(t, (types.Number, types.Boolean)):
        return 0, as_dtype(t), True
    raise TypingError(f"numbax.runtime.{fn}: expected arrays or numbers, got {t}")


def _typed(fn: str, spec_of, operands):
    """(spec, scalars, dtypes) for Numba operand types; ``spec_of(ndims)`` builds the spec."""
    info = [_operand(fn, t) for t in operands]
    try:
        spec = spec_of([n for n, _, _ in info])
    except ValueError as e:
        raise TypingError(f"numbax.runtime.{fn}: {e}") from None
    return spec, [s for _, _, s in info], [d for _, d, _ in info]


def _summed_exactly(spec: Spec) -> str:
    """The letters of a ``tensordot``, ``inner``, ``dot`` or ``matmul`` that NumPy sums without broadcasting:
    those of more than one operand that the output does not keep (``matmul``'s batch letters broadcast)."""
    counts = collections.Counter(c for letters in spec.inputs for c in set(letters))
    return "".join(c for c, n in counts.items() if n > 1 and c not in spec.output)


def _primal(fn: str, spec_of, types_: Sequence, signature: str, operands: Sequence[str], exact=None):
    """The compiled contraction of ``fn`` for operands of Numba types ``types_``; ``exact(spec)``: the letters
    whose sizes must agree as they are (einsum's broadcast a size of 1, as NumPy's do)."""
    spec, scalars, dtypes = _typed(fn, spec_of, types_)
    source = contraction_source(spec, scalars, np.result_type(*dtypes), signature, operands,
                                exact(spec) if exact is not None else "")
    return compile_source(source, merge=_merge)


def _adjoint(fn: str, spec_of, g, k: int, types_: Sequence, signature: str, operands: Sequence[str]):
    """The compiled cotangent of operand ``k`` of ``fn``, ``g`` the result's cotangent."""
    spec, scalars, dtypes = _typed(fn, spec_of, types_)
    if scalars[k]:
        raise TypingError(f"numbax.runtime.{fn}: the cotangent of a scalar operand is not supported in compiled code")
    dtype = np.result_type(as_dtype(getattr(g, "dtype", g)), *dtypes)
    source = adjoint_source(spec, k, scalars, _operand(fn, g)[2], dtype, signature, operands)
    return compile_source(source, merge=_merge)


@overload(einsum, prefer_literal=True)
def _einsum(subscripts, *operands):
    text = static("einsum", "subscripts", subscripts)
    return _primal("einsum", lambda ndims: parse(text, ndims), operands, "subscripts, *operands",
                   [f"operands[{i}]" for i in range(len(operands))])


@overload(inner)
def _inner(a, b):
    return _primal("inner", lambda n: inner_spec(*n), (a, b), "a, b", ["a", "b"], _summed_exactly)


def _flat_dot(a, b):
    """``np.dot`` of two vectors: ``vdot``'s flattened operands."""
    return np.dot(a, b)


@overload(_flat_dot)
def _flat_dot_typed(a, b):
    return _primal("vdot", lambda n: inner_spec(*n), (a, b), "a, b", ["a", "b"], _summed_exactly)


@overload(vdot)
def _vdot(a, b):
    """Numba's ``np.vdot`` takes vectors of one dtype only: the flattened operands' inner product, in the dtype
    NumPy gives it (int8 sums wrap around, bools are any of the ands, float32 and int64 meet in float64)."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return None
    if isinstance(a.dtype, types.Complex):
        return lambda a, b: _flat_dot(np.conj(np.ravel(a)), np.ravel(b))
    return lambda a, b: _flat_dot(np.ravel(a), np.ravel(b))


def _static_axes(fn: str, axes, b_axes):
    return _pair(static(fn, "axes", axes), static(fn, "b_axes", b_axes))


@overload(tensordot, prefer_literal=True)
def _tensordot(a, b, axes=2, b_axes=None):
    value = _static_axes("tensordot", axes, b_axes)
    return _primal("tensordot", lambda n: tensordot_spec(n[0], n[1], value), (a, b), "a, b, axes=2, b_axes=None",
                   ["a", "b"], _summed_exactly)


def _native_matmul(a, b) -> bool:
    """Whether Numba's own ``@`` (BLAS) takes the operands: float or complex arrays of 1 or 2 dims."""
    return all(isinstance(t, types.Array) and t.ndim in (1, 2) and isinstance(t.dtype, (types.Float, types.Complex))
               for t in (a, b))


@overload(matmul)
def _matmul(a, b):
    if _native_matmul(a, b):
        return lambda a, b: a @ b
    return _primal("matmul", lambda n: matmul_spec(*n), (a, b), "a, b", ["a", "b"], _summed_exactly)


@overload(dot)
def _dot(a, b):
    """Numba's own ``np.dot`` where it takes the operands (float or complex arrays of one dtype, of 1 or 2
    dims), one dtype NumPy promotes both to for two float dtypes, the loop nest otherwise (integers, 0-d
    operands, more than two dims), as NumPy computes them."""
    if _native_matmul(a, b) and a.dtype == b.dtype:
        return lambda a, b: np.dot(a, b)
    if _native_matmul(a, b):
        kind = np.result_type(as_dtype(a.dtype), as_dtype(b.dtype)).type
        return lambda a, b: np.dot(a.astype(kind), b.astype(kind))
    return _primal("dot", lambda n: dot_spec(*n), (a, b), "a, b", ["a", "b"], _summed_exactly)


@overload(operator.matmul)
def _matmul_operator(a, b):
    """``a @ b`` where an operand has more than two dimensions (Numba's own ``@`` takes one or two) or is not
    of floats (the loop nest), or of two float dtypes (a float32 operand meeting a float64 cotangent: Numba's
    own ``@`` on both made the dtype they promote to)."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array) and min(a.ndim, b.ndim)):
        return None
    floats = all(isinstance(t.dtype, (types.Float, types.Complex)) for t in (a, b))
    if max(a.ndim, b.ndim) > 2 or not floats:  # integers: the loop nest keeps NumPy's integer result
        return _primal("matmul", lambda n: matmul_spec(*n), (a, b), "a, b", ["a", "b"], _summed_exactly)
    if a.dtype == b.dtype:
        return None  # Numba's own
    kind = np.result_type(as_dtype(a.dtype), as_dtype(b.dtype)).type
    return lambda a, b: a.astype(kind) @ b.astype(kind)


@overload(np.linalg.solve)
def _solve_two_dtypes(a, b):
    """``np.linalg.solve`` of float operands of two dtypes (a float32 matrix meeting a float64 tangent or
    right-hand side), both in the dtype NumPy promotes them to: Numba's own takes one dtype only."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)) or a.dtype == b.dtype or \
            not all(isinstance(t.dtype, types.Float) for t in (a, b)):
        return None  # Numba's own
    kind = np.result_type(as_dtype(a.dtype), as_dtype(b.dtype)).type
    return lambda a, b: np.linalg.solve(a.astype(kind), b.astype(kind))


@overload(einsum_vjp, prefer_literal=True)
def _einsum_vjp(g, k, subscripts, *operands):
    text, which = static("einsum_vjp", "subscripts", subscripts), static("einsum_vjp", "k", k)
    return _adjoint("einsum_vjp", lambda ndims: parse(text, ndims), g, which, operands,
                    "g, k, subscripts, *operands", [f"operands[{i}]" for i in range(len(operands))])


@overload(inner_vjp, prefer_literal=True)
def _inner_vjp(g, k, a, b):
    return _adjoint("inner_vjp", lambda n: inner_spec(*n), g, static("inner_vjp", "k", k), (a, b),
                    "g, k, a, b", ["a", "b"])


@overload(tensordot_vjp, prefer_literal=True)
def _tensordot_vjp(g, k, a, b, axes=2, b_axes=None):
    value = _static_axes("tensordot_vjp", axes, b_axes)
    return _adjoint("tensordot_vjp", lambda n: tensordot_spec(n[0], n[1], value), g,
                    static("tensordot_vjp", "k", k), (a, b), "g, k, a, b, axes=2, b_axes=None", ["a", "b"])


@overload(matmul_vjp, prefer_literal=True)
def _matmul_vjp(g, k, a, b):
    which = static("matmul_vjp", "k", k)
    if isinstance(a, types.Array) and isinstance(b, types.Array) and max(a.ndim, b.ndim) <= 2:
        from numbax.runtime.grad import matmul_grad_a, matmul_grad_b

        grad = (matmul_grad_a, matmul_grad_b)[which]
        return lambda g, k, a, b: grad(g, a, b)
    return _adjoint("matmul_vjp", lambda n: matmul_spec(*n), g, which, (a, b), "g, k, a, b", ["a", "b"])
