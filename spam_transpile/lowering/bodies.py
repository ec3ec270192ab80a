"""Edits of a case body: statements run first, temporaries deleted on every
path out, a class's temporaries bound in its bases."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.syntax.codegen import RawExpression
from spam_transpile.syntax.cstwalk import contains

Body = Union[cst.IndentedBlock, cst.SimpleStatementSuite]


def element_value(element: cst.BaseElement) -> cst.BaseExpression:
    # Only local names get here (``local_subject``): never a starred element.
    assert isinstance(element, cst.Element)
    return element.value


def as_body(suite: cst.BaseSuite) -> Body:
    # LibCST's only two suites; the base class exists for typing.
    assert isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite))
    return suite


def leading_lines_of(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    return getattr(statement, "leading_lines", ())


def bind_in_bases(node: cst.ClassDef, temps: Sequence[str]) -> cst.ClassDef:
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


def blank_lines(count: int) -> List[cst.EmptyLine]:
    return [cst.EmptyLine(indent=False) for _ in range(count)]


_RUNS_CODE = (cst.Call, cst.Await, cst.Yield)
_SUSPENDS = (cst.Await, cst.Yield)


def returns_unseen(body: Body, frame_quiet: bool) -> bool:
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


def starts_simple(body: Body) -> bool:
    """Whether the body's first line holds simple statements only."""
    return isinstance(body, cst.SimpleStatementSuite) or isinstance(
        body.body[0], cst.SimpleStatementLine
    )


def run_first(body: Body, stores: List[Tuple[str, str]]) -> Body:
    """``name = value`` for each of ``stores``, first on the body's first
    line (``starts_simple``)."""
    smalls: List[cst.BaseSmallStatement] = [
        cst.Expr(
            RawExpression(f"{name} = {value}"),
            semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        for name, value in stores
    ]
    prefixed = prefix_first_line(body, smalls)
    assert prefixed is not None
    return prefixed


def prefix_first_line(
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


def delete_first(body: Body, names: List[str]) -> Body:
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
    prefixed = prefix_first_line(body, [delete])
    if prefixed is not None:
        return prefixed
    first = body.body[0]
    if isinstance(first, (cst.Try, cst.With)):
        inner = delete_first(as_body(first.body), names)
        if inner is first.body:
            return body
        first = first.with_changes(body=inner)
    elif isinstance(first, cst.If):
        branched = delete_in_every_branch(first, names)
        if branched is None:
            return body
        first = branched
    else:
        return body
    return body.with_changes(body=[first, *body.body[1:]])


def delete_in_every_branch(node: cst.If, names: List[str]) -> Optional[cst.If]:
    # An if/elif/else with an else runs exactly one of its bodies: deleting
    # first thing in each is deleting once, whichever runs.
    inner = delete_first(as_body(node.body), names)
    if inner is node.body:
        return None
    orelse = node.orelse
    if orelse is None:
        return None
    if isinstance(orelse, cst.If):
        new_orelse: Optional[Union[cst.If, cst.Else]] = delete_in_every_branch(
            orelse, names
        )
    else:
        else_body = delete_first(as_body(orelse.body), names)
        new_orelse = (
            None if else_body is orelse.body else orelse.with_changes(body=else_body)
        )
    if new_orelse is None:
        return None
    return node.with_changes(body=inner, orelse=new_orelse)


_LEAVES = (cst.Return, cst.Raise, cst.Break, cst.Continue)


def leaving_cases(cases: Sequence[cst.MatchCase]) -> int:
    """How many cases, from the first, have bodies that always leave
    (:func:`always_leaves`)."""
    count = 0
    while count < len(cases) and always_leaves(cases[count].body):
        count += 1
    return count


def always_leaves(body: cst.BaseSuite) -> bool:
    """Whether running ``body`` to its end always leaves the statement
    holding it: its last statement returns, raises, breaks or continues, or
    is an ``if`` whose every branch (``else`` included) does."""
    if isinstance(body, cst.SimpleStatementSuite):
        return bool(body.body) and isinstance(body.body[-1], _LEAVES)
    assert isinstance(body, cst.IndentedBlock)
    if not body.body:
        return False
    last = body.body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], _LEAVES)
    if isinstance(last, cst.If):
        return _if_always_leaves(last)
    return False


def _if_always_leaves(node: cst.If) -> bool:
    if not always_leaves(node.body):
        return False
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        return _if_always_leaves(orelse)
    return orelse is not None and always_leaves(orelse.body)


def only_pass(body: cst.IndentedBlock) -> bool:
    """A body that is one bare ``pass``, which what comes first replaces."""
    if len(body.body) != 1 or body.footer:
        return False
    line = body.body[0]
    return (
        isinstance(line, cst.SimpleStatementLine)
        and [type(small) for small in line.body] == [cst.Pass]
        and not line.leading_lines
        and line.trailing_whitespace.comment is None
    )


def indented_block(body: cst.BaseSuite) -> cst.IndentedBlock:
    if isinstance(body, cst.IndentedBlock):
        return body
    assert isinstance(body, cst.SimpleStatementSuite)
    smalls = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body.body]
    return cst.IndentedBlock(
        body=[
            cst.SimpleStatementLine(
                body=smalls, trailing_whitespace=body.trailing_whitespace
            )
        ]
    )


def one_short_line(body: cst.BaseSuite) -> bool:
    """A body of one line of simple statements with no comment, short
    enough to be written twice (decision_tree's copy of a last case)."""
    if isinstance(body, cst.SimpleStatementSuite):
        return body.trailing_whitespace.comment is None
    assert isinstance(body, cst.IndentedBlock)
    if len(body.body) != 1 or body.footer or body.header.comment is not None:
        return False
    line = body.body[0]
    return (
        isinstance(line, cst.SimpleStatementLine)
        and not line.leading_lines
        and line.trailing_whitespace.comment is None
        and len(cst.Module([]).code_for_node(line)) <= 80
    )


def without_if_true(statements: Sequence[Any]) -> List[Any]:
    """``statements`` with each ``if True:`` that has no ``else`` (a case
    that always matches) as the statements of its body
    (:func:`statements_of_lone_case`)."""
    out: List[Any] = []
    for statement in statements:
        if isinstance(statement, cst.If):
            out += statements_of_lone_case(statement)
        else:
            out.append(statement)
    return out


def statements_of_lone_case(
    node: Union[cst.If, cst.Else],
) -> List[Union[cst.If, cst.BaseStatement]]:
    """A chain that is one case that always matches (``else:``, ``if
    True:``), as its body's statements at the chain's own level: a person
    writes no ``if True:``. Kept as ``if True:`` where its line holds a
    comment; any other chain as it is."""
    if isinstance(node, cst.If) and (
        node.orelse is not None
        or not isinstance(node.test, cst.Name)
        or node.test.value != "True"
    ):
        return [node]
    body = node.body
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    assert isinstance(body, cst.IndentedBlock)
    if body.header.comment is not None:
        return [node if isinstance(node, cst.If) else cst.If(cst.Name("True"), body)]
    return list(body.body)
