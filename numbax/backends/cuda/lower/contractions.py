"""contractions: ``a @ b`` (``gr.matmul``: cuBLAS through CuPy), ``np.einsum`` and ``np.tensordot`` of real
arrays on the GPU, reverse mode's cotangents of their operands (``rt.einsum_vjp``, ``rt.tensordot_vjp``), and
``np.linalg``'s ``solve``, ``inv``, ``det``, ``slogdet``, ``cholesky`` and ``np.trace`` (``gr``'s helpers: cuSOLVER).

Einsum and tensordot:
Each is the CPU backend's contraction ``Spec`` (a letter for every axis of every operand, the result keeping the
output's: ``numbax.runtime.contractions``), computed by a kernel generated for it: one thread per element of the
result, the summed letters looped over inside in the CPU's order (``contraction_kernel``); a cotangent, one thread
per element of its operand's letters, the others looped over, added into the operand's shape atomically (a
repeated letter writes a diagonal, an axis of 1 broadcast against a longer one sums: ``adjoint_kernel``). Where
CuPy is installed and every letter has one size, ``cupy.einsum`` (cuBLAS) computes a result instead
(``gr.contract``, which first checks the operands' sizes as NumPy does: einsum's axes of 1 broadcast,
tensordot's do not). For example ``np.einsum('ij,jk->ik', a, b)``::

    @cuda.jit
    def _contraction_1(out, o0, o1):
        n_i = o0.shape[0]
        n_k = o1.shape[1]
        n_j = o0.shape[1] if o0.shape[1] != 1 else o1.shape[0]
        for t in range(cuda.grid(1), n_i * n_k, cuda.gridsize(1)):
            i_k = t % n_k
            i_i = t // n_k % n_i
            s = np.float64(0)
            for i_j in range(n_j):
                s += o0[i_i, i_j if o0.shape[1] == n_j else 0] * o1[i_j if o1.shape[0] == n_j else 0, i_k]
            out[i_i, i_k] = s
"""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Set, Tuple

import gast
import numpy as np

from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.kernels import atomic_add
from numbax.backends.cuda.lower.lanes import Lanes
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text
from numbax.errors import NumbaxShapeError
from numbax.primitives.cuda import Linalg
from numbax.runtime import contractions as spec_of

CONTRACTIONS = frozenset({"np.einsum", "np.tensordot", "rt.einsum_vjp", "rt.tensordot_vjp"})


def _occurrences(spec: spec_of.Spec, letter: str, names: Sequence[str]) -> List[str]:
    return [f"{n}.shape[{d}]" for n, letters in zip(names, spec.inputs) for d, c in enumerate(letters) if c == letter]


def _sizes(spec: spec_of.Spec, names: Sequence[str]) -> List[str]:
    """``n_<letter> = ...``: each letter's size (its axes' sizes agree, or are 1 where it broadcasts)."""
    return [f"n_{c} = {_size(_occurrences(spec, c, names))}" for c in spec.letters()]


def _size(shapes: Sequence[str]) -> str:
    """The size of axes that agree or broadcast: the first that is not 1 (a size of 0 included), else 1."""
    return shapes[0] if len(shapes) == 1 else f"({shapes[0]} if {shapes[0]} != 1 else {_size(shapes[1:])})"


def _read(name: str, letters: str, many: Set[str]) -> str:
    """``name`` read at its letters' indices, index 0 along an axis of 1 that another axis of its letter
    broadcasts (of the letters in ``many``, which name several axes)."""
    index = [f"i_{c} if {name}.shape[{d}] == n_{c} else 0" if c in many else f"i_{c}" for d, c in enumerate(letters)]
    return f"{name}[{', '.join(index)}]" if letters else name


def _unravel(letters: str) -> List[str]:
    """The indices of the letters from the flat thread index ``t``, the last letter fastest (C order)."""
    lines, stride = [], []
    for c in reversed(letters):
        lines.append(f"i_{c} = t{''.join(f' // n_{s}' for s in stride)} % n_{c}")
        stride.append(c)
    return lines


def _kernel(name: str, params: Sequence[str], lines: List[str], letters: str, loops: str, body: List[str]) -> str:
    """A grid-stride kernel over the index space of ``letters``, ``loops`` nested inside each thread's."""
    count = " * ".join(f"n_{c}" for c in letters) or "1"
    inner = [f"{'    ' * d}for i_{c} in range(n_{c}):" for d, c in enumerate(loops)]
    inner += ["    " * len(loops) + line for line in body[1:-1]]
    thread = _unravel(letters) + body[:1] + inner + body[-1:]
    return "\n".join([f"@cuda.jit", f"def {name}({', '.join(params)}):"] + ["    " + line for line in lines] +
                     [f"    for t in range(cuda.grid(1), {count}, cuda.gridsize(1)):"] +
                     ["        " + line for line in thread]) + "\n"


