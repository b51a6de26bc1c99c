"""Pytrees in and out: lists of (w, b) tuples, dicts, namedtuples, nested containers, scalar leaves."""
import collections
import dataclasses

import numpy as np

from numbax import tree_util

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


@dataclasses.dataclass
class Linear:
    w: np.ndarray
    b: np.ndarray


tree_util.register_dataclass(Linear, data_fields=["w", "b"], meta_fields=[])


def registered_dataclass(layer, x):
    return Linear(layer.w * 0.5, x @ layer.w + layer.b)


def no_return_mutates(x):
    x[0] = 1.0
    x[1:] *= 2.0


def constant_output(params, x):
    return x.sum(), len(params), 2.5


def shape_output(x):
    return x.shape[0], x.shape


def empty_list_params(params, x):
    for w, b in params:
        x = x @ w + b
    return x


def reversed_and_sliced(params, x):
    for w, b in reversed(params[1:]):
        x = x @ w.T + 1.0
    return x


def loop_over_string_keys(d):
    total = 0.0
    for k in ("a", "b"):
        total = total + d[k].sum()
    return total * len(d)


def keys_values(d):
    n = 0
    for k in d.keys():
        n += 1
    s = 0.0
    for v in d.values():
        s = s + v.mean()
    return s / n


def local_dict_built(x):
    out = {}
    out["double"] = x * 2.0
    out["half"] = x / 2.0
    return out


def builtin_sum_of_list(xs):
    return sum(xs)


def isinstance_dispatch(p, x):
    if isinstance(p, dict):
        return x @ p["w"]
    return x @ p[0]


def optional_bias(x, bias=None):
    if bias is not None:
        x = x + bias
    return x * 2.0


def scalar_leaves(cfg, x):
    return x * cfg["scale"] + cfg["count"], cfg["flag"]


def zip_params_range(params, x):
    for (w, b), i in zip(params, range(3)):
        x = np.tanh(x @ w + b) * (i + 1)
    return x


def break_in_unrolled_loop(params, x):
    for w, b in params:
        x = np.tanh(x @ w + b)
        if np.abs(x).max() < 0.5:
            break
    return x


def continue_in_unrolled_loop(params, x):
    for w, b in params:
        if b.sum() < 0:
            continue
        x = np.tanh(x @ w + b)
    return x


def return_in_unrolled_loop(params, x):
    for w, b in params:
        x = x @ w + b
        if x.sum() > 0:
            return x
    return -x


def horner(coeffs, x):
    y = np.zeros_like(x)
    for c in coeffs:
        y = y * x + c
    return y


def return_params_unchanged(params, x):
    return params, x.sum()


def namedtuples_in_list(states, dt):
    out = []
    for s in states:
        out.append(State(s.pos + dt * s.vel, s.vel))
    return out


def _mlp_params(seed, sizes):
    return [(normal(seed + i, m, n) / np.sqrt(m), normal(seed + 50 + i, n))
            for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]))]


def break_keeps_loop_target(ws, x):
    for w in ws:
        x = x * w
        if x.sum() > 4.0:
            break
    return x, w


def unrolled_for_else(ws, x):
    for w in ws:
        if (x * w).max() > 10.0:
            x = x * 0.0
            break
    else:
        x = x + 1.0
    return x


def break_under_static_condition(params, x):
    for k, (w, b) in enumerate(params):
        if k == 2:
            break
        x = np.tanh(x @ w + b)
    return x


def unrolled_break_with_inner_loop(ws, x):
    total = 0.0
    for w in ws:
        for i in range(w.shape[0]):
            if w[i] < 0:
                break
            total += w[i]
        if total > x:
            break
        total += 1.0
    return total


def sum_with_start(xs, start):
    return sum(xs, start) + sum([x.sum() for x in xs])


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
    Case(registered_dataclass, lambda: (Linear(normal(241, 3, 3), normal(242, 3)), normal(243, 3))),
    Case(no_return_mutates, lambda: (normal(244, 4),)),
    Case(constant_output, lambda: (_mlp_params(245, (2, 2, 2)), normal(246, 3))),
    Case(shape_output, lambda: (normal(247, 3, 2),)),
    Case(empty_list_params, lambda: ([], normal(248, 3))),
    Case(reversed_and_sliced, lambda: (_mlp_params(249, (3, 3, 3, 3)), normal(250, 3))),
    Case(loop_over_string_keys, lambda: ({"a": normal(251, 3), "b": normal(252, 2)},)),
    Case(keys_values, lambda: ({"a": normal(253, 3), "b": normal(254, 2), "c": normal(255, 4)},)),
    Case(local_dict_built, lambda: (normal(256, 3),)),
    Case(builtin_sum_of_list, lambda: ([normal(257, 3), normal(258, 3), normal(259, 3)],)),
    Case(isinstance_dispatch, lambda: ({"w": normal(260, 3, 2)}, normal(261, 3)), id="isinstance_dict"),
    Case(isinstance_dispatch, lambda: ((normal(262, 3, 2),), normal(263, 3)), id="isinstance_tuple"),
    Case(optional_bias, lambda: (normal(264, 3),), id="optional_bias_none"),
    Case(optional_bias, lambda: (normal(265, 3), normal(266, 3)), id="optional_bias_array"),
    Case(scalar_leaves, lambda: ({"scale": 0.5, "count": 3, "flag": True}, normal(267, 3))),
    Case(zip_params_range, lambda: (_mlp_params(268, (2, 2, 2, 2, 2)), normal(269, 2))),
    Case(break_in_unrolled_loop, lambda: (_mlp_params(270, (3, 3, 3, 3, 3)), normal(271, 3) * 0.3)),
    Case(continue_in_unrolled_loop, lambda: (_mlp_params(272, (3, 3, 3, 3, 3)), normal(273, 3))),
    Case(return_in_unrolled_loop, lambda: ([(np.eye(2), np.array([-1.0, -1.0])), (np.eye(2), np.array([3.0, 0.0])),
                                             (np.eye(2), np.zeros(2))], np.array([0.5, 0.2]))),
    Case(horner, lambda: ([1.0, -2.0, 0.5, 3.0], normal(274, 4))),
    Case(return_params_unchanged, lambda: (_mlp_params(275, (2, 2)), normal(276, 2))),
    Case(namedtuples_in_list, lambda: ([State(normal(277, 2), normal(278, 2)), State(normal(279, 2), normal(280, 2))],
                                       0.1)),
    Case(break_keeps_loop_target, lambda: ([uniform(281, 3), uniform(282, 3), uniform(283, 3), uniform(284, 3)],
                                           uniform(285, 3))),
    Case(unrolled_for_else, lambda: ([uniform(286, 3), uniform(287, 3)], uniform(288, 3)), id="unrolled_for_else_done"),
    Case(unrolled_for_else, lambda: ([uniform(289, 3), 20.0 * uniform(290, 3)], uniform(291, 3)),
         id="unrolled_for_else_broke"),
    Case(break_under_static_condition, lambda: (_mlp_params(292, (3, 3, 3, 3, 3)), normal(293, 3))),
    Case(unrolled_break_with_inner_loop, lambda: ([normal(294, 4), uniform(295, 4), normal(296, 4)], 2.5)),
    Case(sum_with_start, lambda: ((normal(297, 3), normal(298, 3)), normal(299, 3))),
]
