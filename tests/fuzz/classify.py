"""Run one generated program through numbax's ``jit``, ``grad``, ``vmap``, ``jvp`` and ``jvp`` of ``grad``
(``hvp``), and classify each outcome.

- ``right``: the value matches the reference (shape, dtype, and values within a tolerance that depends on
  the dtype only, nan and inf in the same places);
- ``refused``: numbax raised a ``NumbaxError`` whose message names a line of the generated file, or the
  reference raised too and numbax raised an exception of the same kind (JAX's ``TypeError`` for ``grad``
  of a complex or integer output, NumPy's ``IndexError`` for an index out of bounds, ...);
- ``unchecked``: numbax gave a value but no reference decides it (a kink, or a nan gradient from inf * 0,
  with no JAX to say);
- ``wrong``: a value that differs from the reference, or a value where the reference raised;
- ``internal``: any other exception, ``NumbaxInternalError``, or a numbax error that does not point at the
  generated file's line.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

import numbax
from numbax.errors import NumbaxError, NumbaxInternalError

from . import loader, references
from .grammar import Program, run_quietly

RIGHT, REFUSED, UNCHECKED, WRONG, INTERNAL = "right", "refused", "unchecked", "wrong", "internal"
KINDS = (RIGHT, REFUSED, UNCHECKED, WRONG, INTERNAL)
FAILURES = (WRONG, INTERNAL)
TRANSFORMS = ("jit", "grad", "vmap", "jvp", "hvp")
FLOAT0 = np.dtype([("float0", np.void, 0)])  # JAX's dtype of an integer or boolean value's tangent


@dataclass(frozen=True)
class Outcome:
    """One transform's result on one program; ``detail`` says what differed or what was raised."""

    transform: str
    kind: str
    detail: str = ""

    def signature(self) -> str:
        """The outcome's kind of failure, without values, names or numbers: equal for failures that likely
        share a cause (a wrong value's signature is its category: ``value``, ``shape``, ``dtype: a, expected
        b``, ``should raise E``; an exception's is its type and the first line of its message)."""
        head = self.detail.splitlines()[0] if self.detail else ""
        if self.kind == WRONG:
            text = head.split(" (d")[0] if head.startswith("dtype") else head.split(":")[0]
        else:
            text = re.sub(r"[\w/.-]+\.py", "<file>", head)
            text = re.sub(r"\d+", "N", re.sub(r"'[^']*'|`[^`]*`", "'…'", text))
        return f"{self.transform} {self.kind}: {text[:100]}"


def tolerance(single: bool, against: str) -> Tuple[float, float]:
    """``(rtol, atol)`` for a result computed in single (some float32 on the way) or double precision,
    compared with NumPy, JAX or central differences."""
    if against == "fd":
        return (2e-3, 2e-3) if single else (1e-5, 1e-6)
    return (2e-5, 2e-6) if single else (1e-8, 1e-10)


def single_precision(args: tuple) -> bool:
    """Whether float32 takes part: then a float64 result may carry float32 rounding (ufuncs of float32
    round differently in NumPy and in Numba), so it compares with float32's tolerance."""
    return any(np.asarray(a).dtype == np.float32 for a in args)


def difference(got: Any, expected: Any, against: str, mask: Optional[np.ndarray] = None,
               single: bool = False) -> Optional[str]:
    """None if ``got`` matches ``expected`` (only where ``mask`` holds, if given), else what differs.

    Against NumPy the dtype must be the same, except that a Python scalar stands for a 0-d result of its
    kind (Numba returns scalars as Python objects)."""
    got_array, want = np.asarray(got), np.asarray(expected)
    if got_array.shape != want.shape:
        return f"shape: {got_array.shape}, expected {want.shape}"
    python_scalar = isinstance(got, (bool, int, float, complex)) and got_array.dtype.kind == want.dtype.kind
    if against == "numpy" and got_array.dtype != want.dtype and not python_scalar:
        return f"dtype: {got_array.dtype}, expected {want.dtype}"
    if got_array.dtype.kind not in "biufc":
        return f"dtype: {got_array.dtype}"
    if mask is not None:
        got_array, want = got_array[mask], want[mask]
    if want.dtype.kind in "biu" and got_array.dtype.kind in "biu":
        equal = np.array_equal(got_array, want)
    else:
        finite = want[np.isfinite(want)]
        scale = max(1.0, float(np.max(np.abs(finite)))) if finite.size else 1.0
        rtol, atol = tolerance(single or np.float32 in (want.dtype, got_array.dtype), against)
        equal = np.allclose(got_array, want, rtol=rtol, atol=atol * scale, equal_nan=True)
    if equal:
        return None
    return f"value: got {np.array2string(got_array, precision=6)}, expected {np.array2string(want, precision=6)}"


