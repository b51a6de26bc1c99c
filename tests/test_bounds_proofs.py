"""Checks that are proven unnecessary are gone from the generated code; the others stay, or move before
their loop, and still raise NumPy's error at the user's line."""
import inspect

import re

import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxIndexError, NumbaxShapeError, NumbaxZeroDivisionError
from numbax.generated_source import source_for

BACKENDS = ("python", "cpu")
X = np.array([.3, -.7, 1.1, .5])


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _loop_body(source):
    """The lines of ``source`` inside its (first) ``for`` loop."""
    lines = source.splitlines()
    start = next(k for k, line in enumerate(lines) if line.lstrip().startswith("for "))
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return "\n".join(body)


# ---- proven in bounds: no check at all


def copy_own_extent(x):
    out = np.zeros_like(x)
    n = len(x)
    for i in range(n):
        out[i] = 2.0 * x[i]
    return out


def differences(x):
    out = np.empty(x.shape[0] - 1)
    for i in range(len(x) - 1):
        out[i] = x[i + 1] - x[i]
    return out


def backward_differences(x):
    s = 0.0
    for i in range(1, x.shape[0]):
        s += x[i] * x[i - 1]
    return s


def wrap_around(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i - 1] * x[-1]
    return s


def sized_by_name(x, n):
    y = np.empty(n)
    for i in range(n):
        y[i] = float(i)
    return y


def argmax(x):
    best = 0
    for j in range(1, x.shape[0]):
        if x[j] > x[best]:
            best = j
    return best


@pytest.mark.parametrize("fn, args", [
    (copy_own_extent, (X,)), (differences, (X,)), (backward_differences, (X,)), (wrap_around, (X,)),
    (argmax, (X,)),
])
def test_an_index_proven_in_bounds_has_no_check(fn, args):
    source = numbax.source(fn, *args)
    assert "rt.check_index" not in source and "rt.check_span" not in source, source
    for backend in BACKENDS:
        np.testing.assert_allclose(numbax.jit(fn, backend=backend)(*args), fn(*args))


def test_a_size_argument_proves_its_array_and_its_last_index():
    source = numbax.source(sized_by_name, X, 3)
    assert "rt.check_index(y, i" not in source and "rt.check_span" not in source, source
    np.testing.assert_allclose(numbax.jit(sized_by_name, backend="cpu")(X, 3), sized_by_name(X, 3))


def constant_indices(x):
    return x[3] * x[1] + x[0] * x[-4]


def constant_indices_rising(x):
    return x[1] * x[3]


def test_a_checked_constant_index_proves_the_smaller_ones():
    source = numbax.source(constant_indices, X)
    assert source.count("rt.check_index") == 1 and "rt.check_index(x, 3, 0" in source, source
    assert numbax.source(constant_indices_rising, X).count("rt.check_index") == 2
    assert numbax.jit(constant_indices, backend="cpu")(X) == constant_indices(X)
    with pytest.raises(NumbaxIndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        numbax.jit(constant_indices, backend="cpu")(X[:3])


# ---- not provable: checked, before the loop where every iteration would check it


def gather(x, idx):
    s = 0.0
    for i in range(len(idx)):
        s += x[idx[i]]
    return s


def dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


def off_by_one(x):
    s = 0.0
    for i in range(len(x) + 1):
        s += x[i]
    return s


def shifted_past_end(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i + 2]
    return s


def test_a_loop_index_into_an_array_of_unknown_extent_is_checked_once_before_the_loop():
    source = numbax.source(dot, X, X)
    assert "rt.check_span(y, 0, " in source and "check" not in _loop_body(source), source
    source = numbax.source(gather, X, np.array([0, 3]))
    assert "check_index(idx" not in source and "rt.check_index(x, " in _loop_body(source), source  # data


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args, text, message", [
    (dot, (X, X[:3]), "s += x[i] * y[i]", "index 3 is out of bounds for axis 0 with size 3"),
    (off_by_one, (X,), "s += x[i]", "index 4 is out of bounds for axis 0 with size 4"),
    (shifted_past_end, (X,), "s += x[i + 2]", "index 4 is out of bounds for axis 0 with size 4"),
    (gather, (X, np.array([0, 4])), "s += x[idx[i]]", "index 4 is out of bounds for axis 0 with size 4"),
    (gather, (X, np.array([-5, 0])), "s += x[idx[i]]", "index -5 is out of bounds for axis 0 with size 4"),
])
def test_an_index_that_can_be_out_of_bounds_still_raises_at_the_users_line(backend, fn, args, text, message):
    with pytest.raises(NumbaxIndexError) as info:
        numbax.jit(fn, backend=backend)(*args)
    assert str(info.value).splitlines()[0] == f"{__file__}:{_line_of(fn, text)}: {message}"


