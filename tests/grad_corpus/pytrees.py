"""Gradients with respect to pytrees: lists of (w, b) tuples, dicts, namedtuples, nested containers,
scalar leaves and ``None``; ``argnums`` an int and a tuple. Gradients keep the argument's structure."""
import collections

import numpy as np

from . import Case, normal

Params = collections.namedtuple("Params", ["w", "b"])
State = collections.namedtuple("State", ["pos", "vel"])


def _mlp_params(seed, sizes):
    return [(normal(seed + i, m, n, scale=0.5), normal(seed + 50 + i, n, scale=0.1))
            for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]))]


def mlp_loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
    w, b = params[-1]
    out = h @ w + b
    return np.mean((out - y) ** 2)


def mlp_relu_enumerate(params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i != len(params) - 1:
            x = np.maximum(x, 0.0)
    return np.sum(x ** 2)


def mlp_range_len(params, x):
    for i in range(len(params)):
        w, b = params[i]
        x = np.tanh(x @ w + b)
    return np.sum(x)


def dict_params(params, x):
    return np.sum(np.tanh(x @ params["w"] + params["b"]) * params["scale"])


def namedtuple_params(p, x):
    return np.sum((x @ p.w + p.b) ** 2)


def nested_dict_of_lists(tree):
    total = 0.0
    for a in tree["layers"]:
        total = total + np.sum(a ** 2)
    return total * tree["scale"] + np.sum(tree["extra"]["bias"])


def tuple_of_arrays(pair):
    a, b = pair
    return np.sum(np.sin(a @ b))


def list_of_arrays(xs):
    acc = 0.0
    for x in xs:
        acc = acc + np.sum(x * x) * x[0]
    return acc


def scalar_leaf_in_dict(params, x):
    return np.sum((params["slope"] * x + params["intercept"]) ** 2)


def zip_two_lists(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + np.sum(a * b)
    return s


def dict_items_loop(params):
    total = 0.0
    for name, value in params.items():
        total = total + np.sum(np.exp(value))
    return total


def none_leaf(params, x):
    return np.sum(params["w"] * x)


def namedtuple_dynamics(state, k, n):
    pos, vel = state
    dt = 0.05
    for _ in range(n):
        acc = -k * pos - 0.1 * vel
        vel = vel + dt * acc
        pos = pos + dt * vel
    return np.sum(pos ** 2) + State(pos, vel).vel.sum()


def nested_tuples(tree):
    (a, (b, c)), d = tree
    return np.sum(a * b) + c * d


def mixed_pytree_and_array(params, x, scale):
    w, b = params
    return scale * np.sum(np.tanh(x @ w + b))


CASES = [
    Case(mlp_loss, lambda: (_mlp_params(1900, (3, 4, 2)), normal(1901, 5, 3), normal(1902, 5, 2))),
    Case(mlp_loss, lambda: (_mlp_params(1903, (2, 3, 3, 1)), normal(1904, 4, 2), normal(1905, 4, 1)),
         argnums=(0, 1), id="mlp_loss_params_and_x"),
    Case(mlp_relu_enumerate, lambda: (_mlp_params(1906, (3, 5, 2)), normal(1907, 4, 3))),
    Case(mlp_range_len, lambda: (_mlp_params(1908, (2, 3, 2)), normal(1909, 3, 2)), argnums=(0, 1)),
    Case(dict_params, lambda: ({"w": normal(1910, 3, 2), "b": normal(1911, 2), "scale": 1.5}, normal(1912, 4, 3))),
    Case(namedtuple_params, lambda: (Params(normal(1913, 3, 2), normal(1914, 2)), normal(1915, 4, 3)), argnums=(0, 1)),
    Case(nested_dict_of_lists, lambda: ({"layers": [normal(1916, 2), normal(1917, 3)], "scale": 0.7,
                                         "extra": {"bias": normal(1918, 2)}},)),
    Case(tuple_of_arrays, lambda: ((normal(1919, 2, 3), normal(1920, 3, 2)),)),
    Case(list_of_arrays, lambda: ([normal(1921, 2), normal(1922, 3), normal(1923, 4)],)),
    Case(scalar_leaf_in_dict, lambda: ({"slope": 0.8, "intercept": -0.3}, normal(1924, 4)), argnums=(0, 1)),
    Case(zip_two_lists, lambda: ([normal(1925, 2), normal(1926, 3)], [normal(1927, 2), normal(1928, 3)]),
         argnums=(0, 1)),
    Case(dict_items_loop, lambda: ({"a": normal(1929, 2), "b": normal(1930, 3), "c": 0.4},)),
    Case(none_leaf, lambda: ({"w": normal(1931, 3), "unused": None}, normal(1932, 3))),
    Case(namedtuple_dynamics, lambda: (State(normal(1933, 2), normal(1934, 2)), 1.5, 10), argnums=(0, 1)),
    Case(nested_tuples, lambda: (((normal(1935, 3), (normal(1936, 3), 0.5)), 2.0),)),
    Case(mixed_pytree_and_array, lambda: ((normal(1937, 3, 2), normal(1938, 2)), normal(1939, 4, 3), 1.3),
         argnums=(0, 2)),
]
