"""Lower one case's pattern to a condition and bindings (see :mod:`.ir`).

One ``lower_<kind>`` function per pattern kind, each taking the pattern and
the path (source text) that reads its subject, and returning a condition
and the bindings the pattern makes. Checks follow the order of CPython's
pattern compiler (``compiler_pattern_*`` in 3.10's ``compile.c``):

- sequence: kind check, ``len``, then the items, read by index (``s[i]``
  before a star, ``s[len(s) - k]`` after it: never a negative index);
- mapping: kind check, ``len(s) >= #keys``, the keys' duplicate check for
  value-pattern keys, one ``get(key, MISSING)`` per key, then sub-patterns;
- class: the type check, isinstance, the attributes, then sub-patterns.

Facts known at transpile time (:mod:`.facts`) drop checks: a dataclass of
this module has known ``__match_args__`` and fields its ``__init__`` always
sets, a builtin like ``int`` matches itself, and a subject the match
statement spells as a tuple display has a known kind and length.
"""

from __future__ import annotations

import builtins
import re
import unicodedata
from typing import Callable, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.syntax.codegen import without_parens
from spam_transpile.lowering import runtime
from spam_transpile.lowering.facts import KnownClass, ModuleFacts
from spam_transpile.lowering.ir import (
    TRUE,
    All,
    AnyOf,
    Choice,
    Cond,
    LoweredPattern,
    Test,
    Value,
    all_of,
    is_true,
    placed,
)
from spam_transpile.lowering.names import Names
from spam_transpile.lowering.scopes import capture_names_of
from spam_transpile.syntax.cstwalk import pattern_nodes

Bindings = List[Tuple[str, Value]]
Lowered = Tuple[Cond, Bindings]


class Subject:
    """What is known about a path: its text, and its kind/length if known."""

    def __init__(
        self, text: str, kind: Optional[str] = None, length: Optional[int] = None
    ) -> None:
        self.text = text
        self.kind = kind
        self.length = length
        #: element paths of a tuple-display subject (``match a, b:``)
        self.elements: Optional[List[str]] = None


