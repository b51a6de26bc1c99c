"""Gradient oracles for the reverse-mode tests: JAX on the same program, and finite differences.

``to_jax(fn)`` rebuilds a plain NumPy function (and every user function it reaches through its
globals, closure cells and defaults) with ``np`` bound to ``jax.numpy`` and ``scipy.special``
bound to ``jax.scipy.special``, so ``jax.grad`` runs the *same* source. ``fd_grad`` is the one
finite-difference helper every reverse-mode test uses: a fourth-order central stencil in float64,
element by element. Both return NumPy pytrees with the structure of the differentiated arguments
(a tuple of them when ``argnums`` is a tuple), so results compare leaf by leaf.
"""
from __future__ import annotations

import copy
import os
import tempfile
import types
from typing import Any, Callable, Dict, Sequence, Tuple, Union

import jax
import jax.numpy as jnp
import jax.scipy
import jax.scipy.special as jsp_special
import numpy as np
import scipy
import scipy.special

import numbax.lax

jax.config.update("jax_enable_x64", True)

# Functions defined under these folders are "user code" and get rebuilt; library code does not.
_USER_ROOTS = tuple(os.path.realpath(p) + os.sep for p in
                    {os.path.dirname(os.path.dirname(os.path.abspath(__file__))), tempfile.gettempdir()})

# Objects swapped one for one wherever a user function can see them.
_SWAPS: Dict[int, Any] = {
    id(np): jnp,
    id(np.linalg): jnp.linalg,
    id(scipy): jax.scipy,
    id(scipy.special): jsp_special,
    id(scipy.special.logsumexp): jsp_special.logsumexp,
    id(scipy.special.expit): jsp_special.expit,
    id(scipy.special.erf): jsp_special.erf,
    id(numbax.lax): jax.lax,
}
_KEEP_ALIVE = (np, scipy, scipy.special, numbax.lax)
_NUMPY_MODULES = {"numpy": jnp, "numpy.linalg": jnp.linalg}


def _is_user_function(obj: Any) -> bool:
    if not isinstance(obj, types.FunctionType):
        return False
    return os.path.realpath(obj.__code__.co_filename).startswith(_USER_ROOTS)


class _Converter:
    """Rebuilds user functions over swapped globals; memoized so shared helpers stay shared."""

    def __init__(self):
        self.functions: Dict[int, types.FunctionType] = {}
        self.globals: Dict[int, dict] = {}

    def value(self, obj: Any) -> Any:
        swapped = _SWAPS.get(id(obj))
        if swapped is not None:
            return swapped
        if _is_user_function(obj):
            return self.function(obj)
        if isinstance(obj, np.ufunc) or (callable(obj) and getattr(obj, "__module__", None) in _NUMPY_MODULES):
            # a name imported from NumPy (`from numpy import tanh`): the jax.numpy function of that name
            return getattr(_NUMPY_MODULES[obj.__module__] if not isinstance(obj, np.ufunc) else jnp,
                           obj.__name__, obj)
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            return tuple(self.value(v) for v in obj)
        return obj

    def function(self, fn: types.FunctionType) -> types.FunctionType:
        new = self.functions.get(id(fn))
        if new is not None:
            return new
        # Globals are read at call time, so the new namespace is filled in after the function
        # exists: helpers that refer back to fn (or to each other) then find the rebuilt ones.
        new_globals = self.globals.get(id(fn.__globals__))
        fill = new_globals is None
        if fill:
            new_globals = self.globals[id(fn.__globals__)] = dict(fn.__globals__)
        closure = None
        if fn.__closure__ is not None:
            closure = tuple(types.CellType() for _ in fn.__closure__)
        new = types.FunctionType(fn.__code__, new_globals, fn.__name__, None, closure)
        new.__qualname__ = fn.__qualname__
        new.__module__ = fn.__module__
        self.functions[id(fn)] = new
        if fill:
            for name, obj in fn.__globals__.items():
                new_globals[name] = self.value(obj)
        if fn.__defaults__:
            new.__defaults__ = self.value(fn.__defaults__)
        if fn.__kwdefaults__:
            new.__kwdefaults__ = {k: self.value(v) for k, v in fn.__kwdefaults__.items()}
        if fn.__closure__ is not None:
            for old_cell, new_cell in zip(fn.__closure__, closure):
                try:
                    contents = old_cell.cell_contents
                except ValueError:  # an empty cell (a name assigned after the def)
                    continue
                new_cell.cell_contents = self.value(contents)
        return new


def to_jax(fn: Callable) -> Callable:
    """The same function with ``np`` (and ``scipy.special``) bound to their JAX versions."""
    return _Converter().value(fn)


def to_numpy(tree: Any) -> Any:
    """A pytree with its JAX arrays as NumPy arrays (dtypes and structure kept)."""
    return jax.tree_util.tree_map(lambda x: np.asarray(x) if isinstance(x, jax.Array) else x, tree)


def _normalize(argnums: Union[int, Sequence[int]], nargs: int) -> Tuple[Tuple[int, ...], bool]:
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    return tuple(n % nargs for n in nums), single


def _bind_static(fn: Callable, args: tuple, argnums, static_argnums: Sequence[int]):
    """``fn`` as a function of its non-static arguments, with ``argnums`` renumbered to match."""
    static = {n % len(args) for n in static_argnums}
    dynamic = [i for i in range(len(args)) if i not in static]
    nums, single = _normalize(argnums, len(args))
    assert not static & set(nums), "a static argument cannot be differentiated"
    new_argnums = tuple(dynamic.index(n) for n in nums)

    def bound(*dyn):
        full = list(args)
        for i, v in zip(dynamic, dyn):
            full[i] = v
        return fn(*full)

    return bound, tuple(args[i] for i in dynamic), new_argnums[0] if single else new_argnums


