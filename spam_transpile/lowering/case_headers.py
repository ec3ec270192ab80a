"""How a keep-lines case header is laid out: how many lines it spans,
where the parts of a header over several lines start, and how wide the
case's ``elif`` line comes out (:mod:`.keep_lines` lowers a case again,
its checks written compact, where that is wider than :data:`WIDEST`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Union

import libcst as cst
from spam_transpile.lowering.positions import CaseLines, case_lines, header_line_breaks
from spam_transpile.syntax.codegen import code_for

if TYPE_CHECKING:
    from spam_transpile.lowering.transformer import MatchLowering

#: the widest a case's line may be before its checks are written compact
#: (``compact``): every check of a case shares the case's one line, and
#: editors, diffs and tracebacks show lines wider than this badly
WIDEST = 320


class CaseHeaders:
    """The header layout of the cases of one match statement (a part of
    ``MatchEmitter``)."""

    owner: "MatchLowering"
    node: cst.Match
    original: cst.Match
    layout: str
    _headers: Dict[int, int]
    _case_lines: Dict[int, Optional[CaseLines]]

    def _widest(self, test: str) -> int:
        """How wide the widest line of an ``elif`` with ``test`` is (where
        it may be wider than ``WIDEST``: the column costs positions)."""
        lines = test.split("\n")
        widest = max(len(line) for line in lines)
        if widest <= WIDEST // 2:
            return widest
        first = self._column() + len("elif ") + len(lines[0]) + 1
        return max([first, *(len(line) for line in lines[1:])])

    def _column(self) -> int:
        return match_column(self.owner, self.original)

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

    def _continuation_indent(self) -> str:
        return (self.node.indent or self.owner.module.default_indent) * 2

    @staticmethod
    def _newlines(node_or_text: Union[str, cst.CSTNode]) -> int:
        if isinstance(node_or_text, str):
            return node_or_text.count("\n")
        text = code_for(node_or_text)
        if isinstance(node_or_text, cst.BaseStatement):
            return text.count("\n") - 1  # its own line end
        return text.count("\n")


def match_column(owner: "MatchLowering", match: cst.Match) -> int:
    """The column the match statement starts at: where its lines go (both
    printers)."""
    standard = owner.standard.get(id(match))
    if standard is not None:
        return standard.col_offset
    return owner.position(match)[1] - 1


def with_comments(text: str, comments: Dict[int, str]) -> str:
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
