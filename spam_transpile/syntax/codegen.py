"""LibCST's code generation, without its cost for positions nobody asks for.

``Module.code_for_node`` enters a ``record_syntactic_position`` context at
almost every node; its default state does nothing there, but the context is
a generator-based context manager built and torn down each time, which costs
about a third of the generation. The state here answers with one reusable
no-op context instead: the text is the same, token for token.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import ContextManager, List, Optional

import libcst as cst

try:  # LibCST's internal state class: a newer LibCST may move it
    from libcst._nodes.internal import CodegenState
except ImportError:  # pragma: no cover - then LibCST's own path, slower
    CodegenState = None  # type: ignore[assignment,misc]

__all__ = ["HelperPlaceholder", "RawExpression", "code_for", "without_parens"]

_NOTHING: ContextManager[None] = contextlib.nullcontext()


class _PlainCodegenState(CodegenState or object):  # type: ignore[misc]
    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> ContextManager[None]:
        return _NOTHING


def code_for(node: cst.CSTNode, module: Optional[cst.Module] = None) -> str:
    """``module.code_for_node(node)`` (so ``code_for(m, m)`` is ``m.code``);
    without a module, in the default indentation and newline of an empty one."""
    text = _leaf_text(node)
    if text is not None:
        return text
    context = module if module is not None else _EMPTY
    if CodegenState is None:
        return context.code_for_node(node)
    state = _PlainCodegenState(
        default_indent=context.default_indent, default_newline=context.default_newline
    )
    node._codegen(state)
    return "".join(state.tokens)


def without_parens(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` without its own parentheses (a copy only if it has some)."""
    if node.lpar or node.rpar:
        return node.with_changes(lpar=[], rpar=[])
    return node


_EMPTY = cst.Module(body=[])

# Nodes whose text is their ``value`` once they have no parentheses: most of
# what the lowering asks text for (names, literals, a case's whitespace), at a
# fraction of a code generation's cost. The same tokens LibCST writes.
_VALUED = (cst.Name, cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary)


def _leaf_text(node: cst.CSTNode) -> Optional[str]:
    kind = type(node)
    if kind is cst.SimpleWhitespace:
        return node.value  # type: ignore[attr-defined,no-any-return]
    if kind in _VALUED:
        if node.lpar or node.rpar:  # type: ignore[attr-defined]
            return None
        return node.value  # type: ignore[attr-defined,no-any-return]
    if kind is cst.Attribute:
        return _attribute_text(node)  # type: ignore[arg-type]
    return None


def _attribute_text(node: cst.Attribute) -> Optional[str]:
    dot = node.dot
    if node.lpar or node.rpar or not isinstance(dot, cst.Dot):
        return None
    before, after = dot.whitespace_before, dot.whitespace_after
    if (
        type(before) is not cst.SimpleWhitespace
        or type(after) is not cst.SimpleWhitespace
    ):
        return None
    value = _leaf_text(node.value)
    if value is None:
        return None
    return f"{value}{before.value}.{after.value}{node.attr.value}"


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
