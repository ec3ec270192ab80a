"""What the readable layout does to the whole file: the helper as a block
after the module's leading imports, black over the lines that changed, and
the source's own line endings."""

from __future__ import annotations

import ast
import builtins
import difflib
from typing import AbstractSet, Iterable, List, Mapping, Optional, Sequence, Tuple

import libcst as cst

from spam_transpile.errors import NotInstalled
from spam_transpile.lowering.helper_lines import is_docstring as _is_docstring
from spam_transpile.lowering.runtime import PARTS, names_read, wanted_parts
from spam_transpile.lowering.stdlib_classes import in_stdlib

from spam_transpile.lowering.readable_chains import LINE_LENGTH


def place_readable_helper(
    module: cst.Module,
    name: str,
    used: Iterable[str],
    function: str,
    shadowed: AbstractSet[str],
) -> cst.Module:
    """The helper as ordinary code after the module's docstring,
    ``__future__`` imports and leading imports: a private ``function``
    that defines the parts the module uses, called once for ``name``.
    Only what the tool cannot know needs it (a class no declaration
    describes, a positional pattern on a class from outside the project,
    ``:=`` missing before 3.8); each module that does holds its own, so
    every module still imports alone (README, Known limits)."""
    parts = wanted_parts(used)
    exported = ", ".join(f"{part}={part}" for part in parts if part[0] != "_")
    text = "".join(PARTS[part][1] for part in parts)
    text += f'return __import__("types").SimpleNamespace({exported})\n'
    # The parts read builtins by name, now from the module's globals: where
    # the module may bind such a name, the builtins are taken first.
    # (``__import__``: the ``return`` above)
    read = {"__import__"}.union(*(names_read(part) for part in parts))
    builtin = sorted(
        name for name in read if name in shadowed and hasattr(builtins, name)
    )
    if builtin:
        text = f"from builtins import {', '.join(builtin)}\n" + text
    body = "".join(f"    {line}\n" if line else "\n" for line in text.splitlines())
    # ``global``: under ``exec(code, globals, locals)`` the module's
    # functions read their globals, where a plain assignment would not go.
    source = (
        f"def {function}():\n"
        f'    """What the match statements below need at run time."""\n'
        f"{body}"
        f"\n\n"
        f"global {name}\n"
        f"{name} = {function}()\n"
    )
    return _after_imports(module, list(cst.parse_module(source).body))


def place_abc_import(module: cst.Module, names: Mapping[str, str]) -> cst.Module:
    """``from collections.abc import Mapping, Sequence`` (``names``: each
    class and the name the module reads it by) as the first of the module's
    leading imports after ``__future__``'s: the standard library's come
    first (isort)."""
    aliases = ", ".join(
        cls if name == cls else f"{cls} as {name}"
        for cls, name in sorted(names.items())
    )
    body = list(module.body)
    existing = _abc_import_at(body)
    if existing is not None:
        # the module's own ``from collections.abc import ...`` takes them
        statement = body[existing]
        assert isinstance(statement, cst.SimpleStatementLine)
        small = statement.body[0]
        assert isinstance(small, cst.ImportFrom)
        assert not isinstance(small.names, cst.ImportStar)
        added = cst.parse_statement(f"from collections.abc import {aliases}\n")
        assert isinstance(added, cst.SimpleStatementLine)
        new = added.body[0]
        assert isinstance(new, cst.ImportFrom)
        assert not isinstance(new.names, cst.ImportStar)
        more = new.names
        merged = small.with_changes(
            names=[
                *small.names[:-1],
                small.names[-1].with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                ),
                *more,
            ],
            lpar=None,
            rpar=None,
        )
        body[existing] = statement.with_changes(body=[merged])
        return module.with_changes(body=body)
    line = cst.parse_statement(f"from collections.abc import {aliases}\n")
    start = 1 if body and _is_docstring(body[0]) else 0
    while start < len(body) and _is_future_import(body[start]):
        start += 1
    end = _end_of_imports(body)
    if start >= end:
        return _after_imports(module, [line])
    return module.with_changes(body=_sorted_in(body, start, end, line))


#: where ``from collections.abc import ...`` sorts among imports (isort's
#: order: sections, then ``import`` before ``from``, then the module)
_ABC_KEY = (0, 1, "collections.abc")


def _sorted_in(
    body: Sequence[cst.BaseStatement],
    start: int,
    end: int,
    line: cst.BaseStatement,
) -> List[cst.BaseStatement]:
    """``body`` with ``line`` among its imports ``body[start:end]``, where
    isort puts it: in the standard library's section, a blank line between
    it and the next section."""
    at = next((i for i in range(start, end) if _import_key(body[i]) > _ABC_KEY), end)
    blank = [cst.EmptyLine()]
    if at == end:
        # the last import: after the others, a section of its own or not
        last = _import_key(body[end - 1])[0]
        line = line.with_changes(leading_lines=[] if last == 0 else blank)
        return [*body[:end], line, *body[end:]]
    following = body[at]
    assert isinstance(following, cst.SimpleStatementLine)  # (an import)
    same = _import_key(following)[0] == 0
    if at == start:
        # the first import: it takes the lines above the block
        line = line.with_changes(leading_lines=following.leading_lines)
        following = following.with_changes(leading_lines=[] if same else blank)
    elif not same and not following.leading_lines:
        following = following.with_changes(leading_lines=blank)
    return [*body[:at], line, following, *body[at + 1 :]]


