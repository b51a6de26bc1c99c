"""The primitive registry: everything numbax knows about one primitive, in one entry.

A primitive is keyed by the object a call resolves to (``np.tanh``, ``math.exp``, ``builtins.max``, a
runtime helper), by a gast operator class (``gast.Mult``), or by an array method (``method_key("sum")``,
which is ``np.sum``'s entry itself: a method takes its receiver as the first argument). Its entry holds

- ``vjp``: the reverse-mode template (a ``templates.Rule``), ``NONDIFFERENTIABLE`` (no derivative flows
  through it, verified), or None: no rule, so reverse mode refuses a differentiated operand;
- ``jvp``: the forward-mode template (a ``Rule`` whose ``g`` is the tangent of the operand its ``d[x] = ...``
  line names, and that line the operand's part of the result's tangent), ``TRANSPOSED`` (an elementwise
  primitive: its VJP template read with ``g`` as the tangent, broadcasting left as it is), or None: no rule,
  so forward mode refuses a differentiated operand (``NONDIFFERENTIABLE`` in ``vjp`` holds for both);
- ``aval``: ``rule(app, args)``, the abstract value ``(kind, ndim)`` of its result from the call
  (``Application``) and its operands' abstract values (None where unknown), or None for "unknown";
- ``shape``: ``rule(app, args)``, the symbolic shape of its result from its operands' (``analyses.shapes``);
- ``complex_verified``: its VJP is checked against JAX for complex operands (reverse mode refuses any other
  primitive that meets a complex value);
- ``sequence``: its result is a tuple or list of arrays (``np.split``, the adjoints of ``np.concatenate``),
  whose tangent is one too;
- ``batch``: how ``vmap``'s loop, written as array code over a block of examples (``optimizations.vectorize``),
  computes it for all the block's rows at once: ``ELEMENTWISE`` (the rows lead, an operand of fewer axes gets
  ones after them), or ``rule(node, operands, keywords, rows)`` (the expression of one row, its operands as
  ``batching.Operand``s, the block's length) giving the block's expression, or None where it has none;
  None: no rule, so the loop stays a loop;
- ``cuda``: how the GPU backend computes it (``cuda.Elementwise``: a kernel expression; ``cuda.Reduction``:
  a block reduction; ``cuda.MATMUL``), or None: the GPU backend refuses it;
- ``composite``: a Python function of NumPy's parameters, written in other primitives, that the specializer
  compiles in place of the call (``np.diff``: slices and a subtraction), as ``jax.numpy`` writes such functions
  in ``lax``: its derivatives, batching and lowering are its primitives', so the entry has no other rule
  (only ``refuse``, which the specializer asks, for what the Python does not cover);
- ``keyword_composite``: ``(keywords, function)``: a composite for the calls that pass one of ``keywords``
  (``np.sum(x, where=m)``: ``np.sum`` of ``np.where(m, x, 0)``), the primitive's own rules for the others;
- ``refuse``: ``rule(app, args)`` (as ``aval``'s), why the rules above do not cover this call's argument
  values (a keyword's value, such as ``np.linalg.norm``'s ``ord``, or an operand's rank or kind), or None where
  they do; every transform asks ``refusal`` before it uses a rule, so a value without one is refused at the
  user's line when compiling, never at run time; None: the rules cover every value NumPy takes.

Entries are written one family per file beside this one (``elementwise``, ``reductions``, ...), by the
helpers below; the analyses, the transforms and ``coverage()`` read them and keep no table of their own.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from numbax.primitives import kinds, symbolic
from numbax.primitives.templates import Rule


class _Nondifferentiable:
    def __repr__(self):
        return "NONDIFFERENTIABLE"


NONDIFFERENTIABLE = _Nondifferentiable()


class _Transposed:
    def __repr__(self):
        return "TRANSPOSED"


TRANSPOSED = _Transposed()


class _Elementwise:
    def __repr__(self):
        return "ELEMENTWISE"


ELEMENTWISE = _Elementwise()


@dataclasses.dataclass
class Primitive:
    """One primitive's rules (see the module's docstring); a field left None is a rule numbax does not have."""

    vjp: Any = None
    jvp: Any = None
    aval: Optional[Callable] = None
    shape: Optional[Callable] = None
    complex_verified: bool = False
    sequence: bool = False
    batch: Any = None
    cuda: Any = None
    refuse: Optional[Callable] = None
    composite: Optional[Callable] = None
    keyword_composite: Optional[Tuple[frozenset, Callable]] = None


REGISTRY: Dict[Any, Primitive] = {}
# the rules of users' custom_vjp and custom_jvp functions, by the number their marker call holds
# (``rt.custom_rule(key, out, *operands)``, key ``("custom", key)``), with the name errors give them
CUSTOM: Dict[int, Tuple[str, Primitive]] = {}
# the helpers those rules' templates call, by name (each entry's own copies, named apart: a transformation of
# code generated elsewhere, a second derivative, instantiates the rule in a module that has not specialized them)
CUSTOM_HELPERS: Dict[str, Any] = {}
# the numbers of the markers that stay after their transformation, for a transformation of its result to read
# (a custom_jvp function's call inside its own rule, ``numbax.transforms.custom.lowering``)
PERSISTENT: set = set()
_FIELDS = frozenset(f.name for f in dataclasses.fields(Primitive))


def method_key(name: str):
    """The key of an array method or attribute (``x.sum``, ``x.T``)."""
    return ("method", name)


def custom_key(number: int) -> Tuple[str, int]:
    """The key of the custom rule ``number``."""
    return ("custom", number)


def elementwise_ufunc(key: Any) -> bool:
    """Whether ``key`` is a NumPy ufunc of scalars (``np.add``), not a generalized one with core dimensions
    (``np.matmul``, ``np.vecdot``: a ufunc, but not elementwise)."""
    return isinstance(key, np.ufunc) and key.signature is None


def entry(key: Any) -> Optional[Primitive]:
    """The entry of ``key``, or None (an unhashable key has none)."""
    if type(key) is tuple and len(key) == 2 and key[0] == "custom":
        found = CUSTOM.get(key[1])
        return found[1] if found is not None else None
    try:
        return REGISTRY.get(key)
    except TypeError:
        return None


def define(*keys: Any, **fields: Any) -> None:
    """Set ``fields`` in the entry of every key, creating the entries that do not exist."""
    unknown = set(fields) - _FIELDS
    if unknown:
        raise TypeError(f"define: no field {sorted(unknown)} in a primitive's entry")
    for key in keys:
        primitive = REGISTRY.setdefault(key, Primitive())
        for name, value in fields.items():
            setattr(primitive, name, value)


def defvjp(*keys: Any, **fields: Any) -> Callable[[Callable], Callable]:
    """Register the decorated template as the reverse-mode rule of every key (with ``fields`` besides)."""
    def register(fn: Callable) -> Callable:
        define(*keys, vjp=Rule(fn), **fields)
        return fn

    return register


def defjvp(*keys: Any, **fields: Any) -> Callable[[Callable], Callable]:
    """Register the decorated template as the forward-mode rule of every key (with ``fields`` besides)."""
    def register(fn: Callable) -> Callable:
        define(*keys, jvp=Rule(fn), **fields)
        return fn

    return register


def composite_of(*keys: Any, **fields: Any) -> Callable[[Callable], Callable]:
    """Register the decorated Python function as the composite of every key (with ``fields`` besides)."""
    def register(fn: Callable) -> Callable:
        define(*keys, composite=fn, **fields)
        return fn

    return register


def def_elementwise(*keys: Any, derivative: str, **fields: Any) -> None:
    """An elementwise function of one operand ``x`` whose derivative is ``derivative``, an expression of ``x``
    and the result ``ans`` (``def_elementwise(np.tanh, derivative="1.0 - ans * ans")``): its reverse-mode
    rule ``d[x] = g * (derivative)``, forward mode the same with ``g`` the tangent (``TRANSPOSED``), and, unless
    ``fields`` say otherwise, a float result of the operand's shape (the abstract value and the shape rule).

    The template reads as a hand-written one would: factors multiply ``g`` from the left (``"ans * c"`` gives
    ``g * ans * c``), ``"1.0 / e"`` gives ``g / e``, and only a sum or difference is parenthesized.
    """
    name = getattr(keys[0], "__name__", "elementwise")
    source = f"def {name}(g, ans, x):\n    d[x] = {_times_g(derivative)}\n"
    define(*keys, **{"vjp": Rule.from_source(source), "jvp": TRANSPOSED, "aval": kinds.elementwise("f"),
                     "shape": symbolic.elementwise, **fields})
    define(*(key for key in keys if isinstance(key, np.ufunc)), batch=ELEMENTWISE)


def _times_g(derivative: str) -> str:
    """``g * (derivative)`` as a hand-written rule puts it: ``g`` joins the leftmost factor of a product or
    quotient (``"ans * c"``: ``g * ans * c``; ``"1.0 / e"``: ``g / e``), a minus sign moves onto ``g``."""
    def times(g, tree):
        if isinstance(tree, ast.BinOp) and isinstance(tree.op, (ast.Mult, ast.Div)):
            return ast.BinOp(left=times(g, tree.left), op=tree.op, right=tree.right)
        if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.USub):
            return times(ast.UnaryOp(op=ast.USub(), operand=g), tree.operand)
        if isinstance(tree, ast.Constant) and tree.value == 1 and not isinstance(tree.value, bool):
            return g
        return ast.BinOp(left=g, op=ast.Mult(), right=tree)

    return ast.unparse(times(ast.Name(id="g", ctx=ast.Load()), ast.parse(derivative, mode="eval").body))


def def_linear(key: Callable, params: str, shape_only: Tuple[str, ...] = (), **fields: Any) -> None:
    """The forward rule of a runtime helper linear in its first operand (an adjoint helper such as
    ``rt.unbroadcast(cotangent, x)``), given its parameters as written (``"cotangent, x"``): the helper of
    the tangent, ``d[first] = rt.helper(g, ...)``; ``shape_only`` names the operands it reads only for
    their shape or dtype (``d[x] = None``: no derivative flows there; any other operand is refused)."""
    names = [p.split("=")[0].strip() for p in params.split(",")]
    lines = [f"    d[{names[0]}] = rt.{key.__name__}({', '.join(['g'] + names[1:])})"]
    lines += [f"    d[{name}] = None" for name in shape_only]
    define(key, jvp=Rule.from_source(f"def {key.__name__}_jvp(g, ans, {params}):\n" + "\n".join(lines) + "\n"),
           **fields)


def def_nondifferentiable(*keys: Any, **fields: Any) -> None:
    """Primitives whose results carry no derivative (comparisons, rounding, indices)."""
    define(*keys, vjp=NONDIFFERENTIABLE, **fields)


def def_methods(methods: Dict[str, Any]) -> None:
    """Array methods that are functions' entries (``x.sum(axis)`` is ``np.sum(x, axis)``): one entry, two keys."""
    for name, fn in methods.items():
        REGISTRY[method_key(name)] = REGISTRY[fn]


