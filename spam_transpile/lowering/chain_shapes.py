"""Readable layout: the ``if``/``elif`` chains of a match, shaped as a person
writes them once they are built.

Two rewrites, both exact, applied only to the chain's own ``if``/``elif``/
``else`` links (never to an ``if`` of a case's body):

- a case that does nothing, before a last one that does something
  (``case Token(text=t) if t == text: pass`` then ``case _: raise ...``),
  is its negated test: ``if subject.text != text: raise ...``;
- an ``else:`` after branches that all leave (``return``, ``raise``,
  ``break``, ``continue``) is dropped, its statements following the
  chain (pylint's no-else-return), and an ``else: pass`` goes.

Negating ``a == b`` as ``a != b`` trusts that ``__ne__`` says the opposite
of ``__eq__`` (it does unless a class defines both apart): docs/limits.md.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

import libcst as cst

from spam_transpile.lowering.bodies import always_leaves, only_pass

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
        if isinstance(statement, cst.If):
            out += _without_empty_else(_without_pass_branches(statement, raw))
        else:
            out.append(statement)
    return out


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
        test = negated(cst.Module([]).code_for_node(chain.test))
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


def _replace_last_orelse(chain: cst.If, orelse: Optional[Chain]) -> cst.If:
    if isinstance(chain.orelse, cst.If):
        return chain.with_changes(orelse=_replace_last_orelse(chain.orelse, orelse))
    return chain.with_changes(orelse=orelse)


def negated(test: str) -> Optional[str]:
    """``not test`` as a person spells it (``a != b``, ``not isinstance(a,
    B)``, ``not (a and b)``); None where ``test`` does not parse alone."""
    try:
        tree = cst.parse_expression(test.strip())
    except cst.ParserSyntaxError:
        return None
    if tree.lpar:
        tree = tree.with_changes(lpar=[], rpar=[])
    code = cst.Module([]).code_for_node
    if isinstance(tree, cst.UnaryOperation) and isinstance(tree.operator, cst.Not):
        return code(tree.expression)
    if isinstance(tree, cst.Comparison) and len(tree.comparisons) == 1:
        target = tree.comparisons[0]
        opposite = _OPPOSITE.get(type(target.operator))
        if opposite is not None:
            flipped = target.with_changes(operator=opposite())
            return code(tree.with_changes(comparisons=[flipped]))
    if isinstance(tree, (cst.Call, cst.Name, cst.Attribute, cst.Subscript)):
        return f"not {code(tree)}"
    return f"not ({code(tree)})"