class Lowering:
    """Lowers patterns of one module."""

    def __init__(
        self, names: Names, code: Callable[[cst.CSTNode], str], facts: ModuleFacts
    ) -> None:
        self.names = names
        self.code = code
        self.facts = facts
        #: the helper's parts the module uses
        self.used_parts: set = set()
        #: how many uses of the helper the emitters wrote so far
        self.uses = 0
        self._helper = ""
        #: keep-lines, while a case header over several lines is lowered: the
        #: line of a pattern node, counted from the ``case`` line
        self.line_of: Optional[Callable[[cst.CSTNode], int]] = None
        #: the pattern being lowered (the parent of those it lowers)
        self._within: Optional[cst.MatchPattern] = None

    @property
    def used_helper(self) -> bool:
        return bool(self.used_parts)

    @property
    def helper_name(self) -> str:
        return self._helper

    def note_used(self, text: str) -> None:
        """Record the helper's parts that ``text``, the whole code written for
        a match statement, uses (the helper's name is one no user name
        shadows, so a mention is a use)."""
        if self._helper and self._helper + "." in text:
            found = re.findall(re.escape(self._helper) + r"\.(\w+)", text)
            self.used_parts.update(found)

    def helper(self, attribute: str) -> str:
        """``_spam.<attribute>``. Which parts the module uses is read from the
        code of each lowered match statement once it is written
        (:meth:`note_used`); this only counts that the helper was asked for."""
        if not self._helper:
            self._helper = self.names.helper_name()
        if attribute:
            self.uses += 1
        return f"{self._helper}.{attribute}"

    def lower_case(
        self, pattern: cst.MatchPattern, subject: Union[str, Subject]
    ) -> LoweredPattern:
        if isinstance(subject, str):
            subject = Subject(subject)
        cond, bindings = self.lower(pattern, subject)
        cond, bindings = _stores_in_last_alternatives(cond, bindings)
        return LoweredPattern(cond, tuple(bindings))

    def lower(self, pattern: cst.MatchPattern, v: Subject) -> Lowered:
        if self.line_of is None:
            return self._lower(pattern, v)
        # Each check goes on the line of the pattern CPython 3.10 runs it
        # for (its compiler sets the line of every pattern node it enters).
        within, self._within = self._within, pattern
        try:
            cond, bindings = self._lower(pattern, v)
        finally:
            self._within = within
        return placed(cond, self.line_of(pattern)), bindings

    def apart(self, sub: cst.MatchPattern) -> bool:
        """Whether ``sub`` starts on another line than the pattern holding it:
        a test reading an item, key or attribute for it (where CPython reads
        it, on the holding pattern's line) cannot also compare it (on the
        sub-pattern's line)."""
        if self.line_of is None or self._within is None:
            return False
        return self.line_of(sub) != self.line_of(self._within)

    def on_line_of(self, pattern: cst.MatchPattern, test: Test) -> Test:
        """``test``, a check of ``pattern`` its parent writes, on its line."""
        if self.line_of is None:
            return test
        return placed(test, self.line_of(pattern))  # type: ignore[return-value]

    def _lower(self, pattern: cst.MatchPattern, v: Subject) -> Lowered:
        # Exact types: isinstance() on LibCST's classes goes through ABCMeta.
        if type(pattern) is cst.MatchAs:
            return lower_as(self, pattern, v)
        if type(pattern) is cst.MatchValue:
            return lower_value(self, pattern, v)
        if type(pattern) is cst.MatchSingleton:
            return lower_singleton(self, pattern, v)
        if type(pattern) is cst.MatchOr:
            return lower_or(self, pattern, v)
        if type(pattern) is cst.MatchList or type(pattern) is cst.MatchTuple:
            return lower_sequence(self, pattern, v)
        if type(pattern) is cst.MatchMapping:
            return lower_mapping(self, pattern, v)
        if type(pattern) is cst.MatchClass:
            return lower_class(self, pattern, v)
        raise TypeError(f"unknown pattern node {type(pattern).__name__}")

    # -- helpers shared by the kinds -------------------------------------------

    def expr(self, node: cst.BaseExpression) -> str:
        """Source of ``node`` as a self-contained expression."""
        text = self.code(without_parens(node)).strip()
        if type(node) in _BARE:
            return text
        if type(node) in _BARE_ON_ONE_LINE and "\n" not in text:
            return text
        return f"({text})"

    def b(self, name: str) -> str:
        return self.names.builtin(name)


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


def _atom(text: str) -> str:
    """``text`` safe to follow with ``[i]``, ``.x`` or to use as an operand."""
    if _DOTTED.match(text) or (text.startswith("(") and _balanced(text)):
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


def lower_as(low: Lowering, p: cst.MatchAs, v: Subject) -> Lowered:
    cond: Cond = TRUE
    bindings: Bindings = []
    if p.pattern is not None:
        cond, bindings = low.lower(p.pattern, v)
    if p.name is not None:
        bindings.append((p.name.value, v.text))
    return cond, bindings


# Expressions that need no parentheses around them (exact types, as above).
_BARE = frozenset([cst.Name, cst.Attribute, cst.Integer, cst.Float])
_BARE_ON_ONE_LINE = frozenset([cst.SimpleString, cst.Imaginary])


def lower_value(low: Lowering, p: cst.MatchValue, v: Subject) -> Lowered:
    # PEP 634: a value pattern succeeds if ``subject == value``, with the
    # subject on the left (that decides which __eq__ runs first).
    return Test(f"{_atom(v.text)} == {operand(low, p.value)}", "eq", v.text), []


def operand(low: Lowering, value: cst.BaseExpression) -> str:
    """A value pattern's expression as the operand of ``==`` or an item of a
    display: ``-1``, not ``(-1)`` (a sign binds tighter than both)."""
    if type(value) is cst.UnaryOperation and not value.lpar:
        return low.code(value).strip()
    return low.expr(value)


