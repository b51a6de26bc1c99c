"""numbax demo (``make demo``): train the README's MLP with ``numbax.grad`` and show the generated gradient.

The MLP is the README's: layers [10, 20, 1], parameters a list of ``(w, b)``
pairs, a tanh hidden layer and a mean-squared-error loss, all plain NumPy. The
gradient is checked against central finite differences, the loss falls over
1000 epochs of gradient descent, and the adjoint numbax generated is printed.
"""
import time

import numpy as np

import numbax
from numbax import tree_util


def init_params(layers, rng):
    return [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(layers[:-1], layers[1:])]


def forward(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    return np.mean((forward(params, x) - y) ** 2)


def finite_difference(params, x, y, layer, which, index, eps=1e-6):
    """Central difference of the loss in one parameter entry."""
    def shifted(delta):
        moved = [tuple(p.copy() for p in pair) for pair in params]
        moved[layer][which][index] += delta
        return loss(moved, x, y)
    return (shifted(eps) - shifted(-eps)) / (2 * eps)


def main():
    rng = np.random.default_rng(0)
    params = init_params([10, 20, 1], rng)
    x = rng.normal(size=(100, 10))
    y = np.sin(x[:, :1]) + 0.1 * rng.normal(size=(100, 1))

    grad_loss = numbax.grad(loss)
    start = time.perf_counter()
    grads = grad_loss(params, x, y)
    first = time.perf_counter() - start
    print(f"MLP [10, 20, 1], batch of {x.shape[0]}: numbax.grad(loss) compiled in {first:.2f} s")

    for layer, which, index in [(0, 0, (3, 7)), (0, 1, (5,)), (1, 0, (2, 0)), (1, 1, (0,))]:
        numeric = finite_difference(params, x, y, layer, which, index)
        exact = grads[layer][which][index]
        assert abs(numeric - exact) < 1e-6 * max(1.0, abs(exact)), (numeric, exact)
    print("  gradient agrees with central finite differences")

    learning_rate = 0.1
    start = time.perf_counter()
    for epoch in range(1000):
        grads = grad_loss(params, x, y)
        params = tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads)
        if epoch % 100 == 0:
            print(f"  epoch {epoch:4d}  loss {loss(params, x, y):.6f}")
    elapsed = time.perf_counter() - start
    print(f"  final loss {loss(params, x, y):.6f}; 1000 steps in {elapsed * 1e3:.0f} ms "
          f"({elapsed:.3f} ms per step)")
    prediction = forward(params, x[:3])
    print(f"  predictions for the first three inputs: {np.round(prediction.ravel(), 3)} "
          f"(targets {np.round(y[:3].ravel(), 3)})")

    print("\nThe gradient numbax generated and handed to Numba, grad(loss)(params, x, y):\n")
    print(grad_loss.source)


if __name__ == "__main__":
    main()
