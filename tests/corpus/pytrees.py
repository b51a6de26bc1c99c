"""Pytrees in and out: lists of (w, b) tuples, dicts, namedtuples, nested containers, scalar leaves."""
import collections

import numpy as np

from . import Case, normal, uniform

State = collections.namedtuple("State", ["pos", "vel"])
Stats = collections.namedtuple("Stats", ["mean", "spread"])


def mlp_forward(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def mlp_range_len(params, x):
    for i in range(len(params)):
        w, b = params[i]
        x = x @ w + b
        if i < len(params) - 1:
            x = np.maximum(x, 0.0)
    return x


def mlp_enumerate(params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i != len(params) - 1:
            x = np.tanh(x)
    return x


def dict_affine(params, x):
    return np.tanh(x @ params["w"] + params["b"]) * params["scale"]


def dict_out(x):
    mu = x.mean()
    return {"mean": mu, "centered": x - mu, "max": x.max()}


def tuple_out(x):
    return x.min(), x.max(), x * 2.0


def namedtuple_step(state, dt):
    acc = -state.pos
    vel = state.vel + dt * acc
    return State(state.pos + dt * vel, vel)


def namedtuple_out(x):
    return Stats(mean=x.mean(), spread=x.max() - x.min())


def nested_dict_of_lists(tree):
    total = 0.0
    for a in tree["layers"]:
        total = total + a.sum()
    return total * tree["scale"]


def zip_lists(xs, ys):
    acc = np.zeros_like(xs[0])
    for a, b in zip(xs, ys):
        acc = acc + a * b
    return acc


def len_of_list(params, x):
    return x * len(params)


def none_leaf(x, unused):
    return x * 2.0


def list_out(x):
    return [x + 1.0, x - 1.0]


def nested_tuple_out(x, y):
    return (x + y, (x * y, x - y)), x.sum()


def constant_indexing(params):
    return params[0][1] + params[-1][1] * 2.0, params[1][0].T


def sgd_comprehension(params, grads, lr):
    return [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]


def sgd_loop(params, grads, lr):
    new = []
    for (w, b), (gw, gb) in zip(params, grads):
        new.append((w - lr * gw, b - lr * gb))
    return new


def dict_items(params):
    total = 0.0
    for name, value in params.items():
        total = total + value.sum()
    return total


def dict_update_out(params, grads, lr):
    return {"w": params["w"] - lr * grads["w"], "b": params["b"] - lr * grads["b"]}


def tuple_of_arrays_in(pair):
    a, b = pair
    return a @ b


def passthrough(x, y):
    return y, x


def _mlp_params(seed, sizes):
    return [(normal(seed + i, m, n) / np.sqrt(m), normal(seed + 50 + i, n))
            for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]))]


CASES = [
    Case(mlp_forward, lambda: (_mlp_params(200, (3, 5, 4, 2)), normal(201, 6, 3))),
    Case(mlp_range_len, lambda: (_mlp_params(202, (3, 4, 2)), normal(203, 5, 3))),
    Case(mlp_enumerate, lambda: (_mlp_params(204, (2, 3, 3, 1)), normal(205, 4, 2))),
    Case(dict_affine, lambda: ({"w": normal(206, 3, 2), "b": normal(207, 2), "scale": 1.5}, normal(208, 4, 3))),
    Case(dict_out, lambda: (normal(209, 5),)),
    Case(tuple_out, lambda: (normal(210, 3, 2),)),
    Case(namedtuple_step, lambda: (State(normal(211, 3), normal(212, 3)), 0.1)),
    Case(namedtuple_out, lambda: (normal(213, 6),)),
    Case(nested_dict_of_lists, lambda: ({"layers": [normal(214, 2), normal(215, 3, 2)], "scale": 2.0},)),
    Case(zip_lists, lambda: ([normal(216, 3), normal(217, 3)], [normal(218, 3), normal(219, 3)])),
    Case(len_of_list, lambda: (_mlp_params(220, (2, 2, 2)), normal(221, 3))),
    Case(none_leaf, lambda: (normal(222, 3), None)),
    Case(list_out, lambda: (normal(223, 4),)),
    Case(nested_tuple_out, lambda: (normal(224, 3), normal(225, 3))),
    Case(constant_indexing, lambda: (_mlp_params(226, (3, 3, 3)),)),
    Case(sgd_comprehension, lambda: (_mlp_params(227, (3, 2, 1)), _mlp_params(228, (3, 2, 1)), 0.1)),
    Case(sgd_loop, lambda: (_mlp_params(229, (3, 2, 1)), _mlp_params(230, (3, 2, 1)), 0.1)),
    Case(dict_items, lambda: ({"a": normal(231, 3), "b": normal(232, 2, 2)},)),
    Case(dict_update_out, lambda: ({"w": normal(233, 2, 2), "b": normal(234, 2)},
                                   {"w": normal(235, 2, 2), "b": normal(236, 2)}, 0.01)),
    Case(tuple_of_arrays_in, lambda: ((normal(237, 2, 3), normal(238, 3)),)),
    Case(passthrough, lambda: (normal(239, 2), {"k": normal(240, 3)})),
]
