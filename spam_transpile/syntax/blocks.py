"""Where in a LibCST tree a match statement (or a pattern) can be.

A match statement is a compound statement: it only sits in the block of a
module or of another compound statement, never in an expression or a simple
statement. Walks that look for match statements or patterns follow only the
parts listed here, by their fields: LibCST's generic ``children`` rebuilds
every node it lists, and a walk through every expression, whitespace and
simple statement of a file costs more than the rest of the transpiler.

:func:`rewrite_blocks` is ``node.visit(transformer)`` for a transformer that
only acts on these nodes: LibCST's own walk offers every node of the file to
the transformer and rebuilds each one it enters.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

__all__ = ["MAY_HOLD_MATCH", "parts_holding_matches", "rewrite_blocks"]

# Each node type that can hold a match statement (or, for MatchCase, a
# pattern), with the fields that hold it, in text order; exact types, since
# isinstance() on LibCST's abstract classes is slow.
_FIELDS: Dict[type, Tuple[str, ...]] = {
    cst.Module: ("body",),
    cst.IndentedBlock: ("body",),
    cst.If: ("body", "orelse"),
    cst.For: ("body", "orelse"),
    cst.While: ("body", "orelse"),
    cst.Try: ("body", "handlers", "orelse", "finalbody"),
    cst.TryStar: ("body", "handlers", "orelse", "finalbody"),
    cst.Else: ("body",),
    cst.ExceptHandler: ("body",),
    cst.ExceptStarHandler: ("body",),
    cst.Finally: ("body",),
    cst.With: ("body",),
    cst.FunctionDef: ("body",),
    cst.ClassDef: ("body",),
    cst.Match: ("cases",),
    cst.MatchCase: ("pattern", "body"),  # the guard is an expression
}

MAY_HOLD_MATCH = frozenset(_FIELDS)

# Sequences LibCST visits as statement bodies (visit_body_sequence).
_BODIES = frozenset({cst.Module, cst.IndentedBlock})

_Result = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]


def parts_holding_matches(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The parts of ``node`` that may hold a match statement or a pattern, in
    text order (nothing for any other node)."""
    parts: List[cst.CSTNode] = []
    for name in _FIELDS.get(type(node), ()):
        value = getattr(node, name)
        if isinstance(value, (list, tuple)):
            parts.extend(value)
        elif value is not None:
            parts.append(value)
    return parts


def rewrite_blocks(node: cst.CSTNode, transformer: cst.CSTTransformer) -> _Result:
    """``node.visit(transformer)`` for a transformer that enters no node but
    those of MAY_HOLD_MATCH and changes no other (it has no ``visit_`` or
    ``leave_`` method for them): other nodes are neither offered to it nor
    rebuilt, and a node none of whose parts changed is kept as it is."""
    if not transformer.on_visit(node):
        return transformer.on_leave(node, node)
    changes: Dict[str, Any] = {}
    for name in _FIELDS[type(node)]:
        value = getattr(node, name)
        if isinstance(value, (list, tuple)):
            rewritten = _rewrite_sequence(value, transformer, type(node) in _BODIES)
            if rewritten is not None:
                changes[name] = rewritten
        elif value is not None:
            single = _rewrite_part(value, transformer)
            if single is not value:
                changes[name] = single
    updated = node.with_changes(**changes) if changes else node
    return transformer.on_leave(node, updated)


def _rewrite_part(
    node: cst.CSTNode, transformer: cst.CSTTransformer
) -> Optional[cst.CSTNode]:
    """A part that is one node: None where the transformer removed it (an
    optional part, as LibCST's visit_optional has it)."""
    if type(node) not in MAY_HOLD_MATCH:
        return node
    result = rewrite_blocks(node, transformer)
    if isinstance(result, cst.RemovalSentinel):
        return None
    if isinstance(result, cst.FlattenSentinel):
        raise TypeError(f"a {type(node).__name__} cannot become a sequence")
    return result


def _rewrite_sequence(
    children: Sequence[cst.CSTNode], transformer: cst.CSTTransformer, body: bool
) -> Optional[Tuple[cst.CSTNode, ...]]:
    """The rewritten sequence, or None if no child changed. As in LibCST's
    visit_body_sequence, a statement body drops a child the transformer left
    empty (removable) where the original was not."""
    out: List[cst.CSTNode] = []
    changed = False
    for child in children:
        if type(child) not in MAY_HOLD_MATCH:
            out.append(child)
            continue
        result = rewrite_blocks(child, transformer)
        if result is child:
            out.append(child)
            continue
        changed = True
        if isinstance(result, cst.RemovalSentinel):
            continue
        items = list(result) if isinstance(result, cst.FlattenSentinel) else [result]
        for item in items:
            if body and not child._is_removable() and item._is_removable():
                continue
            out.append(item)
    return tuple(out) if changed else None
