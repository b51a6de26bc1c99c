"""The GPU backend's compiler half: the jitted function as ``numba.cuda`` kernels and a host driver."""
from typing import Any, Dict, List, Tuple

import gast

from numbax.backends.cuda.lower import driver, probes


def legalize(module: gast.Module, avals: Dict[str, Any], constants: Dict[str, Any]) -> Tuple[gast.Module, List[str]]:
    """The pipeline's last pass for the GPU backend: ``module`` as kernels and a driver, and the imports they
    need; ``avals`` are the parameters' abstract values, ``constants`` the values the code was specialized to.

    Raises:
        NumbaxDeviceError: at the user's line, for what the GPU backend does not compile yet.
    """
    params = {name: probes.of_aval(aval) for name, aval in avals.items()}
    params.update({name: probes.of_value(value) for name, value in constants.items()})
    return driver.transform(module, params, set(avals)), list(driver.IMPORTS)


__all__ = ["legalize"]
