"""``numbax.runtime``'s reductions agree with NumPy: from Python bit for bit, compiled by Numba to rounding.

Compiling dominates the time here, so each test compiles one function that makes many calls (one
overload instantiation per call), and the grid over every ndim and axis runs on one helper only:
the loop nests are shared, the helpers differ in their updates and dtypes, tested per dtype.
"""
import functools
import warnings

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

from numbax import runtime as rt
from numbax.runtime.statics import normalize_axes

NUMPY = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "var": np.var, "std": np.std, "max": np.max,
         "min": np.min, "amax": np.amax, "amin": np.amin, "ptp": np.ptp, "argmax": np.argmax, "argmin": np.argmin,
         "any": np.any, "all": np.all, "cumsum": np.cumsum, "cumprod": np.cumprod}
SCANS = ("cumsum", "cumprod")
POSITIONS = ("argmax", "argmin")
DTYPES = (np.float64, np.float32, np.int32, np.bool_)
SHAPE = (3, 4, 2, 5)


def sample(ndim, dtype, seed=0):
    rng = np.random.default_rng(seed)
    shape = SHAPE[:ndim]
    if dtype == np.bool_:
        return rng.normal(size=shape) > 0
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return rng.uniform(0.5, 1.5, size=shape).astype(dtype) * np.where(rng.normal(size=shape) > 0, 1, -1)


def axes_of(ndim, single=False):
    """None, every axis, one negative axis and (unless ``single``) a few tuples."""
    axes = [None] + list(range(ndim)) + [-1]
    if not single and ndim >= 2:
        axes += [(0, ndim - 1), (-1, 0)]
    if not single and ndim >= 3:
        axes += [(0, 2), tuple(range(ndim))]
    return axes


def numpy_call(name, a, args):
    if name in SCANS:
        return NUMPY[name](a, axis=args[0])
    if name in ("var", "std"):
        return NUMPY[name](a, axis=args[0], ddof=args[1], keepdims=args[2])
    return NUMPY[name](a, axis=args[0], keepdims=args[1])


@functools.lru_cache(maxsize=None)
def compiled(name, calls):
    """One njit function returning ``rt.<name>(a, *args)`` for each argument tuple of ``calls``."""
    body = "".join(f"rt.{name}(a, {', '.join(map(repr, args))}), " for args in calls)
    namespace = {"rt": rt}
    exec(f"def f(a):\n    return ({body})\n", namespace)
    return numba.njit(namespace["f"])


def assert_like_numpy(got, expected, what):
    got_array, expected_array = np.asarray(got), np.asarray(expected)
    assert got_array.shape == expected_array.shape, f"{what}: shape {got_array.shape} != {expected_array.shape}"
    if np.ndim(expected) == 0:  # Numba boxes scalars as Python scalars: compare the kind
        assert got_array.dtype.kind == expected_array.dtype.kind, f"{what}: {got!r} vs {expected!r}"
    else:
        assert got_array.dtype == expected_array.dtype, f"{what}: dtype {got_array.dtype} != {expected_array.dtype}"
    rtol = 2e-6 if expected_array.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got_array, expected_array, rtol=rtol, atol=rtol, err_msg=what)


def check(name, a, calls):
    for args, got in zip(calls, compiled(name, calls)(a)):
        assert_like_numpy(got, numpy_call(name, a, args), f"rt.{name}(a{a.shape} {a.dtype}, *{args})")


# ---- from Python: NumPy itself -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_python_helpers_are_numpy_bit_for_bit(name):
    for ndim in (1, 2, 3, 4):
        for dtype in DTYPES:
            if name == "ptp" and dtype == np.bool_:
                continue
            a = sample(ndim, dtype)
            for axis in axes_of(ndim, single=name in SCANS + POSITIONS):
                for keepdims in (False,) if name in SCANS else (False, True):
                    args = (axis,) if name in SCANS else (axis, 1, keepdims) if name in ("var", "std") \
                        else (axis, keepdims)
                    got, expected = getattr(rt, name)(a, *args), numpy_call(name, a, args)
                    assert np.asarray(got).dtype == np.asarray(expected).dtype
                    np.testing.assert_array_equal(got, expected)