def _names_line(error: BaseException, path: str) -> bool:
    return re.search(re.escape(path.rsplit("/", 1)[-1]) + r"\", line \d+|" +
                     re.escape(path.rsplit("/", 1)[-1]) + r":\d+", str(error)) is not None


def exception_outcome(transform: str, error: BaseException, path: str,
                      expected: Optional[BaseException]) -> Outcome:
    """How to count an exception numbax raised, given the reference's own exception (or None)."""
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, NumbaxInternalError):
        return Outcome(transform, INTERNAL, text)
    if isinstance(error, NumbaxError):
        if _names_line(error, path):
            return Outcome(transform, REFUSED, text)
        return Outcome(transform, INTERNAL, "message names no line of the program: " + text)
    if expected is not None and isinstance(error, _family(expected)):
        return Outcome(transform, REFUSED, text)
    reference = f" (reference raised {type(expected).__name__})" if expected is not None else ""
    return Outcome(transform, INTERNAL, text + reference)


def _family(error: BaseException) -> type:
    """The builtin exception class a matching refusal must belong to (NumPy's subclasses included)."""
    for family in (IndexError, ZeroDivisionError, TypeError, ValueError, ArithmeticError):
        if isinstance(error, family):
            return family
    return type(error)


def _call(transform: str, make: Callable, args: tuple, path: str, expected: references.Reference):
    """Run numbax; returns ``(value, None)`` or ``(None, outcome)`` when it raised."""
    try:
        return numbax.device_get(run_quietly(lambda: make()(*copy.deepcopy(args)))), None
    except Exception as error:  # noqa: BLE001 - every exception is classified
        return None, exception_outcome(transform, error, path, expected.error)


def check_value(transform: str, make: Callable, args: tuple, path: str, expected: references.Reference) -> Outcome:
    """``jit`` or ``vmap``: numbax against NumPy."""
    got, raised = _call(transform, make, args, path, expected)
    if raised is not None:
        return raised
    if expected.error is not None:
        return Outcome(transform, WRONG, f"should raise {type(expected.error).__name__}: NumPy raised "
                                         f"{expected.error}; numbax returned {got!r}")
    wrong = difference(got, expected.value, "numpy", single=single_precision(args))
    return Outcome(transform, WRONG, wrong) if wrong else Outcome(transform, RIGHT)


def argnums_of(program: Program) -> Tuple[int, ...]:
    """The arguments ``grad`` differentiates: the inexact ones (the first if none is, which must be refused)."""
    inexact = tuple(k for k, a in enumerate(program.args) if np.asarray(a).dtype.kind in "fc")
    return inexact or (0,)


def jax_function(program: Program, module, name: str = "prog_sum") -> Optional[Callable]:
    """``prog_sum`` (or ``prog``) as JAX can run it: the program's own where it is functional, else its
    functional twin's (``Program.jax_source``), else None."""
    if program.functional:
        return getattr(module, name)
    if program.jax_source is None:
        return None
    twin = loader.load(program.jax_source)
    loader.unload(twin)  # the function keeps its module's globals
    return getattr(twin, name)


