"""The loop of ``benchmarks/run_checkpoint.py``: plain NumPy that numbax reads, float64.

A state of 1000 values stepped 10,000 times by a body with several intermediates; ``checkpointed_loss``
calls the same body through ``numbax.checkpoint``.
"""
import numpy as np

import numbax

STEPS = 10_000
SIZE = 1000


def step(x, p):
    h = np.tanh(x * p)
    s = np.sin(x)
    return x + 0.001 * (h * h - s * s * p)


checkpointed_step = numbax.checkpoint(step)


def plain_loss(x, p):
    for _ in range(STEPS):
        x = step(x, p)
    return np.sum(x * x)


def checkpointed_loss(x, p):
    for _ in range(STEPS):
        x = checkpointed_step(x, p)
    return np.sum(x * x)


def args():
    return np.linspace(-1.0, 1.0, SIZE), 1.3
