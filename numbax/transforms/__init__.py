"""The transformations: grad (reverse mode) and vmap (batching); jvp and control flow follow."""
