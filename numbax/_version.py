"""numbax's version, in a module of its own: what records it (the cache's stamp) need not import numbax."""
__version__ = "0.1.0.dev0"
