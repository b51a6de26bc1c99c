"""The behaviour corpus: small NumPy functions that ``numbax.jit`` must run exactly as NumPy does.

Each theme module (``basics``, ``control_flow``, ``pytrees``, ``calls``) exposes ``CASES``, a list
of ``Case``. ``args_factory`` builds fresh, deterministic arguments on every call (functions may
mutate their arguments in place). ``xfail`` marks a case that a known compiler bug breaks: a
string for both backends, or a dict ``{backend: reason}``.
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np

THEMES = ("basics", "control_flow", "pytrees", "calls")


@dataclasses.dataclass
class Case:
    fn: Callable
    args_factory: Callable[[], tuple]
    static_argnums: Tuple[int, ...] = ()
    static_argnames: Tuple[str, ...] = ()
    kwargs: Optional[Dict[str, Any]] = None
    id: Optional[str] = None
    xfail: Union[None, str, Dict[str, str]] = None
    rtol: Optional[float] = None
    atol: float = 0.0

    def __post_init__(self):
        if self.id is None:
            self.id = self.fn.__name__

    def xfail_reason(self, backend: str) -> Optional[str]:
        if isinstance(self.xfail, dict):
            return self.xfail.get(backend)
        return self.xfail


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def normal(seed: int, *shape: int, dtype=np.float64) -> np.ndarray:
    return rng(seed).normal(size=shape).astype(dtype)


def uniform(seed: int, *shape: int, low=0.5, high=2.0, dtype=np.float64) -> np.ndarray:
    return rng(seed).uniform(low, high, size=shape).astype(dtype)


def integers(seed: int, *shape: int, low=-5, high=6) -> np.ndarray:
    return rng(seed).integers(low, high, size=shape)


def all_cases() -> List[Case]:
    return collect(__name__, THEMES)


def collect(package: str, themes) -> list:
    """Every theme module's ``CASES``, ids prefixed with the theme; ids must be unique."""
    cases: list = []
    for theme in themes:
        module = importlib.import_module(f"{package}.{theme}")
        for case in module.CASES:
            cases.append(dataclasses.replace(case, id=f"{theme}.{case.id}"))
    ids = [c.id for c in cases]
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, f"duplicate case ids: {sorted(duplicates)}"
    return cases