def rebound_array(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
        x = x[:-1]
    return s


def rebound_index(x):
    s = 0.0
    for i in range(len(x)):
        i = i + 1
        s += x[i]
    return s


def rebound_bound(x):
    n = len(x)
    out = np.zeros_like(x)
    for i in range(n):
        out[i] = x[i]
        out = np.zeros(2)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, text, message", [
    (rebound_array, "s += x[i]", "index 2 is out of bounds for axis 0 with size 2"),
    (rebound_index, "s += x[i]", "index 4 is out of bounds for axis 0 with size 4"),
    (rebound_bound, "out[i] = x[i]", "index 2 is out of bounds for axis 0 with size 2"),
])
def test_an_array_or_index_assigned_in_the_loop_keeps_its_check_in_the_loop(backend, fn, text, message):
    assert "rt.check_index" in _loop_body(numbax.source(fn, X))
    with pytest.raises(NumbaxIndexError) as info:
        numbax.jit(fn, backend=backend)(X)
    assert str(info.value).splitlines()[0] == f"{__file__}:{_line_of(fn, text)}: {message}"


def stops_early(x, n):
    s = 0.0
    for i in range(n):
        if x[i] > 1.0:
            break
        s += x[i]
    return s


def skips(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 1:
            continue
        s += x[i]
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_that_may_stop_or_skip_checks_where_it_indexes(backend):
    assert numbax.jit(stops_early, backend=backend)(X, 10) == stops_early(X, 10)
    assert numbax.jit(skips, backend=backend)(X[:3], 4) == skips(X[:3], 4)
    with pytest.raises(NumbaxIndexError, match="index 4 is out of bounds"):
        numbax.jit(skips, backend=backend)(X, 5)


def test_a_loop_that_never_runs_checks_nothing():
    assert numbax.jit(dot, backend="cpu")(X[:0], X[:0]) == 0.0
    assert numbax.jit(shifted_past_end, backend="cpu")(X[:0]) == 0.0


# ---- divisors


def guarded_divide(a, b):
    if b != 0:
        return a / b
    return 0.0


def guarded_positive(a, b):
    if b > 0.5:
        return a / b
    return a / (b - 0.25)


def newton_step(e, m):
    return (m - e * np.sin(m) + 1.0) / (1.0 - e * np.cos(m))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_divisor_proven_nonzero_by_its_branch_is_not_checked(backend):
    source = numbax.source(guarded_divide, 1.0, 2.0)
    assert "check_divisor" not in source, source
    assert numbax.source(guarded_positive, 1.0, 2.0).count("check_divisor") == 1
    assert numbax.jit(guarded_divide, backend=backend)(1.0, 0.0) == 0.0
    assert numbax.jit(guarded_divide, backend=backend)(1.0, 4.0) == 0.25
    with pytest.raises(NumbaxZeroDivisionError):
        numbax.jit(guarded_positive, backend=backend)(1.0, 0.25)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ufunc_of_python_numbers_is_a_numpy_scalar_that_divides_to_inf(backend):
    assert "check_divisor" not in numbax.source(newton_step, 1.0, 0.0)
    with np.errstate(divide="ignore"):
        expected = newton_step(1.0, 0.0)
        assert expected == np.inf
        assert numbax.jit(newton_step, backend=backend)(1.0, 0.0) == expected
    assert numbax.jit(newton_step, backend=backend)(0.7, 1.3) == pytest.approx(newton_step(0.7, 1.3), rel=1e-15)


# ---- shapes


def neighbours(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def neighbours_mismatched(x):
    return np.sum(x[2:] - x[:-1])


def shifted_against_whole(x):
    return np.sum(x[1:] * -x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_slices_of_one_length_need_no_broadcast_check_and_others_keep_it(backend):
    assert "check_broadcast" not in numbax.source(neighbours, X)
    assert numbax.jit(neighbours, backend=backend)(X) == pytest.approx(neighbours(X), rel=1e-14)
    for fn, text in ((neighbours_mismatched, "x[2:] - x[:-1]"), (shifted_against_whole, "x[1:] * -x")):
        assert "check_broadcast" in numbax.source(fn, X)
        with pytest.raises(NumbaxShapeError) as info:
            numbax.jit(fn, backend=backend)(X)
        assert str(info.value).splitlines()[0].startswith(f"{__file__}:{_line_of(fn, text)}: operands could not")


A = np.arange(6.0).reshape(2, 3) / 7.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_and_grad_of_a_loop_checked_before_it(backend):
    np.testing.assert_allclose(numbax.vmap(dot, backend=backend)(A, A), np.sum(A * A, axis=1))
    np.testing.assert_allclose(numbax.vmap(dot, in_axes=(0, None), backend=backend)(A, X), A @ X[:3])
    np.testing.assert_allclose(numbax.grad(dot, backend=backend)(X[:3], A[1]), A[1])
    with pytest.raises(NumbaxIndexError) as info:
        numbax.vmap(off_by_one, backend=backend)(A)
    assert str(info.value).splitlines()[0] == \
        f"{__file__}:{_line_of(off_by_one, 's += x[i]')}: index 3 is out of bounds for axis 0 with size 3"
    with pytest.raises(NumbaxIndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        numbax.grad(dot, backend=backend)(X, A[1])


def scaled_by_root(x, s):
    return x * np.sqrt(s)


def test_a_ufunc_of_a_python_number_promotes_as_numpy_does():
    x = np.ones(3, np.float32)
    expected = scaled_by_root(x, 2.0)
    assert expected.dtype == np.float64  # np.sqrt(2.0) is np.float64, no weak Python number (NEP 50)
    for backend in BACKENDS:
        out = numbax.jit(scaled_by_root, backend=backend)(x, 2.0)
        assert out.dtype == expected.dtype
        np.testing.assert_allclose(out, expected, rtol=1e-15)


def cross_entropy_rows(logits, labels):
    total = 0.0
    for i in range(logits.shape[0]):
        z = logits[i] - np.max(logits[i])
        total = total + np.log(np.sum(np.exp(z))) - z[labels[i]]
    return total


LOGITS = np.array([[.3, -.7, 1.1], [.5, 2.0, -1.2]])


def _softmax_minus_one_hot(labels):
    p = np.exp(LOGITS - LOGITS.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(labels)), labels] -= 1.0
    return p


def test_an_index_into_an_array_fusion_no_longer_makes_is_checked_against_its_extent():
    """``z[labels[i]]`` is checked against ``z``'s length, so the fused loop need not write ``z`` out."""
    source = source_for(cross_entropy_rows, (LOGITS, np.array([2, 0])), transform="grad")
    assert "rt.check_extent(" in source and "rt.check_index(z" not in source, source
    assert not re.search(r"\bz = np\.empty", source), source  # the cotangent dz is the backward loop's buffer


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_checked_against_an_extent_differentiates_and_raises_as_numpy(backend):
    grad = numbax.grad(cross_entropy_rows, backend=backend)
    for labels in (np.array([2, 0]), np.array([-1, -3])):  # negative labels wrap, as in NumPy
        np.testing.assert_allclose(grad(LOGITS, labels), _softmax_minus_one_hot(labels % 3), rtol=1e-12)
    line = _line_of(cross_entropy_rows, "total = total + np.log")
    for labels, message in ((np.array([0, 3]), "index 3 is out of bounds for axis 0 with size 3"),
                            (np.array([-4, 0]), "index -4 is out of bounds for axis 0 with size 3")):
        for transform in (numbax.grad, numbax.jit):
            with pytest.raises(NumbaxIndexError) as info:
                transform(cross_entropy_rows, backend=backend)(LOGITS, labels)
            assert str(info.value).splitlines()[0] == f"{__file__}:{line}: {message}"