def lower_singleton(low: Lowering, p: cst.MatchSingleton, v: Subject) -> Lowered:
    return Test(f"{_atom(v.text)} is {p.value.value}", "is", v.text), []


def lower_or(low: Lowering, p: cst.MatchOr, v: Subject) -> Lowered:
    literals = [e.pattern for e in p.patterns]
    if all(
        isinstance(e, cst.MatchValue) and _in_is_exact(e.value) for e in literals
    ) and not any(low.apart(e) for e in literals):
        # ``v in (lit, ...)`` tests ``lit is v or lit == v``; CPython tests
        # ``v == lit``. For int, str and bytes literals both give the same
        # answer from the same calls, whatever ``v`` is: those types compare
        # equal only to instances of their own type (an identical object
        # among them), and answer NotImplemented to anything else, which
        # lets ``v``'s own ``__eq__`` decide; a subclass of theirs has its
        # ``__eq__`` called first either way (its reflected method goes
        # first). A float literal is not so: ``1.0 == v`` answers for an int
        # subclass ``v`` without calling its ``__eq__`` (3.9+), so float
        # alternatives are compared one by one below, subject on the left.
        text = ", ".join(
            operand(low, e.value) for e in literals if isinstance(e, cst.MatchValue)
        )
        return Test(f"{_atom(v.text)} in ({text})", "eq", v.text), []
    lowered = [low.lower(element.pattern, v) for element in p.patterns]
    # Every alternative binds the same names (checked by validate), except
    # one that always raises (``int(a, b)``) and so never gets to bind.
    names: List[str] = []
    for _, bindings in lowered:
        names += [name for name, _ in bindings if name not in names]
    # CPython stores an or-pattern's captures in the order the first
    # alternative names them, whichever alternative matched (observable
    # where the namespace keeps order: an Enum body's members).
    order: List[str] = capture_names_of(p.patterns[0].pattern)
    names.sort(key=lambda name: order.index(name) if name in order else len(order))
    alternatives = tuple(cond for cond, _ in lowered)
    if any(is_true(cond) for cond in alternatives):
        # An irrefutable alternative: later ones are never tried.
        first = next(i for i, cond in enumerate(alternatives) if is_true(cond))
        lowered = lowered[: first + 1]
        alternatives = alternatives[: first + 1]
    prefix, rests = _common_prefix(alternatives)
    if any(is_true(rest) for rest in rests):
        # Once the shared checks held, an alternative with nothing more to
        # check matches: later ones are never tried.
        first = next(i for i, rest in enumerate(rests) if is_true(rest))
        rests, lowered = rests[: first + 1], lowered[: first + 1]
    if len(rests) == 1:
        cond: Cond = all_of(*prefix, rests[0])
    else:
        cond = all_of(*prefix, AnyOf(tuple(rests)))
    out: Bindings = []
    for name in names:
        # The bindings are read once the whole pattern matched, so the
        # shared checks held: the choice tests only what differs.
        options = tuple(
            (rest, dict(bindings).get(name, "None"))
            for rest, (_, bindings) in zip(rests, lowered)
        )
        # An option reading what the last one reads need not be tested.
        while len(options) > 1 and _value_key(options[-2][1]) == _value_key(
            options[-1][1]
        ):
            options = options[:-2] + options[-1:]
        keys = {_value_key(value) for _, value in options}
        # The same path in every alternative needs no choice.
        if len(keys) == 1:
            out.append((name, options[0][1]))
        else:
            out.append((name, Choice(options)))
    return cond, out


def _common_prefix(alternatives: Sequence[Cond]) -> Tuple[List[Cond], List[Cond]]:
    """The checks every alternative starts with, and what each has after them."""
    parts = [list(a.parts) if isinstance(a, All) else [a] for a in alternatives]
    prefix: List[Cond] = []
    while (
        all(p and isinstance(p[0], Test) for p in parts)
        and len({p[0].expr for p in parts}) == 1  # type: ignore[union-attr]
    ):
        prefix.append(parts[0][0])
        for p in parts:
            p.pop(0)
    return prefix, [all_of(*p) if p else TRUE for p in parts]


