"""numbax.vmap: a corpus against stacking over slices and against jax.vmap, JAX's axes rules and errors.

Every corpus case runs on both backends and is compared, leaf by leaf (structure, shape, dtype,
values), with ``stack_over_slices`` (a plain Python loop over examples, written with
``jax.tree_util`` so that it shares no code with numbax) and, where JAX can trace the same
source (``to_jax`` swaps ``np`` for ``jax.numpy``; branches on run-time values cannot be traced),
with ``jax.vmap`` in float64. Each vmapped function is built once per (case, backend), so each
Numba compile is shared between the tests that call it.
"""
from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any, Callable, Tuple

import jax
import jax.tree_util as jtu
import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402  (also turns on jax_enable_x64)

BACKENDS = ("python", "cpu")
RNG = np.random.RandomState(0)
X = RNG.randn(4, 3)
Y = RNG.randn(4, 3)
W = RNG.randn(3, 2)
V = RNG.randn(3)


def _is_none(x):
    return x is None


def stack_over_slices(fn: Callable, args: tuple, in_axes: Any = 0, out_axes: Any = 0) -> Any:
    """``vmap`` by hand: ``fn`` on each example, outputs stacked and moved to ``out_axes``."""
    in_axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    full = [jtu.tree_map(lambda ax, sub: jtu.tree_map(lambda _: ax, sub), ax, a, is_leaf=_is_none)
            for ax, a in zip(in_axes, args)]
    sizes = {np.shape(leaf)[ax] for a, axes in zip(args, full)
             for leaf, ax in zip(jtu.tree_leaves(a), jtu.tree_leaves(axes, is_leaf=_is_none)) if ax is not None}
    (size,) = sizes
    outs = [fn(*[jtu.tree_map(lambda leaf, ax: leaf if ax is None else np.take(leaf, i, axis=ax), a, axes,
                              is_leaf=_is_none) for a, axes in zip(args, full)]) for i in range(size)]
    stacked = jtu.tree_map(lambda *leaves: np.stack([np.asarray(leaf) for leaf in leaves]), *outs)
    first = outs[0]
    return jtu.tree_map(lambda ax, sub, one: jtu.tree_map(
        lambda leaf, single: single if ax is None else np.moveaxis(leaf, 0, ax), sub, one),
        out_axes, stacked, first, is_leaf=_is_none)


