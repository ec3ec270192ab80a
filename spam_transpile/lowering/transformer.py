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
import dataclasses
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.checks.reachability import unreachable_cases
from spam_transpile.checks.validate import compiler_stage_error, parser_stage_error
from spam_transpile.errors import TranspileError, TranspileWarning
from spam_transpile.lowering.bodies import bind_in_bases, leading_lines_of
from spam_transpile.lowering.class_temps import (
    declaration_line,
    declare_first,
    declare_locals,
)
from spam_transpile.lowering.quiet_captures import may_read_frames
from spam_transpile.lowering.facts import ModuleFacts
from spam_transpile.lowering.helper_lines import has_slots, place_helper
from spam_transpile.lowering.keep_lines import MatchEmitter
from spam_transpile.lowering.lower import Lowering
from spam_transpile.lowering.names import Names
from spam_transpile.lowering.positions import MatchPositions
from spam_transpile.lowering.readable import ReadableMatch
from spam_transpile.lowering.readable_file import (
    place_abc_import,
    place_readable_helper,
)
from spam_transpile.lowering.runtime import helper_statement
from spam_transpile.lowering.scope_info import CLASS, FUNCTION, MODULE, Scope
from spam_transpile.settings import LineLimits, Target
from spam_transpile.syntax.blocks import MAY_HOLD_MATCH, rewrite_blocks
from spam_transpile.syntax.codegen import code_for


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
        limits: LineLimits = LineLimits(),
    ) -> None:
        super().__init__()
        self.target = target
        self.layout = layout
        #: readable: the widths its lines keep to (lowering/line_fit.py)
        self.limits = limits
        # Stable locals of every def in source order, computed up front
        # (scopes.functions_in_order); None: work them out per function.
        self._functions = functions
        self._function_index = 0
        self._skip: Dict[int, int] = {}
        #: id -> ``def``s in the statements before it the walk was not offered
        self._defs_before: Dict[int, int] = {}
        self.module = module
        self.names = names
        self.filename = filename
        self.source = source
        self.lowering = Lowering(
            names,
            self.code,
            facts or ModuleFacts(),
            inline_class_checks=layout == "keep-lines",
            readable=layout == "readable",
            target=target,
        )
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
        self._function_index += self._defs_before.pop(id(node), 0)
        return super().on_visit(node)

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]:
        if id(original_node) in self._skip:
            return updated_node  # its visit_* never ran: neither may leave_*
        return super().on_leave(original_node, updated_node)

    def _skippable(self, module: cst.Module) -> Dict[int, int]:
        """id -> number of ``def`` before and in each top-level statement the
        walk is offered (syntax.blocks) that holds no match; the counts of
        the ``def``s before one that does go to :attr:`_defs_before`."""
        facts = self.lowering.facts.statements
        if facts is None or not self.target.has_walrus or self._functions is None:
            return {}
        skip: Dict[int, int] = {}
        index = pending = 0
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
            own = sum(count for _, count in covered)
            pending += own
            if type(statement) not in MAY_HOLD_MATCH:
                # never offered to the walk: a stand-in of syntax.partial
                # for a decorated ``def`` or a class counts with the next
                continue
            if any(has_match for has_match, _ in covered):
                self._defs_before[id(statement)] = pending - own
            else:
                skip[id(statement)] = pending
            pending = 0
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
            updated_node = bind_in_bases(updated_node, scope.header_temps)
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
                statements = self._keep_lines(original_node, updated_node)
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

    def _keep_lines(
        self, original_node: cst.Match, updated_node: cst.Match
    ) -> List[cst.BaseStatement]:
        """The keep-lines statements; where a case's line is too wide, the
        match again with that case's checks written compact (a printing
        forgotten: the names and declarations it made)."""
        saved = self.names.saved()
        # (what a printing records in the scopes: declarations to make)
        scopes = [dataclasses.replace(scope) for scope in self.scopes]
        uses = self.lowering.uses
        compact: FrozenSet[int] = frozenset()
        while True:
            emitter = MatchEmitter(self, original_node, updated_node, compact)
            statements = emitter.statements()
            # (compact, a case may no longer share its opening tests with
            # the next, which then writes them: until no other grows wide)
            if emitter.wide <= compact:
                return statements
            compact |= emitter.wide
            self.names.restore(saved)
            if self.lowering.helper_name:
                self.names.claim(self.lowering.helper_name)
            for scope, before in zip(self.scopes, scopes):
                scope.__dict__.update(before.__dict__)
            self.lowering.uses = uses

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
        if self.lowering.used_abcs and self.failed is None and self.readable:
            used = self.lowering.used_abcs
            names = self.lowering.abc_imports
            module = place_abc_import(module, {c: names[c] for c in used})
        if self.lowering.used_helper and self.failed is None and self.readable:
            name = self.lowering.helper_name
            function = self.lowering.names.readable(f"{name}_parts")
            module = place_readable_helper(
                module,
                name,
                self.lowering.used_parts,
                function,
                self.lowering.names.shadowed,
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
                    leading_lines=[*lines, *leading_lines_of(following)]
                )
            else:
                footer = [*lines, *footer]
        return out, footer
