"""Calls of user functions: helpers, keywords and defaults, nested defs, lambdas, static arguments."""
import functools

import numpy as np

import numbax

from . import Case, basics, normal, uniform
from .basics import softmax

LEAK = 0.1
SHAPE = (2, 3)


def _act(x):
    return np.tanh(x)


def _affine(x, w, b):
    return x @ w + b


def layer(x, w, b):
    return _act(_affine(x, w, b))


def _scale(x, factor=2.0, shift=0.0):
    return x * factor + shift


def keyword_defaults(x):
    return _scale(x) + _scale(x, shift=1.0) + _scale(x, factor=0.5, shift=-1.0) + _scale(shift=3.0, x=x)


def _safe_div(a, b):
    if abs(b) < 1e-12:
        return 0.0
    return a / b


def helper_early_return(x, y):
    return _safe_div(x.sum(), y.sum()) + _safe_div(1.0, 0.0)


def _clip_norm(v, max_norm):
    n = np.linalg.norm(v)
    if n <= max_norm:
        return v
    return v * (max_norm / n)


def helper_early_return_array(v):
    return _clip_norm(v, 1.0) + _clip_norm(v * 0.01, 1.0)


def nested_def(x):
    def sq(v):
        return v * v

    return sq(x) + sq(x + 1.0)


def nested_def_closure(x):
    scale = x.max()

    def normalize(v):
        return v / scale

    return normalize(x) - normalize(x * 0.5)


def lambda_activation(x):
    act = lambda v: np.maximum(v, LEAK * v)
    return act(x) + act(-x)


def power(x, n):
    out = np.ones_like(x)
    for _ in range(n):
        out = out * x
    return out


def dense(x, w, activation="tanh"):
    y = x @ w
    if activation == "tanh":
        return np.tanh(y)
    elif activation == "relu":
        return np.maximum(y, 0.0)
    else:
        return y


def zeros_of_static_shape(x, shape):
    out = np.zeros(shape)
    out += x.sum()
    return out


def _three(x):
    return _two(x) + 1.0


def _two(x):
    return _one(x) * 2.0


def _one(x):
    return np.exp(-x)


def helper_chain(x):
    return _three(x)


def _stats(x):
    return x.mean(), x.std()


def helper_returning_tuple(x):
    m, s = _stats(x)
    return (x - m) / s


def _forward(params, x):
    for w, b in params:
        x = np.tanh(x @ w + b)
    return x


def helper_taking_pytree(params, x):
    return _forward(params, x).sum()


def _square(v):
    return v * v


def helper_scalar_and_array(x, s):
    return _square(x) + _square(s)


def static_callable(x, act):
    return act(x) * 2.0


def dynamic_scalars(x, alpha, n):
    out = x.copy()
    for _ in range(n):
        out = out + alpha * np.sin(out)
    return out


def static_flag(x, normalize=True):
    if normalize:
        return x / np.linalg.norm(x)
    return x


def imported_helper(x):
    return softmax(x) * 2.0


def helper_with_array_kwargs(x, w, b):
    return _affine(b=b, w=w, x=x)


def helper_mutates(x):
    _fill_first(x, 5.0)
    return x.sum()


def _fill_first(a, value):
    a[0] = value


def _find_first(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return i
    return -1


def helper_return_in_loop(x):
    return _find_first(x, 0.5) + 10 * _find_first(x, 100.0)


def _sq_norm(v):
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i] * v[i]
    return s


