"""Cases no subject can reach, found by comparing patterns (the talk's plan).

A case is unreachable when an earlier case without a guard matches every
subject the later one matches: ``case _, 0`` / ``case 0, _`` / ``case 0, 0``
never runs its third body. CPython accepts such code, so this is a warning,
never an error, and it must never be wrong: ``covers(p, q)`` answers True
only when every subject matching ``q`` provably matches ``p`` whatever the
objects' ``__eq__`` and ``__instancecheck__`` do, and False whenever unsure
(``1`` and ``1.0`` are different patterns here, though ``1 == 1.0``).
"""

from __future__ import annotations

import ast
import functools
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.syntax.codegen import code_for, without_parens


def unreachable_cases(match: cst.Match) -> List[Tuple[int, Tuple[int, ...]]]:
    """(index of an unreachable case, indexes of the earlier cases covering it).

    A case whose pattern is a bare literal or singleton can only be covered
    by the first earlier bare one with the same key, or by an earlier case of
    another kind: looking the former up in a dict keeps a match of thousands
    of literal cases linear.
    """
    found: List[Tuple[int, Tuple[int, ...]]] = []
    earlier = _Earlier()
    not_constant = _Earlier()
    first_with_key: Dict[object, int] = {}
    for later, case in enumerate(match.cases):
        key = _bare_constant_key(case.pattern)
        if key is None:
            covering = _covered_by(earlier, case.pattern)
        else:
            covering = _covered_by(not_constant, case.pattern)
            if key in first_with_key and (
                covering is None or first_with_key[key] < covering[0]
            ):
                covering = [first_with_key[key]]
        if covering is not None:
            found.append((later, tuple(sorted(set(covering)))))
        if case.guard is None:
            earlier.add(later, case.pattern)
            if key is None:
                not_constant.add(later, case.pattern)
            else:
                first_with_key.setdefault(key, later)
    return found


def _bare_constant_key(p: cst.MatchPattern) -> Optional[object]:
    """What covers() compares for a bare value or singleton pattern, or None."""
    if type(p) is cst.MatchValue or type(p) is cst.MatchSingleton:
        return (type(p).__name__, _constant_key(p))
    return None


# The head of an irrefutable pattern: it may cover anything.
_ANY = ("any",)


def _heads(p: cst.MatchPattern) -> FrozenSet[tuple]:
    """What decides, before any comparison, which patterns ``p`` may cover or
    be covered by: covers(p, q) is False unless p is irrefutable (its heads
    hold _ANY) or the two share a head (the same kind of pattern: the same
    literal, class or kind of container)."""
    if type(p) is cst.MatchAs:
        return frozenset([_ANY]) if p.pattern is None else _heads(p.pattern)
    if type(p) is cst.MatchOr:
        return frozenset().union(*(_heads(a.pattern) for a in p.patterns))
    if type(p) is cst.MatchValue or type(p) is cst.MatchSingleton:
        return frozenset([(type(p).__name__, _constant_key(p))])
    if type(p) in _SEQUENCES:
        return frozenset([("sequence",)])
    if type(p) is cst.MatchMapping:
        return frozenset([("mapping",)])
    if type(p) is cst.MatchClass:
        return frozenset([("class", _dotted(p.cls))])
    return frozenset()  # covers() knows no other kind: it covers nothing


class _Earlier:
    """The earlier unguarded cases, found by head: comparing a case only with
    those that may cover it keeps a match of many kinds of cases linear."""

    def __init__(self) -> None:
        self._by_head: Dict[tuple, List[Tuple[int, cst.MatchPattern]]] = {}

    def add(self, index: int, p: cst.MatchPattern) -> None:
        for head in _heads(p):
            self._by_head.setdefault(head, []).append((index, p))

    def candidates(self, q: cst.MatchPattern) -> List[Tuple[int, cst.MatchPattern]]:
        """Every earlier case that may cover ``q``, in case order."""
        found: Dict[int, cst.MatchPattern] = {}
        for head in _heads(q) | {_ANY}:
            found.update(self._by_head.get(head, ()))
        return sorted(found.items(), key=lambda item: item[0])


def _covered_by(earlier: _Earlier, q: cst.MatchPattern) -> Optional[List[int]]:
    """Indexes of earlier cases that together cover ``q``, or None.

    An or-pattern may be covered piecewise: ``case 1`` and ``case 2`` leave
    nothing for a later ``case 1 | 2``.
    """
    single = next((i for i, p in earlier.candidates(q) if covers(p, q)), None)
    if single is not None:
        return [single]
    if type(q) is cst.MatchAs and q.pattern is not None:
        return _covered_by(earlier, q.pattern)
    if type(q) is cst.MatchOr:
        indexes: List[int] = []
        for alternative in q.patterns:
            part = _covered_by(earlier, alternative.pattern)
            if part is None:
                return None
            indexes += part
        return indexes
    return None


# Patterns are told apart by exact type: isinstance() on LibCST's abstract
# classes is slow, and covers() runs for many pairs of cases.
_SEQUENCES = (cst.MatchList, cst.MatchTuple)


