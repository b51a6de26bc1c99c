"""Annotations on syntax-tree nodes, keyed by an enum whose values document them.

Only facts that must survive tree copies live here (where a node came from);
analyses return their results instead of hiding them on nodes.
"""
from __future__ import annotations

import enum
from typing import Any

_FIELD = "_numbax_anno"


class Key(enum.Enum):
    """The annotation keys."""

    ORIGIN = "the Origin (user file, line, column) the node was written at"
    GRAD_OF = "the user's source line whose adjoint this statement computes"
    TANGENT_OF = "the user's source line whose tangent this statement computes"
    CHECK = "the run-time check (a run_time_checks.Check) of a subscript, operation or call the user wrote"
    IN_PLACE = "an assignment x_1 = x + y written for the user's x += y: it writes into the memory of x"
    SCALAR_CAST = ("a cast numbax wrote around a 0-d operation to NumPy's scalar dtype (np.int8(a + b), "
                   "np.bool(a @ b)): the operation's run-time check is made of the operation inside it")
    BATCH_LOOP = ("a loop vmap wrote over examples 1, 2, ...: the first example's code, run before it, computed "
                  "whatever its body computes from values that do not change in it; or, that code folded into "
                  "it (first_example), over examples 0, 1, ..., at least one")
    STAGED = ("a loop vmap wrote over all the examples of an axis with collectives (a stages.Staged): the "
              "collectives pass cuts it into stages at them")
    PER_THREAD = ("a loop vmap wrote over all examples for the GPU backend, each iteration one example's whole "
                  "body: it becomes one kernel, each thread running the iterations of its examples")


def setanno(node: Any, key: Key, value: Any) -> None:
    """Attach ``value`` under ``key`` to ``node``."""
    annos = node.__dict__.setdefault(_FIELD, {})
    annos[key] = value


def getanno(node: Any, key: Key, default: Any = None) -> Any:
    """The value under ``key`` on ``node``, or ``default``."""
    return node.__dict__.get(_FIELD, {}).get(key, default)


def hasanno(node: Any, key: Key) -> bool:
    """Whether ``node`` carries ``key``."""
    return key in node.__dict__.get(_FIELD, {})


def copyanno(source: Any, target: Any) -> Any:
    """Copy every annotation of ``source`` onto ``target`` (kept ones win); returns ``target``."""
    for key, value in source.__dict__.get(_FIELD, {}).items():
        if not hasanno(target, key):
            setanno(target, key, value)
    return target


def delanno(node: Any, key: Key) -> None:
    """Remove ``key`` from ``node`` (a pass that has acted on a mark consumes it)."""
    node.__dict__.get(_FIELD, {}).pop(key, None)


def derived(stmt: Any, origin: Any, key: Key) -> Any:
    """``stmt``, written for the statement ``origin`` (its adjoint, ``Key.GRAD_OF``, or its tangent,
    ``Key.TANGENT_OF``): ``origin``'s location and annotations, and under ``key`` the user's line."""
    import gast

    gast.copy_location(stmt, origin)
    copyanno(origin, stmt)
    source = getanno(origin, Key.ORIGIN)
    if source is not None:
        setanno(stmt, key, source.line.strip())
    return stmt
