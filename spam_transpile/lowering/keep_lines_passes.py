"""The passes the keep-lines layout makes over one match statement's plan
before printing it: the facts its cases share (a kind, a length, a key's
value), captures stored where first read or in the guard, a repeated read
read once, before 3.8 captures a body assigns itself, and where a long
run of literal cases splits in two."""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

import libcst as cst

from spam_transpile.checks.reachability import is_irrefutable
from spam_transpile.lowering import emit
from spam_transpile.lowering.bodies import as_body, delete_first, starts_simple
from spam_transpile.lowering.early_binding import store_in_guard
from spam_transpile.lowering.read_once import read_calls_once, read_paths_once
from spam_transpile.lowering.ir import LoweredPattern
from spam_transpile.lowering.paths import Subject
from spam_transpile.lowering.scope_info import CLASS, FUNCTION
from spam_transpile.lowering.scopes import capture_names_of, patterns_within
from spam_transpile.lowering.shared_tests import share_opening_tests
from spam_transpile.lowering.subject_facts import SubjectFacts
from spam_transpile.syntax.codegen import RawExpression

from spam_transpile.lowering.helper_lines import MatchAssign
from spam_transpile.lowering.literal_switch import LiteralSplit, split_literal_run
from spam_transpile.lowering.names import Names
from spam_transpile.lowering.scope_info import Scope

if TYPE_CHECKING:
    from spam_transpile.lowering.transformer import MatchLowering


