"""The LibCST transformer: every ``match`` statement becomes ``if``/``elif``.

For each match statement it validates, lowers each case, emits the tests and
lays the result out so that every original line keeps its number:

- the match line becomes statements on that line: ``temp = subject``, or
  just ``subject`` (``a; b`` for ``match a, b:``) when the subject is made
  of stable local names, then the facts the cases share
  (:mod:`.subject_facts`) up to a guard that may run code (:mod:`.guards`;
  the first test after it computes them again);
- each case line becomes the ``if``/``elif`` line of that case, its body
  kept as written;
- blank lines stand in for lines a multi-line header no longer needs.

Temporaries never outlive the statement where it can be helped: function
bodies delete the subject temporary at the start of the chosen case body;
module bodies remove temporaries from the namespace in the tests. A class
body stores none in its namespace (:mod:`.class_temps`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
import dataclasses
from typing import (
    Callable,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import libcst as cst
from libcst._nodes.internal import CodegenState

from spam_transpile.syntax.blocks import MAY_HOLD_MATCH, rewrite_blocks
from spam_transpile.syntax.codegen import code_for
from spam_transpile.syntax.cstwalk import contains
from spam_transpile.lowering import emit
from spam_transpile.lowering.early_binding import (
    bind_early,
    may_read_frames,
    quiet_captures,
    read_calls_once,
    read_paths_once,
    reads_own_frame,
    store_in_guard,
)
from spam_transpile.errors import TranspileError, TranspileWarning
from spam_transpile.checks.reachability import is_irrefutable, unreachable_cases
from spam_transpile.lowering.facts import ModuleFacts
from spam_transpile.lowering.helper_lines import (
    MatchAssign,
    MatchLine,
    has_slots,
    place_helper,
)
from spam_transpile.lowering.class_temps import (
    declaration_line,
    declare_first,
    declare_locals,
)
from spam_transpile.lowering.guards import segments
from spam_transpile.lowering.ir import LoweredPattern
from spam_transpile.lowering.readable import ReadableMatch, place_readable_helper
from spam_transpile.lowering.literal_switch import LiteralSplit, split_literal_run
from spam_transpile.lowering.lower import Lowering, Subject, tuple_display
from spam_transpile.lowering.names import Names
from spam_transpile.lowering.runtime import helper_statement
from spam_transpile.lowering.positions import CaseLines, MatchPositions, case_lines
from spam_transpile.lowering.subject_facts import SubjectFacts, stored_facts
from spam_transpile.lowering.scopes import (
    capture_names,
    declarations,
    names_rebound_by,
    stable_locals,
)

from spam_transpile.checks.validate import compiler_stage_error, parser_stage_error
from spam_transpile.settings import Target

Body = Union[cst.IndentedBlock, cst.SimpleStatementSuite]

MODULE, CLASS, FUNCTION = "module", "class", "function"


@dataclass
class Scope:
    kind: str
    node: Optional[cst.CSTNode] = None
    stable: Optional[frozenset] = None
    #: works ``stable`` out from the standard tree, once asked: most
    #: functions hold no match statement and never are
    stable_from: Optional[Callable[[], frozenset]] = None
    declared: Optional[Tuple[frozenset, frozenset]] = None
    #: id of the scope's first match statement in source order
    first_match: Optional[int] = None
    #: ``try``/``with`` statements of this scope around the statement being
    #: visited: code of theirs can run after a ``return`` in it
    around: int = 0
    #: captures that may be stored before their case matched (early_binding)
    quiet: Optional[FrozenSet[str]] = None
    #: whether the function reads its own frame (early_binding.reads_own_frame)
    frame_read: Optional[bool] = None
    #: temporaries of class bodies in it, to declare as its variables
    #: (class_temps)
    declare: Optional[List[str]] = None
    #: a class body whose match lines declared the helper ``global``
    helper_global: bool = False
    #: a class's temporaries (of class bodies in it) that its bases bind as
    #: variables of the enclosing function (class_temps_holder)
    header_temps: Optional[List[str]] = None

    def quiet_captures(self) -> FrozenSet[str]:
        """Only asked where the function is known not to read its frame."""
        if self.quiet is None:
            assert isinstance(self.node, cst.FunctionDef)
            self.quiet = quiet_captures(self.node, reads_frame=False)
        return self.quiet

    def reads_own_frame(self) -> bool:
        if self.frame_read is None:
            assert isinstance(self.node, cst.FunctionDef)
            self.frame_read = reads_own_frame(self.node)
        return self.frame_read

    def declared_globals(self) -> frozenset:
        return self.declarations()[0]

    def declared_nonlocals(self) -> frozenset:
        return self.declarations()[1]

    def declarations(self) -> Tuple[frozenset, frozenset]:
        """The names the function or class body declares global, nonlocal."""
        if self.declared is None:
            assert isinstance(self.node, (cst.FunctionDef, cst.ClassDef))
            self.declared = declarations(self.node)
        return self.declared

    def stable_names(self, walrus_possible: bool = True) -> frozenset:
        if self.stable is None and self.stable_from is not None:
            self.stable = self.stable_from()
        if self.stable is None:
            assert isinstance(self.node, cst.FunctionDef)
            self.stable = stable_locals(self.node, walrus_possible)
        return self.stable


class RawExpression(cst.Name):
    """Generated expression text, placed in the tree without re-parsing it.

    The text comes from our own emitter and is parsed again, as part of the
    whole output, by the verify step in the tests; parsing each test here
    would cost more than all the rest of the lowering.
    """

    def _validate(self) -> None:
        if not self.value:
            raise cst.CSTValidationError("empty generated expression")


@dataclasses.dataclass(frozen=True)
class HelperPlaceholder(RawExpression):
    """Where a match line binds the helper: its text, which depends on every
    match of the module, is put in ``text[0]`` once they are all lowered."""

    text: List[str] = dataclasses.field(default_factory=lambda: [""])

    def _codegen_impl(self, state: CodegenState) -> None:
        state.add_token(self.text[0])


_SEMICOLON = cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))


class MatchLowering(cst.CSTTransformer):
    def __init__(
        self,
        module: cst.Module,
        names: Names,
        filename: str,
        source: str,
        target: Target = Target(3, 9),
        functions: Optional[List[Tuple[str, Callable[[], frozenset]]]] = None,
        facts: Optional[ModuleFacts] = None,
        layout: str = "keep-lines",
        matches_in_order: Optional[List[ast.Match]] = None,
    ) -> None:
        super().__init__()
        self.target = target
        self.layout = layout
        # Stable locals of every def in source order, computed up front
        # (scopes.functions_in_order); None: work them out per function.
        self._functions = functions
        self._function_index = 0
        self._skip: Dict[int, int] = {}
        self.module = module
        self.names = names
        self.filename = filename
        self.source = source
        self.lowering = Lowering(names, self.code, facts or ModuleFacts())
        self.scopes: List[Scope] = [Scope(MODULE)]
        self.match_count = 0
        self._match_depth = 0
        # ``matches_in_order``: the standard tree's match statements in source
        # order (positions.in_source_order), so that a position costs one
        # statement's code generation, not the module's, and a case's lines
        # are read from its positions
        self._standard_matches = matches_in_order
        self._positions = MatchPositions(
            module,
            source,
            None if matches_in_order is None else [m.lineno for m in matches_in_order],
        )
        self._match_index = 0
        #: whether a function of the module may read its own frame at all
        self.frames_read = may_read_frames(source)
        # the standard tree's statement of each match statement visited
        self.standard: Dict[int, ast.Match] = {}
        self.warnings: List[TranspileWarning] = []
        self.parser_error: Optional[TranspileError] = None
        self.compiler_error: Optional[TranspileError] = None
        # lines that followed the last case of a match, waiting for a home
        self._orphans: Dict[int, Sequence[cst.EmptyLine]] = {}

    def code(self, node: cst.CSTNode) -> str:
        return code_for(node, self.module)

    def rewrite(self) -> cst.Module:
        """The module with its match statements lowered (``self.failed`` set
        instead where it cannot be): ``module.visit(self)``, through the
        blocks that can hold a match statement only, where that is all this
        transformer enters (see on_visit)."""
        if not self.target.has_walrus:
            return self.module.visit(self)
        result = rewrite_blocks(self.module, self)
        assert isinstance(result, cst.Module)
        return result

    def on_visit(self, node: cst.CSTNode) -> bool:
        # Match statements only sit in blocks of compound statements: the
        # walk enters nothing else, which saves most of it (LibCST rebuilds
        # every node it enters). Before 3.8 every expression is still
        # searched for ``:=``, which the target could not run.
        if type(node) not in MAY_HOLD_MATCH and self.target.has_walrus:
            return False
        skipped = self._skip.get(id(node))
        if skipped is not None:
            # A top-level statement without a match statement: nothing to do
            # inside, but its ``def`` count in the list of stable locals.
            self._function_index += skipped
            return False
        return super().on_visit(node)

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]:
        if id(original_node) in self._skip:
            return updated_node  # its visit_* never ran: neither may leave_*
        return super().on_leave(original_node, updated_node)

    def _skippable(self, module: cst.Module) -> Dict[int, int]:
        """id -> number of ``def`` of the top-level statements holding no match."""
        facts = self.lowering.facts.statements
        if facts is None or not self.target.has_walrus or self._functions is None:
            return {}
        skip: Dict[int, int] = {}
        index = 0
        for statement in module.body:
            size = (
                len(statement.body)
                if isinstance(statement, cst.SimpleStatementLine)
                else 1
            )
            covered = facts[index : index + size]
            index += size
            if len(covered) != size:
                return {}  # the two parsers disagree: walk everything
            if not any(has_match for has_match, _ in covered):
                skip[id(statement)] = sum(count for _, count in covered)
        return skip if index == len(facts) else {}

    def position(self, node: cst.CSTNode) -> Tuple[int, int]:
        # Positions are only needed to report an error or a warning: they
        # are computed then, for the match statement being visited.
        return self._positions(node)

    def mangle(self, name: str) -> str:
        """The name CPython stores for ``name`` here (class-private mangling)."""
        if not name.startswith("__") or name.endswith("__"):
            return name
        for scope in reversed(self.scopes):
            if scope.kind == CLASS:
                assert isinstance(scope.node, cst.ClassDef)
                owner = scope.node.name.value.lstrip("_")
                return f"_{owner}{name}" if owner else name
        return name

    @property
    def failed(self) -> Optional[TranspileError]:
        """What CPython reports first: its first parser error, else compiler error."""
        return self.parser_error or self.compiler_error

    # -- validation, in CPython's order -----------------------------------------

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        # The output keeps the user's own code: before 3.8 an assignment
        # expression anywhere in it would not compile on the target.
        if not self.target.has_walrus and self.parser_error is None:
            line, column = self.position(node)
            self.parser_error = TranspileError(
                "assignment expressions need Python 3.8 or newer "
                f"(target is {self.target})",
                filename=self.filename,
                lineno=line,
                offset=column,
            )

    def visit_Match(self, node: cst.Match) -> None:
        self._positions.enter(node, outermost=self._match_depth == 0)
        self._note_standard(node)
        scope = self.scopes[-1]
        if scope.first_match is None:
            scope.first_match = id(node)  # the scope's first in source order
        self._match_depth += 1
        if self._match_depth > 1 or self.parser_error is not None:
            return  # nested statements are checked with their outermost one
        self.parser_error = parser_stage_error(
            node, filename=self.filename, position=self.position, source=self.source
        )
        if self.compiler_error is None and self.parser_error is None:
            self.compiler_error = compiler_stage_error(
                node, filename=self.filename, position=self.position, source=self.source
            )

    def _note_standard(self, node: cst.Match) -> None:
        index = self._match_index
        self._match_index += 1
        matches = self._standard_matches
        if matches is None or index >= len(matches):
            return
        standard = matches[index]
        if len(standard.cases) == len(node.cases):
            self.standard[id(node)] = standard

    # -- scope tracking -----------------------------------------------------

    @property
    def readable(self) -> bool:
        return self.layout == "readable"

    def visit_Module(self, node: cst.Module) -> None:
        self.helper_on_match_lines = not self.readable and not has_slots(node)
        #: the text of the helper's binding on match lines (helper_on_match_lines)
        self.helper_binding = [""]
        self._skip = self._skippable(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = Scope(FUNCTION, node)
        if self._functions is not None:
            index = self._function_index
            self._function_index += 1
            if (
                index < len(self._functions)
                and self._functions[index][0] == node.name.value
            ):
                scope.stable_from = self._functions[index][1]
            else:  # the two parsers disagree: trust neither list again
                self._functions = None
        self.scopes.append(scope)

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        scope = self.scopes.pop()
        if scope.declare and self.readable:
            updated_node = declare_first(updated_node, scope.declare)
        elif scope.declare:
            # (the lowering adds lines, never removes one: it has one still)
            updated_node = declare_locals(updated_node, scope.declare)
        return updated_node

    def class_temps_holder(self, temps: List[str]) -> str:
        """How a match statement in the class body being visited declares
        its temporaries ``temps`` (see class_temps): "nonlocal" (then the
        enclosing function declares them) or "global"."""
        for depth in reversed(range(len(self.scopes) - 1)):
            scope = self.scopes[depth]
            if scope.kind != FUNCTION:
                continue
            assert isinstance(scope.node, cst.FunctionDef)
            if not self.readable and declaration_line(scope.node) is None:
                if not self.target.has_walrus:
                    break  # no line to declare them on, and no ``:=``
                # The outermost class in the function binds them, with
                # ``:=`` in its bases, which run in the function's scope.
                outer = self.scopes[depth + 1]
                outer.header_temps = [*(outer.header_temps or []), *temps]
                return "nonlocal"
            scope.declare = [*(scope.declare or []), *temps]
            return "nonlocal"
        return "global"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append(Scope(CLASS, node))

    def visit_Try(self, node: cst.Try) -> None:
        self.scopes[-1].around += 1

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try) -> cst.Try:
        self.scopes[-1].around -= 1
        return updated_node

    def visit_TryStar(self, node: cst.TryStar) -> None:
        self.scopes[-1].around += 1

    def leave_TryStar(
        self, original_node: cst.TryStar, updated_node: cst.TryStar
    ) -> cst.TryStar:
        self.scopes[-1].around -= 1
        return updated_node

    def visit_With(self, node: cst.With) -> None:
        self.scopes[-1].around += 1

    def leave_With(self, original_node: cst.With, updated_node: cst.With) -> cst.With:
        self.scopes[-1].around -= 1
        return updated_node

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        scope = self.scopes.pop()
        if scope.header_temps:
            updated_node = _bind_in_bases(updated_node, scope.header_temps)
        return updated_node

    # -- the rewrite ----------------------------------------------------------

    def leave_Match(
        self, original_node: cst.Match, updated_node: cst.Match
    ) -> Union[cst.Match, cst.FlattenSentinel[cst.BaseStatement]]:
        self._match_depth -= 1
        self.match_count += 1
        if self.failed is not None:
            return updated_node  # the file is refused; keep walking for parser errors
        self._warn_unreachable(original_node)
        try:
            if self.layout == "readable":
                statements = ReadableMatch(
                    self, original_node, updated_node
                ).statements()
            else:
                emitter = MatchEmitter(self, original_node, updated_node)
                statements = emitter.statements()
        except TranspileError:
            raise
        except Exception as exc:  # a bug of ours: report it where it happened
            line, column = self.position(original_node)
            raise TranspileError(
                f"internal error while lowering this match statement "
                f"({type(exc).__name__}: {exc}); please report this",
                filename=self.filename,
                lineno=line,
                offset=column,
            ) from exc
        if updated_node.footer:
            self._orphans[id(statements[-1])] = updated_node.footer
        # What the code written for the statement reads, nothing else, decides
        # the helper's parts: none can be missing, none is there for nothing.
        self.lowering.note_used("".join(code_for(s) for s in statements))
        return cst.FlattenSentinel(statements)

    def _warn_unreachable(self, node: cst.Match) -> None:
        for later, earlier in unreachable_cases(node):
            line, column = self.position(node.cases[later])
            lines = [str(self.position(node.cases[i])[0]) for i in earlier]
            which = (
                f"the case on line {lines[0]} matches"
                if len(lines) == 1
                else f"the cases on lines {', '.join(lines)} match"
            )
            self.warnings.append(
                TranspileWarning(
                    f"unreachable case: {which} everything it matches",
                    filename=self.filename,
                    lineno=line,
                    offset=column,
                )
            )

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        body, footer = self._home_orphans(updated_node.body, updated_node.footer)
        return updated_node.with_changes(body=body, footer=footer)

    def leave_Module(
        self, original_node: cst.Module, updated_node: cst.Module
    ) -> cst.Module:
        body, footer = self._home_orphans(updated_node.body, updated_node.footer)
        module = updated_node.with_changes(body=body, footer=footer)
        if self.helper_on_match_lines:
            # a match line asked for the helper; if none of its code read it
            # in the end, the placeholder is a statement that does nothing
            self.helper_binding[0] = "pass"
        if self.lowering.used_helper and self.failed is None and self.readable:
            module = place_readable_helper(
                module, self.lowering.helper_name, self.lowering.used_parts
            )
        elif self.lowering.used_helper and self.failed is None:
            name, used = self.lowering.helper_name, self.lowering.used_parts
            if self.helper_on_match_lines:
                self.helper_binding[0] = helper_statement(name, used)
            else:
                module = place_helper(module, name, used, self.source)
        return module

    def _home_orphans(
        self, body: Sequence[cst.BaseStatement], footer: Sequence[cst.EmptyLine]
    ) -> Tuple[List[cst.BaseStatement], List[cst.EmptyLine]]:
        out = list(body)
        footer = list(footer)
        if not self._orphans:
            return out, footer
        for i, statement in enumerate(out):
            lines = self._orphans.pop(id(statement), None)
            if lines is None:
                continue
            if i + 1 < len(out):
                following = out[i + 1]
                out[i + 1] = following.with_changes(
                    leading_lines=[*lines, *_leading_lines(following)]
                )
            else:
                footer = [*lines, *footer]
        return out, footer


def _with_comments(text: str, comments: Dict[int, str]) -> str:
    """``text`` (a test over a case header's lines, line for line) with the
    header's comments back at the ends of their lines. Never on its last
    line, whose ``)`` closes the test; a comment ends the line it is on in
    the source, so no test part follows it there."""
    if not comments:
        return text
    lines = text.split("\n")
    for line, comment in comments.items():
        if line < len(lines) - 1:
            lines[line] += f"  {comment}"
    return "\n".join(lines)


def local_subject(
    owner: "MatchLowering", scope: Scope, original: cst.Match, subject: cst.CSTNode
) -> Optional[Subject]:
    """The subject when it is a local name, or a tuple display of local names,
    that nothing between the cases can rebind: each case reads it again, and
    it needs no temporary."""
    if scope.kind != FUNCTION:
        return None
    elements = subject.elements if isinstance(subject, cst.Tuple) else [subject]
    names = []
    for element in elements:
        value = element.value if isinstance(element, cst.Element) else element
        if not isinstance(value, cst.Name) or value.lpar:
            return None
        names.append(value.value)
    stable = scope.stable_names(":=" in owner.source)
    rebound = names_rebound_by(original, owner.source)
    if not names or any(n not in stable or n in rebound for n in names):
        return None
    if not isinstance(subject, cst.Tuple):
        return Subject(names[0])
    # ``match a, b:`` over local names: no tuple, no checks.
    return tuple_subject(names)


def tuple_subject(names: List[str]) -> Subject:
    text = tuple_display(names)
    info = Subject(text, "sequence", len(names))
    info.elements = list(names)
    return info


def header_line_breaks(case: cst.MatchCase, standard: ast.match_case) -> Optional[int]:
    """The line breaks of a case's header (the text between ``case`` and its
    colon) without generating its code: the pattern's and the guard's come
    from their positions in the standard tree, which span them exactly but
    for parentheses around them (and a tuple's trailing comma), where this
    gives None."""
    pattern, guard = case.pattern, case.guard
    if pattern.lpar or pattern.rpar or _ends_with_comma(pattern):
        return None
    spaces = [case.whitespace_after_case, case.whitespace_before_colon]
    count = standard.pattern.end_lineno - standard.pattern.lineno  # type: ignore[operator]
    if guard is not None:
        if guard.lpar or guard.rpar or standard.guard is None:
            return None
        spaces += [case.whitespace_before_if, case.whitespace_after_if]
        count += standard.guard.end_lineno - standard.guard.lineno  # type: ignore[operator]
    for space in spaces:
        if type(space) is not cst.SimpleWhitespace:
            return None
        count += space.value.count("\n")
    return count


def _ends_with_comma(pattern: cst.MatchPattern) -> bool:
    if type(pattern) is not cst.MatchTuple:
        return False
    elements = pattern.patterns  # type: ignore[attr-defined]
    return bool(elements) and isinstance(elements[-1].comma, cst.Comma)


class MatchEmitter:
    """Builds the statements that replace one match statement."""

    def __init__(
        self, owner: MatchLowering, original: cst.Match, node: cst.Match
    ) -> None:
        self.owner = owner
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
        tests = []
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
            pattern = self._bind_in_body(index, pattern)
            tests.append(self._pattern_test(pattern, index))
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
        split = self._literal_split(cases, first)
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
            leading_lines=[*_blank(padding), *chain.leading_lines]
        )
        return [first, chain]

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
            and f"{self.subject}[0]" not in self.owner.source,
            first_keys=self.scope.kind == FUNCTION
            and f"{self.subject}.get(" not in self.owner.source,
        )

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

    def _literal_split(
        self, cases: Sequence[cst.MatchCase], first: cst.SimpleStatementLine
    ) -> Optional[LiteralSplit]:
        """Where a long run of literal cases splits in two (see
        :mod:`.literal_switch`): on a match line that reads the subject and
        does nothing else, in a function that never reads its own frame (the
        temporary stays), with ``:=``."""
        if (
            self.scope.kind != FUNCTION
            or not self.owner.target.has_walrus
            or self.owner.helper_on_match_lines
            or not self._frame_quiet()
            or self.element_temps
            or (self.subject_info is not None and self.subject_info.elements)
            or len(first.body) != 1
            or self._newlines(self._match_header())
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
            or not _starts_simple(_as_body(case.body))
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
        heads = frozenset([self.subject, *self.element_temps])
        if self.subject_info is not None and self.subject_info.elements:
            heads |= frozenset(self.subject_info.elements)
        return read_paths_once(
            pattern, heads, lambda _: self.names.temp("value"), named
        )

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
        first thing (else they would show in ``locals()``). A class body
        shares none: its temporaries live outside its namespace
        (class_temps), and fewer of them is less to share between threads
        creating the class; it runs once per class anyway."""
        if self.scope.kind == CLASS:
            return False
        if self.subject_temp is not None:
            return True
        if self.scope.kind != FUNCTION or not cases:
            return False
        last = cases[-1]
        if last.guard is not None or not is_irrefutable(last.pattern):
            return False
        probe = ["_"]
        return all(
            _delete_first(_as_body(case.body), probe) is not case.body for case in cases
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
        declare = cst.Global(names=[cst.NameItem(cst.Name(name))], semicolon=_SEMICOLON)
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
            HelperPlaceholder("_", text=self.owner.helper_binding), semicolon=_SEMICOLON
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
            smalls = [MatchLine(_element_value(e)) for e in subject.elements]
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

    @staticmethod
    def _newlines(node_or_text: Union[str, cst.CSTNode]) -> int:
        if isinstance(node_or_text, str):
            return node_or_text.count("\n")
        text = code_for(node_or_text)
        if isinstance(node_or_text, cst.BaseStatement):
            return text.count("\n") - 1  # its own line end
        return text.count("\n")

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
            _as_body(case.body), nested, self._body_stores.get(index), index
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
                text = _with_comments(text, where.comments)
            test = RawExpression(text)
        else:
            padding = max(0, header_lines - self._newlines(test.value))
        return cst.If(
            test=test,
            body=body,
            orelse=orelse,
            leading_lines=[*case.leading_lines, *_blank(padding)],
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

    def _header_lines(self, case: cst.MatchCase, index: int) -> int:
        """Line breaks between ``case`` and its colon."""
        cached = self._headers.get(index)
        if cached is None:
            standard = self.owner.standard.get(id(self.original))
            if standard is not None:
                cached = header_line_breaks(case, standard.cases[index])
            if cached is None:
                cached = self._newlines(self._case_header_text(case))
            self._headers[index] = cached
        return cached

    def _case_header_text(self, case: cst.MatchCase) -> str:
        code = self.owner.code
        text = code(case.whitespace_after_case) + code(case.pattern)
        if case.guard is not None:
            text += (
                code(case.whitespace_before_if)
                + code(case.whitespace_after_if)
                + code(case.guard)
            )
        return text + code(case.whitespace_before_colon)

    def _lower_case(self, index: int, subject: Union[str, Subject]) -> LoweredPattern:
        lowering = self.owner.lowering
        lines = self._lines_of_case(index)
        lowering.line_of = None if lines is None else lines.line_of
        try:
            return lowering.lower_case(self.node.cases[index].pattern, subject)
        finally:
            lowering.line_of = None

    def _lines_of_case(self, index: int) -> Optional[CaseLines]:
        """Where the parts of a keep-lines case header over several lines
        start (None for a header on one line)."""
        if index not in self._case_lines:
            case = self.node.cases[index]
            spread = self.layout == "keep-lines" and self._header_lines(case, index)
            self._case_lines[index] = (
                case_lines(self.owner.position, self.original.cases[index], case)
                if spread
                else None
            )
        return self._case_lines[index]

    def _pattern_test(self, pattern: LoweredPattern, index: int) -> str:
        where = self._lines_of_case(index)
        lines = None
        if where is not None:
            lines = emit.Lines(self._continuation_indent(), 0, where.captures)
        text = emit.case_test(pattern, self._binder(), lines)
        self._reached[index] = 0 if lines is None else lines.at
        return text

    def _continuation_indent(self) -> str:
        return (self.node.indent or self.owner.module.default_indent) * 2

    def _binder(self) -> emit.Binder:
        modern = self.owner.target.has_walrus
        kind = self.scope.kind
        if kind == FUNCTION:
            # ``:=`` outside a comprehension binds global, nonlocal and
            # class-private names like any assignment.
            binder = (
                emit.walrus_binder()
                if modern
                else emit.cell_binder(
                    self.names,
                    self.owner.target,
                    self.scope.declared_globals(),
                    self.owner.mangle,
                    self.owner.lowering.helper("store"),
                )
            )
        elif modern:
            binder = emit.walrus_binder()
        elif kind == CLASS:
            binder = emit.class_binder(
                self.names,
                self.owner.target,
                self.scope.declarations(),
                self.owner.mangle,
            )
        else:
            namespace = f"{self.names.builtin('locals')}()"
            binder = emit.namespace_binder(namespace, self.owner.mangle)
        return binder

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
        return _run_first(body, stores) if stores else body

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
            and _returns_unseen(body, self._frame_quiet())
        ):
            return body
        return _delete_first(body, temps)


def _element_value(element: cst.BaseElement) -> cst.BaseExpression:
    # Only local names get here (``local_subject``): never a starred element.
    assert isinstance(element, cst.Element)
    return element.value


def _as_body(suite: cst.BaseSuite) -> Body:
    # LibCST's only two suites; the base class exists for typing.
    assert isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite))
    return suite


