"""Place the module's helper (:mod:`.runtime`) without moving any line.

The helper's statements go, in order, onto lines that run before anything
in the module can reach a match statement: blank lines between the
module's first statements (after the docstring and ``__future__`` imports,
before the first compound statement), and after those, the ends of its
simple statements (``import x; _spam = ...``). Each line is filled up to
:data:`LINE_LIMIT` characters where it can be; what does not fit goes onto
the last line found.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from spam_transpile.syntax.codegen import code_for
from spam_transpile.lowering.runtime import PARTS, helper_statement, helper_statements
from spam_transpile.syntax.partial import is_stand_in, real_statement

LINE_LIMIT = 400


class MatchLine(cst.Expr):
    """The statement the lowering puts on a ``match`` line (a stable subject)."""


class MatchAssign(cst.Assign):
    """The statement the lowering puts on a ``match`` line (a subject temporary)."""


class RawLine(cst.Comment):
    """Generated statements printed where a blank line was."""

    def _validate(self) -> None:
        pass


class RawStatement(cst.Name):
    """A generated simple statement, printed as it is."""

    def _validate(self) -> None:
        pass


Slot = Tuple[str, int, int, int]  # (kind, statement index, line index, capacity)


def place_helper(
    module: cst.Module, name: str, used: Iterable[str], filename: str
) -> cst.Module:
    statements = helper_statements(name, used)
    body: List[cst.BaseStatement] = list(module.body)
    start = _first_free_statement(body)
    costs = [len(statement) + 2 for statement in statements]
    slots = _slots(module, body, start, costs)
    if not slots:
        return module  # each match line binds the helper (has_slots said so)
    groups: List[List[str]] = [[] for _ in slots]
    for statement, slot in zip(statements, _assign(costs, slots)):
        # what does not fit anywhere goes onto the last line found
        groups[min(slot, len(slots) - 1)].append(statement)
    if groups[-1] and slots[-1][0] == "inner":
        # A loop body runs again: it gets the one statement that is cheap to
        # rerun and needs no pieces.
        groups = [[] for _ in slots]
        groups[-1] = [helper_statement(name, used)]
    for (kind, index, line, _), group in reversed(list(zip(slots, groups))):
        if group:
            body[index] = _fill(body[index], kind, line, group)
    return module.with_changes(body=body)


def has_slots(module: cst.Module) -> bool:
    """False when no line runs before every match statement could run."""
    body: List[cst.BaseStatement] = list(module.body)
    return bool(_slots(module, body, _first_free_statement(body), [1]))


def on_match_line(name: str, inside_scope: bool) -> List[cst.BaseSmallStatement]:
    """What a match line starts with when the module has no line for the
    helper: the helper bound as a global, compiled only the first time."""
    texts = [helper_statement(name, PARTS)]
    if inside_scope:
        texts.insert(0, f"global {name}")
    return [
        cst.Expr(
            RawStatement(text),
            semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        for text in texts
    ]


def _leading_lines(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    return getattr(statement, "leading_lines", ())


def _first_free_statement(body: Sequence[cst.BaseStatement]) -> int:
    """Index of the first statement after the docstring and __future__ imports."""
    index = 0
    if index < len(body) and is_docstring(body[index]):
        index += 1
    while index < len(body) and _is_future_import(body[index]):
        index += 1
    return index


def is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(
            statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)
        )
    )


def _is_future_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.ImportFrom)
        and isinstance(small.module, cst.Name)
        and small.module.value == "__future__"
        for small in statement.body
    )


def _assign(costs: Sequence[int], slots: Sequence[Slot]) -> List[int]:
    """The slot of each statement, filled in order: a slot is closed once the
    next statement does not fit it; ``len(slots)`` for what fits nowhere."""
    assigned: List[int] = []
    slot, filled = 0, 0
    for cost in costs:
        while slot < len(slots) and filled + cost > slots[slot][3]:
            slot, filled = slot + 1, 0
        assigned.append(slot)
        filled += cost if slot < len(slots) else 0
    return assigned


def _fits(costs: Sequence[int], slots: Sequence[Slot]) -> bool:
    return all(slot < len(slots) for slot in _assign(costs, slots))


def _slots(
    module: cst.Module, body: List[cst.BaseStatement], start: int, costs: List[int]
) -> List[Slot]:
    """Free places in line order, all run before any match statement can run.

    Blank lines and ends of simple statements, as long as every statement
    before them only defines things (imports, plain assignments, functions,
    dataclasses); then the start of the first statement that may run code.
    """
    slots: List[Slot] = []
    if start > 0:
        # The docstring or last __future__ import line can take statements after it.
        previous = body[start - 1]
        slots.append(("end", start - 1, 0, LINE_LIMIT - _width(module, previous)))
    for index in range(start, len(body)):
        if _fits(costs, slots):
            break  # enough room: the rest of the module need not be read
        statement = body[index]
        for line, empty in enumerate(_leading_lines(statement)):
            if empty.comment is None and not empty.whitespace.value:
                slots.append(("blank", index, line, LINE_LIMIT))
        if is_stand_in(statement):
            # LibCST was given a stand-in for this statement (the lines
            # before it are real): if they are not room enough, the
            # statement is parsed now (spam_transpile.syntax.partial).
            if _fits(costs, slots):
                break  # a slot the statement added would take nothing
            statement = body[index] = real_statement(statement, module)
        simple = isinstance(statement, cst.SimpleStatementLine)
        width = _width(module, statement) if simple else 0
        if not _only_defines(statement):
            if simple:
                slots.append(("start", index, 0, LINE_LIMIT - width))
            elif _inner_line(statement) is not None:
                slots.append(("inner", index, 0, LINE_LIMIT))
            break
        if isinstance(statement, cst.SimpleStatementLine):
            slots.append(("end", index, 0, LINE_LIMIT - width))
    return slots


def _inner_line(statement: cst.BaseStatement) -> Optional[cst.SimpleStatementLine]:
    """The first line of a loop's or ``if``'s body, when its header calls nothing:
    the first line of the module that runs code."""
    if isinstance(statement, cst.For):
        header: cst.CSTNode = statement.iter
    elif isinstance(statement, (cst.If, cst.While)):
        header = statement.test
    else:
        return None
    body = statement.body
    if _calls(header) or not isinstance(body, cst.IndentedBlock) or not body.body:
        return None
    first = body.body[0]
    return first if isinstance(first, cst.SimpleStatementLine) else None


def _only_defines(statement: cst.BaseStatement) -> bool:
    """True if running ``statement`` cannot reach a match statement."""
    if isinstance(statement, cst.SimpleStatementLine):
        return all(_defining_small(small) for small in statement.body)
    if isinstance(statement, cst.FunctionDef):
        return not statement.decorators and not _calls(statement.params)
    if isinstance(statement, cst.ClassDef):
        return all(
            _is_dataclass_decorator(d) for d in statement.decorators
        ) and not _calls_in_class(statement)
    return False


def _defining_small(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, (MatchLine, MatchAssign)):
        return False  # a lowered match statement starts here
    if isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass)):
        return True
    if isinstance(small, (cst.Assign, cst.AnnAssign)):
        return small.value is None or not _calls(small.value)
    return False


def _is_dataclass_decorator(decorator: cst.Decorator) -> bool:
    target = decorator.decorator
    if isinstance(target, cst.Call):
        target = target.func
    if isinstance(target, cst.Name):
        return target.value == "dataclass"
    return (
        isinstance(target, cst.Attribute)
        and target.attr.value == "dataclass"
        and isinstance(target.value, cst.Name)
        and target.value.value == "dataclasses"
    )


def _calls_in_class(node: cst.ClassDef) -> bool:
    if node.bases and any(_calls(arg.value) for arg in node.bases):
        return True
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return True
    for statement in body.body:
        if isinstance(statement, cst.FunctionDef):
            if statement.decorators or _calls(statement.params):
                return True
        elif not (
            isinstance(statement, cst.SimpleStatementLine)
            and all(_defining_small(s) for s in statement.body)
        ):
            return True
    return False


class _FindCall(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name) and type(node) is not cst.Name:
            # Generated code (the lowering's raw text) is not walked: count it
            # as running code.
            self.found = True
            return False
        return super().on_visit(node)

    def visit_Call(self, node: cst.Call) -> bool:
        self.found = True
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # a lambda's body runs later, if ever


def _calls(node: cst.CSTNode) -> bool:
    finder = _FindCall()
    node.visit(finder)
    return finder.found


def _width(module: cst.Module, statement: cst.BaseStatement) -> int:
    code = code_for(statement.with_changes(leading_lines=()), module)
    return max((len(line) for line in code.splitlines()), default=0)


def _fill(
    statement: cst.BaseStatement, kind: str, line: int, group: List[str]
) -> cst.BaseStatement:
    if kind == "inner":
        first = _inner_line(statement)
        assert first is not None and isinstance(statement, (cst.For, cst.If, cst.While))
        body = statement.body
        assert isinstance(body, cst.IndentedBlock)
        filled = _fill(first, "start", 0, group)
        return statement.with_changes(
            body=body.with_changes(body=[filled, *body.body[1:]])
        )
    if kind == "start":
        assert isinstance(statement, cst.SimpleStatementLine)
        extra = [
            cst.Expr(
                RawStatement(text),
                semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")),
            )
            for text in group
        ]
        return statement.with_changes(body=[*extra, *statement.body])
    if kind == "blank":
        lines = list(_leading_lines(statement))
        lines[line] = cst.EmptyLine(indent=False, comment=RawLine("; ".join(group)))
        return statement.with_changes(leading_lines=lines)
    assert isinstance(statement, cst.SimpleStatementLine)
    extra = [cst.Expr(RawStatement(text)) for text in group]
    smalls = list(statement.body)
    last = smalls[-1].with_changes(
        semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
    )
    smalls[-1] = last
    for i, small in enumerate(extra[:-1]):
        extra[i] = small.with_changes(
            semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
        )
    return statement.with_changes(body=[*smalls, *extra])
