"""``numbax.runtime.vector_math``: exp and tanh inline and vectorized, within 2 ulp of NumPy's over the whole
range, with NumPy's special values; ``add_unordered`` lets a sum vectorize."""
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

from numbax import runtime as rt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@numba.njit(error_model="numpy", cache=True)
def _both(x):
    return rt.exp(x), rt.tanh(x)


def _ulps(got, want):
    got, want = np.asarray(got), np.asarray(want)
    spacing = np.spacing(np.abs(want).astype(want.dtype))
    with np.errstate(invalid="ignore"):
        return np.max(np.where(got == want, 0.0, np.abs(got.astype(np.float64) - want) / spacing))


@pytest.mark.parametrize("low, high", [(-1.0, 1.0), (-40.0, 40.0), (-745.0, 710.0), (-746.0, -700.0),
                                       (700.0, 709.7), (-1e-8, 1e-8)])
def test_within_two_ulp_of_numpy_over_the_range(low, high):
    x = np.random.default_rng(0).uniform(low, high, 200_000)
    exp, tanh = _both(x)
    with np.errstate(over="ignore"):
        assert _ulps(exp, np.exp(x)) <= 2.0
    assert _ulps(tanh, np.tanh(x)) <= 2.0


def test_special_values_are_numpys():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 709.78, 709.79, -745.1, -745.2, 1e-310, -1e-310, 20.0,
                  -20.0, 0.625, -0.625, 1e300, -1e300])
    exp, tanh = _both(x)
    with np.errstate(over="ignore"):
        want = np.exp(x)
    finite = np.isfinite(want) & (want != 0)
    assert np.array_equal(np.isnan(exp), np.isnan(want))
    assert np.array_equal(exp[~finite], want[~finite], equal_nan=True)
    assert _ulps(exp[finite], want[finite]) <= 2.0
    want = np.tanh(x)
    assert np.array_equal(np.isnan(tanh), np.isnan(want))
    assert np.array_equal(np.signbit(tanh), np.signbit(want))  # -0.0 stays -0.0
    assert _ulps(tanh[~np.isnan(want)], want[~np.isnan(want)]) <= 2.0


def test_dtypes_and_layouts_follow_numpy():
    rng = np.random.default_rng(1)
    single = (rng.standard_normal(1000) * 5).astype(np.float32)
    exp, tanh = _both(single)
    assert exp.dtype == tanh.dtype == np.float32
    wide = single.astype(np.float64)  # against the float64 values rounded once
    assert _ulps(exp, np.exp(wide).astype(np.float32)) <= 1.0 and _ulps(tanh, np.tanh(wide).astype(np.float32)) <= 1.0
    ints = np.arange(-3, 4)
    exp, tanh = _both(ints)
    assert exp.dtype == np.float64 and _ulps(exp, np.exp(ints)) <= 2.0
    grid = rng.standard_normal((3, 4, 5))
    for view in (grid.T, grid[:, ::2, 1:]):
        exp, tanh = _both(view)
        assert exp.shape == view.shape and _ulps(exp, np.exp(view)) <= 2.0 and _ulps(tanh, np.tanh(view)) <= 2.0
    scalar = _both(1.5)
    assert _ulps(scalar[0], np.exp(1.5)) <= 2.0 and _ulps(scalar[1], np.tanh(1.5)) <= 2.0
    assert _ulps(_both(3)[0], np.exp(3.0)) <= 2.0


def test_complex_values_are_numbas_own():
    z = np.array([1.0 + 1.0j, -0.5j])
    exp, tanh = _both(z)
    np.testing.assert_allclose(exp, np.exp(z), rtol=1e-15)
    np.testing.assert_allclose(tanh, np.tanh(z), rtol=1e-15)


def test_from_python_they_are_numpy_bit_for_bit():
    x = np.linspace(-3, 3, 7)
    assert np.array_equal(rt.exp(x), np.exp(x)) and np.array_equal(rt.tanh(x), np.tanh(x))
    assert rt.add_unordered(1.5, 2) == 3.5


VECTORIZED = textwrap.dedent("""
    import numba
    import numpy as np
    from numbax import runtime as rt


    @numba.njit(error_model="numpy")
    def sum_of_exp(x):
        total = 0.0
        for i in range(x.shape[0]):
            total = rt.add_unordered(total, rt.exp(x[i]))
        return total


    x = np.linspace(-2.0, 2.0, 1001)
    tanh_of = numba.njit(error_model="numpy")(lambda x: rt.tanh(x))
    tanh_of(x)
    print(abs(sum_of_exp(x) - np.sum(np.exp(x))) <= 1e-14 * np.sum(np.exp(x)))
    for fn in (tanh_of, sum_of_exp):
        print("x double>" in fn.inspect_llvm(fn.signatures[0]))
""")


def test_the_loops_run_on_vector_registers(tmp_path):
    """The point of the helpers: LLVM vectorizes a loop of them, and a sum through ``add_unordered``, at Numba's
    default optimization level, which users run (the suite's level 0 vectorizes nothing)."""
    env = {**os.environ, "NUMBA_OPT": "3", "NUMBAX_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", VECTORIZED], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    close, *vectorized = done.stdout.split()
    assert close == "True" and vectorized == ["True", "True"], "the loop was not vectorized"


def test_add_unordered_keeps_integer_and_complex_sums():
    add = numba.njit(lambda a: rt.add_unordered(rt.add_unordered(0, a[0]), a[1]))
    assert add(np.array([1, 2])) == 3
    assert add(np.array([1j, 2.0])) == 2.0 + 1j
    assert add(np.array([0.5, 2.0], dtype=np.float32)) == 2.5
