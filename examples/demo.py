"""numbax demo (``make demo``): jit a small MLP's loss, check it against NumPy, time it, show the code.

The MLP is the README's: layers [10, 20, 1], parameters a list of ``(w, b)``
pairs, a tanh hidden layer and a mean-squared-error loss, all plain NumPy.
(``grad`` and the other transformations will join this demo when they exist.)
"""
import time
import timeit

import numpy as np

import numbax


def init_params(layers, rng):
    return [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(layers[:-1], layers[1:])]


def forward(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return np.mean((forward(params, x) - y) ** 2)


def per_call(fn, *args):
    """Best-of-5 seconds per call."""
    timer = timeit.Timer(lambda: fn(*args))
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=5, number=number)) / number


def main():
    rng = np.random.default_rng(0)
    params = init_params([10, 20, 1], rng)
    x = rng.normal(size=(100, 10))
    y = rng.normal(size=(100, 1))

    loss_jit = numbax.jit(loss)

    start = time.perf_counter()
    value = loss_jit(params, x, y)
    first = time.perf_counter() - start
    expected = loss(params, x, y)
    print(f"MLP [10, 20, 1], batch of {x.shape[0]}")
    print(f"  numbax.jit(loss): {value:.12f}")
    print(f"  plain NumPy:      {expected:.12f}")
    assert np.isclose(value, expected, rtol=1e-12, atol=0.0), (value, expected)
    print(f"  equal to NumPy within rtol 1e-12 (difference {abs(value - expected):.1e})")

    t_jit = per_call(loss_jit, params, x, y)
    t_numpy = per_call(loss, params, x, y)
    print(f"\nfirst call (generate + compile, or load from the cache): {first * 1e3:.0f} ms")
    print(f"per call: numbax.jit {t_jit * 1e6:.1f} µs, plain NumPy {t_numpy * 1e6:.1f} µs "
          f"(speed-up {t_numpy / t_jit:.2f}x)")
    if t_jit > t_numpy:
        print("  (at this size the work is mostly np.tanh, which NumPy vectorizes with SIMD while Numba "
              "calls libm per element)")

    print("\nThe code numbax handed to Numba for loss(params, x, y):\n")
    print(loss_jit.source)


if __name__ == "__main__":
    main()
