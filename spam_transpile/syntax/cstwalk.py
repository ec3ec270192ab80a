"""Walking LibCST trees by direct recursion over their fields.

LibCST's visitors rebuild every node they enter, even a visitor that changes
nothing; for the questions the checks and the lowering ask of a pattern or an
expression, that costs more than everything else they do with it.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Iterator, Tuple

import libcst as cst

__all__ = [
    "NODE_TYPES",
    "PATTERN_TYPES",
    "children",
    "contains",
    "descendants",
    "pattern_nodes",
]


def _subclasses(kind: type) -> Iterator[type]:
    sub: type
    for sub in kind.__subclasses__():
        yield sub
        yield from _subclasses(sub)


# Exact types, looked up in a set: isinstance() on LibCST's abstract classes
# is slow, and validation asks it of every pattern node.
PATTERN_TYPES = frozenset(_subclasses(cst.MatchPattern))
#: every LibCST node type, for the same reason
NODE_TYPES = frozenset(_subclasses(cst.CSTNode))


def pattern_nodes(p: cst.MatchPattern) -> Iterator[cst.CSTNode]:
    """``p`` and the patterns in it (and a mapping's elements), in text
    order."""
    yield p
    kind = type(p)
    if kind is cst.MatchAs and p.pattern is not None:  # type: ignore[attr-defined]
        yield from pattern_nodes(p.pattern)  # type: ignore[attr-defined]
    elif kind is cst.MatchOr:
        for alternative in p.patterns:  # type: ignore[attr-defined]
            yield from pattern_nodes(alternative.pattern)
    elif kind is cst.MatchList or kind is cst.MatchTuple:
        for element in p.patterns:  # type: ignore[attr-defined]
            if type(element) is cst.MatchStar:
                yield element
            else:
                yield from pattern_nodes(element.value)
    elif kind is cst.MatchMapping:
        for item in p.elements:  # type: ignore[attr-defined]
            yield item
            yield from pattern_nodes(item.pattern)
    elif kind is cst.MatchClass:
        for argument in p.patterns:  # type: ignore[attr-defined]
            yield from pattern_nodes(argument.value)
        for keyword in p.kwds:  # type: ignore[attr-defined]
            yield from pattern_nodes(keyword.pattern)


_FIELDS: Dict[type, Tuple[str, ...]] = {}


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes ``node`` holds, in field order."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(
            f.name for f in dataclasses.fields(type(node))
        )
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind in NODE_TYPES:
            yield value
        elif kind is tuple or kind is list:
            for item in value:
                if type(item) in NODE_TYPES:
                    yield item


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node inside it, depth first."""
    yield node
    for child in children(node):
        yield from descendants(child)


def contains(node: cst.CSTNode, kinds: Tuple[type, ...]) -> bool:
    """Whether ``node`` or a node inside it is of one of ``kinds`` (exact
    types)."""
    return any(type(inner) in kinds for inner in descendants(node))
