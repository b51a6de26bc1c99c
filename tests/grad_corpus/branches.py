"""Branches on runtime values: if/elif/else, early returns inside branches, conditional expressions."""
import numpy as np

from . import Case, normal


def if_else_on_sum(x):
    if x.sum() > 0:
        y = x * 2.0
    else:
        y = -x * x
    return np.sum(y ** 2)


def elif_chain(x):
    s = x.sum()
    if s > 1.0:
        y = np.sin(x) * s
    elif s < -1.0:
        y = x ** 3
    else:
        y = np.exp(x) - s
    return np.sum(y)


def early_return(x):
    if np.max(x) > 1.0:
        return np.sum(x ** 2)
    return np.sum(np.sin(x))


def early_return_elif(x):
    s = np.sum(x * x)
    if s > 8.0:
        return np.sqrt(s)
    elif s > 2.0:
        return s * x[0]
    else:
        r = np.tanh(x).sum()
        return r * r


def nested_if(x, y):
    if x.mean() > 0:
        if y.mean() > 0:
            z = x * y
        else:
            z = x - y
    else:
        z = x + 2.0 * y
    return np.sum(z * z)


def scalar_piecewise(a):
    if a < -1.0:
        return -a * a
    elif a < 1.0:
        return a ** 3 + 2.0 * a
    return np.exp(a - 1.0) * 3.0


def branch_on_int_argument(x, k):
    if k == 0:
        y = np.sin(x)
    elif k == 1:
        y = np.cos(x) * x
    else:
        y = x * k
    return np.sum(y)


def conditional_expression(x):
    y = x * 2.0 if x.sum() > 0 else x * x
    return np.sum(y + (np.sin(y) if y[0] > 0 else np.cos(y)))


def branches_assign_different_names(x):
    a = x
    b = 1.0
    if x[0] > 0:
        a = x * x
    else:
        b = x.sum()
    return np.sum(a) * b


def boolean_operators_in_condition(x):
    s = x.sum()
    m = x.max()
    if s > 0 and m < 3.0:
        y = x * s
    elif s < 0 or m > 10.0:
        y = x / (1.0 + m * m)
    else:
        y = x
    return np.sum(y * y)


def branch_only_in_one_arm_uses_input(x, y):
    if x.sum() > y.sum():
        return np.sum(x * 3.0)
    return np.sum(y ** 2)


def not_condition(x):
    if not x[0] > x[1]:
        return x[0] * x[1] + x[2]
    return x[0] - x[1]


CASES = [
    Case(if_else_on_sum, lambda: (normal(1500, 4) + 0.5,), id="if_else_on_sum_true"),
    Case(if_else_on_sum, lambda: (normal(1500, 4) - 1.0,), id="if_else_on_sum_false"),
    Case(elif_chain, lambda: (normal(1501, 4) + 1.0,), id="elif_chain_if"),
    Case(elif_chain, lambda: (normal(1501, 4) - 1.0,), id="elif_chain_elif"),
    Case(elif_chain, lambda: (0.1 * normal(1501, 4),), id="elif_chain_else"),
    Case(early_return, lambda: (normal(1502, 5) + 1.0,), id="early_return_taken"),
    Case(early_return, lambda: (0.1 * normal(1502, 5),), id="early_return_fallthrough"),
    Case(early_return_elif, lambda: (normal(1503, 4) * 2.0,), id="early_return_elif_first"),
    Case(early_return_elif, lambda: (normal(1503, 4),), id="early_return_elif_second"),
    Case(early_return_elif, lambda: (0.3 * normal(1503, 4),), id="early_return_elif_else"),
    Case(nested_if, lambda: (normal(1504, 4) + 1.0, normal(1505, 4) - 1.0), argnums=(0, 1)),
    Case(nested_if, lambda: (normal(1504, 4) - 1.0, normal(1505, 4)), argnums=(0, 1), id="nested_if_outer_else"),
    Case(scalar_piecewise, lambda: (-1.7,), id="scalar_piecewise_low"),
    Case(scalar_piecewise, lambda: (0.4,), id="scalar_piecewise_mid"),
    Case(scalar_piecewise, lambda: (1.6,), id="scalar_piecewise_high"),
    Case(branch_on_int_argument, lambda: (normal(1506, 4), 1)),
    Case(branch_on_int_argument, lambda: (normal(1506, 4), 3), id="branch_on_int_argument_else"),
    Case(conditional_expression, lambda: (normal(1507, 4) + 0.7,)),
    Case(branches_assign_different_names, lambda: (np.abs(normal(1508, 4)),)),
    Case(branches_assign_different_names, lambda: (-np.abs(normal(1508, 4)),), id="branches_assign_other"),
    Case(boolean_operators_in_condition, lambda: (normal(1509, 4) + 0.5,)),
    Case(branch_only_in_one_arm_uses_input, lambda: (normal(1510, 3) + 1.0, normal(1511, 3)), argnums=(0, 1)),
    Case(not_condition, lambda: (np.array([0.2, 0.9, -0.4]),)),
]
