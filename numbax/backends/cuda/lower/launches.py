"""The GPU lowering's launches: the dispatch of each array expression to its lowering (``hoist``), elementwise
kernels, views (transposes), constructors and copies; and the calls the driver makes itself (``OnHost``: pmap's
exchange between GPUs). Reductions are ``reductions``'s, products and linear algebra ``contractions``'s,
scans and sorts ``lanes``'s.

Each writes its kernel's source (``kernels``) into the state and the driver's statements that allocate and
launch it, and gives back the name that holds its result.
"""
from __future__ import annotations

import ast
from typing import Any, List, Tuple

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import application
from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.adjoints import SEEDS, TAPES
from numbax.backends.cuda.lower.kernels import Operands, elementwise_kernel
from numbax.backends.cuda.lower.reductions import Reductions
from numbax.backends.cuda.lower.array_ops import JOINS
from numbax.backends.cuda.lower.contractions import CONTRACTIONS
from numbax.backends.cuda.lower.rewrites import REWRITTEN
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text
from numbax.errors import NumbaxDeviceError, NumbaxShapeError
from numbax.primitives.cuda import MATMUL, ArgExtreme, Linalg, Moment, OnHost, Reduction, Scan, Sort, \
    Triangle
from numbax.primitives.registry import entry

_CONSTRUCTORS = frozenset({"zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like"})
# helpers of numbers computed on the host where an array expression reads them (``state.HOST_RUNTIME``)
_NUMBERS_ON_THE_HOST = frozenset({"rt.power_exponent"})
# arrays of host numbers only, made by NumPy on the host and copied over
_MADE_ON_THE_HOST = frozenset({"np.arange", "np.eye", "np.identity", "np.linspace", "np.array"})
# ``~``, ``&``, ``|`` and ``^`` of booleans: NumPy's logical operations (in a kernel, ``~True`` is -2)
_LOGICAL = {gast.Invert: "logical_not", gast.BitAnd: "logical_and", gast.BitOr: "logical_or",
            gast.BitXor: "logical_xor"}
# functions that give real numbers back unchanged (``np.conj(x)`` of a real ``x``: reverse mode's cotangents)
_IDENTITY_OF_REALS = frozenset({"np.conj", "np.conjugate", "np.real"})
_MATH_AS_NUMPY = {name: name for name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos",
                                          "tan", "sinh", "cosh", "tanh", "fabs")}
_MATH_AS_NUMPY.update(asin="arcsin", acos="arccos", atan="arctan", asinh="arcsinh", acosh="arccosh",
                      atanh="arctanh")


