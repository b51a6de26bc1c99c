"""Backends: turn generated source into something callable."""
from __future__ import annotations


def get_backend(name: str):
    """The module implementing ``name`` (``"cpu"``, ``"python"``)."""
    if name == "python":
        from numbax.backends import python

        return python
    if name == "cpu":
        from numbax.backends import numba_cpu

        return numba_cpu
    if name in ("gpu", "cuda"):
        from numbax.errors import NumbaxError

        raise NumbaxError(f"backend {name!r} is not available yet: the GPU code generator is still to be built",
                          hint="use backend='cpu' (Numba) or backend='python'.")
    raise ValueError(f"unknown backend {name!r}; choose 'cpu' or 'python'")

