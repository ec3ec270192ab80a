"""Which captures the readable layout declares before a match's ``if``
chain, in a function, and with which type (``name: object``)."""

from __future__ import annotations

from typing import FrozenSet, List, Sequence

import libcst as cst

from spam_transpile.lowering.ir import LoweredPattern
from spam_transpile.lowering.readable_passes import (
    read_differently,
    typed_by_class_and_assigned,
)
from spam_transpile.lowering.scopes import bound_besides, bound_outside

__all__ = ["declared_captures", "may_be_declared"]


def declared_captures(
    function: cst.FunctionDef,
    match: cst.Match,
    lowered: Sequence[LoweredPattern],
    stored: Sequence[str],
    annotated: bool,
) -> List[str]:
    """The captures of ``match`` (as the source has it) that ``function``
    declares before the chain:

    - ``stored``: those a test stores through their cells before 3.8 (a
      guarded case's, an or-pattern's): the compiler must see them as locals
      of the function (keep-lines declares them on the match line);
    - in an ``annotated`` function, those cases capture from attributes of
      different classes, and those a class pattern checks that another
      case's body assigns: a type checker types a variable by its first
      assignment, where it typed a capture by the union of the match's
      captures; declared ``object``, each assignment narrows it to what it
      stores (a star capture is declared ``list``, a ``**rest`` one
      ``dict``: what they always are).

    Never a name the function binds otherwise, nor a global or nonlocal one:
    a declaration after a binding is an error for mypy (and of a global
    one, for CPython).
    """
    wanted = list(dict.fromkeys(stored))
    conflicting: List[str] = []
    if annotated:
        wanted += [n for n in read_differently(lowered) if n not in wanted]
        conflicting = typed_by_class_and_assigned(match)
    bound = bound_besides(function, match) if wanted else frozenset()
    declared = [name for name in wanted if name not in bound]
    if conflicting:
        # (the bodies bind these too: declared before them)
        outside = bound_outside(function, match)
        declared += [
            name for name in conflicting if name not in declared and name not in outside
        ]
    return declared


def may_be_declared(
    match: cst.Match, lowered: Sequence[LoweredPattern]
) -> FrozenSet[str]:
    """The captures :func:`declared_captures` declares in an annotated
    function whatever the target: those read from attributes of different
    classes, those a class checks that another body assigns (those stored
    before 3.8 only show once the chain is printed). Where a capture is
    declared ``object``, a type checker reads what is assigned to it as
    ``object``: an item unpacked from a sequence (``major, minor = value``)
    then loses the class its pattern checked."""
    return frozenset(read_differently(lowered)) | frozenset(
        typed_by_class_and_assigned(match)
    )
