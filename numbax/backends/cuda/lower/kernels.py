"""Kernel source: one thread's element expression, the elementwise kernel and the reduction's first pass.

Kernels iterate over a shape with a grid-stride loop and find each operand's element by index arithmetic:
the flat index is unravelled into ``i0, i1, ...`` over the iteration shape, and an operand broadcast along a
dimension (extent 1 there, or fewer dimensions: NumPy aligns them on the right) reads index 0 there.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Sequence, Tuple

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import application
from numbax.primitives.cuda import Cast, Elementwise
from numbax.primitives.registry import entry

_COMPARE = {gast.Gt: ">", gast.GtE: ">=", gast.Lt: "<", gast.LtE: "<=", gast.Eq: "==", gast.NotEq: "!="}
_COMBINE = {"sum": "{0} + {1}", "max": "gr.maximum({0}, {1})", "min": "gr.minimum({0}, {1})", "prod": "{0} * {1}",
            "any": "({0} or {1})", "all": "({0} and {1})"}
IDENTITY = {"sum": "0", "prod": "1", "any": "False", "all": "True"}  # the reductions of no elements (max, min: none)
_FINISH = {("sum", False, False): "gr.finish_sum", ("sum", True, False): "gr.finish_mean",
           ("max", False, False): "gr.finish_max", ("min", False, False): "gr.finish_min",
           ("sum", False, True): "gr.finish_norm", ("prod", False, False): "gr.finish_prod",
           ("any", False, False): "gr.finish_any", ("all", False, False): "gr.finish_all"}


class Unsupported(Exception):
    """A construct the GPU backend has no lowering for; ``what`` names it for the user."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


# the names kernels use for themselves: an operand's parameter never takes one
_MODULES = frozenset({"cuda", "gr", "np", "math", "THREADS"})
_RESERVED = _MODULES | {"out", "i", "q", "partial", "shape", "parts", "cache", "cached", "t", "count", "b", "o",
                        "acc", "seen", "r", "s"}
_BOOL = {gast.And: "and", gast.Or: "or"}
# NumPy's and math's float constants, as a kernel names them
_CONSTANTS = {f"{module}.{name}": f"math.{name}" for module in ("np", "math") for name in ("inf", "nan", "pi", "e")}


@dataclasses.dataclass
class Operands:
    """The names an element expression reads: arrays (name -> ndim) and numbers, in order of first use, and
    the arrays no one wrote that it computes (name -> expression, each after what it reads): ``computed``, read
    more than once, into a local of each thread; ``inline``, read once, where it is read. ``names`` gives each
    its parameter's name in the kernel, each array the name of its element there (``x_i``), and each computed
    array the name of its element (``y_v``)."""

    arrays: Dict[str, int]
    numbers: List[str]
    computed: Dict[str, gast.expr] = dataclasses.field(default_factory=dict)
    inline: Dict[str, gast.expr] = dataclasses.field(default_factory=dict)
    names: Dict[str, str] = dataclasses.field(default_factory=dict)
    # a per-thread kernel's (``threads``): its example's index, each array's element read as ``x[index]``, and
    # only the modules it calls reserved (its locals keep the names of the generated code)
    index: str = ""
    # a per-thread kernel's values written verbatim: a slot of a tape, ``tape[i, row, 0]`` (``threads``)
    verbatim: Dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        taken = set(_MODULES) | {self.index} if self.index else \
            set(_RESERVED) | {f"{p}{d}" for p in "ijs" for d in range(32)}
        wanted = [(name, name) for name in list(self.arrays) + self.numbers]
        wanted += [(name + "[]", name + "_i") for name in self.arrays if not self.index]
        wanted += [(name + "()", name + "_v") for name in self.computed]
        for key, local in wanted:
            while local in taken:
                local += "_"
            taken.add(local)
            self.names[key] = local

    def args(self) -> List[str]:
        """The driver's arguments for them."""
        return list(self.arrays) + self.numbers

    def params(self) -> List[str]:
        """The kernel's parameters for them."""
        return [self.names[name] for name in self.args()]

    def element_of(self, name: str) -> str:
        """The kernel's name for the element of array ``name`` that a thread reads."""
        if self.index:
            return f"{self.names[name]}[{self.index}]"
        return self.names[name + "[]"]


