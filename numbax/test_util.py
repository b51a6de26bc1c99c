"""Gradient checks against finite differences, with the semantics of ``jax.test_util``.

``check_grads(f, args, order)`` checks numbax's derivatives of ``f`` at ``args`` against central
finite differences, in one random direction per check (so the cost does not grow with the size
of the inputs or outputs), up to ``order``:

- mode ``"fwd"`` checks ``numbax.jvp``: the tangent output for a random tangent against the
  finite-difference directional derivative;
- mode ``"rev"`` checks ``numbax.vjp``: for a random tangent ``t`` and cotangent ``c``, the
  projection ``<c, J t>`` (finite differences) against ``<vjp(c), t>``;
- mode ``"lin"`` checks ``numbax.linearize`` as a JVP.

Higher orders apply the same checks to the derivative functions themselves: ``jvp`` of ``jvp``,
and ``vjp`` of a function that calls ``vjp`` (so order 2 in reverse mode needs ``numbax.vjp`` to
differentiate a function that uses ``numbax.vjp`` itself).

Tolerances are JAX's: by default ``1e-5`` (float64) or ``2e-3`` (float32), relative and absolute,
each scaled by the number of elements compared; the finite-difference step is ``1e-4``. The
random directions come from ``np.random.RandomState(0)``, so a check is deterministic.

The transforms are looked up on ``numbax`` when a check runs, not when this module is imported,
so a mode whose transform this version of numbax lacks raises ``NotImplementedError`` naming it.
"""
from __future__ import annotations

import operator
from functools import partial
from typing import Any, Callable, Dict, Optional, Sequence, Union

import numpy as np

import numbax
from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.tree_util import tree_map, tree_reduce

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4

Tolerance = Union[None, float, Dict[Any, float]]

# jax.test_util's defaults, for the dtypes NumPy has. numbax computes in the arguments' own
# precision (there is no x64 switch), so dtypes are not canonicalized as JAX does without x64.
_DEFAULT_TOLERANCE: Dict[np.dtype, float] = {
    np.dtype(np.bool_): 0,
    np.dtype(np.int8): 0,
    np.dtype(np.int16): 0,
    np.dtype(np.int32): 0,
    np.dtype(np.int64): 0,
    np.dtype(np.uint8): 0,
    np.dtype(np.uint16): 0,
    np.dtype(np.uint32): 0,
    np.dtype(np.uint64): 0,
    np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6,
    np.dtype(np.complex128): 1e-15,
}

DEFAULT_GRADIENT_TOLERANCE: Dict[np.dtype, float] = {
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}

# The dtype NumPy gives a Python scalar, as JAX does with x64 enabled.
_PYTHON_SCALAR_DTYPES = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
}


def _transform(name: str, mode: str) -> Callable:
    fn = getattr(numbax, name, None)
    if fn is None:
        raise NotImplementedError(
            f"check_grads mode {mode!r} needs numbax.{name}, which this version of numbax does not "
            f"provide; leave {mode!r} out of modes= (for instance modes=('rev',) checks numbax.vjp only)")
    return fn


def _dtype(x: Any) -> np.dtype:
    if hasattr(x, "dtype"):
        return x.dtype
    dtype = _PYTHON_SCALAR_DTYPES.get(type(x))
    if dtype is not None:
        return dtype
    return np.asarray(x).dtype


def is_python_scalar(val: Any) -> bool:
    """Whether ``val`` is a Python ``bool``, ``int``, ``float`` or ``complex`` (not a NumPy scalar)."""
    return not isinstance(val, np.generic) and isinstance(val, (bool, int, float, complex))


def tolerance(dtype: Any, tol: Tolerance = None) -> float:
    """The tolerance for ``dtype``: ``tol`` itself, its entry for ``dtype``, or the default."""
    tol = {} if tol is None else tol
    if not isinstance(tol, dict):
        return tol
    tol = {np.dtype(key): value for key, value in tol.items()}
    dtype = np.dtype(dtype)
    return tol.get(dtype, _DEFAULT_TOLERANCE[dtype])


def _assert_numpy_allclose(a: np.ndarray, b: np.ndarray, atol=None, rtol=None, err_msg: str = "") -> None:
    kw = {}
    if atol:
        kw["atol"] = atol
    if rtol:
        kw["rtol"] = rtol
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, **kw, err_msg=err_msg)


def _assert_numpy_close(a, b, atol=None, rtol=None, err_msg: str = "") -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{err_msg}: shape {a.shape} != {b.shape}"
    atol = max(tolerance(a.dtype, atol), tolerance(b.dtype, atol))
    rtol = max(tolerance(a.dtype, rtol), tolerance(b.dtype, rtol))
    _assert_numpy_allclose(a, b, atol=atol * a.size, rtol=rtol * b.size, err_msg=err_msg)


