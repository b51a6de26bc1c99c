"""The ``gpu`` backend: generated ``numba.cuda`` kernels driven by generated host code.

``lower`` is the compiler half (no ``numba.cuda`` needed: ``numbax show --backend gpu`` runs anywhere);
``compile``, ``placement`` and ``runtime`` run the result and need ``numba.cuda`` with a GPU or its simulator
(``availability``).
"""
from numbax.backends.cuda.compile import compile_function, typing_errors

__all__ = ["compile_function", "typing_errors"]
