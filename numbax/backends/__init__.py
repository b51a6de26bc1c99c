"""Backends: turn generated source into something callable."""
from __future__ import annotations


def get_backend(name: str):
    """The module implementing ``name`` (``"cpu"``, ``"python"``, ``"gpu"``/``"cuda"``)."""
    if name == "python":
        from numbax.backends import python

        return python
    if name == "cpu":
        from numbax.backends import numba_cpu

        return numba_cpu
    if name in ("gpu", "cuda"):
        from numbax.backends import cuda

        return cuda
    raise ValueError(f"unknown backend {name!r}; choose 'cpu', 'gpu' or 'python'")

