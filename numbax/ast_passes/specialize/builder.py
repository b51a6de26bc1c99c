"""State shared by every function specialized for one compilation: names, helpers, constants."""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

import gast

from numbax.ast_passes.naming import Namer
from numbax.ast_passes.specialize.materialize import Materializer


class ModuleBuilder:
    """Collects the specialized main function and the helpers it calls."""

    def __init__(self):
        self.namer = Namer()
        self.function_names = Namer()
        self.imports: Set[str] = {"import numpy as np"}
        self.materializer = Materializer(self.namer, self.imports)
        self.helpers: List[gast.FunctionDef] = []
        self.stack: List[int] = []
        self.static_attempts = 0
        self.reads_avals = False
        self.differentiated = False  # a transformation rewrites what is specialized here (``grad`` of it)
        self.examples_per_thread = False  # for the GPU backend: vmap's loops run one example per thread
        self.parsed: Dict[Any, Tuple[gast.FunctionDef, Any]] = {}  # user function -> (tree, namespace)
        # id(tree) -> (the tree, kept alive so that its id stays its own; names in it; names it assigns)
        self.names_of: Dict[int, Tuple[gast.FunctionDef, Set[str], FrozenSet[str]]] = {}
        # a nested transformation's key -> (it, its generated code): ``numbax.transforms.nesting.generate``
        self.generated: Dict[tuple, Tuple[Any, Any]] = {}


@dataclasses.dataclass
class ReturnSpec:
    """What a specialized function returns: the pytree structure and which leaves are run-time."""

    treedef: Any
    statics: Tuple[Any, ...]  # per leaf: DYNAMIC or the compile-time value
    avals: Tuple[Any, ...] = ()  # per DYNAMIC leaf: its abstract value where every return agrees on it, or None

    @property
    def num_dynamic(self) -> int:
        """How many leaves generated code returns."""
        return sum(1 for s in self.statics if s is DYNAMIC)


class _Dynamic:
    def __repr__(self):
        return "DYNAMIC"


DYNAMIC = _Dynamic()


@dataclasses.dataclass
class Helper:
    """A specialized user function and what its call site passes to it."""

    node: gast.FunctionDef
    arguments: List[Any]
    returns: Optional[ReturnSpec]


@dataclasses.dataclass
class Specialized:
    """The output of specialization: a module of flat functions and how to call the main one.

    ``module`` holds the helpers first and the main function last. The main
    function's parameters are the leaves of the dynamic arguments, flattened in
    order, followed by ``constants``: arrays the function captured, passed as
    trailing parameters.
    """

    module: gast.Module
    name: str
    imports: List[str]
    constants: Dict[str, Any]
    returns: Optional[ReturnSpec]
    reads_avals: bool = False
