"""`while` loops whose trip count depends on the data: Newton to a tolerance, fixed points,
counters, `break` out of a `while True`. Reverse mode differentiates the iterations actually run."""
import numpy as np

from . import Case, normal, uniform


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-13:
        x = 0.5 * (x + a / x)
    return x


def newton_sqrt_array(a):
    x = np.ones_like(a)
    err = 1.0
    while err > 1e-13:
        x_new = 0.5 * (x + a / x)
        err = np.max(np.abs(x_new - x))
        x = x_new
    return np.sum(x * np.array([1.0, 2.0, -1.0]))


def fixed_point_cos(c):
    y = 0.0
    err = 1.0
    while err > 1e-14:
        y_new = c * np.cos(y)
        err = abs(y_new - y)
        y = y_new
    return y


def kepler(m, e):
    big_e = m
    residual = big_e - e * np.sin(big_e) - m
    while abs(residual) > 1e-14:
        big_e = big_e - residual / (1.0 - e * np.cos(big_e))
        residual = big_e - e * np.sin(big_e) - m
    return big_e


def counted_while(x, n):
    i = 0
    while i < n:
        x = 0.9 * x + 0.1 * np.sin(x)
        i += 1
    return np.sum(x * x)


def grow_until_large(x):
    s = x
    while s < 50.0:
        s = s * 1.7 + x
    return s


def while_true_break(x):
    y = x
    it = 0
    while True:
        y = np.tanh(y) + 0.5 * x
        it += 1
        if it >= 5:
            break
    return np.sum(y)


def tolerance_and_cap(x, tol, maxit):
    it = 0
    err = 1.0
    y = x * 1.0
    while err > tol and it < maxit:
        y_new = np.cos(y) * x
        err = np.abs(y_new - y).max()
        y = y_new
        it += 1
    return np.sum(y)


def damped_gradient_descent(w0, target):
    w = w0
    g = 2.0 * (w - target)
    while np.sum(g * g) > 1e-20:
        w = w - 0.25 * g
        g = 2.0 * (w - target)
    return np.sum(w * w0)


def halving_steps(x):
    step = 1.0
    total = 0.0
    while step > 1e-3:
        total = total + step * np.sin(x * step)
        step = step * 0.5
    return total


def babylonian_inverse(a):
    x = 0.1
    while abs(a * x - 1.0) > 1e-14:
        x = x * (2.0 - a * x)
    return x + a


CASES = [
    Case(newton_sqrt, lambda: (2.7,), rtol=1e-7),
    Case(newton_sqrt_array, lambda: (uniform(1700, 3, low=0.5, high=4.0),), rtol=1e-7),
    Case(fixed_point_cos, lambda: (0.8,), rtol=1e-7),
    Case(kepler, lambda: (1.1, 0.3), argnums=(0, 1), rtol=1e-7),
    Case(counted_while, lambda: (normal(1701, 3), 7)),
    Case(grow_until_large, lambda: (1.3,)),
    Case(while_true_break, lambda: (normal(1702, 4),)),
    Case(tolerance_and_cap, lambda: (uniform(1703, 3, low=0.2, high=0.6), 1e-12, 500), rtol=1e-7),
    Case(tolerance_and_cap, lambda: (uniform(1703, 3, low=0.2, high=0.6), 1e-12, 4), id="tolerance_and_cap_capped"),
    Case(damped_gradient_descent, lambda: (normal(1704, 3), normal(1705, 3)), argnums=(0, 1), rtol=1e-7),
    Case(halving_steps, lambda: (0.9,)),
    Case(babylonian_inverse, lambda: (1.7,), rtol=1e-7),
]
