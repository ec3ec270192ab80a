"""Where in a LibCST tree a match statement (or a pattern) can be.

A match statement is a compound statement: it only sits in the block of a
module or of another compound statement, never in an expression or a simple
statement. Walks that look for match statements or patterns follow only the
parts listed here, by their fields: LibCST's generic ``children`` rebuilds
every node it lists, and a walk through every expression, whitespace and
simple statement of a file costs more than the rest of the transpiler.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Sequence, Tuple

import libcst as cst

__all__ = ["MAY_HOLD_MATCH", "parts_holding_matches"]

_Parts = Callable[[Any], Sequence[Any]]


def _body(node: Any) -> Tuple[Any, ...]:
    return (node.body,)


def _body_and_else(node: Any) -> Tuple[Any, ...]:
    return (node.body, node.orelse)


def _try(node: Any) -> Tuple[Any, ...]:
    return (node.body, *node.handlers, node.orelse, node.finalbody)


def _statements(node: Any) -> Sequence[Any]:
    return node.body


def _cases(node: cst.Match) -> Sequence[Any]:
    return node.cases


def _case(node: cst.MatchCase) -> Tuple[Any, ...]:
    return (node.pattern, node.body)  # the guard is an expression


# Each node type that can hold a match statement (or, for MatchCase, a
# pattern), with its parts in text order; exact types, since isinstance() on
# LibCST's abstract classes is slow.
_PARTS: Dict[type, _Parts] = {
    cst.Module: _statements,
    cst.IndentedBlock: _statements,
    cst.If: _body_and_else,
    cst.For: _body_and_else,
    cst.While: _body_and_else,
    cst.Try: _try,
    cst.TryStar: _try,
    cst.Else: _body,
    cst.ExceptHandler: _body,
    cst.ExceptStarHandler: _body,
    cst.Finally: _body,
    cst.With: _body,
    cst.FunctionDef: _body,
    cst.ClassDef: _body,
    cst.Match: _cases,
    cst.MatchCase: _case,
}

MAY_HOLD_MATCH = frozenset(_PARTS)


def parts_holding_matches(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The parts of ``node`` that may hold a match statement or a pattern, in
    text order (nothing for any other node)."""
    parts = _PARTS.get(type(node))
    if parts is None:
        return ()
    return [part for part in parts(node) if part is not None]
