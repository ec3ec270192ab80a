"""Readable lines within the project's lint limit, black-stable.

Black wraps at its length (88 unless configured); flake8 checks at its own
(79 unless configured). A statement whose one-line form is 80 to 88 columns
wide is one black leaves alone and flake8 rejects, and wrapping it shorter
does not last: black joins it again. So where the limit is narrower than
black's length, each match statement is printed in the first of the shapes
of :data:`NARROWINGS` whose lines fit once black has formatted them (else
the one with the fewest lines over the limit). Each narrows the first,
which reads best, only where a line is too wide or the statement asks it:

- a case alone nests under its first test, where its ``if`` is too wide
  and the cases after it in its chain cannot match then (its ``if`` gets
  an ``elif``: no two ``if``s a linter asks to join);
- a mapping check by the ABC alone: ``isinstance(x, Mapping)``;
- a sequence check by the ABC alone, or a branch's in the spelling with
  ``list`` and ``tuple`` first, which black splits; either way not spelled
  for mypy to follow to the end of a function the match does not end;
- a capture whose reading through its subject widens a line is assigned
  (``where = item.destination``), the widest first;
- a statement still too wide gets a trailing comma in the call it ends
  with, which black then writes one argument a line, and an assignment of
  several values one a line;
- an or-pattern's alternatives are each written whole, where the checks
  they share written once leave a choice of the rest that black keeps on
  a line too wide inside its parentheses.

Each shape is one the plan already allows: only the printing differs.
Where none fits (a test black wraps in parentheses that is 80 to 88
columns wide inside them, with no alternatives to write apart), the line
stays: docs/limits.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

import libcst as cst

from spam_transpile.lowering import emit
from spam_transpile.lowering.decision_tree import Leaf
from spam_transpile.lowering.inlined_captures import inline_in
from spam_transpile.settings import LineLimits
from spam_transpile.syntax.codegen import code_for

if TYPE_CHECKING:  # pragma: no cover
    from spam_transpile.lowering.transformer import MatchLowering

INDENT = 4  # what black indents a block by


def alternative_width(limits: LineLimits, column: int) -> int:
    """How wide an or-pattern's alternative (after the checks the others
    share with it) may be in a match at ``column``: written in parentheses
    of its own within the ``if``'s, a branch deep."""
    return limits.limit - column - 3 * INDENT - 2


#: how much wider than printed a case's test may be estimated
SLACK = 8


@dataclass(frozen=True)
class Narrowing:
    """What a match statement's printing gives up to fit the limit."""

    #: a case alone under its first test, where its ``if`` is too wide
    #: and that is exact (decision_tree.py)
    nested_tests: bool = False
    #: mapping checks by the ABC alone (``isinstance(x, Mapping)``)
    abc_mappings: bool = False
    #: sequence checks by the ABC alone (``isinstance(x, Sequence) and
    #: not isinstance(x, (str, bytes, bytearray))``)
    abc_sequences: bool = False
    #: a branch's lone sequence check in the spelling black splits
    plain_kind_tests: bool = False
    #: captures assigned where the body read them through their subject
    assigned_captures: bool = False
    #: statements still too wide split at their last call's arguments
    split_calls: bool = False
    #: an or-pattern's alternatives each written whole (black splits
    #: each), not as the checks they share and a choice of the rest, where
    #: one of the rest is too wide
    unfactored_alternatives: bool = False


_NESTED = Narrowing(nested_tests=True, abc_mappings=True)
_SPLIT = replace(
    _NESTED, plain_kind_tests=True, assigned_captures=True, split_calls=True
)

NARROWINGS: Tuple[Narrowing, ...] = (
    Narrowing(),
    _NESTED,
    replace(_NESTED, abc_sequences=True),
    replace(_NESTED, plain_kind_tests=True),
    replace(_NESTED, assigned_captures=True),
    replace(_NESTED, abc_sequences=True, assigned_captures=True),
    replace(_NESTED, plain_kind_tests=True, assigned_captures=True),
    _SPLIT,
    replace(_SPLIT, unfactored_alternatives=True),
)