def covers(p: cst.MatchPattern, q: cst.MatchPattern) -> bool:
    """Does every subject that matches ``q`` also match ``p``?"""
    if is_irrefutable(p):
        return True
    p_kind, q_kind = type(p), type(q)
    if p_kind is cst.MatchAs and p.pattern is not None:  # type: ignore[attr-defined]
        return covers(p.pattern, q)  # type: ignore[attr-defined]
    if q_kind is cst.MatchAs:
        return q.pattern is not None and covers(p, q.pattern)  # type: ignore
    if q_kind is cst.MatchOr:
        return all(covers(p, alt.pattern) for alt in q.patterns)  # type: ignore
    if p_kind is cst.MatchOr:
        return any(covers(alt.pattern, q) for alt in p.patterns)  # type: ignore
    if p_kind is cst.MatchValue or p_kind is cst.MatchSingleton:
        return p_kind is q_kind and _constant_key(p) == _constant_key(q)  # type: ignore
    if p_kind in _SEQUENCES:
        return q_kind in _SEQUENCES and _sequence_covers(p, q)  # type: ignore
    if p_kind is cst.MatchMapping:
        return q_kind is cst.MatchMapping and _mapping_covers(p, q)  # type: ignore
    if p_kind is cst.MatchClass:
        return q_kind is cst.MatchClass and _class_covers(p, q)  # type: ignore
    return False


def is_irrefutable(p: cst.MatchPattern) -> bool:
    kind = type(p)
    if kind is cst.MatchAs:
        return p.pattern is None or is_irrefutable(p.pattern)  # type: ignore
    if kind is cst.MatchOr:
        return any(is_irrefutable(alt.pattern) for alt in p.patterns)  # type: ignore
    return False


def _constant_key(p: Union[cst.MatchValue, cst.MatchSingleton]) -> Optional[tuple]:
    """A key equal for two patterns only if they compare against the same thing."""
    if type(p) is cst.MatchSingleton:
        return ("singleton", p.value.value)
    return _value_key(p.value)


# Cases are compared pairwise: each value's text is generated once. Nodes hash
# by identity; the cache keeps alive only the few small value nodes it holds.
@functools.lru_cache(maxsize=4096)
def _value_key(value: cst.BaseExpression) -> Optional[tuple]:
    text = code_for(without_parens(value))
    if isinstance(value, (cst.Name, cst.Attribute)):
        # The same dotted name names the same object when both cases run.
        return ("value", "".join(text.split()))
    return _literal_key(text.strip())


@functools.lru_cache(maxsize=1024)
def _literal_key(text: str) -> Optional[tuple]:
    # Cases are compared pairwise: evaluate each literal's text once.
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None  # f-strings and the like: never claim anything
    return ("literal", type(value).__name__, repr(value))


Element = Union[cst.MatchSequenceElement, cst.MatchStar]


def _split(elements: Sequence[Element]) -> Tuple[list, Optional[list]]:
    """(patterns before the star, patterns after it or None if no star)."""
    for i, element in enumerate(elements):
        if type(element) is cst.MatchStar:
            return [e.value for e in elements[:i]], [e.value for e in elements[i + 1 :]]  # type: ignore[union-attr]
    return [e.value for e in elements], None  # type: ignore[union-attr]


def _all_cover(ps: Sequence[cst.MatchPattern], qs: Sequence[cst.MatchPattern]) -> bool:
    return len(ps) == len(qs) and all(covers(p, q) for p, q in zip(ps, qs))


def _sequence_covers(
    p: Union[cst.MatchList, cst.MatchTuple], q: Union[cst.MatchList, cst.MatchTuple]
) -> bool:
    p_head, p_tail = _split(p.patterns)
    q_head, q_tail = _split(q.patterns)
    if p_tail is None:
        return q_tail is None and _all_cover(p_head, q_head)
    if q_tail is None:
        # q fixes the length; p's star takes whatever lies between.
        if len(q_head) < len(p_head) + len(p_tail):
            return False
        return _all_cover(p_head, q_head[: len(p_head)]) and _all_cover(
            p_tail, q_head[len(q_head) - len(p_tail) :]
        )
    return (
        len(q_head) >= len(p_head)
        and len(q_tail) >= len(p_tail)
        and _all_cover(p_head, q_head[: len(p_head)])
        and _all_cover(p_tail, q_tail[len(q_tail) - len(p_tail) :])
    )


def _mapping_covers(p: cst.MatchMapping, q: cst.MatchMapping) -> bool:
    q_values = {}
    for element in q.elements:
        key = _value_key(element.key)
        if key is None:
            return False
        q_values[key] = element.pattern
    for element in p.elements:
        key = _value_key(element.key)
        if (
            key is None
            or key not in q_values
            or not covers(element.pattern, q_values[key])
        ):
            return False
    return True  # p's **rest matches whatever is left


def _class_covers(p: cst.MatchClass, q: cst.MatchClass) -> bool:
    if _dotted(p.cls) != _dotted(q.cls):
        return False
    p_pos = [arg.value for arg in p.patterns]
    q_pos = [arg.value for arg in q.patterns]
    if len(p_pos) > len(q_pos) or not all(covers(a, b) for a, b in zip(p_pos, q_pos)):
        return False
    q_kwds = {kw.key.value: kw.pattern for kw in q.kwds}
    return all(
        kw.key.value in q_kwds and covers(kw.pattern, q_kwds[kw.key.value])
        for kw in p.kwds
    )


@functools.lru_cache(maxsize=4096)  # as _value_key: each class name once
def _dotted(node: cst.BaseExpression) -> str:
    return "".join(code_for(without_parens(node)).split())