def helper_in_loop(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += _sq_norm(x[i])
    return total


def _shadow(x):
    y = x * 2.0
    i = 7
    return y + i


def helper_name_collision(x):
    y = x + 1.0
    i = 3
    z = _shadow(y)
    return z + y + i


def helper_default_constant(x, eps=basics.EPS):
    return x / (np.abs(x).sum() + eps)


def _apply_twice(f, x):
    return f(f(x))


def higher_order_helper(x):
    return _apply_twice(np.tanh, x) + _apply_twice(lambda v: v * 0.5, x) + _apply_twice(_act, x)


def nested_def_calls_helper(x):
    def block(v, w):
        return _act(v @ w) + v

    return block(block(x, np.eye(x.shape[1])), np.eye(x.shape[1]) * 0.5)


def closure_assigned_after_def(x):
    def g(v):
        return v * scale

    scale = 2.0
    return g(x)


def lambda_closure_local(x):
    mu = x.mean()
    center = lambda v: v - mu
    return center(x) * center(x)


def module_attribute_helper(x):
    return basics.softmax(x) + basics.leaky_relu(x)


_jitted_square = numbax.jit(_square)


def calls_jitted_helper(x):
    return _jitted_square(x) + 1.0


def keyword_only(x, *, scale=1.0, shift=0.0):
    return x * scale + shift


def negative_static_argnum(x, n):
    return x ** n


def static_range_unrolled(x, n):
    acc = x
    for k in range(n):
        acc = acc + x / (k + 1)
    return acc


def default_dynamic_tolerance(a, tol=1e-10):
    x = a
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


def _norm_or_zero(v):
    n = np.sqrt(np.sum(v * v))
    if n == 0.0:
        return np.zeros_like(v)
    return v / n


def helper_early_return_twice(x, y):
    return _norm_or_zero(x) + _norm_or_zero(y * 0.0) + _norm_or_zero(y)


def _residual(x, a):
    return np.abs(x * x - a).max()


def helper_in_while_condition(a):
    x = np.ones_like(a)
    while _residual(x, a) > 1e-10:
        x = 0.5 * (x + a / x)
    return x


def _pick(x, c):
    if c:
        return x * 2.0
    return x - 1.0


def helper_in_conditional_expression(x, y):
    return _stats(x)[0] if x.sum() > y.sum() else _pick(y, x.max() > 0).sum()


def _with_inner(x):
    def inner(v):
        return v + 1.0

    return inner(inner(x))


def helper_with_nested_def(x):
    return _with_inner(x) * 2.0


def lambda_default(x):
    f = lambda v, a=3.0: v * a
    return f(x) + f(x, 0.5)


_triple = functools.partial(_scale, factor=3.0)


def partial_helper(x):
    return _triple(x) + _triple(x, shift=1.0)


def _rebind_param(x):
    x = x * 2.0
    return x


def helper_rebinds_param(x):
    y = _rebind_param(x)
    return x + y


def _first_pair_over(a, t):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > t:
                return i, j
    return -1, -1


def helper_return_in_nested_loops(a):
    i, j = _first_pair_over(a, 0.5)
    k, m = _first_pair_over(a, 100.0)
    return i * 10 + j, k + m


def _halvings(x, tol):
    n = 0
    while True:
        x = x / 2.0
        n += 1
        if x < tol:
            return n


def helper_return_in_while(x):
    return _halvings(x, 1.0) + _halvings(x * 8.0, 1.0)


def helper_return_in_loop_called_in_loop(a):
    total = 0
    for r in range(a.shape[0]):
        total += _find_first(a[r], 0.5)
    return total


def partial_keywords_local(x, w):
    def affine(v, m, bias=0.0, *, scale=1.0):
        return (v @ m + bias) * scale

    g = functools.partial(affine, m=w, scale=2.0)
    h = functools.partial(affine, x, bias=1.0)
    w = w * 0.0  # the partials keep the value they bound
    return g(x) + h(w + 1.0)


_column_sums = functools.partial(np.sum, axis=0)
_WEIGHTS = np.array([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]])
_project = functools.partial(_scale, factor=_WEIGHTS[0, 1])


def partial_of_numpy_and_constants(x):
    return _column_sums(x) + _project(x, shift=_WEIGHTS[1, 0])


