"""`for` loops: over ranges with runtime bounds and steps, over array rows and elements, nested,
with `break` and `continue`; loop-carried values that the backward sweep must replay."""
import numpy as np

from . import Case, normal, uniform

TARGET = np.array([1.0, -2.0, 0.5])


def sum_over_runtime_range(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(x * i + 0.1))
    return s


def running_product(x):
    p = 1.0
    for i in range(x.shape[0]):
        p = p * x[i]
    return p


def over_rows(a):
    total = 0.0
    for row in a:
        total += np.sum(row ** 2) * row[0]
    return total


def over_elements(x):
    total = 0.0
    for v in x:
        total = total + np.sin(v) * v
    return total


def nested_loops(a):
    n, m = a.shape
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += a[i, j] * a[(i + 1) % n, j] * (i - j)
    return s


def break_on_threshold(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            break
        s += x[i] ** 2
    return s


def continue_on_negative(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        s += np.sqrt(x[i] + 1.0)
    return s


def scalar_recurrence(x, w):
    h = 0.0
    for t in range(x.shape[0]):
        h = np.tanh(w * h + x[t])
    return h


def rnn(w, u, xs):
    h = np.zeros(w.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t])
    return np.sum(h ** 2)


def euler_decay(y0, k, n):
    y = y0
    dt = 0.1
    for _ in range(n):
        y = y + dt * (-k * y + np.sin(y))
    return np.sum(y)


def fibonacci_like(x, n):
    a = x
    b = x * 0.5
    for _ in range(n):
        a, b = b, 0.5 * a + 0.4 * b * b
    return np.sum(a)


def inner_gradient_descent(x, lr, steps):
    w = x
    for _ in range(steps):
        w = w - lr * 2.0 * (w - TARGET) * (1.0 + 0.1 * w * w)
    return np.sum((w - TARGET) ** 2)


def stepped_range(x):
    s = 0.0
    for i in range(0, x.shape[0], 2):
        s += x[i] * x[i]
    for i in range(x.shape[0] - 1, 0, -3):
        s -= 0.5 * x[i]
    return s


def runtime_start_stop(x, start, stop):
    s = 0.0
    for i in range(start, stop):
        s = s + x[i] * np.cos(x[i - 1])
    return s


def huber_loop(x, delta):
    total = 0.0
    for i in range(x.shape[0]):
        r = abs(x[i])
        if r <= delta:
            total += 0.5 * r * r
        else:
            total += delta * (r - 0.5 * delta)
    return total


def enumerate_and_zip(x, y):
    s = 0.0
    for i, v in enumerate(x):
        s += v * i
    for a, b in zip(x, y):
        s += a * np.exp(b)
    return s


def enumerate_zip_with_start_and_range(x, y, n):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y), 1):
        s += i * a * b
    for j, a in zip(range(2, n, 2), x):
        s += j * a * a
    return s


def horner(coeffs, t):
    y = 0.0
    for c in coeffs:
        y = y * t + c
    return y


def running_max_selects(x):
    best = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > best:
            best = x[i]
    return best * best


def array_carried_through_loop(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) + x * 0.5
    return np.sum(y * y)


def loop_with_reduction_inside(a):
    acc = np.zeros(a.shape[1])
    for i in range(a.shape[0]):
        acc = acc + a[i] / np.sum(a[i] ** 2)
    return np.sum(acc ** 2)


def nested_runtime_bounds(x, n):
    s = 0.0
    for i in range(n):
        for j in range(i, n):
            s += x[i] * x[j] / (1.0 + i + j)
    return s


def zero_trip_loop(x, n):
    s = np.sum(x)
    for i in range(n):
        s = s * x[i]
    return s


CASES = [
    Case(sum_over_runtime_range, lambda: (normal(1600, 4), 5)),
    Case(running_product, lambda: (uniform(1601, 5),)),
    Case(over_rows, lambda: (normal(1602, 4, 3),)),
    Case(over_elements, lambda: (normal(1603, 5),)),
    Case(nested_loops, lambda: (normal(1604, 3, 4),)),
    Case(break_on_threshold, lambda: (np.array([0.3, -0.5, 0.8, 1.6, 0.2, 0.4]),)),
    Case(continue_on_negative, lambda: (normal(1605, 6),)),
    Case(scalar_recurrence, lambda: (normal(1606, 6), 0.8), argnums=(0, 1)),
    Case(rnn, lambda: (normal(1607, 3, 3, scale=0.5), normal(1608, 3, 2), normal(1609, 5, 2)), argnums=(0, 1, 2)),
    Case(euler_decay, lambda: (normal(1610, 3), 0.7, 20), argnums=(0, 1)),
    Case(fibonacci_like, lambda: (uniform(1611, 3, low=0.1, high=0.6), 6)),
    Case(inner_gradient_descent, lambda: (normal(1612, 3), 0.1, 8), argnums=(0, 1)),
    Case(stepped_range, lambda: (normal(1613, 8),)),
    Case(runtime_start_stop, lambda: (normal(1614, 7), 2, 6)),
    Case(huber_loop, lambda: (normal(1615, 6, scale=2.0), 1.0), argnums=(0, 1)),
    Case(enumerate_and_zip, lambda: (normal(1616, 4), normal(1617, 4)), argnums=(0, 1)),
    Case(enumerate_zip_with_start_and_range, lambda: (normal(1624, 5), normal(1625, 5), 9), argnums=(0, 1)),
    Case(horner, lambda: (normal(1618, 5), 0.7), argnums=(0, 1)),
    Case(running_max_selects, lambda: (normal(1619, 6),)),
    Case(array_carried_through_loop, lambda: (normal(1620, 4), 4)),
    Case(loop_with_reduction_inside, lambda: (normal(1621, 3, 4),)),
    Case(nested_runtime_bounds, lambda: (normal(1622, 5), 4)),
    Case(zero_trip_loop, lambda: (normal(1623, 3), 0)),
]
