"""The keep-lines printer: the statements that replace one match statement,
laid out so that every original line keeps its number (see
:mod:`.transformer` for the layout)."""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    AbstractSet,
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
from spam_transpile.lowering import case_headers
from spam_transpile.lowering.case_headers import CaseHeaders, with_comments
from spam_transpile.lowering.bodies import (
    Body,
    as_body,
    blank_lines,
    delete_first,
    element_value,
    returns_unseen,
    run_first,
)
from spam_transpile.lowering.early_binding import bind_early
from spam_transpile.lowering.guards import segments
from spam_transpile.lowering.helper_lines import MatchAssign, MatchLine
from spam_transpile.lowering.ir import LoweredPattern
from spam_transpile.lowering.literal_switch import LiteralSplit
from spam_transpile.lowering.paths import Subject
from spam_transpile.lowering.positions import CaseLines
from spam_transpile.lowering.scope_info import CLASS, FUNCTION
from spam_transpile.lowering.scopes import capture_names
from spam_transpile.lowering.subject_facts import stored_facts
from spam_transpile.lowering.subjects import local_subject, tuple_subject
from spam_transpile.syntax.codegen import HelperPlaceholder, RawExpression

from spam_transpile.lowering.keep_lines_passes import PlanPasses

if TYPE_CHECKING:
    from spam_transpile.lowering.transformer import MatchLowering

SEMICOLON = cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))