def refusal(key: Any, app: Any, args: list) -> Optional[str]:
    """Why ``key``'s rules do not cover the call ``app`` with operands of abstract values ``args`` (the
    entry's ``refuse``), or None where they do."""
    primitive = entry(key)
    return primitive.refuse(app, args) if primitive is not None and primitive.refuse is not None else None


def composite(key: Any, keywords: Any = ()) -> Optional[Callable]:
    """The Python function compiled in place of a call of ``key`` passing ``keywords`` (the entry's
    ``keyword_composite`` where one of them is its, else its ``composite``), or None."""
    primitive = entry(key)
    if primitive is None:
        return None
    return keyword_composite(key, keywords) or primitive.composite


def keyword_composite(key: Any, keywords: Any) -> Optional[Callable]:
    """The entry's ``keyword_composite`` where ``keywords`` has one of its keywords, else None."""
    primitive = entry(key)
    if primitive is None or primitive.keyword_composite is None or not primitive.keyword_composite[0] & set(keywords):
        return None
    return primitive.keyword_composite[1]


def vjp_rule(key: Any) -> Any:
    """The reverse-mode rule of ``key``: a ``Rule``, ``NONDIFFERENTIABLE``, or None when there is none."""
    primitive = entry(key)
    return primitive.vjp if primitive is not None else None
