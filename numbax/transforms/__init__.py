"""The transformations (``registry`` declares them): grad (reverse mode), jvp (forward mode), the Jacobian
family, vmap (batching) and custom rules; ``nesting`` composes them."""
from numbax.transforms import arity  # noqa: F401  (sets Jitted.per_arity before any transformation is made)