# Choices longer than this (rendered) are stored by the alternatives instead.
_LONG_CHOICES = 160


def _stores_in_last_alternatives(cond: Cond, bindings: Bindings) -> Lowered:
    """An or-pattern checked last stores its captures as each alternative
    matches (nothing can fail after it), instead of choosing the values by
    testing the alternatives again: shorter and faster for big ones."""
    from spam_transpile.lowering.emit import render_value

    parts = list(cond.parts) if isinstance(cond, All) else [cond]
    last = parts[-1] if parts else None
    if not isinstance(last, AnyOf) or last.stores:
        return cond, bindings
    chosen = [
        (name, value)
        for name, value in bindings
        if isinstance(value, Choice) and _per_alternative(value, last.alternatives)
    ]
    if not chosen or sum(len(render_value(v)) for _, v in chosen) < _LONG_CHOICES:
        return cond, bindings
    if chosen != bindings[: len(chosen)]:
        # Stored first, they would come before captures CPython stores
        # before them (``(g, ([a, b] | (b, a)))``).
        return cond, bindings
    stores = tuple(
        tuple(
            (name, _option(value, i)) for name, value in chosen  # type: ignore[arg-type]
        )
        for i in range(len(last.alternatives))
    )
    parts[-1] = AnyOf(last.alternatives, stores)
    kept = [(name, value) for name, value in bindings if (name, value) not in chosen]
    return all_of(*parts), kept


def _per_alternative(choice: Choice, alternatives: Tuple[Cond, ...]) -> bool:
    """Whether ``choice`` tests the ``alternatives`` in order; its last option
    may stand for the last few (``lower_or`` merges options reading the same
    value)."""
    conds = tuple(c for c, _ in choice.options)
    return (
        len(conds) <= len(alternatives)
        and conds[:-1] == alternatives[: len(conds) - 1]
        and conds[-1] == alternatives[-1]
    )


def _option(choice: Choice, alternative: int) -> Value:
    return choice.options[min(alternative, len(choice.options) - 1)][1]


def _is_number_or_text(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(
        node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)
    ) and not (isinstance(node, cst.SimpleString) and "f" in node.prefix.lower())


