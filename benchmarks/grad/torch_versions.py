"""torch versions of ``grad_tasks`` (CPU, float64), differentiated with ``torch.func.grad``.

torch names ``tanh``, ``mean``, ``sum``, ``sin`` and ``cos`` as NumPy does, so most tasks run their NumPy source.
"""
import numpy as np
import torch
import torch.nn.functional as F
from torch.func import grad

from grad import ode_loss_eager, same_source

globals().update(same_source(torch, ("forward", "mlp_loss", "rosenbrock", "kepler")))
ode_loss = ode_loss_eager


def softmax_cross_entropy(logits, labels):
    return F.cross_entropy(logits, labels)


def gradient(task):
    return grad(globals()[task.fn.__name__], task.argnums)


def _tensor(a):
    if isinstance(a, (list, tuple)):
        return type(a)(_tensor(v) for v in a)
    if isinstance(a, (np.ndarray, float)):
        return torch.as_tensor(np.asarray(a))
    return a  # a trip count stays a Python int


def args(task, task_args):
    return _tensor(tuple(task_args))
