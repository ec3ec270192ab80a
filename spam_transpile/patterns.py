"""Walking LibCST's pattern nodes, shared by the checks and the lowering."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

__all__ = ["PATTERN_TYPES", "pattern_nodes"]


def _subclasses(kind: type) -> Iterator[type]:
    sub: type
    for sub in kind.__subclasses__():
        yield sub
        yield from _subclasses(sub)


# Exact types, looked up in a set: isinstance() on LibCST's abstract classes
# is slow, and validation asks it of every pattern node.
PATTERN_TYPES = frozenset(_subclasses(cst.MatchPattern))


def pattern_nodes(p: cst.MatchPattern) -> Iterator[cst.CSTNode]:
    """``p`` and the patterns in it (and a mapping's elements), in text
    order, by direct recursion: LibCST's visitors rebuild every node they
    pass, which costs more than the lowering of the pattern."""
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