def _in_is_exact(node: cst.BaseExpression) -> bool:
    """An int, str or bytes literal (see ``lower_or``)."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
        return isinstance(node, cst.Integer)
    return isinstance(node, cst.Integer) or (
        _is_number_or_text(node) and not isinstance(node, cst.Float)
    )


def _value_key(value: Value) -> str:
    return value if isinstance(value, str) else repr(value)


# -- sequences --------------------------------------------------------------


def lower_sequence(
    low: Lowering, p: Union[cst.MatchList, cst.MatchTuple], v: Subject
) -> Lowered:
    elements: Sequence[Union[cst.MatchSequenceElement, cst.MatchStar]] = p.patterns
    size = len(elements)
    star: Optional[int] = next(
        (i for i, e in enumerate(elements) if isinstance(e, cst.MatchStar)), None
    )
    fixed = size if star is None else size - 1
    tests: List[Cond] = []
    if v.kind != "sequence":
        tests.append(_kind_test(low, v, "sequence"))
    if v.length is not None:
        fits = v.length == size if star is None else v.length >= fixed
        if not fits:
            return Test("False", "len", v.text, ("never", 0)), []
    elif star is None:
        tests.append(_len_test(low, v, "==", size))
    elif fixed:
        tests.append(_len_test(low, v, ">=", fixed))
    bindings: Bindings = []
    for i, element in enumerate(elements):
        if isinstance(element, cst.MatchStar):
            if element.name is not None:
                end = size - i - 1
                bindings.append(
                    (element.name.value, f"{low.helper('items')}({v.text}, {i}, {end})")
                )
            continue
        if is_wildcard(element.value):
            continue
        item = _item(low, v, i, star, size)
        cond, inner = low.lower(element.value, item)
        tests.append(cond)
        bindings.extend(inner)
    return all_of(*tests), bindings


def _item(low: Lowering, v: Subject, i: int, star: Optional[int], size: int) -> Subject:
    if v.elements is not None and (star is None or i < star):
        return Subject(v.elements[i])
    if v.elements is not None:
        return Subject(v.elements[len(v.elements) - (size - i)])
    if star is None or i < star:
        return Subject(f"{_atom(v.text)}[{i}]")
    # CPython indexes after the star with a non-negative ``len(s) - k``.
    if v.text.isidentifier():
        return Subject(f"{v.text}[{low.b('len')}({v.text}) - {size - i}]")
    # A longer path is written once (nested stars would double it each level).
    return Subject(f"{low.helper('back')}({v.text}, {size - i})")


def _kind_test(low: Lowering, v: Subject, kind: str) -> Test:
    number = 1 if kind == "sequence" else 2
    # The common exact types answer without a call (their flags cannot
    # change: CPython's ABC registration leaves static types alone).
    exact = low.b("list") if kind == "sequence" else low.b("dict")
    text = (
        f"{low.b('type')}({v.text}) is {exact} or "
        f"{low.helper('kind')}({v.text}) == {number}"
    )
    # What a type checker narrows on: the helper's classes decide as ``kind``.
    cls = low.helper("Sequence" if kind == "sequence" else "Mapping")
    readable = f"{low.b('isinstance')}({v.text}, {cls})"
    return Test(text, "kind", v.text, kind, readable)


def _len_test(low: Lowering, v: Subject, op: str, n: int) -> Test:
    return Test(f"{low.b('len')}({v.text}) {op} {n}", "len", v.text, (op, n))


# -- mappings ---------------------------------------------------------------


def _literal_test(
    low: Lowering, pattern: cst.MatchPattern, read: str, read_or_none: str
) -> Optional[Test]:
    """``read == literal`` for a literal or singleton pattern, else None.

    ``read`` gives the sentinel for a missing key or attribute,
    ``read_or_none`` gives None. Only literals: their ``__eq__`` is known never
    to equal the sentinel; a value pattern's ``__eq__`` could.
    """
    if isinstance(pattern, cst.MatchSingleton):
        return low.on_line_of(
            pattern, Test(f"{read} is {pattern.value.value}", "is", read)
        )
    if isinstance(pattern, cst.MatchValue) and _is_literal_key(pattern.value):
        # No number, string or bytes literal equals None either: a missing
        # value can read as None.
        if _is_number_or_text(pattern.value):
            read = read_or_none
        test = Test(f"{read} == {low.expr(pattern.value)}", "eq", read)
        return low.on_line_of(pattern, test)
    return None


def _rejects_none(low: Lowering, pattern: cst.MatchPattern) -> bool:
    """True if ``pattern`` never matches None (so a missing key or attribute,
    read as None, fails it just as CPython's missing value does)."""
    if isinstance(pattern, cst.MatchAs):
        return pattern.pattern is not None and _rejects_none(low, pattern.pattern)
    if isinstance(pattern, cst.MatchOr):
        return all(_rejects_none(low, e.pattern) for e in pattern.patterns)
    if isinstance(pattern, (cst.MatchList, cst.MatchTuple, cst.MatchMapping)):
        return True  # None is neither a sequence nor a mapping
    if isinstance(pattern, cst.MatchValue) and _is_number_or_text(pattern.value):
        return True  # ``None == literal`` is False: NoneType's __eq__ decides
    if isinstance(pattern, cst.MatchClass) and isinstance(pattern.cls, cst.Name):
        name = pattern.cls.value
        if name in runtime.MATCH_SELF_TYPES and low.names.builtin(name) == name:
            return True
        return low.facts.known_class(name) is not None
    return False


def _is_literal_key(key: cst.BaseExpression) -> bool:
    if isinstance(key, cst.Name):
        return key.value in ("True", "False", "None")
    return not isinstance(key, cst.Attribute)


def _class_may_raise(low: Lowering, p: cst.MatchClass) -> bool:
    # Only the helper's path (class check, __match_args__) raises them.
    return _class_lowering(low, p) == "dynamic"


def _may_raise(low: Lowering, patterns: Sequence[cst.MatchPattern]) -> bool:
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
                _is_literal_key(e.key) for e in node.elements  # type: ignore[attr-defined]
            ):
                return True
    return False


