"""The transformations: grad (reverse mode); jvp, vmap and control flow follow."""