class Launches(Reductions):
    """The launches of the driver's array operations."""

    def hoist(self, node: gast.expr) -> gast.expr:
        """``node`` with each reduction, product and constructor in it launched first (into ``self.pre``) and
        replaced by the name of its result; ``math.f(x)`` as ``np.f(x)``: on the host, NumPy gives ``nan``
        where ``math`` raises ``ValueError`` (as compiled code does on the CPU), and kernels compute either
        alike. A slice's bounds are hoisted too (a shard's ``rt.gpu_axis_index()`` in ``x[:i + 1]``)."""
        for field, value in gast.iter_fields(node):
            if isinstance(value, (gast.expr, gast.Slice)):
                setattr(node, field, self.hoist(value))
            elif isinstance(value, list):
                setattr(node, field, [self.hoist(v) if isinstance(v, (gast.expr, gast.Slice)) else v for v in value])
        if isinstance(node, gast.Call) and _text(node.func).startswith("math.") and \
                _text(node.func)[5:] in _MATH_AS_NUMPY and not node.keywords:
            node.func = gast.Attribute(value=_name("np"), attr=_MATH_AS_NUMPY[_text(node.func)[5:]], ctx=gast.Load())
        if isinstance(node, gast.Attribute) and node.attr == "T" and probes.is_array(
                self.env.get(node.value.id) if isinstance(node.value, gast.Name) else self.probe(node.value)):
            return self.transposed(node.value, None)  # of an expression: its kernel's result, then the view
        if isinstance(node, gast.Call) and _text(node.func) in ("np.transpose", "np.permute_dims"):
            return self.transposed(*self.transpose_arguments(node))
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "item" and \
                not node.args and not node.keywords:
            return self.item(node.func.value)
        if isinstance(node, gast.Call) and _text(node.func) in JOINS:
            return self.joined(node)
        if isinstance(node, gast.Call) and _text(node.func) == "np.diag":
            return self.diag(node)
        if isinstance(node, gast.Call) and _text(node.func) in CONTRACTIONS:
            return self.launch_contraction(node)
        if isinstance(node, gast.Call) and _text(node.func) == "rt.diag_grad":
            return self.diag_grad(node)
        if isinstance(node, gast.Call) and _text(node.func) == "np.moveaxis":
            return self.transposed(*self.moveaxis_arguments(node))
        if isinstance(node, gast.Subscript) and not isinstance(node.value, gast.Name) and \
                probes.is_array(self.probe(node.value)):
            node.value = self.temp_for(node.value)  # of an expression: its kernel's result, then the index
        if self.is_indexing(node):
            return self.index_read(node)  # an element or a view, read on the host (``indexing``)
        if self.is_shape_from_the_end(node):
            return self.shape_from_the_front(node)
        if isinstance(node, gast.Call) and _text(node.func) in _NUMBERS_ON_THE_HOST and \
                not probes.is_array(self.probe(node)):
            return self.number_on_the_host(node)
        if self._same_type_cast(node):
            return node.func.value
        if isinstance(node, gast.Call) and _text(node.func) in _IDENTITY_OF_REALS and len(node.args) == 1 and \
                not node.keywords and np.asarray(self.probe(node.args[0])).dtype.kind in "biuf":
            return node.args[0]
        if self._of_booleans(node):
            operands = [node.operand] if isinstance(node, gast.UnaryOp) else [node.left, node.right]
            return gast.Call(func=gast.Attribute(value=_name("np"), attr=_LOGICAL[type(node.op)], ctx=gast.Load()),
                             args=operands, keywords=[])
        app = application(node) if isinstance(node, (gast.Call, gast.BinOp)) else None
        lowering = getattr(entry(app.key), "cuda", None) if app is not None else None
        if isinstance(lowering, Reduction):
            return self.launch_reduction(node, app, lowering)
        if lowering is MATMUL:
            return self.launch_matmul(node, app)
        if isinstance(lowering, OnHost):
            return self.on_host(node, lowering)
        if isinstance(lowering, Linalg):
            return self.launch_linalg(node, app, lowering)
        if isinstance(lowering, ArgExtreme):
            return self.launch_arg_extreme(node, app, lowering)
        if isinstance(lowering, Scan):
            return self.launch_scan(node, app, lowering)
        if isinstance(lowering, Sort):
            return self.launch_sort(node, app, lowering)
        if isinstance(lowering, Triangle):
            return self.triangle(app, lowering)
        if isinstance(lowering, Moment):
            return self.hoist(self.moment(app, lowering))
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                isinstance(node.func.value, gast.Name) and node.func.value.id == "np" and \
                node.func.attr in _CONSTRUCTORS:
            return self.construct(node)
        if isinstance(node, gast.Call) and _text(node.func) in REWRITTEN:
            return self.hoist(getattr(self, REWRITTEN[_text(node.func)])(node))
        if isinstance(node, gast.Call) and _text(node.func) == "rt.reshape_like":
            return self.reshape_like(node)
        if isinstance(node, gast.Call) and _text(node.func) == "rt.unreduce":
            return self.unreduce(node)
        if isinstance(node, gast.Call) and _text(node.func) == "rt.prod_others":
            return self.prod_others(node)
        if isinstance(node, gast.Call) and _text(node.func) in ("rt.cumsum_grad", "rt.cumprod_grad", "rt.cumprod_jvp"):
            return self.scan_derivative(node)
        if isinstance(node, gast.Call) and _text(node.func) in _MADE_ON_THE_HOST:
            return self.made_on_the_host(node)
        if isinstance(node, gast.Call) and not node.keywords and (
                _text(node.func) == "np.ravel" and len(node.args) == 1 or
                isinstance(node.func, gast.Attribute) and node.func.attr == "ravel" and not node.args and
                probes.is_array(self.probe(node.func.value))):
            return self.raveled(node.args[0] if node.args else node.func.value)
        if isinstance(node, gast.Call) and (_text(node.func) in ("np.reshape", "np.ascontiguousarray") or
                                            isinstance(node.func, gast.Attribute) and node.func.attr == "reshape"):
            return self.copied(node)
        if isinstance(node, gast.Call) and _text(node.func) in ("rt.stack_buffer", "rt.stack_rows"):
            return self.stack_buffer(node)
        if isinstance(node, gast.Call) and _text(node.func) == "rt.unbroadcast":
            return self.unbroadcast(node)
        if isinstance(node, gast.Call) and _text(node.func) in TAPES:
            return self.tape(node)
        if isinstance(node, gast.Call) and _text(node.func) in SEEDS and len(node.args) == 1 and \
                isinstance(node.args[0], gast.Name) and probes.is_array(self.env.get(node.args[0].id)):
            return self.seed(node)
        return node

    def reshape_like(self, node: gast.Call) -> gast.expr:
        """Reverse mode's ``rt.reshape_like(g, a)`` (the cotangent of a reshape): ``g`` with ``a``'s shape, a
        view of ``g`` where C-contiguous, else of its copy; where ``a`` is a number, ``g``'s sum."""
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[1], gast.Name):
            raise self.refuse(f"`{_text(node)}`")
        g, a = node.args
        g_value = self.probe(g)
        if not probes.is_array(self.env.get(a.id)):
            return self.hoist(_parse(f"np.sum({_text(g)})")[0].value) if probes.is_array(g_value) else g
        if not probes.is_array(g_value):
            raise self.refuse(f"`{_text(node)}`, a number reshaped,")
        contiguous = self.copied(_parse(f"np.ascontiguousarray({self.temp_for(g).id})")[0].value)
        temp = self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        self.pre += _parse(f"{temp} = gr.reshape({contiguous.id}, {self._shape_of_name(a.id)}, {where!r})")
        self.env[temp] = np.ones((1,) * self.env[a.id].ndim, np.asarray(g_value).dtype)
        self.views[temp] = self.base_of(contiguous.id)
        return _name(temp)

    def transpose_arguments(self, node: gast.Call) -> Tuple[gast.expr, Any]:
        """The array and the constant ``axes`` (None: reversed) of ``np.transpose`` or ``np.permute_dims``."""
        values = dict(zip(["a", "axes"], node.args))
        values.update({k.arg: k.value for k in node.keywords})
        if len(node.args) > 2 or set(values) - {"a", "axes"} or "a" not in values:
            raise self.refuse(f"`{_text(node)}`")
        given = values.get("axes")
        inverse = isinstance(given, gast.Call) and _text(given.func) == "rt.inverse_axes" and \
            len(given.args) == 1 and not given.keywords  # reverse mode's: the permutation that undoes ``axes``
        try:
            axes = ast.literal_eval(gast.gast_to_ast(given.args[0] if inverse else given)) if given else None
        except ValueError:
            raise self.refuse(f"`{_text(node)}` with axes known only at run time") from None
        if inverse:
            if not isinstance(axes, (tuple, list)) or sorted(axes) != list(range(len(axes))):
                raise self.refuse(f"`{_text(node)}`")
            axes = tuple(int(k) for k in np.argsort(axes))
        return values["a"], axes

    def transposed(self, array: gast.expr, axes: Any) -> gast.Name:
        """``a.T``, ``np.transpose(a, axes)``: a view the host makes (``gr.transpose``), its axes permuted."""
        a = self.temp_for(array)
        stand_in = self.env.get(a.id)
        if not probes.is_array(stand_in):
            raise self.refuse(f"transposing `{_text(array)}`, a number,")
        ndim = stand_in.ndim
        order = tuple(reversed(range(ndim))) if axes is None else tuple(axes)
        if sorted(a_ % ndim for a_ in order if isinstance(a_, int) and -ndim <= a_ < ndim) != list(range(ndim)) \
                or len(order) != ndim:
            raise NumbaxShapeError("axes don't match array", self.origin.position() if self.origin else "")
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.transpose({a.id}, {tuple(k % ndim for k in order)!r})")
        self.env[temp] = stand_in
        self.views[temp] = self.base_of(a.id)
        return _name(temp)

    def number_on_the_host(self, node: gast.Call) -> gast.Name:
        """A helper's number computed on the host first (into ``self.pre``): a kernel takes it as an argument."""
        self.check_host(node)
        temp = self.fresh("n")
        self.pre.append(gast.Assign(targets=[_name(temp, gast.Store())], value=node, type_comment=None))
        self.env[temp] = self.probe(node)
        return _name(temp)

    def _of_booleans(self, node: gast.expr) -> bool:
        """``~a``, ``a & b``, ``a | b`` or ``a ^ b`` of booleans only (arrays or numbers)."""
        if not isinstance(node, (gast.UnaryOp, gast.BinOp)) or type(node.op) not in _LOGICAL:
            return False
        operands = [node.operand] if isinstance(node, gast.UnaryOp) else [node.left, node.right]
        return all(np.asarray(self.probe(o)).dtype == np.bool_ for o in operands)

    def number_on_the_host_of(self, node: gast.expr, operand: gast.expr) -> gast.Name:
        """A reduction of a number (``np.sum(s)``), by NumPy on the host."""
        self.check_host(operand)
        temp = self.fresh("n")
        self.pre.append(gast.Assign(targets=[_name(temp, gast.Store())], value=node, type_comment=None))
        self.env[temp] = self.probe(node)
        return _name(temp)

    def _same_type_cast(self, node: gast.expr) -> bool:
        """``x.astype(t)`` where ``x`` has type ``t`` already (the CPU's pipeline casts a float32 mean back)."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and
                node.func.attr == "astype" and len(node.args) == 1 and not node.keywords):
            return False
        try:
            return self.probe(node.func.value).dtype == self.probe(node).dtype
        except NumbaxDeviceError:
            return False

    def launch_elementwise(self, target: str, value: gast.expr, result: Any) -> List[gast.stmt]:
        """``target = value`` for an elementwise array expression: allocate, launch its kernel."""
        return self.launch(value, target, result, allocate=True)

    def launch(self, value: gast.expr, target: str, result: Any, allocate: bool) -> List[gast.stmt]:
        """The kernel of an elementwise expression, and the driver's launch of it into ``target`` (after
        ``self.pre``)."""
        value = self.numbers_for_metadata(value)
        operands = self.operands(value)
        expr = self.element(value, operands)
        kernel = self.fresh("kernel")
        self.kernels.append((elementwise_kernel(kernel, expr, operands, result.ndim), self.origin))
        if not allocate:
            return _parse(f"{kernel}[gr.grid({target}.size)]({', '.join([target] + operands.args())})")
        out = self.fresh("t") if target in operands.arrays else target  # an operand is read after allocating
        lines = [f"{out} = gr.empty({self.shape_of(operands)}, np.{result.dtype.name})",
                 f"{kernel}[gr.grid({out}.size)]({', '.join([out] + operands.args())})"]
        return _parse("\n".join(lines + ([f"{target} = {out}"] if out != target else [])))

    def numbers_for_metadata(self, node: gast.expr) -> gast.expr:
        """``node`` with each ``x.shape[k]``, ``x.size`` and ``x.ndim`` read on the host into a number first
        (into ``self.pre``): kernels take numbers as arguments."""
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.expr):
                setattr(node, field, self.numbers_for_metadata(value))
            elif isinstance(value, list):
                setattr(node, field, [self.numbers_for_metadata(v) if isinstance(v, gast.expr) else v
                                      for v in value])
        metadata = isinstance(node, gast.Attribute) and node.attr in ("size", "ndim") or \
            isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute) and node.value.attr == "shape"
        if not metadata:
            return node
        self.check_host(node)
        temp = self.fresh("n")
        self.pre.append(gast.Assign(targets=[_name(temp, gast.Store())], value=node, type_comment=None))
        self.env[temp] = self.probe(node)
        return _name(temp)

    def axes(self, axis: Any, ndim: int) -> Tuple[int, ...]:
        """``axis`` as sorted non-negative axes of an ``ndim``-d operand."""
        given = tuple(range(ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        for a in given:
            if not isinstance(a, int) or not -ndim <= a < ndim:
                raise NumbaxShapeError("axis {} is out of bounds for array of dimension {}",
                                       self.origin.position() if self.origin else "", a, ndim)
        return tuple(sorted({a % ndim for a in given}))

    def on_host(self, node: gast.Call, lowering: OnHost) -> gast.Name:
        """A call the driver makes itself (``OnHost``: pmap's exchange between GPUs), of constants and of values
        computed first (an array expression by its kernel); its result a device array the driver owns, or a
        number."""
        if node.keywords:
            raise self.refuse(f"`{_text(node)}` with keyword arguments")
        node.args = [arg if isinstance(arg, (gast.Constant, gast.Tuple)) else self.temp_for(arg) for arg in node.args]
        result = lowering.stand_in(*[self.probe(arg) for arg in node.args])
        temp = self.fresh("t")
        self.pre.append(gast.Assign(targets=[_name(temp, gast.Store())], value=node, type_comment=None))
        self.env[temp] = result
        if probes.is_array(result):
            self.owned.add(temp)
        return _name(temp)

    def made_on_the_host(self, node: gast.Call) -> gast.Name:
        """``np.arange(n)``, ``np.eye(n)`` and the others of ``_MADE_ON_THE_HOST``, of host numbers and NumPy
        types: made by NumPy itself on the host, copied to the device."""
        for arg in node.args + [k.value for k in node.keywords]:
            self.check_host(arg)
        result = self.probe(node)
        if not probes.is_array(result):
            raise self.refuse(f"`{_text(node)}`")
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = cuda.to_device({_text(node)})")
        self.env[temp] = np.ones((1,) * result.ndim, result.dtype)  # a stand-in's extents are 1
        self.owned.add(temp)
        return _name(temp)

    def copied(self, node: gast.Call) -> gast.Name:
        """``a.reshape(shape)``, ``np.reshape(a, shape)`` (a view where NumPy's strides allow one, as NumPy's, else
        a kernel's copy: ``gr.reshape``) and ``np.ascontiguousarray(a)``
        (``a`` itself where C-contiguous, else a kernel's copy, as NumPy's): the result may share ``a``'s
        memory, so it is taken for a view of ``a``'s array."""
        method = isinstance(node.func, gast.Attribute) and node.func.attr == "reshape" and \
            _text(node.func) != "np.reshape"
        args = ([node.func.value] if method else []) + list(node.args)
        if method and len(args) > 2:  # x.reshape(2, 3)
            args = [args[0], gast.Tuple(elts=args[1:], ctx=gast.Load())]
        wanted = 1 if _text(node.func) == "np.ascontiguousarray" else 2
        if node.keywords or len(args) != wanted or not isinstance(args[0], gast.Name) or \
                not probes.is_array(self.env.get(args[0].id)) or args[0].id in self.folded:
            raise self.refuse(f"`{_text(node)}` of other than an array and a shape")
        a = args[0].id
        result = self.env[a]
        out = self.fresh("t")
        kernel = self.fresh("kernel")  # the copy where no view will do
        operands = Operands({a: self.env[a].ndim}, [])
        self.kernels.append((elementwise_kernel(kernel, operands.element_of(a), operands, self.env[a].ndim),
                             self.origin))
        if wanted == 2:
            self.check_host(args[1])
            shape = self.probe(args[1])  # the stand-ins' extents are 1: the new shape's rank, not NumPy's reshape
            result = np.ones((1,) * (1 if np.ndim(shape) == 0 else len(shape)), result.dtype)
            where = self.origin.position() if self.origin is not None else ""
            self.pre += _parse(f"{out} = gr.reshape({a}, {_text(args[1])}, {where!r}, {kernel})")
        else:
            self.pre += _parse(f"{out} = gr.contiguous({a}, {kernel})")
        self.env[out] = result
        self.views[out] = self.base_of(a)
        return _name(out)

    def _with_empty_shape(self, node: gast.Call) -> gast.Call:
        """``np.zeros(shape, ...)`` with a shape of zeros of as many dimensions, for the probe of its dtype and
        rank: the stand-ins' extents are 1, so ``(n, x.shape[0] - 2)`` would be negative there."""
        shape = node.args[0]
        if isinstance(shape, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in shape.elts):
            rank = len(shape.elts)
        else:
            stand_in = self.probe(shape)
            rank = len(stand_in) if isinstance(stand_in, tuple) else 1
        zeros = gast.Tuple(elts=[gast.Constant(value=0, kind=None) for _ in range(rank)], ctx=gast.Load())
        return gast.Call(func=node.func, args=[zeros] + node.args[1:], keywords=node.keywords)

    def construct(self, node: gast.Call) -> gast.Name:
        """``np.zeros(shape)``, ``np.ones(shape)`` (a NumPy type as ``dtype``, by keyword or second): made on the
        host, copied over; ``np.empty(shape)``: allocated on the device. ``np.zeros_like(a)`` and the others
        like it take ``a``'s shape (read on the host)."""
        like = node.func.attr.endswith("_like")
        if not 1 <= len(node.args) <= 2 or set(k.arg for k in node.keywords) - {"dtype"}:
            raise self.refuse(f"`{_text(node)}` with arguments other than {'an array' if like else 'a shape'} "
                              "and dtype")
        for arg in node.args[1:] + [k.value for k in node.keywords]:
            self.check_host(arg)  # a NumPy type
        if like and not (isinstance(node.args[0], gast.Name) and probes.is_array(self.env.get(node.args[0].id))):
            raise self.refuse(f"`{_text(node)}` of other than an array")
        if not like:
            self.check_host(node.args[0])
        result = self.probe(node if like else self._with_empty_shape(node))
        temp = self.fresh("t")
        fill = 1 if node.func.attr.startswith("ones") else 0
        like_of = node.args[0].id if like else ""
        shape = (self.shape_of(self.operands(self.folded[like_of])) if like_of in self.folded else
                 f"{like_of}.shape") if like else _text(node.args[0])
        if node.func.attr.startswith("empty"):
            self.pre += _parse(f"{temp} = gr.empty({shape}, np.{result.dtype.name})")
        else:
            self.pre += _parse(f"{temp} = gr.full({shape}, {fill}, np.{result.dtype.name})")
        self.env[temp] = np.ones((1,) * result.ndim, result.dtype)  # a stand-in's extents are 1
        self.owned.add(temp)
        return _name(temp)
