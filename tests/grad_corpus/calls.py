"""Calls of user functions: helpers, nested defs, lambdas, closures over constants and over other
user functions, higher-order helpers, ``has_aux``, and static arguments."""
import numpy as np

from . import Case, normal

W4 = np.array([1.0, -0.5, 2.0, 0.3])


def _act(x):
    return np.tanh(x) * 0.5 + 0.5 * x


def _affine(x, w, b):
    return x @ w + b


def _stats(x):
    return x.mean(), x.var()


def _clip_norm(v, max_norm):
    n = np.sqrt(np.sum(v * v))
    if n > max_norm:
        return v * (max_norm / n)
    return v


def _apply_twice(f, x):
    return f(f(x))


def _softplus(x):
    return np.log1p(np.exp(x))


def _sq(v):
    return v * v


def helper_call(x):
    return np.sum(_act(x) * W4)


def helper_with_several_arguments(x, w, b):
    return np.sum(_act(_affine(x, w, b)) ** 2)


def helper_returning_tuple(x):
    mu, var = _stats(x)
    return mu * mu + var


def helper_with_early_return(v):
    return np.sum(_clip_norm(v, 1.0) * W4)


def nested_def(x):
    def inner(v):
        return np.sin(v) * v
    return np.sum(inner(x) + inner(2.0 * x))


def nested_def_closing_over_argument(x, s):
    def scaled(v):
        return v * s + np.cos(v * s)
    return np.sum(scaled(x))


def lambda_helper(x):
    f = lambda v: v * np.exp(-v * v)
    return np.sum(f(x) * W4)


def higher_order_helper(x):
    return np.sum(_apply_twice(_softplus, x))


def helper_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(_sq(x * (i + 1)))
    return s


def chain_of_helpers(x):
    return np.sum(_sq(_act(_softplus(x))))


def keyword_arguments(x):
    return np.sum(_scale(x, shift=0.5) + _scale(x, factor=3.0))


def _scale(x, factor=2.0, shift=0.0):
    return x * factor + shift


def make_scaled_loss(scale, offset):
    def loss(x):
        return np.sum(scale * x ** 2) + offset
    return loss


def make_weighted_loss(weights):
    def loss(x):
        return np.sum(weights * np.sin(x))
    return loss


def make_composed(f, g):
    def composed(x):
        return np.sum(f(g(x)))
    return composed


def make_model(activation):
    def model(params, x):
        w, b = params
        return np.sum(activation(x @ w + b) ** 2)
    return model


scaled_loss = make_scaled_loss(2.5, 1.0)
weighted_loss = make_weighted_loss(np.array([0.3, -1.2, 0.7, 2.0]))
composed = make_composed(_softplus, _act)
model_softplus = make_model(_softplus)


def loss_with_aux(w, x):
    pred = x @ w
    loss = np.mean(pred ** 2)
    return loss, pred


def loss_with_dict_aux(w, x):
    pred = np.tanh(x @ w)
    return np.sum(pred), {"pred": pred, "norm": np.sum(w * w)}


def power_static(x, n):
    y = x
    for _ in range(n - 1):
        y = y * x
    return np.sum(y)


def dense_static_activation(x, w, activation):
    h = x @ w
    if activation == "tanh":
        h = np.tanh(h)
    elif activation == "relu":
        h = np.maximum(h, 0.0)
    return np.sum(h ** 2)


def zeros_of_static_shape(x, shape):
    z = np.zeros(shape)
    return np.sum((z + x[0]) * x[1])


def static_flag(x, normalize):
    if normalize:
        x = x / np.sqrt(np.sum(x * x))
    return np.sum(x * W4)


def static_callable(x, fn):
    return np.sum(fn(x) * W4)


CASES = [
    Case(helper_call, lambda: (normal(2000, 4),)),
    Case(helper_with_several_arguments, lambda: (normal(2001, 3, 4), normal(2002, 4, 2), normal(2003, 2)),
         argnums=(0, 1, 2)),
    Case(helper_returning_tuple, lambda: (normal(2004, 5),)),
    Case(helper_with_early_return, lambda: (normal(2005, 4),), id="helper_with_early_return_clipped"),
    Case(helper_with_early_return, lambda: (0.1 * normal(2005, 4),), id="helper_with_early_return_kept"),
    Case(nested_def, lambda: (normal(2006, 4),)),
    Case(nested_def_closing_over_argument, lambda: (normal(2007, 4), 0.6), argnums=(0, 1)),
    Case(lambda_helper, lambda: (normal(2008, 4),)),
    Case(higher_order_helper, lambda: (normal(2009, 4),)),
    Case(helper_in_loop, lambda: (normal(2010, 3), 4)),
    Case(chain_of_helpers, lambda: (normal(2011, 4),)),
    Case(keyword_arguments, lambda: (normal(2012, 4),)),
    Case(scaled_loss, lambda: (normal(2013, 4),), id="closure_over_constants"),
    Case(weighted_loss, lambda: (normal(2014, 4),), id="closure_over_array"),
    Case(composed, lambda: (normal(2015, 4),), id="closure_over_user_functions"),
    Case(model_softplus, lambda: ((normal(2016, 3, 2), normal(2017, 2)), normal(2018, 4, 3)), argnums=(0, 1),
         id="closure_model_pytree"),
    Case(loss_with_aux, lambda: (normal(2019, 3), normal(2020, 4, 3)), has_aux=True),
    Case(loss_with_dict_aux, lambda: (normal(2021, 3), normal(2022, 4, 3)), argnums=(0, 1), has_aux=True),
    Case(power_static, lambda: (normal(2023, 4), 3), static_argnums=(1,)),
    Case(dense_static_activation, lambda: (normal(2024, 3, 4), normal(2025, 4, 2), "tanh"), argnums=(0, 1),
         static_argnums=(2,)),
    Case(dense_static_activation, lambda: (normal(2024, 3, 4), normal(2025, 4, 2), "relu"), argnums=(0, 1),
         static_argnums=(2,), id="dense_static_relu"),
    Case(zeros_of_static_shape, lambda: (normal(2026, 2), (2, 3)), static_argnums=(1,)),
    Case(static_flag, lambda: (normal(2027, 4), True), static_argnums=(1,)),
    Case(static_flag, lambda: (normal(2027, 4), False), static_argnums=(1,), id="static_flag_false"),
    Case(static_callable, lambda: (normal(2028, 4), _softplus), static_argnums=(1,)),
    Case(power_static, lambda: (normal(2029, 4), 4), static_argnums=(-1,), id="power_static_negative_argnum"),
]
