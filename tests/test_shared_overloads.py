"""``numbax.backends.numba_cpu.shared_overloads``: an overload's implementation is compiled once for callers
whose flags it inherits alike, and again where they differ."""
import numba
import numpy as np
from numba.core import compiler, cpu_options, targetconfig
from numba.core.cpu import CPUTargetOptions
from numba.core.typing import templates

from numbax.backends.numba_cpu import compile as compile_numba  # noqa: F401 - installs the sharing
from numbax.backends.numba_cpu import shared_overloads

# a value other than each option's default, by its type (the option's setter converts it)
_CHANGED = {bool: lambda default: not default, str: lambda default: "numpy",
            cpu_options.FastMathOptions: lambda default: True, cpu_options.ParallelOptions: lambda default: True,
            cpu_options.InlineOptions: lambda default: "always"}


def _finalized_under(caller: compiler.Flags) -> compiler.Flags:
    """The flags Numba gives a function that sets no option, compiled for ``caller``."""
    with targetconfig.ConfigStack().enter(caller):
        return CPUTargetOptions.parse_as_flags(compiler.Flags(), {})


def test_the_flags_kept_apart_are_those_numba_lets_a_callee_inherit():
    plain = _finalized_under(compiler.Flags())
    inherited = set()
    for name, option in compiler.Flags.options.items():
        caller = compiler.Flags()
        setattr(caller, name, _CHANGED[option.type](option.default))
        if getattr(_finalized_under(caller), name) != getattr(plain, name):
            inherited.add(name)
    assert inherited == set(shared_overloads.INHERITED)


def _np_empty_template():
    """Numba's overload template of ``np.empty``."""
    return next(t for t in templates._OverloadFunctionTemplate.__subclasses__()
                if getattr(t, "_overload_func", None).__qualname__ == "ol_np_empty")


def _builds_of_np_empty_for(*jit_options) -> int:
    """How many implementations of ``np.empty(int64)`` Numba keeps after functions with each of
    ``jit_options`` call it."""
    for options in jit_options:
        numba.njit(**options)(lambda n: np.empty(n).size)(3)
    template = _np_empty_template()
    return sum(1 for key in template._impl_cache if key[1] == (numba.int64,) and not key[2])


def test_callers_whose_own_wrappers_differ_share_one_implementation():
    before = _builds_of_np_empty_for()
    after = _builds_of_np_empty_for({}, {"no_cfunc_wrapper": True}, {"nogil": True}, {"boundscheck": True})
    assert after >= 1 and after - before <= 1


def test_callers_of_another_error_model_get_their_own():
    first = _builds_of_np_empty_for({"error_model": "python"}, {"error_model": "numpy"})
    assert first >= 2
    assert _builds_of_np_empty_for({"error_model": "numpy", "no_cfunc_wrapper": True}) == first


def test_an_implementation_for_the_cpu_has_no_c_callable_wrapper():
    _builds_of_np_empty_for({})
    template = _np_empty_template()
    built = [impl for key, (impl, _) in template._impl_cache.items() if key[1] == (numba.int64,) and impl]
    assert built and all(impl.targetoptions["no_cfunc_wrapper"] is True for impl in built)
    assert all("cfunc." not in cres.library.get_llvm_str() for impl in built for cres in impl.overloads.values())
