"""Facts about a match subject computed once, on the match line, and shared
by the cases (keep-lines layout).

PEP 634 leaves how often a subject's kind and length are computed
unspecified, so a kind that two or more cases test, and a length the first
case reads anyway, are computed once into temporaries the case tests then
compare. The paths that can have facts are the subject itself, or each
element of a ``match a, b:`` subject (an element is a value like any
subject: ``match state, event:`` tests ``event``'s kind in several cases).

A guard is user code that may change the subject: facts hold for the cases
up to the first guard that may run code (:mod:`.guards`), and the cases
after it get facts of their own, computed by the first of them
(``stored_facts``), or none.

Facts live in temporaries, which the chosen case body deletes first thing.
The emitter only asks for them where that hides them: beside a subject
temporary (which the bodies delete anyway), or for a local subject when
some case always runs and every body can delete them (see
``MatchEmitter._facts_hidden``).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Callable, Dict, Iterator, List, Optional, Sequence

from spam_transpile.lowering.emit import render_value
from spam_transpile.lowering.ir import (
    All,
    AnyOf,
    Choice,
    Cond,
    LoweredPattern,
    Test,
    Value,
    is_kind_test,
    is_length_test,
    opens_with_sequence_check,
    opens_with_sequence_length,
    starts_with_length,
    tests_in,
)
from spam_transpile.lowering.names import Names
from spam_transpile.lowering.runtime import MATCH_SELF_TYPES

SEQUENCE, MAPPING = 1, 2
# the first item is worth a temporary from this many reads on
FIRST_ITEM_READS = 4
# a temporary's name until it is known to be needed
_PENDING = "<pending>"
# a constant key as the lowering spells it: a string or number literal
_KEY = r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|-?\d[\w.]*)"""


