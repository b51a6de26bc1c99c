"""Control flow on run-time values: if/elif/else, while, for over run-time ranges, break, continue."""
import numpy as np

from . import Case, integers, normal, uniform


def sign_branch(x):
    if x.sum() > 0:
        y = x * 2.0
    elif x.sum() < -1.0:
        y = -x
    else:
        y = x + 1.0
    return y


def early_return_branches(x):
    s = x.sum()
    if s > 1.0:
        return x / s
    elif s < -1.0:
        return -x
    return x * 0.0


def newton_sqrt(a, tol):
    x = a
    err = 1.0
    while err > tol:
        x_new = 0.5 * (x + a / x)
        err = abs(x_new - x)
        x = x_new
    return x


def newton_sqrt_array(a):
    x = np.ones_like(a)
    err = 1.0
    while err > 1e-12:
        x_new = 0.5 * (x + a / x)
        err = np.max(np.abs(x_new - x))
        x = x_new
    return x


def bisection_cube_root(c):
    lo, hi = 0.0, max(1.0, c)
    while hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        if mid * mid * mid > c:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def cumulative_product(x):
    out = np.empty_like(x)
    acc = 1.0
    for i in range(x.shape[0]):
        acc *= x[i]
        out[i] = acc
    return out


def first_above(x, threshold):
    idx = -1
    for i in range(len(x)):
        if x[i] > threshold:
            idx = i
            break
    return idx


def sum_positive(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        s += x[i]
    return s


def matmul_loops(a, b):
    n, k = a.shape
    m = b.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += a[i, p] * b[p, j]
            out[i, j] = s
    return out


def find_negative(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return i
    return -1


def power_iteration(a, maxiter):
    v = np.ones(a.shape[0])
    lam = 0.0
    for it in range(maxiter):
        w = a @ v
        lam_new = np.linalg.norm(w)
        v = w / lam_new
        if abs(lam_new - lam) < 1e-10:
            break
        lam = lam_new
    return lam_new, v


def stepped_range(x):
    s = 0.0
    for i in range(0, x.shape[0], 2):
        s += x[i]
    for i in range(x.shape[0] - 1, 0, -3):
        s -= 0.5 * x[i]
    return s


def differences(x):
    out = np.zeros(x.shape[0] - 1)
    for i in range(1, x.shape[0]):
        out[i - 1] = x[i] - x[i - 1]
    return out


def enumerate_array(x):
    out = np.zeros_like(x)
    for i, v in enumerate(x):
        out[i] = v * i
    return out


def zip_arrays(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b
    return s


def iterate_rows(x):
    total = 0.0
    for row in x:
        total += row.max()
    return total


def fibonacci(n):
    a, b = 0.0, 1.0
    for _ in range(n):
        a, b = b, a + b
    return a


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def huber_loop(x, delta):
    total = 0.0
    for i in range(x.shape[0]):
        r = abs(x[i])
        if r <= delta:
            total += 0.5 * r * r
        elif r <= 4.0 * delta:
            total += delta * (r - 0.5 * delta)
        else:
            total += 4.0 * delta * delta
    return total


def running_max(x):
    best = x[0]
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        best = max(best, x[i])
        out[i] = best
    return out


def while_and_condition(x, tol, maxit):
    it = 0
    err = 1.0
    y = x.copy()
    while err > tol and it < maxit:
        y_new = np.cos(y)
        err = np.abs(y_new - y).max()
        y = y_new
        it += 1
    return y, it


def euler_decay(y0, k, steps):
    y = y0
    dt = 1.0 / steps
    for _ in range(steps):
        y = y + dt * (-k * y)
    return y


def int_then_float_accumulator(x):
    s = 0
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def forward_substitution(lower, b):
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n):
        x[i] = (b[i] - lower[i, :i] @ x[:i]) / lower[i, i]
    return x


def jacobi(a, b, tol):
    x = np.zeros_like(b)
    d = np.diag(a)
    r = a - np.diag(d)
    err = tol + 1.0
    while err > tol:
        x_new = (b - r @ x) / d
        err = np.linalg.norm(x_new - x)
        x = x_new
    return x


def nested_break_continue(x):
    count = 0
    for i in range(x.shape[0]):
        if x[i, 0] < -1.0:
            continue
        for j in range(x.shape[1]):
            if x[i, j] > 1.0:
                break
            count += 1
    return count


def clamp_in_place(x, lo, hi):
    for i in range(x.shape[0]):
        if x[i] < lo:
            x[i] = lo
        elif x[i] > hi:
            x[i] = hi
    return x


def _lower(seed, n):
    m = np.tril(normal(seed, n, n))
    return m + n * np.eye(n)


def _diag_dominant(seed, n):
    m = normal(seed, n, n)
    return m + 2.0 * n * np.eye(n)


CASES = [
    Case(sign_branch, lambda: (uniform(100, 4),), id="sign_branch_if"),
    Case(sign_branch, lambda: (-uniform(101, 4),), id="sign_branch_elif"),
    Case(sign_branch, lambda: (np.array([0.1, -0.3, 0.05]),), id="sign_branch_else"),
    Case(early_return_branches, lambda: (uniform(102, 3),), id="early_return_first"),
    Case(early_return_branches, lambda: (np.array([0.2, -0.1]),), id="early_return_fallthrough"),
    Case(newton_sqrt, lambda: (2.0, 1e-12)),
    Case(newton_sqrt_array, lambda: (uniform(103, 5),)),
    Case(bisection_cube_root, lambda: (5.0,)),
    Case(cumulative_product, lambda: (uniform(104, 6),)),
    Case(first_above, lambda: (normal(105, 10), 0.5)),
    Case(sum_positive, lambda: (normal(106, 9),)),
    Case(matmul_loops, lambda: (normal(107, 3, 4), normal(108, 4, 2))),
    Case(find_negative, lambda: (np.array([0.5, 1.0, -2.0, 3.0]),), id="find_negative_found"),
    Case(find_negative, lambda: (uniform(109, 4),), id="find_negative_missing"),
    Case(power_iteration, lambda: (_diag_dominant(110, 4) @ _diag_dominant(110, 4).T, 500)),
    Case(stepped_range, lambda: (normal(111, 9),)),
    Case(differences, lambda: (normal(112, 6),)),
    Case(enumerate_array, lambda: (normal(113, 5),)),
    Case(zip_arrays, lambda: (normal(114, 5), normal(115, 5))),
    Case(iterate_rows, lambda: (normal(116, 4, 3),)),
    Case(fibonacci, lambda: (30,)),
    Case(gcd, lambda: (1071, 462)),
    Case(huber_loop, lambda: (normal(117, 12) * 2.0, 0.5)),
    Case(running_max, lambda: (normal(118, 8),)),
    Case(while_and_condition, lambda: (normal(119, 4), 1e-10, 200)),
    Case(euler_decay, lambda: (uniform(120, 3), 0.7, 100)),
    Case(int_then_float_accumulator, lambda: (normal(121, 5),)),
    Case(forward_substitution, lambda: (_lower(122, 4), normal(123, 4))),
    Case(jacobi, lambda: (_diag_dominant(124, 4), normal(125, 4), 1e-12)),
    Case(nested_break_continue, lambda: (normal(126, 6, 5),)),
    Case(clamp_in_place, lambda: (normal(127, 8), -0.5, 0.5)),
]
