"""The transformations (``registry`` declares them): grad (reverse mode), jvp (forward mode), the Jacobian
family, vmap (batching) and custom rules; ``nesting`` composes them."""
