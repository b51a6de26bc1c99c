"""Reverse mode never gives a silently wrong gradient (issue 12): each case agrees with JAX and finite differences.

The cases are the ways a gradient used to come out wrong or not at all: a cotangent written
through a view of a cotangent array, arrays built from scalars or lists of arrays, constructors
such as ``np.linspace`` with a differentiated argument, in-place methods, a function returning
``None``, an ``if`` whose backward sweep has nothing to do and a loop over a slice. Each gradient
is checked against JAX in float64 (a twin written with ``jax.numpy``) and against central
differences of the NumPy function itself. The last part holds reverse mode to its first rule:
every NumPy callable numbax resolves without a reverse-mode rule is refused at the user's line
when its operand is active, never treated as having no derivative.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

jax.config.update("jax_enable_x64", True)

X = np.array([0.3, -0.7, 1.1, 0.5])
S = 0.7


def central(f, x, eps=1e-6):
    """Central differences of ``f`` at ``x`` (a float or an array of floats)."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = (f(up if x.ndim else float(up)) - f(down if x.ndim else float(down))) / (2 * eps)
    return out


def check(f, twin, x, **grad_options):
    """numbax's gradient of ``f`` at ``x`` agrees with JAX's of ``twin`` and with central differences."""
    got = numbax.grad(f, **grad_options)(x)
    expected = jax.grad(twin)(jnp.asarray(x) if np.ndim(x) else x)
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, central(f, x), rtol=1e-6, atol=1e-8)
    return got


# ---- a cotangent written through a view of a cotangent array


def reversed_sum(x):
    t = 2.0 + x * x
    return np.sum(t[::-1])


def reversed_sum_twin(x):
    t = 2.0 + x * x
    return jnp.sum(t[::-1])


def strided_view_sum(x):
    t = np.sin(x)
    u = t[::2]
    return np.sum(u * u) + np.sum(t)


def strided_view_sum_twin(x):
    t = jnp.sin(x)
    u = t[::2]
    return jnp.sum(u * u) + jnp.sum(t)


@pytest.mark.parametrize("f, twin", [(reversed_sum, reversed_sum_twin), (strided_view_sum, strided_view_sum_twin)])
def test_a_cotangent_written_through_a_view_is_not_folded_as_zero(f, twin):
    got = check(f, twin, X)
    if f is reversed_sum:
        np.testing.assert_allclose(got, 2 * X)


# ---- grad of a function without an output


def returns_nothing(x):
    np.sum(x)


def returns_none(x):
    if x[0] > 0:
        return None
    return None


@pytest.mark.parametrize("f", [returns_nothing, returns_none])
@pytest.mark.parametrize("transform", [numbax.grad, numbax.value_and_grad])
def test_grad_of_a_function_returning_none_is_jax_type_error(f, transform):
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions. Output was None"):
        jax.grad(lambda x: None)(jnp.asarray(X))
    with pytest.raises(numbax.NumbaxDifferentiationError, match="Output was None") as info:
        transform(f)(X)
    assert isinstance(info.value, TypeError)
    assert f"test_grad_trust.py:{f.__code__.co_firstlineno}" in str(info.value)


# ---- an ``if`` whose backward sweep has nothing to do


def shifted_when_positive(x):
    t = np.sin(x)
    if np.sum(t) > 0:
        t = t + 1.0
    return np.sum(t * t)


def shifted_when_positive_twin(x):
    t = jnp.sin(x)
    t = jnp.where(jnp.sum(t) > 0, t + 1.0, t)
    return jnp.sum(t * t)


@pytest.mark.parametrize("x", [X, -X])
def test_a_branch_with_an_identity_adjoint_compiles(x):
    check(shifted_when_positive, shifted_when_positive_twin, x)


def either(x):
    s = x[0] * 2.0
    t = s or x[1]
    return t * t


def test_or_of_active_values_is_differentiated_as_the_branch_it_takes():
    check(either, lambda x: (x[0] * 2.0) ** 2, X)
    check(either, lambda x: x[1] ** 2, np.array([0.0, -0.7, 1.1, 0.5]))


# ---- a loop over a slice of an active array


def over_a_slice(x):
    s = 0.0
    for v in x[1:]:
        s = s + v * v
    return s


def over_a_reversed_stride(x):
    s = 0.0
    for v in x[::-2]:
        s = s * 0.5 + np.sin(v)
    return s


def over_zipped_slices(x):
    s = 0.0
    for a, b in zip(x[1:], x[:-1]):
        s = s + a * b
    return s


def over_enumerated_slice(x):
    s = 0.0
    for i, v in enumerate(x[::2]):
        s = s + (i + 1.0) * v ** 3
    return s


