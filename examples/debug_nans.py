"""debug_nans catching the log of a negative number, at the line that took it.

Run: ``python examples/debug_nans.py``. Without the option the compiled function
quietly returns ``nan``; with it, the first operation that makes a NaN raises
``FloatingPointError`` naming the operation and this file's line.
"""
import numpy as np

import numbax
import numbax.numpy as jnp


@numbax.jit
def log_likelihood(sigma, residuals):
    scale = jnp.log(sigma)
    return -jnp.sum(residuals ** 2) / (2 * sigma ** 2) - residuals.size * scale


def main():
    residuals = np.array([0.3, -0.1, 0.2])
    print("sigma = 0.5 ->", log_likelihood(0.5, residuals))
    print("sigma = -0.5, unchecked ->", log_likelihood(-0.5, residuals))
    with numbax.config.debug_nans():
        try:
            log_likelihood(-0.5, residuals)
        except FloatingPointError as error:
            print("sigma = -0.5, with debug_nans ->", error)
        else:
            raise SystemExit("debug_nans did not catch the NaN")


if __name__ == "__main__":
    main()
