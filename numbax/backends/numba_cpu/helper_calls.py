"""Generated code calls the runtime's cached helpers by symbol instead of linking their IR in.

Numba links the LLVM IR of every function a caller calls into the caller's module, where LLVM optimizes it
and emits its machine code once more: for a runtime helper loaded from the disk cache
(``numbax.runtime.cached``) that is the whole cost of the helper, and of Numba's implementations it calls,
paid again in every generated function (30,000 of the 36,000 lines of IR of the Gaussian process's step).
``UseCallerLibrary`` builds generated code into a ``CallerLibrary``, which links every library but those of the
large helpers; the call stays a call of the helper's symbol, which the JIT resolves to the machine code
already loaded, and the caller's ``reload_init`` holds a ``CalledHelper`` that loads that code before the
caller's cached code in a new process.

A small helper is still linked in, to be inlined: ``rt.exp(z)`` and ``rt.max(z)`` of each row of a
256 x 100 softmax took 6% longer per call as calls (their IR is 160 to 900 lines; a Cholesky factor's
gradient is 11,000). Not one overloaded with ``called`` (most run-time checks of shapes, ``numpy_once``'s
functions): it raises or allocates, and its IR linked in cost the spring chain's Hessian a tenth of its
compilation. At LLVM's optimization level 0 (``NUMBA_OPT=0``) nothing is inlined: every cached helper is called.
"""
from __future__ import annotations

import weakref

from numba.core import codegen
from numba.core import config as numba_config
from numba.core.compiler_machinery import LoweringPass, register_pass

from numbax.runtime import cached


# the lines of LLVM IR (the helper's and what it links in) from which a helper is called, not inlined
CALLED_FROM_LINES = 1000
_LINES: "weakref.WeakKeyDictionary[codegen.CodeLibrary, int]" = weakref.WeakKeyDictionary()


class CallerLibrary(codegen.JITCodeLibrary):
    """A code library that calls the runtime's large cached helpers by symbol (see the module's docstring)."""

    def add_linking_library(self, library):
        """Link ``library`` in, unless it is a large cached runtime helper's: then load it first on a cache
        load."""
        helper = cached.helper_called(library)
        if helper is None or (int(numba_config.OPT) > 0 and _lines(library) < CALLED_FROM_LINES
                              and not helper.always_called):
            super().add_linking_library(library)
        else:
            self._reload_init.add(helper)


def _lines(library: codegen.CodeLibrary) -> int:
    """The lines of the LLVM IR that linking ``library`` would bring in."""
    if library not in _LINES:
        _LINES[library] = str(library._get_module_for_linking()).count("\n")
    return _LINES[library]


@register_pass(mutates_CFG=False, analysis_only=False)
class UseCallerLibrary(LoweringPass):
    """Give the function a ``CallerLibrary`` for lowering to fill."""

    _name = "numbax_use_caller_library"

    def __init__(self):
        LoweringPass.__init__(self)

    def run_pass(self, state):
        """Create the library that ``NativeLowering`` would, as a ``CallerLibrary``."""
        library = CallerLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
        library.enable_object_caching()
        state.library = library
        return True
