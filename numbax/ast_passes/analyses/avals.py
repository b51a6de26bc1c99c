"""avals: the kind (bool, int, float, complex) and ndim of each variable, inferred from the arguments'.

An analysis: it reads the canonical function and returns ``{name: (kind,
ndim)}``; a name whose assignments disagree, or whose value it cannot work
out, is absent. Reverse mode reads it to keep scalar tapes in typed arrays,
to write ``g`` where a scalar cannot have been broadcast, and to seed and
zero scalars with literals. Shape rules are per family of primitives.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import application

Aval = Tuple[str, int]
_ORDER = "bifc"
_ELEMENTS = "[]"  # suffix: the key of what a list (a tape) holds

_KEEP_NDIM = {"abs", "absolute", "negative", "positive", "sign", "floor", "ceil", "round", "around", "rint",
              "trunc", "transpose", "swapaxes", "flip", "fliplr", "flipud", "roll", "triu", "tril", "copy",
              "asarray", "array", "ascontiguousarray", "clip", "sort", "T", "zeros_like", "ones_like",
              "empty_like", "full_like", "inv", "cholesky", "maximum", "minimum", "fmax", "fmin", "where",
              "square", "power", "mod", "remainder", "copy_of", "abs_slope", "power_exponent", "real", "imag",
              "angle", "conj", "conjugate"}
# Real-valued results of complex operands (``np.abs(z)``, ``z.imag``, ``np.var(z)``)
_REAL_RESULT = {"abs", "absolute", "fabs", "real", "imag", "angle", "norm", "var", "std"}
_REDUCTIONS = {"sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std", "argmax", "argmin", "any", "all",
               "norm", "logsumexp", "ptp", "count_nonzero", "median", "nanmax", "nanmin"}
_INT_RESULT = {"argmax", "argmin", "count_nonzero", "len", "int"}
_BOOL_RESULT = {"any", "all", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "equal",
                "not_equal", "less", "less_equal", "greater", "greater_equal", "bool"}


def _real_of(name: str, kind: str) -> str:
    """The kind of ``name``'s result from operands of ``kind``: float where a complex operand gives a real."""
    return "f" if kind == "c" and name in _REAL_RESULT else kind


def _elementwise(key) -> bool:
    """NumPy ufuncs, ``math`` functions and numbax's stand-ins for SciPy's: the result has the operands' ndim."""
    import math

    from numbax.runtime import special

    return isinstance(key, np.ufunc) or getattr(key, "__module__", None) == "math" or \
        key in (math.sqrt, math.exp, math.log) or key in tuple(getattr(special, n) for n in special.ELEMENTWISE)


def tape_of(node: gast.expr, method: str) -> Optional[str]:
    """The list ``t`` in ``t.append(v)`` or ``t.pop()`` (``method``), else None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == method \
            and isinstance(node.func.value, gast.Name) and len(node.args) == (method == "append"):
        return node.func.value.id
    return None


def row_store(node: gast.expr) -> Optional[str]:
    """The row table ``t`` in ``rt.save_row(t, row, v)`` (reverse mode saving an array in a loop), else None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "save_row" \
            and isinstance(node.func.value, gast.Name) and node.func.value.id == "rt" and len(node.args) == 3 \
            and isinstance(node.args[0], gast.Name):
        return node.args[0].id
    return None


def _dtype_kind(node: gast.expr) -> Optional[str]:
    """The kind of a dtype spelled ``np.float64``, ``np.int64``, ... in generated code; else None (for
    narrower floats too: a float array whose kind is known is float64)."""
    if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and node.value.id == "np":
        try:
            return _kind_of(np.dtype(node.attr))
        except TypeError:
            return None
    return None


def _kind_of(dtype: np.dtype) -> Optional[str]:
    """A dtype's kind as avals know it (``u`` is ``i``); None for narrower floats, as ``_dtype_kind``."""
    kind = "i" if dtype.kind == "u" else dtype.kind
    if kind == "f" and dtype != np.float64:
        return None  # fusion relies on every float it knows of being float64
    return kind if kind in _ORDER else None