class SubjectFacts:
    """The kind of each path that ``least`` or more tests check, the
    subject's length when the first case opens with a sequence pattern on it
    (CPython reads it there anyway whenever the subject is a sequence), and
    beside that length the subject's first item when the cases read it
    often (``match command.split():`` dispatches on the verb)."""

    def __init__(
        self,
        names: Names,
        helper: str,
        subject: str,
        patterns: Sequence[LoweredPattern],
        paths: Sequence[str] = (),
        least: int = 2,
        first_item: bool = False,
        first_keys: bool = False,
        compact: bool = False,
    ) -> None:
        self.subject = subject
        #: kinds by the helper alone, for a line too wide (keep_lines.py)
        self._compact = compact
        #: path -> the temporary holding its kind
        self.kinds: Dict[str, str] = {}
        self.length = ""
        self.first = ""
        #: reads of ``subject[0]``, where the first item may be shared
        self._first_read: Optional["re.Pattern[str]"] = None
        #: constant key (as spelled) -> the temporary holding its value
        self.keys: Dict[str, str] = {}
        self.shared: Optional[SharedKeys] = None
        self.statements: List[str] = []
        self.temps: List[str] = []
        self._names = names
        self._helper = helper
        self._patterns = patterns
        if not patterns:
            return
        for path in paths or (subject,):
            tested = [t for p in patterns for t in _kind_tests(p.cond, path)]
            if len(tested) >= least:
                self.kinds[path] = _PENDING
        if subject in self.kinds and opens_with_sequence_length(
            patterns[0].cond, subject
        ):
            self.length = _PENDING
        # A kind every test of which the shared length answers needs no
        # temporary of its own.
        applied = [self.apply(p).cond for p in patterns]
        unused = [
            path
            for path in self.kinds
            if not any(
                is_kind_test(test, path) for cond in applied for test in tests_in(cond)
            )
        ]
        for path in self.kinds:
            self.kinds[path] = "" if path in unused else names.temp("kind")
        if self.length:
            self.length = names.temp("len")
        self._write_statements(unused)
        for path in unused:
            del self.kinds[path]
        # ``first_item``: the caller knows no string literal of the patterns
        # spells ``subject[0]``, so every occurrence is a read the lowering
        # made.
        if self.length and first_item:
            self._first_read = re.compile(rf"(?<![\w.]){re.escape(subject)}\[0\]")
        if self._first_read is not None and self._first_reads() >= FIRST_ITEM_READS:
            # Read only once the shared length says there is an item: every
            # read of it in the cases comes after such a length test.
            self.first = names.temp("first")
            self.statements.append(
                f"{self.first} = {subject}[0] if {self.length} >= 1 else None"
            )
            self.temps.append(self.first)
        # ``first_keys``: likewise for ``subject.get(``.
        if first_keys and self.kinds.get(subject):
            self._share_keys()
            if self.keys and not self.length:
                self._inline_unread_kind()

    def apply(self, pattern: LoweredPattern) -> LoweredPattern:
        if not (self.kinds or self.length or self.keys):
            return pattern
        cond = self._cond(pattern.cond)
        # Once the pattern matched, a value chosen by testing its
        # alternatives again reads the length of a sequence.
        matched = opens_with_sequence_check(pattern.cond, self.subject)
        bindings = tuple(
            (name, self._value(value, matched)) for name, value in pattern.bindings
        )
        if not (self.first or self.keys):
            return LoweredPattern(cond, bindings)
        bindings = tuple(
            (name, rewrite_value(value, self._use_shared)) for name, value in bindings
        )
        cond = rewrite_cond(cond, self._use_shared)
        if self.shared is not None and self.keys:
            cond = self.shared.without_implied_check(cond)
        return LoweredPattern(cond, bindings)

    def _use_shared(self, text: str) -> str:
        if self.first and self._first_read is not None:
            text = self._first_read.sub(self.first, text)
        if self.shared is not None and self.keys:
            text = self.shared.rewrite_text(text)
        return text

    # -- values under constant keys -------------------------------------------

    def _share_keys(self) -> None:
        kind = self.kinds[self.subject]
        shared = SharedKeys(
            self.subject,
            self._helper,
            self._patterns,
            lambda key: self._names.temp("key"),
        )
        self.shared = shared
        self.keys = shared.keys
        self.statements.extend(shared.assignments(f"{kind} == {MAPPING}"))
        self.temps.extend(shared.keys.values())

    def _inline_unread_kind(self) -> None:
        """When the shared values stand in for every mapping check, the kind
        is read only to look them up: no temporary of its own."""
        kind = self.kinds[self.subject]
        read = re.compile(rf"\b{re.escape(kind)}\b")
        for pattern in self._patterns:
            if any(read.search(text) for text in _texts_of(self.apply(pattern))):
                return
        is_mapping = self._kind_expr(self.subject, MAPPING)
        self.statements = [
            statement.replace(f"if {kind} == {MAPPING} else", f"if {is_mapping} else")
            for statement in self.statements
            if not statement.startswith(f"{kind} = ")
        ]
        self.temps.remove(kind)
        del self.kinds[self.subject]

    def _texts(self) -> Iterator[str]:
        for pattern in self._patterns:
            yield from _texts_of(pattern)

    def _first_reads(self) -> int:
        assert self._first_read is not None
        return sum(len(self._first_read.findall(text)) for text in self._texts())

    def _write_statements(self, unused: Sequence[str]) -> None:
        b = self._names.builtin
        for path, temp in self.kinds.items():
            if path not in unused:
                self.statements.append(f"{temp} = {self._kind_value(path)}")
                self.temps.append(temp)
            if path != self.subject or not self.length:
                continue
            is_sequence = (
                self._kind_expr(path, SEQUENCE) if path in unused else f"{temp} == 1"
            )
            self.statements.append(
                f"{self.length} = {b('len')}({path}) if {is_sequence} else -1"
            )
            self.temps.append(self.length)

    # -- spelling ---------------------------------------------------------------

    def _kind_value(self, path: str) -> str:
        # The common exact types answer without a call (static types: ABC
        # registration never changes their flags). A chain of ``is`` tests
        # measured faster than one lookup in a table of types.
        b = self._names.builtin
        if self._compact:
            return f"{self._helper}.kind({path})"
        tested = {t.fact for p in self._patterns for t in _kind_tests(p.cond, path)}
        parts = []
        if "sequence" in tested:
            # ``str`` is the common value that is not a sequence.
            parts.append(
                f"1 if {b('type')}({path}) is {b('tuple')} or "
                f"{b('type')}({path}) is {b('list')} else "
                f"0 if {b('type')}({path}) is {b('str')} else"
            )
        if "mapping" in tested:
            parts.append(f"2 if {b('type')}({path}) is {b('dict')} else")
        parts.append(f"{self._helper}.kind({path})")
        return " ".join(parts)

    def _kind_expr(self, path: str, number: int) -> str:
        b = self._names.builtin
        if self._compact:
            return f"{self._helper}.kind({path}) == {number}"
        if number == SEQUENCE:
            # tuples first: records, instructions and tokens are matched
            # far more often than lists; then ``str``, the common value that
            # is no sequence (as paths.kind_test)
            exact = (
                f"{b('tuple')} or {b('type')}({path}) is {b('list')} or "
                f"{b('type')}({path}) is not {b('str')} and"
            )
        else:
            exact = f"{b('dict')} or"
        return (
            f"({b('type')}({path}) is {exact} "
            f"{self._helper}.kind({path}) == {number})"
        )

    # -- rewriting the tests -----------------------------------------------------

    # ``in_sequence``: a sequence check on the subject came first. The shared
    # length is a sequence's; a mapping pattern's length check (CPython's
    # ``len(subject) >= number of keys``) keeps calling len().
    def _cond(self, cond: Cond, in_sequence: bool = False) -> Cond:
        if isinstance(cond, Test):
            return self._test(cond, in_sequence)
        if isinstance(cond, All):
            parts = list(cond.parts)
            kept = []
            for i, part in enumerate(parts):
                if isinstance(part, Test) and is_kind_test(part, self.subject):
                    in_sequence = part.fact == "sequence"
                if not self._implied(part, parts[i + 1 : i + 2]):
                    kept.append(self._cond(part, in_sequence))
            return All(tuple(kept))
        return AnyOf(
            tuple(self._cond(a, in_sequence) for a in cond.alternatives), cond.stores
        )

    def _value(self, value: Value, in_sequence: bool) -> Value:
        if isinstance(value, str):
            return value
        return Choice(
            tuple(
                (self._cond(cond, in_sequence), self._value(option, in_sequence))
                for cond, option in value.options
            )
        )

    def _implied(self, part: Cond, following: Sequence[Cond]) -> bool:
        """A sequence check followed by length checks on the shared length
        (directly, or first thing in every alternative of an or-pattern):
        the length is -1 for anything but a sequence, so they fail alone."""
        return (
            bool(self.length)
            and is_kind_test(part, self.subject, "sequence")
            and bool(following)
            and starts_with_length(following[0], self.subject)
        )

    def _test(self, test: Test, in_sequence: bool) -> Test:
        temp = self.kinds.get(test.path) if test.kind == "kind" else None
        if temp:
            number = SEQUENCE if test.fact == "sequence" else MAPPING
            return dataclasses.replace(
                test, expr=f"{temp} == {number}", readable="", cheap=True
            )
        if is_length_test(test, self.subject) and self.length and in_sequence:
            assert isinstance(test.fact, tuple)
            op, n = test.fact
            return dataclasses.replace(test, expr=f"{self.length} {op} {n}", cheap=True)
        return test