def grad_reference(program: Program, module, argnums) -> Tuple[references.Reference, Optional[list]]:
    """What ``grad`` must give: the refusal JAX makes (a non-float output, an integer input), else central
    differences, else (where they leave elements undecided, the value is finite and JAX can run the
    program or its functional twin) JAX's gradient.

    Returns ``(reference, None)`` for a refusal or JAX's value, ``(empty reference, differences)`` else.
    Differences come first because JAX's eager ``grad`` costs a second a program, central differences
    milliseconds, and they agree wherever the function is smooth.
    """
    if any(np.asarray(program.args[k]).dtype.kind not in "fc" for k in argnums):  # checked before tracing
        return references.Reference(error=TypeError("grad requires real- or complex-valued inputs")), None
    forward = references.numpy_call(module.prog_sum, program.args)
    if forward.error is not None:
        return forward, None
    if np.asarray(forward.value).dtype.kind != "f":
        return references.Reference(error=TypeError(f"grad requires real-valued outputs, "
                                                    f"got {np.asarray(forward.value).dtype}")), None
    differences = references.central_differences(module.prog_sum, program.args, argnums)
    # At a point where the value is infinite or NaN (a pole) there is no derivative: JAX's inf or nan there
    # is the order of its chain rule's products, not a reference
    finite = bool(np.all(np.isfinite(forward.value)))
    jax_fn = jax_function(program, module)
    if finite and jax_fn is not None and not all(decided.all() for _, decided in differences):
        jax_ref = references.jax_gradient(jax_fn, program.args, argnums, forward.value)
        if jax_ref.value is not None:
            return jax_ref, None
    return references.Reference(), differences


def check_grad(program: Program, module, backend: str, path: str) -> Outcome:
    """``grad`` of ``prog_sum`` against central differences, or JAX (of the program or its twin) at kinks."""
    argnums = argnums_of(program)
    expected, fd = grad_reference(program, module, argnums)
    got, raised = _call("grad", lambda: numbax.grad(module.prog_sum, argnums=argnums, backend=backend),
                        program.args, path, expected)
    if raised is not None:
        return raised
    if expected.error is not None:
        return Outcome("grad", WRONG, f"should raise {type(expected.error).__name__}: the reference raised "
                                      f"{expected.error}; numbax returned {got!r}")
    if not isinstance(got, tuple) or len(got) != len(argnums):
        return Outcome("grad", WRONG, f"structure: {type(got).__name__} for argnums={argnums}")
    decided_any, single = False, single_precision(program.args)
    for k, g, index in zip(argnums, got, range(len(argnums))):
        like = np.asarray(program.args[k])
        if isinstance(program.args[k], np.ndarray) and np.asarray(g).dtype != like.dtype:
            return Outcome("grad", WRONG, f"dtype: {np.asarray(g).dtype}, expected {like.dtype} (d{'xys'[k]})")
        if fd is None:
            wrong, decided = difference(g, expected.value[index], "jax", single=single), True
        else:
            value, mask = fd[index]
            # A nan where the differences are finite is the chain rule meeting inf * 0 (sqrt'(0) times a
            # zero tangent), which JAX gives too: only JAX could decide it.
            mask = mask & ~np.isnan(np.asarray(g))
            decided = bool(mask.any())
            wrong = difference(g, value, "fd", mask, single) if decided else None
        if wrong and not (fd is not None and _jax_convention(program, module, argnums, got, single)):
            return Outcome("grad", WRONG, f"{wrong} (d{'xys'[k]})")
        decided_any |= decided
    return Outcome("grad", RIGHT if decided_any else UNCHECKED)


def _jax_convention(program: Program, module, argnums, got, single: bool) -> bool:
    """Whether ``got``, away from the central differences, is JAX's gradient of the program (or its twin) with
    NumPy's finite value: JAX's convention at a tie, which a function smooth around it does not follow
    (``np.minimum(np.abs(x), x ** 2)`` at 0 is ``x ** 2`` nearby, slope 0; JAX gives each operand of a tie
    half, 0.5 here), and which numbax follows."""
    forward = references.numpy_call(module.prog_sum, program.args)
    jax_fn = jax_function(program, module)
    if jax_fn is None or forward.error is not None or not np.all(np.isfinite(forward.value)):
        return False
    jax_ref = references.jax_gradient(jax_fn, program.args, argnums, forward.value)
    return jax_ref.value is not None and not any(
        difference(g, want, "jax", single=single) for g, want in zip(got, jax_ref.value))


