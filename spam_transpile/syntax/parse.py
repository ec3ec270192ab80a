"""Parse stage: source text to a LibCST module, or a TranspileError.

LibCST parses with the newest grammar it knows, so 3.10+ ``match``
statements and older code alike are accepted. When it refuses a file, the
error should read like CPython's: on 3.10+ the running interpreter's own
``compile()`` supplies CPython's message and position; on 3.9 (which cannot
parse ``match``) LibCST's position is used with a plain "invalid syntax".

Before LibCST sees a file, the checks here make sure it can parse it in
reasonable time (:func:`check_pattern_nesting`) and that the file is one
CPython would compile at all (:func:`cpython_view`, :func:`check_compiles`).
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import libcst as cst

from spam_transpile.checks.messages import is_pattern_rule_message
from spam_transpile.errors import TranspileError
from spam_transpile.syntax.prescan import may_hold_match

__all__ = [
    "CPythonView",
    "PATTERN_NESTING_LIMIT",
    "Unparsable",
    "check_compiles",
    "check_encodable",
    "check_pattern_nesting",
    "cpython_view",
    "cst_has_match_statement",
    "has_match_statement",
    "may_hold_match",
    "parse_source",
]

_LIBCST_POSITION = re.compile(r"error at (\d+):(\d+)")


class Unparsable(Exception):
    """LibCST cannot parse a source that may well be valid, and has no match."""


def parse_source(
    source: str, filename: str, cpython_source: Optional[str] = None
) -> cst.Module:
    """Parse ``source``, or raise TranspileError as CPython would.

    ``cpython_source`` is the user's text when ``source`` is its normalised
    layout (spam_transpile.syntax.layout): CPython's messages are about the former.

    Raises :class:`Unparsable` when LibCST refuses a file that CPython accepts
    (or that no CPython here can judge) but that cannot hold a match
    statement: there is nothing to lower, and refusing it would be a false
    rejection (LibCST rejects a few rare forms, like ``(x): int = 1``).
    """
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        position: Optional[Tuple[int, int]] = _libcst_position(exc)
    except cst.CSTValidationError:
        # LibCST's parser builds nodes it then refuses (``"a" b"b"``).
        position = None
    except (RecursionError, MemoryError):
        raise TranspileError(
            "too many nested parentheses", filename=filename, lineno=1, offset=1
        ) from None
    original = source if cpython_source is None else cpython_source
    cpython = _cpython_syntax_error(original, filename)
    if cpython is not None:
        raise cpython
    if not may_hold_match(original):
        raise Unparsable(filename)
    line, column = position or (1, 1)
    raise TranspileError(
        "invalid syntax", filename=filename, lineno=line, offset=column
    )


def _libcst_position(exc: cst.ParserSyntaxError) -> Tuple[int, int]:
    # raw_line/raw_column can point past the error; the message has it right.
    found = _LIBCST_POSITION.search(str(exc))
    if found:
        return int(found.group(1)), int(found.group(2))
    return exc.raw_line, exc.raw_column + 1


def _cpython_syntax_error(source: str, filename: str) -> Optional[TranspileError]:
    if sys.version_info < (3, 10):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(
                source, filename, "exec", dont_inherit=True, flags=0x400
            )  # ONLY_AST
        except SyntaxError as exc:
            return _from_syntax_error(exc, filename)
        except (ValueError, MemoryError, RecursionError):
            return None
    return None


def _from_syntax_error(exc: SyntaxError, filename: str) -> TranspileError:
    return TranspileError(
        exc.msg, filename=filename, lineno=exc.lineno or 1, offset=exc.offset or 1
    )


# --------------------------------------------------------------------------
# Text CPython would not even decode


def check_encodable(source: str, filename: str) -> None:
    """A ``str`` holding a lone surrogate is no source CPython compiles
    (``compile()`` itself fails encoding it to UTF-8): say where it is."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as exc:
        before = source[: exc.start]
        line = before.count("\n") + before.count("\r") - before.count("\r\n") + 1
        column = exc.start - max(before.rfind("\n"), before.rfind("\r"))
        raise TranspileError(
            f"(unicode error) 'utf-8' codec can't encode character "
            f"{source[exc.start]!r}: {exc.reason}",
            filename=filename,
            lineno=line,
            offset=column,
        ) from None


