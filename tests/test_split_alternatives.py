"""spam_transpile.lowering.split_alternatives: an or-pattern whose
alternatives capture different values is written once per alternative,
where that is exact (no guard) and reads well (a short body, at most three
alternatives), and runs as CPython runs the match."""

from __future__ import annotations

from pathlib import Path

import pytest

from like_native import assert_runs_like_native
from type_check import assert_mypy_clean
from spam_transpile import transpile

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "fixtures" / "readable" / "split_alternatives.py"


def _readable(target: str = "3.9") -> str:
    return transpile(PROGRAM.read_text("utf-8"), layout="readable", target=target)


def _function(out: str, name: str) -> str:
    start = out.index(f"def {name}(")
    end = out.find("\n\n\n", start + 1)
    return out[start : end if end != -1 else None]


def test_each_alternative_is_a_case_reading_its_own_values() -> None:
    simplify = _function(_readable(), "simplify")
    assert simplify.startswith(
        "def simplify(op: str, left: object, right: object) -> object:\n"
        '    if op == "+" and isinstance(left, Num) and left.value == 0:\n'
        "        return right\n"
        '    elif op in ("+", "-") and isinstance(right, Num) and right.value == 0:\n'
        "        return left\n"
    )
    # the alternatives share their first test: nested under it
    assert '    elif op == "*":\n        if isinstance(left, Num)' in simplify
    assert " if " not in simplify.replace("    if ", "").replace("elif ", "")


@pytest.mark.parametrize(
    "function, kept",
    [
        # a failed guard goes to the next case, not the next alternative
        ("guarded", "x = pair[0] if isinstance(pair[0], int) else pair[1]"),
        # a body of three statements is written once
        ("long_body", 'x = pair[1] if pair[0] == "a" else pair[0]'),
        # four alternatives: one ``if``
        ("many", "[x := value[0]]"),
    ],
)
def test_an_or_pattern_stays_one_case_otherwise(function: str, kept: str) -> None:
    assert kept in _function(_readable(), function)


@pytest.mark.parametrize("target", ["3.9", "3.7"])
def test_the_program_runs_as_natively(target: str, tmp_path: Path) -> None:
    source = PROGRAM.read_text("utf-8")
    assert_runs_like_native(source, _readable(target), tmp_path, (target,))


def test_the_program_type_checks(tmp_path: Path) -> None:
    assert_mypy_clean(_readable(), tmp_path)