def test_norm_from_python_is_numpy():
    a = sample(3, np.float64)
    for ord_, axis in [(None, None), (None, 1), (np.inf, -1), (1, (0, 2)), ("fro", (2, 1)), (2, (0, 1))]:
        for keepdims in (False, True):
            np.testing.assert_array_equal(rt.norm(a, ord_, axis, keepdims),
                                          np.linalg.norm(a, ord_, axis, keepdims))


# ---- compiled: every ndim and axis (mean and argmax), every dtype (each helper) -------------------


def compiled_axes(ndim, single=False):
    """None, every axis, one negative axis, and (unless ``single``) tuples, with a negative one among them.

    Each is a compilation of its own; the other spellings of the same axes are checked from Python
    (``test_axes_are_normalized_as_numpy_does``).
    """
    axes = [None] + list(range(ndim)) + [-1]
    if not single:
        axes += [(0, -1)] if ndim >= 2 else []
        axes += [(1, 2)] if ndim >= 3 else []
        axes += [(0, 1, 3)] if ndim >= 4 else []
    return axes


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_compiled_mean_every_axis_and_keepdims(ndim):
    calls = tuple((axis, keepdims) for axis in compiled_axes(ndim) for keepdims in (False, True))
    check("mean", sample(ndim, np.float64), calls)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_compiled_argmax_every_axis(ndim):
    calls = tuple((axis, keepdims) for axis in compiled_axes(ndim, single=True) for keepdims in (False, True))
    check("argmax", sample(ndim, np.int32), calls)


def test_axes_are_normalized_as_numpy_does():
    assert normalize_axes("f", 4, (-1, 0)) == (0, 3)
    assert normalize_axes("f", 4, (0, 1, 2, 3)) == normalize_axes("f", 4, None) == (0, 1, 2, 3)
    assert normalize_axes("f", 3, -2) == (1,)
    for bad, message in [((0, 4), "out of bounds"), ((1, -2), "repeated axis"), (1.5, "axis must be")]:
        with pytest.raises(TypingError, match=message):
            normalize_axes("f", 3, bad)
    with pytest.raises(TypingError, match="an integer or None"):
        normalize_axes("f", 3, (0,), single=True)


def _dtype_calls(name, dtype):
    """``(axis=1, keepdims=True)``, and for float64 also a tuple of axes (or None) without keepdims."""
    if name in SCANS:
        calls = ((1,), (None,))
    elif name in ("var", "std"):
        calls = ((1, 1, True), ((0, 2), 0, False))
    else:
        calls = ((1, True), (None if name in POSITIONS else (0, 2), False))
    return calls if dtype == np.float64 else calls[:1]


# NumPy itself has no ptp for booleans, so that pair is not a case.
_HELPER_DTYPES = [pytest.param(name, dtype, id=f"{name}-{np.dtype(dtype).name}")
                  for name in sorted(set(NUMPY) - {"amax", "amin"}) for dtype in DTYPES
                  if not (name == "ptp" and dtype == np.bool_)]


@pytest.mark.parametrize("name, dtype", _HELPER_DTYPES)
def test_compiled_helper_matches_numpy_dtype_and_values(name, dtype):
    check(name, sample(3, dtype), _dtype_calls(name, dtype))