def lower_mapping(low: Lowering, p: cst.MatchMapping, v: Subject) -> Lowered:
    tests: List[Cond] = [_kind_test(low, v, "mapping")]
    elements = list(p.elements)
    dynamic = not all(_is_literal_key(e.key) for e in elements)
    if dynamic:
        # CPython checks ``len(s) >= #keys`` before its duplicate-key check,
        # so a short mapping never raises. With literal keys only, the
        # lookups decide alone (PEP 634 leaves len() calls unspecified).
        tests.append(_len_test(low, v, ">=", len(elements)))
    keys = [low.expr(element.key) for element in elements]
    missing = low.helper("MISSING")
    get = f"{_atom(v.text)}.get"
    bindings: Bindings = []
    values: List[Tuple[cst.MatchMappingElement, Subject]] = []
    for i, (key, element) in enumerate(zip(keys, elements)):
        if dynamic and i:
            # match_keys() in ceval.c checks each key against the earlier
            # ones just before looking it up (ValueError on a repeat).
            earlier = "".join(f"{k}, " for k in keys[:i])
            tests.append(
                Test(f"{low.helper('fresh')}({key}, ({earlier}))", "raise", v.text)
            )
        # CPython looks every key up, then matches the sub-patterns. Folding
        # this key's lookup into its sub-pattern's test moves that test before
        # the later duplicate-key checks and the lookup after the earlier
        # sub-patterns: only where none of those can raise.
        # (Kept where the sub-pattern is on a line of its own: its check
        # then sits on that line, and only a ``get`` that raises, which
        # CPython calls on the mapping's line, is reported there.)
        fold = not (dynamic and i < len(elements) - 1) and not _may_raise(
            low, [e.pattern for e in elements[:i]]
        )
        read = f"{get}({key}, {missing})"
        literal = (
            _literal_test(low, element.pattern, read, f"{get}({key})") if fold else None
        )
        if literal is not None:
            # The sentinel equals no literal: one test checks both.
            tests.append(literal)
            continue
        if not (fold and _rejects_none(low, element.pattern)):
            tests.append(Test(f"{read} is not {missing}", "key", v.text, key))
        # else ``get`` returns None for a missing key, which the sub-pattern
        # rejects as it would reject the missing key.
        values.append((element, Subject(f"{get}({key})")))
    for element, value in values:
        cond, inner = low.lower(element.pattern, value)
        tests.append(cond)
        bindings.extend(inner)
    if p.rest is not None:
        listed = tuple_display(keys)
        bindings.append((p.rest.value, f"{low.helper('rest')}({v.text}, {listed})"))
    return all_of(*tests), bindings


# -- classes ----------------------------------------------------------------


def lower_class(low: Lowering, p: cst.MatchClass, v: Subject) -> Lowered:
    cls = low.expr(p.cls)
    positional = [arg.value for arg in p.patterns]
    keywords = _class_keywords(p)
    name = p.cls.value if isinstance(p.cls, cst.Name) else None
    how = _class_lowering(low, p)
    if how == "self":
        return _lower_self_class(low, cls, positional, keywords, v)
    if how == "known":
        known = low.facts.known_class(name) if name else None
        assert known is not None
        return _lower_known_class(low, cls, known, positional, keywords, v)
    return _lower_dynamic_class(low, cls, name, positional, keywords, v)


def _class_keywords(p: cst.MatchClass) -> List[Tuple[str, cst.MatchPattern]]:
    # CPython normalises identifiers (NFKC): ``case P(ｘ=5)`` reads ``x``.
    return [(unicodedata.normalize("NFKC", kw.key.value), kw.pattern) for kw in p.kwds]


