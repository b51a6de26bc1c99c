"""jit's contract: compilation cache, static arguments, pytrees in and out, backends, config."""
import collections
import functools
import os
import sys
import threading
import warnings

import numpy as np
import pytest

import numbax
import numbax.call_signature
from numbax import generated_cache

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures.fresh_process import run_child  # noqa: E402


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



def _affine(x, w, bias=0.0, scale=1.0):
    return (x @ w + bias) * scale


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_jit_of_a_partial_binds_its_arguments(backend):
    x, w = np.arange(6.0).reshape(2, 3), np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    positional = numbax.jit(functools.partial(_affine, x, w), backend=backend)
    np.testing.assert_allclose(positional(), _affine(x, w))
    np.testing.assert_allclose(positional(0.5, scale=2.0), _affine(x, w, 0.5, 2.0))
    assert "x @ w" in positional.source  # the bound arrays are constants named for their parameters
    keywords = numbax.jit(functools.partial(functools.partial(_affine, w=w), scale=3.0), backend=backend)
    np.testing.assert_allclose(keywords(x), _affine(x, w, scale=3.0))
    np.testing.assert_allclose(keywords(x, scale=-1.0), _affine(x, w, scale=-1.0))  # overridable, as in Python
    np.testing.assert_allclose(keywords(x, scale=-1.0), _affine(x, w, scale=-1.0))
    assert len(keywords._cache) == 2  # a number a partial binds is part of the callable, as in JAX: one per value
    assert "_affine" in repr(keywords)


def _branches(x, mode="sin", training=True, scale=1.0):
    if mode == "sin":
        out = np.sin(x)
    else:
        out = np.undefined_function(x)  # never compiled for these partials
    if training:
        out = out * scale
    else:
        out = undefined_name  # noqa: F821
    return out


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_branch_a_partials_keyword_rules_out_is_not_compiled(backend):
    """A partial's keywords are part of the callable, as in JAX: compile-time values (a string, a bool, a
    number, a function), so what they rule out is not compiled; arrays it binds stay arguments."""
    x = np.linspace(-1.0, 1.0, 5)
    f = numbax.jit(functools.partial(_branches, mode="sin", training=True, scale=np.full(5, 2.0)), backend=backend)
    np.testing.assert_allclose(f(x), 2.0 * np.sin(x), rtol=1e-15)
    g = numbax.grad(lambda v: np.sum(functools.partial(_branches, mode="sin", scale=3.0)(v)), backend=backend)
    np.testing.assert_allclose(g(x), 3.0 * np.cos(x), rtol=1e-15)
    h = numbax.grad(functools.partial(_branches, mode="sin", training=True), backend=backend)
    np.testing.assert_allclose(h(0.3), np.cos(0.3), rtol=1e-15)

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


def power_total(x, n):
    return np.sum(x ** n)


def test_log_compiles_says_why_the_cache_missed(capsys):
    g = numbax.jit(power_total, static_argnums=(1,))
    with numbax.config.log_compiles():
        g(np.ones(3), 2)
        g(np.ones(3), 2)
        g(np.ones(3), 3)
        g(np.ones((2, 2)), 3)
        with numbax.config.debug_nans():
            g(np.ones((2, 2)), 3)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "numbax: compiling power_total for n=2; leaves float64[1-d] (first call)",
        "numbax: compiling power_total for n=3; leaves float64[1-d] (cache miss: static n: 2 -> 3)",
        "numbax: compiling power_total for n=3; leaves float64[2-d] (cache miss: x: float64[1-d] -> float64[2-d])",
        "numbax: compiling power_total for n=3; leaves float64[2-d]; debug_nans (cache miss: debug_nans on)",
    ]


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend"):
        numbax.jit(lambda x: x, backend="tpu")


def test_fast_path_falls_back_for_new_types_and_respects_disable_jit():
    def f(x, y):
        return np.sum(x * y + 1.0)

    jf = numbax.jit(f)
    x = np.ones(3)
    assert jf(x, x) == 6.0
    assert len(jf._fast_entries) == 1
    assert jf(x, x) == 6.0
    assert jf(x.astype(np.float32), x.astype(np.float32)) == 6.0
    assert jf(np.ones((2, 2)), np.ones((2, 2))) == 8.0
    assert len(jf._cache) == 3
    assert len(jf._fast_entries) == 3
    with numbax.config.disable_jit():
        assert jf(x, [1.0, 1.0, 1.0]) == 6.0
        assert jf(x, x) == 6.0


