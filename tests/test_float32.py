"""float32 programs: the behaviour and reverse-mode corpora in float32 through jit, grad, jacfwd and vmap.

The cases are the corpora's own (``tests/corpus``, ``tests/grad_corpus``) with every float64 array argument
cast to float32 (``as_float32``), so this audit grows with them. Each check compares, leaf by leaf:

- the dtype with NumPy's for the same program run eagerly on the same float32 arguments (NumPy 2 / NEP 50:
  a Python float keeps float32, a float64 array promotes); ``jacfwd``'s is its output's, as JAX's is;
  ``grad``'s is the differentiated argument's, as JAX's is (a float32 parameter gets a float32 gradient);
- the values with the float64 program's (``jit``: NumPy's; derivatives: ``numbax.grad`` in float64 on the
  python backend, which ``test_grad_corpus`` checks against JAX) to float32's tolerance.

Every selected case runs on the python backend (no compile); about ten of each test's, evenly spread, on cpu,
where Numba types the generated code (its compiles are most of this module's time). Scalar results are 0-d
arrays of their dtype on both backends, compared exactly.
Mixed arguments (one float32 array among float64 ones) follow the same checks. Programs that a float32
argument turns into one whose loop carries change dtype are refused at the user's line (tested here).
An MLP trained in float32 with ``stax`` and ``optimizers`` matches JAX's default (float32) mode.
"""
import copy
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numbax
from numbax import errors, tree_util
from numbax.example_libraries import optimizers, stax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402
import grad_corpus  # noqa: E402
from test_jacobian import UNTYPED_OUTPUTS  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5  # float32's tolerance, ATOL relative to the largest magnitude of the leaf

# case id -> why its float32 version is not compared with the float64 one
NOT_IN_FLOAT32 = {
    "calls.helper_in_while_condition": "iterates to a residual of 1e-10, which float32 never reaches",
    "control_flow.while_and_condition": "iterates to a step of 1e-10, which float32 reaches only at an exact fixed "
                                        "point of cos (NumPy's float32 cos has one here, Numba's cycles by an ulp)",
    "control_flow.back_substitution": "refused: a float32 carry meets a float64 array (test_loop_carry_refused)",
    "loops.inner_gradient_descent": "refused: a float32 carry meets a float64 array (test_loop_carry_refused)",
}


def as_float32(tree, first_only=False):
    """``tree`` with its float64 arrays (the first one only, with ``first_only``) cast to float32."""
    leaves, treedef = tree_util.tree_flatten(tree)
    done = False
    out = []
    for leaf in leaves:
        if isinstance(leaf, np.ndarray) and leaf.dtype == np.float64 and not (first_only and done):
            leaf, done = leaf.astype(np.float32), True
        out.append(leaf)
    return tree_util.tree_unflatten(treedef, out)


def has_float32(tree):
    return any(np.asarray(leaf).dtype == np.float32 for leaf in tree_util.tree_leaves(tree))


def assert_dtypes(want, got):
    """Leaf by leaf ``got`` has ``want``'s dtype."""
    assert tree_util.tree_structure(got) == tree_util.tree_structure(want)
    for e, g in zip(tree_util.tree_leaves(want), tree_util.tree_leaves(got)):
        assert np.asarray(g).dtype == np.asarray(e).dtype, f"dtype {np.asarray(g).dtype}, NumPy gives " \
                                                           f"{np.asarray(e).dtype}"


def assert_close(want, got, rtol=RTOL, eager=None):
    """float32 values ``got`` agree with the float64 ones ``want``, to float32's tolerance; integers and booleans
    with the ``eager`` float32 run's (a count of iterations to a tolerance differs between the two)."""
    eager = tree_util.tree_leaves(want if eager is None else eager)
    for e, g, exact in zip(tree_util.tree_leaves(want), tree_util.tree_leaves(got), eager):
        e = np.asarray(e)
        assert np.shape(g) == e.shape
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(g, exact)
            continue
        scale = max(1.0, float(np.max(np.abs(e)))) if e.size and e.dtype.kind in "fc" else 1.0
        np.testing.assert_allclose(np.asarray(g, dtype=e.dtype), e, rtol=rtol, atol=ATOL * scale)


