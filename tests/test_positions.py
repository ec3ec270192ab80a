"""Positions computed one match statement at a time agree with LibCST's
whole-module PositionProvider, and never cost a whole-module pass."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from spam_transpile.syntax.layout import split_layout
from spam_transpile.lowering.positions import MatchPositions, match_lines

ROOT = Path(__file__).resolve().parent.parent

needs_310 = pytest.mark.skipif(
    sys.version_info < (3, 10), reason="the standard tree needs 3.10+"
)

TRICKY = {
    "nested-and-comments": (
        "def f(x):\n"
        "    # before\n"
        "\n"
        "    match x:\n"
        "        case [a, (b | c)] if a:\n"
        "            match a:  # inner\n"
        "                case {'k': v, **rest}:\n"
        "                    pass\n"
        "        # trailing comment\n"
        "    return 1\n"
    ),
    "tabs-and-module-level": (
        "class C:\n"
        "\tmatch (\n"
        "\t    1,\n"
        "\t    2):\n"
        "\t\tcase (1, _) | (_, 1): pass\n"
        "\t\tcase C(x=1,\n"
        "\t\t       y=2): pass\n"
        "match 3:\n"
        "    case 3: pass\n"
    ),
    "form-feed-indentation": (
        "def f(x):\n    y = 1\n\f    match x:\n        case 1: pass\n"
    ),
    "unicode-before": ("s = 'éé'\nmatch s:\n    case 'éé' | \"ü\": pass\n"),
}


def _lines_of(source: str) -> List[int] | None:
    tree = ast.parse(source)
    return match_lines([n for n in ast.walk(tree) if isinstance(n, ast.Match)])


def _sources() -> Iterator[Tuple[str, str]]:
    yield from TRICKY.items()
    for path in sorted((ROOT / "fixtures" / "cases").glob("*.py")):
        if not path.name.endswith(".out.py"):
            yield path.name, path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "scripts" / "bench" / "fixtures").glob("*.py")):
        yield path.name, path.read_text(encoding="utf-8")
    patma = Path(ast.__file__).parent / "test" / "test_patma.py"
    if patma.exists():
        yield patma.name, patma.read_text(encoding="utf-8")


def _matches_in_order(module: cst.Module) -> List[Tuple[cst.Match, bool]]:
    """(match statement, is outermost), in the order a visitor meets them."""
    found: List[Tuple[cst.Match, bool]] = []

    class Finder(cst.CSTVisitor):
        depth = 0

        def visit_Match(self, node: cst.Match) -> None:
            found.append((node, self.depth == 0))
            self.depth += 1

        def leave_Match(self, original_node: cst.Match) -> None:
            self.depth -= 1

    module.visit(Finder())
    return found


def _nodes_below(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _nodes_below(child)


@pytest.mark.slow
@needs_310
@pytest.mark.parametrize(("name", "source"), list(_sources()))
def test_per_match_positions_agree_with_the_whole_module(
    name: str, source: str
) -> None:
    text = split_layout(source).text
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = MatchPositions(module, text, _lines_of(source))
    outermost: cst.Match
    for match, is_outermost in _matches_in_order(module):
        positions.enter(match, is_outermost)
        if is_outermost:
            outermost = match
        for node in _nodes_below(outermost):
            if node not in expected:
                continue  # generates no code (a whitespace LibCST leaves out)
            start = expected[node].start
            assert positions(node) == (start.line, start.column + 1), (name, node)
    assert positions._whole is None  # never fell back to the whole module


@needs_310
def test_a_warning_in_a_long_file_does_not_place_the_whole_module() -> None:
    filler = "".join(f"def f{i}(x):\n    return [x] * {i}\n\n" for i in range(200))
    source = filler + "match s:\n    case _: pass\n    case 1: pass\n"
    module = cst.parse_module(source)
    positions = MatchPositions(module, source, _lines_of(source))
    match = module.body[-1]
    assert isinstance(match, cst.Match)
    positions.enter(match, outermost=True)
    assert positions(match.cases[1]) == (603, 5)
    assert positions._whole is None


def test_without_a_tree_the_whole_module_is_placed() -> None:
    source = "x = 1\nmatch x:\n    case 1: pass\n"
    module = cst.parse_module(source)
    positions = MatchPositions(module, source, None)
    match = module.body[1]
    assert isinstance(match, cst.Match)
    positions.enter(match, outermost=True)
    assert positions(match.cases[0]) == (3, 5)
    assert positions._whole is not None


@needs_310
def test_a_statement_not_where_the_tree_says_is_placed_by_the_whole_module() -> None:
    source = "x = 1\nmatch x:\n    case 1: pass\n"
    module = cst.parse_module(source)
    positions = MatchPositions(module, source, [1])  # a wrong line
    match = module.body[1]
    assert isinstance(match, cst.Match)
    positions.enter(match, outermost=True)
    assert positions(match.cases[0]) == (3, 5)
    assert positions._whole is not None


HEADERS = (
    "match x:\n"
    "    case (\n"
    "        1\n"
    "    ):\n"
    "        pass\n"
    "    case a, \\\n"
    "        b:\n"
    "        pass\n"
    "    case a, b, \\\n"
    "        :\n"
    "        pass\n"
    "    case [\n"
    "        1,\n"
    "        2] if (\n"
    "        y):\n"
    "        pass\n"
    "    case 1 \\\n"
    "        | 2 if x \\\n"
    "        :\n"
    "        pass\n"
    '    case """a\n'
    'b""" if y:\n'
    "        pass\n"
    "    case \\\n"
    "        x:\n"
    "        pass\n"
    "    case {1: 2,\n"
    "          3: 4} if [\n"
    "          z]:\n"
    "        pass\n"
)


