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


def while_true_break(x):
    i = 0
    while True:
        if x[i] > 0.5 or i == x.shape[0] - 1:
            break
        i += 1
    return i, x[i]


def for_else_search(x, target):
    for i in range(x.shape[0]):
        if x[i] == target:
            found = i
            break
    else:
        found = -1
    return found


def return_inside_while(a):
    x = 1.0
    for_guard = 0
    while for_guard < 100:
        x = 0.5 * (x + a / x)
        if abs(x * x - a) < 1e-12:
            return x
        for_guard += 1
    return -1.0


def defined_in_branch(x):
    if x.sum() > 0:
        y = x * 2.0
    else:
        y = -x
    z = y + 1.0
    return z


def runtime_bool(x, flag):
    if flag:
        return x + 1.0
    if not flag and x.shape[0] > 2:
        return x - 1.0
    return x


def return_in_nested_loops(x, target):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] > target:
                return i, j
    return -1, -1


def back_substitution(upper, b):
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= upper[i, j] * x[j]
        x[i] = s / upper[i, i]
    return x


def while_in_for(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        v = x[i]
        steps = 0
        while v > 1.0:
            v = v / 2.0
            steps += 1
        out[i] = steps
    return out


def array_ternary(x, y):
    return x if x.sum() > y.sum() else y


def int_elif_chain(n):
    if n < 0:
        r = -1
    elif n == 0:
        r = 0
    elif n < 10:
        r = 1
    else:
        r = 2
    return r


def aug_assign_subscripts(x, idx):
    out = np.zeros(x.shape[0])
    for i in range(idx.shape[0]):
        out[idx[i]] += x[i]
    out[0] *= 2.0
    out[1:] -= 1.0
    return out


def logistic_regression_gd(x, y, lr, steps):
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        w -= lr * (x.T @ (p - y)) / x.shape[0]
    return w


def array_swap_loop(x, y, n):
    a, b = x, y
    for _ in range(n):
        a, b = b, a + b
    return a


def guarded_index(x, n):
    if n > 0 and x[n - 1] > 0:
        return x[n - 1]
    return 0.0


def bubble_sort(x):
    n = x.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            if x[j] > x[j + 1]:
                tmp = x[j]
                x[j] = x[j + 1]
                x[j + 1] = tmp
    return x


def clip_scalar(s):
    if s < 0.0:
        return 0.0
    return s


def enumerate_zip_runtime(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        total += i * a - b
    return total


def dict_return_in_branches(x):
    if x.sum() > 0:
        return {"a": x, "b": x.sum()}
    else:
        return {"a": -x, "b": 0.0}


def _lower(seed, n):
    m = np.tril(normal(seed, n, n))
    return m + n * np.eye(n)


def _diag_dominant(seed, n):
    m = normal(seed, n, n)
    return m + 2.0 * n * np.eye(n)


def for_else_no_break(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    else:
        x[0] = -1.0
    return x


def while_else_converges(a, tol, max_steps):
    x = a
    k = 0
    while k < max_steps:
        x_next = 0.5 * (x + a / x)
        k += 1
        if abs(x_next - x) < tol:
            x = x_next
            break
        x = x_next
    else:
        x = -1.0
    return x, k


def for_else_nested_primes(n):
    count = 0
    last = 0
    for m in range(2, n):
        for d in range(2, m):
            if m % d == 0:
                break
        else:
            count += 1
            last = m
    return count, last


def continue_after_constant(x):
    s = 1.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = 0.0
            continue
        s = s + x[i]
    return s


def break_after_constant(x):
    hit = False
    best = 0.0
    for i in range(x.shape[0]):
        best = best + x[i]
        if best > 1.0:
            hit = True
            break
    return hit, best


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
    Case(while_true_break, lambda: (normal(128, 6),)),
    Case(for_else_search, lambda: (np.array([1.0, 2.0, 3.0]), 2.0), id="for_else_found"),
    Case(for_else_search, lambda: (np.array([1.0, 2.0, 3.0]), 5.0), id="for_else_missing"),
    Case(return_inside_while, lambda: (3.0,)),
    Case(defined_in_branch, lambda: (normal(129, 4),)),
    Case(runtime_bool, lambda: (normal(130, 3), False)),
    Case(return_in_nested_loops, lambda: (normal(131, 4, 4), 1.0)),
    Case(back_substitution, lambda: (_lower(132, 4).T, normal(133, 4))),
    Case(while_in_for, lambda: (uniform(134, 5, low=0.1, high=40.0),)),
    Case(array_ternary, lambda: (normal(135, 3), normal(136, 3))),
    Case(int_elif_chain, lambda: (7,)),
    Case(aug_assign_subscripts, lambda: (normal(137, 6), np.array([0, 2, 2, 1, 0, 3]))),
    Case(logistic_regression_gd, lambda: (normal(138, 20, 3), (normal(139, 20) > 0).astype(np.float64), 0.5, 50),
         rtol=1e-10),
    Case(array_swap_loop, lambda: (normal(140, 3), normal(141, 3), 6)),
    Case(guarded_index, lambda: (uniform(142, 4), 2)),
    Case(bubble_sort, lambda: (normal(143, 7),)),
    Case(clip_scalar, lambda: (-1.5,), id="clip_scalar_negative"),
    Case(clip_scalar, lambda: (1.5,), id="clip_scalar_positive"),
    Case(enumerate_zip_runtime, lambda: (normal(144, 5), normal(145, 5))),
    Case(dict_return_in_branches, lambda: (uniform(146, 3),), id="dict_return_in_branches_if"),
    Case(dict_return_in_branches, lambda: (-uniform(147, 3),), id="dict_return_in_branches_else"),
    Case(for_else_no_break, lambda: (normal(160, 4),)),
    Case(while_else_converges, lambda: (2.0, 1e-12, 50), id="while_else_break"),
    Case(while_else_converges, lambda: (2.0, 1e-12, 2), id="while_else_exhausted"),
    Case(for_else_nested_primes, lambda: (30,)),
    Case(continue_after_constant, lambda: (np.array([1.0, -2.0, 3.0, -0.5]),)),
    Case(break_after_constant, lambda: (uniform(161, 6),), id="break_after_constant_hit"),
    Case(break_after_constant, lambda: (-uniform(162, 6),), id="break_after_constant_miss"),
]
