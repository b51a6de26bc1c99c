"""The composites (``numbax.primitives.composites``: ``np.diff``, ``np.take``, ``np.take_along_axis``,
``np.average``, ``np.cross``, ``np.kron``, ``np.deg2rad``, ``np.rad2deg``, ``np.float_power``, ``np.nan_to_num``,
``np.heaviside``, ``np.vander``, ``np.linalg.matrix_power``) beyond the rule table (``grad_rules_cases``, which
checks values and both modes against JAX and finite differences): dtypes against NumPy, ``vmap`` against
stacking, ``hessian`` against JAX, and the refusals: keywords numbax does not implement, ranks its Python does
not cover, and indices out of bounds (NumPy raises; JAX would fill)."""
import os
import sys

import jax
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (turns on jax_enable_x64)

M = np.array([[1.0, -2.0, 0.3, 4.0], [3.0, 0.5, -1.2, 2.0], [0.1, 0.2, 0.7, -3.0]])
I = np.array([[0, 3], [1, 1], [2, 0]])


def diffs(x):
    return np.diff(x, prepend=1) + np.diff(x, append=x[:1])


def angles(x):
    return np.deg2rad(x) + np.rad2deg(x)


def averages(x):
    return np.average(x) + np.average(x, weights=x * 0 + 2)


def steps(x):
    return np.heaviside(x, 0.5)


def powers(x):
    return np.float_power(x, 2)


def vanders(x):
    return np.vander(x, 3)


def krons(x):
    return np.kron(x, x[:2])


def crosses(x):
    return np.cross(x[:3], x[1:])


def takes(x):
    return np.take(x, np.array([0, -1])) + np.take_along_axis(x, np.array([2, 1]), axis=0)


@pytest.mark.parametrize("fn", [diffs, angles, averages, steps, powers, vanders, krons, crosses, takes])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_dtypes_match_numpy(fn, dtype):
    x = np.array([1.5, -2.0, 0.0, 3.0]).astype(dtype)
    got, want = numbax.jit(fn)(x), fn(x)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def cleaned(x):
    return np.nan_to_num(x) * x[0] + np.nan_to_num(x, nan=1.0, posinf=5.0, neginf=-7.0) ** 2


