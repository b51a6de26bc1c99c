"""Result dtypes of jit against NumPy's over the dtypes numbax compiles, and clear errors for the rest."""
import inspect
import subprocess
import sys
import warnings

import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxDtypeError, NumbaxSpecializationError

DTYPES = [np.bool_, np.uint8, np.int32, np.int64, np.float32, np.float64, np.complex128]


def _sample(dtype):
    return np.array([0.3, 1.7, 2.0]).astype(dtype) if np.dtype(dtype).kind != "b" else np.array([True, False, True])


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def f_add(x):
    return x + x


def f_mul_int(x):
    return x * 2


def f_mul_float(x):
    return x * 0.5


def f_div(x):
    return x / 2


def f_neg_abs(x):
    return np.abs(x) + 1


def f_exp(x):
    return np.exp(x)


def f_sum(x):
    return np.sum(x, axis=0, keepdims=True)


def f_mean(x):
    return np.mean(x, axis=0, keepdims=True)


def f_cumsum(x):
    return np.cumsum(x)


def f_clip(x):
    return np.clip(x, -0.5, 0.8)


def f_where(x):
    return np.where(x != 0, x, 0)


def f_maximum(x):
    return np.maximum(x, x)


def f_sign(x):
    return np.sign(x)


def f_square(x):
    return np.square(x)


FUNCTIONS = [f_add, f_mul_int, f_mul_float, f_div, f_neg_abs, f_exp, f_sum, f_mean, f_cumsum, f_clip, f_where, f_maximum,
             f_sign, f_square]
# (function, dtype) pairs NumPy computes in float16 (refused, tested below) or that NumPy itself refuses
_FLOAT16 = {(f, d) for f in (f_exp, f_div) for d in (np.bool_, np.uint8)}
_NOT_NUMPY = {(f_neg_abs, np.bool_), (f_sign, np.bool_), (f_clip, np.complex128), (f_maximum, np.complex128)}


def _cases():
    return [(f, d) for f in FUNCTIONS for d in DTYPES if (f, d) not in _FLOAT16 | _NOT_NUMPY]


@pytest.mark.parametrize("fn, dtype", _cases(), ids=lambda v: getattr(v, "__name__", str(v)))
def test_result_dtype_and_values_match_numpy(fn, dtype):
    x = _sample(dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = np.asarray(fn(x))
        got = np.asarray(numbax.jit(fn)(x))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype.kind in "fc" else 0)


def whole_sum(x):
    return np.sum(x)


def full_of_bools(x):
    return np.full(x.shape[0], 1, dtype=bool)


def ones_of_ints(x):
    return np.ones(x.shape[0], int)


def eye_of_complex(x):
    return np.eye(x.shape[0], dtype=complex)


def cast_by_python_types(x):
    return (x > 0.5).astype(int) + x.astype(bool)


def arange_of_floats(x):
    return np.arange(x.shape[0], dtype=float)


def full_like_of_ints(x):
    return np.full_like(x, 2, dtype=int)


def sum_in_ints(x):
    return np.sum(x, dtype=int)


def arange_named_int32(x):
    return np.arange(x.shape[0], dtype="int32")


def sum_named_int64(x):
    return np.sum(x, dtype="int64")


@pytest.mark.parametrize("backend", ["cpu", "python"])
@pytest.mark.parametrize("fn", [full_of_bools, ones_of_ints, eye_of_complex, cast_by_python_types, arange_of_floats,
                                full_like_of_ints, sum_in_ints, arange_named_int32, sum_named_int64])
def test_a_python_type_as_a_dtype_is_numpys(fn, backend):
    # ``dtype=bool`` is NumPy's bool; Numba has no dtype for a Python type: np.full(..., dtype=bool) was float64,
    # and the others failed to compile, as did Numba's np.arange and np.sum given a dtype's name
    x = np.array([0.25, 1.5, 2.0])
    got, want = numbax.jit(fn, backend=backend)(x), fn(x)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


def test_scalar_results_keep_numpys_dtype():
    out = numbax.jit(whole_sum)(np.ones(3, np.float32))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32


def test_clip_of_bools_with_float_bounds_is_float64():
    got = numbax.jit(f_clip)(np.array([True, False]))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [0.8, 0.0])


def test_where_of_uint8_keeps_uint8_by_nep50():
    u8 = np.array([0, 3, 200], np.uint8)
    got = numbax.jit(f_where)(u8)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, [0, 3, 200])


def f_sqrt(x):
    return np.sqrt(x)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8])
def test_float16_results_are_refused_at_the_line(dtype):
    with pytest.raises(NumbaxDtypeError, match="float16") as info:
        numbax.jit(f_sqrt)(_sample(dtype))
    assert f":{_line_of(f_sqrt, 'np.sqrt')}:" in str(info.value) and "astype(np.float32)" in str(info.value)


def test_float16_arguments_are_refused():
    with pytest.raises(NumbaxDtypeError, match="argument `x` has dtype float16") as info:
        numbax.jit(f_mul_int)(np.ones(3, np.float16))
    assert "astype(np.float32)" in str(info.value)


def test_object_arguments_are_refused():
    with pytest.raises(NumbaxDtypeError, match="argument `x` has dtype object"):
        numbax.jit(f_mul_int)(np.array([1.0, 2.0], dtype=object))


def greater(z):
    return z > 0


def less_ufunc(z):
    return np.less(z, 1.0)


@pytest.mark.parametrize("fn, text", [(greater, "z > 0"), (less_ufunc, "np.less")])
def test_ordering_complex_numbers_is_refused_at_the_line(fn, text):
    with pytest.raises(NumbaxDtypeError, match="complex") as info:
        numbax.jit(fn)(np.array([1 + 2j, 3 - 1j]))
    assert f":{_line_of(fn, text)}:" in str(info.value)


def frompyfunc(x):
    return np.frompyfunc(abs, 1, 1)(x)


def test_frompyfunc_is_refused_at_the_line():
    with pytest.raises(NumbaxSpecializationError, match="np.frompyfunc") as info:
        numbax.jit(frompyfunc)(np.ones(3))
    assert f":{_line_of(frompyfunc, 'frompyfunc(abs')}:" in str(info.value)


def test_oversized_argument_specs_in_show_are_refused(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(x):\n    return x * 2\n")
    for spec in ("f64[100000,100000]", "f64[9999999999999999999999]"):
        done = subprocess.run([sys.executable, "-m", "numbax", "show", f"{module}:f", "--args", spec],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode != 0
        assert "internal error" not in done.stderr and "elements" in done.stderr and "small shape" in done.stderr


def f_true_divide(x):
    return x / x + np.divide(x, x)


@pytest.mark.parametrize("fn, dtype", [(f, d) for f in (f_true_divide, f_exp, f_square)
                                        for d in (np.int16, np.uint16, np.bool_) if (f, d) != (f_exp, np.bool_)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_narrow_integers_follow_numpys_loops(fn, dtype):
    # NumPy divides integers in float64 and computes np.exp of int16 in float32 (of bool in float16: refused,
    # above); Numba's loop search divides 16-bit integer arrays in float32, and numbax's exp took float64.
    x = np.array([1, 3, 7]).astype(dtype)
    with np.errstate(all="ignore"):
        want = fn(x)
    got = numbax.jit(fn)(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-7)
