"""Calls of user functions: helpers, keywords and defaults, nested defs, lambdas, static arguments."""
import numpy as np

from . import Case, normal, uniform
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
]
