"""Readable layout: the ``if``/``elif`` chains of a match, shaped as a person
writes them once they are built.

Four rewrites, all exact, applied only to the chain's own ``if``/``elif``/
``else`` links (never to an ``if`` of a case's body):

- a link that tests nothing (``elif True:``, where a case's guard is an
  ``if`` inside it) is the ``else:`` it is, the links after it dropped;
- a case that does nothing, before a last one that does something
  (``case Token(text=t) if t == text: pass`` then ``case _: raise ...``),
  is its negated test: ``if subject.text != text: raise ...``;
- an ``else:`` after branches that all leave (``return``, ``raise``,
  ``break``, ``continue``) is dropped, its statements following the
  chain (pylint's no-else-return), and an ``else: pass`` goes;
- an ``else`` that leaves after a branch that goes on, and a long branch
  that leaves followed by one statement that leaves, are a guard clause
  first (``if not isinstance(config, Mapping): return [...]``)
  and the branch's statements after it, one level less indented.

Negating ``a == b`` as ``a != b`` trusts that ``__ne__`` says the opposite
of ``__eq__`` (it does unless a class defines both apart): docs/limits.md.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

import libcst as cst

from spam_transpile.lowering.bodies import always_leaves, only_pass
from spam_transpile.syntax.cstwalk import descendants

__all__ = ["shaped_chains", "negated"]

Chain = Union[cst.If, cst.Else]

_OPPOSITE = {
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
}


def shaped_chains(statements: Sequence[Any], raw: Any) -> List[Any]:
    """``statements`` with each chain among them shaped (module
    docstring); ``raw`` makes an expression node of generated text."""
    out: List[Any] = []
    for statement in statements:
        # (only the chain's own: a case body's ``if`` is the user's code)
        if isinstance(statement, cst.If) and type(statement.test) is raw:
            if _is_true(statement.test, raw):
                # (the links after it never run; bodies.statements_of_lone_case
                # writes its statements at the chain's level)
                out.append(statement.with_changes(orelse=None))
                continue
            statement = _true_link_as_else(statement, raw)
            shaped = _without_empty_else(_without_pass_branches(statement, raw))
            if len(shaped) == 1:
                shaped = _leaving_else_first(shaped[0], raw)
            out += shaped
        else:
            out.append(statement)
    return _guard_clause_first(out, raw)


def _is_true(test: cst.BaseExpression, raw: Any) -> bool:
    return type(test) is raw and test.value == "True"  # type: ignore[attr-defined]


def _true_link_as_else(chain: cst.If, raw: Any) -> cst.If:
    """``elif True:`` as the ``else:`` it is (the links after it never
    run)."""
    orelse = chain.orelse
    if not isinstance(orelse, cst.If):
        return chain
    if _is_true(orelse.test, raw):
        last = cst.Else(body=orelse.body, leading_lines=orelse.leading_lines)
        return chain.with_changes(orelse=last)
    return chain.with_changes(orelse=_true_link_as_else(orelse, raw))


#: a branch of this many lines or more reads better dedented after a guard
#: clause (``if not isinstance(config, Mapping): return [...]``)
_LONG_BRANCH = 6


def _guard_clause_first(statements: List[Any], raw: Any) -> List[Any]:
    """``if test: <long branch that leaves>`` then a short tail that leaves
    (``return [...]``) as ``if not test: <tail>`` then the branch's
    statements, dedented: the guard clause a person writes first. Exact:
    each runs where it ran, and nothing after either."""
    ifs = [i for i, s in enumerate(statements) if isinstance(s, cst.If)]
    if not ifs:
        return statements
    at = ifs[-1]
    chain, tail = statements[at], statements[at + 1 :]
    body = chain.body
    if (
        type(chain.test) is not raw
        or chain.orelse is not None
        or not isinstance(body, cst.IndentedBlock)
        or body.header.comment is not None
        or body.footer
        or len(tail) != 1
        or not all(isinstance(s, cst.SimpleStatementLine) for s in tail)
        or any(_has_comment(s) for s in tail)
        or _has_comment(chain)
        or not always_leaves(body)
        or not always_leaves(cst.IndentedBlock(body=tail))
        or not _long(body)
    ):
        return statements
    test = negated(_code(chain.test), plainly=True)
    if test is None:
        return statements
    guard = chain.with_changes(test=raw(test), body=cst.IndentedBlock(body=list(tail)))
    return [*statements[:at], guard, *body.body]


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _has_comment(statement: cst.CSTNode) -> bool:
    lines = getattr(statement, "leading_lines", ())
    return any(line.comment is not None for line in lines)


def _long(body: cst.IndentedBlock) -> bool:
    code = _code(body)
    return code.count("\n") >= _LONG_BRANCH


def _without_pass_branches(chain: cst.If, raw: Any) -> cst.If:
    """``if a: pass`` + ``else: b`` as ``if not a: b``, at any link."""
    orelse = chain.orelse
    if isinstance(orelse, cst.If):
        orelse = _without_pass_branches(orelse, raw)
        chain = chain.with_changes(orelse=orelse)
    body = chain.body
    if (
        isinstance(orelse, cst.Else)
        and isinstance(body, cst.IndentedBlock)
        and isinstance(orelse.body, cst.IndentedBlock)
        and only_pass(body)
        and body.header.comment is None
        and not orelse.leading_lines
        and orelse.body.header.comment is None
    ):
        test = negated(_code(chain.test))
        if test is not None:
            return chain.with_changes(test=raw(test), body=orelse.body, orelse=None)
    return chain


def _without_empty_else(chain: cst.If) -> List[Any]:
    """The chain, and the statements of an ``else`` that need not be one:
    every branch before it leaves, or it is a bare ``pass``."""
    links: List[cst.If] = [chain]
    while isinstance(links[-1].orelse, cst.If):
        links.append(links[-1].orelse)  # type: ignore[arg-type]
    last = links[-1].orelse
    if not isinstance(last, cst.Else) or not isinstance(last.body, cst.IndentedBlock):
        return [chain]
    empty = only_pass(last.body) and last.body.header.comment is None
    if not empty and not all(always_leaves(link.body) for link in links):
        return [chain]
    if empty and last.leading_lines:
        return [chain]  # comments of their own before ``case _:``
    statements: List[Any] = [] if empty else list(last.body.body)
    if statements:
        comment = last.body.header.comment
        header = [] if comment is None else [cst.EmptyLine(comment=comment)]
        first = statements[0]
        lines = [*last.leading_lines, *header, *first.leading_lines]
        statements[0] = first.with_changes(leading_lines=lines)
    return [_replace_last_orelse(chain, None), *statements]


def _leaving_else_first(chain: cst.If, raw: Any) -> List[Any]:
    """``if test: <goes on>`` + ``else: <short, leaves>`` as ``if not test:
    <the else>`` then the branch's statements, dedented (``if subject.kind
    != "name": raise ...`` then ``name = subject.text``)."""
    orelse, body = chain.orelse, chain.body
    if (
        not isinstance(orelse, cst.Else)
        or not isinstance(orelse.body, cst.IndentedBlock)
        or not isinstance(body, cst.IndentedBlock)
        or orelse.leading_lines
        or orelse.body.header.comment is not None
        or body.header.comment is not None
        or body.footer
        or _has_comment(chain)
        or always_leaves(body)
        or not always_leaves(orelse.body)
        or _code(orelse.body).count("\n") > _SHORT_ELSE
    ):
        return [chain]
    test = negated(_code(chain.test), plainly=True)
    if test is None:
        return [chain]
    guard = chain.with_changes(test=raw(test), body=orelse.body, orelse=None)
    return [guard, *body.body]


#: an ``else`` that leaves, of this many lines at most, goes first
_SHORT_ELSE = 3


def _replace_last_orelse(chain: cst.If, orelse: Optional[Chain]) -> cst.If:
    if isinstance(chain.orelse, cst.If):
        return chain.with_changes(orelse=_replace_last_orelse(chain.orelse, orelse))
    return chain.with_changes(orelse=orelse)


def negated(test: str, plainly: bool = False) -> Optional[str]:
    """``not test`` as a person spells it (``a != b``, ``not isinstance(a,
    B)``, ``not a or b`` for ``a and not b``, else ``not (...)``); None
    where ``test`` does not parse alone, or, ``plainly``, where it takes
    ``not (...)`` or stores with ``:=`` (a guard clause is then no easier
    to read)."""
    try:
        tree = cst.parse_expression(test.strip())
    except cst.ParserSyntaxError:
        return None
    tree = tree.with_changes(lpar=[], rpar=[])
    if plainly and any(isinstance(n, cst.NamedExpr) for n in descendants(tree)):
        return None
    found = _negated_node(tree)
    if found is None and isinstance(tree, cst.BooleanOperation):
        found = _negated_and(tree)
    if found is None and not plainly:
        found = f"not ({_code(tree)})"
    return found


def _negated_and(tree: cst.BooleanOperation) -> Optional[str]:
    """``not (a and not b)`` as ``not a or b`` (the same operands tried in
    the same order, to the same truth), where every operand negates
    plainly."""
    operands: List[cst.BaseExpression] = []
    node: cst.BaseExpression = tree
    while isinstance(node, cst.BooleanOperation) and not node.lpar:
        if not isinstance(node.operator, cst.And):
            return None
        operands.append(node.right)
        node = node.left
    operands.append(node)
    parts = [_negated_node(operand) for operand in reversed(operands)]
    if any(part is None for part in parts):
        return None
    return " or ".join(parts)  # type: ignore[arg-type]


def _negated_node(tree: cst.BaseExpression) -> Optional[str]:
    """``not tree`` without parentheses around ``tree``, where it reads
    plainly so; None where it needs them."""
    if tree.lpar:
        tree = tree.with_changes(lpar=[], rpar=[])
    if isinstance(tree, cst.UnaryOperation) and isinstance(tree.operator, cst.Not):
        return _code(tree.expression)
    if isinstance(tree, cst.Comparison) and len(tree.comparisons) == 1:
        target = tree.comparisons[0]
        opposite = _OPPOSITE.get(type(target.operator))
        if opposite is not None:
            flipped = target.with_changes(operator=opposite())
            return _code(tree.with_changes(comparisons=[flipped]))
    if isinstance(tree, (cst.Call, cst.Name, cst.Attribute, cst.Subscript)):
        return f"not {_code(tree)}"
    return None
