"""Every error a user can cause is a numbax exception at the user's own line."""
import functools
import inspect

import numpy as np
import pytest

import numbax


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if text in line:
            return first + offset
    raise AssertionError(text)


def _raises(exc_type, fn, *args, **jit_kwargs):
    with pytest.raises(exc_type) as info:
        numbax.jit(fn, **jit_kwargs)(*args)
    return info.value


def uses_try(x):
    try:
        return x
    except ValueError:
        return x


def uses_with(x):
    with open("f"):
        return x


def uses_yield(x):
    yield x


def uses_global(x):
    global COUNTER
    return x


def uses_class(x):
    class A:
        pass
    return x


def uses_async(x):
    async def g():
        return 1
    return x


def uses_del(x):
    y = x
    del y
    return x


def uses_starred(x):
    both = (*x, 1.0)
    return both


def uses_import(x):
    import math
    return x


@pytest.mark.parametrize("fn, text, construct", [
    (uses_try, "try:", "`try` statements"),
    (uses_with, "with open", "`with` statements"),
    (uses_yield, "yield x", "`yield`"),
    (uses_global, "global COUNTER", "`global` declarations"),
    (uses_class, "class A", "class definitions"),
    (uses_async, "async def", "`async def`"),
    (uses_del, "del y", "`del` statements"),
    (uses_starred, "*x", "starred expressions"),
    (uses_import, "import math", "`import` statements"),
])
def test_fence_names_construct_and_line(fn, text, construct):
    err = _raises(numbax.NumbaxSyntaxError, fn, np.ones(2))
    assert construct in str(err)
    assert err.origin.lineno == _line_of(fn, text)
    assert err.origin.filename == __file__
    assert f"{__file__}:{err.origin.lineno}" in str(err)
    assert "^" in str(err) and "Instead:" in str(err)


def unpacks_an_array(x):
    return np.maximum(*x)


def unpacks_a_tuple(x):
    pair = (x, 2.0 * x)
    return np.maximum(*pair)


def test_unpacking_in_a_call_takes_tuples_not_run_time_arrays():
    assert np.allclose(numbax.jit(unpacks_a_tuple)(np.array([-1.0, 2.0])), [-1.0, 4.0])
    err = _raises(numbax.NumbaxSpecializationError, unpacks_an_array, np.ones(2))
    assert err.origin.lineno == _line_of(unpacks_an_array, "*x") and "unpacks tuples and lists" in str(err)


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x, n - 1)


def test_recursion_is_a_clear_error():
    err = _raises(numbax.NumbaxRecursionError, recursive, np.ones(2), 3)
    assert err.origin.lineno == _line_of(recursive, "return recursive")
    assert "rewrite the recursion as a loop" in str(err)


def test_function_without_source():
    np.testing.assert_allclose(numbax.jit(np.sum)(np.arange(4.0)), 6.0)  # a NumPy function is wrapped
    namespace = {}
    exec("def made(x):\n    return x\n", namespace)
    with pytest.raises(numbax.NumbaxSourceError, match="source code is not available"):
        numbax.jit(namespace["made"])



def test_partial_binding_too_many_arguments():
    def f(x, w):
        return x * w

    with pytest.raises(numbax.NumbaxSpecializationError, match="binds arguments that 'test_partial_binding"):
        numbax.jit(functools.partial(f, 1.0, 2.0, 3.0))

def test_unhashable_static_argument_gets_jax_error():
    def f(x, n):
        return x

    err = _raises(ValueError, f, np.ones(2), np.ones(2), static_argnums=1)
    assert isinstance(err, numbax.NumbaxStaticArgumentError)
    assert str(err).startswith("Non-hashable static arguments are not supported. An error occurred while "
                               "trying to hash an object of type <class 'numpy.ndarray'>")


def adds_string(x):
    y = x * 2.0
    return y + "a"


def test_numba_typing_failure_is_reported_at_the_user_line():
    err = _raises(numbax.NumbaxTypingError, adds_string, np.ones(2))
    assert err.origin.lineno == _line_of(adds_string, 'return y + "a"')
    assert "No implementation of function" in str(err)


def sums_rows(x):
    return np.sum(x * 2.0, axis=1)


def test_jax_refuses_an_axis_beyond_the_rank_with_a_value_error():
    import jax.numpy as jnp
    with pytest.raises(ValueError, match="axis 1 is out of bounds for array of dimension 1"):
        jnp.sum(jnp.ones(4), axis=1)


