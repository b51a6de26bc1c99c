"""``vmap``'s body written once (``first_example``): the loop runs from the first example and sizes the outputs
on its first iteration, instead of a copy of the body before it. Values against NumPy's stacking and JAX
(float64), the generated code holding one copy of the body, and the checks that stay."""
import gast
import numpy as np
import pytest

import numbax
from numbax.ast_passes import anno, row_checks
from numbax.ast_passes.optimizations import first_example
from numbax.errors import NumbaxIndexError
from numbax.ast_passes.unparse import unparse
from grad_corpus.oracles import to_jax
import jax  # noqa: E402  (after the oracles, which turn on float64)

X = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])


def layer(x, w):
    h = np.tanh(x @ w)
    return h, np.sum(h * h)


def potential(u):
    return np.sum(np.sin(u) * u[::-1]) + 0.5 * np.sum(u ** 4)


def _code(source):
    """The generated lines but comments (which quote the user's)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))


BATCHED = numbax.vmap(layer, in_axes=(0, None), out_axes=(1, 0))
NESTED = numbax.vmap(numbax.vmap(lambda a, b: np.tanh(a * b), in_axes=(0, None)), in_axes=(None, 0))
JACOBIAN = numbax.jit(numbax.jacfwd(numbax.grad(potential)))
PUSHED = numbax.vmap(lambda u, t: numbax.jvp(potential, (u,), (t,))[1])


def test_vmap_stacks_every_example_and_writes_the_body_once():
    h, s = BATCHED(X, W)
    np.testing.assert_allclose(h, np.tanh(X @ W).T, rtol=1e-14)
    np.testing.assert_allclose(s, np.sum(np.tanh(X @ W) ** 2, axis=1), rtol=1e-14)
    source = _code(numbax.source(BATCHED, X, W))
    assert source.count("tanh(") == 1
    assert "range(0, batch)" in source and "[0] = " not in source


def test_nested_vmap_writes_each_body_once():
    a, b = np.array([0.5, -1.0, 2.0]), np.array([1.0, -0.25])
    np.testing.assert_allclose(NESTED(a, b), np.tanh(b[:, None] * a[None, :]), rtol=1e-14)
    source = _code(numbax.source(NESTED, a, b))
    assert source.count("tanh(") == 1 and source.count("for ") == 2  # the outer's first example dropped


def test_hessian_by_forward_over_reverse_matches_jax_with_one_sweep():
    u = np.array([0.3, -0.7, 1.1, 0.2])
    want = jax.jacfwd(jax.grad(to_jax(potential)))(u)
    np.testing.assert_allclose(JACOBIAN(u), np.asarray(want), rtol=1e-12, atol=1e-14)
    source = _code(numbax.source(JACOBIAN, u))  # the sweep's loop, without a first column before it
    assert "range(1, batch)" not in source and source.count("np.cos(u[") == 1
    assert "jvp called with" not in source  # the sweep's basis vectors are made in their primals' shapes


def test_the_first_examples_checks_stay_where_code_after_them_stays():
    # the loop reads primal values computed after the first example's check of its tangent's shape
    u, t = np.array([[0.3, -0.7, 1.1], [0.2, 0.5, -0.4]]), np.array([[1.0, 0.0, -2.0], [0.5, 0.5, 0.5]])
    want = [jax.jvp(to_jax(potential), (a,), (b,))[1] for a, b in zip(u, t)]
    np.testing.assert_allclose(PUSHED(u, t), np.asarray(want), rtol=1e-12)
    source = _code(numbax.source(PUSHED, u, t))
    assert source.count("raise ValueError('jvp called with") == 2 and "range(0, batch)" in source


def test_an_empty_batch_is_refused_as_before():
    with pytest.raises(ValueError, match="at least one example"):
        BATCHED(np.zeros((0, 2)), W)


def test_a_row_check_against_an_output_sized_in_the_loop_is_kept():
    """``row_checks`` proves nothing from an output sized on the first iteration: the value that sized it is
    any example's as the loop reads it."""
    src = ("def f(x, n, batch):\n"
           "    for i in range(0, batch):\n"
           "        part = x[i][:n]\n"
           "        if i == 0:\n"
           "            out = rt.stack_buffer(part, batch)\n"
           "        rt.check_row(out, part, 'f.py:2:4')\n"
           "        out[i] = part\n"
           "    return out")
    fdef = row_checks.transform(gast.parse(src).body[0], {"x": ("f", 2), "n": ("i", 0), "batch": ("i", 0)})
    assert "rt.check_row(out, part" in unparse(fdef)


