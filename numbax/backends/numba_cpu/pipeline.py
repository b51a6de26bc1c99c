"""The Numba compiler of generated code: Numba's pipelines with numbax's two changes.

Array expressions are fused only where one operation feeds another (``array_expressions``), and the
function is lowered into a library that calls the runtime's large cached helpers instead of linking them in
(``helper_calls``).
"""
from __future__ import annotations

from numba.core import compiler
from numba.core.typed_passes import NativeLowering, NopythonRewrites

from numbax.backends.numba_cpu.array_expressions import FusingRewrites
from numbax.backends.numba_cpu.helper_calls import UseCallerLibrary


class Compiler(compiler.Compiler):
    """Numba's compiler with ``FusingRewrites`` for ``NopythonRewrites`` and ``UseCallerLibrary`` right
    before ``NativeLowering``."""

    def define_pipelines(self):
        """Numba's pipelines, changed as the class says."""
        pipelines = super().define_pipelines()
        for pipeline in pipelines:
            classes = [entry[0] for entry in pipeline.passes]
            if NopythonRewrites in classes:
                index = classes.index(NopythonRewrites)
                pipeline.passes[index] = (FusingRewrites, pipeline.passes[index][1])
            if NativeLowering in classes:
                pipeline.add_pass_after(UseCallerLibrary, pipeline.passes[classes.index(NativeLowering) - 1][0])
            pipeline.finalize()
        return pipelines