def over_rows_of_a_slice(x):
    m = np.outer(x, x)
    s = 0.0
    for row in m[1:, ::2]:
        s = s + np.sum(row * row)
    return s


LOOP_CASES = [
    (over_a_slice, lambda x: sum(v * v for v in x[1:])),
    (over_a_reversed_stride, lambda x: _fold(lambda s, v: s * 0.5 + jnp.sin(v), x[::-2])),
    (over_zipped_slices, lambda x: sum(a * b for a, b in zip(x[1:], x[:-1]))),
    (over_enumerated_slice, lambda x: sum((i + 1.0) * v ** 3 for i, v in enumerate(x[::2]))),
    (over_rows_of_a_slice, lambda x: sum(jnp.sum(r * r) for r in jnp.outer(x, x)[1:, ::2])),
]


def _fold(step, xs):
    s = 0.0
    for v in xs:
        s = step(s, v)
    return s


@pytest.mark.parametrize("f, twin", LOOP_CASES, ids=[c[0].__name__ for c in LOOP_CASES])
def test_a_loop_over_a_slice_of_an_active_array_runs(f, twin):
    check(f, twin, X)


# ---- arrays built from scalars and from lists of arrays


def array_of_a_scalar(s):
    a = np.array([[s, s], [s, s]])
    return np.sum(a * a)


def array_of_scalars(s):
    a = np.asarray([s, 2.0 * s, np.sin(s)])
    return np.sum(a * a * np.array([1.0, 2.0, 3.0]))


def array_of_rows(x):
    a = np.array([x, x * x])
    return np.sum(np.sin(a) * np.array([[1.0], [2.0]]))


def nested_lists_of_elements(x):
    a = np.array([[x[0], x[1]], [x[2], x[3] * x[0]]])
    return np.sum(a @ a)


def stack_of_a_list(x):
    a = np.stack([x, np.cos(x), 2.0 * x])
    return np.sum(a[1:] ** 2) + np.sum(a[0])


BUILT_CASES = [
    (array_of_a_scalar, lambda s: jnp.sum(jnp.array([[s, s], [s, s]]) ** 2), S),
    (array_of_scalars, lambda s: jnp.sum(jnp.asarray([s, 2.0 * s, jnp.sin(s)]) ** 2 * jnp.array([1.0, 2.0, 3.0])),
     S),
    (array_of_rows, lambda x: jnp.sum(jnp.sin(jnp.array([x, x * x])) * jnp.array([[1.0], [2.0]])), X),
    (nested_lists_of_elements, lambda x: jnp.sum(jnp.array([[x[0], x[1]], [x[2], x[3] * x[0]]]) @
                                                 jnp.array([[x[0], x[1]], [x[2], x[3] * x[0]]])), X),
    (stack_of_a_list, lambda x: jnp.sum(jnp.stack([x, jnp.cos(x), 2.0 * x])[1:] ** 2) + jnp.sum(x), X),
]


def backend_for(f):
    """``python`` for the calls Numba does not compile (``np.array`` of a list of arrays): the code
    generated is the same, run on NumPy."""
    return "python" if f is array_of_rows else "cpu"


@pytest.mark.parametrize("f, twin, x", BUILT_CASES, ids=[c[0].__name__ for c in BUILT_CASES])
def test_an_array_built_from_active_values_carries_their_derivative(f, twin, x):
    got = check(f, twin, x, backend=backend_for(f))
    if f is array_of_a_scalar:
        assert got == pytest.approx(8 * S)


# ---- constructors whose values come from their arguments


def linspace_from(a):
    return np.sum(np.linspace(a, 3.4, 5) ** 2)


def linspace_to(b):
    return np.sum(np.sin(np.linspace(0.2, b, num=4)))


def full_of(s):
    return np.sum(np.full((2, 3), s) * np.arange(6.0).reshape(2, 3))


def full_like_of(s):
    return np.sum(np.full_like(X, s) ** 3)


CONSTRUCTOR_CASES = [
    (linspace_from, lambda a: jnp.sum(jnp.linspace(a, 3.4, 5) ** 2)),
    (linspace_to, lambda b: jnp.sum(jnp.sin(jnp.linspace(0.2, b, num=4)))),
    (full_of, lambda s: jnp.sum(jnp.full((2, 3), s) * jnp.arange(6.0).reshape(2, 3))),
    (full_like_of, lambda s: jnp.sum(jnp.full_like(jnp.asarray(X), s) ** 3)),
]