def contraction_kernel(name: str, spec: spec_of.Spec, dtype: np.dtype) -> str:
    """The kernel of the contraction ``spec``: ``out`` (of the output's letters; of shape ``(1,)`` where it has
    none) from the operands ``o0, o1, ...``."""
    names = [f"o{k}" for k in range(len(spec.inputs))]
    many = {c for c in spec.letters() if len(_occurrences(spec, c, names)) > 1}
    product = " * ".join(_read(n, s, many) for n, s in zip(names, spec.inputs))
    summed = "".join(c for c in spec.letters() if c not in spec.output)
    store = f"out[{', '.join(f'i_{c}' for c in spec.output) or '0'}] = s"
    return _kernel(name, ["out"] + names, _sizes(spec, names), spec.output, summed,
                   [f"s = np.{dtype.name}(0)", f"s += {product}", store])


def adjoint_kernel(name: str, spec: spec_of.Spec, k: int, g_number: bool, dtype: np.dtype) -> str:
    """The kernel of the cotangent of operand ``k`` of ``spec``: ``out`` (zeros of the operand's shape) gets
    ``g`` (the output's cotangent; a number where ``g_number``) times the other operands, summed over the
    letters the operand lacks, as the CPU's ``adjoint_source``."""
    names = [f"o{j}" for j in range(len(spec.inputs))]
    many = {c for c in spec.letters() if len(_occurrences(spec, c, names)) > 1}
    own = "".join(dict.fromkeys(spec.inputs[k]))
    rest = "".join(c for c in spec.letters() if c not in own)
    terms = ["g" if g_number or not spec.output else _read("g", spec.output, set())]
    terms += [_read(n, s, many) for j, (n, s) in enumerate(zip(names, spec.inputs)) if j != k]
    target = [f"i_{c} if o{k}.shape[{d}] == n_{c} else 0" for d, c in enumerate(spec.inputs[k])]
    return _kernel(name, ["out", "g"] + names, _sizes(spec, names), own, rest,
                   [f"s = np.{dtype.name}(0)", f"s += {' * '.join(terms)}", atomic_add("out", target, "s")])


