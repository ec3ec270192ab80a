"""Readable layout: one match's decision tree printed as ``if``/``elif``
chains (readable.py plans it).

Each node of the tree (decision_tree.py) is a branch on the tests its cases
share, or one case: its test, then its captures assigned and its body. A
guard that reads what its case stores is an ``if`` inside the branch
(:meth:`ChainPrinter._guard_inside`); captures that every case under a
branch stores alike are stored once, first thing in it
(:meth:`ChainPrinter._captures_first`); the finished chains take the shapes
a person gives them (chain_shapes.py).
"""

from __future__ import annotations

from dataclasses import replace

from typing import (
    TYPE_CHECKING,
    Any,
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

from spam_transpile.lowering import emit
from spam_transpile.lowering.line_fit import FittingChain, Narrowing
from spam_transpile.lowering.ir import (
    All,
    AnyOf,
    LoweredPattern,
    Test,
    is_kind_test,
    is_true,
)
from spam_transpile.lowering.paths import (
    Subject,
    exhaustive_pattern,
    branch_kind_test,
    exhaustive_test,
)
from spam_transpile.lowering.positions import lines_before_case
from spam_transpile.lowering.subjects import ChosenSubject
from spam_transpile.lowering.bodies import (
    indented_block,
    leaving_cases,
    only_pass,
    without_if_true,
)
from spam_transpile.lowering.chain_shapes import shaped_chains
from spam_transpile.lowering.decision_tree import (
    Branch,
    Leaf,
    Node,
    bound_alike,
    tree_of_cases,
)
from spam_transpile.lowering.guard_values import (
    GuardReadingValues,
    names_read,
)
from spam_transpile.lowering.inlined_captures import (
    Reader,
    case_inlined,
    inline_in,
    without_captures,
)
from spam_transpile.lowering.split_alternatives import split_patterns
from spam_transpile.lowering.scopes import is_annotated
from spam_transpile.syntax.cstwalk import descendants

from spam_transpile.lowering.readable_passes import (
    merged_same_bodies,
    assignments,
    unpacking,
)

if TYPE_CHECKING:  # pragma: no cover
    from spam_transpile.lowering.transformer import MatchLowering

LINE_LENGTH = 88
# A case's captures share one assignment up to this width (``x, y =
# shape.get("x"), shape.get("y")``), which fits on one line up to six
# levels of indentation deep.
TOGETHER = LINE_LENGTH - 6 * 4


class Raw(cst.Name):
    """Generated expression or statement text, printed as it is."""

    def _validate(self) -> None:
        pass


def raw_statement(text: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(Raw(text))])


def _placed(node: Node, origin: Sequence[Tuple[int, Optional[int]]]) -> Node:
    """``node`` of the tree over the alternatives, its leaves numbered by
    the case each is of; an alternative after the first, a copy (it takes
    no leading lines, stores nothing for a whole branch)."""
    if isinstance(node, Branch):
        return replace(node, children=tuple(_placed(c, origin) for c in node.children))
    index, alternative = origin[node.index]
    copy = node.copy or bool(alternative)
    return replace(node, index=index, alternative=alternative, copy=copy)


