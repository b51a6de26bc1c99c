"""The GPU lowering's state and what every part of it asks: stand-ins, refusals, host expressions, operands.

``driver`` walks the statements and ``launches`` writes kernels; both read and extend the state kept here:
the stand-in of each variable (``probes``), the kernels written so far, the arrays the driver owns, and the
user's line being lowered, at which every refusal is raised.
"""
from __future__ import annotations

import ast
import collections
from typing import Any, Counter, Dict, List, Set, Tuple

import gast
import numpy as np

from numbax.ast_passes.analyses.primitives import application
from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.kernels import Operands, Unsupported, element
from numbax.errors import NumbaxDeviceError
from numbax.primitives.cuda import Cast, Elementwise, Reduction
from numbax.primitives.registry import entry

_HINT = "run it on the CPU backend: jit(f) with NumPy arguments (numbax.device_get(x) brings device arrays back)."
_METADATA = frozenset({"shape", "size", "ndim"})
_HOST_BUILTINS = frozenset({"int", "bool", "len", "min", "max", "range"})
# numbax.runtime's helpers that the driver calls on numbers (``probes``): vmap's check of the mapped axes'
# lengths, reverse mode's seed of a number's gradient, the exponent of a power's derivative (``launches``)
HOST_RUNTIME = frozenset({"rt.batch_size", "rt.ones_like", "rt.zeros_like", "rt.scalar_output",
                          "rt.power_exponent"})


def text(node: gast.AST) -> str:
    """The first line of ``node``'s source, for messages."""
    return ast.unparse(gast.gast_to_ast(node)).splitlines()[0]


