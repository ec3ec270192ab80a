"""LibCST's code generation, without its cost for positions nobody asks for.

``Module.code_for_node`` enters a ``record_syntactic_position`` context at
almost every node; its default state does nothing there, but the context is
a generator-based context manager built and torn down each time, which costs
about a third of the generation. The state here answers with one reusable
no-op context instead: the text is the same, token for token.
"""

from __future__ import annotations

import contextlib
from typing import ContextManager, Optional

import libcst as cst

try:  # LibCST's internal state class: a newer LibCST may move it
    from libcst._nodes.internal import CodegenState
except ImportError:  # pragma: no cover - then LibCST's own path, slower
    CodegenState = None  # type: ignore[assignment,misc]

__all__ = ["code_for"]

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
    context = module if module is not None else _EMPTY
    if CodegenState is None:
        return context.code_for_node(node)
    state = _PlainCodegenState(
        default_indent=context.default_indent, default_newline=context.default_newline
    )
    node._codegen(state)
    return "".join(state.tokens)


_EMPTY = cst.Module(body=[])
