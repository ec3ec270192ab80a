"""What a sub-pattern allows the pattern holding it (a mapping's or a class
pattern's): whether it can raise the matching process's own errors, whether
it rejects None (so a missing key or attribute can read as None), and the
one-test form of a literal sub-pattern."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

import libcst as cst
from spam_transpile.lowering import runtime
from spam_transpile.lowering.ir import LITERAL, Cond, Test, all_of
from spam_transpile.syntax.cstwalk import pattern_nodes

if TYPE_CHECKING:
    from spam_transpile.lowering.lower import Lowering
from spam_transpile.lowering.paths import Bindings, Lowered, Subject


def literal_test(
    low: Lowering, pattern: cst.MatchPattern, read: str, read_or_none: str
) -> Optional[Test]:
    """``read == literal`` for a literal or singleton pattern, else None.

    ``read`` gives the sentinel for a missing key or attribute,
    ``read_or_none`` gives None. Only literals: their ``__eq__`` is known never
    to equal the sentinel; a value pattern's ``__eq__`` could.
    """
    if isinstance(pattern, cst.MatchSingleton):
        singleton = pattern.value.value
        if singleton != "None":
            read = read_or_none  # (None is neither True nor False)
        return low.on_line_of(
            pattern, Test(f"{read} is {singleton}", "is", read, singleton)
        )
    if isinstance(pattern, cst.MatchValue) and is_literal_key(pattern.value):
        # No number, string or bytes literal equals None either: a missing
        # value can read as None.
        if is_number_or_text(pattern.value):
            read = read_or_none
        test = Test(
            f"{read} == {low.expr(pattern.value)}",
            "eq",
            read,
            literal_fact(pattern.value),
        )
        return low.on_line_of(pattern, test)
    return None


def needs_sentinel(pattern: cst.MatchPattern) -> bool:
    """Whether :func:`literal_test` compares with a sentinel for a missing
    value (the readable layout tests presence instead)."""
    return isinstance(pattern, cst.MatchSingleton) or (
        isinstance(pattern, cst.MatchValue)
        and is_literal_key(pattern.value)
        and not is_number_or_text(pattern.value)
    )


def rejects_none(low: Lowering, pattern: cst.MatchPattern) -> bool:
    """True if ``pattern`` never matches None (so a missing key or attribute,
    read as None, fails it just as CPython's missing value does)."""
    if isinstance(pattern, cst.MatchAs):
        return pattern.pattern is not None and rejects_none(low, pattern.pattern)
    if isinstance(pattern, cst.MatchOr):
        return all(rejects_none(low, e.pattern) for e in pattern.patterns)
    if isinstance(pattern, (cst.MatchList, cst.MatchTuple, cst.MatchMapping)):
        return True  # None is neither a sequence nor a mapping
    if isinstance(pattern, cst.MatchValue) and is_number_or_text(pattern.value):
        return True  # ``None == literal`` is False: NoneType's __eq__ decides
    if isinstance(pattern, cst.MatchClass):
        name = pattern.cls.value if isinstance(pattern.cls, cst.Name) else ""
        if name in runtime.MATCH_SELF_TYPES and low.names.builtin(name) == name:
            return True
        return low.known_class(pattern.cls) is not None
    return False


def is_literal_key(key: cst.BaseExpression) -> bool:
    if isinstance(key, cst.Name):
        return key.value in ("True", "False", "None")
    return not isinstance(key, cst.Attribute)


def _class_may_raise(low: Lowering, p: cst.MatchClass) -> bool:
    # Only the helper's path (class check, __match_args__) raises them.
    return class_lowering(low, p) == "dynamic"


def may_raise(low: Lowering, patterns: Sequence[cst.MatchPattern]) -> bool:
    """Whether a sub-pattern can raise one of the matching process's own
    errors: a class pattern's TypeErrors, a mapping pattern's duplicate-key
    ValueError. (What user code raises, from ``__eq__`` or a property, may
    happen more or less often: PEP 634 leaves those calls unspecified.)"""
    for pattern in patterns:
        for node in pattern_nodes(pattern):
            kind = type(node)
            if kind is cst.MatchClass and _class_may_raise(low, node):  # type: ignore[arg-type]
                return True
            if kind is cst.MatchMapping and not all(
                is_literal_key(e.key) for e in node.elements  # type: ignore[attr-defined]
            ):
                return True
    return False


def class_keywords(p: cst.MatchClass) -> List[Tuple[str, cst.MatchPattern]]:
    # CPython normalises identifiers (NFKC): ``case P(ｘ=5)`` reads ``x``.
    return [(unicodedata.normalize("NFKC", kw.key.value), kw.pattern) for kw in p.kwds]


def class_lowering(low: Lowering, p: cst.MatchClass) -> str:
    """How a class pattern is lowered: "self" (a self-matching builtin with at
    most one positional sub-pattern), "known" (a class of this module whose
    ``__match_args__`` fit the sub-patterns), else "dynamic" (through the
    helper, which raises CPython's TypeErrors)."""
    name = p.cls.value if isinstance(p.cls, cst.Name) else None
    if name in runtime.MATCH_SELF_TYPES and low.names.builtin(name) == name:
        if len(p.patterns) <= 1:
            return "self"
    known = low.known_class(p.cls)
    if known is None or known.match_args is None:
        return "dynamic"
    if len(p.patterns) > len(known.match_args):
        return "dynamic"  # CPython's "accepts N positional sub-patterns"
    names = list(known.match_args[: len(p.patterns)])
    names += [k for k, _ in class_keywords(p)]
    if len(set(names)) != len(names):
        return "dynamic"  # likewise: "got multiple sub-patterns for attribute"
    return "known"


def literal_fact(node: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """The ``fact`` of ``v == node`` (:data:`.ir.LITERAL`): what kind of
    literal ``node`` is, where it is one."""
    if not is_number_or_text(node):
        return None
    if isinstance(node, cst.ConcatenatedString):
        node = node.left
    if isinstance(node, cst.SimpleString):
        return (LITERAL, "bytes" if "b" in node.prefix.lower() else "text")
    return (LITERAL, "number")


def is_number_or_text(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(
        node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)
    ) and not (isinstance(node, cst.SimpleString) and "f" in node.prefix.lower())


def with_subpatterns(
    low: Lowering, tests: List[Cond], subs: List[Tuple[cst.MatchPattern, Subject]]
) -> Lowered:
    bindings: Bindings = []
    for pattern, subject in subs:
        cond, inner = low.lower(pattern, subject)
        tests.append(cond)
        bindings.extend(inner)
    return all_of(*tests), bindings
