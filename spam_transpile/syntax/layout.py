"""Physical layout LibCST cannot take, and how to put the user's layout back.

CPython's tokenizer ends a line at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old
Mac files), in any mix; LibCST only splits at ``\\n`` and ``\\r\\n``. It also
refuses a line holding only a backslash continuation in an indented block,
and a form feed in the indentation of many lines (both valid Python).

:func:`split_layout` gives the text LibCST parses: every line ended by
``\\n``, form feeds dropped from indentation and backslash-only lines made
blank (what CPython 3.10+ makes of them: a form feed resets the indentation
count, and a line holding only ``\\`` joins nothing to the next line's
indentation). Lines that start inside a string literal are never touched.
Every line keeps its number, so :func:`restore_layout` can put each line's
own ending back, and the original text of every line the lowering left as
it was.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from dataclasses import dataclass
from typing import Iterable, List, Optional, Set

_LINE_END = re.compile(r"(\r\n|\r|\n)")
_BACKSLASH_ONLY = re.compile(r"[ \t\f]*\\")
_INDENT_WITH_FORM_FEED = re.compile(r"[ \t\f]*\f")
_WHITESPACE_ONLY = re.compile(r"[ \t\f]*")
# A cheap test before any tokenizing: is there a line LibCST may refuse?
_NEEDS_NORMALISING = re.compile(
    r"(?:^|(?<=[\r\n]))(?:[ \t\f]*\f|[ \t\f]*\\(?:\r|\n|$))"
)


@dataclass(frozen=True)
class Layout:
    """A source cut into lines: original text, endings, and what LibCST gets."""

    lines: List[str]
    endings: List[str]
    normalised: List[str]
    # characters dropped from the start of each line (form feeds and the
    # indentation before them): added back to error columns
    removed: List[int]
    # The text LibCST parses: normalised lines, each ended by ``\\n``. One
    # object, so that callers can tell "returned unchanged" by identity.
    text: str

    @property
    def changed(self) -> bool:
        return self.normalised != self.lines


def split_layout(source: str, expand_tabs: bool = False) -> Layout:
    """Cut ``source`` into lines and normalise what LibCST cannot parse.

    ``expand_tabs``: also write the indentation of every line in spaces, as
    CPython counts it (a tab to the next multiple of 8). LibCST matches
    indentation as text, CPython by column: a block indented ``"\t    "``
    under one indented with eight spaces is valid Python LibCST refuses.
    Only for a file LibCST refused: in a file indented with tabs the lines
    the lowering rewrites would then be indented with spaces."""
    pieces = _LINE_END.split(source)
    lines = pieces[0::2]
    endings = pieces[1::2] + [""]
    normalised = list(lines)
    removed = [0] * len(lines)
    if expand_tabs or _NEEDS_NORMALISING.search(source):
        inside = _lines_inside_strings("\n".join(lines) + "\n")
        if inside is not None:
            for index, line in enumerate(lines):
                if index + 1 not in inside:
                    normalised[index], removed[index] = _normalise_line(line)
                    if expand_tabs:
                        normalised[index] = _spaces_for_tabs(normalised[index])
    _empty_the_blank_tail(lines, normalised)
    text = "".join(
        line + ("\n" if ending else "") for line, ending in zip(normalised, endings)
    )
    return Layout(lines, endings, normalised, removed, text)


def _empty_the_blank_tail(lines: List[str], normalised: List[str]) -> None:
    """LibCST 1.9 loses a blank line before a last line holding only spaces
    (``'x = 1\\n\\n  \\n'`` prints as ``'x = 1\\n  \\n'``): the blank lines
    that end a file are given to it empty, and get their text back after."""
    index = len(lines)
    while index > 0 and _WHITESPACE_ONLY.fullmatch(lines[index - 1]):
        index -= 1
        normalised[index] = ""


def _spaces_for_tabs(line: str) -> str:
    code = line.lstrip(" \t")
    indent = line[: len(line) - len(code)]
    return indent.expandtabs(8) + code if "\t" in indent else line


def _normalise_line(line: str) -> "tuple[str, int]":
    if _BACKSLASH_ONLY.fullmatch(line):
        return "", 0
    indent = _INDENT_WITH_FORM_FEED.match(line)
    if indent is None:
        return line, 0
    # Indentation is counted from the last form feed on (CPython's tokenizer
    # resets its column there), so what precedes it carries no meaning.
    return line[indent.end() :], indent.end()


def _lines_inside_strings(text: str) -> Optional[Set[int]]:
    """1-based numbers of lines that begin inside a string token, or None
    when the tokenizer gives up (then nothing is normalised)."""
    inside: Set[int] = set()
    fstring_starts: List[int] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = tokenize.tok_name[token.type]
            if kind == "STRING":
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
            elif kind == "FSTRING_START":  # 3.12+: an f-string is many tokens
                fstring_starts.append(token.start[0])
            elif kind == "FSTRING_END" and fstring_starts:
                first = fstring_starts.pop()
                inside.update(range(first + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # The tokenize module follows older tokenizers, which refuse some
        # backslash-only lines CPython 3.10+ accepts: ask CPython's parser.
        return _lines_inside_strings_by_ast(text)
    return inside


def _lines_inside_strings_by_ast(text: str) -> Optional[Set[int]]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    inside: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))
        ):
            end = node.end_lineno or node.lineno
            inside.update(range(node.lineno + 1, end + 1))
    return inside


def restore_layout(layout: Layout, output: str) -> str:
    """``output`` (lowered from ``layout.text``) in the user's own layout.

    Each line gets its original ending back; a line the lowering did not
    rewrite gets its original text back. A backslash-only line stays blank
    unless the code lines around it have the same indentation (see
    _same_indentation_around: elsewhere CPython 3.9 and older read it
    otherwise than 3.10+). If putting normalised lines back would change what
    the code means, they all stay normalised.
    """
    out_lines = _LINE_END.split(output)[0::2]
    if len(out_lines) != len(layout.lines):
        return output  # check_lines_kept reports this
    kept = _restored_lines(layout, out_lines)
    if layout.changed and not _same_meaning(kept, out_lines):
        kept = [
            original if out == normalised and original == normalised else out
            for out, normalised, original in zip(
                out_lines, layout.normalised, layout.lines
            )
        ]
    return _join(kept, layout.endings)


def _join(lines: List[str], endings: List[str]) -> str:
    """Lines and endings back into text, every line ending kept apart: an
    empty line (one the lowering emptied) after a line ended by a lone
    ``\\r`` would turn ``\\r`` + ``\\n`` into one ``\\r\\n``, so it holds a
    space (the source cannot have had an empty line there)."""
    pieces: List[str] = []
    for index, (line, ending) in enumerate(zip(lines, endings)):
        if not line and ending.startswith("\n") and index:
            if endings[index - 1] == "\r":
                line = " "
        pieces.append(line + ending)
    return "".join(pieces)


def _restored_lines(layout: Layout, out_lines: List[str]) -> List[str]:
    kept = [
        original if out == normalised else out
        for out, normalised, original in zip(out_lines, layout.normalised, layout.lines)
    ]
    for index, (original, normalised) in enumerate(
        zip(layout.lines, layout.normalised)
    ):
        if (
            original != normalised
            and normalised == ""
            and kept[index] == original
            and _BACKSLASH_ONLY.fullmatch(original)
        ):
            if not (
                _same_indentation_around(kept, index) and _continues_alike(kept, index)
            ):
                kept[index] = ""
    return kept


def _same_indentation_around(lines: List[str], index: int) -> bool:
    """Is the code line before ``index`` indented like the one after it?

    Only then does a backslash-only line mean the same to every CPython:
    3.10+ ignore it, but 3.9 and older take the next line's indentation as
    part of the continued line, so no INDENT or DEDENT comes (a block's body
    then swallows the dedented line after it, an ``elif`` lands inside the
    body before it, and a line right after a block's colon is an error).
    """
    before = _code_indentation(reversed(lines[:index]))
    after = _code_indentation(lines[index + 1 :])
    return (before or "") == after  # nothing before: the module's level


def _continues_alike(lines: List[str], index: int) -> bool:
    """Is the line after the backslash-only line ``index`` code indented as
    the backslash is? CPython 3.8 and older read the joined line with the
    backslash line's indentation (a blank or comment line after it, or
    another indentation, is an IndentationError there)."""
    if index + 1 >= len(lines):
        return False
    following = lines[index + 1]
    stripped = following.lstrip(" \t\f")
    if not stripped or stripped.startswith(("#", "\\")):
        return False
    return _leading_whitespace(lines[index]) == _leading_whitespace(following)


def _leading_whitespace(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t\f"))]


def _code_indentation(lines: Iterable[str]) -> Optional[str]:
    for line in lines:
        stripped = line.lstrip(" \t\f")
        if stripped and not stripped.startswith(("#", "\\")):
            return _leading_whitespace(line).rpartition("\f")[2]
    return None


def _same_meaning(restored: List[str], lowered: List[str]) -> bool:
    trees = []
    for lines in (restored, lowered):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                trees.append(ast.dump(ast.parse("\n".join(lines))))
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                return False
    return trees[0] == trees[1]
