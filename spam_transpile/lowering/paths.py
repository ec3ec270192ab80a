"""A path from the subject, as the lowering of every pattern kind reads it:
:class:`Subject` (its text, and its kind and length where known), and the
tests and reads each kind writes on a path (``len``, the kind check, an
item).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst
from spam_transpile.lowering.ir import (
    ONE_OF,
    Cond,
    LoweredPattern,
    Test,
    Value,
    map_tests,
)

if TYPE_CHECKING:
    from spam_transpile.lowering.lower import Lowering


Bindings = List[Tuple[str, Value]]
Lowered = Tuple[Cond, Bindings]


class Subject:
    """What is known about a path: its text, and its kind/length if known."""

    def __init__(
        self,
        text: str,
        kind: Optional[str] = None,
        length: Optional[int] = None,
        missing_reads_none: bool = False,
    ) -> None:
        self.text = text
        self.kind = kind
        self.length = length
        #: a read that gives None where the key or attribute is missing
        #: (``v.get(k)``, ``getattr(v, 'x', None)``): often None
        self.missing_reads_none = missing_reads_none
        #: element paths of a tuple-display subject (``match a, b:``)
        self.elements: Optional[List[str]] = None
        #: readable: the fields of the ``NamedTuple`` it is declared to be,
        #: which read its items by name (declared_subjects)
        self.items: Optional[Tuple[str, ...]] = None
        #: readable: ``items`` of each element path that has them
        self.element_items: Dict[str, Tuple[str, ...]] = {}
        #: readable: what each of its items is declared to be, where it is a
        #: sequence declared of one item type (a ``DeclaredType``)
        self.item_type: Optional[Any] = None
        #: readable: ``item_type`` of each element path that has one
        self.element_item_types: Dict[str, Any] = {}


def tuple_display(items: Sequence[str]) -> str:
    """``(a, b)``, ``(a,)`` or ``()``."""
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def is_wildcard(pattern: cst.MatchPattern) -> bool:
    return (
        isinstance(pattern, cst.MatchAs)
        and pattern.pattern is None
        and pattern.name is None
    )


_DOTTED = re.compile(r"[^\W\d][\w.]*\Z")
# A name followed by attributes and subscripts holding no bracket:
# ``item.hosts[0].port``
_PRIMARY = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*|\[[^\[\]]*\])*\Z")


def atom(text: str) -> str:
    """``text`` safe to follow with ``[i]``, ``.x`` or to use as an operand."""
    if _DOTTED.match(text) or _PRIMARY.match(text):
        return text
    if text.startswith("(") and _balanced(text):
        return text
    if text.endswith(("]", ")")) and not text.startswith(("-", "not ")):
        # a call, subscript or attribute chain: already an atom
        if " if " not in text and " else " not in text:
            return text
    return f"({text})"


def _balanced(text: str) -> bool:
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return False
    return depth == 0


def operand(low: Lowering, value: cst.BaseExpression) -> str:
    """A value pattern's expression as the operand of ``==`` or an item of a
    display: ``-1``, not ``(-1)`` (a sign binds tighter than both)."""
    if type(value) is cst.UnaryOperation and not value.lpar:
        return low.code(value).strip()
    return low.expr(value)


def kind_test(low: Lowering, v: Subject, kind: str) -> Test:
    number = 1 if kind == "sequence" else 2
    # The common exact types answer without a call (their flags cannot
    # change: CPython's ABC registration leaves static types alone). For a
    # sequence check, tuples (payloads, records) and lists, and ``str``, the
    # common value that is none (``match state, event:`` with ``"open"`` or
    # ``("unlock", key)``): a helper call costs more than the three tests.
    readable = _readable_kind_test(low, v, kind)
    if low.compact_checks:
        # The helper alone answers the same (None included: no sequence or
        # mapping), in a fifth of the width.
        text = f"{low.helper('kind')}({v.text}) == {number}"
        return Test(text, "kind", v.text, kind, readable)
    type_of = f"{low.b('type')}({v.text})"
    if kind == "sequence":
        exact = (
            f"{type_of} is {low.b('tuple')} or {type_of} is {low.b('list')} or "
            f"{type_of} is not {low.b('str')} and "
        )
    else:
        exact = f"{type_of} is {low.b('dict')} or "
    text = f"{exact}{low.helper('kind')}({v.text}) == {number}"
    if v.missing_reads_none:
        # None, a missing key's or attribute's value, is no sequence or
        # mapping: one ``is`` answers for it
        text = f"{v.text} is not None and ({text})"
    return Test(text, "kind", v.text, kind, readable)


def _readable_kind_test(low: Lowering, v: Subject, kind: str) -> str:
    """What a person writes, and a type checker narrows on: the ABCs of
    ``collections.abc``; a sequence is not text (CPython's flags leave
    ``str``, ``bytes`` and ``bytearray`` out). README, Known limits: the
    ABCs also answer for classes registered with them in ways the flags
    do not follow.

    The common exact types come first in the tuple: ``isinstance`` answers
    for them without calling ``ABCMeta.__instancecheck__``, which costs a
    list or tuple subject about ten comparisons. The answer is the same:
    ``list``, ``tuple`` and ``dict`` (and their subclasses) are registered
    with the ABCs. (``low.abc_mappings``, ``low.abc_sequences``: by the
    ABC alone, where a line is too wide: line_fit.py.)"""
    if not low.readable:
        return ""
    isinstance_ = low.b("isinstance")
    if kind == "mapping" and low.abc_mappings:
        return f"{isinstance_}({v.text}, {low.abc('Mapping')})"
    if kind == "mapping":
        return f"{isinstance_}({v.text}, ({low.b('dict')}, {low.abc('Mapping')}))"
    exact = f"{low.b('list')}, {low.b('tuple')}, " if not low.abc_sequences else ""
    text = ", ".join(low.b(name) for name in ("str", "bytes", "bytearray"))
    classes = f"({exact}{low.abc('Sequence')})" if exact else low.abc("Sequence")
    return (
        f"{isinstance_}({v.text}, {classes})"
        f" and not {isinstance_}({v.text}, ({text}))"
    )


def exhaustive_pattern(
    low: Lowering, pattern: LoweredPattern, subject: str
) -> LoweredPattern:
    """The last case's ``pattern`` with its tests on the ``subject`` spelled
    as mypy follows them to the end of a match it takes as exhaustive
    (:func:`exhaustive_test`)."""

    def spelled(test: Test) -> Test:
        return exhaustive_test(low, test) if test.path == subject else test

    return LoweredPattern(map_tests(pattern.cond, spelled), pattern.bindings)


def exhaustive_test(low: Lowering, test: Test) -> Test:
    """``test`` as the readable layout spells it in the last case of a
    match: ``v == a or v == b`` for ``v in (a, b)``, on which mypy narrows
    a ``Literal`` subject; and a sequence check spelled so that
    mypy narrows on it both ways: ``isinstance(x, (list, tuple)) or
    (isinstance(x, Sequence) and not isinstance(x, (str, bytes,
    bytearray)))``. The last case of a match that mypy takes as exhaustive
    needs it: after the shorter spelling mypy still sees a way through
    (a "missing return"), and with text ruled out first it widens the
    subject back to its declared type inside the branch. Same answer, and
    lists and tuples answer at the first ``isinstance``."""
    if not low.readable:
        return test
    v = test.path
    if isinstance(test.fact, tuple) and test.fact[0] == ONE_OF:
        values = test.fact[1]
        if (test.readable or test.expr) != f"{atom(v)} in ({', '.join(values)})":
            return test  # spelled otherwise since: leave it
        # mypy narrows a ``Literal[...]`` subject on ``==``, not on ``in``
        return replace(test, readable=" or ".join(f"{atom(v)} == {t}" for t in values))
    exact = f"{low.b('isinstance')}({v}, ({low.b('list')}, {low.b('tuple')}))"
    return _sequence_spelled(low, test, lambda plain: f"{exact} or ({plain})")


def branch_kind_test(low: Lowering, test: Test) -> Test:
    """A sequence check alone on a branch's ``if``, with cases after the
    branch, spelled as a person writes it: ``isinstance(x, Sequence) and
    not isinstance(x, (str, bytes, bytearray))``, which fits on one line
    where the spelling with ``list`` and ``tuple`` first takes three. Same
    answer (those are registered with the ABC); evaluated once per match,
    the ABC's check costs a list or tuple subject a little more. Where no
    case follows, mypy needs the spelling it follows both ways
    (:func:`exhaustive_test`)."""
    if not low.readable:
        return test
    return _sequence_spelled(low, test, lambda plain: plain)


def _sequence_spelled(
    low: Lowering, test: Test, spelling: Callable[[str], str]
) -> Test:
    """A readable sequence check as ``spelling`` writes the plain one
    (``isinstance(x, Sequence) and not isinstance(x, (str, bytes,
    bytearray))``); any other test, or one spelled otherwise since, as
    it is."""
    if not (test.kind == "kind" and test.fact == "sequence"):
        return test
    v = test.path
    if (test.readable or test.expr) != _readable_kind_test(low, Subject(v), "sequence"):
        return test
    isinstance_ = low.b("isinstance")
    text = ", ".join(low.b(name) for name in ("str", "bytes", "bytearray"))
    plain = (
        f"{isinstance_}({v}, {low.abc('Sequence')})"
        f" and not {isinstance_}({v}, ({text}))"
    )
    return replace(test, readable=spelling(plain))


def len_test(low: Lowering, v: Subject, op: str, n: int) -> Test:
    return Test(f"{low.b('len')}({v.text}) {op} {n}", "len", v.text, (op, n))