class MatchEmitter(PlanPasses, CaseHeaders):
    """Builds the statements that replace one match statement."""

    def __init__(
        self,
        owner: MatchLowering,
        original: cst.Match,
        node: cst.Match,
        compact: AbstractSet[int] = frozenset(),
    ) -> None:
        self.owner = owner
        #: the cases whose checks are written compact, their line being too
        #: wide otherwise (the lowering's ``compact_checks``)
        self.compact = compact
        #: the cases whose line came out wider than ``case_headers.WIDEST``
        self.wide: Set[int] = set()
        self.original = original
        self.node = node
        self.names = owner.names
        self.scope = owner.scopes[-1]
        self.subject_temp: Optional[str] = None
        #: the temporaries of a tuple subject's elements
        self.element_temps: List[str] = []
        self.subject = self._choose_subject()
        self.layout = owner.layout
        self._headers: Dict[int, int] = {}  # case index -> header lines
        #: case index -> its guard, storing a capture it reads first
        self._guards: Dict[int, cst.BaseExpression] = {}
        #: case index -> the ``(name, value)`` its body starts by assigning
        self._body_stores: Dict[int, List[Tuple[str, str]]] = {}
        #: keep-lines: case index -> where its header's parts start, for a
        #: header over several lines
        self._case_lines: Dict[int, Optional[CaseLines]] = {}
        #: case index -> the line (from its case line) its test reached
        self._reached: Dict[int, int] = {}

    # The subject is read once, on the match line. A stable local name can be
    # read again by each test (nothing between can rebind it), which keeps it
    # out of locals(); anything else is copied into a temporary.
    def _choose_subject(self) -> str:
        subject = self.node.subject
        self.subject_info = local_subject(
            self.owner, self.scope, self.original, subject
        )
        if self.subject_info is not None:
            return self.subject_info.text
        if (
            isinstance(subject, cst.Tuple)
            and subject.elements
            and not any(isinstance(e, cst.StarredElement) for e in subject.elements)
        ):
            # ``match a % 3, b:``: one temporary per element, no tuple.
            self.element_temps = [self.names.temp("item") for _ in subject.elements]
            self.subject_temp = self.element_temps[0]
            self.subject_info = tuple_subject(self.element_temps)
            return self.subject_info.text
        self.subject_temp = self.names.temp("subject")
        return self.subject_temp

    def statements(self) -> List[cst.BaseStatement]:
        cases = list(self.node.cases)
        # a copy: the facts' temporaries join this list, not the elements'
        self._all_temps = list(self.element_temps) or (
            [self.subject_temp] if self.subject_temp else []
        )
        subject = self.subject_info or Subject(self.subject)
        uses_before = self.owner.lowering.uses
        lowered = [self._lower_case(index, subject) for index in range(len(cases))]
        # Facts hold until a guard that may run code: the match line
        # computes those of the first run of cases, the first test of each
        # later run those of its own (where ``:=`` can).
        runs = segments(
            [case.guard for case in cases],
            [case.pattern for case in cases],
            self.scope.kind == FUNCTION,
            self.names.builtin,
        )
        self.facts = self._subject_facts(lowered, *runs[0])
        facts_of = [self.facts] * runs[0][1] + [None] * (len(cases) - runs[0][1])
        later = self._later_facts(lowered, runs[1:])
        for start, end, facts in later:
            facts_of[start:end] = [facts] * (end - start)
        quiet = self._quiet_captures()
        fields: Dict[str, str] = {}
        for index, pattern in enumerate(lowered):
            case_facts = facts_of[index]
            if case_facts is not None:
                pattern = case_facts.apply(pattern)
            pattern = bind_early(pattern, quiet)
            pattern = self._reads_once(pattern, fields)
            pattern = self._store_in_guard(index, pattern, quiet)
            lowered[index] = self._bind_in_body(index, pattern)
        lowered = self._share_opening_tests(lowered, runs)
        tests = [self._pattern_test(p, index) for index, p in enumerate(lowered)]
        self._all_temps += self.facts.temps
        # A class body keeps them out of its namespace, which sees every store.
        self._held = ""
        if self.scope.kind == CLASS and self._all_temps:
            self._held = self.owner.class_temps_holder(self._all_temps)
        #: case index -> the temporaries bound once its test ran
        self._case_temps = [list(self._all_temps) for _ in cases]
        for start, _, facts in later:
            if facts.statements:
                tests[start] = f"{stored_facts(facts.statements)} and {tests[start]}"
                for temps in self._case_temps[start:]:
                    temps += facts.temps
        first = self._subject_statement()
        split = self._literal_split(cases, first, self._newlines(self._match_header()))
        if split is not None:
            return [self._split_chain(cases, tests, split)]
        if self.owner.helper_on_match_lines:
            first = self._bind_helper_here(first, uses_before)
        first = self._helper_global_in_class(first, uses_before)
        chain: Optional[Union[cst.If, cst.Else]] = None
        for index in reversed(range(len(cases))):
            chain = self._case_if(cases[index], tests[index], index, chain)
        assert isinstance(chain, cst.If)
        padding = self._newlines(self._match_header()) - self._newlines(first)
        chain = chain.with_changes(
            leading_lines=[*blank_lines(padding), *chain.leading_lines]
        )
        return [first, chain]

    def _split_chain(
        self,
        cases: Sequence[cst.MatchCase],
        tests: List[str],
        split: LiteralSplit,
    ) -> cst.If:
        """``if <half>:`` on the match line, the first half's chain inside it
        (testing the split's temporary), the rest as its ``elif``s."""
        inner: Optional[Union[cst.If, cst.Else]] = None
        for index in reversed(range(split.first)):
            test = self._pattern_test(self._lower_case(index, split.name), index)
            inner = self._case_if(cases[index], test, index, inner, nested=True)
        outer: Optional[Union[cst.If, cst.Else]] = None
        for index in reversed(range(split.first, len(cases))):
            outer = self._case_if(cases[index], tests[index], index, outer)
        assert isinstance(inner, cst.If)
        return cst.If(
            test=RawExpression(split.test),
            body=cst.IndentedBlock(
                body=[inner],
                indent=self.node.indent,
                header=self.node.whitespace_after_colon,
            ),
            orelse=outer,
            leading_lines=self.node.leading_lines,
            whitespace_before_test=cst.SimpleWhitespace(" "),
            whitespace_after_test=cst.SimpleWhitespace(""),
        )

    # -- the match line -----------------------------------------------------

    def _helper_global_in_class(
        self, first: cst.SimpleStatementLine, uses_before: int
    ) -> cst.SimpleStatementLine:
        """A class body reads names with ``LOAD_NAME``, which cloudpickle does
        not count among the globals of a function it copies by value (a class
        made inside it): declared ``global`` before its first use there, the
        helper is read as a function reads it."""
        lowering = self.owner.lowering
        if (
            self.scope.kind != CLASS
            or self.scope.helper_global
            or lowering.uses == uses_before
        ):
            return first
        self.scope.helper_global = True
        name = lowering.helper_name or lowering.helper("")[:-1]
        declare = cst.Global(names=[cst.NameItem(cst.Name(name))], semicolon=SEMICOLON)
        return first.with_changes(body=[declare, *first.body])

    def _bind_helper_here(
        self, first: cst.SimpleStatementLine, uses_before: int
    ) -> cst.SimpleStatementLine:
        """No line of the module runs before its first statement can run code:
        a match line that uses the helper binds it in the module's globals,
        the first time it runs. Which parts the module uses is known once
        every match is lowered: the statement is written then
        (``leave_Module``)."""
        if self.owner.lowering.uses == uses_before:
            return first
        self.owner.lowering.helper("")  # the name is chosen now
        placeholder = cst.Expr(
            HelperPlaceholder("_", text=self.owner.helper_binding), semicolon=SEMICOLON
        )
        return first.with_changes(body=[placeholder, *first.body])

    def _subject_statement(self) -> cst.SimpleStatementLine:
        subject = self.node.subject
        # ``match w := x, y:`` is a valid subject; ``t = w := x, y`` is not.
        if isinstance(subject, (cst.NamedExpr, cst.Tuple)) and not subject.lpar:
            subject = subject.with_changes(
                lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
            )
        smalls: List[cst.BaseSmallStatement]
        if self.element_temps:
            targets = [cst.Element(cst.Name(t)) for t in self.element_temps]
            smalls = [
                MatchAssign(
                    targets=[cst.AssignTarget(cst.Tuple(targets, lpar=[], rpar=[]))],
                    value=subject,
                )
            ]
        elif self.subject_temp is None and isinstance(subject, cst.Tuple):
            # ``a; b`` reads the local names as ``(a, b)`` would, without
            # building a tuple on every run.
            smalls = [MatchLine(element_value(e)) for e in subject.elements]
        elif self.subject_temp is None and self._facts_read_subject_first(subject):
            # The first fact reads the name first (``_spam_len1 =
            # len(instr) if (type(instr) is tuple ...``), on this line.
            smalls = []
        elif self.subject_temp is None:
            smalls = [MatchLine(subject)]
        else:
            smalls = [
                MatchAssign(
                    targets=[cst.AssignTarget(cst.Name(self.subject_temp))],
                    value=subject,
                )
            ]
        facts = [cst.Expr(RawExpression(text)) for text in self.facts.statements]
        declared: List[cst.BaseSmallStatement] = []
        if self._held:
            names = [cst.NameItem(cst.Name(name)) for name in self._all_temps]
            kind = cst.Global if self._held == "global" else cst.Nonlocal
            declared.append(kind(names=names))
        return cst.SimpleStatementLine(
            body=[*declared, *smalls, *facts, *self._declare_captures_local()],
            leading_lines=self.node.leading_lines,
            trailing_whitespace=self.node.whitespace_after_colon,
        )

    def _facts_read_subject_first(self, subject: cst.BaseExpression) -> bool:
        """Whether the subject is a name the first fact statement reads
        before anything else: every fact of a name subject is about it."""
        elements = self.subject_info.elements if self.subject_info else None
        return (
            isinstance(subject, cst.Name)
            and bool(self.facts.statements)
            and not elements
        )

    def _declare_captures_local(self) -> List[cst.BaseSmallStatement]:
        """``x: object`` for each capture, in functions before 3.8.

        Without ``:=`` a capture is stored through the variable's cell, so the
        compiler must see the name as a local of this function (a capture is
        an assignment for CPython); a bare annotation does exactly that and
        runs nothing.
        """
        if self.scope.kind != FUNCTION or self.owner.target.has_walrus:
            return []
        declared = self.scope.declared_globals() | self.scope.declared_nonlocals()
        # a name a case body assigns is a local already
        declared |= {
            name for stores in self._body_stores.values() for name, _ in stores
        }
        return [
            cst.AnnAssign(
                target=cst.Name(name),
                annotation=cst.Annotation(cst.Name("object")),
                value=None,
            )
            for name in capture_names(self.original)
            if name not in declared
        ]

    def _match_header(self) -> str:
        n = self.node
        return (
            self.owner.code(n.whitespace_after_match)
            + self.owner.code(n.subject)
            + self.owner.code(n.whitespace_before_colon)
        )

    # -- one case -------------------------------------------------------------

    def _case_if(
        self,
        case: cst.MatchCase,
        test_text: str,
        index: int,
        orelse: Optional[Union[cst.If, cst.Else]],
        nested: bool = False,
    ) -> Union[cst.If, cst.Else]:
        last = index == len(self.node.cases) - 1
        body = self._body(
            as_body(case.body), nested, self._body_stores.get(index), index
        )
        if test_text == "True":
            # Not a constant: 3.9 and older trace no line for ``elif True:``,
            # and tracers, coverage and test_patma see the case line run.
            test_text = self._always_true()
        if (
            self.layout == "readable"
            and last
            and index > 0
            and test_text == self._always_true()
            and case.guard is None
            and not self._namespace_temps()
            and self._header_lines(case, index) == 0
        ):
            # ``case _:`` last: the ``else`` of the chain (which also keeps
            # an exhaustive match exhaustive for type checkers).
            return cst.Else(
                body=body,
                leading_lines=case.leading_lines,
                whitespace_before_colon=cst.SimpleWhitespace(""),
            )
        guard = self._guards.get(index, case.guard)
        where = self._lines_of_case(index)
        guard_break = ""
        if where is not None and guard is not None:
            # the guard on its own line, as written
            lines = emit.Lines(self._continuation_indent(), self._reached[index])
            guard_break = lines.to(where.guard)
        test = self._with_guard_and_cleanup(test_text, guard, last, guard_break)
        if self._widest(test.value) > case_headers.WIDEST:
            self.wide.add(index)
        header_lines = self._header_lines(case, index)
        padding = 0
        if where is not None:
            # A header written over several lines: its test, each check on
            # the line of its sub-pattern, starts on the case line and ends
            # on the colon's, inside parentheses.
            text = test.value
            test_lines = self._newlines(text)
            breaks = "\n" * max(0, header_lines - test_lines)
            text = f"({text}{breaks})"
            if test_lines <= header_lines:
                text = with_comments(text, where.comments)
            test = RawExpression(text)
        else:
            padding = max(0, header_lines - self._newlines(test.value))
        return cst.If(
            test=test,
            body=body,
            orelse=orelse,
            leading_lines=[*case.leading_lines, *blank_lines(padding)],
            whitespace_before_test=cst.SimpleWhitespace(" "),
            whitespace_after_test=cst.SimpleWhitespace(""),
        )

    def _always_true(self) -> str:
        # A name's identity with itself: true, the cheapest test there is (a
        # third of building ``[name]``), and not a constant the compiler would
        # drop (with the line event of its case).
        elements = self.subject_info.elements if self.subject_info else None
        name = elements[0] if elements else self.subject
        return f"{name} is {name}"

    def _lower_case(self, index: int, subject: Union[str, Subject]) -> LoweredPattern:
        lowering = self.owner.lowering
        lines = self._lines_of_case(index)
        lowering.line_of = None if lines is None else lines.line_of
        lowering.compact_checks = index in self.compact
        try:
            return lowering.lower_case(self.node.cases[index].pattern, subject)
        finally:
            lowering.line_of = None
            lowering.compact_checks = False

    def _pattern_test(self, pattern: LoweredPattern, index: int) -> str:
        where = self._lines_of_case(index)
        lines = None
        if where is not None:
            case = self.node.cases[index]
            # (a header over several lines: positions are computed anyway)
            lines = emit.Lines(
                self._continuation_indent(),
                0,
                where.captures,
                last=self._header_lines(case, index),
                widest=case_headers.WIDEST,
                width=self._column() + len("elif ("),
            )
        text = emit.case_test(pattern, self._binder(), lines)
        self._reached[index] = 0 if lines is None else lines.at
        return text

    def _binder(self) -> emit.Binder:
        return emit.binder_for(
            self.scope,
            self.owner.target,
            self.names,
            self.owner.mangle,
            lambda: self.owner.lowering.helper("store"),
        )

    def _with_guard_and_cleanup(
        self,
        test_text: str,
        guard: Optional[cst.BaseExpression],
        last: bool,
        guard_break: str = "",
    ) -> RawExpression:
        text = test_text
        if guard is not None:
            code = self.owner.code(guard)
            if "\n" in code:
                # The guard keeps its own layout (and line breaks) inside
                # parentheses.
                operand = f"({code})"
            else:
                operand = emit.guard_operand(guard, code.strip())
            text = emit.join_operands([text, guard_break + operand], "and")
        doomed = self._namespace_temps()
        if doomed:
            # Module and class bodies can drop names from an expression: the
            # test removes every temporary once the case is chosen, or, on
            # the last case, when nothing matched.
            text = f"(({text}) and {self._pop(doomed)})"
            if last:
                text = f"({text} or not {self._pop(doomed)})"
        return RawExpression(text)

    def _namespace_temps(self) -> List[str]:
        """Temporaries a module body, or a class body that keeps them in
        globals(), must drop once a case is chosen (or none matched): every
        one any case stored, as earlier cases may have stored some before
        failing. Functions cannot drop names (nor a class body its
        function's)."""
        if self.scope.kind == FUNCTION or self._held == "nonlocal":
            return []
        return self._all_temps

    def _pop(self, names: List[str]) -> str:
        # In a module body locals() is the namespace itself; the list is
        # truthy whatever the values were.
        namespace = f"{self.names.builtin('locals')}()"
        if self._held == "global":
            namespace = f"{self.names.builtin('globals')}()"
        return "[" + ", ".join(f"{namespace}.pop({n!r}, None)" for n in names) + "]"

    # -- bodies -----------------------------------------------------------------

    def _body(
        self,
        body: Body,
        nested: bool = False,
        stores: Optional[List[Tuple[str, str]]] = None,
        index: int = 0,
    ) -> Body:
        """The case body, at its column: one indent deeper than the case line,
        which is one deeper than the ``if`` unless ``nested`` in it; its first
        line starts with ``stores``, if any, then deletes the temporaries."""
        body = self._deleting_temporaries(self._indented(body, nested), index)
        return run_first(body, stores) if stores else body

    def _indented(self, body: Body, nested: bool) -> Body:
        if isinstance(body, cst.IndentedBlock):
            outer = (
                ""
                if nested
                else (
                    self.node.indent
                    if self.node.indent is not None
                    else self.owner.module.default_indent
                )
            )
            inner = (
                body.indent
                if body.indent is not None
                else self.owner.module.default_indent
            )
            body = body.with_changes(indent=outer + inner)
        return body

    def _deleting_temporaries(self, body: Body, index: int) -> Body:
        temps = self._case_temps[index]  # (a later run's are unset before it)
        if not (self.scope.kind == FUNCTION or self._held == "nonlocal") or not temps:
            return body
        if (
            self.scope.kind == FUNCTION
            and not self.scope.around
            and returns_unseen(body, self._frame_quiet())
        ):
            return body
        return delete_first(body, temps)
