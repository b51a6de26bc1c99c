"""standalone: ``numbax.export``, one Python module holding a function's generated code and the runtime it calls.

The module needs numpy and numba only, not numbax: what ``numbax show`` prints, with the helpers of
``numbax.runtime`` that it calls copied in (``runtime_copy``), written out by ``module``.
"""
from __future__ import annotations

import pathlib
from typing import Any, Callable, Optional

from numbax._version import __version__
from numbax.api import Jitted
from numbax.standalone.module import Parameter, write
from numbax.standalone.runtime_copy import ExportError

__all__ = ["export", "ExportError"]


def export(fun: Callable, *example_args: Any, path: Optional[str] = None) -> str:
    """The source of a module that computes ``fun`` for arguments of the kinds of ``example_args``.

    ``fun`` is a plain function (exported as ``jit`` compiles it) or a numbax transformation of one
    (``numbax.grad(f)``, ``numbax.vmap(f)``, ``numbax.jacfwd(f)``, ...; ``jit``'s static arguments are
    fixed at the example's values). The module needs numpy and numba only; its function, named as the
    generated code names it (``grad_f``), takes the dynamic arguments, checks each has the dtype and rank
    of its example, and returns what ``fun`` returns. ``path``: also write the module there.
    """
    jitted = fun if isinstance(fun, Jitted) else Jitted(fun, backend="cpu")
    if jitted.backend in ("gpu", "cuda"):
        raise ExportError("export of the GPU backend's kernels and driver is not supported yet",
                          jitted.origin(), hint="export the function for the CPU (jit without backend='gpu').")
    parameters = [Parameter(*form) for form in jitted.export_parameters(tuple(example_args))]
    generated = jitted.generate(tuple(example_args), {})
    if generated.assumes_shapes:
        generated = jitted.generate(tuple(example_args), {}, general=True)
    source = write(generated, parameters, jitted.export_output, f"numbax {__version__}")
    if path is not None:
        try:
            pathlib.Path(path).write_text(source, encoding="utf-8")
        except OSError as exc:
            raise ExportError(f"cannot write {path}: {exc.strerror or exc}",
                              hint="choose a folder you can write to.") from None
    return source
