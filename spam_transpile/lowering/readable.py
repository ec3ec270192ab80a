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
    Any,
    Dict,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

import libcst as cst

from spam_transpile.lowering import emit
from spam_transpile.lowering.ir import All, AnyOf, LoweredPattern, is_kind_test, is_true
from spam_transpile.lowering.paths import (
    Subject,
    exhaustive_pattern,
    exhaustive_test,
)
from spam_transpile.lowering.positions import lines_before_case
from spam_transpile.lowering.read_once import fields_read_once
from spam_transpile.lowering.bodies import (
    indented_block,
    leaving_cases,
    only_pass,
    statements_of_lone_case,
)
from spam_transpile.lowering.class_temps import declare_globals
from spam_transpile.lowering.declared_subjects import (
    declared_types,
    trusting_declarations,
)
from spam_transpile.lowering.decision_tree import Branch, Leaf, Node, tree_of_cases
from spam_transpile.lowering.guard_values import (
    GuardReadingValues,
    guards_reading_values,
    names_read,
)
from spam_transpile.lowering.guards import segments
from spam_transpile.lowering.declarations import declared_captures
from spam_transpile.lowering.scopes import is_annotated
from spam_transpile.lowering.subjects import readable_subject

from spam_transpile.lowering.readable_passes import (
    SharedLength,
    measured_in_branches,
    container_captures,
    merged_same_bodies,
    spelled_readably,
    stores_in,
    unpacking,
    unparenthesized,
)

if TYPE_CHECKING:  # pragma: no cover
    from spam_transpile.lowering.transformer import MatchLowering

LINE_LENGTH = 88
# A case's captures share one assignment up to this width (``x, y =
# shape.get("x"), shape.get("y")``), which fits on one line up to six
# levels of indentation deep.
TOGETHER = LINE_LENGTH - 6 * 4

Body = Union[cst.IndentedBlock, cst.SimpleStatementSuite]


class Raw(cst.Name):
    """Generated expression or statement text, printed as it is."""

    def _validate(self) -> None:
        pass


def _statement(text: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(Raw(text))])


