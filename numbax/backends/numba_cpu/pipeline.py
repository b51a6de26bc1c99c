"""The Numba compiler of generated code: Numba's pipelines with numbax's two changes.

Array expressions are fused only where one operation feeds another (``array_expressions``), and the
function is lowered into a library that calls the runtime's cached helpers instead of linking them in, but
for small ones called in a loop (``helper_calls``).
"""
from __future__ import annotations

from numba.core import compiler
from numba.core.typed_passes import NativeLowering, NopythonRewrites

from numbax.backends.numba_cpu.array_expressions import FusingRewrites
from numbax.backends.numba_cpu.helper_calls import CallerLowering


_REPLACED = {NopythonRewrites: FusingRewrites, NativeLowering: CallerLowering}  # Numba's pass -> numbax's


class Compiler(compiler.Compiler):
    """Numba's compiler with ``FusingRewrites`` for ``NopythonRewrites`` and ``CallerLowering`` for
    ``NativeLowering``."""

    def define_pipelines(self):
        """Numba's pipelines, changed as the class says."""
        pipelines = super().define_pipelines()
        for pipeline in pipelines:
            for index, (numbas, description) in enumerate(pipeline.passes):
                pipeline.passes[index] = (_REPLACED.get(numbas, numbas), description)
            pipeline.finalize()
        return pipelines
