"""The ``gpu`` backend: generated ``numba.cuda`` kernels driven by generated host code.

``lower`` is the compiler half (no ``numba.cuda`` needed: ``numbax show --backend gpu`` runs anywhere);
``compile``, ``placement`` and ``runtime`` run the result and need ``numba.cuda`` with a GPU or its simulator
(``availability``).
"""
from numbax.backends.cuda.compile import compile_function, typing_errors

__all__ = ["compile_function", "legalize", "typing_errors"]


def legalize(module, param_avals, constants):
    """``lower.legalize``: the GPU's lowering of generated code, imported when a function is first compiled for
    the GPU (its modules take 60 ms to import, which a program on the CPU never needs)."""
    from numbax.backends.cuda import lower

    return lower.legalize(module, param_avals, constants)
