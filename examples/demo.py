"""numbax demo (``make demo``): the README's example, a JAX program run on numbax, and the code it generated.

``examples/mlp.py`` is the README's main example: an MLP [10, 20, 1] initialised
with ``numbax.random``, a ``jit``-compiled training step that calls ``grad(loss)``,
1000 epochs with the loss printed every 100. Here the gradient is first checked
against central finite differences, then the example trains, and the source
numbax generated for the step -- forward pass, adjoint and update in one
function -- is printed.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mlp  # noqa: E402  (the README's example, next to this file)
import numbax  # noqa: E402
from numbax import random  # noqa: E402


def finite_difference(params, x, y, layer, which, index, eps=1e-6):
    """Central difference of the loss in one parameter entry."""
    def shifted(delta):
        moved = [tuple(p.copy() for p in pair) for pair in params]
        moved[layer][which][index] += delta
        return mlp.loss(moved, x, y)
    return (shifted(eps) - shifted(-eps)) / (2 * eps)


def check_gradient():
    key, x_key = random.split(random.PRNGKey(1))
    params = mlp.init_params(key, [10, 20, 1])
    x = random.normal(x_key, (100, 10))
    y = np.sin(x[:, :1])
    grads = numbax.grad(mlp.loss)(params, x, y)
    for layer, which, index in [(0, 0, (3, 7)), (0, 1, (5,)), (1, 0, (2, 0)), (1, 1, (0,))]:
        numeric = finite_difference(params, x, y, layer, which, index)
        exact = grads[layer][which][index]
        assert abs(numeric - exact) < 1e-6 * max(1.0, abs(exact)), (numeric, exact)
    print("numbax.grad(loss) agrees with central finite differences\n")


def main():
    check_gradient()
    start = time.perf_counter()
    params, x, y = mlp.main()
    print(f"trained in {time.perf_counter() - start:.2f} s (compiling the step included)")
    print("\nThe training step numbax generated and handed to Numba -- its forward pass, the gradient of the loss "
          "(`# grad of:` lines) and the update:\n")
    print(numbax.source(mlp.step, params, x, y))


if __name__ == "__main__":
    main()
