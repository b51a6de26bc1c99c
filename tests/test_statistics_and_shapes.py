"""The composites of ``numbax.primitives.statistics`` (``np.nanmean``, ``np.nanvar``, ``np.nanstd``,
``np.nancumsum``, ``np.nancumprod``, ``np.quantile``, ``np.percentile``, ``np.cov``, ``np.corrcoef``),
``shape_composites`` (``np.fliplr``, ``np.flipud``, ``np.rot90``, ``np.column_stack``, ``np.dstack``,
``np.append``, ``np.diagflat``, ``np.hsplit``, ``np.vsplit``, ``np.dsplit``, ``x.mT``) and the newer ones of
``composites`` (``np.trapezoid``, ``np.ediff1d``, ``np.correlate``, ``np.select``, ``np.linalg.multi_dot``)
beyond the rule table (``grad_rules_cases``, both modes to second order against JAX and finite differences):
values and dtypes against NumPy, NaN slices against JAX, ``vmap`` against stacking, and the refusals."""
import os
import sys
import warnings

import jax
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (turns on jax_enable_x64)

A = np.array([[1.5, -2.0, 0.5, 1.0], [3.0, 0.25, -1.0, 2.0], [0.5, 2.0, 4.0, -3.0]])


def shapes(a):
    return (np.fliplr(a), np.flipud(a), np.rot90(a), np.rot90(a, 3, axes=(1, 0)), np.column_stack((a[0], a[1])),
            np.dstack((a, a)), np.append(a, a[0]), np.append(a, a[:1], axis=0), np.append(a[0], 0.5),
            np.append(a[1], [1.0, 2.0]), np.diagflat(a[0], -1),
            np.hsplit(a, 2)[1], np.vsplit(a, [1])[0], np.dsplit(a[None], 2)[0], a.mT, np.ediff1d(a),
            np.correlate(a[0], a[1, :3], "same"), np.select([a > 1, a < 0], [a, -a], 7), np.trapezoid(a),
            np.linalg.multi_dot([a, a.T, a]))


