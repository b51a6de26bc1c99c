"""Shared test configuration: a per-session numbax cache unless the Makefile set one, and hypothesis
settings that make property tests deterministic and keep their example database out of the repository."""
import os
import tempfile

from hypothesis import settings

if not os.environ.get("NUMBAX_CACHE_DIR"):
    os.environ["NUMBAX_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), "numbax-test-cache")

settings.register_profile("numbax", database=None, derandomize=True, deadline=None)
settings.load_profile("numbax")
