"""A long run of literal cases, tested in two halves (keep-lines layout).

CPython tests literal cases one after another: the 24th ``case 23:`` of a
switch costs 24 comparisons. When a match statement in a function starts
with a long run of cases whose patterns are int or str literals, or
alternatives of them, and that have no guard, the match line asks which
half of the run can hold the subject's case, with one set lookup, and the
chain is nested so that only that half's cases are tested::

    if (_spam_op1 := op if type(op) is int else _spam.first_equal(op, range(3))) in {0, 1, 2}:
        if _spam_op1 == 0:
                ...
        elif _spam_op1 == 1:
                ...
    elif op == 3:
            ...

Each case test stays on its case line, and no line moves. A subject that
is not a local name is stored by its first read: ``type(_spam_subject1 :=
event.kind) is int``.

Why it is exact:

- for a subject whose type is exactly ``int`` or ``str``, ``==`` against
  int and str literals is value equality and agrees with hashing, so the set
  lookup tells whether one of the first half's literals equals it, and the
  inner chain picks the first case that holds such a literal, as CPython's
  chain would;
- any other subject (a bool, a float, an enum, a class with its own
  ``__eq__``, an unhashable one) is compared by the helper's
  ``first_equal`` with the first half's literals in case order, as
  CPython's chain compares it, stopping at the first equal one. The inner
  chain then tests that literal, not the subject, so no ``__eq__`` runs
  twice: a subject whose ``__eq__`` answers differently each time still
  gets exactly one case. A subject equal to none of them goes on to the
  second half, whose cases compare it in their order;
- guards are not allowed in the run: a guard must run only after its own
  pattern matched, between the comparisons of earlier and later cases.

What differs from CPython: the line events of the case lines a half skips,
and, for a subject of another type whose ``__eq__`` raises, the line the
traceback shows (the match line, not the case line).

Costs: the set lookup and the type test cost about as much as three
comparisons, so below :data:`LEAST_LITERALS` literals the plain chain is
as fast. Module load is mostly compile time, about a microsecond per
literal of a display on 3.10, so ``first_equal`` gets consecutive ints as
``range(12)`` and words as ``"if elif else".split()`` where it can, and
the first half stays within :data:`LONGEST_VALUES` characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

import libcst as cst

from spam_transpile.checks.constants import constant_value
from spam_transpile.lowering.lower import Lowering
from spam_transpile.lowering.paths import operand, tuple_display

#: fewer literals in the run than this, and the split costs what it saves
LEAST_LITERALS = 16
#: the first half's literals, comma-separated, are at most this long
LONGEST_VALUES = 110


#: a case's literals: as written, and their values
_Literals = Tuple[List[str], List[object]]


@dataclass(frozen=True)
class LiteralSplit:
    """Cases ``[0, first)`` are tested inside ``if test:``, against ``name``."""

    first: int
    test: str
    name: str


def split_literal_run(
    cases: Sequence[cst.MatchCase],
    subject: str,
    first_read: str,
    low: Lowering,
    name: Callable[[], str],
) -> Optional[LiteralSplit]:
    """The split for a match whose subject the name ``subject`` holds once
    ``first_read`` (that name, or ``temp := expression``, an argument of
    ``type()``) ran, or None
    when its leading literal run is too short to gain from one."""
    run = _literal_run(cases, low)
    weights = [len(texts) for texts, _ in run]
    if sum(weights) < LEAST_LITERALS:
        return None
    first = _half(weights)
    # The first half's literals are spelled twice on the match line: a
    # shorter first half keeps the line short and still gains.
    while first and len(", ".join(_texts(run[:first]))) > LONGEST_VALUES:
        first -= 1
    if sum(weights[:first]) < LEAST_LITERALS // 4:
        return None
    texts = _texts(run[:first])
    types = sorted({type(value).__name__ for _, values in run for value in values})
    reads = [first_read] + [subject] * (len(types) - 1)
    exact = " or ".join(
        f"{low.b('type')}({read}) is {low.b(t)}" for read, t in zip(reads, types)
    )
    values = [value for _, case_values in run[:first] for value in case_values]
    lookup = f"{low.helper('first_equal')}({subject}, {_in_order(texts, values, low)})"
    temp = name()
    test = f"({temp} := {subject} if {exact} else {lookup}) in {{{', '.join(texts)}}}"
    return LiteralSplit(first, test, temp)


def _texts(run: Sequence[_Literals]) -> List[str]:
    return [text for texts, _ in run for text in texts]


def _in_order(texts: List[str], values: List[object], low: Lowering) -> str:
    """The literals in case order, as ``first_equal`` reads them.

    Module load is mostly compile time, and a display of N literals compiles
    N constants: consecutive ints are spelled ``range(12)`` and words
    ``"if elif else".split()`` (one constant) where they can be.
    """
    first = values[0]
    if type(first) is int and values == list(range(first, first + len(values))):
        bounds = f"{first}, {first + len(values)}" if first else f"{len(values)}"
        return f"{low.b('range')}({bounds})"
    quote = "'" if texts[0].startswith("'") else '"'
    if all(type(v) is str and _word(v, quote) for v in values):
        return f"{quote}{' '.join(values)}{quote}.split()"  # type: ignore[arg-type]
    return tuple_display(texts)


def _word(value: str, quote: str) -> bool:
    """Whether ``value`` is spelled the same inside ``quote``s, and
    ``str.split`` gives it back whole."""
    return bool(value) and not any(
        c.isspace() or c in (quote, "\\") or not c.isprintable() for c in value
    )


def _literal_run(cases: Sequence[cst.MatchCase], low: Lowering) -> List[_Literals]:
    """The literals of each leading case that is an int or str literal
    pattern, or alternatives of such, without a guard."""
    run = []
    for case in cases:
        if case.guard is not None:
            break
        literals = _literals(case.pattern, low)
        if literals is None:
            break
        run.append(literals)
    return run


def _literals(pattern: cst.MatchPattern, low: Lowering) -> Optional[_Literals]:
    alternatives = (
        [element.pattern for element in pattern.patterns]
        if isinstance(pattern, cst.MatchOr)
        else [pattern]
    )
    texts: List[str] = []
    values: List[object] = []
    for alternative in alternatives:
        if not isinstance(alternative, cst.MatchValue):
            return None
        value = constant_value(alternative.value)
        # bool is an int subclass, and is not what `is int` lets through
        if type(value) not in (int, str):
            return None
        texts.append(operand(low, alternative.value))
        values.append(value)
    return texts, values


def _half(weights: List[int]) -> int:
    """The case where the run's first half (by literals to compare) ends."""
    total, seen = sum(weights), 0
    for index, weight in enumerate(weights):
        seen += weight
        if 2 * seen >= total:
            return index + 1 if index + 1 < len(weights) else index
    return 0