def check_close(xs, ys, atol: Tolerance = None, rtol: Tolerance = None, err_msg: str = "") -> None:
    """Assert that two pytrees have the same structure and close leaves (tolerances scaled by size)."""
    tree_map(partial(_assert_numpy_close, atol=atol, rtol=rtol, err_msg=err_msg), xs, ys)


def _check_dtypes_match(xs, ys) -> None:
    def _assert_dtypes_match(x, y):
        assert _dtype(x) == _dtype(y), f"dtype {_dtype(x)} != {_dtype(y)}"
    tree_map(_assert_dtypes_match, xs, ys)


def inner_prod(xs, ys):
    """The real inner product of two pytrees of the same structure."""
    def contract(x, y):
        return np.real(np.dot(np.conj(x).reshape(-1), np.asarray(y).reshape(-1)))
    return tree_reduce(np.add, tree_map(contract, xs, ys))


def _safe_subtract(x, y, *, dtype):
    """Subtraction with ``inf - inf == 0``."""
    with np.errstate(invalid="ignore"):
        return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))


def _preserve_input_types(f: Callable) -> Callable:
    def wrapped(*args):
        dtype = _dtype(args[0])
        result = np.array(f(*args), dtype=dtype)
        if all(is_python_scalar(arg) for arg in args):
            result = result.item()
        return result
    return wrapped


add = partial(tree_map, _preserve_input_types(operator.add))
sub = partial(tree_map, _preserve_input_types(operator.sub))
safe_sub = partial(tree_map, lambda x, y: _safe_subtract(x, y, dtype=_dtype(x)))
conj = partial(tree_map, _preserve_input_types(np.conj))


def scalar_mul(xs, a):
    """Every leaf of ``xs`` times the scalar ``a``, in the leaf's dtype."""
    def mul(x):
        dtype = _dtype(x)
        result = np.multiply(x, np.array(a, dtype=dtype), dtype=dtype)
        return result.item() if is_python_scalar(x) else result
    return tree_map(mul, xs)


def rand_like(rng: np.random.RandomState, x):
    """Standard normal values with the shape and dtype of ``x`` (a Python scalar for one)."""
    shape = np.shape(x)
    dtype = _dtype(x)

    def randn():
        return np.asarray(rng.randn(*shape), dtype=dtype)

    if np.issubdtype(dtype, np.complexfloating):
        result = randn() + dtype.type(1.0j) * randn()
    else:
        result = randn()
    return result.item() if is_python_scalar(x) else result


def numerical_jvp(f: Callable, primals, tangents, eps: float = EPS):
    """The central difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)``, leaf by leaf."""
    delta = scalar_mul(tangents, eps)
    f_pos = f(*add(primals, delta))
    f_neg = f(*sub(primals, delta))
    return scalar_mul(safe_sub(f_pos, f_neg), 0.5 / eps)


