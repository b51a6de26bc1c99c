"""A differential tester for numbax: generated NumPy programs, each run through ``jit``, ``grad`` and
``vmap`` and compared with NumPy, JAX (float64) and central differences.

``grammar`` writes the programs (hypothesis strategies), ``inputs`` draws their arguments, ``loader``
imports them from real files, ``references`` computes what the right answer is, ``classify`` runs numbax
and sorts each outcome into right / refused / unchecked / wrong / internal, ``run`` is the command line
(``python -m tests.fuzz.run``), and ``test_fuzz`` / ``test_found`` are the in-suite tests.
"""