@pytest.mark.parametrize("transform", [numbax.jit, numbax.grad, numbax.vmap, numbax.jacfwd])
def test_an_axis_beyond_the_rank_is_a_value_error_at_the_user_line(transform):
    # was "Numba could not compile the generated code: Failed in nopython mode pipeline", a TypeError
    x = np.ones((3, 4)) if transform is numbax.vmap else np.ones(4)
    fn = (lambda v: np.sum(sums_rows(v))) if transform is numbax.grad else sums_rows
    with pytest.raises(numbax.NumbaxShapeError) as info:
        transform(fn)(x)
    assert isinstance(info.value, ValueError)
    assert "`np.sum`: axis 1 is out of bounds for array of dimension 1" in str(info.value)
    assert info.value.origin.lineno == _line_of(sums_rows, "return np.sum(x * 2.0, axis=1)")


def maxes_rows(x):
    return x.max(axis=-2)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_methods_axis_beyond_the_rank_is_refused_on_every_backend(backend):
    with pytest.raises(numbax.NumbaxShapeError, match=r"`.max\(\)`: axis -2 is out of bounds for array of "
                       "dimension 1") as info:
        numbax.jit(maxes_rows, backend=backend)(np.ones(3))
    assert info.value.origin.lineno == _line_of(maxes_rows, "return x.max(axis=-2)")


def indexes_list_at_runtime(params, i):
    return params[i]


def test_runtime_index_into_a_list():
    err = _raises(numbax.NumbaxSpecializationError, indexes_list_at_runtime, [np.ones(1)], 0)
    assert err.origin.lineno == _line_of(indexes_list_at_runtime, "return params[i]")
    assert "static_argnums" in str(err) or "compile-time values" in str(err)


def undefined_name(x):
    return x + not_defined_anywhere  # noqa: F821


def test_undefined_name():
    err = _raises(numbax.NumbaxSpecializationError, undefined_name, np.ones(1))
    assert "`not_defined_anywhere` is not defined" in str(err)


def grows_list_in_loop(x, n):
    out = []
    for i in range(n):
        if x[i] > 0:
            out.append(x[i])
    return out


def test_list_growth_under_runtime_control_flow():
    err = _raises(numbax.NumbaxSpecializationError, grows_list_in_loop, np.ones(3), 3)
    assert "`append`" in str(err)
    assert err.origin.lineno == _line_of(grows_list_in_loop, "out.append")


def mismatched_returns(x):
    if x.sum() > 0:
        return x, x
    return x


def test_returns_of_different_structure():
    err = _raises(numbax.NumbaxSpecializationError, mismatched_returns, np.ones(1))
    assert "different structure" in str(err)


def string_argument(x, mode):
    return x


def test_non_array_argument_must_be_static():
    err = _raises(numbax.NumbaxError, string_argument, np.ones(1), "fast")
    assert "`mode` holds a str" in str(err)
    assert "static_argnums" in str(err)


def test_an_unknown_backend_is_refused():  # the GPU backend's own errors: tests/test_gpu_*.py
    with pytest.raises(ValueError, match="unknown backend 'tpu'; choose 'cpu', 'gpu' or 'python'"):
        numbax.jit(string_argument, backend="tpu")


def halves_in_a_loop(b, n):
    for i in range(n):
        b = b * 0.5
    return b


def halves_a_fori_loop_carry(b, n):
    return numbax.lax.fori_loop(0, n, lambda i, c: c * 0.5, b)


@pytest.mark.parametrize("fn", [halves_in_a_loop, halves_a_fori_loop_carry])
def test_a_rebound_zero_d_array_argument_is_a_number_inside(fn):
    out = numbax.jit(fn)(np.array(3.0), 4)
    assert isinstance(out, np.ndarray) and out.shape == () and out == 3.0 / 16
    assert numbax.jit(fn)(np.float64(3.0), 4) == 3.0 / 16 and numbax.jit(fn)(3.0, 4) == 3.0 / 16


def halves_a_reshaped_element(x, n):
    b = x[:1].reshape(())
    for i in range(n):
        b = b * 0.5
    return b


def test_a_rebound_zero_d_array_that_a_reshape_makes_is_refused_with_what_to_write_instead():
    err = _raises(numbax.NumbaxTypingError, halves_a_reshaped_element, np.array([3.0]), 4)
    assert err.origin.lineno == _line_of(halves_a_reshaped_element, "for i in range(n):")
    assert "0-d array that a loop or a branch rebinds" in str(err) and "np.float64(" in str(err)
