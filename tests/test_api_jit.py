"""jit's contract: compilation cache, static arguments, pytrees in and out, backends, config."""
import collections

import numpy as np
import pytest

import numbax


@numbax.jit(static_argnums=(1,))
def power_sum(x, n):
    return np.sum(x ** n)


def test_the_issue_example_compiles_once_per_static_value():
    power_sum._cache.clear()
    assert power_sum(np.array([1.0, 2.0, 3.0]), 2) == 14.0
    assert len(power_sum._cache) == 1
    assert power_sum(np.array([4.0, 5.0, 6.0]), 2) == 77.0
    assert len(power_sum._cache) == 1
    assert power_sum(np.array([1.0, 2.0, 3.0]), 3) == 36.0
    assert len(power_sum._cache) == 2


def test_jit_forms_are_equivalent():
    def f(x):
        return x * 2.0

    x = np.arange(3.0)
    for jitted in (numbax.jit(f), numbax.jit()(f), numbax.jit(backend="python")(f)):
        np.testing.assert_array_equal(jitted(x), f(x))


def test_static_argnames_and_keyword_call():
    def f(x, n=2):
        return x ** n

    jf = numbax.jit(f, static_argnames="n")
    assert jf.static_argnums == (1,)
    np.testing.assert_array_equal(jf(np.arange(3.0), n=3), np.arange(3.0) ** 3)
    np.testing.assert_array_equal(jf(np.arange(3.0)), np.arange(3.0) ** 2)


def test_new_dtype_or_ndim_compiles_a_new_specialization():
    def f(x):
        return x.ndim + x.sum()

    jf = numbax.jit(f)
    assert jf(np.ones(3)) == 4.0
    assert jf(np.ones((2, 2))) == 6.0
    assert jf(np.ones(3, dtype=np.float32)) == 4.0
    assert len(jf._cache) == 3


Params = collections.namedtuple("Params", ["w", "b"])


def mlp(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def test_mlp_over_a_list_of_tuples():
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(10, 20)), rng.normal(size=20)), (rng.normal(size=(20, 1)), rng.normal(size=1))]
    x = rng.normal(size=(100, 10))
    np.testing.assert_allclose(numbax.jit(mlp)(params, x), mlp(params, x), rtol=1e-12)


def test_pytrees_in_and_out():
    def f(p, d):
        return {"y": p.w * d["a"], "z": (p.b + 1.0, d["b"])}

    p = Params(np.ones(2), np.zeros(2))
    d = {"b": np.arange(2.0), "a": 3.0}
    out = numbax.jit(f)(p, d)
    assert set(out) == {"y", "z"}
    np.testing.assert_array_equal(out["y"], [3.0, 3.0])
    np.testing.assert_array_equal(out["z"][0], [1.0, 1.0])
    np.testing.assert_array_equal(out["z"][1], [0.0, 1.0])


def test_returning_none_and_scalars():
    def f(x):
        x[0] = 5.0

    x = np.zeros(2)
    assert numbax.jit(f)(x) is None
    assert x[0] == 5.0


def test_disable_jit_runs_the_original():
    calls = []

    def f(x):
        calls.append(1)
        return x

    jf = numbax.jit(f)
    with numbax.config.disable_jit():
        jf(np.ones(1))
    assert calls == [1]
    numbax.config.update("jax_disable_jit", True)
    try:
        jf(np.ones(1))
    finally:
        numbax.config.update("disable_jit", False)
    assert calls == [1, 1]


def test_source_and_repr_html():
    src = numbax.source(mlp, [(np.ones((2, 3)), np.ones(3)), (np.ones((3, 1)), np.ones(1))], np.ones((4, 2)))
    assert "def mlp(params_0_0, params_0_1, params_1_0, params_1_1, x):" in src
    jf = numbax.jit(mlp)
    jf([(np.ones((2, 1)), np.ones(1))], np.ones((4, 2)))
    assert jf.source.startswith('"""numbax.jit of mlp')
    assert "<span" in jf._repr_html_()


def test_log_compiles(capsys):
    def f(x):
        return x + 1.0

    with numbax.config.log_compiles():
        numbax.jit(f)(np.ones(2))
    assert "numbax: compiling" in capsys.readouterr().err


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend"):
        numbax.jit(lambda x: x, backend="tpu")


def test_fast_path_falls_back_for_new_types_and_respects_disable_jit():
    def f(x, y):
        return np.sum(x * y + 1.0)

    jf = numbax.jit(f)
    x = np.ones(3)
    assert jf(x, x) == 6.0
    assert jf._fast is not None
    assert jf(x, x) == 6.0
    assert jf(x.astype(np.float32), x.astype(np.float32)) == 6.0
    assert jf(np.ones((2, 2)), np.ones((2, 2))) == 8.0
    assert len(jf._cache) == 3
    with numbax.config.disable_jit():
        assert jf(x, [1.0, 1.0, 1.0]) == 6.0


def test_fast_path_keeps_the_functions_own_type_errors():
    def f(x):
        if x[0] > 1.0:
            raise TypeError("from the function")
        return x

    jf = numbax.jit(f)
    jf(np.zeros(1))
    with pytest.raises(TypeError, match="from the function"):
        jf(np.full(1, 2.0))
