"""Reductions with ``where=`` and ``initial=`` (``numbax.primitives.masked_reductions``: keyword composites)
beyond the rule table (``grad_rules_cases``, both modes to second order against JAX and finite differences):
values and dtypes against NumPy, the array methods, ``vmap`` against stacking, and NumPy's errors."""
import numpy as np
import pytest

import numbax

A = np.array([[1.5, -2.0, 0.5, 1.0], [3.0, 0.25, -1.0, 2.0], [0.5, 2.0, 4.0, -3.0]])
COLUMNS = np.array([True, False, True, True])


def masked(a):
    return (np.sum(a, where=a > 0), np.sum(a, axis=0, where=COLUMNS, keepdims=True), a.sum(axis=1, where=a < 2),
            np.prod(a, axis=1, where=a > 0), np.mean(a, axis=0, where=a > -1), a.mean(where=COLUMNS),
            np.var(a, axis=1, where=a > -1), a.std(where=a > 0, ddof=1), np.max(a, initial=5),
            np.max(a, axis=0, initial=-1, where=COLUMNS), a.min(axis=1, initial=0, where=a > -2),
            np.amin(a, initial=1, keepdims=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_values_and_dtypes_match_numpy(dtype):
    a = A.astype(dtype)
    for got, want in zip(numbax.jit(masked)(a), masked(a)):
        assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


def rows(a, m):
    return np.mean(a, where=m) + np.max(a * 2.0, initial=0.5, where=m)


def test_vmap_matches_stacking():
    a = np.stack([A, -A, A * 0.5])
    m = np.stack([A > 0, A < 1, COLUMNS & (A > -5)])
    np.testing.assert_allclose(numbax.vmap(rows)(a, m), [rows(a[i], m[i]) for i in range(3)], rtol=1e-12)


def extremum_without_initial(a):
    return np.max(a, where=a > 0)


def mask_too_wide(a):
    return np.sum(a, where=np.ones((2,) + a.shape, dtype=bool))


@pytest.mark.parametrize("fn", [extremum_without_initial, mask_too_wide])
def test_numpys_errors_are_valueerrors(fn):
    with pytest.raises(ValueError):
        fn(A)
    for backend in ("python", "cpu"):
        with pytest.raises(ValueError):
            numbax.jit(fn, backend=backend)(A)


def mean_in_float32(a):
    return np.mean(a, dtype=np.float32, where=a > 0)


def test_a_keyword_the_masked_mean_does_not_implement_is_refused_at_the_users_line():
    with pytest.raises(numbax.NumbaxSpecializationError, match="`dtype=`") as info:
        numbax.jit(mean_in_float32)(A)
    assert info.value.origin.filename == __file__