class FittingChain:
    """What the readable printer (readable_chains.ChainPrinter) asks of the
    narrowing it prints with: which captures a body may read through
    their subject, which cases nest for width, how wide an assignment may
    be, and whether the last case is spelled for mypy."""

    owner: "MatchLowering"
    node: cst.Match
    original: cst.Match
    _narrowing: Narrowing
    _inlined_wider: bool
    #: how many branches the case being printed is nested in
    _depth: int
    _column: Callable[[], int]

    def _inlining_that_fits(
        self, case: cst.MatchCase, inlined: Dict[str, str]
    ) -> Dict[str, str]:
        """Of the captures ``case``'s body may read as their values, those
        it reads so and keeps its lines within the limit (in the first
        printing where the limit is narrower than black's, all of them:
        line_fit.py): the widest left out first, estimated where the body
        stood in the match."""
        limits = self.owner.limits
        room = limits.limit - self._column() - INDENT
        widths = [len(line) for line in self.owner.code(case.body).splitlines()]

        def fits(values: Dict[str, str]) -> bool:
            body = inline_in(case.body, values)
            wider = [len(line) for line in self.owner.code(body).splitlines()]
            return all(new <= max(room, old) for new, old in zip(wider, widths))

        if fits(inlined):
            return inlined
        self._inlined_wider = True
        if limits.narrower and not self._narrowing.assigned_captures:
            return inlined  # (a narrower printing follows: line_fit.py)
        kept = dict(inlined)
        for name in sorted(inlined, key=lambda n: len(n) - len(inlined[n])):
            del kept[name]  # (the one that widens the body most)
            if fits(kept):
                break
        return kept

    def _too_wide(
        self, origin: Sequence[Tuple[int, Optional[int]]]
    ) -> Callable[[Leaf, int], bool]:
        """Whether a case's tests and guard, on one ``elif`` that many
        branches deep, would be too wide for the project's limit (only
        when this printing nests cases for it: line_fit.py)."""
        limits = self.owner.limits

        def too_wide(leaf: Leaf, depth: int) -> bool:
            guard = self.node.cases[origin[leaf.index][0]].guard
            cond = emit.render_cond(
                leaf.pattern.cond, readable=True, binder=emit.walrus_binder()
            )
            text = cond if guard is None else f"{cond} and {self.owner.code(guard)}"
            indent = self._column() + INDENT * depth
            width = indent + len(f"elif {text.strip()}:")
            # Black splits a wider one at its ``and``s, which is fine. (The
            # text may still read ``len(x)`` where the branch reads ``size``.)
            return limits.limit < width <= limits.wrap + SLACK

        if not self._narrowing.nested_tests:
            return lambda leaf, depth: False
        return too_wide

    def _may_end_function(self) -> bool:
        """Whether the function may end where the match does (then mypy
        needs the last case spelled so that it follows it both ways). A
        match its function's body goes on after does not, where this
        printing asks for short lines (line_fit.py)."""
        narrowing = self._narrowing
        if not (narrowing.abc_sequences or narrowing.plain_kind_tests):
            return True
        function = self.owner.scopes[-1].node
        if not isinstance(function, cst.FunctionDef):
            return True
        body = function.body.body
        return self.original not in body[:-1]

    def _room(self) -> int:
        """How wide a line of a case's body may be: from where the cases
        nested this deep write it to the project's limit."""
        return self.owner.limits.limit - self._column() - INDENT * (self._depth + 1)


def lines_over(
    statements: Sequence[cst.BaseStatement], column: int, limits: LineLimits
) -> int:
    """How many lines of ``statements``, written at ``column`` and
    formatted by black at ``limits.wrap``, are wider than ``limits.limit``."""
    room = limits.limit - column
    code = code_for(cst.Module(body=statements))  # type: ignore[arg-type]
    if all(len(line) <= room for line in code.splitlines()):
        return 0  # black would leave every line as it is
    try:
        import black

        mode = black.Mode(line_length=max(limits.wrap - column, 1))
        code = black.format_str(code, mode=mode)
    except Exception:
        pass  # (black's parser lags CPython's: as it stands, then)
    return sum(len(line) > room for line in code.splitlines())


def with_calls_split(
    statements: Sequence[cst.BaseStatement], column: int, limits: LineLimits
) -> List[cst.BaseStatement]:
    """``statements`` with each ``if`` test and simple statement wider than
    the limit given a trailing comma in its last call, where it ends in
    one: black then writes that call's arguments one a line, and keeps
    them so."""
    return [
        fitted
        for statement in statements
        for fitted in _fitted(statement, column, limits)
    ]


def _between(width: int, limits: LineLimits) -> bool:
    """Whether black leaves a line this wide as it is, and the linter does
    not (one wider black splits, as it does best)."""
    return limits.limit < width <= limits.wrap


def _fitted(
    statement: cst.BaseStatement, column: int, limits: LineLimits
) -> List[cst.BaseStatement]:
    if isinstance(statement, cst.SimpleStatementLine):
        if not _between(
            _width(statement.with_changes(leading_lines=()), column), limits
        ):
            return [statement]
        parsed = _parsed(statement)
        lines = _assignments_apart(parsed) or [_with_last_call_split(parsed)]
        lines[0] = lines[0].with_changes(leading_lines=statement.leading_lines)
        return list(lines)
    if isinstance(statement, cst.If):
        return [_fitted_if(statement, column, limits)]
    body = getattr(statement, "body", None)
    if isinstance(body, cst.IndentedBlock):
        return [statement.with_changes(body=_fitted_block(body, column, limits))]
    return [statement]


