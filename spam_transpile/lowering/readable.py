"""The readable layout: what ``--in-place`` and the pre-commit hook write.

The same lowered cases as the keep-lines layout, written as a person writes
Python 3.9: real statements, lines free to move.

- A subject that is not already a local name gets a variable of its own
  (``subject = command.split()``), named once per function.
- Cases are an ``if``/``elif`` chain, nested where they share a test
  (decision_tree.py), a last ``case _:`` its ``else:``. Captures are
  assignments at the top of the body (``x, y = shape.x, shape.y``,
  ``first, *rest = shape``); a guard reads the values where they are, or
  the captures are stored in the test before it (guard_values.py).
- Sequence and mapping checks use the ABCs of ``collections.abc`` (README,
  Known limits), which a type checker narrows on; cases that dispatch on a
  sequence's length share it (``size = len(subject) if ... else -1``).
- What needs run-time help is a private function after the module's
  imports (readable_file.py), only where the module needs it.

Black then formats exactly the lines that changed (its line-ranges feature),
and the result must have the same syntax tree as before formatting.
"""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

import libcst as cst

from spam_transpile.lowering.case_headers import match_column
from spam_transpile.lowering.decision_tree import Node
from spam_transpile.lowering.ir import LoweredPattern
from spam_transpile.lowering.names import SavedNames
from spam_transpile.lowering.paths import Subject
from spam_transpile.lowering.read_once import fields_read_once
from spam_transpile.lowering.bodies import statements_of_lone_case
from spam_transpile.lowering.class_temps import declare_globals
from spam_transpile.lowering.declared_subjects import (
    declared_types,
    trusting_declarations,
    values_untyped,
)
from spam_transpile.lowering.guard_values import (
    GuardReadingValues,
    guards_reading_values,
)
from spam_transpile.lowering.guards import segments
from spam_transpile.lowering.inlined_captures import (
    ClassLookup,
    Reader,
    inlined_captures,
    without_inlined,
)
from spam_transpile.lowering.declarations import declared_captures, may_be_declared
from spam_transpile.lowering.line_fit import (
    NARROWINGS,
    Narrowing,
    alternative_width,
    lines_over,
    with_calls_split,
)
from spam_transpile.lowering.scopes import capture_names_of, is_annotated
from spam_transpile.lowering.subjects import readable_subject, subject_hints

from spam_transpile.lowering.readable_chains import (
    ChainPrinter,
    raw_statement,
)
from spam_transpile.lowering.readable_passes import (
    SharedLength,
    measured_in_branches,
    container_captures,
    spelled_readably,
    stores_in,
)

if TYPE_CHECKING:  # pragma: no cover
    from spam_transpile.lowering.transformer import MatchLowering