def _promote(*kinds: str) -> str:
    return max(kinds, key=_ORDER.index)


def _given_axis(app, position: int = 1) -> bool:
    """Whether a call (``np.cumsum(a, 1)``, ``rt.cumsum(a, axis=0)``) names an axis, which keeps the ndim; the
    axis is the argument at ``position``, or the keyword."""
    axis = app.args[position] if len(app.args) > position else app.keywords.get("axis")
    return axis is not None and not (isinstance(axis, gast.Constant) and axis.value is None)


def of_value(value) -> Optional[Aval]:
    """The abstract value of a concrete Python or NumPy value."""
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - anything NumPy cannot hold has no aval
        return None
    kind = array.dtype.kind
    kind = "i" if kind == "u" else kind
    return (kind, array.ndim) if kind in _ORDER else None


class _Infer:
    def __init__(self, env: Dict[str, Aval]):
        self.env: Dict[str, Optional[Aval]] = dict(env)

    def set(self, name: str, aval: Optional[Aval]) -> None:
        if name in self.env and self.env[name] != aval:
            self.env[name] = None
        else:
            self.env[name] = aval

    def block(self, stmts) -> None:
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                self.set(stmt.targets[0].id, self.expr(stmt.value))
            elif isinstance(stmt, gast.For):
                self.set(stmt.target.id, ("i", 0))
                for _ in range(3):
                    self.block(stmt.body)
            elif isinstance(stmt, gast.While):
                for _ in range(3):
                    self.block(stmt.body)
            elif isinstance(stmt, gast.If):
                self.block(stmt.body)
                self.block(stmt.orelse)
            elif isinstance(stmt, gast.Expr) and tape_of(stmt.value, "append"):
                self.set(tape_of(stmt.value, "append") + _ELEMENTS, self.expr(stmt.value.args[0]))

    def expr(self, node) -> Optional[Aval]:
        if isinstance(node, gast.Constant):
            return of_value(node.value) if node.value is not None else None
        if isinstance(node, gast.Name):
            return self.env.get(node.id)
        if isinstance(node, gast.Compare):
            parts = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
            return None if None in parts else ("b", max(p[1] for p in parts))
        if isinstance(node, gast.BoolOp):
            return ("b", 0)
        if isinstance(node, gast.Subscript):
            return self.subscript(node)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            return ("b", 0)
        if isinstance(node, gast.Attribute) and node.attr in ("ndim", "size"):
            return ("i", 0)
        if isinstance(node, gast.Attribute) and node.attr == "shape":
            return ("t", 1)  # a tuple of ints: only indexing it gives a value with an aval
        if isinstance(node, gast.Attribute) and node.attr in ("strides", "dtype", "flags"):
            return None
        if tape_of(node, "pop"):
            return self.env.get(tape_of(node, "pop") + _ELEMENTS)
        app = application(node)
        if app is None or any((self.expr(a) or ("", 0))[0] == "t" for a in app.args):
            return None
        return self.call(app, node)

    def subscript(self, node: gast.Subscript) -> Optional[Aval]:
        if isinstance(node.value, gast.Attribute) and node.value.attr == "shape":
            return ("i", 0) if not isinstance(node.slice, (gast.Slice, gast.Tuple)) else None
        base = self.expr(node.value)
        if base is None:
            return None
        if base[0] == "t":
            return ("i", 0) if not isinstance(node.slice, (gast.Slice, gast.Tuple)) else None
        elts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        ndim = base[1]
        for elt in elts:
            if isinstance(elt, gast.Slice):
                continue
            if isinstance(elt, gast.Constant) and elt.value is None:
                ndim += 1
                continue
            aval = self.expr(elt)
            if aval is None:
                return None
            if aval[1] == 0 and aval[0] in "ib":
                ndim -= 1
            elif len(elts) == 1 and aval[0] == "i":
                ndim += aval[1] - 1
            elif len(elts) == 1 and aval[0] == "b":
                ndim += 1 - aval[1]
            else:
                return None
        return (base[0], ndim) if ndim >= 0 else None

    def call(self, app, node) -> Optional[Aval]:
        key = app.key
        name = key[1] if isinstance(key, tuple) else getattr(key, "__name__", type(key).__name__)
        args = [self.expr(a) for a in app.args]
        if isinstance(key, type) and issubclass(key, gast.AST):
            return self.operator(key, args)
        if isinstance(key, type) and issubclass(key, np.generic) and len(args) == 1:  # np.float64(0.5)
            kind = _kind_of(np.dtype(key))
            return (kind, args[0][1]) if kind is not None and args[0] is not None else None
        if name in _INT_RESULT and not args[1:] and name in ("len", "int"):
            return ("i", 0)
        if name == "float":
            return ("f", 0)
        if name in ("unreduce", "unbroadcast") and len(args) > 1 and args[0] and args[1]:
            return (_promote(args[0][0], "f"), args[1][1])
        if name in ("reserve_rows", "grow_rows", "index_added", "real_output") and args:
            return args[0]
        if name == "scalar_output" and args and args[0]:  # grad's output, checked to be a scalar
            return (args[0][0], 0)
        if name == "chooser_weights" and args and args[0]:
            return ("f", args[0][1])
        if name == "prod_others" and args and args[0]:
            return (_promote(args[0][0], "f"), args[0][1])
        if name in ("prod_others_vjp", "cumprod_grad") and len(args) > 1 and args[0] and args[1]:
            return (_promote(args[0][0], args[1][0], "f"), args[1][1])
        if name == "cumprod_grad_vjp" and len(args) > 2 and args[0] and args[1] and args[2]:
            return (_promote(args[0][0], args[1][0], args[2][0], "f"), args[2][1])
        if name == "cumprod_jvp" and len(args) > 1 and args[0] and args[1]:  # flat without an axis, as cumprod
            return (_promote(args[0][0], args[1][0], "f"), args[1][1] if _given_axis(app, 2) else 1)
        if name in _REDUCTIONS:
            return self.reduction(name, app, args)
        if name in ("allclose", "array_equal", "array_equiv"):
            return ("b", 0)
        if name in ("dot", "matmul") and len(args) == 2:
            return self.operator(gast.MatMult, args)
        if name in ("reshape",):
            shape = app.args[1] if len(app.args) > 1 else app.keywords.get("newshape")
            return self.reshape(args[0], shape)
        if name == "diagonal" and args and args[0]:
            return (args[0][0], max(args[0][1] - 1, 1))
        if name in ("cumsum", "cumprod") and args and args[0] and _given_axis(app):
            return (args[0][0], args[0][1])  # along an axis: the shape of the operand
        if name in ("ravel", "flatten", "arange", "linspace", "cumsum", "cumprod", "diagonal"):
            base = args[0] if args and args[0] else ("f", 1)
            return (base[0] if name not in ("linspace",) else "f", 1)
        if name in ("zeros", "ones", "empty", "full"):
            return self.constructor(app, name)
        if name == "outer":
            return ("f", 2)
        if name == "eye" or name == "identity":
            return ("f", 2)
        if name == "inner" and len(args) > 1 and args[0] and args[1]:
            return (_promote(args[0][0], args[1][0]), max(args[0][1] + args[1][1] - 2, 0))
        if name in ("det", "slogdet_logabs", "slogdet_sign", "trace") and args and args[0]:
            return ("f", max(args[0][1] - 2, 0))  # over the last two axes (the first two for trace)
        if name in ("det", "slogdet_logabs", "slogdet_sign", "trace", "inner", "vdot"):
            return ("f", 0)
        if name == "solve":
            return args[1] if len(args) > 1 else None
        if name == "expand_dims":
            return (args[0][0], args[0][1] + 1) if args and args[0] else None
        if name in ("diag",):
            return (args[0][0], 2 if args[0][1] == 1 else 1) if args and args[0] else None
        if None in args or not args:
            return None
        kind = _promote(*(a[0] for a in args))
        ndim = max(a[1] for a in args)
        if name in _BOOL_RESULT:
            return ("b", ndim)
        if name in _KEEP_NDIM:
            return (_real_of(name, _promote(kind, "f") if name == "angle" else kind), ndim)
        if _elementwise(key):
            return (_promote(kind, "f"), ndim)
        return None

    @staticmethod
    def operator(op, args) -> Optional[Aval]:
        if None in args:
            return None
        kind = _promote(*(a[0] for a in args))
        if op is gast.MatMult:
            a, b = args
            ndim = {(2, 2): 2, (2, 1): 1, (1, 2): 1, (1, 1): 0}.get((a[1], b[1]))
            return (kind, ndim) if ndim is not None else None
        if op is gast.Div:
            kind = _promote(kind, "f")
        if op in (gast.BitAnd, gast.BitOr, gast.BitXor) and kind == "b":
            kind = "b"
        return (kind, max(a[1] for a in args))

    def reduction(self, name, app, args) -> Optional[Aval]:
        if not args or args[0] is None:
            return None
        kind, ndim = args[0]
        axis = app.args[1] if len(app.args) > 1 and name != "norm" else app.keywords.get("axis")
        keepdims = app.keywords.get("keepdims")
        keep = isinstance(keepdims, gast.Constant) and keepdims.value is True
        if axis is None or (isinstance(axis, gast.Constant) and axis.value is None):
            out = ndim if keep else 0
        elif isinstance(axis, gast.Tuple):
            out = ndim if keep else ndim - len(axis.elts)
        else:
            out = ndim if keep else ndim - 1
        if name in ("argmax", "argmin", "count_nonzero"):
            return ("i", out)
        if name in ("any", "all"):
            return ("b", out)
        if name in ("mean", "var", "std", "norm", "logsumexp"):
            kind = _promote(kind, "f")
        elif kind == "b":
            kind = "i"
        return (_real_of(name, kind), out)

    @staticmethod
    def reshape(base, shape) -> Optional[Aval]:
        if base is None or shape is None:
            return None
        if isinstance(shape, gast.Tuple):
            return (base[0], len(shape.elts))
        if isinstance(shape, (gast.Constant, gast.UnaryOp)):
            return (base[0], 1)
        return None

    def constructor(self, app, name) -> Optional[Aval]:
        shape = app.args[0] if app.args else app.keywords.get("shape")
        kind = "f"
        dtype = app.keywords.get("dtype") or (app.args[1] if len(app.args) > 1 and name != "full" else None)
        if dtype is not None:
            kind = _dtype_kind(dtype)
            if kind is None:
                return None
        if isinstance(shape, gast.Tuple):
            return (kind, len(shape.elts))
        aval = self.expr(shape) if shape is not None else None
        return (kind, 1) if aval == ("i", 0) else None


def expr_aval(node: gast.expr, env: Dict[str, Aval]) -> Optional[Aval]:
    """The abstract value of the expression ``node`` given those of the names it reads."""
    aval = _Infer(env).expr(node)
    return aval if aval is not None and aval[0] in _ORDER else None


def infer(fdef: gast.FunctionDef, params: Dict[str, Aval]) -> Dict[str, Aval]:
    """``{name: (kind, ndim)}`` for every variable of ``fdef`` whose abstract value is certain."""
    analysis = _Infer(params)
    analysis.block(fdef.body)
    return {k: v for k, v in analysis.env.items() if v is not None and v[0] in _ORDER and not k.endswith(_ELEMENTS)}
