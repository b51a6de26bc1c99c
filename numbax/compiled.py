"""One compiled specialization: call it with flat leaves, get the user's pytree back."""
from __future__ import annotations

import re
from typing import Any, Callable, List, Optional

import numpy as np

from numbax import tree_util
from numbax.ast_passes.pipeline import Generated
from numbax.errors import NumbaxComplexDerivativeError, NumbaxError, NumbaxShapeError, NumbaxTypingError
from numbax.runtime.contractions import ContractionShapeError
from numbax.runtime.grad import ShapesDiffer

# Numba turns a 0-d array into a number in arithmetic, so a variable that starts as a 0-d array and is rebound
# in a loop or a branch has two types where the paths join. Arguments, constants and constructors
# (``np.array(0.0)``, ``np.zeros(())``) are numbers inside already (numbax.runtime.boundary); other calls that make
# a 0-d array (``x.reshape(())``) are not.
_ZERO_D_JOIN = re.compile(r"Cannot unify array\((\w+), 0d, \w+\) and \1\b")
_ZERO_D_HINT = ("a 0-d array that a loop or a branch rebinds becomes a number after arithmetic in compiled code, so "
                "it has two types where the paths join; numbax makes 0-d arguments and constructors "
                "(`np.array(0.0)`, `np.zeros(())`) numbers, but not a 0-d array that another call makes "
                "(`x.reshape(())`): make it a number where it is made (`np.float64(...)` of it, or `x[0]` of a "
                "1-element array). ")


def as_numbers(leaves: List[Any]) -> List[Any]:
    """``leaves`` with each 0-d array as its number: what generated code takes for the leaves its entry does not
    read as numbers itself (``rt.number``), the tangents and cotangents that ``jvp`` and ``vjp`` pass after the
    primals it was compiled for."""
    return [(leaf[()] if leaf.ndim == 0 else leaf) if isinstance(leaf, np.ndarray) else leaf for leaf in leaves]


# a runtime helper's refusal of an axis that the array's rank rules out (``numbax.runtime.statics``)
_COMPLEX_OPERAND = re.compile(r"numbax\.check_real: (.*?:\d+:\d+): (.*)$")
_AXIS_MISUSE = re.compile(r"numbax\.runtime\.(\w+): ((?:axis -?\d+ is out of bounds for array of dimension \d+)"
                          r"|(?:repeated axis in .*))$")


class Compiled:
    """A compiled function over flat leaves plus what rebuilds its output."""

    def __init__(self, generated: Generated, function: Callable, typing_errors: tuple, path: str = ""):
        self.generated = generated
        self.function = function
        self.constants = tuple(generated.constants.values())
        self.typing_errors = typing_errors
        spec = generated.returns
        self.treedef = spec.treedef if spec else tree_util.tree_structure(None)
        self.single = self.treedef.num_leaves == 1 and tree_util.treedef_is_leaf(self.treedef)
        self.flat_tuple = self.treedef.num_leaves > 1 and self.treedef == tree_util.tree_structure(
            (0,) * self.treedef.num_leaves)
        self.path = path
        self.general: Optional[Callable[[], "Compiled"]] = None  # the specialization without assumed dims

    def __call__(self, leaves: List[Any], bind: Optional[Callable[[tuple], tuple]] = None) -> Any:
        """The outputs for ``leaves``; ``bind`` gives the constants to pass from this function's (``pmap`` on
        threads gives each thread's exchange in place of its placeholder)."""
        try:
            out = self.function(*leaves, *(self.constants if bind is None else bind(self.constants)))
        except self.typing_errors as exc:
            raise self.typing_error(exc) from None
        except ShapesDiffer:  # dims the code took as equal are not: the general code runs instead
            return self.general()(leaves, bind)
        except ContractionShapeError as exc:  # its message starts at the user's line
            raise NumbaxShapeError(str(exc)) from None
        if self.single:
            return out
        if self.treedef.num_leaves == 0:
            return tree_util.tree_unflatten(self.treedef, [])
        return tree_util.tree_unflatten(self.treedef, list(out) if self.treedef.num_leaves > 1 else [out])

    def prepare(self, leaves: List[Any], bind: Optional[Callable[[tuple], tuple]] = None) -> None:
        """Compile the code for ``leaves`` (as ``__call__`` takes them) now, without running it, unless it has
        compiled code already (asking Numba whether that code takes these types costs as much as a call)."""
        compile_for = getattr(self.function, "_compile_for_args", None)
        if compile_for is None or self.function.signatures:  # the python backend; compiled
            return
        try:
            compile_for(*leaves, *(self.constants if bind is None else bind(self.constants)))
        except self.typing_errors as exc:
            raise self.typing_error(exc) from None

    def typing_error(self, exc: Exception) -> NumbaxError:
        """Numba's error, reported at the user's line that the failing generated line came from; an axis out of
        the array's rank, a ``NumbaxShapeError`` (a ``ValueError``, as NumPy's and JAX's)."""
        text = str(exc)
        origin = None
        for match in re.finditer(r'File "([^"]+)", line (\d+)', text):
            if match.group(1).endswith(".py") and "numbax_generated_" in match.group(1):
                origin = self.generated.line_origins.get(int(match.group(2)), origin)
        summary = [line.strip() for line in text.splitlines() if line.strip()]
        head = summary[0] if summary else type(exc).__name__
        ours = [l for l in summary[1:] if l.startswith("TypingError: numbax.")]  # a runtime helper's reason
        details = list(dict.fromkeys(ours[:1] + [l for l in summary[1:] if l.startswith((
            ">>>", "No implementation", "Unknown attribute", "Cannot unify", "Invalid use", "NameError",
            "Use of unsupported"))]))[:3]
        complex_operand = _COMPLEX_OPERAND.search(ours[0]) if ours else None
        if complex_operand:  # ``rt.check_real`` of a value typed complex: numbax's refusal, made when compiling
            return NumbaxComplexDerivativeError(complex_operand.group(2), complex_operand.group(1))
        axis = _AXIS_MISUSE.search(ours[0]) if ours else None
        if axis:  # the user's own misuse, which NumPy and JAX refuse with a ValueError
            where = origin.position() if origin is not None else ""
            return NumbaxShapeError(f"`{axis.group(1)}`: {axis.group(2)}", where)
        message = "\n  ".join([f"Numba could not compile the generated code: {head}"] + details)
        hint = f"see the generated code with numbax.source(...) or {self.path or 'show'}."
        if any(_ZERO_D_JOIN.search(line) for line in details):
            hint = _ZERO_D_HINT + hint[0].upper() + hint[1:]
        return NumbaxTypingError(message, origin, hint=hint)
