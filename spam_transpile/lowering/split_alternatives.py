"""Readable layout: an or-pattern whose alternatives capture different
values is written as one case per alternative, its short body in each.

``case (Op.ADD, Num(0), x) | (Op.ADD, x, Num(0)): return x`` reads

    elif op == Op.ADD and isinstance(left, Num) and left.value == 0:
        return right
    elif op == Op.ADD and isinstance(right, Num) and right.value == 0:
        return left

as a person writes it, instead of one ``if`` over both alternatives and
``x = right if <the first alternative's test> else left`` after it. Exact
for a case with no guard: CPython tries the alternatives in order and runs
the body for the first that matches, which is what the chain does; a guard
that failed would send CPython to the next case, not the next alternative,
so a guarded case is never split.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from spam_transpile.lowering.emit import render_value
from spam_transpile.lowering.ir import (
    All,
    AnyOf,
    Choice,
    Cond,
    LoweredPattern,
    Value,
    all_of,
)

__all__ = ["MOST_ALTERNATIVES", "alternatives_of", "split_patterns"]

#: more alternatives than this keep one ``if``: the body would be written
#: as many times
MOST_ALTERNATIVES = 3


def split_patterns(
    case: cst.MatchCase, pattern: LoweredPattern, width: int
) -> Optional[List[Tuple[cst.MatchPattern, LoweredPattern]]]:
    """Each alternative of ``case``'s or-pattern, as the source spells it
    and lowered, where the case is written once per alternative (module
    docstring): no guard, a body of one or two short statements, and a
    capture whose value depends on the alternative that matched, chosen
    by a test longer than ``width`` (``x = shape.x if shape.y == 0 else
    shape.y`` reads well enough) or stored as each alternative matches."""
    if case.guard is not None or not isinstance(case.pattern, cst.MatchOr):
        return None
    if not _short(case.body) or not _chooses_at_length(pattern, width):
        return None
    alternatives = alternatives_of(pattern)
    if alternatives is None or all(
        alternative.bindings == alternatives[0].bindings for alternative in alternatives
    ):
        return None  # (every alternative stores the same: one ``if`` reads well)
    if len(alternatives) > MOST_ALTERNATIVES:
        return None
    spelled = [element.pattern for element in case.pattern.patterns]
    return list(zip(spelled, alternatives))


def alternatives_of(pattern: LoweredPattern) -> Optional[List[LoweredPattern]]:
    """``pattern`` (an or-pattern's, lowered: its shared tests, then one
    :class:`.AnyOf` over what each alternative tests besides) as one
    pattern per alternative, each storing the values that alternative
    chooses (or stores as it matches); None where it is not of that
    shape."""
    cond = pattern.cond
    parts = cond.parts if isinstance(cond, All) else (cond,)
    spots = [i for i, part in enumerate(parts) if isinstance(part, AnyOf)]
    if len(spots) != 1:
        return None
    spot = spots[0]
    either = parts[spot]
    assert isinstance(either, AnyOf)
    rests = either.alternatives
    out = []
    for number, rest in enumerate(rests):
        # (the values an alternative stores as it matches come first:
        # lower_or.stores_in_last_alternatives)
        bindings = list(either.stores[number]) if either.stores else []
        for name, value in pattern.bindings:
            if isinstance(value, Choice):
                chosen = _chosen(value, rests, number)
                if chosen is None:
                    return None
                value = chosen
            bindings.append((name, value))
        alternative = all_of(*parts[:spot], rest, *parts[spot + 1 :])
        out.append(LoweredPattern(alternative, tuple(bindings)))
    return out


def _chosen(choice: Choice, rests: Tuple[Cond, ...], number: int) -> Optional[Value]:
    """The value ``choice`` gives where alternative ``number`` matched (and
    none before it): its own option's, or where options that chose alike
    were joined, the next one kept (:func:`.lower_or.lower_or`)."""
    for test, value in choice.options:
        at = next((i for i, rest in enumerate(rests) if rest == test), None)
        if at is None:
            return None
        if at >= number:
            return value
    return None


def _chooses_at_length(pattern: LoweredPattern, width: int) -> bool:
    """Whether ``pattern`` stores values as its alternatives match, or
    chooses one by a test that makes its assignment longer than ``width``."""
    parts = pattern.cond.parts if isinstance(pattern.cond, All) else (pattern.cond,)
    if any(isinstance(part, AnyOf) and part.stores for part in parts):
        return True
    return any(
        isinstance(value, Choice)
        and len(f"{name} = {render_value(value, readable=True)}") > width
        for name, value in pattern.bindings
    )


def _short(body: cst.BaseSuite) -> bool:
    """One or two simple statements, no comment: short enough to write
    once per alternative."""
    if isinstance(body, cst.SimpleStatementSuite):
        return body.trailing_whitespace.comment is None
    assert isinstance(body, cst.IndentedBlock)
    if body.footer or body.header.comment is not None or len(body.body) > 2:
        return False
    return all(
        isinstance(line, cst.SimpleStatementLine)
        and not line.leading_lines
        and line.trailing_whitespace.comment is None
        for line in body.body
    )
