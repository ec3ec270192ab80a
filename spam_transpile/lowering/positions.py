"""Positions of LibCST nodes inside match statements, one statement at a time.

Positions are only needed to report an error or a warning, and they are
always asked about nodes of one match statement. LibCST's PositionProvider
generates code for the whole module to find them: in a file of hundreds of
match statements, a single warning would cost more than the lowering of the
file. Here only the match statement asked about is generated, starting at
its own line and indentation, which the standard tree (3.10+) gives.

Anything that does not line up (no standard tree, the two parsers finding a
different number of match statements, generated text that differs from the
source at that place) falls back to the whole-module provider: positions are
never guessed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, cast

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from spam_transpile.syntax.cstwalk import descendants, pattern_nodes

__all__ = [
    "CaseLines",
    "MatchPositions",
    "case_lines",
    "header_comments",
    "in_source_order",
    "match_lines",
]


def in_source_order(
    matches: Optional[Sequence[ast.Match]],
) -> Optional[List[ast.Match]]:
    """``matches`` (all the match statements of a standard tree, in any
    order) in source order: the order LibCST visits them in. None without a
    tree."""
    if matches is None:
        return None
    return sorted(matches, key=lambda m: (m.lineno, m.col_offset))


def match_lines(matches: Optional[Sequence[ast.Match]]) -> Optional[List[int]]:
    """The line of every ``match`` keyword among ``matches``, in source order."""
    ordered = in_source_order(matches)
    return None if ordered is None else [m.lineno for m in ordered]


class MatchPositions:
    """``(line, column)`` (1-based column) of nodes of ``module``, parsed from
    ``source``; call :meth:`enter` for every match statement in visiting order."""

    def __init__(
        self, module: cst.Module, source: str, lines: Optional[List[int]]
    ) -> None:
        self.module = module
        self.source = source
        self._lines = lines
        self._entered = 0
        # the outermost match statement being visited, and its index
        self._outermost: Optional[Tuple[cst.Match, int]] = None
        self._per_match: Dict[int, Mapping[cst.CSTNode, CodeRange]] = {}
        self._whole: Optional[Mapping[cst.CSTNode, CodeRange]] = None
        self._line_starts: Optional[List[int]] = None

    def enter(self, node: cst.Match, outermost: bool) -> None:
        if outermost:
            self._outermost = (node, self._entered)
        self._entered += 1

    def __call__(self, node: cst.CSTNode) -> Tuple[int, int]:
        ranges = self._ranges_around(node)
        start = ranges[node].start
        return start.line, start.column + 1

    def _ranges_around(self, node: cst.CSTNode) -> Mapping[cst.CSTNode, CodeRange]:
        if self._outermost is not None:
            match, index = self._outermost
            ranges = self._per_match.get(index)
            if ranges is None:
                ranges = self._per_match[index] = self._match_ranges(match, index)
            if node in ranges:
                return ranges
        return self._whole_module()

    def _whole_module(self) -> Mapping[cst.CSTNode, CodeRange]:
        if self._whole is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._whole = wrapper.resolve(PositionProvider)
        return self._whole

    def _match_ranges(
        self, match: cst.Match, index: int
    ) -> Mapping[cst.CSTNode, CodeRange]:
        """The match statement's ranges, or none when it cannot be placed."""
        if self._lines is None or index >= len(self._lines):
            return {}
        keyword_line = self._lines[index]
        first_line = keyword_line - len(match.leading_lines)
        start = self._line_start(first_line)
        keyword_at = self._line_start(keyword_line)
        if start is None or keyword_at is None:
            return {}
        line_text = self.source[keyword_at : self.source.find("\n", keyword_at)]
        indent = line_text[: len(line_text) - len(line_text.lstrip(" \t\f"))]
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=provider,
            indent_tokens=[indent] if indent else [],
            line=first_line,
        )
        match._codegen(state)
        text = "".join(state.tokens)
        if self.source[start : start + len(text)] != text:
            return {}  # not where the standard tree says: ask the whole module
        # Filled by code generation alone: no value is lazy.
        return cast(Mapping[cst.CSTNode, CodeRange], provider._computed)

    def _line_start(self, line: int) -> Optional[int]:
        """Offset of 1-based ``line`` in the source, if it has that line."""
        if self._line_starts is None:
            starts = [0]
            find = self.source.find
            found = find("\n")
            while found != -1:
                starts.append(found + 1)
                found = find("\n", found + 1)
            self._line_starts = starts
        if 1 <= line <= len(self._line_starts):
            return self._line_starts[line - 1]
        return None