class ReadableMatch(ChainPrinter):
    """Builds the statements that replace one match statement: the plan
    (subject, shared lengths, the decision tree) that ChainPrinter prints."""

    def __init__(
        self, owner: "MatchLowering", original: cst.Match, node: cst.Match
    ) -> None:
        self.owner = owner
        self.original = original
        self.node = node
        self.scope_kind = owner.scopes[-1].kind
        self.subject, self.subject_var, self.info = self._subject()
        self._reset(NARROWINGS[0])

    def _reset(self, narrowing: Narrowing) -> None:
        """Forget a printing: the next prints the plan ``narrowing`` narrows."""
        self._narrowing = narrowing
        #: whether a branch's lone sequence check was spelled on one line
        self._spelled_kind_tests = False
        #: whether a body reading a capture's value made a line wider
        self._inlined_wider = False
        self._depth = 0
        #: the helper's field reads named so far (``_fields_once``)
        self._fields: Dict[str, str] = {}
        #: per case index: its guard reading the captured values
        self._guards: Dict[int, GuardReadingValues] = {}
        #: cases whose guard is an ``if`` inside their branch
        self._guards_inside: Set[int] = set()
        #: cases whose captures their branch stores first (_captures_first)
        self._hoisted: Set[int] = set()
        #: how many cases from the first always leave (computed once)
        self._leaving: Optional[int] = None
        #: per case index: the captures its body reads as their values
        self._inlined: Dict[int, Dict[str, str]] = {}
        #: likewise per alternative of a case written once per alternative
        self._inlined_alternatives: Dict[Tuple[int, int], Dict[str, str]] = {}
        #: how the cases read the subject (in a function)
        self._reader: Optional[Reader] = None
        #: the patterns the chain writes, each with its case's index (one per
        #: alternative of a case split_alternatives splits), once planned
        self._written: List[Tuple[int, LoweredPattern]] = []
        #: the captures items a class pattern checks were unpacked into
        self._unpacked_checked: Set[str] = set()

    def _subject(self) -> Tuple[str, Optional[str], Subject]:
        chosen = readable_subject(
            self.owner,
            self.owner.scopes[-1],
            self.original,
            self.node.subject,
            lambda: self._local_name(
                *subject_hints(self.node.subject, self._declared_class())
            ),
        )
        self._chosen = chosen
        return chosen.text, chosen.var, chosen.info

    def statements(self) -> List[cst.BaseStatement]:
        out = self._fitted()
        if self._doomed and self.scope_kind == "class":
            # A class body's namespace sees every store: they live in the
            # enclosing function or the module (see class_temps).
            holder = self.owner.class_temps_holder(self._doomed)
            out.insert(0, raw_statement(f"{holder} {', '.join(self._doomed)}"))
        first = out[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.If))
        out[0] = first.with_changes(
            leading_lines=[*self.node.leading_lines, *first.leading_lines]
        )
        lowering = self.owner.lowering
        ours = set(lowering.abc_imports.values()) | {lowering.helper_name} - {""}
        declare_globals(self.owner.scopes, ours, out)
        return out

    def _statements(self) -> List[cst.BaseStatement]:
        out: List[cst.BaseStatement] = []
        if self.subject_var is not None:
            out.append(self._chosen.assignment(self.node))
        cases = list(self.node.cases)
        lowering = self.owner.lowering
        typed = declared_types(
            self.owner.scopes,
            self.original,
            self._chosen.read_as(self.node.subject),
            lowering.facts,
            self.owner.names,
        )
        self.info.items = next(
            (what.items for path, what in typed if path == self.info.text), None
        )
        self.info.element_items = {
            path: what.items for path, what in typed if what.items is not None
        }
        self.info.item_type = next(
            (what.element for path, what in typed if path == self.info.text), None
        )
        self.info.element_item_types = {
            path: what.element for path, what in typed if what.element is not None
        }
        lowering.declared_items = []
        lowering.known_lists = frozenset(
            path
            for path, what in typed
            if what.kind == "sequence" and what.cls == "list"
        )
        lowering.typed = self._annotated_function()
        lowering.typed_stores = lowering.typed and self.owner.target.has_walrus
        if self._chosen.var is None and values_untyped(
            self.owner.scopes[-1].node,
            self.node.subject,
            lowering.facts,
            self.owner.names.builtin,
        ):
            lowering.untyped_mappings = _captured_by_several(cases)
        try:
            lowered = [lowering.lower_case(case.pattern, self.info) for case in cases]
        finally:
            lowering.typed = lowering.typed_stores = False
            lowering.untyped_mappings = None
            lowering.known_lists = frozenset()
        function = self.owner.scopes[-1].node
        lowered = trusting_declarations(lowered, [*typed, *lowering.declared_items])
        if self.scope_kind == "function" and function is not None:
            self._guards = guards_reading_values(
                function, self.original, self.node, lowered, self._chosen.stable()
            )
        if self.scope_kind == "function" and isinstance(function, cst.FunctionDef):
            subject, elements = self._users_subject()
            self._reader = Reader(
                function,
                self.original,
                subject,
                elements,
                ClassLookup(lowering.known_class, self.owner.names.builtin),
            )
            inlined = inlined_captures(self._reader, lowered, self._guards)
            fitting = {
                index: self._inlining_that_fits(cases[index], values)
                for index, values in inlined.items()
            }
            self._inlined = {
                index: values for index, values in fitting.items() if values
            }
            lowered = without_inlined(lowered, self._inlined)
        # What is computed before the first case holds until a guard may
        # run code; the cases after it measure the subject again.
        runs = segments(
            [case.guard for case in cases],
            [case.pattern for case in cases],
            self.scope_kind == "function",
            self.owner.names.builtin,
            trusts_operators=True,
        )
        limit = runs[0][1]
        shared, unshared = lowered[:limit], lowered[limit:]
        length = self._shared_length(shared)
        if length is not None:
            out.append(raw_statement(length.statement))
            shared = [length.apply(pattern) for pattern in shared]
        lowered = self._later_lengths(shared + unshared, runs[1:], length)
        helper = self.owner.lowering.helper_name
        if helper and self.owner.target.has_walrus and self.scope_kind == "function":
            # (``:=`` is 3.8's; in a module or class body the variable would
            # stay an attribute: only where it was stored is there a ``del``)
            lowered = [
                fields_read_once(
                    spelled_readably(pattern), helper, self.owner.names, self._fields
                )
                for pattern in lowered
            ]
        added = [self.subject_var] if self.subject_var is not None else []
        added += [length.name] if length is not None else []
        # Module and class bodies: these are no attributes of theirs. Each
        # body deletes them first thing (after its captures are read), so a
        # ``break``, a ``continue`` or an exception in the body leaves none
        # behind; and so does an ``else`` when no case matched.
        self._doomed = added if self.scope_kind != "function" else []
        chain: Optional[Union[cst.If, cst.Else]] = None
        if self._doomed and not self._always_matches(cases[-1], lowered[-1]):
            chain = cst.Else(body=cst.IndentedBlock(body=[self._delete()]))
        self._may_declare = may_be_declared(self.original, lowered)
        plan = self._plan(cases, lowered)
        if length is None and self.scope_kind == "function":
            plan = measured_in_branches(
                plan, self.subject, lambda: self._local_name("size")
            )
        statements = self._printed(plan, chain)
        declared = self._declarations(cases, lowered)
        if set(declared) & self._unpacked_checked:
            # (what is assigned to a variable declared ``object`` is read as
            # ``object``: no item a class checked is unpacked into one)
            self._may_declare |= frozenset(declared)
            statements = self._printed(plan, chain)
        out += statements
        kinds = container_captures(self.original) if declared else {}
        out[:0] = [
            raw_statement(f"{name}: {kinds.get(name, 'object')}") for name in declared
        ]
        return out

    def _fitted(self) -> List[cst.BaseStatement]:
        """The statements, in the first shape of :data:`NARROWINGS` whose
        lines keep to the project's limit once black formats them (the one
        with the fewest lines over it otherwise)."""
        limits = self.owner.limits
        if not limits.narrower:
            return self._statements()
        column = self._column()
        names = self.owner.names.saved()
        tried: Set[Tuple[bool, ...]] = set()
        best: Optional[Tuple[int, Narrowing, List[cst.BaseStatement]]] = None
        uses = (True, True, True)  # (until the first printing shows otherwise)
        for narrowing in NARROWINGS:
            effect = _effect(narrowing, *uses)
            if effect in tried:
                continue  # prints as one tried already
            tried.add(effect)
            out = self._printed_narrowed(narrowing, names, column)
            if best is None:
                uses = (
                    self._spelled_kind_tests,
                    self._inlined_anything(),
                    self.owner.lowering.factored_wide,
                )
            over = lines_over(out, column, limits)
            if best is None or over < best[0]:
                best = (over, narrowing, out)
            if over == 0:
                break
        assert best is not None
        if best[1] is not self._narrowing:
            return self._printed_narrowed(best[1], names, column)
        return best[2]

    def _printed_narrowed(
        self, narrowing: Narrowing, names: SavedNames, column: int
    ) -> List[cst.BaseStatement]:
        self.owner.names.restore(names)
        lowering = self.owner.lowering
        for name in [*lowering.abc_names.values(), lowering.helper_name]:
            if name:
                self.owner.names.claim(name)  # (the module's, from now on)
        self._reset(narrowing)
        # (the printing spells kind tests too: the flags hold all through)
        lowering.abc_mappings = narrowing.abc_mappings
        lowering.abc_sequences = narrowing.abc_sequences
        lowering.alternative_width = alternative_width(self.owner.limits, column)
        lowering.unfactor_wide = narrowing.unfactored_alternatives
        lowering.factored_wide = False
        try:
            out = self._statements()
        finally:
            lowering.abc_mappings = lowering.abc_sequences = False
            lowering.alternative_width, lowering.unfactor_wide = None, False
        if narrowing.split_calls:
            out = with_calls_split(out, column, self.owner.limits)
        return out

    def _inlined_anything(self) -> bool:
        return self._inlined_wider or bool(self._inlined or self._inlined_alternatives)

    def _column(self) -> int:
        return match_column(self.owner, self.original)

    def _printed(
        self, plan: Sequence[Node], chain: Optional[Union[cst.If, cst.Else]]
    ) -> List[cst.BaseStatement]:
        """The statements of ``plan``, the chain's leading lines on the first;
        ``chain``: what follows the last case."""
        self._hoisted, self._guards_inside = set(), set()
        self._unpacked_checked = set()
        statements = self._statements_of(plan, chain)
        if len(statements) == 1:
            statements = statements_of_lone_case(statements[0])  # type: ignore
        head = statements[0]
        statements[0] = head.with_changes(leading_lines=self._lines_before_chain())
        return statements

    def _users_subject(self) -> Tuple[Optional[str], Optional[List[Optional[str]]]]:
        """The user's local name the cases read the subject by (None for our
        temporary), and for a tuple subject, those of its elements."""
        chosen = self._chosen
        if chosen.var is not None and chosen.computed is None:
            return None, None
        elements = chosen.info.elements
        if elements is None:
            return chosen.text, None
        return None, [None if name == chosen.var else name for name in elements]

    def _later_lengths(
        self,
        lowered: List[LoweredPattern],
        runs: Sequence[Tuple[int, int]],
        first: Optional["SharedLength"],
    ) -> List[LoweredPattern]:
        """The length shared by each run of cases after the first (see
        ``statements``), measured again by the run's first test:
        ``(size := len(subject) if ...) >= 1``. In a function, with ``:=``."""
        if self.scope_kind != "function" or not self.owner.target.has_walrus:
            return lowered
        name = first.name if first is not None else ""

        def new_name() -> str:
            return name or self._local_name("size")

        for start, end in runs:
            if self.subject_var is None and self._annotated_function():
                break  # as _shared_length
            length = SharedLength.of(
                self.subject, lowered[start:end], new_name, self._nests()
            )
            if length is None:
                continue
            name = length.name
            lowered[start:end] = [length.apply(p) for p in lowered[start:end]]
            lowered[start] = length.measured_first(lowered[start])
        return lowered

    def _declarations(
        self, cases: Sequence[cst.MatchCase], lowered: Sequence[LoweredPattern]
    ) -> List[str]:
        function = self.owner.scopes[-1].node
        if self.scope_kind != "function" or not isinstance(function, cst.FunctionDef):
            return []
        # (a case written once per alternative assigns each alternative's
        # values: split_alternatives)
        written = self._written or list(enumerate(lowered))
        stored: List[str] = []
        if not self.owner.target.has_walrus:
            for index, pattern in written:
                stored += [n for alt in stores_in(pattern.cond) for n, _ in alt]
                if cases[index].guard is not None:
                    stored += self._stored_before_guard(index, pattern)
        patterns = [pattern for _, pattern in written]
        return declared_captures(
            function, self.original, patterns, stored, self._annotated_function()
        )

    def _shared_length(
        self, lowered: Sequence[LoweredPattern]
    ) -> Optional["SharedLength"]:
        if self.subject_var is None and self._annotated_function():
            # A type checker reads ``shape[0]`` after ``size == 2`` with the
            # declared type of ``shape``, not narrowed to a sequence.
            return None
        return SharedLength.of(
            self.subject,
            lowered,
            lambda: self._local_name("size"),
            self._nests(),
        )

    def _declared_class(self) -> Optional[str]:
        """The class the subject expression is declared to be, if any."""
        found = declared_types(
            self.owner.scopes,
            self.original,
            [("", self.node.subject)],
            self.owner.lowering.facts,
            self.owner.names,
        )
        return found[0][1].cls if found else None

    def _local_name(self, *hints: str) -> str:
        """A name for a temporary: in a function, one of its own (each
        function may have its ``subject``): the first of ``hints`` free as
        it is, else the last numbered."""
        function = self.owner.scopes[-1].node if self._nests() else None
        names = self.owner.names
        hint = next((h for h in hints if names.free(h, function)), hints[-1])
        return names.readable(hint, function)

    def _annotated_function(self) -> bool:
        return is_annotated(self.owner.scopes[-1].node)


def _effect(
    narrowing: Narrowing, spelled_kind_tests: bool, inlined: bool, factored: bool
) -> Tuple[bool, ...]:
    """What ``narrowing`` changes in a match statement's printing, where
    the first printing spelled lone kind tests, inlined captures, wrote
    alternatives after the checks they share."""
    return (
        narrowing.nested_tests,
        narrowing.abc_mappings,
        narrowing.abc_sequences,
        narrowing.plain_kind_tests and spelled_kind_tests,
        narrowing.assigned_captures and inlined,
        narrowing.split_calls,
        narrowing.unfactored_alternatives and factored,
    )


def _captured_by_several(cases: Sequence[cst.MatchCase]) -> FrozenSet[str]:
    """The names more than one case captures: a variable the readable
    layout may declare (``name: object``), which a type checker then reads
    as declared where it is assigned an ``Any``."""
    seen: Set[str] = set()
    several: Set[str] = set()
    for case in cases:
        names = set(capture_names_of(case.pattern))
        several |= seen & names
        seen |= names
    return frozenset(several)
