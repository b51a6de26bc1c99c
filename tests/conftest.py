"""Shared test configuration: a per-session numbax cache unless the Makefile set one, and hypothesis
settings that make property tests deterministic and keep their example database out of the repository."""
import os
import tempfile

from hypothesis import settings

if not os.environ.get("NUMBAX_CACHE_DIR"):
    os.environ["NUMBAX_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), "numbax-test-cache")
# Hypothesis caches what it learns (constants found in the source) in .hypothesis/ of the working
# directory even without an example database: keep it out of the checkout.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "numbax-hypothesis"))

settings.register_profile("numbax", database=None, derandomize=True, deadline=None)
settings.load_profile("numbax")