def statistics(a):
    b = np.where(a > 2, np.nan, a)
    return (np.nanmean(b, axis=0), np.nanvar(b, axis=1, ddof=1), np.nanstd(b, keepdims=True), np.nancumsum(b),
            np.nancumprod(b, axis=1), np.nanmean(a, dtype=np.float64), np.nanstd(b, axis=0, dtype=np.float64),
            np.cov(a), np.cov(a[0], a[1], bias=True), np.corrcoef(a, rowvar=False),
            np.trapezoid(a, dx=0.5, axis=0), np.quantile(a, 0.3), np.quantile(b, [0.1, 0.5, 1.0], axis=1),
            np.percentile(a, 35.0, axis=0, keepdims=True), np.quantile(a, np.array([0.2, 0.7]), keepdims=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_values_and_dtypes_match_numpy(dtype):
    a = A.astype(dtype)
    for fn in (shapes, statistics):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for got, want in zip(numbax.jit(fn)(a), fn(a)):
                assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
                np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


def nan_slices(a):
    b = np.where(a > 1.0, np.nan, a)
    return np.sum(np.nan_to_num(np.nanvar(b, axis=0, ddof=1) + np.nanmean(b, axis=0)) * np.array([1.0, 2.0, 3.0, 4.0]))


def test_a_slice_without_elements_enough_is_nan_and_leaves_the_gradient_finite_as_jaxs():
    """Column 0 keeps one element (ddof 1: NaN variance), column 3 none (NaN mean too); JAX's double ``where``."""
    a = np.array([[0.5, 0.2, 0.3, 1.5], [1.5, -0.4, 0.9, 2.0], [2.0, 0.1, 0.6, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = jax.grad(to_jax(nan_slices))(a)
        for backend in ("python", "cpu"):
            got = numbax.grad(nan_slices, backend=backend)(a)
            np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(np.isfinite(want))


def rows_of(a, x):
    return np.nanmean(a, axis=0) * np.correlate(x, a[0], "full")[:4] + np.trapezoid(np.rot90(a), x[:3])


def test_vmap_matches_stacking():
    a = np.stack([A, A * 0.5, A[::-1]])
    x = np.array([[1.0, 2.0, 3.0, 0.5], [0.5, -1.0, 0.0, 2.0], [2.0, 0.0, -2.0, 1.0]])
    np.testing.assert_allclose(numbax.vmap(rows_of)(a, x), np.stack([rows_of(a[i], x[i]) for i in range(3)]),
                               rtol=1e-12)


def one_variable_matrix(a):
    return np.cov(a[:1])


def test_cov_of_one_variable_of_a_matrix_raises_as_its_rank_would_be_known_at_run_time_only():
    with pytest.raises(ValueError, match="pass the variable as a 1-D array"):
        numbax.jit(one_variable_matrix)(A)
    assert np.cov(A[0]).shape == numbax.jit(lambda a: np.cov(a[0]))(A).shape == ()


def nanmean_where(a):
    return np.nanmean(a, where=a > 0)


def cov_weights(a):
    return np.cov(a, fweights=np.array([1, 2, 1, 1]))


def ediff1d_to_end(a):
    return np.ediff1d(a, to_end=0.0)


@pytest.mark.parametrize("fn, keyword", [(nanmean_where, "where"), (cov_weights, "fweights"),
                                         (ediff1d_to_end, "to_end")])
def test_keywords_numbax_does_not_implement_are_refused_at_the_users_line(fn, keyword):
    with pytest.raises(numbax.NumbaxSpecializationError, match=f"`{keyword}=`") as info:
        numbax.jit(fn)(A)
    assert info.value.origin.filename == __file__


def test_a_keyword_a_composite_does_not_take_is_refused_not_dropped(monkeypatch):
    """``keywords.IMPLEMENTED`` listing a keyword that the composite has no parameter for (a mistake in numbax)
    is refused at the user's line unless the value is the default: never passed over."""
    from numbax.ast_passes.specialize import keywords

    monkeypatch.setitem(keywords.IMPLEMENTED, "np.nanmean", keywords.IMPLEMENTED["np.nanmean"] | {"where"})
    with pytest.raises(numbax.NumbaxSpecializationError, match="`where=`"):
        numbax.jit(nanmean_where, backend="python")(A)
    np.testing.assert_allclose(numbax.jit(lambda a: np.nanmean(a, out=None), backend="python")(A), np.mean(A))


def test_coverage_has_them_in_both_modes():
    table = numbax.coverage()
    for name in ("nanmean", "nanvar", "nanstd", "nancumsum", "nancumprod", "quantile", "percentile", "cov",
                 "corrcoef", "fliplr", "flipud",
                 "rot90", "column_stack", "dstack", "append", "diagflat", "hsplit", "vsplit", "dsplit", "trapezoid",
                 "ediff1d", "correlate", "select", "linalg.multi_dot"):
        assert table[f"numpy.{name}"] == {"grad": True, "jvp": True}, name


def complex_statistics(z):
    return np.real(np.sum(np.cov(z) * np.array([[1.0, 2.0], [0.5, -1.0]]))) + \
        np.sum(np.nanvar(np.where(np.abs(z) > 2.0, np.nan, z), axis=0)) + np.nanstd(z)


def test_complex_data_follow_numpy_and_jax():
    """The NaN variance of complex data is the mean of ``|z - mean|**2``, as NumPy's (not of the complex
    squares); ``np.cov`` conjugates its second factor; gradients are JAX's."""
    z = np.array([[1 + 0.5j, 0.3 - 1j, 2.5 + 0.1j], [0.2 + 0.2j, -1 + 0.4j, 0.7 - 0.3j]])
    np.testing.assert_allclose(numbax.jit(complex_statistics, backend="python")(z), complex_statistics(z),
                               rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(complex_statistics, backend="python")(z),
                               jax.grad(to_jax(complex_statistics))(z), rtol=1e-10)
