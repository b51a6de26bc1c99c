"""Every naming scheme of generated code, in one place.

Names are deterministic: the same program always gets the same names, which is
what keeps golden-source tests and the disk cache stable.
"""
from __future__ import annotations

import keyword
import re
from typing import Iterable


def _sanitize(base: str) -> str:
    base = re.sub(r"\W", "_", base).strip("_") or "v"
    if base[0].isdigit():
        base = "v" + base
    return base


class Namer:
    """Hands out fresh names that clash neither with each other nor with ``reserved``."""

    def __init__(self, reserved: Iterable[str] = ()):
        self.used = set(reserved)
        self._temp_count = 0

    def reserve(self, names: Iterable[str]) -> None:
        """Mark names as taken (the user's own variables, say)."""
        self.used.update(names)

    def new(self, base: str) -> str:
        """``base`` if free, else ``base_1``, ``base_2``, ..."""
        base = _sanitize(base)
        if base not in self.used and not keyword.iskeyword(base):
            self.used.add(base)
            return base
        i = 1
        while f"{base}_{i}" in self.used:
            i += 1
        name = f"{base}_{i}"
        self.used.add(name)
        return name

    def temp(self) -> str:
        """A temporary of A-normal form: ``_t1``, ``_t2``, ..."""
        while True:
            self._temp_count += 1
            name = f"_t{self._temp_count}"
            if name not in self.used:
                self.used.add(name)
                return name


def leaf_name(base: str, path: Iterable[object]) -> str:
    """The variable holding one leaf of a pytree: ``params`` + (0, 1) -> ``params_0_1``."""
    return _sanitize("_".join([base] + [str(p) for p in path]))


def is_temp(name: str) -> bool:
    """Whether ``name`` is an A-normal-form temporary."""
    return re.fullmatch(r"_t\d+", name) is not None


def element_name(base: str, index: int) -> str:
    """The number that holds element ``index`` of a small array kept as numbers: ``k1`` + 0 -> ``k1_at0``."""
    return _sanitize(f"{base}_at{index}")


def stacked_name(base: str) -> str:
    """The array made again from the numbers of a small array kept as numbers: ``k1`` -> ``k1_stack``."""
    return _sanitize(f"{base}_stack")