def test_compiled_nan_propagates_as_in_numpy():
    a = sample(2, np.float64)
    a[1, 2] = a[2, 0] = np.nan
    for name in ("max", "min", "ptp", "argmax", "argmin"):
        check(name, a, ((0, False), (1, True)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_median_over_every_axis_with_numpys_nan_and_empty_lanes(dtype):
    # Numba's np.median takes no axis, and sorts a NaN last and takes the middle (NumPy's is NaN)
    calls = tuple((axis,) for axis in compiled_axes(3))
    a = sample(3, dtype)
    check_median(a, calls)
    if dtype == np.float64:
        a[1, 2, 0] = a[0, 0, 1] = np.nan
        check_median(a, calls)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy: the mean of an empty slice
            check_median(np.zeros((2, 0, 3)), ((1,), (0,), (None,), ((0, 1),)))


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_compiled_median_of_complex_numbers_is_numpys_lexicographic_middle(dtype):
    # Numba's np.median takes real numbers only: complex lanes are sorted (lexicographically, as NumPy sorts
    # them) and their middle taken; ties in the real parts and lanes of odd and even lengths
    rng = np.random.default_rng(3)
    a = (rng.integers(-2, 3, size=(3, 4, 5)) + 1j * rng.integers(-2, 3, size=(3, 4, 5))).astype(dtype)
    calls = tuple((axis,) for axis in compiled_axes(3))
    check_median(a, calls)
    a[1, 2, 0] = complex(0.5, np.nan)
    a[0, 0, 1] = np.nan
    check_median(a, calls)


@functools.lru_cache(maxsize=None)
def compiled_median(calls):
    body = "".join(f"rt.median(a, {args[0]!r}), " for args in calls)
    namespace = {"rt": rt}
    exec(f"def f(a):\n    return ({body})\n", namespace)
    return numba.njit(namespace["f"])


def check_median(a, calls):
    for (axis,), got in zip(calls, compiled_median(calls)(a)):
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = np.median(a, axis=axis)
        assert_like_numpy(got, expected, f"rt.median(a{a.shape} {a.dtype}, {axis!r})")
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))


def test_compiled_aliases_and_sums_of_ints_widen():
    check("amax", sample(2, np.float32), ((0, True),))
    got = compiled("sum", ((0, False),))(sample(2, np.int32))[0]
    assert got.dtype == np.int64


# ---- compiled norms ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def compiled_norm(calls):
    body = "".join(f"rt.norm(a, {o}, {ax!r}, {k}), " for o, ax, k in calls)
    namespace = {"rt": rt, "np": np}
    exec(f"def f(a):\n    return ({body})\n", namespace)
    return numba.njit(namespace["f"])


def check_norm(a, calls):
    for (ord_, axis, keepdims), got in zip(calls, compiled_norm(calls)(a)):
        expected = np.linalg.norm(a, eval(ord_, {"np": np}), axis, keepdims)
        assert_like_numpy(got, expected, f"rt.norm(a{a.shape} {a.dtype}, {ord_}, {axis!r}, {keepdims})")


def test_compiled_vector_norms():
    check_norm(sample(3, np.float64), (("None", None, False), ("None", 1, True), ("1", -1, False), ("0", 0, True),
                                       ("3", 2, False), ("2", (1,), False)))
    check_norm(sample(2, np.float32), (("None", None, True), ("-1", 1, False)))


def test_compiled_matrix_norms():
    check_norm(sample(3, np.float64), (("None", (0, 2), False), ("'fro'", (0, 2), True), ("1", (0, 2), False),
                                       ("-1", (0, 2), True), ("2", (0, 2), False), ("-2", (0, 2), False),
                                       ("'nuc'", (0, 2), False), ("1", (2, 0), False)))
    check_norm(sample(2, np.int32), (("'fro'", None, False), ("1", None, True), ("2", (1, 0), False)))


def test_compiled_norm_order_known_only_at_run_time():
    """``np.inf`` is a run-time float in Numba: the order picks the sweep at run time."""
    a = sample(3, np.float64)
    check_norm(a, (("np.inf", 1, False), ("-np.inf", (0, 1), True)))


# ---- errors --------------------------------------------------------------------------------------


def test_run_time_axis_or_keepdims_is_a_clear_typing_error():
    @numba.njit
    def runtime_axis(a, axis):
        return rt.mean(a, axis)

    with pytest.raises(TypingError, match="axis must be a compile-time constant"):
        runtime_axis(np.ones((2, 3)), 1)


def test_bad_axis_is_a_typing_error():
    with pytest.raises(TypingError, match="out of bounds"):
        compiled("max", ((2, False),))(np.ones((2, 3)))
    with pytest.raises(TypingError, match="repeated axis"):
        compiled("sum", (((0, -2), False),))(np.ones((2, 3)))