class Contractions(Lanes):
    """The launches of products, contractions and their operands' cotangents, and of linear algebra."""

    def launch_contraction(self, node: gast.Call) -> gast.Name:
        """``np.einsum(subscripts, *operands)``, ``np.tensordot(a, b, axes)`` of real arrays (``subscripts`` and
        ``axes`` constants), reverse mode's ``rt.einsum_vjp(g, k, subscripts, *operands)`` and
        ``rt.tensordot_vjp(g, k, a, b, axes)``: a kernel generated for the contraction, launched by
        ``gr.contract``; a result without letters is a number on the host."""
        spec, operands, g, k = self._contraction(node)
        stand_ins = [self.env[o] for o in operands]
        dtype = np.result_type(*stand_ins)
        kernel = self.fresh("contraction")
        sizes = {c: _size(_occurrences(spec, c, operands)) for c in spec.letters()}
        if g is not None:
            g_is_array = probes.is_array(self.probe(g))
            dtype = np.result_type(np.asarray(self.probe(g)).dtype, dtype)
            self.kernels.append((adjoint_kernel(kernel, spec, k, not g_is_array, dtype), self.origin))
            own = "".join(dict.fromkeys(spec.inputs[k]))
            shape, count = f"{operands[k]}.shape", " * ".join(sizes[c] for c in own) or "1"
            extra = f", {self.temp_for(g).id if g_is_array else _text(g)}"
            result = np.ones((1,) * stand_ins[k].ndim, dtype)
        else:
            self.kernels.append((contraction_kernel(kernel, spec, dtype), self.origin))
            shape = f"({''.join(f'{sizes[c]}, ' for c in spec.output)})"
            count, extra = " * ".join(sizes[c] for c in spec.output) or "1", ""
            result = np.ones((1,) * len(spec.output), dtype) if spec.output else dtype.type(1)
        letters = ",".join(spec.inputs) + "->" + spec.output
        where = self.origin.position() if self.origin is not None else ""
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.contract({kernel}, {shape}, {count}, np.{dtype.name}, "
                           f"({''.join(o + ', ' for o in operands)}), {letters!r}, "
                           f"{'einsum' not in _text(node.func)}, {where!r}{extra})")
        self.env[temp] = result
        if probes.is_array(result):
            self.owned.add(temp)
        return _name(temp)

    def _contraction(self, node: gast.Call) -> Tuple[spec_of.Spec, List[str], Optional[gast.expr], Optional[int]]:
        """The ``Spec`` of a contraction call, its operands' names (arrays of integers or floats), and for a
        cotangent the output's cotangent ``g`` and the operand's position ``k``; anything else refused."""
        function = _text(node.func)
        adjoint, einsum = function.endswith("_vjp"), "einsum" in function
        if node.keywords and not (function.endswith("tensordot") and [k.arg for k in node.keywords] == ["axes"]) or \
                any(isinstance(a, gast.Starred) for a in node.args):
            raise self.refuse(f"`{_text(node)}` with other arguments than its subscripts or axes and operands")
        args = list(node.args) + [k.value for k in node.keywords]
        g, k, args = (args[0], self._constant(node, args[1]), args[2:]) if adjoint else (None, None, args)
        if not einsum and not 2 <= len(args) <= 3:
            raise self.refuse(f"`{_text(node)}` with other arguments than two arrays and axes")
        constant = self._constant(node, args[0] if einsum else (args[2] if len(args) > 2 else gast.Constant(2, None)))
        given = [a for a in (args[1:] if einsum else args[:2]) if not adjoint or _text(a) != "None"]  # absent
        operands = [self.temp_for(a).id for a in given]
        if not all(probes.is_array(self.env.get(o)) and self.env[o].dtype.kind in "iuf" for o in operands):
            raise self.refuse(f"`{_text(node)}` of other than arrays of integers or floats")
        if adjoint and not (type(k) is int and 0 <= k < len(operands)):
            raise self.refuse(f"`{_text(node)}`")
        return self._spec(einsum, constant, [self.env[o].ndim for o in operands]), operands, g, k

    def _constant(self, node: gast.Call, arg: gast.expr):
        try:
            return ast.literal_eval(gast.gast_to_ast(arg))
        except ValueError:
            raise self.refuse(f"`{_text(node)}` with subscripts, axes or an operand's position known only at "
                              "run time") from None

    def _spec(self, einsum: bool, constant, ndims: List[int]) -> spec_of.Spec:
        """The contraction's ``Spec``; NumPy's error (a ``NumbaxShapeError``) where the subscripts or axes do
        not fit the operands."""
        try:
            if einsum:
                return spec_of.parse(constant, ndims)
            return spec_of.tensordot_spec(*ndims, constant)
        except (ValueError, TypeError, IndexError) as exc:
            raise NumbaxShapeError(str(exc), self.origin.position() if self.origin else "") from None

    def launch_matmul(self, node: gast.expr, app) -> gast.Name:
        """``a @ b`` of 1-d or 2-d arrays, or of stacks of matrices (both operands at least 2-d, their leading
        axes broadcast): ``gr.matmul``."""
        if app.keywords or len(app.args) != 2:
            raise self.refuse(f"`{app.name}` with keyword arguments")
        names = [self.temp_for(arg) for arg in app.args]
        ranks = [np.ndim(self.env.get(name.id)) for name in names]
        if not all(probes.is_array(self.env.get(name.id)) for name in names) or \
                max(ranks) > 2 and min(ranks) < 2:
            raise self.refuse(f"`{_text(node)}` of other than 1-d or 2-d arrays or stacks of matrices")
        result = self.probe(gast.BinOp(left=names[0], op=gast.MatMult(), right=names[1]))
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.matmul({names[0].id}, {names[1].id})")
        self.env[temp] = result
        self.owned.add(temp)
        return _name(temp)

    def launch_linalg(self, node: gast.expr, app, lowering: Linalg) -> gast.Name:
        """``np.linalg.solve(a, b)``, ``inv(a)``, ``det(a)``, ``slogdet``'s parts, ``cholesky(a)`` and
        ``np.trace(a)`` of real arrays (``a`` a matrix, ``b`` a vector or a matrix; the shapes were checked where
        the user wrote them): ``gr``'s helper (``Linalg``), a trace the sum of ``gr.diagonal``'s view."""
        args = app.args[:1] if lowering.helper == "trace" and [_text(a) for a in app.args[1:]] in \
            ([], ["0"], ["0", "0"], ["0", "0", "1"]) else app.args  # a trace's default offset and axes
        if app.keywords or len(args) != (2 if lowering.helper == "solve" else 1):
            raise self.refuse(f"`{app.name}` with other arguments than the array{'s' * (lowering.helper == 'solve')}")
        names = [self.temp_for(arg).id for arg in args]
        stand_ins = [self.env.get(n) for n in names]
        if not all(probes.is_array(v) and v.dtype.kind in "biuf" for v in stand_ins) or stand_ins[0].ndim != 2 or \
                stand_ins[-1].ndim > 2:
            raise self.refuse(f"`{_text(node)}` of other than real matrices")
        temp = self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        if lowering.helper == "trace":
            self.pre += _parse(f"{temp} = gr.diagonal({names[0]})")
            self.env[temp], self.views[temp] = np.ones(1, stand_ins[0].dtype), self.base_of(names[0])
            return self.hoist(_parse(f"np.sum({temp})")[0].value)
        result = {"solve": lambda: np.linalg.solve(*stand_ins), "inverse": lambda: np.linalg.inv(stand_ins[0]),
                  "determinant": lambda: np.linalg.det(stand_ins[0]),
                  "cholesky": lambda: np.linalg.cholesky(stand_ins[0])}[lowering.helper]()
        extra = repr(lowering.result) if lowering.result else repr(where)
        self.pre += _parse(f"{temp} = gr.{lowering.helper}({', '.join(names)}, {extra})")
        self.env[temp] = np.ones((1,) * np.ndim(result), np.asarray(result).dtype) if np.ndim(result) else result
        if np.ndim(result):
            self.owned.add(temp)
        return _name(temp)