def element(node: gast.expr, operands: Operands) -> str:
    """The expression one thread evaluates for one element (array ``x`` read as ``x_i``, loaded beforehand).

    Raises:
        Unsupported: ``node`` holds something without an elementwise lowering.
    """
    if isinstance(node, gast.Name):
        if node.id in operands.verbatim:
            return operands.verbatim[node.id]
        if node.id in operands.arrays:
            return operands.element_of(node.id)
        if node.id in operands.numbers:
            return operands.names[node.id]
        if node.id in operands.computed:
            return operands.names[node.id + "()"]
        if node.id in operands.inline:
            return element(operands.inline[node.id], operands)
        raise Unsupported(f"the value `{node.id}`")
    if isinstance(node, gast.Constant) and type(node.value) in (bool, int, float):
        return repr(node.value)
    if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
            f"{node.value.id}.{node.attr}" in _CONSTANTS:
        return _CONSTANTS[f"{node.value.id}.{node.attr}"]
    if isinstance(node, gast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return f"({element(node.left, operands)} {_COMPARE[type(node.ops[0])]} " \
               f"{element(node.comparators[0], operands)})"
    # truth values: of numbers only, so in one example's body (an array's has none; NumPy raises)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not) and operands.index:
        return f"(not {element(node.operand, operands)})"
    if isinstance(node, gast.BoolOp) and operands.index:
        return "(" + f" {_BOOL[type(node.op)]} ".join(element(v, operands) for v in node.values) + ")"
    if isinstance(node, gast.IfExp):
        return f"({element(node.body, operands)} if {element(node.test, operands)} " \
               f"else {element(node.orelse, operands)})"
    app = application(node)
    lowering = getattr(entry(app.key), "cuda", None) if app is not None else None
    if isinstance(lowering, Cast) and len(app.args) == 2 and not app.keywords:
        target = application(gast.Call(func=app.args[1], args=[], keywords=[]))
        lowering = getattr(entry(target.key), "cuda", None) if target is not None else None
        if isinstance(lowering, Elementwise) and lowering.template.startswith("np."):
            return lowering.template.format(element(app.args[0], operands))
        raise Unsupported(f"`.astype` to `{target.name if target else '?'}`")
    if not isinstance(lowering, Elementwise):
        raise Unsupported(f"`{app.name}`" if app is not None else type(node).__name__)
    if app.keywords or len(app.args) != lowering.arity:
        raise Unsupported(f"`{app.name}` with keyword arguments or {len(app.args)} operands")
    absent = tuple(k for k, arg in enumerate(app.args) if isinstance(arg, gast.Constant) and arg.value is None)
    template = dict(lowering.without).get(absent, lowering.template) if absent else lowering.template
    return template.format(*["" if k in absent else element(arg, operands) for k, arg in enumerate(app.args)])


def _unravel(flat: str, dims: Sequence[int], extent, prefix: str = "i") -> List[str]:
    if not dims:
        return []
    lines = [f"q = {flat}"]
    for position, d in enumerate(reversed(dims)):
        if position == len(dims) - 1:
            lines.append(f"{prefix}{d} = q")
        else:
            lines += [f"{prefix}{d} = q % {extent(d)}", f"q = q // {extent(d)}"]
    return lines


def _loads(operands: Operands, ndim: int) -> List[str]:
    """Each thread's reads of its arrays' elements, then the computed arrays' elements."""
    lines = []
    for name, rank in operands.arrays.items():
        param = operands.names[name]
        index = ", ".join(f"i{j + ndim - rank} if {param}.shape[{j}] != 1 else 0" for j in range(rank))
        lines.append(f"{operands.element_of(name)} = {param}[{index}]")
    for name, expr in operands.computed.items():
        lines.append(f"{operands.names[name + '()']} = {element(expr, operands)}")
    return lines


def _indent(lines: List[str], depth: int) -> str:
    return "".join("    " * depth + line + "\n" for line in lines)


def elementwise_kernel(name: str, expr: str, operands: Operands, ndim: int) -> str:
    """A kernel writing ``expr`` at every element of ``out`` (``ndim`` dimensions)."""
    index = ", ".join(f"i{d}" for d in range(ndim))
    body = _unravel("i", range(ndim), lambda d: f"out.shape[{d}]") + _loads(operands, ndim) + \
        [f"out[{index}] = {expr}"]
    return (f"@cuda.jit\ndef {name}({', '.join(['out'] + operands.params())}):\n"
            f"    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):\n" + _indent(body, 2))


def reduction_kernel(name: str, expr: str, operands: Operands, ndim: int, axes: Sequence[int], op: str,
                     dtype: np.dtype) -> str:
    """The first pass of a reduction of ``expr`` (over an iteration shape ``shape`` of ``ndim`` dimensions)
    over ``axes``: block ``b`` reduces part ``b % parts`` of the elements of output ``b // parts`` into
    ``partial[output, part]``, its threads striding over them and then halving a shared cache. A thread or a
    part that met no element marks its slot unseen (max and min have no identity)."""
    kept = [d for d in range(ndim) if d not in axes]
    count = " * ".join(f"shape[{d}]" for d in axes) or "1"
    combine = _COMBINE[op]
    zero = f"np.{dtype.name}({IDENTITY.get(op, '0')})"  # a part of no elements: unseen, or none at all
    inner = _unravel("o", kept, lambda d: f"shape[{d}]") + _unravel("r", list(axes), lambda d: f"shape[{d}]") + \
        _loads(operands, ndim) + [f"acc = {combine.format('acc', expr)} if seen else {expr}", "seen = True"]
    return (f"@cuda.jit\ndef {name}({', '.join(['partial', 'shape', 'parts'] + operands.params())}):\n"
            f"    cache = cuda.shared.array(THREADS, np.{dtype.name})\n"
            f"    cached = cuda.shared.array(THREADS, np.bool_)\n"
            f"    t = cuda.threadIdx.x\n"
            f"    count = {count}\n"
            f"    for b in range(cuda.blockIdx.x, partial.size, cuda.gridDim.x):\n"
            f"        o = b // parts\n"
            f"        acc = {zero}\n"
            f"        seen = False\n"
            f"        for r in range(b % parts * cuda.blockDim.x + t, count, parts * cuda.blockDim.x):\n"
            + _indent(inner, 3) +
            f"        cache[t] = acc\n"
            f"        cached[t] = seen\n"
            f"        cuda.syncthreads()\n"
            f"        s = cuda.blockDim.x // 2\n"
            f"        while s > 0:\n"
            f"            if t < s and cached[t + s]:\n"
            f"                cache[t] = {combine.format('cache[t]', 'cache[t + s]')} if cached[t] else cache[t + s]\n"
            f"                cached[t] = True\n"
            f"            cuda.syncthreads()\n"
            f"            s //= 2\n"
            f"        if t == 0:\n"
            f"            partial[o, b % parts] = cache[0] if cached[0] else {zero}\n"
            f"        cuda.syncthreads()\n")


def finisher(op: str, mean: bool, norm: bool) -> str:
    """The runtime kernel of a reduction's second pass."""
    return _FINISH[(op, mean, norm)]


def unbroadcast_kernel(name: str, expr: str, operands: Operands, ndim: int, rank: int, dtype: np.dtype) -> str:
    """Reverse mode's ``rt.unbroadcast``: ``expr`` (over an iteration shape ``shape`` of ``ndim`` dimensions)
    summed back to ``out`` (``rank <= ndim`` dimensions, NumPy's broadcasting aligning them on the right).

    One thread per element ``j`` of ``out`` sums, in the order the CPU backend's loop nest does, the elements
    that broadcast onto it: all of each leading dimension, and all of a dimension where ``out`` has extent 1
    and ``shape`` more; elsewhere index ``j`` itself (the span ``s`` of such a dimension is 1, and where it
    is summed ``j`` is 0, so ``i = r % s + j`` covers both)."""
    lead = ndim - rank
    spans = [f"s{d} = shape[{d}]" if d < lead else f"s{d} = shape[{d}] if out.shape[{d - lead}] != shape[{d}] else 1"
             for d in range(ndim)]
    walk = ["q = r"]
    for d in reversed(range(ndim)):
        walk += [f"i{d} = q % s{d}" + (f" + j{d - lead}" if d >= lead else ""), f"q = q // s{d}"]
    total = " * ".join(f"s{d}" for d in range(ndim))
    inner = walk + _loads(operands, ndim) + [f"acc = acc + {expr}"]
    index = ", ".join(f"j{k}" for k in range(rank))
    body = _unravel("o", range(rank), lambda k: f"out.shape[{k}]", prefix="j") + spans + \
        [f"acc = np.{dtype.name}(0)", f"for r in range({total}):"]
    return (f"@cuda.jit\ndef {name}({', '.join(['out', 'shape'] + operands.params())}):\n"
            f"    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):\n" + _indent(body, 2) +
            _indent(inner, 3) + f"        out[{index}] = acc\n")


def unreduce_kernel(name: str, ndim: int, axes: Sequence[int], keepdims: bool) -> str:
    """Reverse mode's ``rt.unreduce`` over ``axes``: ``out`` (``ndim`` dimensions) filled with the cotangent
    ``g`` of the reduction, each element with ``g``'s at its kept indices (index 0 of a kept axis of 1)."""
    index = ", ".join(f"i{d}" for d in range(ndim))
    read = ", ".join("0" if d in axes else f"i{d}" for d in range(ndim) if keepdims or d not in axes)
    body = _unravel("i", range(ndim), lambda d: f"out.shape[{d}]") + [f"out[{index}] = g[{read}]"]
    return (f"@cuda.jit\ndef {name}(out, g):\n"
            f"    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):\n" + _indent(body, 2))


def broadcast_kernel(name: str, ndim: int, rank: int) -> str:
    """Reverse mode's ``rt.unreduce`` of an array cotangent over no axis, ``np.broadcast_to(g, out.shape)``:
    each element of ``out`` (``ndim`` dimensions) is ``g``'s (``rank`` dimensions, aligned at the end) at its
    indices, index 0 along an axis of 1."""
    index = ", ".join(f"i{d}" for d in range(ndim))
    read = ", ".join(f"(0 if g.shape[{j}] == 1 else i{ndim - rank + j})" for j in range(rank))
    body = _unravel("i", range(ndim), lambda d: f"out.shape[{d}]") + [f"out[{index}] = g[{read}]"]
    return (f"@cuda.jit\ndef {name}(out, g):\n"
            f"    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):\n" + _indent(body, 2))


def _advanced(first: int, count: int, rank: int, extent: str) -> Tuple[List[str], List[str]]:
    """A thread's index arrays read at its position ``i{first}`` of the indexed part (``rank`` dimensions, the
    index arrays' axis at ``first``), wrapped from the end; and the index of ``count`` axes they give, with the
    part's other indices, into the array of shape ``extent``."""
    lines = []
    for a in range(count):
        lines += [f"j{a} = idx{a}[i{first}]", f"j{a} = j{a} + {extent}[{first + a}] if j{a} < 0 else j{a}"]
    index = [f"i{d}" for d in range(first)] + [f"j{a}" for a in range(count)] + \
        [f"i{d}" for d in range(first + 1, rank)]
    return lines, index


def atomic_add(array: str, index: List[str], value: str) -> str:
    """``cuda.atomic.add`` of ``value`` at ``array[index]``: one index as a number, several as a tuple
    (numba.cuda fails to lower a 1-tuple)."""
    at = index[0] if len(index) == 1 else f"({', '.join(index)})"
    return f"cuda.atomic.add({array}, {at}, {value})"


def gather_kernel(name: str, ndim: int, first: int, count: int) -> str:
    """``gr.gather``'s kernel: ``out = x[..., idx0, ..., idx{count-1}, ...]`` (``x`` of ``ndim`` dimensions,
    the index arrays at axes ``first`` on; their indices in bounds)."""
    rank = ndim - count + 1
    reads, index = _advanced(first, count, rank, "x.shape")
    body = _unravel("i", range(rank), lambda d: f"out.shape[{d}]") + reads + \
        [f"out[{', '.join(f'i{d}' for d in range(rank))}] = x[{', '.join(index)}]"]
    params = ", ".join(["out", "x"] + [f"idx{a}" for a in range(count)])
    return (f"@cuda.jit\ndef {name}({params}):\n"
            f"    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):\n" + _indent(body, 2))


def scatter_kernel(name: str, ndim: int, first: int, count: int, write: str, value_ndim: int) -> str:
    """``gr.scatter``'s kernel: each element of the part ``out[..., idx0, ...]`` (of ``shape``, ``size``
    elements) written from ``values`` (an array of that shape, or a number where ``value_ndim`` is 0) as
    ``write`` says: ``"add"`` atomically (``np.add.at``), ``"set"``, or a binary operator (``+``, ...)."""
    rank = ndim - count + 1
    reads, index = _advanced(first, count, rank, "out.shape")
    value = f"values[{', '.join(f'i{d}' for d in range(rank))}]" if value_ndim else "values"
    at = ", ".join(index)
    if write == "add":
        store = atomic_add("out", index, value)
    elif write == "set":
        store = f"out[{at}] = {value}"
    else:
        store = f"out[{at}] = out[{at}] {write} {value}"
    body = _unravel("i", range(rank), lambda d: f"shape[{d}]") + reads + [store]
    params = ", ".join(["out", "shape", "size", "values"] + [f"idx{a}" for a in range(count)])
    return (f"@cuda.jit\ndef {name}({params}):\n"
            f"    for i in range(cuda.grid(1), size, cuda.gridsize(1)):\n" + _indent(body, 2))
