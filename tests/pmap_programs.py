"""Programs that tests/test_pmap.py runs with ``numbax.pmap`` and, in a subprocess with two host devices, with
``jax.pmap``: each written once for either library (``L`` is ``numbax.lax`` or ``jax.lax``, ``m`` NumPy or
``jax.numpy``)."""


def collectives(x, L, m):
    return (L.psum(x, "i"), L.pmean(x * x, "i"), L.pmax(x, "i"), L.pmin(x, "i"),
            L.all_gather(x, "i"), L.all_gather(x, "i", axis=1), L.all_gather(x, "i", tiled=True),
            L.ppermute(x, "i", [(0, 1), (1, 0)]), L.ppermute(x, "i", [(0, 1)]), L.axis_index("i") + 0 * x,
            L.psum_scatter(m.stack([x, 2 * x]), "i"))


def normalized(x, w, L, m):
    return m.tanh(x * w) / L.psum(m.sum(x * x), "i") + L.pmean(x, "i")


def loss(w, x, y, m):
    return m.mean((m.tanh(x @ w) - y) ** 2)


def iterated(x, L, m):
    """Collectives in a ``fori_loop`` of the shard."""
    return L.fori_loop(0, 3, lambda k, v: m.sin(v) / L.psum(v * v, "i") + k * L.pmean(v, "i"), x)


def nested(x, L, m):
    """Inside a ``vmap`` over ``j`` inside a ``pmap`` over ``i``: collectives over each axis and both."""
    return L.psum(x, ("i", "j")) * x + L.pmean(m.sin(x), "i") - L.pmax(x, "j") + L.axis_index(("i", "j"))