class ChainPrinter(FittingChain):
    """Prints the plan of one match statement (the attributes below are
    set by :class:`.readable.ReadableMatch`)."""

    owner: "MatchLowering"
    original: cst.Match
    node: cst.Match
    scope_kind: str
    subject: str
    subject_var: Optional[str]
    info: Subject
    _guards: Dict[int, GuardReadingValues]
    _guards_inside: Set[int]
    _hoisted: Set[int]
    _inlined: Dict[int, Dict[str, str]]
    _inlined_alternatives: Dict[Tuple[int, int], Dict[str, str]]
    _reader: Optional[Reader]
    _narrowing: Narrowing
    _spelled_kind_tests: bool
    _written: List[Tuple[int, LoweredPattern]]
    #: the captures declarations.py may declare ``object``
    _may_declare: FrozenSet[str]
    _unpacked_checked: Set[str]
    _leaving: Optional[int]
    _doomed: List[str]
    _chosen: ChosenSubject

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
        return raw_statement(f"del {', '.join(self._doomed)}")

    def _plan(
        self, cases: Sequence[cst.MatchCase], lowered: Sequence[LoweredPattern]
    ) -> Sequence[Node]:
        """The cases as a decision tree (cases sharing their first test
        nested under it), or one after the other where the bodies delete
        temporaries (module and class bodies: an ``else`` deletes them when
        no case matched, which a nested test would skip)."""
        if not self._nests():
            return [Leaf(index, pattern) for index, pattern in enumerate(lowered)]
        patterns, origin = self._alternatives(lowered)
        self._written = [(index, p) for (index, _), p in zip(origin, patterns)]
        tree = tree_of_cases(
            [cases[index] for index, _ in origin],
            patterns,
            True,
            self.owner.names.builtin,
            True,
            self._stable_paths(),
            self._too_wide(origin),
        )
        return [_placed(node, origin) for node in tree]

    def _alternatives(
        self, lowered: Sequence[LoweredPattern]
    ) -> Tuple[List[LoweredPattern], List[Tuple[int, Optional[int]]]]:
        """The cases' patterns, one per alternative where a case is written
        once per alternative (:mod:`.split_alternatives`), each with the case
        it is of and which alternative (None: the whole case)."""
        patterns: List[LoweredPattern] = []
        origin: List[Tuple[int, Optional[int]]] = []
        for index, pattern in enumerate(lowered):
            case = self.original.cases[index]
            split = split_patterns(case, pattern, TOGETHER) if self._reader else None
            if split is None:
                patterns.append(pattern)
                origin.append((index, None))
                continue
            for number, (spelled, alternative) in enumerate(split):
                assert self._reader is not None
                inlined = case_inlined(self._reader, case, spelled, alternative)
                inlined = self._inlining_that_fits(case, inlined) if inlined else {}
                if inlined:
                    self._inlined_alternatives[(index, number)] = inlined
                    alternative = without_captures(alternative, inlined)
                patterns.append(alternative)
                origin.append((index, number))
        return patterns, origin

    def _stable_paths(self) -> FrozenSet[str]:
        """The fields of a declared ``NamedTuple`` read from a variable
        nothing rebinds while the match runs: no guard changes them."""
        stable = self._chosen.stable()
        declared = dict(self.info.element_items)
        if self.info.items is not None:
            declared[self.subject] = self.info.items
        return frozenset(
            f"{name}.{field}"
            for name, fields in declared.items()
            if name in stable
            for field in fields
        )

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
        return shaped_chains(out, Raw)

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
        body = self._body(case, leaf.pattern, alternative=leaf.alternative)
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
                node, stores = self._captures_first(node)
                self._depth += 1
                inner = without_if_true(
                    self._statements_of(node.children, None, lines_taken=True)
                )
                self._depth -= 1
                inner[:0] = [*(raw_statement(text) for text in node.setup), *stores]
                tests = node.tests
                if len(tests) == 1 and is_kind_test(tests[0], tests[0].path):
                    tests = (self._kind_test_alone(node, tests[0]),)
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
            chain = self._case(
                case, node.pattern, chain, otherwise, lines, node.alternative
            )
        return merged_same_bodies(chain, Raw)

    def _kind_test_alone(self, branch: Branch, test: Test) -> Test:
        """A branch's kind test, alone on its ``if``: where the branch holds
        the last case, spelled as mypy follows it both ways (an exhaustive
        match ends there), and lists and tuples answer at once; else as a
        person writes it, on one line."""
        low = self.owner.lowering
        if self._holds_last_case(branch) and self._may_end_function():
            return exhaustive_test(low, test)
        spelled = branch_kind_test(low, test)
        if spelled is not test:
            self._spelled_kind_tests = True
            if self._narrowing.plain_kind_tests:
                return test  # (line_fit.py: black splits this spelling)
        return spelled

    def _holds_last_case(self, node: Node) -> bool:
        if isinstance(node, Leaf):
            return node.index == len(self.node.cases) - 1
        return any(self._holds_last_case(child) for child in node.children)

    def _captures_first(
        self, branch: Branch
    ) -> Tuple[Branch, List[cst.SimpleStatementLine]]:
        """``branch`` without the captures its cases store alike
        (:func:`.decision_tree.bound_alike`), and the statements that store
        them first; their guards then read the captures (none may rebind
        one with ``:=``, which the next case's store would undo)."""
        shared = bound_alike(branch)
        leaves = [leaf for leaf in branch.children if isinstance(leaf, Leaf)]
        guards = [self.node.cases[leaf.index].guard for leaf in leaves]
        if not shared or any(
            isinstance(part, cst.NamedExpr)
            for guard in guards
            if guard is not None
            for part in descendants(guard)
        ):
            return branch, []
        self._hoisted.update(leaf.index for leaf in leaves)
        first = leaves[0]
        stores = self._binding_statements(
            self.node.cases[first.index],
            first.pattern,
            first.index not in self._inlined,
        )
        children = tuple(
            Leaf(leaf.index, LoweredPattern(leaf.pattern.cond, ())) for leaf in leaves
        )
        return replace(branch, children=children), stores

    def _case(
        self,
        case: cst.MatchCase,
        pattern: LoweredPattern,
        orelse: Optional[Union[cst.If, cst.Else]],
        may_be_else: bool,
        leading_lines: Sequence[cst.EmptyLine],
        alternative: Optional[int] = None,
    ) -> Union[cst.If, cst.Else]:
        """``may_be_else``: the last of its chain, after another: ``else:``
        where it always matches; ``alternative``: the alternative of its
        or-pattern it stands for (:mod:`.split_alternatives`)."""
        index = next(i for i, c in enumerate(self.node.cases) if c is case)
        if orelse is None and self._may_guard_inside(index, pattern):
            return self._guard_inside(index, pattern, leading_lines)
        plan = None if index in self._hoisted else self._guards.get(index)
        guard = case.guard if plan is None else plan.guard
        assigned = index if plan is not None else None
        body = self._body(case, pattern, assigned, alternative)
        if may_be_else and self._always_matches(case, pattern):
            return cst.Else(body=body, leading_lines=list(leading_lines))
        last = index == len(self.node.cases) - 1
        if last and guard is None and self._may_end_function():
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
        alternative: Optional[int] = None,
    ) -> cst.IndentedBlock:
        """The case's body, its captures assigned first where no guard
        stored them (``assigned``: the case's index, where its guard read
        their values instead) and, in module and class bodies, the
        temporaries deleted; ``alternative``: as in :meth:`_case`."""
        index = next(i for i, c in enumerate(self.node.cases) if c is case)
        inlined = dict(self._inlined.get(index, {}))
        if alternative is not None:
            inlined.update(self._inlined_alternatives.get((index, alternative), {}))
        body = indented_block(inline_in(case.body, inlined) if inlined else case.body)
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
            every = not inlined and alternative is None
            first += self._binding_statements(case, pattern, every)
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
        if index in self._guards_inside or index in self._hoisted:
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
        elements = self.info.elements or []
        # (``a, b = subject, level``: no parentheses around a tuple display)
        display = len(elements) > 1 and self.subject.startswith("(")
        whole = ", ".join(elements) if display else self.subject
        unpacked = (
            unpacking(case.pattern, whole, self.owner.names.builtin, self._unpacks)
            if every
            else None
        )
        if unpacked is not None:
            return [raw_statement(unpacked)]
        together = assignments(pattern.bindings, self._room())
        return [raw_statement(text) for text in together]

    def _unpacks(self, name: str) -> bool:
        """Whether an item a class pattern checks may be unpacked into
        ``name`` (``major, minor = value``): a type checker reads it as the
        sequence's item type, not as the class checked; fine unless it is
        declared ``object`` (:attr:`_may_declare`)."""
        if not is_annotated(self.owner.scopes[-1].node):
            return True
        if name in self._may_declare:
            return False
        self._unpacked_checked.add(name)
        return True

    def _nests(self) -> bool:
        """Whether the decision tree may nest cases (:meth:`_plan`): in a
        function (module and class bodies delete their temporaries in each
        case, one chain)."""
        return self.scope_kind == "function"