def _ran_as_python(fn, call):
    """Whether ``call()`` ran a line of ``fn``'s body in Python (Numba's dispatch reports calls of a compiled
    function to a profiler, never its lines to a tracer)."""
    lines = []

    def tracer(frame, event, arg):
        if frame.f_code is fn.__code__:
            lines.append(event)
        return tracer if frame.f_code is fn.__code__ else None

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return "line" in lines


def test_fast_path_is_suspended_while_any_thread_disables_jit():
    def f(x):
        return x + 1.0

    jf = numbax.jit(f)
    x = np.zeros(2)
    jf(x)
    assert jf._fast_entries
    calls = []
    inside, leave = threading.Event(), threading.Event()

    def other():
        with numbax.config.disable_jit():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    try:
        np.testing.assert_array_equal(jf(x), [1.0, 1.0])  # this thread still compiles
        assert not _ran_as_python(f, lambda: jf(x))
        assert numbax.config.jit_disabled_anywhere()
    finally:
        leave.set()
        thread.join()
    assert not numbax.config.jit_disabled_anywhere()
    np.testing.assert_array_equal(jf(x), [1.0, 1.0])
    with numbax.config.disable_jit():
        calls.append(_ran_as_python(f, lambda: jf(x)))
    assert calls == [True]


def test_fast_path_calls_bind_keywords_and_defaults_like_python():
    def f(x, y, scale=2.0):
        return x * y * scale

    jf = numbax.jit(f)
    x = np.arange(3.0)
    for _ in range(2):  # the second round runs from Numba's C dispatch
        np.testing.assert_array_equal(jf(x, x), x * x * 2.0)
        np.testing.assert_array_equal(jf(y=x, x=x), x * x * 2.0)
        np.testing.assert_array_equal(jf(x, x, 3.0), x * x * 3.0)
    assert len(jf._cache) == 1
    with pytest.raises(TypeError, match="missing a required argument: 'y'"):
        jf(x)
    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        jf(y=x)
    with pytest.raises(TypeError):
        jf(x, x, 3.0, 4.0)
    with pytest.raises(TypeError):
        jf(x, x, z=1.0)


def test_fast_path_leaves_python_ints_and_containers_to_numbax():
    def f(x, n):
        return x * n

    jf = numbax.jit(f)
    assert jf(np.ones(2), 3)[0] == 3.0
    assert jf._fast_entries == []
    np.testing.assert_array_equal(jf(np.ones(2), 2.0), [2.0, 2.0])
    assert len(jf._fast_entries) == 1
    np.testing.assert_array_equal(jf(np.ones(2), np.float64(2.0)), [2.0, 2.0])


def test_profiling_a_fast_call_works_and_leaves_the_function_alone():
    import cProfile

    def f(x):
        return x + 1.0

    jf = numbax.jit(f)
    x = np.zeros(1)
    jf(x)
    flags = f.__code__.co_flags
    cProfile.runctx("jf(x)", globals(), {"jf": jf, "x": x})
    assert f.__code__.co_flags == flags
    assert f(x)[0] == 1.0


def test_jitted_methods_bind_self():
    class Model:
        scale = 3.0

        @numbax.jit(static_argnums=0)
        def forward(self, x):
            return x * 2.0

    np.testing.assert_array_equal(Model().forward(np.ones(2)), [2.0, 2.0])


def test_fast_path_keeps_the_functions_own_type_errors():
    def f(x):
        if x[0] > 1.0:
            raise TypeError("from the function")
        return x

    jf = numbax.jit(f)
    jf(np.zeros(1))
    with pytest.raises(TypeError, match="from the function"):
        jf(np.full(1, 2.0))


# --------------------------------------------------------------------------
# The on-disk cache of generated source (numbax.generated_cache).

SCALE = 2.0
WEIGHTS = np.ones(2)


def _scaled(x):
    return x * SCALE


def _uses_helper(x):
    return _scaled(x) + 1.0


def _reads_array(x):
    return x * WEIGHTS


def _key(fn, *args):
    jitted = numbax.jit(fn)
    values = list(args)
    leaves, treedef = numbax.tree_util.tree_flatten(values)
    return generated_cache.key_for(fn, jitted._generated_cache_tag(),
                                   (treedef, (), numbax.call_signature.leaf_key(leaves)))


