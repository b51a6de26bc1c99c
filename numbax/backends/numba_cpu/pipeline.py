"""The Numba compiler of generated code: Numba's pipelines with numbax's three changes.

Calls of NumPy functions that Numba would compile in every process go to helpers compiled once per machine
(``numpy_calls``, before typing); array expressions are fused only where one operation feeds another
(``array_expressions``); and the function is lowered into a library that calls the runtime's cached helpers
instead of linking them in, but for small ones called in a loop (``helper_calls``).
"""
from __future__ import annotations

from numba.core import compiler
from numba.core.typed_passes import NativeLowering, NopythonRewrites, NopythonTypeInference

from numbax.backends.numba_cpu.array_expressions import FusingRewrites
from numbax.backends.numba_cpu.helper_calls import CallerLowering
from numbax.backends.numba_cpu.numpy_calls import NumpyCalls


_REPLACED = {NopythonRewrites: FusingRewrites, NativeLowering: CallerLowering}  # Numba's pass -> numbax's
_BEFORE = {NopythonTypeInference: (NumpyCalls, "numbax: NumPy calls to helpers compiled once")}


class Compiler(compiler.Compiler):
    """Numba's compiler with ``NumpyCalls`` before ``NopythonTypeInference``, ``FusingRewrites`` for
    ``NopythonRewrites`` and ``CallerLowering`` for ``NativeLowering``."""

    def define_pipelines(self):
        """Numba's pipelines, changed as the class says."""
        pipelines = super().define_pipelines()
        for pipeline in pipelines:
            passes = []
            for numbas, description in pipeline.passes:
                if numbas in _BEFORE:
                    passes.append(_BEFORE[numbas])
                passes.append((_REPLACED.get(numbas, numbas), description))
            pipeline.passes[:] = passes
            pipeline.finalize()
        return pipelines