@dataclass
class CaseLines:
    """Where the parts of a case header over several lines start, counted
    from its ``case`` line: what keep-lines output needs to put each check
    on the line CPython 3.10 runs it on."""

    #: id of each pattern node of the tree being lowered -> its line
    nodes: Dict[int, int] = field(default_factory=dict)
    #: each capture's line (its first, in an or-pattern)
    captures: Dict[str, int] = field(default_factory=dict)
    #: the guard's line, if any
    guard: Optional[int] = None
    #: the comments inside the pattern, by line
    comments: Dict[int, str] = field(default_factory=dict)

    def line_of(self, node: cst.CSTNode) -> int:
        return self.nodes[id(node)]


def case_lines(
    position: Callable[[cst.CSTNode], Tuple[int, int]],
    original: cst.MatchCase,
    updated: cst.MatchCase,
) -> CaseLines:
    """The lines of ``updated``'s pattern nodes (a copy of ``original``'s:
    nothing in a pattern is rewritten), read from ``original``'s positions,
    which exclude parentheses as CPython's do."""
    case_line = position(original)[0]
    lines = CaseLines()
    for new, old in zip(
        pattern_nodes(updated.pattern), pattern_nodes(original.pattern)
    ):
        # A value pattern's parentheses are its expression's: positions
        # exclude the expression's own.
        value: cst.CSTNode = old
        if isinstance(old, (cst.MatchValue, cst.MatchSingleton)):
            value = old.value
        lines.nodes[id(new)] = position(value)[0] - case_line
        name = getattr(old, "name", None) or getattr(old, "rest", None)
        if isinstance(name, cst.Name):
            lines.captures.setdefault(name.value, position(name)[0] - case_line)
    for line, comment in header_comments(position, original):
        lines.comments[line - case_line] = comment
    guard = original.guard
    if guard is not None:
        # The guard is written with its parentheses: it starts at the first.
        opening = "".join(_EMPTY.code_for_node(paren) for paren in guard.lpar)
        lines.guard = position(guard)[0] - case_line - opening.count("\n")
    return lines


def lines_before_case(
    case: cst.MatchCase,
    original: cst.MatchCase,
    position: Callable[[cst.CSTNode], Tuple[int, int]],
) -> List[cst.EmptyLine]:
    """The lines before ``case``, then the comments its pattern held (as
    ``original``, the source's, has them): the readable test that replaces
    the pattern has no place for them."""
    lines = list(case.leading_lines)
    if any(type(node) is cst.Comment for node in descendants(case.pattern)):
        lines += [
            cst.EmptyLine(comment=cst.Comment(text))
            for _, text in header_comments(position, original)
        ]
    return lines


def header_comments(
    position: Callable[[cst.CSTNode], Tuple[int, int]], case: cst.MatchCase
) -> List[Tuple[int, str]]:
    """``(line, text)`` of each comment in ``case``'s header before its guard
    (the lowering writes the pattern anew; the guard keeps its own text),
    in source order."""
    parts = [
        case.whitespace_after_case,
        case.pattern,
        case.whitespace_before_if,
        case.whitespace_after_if,
        case.whitespace_before_colon,
    ]
    found = [
        (position(node), node.value)
        for part in parts
        for node in descendants(part)
        if type(node) is cst.Comment
    ]
    return [(where[0], text) for where, text in sorted(found)]


_EMPTY = cst.Module([])


def header_line_breaks(case: cst.MatchCase, standard: ast.match_case) -> Optional[int]:
    """The line breaks of a case's header (the text between ``case`` and its
    colon) without generating its code: the pattern's and the guard's come
    from their positions in the standard tree, which span them exactly but
    for parentheses around them (and a tuple's trailing comma), where this
    gives None."""
    pattern, guard = case.pattern, case.guard
    if pattern.lpar or pattern.rpar or _ends_with_comma(pattern):
        return None
    spaces = [case.whitespace_after_case, case.whitespace_before_colon]
    count = standard.pattern.end_lineno - standard.pattern.lineno  # type: ignore[operator]
    if guard is not None:
        if guard.lpar or guard.rpar or standard.guard is None:
            return None
        spaces += [case.whitespace_before_if, case.whitespace_after_if]
        count += standard.guard.end_lineno - standard.guard.lineno  # type: ignore[operator]
    for space in spaces:
        if type(space) is not cst.SimpleWhitespace:
            return None
        count += space.value.count("\n")
    return count


def _ends_with_comma(pattern: cst.MatchPattern) -> bool:
    if type(pattern) is not cst.MatchTuple:
        return False
    elements = pattern.patterns  # type: ignore[attr-defined]
    return bool(elements) and isinstance(elements[-1].comma, cst.Comma)