def cleaned_sum(x):
    return np.sum(cleaned(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_to_num_replaces_as_numpy_and_differentiates_as_jax(dtype):
    x = np.array([1.5, np.nan, np.inf, -np.inf, -2.0]).astype(dtype)
    got = numbax.jit(cleaned)(x)
    assert got.dtype == cleaned(x).dtype
    np.testing.assert_array_equal(got, cleaned(x))
    x = x.astype(np.float64)
    np.testing.assert_array_equal(numbax.grad(cleaned_sum)(x), jax.grad(to_jax(cleaned_sum))(x))
    np.testing.assert_array_equal(numbax.jvp(cleaned, (x,), (np.ones(5),))[1],
                                  jax.jvp(to_jax(cleaned), (x,), (np.ones(5),))[1])


def matrix_powers(m):
    return np.linalg.matrix_power(m, 3) + np.linalg.matrix_power(m, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_matrix_power_dtypes_match_numpy(dtype):
    m = np.array([[1, 2], [-1, 3]]).astype(dtype)
    got = numbax.jit(matrix_powers)(m)
    assert got.dtype == matrix_powers(m).dtype
    np.testing.assert_array_equal(got, matrix_powers(m))


def mixed(a):
    rows = np.take_along_axis(a, I, axis=1)
    crossed = np.cross(a[:, :3], a[:, 1:])[0, 0]
    return np.sum(np.diff(a, n=2, axis=1) ** 2) + np.sum(np.kron(rows, a[:2, :2]) * crossed) \
        + np.average(a, axis=1, weights=np.array([0.5, 1.0, 2.0, 0.25])) @ np.deg2rad(a[:, 0]) \
        + np.sum(np.linalg.matrix_power(a[:, :3], 2) * np.vander(a[0, :3], 3))


def test_hessian_matches_jax():  # the python backend: Numba took 98 s to compile this Hessian (CPU: other tests)
    np.testing.assert_allclose(numbax.hessian(mixed, backend="python")(M), jax.hessian(to_jax(mixed))(M),
                               rtol=1e-10, atol=1e-12)


def test_vmap_matches_stacking():
    batch = np.stack([M, M[::-1] * 0.5, M - 1.0])
    got = numbax.vmap(numbax.grad(mixed, backend="python"), backend="python")(batch)
    np.testing.assert_allclose(got, np.stack([numbax.grad(mixed, backend="python")(b) for b in batch]), rtol=1e-12)
    np.testing.assert_allclose(numbax.vmap(mixed)(batch), [mixed(b) for b in batch], rtol=1e-12)


def test_python_backend_matches_numpy():
    np.testing.assert_allclose(numbax.jit(mixed, backend="python")(M), mixed(M), rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(mixed, backend="python")(M), jax.grad(to_jax(mixed))(M), rtol=1e-10)


def take_far(x):
    return np.take(x, np.array([0, 4]))


def take_along_far(a):
    return np.take_along_axis(a, np.array([[0], [4], [1]]), axis=1)


@pytest.mark.parametrize("fn", [take_far, take_along_far])
def test_index_out_of_bounds_raises_as_numpy(fn):
    """JAX's default mode fills (NaN) here; NumPy raises IndexError, and so does numbax, never a value of another
    element (``take_along_axis`` reads the flattened array, where row 1's index 4 is row 2's element 0)."""
    x = M if fn is take_along_far else M[0]
    with pytest.raises(IndexError):
        fn(x)
    with pytest.raises(IndexError, match=r"test_composites.py:\d+" if fn is take_far else "out of bounds"):
        numbax.jit(fn)(x)  # np.take's index check names the user's call, not the composite's line
    with pytest.raises(IndexError):
        numbax.grad(lambda v: np.sum(fn(v)))(x)


def take_clip(x):
    return np.take(x, np.array([0, 9]), mode="clip")


def cross_axis(a):
    return np.cross(a[:, :3], a[:, 1:], axisa=0)


def average_keepdims(a):
    return np.average(a, axis=0, keepdims=True)


def heaviside_out(x):
    out = np.zeros(4)
    return np.heaviside(x, 0.5, out=out)


def nan_to_num_in_place(x):
    return np.nan_to_num(x, copy=False)


def nan_to_num_complex(a):
    return np.nan_to_num(a * 1j)


def kron_3d(a):
    return np.kron(a.reshape(2, 3, 2), a.reshape(2, 3, 2))


def take_along_3d(a):
    return np.take_along_axis(a.reshape(2, 3, 2), np.zeros((2, 3, 1), np.int64), axis=2)


@pytest.mark.parametrize("fn, what", [(take_clip, "`mode=` of `np.take`"), (cross_axis, "`axisa=` of `np.cross`"),
                                      (average_keepdims, "`keepdims=` of `np.average`"),
                                      (heaviside_out, "`out=` of `np.heaviside`"),
                                      (nan_to_num_in_place, "`copy=` of `np.nan_to_num`"),
                                      (nan_to_num_complex, "np.nan_to_num of complex numbers"),
                                      (kron_3d, r"np.kron of operands of \(3, 3\) dimensions"),
                                      (take_along_3d, r"np.take_along_axis of operands of \(3, 3\) dimensions")])
def test_what_numbax_has_no_rule_for_is_refused_at_the_users_line(fn, what):
    with pytest.raises(numbax.NumbaxError, match=rf"test_composites.py:\d+: .*{what}"):
        numbax.jit(fn)(M)
    with pytest.raises(numbax.NumbaxError, match=what):
        numbax.grad(lambda a: np.sum(fn(a)))(M)


def test_coverage_lists_the_composites_in_both_modes():
    table = numbax.coverage()
    for name in ("diff", "take", "take_along_axis", "average", "cross", "kron", "deg2rad", "radians", "rad2deg",
                 "degrees", "float_power", "nan_to_num", "heaviside", "vander", "linalg.matrix_power"):
        assert table[f"numpy.{name}"] == {"grad": True, "jvp": True}, name


def test_jnp_namespace_has_them():
    import numbax.numpy as jnp

    for name in ("diff", "take", "take_along_axis", "average", "cross", "kron", "deg2rad", "rad2deg", "radians",
                 "degrees", "float_power", "nan_to_num", "heaviside", "vander"):
        assert getattr(jnp, name) is getattr(np, name)
    assert jnp.linalg.matrix_power is np.linalg.matrix_power and jnp.linalg.norm is np.linalg.norm