class SharedKeys:
    """Values under constant keys of a mapping subject that the first case
    looks up (CPython's first case looks each of its keys up on every
    mapping long enough) and the cases read often: ``match event:`` with
    ``{"type": ...}`` in every case looks ``type`` up once, into a variable
    the cases then test (the keep-lines layout).

    The value is read once the subject is known to be a mapping, with the
    sentinel for a missing key; the lowering only reads a value without the
    sentinel where the sub-pattern rejects None, and so rejects the sentinel
    too. For anything but a mapping the variable holds the sentinel, so a
    mapping check followed by a test the sentinel fails can go.
    """

    def __init__(
        self,
        subject: str,
        helper: str,
        patterns: Sequence[LoweredPattern],
        new_name: Callable[[str], str],
    ) -> None:
        self.subject = subject
        self.missing = f"{helper}.MISSING"
        #: constant key (as spelled) -> the variable holding its value
        self.keys: Dict[str, str] = {}
        self.shared: Optional[SharedKeys] = None
        self._read = re.compile(
            rf"(?<![\w.]){re.escape(subject)}\.get\({_KEY}"
            rf"(?:, {re.escape(self.missing)})?\)"
        )
        if not patterns:
            return
        first = patterns[0].cond
        parts = first.parts if isinstance(first, All) else (first,)
        opening = parts[0] if parts else None
        if not (
            isinstance(opening, Test) and is_kind_test(opening, subject, "mapping")
        ):
            return
        self.check = opening
        # in the order the first case looks them up (a set's order would
        # change with the hash seed, and the variables' names with it)
        looked_up = list(
            dict.fromkeys(
                m.group(1)
                for part in parts
                if isinstance(part, Test)
                for m in self._read.finditer(part.expr)
            )
        )
        counts: Dict[str, int] = {}
        for pattern in patterns:
            for text in _texts_of(pattern):
                for m in self._read.finditer(text):
                    counts[m.group(1)] = counts.get(m.group(1), 0) + 1
        for key in sorted(looked_up, key=lambda k: -counts.get(k, 0)):
            if counts.get(key, 0) >= FIRST_ITEM_READS and _constant(key):
                self.keys[key] = new_name(key)

    def assignments(self, is_mapping: str) -> List[str]:
        """The statements that look the keys up, the most read first."""
        return [
            f"{self.keys[key]} = {self.subject}.get({key}, {self.missing})"
            f" if {is_mapping} else {self.missing}"
            for key in self.keys
        ]

    def rewrite_text(self, text: str) -> str:
        return self._read.sub(self._name_of, text)

    def rewrite(self, pattern: LoweredPattern, drop_checks: bool) -> LoweredPattern:
        """``pattern`` reading the variables; ``drop_checks``: without the
        mapping checks they make redundant."""
        cond = rewrite_cond(pattern.cond, self.rewrite_text)
        if drop_checks:
            cond = self.without_implied_check(cond)
        bindings = tuple(
            (name, rewrite_value(value, self.rewrite_text))
            for name, value in pattern.bindings
        )
        return LoweredPattern(cond, bindings)

    def _name_of(self, read: "re.Match[str]") -> str:
        return self.keys.get(read.group(1), read.group(0))

    def without_implied_check(self, cond: Cond) -> Cond:
        """Drops the subject's mapping check where a test of a shared value
        follows it that the sentinel fails (equality with a literal, ``in``
        literals, ``is``, a builtin's isinstance()): for anything but a
        mapping the value is the sentinel, so that test alone rejects it."""
        if isinstance(cond, Test):
            return cond
        if isinstance(cond, AnyOf):
            alternatives = tuple(
                self.without_implied_check(a) for a in cond.alternatives
            )
            return AnyOf(alternatives, cond.stores)
        parts = [self.without_implied_check(part) for part in cond.parts]
        kept = [
            part
            for i, part in enumerate(parts)
            if not (
                is_kind_test(part, self.subject, "mapping")
                and self._rejects_sentinel(parts[i + 1 : i + 2])
            )
        ]
        return All(tuple(kept))

    def _rejects_sentinel(self, following: Sequence[Cond]) -> bool:
        if not following or not isinstance(following[0], Test):
            return False
        expr = following[0].expr
        for temp in self.keys.values():
            if expr.startswith((f"{temp} == ", f"{temp} in (", f"{temp} is ")):
                return True
            # a builtin's own isinstance() (the lowering spells a shadowed
            # builtin otherwise); a foreign class could accept the sentinel
            builtin = re.match(rf"isinstance\({re.escape(temp)}, (\w+)\)", expr)
            if builtin and builtin.group(1) in MATCH_SELF_TYPES:
                return True
        return False