class ReadableMatch:
    """Builds the statements that replace one match statement."""

    def __init__(
        self, owner: "MatchLowering", original: cst.Match, node: cst.Match
    ) -> None:
        self.owner = owner
        self.original = original
        self.node = node
        self.scope_kind = owner.scopes[-1].kind
        self.subject, self.subject_var, self.info = self._subject()
        #: the helper's field reads named so far (``_fields_once``)
        self._fields: Dict[str, str] = {}
        #: per case index: its guard reading the captured values
        self._guards: Dict[int, GuardReadingValues] = {}
        #: cases whose guard is an ``if`` inside their branch
        self._guards_inside: Set[int] = set()
        #: how many cases from the first always leave (computed once)
        self._leaving: Optional[int] = None

    def _subject(self) -> Tuple[str, Optional[str], Subject]:
        chosen = readable_subject(
            self.owner,
            self.owner.scopes[-1],
            self.original,
            self.node.subject,
            lambda: self._local_name("subject"),
        )
        self._chosen = chosen
        return chosen.text, chosen.var, chosen.info

    def statements(self) -> List[cst.BaseStatement]:
        out = self._statements()
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
        lowering.typed = self._annotated_function()
        lowering.typed_stores = lowering.typed and self.owner.target.has_walrus
        try:
            lowered = [lowering.lower_case(case.pattern, self.info) for case in cases]
        finally:
            lowering.typed = lowering.typed_stores = False
        function = self.owner.scopes[-1].node
        lowered = trusting_declarations(lowered, typed)
        if self.scope_kind == "function" and function is not None:
            self._guards = guards_reading_values(
                function, self.original, self.node, lowered, self._chosen.stable()
            )
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
            out.append(_statement(length.statement))
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
        plan = self._plan(cases, lowered)
        if length is None and self.scope_kind == "function":
            plan = measured_in_branches(
                plan, self.subject, lambda: self._local_name("size")
            )
        statements = self._statements_of(plan, chain)
        if len(statements) == 1:
            statements = statements_of_lone_case(statements[0])  # type: ignore
        head = statements[0]
        statements[0] = head.with_changes(leading_lines=self._lines_before_chain())
        out += statements
        declared = self._declarations(cases, lowered)
        kinds = container_captures(self.original) if declared else {}
        out[:0] = [
            _statement(f"{name}: {kinds.get(name, 'object')}") for name in declared
        ]
        if self._doomed and self.scope_kind == "class":
            # A class body's namespace sees every store: they live in the
            # enclosing function or the module (see class_temps).
            holder = self.owner.class_temps_holder(self._doomed)
            out.insert(0, _statement(f"{holder} {', '.join(self._doomed)}"))
        first = out[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.If))
        out[0] = first.with_changes(
            leading_lines=[*self.node.leading_lines, *first.leading_lines]
        )
        return out

    def _lines_before_chain(self) -> List[cst.EmptyLine]:
        """What stood between ``match`` and the first ``case`` (comments,
        blank lines), and the match line's own comment where no subject
        assignment took it."""
        lines = self._lines_before(0)
        comment = self.node.whitespace_after_colon.comment
        if comment is not None and self.subject_var is None:
            lines.insert(0, cst.EmptyLine(comment=comment))
        return lines

    def _lines_before(self, index: int) -> List[cst.EmptyLine]:
        return lines_before_case(
            self.node.cases[index], self.original.cases[index], self.owner.position
        )

    @staticmethod
    def _always_matches(case: cst.MatchCase, pattern: LoweredPattern) -> bool:
        return case.guard is None and is_true(pattern.cond)

    def _delete(self) -> cst.SimpleStatementLine:
        return _statement(f"del {', '.join(self._doomed)}")

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
        stored: List[str] = []
        if not self.owner.target.has_walrus:
            for index, (case, pattern) in enumerate(zip(cases, lowered)):
                stored += [n for alt in stores_in(pattern.cond) for n, _ in alt]
                if case.guard is not None:
                    stored += self._stored_before_guard(index, pattern)
        return declared_captures(
            function, self.original, lowered, stored, self._annotated_function()
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

    def _local_name(self, hint: str) -> str:
        """A name for a temporary: in a function, one of its own (each
        function may have its ``subject``)."""
        function = self.owner.scopes[-1].node if self._nests() else None
        return self.owner.names.readable(hint, function)

    def _nests(self) -> bool:
        """Whether the decision tree may nest cases (:meth:`_plan`): in a
        function (module and class bodies delete their temporaries in each
        case, one chain)."""
        return self.scope_kind == "function"

    def _annotated_function(self) -> bool:
        return is_annotated(self.owner.scopes[-1].node)

    def _plan(
        self, cases: Sequence[cst.MatchCase], lowered: Sequence[LoweredPattern]
    ) -> Sequence[Node]:
        """The cases as a decision tree (cases sharing their first test
        nested under it), or one after the other where the bodies delete
        temporaries (module and class bodies: an ``else`` deletes them when
        no case matched, which a nested test would skip)."""
        if not self._nests():
            return [Leaf(index, pattern) for index, pattern in enumerate(lowered)]
        return tree_of_cases(cases, lowered, True, self.owner.names.builtin, True)

    def _statements_of(
        self,
        nodes: Sequence[Node],
        orelse: Optional[Union[cst.If, cst.Else]],
        lines_taken: bool = False,
    ) -> List[Any]:
        """The statements of ``nodes``: an ``if``/``elif`` chain, or several
        where a branch ends its chain (decision_tree): a last case that
        always matches then follows as plain statements. ``lines_taken``:
        the first node's leading lines went to the branch holding it.
        (Any: the first may be a lone ``else``, which the caller mends.)"""
        segments: List[List[Node]] = [[]]
        for node in nodes:
            segments[-1].append(node)
            if isinstance(node, Branch) and node.ends_chain:
                segments.append([])
            elif isinstance(node, Leaf) and self._ends_with_guard_inside(node):
                segments.append([])
        if not segments[-1]:
            segments.pop()
        out: List[Any] = []
        for number, segment in enumerate(segments):
            last = number == len(segments) - 1
            plain = self._plain(segment) if number else None
            if plain is not None:
                out += plain
                continue
            taken = lines_taken and not number
            chain = self._chain(segment, orelse if last else None, taken)
            assert chain is not None
            out.append(chain)
        return out

    def _ends_with_guard_inside(self, leaf: Leaf) -> bool:
        """Whether a guarded case whose captures the guard reads ends its
        chain, to test its guard inside (:meth:`_guard_inside`): where it
        and every case before it always leave (``return``, ``raise``, ...),
        the cases after it may follow as statements of their own, tried
        when no case before matched or its guard failed."""
        if self._leaving is None:
            self._leaving = leaving_cases(self.node.cases)
        return leaf.index < self._leaving and self._may_guard_inside(
            leaf.index, leaf.pattern
        )

    def _may_guard_inside(self, index: int, pattern: LoweredPattern) -> bool:
        """Whether a case may test its guard inside its branch, last of its
        chain: a guard that reads captures it cannot read where they are
        (:mod:`.guard_values`), in a function."""
        guarded = self.node.cases[index].guard is not None and not self._doomed
        return guarded and index not in self._guards and bool(pattern.bindings)

    def _plain(self, segment: Sequence[Node]) -> Optional[List[cst.BaseStatement]]:
        """A case that always matches, after branches that end their chains,
        as the statements of its body (with its captures first)."""
        if len(segment) != 1 or not isinstance(segment[0], Leaf):
            return None
        leaf = segment[0]
        case = self.node.cases[leaf.index]
        if not self._always_matches(case, leaf.pattern):
            return None
        body = self._body(case, leaf.pattern)
        if body.footer:
            return None  # comments after the body: no statement to go before
        statements: List[Any] = list(body.body)
        # the ``case _:  # comment`` line's comment goes on a line of its own
        comment = body.header.comment
        header = [] if comment is None else [cst.EmptyLine(comment=comment)]
        lines = [
            *self._lines_before(leaf.index),
            *header,
            *statements[0].leading_lines,
        ]
        statements[0] = statements[0].with_changes(leading_lines=lines)
        return statements

    def _chain(
        self,
        nodes: Sequence[Node],
        orelse: Optional[Union[cst.If, cst.Else]],
        lines_taken: bool = False,
    ) -> Optional[Union[cst.If, cst.Else]]:
        """``if``/``elif`` over ``nodes``; ``lines_taken``: the first
        node's leading lines went to the branch holding it."""
        chain = orelse
        for position in reversed(range(len(nodes))):
            node = nodes[position]
            first, last = position == 0, position == len(nodes) - 1
            taken = (first and lines_taken) or (isinstance(node, Leaf) and node.copy)
            lines = [] if taken else self._lines_before(node.index)
            if isinstance(node, Branch):
                inner = self._statements_of(node.children, None, lines_taken=True)
                inner[:0] = [_statement(text) for text in node.setup]
                tests = node.tests
                if len(tests) == 1 and is_kind_test(tests[0], tests[0].path):
                    # alone, the spelling mypy follows both ways takes no
                    # more lines, and lists and tuples answer at once
                    tests = (exhaustive_test(self.owner.lowering, tests[0]),)
                test = emit.render_cond(
                    All(tests), readable=True, binder=self._binder()
                )
                chain = cst.If(
                    test=Raw(test),
                    body=cst.IndentedBlock(body=inner),
                    orelse=chain,
                    leading_lines=lines,
                )
                continue
            case = self.node.cases[node.index]
            otherwise = last and not first and chain is None
            chain = self._case(case, node.pattern, chain, otherwise, lines)
        return merged_same_bodies(chain, Raw)

    def _case(
        self,
        case: cst.MatchCase,
        pattern: LoweredPattern,
        orelse: Optional[Union[cst.If, cst.Else]],
        may_be_else: bool,
        leading_lines: Sequence[cst.EmptyLine],
    ) -> Union[cst.If, cst.Else]:
        """``may_be_else``: the last of its chain, after another: ``else:``
        where it always matches."""
        index = next(i for i, c in enumerate(self.node.cases) if c is case)
        if orelse is None and self._may_guard_inside(index, pattern):
            return self._guard_inside(index, pattern, leading_lines)
        plan = self._guards.get(index)
        guard = case.guard if plan is None else plan.guard
        body = self._body(case, pattern, index if plan is not None else None)
        if may_be_else and self._always_matches(case, pattern):
            return cst.Else(body=body, leading_lines=list(leading_lines))
        if index == len(self.node.cases) - 1 and guard is None:
            pattern = exhaustive_pattern(self.owner.lowering, pattern, self.subject)
        test = self._test(pattern, guard, self._stored_before_guard(index, pattern))
        return cst.If(
            test=Raw(test),
            body=body,
            orelse=orelse,
            leading_lines=list(leading_lines),
        )

    def _guard_inside(
        self, index: int, pattern: LoweredPattern, lines: Sequence[cst.EmptyLine]
    ) -> cst.If:
        """The last case of its chain, whose guard reads what it stores:
        its captures assigned first, then the guard as an ``if`` of its own
        (CPython binds them before the guard; where it fails, control falls
        off the chain, as where the pattern fails)."""
        self._guards_inside.add(index)
        case = self.node.cases[index]
        assert case.guard is not None
        guard = Raw(self.owner.code(case.guard).strip())
        inner = cst.If(test=guard, body=indented_block(case.body))
        first = self._binding_statements(case, pattern)
        return cst.If(
            test=Raw(self._test(pattern, None)),
            body=cst.IndentedBlock(body=[*first, inner]),
            leading_lines=list(lines),
        )

    def _body(
        self,
        case: cst.MatchCase,
        pattern: LoweredPattern,
        assigned: Optional[int] = None,
    ) -> cst.IndentedBlock:
        """The case's body, its captures assigned first where no guard
        stored them (``assigned``: the case's index, where its guard read
        their values instead) and, in module and class bodies, the
        temporaries deleted."""
        body = indented_block(case.body)
        first: List[cst.BaseStatement] = []
        if assigned is not None:
            # the source's body: the one here holds lowered code as text
            read = names_read(self.original.cases[assigned].body)
            stored = self._guards[assigned].stored
            used = tuple(
                (n, v) for n, v in pattern.bindings if n in read and n not in stored
            )
            if used:
                first += self._binding_statements(
                    case, LoweredPattern(pattern.cond, used), used == pattern.bindings
                )
        elif case.guard is None and pattern.bindings:
            first += self._binding_statements(case, pattern)
        if self._doomed:
            first.append(self._delete())
        if first:
            kept = [] if only_pass(body) else list(body.body)
            body = body.with_changes(body=[*first, *kept])
        return body

    def _test(
        self,
        pattern: LoweredPattern,
        guard: Optional[cst.BaseExpression],
        stored: Sequence[str] = (),
    ) -> str:
        """``stored``: the captures stored before the guard runs."""
        parts: List[str] = []
        if not is_true(pattern.cond):
            cond = emit.render_cond(pattern.cond, readable=True, binder=self._binder())
            parts.append(cond)
        if guard is not None:
            before = [(n, v) for n, v in pattern.bindings if n in stored]
            if before:
                binder = self._binder()
                parts.append(emit.store_text(tuple(before), binder, readable=True))
            parts.append(emit.guard_operand(guard, self.owner.code(guard).strip()))
        if len(parts) > 1 and isinstance(pattern.cond, AnyOf):
            parts[0] = f"({parts[0]})"  # ``or`` binds looser than the ``and`` after it
        return " and ".join(parts) if parts else "True"

    def _stored_before_guard(self, index: int, pattern: LoweredPattern) -> List[str]:
        """The captures of a guarded case stored before its guard runs:
        all, but where the guard reads the values (:mod:`.guard_values`)."""
        plan = self._guards.get(index)
        if index in self._guards_inside:
            return []
        if plan is None:
            return [name for name, _ in pattern.bindings]
        return list(plan.stored)

    def _binder(self) -> emit.Binder:
        owner = self.owner
        return emit.binder_for(
            owner.scopes[-1],
            owner.target,
            owner.names,
            owner.mangle,
            lambda: owner.lowering.helper("store"),
        )

    def _binding_statements(
        self, case: cst.MatchCase, pattern: LoweredPattern, every: bool = True
    ) -> List[cst.SimpleStatementLine]:
        """``every``: ``pattern`` has every binding of the case (else a
        sequence is not unpacked)."""
        list_name = self.owner.names.builtin("list")
        elements = self.info.elements or []
        # (``a, b = subject, level``: no parentheses around a tuple display)
        display = len(elements) > 1 and self.subject.startswith("(")
        whole = ", ".join(elements) if display else self.subject
        unpacked = unpacking(case.pattern, whole, list_name) if every else None
        if unpacked is not None:
            return [_statement(unpacked)]
        values = [
            emit.render_value(value, readable=True) for _, value in pattern.bindings
        ]
        names = [name for name, _ in pattern.bindings]
        together = f"{', '.join(names)} = {', '.join(values)}"
        if 1 < len(names) <= 3 and len(together) <= TOGETHER and " if " not in together:
            return [_statement(together)]
        return [
            _statement(f"{name} = {unparenthesized(value)}")
            for name, value in zip(names, values)
        ]
