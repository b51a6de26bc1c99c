"""Compile the GPU backend's generated module: its kernels are ``numba.cuda.jit`` functions (compiled by
numba.cuda on their first launch, for the argument types of that launch) and its driver plain Python."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from numbax.backends.cuda import placement
from numbax.backends.cuda.availability import cuda, simulated
from numbax.backends.cuda.simulated_math import MATH
from numbax.backends.module_cache import module_for


def compile_function(source: str, name: str, cache_dir: Optional[str], **options) -> Callable:
    """The driver of the generated module, taking the call's leaves (device arrays and numbers) and the
    specialization's constants (copied to the device here), giving device arrays: JAX gives a number
    computed on a device as a 0-d device array, and so does this."""
    cuda()
    module = module_for(source, name, cache_dir, variant="numba-cuda")
    if simulated():  # its kernels run as Python: NaN and infinities where ``math`` raises, as on a GPU
        module.math = MATH
    driver, written = getattr(module, name), getattr(module, "WRITTEN", {})

    def run(*args: Any) -> Any:
        with np.errstate(all="ignore"):  # the driver's numbers: inf and nan without warnings, as compiled code
            return _on_device(driver(*placement.to_gpu(list(args))))

    run.written = written  # the arguments the driver writes (``placement.write_back``)

    run.__name__ = name
    return run


def _on_device(value: Any) -> Any:
    if isinstance(value, tuple):  # the driver returns a flat tuple, or a shape among its values
        return tuple(_on_device(v) for v in value)
    if value is None or placement.is_device_array(value):
        return value
    return cuda().to_device(np.asarray(value))


def typing_errors() -> tuple:
    """The Numba exception classes that mean a kernel failed to compile."""
    from numba.core import errors

    return (errors.TypingError, errors.UnsupportedError, errors.LoweringError, errors.NumbaError)