class PlanPasses:
    """What :class:`.keep_lines.MatchEmitter` decides about its cases'
    plans; the emitter sets these attributes and prints the result."""

    owner: "MatchLowering"
    node: cst.Match
    names: Names
    scope: Scope
    layout: str
    subject: str
    subject_temp: Optional[str]
    element_temps: List[str]
    subject_info: Optional[Subject]
    #: the facts the first run of cases shares, once computed
    facts: SubjectFacts
    _guards: Dict[int, cst.BaseExpression]
    _body_stores: Dict[int, List[Tuple[str, str]]]
    compact: AbstractSet[int]
    #: the string literals of the cases' patterns, once asked for
    _strings: Optional[List[str]] = None

    def _subject_facts(
        self, lowered: Sequence[LoweredPattern], start: int, end: int
    ) -> SubjectFacts:
        """The facts cases ``[start, end)`` share, computed before the first."""
        return SubjectFacts(
            self.names,
            self.owner.lowering.helper_name,
            self.subject,
            lowered[start:end] if self._facts_hidden(self.node.cases) else [],
            self.subject_info.elements or () if self.subject_info else (),
            # Without a subject temporary, facts cost one more statement
            # and a ``del`` per case: worth it from three tests on.
            least=2 if self.subject_temp else 3,
            # Module and class bodies pop each temporary in every test.
            first_item=self.scope.kind == FUNCTION
            and not self._spelled_in_literals(f"{self.subject}[0]"),
            first_keys=self.scope.kind == FUNCTION
            and not self._spelled_in_literals(f"{self.subject}.get("),
            compact=start in self.compact,
        )

    def _spelled_in_literals(self, text: str) -> bool:
        """Whether a string literal of the cases' patterns holds ``text``:
        the only place the program's own text joins the tests the lowering
        writes (value patterns and class names are dotted names)."""
        return any(text in literal for literal in self._pattern_strings())

    def _pattern_strings(self) -> List[str]:
        if self._strings is None:
            self._strings = [
                literal
                for case in self.node.cases
                for node in patterns_within(case.pattern)
                for literal in _strings_of(node)
            ]
        return self._strings

    def _later_facts(
        self, lowered: Sequence[LoweredPattern], runs: Sequence[Tuple[int, int]]
    ) -> List[Tuple[int, int, SubjectFacts]]:
        """The facts of each run of cases after the first, computed by the
        run's first test with ``:=`` (in a function, on 3.8+; elsewhere
        those cases share none)."""
        if self.scope.kind != FUNCTION or not self.owner.target.has_walrus:
            return []
        return [
            (start, end, self._subject_facts(lowered, start, end))
            for start, end in runs
        ]

    def _store_in_guard(
        self, index: int, pattern: LoweredPattern, quiet: FrozenSet[str]
    ) -> LoweredPattern:
        """``pattern`` without the store of a capture its guard reads before
        running any code: the guard stores it there (see
        :func:`.store_in_guard`)."""
        guard = self.node.cases[index].guard
        if guard is None or not quiet:
            return pattern
        stored = store_in_guard(pattern, guard, quiet)
        if stored is None:
            return pattern
        pattern, node, store = stored
        self._guards[index] = guard.deep_replace(node, RawExpression(store))
        return pattern

    def _bind_in_body(self, index: int, pattern: LoweredPattern) -> LoweredPattern:
        """Before 3.8, in a function: ``pattern`` without its bindings where
        its body binds them instead, with plain assignments on its first
        line (before any ``del``), as a person writes it.

        Nothing runs between the test and that line, so the values are read
        as the test would read them, after the case's checks. A guard reads
        the captures before the body, and a body starting with a compound
        statement has no line to put them on: those cases store them in the
        test, through the variables' cells (emit.cell_binder)."""
        case = self.node.cases[index]
        if (
            self.owner.target.has_walrus
            or self.scope.kind != FUNCTION
            or not pattern.bindings
            or case.guard is not None
            or not starts_simple(as_body(case.body))
        ):
            return pattern
        stores = [(name, emit.render_value(value)) for name, value in pattern.bindings]
        self._body_stores[index] = stores
        return LoweredPattern(pattern.cond, ())

    def _reads_once(
        self, pattern: LoweredPattern, named: Dict[str, str]
    ) -> LoweredPattern:
        """In a function that never reads its own frame, the helper's read of
        a class pattern's fields, and a path a case reads again, are read
        once per case, into a temporary left for the frame to drop (it may
        be unset, so no ``del``)."""
        helper = self.owner.lowering.helper_name
        if (
            self.scope.kind != FUNCTION
            or not self.owner.target.has_walrus
            or not self._frame_quiet()
        ):
            return pattern
        if helper:
            pattern = read_calls_once(
                pattern, f"{helper}.attrs(", lambda _: self.names.temp("fields"), named
            )
        # A keyword sub-pattern's attribute, read by ``getattr`` with a
        # default, as often as its checks read it
        getattr_call = f"{self.names.builtin('getattr')}("
        pattern = read_calls_once(
            pattern, getattr_call, lambda _: self.names.temp("value"), named
        )
        heads = frozenset([self.subject, *self.element_temps])
        if self.subject_info is not None and self.subject_info.elements:
            heads |= frozenset(self.subject_info.elements)
        return read_paths_once(
            pattern, heads, lambda _: self.names.temp("value"), named
        )

    def _share_opening_tests(
        self, lowered: List[LoweredPattern], runs: Sequence[Tuple[int, int]]
    ) -> List[LoweredPattern]:
        """Opening tests consecutive cases share, tested once (see
        :mod:`.shared_tests`): in a function that never reads its own frame
        (the flag stays there unseen), with ``:=``."""
        if (
            self.scope.kind != FUNCTION
            or not self.owner.target.has_walrus
            or not self._frame_quiet()
        ):
            return lowered
        ends = {end for _, end in runs}
        cases = self.node.cases
        can_follow = [
            index + 1 not in ends and self._keeps_what_it_read(case)
            for index, case in enumerate(cases)
        ]
        return share_opening_tests(
            lowered, can_follow, lambda: self.names.temp("shared")
        )

    def _keeps_what_it_read(self, case: cst.MatchCase) -> bool:
        """Whether, once ``case`` failed, the names its pattern read still
        hold what they held: only a guard can fail after its captures are
        stored, so a guard with ``:=``, or captures of names the pattern
        (or the subject) reads, end a group."""
        if case.guard is None:
            return True
        if "NamedExpr" in _node_kinds(case.guard):
            return False
        captured = set(capture_names_of(case.pattern))
        if self.subject in captured:
            return False
        # (an attribute's own name counts too: a few groups fewer at most)
        read = {
            name
            for node in patterns_within(case.pattern)
            if type(node) is cst.MatchValue or type(node) is cst.MatchClass
            for name in _dotted_names(
                node.value if type(node) is cst.MatchValue else node.cls  # type: ignore
            )
        }
        return not captured & read

    def _frame_quiet(self) -> bool:
        """Nothing in the function reads its variables by name (keep-lines)."""
        if self.layout != "keep-lines":
            return False
        if not self.owner.frames_read:
            return True  # no function of the module spells a way to
        return not self.scope.reads_own_frame()

    def _quiet_captures(self) -> FrozenSet[str]:
        """Captures this match may store early: keep-lines, in a function,
        where ``:=`` stores them (3.8+)."""
        if (
            self.scope.kind != FUNCTION
            or not self.owner.target.has_walrus
            or not self._frame_quiet()
        ):
            return frozenset()
        return self.scope.quiet_captures()

    def _facts_hidden(self, cases: Sequence[cst.MatchCase]) -> bool:
        """Whether temporaries for shared facts stay out of sight: beside a
        subject temporary, which the bodies delete anyway; for a local
        subject, only if some case always runs and each body deletes them
        first thing (else they would show in ``locals()``), or in a function
        that never reads its own frame. A class body
        shares none: its temporaries live outside its namespace
        (class_temps), and fewer of them is less to share between threads
        creating the class; it runs once per class anyway."""
        if self.scope.kind == CLASS:
            return False
        if self.subject_temp is not None:
            return True
        if self.scope.kind != FUNCTION or not cases:
            return False
        if self._frame_quiet():
            # nothing in the function reads its variables: they may stay
            # until it returns, as its other temporaries do (README)
            return True
        last = cases[-1]
        if last.guard is not None or not is_irrefutable(last.pattern):
            return False
        probe = ["_"]
        return all(
            delete_first(as_body(case.body), probe) is not case.body for case in cases
        )

    def _literal_split(
        self,
        cases: Sequence[cst.MatchCase],
        first: cst.SimpleStatementLine,
        header_breaks: int,
    ) -> Optional[LiteralSplit]:
        """Where a long run of literal cases splits in two (see
        :mod:`.literal_switch`): on a match line that reads the subject and
        does nothing else, in a function that never reads its own frame (the
        temporary stays), with ``:=``. ``header_breaks``: the line breaks
        inside the match statement's header."""
        if (
            self.scope.kind != FUNCTION
            or not self.owner.target.has_walrus
            or self.owner.helper_on_match_lines
            or not self._frame_quiet()
            or self.element_temps
            or (self.subject_info is not None and self.subject_info.elements)
            or len(first.body) != 1
            # (the line's one statement may be a fact that reads the subject
            # first, ``_spam_kind1 = ...``: the split's line would drop it)
            or self.facts.statements
            or header_breaks
        ):
            return None
        if self.subject_temp is None:
            first_read, hint = self.subject, self.subject
        else:
            # the subject statement's value, stored by the split's first read
            statement = first.body[0]
            assert isinstance(statement, MatchAssign)
            value = self.owner.code(statement.value)
            first_read, hint = f"{self.subject_temp} := {value}", "literal"
        return split_literal_run(
            cases,
            self.subject,
            first_read,
            self.owner.lowering,
            lambda: self.names.temp(hint),
        )


def _dotted_names(node: cst.BaseExpression) -> List[str]:
    """The names of a dotted name (a value pattern's or a class's)."""
    names: List[str] = []
    while isinstance(node, cst.Attribute):
        names.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        names.append(node.value)
    return names


def _node_kinds(node: cst.CSTNode) -> Set[str]:
    """The kinds of node in ``node`` (a guard: small), by direct recursion."""
    kinds = {type(node).__name__}
    for child in node.children:
        kinds |= _node_kinds(child)
    return kinds


def _strings_of(pattern: cst.CSTNode) -> List[str]:
    """The string literals of a value pattern, or of a mapping pattern's
    keys, as written."""
    if type(pattern) is cst.MatchValue:
        values = [pattern.value]  # type: ignore[attr-defined]
    elif type(pattern) is cst.MatchMapping:
        values = [pair.key for pair in pattern.elements]  # type: ignore
    else:
        return []
    found: List[str] = []
    while values:
        value = values.pop()
        if isinstance(value, cst.SimpleString):
            found.append(value.value)
        elif isinstance(value, cst.ConcatenatedString):
            values += [value.left, value.right]
    return found
