"""Straight-line arithmetic and broadcasting: operators, powers, reuse and rebinding of names."""
import numpy as np

from . import Case, normal, uniform

W34 = np.linspace(-1.0, 1.5, 12).reshape(3, 4)


def polynomial(x):
    return np.sum(3.0 * x ** 3 - 2.0 * x ** 2 + x - 1.0)


def rational(x, y):
    return np.sum((x + 1.0) / (y * y + 1.0))


def broadcast_row(x, b):
    return np.sum((x + b) ** 2 * W34)


def broadcast_column(x, c):
    return np.sum(x * c - c / (1.0 + x * x))


def broadcast_outer_reshape(u, v):
    return np.sum(np.sin(u.reshape(3, 1) * v.reshape(1, 4)))


def broadcast_three_d(x, y):
    return np.sum(x * y + y * W34[0])


def scalar_times_array(x, s):
    return np.sum(s * x + s ** 2 * x * x)


def python_scalars(a, b):
    return a * b + a / b - b ** 3 + 2.0 * a


def reuse_intermediate(x):
    y = x * x
    z = y * x + y
    return np.sum(z * y)


def rebind_name(x):
    x = x * 2.0
    x = x + 1.0
    x = x * x
    return x.sum()


def integer_powers(x):
    return np.sum(x ** 2 + x ** 3 + x ** -1 + x ** 0)


def float_power(x, p):
    return np.sum(x ** p)


def center_and_scale(x):
    xc = x - x.mean()
    return np.sum(xc ** 2) / x.size


def negation_and_abs(x):
    return np.sum(-x * abs(x) - (-x))


def division_chain(x, y):
    z = x / y / (x + 2.0)
    return np.sum(z)


def augmented_assignment(x):
    y = x * 2.0
    y += 1.0
    y *= x
    y /= 2.0
    y -= x ** 2
    return np.sum(y * W34)


def transpose_property(a):
    return np.sum(a * a.T.T) + np.sum(a.T @ a)


def difference_of_sums(x, y):
    return (x.sum() - y.sum()) ** 2


def unused_argument(x, y):
    return np.sum(x ** 2)


def constant_multiplicative_chain(x):
    return np.sum(0.5 * (2.0 * (x - 3.0)) / 4.0 + 1e-3 * x * x * x)


def scalar_from_array_element(x, s):
    t = s * x[0] + x[1] / s
    return t * t + s


def mixed_int_float(x, n):
    return np.sum(x * n + x / n) + n * 0.5


CASES = [
    Case(polynomial, lambda: (normal(1000, 5),)),
    Case(rational, lambda: (normal(1001, 4), normal(1002, 4)), argnums=(0, 1)),
    Case(broadcast_row, lambda: (normal(1003, 3, 4), normal(1004, 4)), argnums=(0, 1)),
    Case(broadcast_column, lambda: (normal(1005, 3, 4), normal(1006, 3, 1)), argnums=(0, 1)),
    Case(broadcast_outer_reshape, lambda: (normal(1007, 3), normal(1008, 4)), argnums=(0, 1)),
    Case(broadcast_three_d, lambda: (normal(1009, 2, 3, 4), normal(1010, 3, 1)), argnums=(0, 1)),
    Case(scalar_times_array, lambda: (normal(1011, 4), 1.3), argnums=(0, 1)),
    Case(python_scalars, lambda: (0.7, 1.9), argnums=(0, 1)),
    Case(python_scalars, lambda: (0.7, 1.9), argnums=1, id="python_scalars_argnum1"),
    Case(reuse_intermediate, lambda: (normal(1012, 5),)),
    Case(rebind_name, lambda: (normal(1013, 2, 3),)),
    Case(integer_powers, lambda: (uniform(1014, 4),)),
    Case(float_power, lambda: (uniform(1015, 4), 1.7), argnums=(0, 1)),
    Case(center_and_scale, lambda: (normal(1016, 6),)),
    Case(negation_and_abs, lambda: (normal(1017, 5),)),
    Case(division_chain, lambda: (uniform(1018, 4), uniform(1019, 4)), argnums=(0, 1)),
    Case(augmented_assignment, lambda: (normal(1020, 3, 4),)),
    Case(transpose_property, lambda: (normal(1021, 3, 3),)),
    Case(difference_of_sums, lambda: (normal(1022, 3), normal(1023, 2, 2)), argnums=(0, 1)),
    Case(unused_argument, lambda: (normal(1024, 3), normal(1025, 2, 2)), argnums=(0, 1)),
    Case(constant_multiplicative_chain, lambda: (normal(1026, 4),)),
    Case(scalar_from_array_element, lambda: (normal(1027, 3), 1.4), argnums=(0, 1)),
    Case(mixed_int_float, lambda: (normal(1028, 3), 3)),
]
