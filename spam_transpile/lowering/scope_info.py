"""What the walk knows of the scope a match statement is in: module, class
or function, its stable local names, its declarations, and what the
lowering of its earlier match statements left to declare."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from spam_transpile.lowering.quiet_captures import quiet_captures, reads_own_frame
from spam_transpile.lowering.scopes import declarations, stable_locals

MODULE, CLASS, FUNCTION = "module", "class", "function"


@dataclass
class Scope:
    kind: str
    node: Optional[cst.CSTNode] = None
    stable: Optional[frozenset] = None
    #: works ``stable`` out from the standard tree, once asked: most
    #: functions hold no match statement and never are
    stable_from: Optional[Callable[[], frozenset]] = None
    declared: Optional[Tuple[frozenset, frozenset]] = None
    #: id of the scope's first match statement in source order
    first_match: Optional[int] = None
    #: ``try``/``with`` statements of this scope around the statement being
    #: visited: code of theirs can run after a ``return`` in it
    around: int = 0
    #: captures that may be stored before their case matched (early_binding)
    quiet: Optional[FrozenSet[str]] = None
    #: whether the function reads its own frame (early_binding.reads_own_frame)
    frame_read: Optional[bool] = None
    #: temporaries of class bodies in it, to declare as its variables
    #: (class_temps)
    declare: Optional[List[str]] = None
    #: a class body whose match lines declared the helper ``global``
    helper_global: bool = False
    #: readable: the module names a class body's match statements declared
    #: ``global`` (the helper, the ABCs the layout imports)
    globals_declared: Set[str] = field(default_factory=set)
    #: a class's temporaries (of class bodies in it) that its bases bind as
    #: variables of the enclosing function (class_temps_holder)
    header_temps: Optional[List[str]] = None

    def quiet_captures(self) -> FrozenSet[str]:
        """Only asked where the function is known not to read its frame."""
        if self.quiet is None:
            assert isinstance(self.node, cst.FunctionDef)
            self.quiet = quiet_captures(self.node, reads_frame=False)
        return self.quiet

    def reads_own_frame(self) -> bool:
        if self.frame_read is None:
            assert isinstance(self.node, cst.FunctionDef)
            self.frame_read = reads_own_frame(self.node)
        return self.frame_read

    def declared_globals(self) -> frozenset:
        return self.declarations()[0]

    def declared_nonlocals(self) -> frozenset:
        return self.declarations()[1]

    def declarations(self) -> Tuple[frozenset, frozenset]:
        """The names the function or class body declares global, nonlocal."""
        if self.declared is None:
            assert isinstance(self.node, (cst.FunctionDef, cst.ClassDef))
            self.declared = declarations(self.node)
        return self.declared

    def stable_names(self, walrus_possible: bool = True) -> frozenset:
        if self.stable is None and self.stable_from is not None:
            self.stable = self.stable_from()
        if self.stable is None:
            assert isinstance(self.node, cst.FunctionDef)
            self.stable = stable_locals(self.node, walrus_possible)
        return self.stable