@pytest.mark.parametrize("f, twin", CONSTRUCTOR_CASES, ids=[c[0].__name__ for c in CONSTRUCTOR_CASES])
def test_a_constructor_differentiates_in_the_values_it_is_given(f, twin):
    got = check(f, twin, S, backend=backend_for(f))
    assert got != 0.0


def arange_from(a):
    return np.sum(np.arange(a, 3.0, 0.5) ** 2)


def test_arange_of_a_differentiated_start_is_refused():
    with pytest.raises(numbax.NumbaxDifferentiationError, match="arange") as info:
        numbax.grad(arange_from)(S)
    assert f"test_grad_trust.py:{arange_from.__code__.co_firstlineno + 1}" in str(info.value)


# ---- in-place methods


def sorted_in_place(x):
    y = x * 1.0
    y.sort()
    return 2 * y[0] + y[2]


def rows_sorted_in_place(x):
    y = np.reshape(x, (2, 2)) * 2.0 - x[0]
    y.sort()
    return np.sum(y * np.array([[1.0, 2.0], [3.0, 4.0]]))


def sorted_by_function(x):
    return np.sum(np.sort(x) * np.array([1.0, -2.0, 3.0, 0.5]))


def filled_in_place(x):
    y = x * 2.0
    y.fill(0.5)
    return np.sum(y * x)


def filled_with_an_active_value(x):
    y = np.zeros(3)
    y.fill(x[1] * x[2])
    return np.sum(y * y) + x[0]


INPLACE_CASES = [
    (sorted_in_place, lambda x: 2 * jnp.sort(x)[0] + jnp.sort(x)[2]),
    (rows_sorted_in_place, lambda x: jnp.sum(jnp.sort(jnp.reshape(x, (2, 2)) * 2.0 - x[0]) *
                                             jnp.array([[1.0, 2.0], [3.0, 4.0]]))),
    (sorted_by_function, lambda x: jnp.sum(jnp.sort(x) * jnp.array([1.0, -2.0, 3.0, 0.5]))),
    (filled_in_place, lambda x: jnp.sum(0.5 * x)),
    (filled_with_an_active_value, lambda x: 3 * (x[1] * x[2]) ** 2 + x[0]),
]


@pytest.mark.parametrize("backend", ["cpu", "python"])
@pytest.mark.parametrize("f, twin", INPLACE_CASES, ids=[c[0].__name__ for c in INPLACE_CASES])
def test_an_in_place_method_is_differentiated_as_it_runs(f, twin, backend):
    got = check(f, twin, X, backend=backend)
    if f is sorted_in_place:
        np.testing.assert_allclose(got, [0.0, 2.0, 0.0, 1.0])


# ---- what reverse mode has no rule for is refused at the user's line


def copied_into(x):
    y = np.zeros(4)
    np.copyto(y, x)
    return np.sum(y * y)


def added_out(x):
    y = np.zeros(4)
    z = np.add(x, 1.0, out=y)
    return np.sum(y * z)


def partitioned_in_place(x):
    y = x * 1.0
    y.partition(1)
    return y[0]


@pytest.mark.parametrize("f, line, what", [
    (copied_into, 2, "for its effect"),
    (partitioned_in_place, 2, "for its effect"),
])
def test_an_operation_without_a_rule_is_refused_at_its_line(f, line, what):
    with pytest.raises(numbax.NumbaxDifferentiationError, match=what) as info:
        numbax.grad(f, backend="python")(X)
    assert f"test_grad_trust.py:{f.__code__.co_firstlineno + line}" in str(info.value)


# Functions of the environment and of files, which specialization's dtype probes would call.
_NOT_SWEPT = {"test", "info", "show_config", "show_runtime", "save", "savez", "savez_compressed", "savetxt",
              "load", "loadtxt", "genfromtxt", "fromfile", "fromregex", "memmap", "lookfor", "source",
              "set_printoptions", "printoptions", "setbufsize", "seterr", "seterrcall", "get_include"}


def _without_rules():
    """``(spelling, callable)`` of every NumPy function that numbax resolves and has no reverse-mode rule for (a
    composite, compiled as other primitives that have theirs, has one)."""
    from numbax.primitives.registry import composite, vjp_rule

    out = []
    for spelling, module in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)):
        for attr in sorted(dir(module)):
            obj = getattr(module, attr)
            if attr.startswith("_") or attr in _NOT_SWEPT or isinstance(obj, type) or not callable(obj):
                continue
            if vjp_rule(obj) is None and composite(obj) is None:
                out.append((f"{spelling}.{attr}", obj))
    return out


def _calling(fn):
    def f(x):
        y = fn(x)
        return np.sum(y)
    return f