def tangents_for(args: tuple) -> tuple:
    """A tangent per argument as ``jax.jvp`` takes them: fixed pseudo-random values in an inexact argument's
    dtype and shape (a Python float for a float scalar), ``float0`` zeros for an integer or boolean one."""
    rng = np.random.default_rng(1)
    tangents = []
    for arg in args:
        like = np.asarray(arg)
        if like.dtype.kind not in "fc":
            tangents.append(np.zeros(like.shape, FLOAT0))
            continue
        values = rng.standard_normal(like.shape)
        if like.dtype.kind == "c":
            values = values + 1j * rng.standard_normal(like.shape)
        tangents.append(float(values) if isinstance(arg, float) else np.asarray(values, dtype=like.dtype))
    return tuple(tangents)


def check_jvp(program: Program, module, backend: str, path: str) -> Outcome:
    """``jvp`` of ``prog``: its output against NumPy's, its tangent against central differences along the
    tangents, or JAX's ``jvp`` (of the program or its twin) where they leave elements undecided."""
    tangents = tangents_for(program.args)
    expected = references.numpy_call(module.prog, program.args)
    got, raised = _call("jvp", lambda: lambda *a: numbax.jvp(module.prog, a, tangents, backend=backend),
                        program.args, path, expected)
    if raised is not None:
        return raised
    if expected.error is not None:
        return Outcome("jvp", WRONG, f"should raise {type(expected.error).__name__}: NumPy raised "
                                     f"{expected.error}; numbax returned {got!r}")
    (out, tangent), single = got, single_precision(program.args)
    wrong = difference(out, expected.value, "numpy", single=single)
    if wrong:
        return Outcome("jvp", WRONG, f"{wrong} (the output)")
    want = np.asarray(expected.value)
    if want.dtype.kind not in "fc":
        if np.asarray(tangent).dtype != FLOAT0 or np.shape(tangent) != want.shape:
            return Outcome("jvp", WRONG, f"dtype: {np.asarray(tangent).dtype}, expected float0 zeros of {want.shape}")
        return Outcome("jvp", RIGHT)
    if np.asarray(tangent).dtype != want.dtype:
        return Outcome("jvp", WRONG, f"dtype: {np.asarray(tangent).dtype}, expected {want.dtype} (the tangent)")
    inexact = {k: t for k, t in enumerate(tangents) if isinstance(t, float) or t.dtype != FLOAT0}
    central, decided = references.directional_differences(module.prog, program.args, inexact)
    central = central if want.dtype.kind == "c" else central.real
    decided = decided & ~np.isnan(np.asarray(tangent))  # inf * 0 in the chain rule: only JAX decides
    jax_fn = jax_function(program, module, "prog")
    if not decided.all() and jax_fn is not None and np.all(np.isfinite(want)):
        jax_ref = references.jax_jvp(jax_fn, program.args, tangents, want)
        if jax_ref.value is not None:
            wrong = difference(tangent, jax_ref.value, "jax", single=single)
            return Outcome("jvp", WRONG, f"{wrong} (the tangent, JAX's)") if wrong else Outcome("jvp", RIGHT)
    if not decided.any():
        return Outcome("jvp", UNCHECKED)
    wrong = difference(tangent, central, "fd", decided, single)
    if wrong and jax_fn is not None and np.all(np.isfinite(want)):
        jax_ref = references.jax_jvp(jax_fn, program.args, tangents, want)  # JAX's convention at a tie
        if jax_ref.value is not None and not difference(tangent, jax_ref.value, "jax", single=single):
            return Outcome("jvp", RIGHT)
    return Outcome("jvp", WRONG, f"{wrong} (the tangent)") if wrong else Outcome("jvp", RIGHT)