def _folded(src):
    fdef = gast.parse(src).body[0]
    loop = next(stmt for stmt in fdef.body if isinstance(stmt, gast.For))
    anno.setanno(loop, anno.Key.BATCH_LOOP, True)
    return unparse(first_example.transform(fdef, {})[0])


def test_the_first_examples_checks_go_only_where_the_loop_makes_them_again():
    loop = ("    for i in range(1, n):\n"
            "        r = x[i]\n"
            "        rt.check_broadcast(r, b, 'f.py:3:8')\n"
            "        v = r + b\n"
            "        out[i] = v\n"
            "    return out")
    first = ("def f(x, b, c, n):\n"
             "    r0 = x[0]\n"
             "    rt.check_broadcast(r0, b, 'f.py:3:8')\n"
             "    rt.check_broadcast(c, b, 'f.py:4:8')\n"
             "    v0 = r0 + b\n"
             "    out = rt.stack_buffer(v0, n)\n"
             "    out[0] = v0\n")
    folded = _folded(first + loop)
    assert "rt.check_broadcast(r0, b" not in folded  # the loop checks its first example's row itself
    assert "rt.check_broadcast(c, b, 'f.py:4:8')" in folded  # hoisting dropped the loop's copy: it stays


def test_an_effect_the_loop_does_again_goes_with_the_first_example_or_nothing_is_folded():
    loop = ("    for i in range(1, n):\n"
            "        r = x[i]\n"
            "        rt.debug_print('x = {}', (r,), (), ())\n"
            "        out[i] = r\n"
            "    return out")
    peeled = ("    r0 = x[0]\n"
              "    rt.debug_print('x = {}', (r0,), (), ())\n"
              "    out = rt.stack_buffer(r0, n)\n"
              "    out[0] = r0\n")
    folded = _folded("def f(x, n):\n" + peeled + loop)
    assert folded.count("rt.debug_print") == 1 and "range(0, n)" in folded
    printed_before = "def f(x, n):\n    rt.debug_print('x = {}', (x,), (), ())\n" + peeled + loop
    assert "range(1, n)" in _folded(printed_before)  # which print is the first example's is not known


def steps(theta, z0):
    z = z0 * theta
    for _ in range(4):
        z = z + 0.1 * np.tanh(theta * z)
    return z


VALUE_AND_JACOBIAN = numbax.jit(lambda theta, z: (steps(theta, z), numbax.jacfwd(steps)(theta, z)))


def test_a_jacobian_through_a_loop_computes_its_first_column_in_the_sweep_only():
    theta, z = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.25, -0.5])
    value, jac = VALUE_AND_JACOBIAN(theta, z)
    np.testing.assert_allclose(value, steps(theta, z), rtol=1e-14)
    np.testing.assert_allclose(jac, jax.jacfwd(to_jax(steps))(theta, z), rtol=1e-12)
    source = _code(numbax.source(VALUE_AND_JACOBIAN, theta, z))
    assert source.count("tanh(") == 2  # the value's loop and the sweep's: the first column's loop went


def off_by_one(x):
    s = 0.0
    for i in range(len(x) + 1):
        s += x[i]
    return s