# --------------------------------------------------------------------------
# What CPython says about the whole file (3.10+ only: 3.9 cannot parse match)


@dataclass
class CPythonView:
    """The running interpreter's reading of a source: its tree, or the
    parser's error (kept for later: LibCST and the pattern rules may have a
    more faithful message for errors inside match statements)."""

    tree: Optional[ast.Module] = None
    error: Optional[TranspileError] = None
    available: bool = field(default=False)
    _nodes: Optional[List[ast.AST]] = field(default=None, repr=False)
    _matches: Optional[List[ast.Match]] = field(default=None, repr=False)

    def nodes(self) -> List[ast.AST]:
        """Every node of the tree in ``ast.walk`` order: one walk, shared by
        the checks that each used to walk the tree themselves."""
        if self._nodes is None:
            self._nodes = [] if self.tree is None else _walk(self.tree)
        return self._nodes

    def matches(self) -> List[ast.Match]:
        """The tree's match statements, in ``ast.walk`` order."""
        if self._matches is None:
            self._matches = [n for n in self.nodes() if isinstance(n, ast.Match)]
        return self._matches


def cpython_view(source: str, filename: str) -> CPythonView:
    if sys.version_info < (3, 10):
        return CPythonView()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return CPythonView(tree=ast.parse(source, filename), available=True)
        except SyntaxError as exc:
            return CPythonView(error=_from_syntax_error(exc, filename), available=True)
        except (ValueError, MemoryError, RecursionError):
            # CPython's own nesting limits: compile() would fail the same way.
            return CPythonView(
                error=TranspileError(
                    "too deeply nested for CPython to compile",
                    filename=filename,
                ),
                available=True,
            )


def _walk(tree: ast.AST) -> List[ast.AST]:
    """``list(ast.walk(tree))``, same order, without a generator per node."""
    nodes = [tree]
    node_type, list_type = ast.AST, list
    for node in nodes:  # grows as it goes: breadth first, as ast.walk
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                nodes.append(value)
            elif isinstance(value, list_type):
                for item in value:
                    if isinstance(item, node_type):
                        nodes.append(item)
    return nodes


def has_match_statement(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Match) for node in ast.walk(tree))


