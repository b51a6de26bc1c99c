"""arg_spec: turn a command-line argument spec such as ``[(f64[10,20], f64[20])]`` into an example value.

A spec is a Python literal whose leaves are either ``dtype[shape]`` (a NumPy
array of that dtype and shape), a bare dtype name (a NumPy scalar of that
dtype), or a plain Python constant (kept as it is, typically for static
arguments). Specs are parsed with :mod:`ast` and evaluated node by node; no
code is ever executed, so a spec can only describe data.

Arrays are filled with a deterministic, non-trivial pattern (never zeros) so
that generated code that takes logarithms or divides still prints sensibly
when it is run: floats count up from 0.1 to 1.0, integers from 1, booleans
alternate, complex numbers pair an ascending real part with a descending
imaginary part.
"""
from __future__ import annotations

import ast
import io
import math
import tokenize
from typing import Any, Dict, Tuple

import numpy as np

__all__ = ["ArgSpecError", "DTYPES", "example_array", "parse_spec"]

# JAX's short spellings; NumPy's own names (float64, int32, ...) are accepted too.
_SHORT_DTYPES = {
    "bool": np.bool_,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
}
DTYPES: Dict[str, np.dtype] = {
    **{name: np.dtype(t) for name, t in _SHORT_DTYPES.items()},
    **{np.dtype(t).name: np.dtype(t) for t in _SHORT_DTYPES.values()},
}


# the most elements one example array may have (examples are allocated; what is generated reads only dtype and ndim)
MAX_ELEMENTS = 1 << 24


class ArgSpecError(ValueError):
    """An argument spec that does not describe a value; the message is one line naming the bad part."""


def parse_spec(text: str) -> Any:
    """Turn one argument spec into the example value it describes.

    Args:
        text: a Python literal whose leaves are ``dtype[shape]`` (``f64[3]``,
            ``f32[10,20]``, ``f64[]`` for a 0-d array), bare dtype names (a
            NumPy scalar, e.g. ``i32``), or plain constants (``3``, ``'relu'``,
            ``None``), nested in tuples, lists, dicts and sets.

    Returns:
        The value: arrays for the ``dtype[shape]`` leaves, the constants as
        they are, in the same containers.

    Raises:
        ArgSpecError: the spec is not valid Python, uses an unknown dtype, a
            dimension that is not a non-negative integer, or any syntax other
            than literals (calls, attributes, names, operators).

    >>> parse_spec("f64[2, 3]").shape
    (2, 3)
    >>> parse_spec("(i32[3], 2.5, 'relu')")
    (array([1, 2, 3], dtype=int32), 2.5, 'relu')
    >>> parse_spec("[(f64[2], f64[])]")
    [(array([0.1, 1. ]), array(0.1))]
    """
    if not text.strip():
        raise ArgSpecError("empty argument spec (expected e.g. f64[3])")
    source = _fill_empty_subscripts(text.strip())
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ArgSpecError(f"bad argument spec {text!r}: invalid syntax ({exc.msg})") from None
    return _Evaluator(text, source).visit(tree.body)


def example_array(dtype: np.dtype, shape: Tuple[int, ...]) -> np.ndarray:
    """A deterministic, non-zero array of ``dtype`` and ``shape``.

    Args:
        dtype: the NumPy dtype.
        shape: the shape, a tuple of non-negative ints (``()`` for 0-d).

    Returns:
        The array (floats from 0.1 to 1.0, integers from 1, alternating
        booleans, complex numbers with both parts non-zero).

    >>> example_array(np.dtype(np.float32), (2, 2))
    array([[0.1, 0.4],
           [0.7, 1. ]], dtype=float32)
    """
    size = math.prod(shape)
    ramp = np.linspace(0.1, 1.0, size)
    if dtype.kind == "b":
        flat = np.arange(size) % 2 == 0
    elif dtype.kind in "iu":
        flat = np.arange(size) % 100 + 1
    elif dtype.kind == "c":
        flat = ramp + 1j * ramp[::-1]
    else:
        flat = ramp
    return flat.astype(dtype).reshape(shape)


