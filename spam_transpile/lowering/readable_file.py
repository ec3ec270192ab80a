"""What the readable layout does to the whole file: the helper as a block
after the module's leading imports, black over the lines that changed, and
the source's own line endings."""

from __future__ import annotations

import ast
import difflib
from typing import Iterable, List, Sequence, Tuple

import libcst as cst

from spam_transpile.errors import NotInstalled
from spam_transpile.lowering.helper_lines import is_docstring as _is_docstring
from spam_transpile.lowering.runtime import HELPER_NAME, helper_key, helper_source

from spam_transpile.lowering.readable import LINE_LENGTH


def place_readable_helper(
    module: cst.Module, name: str, used: Iterable[str]
) -> cst.Module:
    """The helper as a block after the module's docstring, __future__ imports
    and leading imports."""
    text = helper_source(used)
    key = helper_key(text)
    # ``global``: under ``exec(code, globals, locals)`` the module's
    # functions read their globals, where a plain assignment would not go.
    # The namespace's __name__ is not the key it is kept under (cloudpickle
    # copies it by value then, instead of importing it).
    source = (
        f"global {name}\n"
        f'{name} = __import__("sys").modules.get("{key}")\n'
        f"if {name} is None:\n"
        f'    {name} = __import__("types").ModuleType("{HELPER_NAME}")\n'
        f"    exec({_block_string(text)}, vars({name}))\n"
        f'    {name} = __import__("sys").modules.setdefault("{key}", {name})\n'
    )
    block = list(cst.parse_module(source).body)
    body = list(module.body)
    index = 0
    if index < len(body) and _is_docstring(body[index]):
        index += 1
    while index < len(body) and _is_import(body[index]):
        index += 1
    following = body[index:] if index < len(body) else []
    block[0] = block[0].with_changes(leading_lines=[cst.EmptyLine()] if index else [])
    if following and not following[0].leading_lines:
        following[0] = following[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=[*body[:index], *block, *following])


def _block_string(text: str) -> str:
    assert '"""' not in text and "\\" not in text
    return '"""\\\n' + text.rstrip("\n") + '"""'


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def format_readable(source: str, output: str, filename: str) -> str:
    """Black over the lines of ``output`` that are not ``source``'s own."""
    lines = changed_lines(source, output)
    if not lines:
        return output
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
    mode = black.Mode(line_length=LINE_LENGTH)
    try:
        formatted = black.format_str(output, mode=mode, lines=_ranges(lines))
    except Exception:
        return output  # black's parser lags CPython's: keep it unformatted
    if not _same_ast(output, formatted):
        return output
    return formatted


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
