"""spam_transpile.lowering.line_fit: readable lines within the project's lint
limit (flake8's 79 unless configured) that black (88) leaves as they are.

The program is fixtures/readable/line_fit.py: every match in it, printed as
it reads best, has a line of 80 to 88 columns."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

import black
import libcst as cst
import pytest

from cli_invoke import invoke, make_tree
from like_native import assert_runs_like_native
from type_check import assert_mypy_clean
from spam_transpile import transpile
from spam_transpile.lowering.decision_tree import Branch, Leaf, decision_tree
from spam_transpile.lowering import ir
from spam_transpile.lowering.line_fit import with_calls_split
from spam_transpile.lowering.names import Names
from spam_transpile.settings import LineLimits
from spam_transpile.syntax.codegen import code_for

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "fixtures" / "readable" / "line_fit.py"


def _readable(target: str = "3.9") -> str:
    return transpile(PROGRAM.read_text("utf-8"), layout="readable", target=target)


def _function(out: str, name: str) -> str:
    start = out.index(f"def {name}(")
    end = out.find("\n\n\n", start)
    return out[start:end]


def test_the_program_keeps_to_79_columns_as_written() -> None:
    assert max(len(line) for line in PROGRAM.read_text("utf-8").splitlines()) <= 79


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_no_line_is_wider_than_79_and_black_keeps_them(target: str) -> None:
    out = _readable(target)
    wide = [line for line in out.splitlines() if len(line) > 79]
    assert wide == []
    assert black.format_str(out, mode=black.Mode()) == out


def test_the_narrower_output_runs_and_type_checks(tmp_path: Path) -> None:
    out = _readable()
    assert_runs_like_native(PROGRAM.read_text("utf-8"), out, tmp_path, ("3.9", "3.7"))
    assert_mypy_clean(out, tmp_path)


@pytest.mark.parametrize(
    "function, shape",
    [
        # a capture read through its subject would widen the line: the
        # widest is assigned, the others still read through ``item``
        (
            "label",
            "        where, who = item.destination, item.carrier\n"
            "        # read through ``item`` the body is 84 columns wide\n"
            '        return f"to {where} by {who}, {item.weight:.1f} kg',
        ),
        # a case alone nests under its first test, the next case being of
        # another length; the branch's check in the spelling black splits
        (
            "pair_or_triple",
            "    if isinstance(value, (list, tuple, Sequence)) and not isinstance(\n"
            "        value, (str, bytes, bytearray)\n"
            "    ):\n"
            "        size = len(value)\n"
            "        if size == 2:\n"
            "            if isinstance(value[0], int) and isinstance(value[1], int):\n",
        ),
        # a mapping check by the ABC alone
        (
            "beat",
            '    if isinstance(heartbeat, Mapping) and heartbeat.get("kind") == "ping":\n',
        ),
        # a body line nested deeper than it was written: split at its call
        (
            "move",
            "                return describe_move(\n"
            "                    direction.upper(),\n"
            "                    steps=1,\n"
            "                    carefully=True,\n"
            "                )\n",
        ),
        # an or-pattern's alternatives each written whole (their shared
        # ``op == "*"`` written once leaves each 86 wide), joined with the
        # next case's test by one ``or``
        (
            "cancels",
            "    if (\n"
            "        (\n"
            '            op == "*"\n'
            "            and isinstance(left, Num)\n"
            "            and left.value == 0\n"
            "            and isinstance(right, Var)\n"
            "        )\n"
            "        or (\n"
            '            op == "*"\n',
        ),
    ],
)
def test_each_match_takes_the_first_shape_that_fits(function: str, shape: str) -> None:
    assert shape in _function(_readable(), function)


def _in_place(tmp_path: Path, settings: Dict[str, str]) -> str:
    """The program lowered in place in a project with these files."""
    root = make_tree(tmp_path, {**settings, "line_fit.py": PROGRAM.read_text("utf-8")})
    (root / ".git").mkdir()
    result = invoke(["--in-place", str(root / "line_fit.py"), "-j", "1"])
    assert result.exit_code == 0, result.stderr
    return (root / "line_fit.py").read_text("utf-8")


def test_a_project_that_allows_88_columns_keeps_the_shapes_that_read_best(
    tmp_path: Path,
) -> None:
    out = _in_place(
        tmp_path,
        {
            "pyproject.toml": "[tool.black]\nline-length = 88\n",
            "setup.cfg": "[flake8]\nmax-line-length = 88\n",
        },
    )
    assert max(len(line) for line in out.splitlines()) <= 88
    # (read through ``item``, the line would be 105 wide: ``where`` is not)
    assert "{where} by {item.carrier}, {item.weight:.1f} kg" in out
    assert "isinstance(heartbeat, (dict, Mapping))" in out
    assert "        if size == 2:\n" not in out
    assert "carefully=True,\n" not in out
    assert '        op == "*"\n        and (\n' in out


def test_a_flake8_setting_narrower_than_black_is_kept_to(tmp_path: Path) -> None:
    out = _in_place(
        tmp_path,
        {
            "pyproject.toml": "[tool.black]\nline-length = 88\n",
            "tox.ini": "[flake8]\nmax-line-length = 79\n",
        },
    )
    assert max(len(line) for line in out.splitlines()) <= 79


# -- a key's class check by ``get`` ------------------------------------------


def test_a_key_of_an_untyped_mapping_is_checked_through_get() -> None:
    # ``event: object``: its values are ``Any``, the capture reads the item
    route = _function(_readable(), "route")
    assert (
        '        elif event.get("kind") == "key" and isinstance(event.get("name"), str):\n'
        '            name = event["name"]\n'
    ) in route


def test_a_key_of_a_typed_mapping_is_tested_with_in() -> None:
    # ``dict[str, object]``: mypy narrows ``config["name"]``, not a call
    typed = _function(_readable(), "typed_settings")
    assert '"name" in config' in typed and 'isinstance(config["name"], str)' in typed
    assert ".get(" not in typed


# -- the statements split at their last call ------------------------------


def _split(code: str, limits: LineLimits, column: int = 0) -> str:
    module = cst.parse_module(code)
    statements = with_calls_split(module.body, column, limits)
    return code_for(cst.Module(body=statements))


def test_a_wide_assignment_of_values_goes_one_a_line() -> None:
    out = _split("first, second = values[0], values[1]\n", LineLimits(60, 30))
    assert out == "first = values[0]\nsecond = values[1]\n"


def test_an_assignment_whose_values_read_its_targets_stays_one() -> None:
    swap = "first, second = second, first  # swapped\n"
    assert _split(swap, LineLimits(60, 20)) == swap


def test_a_wide_call_gets_a_trailing_comma_where_that_is_a_call() -> None:
    assert _split("x = f(a, b)\n", LineLimits(60, 8)) == "x = f(a, b,)\n"
    # (no comma after a bare generator argument; a wider line is black's)
    assert _split("x = f(a for a in b)\n", LineLimits(60, 8)) == "x = f(a for a in b)\n"
    assert _split("x = f(a, b)\n", LineLimits(9, 8)) == "x = f(a, b)\n"
    # nested blocks count their indentation
    code = "if t:\n    x = f(a)\n"
    assert _split(code, LineLimits(60, 11)) == "if t:\n    x = f(a,)\n"
    assert _split(code, LineLimits(60, 12)) == code


# -- a case alone nests under its first test ------------------------------

LEN2 = ir.Test("len(v) == 2", "len", "v", ("==", 2))
LEN3 = ir.Test("len(v) == 3", "len", "v", ("==", 3))
ITEM = ir.Test("v[0] == 1", "eq", "v[0]")
OTHER = ir.Test("v.x == 1", "eq", "v.x")


def _tree(patterns: List[ir.LoweredPattern], wide: bool) -> list:
    return decision_tree(patterns, set(), set(), too_wide=lambda leaf, depth: wide)


def test_a_case_alone_nests_where_it_is_too_wide_and_the_next_is_disjoint() -> None:
    first = ir.LoweredPattern(ir.all_of(LEN2, ITEM), ())
    second = ir.LoweredPattern(ir.all_of(LEN3, ITEM), ())
    nested = _tree([first, second], wide=True)
    assert isinstance(nested[0], Branch) and nested[0].tests == (LEN2,)
    assert all(isinstance(node, Leaf) for node in _tree([first, second], wide=False))


def test_a_case_alone_does_not_nest_where_a_later_case_may_match_too() -> None:
    first = ir.LoweredPattern(ir.all_of(LEN2, ITEM), ())
    later = ir.LoweredPattern(ir.all_of(OTHER), ())
    assert all(isinstance(node, Leaf) for node in _tree([first, later], wide=True))
    # nor with nothing after it: its two ``if``s a linter asks to join
    assert all(isinstance(node, Leaf) for node in _tree([first], wide=True))


def test_names_taken_by_a_printing_thrown_away_are_free_again() -> None:
    names = Names(frozenset({"subject"}), frozenset())
    saved = names.saved()
    assert names.readable("size") == "size"
    names.restore(saved)
    assert names.readable("size") == "size"
    assert names.readable("subject") == "subject_2"