def _fill_empty_subscripts(text: str) -> str:
    """Rewrite ``f64[]`` (not Python) as ``f64[()]``, leaving string literals alone."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text  # ast.parse reports the problem
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    inserts = []
    for before, opening, closing in zip(tokens, tokens[1:], tokens[2:]):
        if before.type == tokenize.NAME and opening.string == "[" and closing.string == "]":
            row, col = closing.start
            inserts.append(line_starts[row - 1] + col)
    for offset in reversed(inserts):
        text = text[:offset] + "()" + text[offset:]
    return text


class _Evaluator(ast.NodeVisitor):
    """Evaluates the literal subset of Python that specs use; anything else is an ArgSpecError."""

    def __init__(self, text: str, source: str):
        self.text = text
        self.source = source

    def fail(self, node: ast.AST, problem: str) -> ArgSpecError:
        """An error naming the spec and the part of it at ``node``."""
        part = ast.get_source_segment(self.source, node) or ast.unparse(node)
        return ArgSpecError(f"bad argument spec {self.text!r}: {problem.format(part=repr(part))}")

    def generic_visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Call):
            raise self.fail(node, "calls are not allowed ({part}); write dtype[shape], e.g. f64[3]")
        if isinstance(node, ast.Attribute):
            raise self.fail(node, "attributes are not allowed ({part}); write a dtype such as f64")
        raise self.fail(node, f"{type(node).__name__} expressions are not allowed ({{part}}); "
                              "use literals and dtype[shape]")

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.visit(elt) for elt in node.elts)

    def visit_List(self, node: ast.List) -> list:
        return [self.visit(elt) for elt in node.elts]

    def visit_Set(self, node: ast.Set) -> set:
        return {self.hashable(elt) for elt in node.elts}

    def visit_Dict(self, node: ast.Dict) -> dict:
        if any(key is None for key in node.keys):
            raise self.fail(node, "`**` unpacking is not allowed in {part}")
        return {self.hashable(k): self.visit(v) for k, v in zip(node.keys, node.values)}

    def hashable(self, node: ast.AST) -> Any:
        """The value at ``node``, which must be usable as a dict key or set element."""
        value = self.visit(node)
        try:
            hash(value)
        except TypeError:
            raise self.fail(node, "{part} cannot be a dict key or set element") from None
        return value

    def visit_Name(self, node: ast.Name) -> np.generic:
        """A bare dtype name: a NumPy scalar of that dtype."""
        return example_array(self.dtype(node), ())[()]

    def visit_Subscript(self, node: ast.Subscript) -> np.ndarray:
        if not isinstance(node.value, ast.Name):
            raise self.fail(node, "{part} is not dtype[shape]")
        return example_array(self.dtype(node.value), self.shape(node.slice))

    def dtype(self, node: ast.Name) -> np.dtype:
        """The dtype spelled by ``node``."""
        if node.id not in DTYPES:
            short = ", ".join(sorted(_SHORT_DTYPES))
            raise self.fail(node, f"unknown dtype {{part}} (expected one of {short})")
        return DTYPES[node.id]

    def shape(self, node: ast.AST) -> Tuple[int, ...]:
        """The shape in the brackets of ``dtype[...]``."""
        dims = node.elts if isinstance(node, ast.Tuple) else [node]
        shape = tuple(self.dimension(dim) for dim in dims)
        if math.prod(shape) > MAX_ELEMENTS:
            raise self.fail(node, f"shape {{part}} has {math.prod(shape):,} elements, more than the "
                                  f"{MAX_ELEMENTS:,} an example may have; the generated code depends on the "
                                  "dtype and the number of dims only, so give a small shape (e.g. f64[2,3])")
        return shape

    def dimension(self, node: ast.AST) -> int:
        """One dimension, which must be a literal non-negative integer."""
        value = node.value if isinstance(node, ast.Constant) else None
        if type(value) is not int or value < 0:
            raise self.fail(node, "dimension {part} is not a non-negative integer")
        return value

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.visit(node.operand)
        if not isinstance(node.op, (ast.USub, ast.UAdd)) or not _is_number(value):
            raise self.fail(node, "operators are not allowed ({part}); use literals and dtype[shape]")
        return -value if isinstance(node.op, ast.USub) else value

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        """Only the complex literals ``1+2j`` and ``1-2j``."""
        left, right = self.visit(node.left), self.visit(node.right)
        if not (isinstance(node.op, (ast.Add, ast.Sub)) and _is_number(left)
                and isinstance(right, complex)):
            raise self.fail(node, "operators are not allowed ({part}); use literals and dtype[shape]")
        return left + right if isinstance(node.op, ast.Add) else left - right


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, complex)) and not isinstance(value, bool)
