"""Shared test configuration: a per-session numbax cache unless the Makefile set one."""
import os
import tempfile

if not os.environ.get("NUMBAX_CACHE_DIR"):
    os.environ["NUMBAX_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), "numbax-test-cache")
