"""The reverse-mode corpus: plain NumPy functions returning a scalar that ``numbax.grad`` must differentiate.

Each theme module exposes ``CASES``, a list of ``Case``. A case names the function, a factory of
fresh deterministic arguments (functions may mutate arrays they create, and copies of their
inputs), which arguments to differentiate (``argnums``, an int or a tuple, with JAX's meaning),
which are static, whether the function returns ``(loss, aux)``, and its oracle:

- ``"jax"``: ``jax.grad`` (float64) of the *same* function with ``np`` bound to ``jax.numpy``
  (see ``oracles.to_jax``). JAX runs Python control flow on concrete values, so branches, ``for``
  and ``while`` loops on runtime values are all fine without ``jit``.
- ``"fd"``: fourth-order central finite differences in float64 (``oracles.fd_grad``), for the
  programs JAX cannot run: assignments into arrays (``x[i] = ...``, ``out[:, j] += ...``).

``xfail`` marks a case that a known numbax bug breaks: a string for both backends, or a dict
``{backend: reason}``. ``rtol``/``atol`` override the per-oracle defaults of the test module.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional, Tuple, Union

import numpy as np

from corpus import collect, rng, uniform  # noqa: F401  (shared with the jit corpus)

THEMES = ("arithmetic", "numpy_functions", "reductions", "linalg", "indexing", "branches", "loops",
          "while_loops", "inplace", "pytrees", "calls")

ORACLES = ("jax", "fd")


@dataclasses.dataclass
class Case:
    fn: Callable
    args_factory: Callable[[], tuple]
    argnums: Union[int, Tuple[int, ...]] = 0
    static_argnums: Tuple[int, ...] = ()
    has_aux: bool = False
    oracle: str = "jax"
    xfail: Union[None, str, Dict[str, str]] = None
    rtol: Optional[float] = None
    atol: Optional[float] = None
    id: Optional[str] = None

    def __post_init__(self):
        if self.id is None:
            self.id = self.fn.__name__
        assert self.oracle in ORACLES, f"{self.id}: unknown oracle {self.oracle!r}"

    def xfail_reason(self, backend: str) -> Optional[str]:
        if isinstance(self.xfail, dict):
            return self.xfail.get(backend)
        return self.xfail


def normal(seed: int, *shape: int, scale: float = 1.0) -> np.ndarray:
    return scale * rng(seed).normal(size=shape)


def well_conditioned(seed: int, n: int) -> np.ndarray:
    """A square matrix near the identity: invertible, with a positive determinant."""
    return np.eye(n) + 0.3 * normal(seed, n, n)


def all_cases() -> List[Case]:
    return collect(__name__, THEMES)