def _class_lowering(low: Lowering, p: cst.MatchClass) -> str:
    """How a class pattern is lowered: "self" (a self-matching builtin with at
    most one positional sub-pattern), "known" (a class of this module whose
    ``__match_args__`` fit the sub-patterns), else "dynamic" (through the
    helper, which raises CPython's TypeErrors)."""
    name = p.cls.value if isinstance(p.cls, cst.Name) else None
    if name is None:
        return "dynamic"
    if name in runtime.MATCH_SELF_TYPES and low.names.builtin(name) == name:
        if len(p.patterns) <= 1:
            return "self"
    known = low.facts.known_class(name)
    if known is None or known.match_args is None:
        return "dynamic"
    if len(p.patterns) > len(known.match_args):
        return "dynamic"  # CPython's "accepts N positional sub-patterns"
    names = list(known.match_args[: len(p.patterns)])
    names += [k for k, _ in _class_keywords(p)]
    if len(set(names)) != len(names):
        return "dynamic"  # likewise: "got multiple sub-patterns for attribute"
    return "known"


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
    return _with_subpatterns(low, tests, subs)


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
        fold = not _may_raise(low, [p for p, _ in subs]) and not low.apart(pattern)
        if fold and not (attribute.isidentifier() and attribute in known_fields):
            missing = low.helper("MISSING")
            getattr_ = f"{low.b('getattr')}({v.text}, {attribute!r}"
            literal = _literal_test(
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
        return Subject(f"{_atom(v.text)}.{attribute}")
    if pattern is not None and _rejects_none(low, pattern):
        # A missing attribute reads as None, which the sub-pattern rejects.
        return Subject(f"{low.b('getattr')}({v.text}, {attribute!r}, None)")
    missing = low.helper("MISSING")
    read = f"{low.b('getattr')}({v.text}, {attribute!r}, {missing})"
    # getattr() with a default swallows AttributeError only, as match_class does.
    tests.append(Test(f"{read} is not {missing}", "attr", v.text, attribute))
    if attribute.isidentifier() and not attribute.startswith("__"):
        return Subject(f"{_atom(v.text)}.{attribute}")
    return Subject(f"{low.b('getattr')}({v.text}, {attribute!r})")


def _with_subpatterns(
    low: Lowering, tests: List[Cond], subs: List[Tuple[cst.MatchPattern, Subject]]
) -> Lowered:
    bindings: Bindings = []
    for pattern, subject in subs:
        cond, inner = low.lower(pattern, subject)
        tests.append(cond)
        bindings.extend(inner)
    return all_of(*tests), bindings


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
    return _with_subpatterns(low, tests, subs)


def _lower_dynamic_class(
    low: Lowering,
    cls: str,
    name: Optional[str],
    positional: List[cst.MatchPattern],
    keywords: List[Tuple[str, cst.MatchPattern]],
    v: Subject,
) -> Lowered:
    checked = f"{low.helper('cls')}({cls})"
    if name is not None and (
        low.facts.known_class(name) is not None
        or (_is_builtin_type(name) and low.names.builtin(name) == name)
    ):
        checked = cls  # a class for sure: no type check
    tests: List[Cond] = [_isinstance(low, v, checked)]
    if not positional:
        subs = _keyword_reads(low, keywords, v, tests, known_fields=())
        return _with_subpatterns(low, tests, subs)
    kw_names = tuple_display([repr(k) for k, _ in keywords])
    values = f"{low.helper('attrs')}({v.text}, {cls}, {len(positional)}, {kw_names})"
    tests.append(Test(f"{values} is not None", "attr", v.text, values))
    sub_patterns = positional + [pattern for _, pattern in keywords]
    subs = [
        (pattern, Subject(f"{values}[{i}]")) for i, pattern in enumerate(sub_patterns)
    ]
    return _with_subpatterns(low, tests, subs)