def _selected(cases):
    return [c for c in cases if not c.xfail and c.id not in NOT_IN_FLOAT32 and has_float32(as_float32(
        c.args_factory()))]


JIT_CASES = _selected(corpus.all_cases())
GRAD_CASES = _selected(grad_corpus.all_cases())


# a case that found a float32 bug on cpu (a weak conditional expression), run there whatever the spread picks
ON_CPU = {"basics.conditional_expression_neg"}


def _params(cases, on_cpu):
    """Every case on the python backend, ``on_cpu`` of them, evenly spread, and those of ``ON_CPU``, on cpu."""
    stride = max(1, len(cases) // on_cpu)
    for i, case in enumerate(cases):
        yield pytest.param(case, "python", id=f"{case.id}-python")
        if i % stride == 0 or case.id in ON_CPU:
            yield pytest.param(case, "cpu", id=f"{case.id}-cpu")


def _call(fn, case, args):
    return fn(*copy.deepcopy(args), **copy.deepcopy(case.kwargs or {}))


@pytest.mark.parametrize("case, backend", list(_params(JIT_CASES, 10)))
def test_jit_in_float32(case, backend):
    args = as_float32(case.args_factory())
    want = _call(case.fn, case, args)
    got = _call(numbax.jit(case.fn, static_argnums=case.static_argnums, static_argnames=case.static_argnames,
                           backend=backend), case, args)
    assert_dtypes(want, got)
    assert_close(_call(case.fn, case, case.args_factory()), got, eager=want)


def _grad_kwargs(case, backend):
    kwargs = {"argnums": case.argnums, "has_aux": case.has_aux, "backend": backend}
    if case.static_argnums:
        kwargs["static_argnums"] = case.static_argnums
    return kwargs


def _differentiated(case, args):
    if isinstance(case.argnums, int):
        return args[case.argnums]
    return tuple(args[n] for n in case.argnums)


def _without_aux(case, out):
    return out[0] if case.has_aux else out


def _reference_grad(case):
    return _without_aux(case, numbax.grad(case.fn, **_grad_kwargs(case, "python"))(*case.args_factory()))


def _grad_check(case, backend, args):
    got = _without_aux(case, numbax.grad(case.fn, **_grad_kwargs(case, backend))(*args))
    assert_dtypes(_differentiated(case, args), got)
    assert_close(_reference_grad(case), got, rtol=1e-3)


@pytest.mark.parametrize("case, backend", list(_params(GRAD_CASES, 10)))
def test_grad_in_float32_has_the_arguments_dtype(case, backend):
    _grad_check(case, backend, as_float32(case.args_factory()))


# case id -> the loop whose carry a float32 first argument turns float64 on some paths only (refused, tested below)
MIXED_REFUSED = {"while_loops.damped_gradient_descent": "while", "pytrees.namedtuple_dynamics": "for"}
MIXED_CASES = [c for c in GRAD_CASES if c.id not in MIXED_REFUSED and sum(
    isinstance(leaf, np.ndarray) and leaf.dtype == np.float64 for leaf in tree_util.tree_leaves(c.args_factory())) >= 2]


@pytest.mark.parametrize("case, backend", list(_params(MIXED_CASES, 5)))
def test_jit_and_grad_of_float32_and_float64_arguments(case, backend):
    args = as_float32(case.args_factory(), first_only=True)
    assert_dtypes(_without_aux(case, case.fn(*as_float32(case.args_factory(), first_only=True))),
                  _without_aux(case, numbax.jit(case.fn, static_argnums=case.static_argnums, backend=backend)(
                      *args)))
    _grad_check(case, backend, args)


# jacfwd takes no static arguments, and refuses the programs whose outputs it cannot tell in float64 too
JACFWD_CASES = [c for c in GRAD_CASES if not c.static_argnums and c.id not in UNTYPED_OUTPUTS]


@pytest.mark.parametrize("case, backend", list(_params(JACFWD_CASES[::2], 6)))
def test_jacfwd_in_float32_has_the_outputs_dtype(case, backend):
    args = as_float32(case.args_factory())
    out = _without_aux(case, case.fn(*args))
    kwargs = {"argnums": case.argnums, "has_aux": case.has_aux, "backend": backend}
    got = _without_aux(case, numbax.jacfwd(case.fn, **kwargs)(*args))
    want_dtype = np.result_type(out)
    for g in tree_util.tree_leaves(got):
        assert np.asarray(g).dtype == want_dtype, f"dtype {np.asarray(g).dtype}, the output's is {want_dtype}"
    assert_close(_reference_grad(case), got, rtol=1e-3)


VMAP_CASES = [c for c in GRAD_CASES if c.argnums == 0 and not c.static_argnums and not c.has_aux
              and isinstance(c.args_factory()[0], np.ndarray)][::6]


@pytest.mark.parametrize("case, backend", list(_params(VMAP_CASES, 3)))
def test_vmap_and_vmap_of_grad_in_float32(case, backend):
    args = case.args_factory()
    batch = np.stack([args[0], np.flip(args[0]) * 0.5])
    rest = as_float32(args[1:])

    def per_example(x):
        return case.fn(x, *rest)

    values = numbax.vmap(per_example, backend=backend)(batch.astype(np.float32))
    eager = [per_example(x) for x in batch.astype(np.float32)]
    assert values.dtype == np.result_type(*eager)  # a batch of scalars keeps their dtype, on cpu too
    assert_close(np.stack([case.fn(x, *args[1:]) for x in batch]), values)
    got = numbax.vmap(numbax.grad(per_example, backend=backend), backend=backend)(batch.astype(np.float32))
    assert got.dtype == np.float32
    want = np.stack([numbax.grad(case.fn, backend="python")(x, *args[1:]) for x in batch])
    assert_close(want, got, rtol=1e-3)


# -- int and float32 together (NEP 50: int64 with float32 gives float64; a Python int or float keeps float32) --

def int_weights(x, k):
    return np.sum(x * k) + np.dot(k, x) + np.sum(x * 2 + 0.5)


def int_arange(x):
    return np.sum(x * np.arange(x.shape[0])) + np.sum(x / 3)


def extrema_of_integer_literals(x):
    x += np.maximum(x, 3)
    return np.minimum(x, 2) + np.fmod(x, 3)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_numbaxs_own_loops_keep_float32_next_to_an_integer_literal(backend):
    """``np.maximum(x, 3)`` of a float32 ``x`` is float32 (NumPy 2's weak integer); numbax's vectorized
    ``minimum``, ``maximum`` and ``fmod`` widened it to float64, which ``jvp``'s functional ``x += ...`` kept
    (found by tests/fuzz on the cpu backend)."""
    x = np.linspace(-4, 4, 6, dtype=np.float32)
    want = extrema_of_integer_literals(x.copy())
    got = numbax.jit(extrema_of_integer_literals, backend=backend)(x.copy())
    out, tangent = numbax.jvp(extrema_of_integer_literals, (x.copy(),), (np.ones(6, np.float32),), backend=backend)
    assert got.dtype == out.dtype == tangent.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn, args", [(int_weights, (np.linspace(-1, 1, 4, dtype=np.float32), np.arange(4))),
                                      (int_arange, (np.linspace(-1, 1, 5, dtype=np.float32),))],
                         ids=["int_weights", "int_arange"])
