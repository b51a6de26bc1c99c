"""One compiled implementation of an overload for all callers whose flags it would inherit alike.

Numba keeps what it compiled for an ``overload`` (its ``np.empty``, a runtime helper) by the argument types and
the caller's compiler flags, all of them (``_OverloadFunctionTemplate._get_impl``), and compiles again for a
caller whose flags differ in any way. Most of them shape only the caller's own code: generated code has a
CPython wrapper, an overload's implementation has none, a function Numba compiles internally lifts no loops.
So one program's ``np.empty(n)`` was compiled six times, and 240 of the 554 overloads compiled for
``examples/jax_programs/logistic_regression_laplace.py`` were compiled before for the same argument types.

An implementation takes four flags from its caller (``CPUTargetOptions.finalize`` inherits ``nrt``,
``fastmath``, ``error_model`` and ``forceinline`` where the overload's options do not set them) and sets the
rest itself, so implementations for callers alike in those four are the same code: ``share`` keys Numba's
cache by them. Flags of another target (CUDA's) key it as Numba does. Nothing calls an implementation through
a C function pointer, so none for the CPU gets Numba's C-callable wrapper (as none gets a CPython wrapper).
``tests/test_shared_overloads.py`` checks against the installed Numba that these are the flags it inherits.
"""
from __future__ import annotations

from typing import Any, Hashable

from numba.core import compiler, targetconfig
from numba.core.target_extension import cpu_target, jit_registry
from numba.core.typing import templates

INHERITED = ("nrt", "fastmath", "error_model", "forceinline")
_NUMBAS_JIT_DECORATOR = templates._OverloadFunctionTemplate._get_jit_decorator


def _flags_key(flags: Any) -> Hashable:
    """What of the caller's ``flags`` an overload's implementation depends on."""
    if type(flags) is not compiler.Flags:  # None, or another target's
        return flags
    return tuple((name, _hashable(getattr(flags, name))) for name in INHERITED)


def _hashable(value: Any) -> Hashable:
    """A flag's value, or the set of LLVM flags of ``fastmath``'s (``FastMathOptions`` has no hash)."""
    llvm_flags = getattr(value, "flags", None)
    return frozenset(llvm_flags) if isinstance(llvm_flags, set) else value


def _get_impl(self, args, kws):
    """Numba's ``_OverloadFunctionTemplate._get_impl``, keyed by the flags the implementation inherits."""
    flags = targetconfig.ConfigStack.top_or_none()
    cache_key = self.context, tuple(args), tuple(kws.items()), _flags_key(flags)
    found = self._impl_cache.get(cache_key)
    if found is not None:
        return found
    return self._build_impl(cache_key, args, kws)


def _get_jit_decorator(self):
    """Numba's decorator for the implementation; on the CPU, one that makes no C-callable wrapper."""
    jitter = _NUMBAS_JIT_DECORATOR(self)
    if jitter is not jit_registry[cpu_target]:
        return jitter
    return lambda **options: jitter(**{"no_cfunc_wrapper": True, **options})


def share() -> None:
    """Key every overload's compiled implementations by the flags they inherit (see the module's docstring)."""
    templates._OverloadFunctionTemplate._get_impl = _get_impl
    templates._OverloadFunctionTemplate._get_jit_decorator = _get_jit_decorator