def _merge_tolerance(tol: Tolerance, default: Dict[np.dtype, float]) -> Union[float, Dict[np.dtype, float]]:
    if tol is None:
        return default
    if not isinstance(tol, dict):
        return tol
    out = default.copy()
    for k, v in tol.items():
        out[np.dtype(k)] = v
    return out


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence, atol: Tolerance = None, rtol: Tolerance = None,
              eps: float = EPS, err_msg: str = "") -> None:
    """Check a JVP against finite differences, in one random tangent direction.

    Args:
        f: the function to check at ``f(*args)``.
        f_jvp: ``numbax.jvp`` applied to ``f``, typically ``functools.partial(numbax.jvp, f)``:
            called as ``f_jvp(primals, tangents)``, it returns ``(primal_out, tangent_out)``.
        args: the argument values, a tuple.
        atol: absolute tolerance, a number or a dict from dtype to number.
        rtol: relative tolerance, a number or a dict from dtype to number.
        eps: the finite-difference step.
        err_msg: text added to the message of a failed check.

    Raises:
        AssertionError: if the primal or tangent output does not match.
    """
    atol = _merge_tolerance(atol, DEFAULT_GRADIENT_TOLERANCE)
    rtol = _merge_tolerance(rtol, DEFAULT_GRADIENT_TOLERANCE)
    rng = np.random.RandomState(0)
    tangent = tree_map(partial(rand_like, rng), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out)
    v_out_expected = f(*args)
    _check_dtypes_match(v_out, v_out_expected)
    t_out_expected = numerical_jvp(f, args, tangent, eps=eps)
    check_close(v_out, v_out_expected, atol=atol, rtol=rtol, err_msg=f"{err_msg} primal" if err_msg else "primal")
    check_close(t_out, t_out_expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence, atol: Tolerance = None, rtol: Tolerance = None,
              eps: float = EPS, err_msg: str = "") -> None:
    """Check a VJP against finite differences, projected on one random tangent and cotangent.

    Args:
        f: the function to check at ``f(*args)``.
        f_vjp: ``numbax.vjp`` applied to ``f``, typically ``functools.partial(numbax.vjp, f)``:
            called as ``f_vjp(*args)``, it returns ``(primal_out, vjp_fun)``, and
            ``vjp_fun(cotangent)`` returns a tuple with one cotangent per argument.
        args: the argument values, a tuple.
        atol: absolute tolerance, a number or a dict from dtype to number.
        rtol: relative tolerance, a number or a dict from dtype to number.
        eps: the finite-difference step.
        err_msg: text added to the message of a failed check.

    Raises:
        AssertionError: if the primal output or the cotangent projection does not match.
    """
    atol = _merge_tolerance(atol, DEFAULT_GRADIENT_TOLERANCE)
    rtol = _merge_tolerance(rtol, DEFAULT_GRADIENT_TOLERANCE)
    _rand_like = partial(rand_like, np.random.RandomState(0))
    v_out, vjpfun = f_vjp(*args)
    v_out_expected = f(*args)
    check_close(v_out, v_out_expected, atol=atol, rtol=rtol, err_msg=f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_map(_rand_like, args)
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_map(_rand_like, v_out)
    cotangent_out = conj(vjpfun(conj(cotangent)))
    ip = inner_prod(tangent, cotangent_out)
    ip_expected = inner_prod(tangent_out, cotangent)
    check_close(ip, ip_expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def check_grads(f: Callable, args: Sequence, order: int, modes: Sequence[str] = ("fwd", "rev"),
                atol: Tolerance = None, rtol: Tolerance = None, eps: Optional[float] = None) -> None:
    """Check numbax's derivatives of ``f`` against finite differences, up to ``order``.

    Each check uses one random direction, so it stays cheap for large inputs and outputs.

    Args:
        f: the function to check at ``f(*args)``, a plain NumPy function numbax can transform.
        args: the argument values.
        order: derivatives up to this order are checked (1: first derivatives).
        modes: ``"fwd"`` (``numbax.jvp``), ``"rev"`` (``numbax.vjp``) and/or ``"lin"``
            (``numbax.linearize``, checked as a JVP).
        atol: absolute tolerance, a number or a dict from dtype to number.
        rtol: relative tolerance, a number or a dict from dtype to number.
        eps: the finite-difference step (default ``1e-4``).

    Raises:
        AssertionError: if a derivative does not match finite differences.
        NotImplementedError: if a mode's transform is missing from this version of numbax.
    """
    args = tuple(args)
    eps = eps or EPS

    _check_jvp = partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    _check_vjp = partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def _check_grads(f, args, order, err_msg=""):
        if "fwd" in modes:
            jvp = _transform("jvp", "fwd")
            fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"
            _check_jvp(f, partial(jvp, f), args, err_msg=fwd_msg)
            if order > 1:
                _check_grads(partial(jvp, f), (args, args), order - 1, fwd_msg)

        if "rev" in modes:
            vjp = _transform("vjp", "rev")
            rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"
            _check_vjp(f, partial(vjp, f), args, err_msg=rev_msg)
            if order > 1:
                _check_grads(_packed_vjp(f), (args,), order - 1, rev_msg)

        if "lin" in modes:
            lin_msg = f"LIN of {err_msg}" if err_msg else "LIN"
            _check_jvp(f, partial(_jvp_from_lin, f), args, err_msg=lin_msg)
            if order > 1:
                _check_grads(partial(_jvp_from_lin, f), (args, args), order - 1, lin_msg)

    _check_grads(f, args, order)


def _packed_vjp(f: Callable) -> Callable:
    """JAX's ``f_vjp(*args) = vjp_fun(out_primal)``, taking ``args`` as one tuple.

    numbax compiles functions with fixed parameters, so the checks of order ``n - 1`` run on a function of
    one argument, the tuple of ``f``'s arguments. The leaves, and the random directions drawn for them, are
    those of ``f_vjp(*args)``, so the checks are JAX's.
    """
    def f_vjp(args):
        out_primal, vjp_fun = numbax.vjp(f, *args)
        return vjp_fun(out_primal)
    return specialized_from_source(f_vjp)  # a call of it in compiled code (order 3) reads its source


def _jvp_from_lin(f: Callable, primals, tangents):
    primal_out, f_lin = _transform("linearize", "lin")(f, *primals)
    tangent_out = f_lin(*tangents)
    return primal_out, tangent_out
