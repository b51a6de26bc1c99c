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


class Compiler(compiler.Compiler):
    """Numba's compiler with ``FusingRewrites`` for ``NopythonRewrites`` and ``CallerLowering`` for
    ``NativeLowering``."""

    def define_pipelines(self):
        """Numba's pipelines, changed as the class says."""
        pipelines = super().define_pipelines()
        for pipeline in pipelines:
            classes = [entry[0] for entry in pipeline.passes]
            if NopythonRewrites in classes:
                index = classes.index(NopythonRewrites)
                pipeline.passes[index] = (FusingRewrites, pipeline.passes[index][1])
            if NativeLowering in classes:
                index = classes.index(NativeLowering)
                pipeline.passes[index] = (CallerLowering, pipeline.passes[index][1])
            pipeline.finalize()
        return pipelines