CASES = [
    Case(layer, lambda: (normal(300, 4, 3), normal(301, 3, 2), normal(302, 2))),
    Case(keyword_defaults, lambda: (normal(303, 4),)),
    Case(helper_early_return, lambda: (normal(304, 3), uniform(305, 3))),
    Case(helper_early_return_array, lambda: (normal(306, 4) * 3.0,)),
    Case(nested_def, lambda: (normal(307, 5),)),
    Case(nested_def_closure, lambda: (uniform(308, 4),)),
    Case(lambda_activation, lambda: (normal(309, 5),)),
    Case(power, lambda: (normal(310, 4), 3), static_argnums=(1,)),
    Case(dense, lambda: (normal(311, 3, 4), normal(312, 4, 2)), static_argnames=("activation",),
         kwargs={"activation": "relu"}, id="dense_relu"),
    Case(dense, lambda: (normal(313, 3, 4), normal(314, 4, 2)), static_argnames=("activation",), id="dense_tanh"),
    Case(dense, lambda: (normal(315, 3, 4), normal(316, 4, 2), "linear"), static_argnums=(2,), id="dense_linear"),
    Case(zeros_of_static_shape, lambda: (normal(317, 3), SHAPE), static_argnums=(1,)),
    Case(helper_chain, lambda: (normal(318, 3),)),
    Case(helper_returning_tuple, lambda: (normal(319, 6),)),
    Case(helper_taking_pytree, lambda: ([(normal(320, 3, 3), normal(321, 3)), (normal(322, 3, 2), normal(323, 2))],
                                        normal(324, 2, 3))),
    Case(helper_scalar_and_array, lambda: (normal(325, 3), 1.5)),
    Case(static_callable, lambda: (normal(326, 4), np.tanh), static_argnums=(1,)),
    Case(dynamic_scalars, lambda: (normal(327, 4), 0.3, 5)),
    Case(static_flag, lambda: (normal(328, 4),), static_argnames=("normalize",), id="static_flag_default"),
    Case(static_flag, lambda: (normal(329, 4),), static_argnames=("normalize",), kwargs={"normalize": False},
         id="static_flag_false"),
    Case(imported_helper, lambda: (normal(330, 5),)),
    Case(helper_with_array_kwargs, lambda: (normal(331, 2, 3), normal(332, 3, 2), normal(333, 2))),
    Case(helper_mutates, lambda: (normal(334, 4),)),
    Case(helper_return_in_loop, lambda: (np.array([0.1, 0.2, 0.9, 0.3]),)),
    Case(helper_in_loop, lambda: (normal(335, 4, 3),)),
    Case(helper_name_collision, lambda: (normal(336, 3),)),
    Case(helper_default_constant, lambda: (normal(337, 4),)),
    Case(higher_order_helper, lambda: (normal(338, 4),)),
    Case(nested_def_calls_helper, lambda: (normal(339, 2, 3),)),
    Case(closure_assigned_after_def, lambda: (normal(340, 3),)),
    Case(lambda_closure_local, lambda: (normal(341, 4),)),
    Case(module_attribute_helper, lambda: (normal(342, 4),)),
    Case(calls_jitted_helper, lambda: (normal(343, 4),)),
    Case(keyword_only, lambda: (normal(344, 3),), kwargs={"scale": 3.0, "shift": -1.0}),
    Case(negative_static_argnum, lambda: (normal(345, 3), 3), static_argnums=(-1,)),
    Case(static_range_unrolled, lambda: (normal(346, 3), 4), static_argnums=(1,)),
    Case(default_dynamic_tolerance, lambda: (2.0,)),
    Case(helper_early_return_twice, lambda: (normal(347, 3), normal(348, 3))),
    Case(helper_in_while_condition, lambda: (uniform(349, 4),)),
    Case(helper_in_conditional_expression, lambda: (normal(350, 3), normal(351, 3))),
    Case(helper_with_nested_def, lambda: (normal(352, 3),)),
    Case(lambda_default, lambda: (normal(353, 3),)),
    Case(partial_helper, lambda: (normal(354, 3),)),
    Case(helper_rebinds_param, lambda: (normal(355, 3),)),
    Case(helper_return_in_nested_loops, lambda: (uniform(356, 3, 4, low=0.0, high=1.0),)),
    Case(helper_return_in_while, lambda: (uniform(357, low=3.0, high=9.0).item(),)),
    Case(helper_return_in_loop_called_in_loop, lambda: (uniform(358, 3, 4, low=0.0, high=0.8),)),
    Case(partial_keywords_local, lambda: (normal(359, 2, 3), normal(360, 3, 3))),
    Case(partial_of_numpy_and_constants, lambda: (normal(361, 4, 3),)),
]