WITHOUT_RULES = _without_rules()


def test_the_sweep_covers_numpy():
    names = {n for n, _ in WITHOUT_RULES}
    assert len(names) > 150 and {"np.arange", "np.array_split", "np.linalg.svd", "np.fft.fft"} <= names


@pytest.mark.parametrize("spelling, fn", WITHOUT_RULES, ids=[n for n, _ in WITHOUT_RULES])
def test_every_numpy_function_without_a_rule_is_refused_on_an_active_operand(spelling, fn):
    f = _calling(fn)
    with pytest.raises(numbax.NumbaxError) as info:  # no derivative rule, or not compiled at all
        numbax.source(numbax.grad(f, backend="python"), X)
    assert f"test_grad_trust.py:{_calling.__code__.co_firstlineno + 2}" in str(info.value)


def _methods_without_rules():
    from numbax.primitives.registry import composite, method_key, vjp_rule
    from numbax.transforms.grad.differentiable import _NONDIFF_ATTRIBUTES

    return [a for a in sorted(dir(np.ndarray)) if not a.startswith("_") and vjp_rule(method_key(a)) is None
            and composite(method_key(a)) is None and a not in _NONDIFF_ATTRIBUTES]


def _user_function(tmp_path, name, body):
    """A function ``f(x)`` with ``body`` in a file of its own (numbax reads the user's source)."""
    import importlib.util

    path = tmp_path / f"user_{name}.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n" + "".join(f"    {line}\n" for line in body))
    spec = importlib.util.spec_from_file_location(f"user_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f, path.name


_MUTATING = {"partition", "put", "resize", "setfield", "setflags", "byteswap"}  # sort and fill have rules


@pytest.mark.parametrize("method", _methods_without_rules())
def test_every_array_method_without_a_rule_is_refused_on_an_active_array(tmp_path, method):
    call = "()" if callable(getattr(np.ndarray, method)) else ""
    f, filename = _user_function(tmp_path, method, [f"y = x.{method}{call}", "return np.sum(y)"])
    with pytest.raises(numbax.NumbaxError) as info:  # no derivative rule, or not compiled at all
        numbax.source(numbax.grad(f, backend="python"), X)
    assert f"{filename}:5" in str(info.value)
    if method in _MUTATING:  # as a statement, for its effect on the array
        f, filename = _user_function(tmp_path, method + "_effect", ["y = x * 1.0", f"y.{method}()",
                                                                    "return np.sum(y)"])
        with pytest.raises(numbax.NumbaxDifferentiationError, match="for its effect") as info:
            numbax.source(numbax.grad(f, backend="python"), X)
        assert f"{filename}:6" in str(info.value)


def padded_with_an_active_value(x):
    c = x[0] * 1.0
    return np.sum(np.pad(x, 1, constant_values=c) ** 2)


def norm_of_an_active_order(x):
    p = x[0] + 2.0
    return np.linalg.norm(x, ord=p)


def variance_of_an_active_ddof(x):
    d = x[0] * 0.0 + 1.0
    return np.var(x, ddof=d)


@pytest.mark.parametrize("f, argument", [(padded_with_an_active_value, "constant_values"),
                                         (norm_of_an_active_order, "ord"), (variance_of_an_active_ddof, "ddof")])
def test_an_active_argument_a_rule_says_nothing_of_is_refused(f, argument):
    with pytest.raises(numbax.NumbaxDifferentiationError, match=f"no derivative in its argument `{argument}`") \
            as info:
        numbax.grad(f, backend="python")(X)
    assert f"test_grad_trust.py:{f.__code__.co_firstlineno + 2}" in str(info.value)


def full_like_of_the_input(x):
    return np.sum(np.full_like(x, 2.0) * x * x)


def where_of_a_float_condition(x):
    return np.sum(np.where(x - 0.4, x * x, 3.0 * x))


@pytest.mark.parametrize("f, twin", [
    (full_like_of_the_input, lambda x: jnp.sum(jnp.full_like(x, 2.0) * x * x)),
    (where_of_a_float_condition, lambda x: jnp.sum(jnp.where(x - 0.4, x * x, 3.0 * x))),
])
def test_an_argument_a_rule_declares_without_derivative_carries_none(f, twin):
    check(f, twin, X, backend="python")


def test_a_ufunc_out_argument_is_differentiated_as_the_write_it_is():
    want = 2 * (X + 1.0)  # y = x + 1 written into y, z is y: sum((x + 1) ** 2)
    np.testing.assert_allclose(numbax.grad(added_out, backend="python")(X), want, rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(added_out)(X), want, rtol=1e-12)