def _leading_lines(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    return getattr(statement, "leading_lines", ())


def _bind_in_bases(node: cst.ClassDef, temps: Sequence[str]) -> cst.ClassDef:
    """``class K(*[t := None][:0], ...):``: binds ``temps`` in the enclosing
    function's scope, adds no base, and keeps the line."""
    stores = ", ".join(f"{temp} := None" for temp in temps)
    arg = cst.Arg(
        value=RawExpression(f"[{stores}][:0]"),
        star="*",
        comma=(
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            if node.bases or node.keywords
            else cst.MaybeSentinel.DEFAULT
        ),
    )
    return node.with_changes(
        bases=[arg, *node.bases], lpar=cst.LeftParen(), rpar=cst.RightParen()
    )


def _blank(count: int) -> List[cst.EmptyLine]:
    return [cst.EmptyLine(indent=False) for _ in range(count)]


_RUNS_CODE = (cst.Call, cst.Await, cst.Yield)
_SUSPENDS = (cst.Await, cst.Yield)


def _returns_unseen(body: Body, frame_quiet: bool) -> bool:
    """Whether the body starts by returning with no call on the way, so that
    nothing can look at the frame's locals before it is gone: its
    temporaries need no ``del`` (the function is not in a ``try``/``with``,
    whose code could run after the ``return``).

    A call (``locals()``, ``eval``, a function reading its caller's frame)
    could see them; an operator or property reading the caller's frame
    through ``sys._getframe`` could too, a limit the README states. In a
    ``frame_quiet`` function (early_binding.reads_own_frame) only such code
    from outside could: a call is no different from an operator there. A
    ``yield`` or ``await`` would keep the frame alive, suspended.
    """
    first = body.body[0]
    if isinstance(first, cst.SimpleStatementLine):
        first = first.body[0]
    if not isinstance(first, cst.Return):
        return False
    if first.value is None:
        return True
    return not contains(first.value, _SUSPENDS if frame_quiet else _RUNS_CODE)


def _starts_simple(body: Body) -> bool:
    """Whether the body's first line holds simple statements only."""
    return isinstance(body, cst.SimpleStatementSuite) or isinstance(
        body.body[0], cst.SimpleStatementLine
    )


def _run_first(body: Body, stores: List[Tuple[str, str]]) -> Body:
    """``name = value`` for each of ``stores``, first on the body's first
    line (``_starts_simple``)."""
    smalls: List[cst.BaseSmallStatement] = [
        cst.Expr(
            RawExpression(f"{name} = {value}"),
            semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        for name, value in stores
    ]
    prefixed = _prefix_first_line(body, smalls)
    assert prefixed is not None
    return prefixed


def _prefix_first_line(
    body: Body, smalls: List[cst.BaseSmallStatement]
) -> Optional[Body]:
    """``smalls`` put first on the body's first line, or None where that line
    starts a compound statement (which cannot share it)."""
    if isinstance(body, cst.SimpleStatementSuite):
        return body.with_changes(body=[*smalls, *body.body])
    first = body.body[0]
    if not isinstance(first, cst.SimpleStatementLine):
        return None
    first = first.with_changes(body=[*smalls, *first.body])
    return body.with_changes(body=[first, *body.body[1:]])


def _delete_first(body: Body, names: List[str]) -> Body:
    """Prefix ``del name;`` to the first line the body always runs first.

    That is the body's first line when it is a simple statement, or the first
    line inside a leading ``try:``/``with`` block (which always starts
    running); other compound statements cannot share their line, and the
    temporary then lives until the function returns (documented limitation).
    """
    target: cst.BaseDelTargetExpression = cst.Name(names[0])
    if len(names) > 1:
        target = cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
    delete = cst.Del(
        target=target,
        semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")),
    )
    prefixed = _prefix_first_line(body, [delete])
    if prefixed is not None:
        return prefixed
    first = body.body[0]
    if isinstance(first, (cst.Try, cst.With)):
        inner = _delete_first(_as_body(first.body), names)
        if inner is first.body:
            return body
        first = first.with_changes(body=inner)
    elif isinstance(first, cst.If):
        branched = _delete_in_every_branch(first, names)
        if branched is None:
            return body
        first = branched
    else:
        return body
    return body.with_changes(body=[first, *body.body[1:]])


def _delete_in_every_branch(node: cst.If, names: List[str]) -> Optional[cst.If]:
    # An if/elif/else with an else runs exactly one of its bodies: deleting
    # first thing in each is deleting once, whichever runs.
    inner = _delete_first(_as_body(node.body), names)
    if inner is node.body:
        return None
    orelse = node.orelse
    if orelse is None:
        return None
    if isinstance(orelse, cst.If):
        new_orelse: Optional[Union[cst.If, cst.Else]] = _delete_in_every_branch(
            orelse, names
        )
    else:
        else_body = _delete_first(_as_body(orelse.body), names)
        new_orelse = (
            None if else_body is orelse.body else orelse.with_changes(body=else_body)
        )
    if new_orelse is None:
        return None
    return node.with_changes(body=inner, orelse=new_orelse)