def test_int_and_float32(fn, args, backend):
    want = fn(*args)
    got = numbax.jit(fn, backend=backend)(*args)
    assert_dtypes(want, got)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    gradient = numbax.grad(fn, backend=backend)(*args)
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, numbax.grad(fn, backend="python")(args[0].astype(np.float64), *args[1:]),
                               rtol=1e-6)


def solve(a, b):
    return np.linalg.solve(a, b)


def log_abs_det(a):
    return np.log(np.abs(np.linalg.det(a)))


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_solve_and_det_of_float32_and_float64(backend):
    """Numba's ``np.linalg.solve`` takes one dtype: a float32 matrix with a float64 right-hand side, and the
    forward rule of ``det`` (a float32 matrix with its tangent), promote both as NumPy does."""
    a = np.eye(3) + 0.2 * np.cos(np.arange(9.0)).reshape(3, 3)
    b = np.linspace(-1.0, 1.0, 3)
    got = numbax.jit(solve, backend=backend)(a.astype(np.float32), b)
    assert got.dtype == np.linalg.solve(a.astype(np.float32), b).dtype == np.float64
    np.testing.assert_allclose(got, np.linalg.solve(a.astype(np.float32), b), rtol=1e-12)
    jacobian = numbax.jacfwd(log_abs_det, backend=backend)(a.astype(np.float32))
    assert jacobian.dtype == np.float32
    np.testing.assert_allclose(jacobian, np.linalg.inv(a).T, rtol=1e-5)


