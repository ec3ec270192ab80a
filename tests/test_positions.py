"""Positions computed one match statement at a time agree with LibCST's
whole-module PositionProvider, and never cost a whole-module pass."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

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


@needs_310
@pytest.mark.parametrize(
    ("name", "source"), [("headers", HEADERS), *_sources()], ids=lambda v: str(v)[:20]
)
def test_case_headers_line_breaks_from_positions(name: str, source: str) -> None:
    """The standard tree's positions give each case header's line breaks as
    generating its code does, or None (parentheses around the pattern or the
    guard, a tuple's trailing comma): the transformer then generates it."""
    from spam_transpile.syntax.codegen import code_for
    from spam_transpile.lowering.positions import in_source_order
    from spam_transpile.lowering.transformer import header_line_breaks

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