def name(identifier: str, ctx=None) -> gast.Name:
    """A ``gast.Name`` (loaded unless ``ctx`` says otherwise)."""
    return gast.Name(id=identifier, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def parse(source: str) -> List[gast.stmt]:
    """The statements of ``source``."""
    return gast.parse(source).body


class LoweringState:
    """What the lowering knows at the statement it is at (see the module docstring)."""

    def __init__(self, env: Dict[str, Any], reads):
        self.env = env  # name -> stand-in of its value (probes)
        self.reads = reads  # name -> how often the function reads it (fusible)
        self.folded: Dict[str, gast.expr] = {}  # array name -> the expression its reader's kernel computes
        # arrays the driver allocated (or views and aliases of them): an in-place update touches no argument
        self.owned: Set[str] = set()
        self.assigned_at: Dict[str, Any] = {}  # name -> the origin of its latest assignment (for refusals)
        self.views: Dict[str, str] = {}  # a view the driver made of an array -> that array (``indexing``)
        self.arguments: Set[str] = set()  # the parameters the user passes (the others: constants)
        self.written: Dict[str, str] = {}  # an argument the driver writes -> the user's line of its first write
        self.kernels: List[Tuple[str, Any]] = []
        self.origin = None
        self.first_origin = None  # the function's first line of the user's: where code before it is refused
        self.count: Counter = collections.Counter()
        self.pre: List[gast.stmt] = []

    def refuse(self, what: str, origin=None) -> NumbaxDeviceError:
        """The error for a construct the GPU backend does not support yet, at ``origin`` (by default the
        current statement's)."""
        return NumbaxDeviceError(f"{what} is not supported by the GPU backend yet",
                                 origin or self.origin or self.first_origin, hint=_HINT)

    def fresh(self, stem: str) -> str:
        """A new name (kernels, temporaries), numbered for each stem."""
        self.count[stem] += 1
        return f"_{stem}_{self.count[stem]}"

    def probe(self, value: gast.expr) -> Any:
        """The stand-in of ``value``'s result (its dtype and ndim, by NumPy)."""
        try:
            return probes.evaluate(value, self.env)
        except Exception:  # noqa: BLE001 - stand-ins have extent 1, so what fails here is no shape error
            draws = [text(n.func) for n in gast.walk(value) if isinstance(n, gast.Call) and
                     text(n.func).startswith("rt.random_")]
            if draws:  # hoisted out of vmap's loop (the same for every example), or drawn by jit's own code
                raise self.refuse(f"`numbax.random.{draws[0][len('rt.random_'):]}` in the host's code (a draw "
                                  "that is not made in one example's body of a vmap)") from None
            raise self.refuse(f"`{text(value)}`") from None

    def check_host(self, node: gast.expr) -> None:
        """Refuse a host expression that reads an array element or calls what has no lowering."""
        for sub in gast.walk(node):
            if isinstance(sub, gast.Name) and probes.is_array(self.env.get(sub.id)) and \
                    not self._metadata_of(sub, node):
                raise self.refuse(f"reading the array `{sub.id}` in `{text(node)}` on the host")
            if isinstance(sub, gast.Call) and not self._host_call(sub):
                raise self.refuse(f"`{text(sub)}`")
            if isinstance(sub, gast.Subscript) and not (isinstance(sub.value, gast.Attribute)
                                                        and sub.value.attr == "shape") and \
                    not (isinstance(sub.value, gast.Name) and isinstance(self.env.get(sub.value.id), tuple)):
                # (a shape read into a name first, ``s = x.shape; n = s[0]``, is a host tuple)
                raise self.refuse(f"indexing `{text(sub)}`")

    @staticmethod
    def _metadata_of(name: gast.Name, root: gast.expr) -> bool:
        """Whether ``name`` appears in ``root`` only as ``name.shape``, ``.size``, ``.ndim`` or ``len(name)``."""
        for sub in gast.walk(root):
            if isinstance(sub, gast.Attribute) and sub.value is name:
                return sub.attr in _METADATA
            if isinstance(sub, gast.Call) and isinstance(sub.func, gast.Name) and sub.func.id == "len" and \
                    name in sub.args:
                return True
        return False

    @staticmethod
    def _host_call(call: gast.Call) -> bool:
        if isinstance(call.func, gast.Name) and call.func.id in _HOST_BUILTINS or text(call.func) in HOST_RUNTIME:
            return True
        app = application(call)
        return app is not None and getattr(entry(app.key), "cuda", None) is not None and \
            not isinstance(entry(app.key).cuda, Reduction)

    def operands(self, node: gast.expr) -> Operands:
        """The arrays and numbers an element expression reads, and the folded arrays it computes on the way
        (each after those it reads)."""
        arrays: Dict[str, int] = {}
        numbers: List[str] = []
        computed: Dict[str, gast.expr] = {}
        uses: Counter = collections.Counter()

        def visit(expr: gast.expr) -> None:
            for sub in gast.walk(expr):
                if isinstance(sub, gast.Name) and sub.id in self.folded:
                    uses[sub.id] += 1
                    if sub.id not in computed:
                        visit(self.folded[sub.id])
                        computed[sub.id] = self.folded[sub.id]
                    continue
                read(sub)

        def read(sub: gast.AST) -> None:
            if isinstance(sub, gast.Name) and sub.id in self.env:
                value = self.env[sub.id]
                if probes.is_array(value):
                    arrays.setdefault(sub.id, value.ndim)
                elif sub.id not in numbers:
                    numbers.append(sub.id)

        visit(node)
        return Operands(arrays, numbers, {n: e for n, e in computed.items() if uses[n] > 1},
                        {n: e for n, e in computed.items() if uses[n] == 1})

    def element(self, node: gast.expr, operands: Operands) -> str:
        """``kernels.element`` of ``node`` (and of the arrays it computes), refused where it has none, or where
        it computes with complex numbers what its template computes for real numbers only."""
        for expr in [node, *operands.computed.values(), *operands.inline.values()]:
            self._refuse_complex(expr)
        try:
            for expr in operands.computed.values():
                element(expr, operands)
            return element(node, operands)
        except Unsupported as exc:
            raise self.refuse(f"{exc.what} inside an array expression") from None

    def _refuse_complex(self, node: gast.expr) -> None:
        """Refuse an operation in ``node`` with a complex operand whose kernel template is for real numbers
        (``Elementwise.complex_numbers``; casts; comparisons other than ``==`` and ``!=``)."""
        for sub in gast.walk(node):
            if isinstance(sub, gast.Compare):
                operands = [sub.left, *sub.comparators]
                real_only = not all(isinstance(op, (gast.Eq, gast.NotEq)) for op in sub.ops)
                name = f"`{text(sub)}`"
            else:
                app = application(sub) if isinstance(sub, (gast.Call, gast.BinOp, gast.UnaryOp)) else None
                lowering = getattr(entry(app.key), "cuda", None) if app is not None else None
                if not isinstance(lowering, (Elementwise, Cast)):
                    continue
                operands, name = app.args[:1] if isinstance(lowering, Cast) else app.args, f"`{app.name}`"
                real_only = not getattr(lowering, "complex_numbers", False)
            if real_only and any(self._is_complex(op) for op in operands):
                raise self.refuse(f"{name} of complex numbers")

    def _is_complex(self, node: gast.expr) -> bool:
        try:
            return np.asarray(probes.evaluate(node, self.env)).dtype.kind == "c"
        except Exception:  # noqa: BLE001 - what has no stand-in is refused where its element is written
            return False

    @staticmethod
    def shape_of(operands: Operands) -> str:
        """The driver's expression of the broadcast shape of an element expression's arrays."""
        if len(operands.arrays) == 1:
            return f"{next(iter(operands.arrays))}.shape"
        return f"gr.broadcast_shape({', '.join(f'{name}.shape' for name in operands.arrays)})"