# -- refusals: a loop carry whose dtype depends on the trip count ------------------------------------------------

@pytest.mark.parametrize("case_id, transform, loop, first_only", [
    ("control_flow.back_substitution", "jit", "for", False), ("loops.inner_gradient_descent", "grad", "for", False),
    *[(case_id, "grad", loop, True) for case_id, loop in MIXED_REFUSED.items()]])
def test_loop_carry_refused(case_id, transform, loop, first_only):
    case = {c.id: c for c in corpus.all_cases() + grad_corpus.all_cases()}[case_id]
    args = as_float32(case.args_factory(), first_only=first_only)
    fn = getattr(numbax, transform)(case.fn, static_argnums=case.static_argnums, backend="python")
    with pytest.raises(errors.NumbaxDtypeError, match=rf"float32 or float64 after this `{loop}` loop(.|\n)*cast `"):
        fn(*args)


# -- an MLP trained in float32, against JAX's default (float32) mode ----------------------------------------------

_JAX_TRAINING = textwrap.dedent("""
    import json, sys
    import numpy as np
    import jax, jax.numpy as jnp
    from jax.example_libraries import optimizers, stax
    data = np.load(sys.argv[1])
    params = [(data["w0"], data["b0"]), (), (data["w1"], data["b1"]), ()]
    _, predict = stax.serial(stax.Dense(5), stax.Tanh, stax.Dense(3), stax.LogSoftmax)
    init, update, get_params = optimizers.adam(0.05)
    def loss(params, x, t):
        return -jnp.mean(jnp.sum(predict(params, x) * t, axis=1))
    @jax.jit
    def step(i, state, x, t):
        return update(i, jax.grad(loss)(get_params(state), x, t), state)
    state = init(params)
    for i in range(5):
        state = step(i, state, data["x"], data["t"])
    leaves = jax.tree.leaves(get_params(state))
    print(json.dumps({"dtypes": [str(leaf.dtype) for leaf in leaves],
                      "values": [np.asarray(leaf).tolist() for leaf in leaves]}))
""")


def test_mlp_training_step_in_float32_matches_jax(tmp_path):
    rng = np.random.default_rng(0)
    data = {"w0": rng.normal(size=(4, 5)) * 0.5, "b0": rng.normal(size=5) * 0.1, "w1": rng.normal(size=(5, 3)),
            "b1": rng.normal(size=3) * 0.1, "x": rng.normal(size=(6, 4)), "t": np.eye(3)[[0, 2, 1, 1, 0, 2]]}
    data = {k: v.astype(np.float32) for k, v in data.items()}
    np.savez(tmp_path / "data.npz", **data)
    env = dict(os.environ, JAX_ENABLE_X64="0", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", _JAX_TRAINING, str(tmp_path / "data.npz")], env=env,
                          capture_output=True, text=True, check=True)
    theirs = json.loads(done.stdout)
    assert set(theirs["dtypes"]) == {"float32"}

    _, predict = stax.serial(stax.Dense(5), stax.Tanh, stax.Dense(3), stax.LogSoftmax)
    init, update, get_params = optimizers.adam(0.05)

    def loss(params, x, t):
        return -np.mean(np.sum(predict(params, x) * t, axis=1))

    @numbax.jit
    def step(i, state, x, t):
        return update(i, numbax.grad(loss)(get_params(state), x, t), state)

    state = init([(data["w0"], data["b0"]), (), (data["w1"], data["b1"]), ()])
    for i in range(5):
        state = step(i, state, data["x"], data["t"])
        assert {leaf.dtype for leaf in tree_util.tree_leaves(get_params(state))} == {np.dtype(np.float32)}
    for ours, values in zip(tree_util.tree_leaves(get_params(state)), theirs["values"]):
        np.testing.assert_allclose(ours, np.asarray(values, dtype=np.float32), rtol=1e-5, atol=1e-5)