class _FindMatch(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        # No statement hides in an expression; stop looking once found.
        self.found = self.found or isinstance(node, cst.Match)
        return not self.found and not isinstance(node, cst.BaseExpression)


def cst_has_match_statement(module: cst.Module) -> bool:
    finder = _FindMatch()
    module.visit(finder)
    return finder.found


def check_compiles(source: str, filename: str) -> Optional[TranspileError]:
    """Raise CPython's compiler-stage error (symbol table, ``return`` outside
    a function, a late ``from __future__``...) for ``source``.

    An error of the pattern rules is returned instead: the rules of
    spam_transpile.checks.validate report it where CPython 3.12+ does,
    whatever runs the tool; the caller raises the returned error only if
    they do not. The caller's own recursion limit applies: CPython's limit
    is what counts. The text is compiled, not the tree: compiling a tree
    object recurses deeper than CPython does on source (a sum of 1,000 terms).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, filename, "exec", dont_inherit=True)
        except SyntaxError as exc:
            if is_pattern_rule_message(exc.msg):
                return _from_syntax_error(exc, filename)
            raise _from_syntax_error(exc, filename) from None
        except (RecursionError, MemoryError):
            raise TranspileError(
                "too deeply nested for CPython to compile (RecursionError)",
                filename=filename,
            ) from None
        except ValueError:
            pass
    return None


# --------------------------------------------------------------------------
# Pattern nesting: LibCST's parser takes time exponential in it.

# LibCST 1.9 backtracks at every bracket of a pattern: parsing time doubles
# per level of a list, class, group or or-pattern, and quadruples per level
# of a mapping or parenthesised tuple (see tests/test_hostile_input.py). A
# weight of 1 and 2 per level keeps the worst pattern under a second.
PATTERN_NESTING_LIMIT = 16
MSG_NESTING = (
    "pattern nested too deeply to transpile: nesting weight {} exceeds the "
    "limit of {} (each level of brackets counts 1, a mapping or a "
    "parenthesised tuple 2)"
)

_PATTERN_TOKEN = re.compile(
    r"""
    (?P<string>(?:[rRbBuUfF]{1,2})?
        (?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
        |'(?:\\.|[^\\'\r\n])*'|"(?:\\.|[^\\"\r\n])*"))
    |(?P<comment>\#[^\r\n]*)
    |(?P<open>[(\[{])
    |(?P<close>[)\]}])
    |(?P<comma>,)
    |(?P<name>\w+)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass
class _Bracket:
    char: str
    call: bool
    comma: bool = False
    inner: int = 0


def nesting_weight(tokens: Iterable[Tuple[str, str]]) -> int:
    """The weight of the deepest bracket chain in ``tokens`` ((kind, text)
    pairs: open, close, comma, name, other)."""
    stack: List[_Bracket] = []
    deepest = 0
    previous = ""
    for kind, text in tokens:
        if kind == "open":
            stack.append(_Bracket(text, call=previous in ("name", "close")))
        elif kind == "comma" and stack:
            stack[-1].comma = True
        elif kind == "close" and stack:
            deepest = _close(stack, deepest)
        previous = kind
    while stack:  # unclosed brackets: the parser will refuse the file anyway
        deepest = _close(stack, deepest)
    return deepest


def _close(stack: List[_Bracket], deepest: int) -> int:
    bracket = stack.pop()
    tuple_like = bracket.char == "(" and bracket.comma and not bracket.call
    weight = bracket.inner + (2 if bracket.char == "{" or tuple_like else 1)
    if stack:
        stack[-1].inner = max(stack[-1].inner, weight)
    return max(deepest, weight)


def _pattern_tokens(text: str) -> Iterator[Tuple[str, str]]:
    for found in _PATTERN_TOKEN.finditer(text):
        kind = found.lastgroup or "other"
        if kind == "name" and found.group() == "case":
            kind = "other"  # the keyword: no class pattern follows it
        if kind != "comment":
            yield kind, found.group()


def check_pattern_nesting(
    source: str,
    filename: str,
    matches: Optional[Sequence[ast.Match]],
    lines: List[str],
) -> None:
    """Refuse, before LibCST parses it, a pattern it would take ages on.

    ``lines`` are the source's lines without their endings (CPython's line
    numbers index them). ``matches`` are the match statements of the
    source's standard tree (3.10+; None without a tree): then only the text
    of each case's pattern is scanned; without, the whole file is tokenized.
    """
    if matches is not None:
        found = _heaviest_pattern(matches, lines)
    else:
        found = _heaviest_pattern_from_tokens("\n".join(lines) + "\n")
    if found is not None and found[0] > PATTERN_NESTING_LIMIT:
        weight, line, column = found
        raise TranspileError(
            MSG_NESTING.format(weight, PATTERN_NESTING_LIMIT),
            filename=filename,
            lineno=line,
            offset=column,
        )


def _heaviest_pattern_from_tree(
    tree: ast.Module, lines: List[str]
) -> Optional[Tuple[int, int, int]]:
    matches = [node for node in ast.walk(tree) if isinstance(node, ast.Match)]
    return _heaviest_pattern(matches, lines)


def _heaviest_pattern(
    matches: Sequence[ast.Match], lines: List[str]
) -> Optional[Tuple[int, int, int]]:
    heaviest: Optional[Tuple[int, int, int]] = None
    for node in matches:
        boundary: Union[ast.expr, ast.stmt] = node.subject
        for case in node.cases:
            pattern = case.pattern
            # From the end of what precedes the case keyword to the end of the
            # pattern: the keyword, group parentheses and the pattern itself.
            text = _segment(
                lines,
                (boundary.end_lineno or 1, boundary.end_col_offset or 0),
                (pattern.end_lineno or 1, pattern.end_col_offset or 0),
            )
            weight = nesting_weight(_pattern_tokens(text))
            if heaviest is None or weight > heaviest[0]:
                heaviest = (weight, pattern.lineno, pattern.col_offset + 1)
            boundary = case.body[-1]
    return heaviest


def _segment(lines: List[str], start: Tuple[int, int], end: Tuple[int, int]) -> str:
    """Text between two (line, UTF-8 byte column) positions of CPython's AST."""
    (first, first_col), (last, last_col) = start, end
    if first == last:
        return _byte_slice(lines[first - 1], first_col, last_col)
    parts = [_byte_slice(lines[first - 1], first_col, None)]
    parts.extend(lines[first : last - 1])
    parts.append(_byte_slice(lines[last - 1], 0, last_col))
    return "\n".join(parts)


def _byte_slice(line: str, start: int, end: Optional[int]) -> str:
    if line.isascii():
        return line[start:end]
    return line.encode("utf-8")[start:end].decode("utf-8", "replace")


def _heaviest_pattern_from_tokens(text: str) -> Optional[Tuple[int, int, int]]:
    """Without a tree (3.9, or a file CPython refuses): tokenize, and weigh
    what follows ``case`` at the start of a logical line up to its ``:``.

    A file the tokenizer gives up on may still hold a deep pattern LibCST
    would backtrack over before failing: then every stretch of lines from a
    ``case`` line to the next ``case`` or ``match`` line is weighed whole
    (guards and bodies too: an overestimate, for a file already invalid).
    """
    weights: List[Tuple[int, int, int]] = []
    try:
        weights.extend(_case_weights(text))
    except (tokenize.TokenError, SyntaxError):
        weights.extend(_case_stretch_weights(text))
    return max(weights, default=None)


_CASE_OR_MATCH_LINE = re.compile(r"^[ \t\f]*(case|match)\b", re.MULTILINE)


def _case_stretch_weights(text: str) -> Iterator[Tuple[int, int, int]]:
    starts = list(_CASE_OR_MATCH_LINE.finditer(text))
    for found, following in zip(starts, starts[1:] + [None]):
        if found.group(1) != "case":
            continue
        end = following.start() if following is not None else len(text)
        line = text.count("\n", 0, found.start()) + 1
        column = found.start(1) - found.start() + 1
        stretch = text[found.start(1) : end]
        yield nesting_weight(_pattern_tokens(stretch)), line, column


def _case_weights(text: str) -> Iterator[Tuple[int, int, int]]:
    logical_start = True
    collected: Optional[List[Tuple[str, str]]] = None
    depth = 0
    start = (1, 1)
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = tokenize.tok_name[token.type]
        if collected is None:
            if logical_start and kind == "NAME" and token.string == "case":
                collected, depth = [], 0
            if kind in ("NEWLINE", "INDENT", "DEDENT"):
                logical_start = True
            elif kind not in ("NL", "COMMENT"):
                logical_start = False
            continue
        ended = kind == "NEWLINE" or (
            depth == 0 and token.string in (":", "if") and kind in ("OP", "NAME")
        )
        if ended:
            yield nesting_weight(collected), start[0], start[1]
            collected = None
            logical_start = kind == "NEWLINE"
            continue
        if not collected:  # errors point at the pattern, as with a tree
            start = (token.start[0], token.start[1] + 1)
        depth = _track(token.string, kind, depth, collected)


def _track(text: str, kind: str, depth: int, collected: List[Tuple[str, str]]) -> int:
    if kind == "OP" and text in ("(", "[", "{"):
        collected.append(("open", text))
        return depth + 1
    if kind == "OP" and text in (")", "]", "}"):
        collected.append(("close", text))
        return max(depth - 1, 0)
    if kind == "OP" and text == ",":
        collected.append(("comma", text))
    elif kind == "NAME":
        collected.append(("name", text))
    else:
        collected.append(("other", text))
    return depth