def differentiable_at(program: Program, module, argnums) -> bool:
    """Whether ``grad`` of ``prog_sum`` is defined at the program's arguments (float inputs, a finite float
    output): elsewhere the refusals are ``grad``'s to check."""
    forward = references.numpy_call(module.prog_sum, program.args)
    return all(np.asarray(program.args[k]).dtype.kind == "f" for k in argnums) and forward.error is None \
        and np.asarray(forward.value).dtype.kind == "f" and bool(np.all(np.isfinite(forward.value)))


def against_jax_hvp(transform: str, program: Program, module, argnums, tangents: tuple, got) -> Outcome:
    """``got``, a Hessian-vector product per argument in ``argnums``, against JAX's forward over reverse of the
    program (or its twin) along ``tangents``; unchecked where JAX gives none. Where they differ, a product that
    central differences of the gradient (``grad``'s, which its own check holds to the function) confirm is right:
    JAX's formulation can have a tie the function has not (``jnp.hypot`` at ``|x| == |y|``, second derivative 0)."""
    jax_fn = jax_function(program, module)
    expected = references.jax_hvp(jax_fn, program.args, argnums, tangents) if jax_fn is not None else None
    if expected is None or expected.value is None:
        return Outcome(transform, UNCHECKED)
    single = single_precision(program.args)
    for index, (k, g, want) in enumerate(zip(argnums, got, expected.value)):
        wrong = difference(g, want, "jax", single=single)
        if wrong and not _gradient_differences_agree(program, module, argnums, tangents, index, g, single):
            return Outcome(transform, WRONG, f"{wrong} (d{'xys'[k]})")
    return Outcome(transform, RIGHT)


def _gradient_differences_agree(program: Program, module, argnums, tangents: tuple, index: int, got,
                                single: bool) -> bool:
    """Whether central differences of ``grad``'s component ``index`` along ``tangents`` decide some elements and
    agree with ``got`` there."""
    gradient = numbax.grad(module.prog_sum, argnums=argnums, backend="python")
    component = lambda *a: np.asarray(gradient(*a)[index])  # noqa: E731
    central, decided = references.directional_differences(component, program.args,
                                                           {k: tangents[k] for k in argnums})
    decided = decided & ~np.isnan(np.asarray(got))
    return bool(decided.any()) and difference(got, central.real, "fd", decided, single) is None


def check_hvp(program: Program, module, backend: str, path: str) -> Optional[Outcome]:
    """Second order, forward over reverse: ``jvp`` of ``grad(prog_sum)`` against JAX's (of the program or its
    twin); None where ``grad`` itself is refused (an integer input, a non-float or non-finite output)."""
    argnums = argnums_of(program)
    if not differentiable_at(program, module, argnums):
        return None
    tangents = tangents_for(program.args)
    got, raised = _call("hvp", lambda: lambda *a: numbax.jvp(
        numbax.grad(module.prog_sum, argnums=argnums, backend=backend), a, tangents, backend=backend),
        program.args, path, references.Reference())
    if raised is not None:
        return raised
    return against_jax_hvp("hvp", program, module, argnums, tangents, got[1])


def check(program: Program, backend: str, transforms=TRANSFORMS) -> List[Outcome]:
    """Every transform's outcome on ``program`` with numbax on ``backend`` (``"python"`` or ``"cpu"``)."""
    module = loader.load(program.source)
    path = module.__file__
    outcomes = []
    try:
        if "jit" in transforms:
            outcomes.append(check_value("jit", lambda: numbax.jit(module.prog, backend=backend), program.args,
                                        path, references.numpy_call(module.prog, program.args)))
        if "grad" in transforms:
            outcomes.append(check_grad(program, module, backend, path))
        if "vmap" in transforms:
            expected = references.numpy_batch(module.prog, program.batch, program.in_axes)
            outcomes.append(check_value(
                "vmap", lambda: numbax.vmap(module.prog, in_axes=program.in_axes, backend=backend),
                program.batch, path, expected))
        if "jvp" in transforms:
            outcomes.append(check_jvp(program, module, backend, path))
        if "hvp" in transforms:
            outcomes += [o for o in (check_hvp(program, module, backend, path),) if o is not None]
    finally:
        loader.unload(module)
    return outcomes