def within(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_loop_read_past_the_end_is_refused_for_the_first_example_too(backend):
    """The first example's bounds check went with the loop it guards, which the loop over examples makes again
    with its check: never the check alone (a bare IndexError, or a read out of bounds compiled)."""
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(numbax.vmap(within, backend=backend)(a), np.sum(a * a, axis=1), rtol=1e-14)
    with pytest.raises(NumbaxIndexError, match=r"test_first_example.py:\d+: index 3 is out of bounds for axis 0"):
        numbax.vmap(off_by_one, backend=backend)(a)
    source = _code(numbax.source(numbax.vmap(off_by_one), a))
    assert "range(0, batch)" in source and source.count("rt.check_span(") == 1  # the first example went whole


_GUARDED = ("def f(x, c, m, n):\n"
            "    r0 = x[0]\n"
            "    rt.check_span(r0, 0, m, 1, 0, 0, 'f.py:3:8')\n"
            "    s0 = 0.0\n"
            "    for j in range(m):\n"
            "        s0 += r0[j]\n"
            "{tail}"
            "    out = rt.stack_buffer(s0, n)\n"
            "    out[0] = s0\n"
            "    for i in range(1, n):\n"
            "        r = x[i]\n"
            "        rt.check_span(r, 0, m, 1, 0, 0, 'f.py:3:8')\n"
            "        s = 0.0\n"
            "        for k in range(m):\n"
            "            s += r[k]\n"
            "{inside}"
            "        out[i] = s\n"
            "    return out")


def _folded_with(src, params):
    fdef = gast.parse(src).body[0]
    loop = [stmt for stmt in fdef.body if isinstance(stmt, gast.For)][-1]
    anno.setanno(loop, anno.Key.BATCH_LOOP, True)
    return unparse(first_example.transform(fdef, params)[0])


PARAMS = {"x": ("f", 2), "c": ("f", 1), "m": ("i", 0), "n": ("i", 0)}


def test_a_check_goes_only_with_all_the_first_examples_code_after_it():
    folded = _folded_with(_GUARDED.format(tail="", inside=""), PARAMS)
    assert "range(0, n)" in folded and "r0" not in folded and folded.count("rt.check_span") == 1
    kept = _folded_with(_GUARDED.format(tail="    w = c * r0[0]\n", inside="        s = s * w\n"), PARAMS)
    assert "range(0, n)" in kept and "rt.check_span(r0, 0, m" in kept  # it guards r0[0], which the loop reads


def test_the_first_examples_code_goes_only_where_it_writes_into_nothing_that_outlives_it():
    writes = _GUARDED.format(tail="    for q in range(m):\n        row = x[q]\n        row += 1.0\n", inside="")
    assert "row += 1.0" in _folded_with(writes, PARAMS)  # a row of x: it writes into the caller's array
    fresh = _GUARDED.format(tail="    t = np.zeros(m)\n    for q in range(m):\n        t[q] = 1.0\n", inside="")
    assert "t[q] = 1.0" not in _folded_with(fresh, PARAMS)  # into an array it makes itself
    in_place = _folded_with(_GUARDED.format(tail="    v0 = r0 * 2.0\n    v0 += r0\n", inside=""), PARAMS)
    assert "v0 += r0" in in_place and "rt.check_span(r0" in in_place  # an array's += writes into its memory


def test_a_loop_whose_iteration_may_end_early_is_not_folded():
    """An iteration that leaves before the outputs' store might not size them: the first example stays."""
    src = ("def f(x, n):\n"
           "    r0 = x[0]\n"
           "    out = rt.stack_buffer(r0, n)\n"
           "    out[0] = r0\n"
           "    for i in range(1, n):\n"
           "        r = x[i]\n"
           "        if r[0] > 0.0:\n"
           "            continue\n"
           "        out[i] = r\n"
           "    return out")
    assert "range(1, n)" in _folded(src) and "out[0] = r0" in _folded(src)
    inner = src.replace("        if r[0] > 0.0:\n            continue\n",
                        "        for k in range(3):\n            if r[k] > 0.0:\n                break\n")
    assert "range(0, n)" in _folded(inner)  # a break leaves the inner loop only


def _sine_then_fill(x):
    v = np.sin(x)
    x.fill(0.5)
    return v + x


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_method_that_writes_into_an_argument_keeps_the_first_example_in_its_place(backend):
    """``x.fill(0.5)`` writes into the first example's row of the argument: kept before the loop while the
    loop computed that example again, the loop's ``np.sin(x)`` read the filled row (found by the fuzz tester)."""
    batch = np.array([[-2.0, 1.0], [0.3, 0.7], [1.5, -0.5]])
    want = np.stack([np.sin(row) + 0.5 for row in batch])
    np.testing.assert_allclose(numbax.vmap(_sine_then_fill, backend=backend)(batch.copy()), want, rtol=1e-15)