def _fitted_if(node: cst.If, column: int, limits: LineLimits) -> cst.If:
    # (a test is left to black: with a trailing comma in a call, black
    # splits the whole test one operand a line, and that call one argument
    # a line; what keeps a test narrower is nesting, decision_tree.py)
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        orelse = _fitted_if(orelse, column, limits)
    elif isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
        orelse = orelse.with_changes(body=_fitted_block(orelse.body, column, limits))
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        body = _fitted_block(body, column, limits)
    return node.with_changes(body=body, orelse=orelse)


def _fitted_block(
    block: cst.IndentedBlock, column: int, limits: LineLimits
) -> cst.IndentedBlock:
    return block.with_changes(
        body=with_calls_split(block.body, column + INDENT, limits)
    )


def _width(node: cst.CSTNode, column: int) -> int:
    """The width of ``node`` on one line at ``column``; 0 for a node over
    several lines (a string over lines, or one the user wrapped): black
    keeps those as they are."""
    text = code_for(node).rstrip("\n")
    return 0 if "\n" in text else column + len(text)


def _parsed(line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    """``line`` as LibCST's own nodes (the printer writes some of ours as
    text: ``Raw``)."""
    parsed = cst.parse_statement(code_for(line.with_changes(leading_lines=())))
    assert isinstance(parsed, cst.SimpleStatementLine)
    return parsed


def _assignments_apart(
    line: cst.SimpleStatementLine,
) -> Optional[List[cst.SimpleStatementLine]]:
    """``a, b = x.a, x.b`` as ``a = x.a`` then ``b = x.b``, where no value
    reads a name assigned before it (None where that does not hold)."""
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
        return None
    assign = line.body[0]
    if len(assign.targets) != 1:
        return None
    target, value = assign.targets[0].target, assign.value
    if not (isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple)):
        return None
    if len(target.elements) != len(value.elements):
        return None
    names: List[cst.Name] = []
    values: List[cst.BaseExpression] = []
    for name, item in zip(target.elements, value.elements):
        if not isinstance(name, cst.Element) or not isinstance(name.value, cst.Name):
            return None  # (a starred item, or an attribute: left as it is)
        if not isinstance(item, cst.Element):
            return None
        if _names_in(item.value) & {n.value for n in names}:
            return None  # (it reads one assigned before it)
        names.append(name.value)
        values.append(item.value)
    return [
        cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(target=name)], value=item)]
        )
        for name, item in zip(names, values)
    ]


def _names_in(node: cst.CSTNode) -> Set[str]:
    found: Set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

    node.visit(Names())
    return found


def _with_last_call_split(line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    if len(line.body) != 1:
        return line
    small = line.body[0]
    if isinstance(small, cst.Raise) and small.cause is not None:
        return line  # (it ends with the cause)
    for field in ("value", "exc"):
        value = getattr(small, field, None)
        if isinstance(value, cst.BaseExpression):
            split = _split_last_call(value)
            if split is not value:
                return line.with_changes(body=[small.with_changes(**{field: split})])
    return line


def _split_last_call(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` with a trailing comma in the call its text ends with (the
    bracket black splits a line at), or as it is."""
    if node.lpar:
        return node
    if isinstance(node, cst.Call):
        return _with_trailing_comma(node)
    for field in _last_operand(node):
        operand = getattr(node, field)
        if isinstance(operand, cst.BaseExpression):
            split = _split_last_call(operand)
            return node if split is operand else node.with_changes(**{field: split})
        if isinstance(operand, Sequence) and operand:
            last = operand[-1]
            split = _split_last_call(last.comparator)
            if split is last.comparator:
                return node
            rest = [*operand[:-1], last.with_changes(comparator=split)]
            return node.with_changes(**{field: rest})
    return node


def _last_operand(node: cst.BaseExpression) -> Iterable[str]:
    """The field holding what ``node``'s text ends with."""
    if isinstance(node, (cst.BooleanOperation, cst.BinaryOperation)):
        return ("right",)
    if isinstance(node, cst.UnaryOperation):
        return ("expression",)
    if isinstance(node, cst.Comparison):
        return ("comparisons",)
    if isinstance(node, cst.Await):
        return ("expression",)
    return ()


def _with_trailing_comma(call: cst.Call) -> cst.BaseExpression:
    args = list(call.args)
    if not args:
        return call
    last: Optional[cst.Arg] = args[-1]
    assert last is not None
    if isinstance(last.value, cst.GeneratorExp) and not last.value.lpar:
        return call  # ``f(x for x in y,)`` is no call
    if isinstance(last.comma, cst.Comma):
        return call  # black splits it already
    args[-1] = last.with_changes(comma=cst.Comma())
    return call.with_changes(args=args)