def test_generated_cache_key_follows_what_the_source_reads(monkeypatch):
    x = np.ones(2)
    first = _key(_uses_helper, x)
    assert first is not None and first == _key(_uses_helper, x)
    assert _key(_uses_helper, x.astype(np.float32)) != first
    monkeypatch.setitem(globals(), "SCALE", 3.0)  # a global the inlined helper reads
    assert _key(_uses_helper, x) != first
    assert _key(_reads_array, x) is None  # arrays are not fingerprinted: no disk cache for this one
    partial = functools.partial(_uses_helper)
    assert _key(partial, x) is not None and _key(partial, x) != first
    monkeypatch.setenv("NUMBAX_DUMP", "all")
    assert _key(_uses_helper, x) is None


def test_generated_cache_is_off_for_subclasses_that_change_the_pipeline():
    class Other(numbax.api.Jitted):
        def _run_pipeline(self, bound, after_pass=None):
            return super()._run_pipeline(bound, after_pass)

    assert Other(_scaled)._generated_cache_tag() is None
    assert numbax.jit(_scaled)._generated_cache_tag() == "jit"


def test_generated_cache_entry_round_trips(tmp_path):
    jitted = numbax.jit(_uses_helper)
    generated = jitted.generate((np.ones(2),), {})
    generated_cache.store(str(tmp_path), "k", generated)
    again = generated_cache.load(str(tmp_path), "k", type(generated))
    assert again == generated and again is not generated
    assert generated_cache.load(str(tmp_path), "missing", type(generated)) is None
    (tmp_path / "generated" / "k.pkl").write_bytes(b"garbage")
    assert generated_cache.load(str(tmp_path), "k", type(generated)) is None


def _run_child(tmp_path, source):
    return run_child(tmp_path, source, "numbax.jit(user_module.f)(np.ones(2), (np.ones(2), 2.0))[0]")


def test_a_new_process_reuses_generated_source_until_the_source_changes(tmp_path):
    module = ("import numpy as np\n\nOFFSET = 1.0\n\n\ndef helper(v):\n    return v * 2.0\n\n\n"
              "def f(x, pair):\n    y, s = pair\n    return helper(x) + y * s + OFFSET\n")
    assert _run_child(tmp_path, module) == (5.0, 1)
    assert _run_child(tmp_path, module) == (5.0, 0)  # no passes: the generated source came from disk
    assert _run_child(tmp_path, module.replace("v * 2.0", "v * 3.0")) == (6.0, 1)  # an inlined helper changed
    assert _run_child(tmp_path, module.replace("OFFSET = 1.0", "OFFSET = 2.0")) == (6.0, 1)  # a global changed
    assert _run_child(tmp_path, module.replace("+ OFFSET", "- OFFSET")) == (3.0, 1)  # the function changed


def test_pickle_round_trip_keeps_compiled_specializations():
    import pickle

    x = np.array([1.0, 2.0])
    jitted = numbax.jit(_uses_helper)
    jitted(x)
    again = pickle.loads(pickle.dumps(jitted))
    assert len(again._cache) == 1 and again._fast_entries == []
    np.testing.assert_array_equal(again(x), x * SCALE + 1.0)
    assert len(again._cache) == 1 and len(again._fast_entries) == 1


def test_identical_functions_in_two_files_keep_their_own_origins(tmp_path):
    import importlib.util

    functions = []
    for name in ("first_copy", "second_copy"):
        path = tmp_path / f"{name}.py"
        path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sin(x) * 2.0\n")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        functions.append(module.f)
    assert functions[0].__code__ == functions[1].__code__  # equal code objects, different files
    for fn, name in zip(functions, ("first_copy", "second_copy")):
        assert f"{name}.py" in numbax.source(fn, np.ones(2))
        assert f"{name}.py" in numbax.jit(fn).lower_source(np.ones(2))


def _made_inside(n):
    return np.ones(n, np.float32) * 0.5 + np.zeros((n, 2), np.float32).sum(axis=1)


def test_numpy_results_made_inside_keep_numpys_dtypes():
    out = numbax.jit(_made_inside)(3)
    assert out.dtype == np.float32 and np.array_equal(out, _made_inside(3))