def stored_facts(statements: Sequence[str]) -> str:
    """The facts' statements (``temp = value``, in order) as one truthy
    expression that stores them: ``[temp := value, ...]``."""
    stores = []
    for statement in statements:
        temp, value = statement.split(" = ", 1)
        assert temp.isidentifier(), statement
        stores.append(f"{temp} := {value}")
    return f"[{', '.join(stores)}]"


def rewrite_cond(cond: Cond, rewrite: Callable[[str], str]) -> Cond:
    if isinstance(cond, Test):
        readable = rewrite(cond.readable) if cond.readable else cond.readable
        return dataclasses.replace(cond, expr=rewrite(cond.expr), readable=readable)
    if isinstance(cond, All):
        return All(tuple(rewrite_cond(part, rewrite) for part in cond.parts))
    stores = tuple(
        tuple((name, rewrite_value(value, rewrite)) for name, value in alternative)
        for alternative in cond.stores
    )
    return AnyOf(tuple(rewrite_cond(a, rewrite) for a in cond.alternatives), stores)


def rewrite_value(value: Value, rewrite: Callable[[str], str]) -> Value:
    if isinstance(value, str):
        return rewrite(value)
    return Choice(
        tuple(
            (rewrite_cond(cond, rewrite), rewrite_value(option, rewrite))
            for cond, option in value.options
        )
    )


def _kind_tests(cond: Cond, path: str) -> Iterator[Test]:
    return (t for t in tests_in(cond) if is_kind_test(t, path))


def _texts_of(pattern: LoweredPattern) -> Iterator[str]:
    for test in tests_in(pattern.cond):
        yield test.expr
    for _, value in pattern.bindings:
        yield render_value(value)


def _constant(key: str) -> bool:
    try:
        value = ast.literal_eval(key)
    except (ValueError, SyntaxError):
        return False
    return type(value) in (str, bytes, int, float)