def jax_value_and_grad(fn: Callable, args: tuple, argnums=0, static_argnums: Sequence[int] = (),
                       has_aux: bool = False):
    """``jax.value_and_grad`` of ``to_jax(fn)``, as NumPy: ``(value, grad)``, or ``((value, aux), grad)``."""
    converter = _Converter()  # static arguments may be user functions too
    args = tuple(converter.value(a) for a in copy.deepcopy(tuple(args)))
    bound, dyn, new_argnums = _bind_static(converter.value(fn), args, argnums, static_argnums)
    dyn = jax.tree_util.tree_map(lambda x: jnp.asarray(x) if isinstance(x, np.ndarray) else x, dyn)
    out, grads = jit_or_eager(jax.value_and_grad(bound, argnums=new_argnums, has_aux=has_aux))(*dyn)
    return to_numpy(out), to_numpy(grads)


def jit_or_eager(fn: Callable) -> Callable:
    """``fn`` under ``jax.jit``, or run eagerly where tracing fails.

    One XLA compile for the whole program is much faster than JAX's eager compile of each primitive (a
    ``jax.grad`` of ten primitives on a new shape: 0.04 s jitted, 0.4 s eagerly); programs whose Python
    control flow reads traced values cannot be jitted, and run eagerly, which is the same computation.
    """
    jitted = jax.jit(fn)

    def run(*args):
        try:
            return jitted(*args)
        except Exception:  # noqa: BLE001 - any tracing failure: run eagerly, which is the semantics
            return fn(*args)

    return run


def jax_grad(fn: Callable, args: tuple, argnums=0, static_argnums: Sequence[int] = (), has_aux: bool = False):
    """``jax.grad`` of ``to_jax(fn)`` in float64, as a NumPy pytree."""
    return jax_value_and_grad(fn, args, argnums, static_argnums, has_aux)[1]


def jax_value(fn: Callable, args: tuple):
    """``to_jax(fn)(*args)`` as NumPy (arguments deep-copied first)."""
    converter = _Converter()
    args = tuple(converter.value(a) for a in copy.deepcopy(tuple(args)))
    return to_numpy(converter.value(fn)(*args))


def _scalar(out: Any, has_aux: bool) -> float:
    if has_aux:
        out = out[0]
    value = np.asarray(out)
    assert value.shape == () and value.dtype.kind == "f", \
        f"a function to differentiate returns a float scalar, got {value.dtype} {value.shape}"
    return float(value)


# Fourth-order central differences: f'(x) ~ (-f(x+2h) + 8f(x+h) - 8f(x-h) + f(x-2h)) / 12h.
_STENCIL = ((2.0, -1.0), (1.0, 8.0), (-1.0, -8.0), (-2.0, 1.0))
FD_STEP = 1e-4


def fd_grad(fn: Callable, args: tuple, argnums=0, static_argnums: Sequence[int] = (), has_aux: bool = False,
            step: float = FD_STEP):
    """Central finite differences of a scalar function, in float64, element by element.

    The step for an element ``x`` is ``step * max(1, |x|)``. Every evaluation gets a deep copy
    of ``args``, so functions that write into their arguments are fine. Differentiated leaves
    must be floats (Python floats or float arrays); ``None`` leaves are empty subtrees, as in JAX.
    Returns the gradient with the structure of ``args[argnums]`` (a tuple when ``argnums`` is a
    tuple); a Python-float leaf gets a 0-d float64 array.
    """
    del static_argnums  # static arguments are never perturbed
    args = tuple(args)
    nums, single = _normalize(argnums, len(args))
    leaves, treedef = jax.tree_util.tree_flatten(tuple(args[n] for n in nums))
    for leaf in leaves:
        kind = np.asarray(leaf).dtype.kind
        assert kind == "f", f"cannot differentiate a leaf of dtype kind {kind!r}: {leaf!r}"

    def evaluate(flat):
        full = list(copy.deepcopy(args))
        for n, sub in zip(nums, jax.tree_util.tree_unflatten(treedef, flat)):
            full[n] = sub
        return _scalar(fn(*full), has_aux)

    base = [np.array(leaf, dtype=np.float64) if isinstance(leaf, np.ndarray) else float(leaf) for leaf in leaves]
    grads = []
    for k, leaf in enumerate(base):
        arr = np.asarray(leaf, dtype=np.float64)
        g = np.zeros(arr.shape)
        for idx in np.ndindex(arr.shape):
            h = step * max(1.0, abs(arr[idx]))
            total = 0.0
            for offset, weight in _STENCIL:
                moved = arr.copy()
                moved[idx] += offset * h
                flat = list(base)
                flat[k] = moved if isinstance(leaf, np.ndarray) else float(moved)
                total += weight * evaluate(flat)
            g[idx] = total / (12.0 * h)
        grads.append(g)
    result = jax.tree_util.tree_unflatten(treedef, grads)
    return result[0] if single else result


def case_value_and_grad(case, oracle: str = None):
    """A corpus case's value (with aux, if any) and expected gradient from its oracle (or the one named).

    The value comes from the oracle's own run of the program (JAX's), or from NumPy for ``"fd"``.
    """
    oracle = oracle or case.oracle
    args = case.args_factory()
    if oracle == "jax":
        return jax_value_and_grad(case.fn, args, case.argnums, case.static_argnums, case.has_aux)
    value = case.fn(*copy.deepcopy(args))
    return value, fd_grad(case.fn, args, case.argnums, case.static_argnums, case.has_aux)


def case_grad(case, oracle: str = None):
    """The expected gradient of a corpus case from its oracle (or the one named)."""
    return case_value_and_grad(case, oracle)[1]