def _float32_steps(x, n):
    h = x
    for i in range(n):
        h = np.tanh(h * x + 0.1 * i)  # i is a Python int: NumPy 2 keeps float32
    return h


def test_a_range_loop_variable_is_a_python_int():
    x = np.linspace(0.0, 1.0, 4).astype(np.float32)
    out = numbax.jit(_float32_steps)(x, 3)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, _float32_steps(x, 3), rtol=1e-6)


def _halved(x):
    return 0.5 * x


@functools.wraps(_halved)
def _doubled_under_a_borrowed_name(x):
    return 2.0 * x


def test_a_function_made_with_functools_wraps_compiles_its_own_source_not_the_wrapped_ones():
    # inspect.getsource follows __wrapped__: numbax compiled `_halved` for it, and returned 0.5 * x (a silent
    # wrong value); the code object's own source is read instead
    assert numbax.jit(_doubled_under_a_borrowed_name)(3.0) == 6.0
    assert numbax.grad(_doubled_under_a_borrowed_name)(3.0) == 2.0
    assert numbax.jit(lambda x: _doubled_under_a_borrowed_name(x) + 1.0)(3.0) == 7.0


@functools.wraps(numbax.nn.relu)
def _doubled_under_relus_name(x):
    return 2.0 * x


def test_a_function_wrapping_one_of_numbaxs_own_is_compiled_as_itself():
    # functools.wraps copied relu's `_numbax_specialize` hook and its __module__: numbax compiled relu for
    # it (0.0 for -1.0, a silent wrong value); the hook of the wrapped function and the copied module are ignored
    assert numbax.jit(lambda x: _doubled_under_relus_name(x))(-1.0) == -2.0
    assert numbax.grad(lambda x: _doubled_under_relus_name(x) ** 2)(-1.0) == -8.0


class _Scaled:
    def __init__(self, scale):
        self.scale = scale
        self.weights = np.array([1.0, -2.0, 3.0])

    def apply(self, x):
        return np.sum(np.tanh(x * self.weights)) * self.scale

    @classmethod
    def doubled(cls, x):
        return 2.0 * x


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_transformations_of_a_bound_method_take_its_object_as_part_of_the_callable(backend):
    """``jit(model.apply)``, ``grad(model.apply)``: the object is bound at compile time, as JAX traces ``self``
    (they were refused: "it is a method, not a Python function")."""
    model, x = _Scaled(0.5), np.array([0.3, -0.1, 0.2])
    np.testing.assert_allclose(numbax.jit(model.apply, backend=backend)(x), model.apply(x), rtol=1e-15)
    np.testing.assert_allclose(numbax.grad(model.apply, backend=backend)(x),
                               0.5 * model.weights * (1 - np.tanh(x * model.weights) ** 2), rtol=1e-14)
    np.testing.assert_allclose(numbax.jit(_Scaled.doubled, backend=backend)(x), 2.0 * x)
    other = _Scaled(3.0)
    np.testing.assert_allclose(numbax.jit(other.apply, backend=backend)(x), other.apply(x), rtol=1e-15)


def _applies(f, x):
    return f(x) * 2.0


def test_a_function_passed_as_a_dynamic_argument_is_jaxs_type_error():
    """JAX raises TypeError for an argument that is not an array ("Error interpreting argument ... as an abstract
    array"); marked static, the function is part of the specialization."""
    with pytest.raises(TypeError, match="holds a ufunc, which compiled code cannot take") as info:
        numbax.jit(_applies)(np.sin, np.ones(2))
    assert isinstance(info.value, numbax.NumbaxError)
    np.testing.assert_allclose(numbax.jit(_applies, static_argnums=0)(np.sin, np.ones(2)), 2 * np.sin(np.ones(2)))


def _strided_product(a, b):
    return a[:, ::2] @ b


def test_numbas_performance_warnings_about_generated_code_are_not_shown(tmp_path):
    """Numba warns that ``@`` is faster on contiguous arrays, naming a line of generated code the user cannot
    change: numbax compiles without showing it."""
    old = numbax.config.read("cache_dir")
    numbax.config.update("cache_dir", str(tmp_path / "cache"))  # compiled here, not loaded
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = numbax.jit(_strided_product)(np.ones((3, 4)), np.ones((2, 2)))
    finally:
        numbax.config.update("cache_dir", old)
    np.testing.assert_array_equal(out, np.full((3, 2), 2.0))
