"""Lower a class pattern: a builtin matching itself, a class of this
module whose ``__match_args__`` are known, or through the helper (which
raises CPython's TypeErrors)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

import libcst as cst
from spam_transpile.lowering.facts import KnownClass
from spam_transpile.lowering.ir import Cond, Test

if TYPE_CHECKING:
    from spam_transpile.lowering.lower import Lowering
from spam_transpile.lowering.paths import Lowered, Subject, atom, tuple_display
from spam_transpile.lowering.subpatterns import (
    class_keywords,
    class_lowering,
    needs_sentinel,
    literal_test,
    may_raise,
    rejects_none,
    with_subpatterns,
)


def lower_class(low: Lowering, p: cst.MatchClass, v: Subject) -> Lowered:
    untyped = low.untyped_mappings
    if class_keywords(p) or class_lowering(low, p) != "self":
        # An attribute is typed as its class declares it, not ``Any``.
        low.untyped_mappings = None
    try:
        return _lower_class(low, p, v)
    finally:
        low.untyped_mappings = untyped


def _lower_class(low: Lowering, p: cst.MatchClass, v: Subject) -> Lowered:
    cls = low.expr(p.cls)
    positional = [arg.value for arg in p.patterns]
    keywords = class_keywords(p)
    name = p.cls.value if isinstance(p.cls, cst.Name) else None
    how = class_lowering(low, p)
    if how == "self":
        return _lower_self_class(low, cls, positional, keywords, v)
    if how == "known":
        known = low.known_class(p.cls)
        assert known is not None
        return _lower_known_class(low, cls, known, positional, keywords, v)
    return _lower_dynamic_class(low, p.cls, name, positional, keywords, v)


def _isinstance(low: Lowering, v: Subject, cls: str) -> Test:
    return Test(f"{low.b('isinstance')}({v.text}, {cls})", "isinstance", v.text, cls)


def _lower_self_class(
    low: Lowering,
    cls: str,
    positional: List[cst.MatchPattern],
    keywords: List[Tuple[str, cst.MatchPattern]],
    v: Subject,
) -> Lowered:
    tests: List[Cond] = [_isinstance(low, v, cls)]
    subs: List[Tuple[cst.MatchPattern, Subject]] = []
    if positional:
        subs.append((positional[0], v))
    subs += _keyword_reads(low, keywords, v, tests, known_fields=())
    return with_subpatterns(low, tests, subs)


def _keyword_reads(
    low: Lowering,
    keywords: List[Tuple[str, cst.MatchPattern]],
    v: Subject,
    tests: List[Cond],
    known_fields: Sequence[str],
) -> List[Tuple[cst.MatchPattern, Subject]]:
    subs: List[Tuple[cst.MatchPattern, Subject]] = []
    for attribute, pattern in keywords:
        # As in a mapping pattern: every attribute is read before the
        # sub-patterns are tried, so a test of this attribute moves past
        # the earlier sub-patterns only where none of them can raise.
        fold = not may_raise(low, [p for p, _ in subs]) and not low.apart(pattern)
        known = attribute.isidentifier() and attribute in known_fields
        if fold and not known and not (low.readable and needs_sentinel(pattern)):
            missing = "" if low.readable else low.helper("MISSING")
            getattr_ = f"{low.b('getattr')}({v.text}, {attribute!r}"
            literal = literal_test(
                low, pattern, f"{getattr_}, {missing})", f"{getattr_}, None)"
            )
            if literal is not None:
                tests.append(literal)
                continue
        subs.append(
            (
                pattern,
                _attribute(
                    low, v, attribute, tests, known_fields, pattern if fold else None
                ),
            )
        )
    return subs


def _attribute(
    low: Lowering,
    v: Subject,
    attribute: str,
    tests: List[Cond],
    known: Sequence[str],
    pattern: Optional[cst.MatchPattern] = None,
) -> Subject:
    if attribute.isidentifier() and attribute in known:
        # A dataclass's __init__ always sets its fields.
        return Subject(f"{atom(v.text)}.{attribute}")
    if pattern is not None and not low.readable and rejects_none(low, pattern):
        # A missing attribute reads as None, which the sub-pattern rejects.
        read = f"{low.b('getattr')}({v.text}, {attribute!r}, None)"
        return Subject(read, missing_reads_none=True)
    if low.compact_checks:
        _compact_presence_test(low, tests, v, attribute)
    elif low.readable:
        # hasattr() swallows AttributeError only, as match_class does
        present = f"{low.b('hasattr')}({v.text}, {attribute!r})"
        tests.append(Test(present, "attr", v.text, attribute))
    else:
        missing = low.helper("MISSING")
        read = f"{low.b('getattr')}({v.text}, {attribute!r}, {missing})"
        # getattr() with a default swallows AttributeError only, as
        # match_class does.
        tests.append(Test(f"{read} is not {missing}", "attr", v.text, attribute))
    if attribute.isidentifier() and not attribute.startswith("__"):
        return Subject(f"{atom(v.text)}.{attribute}")
    return Subject(f"{low.b('getattr')}({v.text}, {attribute!r})")


def _compact_presence_test(
    low: Lowering, tests: List[Cond], v: Subject, attribute: str
) -> None:
    """A case too wide for its line: ``hasattr()``, as match_class swallows
    AttributeError only (the capture reads the attribute again, which PEP
    634 allows, in a third of the width), joined to the presence test of
    the attributes before it where that is the last test
    (``_spam.has(v, 'left', 'right')``: one call, the same tests in the same
    order). Its fact: the names it tests."""
    last = tests[-1] if tests else None
    if (
        isinstance(last, Test)
        and last.kind == "attr"
        and last.path == v.text
        and isinstance(last.fact, tuple)
    ):
        names = (*last.fact, attribute)
        spelled = ", ".join(repr(name) for name in names)
        expr = f"{low.helper('has')}({v.text}, {spelled})"
        tests[-1] = Test(expr, "attr", v.text, names)
        return
    present = f"{low.b('hasattr')}({v.text}, {attribute!r})"
    tests.append(Test(present, "attr", v.text, (attribute,)))


def _is_builtin_type(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type)


def _lower_known_class(
    low: Lowering,
    cls: str,
    known: KnownClass,
    positional: List[cst.MatchPattern],
    keywords: List[Tuple[str, cst.MatchPattern]],
    v: Subject,
) -> Lowered:
    match_args = known.match_args or ()
    tests: List[Cond] = [_isinstance(low, v, cls)]
    reads = [(a, p) for a, p in zip(match_args, positional)] + keywords
    subs = _keyword_reads(low, reads, v, tests, known.fields)
    return with_subpatterns(low, tests, subs)


def _lower_dynamic_class(
    low: Lowering,
    node: cst.BaseExpression,
    name: Optional[str],
    positional: List[cst.MatchPattern],
    keywords: List[Tuple[str, cst.MatchPattern]],
    v: Subject,
) -> Lowered:
    cls = low.expr(node)
    checked = f"{low.helper('cls')}({cls})"
    if low.inline_class_checks and not low.compact_checks:
        # Reading a dotted name again is cheaper than calling the helper,
        # for a class with a metaclass of its own (an ABC, an Enum) too: the
        # helper's own test, so only a non-class reaches it, to raise
        # CPython's TypeError.
        type_ = low.b("type")
        checked = f"{cls} if {low.b('isinstance')}({cls}, {type_}) else {checked}"
    known = low.known_class(node)
    if known is not None or (
        name is not None and _is_builtin_type(name) and low.names.builtin(name) == name
    ):
        checked = cls  # a class for sure: no type check
    elif low.trusts_class(node):
        checked = cls  # the readable layout trusts declarations and imports
    tests: List[Cond] = [_isinstance(low, v, checked)]
    if not positional:
        fields = known.fields if known is not None else ()
        subs = _keyword_reads(low, keywords, v, tests, known_fields=fields)
        return with_subpatterns(low, tests, subs)
    kw_names = tuple_display([repr(k) for k, _ in keywords])
    values = f"{low.helper('attrs')}({v.text}, {cls}, {len(positional)}, {kw_names})"
    tests.append(Test(f"{values} is not None", "attr", v.text, values))
    sub_patterns = positional + [pattern for _, pattern in keywords]
    subs = [
        (pattern, Subject(f"{values}[{i}]")) for i, pattern in enumerate(sub_patterns)
    ]
    return with_subpatterns(low, tests, subs)