def _import_key(statement: cst.BaseStatement) -> Tuple[int, int, str]:
    """isort's order of an import line: section (0 the standard library,
    1 another installed package, 2 a relative import), ``import`` (0) or
    ``from`` (1), module."""
    assert isinstance(statement, cst.SimpleStatementLine)
    small = statement.body[0]
    if isinstance(small, cst.Import):
        module = cst.Module([]).code_for_node(small.names[0].name)
        style = 0
    else:
        assert isinstance(small, cst.ImportFrom)
        if small.relative:
            return (2, 1, "")
        assert small.module is not None
        module = cst.Module([]).code_for_node(small.module)
        style = 1
    section = 0 if in_stdlib(module) else 1
    return (section, style, module)


def _abc_import_at(body: Sequence[cst.BaseStatement]) -> Optional[int]:
    """The index of a leading ``from collections.abc import a, b`` line
    (one statement on its line, no star), if the module has one."""
    # among the leading imports only: a later one binds too late for a
    # match at the top level above it
    for index, statement in enumerate(body[: _end_of_imports(body)]):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        if len(statement.body) != 1:
            continue
        small = statement.body[0]
        if (
            isinstance(small, cst.ImportFrom)
            and not small.relative
            and small.module is not None
            and cst.Module([]).code_for_node(small.module) == "collections.abc"
            and not isinstance(small.names, cst.ImportStar)
        ):
            return index
    return None


def _is_future_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, cst.ImportFrom)
        and isinstance(small.module, cst.Name)
        and small.module.value == "__future__"
        for small in statement.body
    )


def _end_of_imports(body: Sequence[cst.BaseStatement]) -> int:
    index = 0
    if index < len(body) and _is_docstring(body[index]):
        index += 1
    while index < len(body) and _is_import(body[index]):
        index += 1
    return index


def _after_imports(module: cst.Module, block: List[cst.BaseStatement]) -> cst.Module:
    body = list(module.body)
    index = _end_of_imports(body)
    following = body[index:] if index < len(body) else []
    block[0] = block[0].with_changes(leading_lines=[cst.EmptyLine()] if index else [])
    if following:
        # as black spaces them: two blank lines before a ``def`` or a
        # ``class``, one before other statements
        blank = 2 if isinstance(following[0], (cst.FunctionDef, cst.ClassDef)) else 1
        lines = list(following[0].leading_lines)
        empty = len(lines) - len(lines_after_blanks(lines))
        if empty < blank:
            lines[:0] = [cst.EmptyLine()] * (blank - empty)
        following[0] = following[0].with_changes(leading_lines=lines)
    return module.with_changes(body=[*body[:index], *block, *following])


def lines_after_blanks(lines: List[cst.EmptyLine]) -> List[cst.EmptyLine]:
    """``lines`` without the blank lines they start with."""
    start = 0
    while start < len(lines) and lines[start].comment is None:
        start += 1
    return lines[start:]


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def format_readable(
    source: str, output: str, filename: str, line_length: int = LINE_LENGTH
) -> str:
    """Black over the lines of ``output`` that are not ``source``'s own,
    wrapped at ``line_length``."""
    lines = changed_lines(source, output)
    if not lines:
        return output
    lines = _with_definitions_after(lines, output.splitlines())
    try:
        import black
    except ImportError:
        # black is a dependency: only a broken install gets here.
        raise NotInstalled(
            "the readable layout needs black 23.11 or newer, which "
            "spam-transpile depends on but cannot import here "
            "(pip install 'black>=23.11')",
            filename=filename,
            lineno=1,
            offset=1,
        ) from None
    mode = black.Mode(line_length=line_length)
    try:
        formatted = black.format_str(output, mode=mode, lines=_ranges(lines))
    except Exception:
        return output  # black's parser lags CPython's: keep it unformatted
    if not _same_ast(output, formatted):
        return output
    return formatted


_TOP_DEFINITION = ("def ", "class ", "async def ", "@")


def _with_definitions_after(lines: List[int], text: Sequence[str]) -> List[int]:
    """``lines`` and each top-level ``def``, ``class`` or decorator line
    right after a run of them (and blank lines): black decides the blank
    lines before such a line only when it formats the line (after an
    inserted import or the helper, two)."""
    taken = set(lines)
    extra = []
    for number in lines:
        # (``number`` counts from 1: ``text[number]`` is the line after it)
        after = number
        while after < len(text) and not text[after].strip():
            after += 1
        if after + 1 not in taken and after < len(text):
            if text[after].startswith(_TOP_DEFINITION):
                # (formatting the line alone, black may take a blank line
                # from before the definition: the definition goes too)
                extra.append(after + 1)
    return sorted(taken.union(extra))


def with_line_endings(source: str, output: str) -> str:
    """``output`` (lines ended by ``\\n``) with the source's usual line ending."""
    counts = {end: source.count(end) for end in ("\r\n", "\r")}
    crlf, cr = counts["\r\n"], counts["\r"] - counts["\r\n"]
    lf = source.count("\n") - crlf
    ending = max((lf, "\n"), (crlf, "\r\n"), (cr, "\r"))[1]
    return output if ending == "\n" else output.replace("\n", ending)


def changed_lines(source: str, output: str) -> List[int]:
    """1-based numbers of ``output``'s lines that ``source`` does not have there."""
    before = source.splitlines()
    after = output.splitlines()
    changed: List[int] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changed.extend(range(j1 + 1, j2 + 1))
    return changed


def _ranges(lines: Sequence[int]) -> List[Tuple[int, int]]:
    ranges: List[Tuple[int, int]] = []
    for number in lines:
        if ranges and ranges[-1][1] == number - 1:
            ranges[-1] = (ranges[-1][0], number)
        else:
            ranges.append((number, number))
    return ranges


def _same_ast(before: str, after: str) -> bool:
    try:
        return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
