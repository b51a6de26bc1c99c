"""Collectives (``numbax.lax.psum`` and the others): the axes that ``vmap`` binds by name, the markers a
collective leaves while specializing, and the pass that lowers them over ``vmap``'s loop."""