def _slow_if_long(sources: Iterator[Tuple[str, str]]) -> Iterator[Any]:
    """test_patma.py takes seconds where each other source takes milliseconds."""
    for name, source in sources:
        marks = [pytest.mark.slow] if name == "test_patma.py" else []
        yield pytest.param(name, source, marks=marks)


@needs_310
@pytest.mark.parametrize(
    ("name", "source"),
    [("headers", HEADERS), *_slow_if_long(_sources())],
    ids=lambda v: str(v)[:20],
)
def test_case_headers_line_breaks_from_positions(name: str, source: str) -> None:
    """The standard tree's positions give each case header's line breaks as
    generating its code does, or None (parentheses around the pattern or the
    guard, a tuple's trailing comma): the transformer then generates it."""
    from spam_transpile.syntax.codegen import code_for
    from spam_transpile.lowering.positions import in_source_order
    from spam_transpile.lowering.positions import header_line_breaks

    module = cst.parse_module(split_layout(source).text)
    tree = ast.parse(split_layout(source).text)
    standard = in_source_order([n for n in ast.walk(tree) if isinstance(n, ast.Match)])
    assert standard is not None
    matches = [match for match, _ in _matches_in_order(module)]
    assert len(matches) == len(standard)
    counted = 0
    for match, match_tree in zip(matches, standard):
        for case, case_tree in zip(match.cases, match_tree.cases):
            text = code_for(case.whitespace_after_case) + code_for(case.pattern)
            if case.guard is not None:
                text += "".join(
                    code_for(part)
                    for part in (
                        case.whitespace_before_if,
                        case.whitespace_after_if,
                        case.guard,
                    )
                )
            text += code_for(case.whitespace_before_colon)
            found = header_line_breaks(case, case_tree)
            if found is not None:
                counted += 1
                assert found == text.count("\n"), (name, text)
    assert counted or name != "headers"


# -- keep-lines: a case header over several lines ------------------------------

BLACK_STYLE = ROOT / "fixtures" / "lines" / "black_style.py"


def _header_lines(source: str) -> set:
    """The lines of every match statement's header (``match`` to its colon)
    and case headers (``case`` to the colon): the lines the lowering writes."""
    lines: set = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Match):
            lines.update(range(node.lineno, node.cases[0].pattern.lineno))
            for case in node.cases:
                first_body_line = case.body[0].lineno
                lines.update(range(case.pattern.lineno, first_body_line))
    return lines


def _run(python: str, path: Path) -> str:
    done = subprocess.run(
        [python, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
@needs_310
@pytest.mark.parametrize("target", ["3.6", "3.7", "3.8", "3.9"])
def test_black_style_headers_keep_every_line(target: str) -> None:
    """A case header black spreads over lines (``case [`` / items / ``]:``,
    a class or mapping pattern, an or-pattern, a guard, a subject over
    several lines): its test starts on the ``case`` line and ends on the
    colon's, and every other line holds its own text where it was."""
    from spam_transpile import transpile

    source = BLACK_STYLE.read_text(encoding="utf-8")
    lowered = transpile(source, target=target, filename=str(BLACK_STYLE))
    before, after = source.splitlines(), lowered.splitlines()
    assert len(after) == len(before)
    written = _header_lines(source)
    for number, (old, new) in enumerate(zip(before, after), start=1):
        if number not in written:
            assert old.strip() in new, (number, old, new)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.match_case):
            line = after[node.pattern.lineno - 1].lstrip()
            assert line.startswith(("if ", "elif ")), (node.pattern.lineno, line)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["3.6", "3.7", "3.8", "3.9"])
def test_black_style_headers_raise_on_the_lines_of_native_310(
    target: str, tmp_path: Path
) -> None:
    """Every traceback through a case header over several lines (an item's
    ``__eq__``, a class pattern's attribute read, a mapping value, an
    or-pattern's alternative, the guard, the body, the subject) names the
    lines native 3.10 names, in functions, at module level and in a class
    body."""
    from tests.interpreters import require_interpreter
    from spam_transpile import transpile

    native = _run(require_interpreter("3.10"), BLACK_STYLE)
    old = require_interpreter(target)
    path = tmp_path / BLACK_STYLE.name
    source = BLACK_STYLE.read_text(encoding="utf-8")
    path.write_text(transpile(source, target=target, filename=str(path)), "utf-8")
    assert _run(old, path) == native
    assert native.count("Error [") == 22  # each scenario raised
