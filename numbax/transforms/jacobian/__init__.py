"""The Jacobian family: ``jacfwd``, ``jacrev``, ``jacobian`` and ``hessian``."""
from numbax.transforms.jacobian.api import hessian, jacfwd, jacobian, jacrev  # noqa: F401