def assert_same(got: Any, want: Any, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    """Same pytree structure; leaf by leaf the same shape, dtype kind and values."""
    got_leaves, got_tree = jtu.tree_flatten(got)
    want_leaves, want_tree = jtu.tree_flatten(want)
    assert got_tree == want_tree, (got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype.kind == w.dtype.kind, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------------------------
# The corpus: module-level functions (numbax reads their source).


def elementwise(x):
    return np.sin(x) * 2.0 + x ** 2


def two_inputs(x, y):
    return x * y - np.exp(-y)


def affine(x, w, b):
    return np.tanh(x @ w + b)


def sum_of_squares(x):
    return np.sum(x ** 2)


def spread(x):
    return np.max(x) - np.min(x) + np.mean(x)


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def norm_and_dot(x, y):
    return np.linalg.norm(x) * np.dot(x, y)


def branch_on_value(x):
    if np.sum(x) > 0.0:
        return x * 2.0
    return -x


def clipped(x):
    return np.where(x > 0.0, x, 0.1 * x)


def static_loop(x):
    acc = np.zeros_like(x)
    for k in range(3):
        acc = acc * x + k
    return acc


def runtime_loop(x):
    total = 0.0
    for j in range(x.shape[0]):
        total = total + x[j] * (j + 1)
    return total


def doubling(v):
    steps = 0.0
    while v < 10.0:
        v = v * 2.0 + 1.0
        steps = steps + 1.0
    return steps


def outer_product(x, y):
    return np.outer(x, y)


def scalar_example(t):
    return 3.0 * t * t + 1.0


def dict_in(params, x):
    return np.tanh(x @ params["w"]) * params["scale"]


def tuple_out(x):
    return np.sum(x), x * 2.0


def dict_out(x, y):
    return {"sum": x + y, "prod": (x * y, np.sum(x * y))}


def nested_tuples(pair, x):
    (a, b), c = pair
    return a * x + b * c


def mean_and_unbatched(x, w):
    return x @ w, w.T


def layer_norm(x):
    mu = np.mean(x)
    return (x - mu) / np.sqrt(np.mean((x - mu) ** 2) + 1e-5)


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    fn: Callable
    args: Tuple[Any, ...]
    in_axes: Any = 0
    out_axes: Any = 0
    jax: bool = True  # JAX can trace it (no branch on a run-time value)


CASES = [
    Case("elementwise", elementwise, (X,)),
    Case("elementwise_rows_of_scalars", elementwise, (V,)),
    Case("two_inputs", two_inputs, (X, Y)),
    Case("affine_shared_weights", affine, (X, W, np.ones(2)), in_axes=(0, None, None)),
    Case("sum_of_squares_scalar_out", sum_of_squares, (X,)),
    Case("spread_reductions", spread, (X,)),
    Case("softmax", softmax, (X,)),
    Case("norm_and_dot", norm_and_dot, (X, Y)),
    Case("branch_on_value", branch_on_value, (X * np.array([[1.0], [-1.0], [1.0], [-1.0]]),), jax=False),
    Case("clipped", clipped, (X,)),
    Case("static_loop", static_loop, (X,)),
    Case("runtime_loop", runtime_loop, (X,)),
    Case("while_loop", doubling, (np.array([0.5, 3.0, 12.0, 1.0]),), jax=False),
    Case("outer_product", outer_product, (X, Y)),
    Case("scalar_examples", scalar_example, (V,)),
    Case("dict_in_prefix", dict_in, ({"w": W, "scale": 2.0}, X), in_axes=({"w": None, "scale": None}, 0)),
    Case("tuple_out", tuple_out, (X,)),
    Case("dict_out", dict_out, (X, Y)),
    Case("nested_tuple_in_axes", nested_tuples, (((X, Y), V), X), in_axes=(((0, 0), None), 0)),
    Case("columns_in_axes_1", sum_of_squares, (X,), in_axes=1),
    Case("negative_in_axes", softmax, (X,), in_axes=-1),
    Case("out_axes_1", outer_product, (X, Y), out_axes=1),
    Case("negative_out_axes", elementwise, (X,), out_axes=-1),
    Case("out_axes_prefix_with_none", mean_and_unbatched, (X, W), in_axes=(0, None), out_axes=(0, None)),
    Case("list_in_axes", affine, (X, W, np.ones(2)), in_axes=[0, None, None]),
    Case("layer_norm", layer_norm, (X,)),
]
CASE_IDS = [c.id for c in CASES]

_VMAPPED = {}
_ORACLES = {}


def vmapped(case: Case, backend: str):
    """``numbax.vmap`` of the case, built once per backend (one Numba compile on cpu)."""
    key = (case.id, backend)
    if key not in _VMAPPED:
        _VMAPPED[key] = numbax.vmap(case.fn, case.in_axes, case.out_axes, backend=backend)
    return _VMAPPED[key]


def result(case: Case, backend: str):
    key = ("numbax", case.id, backend)
    if key not in _ORACLES:
        _ORACLES[key] = vmapped(case, backend)(*case.args)
    return _ORACLES[key]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_agrees_with_stacking_over_slices(case, backend):
    assert_same(result(case, backend), stack_over_slices(case.fn, case.args, case.in_axes, case.out_axes))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", [c for c in CASES if c.jax], ids=[c.id for c in CASES if c.jax])
def test_agrees_with_jax_vmap(case, backend):
    in_axes = tuple(case.in_axes) if isinstance(case.in_axes, list) else case.in_axes
    want = jax.vmap(to_jax(case.fn), in_axes=in_axes, out_axes=case.out_axes)(*case.args)
    assert_same(result(case, backend), jtu.tree_map(np.asarray, want), rtol=1e-10)


def test_scalar_outputs_become_1d_arrays_of_their_dtype():
    out = result(CASES[CASE_IDS.index("sum_of_squares_scalar_out")], "cpu")
    assert isinstance(out, np.ndarray) and out.shape == (4,) and out.dtype == np.float64


def test_arguments_are_left_as_they_were():
    x, w = X.copy(), W.copy()
    vmapped(CASES[CASE_IDS.index("affine_shared_weights")], "cpu")(x, w, np.ones(2))
    assert np.array_equal(x, X) and np.array_equal(w, W)


# --------------------------------------------------------------------------------------------
# in_axes, out_axes, keyword arguments, axis_size.


def add(x, y):
    return x + y


def scaled(x, scale=2.0):
    return x * scale


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_arguments_are_mapped_over_axis_0(backend):
    f = numbax.vmap(add, in_axes=None, backend=backend)  # x unmapped, y by keyword: axis 0, as in JAX
    for _ in range(2):  # the second call would take Numba's C dispatch if it could
        assert_same(f(V, y=X), V + X)
    assert_same(numbax.vmap(add, in_axes=(1,), backend=backend)(X.T, y=X), X + X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_defaults_that_are_not_passed_are_not_mapped(backend):
    f = numbax.vmap(scaled, backend=backend)
    assert_same(f(V), 2.0 * V)
    assert_same(f(V, scale=np.arange(3.0)), V * np.arange(3.0))
    with pytest.raises(ValueError, match="rank should be at least 1"):
        f(V, 3.0)  # passed positionally, so mapped along axis 0 (JAX's rule)


@pytest.mark.parametrize("backend", BACKENDS)
def test_axis_size_when_nothing_is_mapped(backend):
    out = numbax.vmap(lambda v: v * 2.0, in_axes=None, axis_size=3, backend=backend)(V)
    assert_same(out, np.tile(2.0 * V, (3, 1)))
    assert_same(numbax.vmap(add, in_axes=(0, None), axis_size=4, backend=backend)(X, V), X + V)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unbatched_output_with_out_axes_0_is_broadcast(backend):
    out = numbax.vmap(lambda x, w: w, in_axes=(0, None), backend=backend)(X, W)
    assert_same(out, np.broadcast_to(W, (4,) + W.shape))


@pytest.mark.parametrize("backend", BACKENDS)
def test_fast_path_calls_check_sizes_in_generated_code(backend):
    f = numbax.vmap(add, backend=backend)
    assert_same(f(X, Y), X + Y)
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be mapped"):
        f(X, Y[:3])


def test_the_cache_keys_on_the_axes_of_the_call():
    f = numbax.vmap(add, in_axes=None, axis_size=4, backend="python")
    assert_same(f(V, y=X), V + X)  # y mapped
    assert_same(f(V, X), np.broadcast_to(V + X, (4, 4, 3)))  # the same types, nothing mapped
    assert [dict(key[5:])["in_axes"] for key in f._cache] == [(None, 0), (None, None)]


# --------------------------------------------------------------------------------------------
# JAX's errors, from Python (plain ValueError/TypeError, as JAX raises them).


def test_inconsistent_sizes_name_each_argument():
    with pytest.raises(ValueError) as info:
        numbax.vmap(add, backend="python")(np.zeros(3), np.zeros(4))
    assert str(info.value) == ("vmap got inconsistent sizes for array axes to be mapped:\n"
                               "  * one axis had size 3: axis 0 of argument x of type float64[3];\n"
                               "  * one axis had size 4: axis 0 of argument y of type float64[4]")


def test_inconsistent_sizes_inside_a_pytree_and_with_axis_size():
    with pytest.raises(ValueError, match=r"argument y\['a'\] of type float64\[2,5\]"):
        numbax.vmap(add, backend="python")(np.zeros(3), {"a": np.zeros((2, 5))})
    with pytest.raises(ValueError, match="the `axis_size` argument was 5"):
        numbax.vmap(add, axis_size=5, backend="python")(np.zeros(3), np.zeros(3))


@pytest.mark.parametrize("in_axes, args, message", [
    ((0, 1), (np.zeros(3), np.zeros(3)), "along axis 1, which implies that its rank should be at least 2, but is "
                                         r"only 1 \(its shape is \(3,\)\)"),
    (-3, (np.zeros((3, 2)), np.zeros((3, 2))), "along axis -3, which implies that its rank should be at least 3"),
    (0, (np.zeros(3), 2.0), r"rank should be at least 1, but is only 0 \(its shape is \(\)\)"),
    ((0,), (np.zeros(3), np.zeros(3)), r"len\(in_axes\)=1, len\(args\)=2"),
    (({"a": 0}, 0), (np.zeros(3), np.zeros(3)), r"vmap in_axes specification must be a tree prefix"),
    (((0, 0), 0), ((np.zeros(3),), np.zeros(3)), r"different lengths of tuple at key path\n    vmap in_axes\[0\]"),
    (None, (np.zeros(3), np.zeros(3)), "at least one non-None value in in_axes or axis_size must be specified"),
])
def test_jax_errors_for_axes_that_do_not_fit_the_call(in_axes, args, message):
    with pytest.raises(ValueError, match=message):
        numbax.vmap(add, in_axes=in_axes, backend="python")(*args)


def test_no_arguments_and_no_axis_size():
    with pytest.raises(ValueError, match="must be passed at least one argument containing an array"):
        numbax.vmap(lambda: 1.0, backend="python")()


@pytest.mark.parametrize("in_axes, out_axes, message", [
    (0.5, 0, "vmap in_axes must be an int, None, or a tuple of entries"),
    ([0.5], 0, r"vmap in_axes must be an int, None, or \(nested\) container with those types as leaves"),
    ("a", 0, "vmap in_axes must be an int, None, or a tuple"),
    (0, (0, "x"), r"vmap out_axes must be an int, None, or \(nested\) container"),
])
def test_axes_of_the_wrong_type_are_jax_type_errors(in_axes, out_axes, message):
    with pytest.raises(TypeError, match=message):
        numbax.vmap(add, in_axes=in_axes, out_axes=out_axes)


def test_out_axes_none_on_a_batched_output():
    with pytest.raises(ValueError, match="at vmap out_axes, got axis spec None but output was batched on axis 0"):
        numbax.vmap(lambda x: x * 2.0, out_axes=None, backend="python")(V)
    with pytest.raises(ValueError, match=r"at vmap out_axes\[1\], got axis spec None"):
        numbax.vmap(lambda x, w: (w, np.sum(x) * w), in_axes=(0, None), out_axes=(None, None),
                    backend="python")(X, W)


def test_out_axes_none_follows_control_dependence():
    def sign_of_sum(x, w):
        if np.sum(x) > 0.0:
            return w
        return -w

    with pytest.raises(ValueError, match="got axis spec None"):
        numbax.vmap(sign_of_sum, in_axes=(0, None), out_axes=None, backend="python")(X, W)


def test_out_axes_that_are_not_a_prefix_of_the_output():
    with pytest.raises(ValueError, match="vmap out_axes specification must be a tree prefix"):
        numbax.vmap(lambda x: x, out_axes=(0, 0), backend="python")(V)


def test_a_batch_of_size_0_is_refused():
    with pytest.raises(ValueError, match="needs at least one example"):
        numbax.vmap(add, backend="python")(np.zeros(0), np.zeros(0))


@pytest.mark.xfail(strict=True, reason="the first example's outputs give the output shapes, so an empty batch "
                                       "has none to give (JAX knows shapes without running the function)")
def test_a_batch_of_size_0_gives_empty_outputs_as_in_jax():
    out = numbax.vmap(lambda x: x @ W, backend="python")(np.zeros((0, 3)))
    assert out.shape == (0, 2)


def test_mapping_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="is not an array or a number"):
        numbax.vmap(lambda s: s, backend="python")("ab")


# --------------------------------------------------------------------------------------------
# Errors inside compiled code: JAX's ValueError, at the user's line.


def maps_with_wrong_rank(x):
    return numbax.vmap(add, in_axes=(0, 1))(x, x)


def maps_batched_output_as_unbatched(x):
    return numbax.vmap(lambda v: v * 2.0, out_axes=None)(x)


def maps_inconsistent_sizes(x, y):
    return numbax.vmap(add)(x, y)


@pytest.mark.parametrize("fn, message", [
    (maps_with_wrong_rank, "rank should be at least 2"),
    (maps_batched_output_as_unbatched, "got axis spec None but output was batched on axis 0"),
])
def test_errors_inside_compiled_code_name_the_users_line(fn, message):
    with pytest.raises(numbax.NumbaxBatchingError, match=message) as info:
        numbax.jit(fn, backend="python")(V)
    assert isinstance(info.value, ValueError)
    assert f"test_vmap.py:{fn.__code__.co_firstlineno + 1}" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_inconsistent_sizes_inside_compiled_code_raise_where_it_runs(backend):
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be mapped"):
        numbax.jit(maps_inconsistent_sizes, backend=backend)(np.zeros(3), np.zeros(4))
