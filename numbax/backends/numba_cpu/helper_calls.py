"""Generated code calls the runtime's cached helpers by symbol instead of linking their IR in.

Numba links the LLVM IR of every function a caller calls into the caller's module, where LLVM optimizes it
and emits its machine code once more: for a runtime helper loaded from the disk cache
(``numbax.runtime.cached``) that is the whole cost of the helper, and of Numba's implementations it calls,
paid again in every generated function (30,000 of the 36,000 lines of IR of the Gaussian process's step).
``CallerLowering`` builds generated code into a ``CallerLibrary``, which links every library but the cached
helpers'; the call stays a call of the helper's symbol, which the JIT resolves to the machine code
already loaded, and the caller's ``reload_init`` holds a ``CalledHelper`` that loads that code before the
caller's cached code in a new process.

A small helper called inside a loop is still linked in, to be inlined: ``rt.exp(z)`` and ``rt.max(z)`` of
each row of a 256 x 100 softmax took 6% longer per call as calls (their IR is 160 to 900 lines; a Cholesky
factor's gradient is 11,000). Outside loops a call runs once per call of the function, where its tens of
nanoseconds do not count and the IR would (``CallerLowering`` tells the library, block by block, whether it
lowers a loop's body). Not one overloaded with ``called`` (most run-time checks of shapes, ``numpy_once``'s
functions, ``elementwise``'s operations): it raises or allocates, and its IR linked in cost the spring chain's
Hessian a tenth of its compilation. At LLVM's optimization level 0 (``NUMBA_OPT=0``) nothing is inlined: every
cached helper is called.
"""
from __future__ import annotations

import weakref

from numba.core import codegen, lowering
from numba.core import config as numba_config
from numba.core.compiler_machinery import register_pass
from numba.core.typed_passes import NativeLowering

from numbax.backends.numba_cpu.ir_loops import loop_labels
from numbax.runtime import cached


# the lines of LLVM IR (the helper's and what it links in) from which a helper is called, not inlined
CALLED_FROM_LINES = 1000
_LINES: "weakref.WeakKeyDictionary[codegen.CodeLibrary, int]" = weakref.WeakKeyDictionary()


class CallerLibrary(codegen.JITCodeLibrary):
    """A code library that calls the runtime's cached helpers by symbol, but for small ones called in a loop
    (see the module's docstring)."""

    in_loop = True  # whether the instructions being lowered are a loop's (``CallerLowering`` sets it)

    def add_linking_library(self, library):
        """Link ``library`` in, unless it is a cached runtime helper's, large or called outside loops: then
        load it first on a cache load."""
        helper = cached.helper_called(library)
        if helper is None or (int(numba_config.OPT) > 0 and self.in_loop and _lines(library) < CALLED_FROM_LINES
                              and not helper.always_called):
            super().add_linking_library(library)
        else:
            self._reload_init.add(helper)


def _lines(library: codegen.CodeLibrary) -> int:
    """The lines of the LLVM IR that linking ``library`` would bring in."""
    if library not in _LINES:
        _LINES[library] = str(library._get_module_for_linking()).count("\n")
    return _LINES[library]


class _Lower(lowering.Lower):
    """Numba's lowering, telling a ``CallerLibrary`` whether each block it lowers is in a loop."""

    def lower_function_body(self):
        """Lower the blocks, knowing which are a loop's."""
        self._in_loops = {id(self.blocks[label]) for label in loop_labels(self.blocks)}
        return super().lower_function_body()

    def lower_block(self, block):
        """Lower ``block``, the library told whether it is in a loop."""
        if isinstance(self.library, CallerLibrary):
            self.library.in_loop = id(block) in self._in_loops
        return super().lower_block(block)


@register_pass(mutates_CFG=True, analysis_only=False)
class CallerLowering(NativeLowering):
    """Numba's ``NativeLowering`` into a ``CallerLibrary``, told block by block whether it lowers a loop."""

    _name = "numbax_caller_lowering"

    @property
    def lowering_class(self):
        """``_Lower``."""
        return _Lower

    def run_pass(self, state):
        """Lower into a ``CallerLibrary`` (in place of the library Numba would create)."""
        if state.library is None:
            state.library = CallerLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
            state.library.enable_object_caching()
        return super().run_pass(state)
